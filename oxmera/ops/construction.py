"""Building tensors out of others: diagonals (diag, diag_embed, diagflat, trace),
grids and products (meshgrid, cartesian_prod, combinations, kron, block_diag,
cdist, cross), repeats and rotations (repeat_interleave, rot90, flipud,
fliplr), the ``atleast_*``, ``*stack`` and ``*split`` families, and the
index builders tril_indices / triu_indices.

Everything here is composed from primitives of ``shape``, ``index``,
``elementwise`` and ``reduce`` (as PyTorch defines these functions by them:
``hstack`` is ``cat``, ``flipud`` is ``flip``), so gradients, to any order,
come from those ops; this module defines no VJP.
"""
import builtins
import itertools
import operator

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import _registry
from oxmera.ops._utils import normalize_dim
from oxmera.ops.index import _index_array, getitem, index_select
from oxmera.ops.shape import cat, diagonal, diagonal_backward, flip, stack, transpose

__all__ = ["diag", "diag_embed", "diagflat", "trace", "tril_indices", "triu_indices",
           "meshgrid", "cartesian_prod", "combinations", "block_diag", "cdist", "cross", "kron",
           "repeat_interleave", "rot90", "flipud", "fliplr", "atleast_1d", "atleast_2d",
           "atleast_3d", "hstack", "vstack", "dstack", "column_stack", "row_stack", "hsplit",
           "vsplit", "dsplit", "tensor_split"]

Tensor = _core.Tensor
OpError = _core.OpError


def _tensor(value, opname):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return _core._wrap(value)
    raise TypeError(f"{opname}(): expected a Tensor, got {type(value).__name__}")


def _tensors(args, opname):
    """Tensors given as varargs or as one sequence (``f(a, b)`` or ``f([a, b])``)."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return [_tensor(t, opname) for t in args]


# -- diagonals -------------------------------------------------------------------------------

def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose ``(dim1, dim2)`` planes hold the last dimension of ``input`` on
    diagonal ``offset`` (zeros elsewhere); the result has one dimension more.

    Composed from the VJP of :func:`diagonal`, which it is the inverse of.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.diag_embed(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[[1., 0.],
             [0., 2.]],
    <BLANKLINE>
            [[3., 0.],
             [0., 4.]]], dtype=float32)
    """
    input = _tensor(input, "diag_embed")
    offset = operator.index(offset)
    ndim = input.ndim + 1
    if ndim < 2:
        raise IndexError(f"diag_embed(): input must have at least 1 dimension, got shape "
                         f"{tuple(input.shape)}")
    d1, d2 = normalize_dim(dim1, ndim, "diag_embed"), normalize_dim(dim2, ndim, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diag_embed(): diagonal dimensions cannot be identical {dim1}, "
                           f"{dim2}")
    size = input.shape[-1] + abs(offset)
    rest = iter(input.shape[:-1])
    shape = tuple(size if k in (d1, d2) else next(rest) for k in range(ndim))
    return diagonal_backward(input, shape, offset, d1, d2)


def diag(input, diagonal=0):
    """For a 1-d ``input``: the square matrix with ``input`` on diagonal ``diagonal``; for a
    2-d one: its diagonal ``diagonal`` as a 1-d tensor (a copy).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.diag(oxmera.tensor([1.0, 2.0]), 1)
    tensor([[0., 1., 0.],
            [0., 0., 2.],
            [0., 0., 0.]], dtype=float32)
    >>> oxmera.arange(6.0).reshape(2, 3).diag(-1)
    tensor([3.], dtype=float32)
    """
    input = _tensor(input, "diag")
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal(input, diagonal).clone()
    raise RuntimeError(f"diag(): input must be 1-d or 2-d, got shape {tuple(input.shape)}")


_diagonal = diagonal        # ``diag``'s parameter is named ``diagonal``, as in PyTorch


def diagflat(input, offset=0):
    """The square matrix with the flattened ``input`` on diagonal ``offset``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.diagflat(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])).shape
    oxmera.Size([4, 4])
    """
    input = _tensor(input, "diagflat")
    return diag_embed(input.reshape(-1), offset, 0, 1)


def trace(input):
    """The sum of the main diagonal of a 2-d ``input`` (integers sum to int64).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.arange(9.0).reshape(3, 3).trace()
    tensor(12., dtype=float32)
    """
    input = _tensor(input, "trace")
    if input.ndim != 2:
        raise RuntimeError(f"trace(): expected a matrix, got a tensor of shape "
                           f"{tuple(input.shape)}")
    return _diagonal(input).sum()


def _check_device(device, opname):
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"{opname}(): oxmera computes on the CPU with NumPy; device "
                           f"{device!r} is not available")


def _triangle_indices(numpy_indices, row, col, offset, dtype, device, opname):
    _check_device(device, opname)
    row, col, offset = operator.index(row), operator.index(col), operator.index(offset)
    if row < 0 or col < 0:
        raise RuntimeError(f"{opname}(): row and col must be non-negative, got {row} and "
                           f"{col}")
    dtype = np.dtype(np.int64 if dtype is None else dtype)
    if dtype not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise RuntimeError(f"{opname}(): dtype must be int64 or int32, got {dtype}")
    rows, cols = numpy_indices(row, offset, col)
    return Tensor(np.stack([rows, cols]).astype(dtype).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The indices of the lower triangle (diagonal ``offset`` and below) of a
    ``row × col`` matrix, as a ``(2, N)`` int64 tensor: rows, then columns, in row-major
    order.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]], dtype=int64)
    """
    return _triangle_indices(np.tril_indices, row, col, offset, dtype, device, "tril_indices")


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The indices of the upper triangle (diagonal ``offset`` and above) of a
    ``row × col`` matrix, as a ``(2, N)`` int64 tensor in row-major order.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.triu_indices(2, 3, 1)
    tensor([[0, 0, 1],
            [1, 2, 2]], dtype=int64)
    """
    return _triangle_indices(np.triu_indices, row, col, offset, dtype, device, "triu_indices")


# -- grids and products --------------------------------------------------------------------

def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids from 1-d (or 0-d) tensors: with ``indexing="ij"`` (the default)
    the i-th result varies along dimension i; ``"xy"`` swaps the first two (as NumPy's
    default and MATLAB).

    Examples
    --------
    >>> import oxmera
    >>> xs, ys = oxmera.meshgrid(oxmera.tensor([1, 2, 3]), oxmera.tensor([4, 5]),
    ...                          indexing="xy")
    >>> xs
    tensor([[1, 2, 3],
            [1, 2, 3]], dtype=int64)
    >>> ys.shape
    oxmera.Size([2, 3])
    """
    tensors = _tensors(tensors, "meshgrid")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"meshgrid(): indexing must be 'ij' or 'xy', got {indexing!r}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid(): expects 0-d or 1-d tensors, got shape "
                               f"{tuple(t.shape)}")
    if not tensors:
        raise RuntimeError("meshgrid(): expects a non-empty list of tensors")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = [tensors[1], tensors[0]] + tensors[2:]
    sizes = tuple(t.numel() for t in tensors)
    grids = []
    for k, t in enumerate(tensors):
        shape = [1] * len(sizes)
        shape[k] = sizes[k]
        grids.append(t.reshape(tuple(shape)).expand(sizes))
    if swap:
        # the grids of the swapped first two inputs, back in the caller's order
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """The Cartesian product of 1-d tensors: a ``(N, len(tensors))`` tensor of every
    combination in row-major order (one tensor is returned as it is, as in PyTorch).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cartesian_prod(oxmera.tensor([1, 2]), oxmera.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]], dtype=int64)
    """
    tensors = _tensors(tensors, "cartesian_prod")
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"cartesian_prod(): expects 1-d tensors, got shape "
                               f"{tuple(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.reshape(-1) for g in meshgrid(tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of a 1-d ``input`` (as
    ``itertools.combinations``, or ``combinations_with_replacement``), one per row.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.combinations(oxmera.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]], dtype=int64)
    """
    input = _tensor(input, "combinations")
    if input.ndim != 1:
        raise RuntimeError(f"combinations(): expects a 1-d tensor, got shape "
                           f"{tuple(input.shape)}")
    r = operator.index(r)
    if r < 0:
        raise RuntimeError(f"combinations(): r must be non-negative, got {r}")
    if r == 0:
        return Tensor(np.empty(0, input.dtype))     # not connected to input, as in PyTorch
    pick = (itertools.combinations_with_replacement if with_replacement
            else itertools.combinations)
    rows = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return getitem(input, Tensor(rows))


def block_diag(*tensors):
    """The block-diagonal matrix of the given tensors (0-d ones are 1×1 blocks, 1-d ones
    single rows); dtypes promote as in :func:`cat`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.block_diag(oxmera.tensor([[1, 2]]), oxmera.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]], dtype=int64)
    """
    from oxmera.ops._utils import result_type
    blocks = []
    for t in tensors:
        t = _tensor(t, "block_diag")
        if t.ndim > 2:
            raise RuntimeError(f"block_diag(): input tensors must have 2 or fewer dimensions, "
                               f"got shape {tuple(t.shape)}")
        blocks.append(t.reshape((1,) * (2 - t.ndim) + tuple(t.shape)))
    dtype = result_type(*blocks) if blocks else np.dtype(np.float32)
    width = builtins.sum(b.shape[1] for b in blocks)
    if not blocks:
        return Tensor(np.zeros((1, 0), dtype))      # PyTorch's shape for no blocks
    rows, before = [], 0
    for b in blocks:
        n, m = b.shape
        left = Tensor(np.zeros((n, before), dtype))
        right = Tensor(np.zeros((n, width - before - m), dtype))
        rows.append(cat([left, b.to(dtype), right], 1))
        before += m
    return cat(rows, 0)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distances between each row of ``x1`` (``(..., P, M)``) and each row
    of ``x2`` (``(..., R, M)``): a ``(..., P, R)`` tensor; batch dims broadcast.

    ``compute_mode`` is accepted for PyTorch's signature; distances are always
    computed directly (never through a matrix product), which is exact where
    PyTorch's matrix-product route rounds. The gradient at a zero distance
    is zero, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.tensor([[0.0, 0.0], [1.0, 1.0]])
    >>> oxmera.cdist(a, oxmera.tensor([[3.0, 4.0]]))
    tensor([[5.    ],
            [3.6056]], dtype=float32)
    """
    from oxmera.ops.linalg import vector_norm
    x1, x2 = _tensor(x1, "cdist"), _tensor(x2, "cdist")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist(): only supports at least 2-d tensors, got x1 of shape "
                           f"{tuple(x1.shape)} and x2 of shape {tuple(x2.shape)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist(): x1 {tuple(x1.shape)} and x2 {tuple(x2.shape)} must have "
                           f"the same number of columns")
    if x1.dtype.kind != "f" or x2.dtype.kind != "f":
        raise RuntimeError(f"cdist(): only supports floating-point dtypes, got {x1.dtype} and "
                           f"{x2.dtype}")
    if p < 0:
        raise RuntimeError(f"cdist(): only supports non-negative p values, got {p}")
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"cdist(): {compute_mode!r} is not a valid value for compute_mode")
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), ord=p, dim=-1)


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (by default the first dimension of
    size 3, as ``torch.cross``; ``linalg.cross`` defaults to the last); the two broadcast.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cross(oxmera.tensor([1.0, 0.0, 0.0]), oxmera.tensor([0.0, 1.0, 0.0]))
    tensor([0., 0., 1.], dtype=float32)
    """
    input, other = _tensor(input, "cross"), _tensor(other, "cross")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise RuntimeError(f"cross(): input of shape {tuple(input.shape)} and other of shape "
                           f"{tuple(other.shape)} do not broadcast") from None
    if dim is None:
        dim = next((k for k, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"cross(): no dimension of size 3 in input {tuple(input.shape)}"
                               f" and other {tuple(other.shape)}")
    return _cross(input, other, dim, shape, "cross")


def linalg_cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (the last by default), broadcasting:
    ``oxmera.linalg.cross``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.cross(oxmera.tensor([[0.0, 1.0, 0.0]]), oxmera.tensor([0.0, 0.0, 1.0]))
    tensor([[1., 0., 0.]], dtype=float32)
    """
    input, other = _tensor(input, "linalg.cross"), _tensor(other, "linalg.cross")
    try:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise RuntimeError(f"linalg.cross(): input of shape {tuple(input.shape)} and other of "
                           f"shape {tuple(other.shape)} do not broadcast") from None
    return _cross(input, other, dim, shape, "linalg.cross")


def _cross(input, other, dim, shape, opname):
    d = normalize_dim(dim, len(shape), opname)
    if shape[d] != 3:
        raise RuntimeError(f"{opname}(): dimension {dim} of input {tuple(input.shape)} and "
                           f"other {tuple(other.shape)} must have size 3")
    input, other = (t if tuple(t.shape) == shape else t.expand(shape) for t in (input, other))

    def part(t, k):
        return getitem(t, (slice(None),) * d + (k,))
    a, b = [part(input, k) for k in range(3)], [part(other, k) for k in range(3)]
    return stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                  a[0] * b[1] - a[1] * b[0]], d)


def kron(input, other):
    """The Kronecker product: blocks ``input[i, j, ...] * other`` laid out in order, of
    shape ``input.shape * other.shape`` elementwise (the shorter shape padded with 1s).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.kron(oxmera.tensor([[1, 2]]), oxmera.tensor([[1], [10]]))
    tensor([[ 1,  2],
            [10, 20]], dtype=int64)
    """
    input, other = _tensor(input, "kron"), _tensor(other, "kron")
    n = max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    # a[i0, 1, i1, 1, ...] * b[1, j0, 1, j1, ...] = out[i0, j0, i1, j1, ...]
    a = input.reshape(tuple(x for s in a_shape for x in (s, 1)))
    b = other.reshape(tuple(x for s in b_shape for x in (1, s)))
    return (a * b).reshape(tuple(s * t for s, t in zip(a_shape, b_shape)))


# -- repeats, rotations, flips ----------------------------------------------------------------

def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (each slice along ``dim``) repeated ``repeats`` times in place: an int,
    or a tensor with one count per element. Without ``dim`` the input is flattened first.

    ``repeat_interleave(counts)`` alone gives ``arange(len(counts))`` repeated
    by ``counts`` (int64). ``output_size``, the result's size along ``dim``, is
    checked when given.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1, 2], [3, 4]])
    >>> x.repeat_interleave(2)
    tensor([1, 1, 2, 2, 3, 3, 4, 4], dtype=int64)
    >>> x.repeat_interleave(oxmera.tensor([1, 2]), dim=0)
    tensor([[1, 2],
            [3, 4],
            [3, 4]], dtype=int64)
    >>> oxmera.repeat_interleave(oxmera.tensor([2, 0, 1]))
    tensor([0, 0, 2], dtype=int64)
    """
    if repeats is None:
        counts = _counts(input, None, "repeat_interleave")
        return Tensor(np.repeat(np.arange(counts.size, dtype=counts.dtype), counts))
    input = _tensor(input, "repeat_interleave")
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = normalize_dim(dim, max(input.ndim, 1), "repeat_interleave")
        if input.ndim == 0:
            input = input.reshape(1)
    size = input.shape[d]
    counts = _counts(repeats, size, "repeat_interleave")
    picks = np.repeat(np.arange(size, dtype=np.int64), counts)
    if output_size is not None and output_size != picks.size:
        raise RuntimeError(f"repeat_interleave(): output_size {output_size} differs from the "
                           f"size of the result along dim {d}, {picks.size}")
    return index_select(input, d, Tensor(picks))


def _counts(repeats, size, opname):
    """``repeats`` as a vector of counts for ``size`` elements (an int broadcasts)."""
    if isinstance(repeats, (int, np.integer)) and not isinstance(repeats, bool):
        counts = np.full(size, int(repeats), np.int64)
    else:
        counts = _index_array(repeats, opname, "repeats")
        if counts.ndim > 1:
            raise RuntimeError(f"{opname}(): repeats must be 0-d or 1-d, got shape "
                               f"{counts.shape}")
        counts = counts.reshape(-1)
        if size is not None:
            if counts.size == 1:
                counts = np.full(size, counts[0], counts.dtype)
            elif counts.size != size:
                raise RuntimeError(f"{opname}(): repeats must have the same size as input "
                                   f"along dim, got {counts.size} repeats for {size} elements")
    if counts.size and counts.min() < 0:
        raise RuntimeError(f"{opname}(): repeats can not be negative, got {counts.min()}")
    return counts


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by ``k`` quarter turns in the plane ``dims``, from the first
    towards the second dimension.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1, 2], [3, 4]]).rot90()
    tensor([[2, 4],
            [1, 3]], dtype=int64)
    """
    input = _tensor(input, "rot90")
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90(): expected total rotation dims == 2, got {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90(): expected total dims >= 2, got a tensor of shape "
                           f"{tuple(input.shape)}")
    d0, d1 = (normalize_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise RuntimeError(f"rot90(): rotation dims must differ, got {dims}")
    k = operator.index(k) % 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return transpose(flip(input, (d0,)), d0, d1)
    return input.clone()


def flipud(input):
    """``input`` upside down: flipped along dimension 0 (at least 1-d).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1, 2], [3, 4]]).flipud()
    tensor([[3, 4],
            [1, 2]], dtype=int64)
    """
    input = _tensor(input, "flipud")
    if input.ndim < 1:
        raise RuntimeError("flipud(): input must be at least 1-d, got a 0-d tensor")
    return flip(input, (0,))


def fliplr(input):
    """``input`` flipped left to right: along dimension 1 (at least 2-d).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([[1, 2], [3, 4]]).fliplr()
    tensor([[2, 1],
            [4, 3]], dtype=int64)
    """
    input = _tensor(input, "fliplr")
    if input.ndim < 2:
        raise RuntimeError(f"fliplr(): input must be at least 2-d, got shape "
                           f"{tuple(input.shape)}")
    return flip(input, (1,))


# -- atleast_*, stacks, splits -----------------------------------------------------------------

def _atleast(args, shape_of, opname):
    single = len(args) == 1 and isinstance(args[0], Tensor)
    tensors = _tensors(args, opname)
    out = tuple(t if tuple(shape_of(t)) == tuple(t.shape) else t.reshape(shape_of(t))
                for t in tensors)
    return out[0] if single else out


def _shape_1d(t):
    return tuple(t.shape) if t.ndim >= 1 else (1,)


def _shape_2d(t):
    return tuple(t.shape) if t.ndim >= 2 else (1,) * (2 - t.ndim) + tuple(t.shape)


def _shape_3d(t):
    if t.ndim >= 3:
        return tuple(t.shape)
    if t.ndim == 2:
        return tuple(t.shape) + (1,)
    return (1, t.numel(), 1)


def atleast_1d(*tensors):
    """Each tensor with at least one dimension (a 0-d one becomes shape ``(1,)``); one
    tensor in, one out, else a tuple.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.atleast_1d(oxmera.tensor(1.0))
    tensor([1.], dtype=float32)
    """
    return _atleast(tensors, _shape_1d, "atleast_1d")


def atleast_2d(*tensors):
    """Each tensor with at least two dimensions (``(n,)`` becomes ``(1, n)``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.atleast_2d(oxmera.tensor([1.0, 2.0])).shape
    oxmera.Size([1, 2])
    """
    return _atleast(tensors, _shape_2d, "atleast_2d")


def atleast_3d(*tensors):
    """Each tensor with at least three dimensions (``(n,)`` becomes ``(1, n, 1)``,
    ``(m, n)`` becomes ``(m, n, 1)``), as NumPy's ``atleast_3d``.

    Examples
    --------
    >>> import oxmera
    >>> [t.shape for t in oxmera.atleast_3d(oxmera.tensor(1.0), oxmera.ones(2, 3))]
    [oxmera.Size([1, 1, 1]), oxmera.Size([2, 3, 1])]
    """
    return _atleast(tensors, _shape_3d, "atleast_3d")


def _stack_inputs(tensors, opname):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{opname}(): expects a sequence of tensors, got "
                        f"{type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{opname}(): expects a non-empty sequence of tensors")
    return [_tensor(t, opname) for t in tensors]


def hstack(tensors):
    """Tensors joined column-wise: along dimension 1, or 0 for 1-d ones (0-d ones count as
    1-d).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.hstack([oxmera.tensor([1, 2]), oxmera.tensor([3])])
    tensor([1, 2, 3], dtype=int64)
    """
    tensors = atleast_1d(_stack_inputs(tensors, "hstack"))
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Tensors joined row-wise: along dimension 0 after :func:`atleast_2d`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.vstack([oxmera.tensor([1, 2]), oxmera.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]], dtype=int64)
    """
    return cat(atleast_2d(_stack_inputs(tensors, "vstack")), 0)


def row_stack(tensors):
    """:func:`vstack` under NumPy's older name.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.row_stack([oxmera.tensor([1, 2]), oxmera.tensor([3, 4])]).shape
    oxmera.Size([2, 2])
    """
    return cat(atleast_2d(_stack_inputs(tensors, "row_stack")), 0)


def dstack(tensors):
    """Tensors joined depth-wise: along dimension 2 after :func:`atleast_3d`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.dstack([oxmera.tensor([1, 2]), oxmera.tensor([3, 4])])
    tensor([[[1, 3],
             [2, 4]]], dtype=int64)
    """
    return cat(atleast_3d(_stack_inputs(tensors, "dstack")), 2)


def column_stack(tensors):
    """Tensors joined as columns: 0-d and 1-d ones become columns ``(n, 1)``, the rest
    are joined along dimension 1.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.column_stack([oxmera.tensor([1, 2]), oxmera.tensor([[3], [4]])])
    tensor([[1, 3],
            [2, 4]], dtype=int64)
    """
    tensors = _stack_inputs(tensors, "column_stack")
    return cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors], 1)


def tensor_split(input, indices_or_sections, dim=0):
    """``input`` split along ``dim`` into views: into ``n`` parts as equal as possible
    (the first ``size % n`` one longer) for an int ``n``, or before each of the given
    indices for a sequence (as NumPy's ``array_split``). A 0-d int tensor counts as an
    int, a 1-d one as indices.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.arange(7)
    >>> [t.tolist() for t in x.tensor_split(3)]
    [[0, 1, 2], [3, 4], [5, 6]]
    >>> [t.tolist() for t in x.tensor_split([1, 5])]
    [[0], [1, 2, 3, 4], [5, 6]]
    """
    input = _tensor(input, "tensor_split")
    if input.ndim == 0:
        raise RuntimeError("tensor_split(): expected at least a 1-dimensional tensor, got a "
                           "0-d tensor")
    d = normalize_dim(dim, input.ndim, "tensor_split")
    size = input.shape[d]
    split = indices_or_sections
    if isinstance(split, Tensor):
        if split.dtype != np.int64 or split.ndim > 1:
            raise RuntimeError(f"tensor_split(): indices_or_sections must be a 0-d or 1-d "
                               f"int64 tensor, got dtype {split.dtype} and shape "
                               f"{tuple(split.shape)}")
        split = split.item() if split.ndim == 0 else split.tolist()
    if isinstance(split, (int, np.integer)) and not isinstance(split, bool):
        sections = int(split)
        if sections <= 0:
            raise RuntimeError(f"tensor_split(): number of sections must be larger than 0, "
                               f"got {sections}")
        small, extra = divmod(size, sections)
        bounds = list(itertools.accumulate([0] + [small + (k < extra)
                                                  for k in range(sections)]))
    else:
        bounds = [0] + [operator.index(i) for i in split] + [size]
    # each part is input[start:stop] with Python's slice rules (negative indices count from
    # the end, a stop before its start gives an empty part), as in PyTorch
    return tuple(getitem(input, (slice(None),) * d + (slice(start, stop),))
                 for start, stop in zip(bounds[:-1], bounds[1:]))


def _directional_split(input, indices_or_sections, dim, least, opname):
    input = _tensor(input, opname)
    if input.ndim < least:
        raise RuntimeError(f"{opname}(): requires a tensor with at least {least} dimension"
                           f"{'s' if least > 1 else ''}, got shape {tuple(input.shape)}")
    split = indices_or_sections
    if isinstance(split, (int, np.integer)) and not isinstance(split, bool):
        if split <= 0 or input.shape[dim] % split:
            raise RuntimeError(f"{opname}(): the size of dimension {dim}, {input.shape[dim]}, "
                               f"is not divisible by the split size {split}")
    elif not isinstance(split, (list, tuple)):
        raise TypeError(f"{opname}(): indices_or_sections must be an int or a list of ints, "
                        f"got {type(split).__name__}")
    return tensor_split(input, split, dim)


def hsplit(input, indices_or_sections):
    """:func:`tensor_split` along dimension 1 (0 for a 1-d input); an int must divide the
    size evenly.

    Examples
    --------
    >>> import oxmera
    >>> [t.shape for t in oxmera.ones(2, 4).hsplit(2)]
    [oxmera.Size([2, 2]), oxmera.Size([2, 2])]
    """
    dim = 1 if _tensor(input, "hsplit").ndim > 1 else 0
    return _directional_split(input, indices_or_sections, dim, 1, "hsplit")


def vsplit(input, indices_or_sections):
    """:func:`tensor_split` along dimension 0 of an at least 2-d input; an int must divide
    the size evenly.

    Examples
    --------
    >>> import oxmera
    >>> [t.shape for t in oxmera.ones(4, 2).vsplit([1])]
    [oxmera.Size([1, 2]), oxmera.Size([3, 2])]
    """
    return _directional_split(input, indices_or_sections, 0, 2, "vsplit")


def dsplit(input, indices_or_sections):
    """:func:`tensor_split` along dimension 2 of an at least 3-d input; an int must divide
    the size evenly.

    Examples
    --------
    >>> import oxmera
    >>> [t.shape for t in oxmera.ones(1, 2, 4).dsplit(2)]
    [oxmera.Size([1, 2, 2]), oxmera.Size([1, 2, 2])]
    """
    return _directional_split(input, indices_or_sections, 2, 3, "dsplit")


for _name in ("diag", "diag_embed", "diagflat", "trace", "kron", "repeat_interleave", "rot90",
              "flipud", "fliplr", "hsplit", "vsplit", "dsplit", "tensor_split", "cross"):
    _registry.add_tensor_attribute(_name, globals()[_name])
