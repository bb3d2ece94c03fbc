"""NumPy functions and ufuncs on tensors: they run oxmera ops, return tensors and are
differentiable (checked by gradcheck); what oxmera cannot run raises TypeError naming it.

Each case calls the same NumPy expression on float64 arrays and on tensors holding the same
values: the values must agree with NumPy's, and the gradient with finite differences. A case
whose op oxmera does not have yet is skipped (the TypeError saying so is itself checked in
test_a_missing_op_raises_type_error_naming_the_numpy_function).
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
from oxmera.autograd import gradcheck
from oxmera.ops import interop

RNG = np.random.default_rng(7)


def values(*shape, low=0.1, high=0.9):
    return RNG.uniform(low, high, size=shape)


def as_leaf(a):
    return oxmera.tensor(a, requires_grad=np.asarray(a).dtype.kind == "f")


def call_or_skip(fn, *args):
    try:
        return fn(*args)
    except TypeError as err:
        if "oxmera has no op" in str(err):
            pytest.skip(str(err))
        raise


def check(expression, arrays, grad=True):
    """expression(*tensors) agrees with expression(*arrays); gradients with finite differences."""
    expected = expression(*arrays)
    tensors = [as_leaf(a.copy()) for a in arrays]
    got = call_or_skip(expression, *tensors)
    exp_list = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    got_list = list(got) if isinstance(got, (tuple, list)) else [got]
    assert len(got_list) == len(exp_list)
    for g, e in zip(got_list, exp_list):
        assert isinstance(g, oxmera.Tensor), f"expected a Tensor, got {type(g).__name__}"
        e = np.asarray(e)
        assert g.shape == e.shape
        np.testing.assert_allclose(g.detach().numpy(), e, rtol=1e-10, atol=1e-12)
        if e.dtype.kind == "f":
            assert g.dtype == e.dtype
    if grad and any(t.requires_grad for t in tensors):
        assert any(g.requires_grad for g in got_list if g.dtype.kind == "f"), \
            "the result is not connected to the graph"
        assert gradcheck(expression, tuple(tensors))


# -- ufuncs ---------

UNARY_UFUNCS = [np.negative, np.positive, np.absolute, np.fabs, np.sign, np.reciprocal, np.sqrt,
                np.square, np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p,
                np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh,
                np.tanh, np.arcsinh, np.arctanh, np.floor, np.ceil, np.rint, np.trunc,
                np.deg2rad, np.rad2deg]
BINARY_UFUNCS = [np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.power,
                 np.maximum, np.minimum, np.fmax, np.fmin, np.arctan2, np.hypot, np.logaddexp,
                 np.logaddexp2, np.floor_divide, np.remainder, np.fmod, np.copysign]
BOOL_UFUNCS = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
               np.logical_and, np.logical_or, np.logical_xor]
BOOL_UNARY_UFUNCS = [np.isnan, np.isinf, np.isfinite, np.logical_not, np.signbit]


@pytest.mark.parametrize("ufunc", UNARY_UFUNCS, ids=lambda u: u.__name__)
def test_unary_ufunc(ufunc):
    # A non-contiguous input too (a transposed view).
    check(ufunc, [values(2, 3)])
    check(lambda x: ufunc(x.T), [values(3, 2)])
    check(ufunc, [values()])


@pytest.mark.parametrize("ufunc", BINARY_UFUNCS, ids=lambda u: u.__name__)
def test_binary_ufunc(ufunc):
    check(ufunc, [values(2, 3), values(3) + 0.05])          # broadcasting
    check(lambda x: ufunc(x, 0.7), [values(4)])               # with a Python number
    check(lambda y: ufunc(np.full((2, 1), 0.3), y), [values(3)])   # an ndarray first


@pytest.mark.parametrize("ufunc", BOOL_UFUNCS, ids=lambda u: u.__name__)
def test_comparison_and_logic_ufuncs_give_bool_tensors(ufunc):
    a, b = values(2, 3), values(3)
    if ufunc.__name__.startswith("logical"):
        a, b = a > 0.5, b > 0.5
    check(ufunc, [a, b], grad=False)
    got = call_or_skip(ufunc, as_leaf(a), as_leaf(b))
    assert got.dtype == np.bool_ and not got.requires_grad


@pytest.mark.parametrize("ufunc", BOOL_UNARY_UFUNCS, ids=lambda u: u.__name__)
def test_bool_unary_ufuncs(ufunc):
    a = np.array([0.5, -np.inf, np.nan, -0.0, 2.0])
    if ufunc is np.logical_not:
        a = a > 0
    check(ufunc, [a], grad=False)


def test_matmul_ufunc_and_operator_with_arrays():
    check(np.matmul, [values(2, 3), values(3, 4)])
    check(np.matmul, [values(2, 2, 3), values(3)])
    check(lambda x: np.ones((2, 3)) @ x, [values(3, 2)])


def test_ufunc_methods_reduce_accumulate_outer():
    check(lambda x: np.add.reduce(x), [values(3, 4)])
    check(lambda x: np.add.reduce(x, axis=1, keepdims=True), [values(3, 4)])
    check(lambda x: np.add.reduce(x, axis=None), [values(3, 4)])
    check(lambda x: np.multiply.reduce(x, axis=0), [values(3, 4)])
    check(lambda x: np.maximum.reduce(x, axis=1), [values(3, 4)])
    check(lambda x: np.minimum.reduce(x, axis=(0, 1)), [values(3, 4)])
    check(lambda x: np.add.accumulate(x, axis=1), [values(3, 4)])
    check(lambda x: np.multiply.accumulate(x), [values(3, 4)])
    check(lambda x, y: np.multiply.outer(x, y), [values(3), values(2, 2)])
    check(lambda x, y: np.subtract.outer(x, y), [values(3), values(2)])
    check(lambda x: np.logical_and.reduce(x, axis=0), [values(3, 4) > 0.5], grad=False)


def test_ufunc_dtype_argument_casts_differentiably():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = np.multiply(x, x, dtype=np.float64)
    assert y.dtype == np.float64
    y.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_ufuncs_keep_oxmera_dtype_rules():
    x = oxmera.tensor([1.0, 2.0])
    assert np.add(x, 1.5).dtype == np.float32           # a Python float does not upcast
    assert (np.float64(2.0) * x).dtype == np.float32     # nor does a NumPy scalar
    assert np.add(np.ones(2), x).dtype == np.float64    # an array is a tensor operand
    assert np.add(oxmera.tensor([1, 2]), 2).dtype == np.int64


# -- NumPy functions ---------

def _transposed(a):
    return a.T


FUNCTION_CASES = {
    # reductions
    "sum": (lambda x: np.sum(x), [(3, 4)]),
    "sum-axis": (lambda x: np.sum(x, axis=0), [(3, 4)]),
    "sum-axes-keepdims": (lambda x: np.sum(x, axis=(0, 2), keepdims=True), [(2, 3, 2)]),
    "sum-noncontiguous": (lambda x: np.sum(x.T, axis=-1), [(3, 4)]),
    "mean": (lambda x: np.mean(x, axis=1), [(3, 4)]),
    "mean-keepdims": (lambda x: np.mean(x, axis=0, keepdims=True), [(3, 4)]),
    "prod": (lambda x: np.prod(x, axis=0), [(3, 4)]),
    "max": (lambda x: np.max(x), [(3, 4)]),
    "max-axis": (lambda x: np.max(x, axis=1), [(3, 4)]),
    "amin-axis-keepdims": (lambda x: np.amin(x, axis=0, keepdims=True), [(3, 4)]),
    "min": (lambda x: np.min(x), [(3, 4)]),
    "ptp": (lambda x: np.ptp(x, axis=1), [(3, 4)]),
    "var": (lambda x: np.var(x), [(3, 4)]),
    "var-ddof": (lambda x: np.var(x, axis=0, ddof=1), [(3, 4)]),
    "std-axis": (lambda x: np.std(x, axis=1, keepdims=True), [(3, 4)]),
    "cumsum": (lambda x: np.cumsum(x), [(3, 4)]),
    "cumsum-axis": (lambda x: np.cumsum(x, axis=1), [(3, 4)]),
    "cumprod-axis": (lambda x: np.cumprod(x, axis=0), [(3, 4)]),
    "average": (lambda x: np.average(x, axis=0), [(3, 4)]),
    "average-weights": (lambda x, w: np.average(x, axis=1, weights=w), [(3, 4), (4,)]),
    "linalg.norm": (lambda x: np.linalg.norm(x), [(3, 4)]),
    "linalg.norm-axis": (lambda x: np.linalg.norm(x, axis=1), [(3, 4)]),
    # shape
    "reshape": (lambda x: np.reshape(x, (2, 6)), [(3, 4)]),
    "reshape-F": (lambda x: np.reshape(x, (2, 6), order="F"), [(3, 4)]),
    "ravel": (lambda x: np.ravel(x.T), [(3, 4)]),
    "transpose": (lambda x: np.transpose(x), [(2, 3, 4)]),
    "transpose-axes": (lambda x: np.transpose(x, (1, 2, 0)), [(2, 3, 4)]),
    "swapaxes": (lambda x: np.swapaxes(x, 0, 2), [(2, 3, 4)]),
    "moveaxis": (lambda x: np.moveaxis(x, 0, -1), [(2, 3, 4)]),
    "moveaxis-several": (lambda x: np.moveaxis(x, [0, 1], [2, 0]), [(2, 3, 4)]),
    "squeeze": (lambda x: np.squeeze(x), [(1, 3, 1)]),
    "squeeze-axis": (lambda x: np.squeeze(x, axis=2), [(1, 3, 1)]),
    "expand_dims": (lambda x: np.expand_dims(x, (0, -1)), [(3,)]),
    "atleast_2d": (lambda x: np.atleast_2d(x), [(3,)]),
    "atleast_3d": (lambda x, y: np.atleast_3d(x, y), [(3,), (2, 3)]),
    "broadcast_to": (lambda x: np.broadcast_to(x, (2, 3)), [(3,)]),
    "broadcast_arrays": (lambda x, y: np.broadcast_arrays(x, y), [(3,), (2, 1)]),
    "flip": (lambda x: np.flip(x), [(2, 3)]),
    "flip-axis": (lambda x: np.flip(x, axis=1), [(2, 3)]),
    "fliplr": (lambda x: np.fliplr(x), [(2, 3)]),
    "flipud": (lambda x: np.flipud(x), [(2, 3)]),
    "roll": (lambda x: np.roll(x, 1, axis=1), [(2, 3)]),
    "roll-flat": (lambda x: np.roll(x, 2), [(2, 3)]),
    "tile": (lambda x: np.tile(x, (2, 1)), [(2, 3)]),
    "repeat": (lambda x: np.repeat(x, 2, axis=0), [(2, 3)]),
    "repeat-flat-array": (lambda x: np.repeat(x, [1, 0, 2, 1]), [(2, 2)]),
    "split": (lambda x: np.split(x, 2, axis=1), [(3, 4)]),
    "split-indices": (lambda x: np.split(x, [1, 3]), [(4, 2)]),
    "array_split": (lambda x: np.array_split(x, 3), [(5,)]),
    "concatenate": (lambda x, y: np.concatenate([x, y]), [(2, 3), (1, 3)]),
    "concatenate-axis": (lambda x, y: np.concatenate((x, y.T), axis=1), [(2, 3), (1, 2)]),
    "concatenate-none": (lambda x, y: np.concatenate([x, y], axis=None), [(2, 3), (4,)]),
    "concatenate-with-array": (lambda x: np.concatenate([np.ones((1, 3)), x]), [(2, 3)]),
    "stack": (lambda x, y: np.stack([x, y], axis=1), [(2, 3), (2, 3)]),
    "vstack": (lambda x, y: np.vstack([x, y]), [(3,), (2, 3)]),
    "hstack": (lambda x, y: np.hstack([x, y]), [(3,), (2,)]),
    "dstack": (lambda x, y: np.dstack([x, y]), [(2, 3), (2, 3)]),
    "column_stack": (lambda x, y: np.column_stack([x, y]), [(3,), (3, 2)]),
    "diagonal": (lambda x: np.diagonal(x), [(3, 3)]),
    "diagonal-offset": (lambda x: np.diagonal(x, 1, 0, 2), [(3, 2, 4)]),
    "trace": (lambda x: np.trace(x), [(3, 3)]),
    "tril": (lambda x: np.tril(x), [(3, 4)]),
    "triu": (lambda x: np.triu(x, 1), [(3, 4)]),
    "diff": (lambda x: np.diff(x), [(3, 4)]),
    "diff-n-axis": (lambda x: np.diff(x, n=2, axis=0), [(4, 2)]),
    "diff-prepend": (lambda x: np.diff(x, prepend=0.0), [(4,)]),
    # indexing and selection
    "where": (lambda x, y: np.where(x > 0.5, x, y), [(2, 3), (3,)]),
    "where-array": (lambda y: np.where(np.array([True, False, True]), np.zeros(3), y), [(3,)]),
    "take": (lambda x: np.take(x, [2, 0, 2]), [(2, 3)]),
    "take-axis": (lambda x: np.take(x, [1, 1], axis=1), [(2, 3)]),
    "take_along_axis": (lambda x: np.take_along_axis(x, np.array([[0, 2], [1, 1]]), axis=1),
                        [(2, 3)]),
    "clip": (lambda x: np.clip(x, 0.3, 0.7), [(3, 4)]),
    "clip-one-side": (lambda x: np.clip(x, None, 0.5), [(3, 4)]),
    "round": (lambda x: np.round(x), [(3,)]),
    "nan_to_num": (lambda x: np.nan_to_num(x / x), [(3,)]),
    "copy": (lambda x: np.copy(x), [(3,)]),
    # linear algebra
    "dot-1d": (lambda x, y: np.dot(x, y), [(3,), (3,)]),
    "dot-2d": (lambda x, y: np.dot(x, y), [(2, 3), (3, 2)]),
    "dot-nd-1d": (lambda x, y: np.dot(x, y), [(2, 2, 3), (3,)]),
    "dot-nd-md": (lambda x, y: np.dot(x, y), [(2, 2, 3), (2, 3, 2)]),
    "dot-scalar": (lambda x, y: np.dot(x, y), [(), (3,)]),
    "vdot": (lambda x, y: np.vdot(x, y), [(2, 3), (3, 2)]),
    "inner": (lambda x, y: np.inner(x, y), [(2, 3), (4, 3)]),
    "outer": (lambda x, y: np.outer(x, y), [(3,), (2, 2)]),
    "tensordot": (lambda x, y: np.tensordot(x, y, axes=1), [(2, 3), (3, 2)]),
    "einsum": (lambda x, y: np.einsum("ij,jk->ik", x, y), [(2, 3), (3, 2)]),
    "linalg.vector_norm": (lambda x: np.linalg.vector_norm(x, axis=0, keepdims=True), [(3, 4)]),
    "linalg.matrix_norm": (lambda x: np.linalg.matrix_norm(x), [(2, 3, 4)]),
    "linalg.inv": (lambda x: np.linalg.inv(x + 3 * np.eye(3)), [(3, 3)]),
    "linalg.det": (lambda x: np.linalg.det(x), [(3, 3)]),
    "linalg.solve": (lambda x, y: np.linalg.solve(x + 3 * np.eye(3), y), [(3, 3), (3, 2)]),
}


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_numpy_function(name):
    expression, shapes = FUNCTION_CASES[name]
    check(expression, [values(*s) for s in shapes])


NO_GRADIENT_FUNCTION_CASES = {
    "argmax": lambda x: np.argmax(x),
    "argmax-axis": lambda x: np.argmax(x, axis=1),
    "argmin-keepdims": lambda x: np.argmin(x, axis=0, keepdims=True),
    "all": lambda x: np.all(x > 0.2, axis=0),
    "any": lambda x: np.any(x > 0.8),
    "isclose": lambda x: np.isclose(x, x + 1e-9),
    "nonzero": lambda x: np.nonzero(x > 0.5),
    "where-1-arg": lambda x: np.where(x > 0.5),
    "argwhere": lambda x: np.argwhere(x > 0.5),
    "flatnonzero": lambda x: np.flatnonzero(x > 0.5),
    "sum-bool": lambda x: np.sum(x > 0.5),
    "mean-int": lambda x: np.mean((x > 0.5).astype(np.int64) if isinstance(x, np.ndarray)
                                  else (x > 0.5).long(), axis=0),
}


@pytest.mark.parametrize("name", sorted(NO_GRADIENT_FUNCTION_CASES))
def test_numpy_function_without_gradient(name):
    check(NO_GRADIENT_FUNCTION_CASES[name], [values(3, 4)], grad=False)


def test_like_functions_make_new_leaves():
    x = oxmera.tensor(values(2, 3), requires_grad=True)
    for fn, fill in ((np.zeros_like, 0.0), (np.ones_like, 1.0)):
        out = fn(x)
        assert isinstance(out, oxmera.Tensor) and out.shape == (2, 3) and not out.requires_grad
        np.testing.assert_array_equal(out.numpy(), np.full((2, 3), fill))
    out = np.full_like(x, 7.0, dtype=np.float32)
    assert out.dtype == np.float32 and out.tolist() == [[7.0] * 3] * 2
    assert np.empty_like(x).shape == (2, 3)
    assert np.zeros_like(x, shape=(4,)).shape == (4,)


def test_allclose_and_array_equal_answer_with_python_bools():
    x = oxmera.tensor(values(3), requires_grad=True)
    assert np.allclose(x, x.detach()) is True
    assert np.array_equal(x, x) is True
    assert np.array_equal(x, x + 1) is False


def test_metadata_functions_work_on_tensors_that_require_grad():
    x = oxmera.tensor(values(2, 3), requires_grad=True)
    assert np.shape(x) == (2, 3)
    assert np.ndim(x) == 2
    assert np.size(x) == 6
    assert np.result_type(x, np.float32) == np.float64
    assert np.shares_memory(x.detach(), x.detach().numpy())
    assert "0." in np.array2string(x)


# -- what the graph sees ---------

def test_gradients_flow_through_a_chain_of_numpy_calls():
    x = oxmera.tensor([[0.5, 1.0], [1.5, 2.0]], dtype=oxmera.float64, requires_grad=True)
    y = np.sum(np.exp(x) * np.sin(x), axis=0)
    z = np.mean(np.concatenate([y, np.square(y)]))
    z.backward()
    xv = x.detach().numpy()
    y_v = (np.exp(xv) * np.sin(xv)).sum(0)
    dy = (1 + 2 * y_v) / 4
    expected = dy * np.exp(xv) * (np.sin(xv) + np.cos(xv))
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_mixed_ndarray_and_tensor_inputs_give_tensors():
    a = np.array([1.0, 2.0], dtype=np.float32)
    x = oxmera.tensor([3.0, 4.0], requires_grad=True)
    for result in (np.add(a, x), a + x, a * x, a - x, a / x, a ** x, np.maximum(a, x),
                   np.concatenate([a, x]), np.stack([a, x]), np.where(a > 1, a, x)):
        assert isinstance(result, oxmera.Tensor)
        assert result.requires_grad
    comparison = a < x
    assert isinstance(comparison, oxmera.Tensor) and comparison.dtype == np.bool_
    (a * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), a)


def test_tensor_subclass_instances_dispatch_too():
    class Param(oxmera.Tensor):
        pass

    p = Param([1.0, 2.0], requires_grad=True)
    out = np.sum(np.sin(p))
    assert type(out) is oxmera.Tensor and out.requires_grad


def test_ops_are_looked_up_when_called(monkeypatch):
    # An op added after import (as other modules add theirs) is picked up.
    x = oxmera.tensor([8.0, 27.0], dtype=oxmera.float64, requires_grad=True)
    monkeypatch.setattr(oxmera, "cbrt", lambda t: t ** (1.0 / 3.0), raising=False)
    y = np.cbrt(x)
    np.testing.assert_allclose(y.detach().numpy(), [2.0, 3.0])
    assert y.requires_grad


def test_functions_without_a_translator_map_by_name_with_renamed_keywords(monkeypatch):
    calls = []

    def rot90(input, k=1, dims=(0, 1)):
        calls.append((k, dims))
        return input * 1.0

    def count_nonzero(input, dim=None, keepdim=None):
        calls.append((dim, keepdim))
        return (input != 0).sum(dim)

    monkeypatch.setattr(oxmera, "rot90", rot90, raising=False)
    monkeypatch.setattr(oxmera, "count_nonzero", count_nonzero, raising=False)
    x = leaf3()
    assert np.rot90(x, 2, axes=(0, 0)).requires_grad
    assert calls.pop() == (2, (0, 0))
    np.count_nonzero(x, axis=0, keepdims=True)
    assert calls.pop() == (0, True)
    np.count_nonzero(x)        # keepdims not given: not passed on either
    assert calls.pop() == (None, None)


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3), data=st.data())
def test_reductions_match_numpy_for_any_shape_and_axis(shape, data):
    array = RNG.standard_normal(shape)
    ndim = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1) if ndim else st.none()))
    keepdims = data.draw(st.booleans())
    t = oxmera.tensor(array)
    for fn in (np.sum, np.mean, np.prod):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # NumPy's mean of nothing
            expected = fn(array, axis=axis, keepdims=keepdims)
        got = fn(t, axis=axis, keepdims=keepdims)
        assert isinstance(got, oxmera.Tensor) and got.shape == np.shape(expected)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    got = np.exp(np.transpose(t))
    np.testing.assert_allclose(got.numpy(), np.exp(array.T), rtol=1e-12)


# -- np.asarray / np.array: the numpy() rule ---------

def test_asarray_follows_the_numpy_rule():
    t = oxmera.tensor([1.0, 2.0])
    a = np.asarray(t)
    assert isinstance(a, np.ndarray) and np.shares_memory(a, t.numpy())
    b = np.array(t)
    assert isinstance(b, np.ndarray) and not np.shares_memory(b, t.numpy())
    g = oxmera.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(g)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.array(g)
    np.testing.assert_array_equal(np.asarray(g.detach()), [1.0, 2.0])


def test_numpy_testing_compares_tensors():
    t = oxmera.tensor([1.0, 2.0])
    np.testing.assert_allclose(t, [1.0, 2.0])
    np.testing.assert_array_equal(t, np.array([1.0, 2.0], np.float32))


# -- errors ---------

def leaf3():
    return oxmera.tensor([0.5, 1.0, 1.5], dtype=oxmera.float64, requires_grad=True)


@pytest.mark.parametrize("call, name", [
    (lambda x: np.sin(x, out=np.empty(3)), "numpy.sin"),
    (lambda x: np.add(x, 1, out=(np.empty(3),)), "numpy.add"),
    (lambda x: np.add.reduce(x, out=np.empty(())), "numpy.add.reduce"),
    (lambda x: np.sum(x, out=np.empty(())), "numpy.sum"),
    (lambda x: np.concatenate([x, x], out=np.empty(6)), "numpy.concatenate"),
])
def test_out_is_a_type_error(call, name):
    x = leaf3()
    with pytest.raises(TypeError, match=rf"{name}: out= is not supported"):
        call(x)
    assert x.grad is None


def test_writing_a_tensor_into_an_array_in_place_is_a_type_error():
    a = np.ones(3)
    with pytest.raises(TypeError, match="out="):
        a += leaf3()
    np.testing.assert_array_equal(a, np.ones(3))


@pytest.mark.parametrize("call, name", [
    (lambda x: np.modf(x), "numpy.modf"),
    (lambda x: np.frexp(x), "numpy.frexp"),
    (lambda x: np.unwrap(x), "numpy.unwrap"),
    (lambda x: np.unique(x), "numpy.unique"),
    (lambda x: np.roots(x), "numpy.roots"),
    (lambda x: np.pad(x, 1, mode="mean"), "numpy.pad"),
    (lambda x: np.histogram(x), "numpy.histogram"),
    (lambda x: np.add.reduceat(x, [0, 1]), "numpy.add.reduceat"),
    (lambda x: np.subtract.reduce(x), "numpy.subtract.reduce"),
    (lambda x: np.add.at(x, [0], 1.0), "numpy.add.at"),
])
def test_unsupported_functions_raise_type_error_naming_them(call, name):
    x = leaf3()
    with pytest.raises(TypeError, match=name.replace(".", r"\.")):
        call(x)
    assert x.grad is None and x._version == 0


def test_a_missing_op_raises_type_error_naming_the_numpy_function(monkeypatch):
    monkeypatch.delattr(oxmera, "sin")
    with pytest.raises(TypeError, match=r"numpy\.sin is not supported on oxmera tensors: "
                                        r"oxmera has no op 'sin'"):
        np.sin(leaf3())


@pytest.mark.parametrize("call, what", [
    (lambda x: np.sin(x, where=np.array([True, False, True])), "where="),
    (lambda x: np.sum(x, initial=1.0), "initial="),
    (lambda x: np.sum(x, where=np.array([True, False, True])), "where="),
    (lambda x: np.matmul(x, x, axes=[(0,), (0,), ()]), "keyword"),
    (lambda x: np.var(x, mean=np.zeros(())), "mean="),
    (lambda x: np.take(x, [5], mode="clip"), "mode="),
])
def test_unsupported_arguments_raise_type_error(call, what):
    with pytest.raises(TypeError, match=what):
        call(leaf3())


def test_bad_arguments_raise_numpy_errors():
    x = leaf3()
    with pytest.raises(ValueError, match="equal division"):
        np.split(x, 2)
    with pytest.raises(ValueError, match="size not equal to one"):
        np.squeeze(x, axis=0)
    with pytest.raises(np.exceptions.AxisError):
        np.expand_dims(x, 5)
    with pytest.raises(ValueError, match="both or neither"):
        np.where(x > 1, x)


def test_other_array_likes_are_left_to_numpy():
    class Foreign:
        def __array_ufunc__(self, *args, **kwargs):
            return "foreign"

    # oxmera declines (NotImplemented), so NumPy asks the other operand.
    assert np.add(leaf3(), Foreign()) == "foreign"
    assert interop._array_ufunc(leaf3(), np.add, "__call__", leaf3(), Foreign()) is NotImplemented
