"""nansum, nanmean, var_mean, std_mean, aminmax, count_nonzero, median,
nanmedian, mode, kthvalue, quantile, nanquantile, cummax, cummin,
logcumsumexp, diff: forward against NumPy (hypothesis over shapes and
dims), PyTorch's conventions (lower median, NaN handling, result types),
the nodes recorded, and errors (type, message, nothing changed). Gradients
to second order are in ``test_gradients.py``, PyTorch comparisons in
``test_torch.py``.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import oxmera

from ._helpers import backward_name, leaf, unchanged

NAN, INF = math.nan, math.inf
F32, F64, I64 = oxmera.float32, oxmera.float64, oxmera.int64

_ARRAYS = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                     elements=st.floats(-100, 100))


def _dim(data, array):
    return data.draw(st.integers(-array.ndim, array.ndim - 1))


# -- NaN-ignoring reductions, var_mean, aminmax, count_nonzero ---------------------------------

@settings(max_examples=30, deadline=None)
@given(_ARRAYS, st.data())
def test_nansum_and_nanmean_match_numpy(values, data):
    values = values.copy()
    values.reshape(-1)[::3] = NAN
    dim = _dim(data, values)
    x = oxmera.tensor(values)
    np.testing.assert_allclose(x.nansum(dim).numpy(), np.nansum(values, axis=dim), rtol=1e-12)
    with warnings.catch_warnings():        # NumPy's "Mean of empty slice"
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.nanmean(values, axis=dim)
    np.testing.assert_allclose(oxmera.nanmean(x, axis=dim).numpy(), expected, rtol=1e-12)


def test_nan_elements_get_a_zero_gradient_even_in_an_all_nan_slice():
    x = leaf([[NAN, NAN], [1.0, NAN]])
    oxmera.nanmean(x, 1).nansum().backward()
    # PyTorch gives NaN in the all-NaN row; 0 here (documented).
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0], [1.0, 0.0]])


def test_nanmean_refuses_integers():
    with pytest.raises(RuntimeError, match="nanmean.*floating point.*int64"):
        oxmera.nanmean(oxmera.tensor([1, 2]))
    assert oxmera.nansum(oxmera.tensor([1, 2])).dtype == I64


def test_var_mean_and_std_mean_are_var_and_mean():
    x = oxmera.tensor(np.random.default_rng(0).standard_normal((3, 4)))
    for both, spread in ((oxmera.var_mean, oxmera.var), (oxmera.std_mean, oxmera.std)):
        result = both(x, 1, correction=0, keepdim=True)
        assert type(result) is tuple and len(result) == 2
        np.testing.assert_array_equal(result[0].numpy(), spread(x, 1, correction=0,
                                                                keepdim=True).numpy())
        np.testing.assert_array_equal(result[1].numpy(), x.mean(1, keepdim=True).numpy())
        unbiased, mean = both(x, False)          # the (input, unbiased) form
        assert unbiased.item() == pytest.approx(spread(x, correction=0).item())
        assert mean.item() == pytest.approx(x.mean().item())


def test_aminmax_result_and_errors():
    x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    result = x.aminmax(dim=1, keepdim=True)
    assert result._fields == ("min", "max") and type(result).__name__ == "aminmax"
    assert result.min.tolist() == [[1.0], [2.0]] and result.max.tolist() == [[5.0], [7.0]]
    z = leaf(np.zeros((0, 2)))
    with unchanged(z):
        with pytest.raises(RuntimeError, match=r"aminmax.*empty.*\(0, 2\)"):
            oxmera.aminmax(z)
    with pytest.raises(RuntimeError, match="aminmax"):
        z.aminmax(dim=0)
    assert z.aminmax(dim=1).max.shape == (0,)


def test_count_nonzero():
    x = oxmera.tensor([[0.0, 1.0, NAN], [2.0, 0.0, -0.0]])
    assert x.count_nonzero().item() == 3
    assert oxmera.count_nonzero(x, dim=1).tolist() == [2, 1]
    assert oxmera.count_nonzero(x, (0, 1)).dtype == I64
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.count_nonzero(dim=(0, 0))


# -- order statistics --------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(_ARRAYS, st.data())
def test_median_is_the_lower_median(values, data):
    x = oxmera.tensor(values)
    flat = np.sort(values.reshape(-1))
    assert x.median().item() == flat[(flat.size - 1) // 2]
    dim = _dim(data, values)
    result = oxmera.median(x, dim, keepdim=True)
    ordered = np.sort(values, axis=dim)
    expected = np.take(ordered, [(values.shape[dim] - 1) // 2], axis=dim)
    np.testing.assert_array_equal(result.values.numpy(), expected)
    np.testing.assert_array_equal(
        np.take_along_axis(values, result.indices.numpy(), dim), expected)


def test_median_and_nanmedian_with_nan():
    x = oxmera.tensor([[3.0, NAN, 1.0, 2.0], [NAN, NAN, NAN, NAN]])
    assert math.isnan(x.median().item())
    assert x.nanmedian().item() == 2.0
    values, indices = x.median(1)
    assert math.isnan(values[0].item()) and indices[0].item() == 1      # the first NaN
    values, indices = x.nanmedian(1)
    assert values[0].item() == 2.0 and indices[0].item() == 3
    assert math.isnan(values[1].item())
    assert math.isnan(oxmera.tensor([], dtype=F64).median().item())


def test_median_gradients_follow_pytorch():
    x = leaf([1.0, 2.0, 2.0, 3.0])
    x.median().backward()                       # equal elements share it
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5, 0.0])
    y = leaf([[4.0, 1.0, 3.0]])
    values = y.median(dim=1).values
    assert values.grad_fn.name == backward_name("median")
    values.sum().backward()                     # along dim: to the picked element
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 0.0, 1.0]])


def test_mode_is_the_smallest_most_frequent_value_at_its_last_index():
    x = oxmera.tensor([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 2.0, 5.0, 2.0, 2.0]])
    values, indices = x.mode()
    assert values.tolist() == [1.0, 2.0] and indices.tolist() == [3, 4]
    values, indices = oxmera.mode(x, 0, keepdim=True)
    assert values.tolist() == [[1.0, 2.0, 2.0, 1.0, 2.0]]
    assert indices.shape == (1, 5)
    nan_mode = oxmera.tensor([NAN, 1.0, NAN]).mode()
    assert math.isnan(nan_mode.values.item())


@settings(max_examples=30, deadline=None)
@given(_ARRAYS, st.data())
def test_kthvalue_matches_a_sort(values, data):
    dim = _dim(data, values)
    k = data.draw(st.integers(1, values.shape[dim]))
    result = oxmera.kthvalue(oxmera.tensor(values), k, dim)
    np.testing.assert_array_equal(result.values.numpy(),
                                  np.take(np.sort(values, axis=dim), k - 1, axis=dim))
    assert type(result).__name__ == "kthvalue"


@pytest.mark.parametrize("call, error, match", [
    (lambda x: x.kthvalue(0), RuntimeError, r"kthvalue.*k=0.*size 3"),
    (lambda x: x.kthvalue(4), RuntimeError, r"kthvalue.*k=4"),
    (lambda x: x.median(dim=3), IndexError, "median"),
    (lambda x: x[:, :0].median(dim=1), IndexError, r"median.*dim 1.*non-zero size"),
    (lambda x: x[:, :0].nanmedian(1), IndexError, r"nanmedian.*non-zero size"),
    (lambda x: x[:, :0].mode(), IndexError, r"mode.*non-zero size"),
    (lambda x: x.cummax(2), IndexError, "cummax"),
])
def test_order_statistic_errors_change_nothing(call, error, match):
    x = leaf([[1.0, 2.0, 3.0]])
    with unchanged(x):
        with pytest.raises(error, match=match):
            call(x)


# -- quantile, nanquantile ---------------------------------------------------------------------

_METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


@settings(max_examples=40, deadline=None)
@given(_ARRAYS, st.data(), st.sampled_from(_METHODS))
def test_quantile_matches_numpy(values, data, method):
    q = data.draw(st.lists(st.floats(0, 1), min_size=1, max_size=3))
    dim = data.draw(st.none() | st.integers(-values.ndim, values.ndim - 1))
    keepdim = data.draw(st.booleans())
    got = oxmera.quantile(oxmera.tensor(values), oxmera.tensor(q, dtype=F64), dim, keepdim,
                          interpolation=method)
    expected = np.quantile(values, q, axis=dim, keepdims=keepdim, method=method)
    if dim is None and not keepdim:
        expected = expected.reshape(len(q))
    assert got.shape == expected.shape
    # 'nearest' at an exact half: both break ties to even, but the rank's
    # rounding can differ in the last bit; only compare where it is not a half.
    ranks = np.asarray(q) * ((values.size if dim is None else values.shape[dim]) - 1)
    if method == "nearest" and np.any(np.abs(ranks - np.floor(ranks) - 0.5) < 1e-9):
        return
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-10)


def test_nanquantile_ignores_nan_and_quantile_propagates_it():
    x = oxmera.tensor([[1.0, NAN, 3.0, 2.0], [NAN, NAN, NAN, NAN]], dtype=F64)
    np.testing.assert_array_equal(x.nanquantile(0.5, dim=1).numpy(), [2.0, NAN])
    assert math.isnan(x[0].quantile(0.5).item())
    assert x[0].nanquantile(0.75).item() == np.nanquantile(x[0].numpy(), 0.75)


def test_quantile_is_differentiable_in_q():
    x = oxmera.tensor([0.0, 10.0, 20.0, 40.0], dtype=F64)
    q = leaf(0.5)
    x.quantile(q).backward()
    # the rank 1.5 lies between 10 and 20: d/dq = (20 - 10) * 3
    assert q.grad.item() == pytest.approx(30.0)


@pytest.mark.parametrize("call, match", [
    (lambda x: x.quantile(1.5), r"quantile.*\[0, 1\].*1.5"),
    (lambda x: x.quantile(-0.1), r"quantile.*\[0, 1\]"),
    (lambda x: x.quantile(oxmera.tensor([0.5])), "same dtype"),
    (lambda x: x.quantile(oxmera.full((2, 2), 0.5, dtype=F64)), "scalar or 1D"),
    (lambda x: x.quantile(0.5, interpolation="cubic"), "interpolation must be one of"),
    (lambda x: x[:0].nanquantile(0.5), "non-empty"),
    (lambda x: x.long().quantile(0.5), "float or double"),
    (lambda x: x.quantile(0.5, dim=2), "quantile"),
])
def test_quantile_errors_change_nothing(call, match):
    x = leaf([1.0, 2.0, 3.0])
    with unchanged(x):
        with pytest.raises((RuntimeError, IndexError), match=match):
            call(x)


# -- cummax, cummin, logcumsumexp, diff --------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.integers(-3, 3).map(float)), st.data())
def test_cummax_and_cummin_against_pytorchs_rule(values, data):
    dim = _dim(data, values)
    for name, better in (("cummax", np.greater_equal), ("cummin", np.less_equal)):
        result = getattr(oxmera, name)(oxmera.tensor(values), dim)
        moved = np.moveaxis(values, dim, -1).reshape(-1, values.shape[dim])
        expected = np.zeros(moved.shape, np.int64)
        for r, row in enumerate(moved):      # the loop PyTorch's kernel runs
            best = 0
            for i, v in enumerate(row):
                if better(v, row[best]):
                    best = i
                expected[r, i] = best
        got = np.moveaxis(result.indices.numpy(), dim, -1).reshape(expected.shape)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(result.values.numpy(),
                                      np.take_along_axis(values, result.indices.numpy(), dim))


def test_cummax_node_and_gradient_to_the_running_index():
    x = leaf([1.0, 3.0, 2.0, 4.0])
    values = x.cummax(0).values
    assert values.grad_fn.name == backward_name("cummax") == "CummaxBackward"
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0, 0.0, 1.0])


@settings(max_examples=30, deadline=None)
@given(_ARRAYS, st.data())
def test_logcumsumexp_matches_numpy(values, data):
    dim = _dim(data, values)
    got = oxmera.logcumsumexp(oxmera.tensor(values), dim)
    # (the naive reference rounds log(exp(tiny)) to 0: an absolute tolerance too)
    np.testing.assert_allclose(got.numpy(), np.log(np.cumsum(np.exp(values), axis=dim)),
                               rtol=1e-12, atol=1e-12)


def test_logcumsumexp_is_stable_and_float_only():
    x = oxmera.tensor([1e4, 1e4, -INF, 1e4])
    np.testing.assert_allclose(x.logcumsumexp(0).numpy(),
                               [1e4, 1e4 + math.log(2), 1e4 + math.log(2), 1e4 + math.log(3)])
    assert oxmera.logcumsumexp(oxmera.tensor([1.0], dtype=oxmera.float16), 0).dtype == \
        oxmera.float16
    with pytest.raises(RuntimeError, match="logcumsumexp.*floating point.*int64"):
        oxmera.logcumsumexp(oxmera.tensor([1, 2]), 0)


@settings(max_examples=30, deadline=None)
@given(_ARRAYS, st.data(), st.integers(0, 4))
def test_diff_matches_numpy(values, data, n):
    dim = _dim(data, values)
    got = oxmera.diff(oxmera.tensor(values), n, dim)
    np.testing.assert_allclose(got.numpy(), np.diff(values, n, axis=dim), rtol=1e-12)


def test_diff_errors():
    with pytest.raises(RuntimeError, match="diff.*one-dimensional"):
        oxmera.tensor(1.0).diff()
    with pytest.raises(RuntimeError, match="diff.*non-negative"):
        oxmera.tensor([1.0]).diff(-1)
