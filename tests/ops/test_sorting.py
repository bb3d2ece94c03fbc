"""sort, argsort, msort, topk, unique, unique_consecutive, searchsorted,
bucketize, histc, histogram, bincount: forward against NumPy (hypothesis
over shapes and ties), result types and dtypes, the nodes recorded, and
errors (type, message, nothing changed). Gradients to second order are in
``test_gradients.py``, PyTorch comparisons in ``test_torch.py``.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import oxmera

from ._helpers import backward_name, leaf, unchanged

NAN = math.nan
I32, I64 = oxmera.int32, oxmera.int64

# Small integers as floats: many ties, so stability is exercised.
_TIED = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                   elements=st.integers(-3, 3).map(float))


def _stable_order(row, descending):
    """The reference: Python's stable sort on (NaN is largest) keys."""
    def key(i):
        v = row[i]
        big = math.isnan(v)
        return (big, v if not big else 0.0) if not descending else (not big, -v if not big else 0.0)
    return sorted(range(len(row)), key=key)


@settings(max_examples=40, deadline=None)
@given(_TIED, st.data(), st.booleans())
def test_sort_is_stable_and_puts_nan_last(values, data, descending):
    values = values.copy()
    values.reshape(-1)[::4] = NAN
    dim = data.draw(st.integers(-values.ndim, values.ndim - 1))
    result = oxmera.sort(oxmera.tensor(values), dim, descending=descending, stable=True)
    moved = np.moveaxis(values, dim, -1).reshape(-1, values.shape[dim])
    expected = np.array([_stable_order(row, descending) for row in moved])
    got = np.moveaxis(result.indices.numpy(), dim, -1).reshape(expected.shape)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(result.values.numpy(),
                                  np.take_along_axis(values, result.indices.numpy(), dim))
    np.testing.assert_array_equal(
        oxmera.argsort(oxmera.tensor(values), dim, descending=descending).numpy(),
        result.indices.numpy())


def test_sort_result_type_method_and_node():
    x = leaf([[3.0, 1.0, 2.0]])
    result = x.sort()
    assert isinstance(result, tuple) and result._fields == ("values", "indices")
    assert type(result).__name__ == "sort"
    values, indices = result
    assert indices.dtype == I64 and not indices.requires_grad
    assert values.grad_fn.name == backward_name("sort") == "SortBackward"
    (values * oxmera.tensor([[1.0, 10.0, 100.0]], dtype=oxmera.float64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[100.0, 1.0, 10.0]])


def test_sort_of_integers_and_bool_keeps_the_dtype():
    for dtype in (oxmera.int32, oxmera.int64, oxmera.uint8, oxmera.bool, oxmera.float16):
        x = oxmera.tensor([2, 0, 1, 1]).to(dtype)
        values, indices = x.sort(descending=True)
        assert values.dtype == dtype and indices.dtype == I64


def test_msort_is_sort_along_dim_0():
    x = oxmera.tensor([[3.0, 1.0], [1.0, 2.0], [0.0, 5.0]])
    np.testing.assert_array_equal(oxmera.msort(x).numpy(), np.sort(x.numpy(), axis=0))


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-10, 10), unique=True), st.data(), st.booleans())
def test_topk_matches_a_full_sort(values, data, largest):
    dim = data.draw(st.integers(-values.ndim, values.ndim - 1))
    k = data.draw(st.integers(0, values.shape[dim]))
    result = oxmera.topk(oxmera.tensor(values), k, dim, largest=largest)
    ordered = np.sort(values, axis=dim)
    if largest:
        ordered = np.flip(ordered, dim)
    np.testing.assert_array_equal(result.values.numpy(),
                                  np.take(ordered, np.arange(k), axis=dim))
    np.testing.assert_array_equal(np.take_along_axis(values, result.indices.numpy(), dim),
                                  result.values.numpy())


def test_topk_picks_the_lower_index_among_ties():
    values, indices = oxmera.tensor([1.0, 3.0, 3.0, 2.0]).topk(2)
    assert indices.tolist() == [1, 2]


@pytest.mark.parametrize("call, error, match", [
    (lambda x: x.topk(4), RuntimeError, r"topk.*k=4.*size 3"),
    (lambda x: x.topk(-1), RuntimeError, r"topk.*k=-1"),
    (lambda x: x.sort(dim=2), IndexError, "sort"),
    (lambda x: x.topk(1, dim=-3), IndexError, "topk"),
    (lambda x: x.argsort(dim=5), IndexError, "argsort"),
])
def test_sorting_errors_change_nothing(call, error, match):
    x = leaf([[1.0, 2.0, 3.0]])
    with unchanged(x):
        with pytest.raises(error, match=match):
            call(x)


# -- unique, unique_consecutive ----------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.integers(-2, 2)))
def test_unique_matches_numpy(values):
    out, inverse, counts = oxmera.unique(oxmera.tensor(values), return_inverse=True,
                                         return_counts=True)
    expected, expected_inverse, expected_counts = np.unique(values, return_inverse=True,
                                                            return_counts=True)
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(inverse.numpy(), expected_inverse.reshape(values.shape))
    np.testing.assert_array_equal(counts.numpy(), expected_counts)
    assert inverse.dtype == counts.dtype == I64
    assert oxmera.unique(oxmera.tensor(values)).shape == expected.shape


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.integers(0, 1)), st.data())
def test_unique_consecutive_against_a_loop(values, data):
    dim = data.draw(st.none() | st.integers(0, values.ndim - 1))
    out, inverse, counts = oxmera.unique_consecutive(oxmera.tensor(values), return_inverse=True,
                                                     return_counts=True, dim=dim)
    items = list(values.reshape(-1)) if dim is None else list(np.moveaxis(values, dim, 0))
    runs, lengths, where = [], [], []
    for item in items:
        if runs and np.array_equal(runs[-1], item):
            lengths[-1] += 1
        else:
            runs.append(item)
            lengths.append(1)
        where.append(len(runs) - 1)
    if dim is None:
        np.testing.assert_array_equal(out.numpy(), np.array(runs, dtype=np.int64))
        np.testing.assert_array_equal(inverse.numpy(), np.reshape(where, values.shape))
    else:
        np.testing.assert_array_equal(np.moveaxis(out.numpy(), dim, 0), np.array(runs))
        np.testing.assert_array_equal(inverse.numpy(), where)
    np.testing.assert_array_equal(counts.numpy(), lengths)


def test_unique_returns_one_tensor_or_a_tuple():
    x = oxmera.tensor([2, 1, 2])
    assert isinstance(x.unique(), oxmera.Tensor)
    assert len(x.unique(return_inverse=True)) == 2
    assert len(x.unique(return_counts=True)) == 2
    assert x.unique(return_counts=True)[1].tolist() == [1, 2]


def test_unique_dim_errors():
    with pytest.raises(IndexError, match="unique"):
        oxmera.tensor([[1, 2]]).unique(dim=2)
    with pytest.raises(RuntimeError, match="unique.*0-d"):
        oxmera.tensor(3).unique(dim=0)
    with pytest.raises(RuntimeError, match="unique_consecutive.*0-d"):
        oxmera.tensor(3).unique_consecutive(dim=0)


# -- searchsorted, bucketize -------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.int64, st.integers(0, 6), elements=st.integers(-5, 5)),
       hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=2, max_side=4),
                  elements=st.integers(-6, 6)), st.booleans())
def test_searchsorted_and_bucketize_match_numpy(boundaries, values, right):
    boundaries = np.sort(boundaries)
    expected = np.searchsorted(boundaries, values, side="right" if right else "left")
    found = oxmera.searchsorted(oxmera.tensor(boundaries), oxmera.tensor(values), right=right)
    np.testing.assert_array_equal(found.numpy(), expected)
    assert found.dtype == I64 and found.shape == values.shape
    buckets = oxmera.bucketize(oxmera.tensor(values), oxmera.tensor(boundaries), right=right,
                               out_int32=True)
    assert buckets.dtype == I32
    np.testing.assert_array_equal(buckets.numpy(), expected)


def test_searchsorted_searches_each_row_and_takes_a_sorter():
    boundaries = oxmera.tensor([[1, 3, 5], [2, 4, 6]])
    values = oxmera.tensor([[3, 6], [1, 7]])
    assert oxmera.searchsorted(boundaries, values).tolist() == [[1, 3], [0, 3]]
    assert oxmera.searchsorted(boundaries, values, side="right").tolist() == [[2, 3], [0, 3]]
    unsorted = oxmera.tensor([[5, 1, 3], [6, 2, 4]])
    order = unsorted.argsort()
    assert oxmera.searchsorted(unsorted, values, sorter=order).tolist() == [[1, 3], [0, 3]]
    assert oxmera.searchsorted(oxmera.tensor([1.0, 3.0]), 2.0).shape == ()


@pytest.mark.parametrize("call, match", [
    (lambda s, v: oxmera.searchsorted(s, v, side="middle"), "side can only be"),
    (lambda s, v: oxmera.searchsorted(s, v, side="left", right=True), "opposites"),
    (lambda s, v: oxmera.searchsorted(s.reshape(2, 2), v), r"first N-1 dimensions.*\[2, 2\]"),
    (lambda s, v: oxmera.searchsorted(s, v, sorter=oxmera.tensor([0, 1])), "sorter"),
    (lambda s, v: oxmera.searchsorted(s, v, sorter=oxmera.tensor([0, 1, 2, 9])), "sorter"),
    (lambda s, v: oxmera.bucketize(v, s.reshape(2, 2)), r"bucketize.*dim\(2\)"),
])
def test_searchsorted_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call(oxmera.tensor([1, 3, 5, 7]), oxmera.tensor([2, 6, 8]))


# -- histc, histogram, bincount ----------------------------------------------------------------

def test_histc_counts_on_a_grid():
    x = oxmera.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 2.0, -1.0, 9.0, NAN])
    assert x.histc(bins=4, min=0, max=2).tolist() == [1.0, 1.0, 1.0, 3.0]
    # min == max: the data's range (NaN ignored)
    assert oxmera.histc(oxmera.tensor([1.0, 3.0, NAN]), bins=2).tolist() == [1.0, 1.0]
    h = oxmera.histc(oxmera.tensor([1.0, 2.0], dtype=oxmera.float64), 3)
    assert h.dtype == oxmera.float64 and h.sum().item() == 2.0


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 30), elements=st.floats(-4, 4)),
       st.integers(1, 8))
def test_histogram_matches_numpy(values, bins):
    hist, edges = oxmera.histogram(oxmera.tensor(values), bins, range=(-4.0, 4.0))
    expected_edges = np.histogram_bin_edges(values, bins, range=(-4.0, 4.0))
    np.testing.assert_allclose(edges.numpy(), expected_edges, rtol=0, atol=1e-12)
    # Counted against our edges (PyTorch's linspace, which can differ from
    # NumPy's in the last bit), NumPy's rule: [left, right), the last closed.
    expected, _ = np.histogram(values, edges.numpy())
    np.testing.assert_array_equal(hist.numpy(), expected)


def test_bin_edges_are_pytorchs_linspace_to_the_last_bit():
    # Each edge is one fused multiply-add from the nearer end: the middle
    # float32 edge of [-2.5, 2.5] in 6 bins is 2.5 - 3 * float32(5/6), not 0.
    hist, edges = oxmera.histogram(oxmera.tensor([0.0, -0.5, -2.5, 2.5]), 6)
    middle = np.float32(2.5) - np.float64(np.float32(5.0) / np.float32(6.0)) * 3
    assert edges[3].item() == np.float32(middle) == np.float32(5.960464477539063e-08)
    assert hist.tolist() == [1.0, 0.0, 2.0, 0.0, 0.0, 1.0]
    # histc places by interpolation alone, without looking at the edges, as
    # PyTorch's does: (0 - -2.5) * 6 / 5 is exactly 3.
    assert oxmera.histc(oxmera.tensor([0.0, -0.5, -2.5, 2.5]), 6).tolist() == [1.0, 0.0, 1.0,
                                                                                1.0, 0.0, 1.0]


def test_histogram_with_edges_weights_and_density():
    x = oxmera.tensor([0.5, 1.0, 2.5, 3.0, 7.0])
    edges = oxmera.tensor([0.0, 1.0, 3.0])
    hist, out_edges = oxmera.histogram(x, edges, weight=oxmera.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert hist.tolist() == [1.0, 9.0] and out_edges.tolist() == [0.0, 1.0, 3.0]
    density = x.histogram(edges, density=True).hist
    np.testing.assert_allclose((density * oxmera.tensor([1.0, 2.0])).sum().item(), 1.0)
    assert type(x.histogram(2)).__name__ == "histogram"


def test_bincount_matches_numpy():
    x = np.array([0, 4, 1, 1, 4, 4])
    np.testing.assert_array_equal(oxmera.bincount(oxmera.tensor(x)).numpy(), np.bincount(x))
    w = np.linspace(0.5, 3.0, 6)
    got = oxmera.tensor(x).bincount(oxmera.tensor(w), minlength=8)
    assert got.dtype == oxmera.float64 and got.shape == (8,)
    np.testing.assert_allclose(got.numpy(), np.bincount(x, w, minlength=8))
    weighted = oxmera.bincount(oxmera.tensor(x), oxmera.tensor(w).float())
    assert weighted.dtype == oxmera.float32
    assert oxmera.bincount(oxmera.tensor(x), oxmera.tensor(x)).dtype == oxmera.float64


def test_bincount_of_weights_that_require_grad_records_nothing():
    w = leaf([1.0, 2.0, 3.0])
    out = oxmera.bincount(oxmera.tensor([0, 0, 2]), weights=w)
    assert out.tolist() == [3.0, 0.0, 3.0] and not out.requires_grad


@pytest.mark.parametrize("call, match", [
    (lambda: oxmera.histc(oxmera.tensor([1, 2])), "histc.*floating point.*int64"),
    (lambda: oxmera.histc(oxmera.tensor([1.0]), bins=0), "histc.*bins must be > 0"),
    (lambda: oxmera.histc(oxmera.tensor([1.0]), min=3, max=1), "max must be larger than min"),
    (lambda: oxmera.histc(oxmera.tensor([1.0]), min=0, max=math.inf), "not finite"),
    (lambda: oxmera.histogram(oxmera.tensor([1, 2]), 3), "histogram.*floating point"),
    (lambda: oxmera.histogram(oxmera.tensor([1.0]), 3, weight=oxmera.ones(2)), "weight"),
    (lambda: oxmera.histogram(oxmera.tensor([1.0]), oxmera.tensor([0.0, 1.0],
                                                                  dtype=oxmera.float64)),
     "same dtype"),
    (lambda: oxmera.histogram(oxmera.tensor([1.0]), oxmera.tensor([1.0, 0.0])),
     "non-decreasing"),
    (lambda: oxmera.histogram(oxmera.tensor([1.0]), 2, range=(1.0, 0.0)), "min should not"),
    (lambda: oxmera.bincount(oxmera.tensor([-1, 2])), "1-d non-negative integral"),
    (lambda: oxmera.bincount(oxmera.tensor([[1]])), "1-d non-negative integral"),
    (lambda: oxmera.bincount(oxmera.tensor([1.0])), "1-d non-negative integral"),
    (lambda: oxmera.bincount(oxmera.tensor([1]), minlength=-1), "minlength"),
    (lambda: oxmera.bincount(oxmera.tensor([1]), oxmera.ones(2)), "weights"),
])
def test_histogram_errors(call, match):
    with pytest.raises(RuntimeError, match=match):
        call()
