"""Anomaly mode: the first NaN/Inf gradient names its op and the forward line."""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import detect_anomaly, is_anomaly_enabled, set_detect_anomaly


def test_names_the_op_and_shows_where_it_was_created():
    x = oxmera.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        y = oxmera.sqrt(x)   # the line the message must show
        z = (y * 0.0).sum()
        with pytest.raises(RuntimeError) as info:
            z.backward()
    message = str(info.value)
    assert "SqrtBackward" in message and "nan" in message
    assert "y = oxmera.sqrt(x)   # the line the message must show" in message
    assert "test_anomaly.py" in message
    assert x.grad is None


@pytest.mark.parametrize("how", ["method", "operator"])
def test_the_line_shown_is_the_callers_for_methods_and_operators(how):
    # Op functions and operators run no Python frame of their own, so the
    # innermost frame of the trace is the line that called them (the trace
    # used to drop its last frame, which was this line for an operator).
    x = oxmera.tensor([0.0, 1.0], requires_grad=True)
    with detect_anomaly():
        if how == "method":
            y = x.sqrt()        # line A
        else:
            y = x ** 0.5        # line B
        with pytest.raises(RuntimeError) as info:
            (y * 0.0).sum().backward()
    assert ("line A" if how == "method" else "line B") in str(info.value)


def test_inf_is_reported_as_inf():
    x = oxmera.tensor([0.0], requires_grad=True)
    with detect_anomaly():
        y = oxmera.log(x)
        with pytest.raises(RuntimeError, match="LogBackward' returned inf"):
            y.sum().backward()


def test_off_by_default_and_restored():
    assert not is_anomaly_enabled()
    with detect_anomaly():
        assert is_anomaly_enabled()
        with set_detect_anomaly(False):
            assert not is_anomaly_enabled()
        assert is_anomaly_enabled()
    assert not is_anomaly_enabled()


def test_as_a_decorator():
    @detect_anomaly()
    def inside():
        return is_anomaly_enabled()
    assert inside() and not is_anomaly_enabled()


def test_without_anomaly_mode_nan_passes_silently_and_nothing_is_recorded():
    x = oxmera.tensor([0.0], requires_grad=True)
    y = oxmera.sqrt(x)
    assert y.grad_fn._creation_trace is None
    (y * 0.0).sum().backward()
    assert np.isnan(x.grad.numpy()).all()


def test_node_made_before_anomaly_mode_says_so():
    x = oxmera.tensor([0.0], requires_grad=True)
    y = oxmera.sqrt(x)
    with detect_anomaly():
        with pytest.raises(RuntimeError, match="before anomaly mode was enabled"):
            (y * 0.0).sum().backward()


def test_check_nan_false_only_records():
    x = oxmera.tensor([0.0], requires_grad=True)
    with detect_anomaly(check_nan=False):
        y = oxmera.sqrt(x)
        assert y.grad_fn._creation_trace is not None
        (y * 0.0).sum().backward()
