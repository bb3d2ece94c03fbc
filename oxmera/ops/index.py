"""Indexing: ``t[index]`` with ints, slices, None, Ellipsis, bool masks and
integer tensors/arrays (NumPy's basic and advanced indexing), and the index
ops: index_select, gather, scatter, scatter_add, take_along_dim, masked_fill,
nonzero. (``t[index] = v`` and the in-place ops live in ``inplace``.)

The VJP of indexing scatters the gradient into zeros of the input's shape
(``index_backward``), adding where an index repeats; the VJP of that is
indexing again, so both are differentiable to any order.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import normalize_dim

__all__ = ["getitem", "index_select", "gather", "scatter", "scatter_add", "take_along_dim",
           "masked_fill", "nonzero"]

Tensor = _core.Tensor
OpError = _core.OpError
_BASIC = (int, slice, type(None), type(Ellipsis))


def normalize_index(index):
    """The index with Tensors turned into arrays, as a tuple; and whether it is basic."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    basic = True
    for part in index:
        if isinstance(part, Tensor):
            part = part._data
        elif isinstance(part, (list, np.ndarray)) or (isinstance(part, np.generic)
                                                       and part.dtype == np.bool_):
            part = np.asarray(part)
        elif isinstance(part, np.integer):
            part = int(part)
        if isinstance(part, bool) or not isinstance(part, _BASIC):
            basic = False
            if isinstance(part, np.ndarray) and part.dtype.kind not in "biu":
                raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                                 f"got dtype {part.dtype}")
        out.append(part)
    if basic and Ellipsis not in out:
        # A trailing Ellipsis makes NumPy return a 0-d view, not a scalar copy.
        out.append(Ellipsis)
    return tuple(out), basic


def _mask_mismatch(index, shape):
    """For a normalized ``index`` of a tensor of ``shape``: the first boolean
    mask whose shape differs from the dims it indexes, as ``(mask, first dim)``;
    None when every mask fits."""
    def width(part):
        if part is None or part is Ellipsis:
            return 0
        if isinstance(part, np.ndarray) and part.dtype == np.bool_:
            return part.ndim
        return 1
    # The dims an Ellipsis stands for: those the other parts leave over.
    spanned = len(shape) - sum(width(part) for part in index)
    dim = 0
    for part in index:
        if part is Ellipsis:
            dim += max(spanned, 0)
            spanned = 0
            continue
        n = width(part)
        if n and isinstance(part, np.ndarray) and part.dtype == np.bool_:
            if part.shape != tuple(shape[dim:dim + n]):
                return part, dim
        dim += n
    return None


def index_error(opname, err, index, shape):
    """The IndexError of a failed ``tensor[index]`` (read or write): NumPy's
    reason and the tensor's shape, or for a boolean mask that does not fit,
    the mask's shape beside the tensor's (as PyTorch words it)."""
    shape = tuple(shape)
    mismatch = _mask_mismatch(index, shape)
    if mismatch is None:
        return IndexError(f"{opname}: {err} (tensor of shape {shape})")
    mask, dim = mismatch
    return IndexError(f"{opname}: the shape of the mask {mask.shape} at index {dim} does not "
                      f"match the shape of the indexed tensor {shape} at index {dim}: a mask "
                      f"must have the sizes {shape[dim:dim + mask.ndim]} of the dims it indexes")


@op("index", save=(), view=True, operators=("__getitem__",))
def getitem(input, index):
    """``input[index]``: NumPy indexing rules, as a differentiable op.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.arange(6.0).reshape(2, 3)
    >>> x[1, 1:]
    tensor([4., 5.], dtype=float32)
    >>> x[x > 3]
    tensor([4., 5.], dtype=float32)
    """
    idx, _ = normalize_index(index)
    try:
        return input[idx]
    except IndexError as err:
        raise index_error("index", err, idx, input.shape) from None


@getitem.vjp
def _(ctx, grad, input, index):
    return index_backward(grad, ctx.input_shape(0), index)


@op(save=())
def index_backward(grad, shape, index):
    """Zeros of ``shape`` with ``grad`` added at ``index`` (repeats accumulate).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.index import index_backward
    >>> index_backward(oxmera.ones(3), (2,), oxmera.tensor([0, 0, 1]))
    tensor([2., 1.], dtype=float32)
    """
    idx, basic = normalize_index(index)
    out = np.zeros(shape, dtype=grad.dtype)
    if basic:
        out[idx] = grad
    elif (len(idx) == 1 and isinstance(idx[0], np.ndarray) and idx[0].dtype.kind in "iu"
          and idx[0].size and out.ndim and out.dtype.kind in "fc"):
        _add_rows(out, idx[0], grad)
    else:
        np.add.at(out, idx, grad)
    return out


def _add_rows(out, rows, values):
    """``np.add.at(out, rows, values)`` for one integer array indexing dim 0 (an
    embedding's backward): a stable sort of the rows and one ``np.add.reduceat``,
    about 5x faster than ``np.add.at`` (each row's sum in a different order:
    the values may differ in the last bits)."""
    n, rest = out.shape[0], out.shape[1:]
    if rows.min() < -n or rows.max() >= n:
        np.add.at(out, rows, values)        # raises NumPy's IndexError
    values = np.broadcast_to(values, rows.shape + rest).reshape((rows.size,) + rest)
    rows = rows.ravel()
    rows = np.where(rows < 0, rows + n, rows)      # -1 and n - 1 are one row
    order = np.argsort(rows, kind="stable")
    ordered = rows[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    out[ordered[starts]] = np.add.reduceat(values[order], starts, axis=0)


@index_backward.vjp
def _(ctx, grad, grad_in, shape, index):
    return grad[index]


# -- index_select, gather, scatter, scatter_add, take_along_dim, masked_fill, nonzero ----------
#
# Index tensors hold int64 or int32 (as in PyTorch); a negative or too large
# index is an IndexError naming the op, the index and the size (PyTorch does
# not wrap negative indices in these ops, and neither does oxmera). The
# scatters add with np.add.at on flat positions into a C-contiguous result:
# on NumPy 2 that is as fast as np.bincount and keeps the dtype, while
# np.add.at with a tuple of index arrays is several times slower.

_INDEX_KINDS = (np.dtype(np.int64), np.dtype(np.int32))


def _index_array(index, opname, name="index"):
    """``index`` (Tensor, array or list) as an int64/int32 array; IndexError otherwise."""
    if isinstance(index, Tensor):
        array = index._data
    elif isinstance(index, np.ndarray):
        array = index
    else:
        array = np.asarray(index)
        if array.size == 0 and array.dtype.kind == "f":   # an empty list
            array = array.astype(np.int64)
    if array.dtype not in _INDEX_KINDS:
        raise IndexError(f"{opname}(): {name} must be an int64 or int32 tensor, got dtype "
                         f"{array.dtype}")
    return array


def _check_bounds(index, size, opname, dim):
    if index.size:
        low, high = index.min(), index.max()
        if low < 0 or high >= size:
            bad = int(low) if low < 0 else int(high)
            raise IndexError(f"{opname}(): index {bad} is out of bounds for dimension {dim} "
                             f"with size {size}")


def _as_vector(array):
    # Gathers and scatters treat a 0-d tensor as a 1-d one of size 1, as PyTorch does.
    return array.reshape(1) if array.ndim == 0 else array


def _dim_and_rank(input, index, dim, opname, src=None):
    """Check the ranks and extents of a gather/scatter; return the normalized dim.

    The arrays are the 1-d forms of 0-d ones (``_as_vector``). Outside
    ``dim``, ``index`` may be no larger than ``input``; a scatter's ``index``
    may be no larger than its ``src`` anywhere.
    """
    d = normalize_dim(dim, input.ndim, opname)
    if index.ndim != input.ndim or (src is not None and src.ndim != index.ndim):
        shapes = f"input {input.shape}, index {index.shape}"
        if src is not None:
            shapes += f", src {src.shape}"
        raise OpError(f"{opname}(): index must have as many dimensions as input"
                      f"{' and src' if src is not None else ''} ({shapes})")
    for k in range(input.ndim):
        if (k != d and index.shape[k] > input.shape[k]) or (
                src is not None and index.shape[k] > src.shape[k]):
            raise OpError(
                f"{opname}(): index {index.shape} must be no larger than input "
                f"{input.shape} apart from dimension {d}"
                f"{f' and no larger than src {src.shape}' if src is not None else ''}")
    return d


def _flat_positions(index, d, shape):
    """Flat positions in a C-contiguous array of ``shape`` that ``index`` (along ``d``) picks.

    Element ``i`` of ``index`` addresses ``(i_0, ..., index[i], ..., i_n)``.
    """
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    positions = index.astype(np.int64) * strides[d]
    for k, n in enumerate(index.shape):
        if k != d and strides[k]:
            grid = np.arange(n, dtype=np.int64) * strides[k]
            positions += grid.reshape((n,) + (1,) * (index.ndim - k - 1))
    return positions


def _leading(array, shape):
    """``array[:shape[0], :shape[1], ...]``: the part a smaller index covers."""
    if array.shape == tuple(shape):
        return array
    return array[tuple(slice(0, n) for n in shape)]


@op(save=(), method=True)
def index_select(input, dim, index):
    """The entries of ``input`` at positions ``index`` (a vector) along ``dim``.

    Repeated indices repeat entries; their gradients add up.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    >>> x.index_select(1, oxmera.tensor([2, 0, 2]))
    tensor([[3., 1., 3.],
            [6., 4., 6.]], dtype=float32)
    """
    idx = _index_array(index, "index_select")
    d = normalize_dim(dim, input.ndim, "index_select")
    if idx.ndim > 1:
        raise IndexError(f"index_select(): index must be a vector (0-d or 1-d), got shape "
                         f"{idx.shape}")
    if input.ndim == 0:
        if idx.size != 1:
            raise IndexError(f"index_select(): a 0-d input takes exactly one index, got "
                             f"{idx.size}")
        _check_bounds(idx, 1, "index_select", d)
        return input.copy()
    _check_bounds(idx, input.shape[d], "index_select", d)
    return np.take(input, idx.reshape(-1), axis=d)


@index_select.vjp
def _(ctx, grad, input, dim, index):
    shape = ctx.input_shape(0)
    if not shape:
        return grad
    d = normalize_dim(dim, len(shape), "index_select")
    idx = _index_array(index, "index_select").reshape((-1,) + (1,) * (len(shape) - d - 1))
    # scatter_add's gradient with respect to src is a gather with this
    # broadcast index, which is index_select(grad, dim, index) again.
    return _scatter_add(_zeros(shape, grad.dtype), grad, d, np.broadcast_to(idx, grad.shape))


def _zeros(shape, dtype):
    return _core._wrap(np.zeros(shape, dtype))


@op(save=(), method=True)
def gather(input, dim, index):
    """Pick along ``dim``: ``out[i][j][k] = input[i][index[i][j][k]][k]`` (for ``dim=1``).

    ``index`` has as many dimensions as ``input`` and is no larger outside
    ``dim``; the result has its shape. Repeated indices' gradients add up.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.gather(1, oxmera.tensor([[0, 0], [1, 0]]))
    tensor([[1., 1.],
            [4., 3.]], dtype=float32)
    """
    idx = _index_array(index, "gather")
    source, vector = _as_vector(input), _as_vector(idx)
    d = _dim_and_rank(source, vector, dim, "gather")
    _check_bounds(vector, source.shape[d], "gather", d)
    covered = _leading(source, tuple(source.shape[d] if k == d else n
                                     for k, n in enumerate(vector.shape)))
    return np.take_along_axis(covered, vector, axis=d).reshape(idx.shape)


@gather.vjp
def _(ctx, grad, input, dim, index):
    return _scatter_add(_zeros(ctx.input_shape(0), grad.dtype), grad, dim, index)


def _scatter(input, src, dim, index, opname, add):
    """The forward of scatter and scatter_add: a C-contiguous copy of ``input``
    with ``src`` (an array or a number) written or added at ``index`` along ``dim``."""
    idx = _index_array(index, opname)
    number = not isinstance(src, np.ndarray)
    if not number and src.dtype != input.dtype:
        raise TypeError(f"{opname}(): src must have the dtype of input, got {src.dtype} "
                        f"and {input.dtype}")
    target, vector = _as_vector(input), _as_vector(idx)
    d = _dim_and_rank(target, vector, dim, opname, None if number else _as_vector(src))
    _check_bounds(vector, target.shape[d], opname, d)
    out = np.array(target, order="C", copy=True)
    positions = _flat_positions(vector, d, out.shape).reshape(-1)
    if number:
        values = np.asarray(src).astype(input.dtype)      # PyTorch casts a number value
    else:
        values = _leading(_as_vector(src), vector.shape).reshape(-1)
    flat = out.reshape(-1)
    if add:
        np.add.at(flat, positions, values)
    else:
        flat[positions] = values
    return out.reshape(input.shape)


@op("scatter_add", inputs=2, save=())
def _scatter_add(input, src, dim, index):
    """The op behind :func:`scatter_add` (tensor inputs first: ``input``, ``src``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.index import _scatter_add
    >>> _scatter_add(oxmera.zeros(3), oxmera.ones(3), 0, oxmera.tensor([0, 2, 0]))
    tensor([2., 0., 1.], dtype=float32)
    """
    return _scatter(input, src, dim, index, "scatter_add", add=True)


@_scatter_add.vjp
def _(ctx, grad, input, src, dim, index):
    needs = ctx.needs_input_grad
    return (grad if needs[0] else None,
            _src_gradient(ctx, grad, dim, index) if needs[1] else None)


def _src_gradient(ctx, grad, dim, index):
    # Each used src entry gets the output gradient where it went; entries of a
    # src larger than index (outside it) were not used.
    picked = gather(grad, dim, index)
    src_shape = tuple(ctx.input_shape(1))
    if tuple(picked.shape) == src_shape:
        return picked
    return index_backward(picked, src_shape, tuple(slice(0, n) for n in picked.shape))


@op("scatter", inputs=2, save=())
def _scatter_op(input, src, dim, index):
    """The op behind :func:`scatter` (tensor inputs first; ``src`` may be a number).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.index import _scatter_op
    >>> _scatter_op(oxmera.zeros(3), 5.0, 0, oxmera.tensor([1]))
    tensor([0., 5., 0.], dtype=float32)
    """
    return _scatter(input, src, dim, index, "scatter", add=False)


@_scatter_op.vjp
def _(ctx, grad, input, src, dim, index):
    # Where an index repeats, only one src entry lands (which one is
    # unspecified, as in PyTorch); like PyTorch, each gets the gradient there.
    needs = ctx.needs_input_grad
    return (_scatter_op(grad, 0.0, dim, index) if needs[0] else None,
            _src_gradient(ctx, grad, dim, index) if needs[1] else None)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of ``input`` with ``src`` (a tensor, or the number ``value``) written at
    ``index`` along ``dim``: ``out[i][index[i][j]] = src[i][j]`` (for ``dim=1``).

    The out-of-place ``torch.scatter``. Where an index repeats, which write
    lands is unspecified. Gradients: zero for ``input`` where it was
    overwritten, ``grad`` gathered at ``index`` for ``src``. PyTorch's legacy
    ``reduce="add"`` / ``"multiply"`` combine instead of writing (as
    ``scatter_add`` and ``scatter_reduce(..., "prod")``, whose gradients they
    have; PyTorch has none for them).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 3)
    >>> x.scatter(1, oxmera.tensor([[2], [0]]), oxmera.tensor([[1.0], [2.0]]))
    tensor([[0., 0., 1.],
            [2., 0., 0.]], dtype=float32)
    >>> x.scatter(0, oxmera.tensor([[1, 1, 1]]), value=7.0)
    tensor([[0., 0., 0.],
            [7., 7., 7.]], dtype=float32)
    >>> oxmera.ones(3).scatter(0, oxmera.tensor([2, 2]), 3.0, reduce="multiply")
    tensor([1., 1., 9.], dtype=float32)
    """
    if (src is None) == (value is None):
        raise TypeError("scatter(): pass exactly one of src (a tensor or number) and value")
    src = src if value is None else value
    if reduce is None:
        return _scatter_op(input, src, dim, index)
    if reduce not in ("add", "multiply"):
        raise RuntimeError(f"scatter(): reduce argument must be either 'add' or 'multiply', "
                           f"got {reduce!r}")
    if reduce == "add":
        return _scatter_add(input, src, dim, index)
    from oxmera.ops.scatter import scatter_reduce
    if not isinstance(src, Tensor):
        # a number: one copy per index entry, in input's dtype (as PyTorch casts it)
        dtype = input.dtype if isinstance(input, Tensor) else np.asarray(input).dtype
        src = Tensor(np.full(_index_array(index, "scatter").shape, src, dtype=dtype))
    return scatter_reduce(input, dim, index, src, "prod")


def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeats add up):
    ``out[i][index[i][j]] += src[i][j]`` (for ``dim=1``).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(3)
    >>> oxmera.scatter_add(x, 0, oxmera.tensor([0, 2, 0]), oxmera.tensor([1.0, 2.0, 3.0]))
    tensor([4., 0., 2.], dtype=float32)
    """
    if isinstance(src, (bool, int, float)):
        raise TypeError(f"scatter_add(): src must be a tensor, got {type(src).__name__}")
    return _scatter_add(input, src, dim, index)


def take_along_dim(input, indices, dim=None):
    """Pick ``input`` at ``indices`` along ``dim``, broadcasting the other dims
    (``torch.take_along_dim``, NumPy's ``take_along_axis``); without ``dim``,
    both are flattened first.

    Composed from :func:`expand` and :func:`gather`.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> oxmera.take_along_dim(x, oxmera.tensor([[1], [0]]), dim=1)
    tensor([[30.],
            [60.]], dtype=float32)
    >>> oxmera.take_along_dim(x, oxmera.tensor([5, 0]))
    tensor([50., 10.], dtype=float32)
    """
    from oxmera.ops.shape import expand, reshape
    idx = _index_array(indices, "take_along_dim", "indices")
    shape = tuple(input.shape) if isinstance(input, Tensor) else np.shape(input)
    if dim is None:
        return gather(reshape(input, (-1,)), 0, idx.reshape(-1))
    if len(shape) != idx.ndim:
        raise OpError(f"take_along_dim(): input and indices must have the same number of "
                      f"dimensions, got shapes {shape} and {idx.shape}")
    d = normalize_dim(dim, len(shape), "take_along_dim")
    try:
        common = list(np.broadcast_shapes(tuple(1 if k == d else n for k, n in enumerate(shape)),
                                          tuple(1 if k == d else n
                                                for k, n in enumerate(idx.shape))))
    except ValueError:
        raise OpError(f"take_along_dim(): input {shape} and indices {idx.shape} do not "
                      f"broadcast outside dimension {d}") from None
    target = tuple(shape[d] if k == d else n for k, n in enumerate(common))
    if target != shape:
        input = expand(input, target)
    target = tuple(idx.shape[d] if k == d else n for k, n in enumerate(common))
    if target != idx.shape:
        idx = np.broadcast_to(idx, target)
    return gather(input, d, idx)


def masked_fill(input, mask, value):
    """``input`` with ``value`` where the boolean ``mask`` (broadcast) is True.

    ``value`` is a number or a 0-d tensor, converted to ``input``'s dtype;
    gradients reach ``input`` where the mask is False and a tensor ``value``
    from every filled position. Composed from :func:`~oxmera.where`.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0, 3.0])
    >>> x.masked_fill(x > 1.5, 0.0)
    tensor([1., 0., 0.], dtype=float32)
    """
    from oxmera.ops.elementwise import where
    mask_array = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if mask_array.dtype != np.bool_:
        raise TypeError(f"masked_fill(): mask must be a bool tensor, got dtype "
                        f"{mask_array.dtype}")
    dtype = input.dtype if isinstance(input, Tensor) else np.asarray(input).dtype
    shape = input.shape if isinstance(input, Tensor) else np.shape(input)
    try:
        np.broadcast_shapes(mask_array.shape, shape)
    except ValueError:
        raise OpError(f"masked_fill(): mask of shape {mask_array.shape} does not broadcast "
                      f"with input of shape {tuple(shape)}") from None
    if isinstance(value, Tensor):
        if value.ndim:
            raise OpError(f"masked_fill(): value must be a number or a 0-d tensor, got a "
                          f"tensor of shape {value.shape}")
        if value.dtype != dtype:
            value = value.to(dtype)
    elif isinstance(value, (bool, int, float, np.generic)):
        value = np.asarray(value).astype(dtype)[()].item()
    else:
        raise TypeError(f"masked_fill(): value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__}")
    return where(mask, value, input)


@op(differentiable=False, method=True)
def nonzero(input, *, as_tuple=False):
    """The indices of the non-zero elements: an int64 tensor of shape ``(n, ndim)``, or with
    ``as_tuple=True`` one 1-d tensor per dimension (a 0-d input counts as 1-d there).

    Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[0.0, 1.0], [2.0, 0.0]])
    >>> x.nonzero()
    tensor([[0, 1],
            [1, 0]], dtype=int64)
    >>> oxmera.nonzero(x, as_tuple=True)
    (tensor([0, 1], dtype=int64), tensor([1, 0], dtype=int64))
    """
    if as_tuple:
        return tuple(i.astype(np.int64, copy=False)
                     for i in np.nonzero(input.reshape(-1) if input.ndim == 0 else input))
    return np.argwhere(input).astype(np.int64, copy=False)


_registry.add_tensor_attribute("scatter", scatter)
_registry.add_tensor_attribute("scatter_add", scatter_add)
_registry.add_tensor_attribute("take_along_dim", take_along_dim)
_registry.add_tensor_attribute("masked_fill", masked_fill)
