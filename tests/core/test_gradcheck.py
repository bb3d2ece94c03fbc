"""gradcheck / gradgradcheck (SPEC §7): pass on right gradients, explain wrong ones.

The deliberately wrong op is registered as ``_test_wrong_square``: names
starting with ``_test_`` are skipped by the registry-coverage test of
tests/ops, which checks that every real differentiable op has a gradient test.
"""
import re

import numpy as np
import pytest

import oxmera
from oxmera import autograd
from oxmera.autograd import GradcheckError, gradcheck, gradgradcheck

from ._helpers import test_op

F64 = oxmera.float64


def leaf(values):
    return oxmera.tensor(values, dtype=F64, requires_grad=True)


def _wrong_square_forward(x):
    return x * x


def _wrong_square_vjp(ctx, grad, x):
    return grad * 3 * x      # wrong on purpose: the derivative is 2x


def wrong_square_op():
    """x * x with a wrong VJP: grad * 3x instead of grad * 2x."""
    return test_op("_test_wrong_square", _wrong_square_forward, _wrong_square_vjp)


def test_gradcheck_error_is_a_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)
    assert autograd.GradcheckError is GradcheckError


@pytest.mark.parametrize("fn, shapes", [
    (lambda x: (x * x.sin()).sum(), [(3,)]),
    (lambda x: x.exp() * x, [(2, 2)]),
    (lambda x, y: x * y, [(2, 3), (3,)]),                    # broadcasting
    (lambda x, y: x @ y, [(2, 3), (3, 2)]),
    (lambda x: (x.tanh(), x.sigmoid()), [(4,)]),              # two outputs
    (lambda x: x.sqrt() / (x + 1), [(3,)]),
    (lambda x: x ** 3, [()]),
])
def test_gradcheck_passes_for_correct_functions(fn, shapes):
    rng = np.random.default_rng(0)
    inputs = tuple(leaf(rng.uniform(0.5, 1.5, size=s)) for s in shapes)
    assert gradcheck(fn, inputs) is True


def test_gradcheck_skips_inputs_that_need_no_grad():
    x = leaf([0.5, 1.5])
    c = oxmera.tensor([2.0, 3.0], dtype=F64)
    assert gradcheck(lambda a, b, k: a * b * k, (x, c, 2.0))


def test_gradgradcheck_passes_for_correct_functions():
    x = leaf([0.3, 0.7, 1.1])
    y = leaf([1.2, 0.4, 0.9])
    assert gradgradcheck(lambda a: (a.tanh() * a).sum(), (x,))
    assert gradgradcheck(lambda a, b: a.exp() * b.sin(), (x, y))
    assert gradgradcheck(lambda a: a.sqrt() * a.sigmoid(), (x,))


def test_gradcheck_leaves_inputs_and_grads_untouched():
    x = leaf([0.5, 1.5])
    x.grad = oxmera.tensor([9.0, 9.0], dtype=F64)
    gradcheck(lambda t: (t * t).sum(), (x,))
    assert x.tolist() == [0.5, 1.5]
    assert x.grad.tolist() == [9.0, 9.0]


def test_gradcheck_reports_wrong_vjp():
    wrong_square = wrong_square_op()
    x = leaf([0.5, 1.5, -2.0])
    with pytest.raises(GradcheckError) as info:
        gradcheck(wrong_square, (x,))
    msg = str(info.value)
    assert "numerical" in msg and "analytical" in msg
    # The worst entry is at x = -2: numerical 2x = -4, analytical 3x = -6.
    worst = re.search(r"worst entry.*numerical (\S+), analytical (\S+),", msg)
    assert worst is not None, msg
    assert float(worst.group(1)) == pytest.approx(-4.0, abs=1e-6)
    assert float(worst.group(2)) == pytest.approx(-6.0)
    assert isinstance(info.value, RuntimeError)
    assert x.tolist() == [0.5, 1.5, -2.0] and x.grad is None


def test_gradcheck_can_return_false():
    wrong_square = wrong_square_op()
    x = leaf([0.5, 1.5])
    assert gradcheck(wrong_square, (x,), raise_exception=False) is False


def test_gradcheck_catches_wrong_vjp_inside_a_composition():
    wrong_square = wrong_square_op()
    x = leaf([0.5, 1.5])
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(lambda c, t: (c * wrong_square(t)).sum(), (leaf([1.0, 2.0]), x))


def test_gradcheck_warns_for_float32_inputs():
    x = oxmera.tensor([0.5, 1.5], requires_grad=True)
    with pytest.warns(UserWarning, match="float64"):
        gradcheck(lambda t: t * 2, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)


def test_gradcheck_needs_an_input_requiring_grad():
    with pytest.raises(ValueError, match="requires grad"):
        gradcheck(lambda t: t * 2, (oxmera.tensor([1.0], dtype=F64),))
