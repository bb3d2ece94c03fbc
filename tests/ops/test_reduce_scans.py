"""cumsum, cumprod and linear_scan (the recurrence behind cumprod's gradient):
forward against NumPy, dims (``dim=None`` flattens, ``axis``), dtypes, the
gradient of cumprod at zeros against a brute-force Jacobian, to second
order, and errors.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck
from oxmera.ops.reduce import linear_scan

from ._helpers import leaf, unchanged

F32, F64, I32, I64, BOOL = (oxmera.float32, oxmera.float64, oxmera.int32, oxmera.int64,
                            oxmera.bool)


def _array(shape=(2, 3, 4), seed=0):
    return np.random.default_rng(seed).uniform(-2, 2, shape)


@pytest.mark.parametrize("dim", [None, 0, 1, 2, -1, -3])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_match_numpy(name, dim):
    values = _array().astype(np.float32)
    expected = getattr(np, name)(values.astype(np.float64), axis=dim)
    x = oxmera.tensor(values)
    for result in (getattr(oxmera, name)(x, dim), getattr(x, name)(dim=dim),
                   getattr(x, name)(axis=dim)):
        assert result.dtype == F32 and result.shape == expected.shape
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [I32, I64, BOOL])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_of_integers_are_int64(name, dtype):
    values = np.array([[1, 2, 0], [3, 1, 1]]).astype(dtype)
    result = getattr(oxmera.tensor(values), name)(1)
    assert result.dtype == I64
    np.testing.assert_array_equal(result.numpy(), getattr(np, name)(values.astype(np.int64), 1))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_with_a_dtype(name):
    result = getattr(oxmera.tensor([1, 2, 3]), name)(0, dtype=F64)
    assert result.dtype == F64
    x = leaf([1.0, 2.0, 3.0]).float()
    assert getattr(x, name)(0, dtype=F64).dtype == F64


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_of_0d_and_size_0(name):
    x = oxmera.tensor(2.5)
    result = getattr(x, name)(0)
    assert result.shape == () and result.item() == 2.5
    assert not np.shares_memory(result.numpy(), x.numpy())
    assert getattr(x, name)(-1).shape == ()
    assert getattr(oxmera.zeros(0, 3), name)(0).shape == (0, 3)
    assert getattr(oxmera.zeros(0, 3), name)(1).shape == (0, 3)


def test_cumsum_gradient_is_a_reversed_cumsum():
    x = leaf(_array((2, 4)))
    weights = np.arange(8.0).reshape(2, 4)
    (x.cumsum(1) * oxmera.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cumsum(weights[:, ::-1], 1)[:, ::-1])


def _cumprod_jacobian(values):
    """d cumprod(x)_i / d x_j = prod_{k <= i, k != j} x_k for j <= i, by brute force."""
    n = len(values)
    jacobian = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            jacobian[i, j] = np.prod(np.delete(values[:i + 1], j))
    return jacobian


@pytest.mark.parametrize("values", [
    [1.5, -2.0, 0.5, 3.0], [1.5, 0.0, -2.0, 0.5], [0.0, 1.5, -2.0, 3.0], [1.5, -2.0, 3.0, 0.0],
    [0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 0.0]],
    ids=["no-zero", "one-zero", "first", "last", "two", "all"])
def test_cumprod_gradient_at_zeros_matches_the_brute_force_jacobian(values):
    values = np.array(values)
    weights = np.array([0.5, -1.0, 2.0, 1.5])
    x = leaf(values)
    (x.cumprod(0) * oxmera.tensor(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), weights @ _cumprod_jacobian(values))
    assert gradgradcheck(lambda t: t.cumprod(0), (leaf(values),))


def test_cumprod_second_derivative_through_a_zero():
    # y_2 = x0 x1 x2; d2 y_2 / dx0 dx1 = x2 even where x0 == 0.
    x = leaf([0.0, 3.0, 5.0])
    (grad,) = oxmera.autograd.grad(x.cumprod(0)[2], [x], create_graph=True)
    np.testing.assert_array_equal(grad.detach().numpy(), [15.0, 0.0, 0.0])
    (second,) = oxmera.autograd.grad(grad[1], [x])
    np.testing.assert_array_equal(second.numpy(), [5.0, 0.0, 0.0])


# -- linear_scan -------------------------------------------------------------------------------

def _numpy_scan(x, c, axis, reverse):
    x, c = np.broadcast_arrays(x, c)
    x, c = np.moveaxis(x, axis, 0), np.moveaxis(c, axis, 0)
    out = np.array(x, dtype=float)
    order = range(len(x) - 2, -1, -1) if reverse else range(1, len(x))
    for j in order:
        out[j] = x[j] + c[j] * out[j + 1 if reverse else j - 1]
    return np.moveaxis(out, 0, axis)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_linear_scan_matches_the_recurrence(dim, reverse):
    x, c = _array((3, 4)), _array((3, 4), seed=1)
    result = linear_scan(oxmera.tensor(x), oxmera.tensor(c), dim, reverse=reverse)
    np.testing.assert_allclose(result.numpy(), _numpy_scan(x, c, dim, reverse))


def test_linear_scan_with_unit_coefficients_is_cumsum():
    x = _array((5,))
    np.testing.assert_allclose(linear_scan(oxmera.tensor(x), oxmera.ones(5, dtype=F64), 0)
                               .numpy(), np.cumsum(x))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), reverse=st.booleans(), seed=st.integers(0, 2 ** 32 - 1))
def test_linear_scan_gradients_match_finite_differences(n, reverse, seed):
    rng = np.random.default_rng(seed)
    x = oxmera.from_numpy(rng.uniform(-2, 2, (2, n))).requires_grad_()
    c = oxmera.from_numpy(rng.uniform(-1.5, 1.5, (2, n))).requires_grad_()
    assert gradcheck(lambda a, b: linear_scan(a, b, 1, reverse=reverse), (x, c))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), zeros=st.integers(0, 6), seed=st.integers(0, 2 ** 32 - 1))
def test_cumprod_gradients_with_random_zeros_match_finite_differences(n, zeros, seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-2, 2, n)
    values[rng.permutation(n)[:zeros]] = 0.0
    x = oxmera.from_numpy(values).requires_grad_()
    assert gradcheck(lambda t: t.cumprod(0), (x,))
    assert gradgradcheck(lambda t: t.cumprod(0), (x,))


# -- errors (SPEC §6) --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_scans_reject_a_bad_dim(name):
    x = leaf(np.ones((2, 3)))
    with unchanged(x):
        with pytest.raises(IndexError, match=rf"{name}.*range.*\[-2, 1\]"):
            getattr(x, name)(2)
        with pytest.raises(TypeError, match=f"{name}.*dim or axis"):
            getattr(x, name)(0, axis=1)
