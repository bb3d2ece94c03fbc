"""oxmera.scipy.signal against scipy.signal: every mode, both size orders, N dimensions,
first and second derivatives, errors."""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck
from oxmera.scipy import signal

scipy_signal = pytest.importorskip("scipy.signal")

SHAPES = [((7,), (3,)), ((3,), (7,)), ((4,), (4,)), ((1,), (1,)), ((), ()),
          ((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 3, 2), (2, 2, 2))]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_values_and_gradients(name, mode, shapes):
    rng = np.random.default_rng(len(shapes[0]) + sum(shapes[0]))
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    expected = getattr(scipy_signal, name)(a, b, mode=mode)
    got = getattr(signal, name)(a, b, mode=mode)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    leaves = [oxmera.tensor(x, requires_grad=True) for x in (a, b)]

    def function(x, y):
        return getattr(signal, name)(x, y, mode=mode)
    assert gradcheck(function, leaves)
    assert gradgradcheck(function, leaves)


@pytest.mark.parametrize("method", ["direct", "fft"])
def test_methods_agree(method):
    a, b = np.arange(10.0), np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(signal.convolve(a, b, method=method).numpy(),
                               np.convolve(a, b), rtol=1e-12, atol=1e-12)


def test_errors():
    with pytest.raises(ValueError, match="acceptable mode"):
        signal.convolve([1.0], [1.0], mode="circular")
    with pytest.raises(ValueError, match="acceptable method"):
        signal.correlate([1.0], [1.0], method="slow")
    with pytest.raises(ValueError, match="same dimensionality"):
        signal.convolve([1.0, 2.0], [[1.0]])
    with pytest.raises(ValueError, match="at least as large as the other"):
        signal.convolve(np.ones((2, 5)), np.ones((3, 1)), mode="valid")


def test_float32_inputs_stay_float32():
    out = signal.convolve(oxmera.tensor([1.0, 2.0]), oxmera.tensor([1.0, 1.0]))
    assert out.dtype == oxmera.float32
