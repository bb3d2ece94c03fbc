"""Reductions: sum, mean, prod, max, min, amax, amin, argmax, argmin, all, any,
sum_to — forward against NumPy, dims (int, tuple, negative, ``axis``),
keepdim, result dtypes, max/min's named tuple and tie-splitting gradients,
prod's gradient at zeros, errors, and hypothesis properties over random
shapes and dims.

var/std/logsumexp/norm are in ``test_reduce_statistics.py``, cumsum/cumprod
in ``test_reduce_scans.py``; gradients to first and second order of all of
them in ``test_gradients.py``.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# -- dims given as an empty tuple -------------------------------------------------------------

@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "logsumexp", "var",
                                  "std", "all", "any"])
def test_an_empty_dim_tuple_reduces_every_dim(name):
    x = oxmera.tensor(_array((2, 3)))
    np.testing.assert_allclose(getattr(x, name)(dim=()).numpy(), getattr(x, name)().numpy())
    assert getattr(x, name)(dim=[]).shape == ()


# -- prod ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_prod_matches_numpy(dim, keepdim):
    values = _array(dtype=np.float32)
    axis = tuple(dim) if isinstance(dim, tuple) else dim
    expected = np.prod(values.astype(np.float64), axis=axis, keepdims=keepdim)
    x = oxmera.tensor(values)
    _check(oxmera.prod(x, dim, keepdim), expected, F32, rtol=1e-5)
    _check(x.prod(axis=dim, keepdim=keepdim), expected, F32, rtol=1e-5)


@pytest.mark.parametrize("dtype", [I32, I64, U8, BOOL])
def test_prod_of_integers_is_int64(dtype):
    values = np.array([[1, 2, 3], [0, 1, 1]]).astype(dtype)
    result = oxmera.tensor(values).prod(1)
    assert result.dtype == I64
    np.testing.assert_array_equal(result.numpy(), np.prod(values.astype(np.int64), axis=1))


def test_prod_of_0d_and_size_0():
    assert oxmera.tensor(2.5).prod(0).item() == 2.5
    _check(oxmera.zeros(0, 3).prod(), np.float32(1.0), F32)
    _check(oxmera.zeros(0, 3).prod(0), np.ones(3), F32)
    _check(oxmera.zeros(0, 3).prod(1), np.ones(0), F32)


def _product_of_others(values, axis):
    """Brute force: the product of the other elements of each slice."""
    values = np.moveaxis(values, axis, -1)
    out = np.empty_like(values)
    for i in range(values.shape[-1]):
        out[..., i] = np.prod(np.delete(values, i, axis=-1), axis=-1)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("values", [
    [[1.5, 0.0, -2.0], [0.5, 1.25, -0.75]],     # one zero in a row
    [[0.0, 1.5, 0.0], [0.0, 0.0, 0.0]],         # two zeros, three zeros
    [[2.0, 3.0, 4.0], [0.0, 5.0, 6.0]],
], ids=["one-zero", "several-zeros", "first-zero"])
def test_prod_gradient_at_zeros_is_the_product_of_the_others(values):
    values = np.array(values)
    x = leaf(values)
    x.prod(1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), _product_of_others(values, 1))
    x = leaf(values)
    x.prod().backward()
    np.testing.assert_array_equal(x.grad.numpy(), _product_of_others(values.reshape(-1), 0)
                                  .reshape(values.shape))


def test_prod_second_derivative_at_a_zero():
    # d/dx0 of d(x0 * x1 * x2)/dx1 = x2, even where x0 == 0.
    x = leaf([0.0, 3.0, 5.0])
    (grad,) = oxmera.autograd.grad(x.prod(), [x], create_graph=True)
    np.testing.assert_array_equal(grad.detach().numpy(), [15.0, 0.0, 0.0])
    (second,) = oxmera.autograd.grad(grad[1], [x])
    np.testing.assert_array_equal(second.numpy(), [5.0, 0.0, 0.0])


# -- amax, amin ---------------------------------------------------------------------------------

@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin_match_numpy(name, dim, keepdim):
    values = _array(dtype=np.float32)
    axis = tuple(dim) if isinstance(dim, tuple) else dim
    expected = getattr(np, name)(values, axis=axis, keepdims=keepdim)
    x = oxmera.tensor(values)
    _check(getattr(oxmera, name)(x, () if dim is None else dim, keepdim), expected, F32)
    _check(getattr(x, name)(axis=dim, keepdim=keepdim), expected, F32)


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin_of_integers_keep_the_dtype(name):
    x = oxmera.tensor([[3, 1, 4], [1, 5, 9]], dtype=I32)
    assert getattr(x, name)(1).dtype == I32


@pytest.mark.parametrize("name, values, expected", [
    ("amax", [1.0, 3.0, 3.0, 3.0], [0.0, 1 / 3, 1 / 3, 1 / 3]),
    ("amin", [-1.0, 3.0, -1.0, 0.0], [0.5, 0.0, 0.5, 0.0]),
    ("max", [2.0, 2.0, 2.0, 2.0], [0.25] * 4),
    ("min", [0.0, 1.0, 0.0, 0.0], [1 / 3, 0.0, 1 / 3, 1 / 3]),
])
def test_extremes_split_ties_evenly(name, values, expected):
    x = leaf(values)
    getattr(x, name)().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected)
    x = leaf([values, values[::-1]])
    result = getattr(x, name)(1)
    (result.values if name in ("max", "min") else result).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [expected, expected[::-1]])


def test_amax_output_does_not_share_memory_with_a_0d_input():
    x = oxmera.tensor(1.5)
    y = x.amax()
    assert not np.shares_memory(y.numpy(), x.numpy())


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin_of_empty_slices_are_errors(name):
    x = leaf(np.zeros((0, 3)))
    assert getattr(x, name)(1).shape == (0,)         # nothing is reduced over size 0
    with unchanged(x):
        with pytest.raises(RuntimeError, match=f"{name}.*dim 0 of size 0.*\\(0, 3\\)"):
            getattr(x, name)(0)
        with pytest.raises(RuntimeError, match=f"{name}.*\\(0, 3\\)"):
            getattr(x, name)()


# -- argmax, argmin -----------------------------------------------------------------------------

@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1, 2])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_match_numpy(name, dim, keepdim):
    values = _array()
    expected = getattr(np, name)(values, axis=dim, keepdims=keepdim)
    x = oxmera.tensor(values)
    for result in (getattr(oxmera, name)(x, dim, keepdim), getattr(x, name)(dim=dim,
                                                                           keepdim=keepdim),
                   getattr(x, name)(axis=dim, keepdim=keepdim)):
        assert result.dtype == I64 and not result.requires_grad
        assert result.shape == np.shape(expected)
        np.testing.assert_array_equal(result.numpy(), expected)


def test_argmax_without_dim_flattens():
    x = oxmera.tensor([[1.0, 9.0, 3.0], [9.0, 0.0, -1.0]])
    assert x.argmax().item() == 1               # the first of a tie
    assert x.argmin().item() == 5
    assert x.argmax(keepdim=True).shape == (1, 1)
    assert oxmera.tensor(4.0).argmax().shape == ()
    assert oxmera.tensor(4.0).argmax(0).item() == 0
    assert oxmera.tensor([1, 7, 2]).argmax().item() == 1        # integers too


def test_argmax_of_nan_is_its_index():
    assert oxmera.tensor([1.0, float("nan"), 3.0]).argmax().item() == 1


def test_argmax_records_nothing():
    x = leaf([[1.0, 2.0], [4.0, 3.0]])
    out = (x * 2).argmax(1)
    assert out.grad_fn is None and not out.requires_grad


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_of_empty_are_errors(name):
    x = oxmera.zeros(0, 3)
    assert getattr(x, name)(1).shape == (0,)
    with pytest.raises(RuntimeError, match=f"{name}.*non-empty.*\\(0, 3\\)"):
        getattr(x, name)()
    with pytest.raises(RuntimeError, match=f"{name}.*size 0"):
        getattr(x, name)(0)


# -- all, any ------------------------------------------------------------------------------------

@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_match_numpy(name, dim, keepdim):
    values = (_array() > 0.3) | (_array(seed=1) > 1.0)
    axis = tuple(dim) if isinstance(dim, tuple) else dim
    expected = getattr(np, name)(values, axis=axis, keepdims=keepdim)
    x = oxmera.tensor(values)
    for result in (getattr(oxmera, name)(x, dim, keepdim), getattr(x, name)(axis=dim,
                                                                           keepdim=keepdim)):
        assert result.dtype == BOOL and result.shape == np.shape(expected)
        np.testing.assert_array_equal(result.numpy(), expected)


def test_all_any_of_numbers_test_for_nonzero():
    x = oxmera.tensor([[0.0, 1.0], [float("nan"), -2.0]])
    np.testing.assert_array_equal(x.all(1).numpy(), [False, True])
    np.testing.assert_array_equal(x.any(0).numpy(), [True, True])
    assert x.any().dtype == BOOL
    u = oxmera.tensor(np.array([[1, 0], [2, 3]], dtype=np.uint8))
    assert u.all(1).dtype == U8           # uint8 stays uint8, as in PyTorch
    np.testing.assert_array_equal(u.all(1).numpy(), [0, 1])


def test_all_any_of_empty():
    x = oxmera.zeros(0, 3)
    assert x.all().item() is True and x.any().item() is False
    assert x.all(0).shape == (3,)


def test_all_any_record_nothing():
    x = leaf([1.0, 0.0])
    assert not (x * 2).all().requires_grad and (x * 2).any().grad_fn is None


# -- Tensor methods ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["prod", "amax", "amin", "argmax", "argmin", "var", "std",
                                  "logsumexp", "norm", "cumsum", "cumprod", "all", "any"])
def test_reductions_are_tensor_methods(name):
    assert callable(getattr(oxmera.Tensor, name))
    assert callable(getattr(oxmera, name))


# -- errors (SPEC §6), new reductions ------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x: x.prod(dim=2), lambda x: x.amax((0, 3)), lambda x: x.amin(-3),
    lambda x: x.argmax(2), lambda x: x.argmin(axis=-3), lambda x: x.var(2), lambda x: x.std(5),
    lambda x: x.logsumexp(2), lambda x: x.norm(dim=2), lambda x: x.cumsum(2),
    lambda x: x.cumprod(-3), lambda x: x.all(2), lambda x: x.any((0, 2))],
    ids=["prod", "amax", "amin", "argmax", "argmin", "var", "std", "logsumexp", "norm", "cumsum",
         "cumprod", "all", "any"])
def test_new_reductions_reject_a_bad_dim_naming_the_range(call):
    x = leaf(np.ones((2, 3)))
    x.grad = oxmera.zeros(2, 3, dtype=F64)
    y = x * 2
    for t in (x, y):
        with unchanged(x, y):
            with pytest.raises(IndexError, match=r"range.*\[-2, 1\]"):
                call(t)


@pytest.mark.parametrize("name", ["prod", "amax", "var", "logsumexp", "all"])
def test_repeated_dims_are_rejected(name):
    x = leaf(np.ones((2, 3)))
    with unchanged(x):
        with pytest.raises(RuntimeError, match=f"{name}.*multiple times"):
            getattr(x, name)(dim=(0, -2))


@pytest.mark.parametrize("name", ["prod", "amax", "argmax", "var", "logsumexp", "cumsum", "all"])
def test_dim_and_axis_together_are_rejected_by_every_reduction(name):
    with pytest.raises(TypeError, match=f"{name}.*dim or axis"):
        getattr(oxmera.zeros(2, 3), name)(dim=0, axis=1)


# -- hypothesis: random shapes and dims ------------------------------------------------------------

_NUMPY_REDUCTIONS = {
    "sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.amax, "amin": np.amin,
    "all": np.all, "any": np.any,
}


@st.composite
def _shape_and_dims(draw, min_side=0):
    shape = tuple(draw(st.lists(st.integers(min_side, 3), min_size=0, max_size=4)))
    ndim = len(shape)
    if ndim == 0 or draw(st.booleans()):
        return shape, None
    dims = draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                         unique_by=lambda d: d % ndim))
    return shape, tuple(dims) if draw(st.booleans()) or len(dims) > 1 else dims[0]


@settings(max_examples=60, deadline=None)
@given(shape_dims=_shape_and_dims(), name=st.sampled_from(sorted(_NUMPY_REDUCTIONS)),
       keepdim=st.booleans(), seed=st.integers(0, 2 ** 32 - 1))
def test_reductions_match_numpy_on_random_shapes(shape_dims, name, keepdim, seed):
    shape, dim = shape_dims
    values = np.random.default_rng(seed).uniform(-2, 2, shape)
    if name in ("amax", "amin"):
        reduced = range(len(shape)) if dim is None else np.atleast_1d(dim)
        if any(shape[d] == 0 for d in reduced) or (not shape and values.size == 0):
            return              # no identity: an error, tested above
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy: mean of empty slice
        expected = _NUMPY_REDUCTIONS[name](values, axis=dim, keepdims=keepdim)
    result = getattr(oxmera.tensor(values), name)(dim, keepdim=keepdim)
    assert result.shape == np.shape(expected)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-10, atol=1e-12)


_GRADIENT_REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "logsumexp", "norm", "var",
                        "std"]


@settings(max_examples=60, deadline=None)
@given(shape_dims=_shape_and_dims(min_side=1), name=st.sampled_from(_GRADIENT_REDUCTIONS),
       keepdim=st.booleans(), seed=st.integers(0, 2 ** 32 - 1))
def test_reduction_gradients_have_the_input_shape_and_match_finite_differences(
        shape_dims, name, keepdim, seed):
    shape, dim = shape_dims
    rng = np.random.default_rng(seed)
    # Distinct magnitudes (no ties in amax/amin/norm), away from 0.
    values = rng.permutation(np.linspace(0.5, 2.0, max(1, int(np.prod(shape)))))
    values = (values * rng.choice([-1.0, 1.0], values.shape)).reshape(shape)
    x = oxmera.from_numpy(values).requires_grad_()

    def fn(t):
        if name == "norm":
            return t.norm(dim=dim, keepdim=keepdim)
        if name in ("var", "std"):
            return getattr(t, name)(dim, keepdim=keepdim, correction=0)
        return getattr(t, name)(dim, keepdim=keepdim)

    out = fn(x)
    (grad,) = oxmera.autograd.grad(out.sum(), [x])
    assert grad.shape == x.shape and grad.dtype == x.dtype
    if name == "std" and np.any(out.detach().numpy() == 0):
        return                  # a single element: std is 0, its gradient set to 0
    assert oxmera.autograd.gradcheck(fn, (x,))
