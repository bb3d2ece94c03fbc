"""Shape ops: reshape, view, transpose, permute, squeeze, unsqueeze, expand,
broadcast_to, cat, stack, and the ``T``/``mT`` properties.

Their VJPs only move gradients around; inputs are never saved (the VJP asks
the node for an input's shape with ``ctx.input_shape(i)``).
"""
import operator

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import broadcast_view, normalize_dim

__all__ = ["reshape", "view", "transpose", "swapaxes", "permute", "squeeze", "unsqueeze",
           "expand", "broadcast_to", "cat", "concatenate", "stack"]

OpError = _core.OpError


def _shape_arg(shape, opname):
    # reshape(2, 3) and reshape((2, 3)) mean the same, as in PyTorch.
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        # operator.index, not int(): 2.5 or "2" is a mistake, not a size.
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{opname}(): shape must be ints, got {shape!r}") from None


def _check_reshape(input, shape, opname):
    size = input.size
    known = 1
    free = 0
    for s in shape:
        if s == -1:
            free += 1
        elif s < 0:
            raise OpError(f"{opname}(): invalid shape dimension {s} in {shape}")
        else:
            known *= s
    if free > 1:
        raise OpError(f"{opname}(): only one dimension can be inferred, got shape {shape}")
    if (free and (known == 0 or size % known)) or (not free and known != size):
        raise OpError(f"{opname}(): shape {shape} is invalid for input of shape "
                      f"{input.shape} ({size} elements)")


@op(save=(), view=True, method=True)
def reshape(input, *shape):
    """The same elements in a new shape (a view when possible, else a copy).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(6).reshape(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]], dtype=int64)
    """
    shape = _shape_arg(shape, "reshape")
    _check_reshape(input, shape, "reshape")
    return np.reshape(input, shape)


@reshape.vjp
def _(ctx, grad, input, *shape):
    return grad.reshape(ctx.input_shape(0))


@op(save=(), view=True, method=True)
def view(input, *shape):
    """The same memory in a new shape; fails when that needs a copy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).view(-1).shape
    (6,)
    """
    shape = _shape_arg(shape, "view")
    _check_reshape(input, shape, "view")
    try:
        return np.reshape(input, shape, copy=False)
    except ValueError:
        raise OpError(f"view(): view size is not compatible with input tensor's size and "
                      f"stride (shape {input.shape}, strides {input.strides}); "
                      f"use .reshape(...) instead") from None


@view.vjp
def _(ctx, grad, input, *shape):
    return grad.reshape(ctx.input_shape(0))


@op(save=(), view=True, method=True)
def transpose(input, dim0, dim1):
    """Swap dimensions ``dim0`` and ``dim1`` (a view).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).transpose(0, 1).shape
    (3, 2)
    """
    d0 = normalize_dim(dim0, input.ndim, "transpose")
    d1 = normalize_dim(dim1, input.ndim, "transpose")
    if input.ndim == 0:
        # A 0-d tensor accepts dims 0 and -1 (as PyTorch does); NumPy's
        # swapaxes has no axis to swap.
        return input[...]
    return np.swapaxes(input, d0, d1)


@transpose.vjp
def _(ctx, grad, input, dim0, dim1):
    return grad.transpose(dim0, dim1)


def swapaxes(input, axis0, axis1):
    """Alias of :func:`transpose` (NumPy's name).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.swapaxes(oxmera.zeros(2, 3), 0, 1).shape
    (3, 2)
    """
    return transpose(input, axis0, axis1)


@op(save=(), view=True, method=True)
def permute(input, *dims):
    """Reorder the dimensions (a view).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3, 4).permute(2, 0, 1).shape
    (4, 2, 3)
    """
    dims = _permutation(dims, input.ndim)
    return np.transpose(input, dims)


def _permutation(dims, ndim):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    if len(dims) != ndim:
        raise OpError(f"permute(): number of dims {len(dims)} doesn't match the input's "
                      f"{ndim} dimensions")
    norm = tuple(normalize_dim(d, ndim, "permute") for d in dims)
    if len(set(norm)) != ndim:
        raise OpError(f"permute(): repeated dim in {tuple(dims)}")
    return norm


@permute.vjp
def _(ctx, grad, input, *dims):
    forward = _permutation(dims, len(ctx.input_shape(0)))
    return grad.permute(tuple(int(i) for i in np.argsort(forward)))


@op(save=(), view=True, method=True)
def squeeze(input, dim=None):
    """Remove dimensions of size 1 (all, or those in ``dim``; others are kept).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(1, 3, 1).squeeze().shape
    (3,)
    """
    if dim is None:
        # np.squeeze returns the array itself when there is nothing to
        # squeeze; a view instead keeps the output a view of the input
        # (sharing its version counter), as it is in every other case.
        return np.squeeze(input[...])
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    dims = tuple(d for d in (normalize_dim(d, input.ndim, "squeeze") for d in dims)
                 if input.ndim and input.shape[d] == 1)
    return np.squeeze(input, axis=dims) if dims else input[...]


@squeeze.vjp
def _(ctx, grad, input, dim=None):
    return grad.reshape(ctx.input_shape(0))


@op(save=(), view=True, method=True)
def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim`` (a view).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(3).unsqueeze(0).shape
    (1, 3)
    """
    d = normalize_dim(dim, input.ndim + 1, "unsqueeze")
    return np.expand_dims(input, d)


@unsqueeze.vjp
def _(ctx, grad, input, dim):
    return grad.reshape(ctx.input_shape(0))


def _expanded_shape(input, sizes, opname):
    sizes = _shape_arg(sizes, opname)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise OpError(f"{opname}(): the number of sizes provided ({len(sizes)}) must be greater "
                      f"or equal to the number of dimensions in the tensor ({input.ndim})")
    out = []
    for i, s in enumerate(sizes):
        have = input.shape[i - lead] if i >= lead else None
        if s == -1:
            if have is None:
                raise OpError(f"{opname}(): -1 is not allowed in a leading, non-existing "
                              f"dimension {i}")
            s = have
        elif have is not None and have != s and have != 1:
            raise OpError(f"{opname}(): the expanded size of the tensor ({s}) must match the "
                          f"existing size ({have}) at non-singleton dimension {i}. Target "
                          f"sizes: {sizes}. Tensor sizes: {input.shape}")
        out.append(s)
    return tuple(out)


@op(save=(), view=True, method=True)
def expand(input, *sizes):
    """Broadcast to a larger shape without copying (-1 keeps a dimension).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 2.0]).expand(2, -1)
    tensor([[1., 2.],
            [1., 2.]], dtype=float32)
    """
    return broadcast_view(input, _expanded_shape(input, sizes, "expand"))


@expand.vjp
def _(ctx, grad, input, *sizes):
    return grad     # the engine sums it back to the input's shape


@op(save=(), view=True, method=True)
def broadcast_to(input, shape):
    """Broadcast to ``shape`` without copying.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.broadcast_to(oxmera.tensor([1.0, 2.0]), (3, 2)).shape
    (3, 2)
    """
    return broadcast_view(input, _expanded_shape(input, (shape,), "broadcast_to"))


@broadcast_to.vjp
def _(ctx, grad, input, shape):
    return grad


def _check_sequence(arrays, opname):
    if len(arrays) == 0:
        raise OpError(f"{opname}(): expected a non-empty sequence of tensors")


@op(inputs="sequence", promote=True)
def cat(tensors, dim=0):
    """Join tensors along an existing dimension.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cat([oxmera.zeros(2, 3), oxmera.ones(1, 3)]).shape
    (3, 3)
    """
    _check_sequence(tensors, "cat")
    d = normalize_dim(dim, tensors[0].ndim, "cat")
    for i, t in enumerate(tensors):
        if t.ndim != tensors[0].ndim or any(a != b for j, (a, b) in
                                           enumerate(zip(t.shape, tensors[0].shape)) if j != d):
            raise OpError(f"cat(): sizes of tensors must match except in dimension {d}; "
                          f"tensor 0 has shape {tensors[0].shape}, tensor {i} has shape {t.shape}")
    return np.concatenate(tensors, axis=d)


@cat.vjp
def _(ctx, grad, tensors, dim=0):
    # The inputs are kept (not only their shapes) because the offsets of the
    # slices need the sizes of inputs without a gradient too.
    d = normalize_dim(dim, grad.ndim, "cat")
    grads = []
    start = 0
    for i, t in enumerate(tensors):
        size = np.shape(t)[d]
        grads.append(grad[(slice(None),) * d + (slice(start, start + size),)]
                     if ctx.needs_input_grad[i] else None)
        start += size
    return grads


def concatenate(tensors, axis=0):
    """Alias of :func:`cat` (NumPy's name).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.concatenate([oxmera.zeros(2), oxmera.ones(1)])
    tensor([0., 0., 1.], dtype=float32)
    """
    return cat(tensors, axis)


@op(inputs="sequence", save=(), promote=True)
def stack(tensors, dim=0):
    """Join tensors of equal shape along a new dimension.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.stack([oxmera.zeros(3), oxmera.ones(3)], dim=1).shape
    (3, 2)
    """
    _check_sequence(tensors, "stack")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise OpError(f"stack(): expects each tensor to be equal size, but got "
                          f"{tensors[0].shape} at entry 0 and {t.shape} at entry {i}")
    d = normalize_dim(dim, tensors[0].ndim + 1, "stack")
    return np.stack(tensors, axis=d)


@stack.vjp
def _(ctx, grad, tensors, dim=0):
    d = normalize_dim(dim, grad.ndim, "stack")
    return [grad[(slice(None),) * d + (i,)] if ctx.needs_input_grad[i] else None
            for i in range(len(tensors))]


def _T(self):
    return self.permute(tuple(range(self.ndim - 1, -1, -1)))


def _mT(self):
    if self.ndim < 2:
        raise OpError(f"mT: tensor of shape {self.shape} has fewer than 2 dimensions")
    return self.transpose(-2, -1)


_T.__doc__ = "The tensor with its dimensions reversed (a transpose for 2-D)."
_mT.__doc__ = "The tensor with its last two dimensions swapped (batched matrix transpose)."
_registry.add_tensor_attribute("swapaxes", swapaxes)
_registry.add_tensor_attribute("T", property(_T))
_registry.add_tensor_attribute("mT", property(_mT))
