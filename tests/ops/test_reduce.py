"""Reductions: sum, mean, max, min, sum_to — forward against NumPy, dims
(int, tuple, negative, ``axis``), keepdim, result dtypes, max/min's named
tuple and tie-splitting gradient, errors.

Gradients to first and second order are in ``test_gradients.py``.
"""
import warnings

import numpy as np
import pytest

import oxmera

from ._helpers import leaf, unchanged

F16, F32, F64 = oxmera.float16, oxmera.float32, oxmera.float64
I32, I64, U8, BOOL = oxmera.int32, oxmera.int64, oxmera.uint8, oxmera.bool

DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2), (1,)]


def _array(shape=(2, 3, 4), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype)


def _check(result, expected, dtype, rtol=1e-6):
    assert isinstance(result, oxmera.Tensor)
    assert result.dtype == np.dtype(dtype)
    assert result.shape == np.shape(expected)
    np.testing.assert_allclose(result.detach().numpy(), expected, rtol=rtol, atol=1e-6)


# -- sum and mean ---------------------------------------------------------------------

@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sum_and_mean_match_numpy(name, dim, keepdim):
    values = _array(dtype=np.float32)
    axis = tuple(dim) if isinstance(dim, tuple) else dim
    expected = getattr(np, name)(values.astype(np.float64), axis=axis, keepdims=keepdim)
    x = oxmera.tensor(values)
    _check(getattr(oxmera, name)(x, dim, keepdim), expected, F32)
    _check(getattr(x, name)(dim=dim, keepdim=keepdim), expected, F32)
    _check(getattr(x, name)(axis=dim, keepdim=keepdim), expected, F32)
    if isinstance(dim, tuple):
        _check(getattr(x, name)(list(dim), keepdim=keepdim), expected, F32)


@pytest.mark.parametrize("dtype, expected", [
    (I32, I64), (I64, I64), (U8, I64), (BOOL, I64), (F16, F16), (F32, F32), (F64, F64)])
def test_sum_dtype(dtype, expected):
    values = (_array((3, 4)) * 3).astype(dtype)
    result = oxmera.tensor(values).sum()
    assert result.dtype == expected
    np.testing.assert_allclose(result.numpy(), values.astype(np.float64).sum(), rtol=2e-3)
    assert oxmera.tensor(values).sum(dim=0).dtype == expected


def test_sum_of_bools_counts():
    x = oxmera.tensor([[True, False, True], [True, True, True]])
    _check(x.sum(), np.int64(5), I64)
    _check(x.sum(1), np.array([2, 3]), I64)


def test_sum_and_mean_with_dtype_argument():
    x = oxmera.tensor([1, 2, 4])
    _check(x.sum(dtype=F64), np.float64(7.0), F64)
    _check(x.mean(dtype=F32), np.float32(7 / 3), F32)
    y = leaf([1.0, 2.0]).float()
    assert y.sum(dtype=F64).dtype == F64


def test_mean_of_integers_needs_a_dtype():
    with pytest.raises(RuntimeError, match="mean.*int64"):
        oxmera.tensor([1, 2]).mean()


def test_0d_reductions():
    x = oxmera.tensor(2.5)
    for name in ("sum", "mean"):
        for dim in (None, 0, -1, (0,)):
            result = getattr(x, name)(dim)
            assert result.shape == () and result.item() == 2.5
        assert getattr(x, name)(0, keepdim=True).shape == ()


def test_size_0_reductions():
    x = oxmera.zeros(0, 3)
    _check(x.sum(), np.float32(0.0), F32)
    _check(x.sum(0), np.zeros(3), F32)
    _check(x.sum(1), np.zeros(0), F32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(x.mean().item())
        assert x.mean(1).shape == (0,)
        assert np.isnan(x.mean(0).numpy()).all()


def test_sum_gradient_broadcasts_back():
    x = leaf(np.arange(6.0).reshape(2, 3))
    x.sum(dim=1, keepdim=True).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))
    x.grad = None
    (x.mean(dim=(0, 1)) * 6).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


def test_duplicate_dims_are_rejected():
    x = oxmera.zeros(2, 3)
    with unchanged(x):
        with pytest.raises(RuntimeError, match="multiple times"):
            x.sum(dim=(1, -1))


def test_dim_and_axis_together_are_rejected():
    with pytest.raises(TypeError, match="dim or axis"):
        oxmera.zeros(2, 3).sum(dim=0, axis=1)


# -- max and min ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_without_dim_is_a_0d_tensor(name):
    values = _array((3, 4))
    x = oxmera.tensor(values)
    for result in (getattr(oxmera, name)(x), getattr(x, name)()):
        assert isinstance(result, oxmera.Tensor)
        _check(result, getattr(np, name)(values), F64)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1, -2])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_with_dim_is_a_named_tuple(name, dim, keepdim):
    values = _array((3, 4))
    reduce, arg = getattr(np, name), getattr(np, "arg" + name)
    x = oxmera.tensor(values)
    for result in (getattr(oxmera, name)(x, dim, keepdim),
                   getattr(x, name)(dim=dim, keepdim=keepdim),
                   getattr(x, name)(axis=dim, keepdim=keepdim)):
        assert type(result).__name__ == name and result._fields == ("values", "indices")
        values_out, indices_out = result           # unpackable
        assert values_out is result.values and indices_out is result.indices
        assert result[0] is result.values
        _check(result.values, reduce(values, axis=dim, keepdims=keepdim), F64)
        assert result.indices.dtype == I64
        np.testing.assert_array_equal(result.indices.numpy(),
                                      arg(values, axis=dim, keepdims=keepdim))


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_integers(name):
    x = oxmera.tensor([[3, 1, 4], [1, 5, 9]])
    assert getattr(x, name)().dtype == I64
    result = getattr(x, name)(1)
    np.testing.assert_array_equal(result.values.numpy(), getattr(np, name)(x.numpy(), 1))
    assert not result.values.requires_grad


def test_max_gradient_splits_ties_evenly():
    x = leaf([1.0, 3.0, 3.0])
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])
    x = leaf([2.0, 2.0, 2.0])
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 1 / 3, 1 / 3])
    x = leaf([1.0, -3.0, -3.0])
    x.min().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])


@pytest.mark.parametrize("keepdim", [False, True])
def test_max_with_dim_splits_ties_per_slice(keepdim):
    x = leaf([[1.0, 3.0, 3.0], [5.0, 0.0, 5.0], [7.0, 7.0, 7.0], [0.0, 1.0, 2.0]])
    result = x.max(dim=1, keepdim=keepdim)
    weights = oxmera.tensor([1.0, 2.0, 3.0, 4.0], dtype=F64)
    (result.values.reshape(-1) * weights).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [1, 0, 1], [1, 1, 1], [0, 0, 4]])
    # the index of a tie is the first one, as NumPy's argmax gives it
    np.testing.assert_array_equal(result.indices.reshape(-1).numpy(), [1, 0, 0, 2])


def test_max_indices_do_not_require_grad():
    x = leaf([[1.0, 2.0], [4.0, 3.0]])
    values, indices = x.max(1)
    assert values.requires_grad and values.grad_fn.name == "MaxBackward"
    assert not indices.requires_grad and indices.grad_fn is None
    values, indices = x.min(0)
    assert values.grad_fn.name == "MinBackward"


def test_max_min_of_0d_and_size_0():
    x = oxmera.tensor(1.5)
    assert x.max().item() == 1.5
    values, indices = x.max(0)
    assert values.shape == () and values.item() == 1.5 and indices.item() == 0
    assert x.min(-1, keepdim=True).values.shape == ()
    empty = oxmera.zeros(0, 3)
    assert empty.max(1).values.shape == (0,)
    assert empty.min(1, keepdim=True).indices.shape == (0, 1)


def test_max_propagates_nan():
    x = oxmera.tensor([1.0, float("nan"), 3.0])
    assert np.isnan(x.max().item())
    assert x.max(0).indices.item() == 1


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_empty_is_an_error(name):
    x = leaf(np.zeros((0, 3)))
    with unchanged(x):
        with pytest.raises(RuntimeError, match=f"{name}.*\\(0, 3\\)"):
            getattr(x, name)()
        with pytest.raises(RuntimeError, match=f"{name}.*size 0"):
            getattr(x, name)(0)


# -- sum_to --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, target", [
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), ()), ((4, 2, 3), (2, 1)),
    ((2, 3), (2, 3)), ((0, 3), (3,)), ((3, 1), (1,))])
def test_sum_to_matches_numpy(shape, target):
    values = _array(shape)
    lead = len(shape) - len(target)
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(target)
                                      if s == 1 and shape[lead + i] != 1)
    expected = values.sum(axis=axes, keepdims=True).reshape(target)
    _check(oxmera.sum_to(oxmera.tensor(values), target), expected, F64)


# -- errors (SPEC §6) -------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: x.sum(dim=2), lambda x: x.sum(dim=(0, -3)), lambda x: x.mean(-3),
    lambda x: x.max(dim=2), lambda x: x.min(5), lambda x: oxmera.sum(x, axis=7)],
    ids=["sum", "sum-tuple", "mean", "max", "min", "axis"])
def test_bad_dim_is_an_index_error_naming_the_range(call):
    x = leaf(np.ones((2, 3)))
    x.grad = oxmera.zeros(2, 3, dtype=F64)
    y = x * 2
    for t in (x, y):
        with unchanged(x, y):
            with pytest.raises(IndexError, match=r"range.*\[-2, 1\]"):
                call(t)


def test_0d_accepts_only_dims_0_and_minus_1():
    with pytest.raises(IndexError, match=r"\[-1, 0\]"):
        oxmera.tensor(1.0).sum(1)
    with pytest.raises(IndexError, match=r"\[-1, 0\]"):
        oxmera.tensor(1.0).max(-2)


def test_dim_must_be_an_integer():
    with pytest.raises(TypeError, match="dim"):
        oxmera.zeros(2).sum(dim=0.5)
