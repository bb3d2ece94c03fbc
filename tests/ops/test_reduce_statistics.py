"""var, std, logsumexp and norm: forward against NumPy closed forms (dims,
keepdim, ``correction``/``unbiased``, every ``p``), numerical stability,
PyTorch's conventions at the edges (zero vectors, constant slices, -inf rows),
dtypes and errors. Gradients to second order are in ``test_gradients.py``.
"""
import math
import warnings

import numpy as np
import pytest

import oxmera

from ._helpers import leaf, unchanged

F16, F32, F64, I64 = oxmera.float16, oxmera.float32, oxmera.float64, oxmera.int64
INF = math.inf

DIMS = [None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2)]


def _array(shape=(2, 3, 4), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _axis(dim):
    return tuple(dim) if isinstance(dim, tuple) else dim


def _check(result, expected, dtype, rtol=1e-6, atol=1e-6):
    assert isinstance(result, oxmera.Tensor)
    assert result.dtype == np.dtype(dtype)
    assert result.shape == np.shape(expected)
    np.testing.assert_allclose(result.detach().numpy(), expected, rtol=rtol, atol=atol)


# -- var, std -------------------------------------------------------------------------------

@pytest.mark.parametrize("correction", [0, 1, 2, 0.5])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_match_numpy(name, dim, keepdim, correction):
    values = _array()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)     # NumPy: degrees of freedom <= 0
        expected = getattr(np, name)(values, axis=_axis(dim), keepdims=keepdim, ddof=correction)
    x = oxmera.tensor(values)
    _check(getattr(oxmera, name)(x, dim, keepdim=keepdim, correction=correction), expected, F64)
    _check(getattr(x, name)(axis=dim, keepdim=keepdim, correction=correction), expected, F64)


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_default_to_the_unbiased_estimate(name):
    values = _array((3, 4))
    x = oxmera.tensor(values)
    _check(getattr(x, name)(), getattr(np, name)(values, ddof=1), F64)
    _check(getattr(x, name)(1), getattr(np, name)(values, axis=1, ddof=1), F64)
    # PyTorch's older forms: var(unbiased), var(dim, unbiased, keepdim)
    _check(getattr(x, name)(False), getattr(np, name)(values, ddof=0), F64)
    _check(getattr(x, name)(0, False, True), getattr(np, name)(values, axis=0, ddof=0,
                                                               keepdims=True), F64)
    _check(getattr(x, name)(0, unbiased=True), getattr(np, name)(values, axis=0, ddof=1), F64)


@pytest.mark.parametrize("dtype", [F16, F32])
def test_var_keeps_the_float_dtype(dtype):
    values = _array((3, 4)).astype(dtype)
    for name in ("var", "std"):
        result = getattr(oxmera.tensor(values), name)(1)
        expected = getattr(np, name)(values.astype(np.float64), axis=1, ddof=1)
        _check(result, expected, dtype, rtol=2e-3, atol=2e-3)


def test_var_with_too_few_degrees_of_freedom_is_inf_or_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(oxmera.tensor(2.0).var().item())            # 0 / 0
        assert oxmera.tensor(2.0).var(correction=0).item() == 0.0
        assert oxmera.tensor([1.0, 2.0]).var(correction=2).item() == INF
        assert oxmera.tensor([1.0, 2.0]).var(correction=3).item() == INF  # as PyTorch
        assert np.isnan(oxmera.zeros(0, 3).var(0).numpy()).all()
        assert oxmera.zeros(0, 3).std(1).shape == (0,)


def test_std_gradient_of_a_constant_slice_is_zero():
    x = leaf([[1.5, 1.5, 1.5], [1.0, 2.0, 3.0]])
    x.std(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 0.0, 0.0], [-0.5, 0.0, 0.5]])


def test_var_gradient_closed_form():
    values = _array((3, 4))
    x = leaf(values)
    x.var(1, correction=0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(),
                               2 * (values - values.mean(1, keepdims=True)) / 4)


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_of_integers_are_errors(name):
    with pytest.raises(RuntimeError, match=f"{name}.*floating point.*int64"):
        getattr(oxmera.tensor([1, 2, 3]), name)()


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_take_correction_or_unbiased_not_both(name):
    with pytest.raises(TypeError, match=f"{name}.*unbiased or correction"):
        getattr(oxmera.ones(3), name)(0, True, correction=1)


# -- logsumexp -------------------------------------------------------------------------------------

@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
def test_logsumexp_matches_numpy(dim, keepdim):
    values = _array() * 3
    expected = np.logaddexp.reduce(values, axis=_axis(dim) if dim is not None
                                   else tuple(range(3)), keepdims=keepdim)
    x = oxmera.tensor(values)
    _check(oxmera.logsumexp(x, dim, keepdim), expected, F64)
    _check(x.logsumexp(axis=dim, keepdim=keepdim), expected, F64)


def test_logsumexp_is_stable_for_large_logits_in_float32():
    x = oxmera.tensor([[1e4, 1e4 - 1.0, -1e4], [-1e4, -1e4, -1e4 - 3.0]])
    result = x.logsumexp(1)
    assert result.dtype == F32
    expected = np.logaddexp.reduce(x.numpy().astype(np.float64), axis=1)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)
    x = leaf(x.numpy().astype(np.float64))
    x.logsumexp(1).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    np.testing.assert_allclose(x.grad.numpy().sum(1), [1.0, 1.0])


def test_logsumexp_of_infinities_and_empty_slices():
    x = oxmera.tensor([[-INF, -INF], [INF, 1.0], [-INF, 0.0]])
    np.testing.assert_array_equal(x.logsumexp(1).numpy(), [-INF, INF, 0.0])
    np.testing.assert_array_equal(oxmera.zeros(0, 3).logsumexp(0).numpy(), [-INF] * 3)
    assert oxmera.zeros(0, 3).logsumexp(1).shape == (0,)
    assert oxmera.tensor(2.5).logsumexp(0).item() == 2.5


def test_logsumexp_of_integers_is_float():
    result = oxmera.tensor([1, 2]).logsumexp(0)
    assert result.dtype == F32
    np.testing.assert_allclose(result.item(), np.logaddexp(1.0, 2.0), rtol=1e-6)


def test_logsumexp_gradient_is_softmax():
    values = _array((2, 3))
    x = leaf(values)
    x.logsumexp(1).sum().backward()
    softmax = np.exp(values) / np.exp(values).sum(1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), softmax)


# -- norm ------------------------------------------------------------------------------------------

def _numpy_norm(values, p, axis, keepdims):
    if axis is None:
        axis = tuple(range(values.ndim))
    magnitude = np.abs(values)
    if p == INF:
        return magnitude.max(axis=axis, keepdims=keepdims)
    if p == -INF:
        return magnitude.min(axis=axis, keepdims=keepdims)
    if p == 0:
        return (values != 0).sum(axis=axis, keepdims=keepdims).astype(values.dtype)
    with np.errstate(divide="ignore"):
        return (magnitude ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("p", [2, "fro", 1, INF, -INF, 0, 3, 0.5, -1, 1.5])
def test_norm_matches_numpy(p, dim, keepdim):
    values = _array()
    values[0, 0, 0] = 0.0
    expected = _numpy_norm(values, 2 if p == "fro" else p, _axis(dim), keepdim)
    x = oxmera.tensor(values)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(oxmera.norm(x, p, dim, keepdim), expected, F64, rtol=1e-10)
        _check(x.norm(p=p, dim=dim, keepdim=keepdim), expected, F64, rtol=1e-10)


def test_norm_defaults_and_dtypes():
    values = _array((3, 4)).astype(np.float32)
    x = oxmera.tensor(values)
    _check(x.norm(), np.linalg.norm(values.astype(np.float64)), F32)
    _check(x.norm(dtype=F64), np.linalg.norm(values.astype(np.float64)), F64, rtol=1e-12)
    _check(oxmera.tensor(-2.0).norm(), np.float32(2.0), F32)
    _check(oxmera.zeros(0, 3).norm(), np.float32(0.0), F32)
    _check(oxmera.zeros(0, 3).norm(dim=1), np.zeros(0), F32)


def test_norm_nuc_is_the_sum_of_singular_values():
    values = _array((2, 3, 4))
    expected = np.linalg.svd(values, compute_uv=False).sum(-1)
    _check(oxmera.tensor(values).norm("nuc"), expected, F64, rtol=1e-10)
    _check(oxmera.norm(oxmera.tensor(values), "nuc", dim=(0, 2)),
           np.linalg.svd(values.transpose(1, 0, 2), compute_uv=False).sum(-1), F64, rtol=1e-10)


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 1.5, INF])
def test_norm_gradient_at_a_zero_vector_is_zero(p):
    x = leaf(np.zeros(4))
    x.norm(p).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(4))


def test_norm_gradient_at_zero_entries_is_zero():
    x = leaf([0.0, 3.0, -4.0])
    x.norm(1.5).backward()
    assert x.grad.numpy()[0] == 0.0 and np.isfinite(x.grad.numpy()).all()
    x = leaf([0.0, 3.0, -4.0])
    x.norm().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.6, -0.8])


def test_norm_gradient_closed_forms():
    values = _array((5,))
    x = leaf(values)
    x.norm(3).backward()
    norm3 = (np.abs(values) ** 3).sum() ** (1 / 3)
    np.testing.assert_allclose(x.grad.numpy(), values * np.abs(values) / norm3 ** 2)
    x = leaf(values)
    x.norm(1).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.sign(values))


def test_inf_norm_ties_share_the_gradient():
    x = leaf([3.0, -3.0, 1.0, 3.0])
    x.norm(INF).backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, -1 / 3, 0.0, 1 / 3])
    x = leaf([1.0, -1.0, 2.0])
    x.norm(-INF).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, -0.5, 0.0])


def test_norm_of_integers_is_an_error():
    with pytest.raises(RuntimeError, match="norm.*floating point.*int64"):
        oxmera.tensor([3, 4]).norm()
    assert oxmera.tensor([3, 4]).norm(dtype=F32).item() == 5.0


def test_inf_norm_of_an_empty_tensor_is_an_error():
    x = leaf(np.zeros((0, 3)))
    with unchanged(x):
        with pytest.raises(RuntimeError, match=r"norm.*inf.*\(0, 3\)"):
            x.norm(INF)


def test_norm_rejects_an_unknown_order():
    with pytest.raises(ValueError, match="norm.*'bad'"):
        oxmera.ones(3).norm("bad")
