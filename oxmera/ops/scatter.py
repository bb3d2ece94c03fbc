"""Index-driven writes and reads beyond ``index``: index_add, index_copy,
index_fill, index_put, masked_select, masked_scatter, scatter_reduce, take
and put (out of place, as ``torch.<name>`` and ``Tensor.<name>``).

Only ``scatter_reduce`` is a primitive here (its VJP depends on the
reduction); every other function is composed from the primitives of
``index`` (gather, scatter, scatter_add, indexing) and ``inplace``
(``index_put``, what ``t[index] = v`` records), which give its gradients.
The in-place forms (``index_add_``, ``put_``, ...) are generated elsewhere
from these.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import normalize_dim
from oxmera.ops.elementwise import logical_and, logical_not
from oxmera.ops.index import (_as_vector, _check_bounds, _dim_and_rank, _flat_positions,
                              _index_array, _leading, _scatter_add, _scatter_op, gather,
                              getitem, index_backward, index_error, masked_fill,
                              normalize_index)

__all__ = ["index_add", "index_copy", "index_fill", "index_put", "masked_select",
           "masked_scatter", "scatter_reduce", "take", "put"]

Tensor = _core.Tensor
OpError = _core.OpError


def _tensor(value, opname, name):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return _core._wrap(value)
    raise TypeError(f"{opname}(): {name} must be a Tensor, got {type(value).__name__}")


def _indices(index, opname, error=RuntimeError):
    """``index`` as an int64/int32 array; other dtypes raise ``error`` (PyTorch raises a
    RuntimeError in most of these ops, an IndexError in index_fill)."""
    try:
        return _index_array(index, opname)
    except IndexError as err:
        if error is IndexError:
            raise
        raise error(str(err)) from None


def _same_dtype(opname, input, source, name="source"):
    if input.dtype != source.dtype:
        raise RuntimeError(f"{opname}(): self ({input.dtype}) and {name} ({source.dtype}) must "
                           f"have the same dtype")


# -- index_add, index_copy, index_fill: a vector of indices along one dim ----------------------

def _along(opname, input, dim, index, source=None):
    """Check an ``index_*`` call on a tensor of at least one dim; return the dim and the
    index as a vector (or, given ``source``, broadcast to ``source``'s shape, the form
    gather and scatter take)."""
    idx = _indices(index, opname, IndexError if opname == "index_fill" else RuntimeError)
    if idx.ndim > 1:
        raise IndexError(f"{opname}(): index must be a vector (0-d or 1-d), got shape "
                         f"{idx.shape}")
    idx = idx.reshape(-1)
    shape = tuple(input.shape)
    d = normalize_dim(dim, len(shape), opname)
    _check_bounds(idx, shape[d], opname, d)
    if source is None:
        return d, idx
    expected = shape[:d] + (idx.size,) + shape[d + 1:]
    if tuple(source.shape) != expected:
        raise RuntimeError(f"{opname}(): source of shape {tuple(source.shape)} must have the "
                           f"shape of self {shape} apart from dimension {d}, where its size "
                           f"must be the number of indices {idx.size}")
    return d, np.broadcast_to(idx.reshape((-1,) + (1,) * (len(shape) - d - 1)), expected)


def _on_vectors(fn, input, dim, index, source, *args):
    # A 0-d input behaves as a 1-d one of one element (as in PyTorch): dim is 0 or -1.
    normalize_dim(dim, 0, fn.__name__)
    if source is not None and source.ndim == 0:
        source = source.reshape(1)
    return fn(input.reshape(1), 0, index, source, *args).reshape(())


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at positions ``index`` along ``dim``:
    ``out[..., index[i], ...] += alpha * source[..., i, ...]``; repeated indices add up.

    ``source`` has ``input``'s shape and dtype except along ``dim``, where its
    size is ``len(index)``. Composed from :func:`scatter_add`.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(3, 2)
    >>> src = oxmera.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> x.index_add(0, oxmera.tensor([0, 2, 0]), src, alpha=2)
    tensor([[12., 16.],
            [ 0.,  0.],
            [ 6.,  8.]], dtype=float32)
    """
    input, source = _tensor(input, "index_add", "input"), _tensor(source, "index_add", "source")
    if input.ndim == 0:
        return _on_vectors(_index_add, input, dim, index, source, alpha)
    return _index_add(input, dim, index, source, alpha)


def _index_add(input, dim, index, source, alpha):
    _same_dtype("index_add", input, source)
    d, idx = _along("index_add", input, dim, index, source)
    if alpha != 1:
        source = source * alpha
    return _scatter_add(input, source, d, idx)


def index_copy(input, dim, index, source):
    """A copy of ``input`` with ``source``'s slices written at positions ``index`` along
    ``dim``: ``out[..., index[i], ...] = source[..., i, ...]``.

    Where an index repeats, which slice lands is unspecified (as in
    PyTorch). Composed from :func:`scatter`.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 4)
    >>> x.index_copy(1, oxmera.tensor([3, 0]), oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[2., 0., 0., 1.],
            [4., 0., 0., 3.]], dtype=float32)
    """
    input = _tensor(input, "index_copy", "input")
    source = _tensor(source, "index_copy", "source")
    if input.ndim == 0:
        return _on_vectors(_index_copy, input, dim, index, source)
    return _index_copy(input, dim, index, source)


def _index_copy(input, dim, index, source):
    _same_dtype("index_copy", input, source)
    d, idx = _along("index_copy", input, dim, index, source)
    return _scatter_op(input, source, d, idx)


def index_fill(input, dim, index, value):
    """A copy of ``input`` with every slice at positions ``index`` along ``dim`` set to
    ``value`` (a number or a 0-d tensor, which then gets the gradient of those entries).

    Composed from :func:`masked_fill`.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.ones(2, 3)
    >>> x.index_fill(1, oxmera.tensor([0, 2]), -1.0)
    tensor([[-1.,  1., -1.],
            [-1.,  1., -1.]], dtype=float32)
    """
    input = _tensor(input, "index_fill", "input")
    if input.ndim == 0:
        return _on_vectors(_index_fill, input, dim, index, None, value)
    return _index_fill(input, dim, index, None, value)


def _index_fill(input, dim, index, source, value):
    d, idx = _along("index_fill", input, dim, index)
    selected = np.zeros(input.shape[d], dtype=bool)
    selected[idx] = True
    mask = selected.reshape((-1,) + (1,) * (input.ndim - d - 1))
    return masked_fill(input, Tensor(mask), value)


# -- index_put, put, take: advanced indexing -----------------------------------------------

def index_put(input, indices, values, accumulate=False):
    """A copy of ``input`` with ``values`` (broadcast) written at ``input[indices]``, or added
    there with ``accumulate=True`` (repeated indices then add up).

    ``indices`` is a tuple of integer or boolean tensors, one per leading dim
    indexed, as in ``input[indices] = values``. Differentiable with respect
    to ``input`` (zero where overwritten) and ``values``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 3)
    >>> rows, cols = oxmera.tensor([0, 1, 0]), oxmera.tensor([2, 0, 2])
    >>> x.index_put((rows, cols), oxmera.tensor([1.0, 2.0, 3.0]), accumulate=True)
    tensor([[0., 0., 4.],
            [2., 0., 0.]], dtype=float32)
    """
    from oxmera.ops import inplace
    input = _tensor(input, "index_put", "input")
    values = _tensor(values, "index_put", "values")
    if not isinstance(indices, (tuple, list)) or not all(
            isinstance(i, (Tensor, np.ndarray)) for i in indices):
        raise TypeError(f"index_put(): indices must be a tuple of Tensors, got "
                        f"{type(indices).__name__}")
    _same_dtype("index_put", input, values, "values")
    index = tuple(indices)
    idx, _ = normalize_index(index)
    try:
        # where the values go: the shape they must broadcast to (and the bounds check)
        target = np.broadcast_to(np.zeros((), bool), input.shape)[idx].shape
    except IndexError as err:
        raise index_error("index_put", err, idx, input.shape) from None
    try:
        np.broadcast_shapes(tuple(values.shape), target)
        if np.broadcast_shapes(tuple(values.shape), target) != target:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"index_put(): shape mismatch: values of shape {tuple(values.shape)} "
                           f"cannot be broadcast to the indexed shape {target} (input of "
                           f"shape {tuple(input.shape)})") from None
    if not accumulate:
        return inplace.index_put(input, values, index)
    if tuple(values.shape) != target:
        values = values.expand(target)
    return input + index_backward(values, tuple(input.shape), index)


def take(input, index):
    """``input`` read as a 1-d tensor at positions ``index``; the result has ``index``'s
    shape. Negative indices count from the end.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.take(oxmera.tensor([[3, 0], [-1, 1]]))
    tensor([[4., 1.],
            [4., 2.]], dtype=float32)
    """
    input = _tensor(input, "take", "input")
    idx = _flat_index("take", input, index)
    return getitem(input.reshape(-1), Tensor(idx))


def _flat_index(opname, input, index):
    idx = _indices(index, opname)
    n = input.numel()
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = int(idx.min()) if idx.min() < -n else int(idx.max())
        raise IndexError(f"{opname}(): index {bad} is out of range for a tensor of shape "
                         f"{tuple(input.shape)} with {n} elements")
    return idx


def put(input, index, source, accumulate=False):
    """A copy of ``input`` with ``source`` written (or, with ``accumulate=True``, added) at
    the positions ``index`` of ``input`` read as a 1-d tensor; negative indices count from
    the end. ``source`` has as many elements as ``index`` (an IndexError otherwise, as in
    PyTorch).

    The out-of-place form of ``Tensor.put_``. Composed from :func:`index_put`.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 2)
    >>> x.put(oxmera.tensor([3, -4, 3]), oxmera.tensor([1.0, 2.0, 3.0]), accumulate=True)
    tensor([[2., 0.],
            [0., 4.]], dtype=float32)
    """
    input = _tensor(input, "put", "input")
    source = _tensor(source, "put", "source")
    idx = _flat_index("put", input, index)
    if idx.size != source.numel():
        raise IndexError(f"put(): expected source and index to have the same number of "
                           f"elements, got source of shape {tuple(source.shape)} and index of "
                           f"shape {idx.shape}")
    _same_dtype("put", input, source)
    flat = index_put(input.reshape(-1), (Tensor(idx.reshape(-1)),), source.reshape(-1),
                     accumulate)
    return flat.reshape(tuple(input.shape))


# -- masks ----------------------------------------------------------------------------------

def _mask(opname, input, mask):
    """The boolean mask and ``input``, both broadcast to their common shape."""
    array = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if array.dtype != np.bool_:
        raise RuntimeError(f"{opname}(): expected a bool tensor for mask, got dtype "
                           f"{array.dtype}")
    try:
        shape = np.broadcast_shapes(array.shape, tuple(input.shape))
    except ValueError:
        raise RuntimeError(f"{opname}(): mask of shape {array.shape} does not broadcast with "
                           f"input of shape {tuple(input.shape)}") from None
    if shape != tuple(input.shape):
        input = input.expand(shape)
    return np.broadcast_to(array, shape), input


def masked_select(input, mask):
    """The elements of ``input`` where the boolean ``mask`` is True, as a 1-d tensor (the
    two broadcast first).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> x.masked_select(oxmera.tensor([True, False]))
    tensor([1., 3.], dtype=float32)
    """
    input = _tensor(input, "masked_select", "input")
    mask, input = _mask("masked_select", input, mask)
    return getitem(input, Tensor(mask))


def masked_scatter(input, mask, source):
    """A copy of ``input`` (broadcast with ``mask``) whose elements where ``mask`` is True
    are ``source``'s first elements, in row-major order.

    ``source`` needs at least as many elements as ``mask`` has True values.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 3)
    >>> mask = oxmera.tensor([[True, False, True], [False, True, False]])
    >>> x.masked_scatter(mask, oxmera.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([[1., 0., 2.],
            [0., 3., 0.]], dtype=float32)
    """
    from oxmera.ops import inplace
    input = _tensor(input, "masked_scatter", "input")
    source = _tensor(source, "masked_scatter", "source")
    _same_dtype("masked_scatter", input, source)
    mask, input = _mask("masked_scatter", input, mask)
    count = int(np.count_nonzero(mask))
    if source.numel() < count:
        raise RuntimeError(f"masked_scatter(): source of shape {tuple(source.shape)} has "
                           f"{source.numel()} elements, fewer than the {count} True values "
                           f"of the mask")
    values = source.reshape(-1)
    if values.shape[0] != count:
        values = values[:count]
    return inplace.index_put(input, values, (Tensor(mask),))


# -- scatter_reduce ------------------------------------------------------------------------

_REDUCTIONS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
               "amin": np.minimum}


def _identity(reduce, dtype):
    # What a position starts from when include_self=False: the reduction's neutral value.
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _scatter_plan(input, src, dim, index, opname):
    """Check a scatter_reduce call; return the flat positions each used src entry goes
    to, and the used src entries (flat), for C-contiguous arrays of ``input``'s shape."""
    idx = _indices(index, opname)
    if src.dtype != input.dtype:
        raise RuntimeError(f"{opname}(): self ({input.dtype}) and src ({src.dtype}) must have "
                           f"the same dtype")
    target, vector = _as_vector(input), _as_vector(idx)
    d = _dim_and_rank(target, vector, dim, opname, _as_vector(src))
    try:
        _check_bounds(vector, target.shape[d], opname, d)
    except IndexError as err:
        raise RuntimeError(str(err)) from None      # PyTorch's type for a scatter
    positions = _flat_positions(vector, d, target.shape).reshape(-1)
    return positions, _leading(_as_vector(src), vector.shape).reshape(-1)


def _counts(positions, shape):
    """How many src entries land on each position of a tensor of ``shape`` (an int64 array)."""
    counts = np.zeros(int(np.prod(shape, dtype=np.int64)), np.int64)
    np.add.at(counts, positions, 1)
    return counts.reshape(shape)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy of ``input`` where each ``src`` entry is reduced into the position ``index``
    sends it to along ``dim`` (``out[i][index[i][j]] ⊕= src[i][j]`` for ``dim=1``).

    ``reduce`` is ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``;
    with ``include_self=False`` the positions that receive entries forget
    ``input``'s value there. Differentiable for every reduction: ``amax`` and
    ``amin`` split the gradient evenly among ties, as PyTorch does; ``prod``'s
    gradient is exact where zeros are (its second derivative is zero at
    points with two or more zeros in one product).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0, 3.0])
    >>> src = oxmera.tensor([5.0, 1.0, 7.0, 2.0])
    >>> x.scatter_reduce(0, oxmera.tensor([0, 0, 2, 2]), src, "amax")
    tensor([5., 2., 7.], dtype=float32)
    >>> x.scatter_reduce(0, oxmera.tensor([0, 0, 2, 2]), src, "mean", include_self=False)
    tensor([3. , 2. , 4.5], dtype=float32)
    """
    if not isinstance(src, (Tensor, np.ndarray)):
        raise TypeError(f"scatter_reduce(): src must be a Tensor, got {type(src).__name__}")
    return _scatter_reduce(input, src, dim, index, reduce, include_self=include_self)


@op("scatter_reduce", inputs=2, save_output=True)
def _scatter_reduce(input, src, dim, index, reduce, *, include_self=True):
    """The op behind :func:`scatter_reduce` (tensor inputs first: ``input``, ``src``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.scatter import _scatter_reduce
    >>> _scatter_reduce(oxmera.ones(2), oxmera.tensor([3.0, 4.0]), 0, oxmera.tensor([1, 1]),
    ...                 "prod")
    tensor([ 1., 12.], dtype=float32)
    """
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"scatter_reduce(): reduce must be one of 'sum', 'prod', 'mean', "
                           f"'amax', 'amin', got {reduce!r}")
    positions, values = _scatter_plan(input, src, dim, index, "scatter_reduce")
    out = np.array(input, order="C", copy=True)
    flat = out.reshape(-1)
    if not include_self:
        flat[positions] = _identity(reduce, input.dtype)
    _REDUCTIONS[reduce].at(flat, positions, values)
    if reduce == "mean":
        counts = _counts(positions, out.shape).reshape(-1) + bool(include_self)
        counts[counts == 0] = 1
        if out.dtype.kind == "f":
            flat /= counts
        else:
            flat //= counts                   # PyTorch floors an integer mean
    return out


@_scatter_reduce.vjp
def _(ctx, grad, input, src, dim, index, reduce, *, include_self=True):
    shape, src_shape = tuple(input.shape), tuple(src.shape)
    idx = _index_array(index, "scatter_reduce")
    d = normalize_dim(dim, max(len(shape), 1), "scatter_reduce")
    positions = _flat_positions(_as_vector(idx), d, shape or (1,))
    received = _counts(positions.reshape(-1), shape)
    # entries of input that take part in the result
    kept = None if include_self else Tensor(received == 0)
    # the src entries index reaches (src may be larger than index)
    used_src = src if src_shape == idx.shape or not idx.ndim else getitem(
        src, tuple(slice(0, n) for n in idx.shape))

    def to_input(g):
        return g if kept is None else g * kept.to(g.dtype)

    def to_src(g):
        # gradient of the used src entries, zero for those outside index
        if tuple(g.shape) == src_shape:
            return g
        return index_backward(g, src_shape, tuple(slice(0, n) for n in g.shape))

    needs = ctx.needs_input_grad
    if reduce in ("sum", "mean"):
        if reduce == "mean":
            counts = received + bool(include_self)
            counts[counts == 0] = 1
            grad = grad / Tensor(counts.astype(grad.dtype))
        return (to_input(grad) if needs[0] else None,
                to_src(gather(grad, d, idx)) if needs[1] else None)
    if reduce in ("amax", "amin"):
        out = ctx.output
        input_ties = input == out
        if kept is not None:
            input_ties = logical_and(input_ties, kept)
        src_ties = used_src == gather(out, d, idx)
        ties = _scatter_add(input_ties.to(grad.dtype), src_ties.to(grad.dtype), d, idx)
        share = grad / ties.clamp(min=1)
        return (share * input_ties.to(grad.dtype) if needs[0] else None,
                to_src(gather(share, d, idx) * src_ties.to(grad.dtype)) if needs[1] else None)
    # prod: the derivative of a product with respect to one factor is the product of the
    # others, found without dividing by zero: the product of the non-zero factors, and how
    # many factors are zero.
    zero_input, zero_src = input == 0, used_src == 0
    if kept is not None:
        zero_input = logical_and(zero_input, kept)
    zeros = _scatter_add(zero_input.to(grad.dtype), zero_src.to(grad.dtype), d, idx)
    safe_input = input.masked_fill(input == 0, 1)
    safe_src = used_src.masked_fill(zero_src, 1)
    nonzero_product = _scatter_reduce(safe_input, safe_src, d, idx, "prod",
                                     include_self=include_self)

    def others(factor_is_zero, safe_factor, product, zero_count):
        # a zero factor: the product of the others if it is the only zero, else 0;
        # a non-zero factor: product / factor if there is no zero, else 0
        dtype = product.dtype
        lone_zero = logical_and(factor_is_zero, zero_count == 1).to(dtype)
        no_zero = logical_and(logical_not(factor_is_zero), zero_count == 0).to(dtype)
        return product * lone_zero + product / safe_factor * no_zero

    grad_input = grad_src = None
    if needs[0]:
        grad_input = to_input(grad * others(zero_input, safe_input, nonzero_product, zeros))
    if needs[1]:
        grad_src = to_src(gather(grad, d, idx) * others(
            zero_src, safe_src, gather(nonzero_product, d, idx), gather(zeros, d, idx)))
    return grad_input, grad_src


for _name in ("index_add", "index_copy", "index_fill", "index_put", "masked_select",
              "masked_scatter", "scatter_reduce", "take", "put"):
    _registry.add_tensor_attribute(_name, globals()[_name])
