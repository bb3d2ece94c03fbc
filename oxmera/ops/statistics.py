"""Statistics beyond ``oxmera.ops.reduce``: NaN-ignoring sums and means,
var_mean/std_mean, aminmax, count_nonzero, order statistics (median,
nanmedian, mode, kthvalue, quantile, nanquantile), the running extremes
cummax/cummin, logcumsumexp and diff.

``reduce.py`` owns the plain reductions and scans; this module builds on them
(and on ``sorting.py``'s stable order, where NaN is the largest value). Ops
that pick an element return ``(values, indices)`` named tuples and send the
gradient to the picked element (``sorting.select_backward``); ``median()``
and ``nanmedian()`` over all elements share it among the elements equal to
the result, as PyTorch does; quantiles are composed of ``sort``, ``gather``
and ``lerp``, so they are differentiable in the input and in ``q`` as in
PyTorch.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import accumulation_dtype, narrow, normalize_dim, normalize_dims, pick_dim
from oxmera.ops.creation import tensor
from oxmera.ops.elementwise import (exp, isnan, lerp, log, logical_and, logical_not, logical_or,
                                    logical_xor, where)
from oxmera.ops.index import gather
from oxmera.ops.reduce import amax, amin, mean, std, sum, var
from oxmera.ops.shape import cat, flip
from oxmera.ops.sorting import (last_axis, return_type, select_backward,
                                sort, sort_order)

__all__ = ["nansum", "nanmean", "var_mean", "std_mean", "aminmax", "count_nonzero", "median",
           "nanmedian", "mode", "kthvalue", "quantile", "nanquantile", "cummax", "cummin",
           "logcumsumexp", "diff"]

OpError = _core.OpError


def _nan_mask(array):
    return np.isnan(array) if array.dtype.kind == "f" else np.zeros(array.shape, bool)


# -- nansum, nanmean ---------------------------------------------------------------------------

def nansum(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Sum over ``dim`` (all dims by default) treating NaN as zero; NaN
    elements get a zero gradient.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, float("nan")], [3.0, 4.0]])
    >>> x.nansum()
    tensor(8., dtype=float32)
    >>> oxmera.nansum(x, dim=1)
    tensor([1., 7.], dtype=float32)
    """
    dim = pick_dim(dim, axis, "nansum")
    return sum(where(isnan(input), 0, input), dim, keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Mean over ``dim`` (all dims by default) of the elements that are not
    NaN (NaN where all are); floating tensors only.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, float("nan")], [3.0, 4.0]])
    >>> x.nanmean(dim=1)
    tensor([1. , 3.5], dtype=float32)
    """
    if dtype is None and input.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got "
                           f"{input.dtype}")
    dim = pick_dim(dim, axis, "nanmean")
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# -- var_mean, std_mean, aminmax, count_nonzero ------------------------------------------------

def _spread_and_mean(spread, input, dim, unbiased, keepdim, correction, axis):
    if isinstance(dim, bool) and unbiased is None and axis is None:
        dim, unbiased = None, dim       # PyTorch's var_mean(input, unbiased) form
    return (spread(input, dim, unbiased, keepdim, correction=correction, axis=axis),
            mean(input, dim, keepdim, axis=axis))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """The tuple ``(var(input, ...), mean(input, ...))`` over ``dim``, with
    :func:`var`'s arguments (``correction``, or ``unbiased``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.var_mean(oxmera.tensor([1.0, 2.0, 3.0, 6.0]))
    (tensor(4.6667, dtype=float32), tensor(3., dtype=float32))
    """
    return _spread_and_mean(var, input, dim, unbiased, keepdim, correction, axis)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """The tuple ``(std(input, ...), mean(input, ...))`` over ``dim``, with
    :func:`std`'s arguments (``correction``, or ``unbiased``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.std_mean(oxmera.tensor([[1.0, 3.0], [2.0, 2.0]]), dim=1, correction=0)
    (tensor([1., 0.], dtype=float32), tensor([2., 2.], dtype=float32))
    """
    return _spread_and_mean(std, input, dim, unbiased, keepdim, correction, axis)


_aminmax_result = return_type("aminmax", ("min", "max"))


def aminmax(input, *, dim=None, keepdim=False):
    """The named tuple ``(min, max)`` of ``amin`` and ``amax`` over ``dim``
    (all elements by default). Ties share the gradient evenly, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.aminmax()
    aminmax(min=tensor(1., dtype=float32), max=tensor(7., dtype=float32))
    >>> oxmera.aminmax(x, dim=0).max
    tensor([7., 5.], dtype=float32)
    """
    shape = tuple(input.shape)
    dims = normalize_dims(dim, len(shape), "aminmax")
    if any(shape[d] == 0 for d in dims) or (not dims and 0 in shape):
        raise OpError(f"aminmax(): cannot compute aminmax over an empty dimension as the "
                      f"operation has no identity (input shape {shape}, dim {dim})")
    dims = () if dim is None else dim
    return _aminmax_result(amin(input, dims, keepdim), amax(input, dims, keepdim))


@op(differentiable=False, method=True)
def count_nonzero(input, dim=None):
    """How many elements over ``dim`` (an int, a tuple, or all dims) are not
    zero: an int64 tensor. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[0.0, 1.0], [2.0, 0.5]])
    >>> x.count_nonzero()
    tensor(3, dtype=int64)
    >>> oxmera.count_nonzero(x, dim=0)
    tensor([1, 2], dtype=int64)
    """
    dims = normalize_dims(dim, input.ndim, "count_nonzero")
    return np.asarray(np.add.reduce(input != 0, axis=dims, dtype=np.int64))


# -- order statistics: median, nanmedian, mode, kthvalue ---------------------------------------

def _select(input, dim, keepdim, opname, choose):
    """``(values, indices)`` of the element ``choose(sorted, order)`` picks in
    each slice along ``dim`` (its position in the slice's stable ascending
    order); the reduced dim kept as size 1 with ``keepdim``."""
    d = normalize_dim(dim, input.ndim, opname)
    moved = last_axis(input, d)
    if moved.shape[-1] == 0:
        raise IndexError(f"{opname}(): Expected reduction dim {d} to have non-zero size "
                         f"(input shape {input.shape})")
    order = sort_order(moved, False)
    ordered = np.take_along_axis(moved, order, axis=-1)
    position = np.asarray(choose(ordered, order), dtype=np.int64)[..., None]
    values = np.take_along_axis(ordered, position, axis=-1)
    indices = np.take_along_axis(order, position, axis=-1).astype(np.int64, copy=False)
    if input.ndim == 0:
        return values.reshape(()), indices.reshape(())
    values, indices = np.moveaxis(values, -1, d), np.moveaxis(indices, -1, d)
    if not keepdim:
        values, indices = np.squeeze(values, d), np.squeeze(indices, d)
    return values, indices


def _median_position(ordered, ignore_nan):
    """Where the lower median sits in each ascending slice (NaN last): without
    ``ignore_nan`` a slice holding NaN gives its first NaN, as in PyTorch."""
    n = ordered.shape[-1]
    nans = np.add.reduce(_nan_mask(ordered), axis=-1)
    if ignore_nan:
        return np.maximum(n - nans - 1, 0) // 2
    return np.where(nans > 0, n - nans, (n - 1) // 2)


def _make_median_op(name, ignore_nan):
    def forward(input, dim=None, keepdim=False):
        if dim is not None:
            return _select(input, dim, keepdim, name,
                           lambda ordered, order: _median_position(ordered, ignore_nan))
        flat = input.reshape(-1)
        if flat.size == 0:
            return np.full((), np.nan, input.dtype), np.zeros((), np.int64)
        values, indices = _select(flat, 0, False, name,
                                  lambda ordered, order: _median_position(ordered, ignore_nan))
        return values, indices

    def vjp(ctx, grads, input, dim=None, keepdim=False):
        if dim is not None:
            return select_backward(ctx, grads, dim, keepdim)
        # Over all elements, PyTorch shares the gradient among the elements
        # equal to the median (NaN counting as equal to a NaN median).
        value = ctx.output[0]
        mask = logical_or(input == value, logical_and(isnan(input), isnan(value)))
        return where(mask, grads[0] / mask.sum(), 0.0)

    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = (
        f"The recorded op behind :func:`{name}`: always a ``(values, indices)`` named tuple "
        f"(over all elements without ``dim``).\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> from oxmera.ops.statistics import _{name}_op\n"
        f">>> _{name}_op(oxmera.tensor([[1.0, 5.0, 2.0]]), 1).indices\n"
        f"tensor([2], dtype=int64)\n")
    public = op(name, save_output=True, outputs=("values", "indices"))(forward)
    public.vjp(vjp)
    return public


_median_op = _make_median_op("median", False)
_nanmedian_op = _make_median_op("nanmedian", True)


def median(input, dim=None, keepdim=False):
    """The lower median: over all elements (a 0-d tensor), or along ``dim``
    (a named tuple ``(values, indices)``).

    For an even count this is the lower of the two middle values, as in
    PyTorch (not their mean). A NaN makes the median NaN (see
    :func:`nanmedian`). Along ``dim`` the gradient goes to the element at
    ``indices``; over all elements it is shared by the elements equal to
    the median, as in PyTorch. Which of several equal elements ``indices``
    names may differ from PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 4.0, 2.0, 3.0], [0.0, -1.0, 5.0, 7.0]])
    >>> x.median()
    tensor(2., dtype=float32)
    >>> x.median(dim=1)
    median(values=tensor([2., 0.], dtype=float32), indices=tensor([2, 0], dtype=int64))
    """
    result = _median_op(input, dim, keepdim)
    return result.values if dim is None else result


def nanmedian(input, dim=None, keepdim=False):
    """:func:`median` ignoring NaN: the lower median of the other elements
    (NaN where all are NaN).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([3.0, float("nan"), 1.0, 2.0])
    >>> x.nanmedian()
    tensor(2., dtype=float32)
    >>> oxmera.nanmedian(x, 0).indices
    tensor(3, dtype=int64)
    """
    result = _nanmedian_op(input, dim, keepdim)
    return result.values if dim is None else result


def _mode_position(ordered, order):
    """The end of the longest run of equal values in each ascending slice (the
    smallest value among equally long runs, as PyTorch picks): its stable
    order's last element is that value's last occurrence, PyTorch's index."""
    n = ordered.shape[-1]
    j = np.arange(n)
    change = ordered[..., 1:] != ordered[..., :-1]
    nan = _nan_mask(ordered)
    change &= ~(nan[..., 1:] & nan[..., :-1])       # NaNs are one value (see mode)
    edge = np.ones(ordered.shape[:-1] + (1,), bool)
    start = np.maximum.accumulate(np.where(np.concatenate([edge, change], -1), j, 0), axis=-1)
    run_end = np.concatenate([change, edge], -1)
    return np.argmax(np.where(run_end, j - start + 1, 0), axis=-1)


@op(save=(), save_output=True, outputs=("values", "indices"), method=True)
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` and the index of its last
    occurrence: a named tuple ``(values, indices)`` (PyTorch takes the index
    from an unstable sort, so for slices longer than 16 it may name another
    occurrence). Among equally frequent
    values the smallest wins, as in PyTorch. NaNs count as one value, the
    largest; PyTorch's mode of slices holding NaN follows no consistent rule
    (``[nan, 1, 2]`` gives NaN, ``[2, nan, 1]`` gives 1), so it may differ
    there. The gradient goes to the element at ``indices``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0, 2.0, 1.0, 3.0], [5.0, 2.0, 5.0, 0.0, 4.0]])
    >>> x.mode()
    mode(values=tensor([1., 5.], dtype=float32), indices=tensor([3, 2], dtype=int64))
    """
    return _select(input, dim, keepdim, "mode", _mode_position)


@mode.vjp
def _(ctx, grads, input, dim=-1, keepdim=False):
    return select_backward(ctx, grads, dim, keepdim)


@op(save=(), save_output=True, outputs=("values", "indices"), method=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` (``k`` counts from 1) and its
    index: a named tuple ``(values, indices)``. NaN is the largest value.
    Among equal values, which index is named may differ from PyTorch's.
    The gradient goes to the element at ``indices``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[4.0, 1.0, 3.0], [0.5, 2.0, -1.0]])
    >>> oxmera.kthvalue(x, 2)
    kthvalue(values=tensor([3. , 0.5], dtype=float32), indices=tensor([2, 0], dtype=int64))
    """
    d = normalize_dim(dim, input.ndim, "kthvalue")
    size = input.shape[d] if input.ndim else 1
    k = int(k)
    if not 1 <= k <= size:
        raise OpError(f"kthvalue(): selected number k={k} out of range for dimension {d} of "
                      f"size {size} (input shape {input.shape})")
    return _select(input, dim, keepdim, "kthvalue",
                   lambda ordered, order: np.full(ordered.shape[:-1], k - 1))


@kthvalue.vjp
def _(ctx, grads, input, k, dim=-1, keepdim=False):
    return select_backward(ctx, grads, dim, keepdim)


# -- quantile, nanquantile ---------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    """Quantiles as PyTorch composes them: sort, a rank per ``q`` (moved to the
    last position where a NaN makes the slice's quantile NaN), the values
    at the ranks below and above, interpolated."""
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name}(): input tensor must be either float or double dtype, got "
                           f"{input.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}(): interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation!r}")
    if isinstance(q, _core.Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}(): q must be a scalar or 1D tensor, got shape "
                               f"{tuple(q.shape)}")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}(): q tensor must be same dtype as the input tensor, "
                               f"got {q.dtype} and {input.dtype}")
        q_values = q.detach().numpy()
        scalar, q = q.ndim == 0, q.reshape(-1)
    else:
        q_values = np.asarray(q, dtype=np.float64)
        scalar, q = True, tensor([float(q)], dtype=input.dtype)
    if np.any(~((q_values >= 0) & (q_values <= 1))):
        raise RuntimeError(f"{name}(): q values must be in the range [0, 1], but got "
                           f"{q_values.tolist()}")
    if input.numel() == 0:
        raise RuntimeError(f"{name}(): input tensor must be non-empty (input shape "
                           f"{tuple(input.shape)})")
    shape = tuple(input.shape)
    if dim is None:
        rows = input.reshape(-1)
        out_shape = (1,) * len(shape) if keepdim else ()
    else:
        d = normalize_dim(dim, len(shape), name)
        rows = input.unsqueeze(0) if not shape else input.movedim(d, -1)
        out_shape = tuple(1 if k == d else n for k, n in enumerate(shape) if keepdim or k != d)
    ordered = sort(rows, -1).values                                   # (..., n)
    n = ordered.shape[-1]
    nans = np.add.reduce(np.isnan(ordered.detach().numpy()), axis=-1, keepdims=True)
    if ignore_nan:
        ranks = q * tensor(np.maximum(n - nans - 1, 0).astype(input.dtype))
    else:
        ranks = where(tensor(nans > 0), float(n - 1), q * float(n - 1))
    rank_values = ranks.detach().numpy()
    if interpolation == "lower":
        rank_values = np.floor(rank_values)
    elif interpolation == "higher":
        rank_values = np.ceil(rank_values)
    elif interpolation == "nearest":
        rank_values = np.round(rank_values)                           # halves to even
    below = np.floor(rank_values).astype(np.int64)
    ranks_shape = ordered.shape[:-1] + (q.shape[0],)
    below = np.broadcast_to(below, ranks_shape)
    result = gather(ordered, -1, below)
    if interpolation in ("linear", "midpoint"):
        above = np.broadcast_to(np.ceil(rank_values).astype(np.int64), ranks_shape)
        weight = 0.5 if interpolation == "midpoint" else ranks - tensor(below)
        result = lerp(result, gather(ordered, -1, above), weight)
    result = result.movedim(-1, 0)                                    # q first
    return result.reshape(out_shape if scalar else (q.shape[0],) + out_shape)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles of ``input`` over ``dim`` (all elements by
    default); ``q`` a number or a 1-D tensor (its quantiles stacked first).

    Between two elements ``interpolation`` picks ``linear`` (the default),
    ``lower``, ``higher``, ``midpoint`` or ``nearest`` (halves to even).
    A slice holding NaN gives NaN (see :func:`nanquantile`). float32 and
    float64 only; differentiable in ``input`` and ``q``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 10.0, 20.0, 30.0]])
    >>> oxmera.quantile(x, 0.5, dim=1)
    tensor([ 2.5, 15. ], dtype=float32)
    >>> x.quantile(oxmera.tensor([0.25, 1.0]), dim=1, interpolation="lower")
    tensor([[ 1.,  0.],
            [ 4., 30.]], dtype=float32)
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaN: the quantiles of the other elements of
    each slice (NaN where all are NaN).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, float("nan"), 3.0, 2.0])
    >>> x.nanquantile(0.5)
    tensor(2., dtype=float32)
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# -- cummax, cummin ----------------------------------------------------------------------------

def _cumulative_extreme(name, accumulate):
    def forward(input, dim):
        d = normalize_dim(dim, input.ndim, name)
        if input.ndim == 0:
            return input.copy(), np.zeros((), np.int64)
        running = accumulate(input, axis=d)
        # PyTorch moves to an element at least as large (small) as the running
        # extreme, or a NaN: the last such element so far is the index.
        moves = (input == running) | _nan_mask(input)
        positions = np.arange(input.shape[d]).reshape((-1,) + (1,) * (input.ndim - d - 1))
        indices = np.maximum.accumulate(np.where(moves, positions, 0), axis=d)
        # The values taken at the indices (not the running extreme itself), so
        # -0.0 after 0.0 is what PyTorch returns too.
        return np.take_along_axis(input, indices, axis=d), indices.astype(np.int64, copy=False)

    def vjp(ctx, grads, input, dim):
        return select_backward(ctx, grads, dim, True)

    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = f"""The running {"largest" if name == "cummax" else "smallest"} value
    along ``dim`` and the index it came from: a named tuple ``(values, indices)``.

    A later equal element takes over the index, and NaN, once met, is the
    running value (each later NaN taking over the index), as in PyTorch.
    The gradient of each value goes to the element at its index.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 3.0, 2.0, 3.0, 0.0])
    >>> oxmera.{name}(x, 0).values
    tensor({"[1., 3., 3., 3., 3.]" if name == "cummax" else "[1., 1., 1., 1., 0.]"}, dtype=float32)
    >>> x.{name}(dim=0).indices
    tensor({"[0, 1, 1, 3, 3]" if name == "cummax" else "[0, 0, 0, 0, 4]"}, dtype=int64)
    """
    public = op(name, save=(), save_output=True, outputs=("values", "indices"),
                method=True)(forward)
    public.vjp(vjp)
    return public


cummax = _cumulative_extreme("cummax", np.maximum.accumulate)
cummin = _cumulative_extreme("cummin", np.minimum.accumulate)


# -- logcumsumexp ------------------------------------------------------------------------------

@op(method=True, save_output=True)
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input)))`` along ``dim``, computed stably (each step a
    ``logaddexp``), so magnitudes of 1e4 give finite results; float16
    accumulates in float32. Floating tensors only.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.logcumsumexp(oxmera.tensor([0.0, 0.0, 1e4]), 0)
    tensor([0.0000e+00, 6.9315e-01, 1.0000e+04], dtype=float32)
    """
    if input.dtype.kind != "f":
        raise OpError(f"logcumsumexp(): expected a floating point input, got {input.dtype}")
    d = normalize_dim(dim, input.ndim, "logcumsumexp")
    if input.ndim == 0:
        return input.copy()
    wide = input.astype(accumulation_dtype(input.dtype), copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        return narrow(np.logaddexp.accumulate(wide, axis=d), input.dtype)


@logcumsumexp.vjp
def _(ctx, grad, input, dim):
    # d out_j / d x_i = exp(x_i - out_j) for i <= j. PyTorch's stable form:
    # the positive and negative parts of the gradient, each summed from the
    # end in log space, so no exp overflows (TensorFlow's math_grad.py).
    if not grad.ndim:
        return grad
    d = normalize_dim(dim, grad.ndim, "logcumsumexp")
    output = ctx.output
    # PyTorch's log(0) stand-in is the lowest float; a quarter of it is as
    # good (exp gives 0) and adding the input to it cannot overflow.
    lowest = float(np.finfo(np.dtype(grad.dtype)).min) / 4

    def from_the_end(x):
        return flip(logcumsumexp(flip(x, (d,)), d), (d,))

    log_magnitude = log(grad.abs())
    positive = where(grad > 0, log_magnitude, lowest)
    negative = where(grad < 0, log_magnitude, lowest)
    return exp(from_the_end(positive - output) + input) - exp(from_the_end(negative - output)
                                                              + input)


# -- diff --------------------------------------------------------------------------------------

def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``: ``out[i] = x[i + 1] - x[i]``,
    applied ``n`` times, after ``prepend`` and ``append`` are joined to
    ``input`` along ``dim``. Bool tensors give ``x[i + 1] != x[i]``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 4.0, 9.0, 16.0])
    >>> x.diff()
    tensor([3., 5., 7.], dtype=float32)
    >>> oxmera.diff(x, n=2, prepend=oxmera.tensor([0.0]))
    tensor([2., 2., 2.], dtype=float32)
    """
    if input.ndim == 0:
        raise RuntimeError("diff(): expects input to be at least one-dimensional")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"diff(): order must be non-negative but got {n}")
    d = normalize_dim(dim, input.ndim, "diff")
    parts = [part for part in (prepend, input, append) if part is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    lead = (slice(None),) * d
    for _ in range(n):
        later, earlier = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
        x = logical_xor(later, earlier) if x.dtype == np.bool_ else later - earlier
    return x


for _name in ("nansum", "nanmean", "aminmax", "median", "nanmedian", "quantile", "nanquantile",
              "diff"):
    _registry.add_tensor_attribute(_name, globals()[_name])
