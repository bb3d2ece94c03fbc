"""Shape ops: reshape, view, flatten, unflatten, transpose, permute, movedim,
squeeze, unsqueeze, expand, broadcast_to, repeat, tile, flip, roll, cat,
stack, split, chunk, unbind, diagonal, tril, triu, and the ``T``/``mT``
properties. (``contiguous`` lives with the copies in ``conversion``.)

Their VJPs only move gradients around; inputs are never saved (the VJP asks
the node for an input's shape with ``ctx.input_shape(i)``). Ops that PyTorch
returns as views (reshape, transpose, diagonal, split ...) are views here too,
sharing the input's memory and version counter; flip, roll, repeat, tril and
triu copy, as in PyTorch. ``flatten``, ``unflatten``, ``movedim``, ``tile``
and ``chunk`` are composed from the primitives.
"""
import operator

import numpy as np

try:                                    # what NumPy's as_strided makes views with
    from numpy.lib._stride_tricks_impl import DummyArray as _DummyArray
except ImportError:                     # pragma: no cover - older NumPy
    from numpy.lib.stride_tricks import DummyArray as _DummyArray

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import broadcast_view, normalize_dim, pick_dim

__all__ = ["reshape", "view", "flatten", "unflatten", "transpose", "swapaxes", "permute",
           "movedim", "moveaxis", "squeeze", "unsqueeze", "expand", "broadcast_to", "repeat",
           "tile", "flip", "roll", "cat", "concatenate", "stack", "split", "chunk", "unbind",
           "diagonal", "tril", "triu"]

OpError = _core.OpError


Tensor = _core.Tensor


def _distinct_dims(dims, ndim, opname):
    """``dims`` normalized into ``range(ndim)``, in the given order; a repeat is an error."""
    norm = _core.normalize_each_dim(dims, ndim, opname)
    if len(set(norm)) != len(norm):
        repeated = next(d for d in norm if norm.count(d) > 1)
        raise OpError(f"{opname}(): dim {repeated} appears multiple times in the list of dims "
                      f"{tuple(dims)}")
    return norm


def _shape_of(input):
    # The shape of a Tensor, or of anything an op accepts as one (arrays, lists).
    return input.shape if isinstance(input, Tensor) else np.shape(input)


# reshape(2, 3) and reshape((2, 3)) mean the same, as in PyTorch (parsed in C:
# the shape ops run inside many VJPs).
_shape_arg = _core.shape_arg


@op(save=(), view=True, method=True, replay=True)
def reshape(input, *shape):
    """The same elements in a new shape (a view when possible, else a copy).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(6).reshape(2, 3)
    tensor([[0, 1, 2],
            [3, 4, 5]], dtype=int64)
    """
    return input.reshape(_core.reshape_shape(input, shape, "reshape"))


@reshape.vjp
def _(ctx, grad, input, *shape):
    return grad.reshape(ctx.input_shape(0))


# method=False: Tensor.view also takes a dtype (ops.tensor_api installs the method).
@op(save=(), view=True, method=False, replay=True)
def view(input, *shape):
    """The same memory in a new shape; fails when that needs a copy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).view(-1).shape
    oxmera.Size([6])
    """
    shape = _core.reshape_shape(input, shape, "view")
    try:
        return input.reshape(shape, copy=False)
    except ValueError:
        raise OpError(f"view(): view size is not compatible with input tensor's size and "
                      f"stride (shape {input.shape}, strides {input.strides}); "
                      f"use .reshape(...) instead") from None


@view.vjp
def _(ctx, grad, input, *shape):
    return grad.reshape(ctx.input_shape(0))


@op(save=(), view=True, replay=True)  # its Tensor method (NumPy's forms too): ops/tensor_api.py
def transpose(input, dim0, dim1):
    """Swap dimensions ``dim0`` and ``dim1`` (a view).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).transpose(0, 1).shape
    oxmera.Size([3, 2])
    """
    d0 = normalize_dim(dim0, input.ndim, "transpose")
    d1 = normalize_dim(dim1, input.ndim, "transpose")
    if input.ndim == 0:
        # A 0-d tensor accepts dims 0 and -1 (as PyTorch does); NumPy's
        # swapaxes has no axis to swap.
        return input[...]
    return input.swapaxes(d0, d1)       # the method: np.swapaxes adds a Python layer


@transpose.vjp
def _(ctx, grad, input, dim0, dim1):
    return grad.transpose(dim0, dim1)


def swapaxes(input, axis0, axis1):
    """Alias of :func:`transpose` (NumPy's name).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.swapaxes(oxmera.zeros(2, 3), 0, 1).shape
    oxmera.Size([3, 2])
    """
    return transpose(input, axis0, axis1)


@op(save=(), view=True, method=True, replay=True)
def permute(input, *dims):
    """Reorder the dimensions (a view).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3, 4).permute(2, 0, 1).shape
    oxmera.Size([4, 2, 3])
    """
    dims = _permutation(dims, input.ndim)
    return input.transpose(dims)


def _permutation(dims, ndim):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    if len(dims) != ndim:
        raise OpError(f"permute(): number of dims {len(dims)} doesn't match the input's "
                      f"{ndim} dimensions")
    norm = _core.normalize_each_dim(dims, ndim, "permute")
    if len(set(norm)) != ndim:
        raise OpError(f"permute(): repeated dim in {tuple(dims)}")
    return norm


@permute.vjp
def _(ctx, grad, input, *dims):
    forward = _permutation(dims, len(ctx.input_shape(0)))
    inverse = [0] * len(forward)
    for i, d in enumerate(forward):
        inverse[d] = i                  # np.argsort's answer, without its microsecond
    return grad.permute(tuple(inverse))


@op(save=(), view=True, method=True, replay=True)
def squeeze(input, dim=None):
    """Remove dimensions of size 1 (all, or those in ``dim``; others are kept).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(1, 3, 1).squeeze().shape
    oxmera.Size([3])
    """
    if dim is None:
        # squeeze() returns the array itself when there is nothing to
        # squeeze; a view instead keeps the output a view of the input
        # (sharing its version counter), as it is in every other case.
        return input[...].squeeze()
    dims = _distinct_dims(dim if isinstance(dim, (tuple, list)) else (dim,), input.ndim,
                          "squeeze")
    shape = input.shape
    dims = tuple([d for d in dims if shape[d] == 1]) if shape else ()
    return input.squeeze(axis=dims) if dims else input[...]


@squeeze.vjp
def _(ctx, grad, input, dim=None):
    return grad.reshape(ctx.input_shape(0))


@op(save=(), view=True, method=True, replay=True)
def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim`` (a view).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(3).unsqueeze(0).shape
    oxmera.Size([1, 3])
    """
    d = normalize_dim(dim, input.ndim + 1, "unsqueeze")
    shape = input.shape
    return input.reshape(shape[:d] + (1,) + shape[d:])     # np.expand_dims's view, in C


@unsqueeze.vjp
def _(ctx, grad, input, dim):
    return grad.reshape(ctx.input_shape(0))


# expand's target shape by PyTorch's rules and messages (in C, as _shape_arg).
_expanded_shape = _core.expanded_shape


@op(save=(), view=True, method=True, replay=True)
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


@op(save=(), view=True, method=True, replay=True)
def broadcast_to(input, shape):
    """Broadcast to ``shape`` without copying.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.broadcast_to(oxmera.tensor([1.0, 2.0]), (3, 2)).shape
    oxmera.Size([3, 2])
    """
    return broadcast_view(input, _expanded_shape(input, (shape,), "broadcast_to"))


@broadcast_to.vjp
def _(ctx, grad, input, shape):
    return grad


def _check_sequence(arrays, opname):
    if len(arrays) == 0:
        raise OpError(f"{opname}(): expected a non-empty sequence of tensors")


@op(complex_inputs=True, inputs="sequence", promote=True)
def cat(tensors, dim=0, *, axis=None):
    """Join tensors along an existing dimension (``axis`` is accepted for ``dim``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cat([oxmera.zeros(2, 3), oxmera.ones(1, 3)]).shape
    oxmera.Size([3, 3])
    >>> oxmera.cat([oxmera.zeros(2, 3), oxmera.ones(2, 1)], axis=1).shape
    oxmera.Size([2, 4])
    """
    _check_sequence(tensors, "cat")
    d = normalize_dim(pick_dim(dim, axis, "cat", default=0), tensors[0].ndim, "cat")
    for i, t in enumerate(tensors):
        if t.ndim != tensors[0].ndim or any(a != b for j, (a, b) in
                                           enumerate(zip(t.shape, tensors[0].shape)) if j != d):
            raise OpError(f"cat(): sizes of tensors must match except in dimension {d}; "
                          f"tensor 0 has shape {tensors[0].shape}, tensor {i} has shape {t.shape}")
    return np.concatenate(tensors, axis=d)


@cat.vjp
def _(ctx, grad, tensors, dim=0, *, axis=None):
    # The inputs are kept (not only their shapes) because the offsets of the
    # slices need the sizes of inputs without a gradient too.
    d = normalize_dim(pick_dim(dim, axis, "cat", default=0), grad.ndim, "cat")
    grads = []
    start = 0
    for i, t in enumerate(tensors):
        size = np.shape(t)[d]
        grads.append(grad[(slice(None),) * d + (slice(start, start + size),)]
                     if ctx.needs_input_grad[i] else None)
        start += size
    return grads


def concatenate(tensors, axis=0, *, dim=None):
    """Alias of :func:`cat` (NumPy's name); ``dim`` is accepted for ``axis``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.concatenate([oxmera.zeros(2), oxmera.ones(1)])
    tensor([0., 0., 1.], dtype=float32)
    >>> oxmera.concatenate([oxmera.zeros(1, 2), oxmera.ones(1, 1)], dim=1)
    tensor([[0., 0., 1.]], dtype=float32)
    """
    return cat(tensors, pick_dim(axis, dim, "concatenate", default=0))


@op(complex_inputs=True, inputs="sequence", save=(), promote=True)
def stack(tensors, dim=0, *, axis=None):
    """Join tensors of equal shape along a new dimension (``axis`` is accepted for ``dim``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.stack([oxmera.zeros(3), oxmera.ones(3)], dim=1).shape
    oxmera.Size([3, 2])
    """
    _check_sequence(tensors, "stack")
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise OpError(f"stack(): expects each tensor to be equal size, but got "
                          f"{tensors[0].shape} at entry 0 and {t.shape} at entry {i}")
    d = normalize_dim(pick_dim(dim, axis, "stack", default=0), tensors[0].ndim + 1, "stack")
    return np.stack(tensors, axis=d)


@stack.vjp
def _(ctx, grad, tensors, dim=0, *, axis=None):
    d = normalize_dim(pick_dim(dim, axis, "stack", default=0), grad.ndim, "stack")
    return [grad[(slice(None),) * d + (i,)] if ctx.needs_input_grad[i] else None
            for i in range(len(tensors))]


# -- flatten, unflatten, movedim: composed from reshape and permute ---------------------------

def flatten(input, start_dim=0, end_dim=-1):
    """Merge dimensions ``start_dim`` through ``end_dim`` into one (a view when possible).

    A 0-d tensor becomes a 1-element vector, as in PyTorch. Composed from
    :func:`reshape`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3, 4).flatten().shape
    oxmera.Size([24])
    >>> oxmera.zeros(2, 3, 4).flatten(1).shape
    oxmera.Size([2, 12])
    >>> oxmera.zeros(2, 3, 4, 5).flatten(start_dim=1, end_dim=2).shape
    oxmera.Size([2, 12, 5])
    """
    shape = _shape_of(input)
    ndim = len(shape)
    start = normalize_dim(start_dim, ndim, "flatten")
    end = normalize_dim(end_dim, ndim, "flatten")
    if start > end:
        raise OpError(f"flatten(): start_dim ({start_dim}) cannot come after end_dim "
                      f"({end_dim}) (input shape {tuple(shape)})")
    if ndim == 0:
        return reshape(input, (1,))
    merged = 1
    for s in shape[start:end + 1]:
        merged *= s
    return reshape(input, tuple(shape[:start]) + (merged,) + tuple(shape[end + 1:]))


def unflatten(input, dim, sizes):
    """Split dimension ``dim`` into ``sizes`` (one of them may be -1).

    The inverse of :func:`flatten`; composed from :func:`reshape`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 12).unflatten(1, (3, 4)).shape
    oxmera.Size([2, 3, 4])
    >>> oxmera.zeros(6).unflatten(0, (-1, 2)).shape
    oxmera.Size([3, 2])
    """
    shape = tuple(_shape_of(input))
    if not shape:
        raise IndexError(f"unflatten(): dimension specified as {dim} but tensor has no "
                         f"dimensions")
    d = normalize_dim(dim, len(shape), "unflatten")
    sizes = _shape_arg((sizes,), "unflatten")
    if not sizes:
        raise OpError("unflatten(): sizes must be non-empty")
    known = 1
    free = [i for i, s in enumerate(sizes) if s == -1]
    for s in sizes:
        if s != -1:
            known *= s
    size = shape[d]
    if (len(free) > 1 or any(s < -1 for s in sizes) or (free and (known == 0 or size % known))
            or (not free and known != size)):
        raise OpError(f"unflatten(): sizes {sizes} don't multiply up to the size of dim {d} "
                      f"({size}) of the input (shape {shape})")
    if free:
        sizes = sizes[:free[0]] + (size // known,) + sizes[free[0] + 1:]
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


def _dim_tuple(dims):
    return tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)


def movedim(input, source, destination):
    """Move dimension(s) ``source`` to position(s) ``destination``; the rest keep their order.

    ``source`` and ``destination`` are ints or equally long sequences.
    A view, composed from :func:`permute`.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 3, 4)
    >>> x.movedim(0, -1).shape
    oxmera.Size([3, 4, 2])
    >>> oxmera.movedim(x, (0, 1), (2, 0)).shape
    oxmera.Size([3, 4, 2])
    """
    ndim = len(_shape_of(input))
    source, destination = _dim_tuple(source), _dim_tuple(destination)
    if len(source) != len(destination):
        raise OpError(f"movedim(): source {source} and destination {destination} must have "
                      f"the same number of dims")
    src = _distinct_dims(source, ndim, "movedim")
    dst = _distinct_dims(destination, ndim, "movedim")
    order = [None] * max(ndim, 1)
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(ndim) if i not in src)
    order = [next(rest) if o is None else o for o in order[:ndim]]
    return permute(input, tuple(order))


def moveaxis(input, source, destination):
    """Alias of :func:`movedim` (NumPy's name).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.moveaxis(oxmera.zeros(2, 3, 4), 2, 0).shape
    oxmera.Size([4, 2, 3])
    """
    return movedim(input, source, destination)


# -- repeat, tile, flip, roll: copies --------------------------------------------------------

@op(save=(), method=True)
def repeat(input, *sizes):
    """Repeat the tensor ``sizes[i]`` times along each dim (PyTorch's ``Tensor.repeat``).

    ``sizes`` may be longer than the tensor has dimensions: the tensor is
    then treated as having leading dimensions of size 1. Always a copy.
    A primitive (not expand + reshape) so the result is always fresh,
    writable memory, as in PyTorch, in one node.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1, 2]).repeat(2, 2)
    tensor([[1, 2, 1, 2],
            [1, 2, 1, 2]], dtype=int64)
    """
    reps = _shape_arg(sizes, "repeat")
    if len(reps) < input.ndim:
        raise OpError(f"repeat(): the number of repeat dims ({len(reps)}) can not be smaller "
                      f"than the number of dimensions of the tensor (shape {input.shape})")
    if any(r < 0 for r in reps):
        raise OpError(f"repeat(): repeats must be non-negative, got {reps}")
    return np.tile(input, reps)


@repeat.vjp
def _(ctx, grad, input, *sizes):
    # out has shape (r0*s0, r1*s1, ...) with the input padded to len(reps)
    # dims: view it as (r0, s0, r1, s1, ...) and sum over the r's.
    reps = _shape_arg(sizes, "repeat")
    shape = ctx.input_shape(0)
    padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
    if not reps:
        return grad
    split = tuple(n for r, s in zip(reps, padded) for n in (r, s))
    summed = grad.reshape(split).sum(dim=tuple(range(0, 2 * len(reps), 2)))
    return summed.reshape(shape)


def tile(input, dims):
    """Repeat the tensor ``dims[i]`` times along each dim (``torch.tile``).

    Unlike :func:`repeat`, ``dims`` may be shorter than the number of
    dimensions: it is padded with leading 1s. Composed from :func:`repeat`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tile(oxmera.tensor([[1, 2]]), (2,))
    tensor([[1, 2, 1, 2]], dtype=int64)
    """
    dims = _shape_arg((dims,), "tile")
    ndim = len(_shape_of(input))
    return repeat(input, (1,) * (ndim - len(dims)) + dims)


def _unpacked_or_keyword(args, kwargs, keyword, method):
    """The one sequence argument of a method that PyTorch also lets take it
    unpacked (``x.flip(0, 1)``) or by keyword (``x.flip(dims=(0, 1))``)."""
    if not kwargs:
        return args[0] if len(args) == 1 else args
    if set(kwargs) != {keyword} or args:
        raise TypeError(f"Tensor.{method}(): takes its {keyword} unpacked, as one sequence or as "
                        f"{keyword}=..., got positional {args} and keywords {sorted(kwargs)}")
    return kwargs[keyword]


def _tile_method(self, *dims, **kwargs):
    """``tile(self, dims)``; PyTorch's method also takes the dims unpacked: ``x.tile(2, 2)``."""
    return tile(self, _unpacked_or_keyword(dims, kwargs, "dims", "tile"))


@op(save=(), method=False)
def flip(input, dims):
    """Reverse the order of elements along ``dims`` (a copy, as in PyTorch).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.flip(oxmera.tensor([[1, 2], [3, 4]]), (0,))
    tensor([[3, 4],
            [1, 2]], dtype=int64)
    >>> oxmera.tensor([1, 2, 3]).flip(0)
    tensor([3, 2, 1], dtype=int64)
    """
    axes = _distinct_dims(_dim_tuple(dims), input.ndim, "flip")
    if input.ndim == 0 or not axes:
        return input.copy()
    return np.flip(input, axes).copy()


@flip.vjp
def _(ctx, grad, input, dims):
    return flip(grad, dims)


def _flip_method(self, *dims, **kwargs):
    """``flip(self, dims)``; PyTorch's method also takes the dims unpacked: ``x.flip(0, 1)``."""
    return flip(self, _unpacked_or_keyword(dims, kwargs, "dims", "flip"))


def _roll_args(shifts, dims, opname="roll"):
    shifts = tuple(operator.index(s) for s in _dim_tuple(shifts))
    if dims is None:
        if len(shifts) != 1:
            raise OpError(f"{opname}(): shifts {shifts} and dims None must align: without "
                          f"dims, give one shift (the flattened tensor is rolled)")
        return shifts, None
    dims = _dim_tuple(dims)
    if len(shifts) != len(dims):
        raise OpError(f"{opname}(): shifts {shifts} and dims {dims} must align (the same "
                      f"number of each)")
    return shifts, dims


@op(save=(), method=True)
def roll(input, shifts, dims=None):
    """Shift elements cyclically by ``shifts`` along ``dims`` (without dims: the flattened
    tensor, shape restored). A copy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1, 2, 3, 4]).roll(1)
    tensor([4, 1, 2, 3], dtype=int64)
    >>> oxmera.roll(oxmera.tensor([[1, 2], [3, 4]]), (1, -1), (0, 1))
    tensor([[4, 3],
            [2, 1]], dtype=int64)
    """
    shifts, dims = _roll_args(shifts, dims)
    if dims is None:
        return np.roll(input, shifts[0])
    axes = tuple(normalize_dim(d, input.ndim, "roll") for d in dims)
    if input.ndim == 0:
        return input.copy()
    return np.roll(input, shifts, axes)


@roll.vjp
def _(ctx, grad, input, shifts, dims=None):
    shifts, dims = _roll_args(shifts, dims)
    return roll(grad, tuple(-s for s in shifts), dims)


# -- split, chunk, unbind: several views ------------------------------------------------------

def _split_sizes(size, split_size_or_sections, opname, shape):
    if isinstance(split_size_or_sections, (tuple, list)):
        sizes = tuple(operator.index(s) for s in split_size_or_sections)
        if any(s < 0 for s in sizes) or sum(sizes) != size:
            raise OpError(f"{opname}(): split sizes {sizes} must be non-negative and sum "
                          f"exactly to {size}, the size of the dimension split (input shape "
                          f"{shape})")
        return sizes
    step = operator.index(split_size_or_sections)
    if step < 0 or (step == 0 and size != 0):
        raise OpError(f"{opname}(): split size must be positive (0 only for a dimension of "
                      f"size 0), got {step} for a dimension of size {size} (input shape "
                      f"{shape})")
    if step == 0:
        return (0,)
    count = max(-(-size // step), 1)
    return (step,) * (count - 1) + (size - step * (count - 1),)


@op(save=(), view=True, method=True)
def split(tensor, split_size_or_sections, dim=0):
    """Split into pieces along ``dim``: of ``split_size_or_sections`` elements each (the last
    may be smaller) when it is an int, or of the listed sizes. A tuple of views.

    One node serves every piece; pieces a backward never reaches get a zero
    gradient.

    Examples
    --------
    >>> import oxmera
    >>> [t.tolist() for t in oxmera.arange(5).split(2)]
    [[0, 1], [2, 3], [4]]
    >>> [t.shape for t in oxmera.split(oxmera.zeros(2, 5), [1, 4], dim=1)]
    [oxmera.Size([2, 1]), oxmera.Size([2, 4])]
    """
    if tensor.ndim == 0:
        raise OpError("split(): expects at least a 1-dimensional tensor, got a 0-d tensor")
    d = normalize_dim(dim, tensor.ndim, "split")
    sizes = _split_sizes(tensor.shape[d], split_size_or_sections, "split", tensor.shape)
    lead = (slice(None),) * d
    pieces = []
    start = 0
    for s in sizes:
        pieces.append(tensor[lead + (slice(start, start + s),)])
        start += s
    return tuple(pieces)


@split.vjp
def _(ctx, grads, tensor, split_size_or_sections, dim=0):
    if isinstance(grads, Tensor):      # a single piece: the node has one output
        return grads
    return cat(list(grads), normalize_dim(dim, grads[0].ndim, "split"))


def chunk(input, chunks, dim=0):
    """Split into ``chunks`` pieces along ``dim`` (fewer when the size does not allow more).

    Each piece but the last has ``ceil(size / chunks)`` elements, as in
    PyTorch; composed from :func:`split`.

    Examples
    --------
    >>> import oxmera
    >>> [t.tolist() for t in oxmera.arange(5).chunk(3)]
    [[0, 1], [2, 3], [4]]
    >>> len(oxmera.arange(6).chunk(4))
    3
    """
    chunks = operator.index(chunks)
    shape = tuple(_shape_of(input))
    if not shape:
        raise OpError("chunk(): expects at least a 1-dimensional tensor, got a 0-d tensor")
    if chunks <= 0:
        raise OpError(f"chunk(): expects chunks to be greater than 0, got {chunks}")
    size = shape[normalize_dim(dim, len(shape), "chunk")]
    if size == 0:
        # split(0) would give one piece; PyTorch gives ``chunks`` empty ones.
        return split(input, [0] * chunks, dim)
    return split(input, -(-size // chunks), dim)


@op(save=(), view=True, method=True)
def unbind(input, dim=0):
    """The slices along ``dim``, without it: a tuple of views.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1, 2], [3, 4]]).unbind(1)
    (tensor([1, 3], dtype=int64), tensor([2, 4], dtype=int64))
    """
    if input.ndim == 0:
        raise IndexError(f"unbind(): dimension specified as {dim} but the tensor has no "
                         f"dimensions")
    d = normalize_dim(dim, input.ndim, "unbind")
    lead = (slice(None),) * d
    return tuple(input[lead + (i, Ellipsis)] for i in range(input.shape[d]))


@unbind.vjp
def _(ctx, grads, input, dim=0):
    if isinstance(grads, Tensor):      # a single slice: the node has one output
        return grads.unsqueeze(dim)
    return stack(list(grads), normalize_dim(dim, grads[0].ndim + 1, "unbind"))


# -- diagonal, tril, triu --------------------------------------------------------------------

def _diagonal_dims(ndim, dim1, dim2, opname):
    if ndim < 2:
        raise IndexError(f"{opname}(): expects a tensor with at least 2 dimensions, got "
                         f"{ndim}")
    d1 = normalize_dim(dim1, ndim, opname)
    d2 = normalize_dim(dim2, ndim, opname)
    if d1 == d2:
        raise OpError(f"{opname}(): diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _writable_diagonal(array, offset, d1, d2):
    # np.diagonal gives a read-only view (a NumPy transition that never
    # finished); PyTorch's diagonal is a writable view, so writes to it reach
    # the input, as they do here when the input itself is writable.
    out = np.diagonal(array, offset, d1, d2)
    if array.flags.writeable:
        try:
            out.flags.writeable = True
        except ValueError:
            # NumPy refuses when an array ``array`` views is read-only though
            # ``array``'s own flag is set (the core locked the memory for
            # backward after ``array`` was made): the same view, made from an
            # interface carrying ``array``'s own flag, as any other view of
            # ``array`` would be (NumPy's as_strided does it this way).
            interface = dict(out.__array_interface__)
            interface["data"] = (interface["data"][0], False)
            out = np.asarray(_DummyArray(interface, base=array))
    return out


@op(save=(), view=True, method=True)
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of the ``(dim1, dim2)`` planes, as a new last dimension (a view).

    ``offset > 0`` picks a diagonal above the main one, ``< 0`` below.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.arange(9).reshape(3, 3)
    >>> x.diagonal()
    tensor([0, 4, 8], dtype=int64)
    >>> x.diagonal(1)
    tensor([1, 5], dtype=int64)
    """
    d1, d2 = _diagonal_dims(input.ndim, dim1, dim2, "diagonal")
    return _writable_diagonal(input, offset, d1, d2)


@diagonal.vjp
def _(ctx, grad, input, offset=0, dim1=0, dim2=1):
    return diagonal_backward(grad, ctx.input_shape(0), offset, dim1, dim2)


@op(save=())
def diagonal_backward(grad, input_shape, offset, dim1, dim2):
    """Zeros of ``input_shape`` with ``grad`` on the diagonal :func:`diagonal` reads.

    The VJP of ``diagonal``; its own VJP is ``diagonal`` again.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.shape import diagonal_backward
    >>> diagonal_backward(oxmera.tensor([1.0, 2.0]), (2, 3), 1, 0, 1)
    tensor([[0., 1., 0.],
            [0., 0., 2.]], dtype=float32)
    """
    shape = tuple(input_shape)
    d1, d2 = _diagonal_dims(len(shape), dim1, dim2, "diagonal_backward")
    out = np.zeros(shape, grad.dtype)
    _writable_diagonal(out, offset, d1, d2)[...] = grad
    return out


@diagonal_backward.vjp
def _(ctx, grad, grad_in, input_shape, offset, dim1, dim2):
    return diagonal(grad, offset, dim1, dim2)


def _check_matrices(input, opname):
    if input.ndim < 2:
        raise OpError(f"{opname}(): input tensor must have at least 2 dimensions, got shape "
                      f"{input.shape}")


@op(save=(), method=True)
def tril(input, diagonal=0):
    """The lower triangle of the last two dims (zeros above diagonal ``diagonal``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(3, 3).tril()
    tensor([[1., 0., 0.],
            [1., 1., 0.],
            [1., 1., 1.]], dtype=float32)
    """
    _check_matrices(input, "tril")
    return np.tril(input, operator.index(diagonal))


@tril.vjp
def _(ctx, grad, input, diagonal=0):
    return tril(grad, diagonal)


@op(save=(), method=True)
def triu(input, diagonal=0):
    """The upper triangle of the last two dims (zeros below diagonal ``diagonal``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(2, 3).triu(1)
    tensor([[0., 1., 1.],
            [0., 0., 1.]], dtype=float32)
    """
    _check_matrices(input, "triu")
    return np.triu(input, operator.index(diagonal))


@triu.vjp
def _(ctx, grad, input, diagonal=0):
    return triu(grad, diagonal)


def _T(self):
    return permute(self, _REVERSED[self.ndim] if self.ndim < 8 else
                   tuple(range(self.ndim - 1, -1, -1)))


_REVERSED = [tuple(range(n - 1, -1, -1)) for n in range(8)]     # T's permutations


def _mT(self):
    if self.ndim < 2:
        raise OpError(f"mT: tensor of shape {self.shape} has fewer than 2 dimensions")
    return transpose(self, -2, -1)      # the op itself: Tensor.transpose also parses NumPy's forms


_T.__doc__ = "The tensor with its dimensions reversed (a transpose for 2-D)."
_mT.__doc__ = "The tensor with its last two dimensions swapped (batched matrix transpose)."
_registry.add_tensor_attribute("swapaxes", swapaxes)
_registry.add_tensor_attribute("flatten", flatten)
_registry.add_tensor_attribute("unflatten", unflatten)
_registry.add_tensor_attribute("movedim", movedim)
_registry.add_tensor_attribute("moveaxis", moveaxis)
_tile_method.__name__, _flip_method.__name__ = "tile", "flip"
_registry.add_tensor_attribute("tile", _tile_method)
_registry.add_tensor_attribute("flip", _flip_method)
_registry.add_tensor_attribute("chunk", chunk)
_registry.add_tensor_attribute("T", property(_T))
_registry.add_tensor_attribute("mT", property(_mT))
