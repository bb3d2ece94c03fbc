"""Sorting and searching: sort, argsort, msort, topk, unique, unique_consecutive,
searchsorted, bucketize, histc, histogram, bincount.

Orders are computed with NumPy's stable sort, so equal elements keep their
order (what ``stable=True`` asks of PyTorch; without it PyTorch leaves the
order of ties unspecified), and NaN sorts as the largest value, as in
PyTorch. Ops that pick elements (``sort``, ``topk``, and the selecting
reductions of ``oxmera.ops.statistics``: ``kthvalue``, ``median``, ``mode``,
``cummax``) return ``(values, indices)`` and send the gradient of the values
back to the picked elements (``select_backward``, a ``scatter_add``, so it
is itself differentiable). Everything else here returns indices or counts
and is not differentiable.
"""
import builtins
import collections

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import normalize_dim, ordered_only
from oxmera.ops.creation import zeros
from oxmera.ops.index import _scatter_add

__all__ = ["sort", "argsort", "msort", "topk", "unique", "unique_consecutive", "searchsorted",
           "bucketize", "histc", "histogram", "bincount"]

OpError = _core.OpError


def return_type(name, fields):
    """A named tuple class for a composite's result, shown as PyTorch's
    ``torch.return_types.<name>`` are (the ops' own come from ``op(outputs=...)``)."""
    result = collections.namedtuple(name, fields)
    result.__module__ = "oxmera.return_types"
    return result


# -- shared by the selecting ops ---------------------------------------------------------------

def last_axis(array, d):
    """``array`` with dim ``d`` moved last (a 0-d array becomes one element along it)."""
    return array.reshape(1) if array.ndim == 0 else np.moveaxis(array, d, -1)


def back_from_last_axis(array, d, ndim):
    """Undo ``last_axis`` for a result of ``ndim`` dims."""
    return array.reshape(array.shape[:-1]) if ndim == 0 else np.moveaxis(array, -1, d)


def sort_order(moved, descending):
    """The stable sorting order along the last axis; NaN is the largest value.

    Descending is the ascending order of the reversed slice, reversed: equal
    elements keep their order (as ``stable=True`` asks) and NaN comes first.
    """
    ordered_only(moved, "sort")
    if not descending:
        return np.argsort(moved, axis=-1, kind="stable")
    n = moved.shape[-1]
    return (n - 1) - np.argsort(moved[..., ::-1], axis=-1, kind="stable")[..., ::-1]


def select_backward(ctx, grads, dim, keepdim):
    """The gradient of an op returning ``(values, indices)`` picked along ``dim``:
    each value's gradient added at the index it came from (repeats add up)."""
    grad, indices = grads[0], ctx.output[1]
    shape = tuple(ctx.input_shape(0))
    if not shape:
        return grad.reshape(())
    d = normalize_dim(dim, len(shape), "select_backward")
    if not keepdim and grad.ndim < len(shape):
        grad, indices = grad.unsqueeze(d), indices.unsqueeze(d)
    return _scatter_add(zeros(shape, dtype=grad.dtype), grad, d, indices)


def _dim_of(input, dim, opname):
    return normalize_dim(dim, input.ndim, opname)


# -- sort, argsort, msort ----------------------------------------------------------------------

@op(save=(), save_output=True, outputs=("values", "indices"), method=True)
def sort(input, dim=-1, descending=False, stable=False):
    """Sort along ``dim``: a named tuple ``(values, indices)`` with
    ``values == input.gather(dim, indices)``.

    The sort is always stable (equal elements keep their order), as
    ``stable=True`` asks; with the default ``stable=False`` PyTorch's CPU
    sort may order equal elements of slices longer than 16 differently (its
    order of ties is unspecified then). NaN is the largest value
    (last ascending, first descending). The gradient of ``values`` goes back
    to the elements they came from.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]])
    >>> x.sort()
    sort(values=tensor([[ 1.,  2.,  3.],
            [-1.,  0.,  5.]], dtype=float32), indices=tensor([[1, 2, 0],
            [2, 0, 1]], dtype=int64))
    >>> oxmera.sort(x, dim=0, descending=True).indices
    tensor([[0, 1, 0],
            [1, 0, 1]], dtype=int64)
    """
    d = _dim_of(input, dim, "sort")
    moved = last_axis(input, d)
    order = sort_order(moved, descending)
    values = np.take_along_axis(moved, order, axis=-1)
    return (back_from_last_axis(values, d, input.ndim),
            back_from_last_axis(order, d, input.ndim).astype(np.int64, copy=False))


@sort.vjp
def _(ctx, grads, input, dim=-1, descending=False, stable=False):
    return select_backward(ctx, grads, dim, True)


@op(differentiable=False, method=True)
def argsort(input, dim=-1, descending=False, stable=False):
    """The indices (int64) that sort ``input`` along ``dim``: ``sort(...).indices``.

    Stable whatever ``stable`` says; NaN is the largest value. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.argsort(oxmera.tensor([2.0, 1.0, 2.0, 0.0]))
    tensor([3, 1, 0, 2], dtype=int64)
    >>> oxmera.tensor([2.0, 1.0, 2.0, 0.0]).argsort(descending=True)
    tensor([0, 2, 1, 3], dtype=int64)
    """
    d = _dim_of(input, dim, "argsort")
    order = sort_order(last_axis(input, d), descending)
    return back_from_last_axis(order, d, input.ndim).astype(np.int64, copy=False)


def msort(input):
    """``input`` sorted along its first dim: ``sort(input, dim=0).values``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[3.0, 1.0], [1.0, 2.0]]).msort()
    tensor([[1., 1.],
            [3., 2.]], dtype=float32)
    """
    return sort(input, 0).values


# -- topk --------------------------------------------------------------------------------------

@op(save=(), save_output=True, outputs=("values", "indices"), method=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim``:
    a named tuple ``(values, indices)``.

    The result is always sorted (largest first, or smallest first), which
    ``sorted=False`` allows too. NaN counts as the largest value. Among equal
    values the lower index comes first; PyTorch does not specify which of
    tied elements it returns, so indices of ties may differ from its. The
    gradient of ``values`` goes back to the elements picked.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 5.0, 3.0, 4.0])
    >>> x.topk(2)
    topk(values=tensor([5., 4.], dtype=float32), indices=tensor([1, 3], dtype=int64))
    >>> oxmera.topk(x, 1, largest=False).indices
    tensor([0], dtype=int64)
    """
    d = _dim_of(input, dim, "topk")
    moved = last_axis(input, d)
    k = int(k)
    if not 0 <= k <= moved.shape[-1]:
        raise OpError(f"topk(): selected index k={k} out of range for dimension {d} of size "
                      f"{moved.shape[-1]} (input shape {input.shape})")
    order = sort_order(moved, largest)[..., :k]
    values = np.take_along_axis(moved, order, axis=-1)
    return (back_from_last_axis(values, d, input.ndim),
            back_from_last_axis(order, d, input.ndim).astype(np.int64, copy=False))


@topk.vjp
def _(ctx, grads, input, k, dim=-1, largest=True, sorted=True):
    return select_backward(ctx, grads, dim, True)


# -- unique, unique_consecutive ----------------------------------------------------------------

def _unique_results(values, inverse, counts, return_inverse, return_counts):
    results = [values]
    if return_inverse:
        results.append(inverse.astype(np.int64, copy=False))
    if return_counts:
        results.append(counts.astype(np.int64, copy=False))
    return results[0] if len(results) == 1 else tuple(results)


@op(differentiable=False, method=True)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements of ``input`` (or, with ``dim``, its distinct slices
    along ``dim``), in ascending order; with ``return_inverse`` also where each
    element went (the index into the result, shaped as ``input``, or as its
    dim ``dim``), with ``return_counts`` also how often each occurs.

    The result is sorted even with ``sorted=False``, as PyTorch's CPU
    ``unique`` is. Each NaN is distinct from every other, as in PyTorch. Not
    differentiable.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([3, 1, 2, 1, 3])
    >>> oxmera.unique(x)
    tensor([1, 2, 3], dtype=int64)
    >>> values, inverse, counts = x.unique(return_inverse=True, return_counts=True)
    >>> inverse
    tensor([2, 0, 1, 0, 2], dtype=int64)
    >>> counts
    tensor([2, 1, 2], dtype=int64)
    """
    if dim is None:
        values, inverse, counts = np.unique(input.reshape(-1), return_inverse=True,
                                            return_counts=True, equal_nan=False)
        inverse = inverse.reshape(input.shape)
    else:
        d = normalize_dim(dim, input.ndim, "unique")
        if input.ndim == 0:
            raise OpError("unique(): a 0-d tensor has no dim to take unique slices along")
        if input.shape[d] == 0:
            values = input.copy()
            inverse, counts = np.zeros(0, np.int64), np.zeros(0, np.int64)
        else:
            values, inverse, counts = np.unique(input, return_inverse=True,
                                                return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    return _unique_results(values, inverse, counts, return_inverse, return_counts)


@op(differentiable=False, method=True)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of equal consecutive elements (or, with ``dim``,
    of equal consecutive slices along ``dim``) kept once; optionally the
    inverse (the run each element belongs to) and the run lengths, as
    :func:`unique`. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1, 1, 2, 2, 3, 1])
    >>> oxmera.unique_consecutive(x)
    tensor([1, 2, 3, 1], dtype=int64)
    >>> x.unique_consecutive(return_counts=True)[1]
    tensor([2, 2, 1, 1], dtype=int64)
    """
    if dim is None:
        flat = input.reshape(-1)
        changed = flat[1:] != flat[:-1]
        d = 0
    else:
        if input.ndim == 0:
            raise OpError("unique_consecutive(): a 0-d tensor has no dim to take slices along")
        d = normalize_dim(dim, input.ndim, "unique_consecutive")
        rows = np.moveaxis(input, d, 0).reshape(input.shape[d], -1)
        changed = np.any(rows[1:] != rows[:-1], axis=1)
    length = flat.size if dim is None else input.shape[d]
    # Each run starts where an element (slice) differs from the one before it.
    starts = np.concatenate([[True], changed]) if length else np.zeros(0, bool)
    positions = np.flatnonzero(starts)
    values = flat[positions] if dim is None else np.take(input, positions, axis=d)
    inverse = np.cumsum(starts) - 1
    if dim is None:
        inverse = inverse.reshape(input.shape)
    counts = np.diff(np.append(positions, length))
    return _unique_results(values, inverse, counts, return_inverse, return_counts)


# -- searchsorted, bucketize -------------------------------------------------------------------

def _side(right, side, opname):
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise OpError(f"{opname}(): side can only be 'left' or 'right' but got {side!r}")
    if right and side == "left":
        raise OpError(f"{opname}(): side and right can't be set to opposites, got side of "
                      f"left while right was True")
    return side


def _search(boundaries, values, side, out_int32):
    """Insertion points of ``values`` in the rows of ``boundaries`` (last dim)."""
    values = np.asarray(values)
    if boundaries.ndim <= 1:
        out = np.searchsorted(boundaries.reshape(-1), values, side=side)
    else:
        rows = boundaries.reshape(-1, boundaries.shape[-1])
        queries = values.reshape(rows.shape[0], -1)
        out = np.stack([np.searchsorted(row, query, side=side)
                        for row, query in zip(rows, queries)]).reshape(values.shape)
    return np.asarray(out, dtype=np.int32 if out_int32 else np.int64)


@op(inputs=2, differentiable=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where each of ``input`` would be inserted in ``sorted_sequence`` to keep it
    sorted, searching its last dim: the first such index (``right=True`` or
    ``side="right"``: the last). ``sorted_sequence`` is 1-D, or has
    ``input``'s leading dims (each row searched for its own values);
    ``sorter`` gives the order that sorts an unsorted sequence. int64
    results (``out_int32=True``: int32). Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> edges = oxmera.tensor([1, 3, 5, 7])
    >>> oxmera.searchsorted(edges, oxmera.tensor([3, 6, 9]))
    tensor([1, 3, 4], dtype=int64)
    >>> oxmera.searchsorted(edges, 3, right=True)
    tensor(2, dtype=int64)
    """
    side = _side(right, side, "searchsorted")
    values = np.asarray(input)
    if sorted_sequence.ndim == 0:
        raise OpError("searchsorted(): boundaries tensor should be 1 dimension or the first "
                      "N-1 dimensions of boundaries tensor and input value tensor must match, "
                      "but we got a 0-d boundaries tensor")
    if sorted_sequence.ndim > 1 and (values.ndim != sorted_sequence.ndim or
                                     values.shape[:-1] != sorted_sequence.shape[:-1]):
        raise OpError(f"searchsorted(): boundaries tensor should be 1 dimension or the first "
                      f"N-1 dimensions of boundaries tensor and input value tensor must match, "
                      f"but we got boundaries tensor {list(sorted_sequence.shape)} and input "
                      f"value tensor {list(values.shape)}")
    if sorter is not None:
        order = np.asarray(sorter.detach().numpy() if isinstance(sorter, _core.Tensor)
                           else sorter)
        if order.shape != sorted_sequence.shape or order.dtype.kind not in "iu":
            raise OpError(f"searchsorted(): sorter must be an integer tensor of the "
                          f"boundaries' shape {sorted_sequence.shape}, got {order.dtype} "
                          f"{order.shape}")
        if order.size and (order.min() < 0 or order.max() >= sorted_sequence.shape[-1]):
            raise OpError(f"searchsorted(): sorter index out of range for a last dim of size "
                          f"{sorted_sequence.shape[-1]}")
        sorted_sequence = np.take_along_axis(sorted_sequence, order, axis=-1)
    return _search(sorted_sequence, values, side, out_int32)


@op(inputs=2, differentiable=False)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each element of ``input`` between the sorted 1-D
    ``boundaries``: ``i`` with ``boundaries[i-1] < x <= boundaries[i]``
    (``right=True``: ``boundaries[i-1] <= x < boundaries[i]``), i.e.
    ``searchsorted(boundaries, input, right=right)``. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.bucketize(oxmera.tensor([0.5, 1.0, 4.0]), oxmera.tensor([1.0, 2.0, 3.0]))
    tensor([0, 0, 3], dtype=int64)
    """
    if boundaries.ndim != 1:
        raise OpError(f"bucketize(): boundaries tensor must be 1 dimension, but got dim("
                      f"{boundaries.ndim})")
    return _search(boundaries, input, "right" if right else "left", out_int32)


# -- histc, histogram, bincount ----------------------------------------------------------------

def _check_floating(input, opname):
    if input.dtype.kind != "f":
        raise OpError(f"{opname}(): input dtype must be floating point, got {input.dtype}")


def _linspace(start, end, steps, dtype):
    """``steps`` points from ``start`` to ``end`` in ``dtype``, computed as
    PyTorch's CPU linspace does, so bin edges match its to the last bit: from
    both ends towards the middle, each point one fused multiply-add (emulated
    in a wider float: the product of the step and a small count is exact there)."""
    start, end = np.asarray(start, dtype), np.asarray(end, dtype)
    if steps == 1:
        return start.reshape(1)
    step = (end - start) / np.asarray(steps - 1, dtype)
    wide = np.float64 if np.dtype(dtype).itemsize < 8 else np.longdouble
    i = np.arange(steps)
    from_start = start.astype(wide) + step.astype(wide) * i
    from_end = end.astype(wide) - step.astype(wide) * (steps - 1 - i)
    return np.where(i < steps // 2, from_start, from_end).astype(dtype)


def _uniform_bins(input, edges, weight, local_search):
    """Counts (or weight sums) of ``input`` in the ``len(edges) - 1`` equal bins
    between ``edges[0]`` and ``edges[-1]`` (outside: dropped; the top edge
    in the last bin), located by linear interpolation as PyTorch does, then
    (``local_search``, for ``histogram``) moved one bin where the edges say so."""
    bins = edges.shape[0] - 1
    x = input.reshape(-1)
    left, right = edges[0], edges[-1]
    with np.errstate(invalid="ignore"):
        inside = (x >= left) & (x <= right)
    x = x[inside]
    w = None if weight is None else weight.reshape(-1)[inside]
    position = ((x - left) * np.asarray(bins, x.dtype) / (right - left)).astype(np.int64)
    position = np.minimum(position, bins - 1)
    if local_search:
        position -= x < edges[position]
        position += (x >= edges[np.minimum(position + 1, bins)]) & (position + 1 < bins)
    return np.bincount(position, weights=w, minlength=bins)[:bins]


@op(differentiable=False, method=True)
def histc(input, bins=100, min=0, max=0):
    """Histogram of ``input`` in ``bins`` equal bins between ``min`` and ``max``
    (both 0, or equal: the data's smallest and largest values); elements
    outside, and NaN, are not counted. The result has ``input``'s dtype. Not
    differentiable (as in PyTorch).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.histc(oxmera.tensor([1.0, 2.0, 1.0]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.], dtype=float32)
    """
    _check_floating(input, "histc")
    bins = int(bins)
    if bins <= 0:
        raise OpError(f"histc(): bins must be > 0, but got {bins}")
    left, right = float(min), float(max)
    if left == right and input.size:
        finite = input[~np.isnan(input)]
        if finite.size:
            left, right = float(finite.min()), float(finite.max())
    if left == right:
        left, right = left - 1, right + 1
    if not (np.isfinite(left) and np.isfinite(right)):
        raise OpError(f"histc(): range of [{left}, {right}] is not finite")
    if left > right:
        raise OpError(f"histc(): max must be larger than min, got min={min}, max={max}")
    edges = _linspace(left, right, bins + 1, input.dtype)
    return _uniform_bins(input, edges, None, False).astype(input.dtype)


def _histogram_edges(input, bins, range, opname):
    if isinstance(bins, np.ndarray):
        if bins.ndim != 1 or bins.shape[0] < 1:
            raise OpError(f"{opname}(): bins must be a 1-D tensor of bin edges, got shape "
                          f"{bins.shape}")
        if bins.dtype != input.dtype:
            raise OpError(f"{opname}(): input tensor and bins tensors should have the same "
                          f"dtype, but got input {input.dtype} and bins {bins.dtype}")
        if np.any(bins[1:] < bins[:-1]):
            raise OpError(f"{opname}(): bin edges must be non-decreasing")
        return bins, False
    count = int(bins)
    if count <= 0:
        raise OpError(f"{opname}(): bins must be > 0, but got {count}")
    if range is not None:
        left, right = (float(v) for v in range)
        if left > right:
            raise OpError(f"{opname}(): min should not exceed max, but got min {left} max "
                          f"{right}")
    elif input.size:
        left, right = float(np.min(input)), float(np.max(input))
    else:
        left = right = 0.0
    if not (np.isfinite(left) and np.isfinite(right)):
        raise OpError(f"{opname}(): range of [{left}, {right}] is not finite")
    if left == right:
        left, right = left - 0.5, right + 0.5
    return _linspace(left, right, count + 1, input.dtype), True


@op(inputs=2, differentiable=False, outputs=("hist", "bin_edges"), method=True)
def histogram(input, bins, *, range=None, weight=None, density=False):
    """Histogram of ``input``: a named tuple ``(hist, bin_edges)``.

    ``bins`` is a count of equal bins (between ``range=(min, max)``, or the
    data's smallest and largest values) or a 1-D tensor of increasing bin
    edges. Each bin holds ``[left, right)``; the last also its right edge;
    elements outside are not counted. ``weight`` (``input``'s shape) gives
    each element's weight; ``density=True`` scales ``hist`` so it integrates
    to 1 over the bins. Floating tensors only; not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0, 1.0])
    >>> oxmera.histogram(x, 4, range=(0.0, 3.0)).hist
    tensor([0., 2., 1., 0.], dtype=float32)
    >>> x.histogram(oxmera.tensor([0.0, 1.5, 3.0])).hist
    tensor([2., 1.], dtype=float32)
    """
    _check_floating(input, "histogram")
    if weight is not None:
        weight = np.asarray(weight.detach().numpy() if isinstance(weight, _core.Tensor)
                            else weight)
        if weight.shape != input.shape or weight.dtype != input.dtype:
            raise OpError(f"histogram(): weight must have input's shape {input.shape} and "
                          f"dtype {input.dtype}, got {weight.shape} and {weight.dtype}")
    edges, uniform = _histogram_edges(input, bins, range, "histogram")
    n_bins = builtins.max(edges.shape[0] - 1, 0)
    if uniform:
        hist = _uniform_bins(input, edges, weight, True)
    else:
        x = input.reshape(-1)
        position = np.searchsorted(edges, x, side="right") - 1
        position[x == edges[-1]] = n_bins - 1           # the last bin holds its right edge
        inside = (position >= 0) & (position < n_bins)
        w = None if weight is None else weight.reshape(-1)[inside]
        hist = np.bincount(position[inside], weights=w, minlength=n_bins)[:n_bins]
    hist = hist.astype(input.dtype)
    if density:
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = (hist / (hist.sum() * np.diff(edges))).astype(input.dtype)
    return hist, np.array(edges, copy=True)


@op(inputs=2, differentiable=False, method=True)
def bincount(input, weights=None, minlength=0):
    """How often each value from 0 to ``input.max()`` occurs in the 1-D non-negative
    integer ``input`` (at least ``minlength`` bins): int64 counts, or with
    ``weights`` the sums of the weights (float32 weights give float32, any
    other dtype float64, as in PyTorch). Not differentiable (PyTorch records
    the op but has no derivative for it).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([0, 1, 1, 3])
    >>> x.bincount()
    tensor([1, 2, 0, 1], dtype=int64)
    >>> oxmera.bincount(x, weights=oxmera.tensor([0.5, 1.0, 1.0, 2.0]), minlength=5)
    tensor([0.5, 2. , 0. , 2. , 0. ], dtype=float32)
    """
    if input.ndim != 1 or input.dtype.kind not in "iub" or (input.size and input.min() < 0):
        raise OpError(f"bincount(): only supports 1-d non-negative integral inputs, got "
                      f"{input.dtype} of shape {input.shape}")
    if int(minlength) < 0:
        raise OpError(f"bincount(): minlength should be >= 0, got {minlength}")
    if weights is None:
        return np.bincount(input, minlength=int(minlength)).astype(np.int64)
    if weights.shape != input.shape:
        raise OpError(f"bincount(): weights should have the input's shape {input.shape}, got "
                      f"{weights.shape}")
    dtype = np.float32 if weights.dtype == np.float32 else np.float64
    return np.bincount(input, weights=weights.astype(np.float64),
                       minlength=int(minlength)).astype(dtype)


_registry.add_tensor_attribute("msort", msort)
