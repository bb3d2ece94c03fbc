"""Reductions and scans: sum, mean, prod, max, min, amax, amin, argmax, argmin,
var, std, logsumexp, norm, cumsum, cumprod, all, any, and ``sum_to`` (the
engine's unbroadcast).

``dim`` may be an int, a tuple or None (all dims; an empty tuple also means
all dims, as in PyTorch); ``keepdim`` keeps reduced dims as size 1; ``axis``
is accepted as NumPy's name for ``dim``. The VJPs put the reduced dims back
(``_unreduce``) and broadcast with ``expand``.

Matrix norms (``norm(p="nuc")``) are delegated to ``oxmera.ops.linalg``;
``linear_scan`` is the first-order linear recurrence behind the gradient of
``cumprod`` (it lets that gradient avoid dividing by the input, so it is right
where the input has zeros, to any order).
"""
import builtins
import math
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops import shape as _shape
from oxmera.ops._utils import (accumulation_dtype, narrow, normalize_dim, normalize_dims,
                               ordered_only, pick_dim, real_of, widened)
from oxmera.ops.complex import cj
from oxmera.ops.creation import full, ones, ones_like
from oxmera.ops.elementwise import exp, maximum, minimum, sign, where

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
           "logsumexp", "norm", "cumsum", "cumprod", "all", "any", "sum_to"]

OpError = _core.OpError


# -- shared helpers -----------------------------------------------------------------------

# The dtypes a sum or mean accumulates in as they are (float16 widens, integers become
# int64): for these a full reduction is np.add.reduce alone.
_OWN_ACCUMULATION = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                    np.complex128))
_add_reduce = np.add.reduce
# np.add.reduce(x, None) by NumPy's own loop for small float arrays (the same bits).
_add_reduce_all = _core.add_reduce_all


def _dims(dim, axis, ndim, opname):
    """The reduced dims as a sorted tuple; None and an empty tuple mean all dims."""
    if type(dim) is int and axis is None and ndim:
        return (normalize_dim(dim, ndim, opname),)     # the commonest: one dim
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    return normalize_dims(pick_dim(dim, axis, opname), ndim, opname)


def _count(shape, dims):
    count = 1
    for d in dims:
        count *= shape[d]
    return count


def _unreduce(grad, shape, dims, keepdim):
    """Reshape a reduced gradient so it broadcasts against ``shape``."""
    if not keepdim and grad.ndim:   # a 0-d gradient broadcasts as it is
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        grad = grad.reshape(tuple(kept))
    return grad


def _reduce_wide(ufunc, input, dims, dtype, keepdim):
    """``ufunc.reduce`` of ``input`` over ``dims`` to ``dtype``, accumulated in
    its accumulation dtype (float32 for float16, as PyTorch does)."""
    wide = accumulation_dtype(dtype)
    out = ufunc.reduce(input, axis=dims, dtype=wide, keepdims=keepdim)
    return out if wide == dtype else narrow(out, dtype)


def _squeeze_dims(array, dims, keepdim):
    return array if keepdim else np.squeeze(array, axis=dims)


def _check_nonempty(input, dims, opname):
    """Reductions without an identity (max, amax, argmax ...) refuse empty slices."""
    for d in dims:
        if input.shape[d] == 0:
            raise OpError(f"{opname}(): cannot reduce over dim {d} of size 0 (input shape "
                          f"{input.shape}); the operation has no identity")
    if not dims and input.size == 0:
        raise OpError(f"{opname}(): expected a non-empty tensor (input shape {input.shape})")


def _flip(t, dim):
    """``t`` reversed along ``dim`` (a differentiable indexing view)."""
    if dim < 0:
        return t[(Ellipsis, slice(None, None, -1)) + (slice(None),) * (-1 - dim)]
    return t[(slice(None),) * dim + (slice(None, None, -1),)]


def _shift(t, dim, step, fill):
    """``t`` moved one step along ``dim`` (``step`` +1: towards higher indices),
    the vacated end filled with ``fill``: ``_shift([a, b, c], 0, 1, 0) == [0, a, b]``."""
    n = t.shape[dim]
    if n == 0:
        return t
    lead = (slice(None),) * dim
    edge = full(t.shape[:dim] + (1,) + t.shape[dim + 1:], fill, dtype=t.dtype)
    if step > 0:
        return _shape.cat([edge, t[lead + (slice(0, n - 1),)]], dim)
    return _shape.cat([t[lead + (slice(1, n),)], edge], dim)


# -- sum and mean ---------------------------------------------------------------------------

@op(save=(), method=True, replay=True)
def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Sum over ``dim`` (all dims by default). Integer and bool sums are int64;
    float16 sums accumulate in float32 (the result is float16), as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.sum()
    tensor(10., dtype=float32)
    >>> x.sum(dim=0)
    tensor([4., 6.], dtype=float32)
    """
    if dim is None and axis is None and dtype is None and not keepdim \
            and input.dtype in _OWN_ACCUMULATION:
        # The commonest call (loss.sum()): one NumPy loop, no argument handling.
        return _add_reduce_all(input)
    dims = _dims(dim, axis, input.ndim, "sum")
    if dtype is None:
        dtype = np.int64 if input.dtype.kind in "biu" else input.dtype
    # np.add.reduce is what np.sum calls, minus a microsecond of Python.
    return _reduce_wide(np.add, input, dims, dtype, keepdim)


@sum.vjp
def _(ctx, grad, input, dim=None, keepdim=False, *, dtype=None, axis=None):
    shape = ctx.input_shape(0)
    if dim is None and axis is None:
        return grad.expand(shape)       # every dim reduced: grad (0-d, or 1s if kept) broadcasts
    dims = _dims(dim, axis, len(shape), "sum")
    return _unreduce(grad, shape, dims, keepdim).expand(shape)


@op(save=(), method=True, replay=True)
def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Mean over ``dim`` (all dims by default); floating tensors only.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 2.0, 6.0]).mean()
    tensor(3., dtype=float32)
    """
    if dtype is None and input.dtype.kind not in "fc":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be floating "
                           f"point, got {input.dtype}")
    if dim is None and axis is None and dtype is None and not keepdim \
            and input.dtype in _OWN_ACCUMULATION and input.size:
        # The commonest call (loss.mean()), as below minus the argument handling
        # (a non-empty mean divides without warnings: no np.errstate needed).
        return _add_reduce_all(input) / input.size
    dims = _dims(dim, axis, input.ndim, "mean")
    # The sum over the count, as np.mean computes it (float16 summed in
    # float32), without np.mean's Python overhead; an empty mean is nan
    # without NumPy's "Mean of empty slice" warning, as in PyTorch.
    out_dtype = input.dtype if dtype is None else np.dtype(dtype)
    acc_dtype = np.float32 if out_dtype == np.float16 else out_dtype
    total = np.add.reduce(input, axis=dims, dtype=acc_dtype, keepdims=keepdim)
    count = _count(input.shape, dims)
    if count and out_dtype.kind in "fc":
        # A floating total over a positive count: nothing NumPy could warn
        # about, so no np.errstate (a microsecond, more than the rest).
        return np.asarray(np.true_divide(total, count), dtype=out_dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.true_divide(total, count), dtype=out_dtype)


@mean.vjp
def _(ctx, grad, input, dim=None, keepdim=False, *, dtype=None, axis=None):
    shape = ctx.input_shape(0)
    if dim is None and axis is None and grad.dtype in _OWN_ACCUMULATION:
        return (grad / math.prod(shape)).expand(shape)     # as below, every dim reduced
    dims = _dims(dim, axis, len(shape), "mean")
    count = _count(shape, dims)
    # Divided in float32 for float16: a count past 65504 is inf in float16.
    return widened(_unreduce(grad, shape, dims, keepdim), lambda g: g / count).expand(shape)


# -- prod -------------------------------------------------------------------------------------

@op(method=True)
def prod(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Product over ``dim`` (all dims by default). Integer and bool products are int64.

    The gradient is the product of the other elements of each slice, formed
    from running products without dividing by the input, so it is exact
    where the input has one zero or several, to any order. float16 products
    accumulate in float32, as :func:`cumprod` does in PyTorch (PyTorch's
    ``prod`` multiplies in float16, so ``[1000, 1000, 0.001]`` gives inf
    there and 1000 here).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.prod()
    tensor(24., dtype=float32)
    >>> x.prod(dim=1)
    tensor([ 2., 12.], dtype=float32)
    """
    dims = _dims(dim, axis, input.ndim, "prod")
    if dtype is None:
        dtype = np.int64 if input.dtype.kind in "biu" else input.dtype
    return _reduce_wide(np.multiply, input, dims, dtype, keepdim)


@prod.vjp
def _(ctx, grad, input, dim=None, keepdim=False, *, dtype=None, axis=None):
    shape = input.shape
    dims = _dims(dim, axis, len(shape), "prod")
    # The products of the others run in float32 for float16, as the forward:
    # a partial product can pass 65504 where the gradient does not.
    wide = accumulation_dtype(grad.dtype)
    others = cj(_product_of_others(input.to(wide), dims))
    return (_unreduce(grad, shape, dims, keepdim).to(wide) * others).to(grad.dtype)


def _exclusive_cumprod(t):
    """Running products along the last dim, each excluding its own element."""
    n = t.shape[-1]
    head = ones(t.shape[:-1] + (1,), dtype=t.dtype)
    return _shape.cat([head, cumprod(t[..., :n - 1], -1)], -1)


def _product_of_others(x, dims):
    """For each element of ``x``, the product of the other elements of its slice
    over ``dims``: the products before it times the products after it."""
    shape = x.shape
    n = _count(shape, dims)
    if not dims:
        return ones_like(x)
    if n == 0:
        return x
    kept = [d for d in range(len(shape)) if d not in dims]
    order = kept + list(dims)
    moved = x if order == sorted(order) else x.permute(*order)
    flat = moved.reshape(tuple(shape[d] for d in kept) + (n,))
    before = _exclusive_cumprod(flat)
    after = _flip(_exclusive_cumprod(_flip(flat, -1)), -1)
    others = (before * after).reshape(moved.shape)
    if moved is not x:
        others = others.permute(*np.argsort(order).tolist())
    return others


# -- max, min, amax, amin ---------------------------------------------------------------------

def _spread_over_extremes(grad, input, values, dims, keepdim):
    """The gradient of max/min: shared evenly by the elements equal to the extreme."""
    shape = input.shape
    grad = _unreduce(grad, shape, dims, keepdim)
    mask = input == _unreduce(values, shape, dims, keepdim)
    count = mask.sum(dim=dims if dims else None, keepdim=True)
    # Select rather than multiply by the mask, so elements that are not
    # extreme get exactly 0 even where the incoming gradient is inf. The
    # division runs in float32 for float16 (a count past 65504 is inf there).
    return where(mask, widened(grad, lambda g: g / count), 0.0)


def _extreme(name, reduce, arg):
    def forward(input, dim=None, keepdim=False, *, axis=None):
        ordered_only(input, name)
        dim = pick_dim(dim, axis, name)
        if dim is None:
            if input.size == 0:
                raise OpError(f"{name}(): expected a non-empty tensor when no dim is given "
                              f"(input shape {input.shape})")
            return reduce(input, axis=None), np.zeros((), np.int64)[()]
        d = normalize_dim(dim, input.ndim, name)
        if input.ndim == 0:
            return input.copy(), np.zeros((), np.int64)
        if input.shape[d] == 0:
            raise OpError(f"{name}(): cannot reduce over dim {d} of size 0 (input shape "
                          f"{input.shape})")
        values = reduce(input, axis=d, keepdims=keepdim)
        indices = arg(input, axis=d, keepdims=keepdim)
        return values, indices.astype(np.int64, copy=False)

    def vjp(ctx, grads, input, dim=None, keepdim=False, *, axis=None):
        # Ties share the gradient evenly (as amax does in PyTorch).
        dim = pick_dim(dim, axis, name)
        dims = normalize_dims(dim, input.ndim, name)
        keep = keepdim if dim is not None else False
        return _spread_over_extremes(grads[0], input, ctx.output[0], dims, keep)
    forward.__name__ = name
    forward.__doc__ = (
        f"The recorded op behind :func:`{name}`: always a ``(values, indices)`` named tuple "
        f"(the indices are 0 without ``dim``).\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> from oxmera.ops.reduce import _{name}_op\n"
        f">>> _{name}_op(oxmera.tensor([[1.0, 5.0], [7.0, 2.0]]), 1).indices\n"
        f"tensor({[1, 0] if name == 'max' else [0, 1]}, dtype=int64)\n")
    return forward, vjp


# The ufuncs' reduce and the arrays' arg methods: what np.max and np.argmax
# call, without their Python-level wrappers.
_max_forward, _max_vjp = _extreme("max", np.maximum.reduce, np.ndarray.argmax)
_min_forward, _min_vjp = _extreme("min", np.minimum.reduce, np.ndarray.argmin)
_max_op = op("max", save_output=True, outputs=("values", "indices"))(_max_forward)
_max_op.vjp(_max_vjp)
_min_op = op("min", save_output=True, outputs=("values", "indices"))(_min_forward)
_min_op.vjp(_min_vjp)


def _elementwise_form(name, input, dim, keepdim, axis, other):
    """The other tensor of PyTorch's elementwise ``max(input, other)`` form, or None.

    ``max(x, y)`` with ``y`` a tensor (or array), or ``other=y``, is
    ``maximum(x, y)``; ``max(x, 1)`` is still a reduction over dim 1.
    """
    if other is None and isinstance(dim, (_core.Tensor, np.ndarray)):
        other, dim = dim, None
    if other is None:
        return None
    if dim is not None or axis is not None or keepdim:
        raise TypeError(f"{name}(): the elementwise form {name}(input, other) takes no dim, "
                        f"axis or keepdim; use {name}(input, dim, keepdim) to reduce")
    return other


def max(input, dim=None, keepdim=False, *, axis=None, other=None):
    """Largest value: over all elements, along ``dim`` with its indices, or
    elementwise against another tensor.

    Without ``dim`` the result is a 0-d tensor; with ``dim`` it is a named
    tuple ``(values, indices)``. Ties share the gradient evenly (SPEC §5;
    PyTorch's ``max(dim)`` gives it all to the returned index instead).
    ``max(input, other)`` with ``other`` a tensor is :func:`maximum`, as in
    PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.max()
    tensor(7., dtype=float32)
    >>> x.max(dim=1).indices
    tensor([1, 0], dtype=int64)
    >>> oxmera.max(x, oxmera.tensor([3.0, 3.0]))
    tensor([[3., 5.],
            [7., 3.]], dtype=float32)
    """
    other = _elementwise_form("max", input, dim, keepdim, axis, other)
    if other is not None:
        return maximum(input, other)
    result = _max_op(input, dim, keepdim, axis=axis)
    return result.values if dim is None and axis is None else result


def min(input, dim=None, keepdim=False, *, axis=None, other=None):
    """Smallest value: over all elements, along ``dim`` with its indices, or
    elementwise against another tensor (``min(input, other)`` is :func:`minimum`).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.min()
    tensor(1., dtype=float32)
    >>> x.min(dim=0).values
    tensor([1., 2.], dtype=float32)
    >>> x.min(oxmera.tensor(4.0))
    tensor([[1., 4.],
            [4., 2.]], dtype=float32)
    """
    other = _elementwise_form("min", input, dim, keepdim, axis, other)
    if other is not None:
        return minimum(input, other)
    result = _min_op(input, dim, keepdim, axis=axis)
    return result.values if dim is None and axis is None else result


def _amax_amin(name, reduce, doc):
    def forward(input, dim=(), keepdim=False, *, axis=None):
        ordered_only(input, name)
        dims = _dims(dim, axis, input.ndim, name)
        _check_nonempty(input, dims, name)
        return np.array(reduce(input, axis=dims, keepdims=keepdim), copy=True)

    def vjp(ctx, grad, input, dim=(), keepdim=False, *, axis=None):
        dims = _dims(dim, axis, input.ndim, name)
        return _spread_over_extremes(grad, input, ctx.output, dims, keepdim)
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = doc
    public = op(name, save_output=True, method=True)(forward)
    public.vjp(vjp)
    return public


amax = _amax_amin("amax", np.maximum.reduce, """Largest value over ``dim`` (all dims by
    default), without indices. Ties share the gradient evenly, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.amax(dim=0)
    tensor([7., 5.], dtype=float32)
    >>> oxmera.amax(x)
    tensor(7., dtype=float32)
    """)

amin = _amax_amin("amin", np.minimum.reduce, """Smallest value over ``dim`` (all dims by
    default), without indices. Ties share the gradient evenly, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.amin(dim=1, keepdim=True)
    tensor([[1.],
            [2.]], dtype=float32)
    """)


# -- argmax, argmin ---------------------------------------------------------------------------

def _arg_extreme(name, arg, doc):
    def forward(input, dim=None, keepdim=False, *, axis=None):
        ordered_only(input, name)
        dim = pick_dim(dim, axis, name)
        if dim is None:
            if input.size == 0:
                raise OpError(f"{name}(): expected a non-empty tensor when no dim is given "
                              f"(input shape {input.shape})")
            index = np.asarray(arg(input.reshape(-1)), dtype=np.int64)
            return index.reshape((1,) * input.ndim) if keepdim else index
        d = normalize_dim(dim, input.ndim, name)
        if input.ndim == 0:
            return np.zeros((), np.int64)
        if input.shape[d] == 0:
            raise OpError(f"{name}(): cannot reduce over dim {d} of size 0 (input shape "
                          f"{input.shape})")
        return arg(input, axis=d, keepdims=keepdim).astype(np.int64, copy=False)
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = doc
    return op(name, differentiable=False, method=True)(forward)


argmax = _arg_extreme("argmax", np.ndarray.argmax, """Index of the largest value (int64):
    in the flattened tensor without ``dim``, or along ``dim``. The first index
    wins a tie; NaN counts as the largest. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.argmax()
    tensor(2, dtype=int64)
    >>> x.argmax(dim=1)
    tensor([1, 0], dtype=int64)
    """)

argmin = _arg_extreme("argmin", np.ndarray.argmin, """Index of the smallest value (int64):
    in the flattened tensor without ``dim``, or along ``dim``. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.argmin(oxmera.tensor([[1.0, 5.0], [7.0, 0.5]]), dim=0, keepdim=True)
    tensor([[0, 1]], dtype=int64)
    """)


# -- var, std -----------------------------------------------------------------------------------

def _correction(name, unbiased, correction):
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}(): pass unbiased or correction, not both")
    if unbiased is not None:
        return 1 if unbiased else 0
    return 1 if correction is None else correction


def _moment_args(name, input_dtype, ndim, dim, unbiased, correction, axis):
    if isinstance(dim, bool) and unbiased is None and axis is None:
        dim, unbiased = None, dim       # PyTorch's var(unbiased) form
    if input_dtype.kind not in "fc":
        raise OpError(f"{name}(): std and var only support floating point and complex dtypes, "
                      f"got {input_dtype}")
    return _dims(dim, axis, ndim, name), _correction(name, unbiased, correction)


def _variance(input, dims, correction, keepdim):
    acc = np.float32 if input.dtype == np.float16 else input.dtype
    count = _count(input.shape, dims)
    with np.errstate(invalid="ignore", divide="ignore"):
        centered = input - np.add.reduce(input, axis=dims, dtype=acc, keepdims=True) / count
        if input.dtype.kind == "c":
            # |deviation|^2: a real variance, as PyTorch's.
            centered = centered.real * centered.real + centered.imag * centered.imag
            squares = np.add.reduce(centered, axis=dims, keepdims=keepdim)
        else:
            squares = np.add.reduce(centered * centered, axis=dims, dtype=acc, keepdims=keepdim)
        # Fewer degrees of freedom than the correction: divide by 0 (inf or
        # nan), as PyTorch does, which also warns.
        return squares / builtins.max(count - correction, 0)


def _degrees_of_freedom(shape, dims, correction):
    dof = _count(shape, dims) - correction
    return dof if dof > 0 else 0


@op(method=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Variance over ``dim`` (all dims by default): the sum of squared
    deviations from the mean over ``N - correction`` (``correction`` 1 by
    default: the unbiased estimate; ``unbiased=False`` means ``correction=0``).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    >>> x.var(dim=1)
    tensor([1., 4.], dtype=float32)
    >>> x.var(dim=1, correction=0)
    tensor([0.6667, 2.6667], dtype=float32)
    """
    dims, correction = _moment_args("var", input.dtype, input.ndim, dim, unbiased, correction,
                                    axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(_variance(input, dims, correction, keepdim),
                          dtype=real_of(input.dtype))


@var.vjp
def _(ctx, grad, input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    dims, correction = _moment_args("var", input.dtype, input.ndim, dim, unbiased, correction,
                                    axis)
    dof = _degrees_of_freedom(input.shape, dims, correction)
    centered = input - mean(input, dims if dims else None, keepdim=True)
    scale = 2.0 / dof if dof else math.inf
    # In float32 for float16, where 2 / dof is a subnormal (or 0) in float16.
    return widened(_unreduce(grad, input.shape, dims, keepdim),
                   lambda g: g * scale * _in_dtype_of(centered, g))


@op(save_output=True, method=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    """Standard deviation over ``dim``: the square root of :func:`var` (same arguments).

    Where the deviation is 0 the gradient is 0, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 3.0, 5.0]).std()
    tensor(2., dtype=float32)
    """
    dims, correction = _moment_args("std", input.dtype, input.ndim, dim, unbiased, correction,
                                    axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.sqrt(_variance(input, dims, correction, keepdim)),
                          dtype=real_of(input.dtype))


@std.vjp
def _(ctx, grad, input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None):
    dims, correction = _moment_args("std", input.dtype, input.ndim, dim, unbiased, correction,
                                    axis)
    dof = _degrees_of_freedom(input.shape, dims, correction)
    shape = input.shape
    out = _unreduce(ctx.output, shape, dims, keepdim)
    zero = out == 0
    # grad / out, with 0 where the deviation is 0: the denominator is made
    # safe too, so the derivative of the unpicked side is finite.
    scale = where(zero, 0.0, _unreduce(grad, shape, dims, keepdim) / where(zero, 1.0, out))
    centered = input - mean(input, dims if dims else None, keepdim=True)
    factor = 1.0 / dof if dof else math.inf
    return widened(scale, lambda s: s * factor * _in_dtype_of(centered, s))


def _in_dtype_of(centered, grad):
    # The deviations in the (real) gradient's dtype; complex ones stay complex
    # (the gradient of |z - mean|^2 is 2 (z - mean), times the real grad).
    return centered if centered.dtype.kind == "c" else centered.to(grad.dtype)


# -- logsumexp ---------------------------------------------------------------------------------

@op(save_output=True, float_only=True, method=True)
def logsumexp(input, dim=None, keepdim=False, *, axis=None):
    """``log(sum(exp(input)))`` over ``dim``, computed stably (the maximum is
    taken out first), so logits of magnitude 1e4 give finite results. A slice
    of only ``-inf`` gives ``-inf``; an empty slice gives ``-inf``.

    Fused (not composed of exp, sum and log) for that stability; the gradient
    is ``softmax``: ``grad * exp(input - out)``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1e4, 1e4]).logsumexp(0)
    tensor(10000.693, dtype=float32)
    >>> oxmera.logsumexp(oxmera.tensor([[0.0, 0.0], [1.0, 2.0]]), dim=1)
    tensor([0.6931, 2.3133], dtype=float32)
    """
    dims = _dims(dim, axis, input.ndim, "logsumexp")
    # float16 in float32: the sum of exps passes 65504 at 65505 zeros
    # (PyTorch gives inf there; the result itself, log(65505), is 11.09).
    dtype = input.dtype
    input = input.astype(accumulation_dtype(dtype), copy=False)
    if builtins.any(input.shape[d] == 0 for d in dims):
        shift = np.zeros(tuple(1 if d in dims else s for d, s in enumerate(input.shape)),
                         input.dtype)
    else:
        shift = np.maximum.reduce(input, axis=dims, keepdims=True)
        # An infinite maximum (a slice of -inf, or one holding +inf) is not
        # taken out: the sum below gives -inf or +inf by itself.
        shift = np.where(np.isinf(shift), 0, shift)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        total = np.add.reduce(np.exp(input - shift), axis=dims, keepdims=True)
        out = np.log(total) + shift
    return narrow(_squeeze_dims(out, dims, keepdim), dtype)


@logsumexp.vjp
def _(ctx, grad, input, dim=None, keepdim=False, *, axis=None):
    shape = input.shape
    dims = _dims(dim, axis, len(shape), "logsumexp")
    return _unreduce(grad, shape, dims, keepdim) * exp(
        input - _unreduce(ctx.output, shape, dims, keepdim))


# -- norm ------------------------------------------------------------------------------------

def _norm_order(p):
    if p is None or p == "fro":
        return 2.0
    if isinstance(p, str):
        # Raised inside the op's forward: the core adds "norm(): " and the shapes.
        raise ValueError(f"unsupported norm order {p!r} for a vector norm")
    return float(p)


def _vector_norm(input, p, dims, keepdim):
    x = np.abs(input)
    if p == 2:
        return np.sqrt(np.add.reduce(x * x, axis=dims, keepdims=keepdim))
    if p == 1:
        return np.add.reduce(x, axis=dims, keepdims=keepdim)
    if p == math.inf:
        return np.maximum.reduce(x, axis=dims, keepdims=keepdim)
    if p == -math.inf:
        return np.minimum.reduce(x, axis=dims, keepdims=keepdim)
    if p == 0:
        return np.add.reduce(x != 0, axis=dims, keepdims=keepdim, dtype=input.dtype)
    with np.errstate(divide="ignore", over="ignore"):
        return np.power(np.add.reduce(np.power(x, p), axis=dims, keepdims=keepdim), 1.0 / p)


def _norm_forward(input, p=2, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.astype(dtype)
    if input.dtype.kind != "f":
        raise OpError(f"norm(): input dtype should be floating point, got {input.dtype}")
    p = _norm_order(p)
    dims = _dims(dim, None, input.ndim, "norm")
    if abs(p) == math.inf and _count(input.shape, dims) == 0:
        raise OpError(f"norm(): cannot compute the {p} norm of an empty slice (input shape "
                      f"{input.shape}), as the operation has no identity")
    # float16 in float32: 300 ** 2 + 400 ** 2 is inf in float16.
    wide = input.astype(accumulation_dtype(input.dtype), copy=False)
    return narrow(_vector_norm(wide, p, dims, keepdim), input.dtype)


_norm_forward.__name__ = _norm_forward.__qualname__ = "norm"
_norm_forward.__doc__ = """The recorded vector norm behind :func:`norm` and
    ``oxmera.linalg.vector_norm``: ``sum(abs(x) ** p) ** (1 / p)`` over
    ``dim``, with ``p`` 2, 1, inf, -inf, 0 or any other number.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.reduce import _norm_op
    >>> _norm_op(oxmera.tensor([3.0, -4.0]), 1)
    tensor(7., dtype=float32)
    """
_norm_op = op("norm", save_output=True)(_norm_forward)


def complex_aware_norm(input, p, dim, keepdim, dtype=None):
    """``_norm_op``, and for complex tensors the norm of their ``abs`` (a real result, as
    PyTorch's; the gradient flows through ``abs``)."""
    if isinstance(input, _core.Tensor) and (input.dtype.kind == "c" or (
            dtype is not None and np.dtype(dtype).kind == "c")):
        if dtype is not None:
            input = input.to(dtype)
        return _norm_op(input.abs(), p, dim, keepdim)
    return _norm_op(input, p, dim, keepdim, dtype=dtype)


@_norm_op.vjp
def _(ctx, grad, input, p=2, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    p = _norm_order(p)
    shape = input.shape
    dims = _dims(dim, None, len(shape), "norm")
    if p == 0:
        return None                 # a count of nonzeros: no gradient
    grad = _unreduce(grad, shape, dims, keepdim)
    if p == 1:
        return grad * sign(input)
    out = _unreduce(ctx.output, shape, dims, keepdim)
    wide = accumulation_dtype(input.dtype)
    if wide != input.dtype:
        # In float32 for float16, as the forward: out ** (p - 1) overflows
        # float16 for norms far below its limit (450 ** 2 for p = 3).
        return _norm_gradient(grad.to(wide), input.to(wide), out.to(wide), p,
                              dims).to(input.dtype)
    return _norm_gradient(grad, input, out, p, dims)


def _norm_gradient(grad, input, out, p, dims):
    """The gradient of the vector ``p``-norm (``p`` not 0 or 1) from the
    incoming gradient and the output, both already broadcastable to the input."""
    if abs(p) == math.inf:
        # The elements of largest (smallest) magnitude share the gradient.
        return _spread_over_extremes(grad, input.abs(), out, dims, True) * sign(input)
    # grad / out ** (p - 1), and 0 where the norm is 0 (the subgradient
    # PyTorch picks); denominators are made safe so that the derivative of
    # the side where() does not pick is finite too.
    zero = out == 0
    safe = where(zero, 1.0, out)
    scale = where(zero, 0.0, grad / (safe if p == 2 else safe ** (p - 1)))
    if p == 2:
        return input * scale
    small = input == 0
    magnitude = where(small, 1.0, input.abs()) ** (p - 1)
    return where(small, 0.0, sign(input) * magnitude) * scale


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, axis=None):
    """Norm of ``input`` over ``dim`` (all elements by default), as ``torch.norm``.

    ``p`` is ``"fro"`` (the 2-norm of the elements), a number (the vector
    ``p``-norm: 1, 2, ``inf`` (max abs), ``-inf`` (min abs), 0 (count of
    nonzeros) or any other) or ``"nuc"`` (the nuclear norm of the matrices in
    the last two dims, or in ``dim``). At a zero vector the gradient of the
    2-norm is 0, as in PyTorch; ties of the inf-norm share it evenly.
    :func:`oxmera.linalg.norm` is the newer interface. ``axis`` is accepted
    for ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[3.0, -4.0], [0.0, 0.0]])
    >>> x.norm()
    tensor(5., dtype=float32)
    >>> x.norm(p=1, dim=1)
    tensor([7., 0.], dtype=float32)
    >>> oxmera.norm(x, float("inf"))
    tensor(4., dtype=float32)
    """
    dim = pick_dim(dim, axis, "norm")
    if isinstance(p, str) and p == "nuc":
        from oxmera.ops.linalg import matrix_norm
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return complex_aware_norm(input, p, dim, keepdim, dtype)


# -- cumulative sum and product ----------------------------------------------------------------

def _scan_dim(input, dim, axis, opname):
    dim = pick_dim(dim, axis, opname)
    if dim is None:
        return None
    return normalize_dim(dim, input.ndim, opname)


def _scan_wide(scan, input, d, dtype):
    """``scan`` (np.cumsum, np.cumprod) of ``input`` along ``d`` to ``dtype``:
    int64 for integers and bool by default; float16 accumulated in float32
    (each output rounded once), as PyTorch's CPU scans do."""
    if dtype is None:
        dtype = np.int64 if input.dtype.kind in "biu" else input.dtype
    if input.ndim == 0:
        return np.array(input, dtype=dtype, copy=True)
    wide = accumulation_dtype(dtype)
    out = scan(input, axis=d, dtype=wide)
    return out if wide == dtype else narrow(out, dtype)


@op(save=(), method=True)
def cumsum(input, dim=None, *, dtype=None, axis=None):
    """Running sum along ``dim`` (over the flattened tensor when ``dim`` is
    None, as in NumPy). Integer and bool sums are int64; float16 sums
    accumulate in float32.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).cumsum(dim=1)
    tensor([[ 1.,  3.,  6.],
            [ 4.,  9., 15.]], dtype=float32)
    """
    d = _scan_dim(input, dim, axis, "cumsum")
    return _scan_wide(np.cumsum, input, d, dtype)


@cumsum.vjp
def _(ctx, grad, input, dim=None, *, dtype=None, axis=None):
    # The transpose of a running sum is the running sum from the other end.
    shape = ctx.input_shape(0)
    if not shape:
        return grad
    dim = pick_dim(dim, axis, "cumsum")
    d = 0 if dim is None else normalize_dim(dim, len(shape), "cumsum")
    return _flip(cumsum(_flip(grad, d), d), d).reshape(shape)


@op(save_output=True, method=True)
def cumprod(input, dim=None, *, dtype=None, axis=None):
    """Running product along ``dim`` (over the flattened tensor when ``dim``
    is None). Integer and bool products are int64.

    The gradient never divides by the input: it is exact where the input
    has zeros, to any order.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 2.0, 0.0, 4.0]).cumprod(0)
    tensor([1., 2., 0., 0.], dtype=float32)
    """
    d = _scan_dim(input, dim, axis, "cumprod")
    return _scan_wide(np.cumprod, input, d, dtype)


@cumprod.vjp
def _(ctx, grad, input, dim=None, *, dtype=None, axis=None):
    # With y = cumprod(x) along the dim, d y_i / d x_j = y_{j-1} * x_{j+1} *
    # ... * x_i for i >= j, so the gradient at j is y_{j-1} * S_j, where
    # S_j = grad_j + x_{j+1} * S_{j+1}: a linear recurrence run backwards.
    shape = input.shape
    if not shape:
        return grad
    d = _scan_dim(input, dim, axis, "cumprod")
    output = ctx.output
    if d is None:
        input, output, grad, d = input.reshape(-1), output.reshape(-1), grad.reshape(-1), 0
    if input.dtype != grad.dtype:
        input = input.to(grad.dtype)
    if input.shape[d] == 0:
        return grad.reshape(shape)
    following = cj(_shift(input, d, -1, 0.0))          # x_{j+1} (conjugated, if complex)
    total = linear_scan(grad, following, d, reverse=True)
    return (cj(_shift(output, d, 1, 1.0)) * total).reshape(shape)


@op(complex_inputs=True, inputs=2, save=("coefficient",), save_output=True, promote=True)
def linear_scan(input, coefficient, dim, reverse=False):
    """The linear recurrence ``out[j] = input[j] + coefficient[j] * out[j - 1]``
    along ``dim`` (``out[j + 1]`` with ``reverse``; the missing end term is 0).

    It carries the gradient of :func:`cumprod`; its own gradient is the same
    recurrence run the other way, so it is differentiable to any order.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.reduce import linear_scan
    >>> linear_scan(oxmera.tensor([1.0, 1.0, 1.0]), oxmera.tensor([0.0, 2.0, 3.0]), 0)
    tensor([ 1.,  3., 10.], dtype=float32)
    """
    x, c = np.broadcast_arrays(input, coefficient)
    dtype = np.result_type(x, c)
    # float16 runs in float32 (each step would round to float16 otherwise).
    out = np.array(x, dtype=accumulation_dtype(dtype), copy=True)
    if out.ndim == 0:
        return narrow(out, dtype)
    d = normalize_dim(dim, out.ndim, "linear_scan")
    moved, c = np.moveaxis(out, d, 0), np.moveaxis(c, d, 0)
    n = moved.shape[0]
    # One vectorized step per position along the dim: a scan is sequential.
    if reverse:
        for j in range(n - 2, -1, -1):
            moved[j] += c[j] * moved[j + 1]
    else:
        for j in range(1, n):
            moved[j] += c[j] * moved[j - 1]
    return narrow(out, dtype)


@linear_scan.vjp
def _(ctx, grad, input, coefficient, dim, reverse=False):
    # out = M input with M triangular; the transpose of M is the recurrence
    # run the other way, with the coefficients moved one step along.
    if not grad.ndim:
        return grad, None
    d = normalize_dim(dim, grad.ndim, "linear_scan")
    coefficient = _shape.broadcast_to(coefficient, grad.shape)
    step = 1 if reverse else -1
    total = linear_scan(grad, cj(_shift(coefficient, d, step, 0.0)), d, reverse=not reverse)
    grad_coefficient = None
    if ctx.needs_input_grad[1]:
        grad_coefficient = total * cj(_shift(ctx.output, d, -step, 0.0))
    return total if ctx.needs_input_grad[0] else None, grad_coefficient


# -- all, any -----------------------------------------------------------------------------------

def _logical_reduction(name, reduce, doc):
    def forward(input, dim=None, keepdim=False, *, axis=None):
        dims = _dims(dim, axis, input.ndim, name)
        out = np.asarray(reduce(input, axis=dims, keepdims=keepdim))
        # uint8 stays uint8, as in PyTorch; everything else gives bool.
        return out.astype(np.uint8) if input.dtype == np.uint8 else out
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = doc
    return op(name, differentiable=False, method=True)(forward)


all = _logical_reduction("all", np.all, """Whether every element over ``dim`` is nonzero (bool).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 0.0], [2.0, 3.0]])
    >>> x.all()
    tensor(False, dtype=bool)
    >>> oxmera.all(x, dim=1)
    tensor([False,  True], dtype=bool)
    """)

any = _logical_reduction("any", np.any, """Whether some element over ``dim`` is nonzero (bool).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[0.0, 0.0], [2.0, 0.0]])
    >>> x.any()
    tensor(True, dtype=bool)
    >>> x.any(dim=1, keepdim=True)
    tensor([[False],
            [ True]], dtype=bool)
    """)


# -- sum_to -----------------------------------------------------------------------------------

@op(save=(), replay=True)
def sum_to(input, shape):
    """Sum ``input`` over the dimensions broadcasting added, down to ``shape``.

    The engine applies it to every gradient whose shape differs from its
    input's, so ops never handle broadcasting in their VJPs.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sum_to(oxmera.ones(2, 3), (1, 3))
    tensor([[2., 2., 2.]], dtype=float32)
    """
    shape = tuple(shape)
    lead = input.ndim - len(shape)
    if lead < 0:
        return input
    have = input.shape
    # float16 gradients summed in float32: a bias's gradient over many rows
    # would stop growing (or overflow) in float16.
    if have[lead:] == shape:
        # Only leading dims (a bias's gradient): summed away, no reshape.
        return _reduce_wide(np.add, input, _LEADING[lead] if lead < 4 else tuple(range(lead)),
                            input.dtype, False) if lead else input
    inner = tuple([i + lead for i, s in enumerate(shape) if s == 1 and have[i + lead] != 1])
    if not inner:
        return _reduce_wide(np.add, input, tuple(range(lead)), input.dtype, False) if lead \
            else input
    out = _reduce_wide(np.add, input, tuple(range(lead)) + inner, input.dtype, True)
    return out.reshape(out.shape[lead:]) if lead else out


_LEADING = [(), (0,), (0, 1), (0, 1, 2)]     # sum_to's axes for 0-3 leading dims


@sum_to.vjp
def _(ctx, grad, input, shape):
    return grad.expand(ctx.input_shape(0))


_registry.add_tensor_attribute("max", max)
_registry.add_tensor_attribute("min", min)
_registry.add_tensor_attribute("norm", norm)
