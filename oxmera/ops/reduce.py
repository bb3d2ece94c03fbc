"""Reductions: sum, mean, max, min, and ``sum_to`` (the engine's unbroadcast).

``dim`` may be an int, a tuple or None (all dims); ``keepdim`` keeps reduced
dims as size 1; ``axis`` is accepted as NumPy's name for ``dim``. The VJPs
put the reduced dims back (``_unreduce``) and broadcast with ``expand``.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import normalize_dims, normalize_dim, pick_dim
from oxmera.ops.elementwise import where

__all__ = ["sum", "mean", "max", "min", "sum_to"]

OpError = _core.OpError


def _unreduce(grad, shape, dims, keepdim):
    """Reshape a reduced gradient so it broadcasts against ``shape``."""
    if not keepdim and grad.ndim:   # a 0-d gradient broadcasts as it is
        kept = list(shape)
        for d in dims:
            kept[d] = 1
        grad = grad.reshape(tuple(kept))
    return grad


@op(save=(), method=True)
def sum(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Sum over ``dim`` (all dims by default). Integer and bool sums are int64.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.sum()
    tensor(10., dtype=float32)
    >>> x.sum(dim=0)
    tensor([4., 6.], dtype=float32)
    """
    dims = normalize_dims(pick_dim(dim, axis, "sum"), input.ndim, "sum")
    if dtype is None and input.dtype.kind in "biu":
        dtype = np.int64
    # np.add.reduce is what np.sum calls, minus a microsecond of Python.
    return np.add.reduce(input, axis=dims, dtype=dtype, keepdims=keepdim)


@sum.vjp
def _(ctx, grad, input, dim=None, keepdim=False, *, dtype=None, axis=None):
    shape = ctx.input_shape(0)
    dims = normalize_dims(pick_dim(dim, axis, "sum"), len(shape), "sum")
    return _unreduce(grad, shape, dims, keepdim).expand(shape)


@op(save=(), method=True)
def mean(input, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Mean over ``dim`` (all dims by default); floating tensors only.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 2.0, 6.0]).mean()
    tensor(3., dtype=float32)
    """
    if dtype is None and input.dtype.kind != "f":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be floating "
                           f"point, got {input.dtype}")
    dims = normalize_dims(pick_dim(dim, axis, "mean"), input.ndim, "mean")
    # The sum over the count, as np.mean computes it (float16 summed in
    # float32), without np.mean's Python overhead; an empty mean is nan
    # without NumPy's "Mean of empty slice" warning, as in PyTorch.
    out_dtype = input.dtype if dtype is None else np.dtype(dtype)
    acc_dtype = np.float32 if out_dtype == np.float16 else out_dtype
    total = np.add.reduce(input, axis=dims, dtype=acc_dtype, keepdims=keepdim)
    count = 1
    for d in dims:
        count *= input.shape[d]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.true_divide(total, count), dtype=out_dtype)


@mean.vjp
def _(ctx, grad, input, dim=None, keepdim=False, *, dtype=None, axis=None):
    shape = ctx.input_shape(0)
    dims = normalize_dims(pick_dim(dim, axis, "mean"), len(shape), "mean")
    count = int(np.prod([shape[d] for d in dims]))
    return _unreduce(grad, shape, dims, keepdim).expand(shape) / count


def _extreme(name, reduce, arg):
    def forward(input, dim=None, keepdim=False, *, axis=None):
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
        grad = grads[0]
        values = ctx.output[0]
        dim = pick_dim(dim, axis, name)
        shape = input.shape
        dims = normalize_dims(dim, len(shape), name)
        keep = keepdim if dim is not None else False
        grad = _unreduce(grad, shape, dims, keep)
        mask = input == _unreduce(values, shape, dims, keep)
        count = mask.sum(dim=dims, keepdim=True)
        # Select rather than multiply by the mask, so elements that are not
        # extreme get exactly 0 even where the incoming gradient is inf.
        return where(mask, grad / count, 0.0)
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


def max(input, dim=None, keepdim=False, *, axis=None):
    """Largest value: over all elements, or along ``dim`` with its indices.

    Without ``dim`` the result is a 0-d tensor; with ``dim`` it is a named
    tuple ``(values, indices)``. Ties share the gradient evenly.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.max()
    tensor(7., dtype=float32)
    >>> x.max(dim=1).indices
    tensor([1, 0], dtype=int64)
    """
    result = _max_op(input, dim, keepdim, axis=axis)
    return result.values if dim is None and axis is None else result


def min(input, dim=None, keepdim=False, *, axis=None):
    """Smallest value: over all elements, or along ``dim`` with its indices.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    >>> x.min()
    tensor(1., dtype=float32)
    >>> x.min(dim=0).values
    tensor([1., 2.], dtype=float32)
    """
    result = _min_op(input, dim, keepdim, axis=axis)
    return result.values if dim is None and axis is None else result


@op(save=())
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
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape)
                                      if s == 1 and input.shape[i + lead] != 1)
    out = np.add.reduce(input, axis=dims, keepdims=True) if dims else input
    return out.reshape(out.shape[lead:]) if lead else out


@sum_to.vjp
def _(ctx, grad, input, shape):
    return grad.expand(ctx.input_shape(0))


_registry.add_tensor_attribute("max", max)
_registry.add_tensor_attribute("min", min)
