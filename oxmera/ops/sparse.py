"""Sparse tensors as graph networks use them: COO (and CSR) matrices times dense ones.

A sparse tensor is a :class:`SparseTensor`, not a :class:`~oxmera.Tensor`: it
holds an int64 index Tensor ``(sparse_dim, nnz)`` and a values Tensor
``(nnz, *dense_shape)`` (which carries the autograd graph: a sparse tensor is
differentiable with respect to its values), its size and whether it is
coalesced. The dense core never sees one: every op of the core that meets a
sparse operand hands the call to ``SparseTensor.__oxmera_function__``, which
runs the few ops defined on sparse tensors (``matmul`` and what is composed
of it: ``mm``, ``addmm``, ``@``; ``add``/``sub`` of a dense and a sparse
tensor) and refuses every other one by name (NotImplementedError, as
PyTorch's "Could not run ... from the 'SparseCPU' backend").

The one primitive is :func:`sparse_dense_mm` (sparse matrix times dense
matrix or vector), whose forward is ``scipy.sparse`` (an optional dependency,
imported at the first product: ``pip install oxmera[scipy]``) and whose VJP
is written with oxmera ops (the values' gradient gathers rows of the output
gradient and of the dense operand, the dense operand's gradient is the same
op on the transposed pattern), so second order works. Conversions
(``to_dense``, ``coalesce``, ``to_sparse``) and ``oxmera.sparse.sum`` /
``softmax`` / ``log_softmax`` are composed of index ops (``index_add``,
indexing), so they are differentiable with respect to the values too.

Gradients: a sparse tensor made with ``requires_grad=True`` is a leaf whose
``.grad`` is a sparse tensor with its own pattern (PyTorch's ``torch.mm``
gives such a leaf a dense gradient; ``torch.sparse.mm`` gives this one).
"""
import numbers

import numpy as np

from oxmera._core import autograd as _core
from oxmera._layout import sparse_coo, sparse_csr, strided
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops.creation import tensor, zeros

__all__ = ["SparseTensor", "sparse_coo_tensor", "sparse_csr_tensor", "spmm", "smm"]

Tensor = _core.Tensor
Size = _core.Size
_wrap = _core._wrap

# What a sparse tensor supports, for the messages of what it does not.
_SUPPORTED = ("matmul/mm/addmm/@ with a dense operand, add/sub with a dense tensor, to_dense, "
              "coalesce, indices, values, sum, t, mul/div by a number, detach, to, "
              "oxmera.sparse.mm/sum/softmax/log_softmax")


def _scipy_sparse(opname):
    """``scipy.sparse``, imported now, or the ImportError that says how to get it."""
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError(f"{opname}() on a sparse tensor needs SciPy, an optional dependency "
                          f"of oxmera: pip install oxmera[scipy]") from None
    return scipy.sparse


def _unsupported(name, layout=sparse_coo):
    return NotImplementedError(
        f"{name}(): not supported for sparse tensors (layout={layout!r}); a sparse tensor "
        f"supports {_SUPPORTED}: call .to_dense() first for anything else")


# -- the primitive: sparse matrix @ dense matrix or vector ----------------------------------

@op(inputs=2, promote=True, save={"values": ("dense",), "dense": ("values",)})
def sparse_dense_mm(values, dense, rows, cols, shape):
    """``S @ dense`` for the sparse matrix ``S`` of ``shape`` holding ``values`` at
    (``rows``, ``cols``) (NumPy int64 vectors; repeated positions add up), and a dense
    matrix or vector ``dense`` with ``shape[1]`` rows. The primitive behind every
    sparse product; its forward is ``scipy.sparse``.

    Examples
    --------
    >>> import numpy as np
    >>> import oxmera
    >>> from oxmera.ops.sparse import sparse_dense_mm
    >>> rows, cols = np.array([0, 1]), np.array([1, 0])
    >>> sparse_dense_mm(oxmera.tensor([2.0, 3.0]), oxmera.tensor([1.0, 10.0]), rows, cols,
    ...                 (2, 2))
    tensor([20.,  3.], dtype=float32)
    """
    if dense.ndim not in (1, 2) or dense.shape[0] != shape[1]:
        raise ValueError(f"sparse matrix of size {tuple(shape)} cannot multiply a dense "
                         f"operand of shape {dense.shape}")
    dtype = np.result_type(values, dense)
    # SciPy's sparse products have no float16 kernels: work in float32, as a float16
    # matmul accumulates in float32 anyway.
    work = np.float32 if dtype == np.float16 else dtype
    matrix = _scipy_sparse("sparse_dense_mm").csr_matrix(
        (values.astype(work, copy=False), (rows, cols)), shape=tuple(shape))
    return np.asarray(matrix @ dense.astype(work, copy=False)).astype(dtype, copy=False)


@sparse_dense_mm.vjp
def _(ctx, grad, values, dense, rows, cols, shape):
    needs = ctx.needs_input_grad
    grad_values = grad_dense = None
    if needs[0]:
        # d(out[r]) / d(value k) = dense[cols[k]] for r = rows[k]: gather and contract.
        picked = grad[_wrap(rows)] * dense[_wrap(cols)]
        grad_values = picked.sum(-1) if picked.ndim == 2 else picked
    if needs[1]:
        grad_dense = sparse_dense_mm(values, grad, cols, rows, (shape[1], shape[0]))
    return grad_values, grad_dense


# -- the sparse tensor --------------------------------------------------------------------

def _index_array(indices, where):
    array = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if array.dtype.kind not in "iu" and not (array.dtype.kind == "f" and array.size == 0):
        raise RuntimeError(f"{where}: indices must be an integer tensor, got {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.int64)


def _values_tensor(values, dtype):
    if isinstance(values, Tensor):
        return values if dtype is None or values.dtype == dtype else values.to(dtype)
    return tensor(values, dtype=dtype)


class SparseTensor:
    """A sparse tensor (PyTorch's ``layout=torch.sparse_coo`` / ``sparse_csr`` tensors).

    Made by :func:`oxmera.sparse_coo_tensor`, :func:`oxmera.sparse_csr_tensor` or
    ``Tensor.to_sparse()``, never directly. It multiplies dense tensors (``@``,
    ``mm``, ``matmul``, ``addmm``, ``oxmera.sparse.mm``), converts
    (``to_dense``, ``coalesce``), and answers PyTorch's queries (``is_sparse``,
    ``layout``, ``indices()``, ``values()``, ``_nnz()``, ``sparse_dim()``...);
    any other op on it raises NotImplementedError naming the op. It is not an
    instance of :class:`~oxmera.Tensor`.

    Examples
    --------
    >>> import oxmera
    >>> s = oxmera.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> s.is_sparse, s.layout, s._nnz()
    (True, oxmera.sparse_coo, 2)
    >>> s @ oxmera.ones(2, 1)
    tensor([[2.],
            [3.]], dtype=float32)
    """

    __slots__ = ("_index", "_vals", "_size", "_coalesced", "_layout", "__weakref__")

    def __init__(self, indices, values, size, coalesced, layout=sparse_coo):
        # indices: int64 Tensor (sparse_dim, nnz); values: Tensor (nnz, *dense shape).
        self._index = indices
        self._vals = values
        self._size = Size(size)
        self._coalesced = bool(coalesced)
        self._layout = layout

    def _like(self, values=None, indices=None, size=None, coalesced=None):
        """A sparse tensor sharing what is not given with this one (layout: COO unless
        the pattern is kept)."""
        keep = indices is None and size is None
        return SparseTensor(self._index if indices is None else indices,
                            self._vals if values is None else values,
                            self._size if size is None else size,
                            self._coalesced if coalesced is None else coalesced,
                            self._layout if keep else sparse_coo)

    # -- dispatch from the core: an op of the core met a sparse operand --

    @classmethod
    def __oxmera_function__(cls, opdef, args, kwargs):
        name = opdef.name
        kwargs = kwargs or {}
        if name == "matmul" and len(args) == 2 and not kwargs:
            return _matmul(*args)
        if name in ("add", "sub") and len(args) == 2 and isinstance(args[0], Tensor):
            # dense + sparse is dense, as in PyTorch (sparse + dense is refused there).
            return opdef.public(args[0], args[1].to_dense(), **kwargs)
        layout = next((a._layout for a in args if isinstance(a, SparseTensor)), sparse_coo)
        raise _unsupported(name, layout)

    def __getattr__(self, name):
        # Called only for names this class lacks: a Tensor method is refused by name.
        if not name.startswith("__") and hasattr(Tensor, name):
            raise _unsupported(name, self._layout)
        raise AttributeError(f"'SparseTensor' object has no attribute {name!r}")

    # -- queries --

    @property
    def shape(self):
        """The size, as ``oxmera.Size``."""
        return self._size

    def size(self, dim=None):
        """The size, or its entry ``dim``."""
        return self._size if dim is None else self._size[dim]

    def dim(self):
        """The number of dimensions (sparse and dense)."""
        return len(self._size)

    @property
    def ndim(self):
        """The number of dimensions (sparse and dense)."""
        return len(self._size)

    def numel(self):
        """The number of elements of the dense equivalent."""
        return int(np.prod(self._size, dtype=np.int64))

    def __len__(self):
        return self._size[0]

    @property
    def dtype(self):
        """The values' dtype."""
        return self._vals.dtype

    @property
    def device(self):
        """The CPU, as every oxmera tensor's."""
        return self._vals.device

    @property
    def layout(self):
        """``oxmera.sparse_coo`` or ``oxmera.sparse_csr``."""
        return self._layout

    @property
    def is_sparse(self):
        """True for COO tensors (as PyTorch, False for CSR ones)."""
        return self._layout is sparse_coo

    @property
    def is_sparse_csr(self):
        """True for CSR tensors."""
        return self._layout is sparse_csr

    is_cuda = False
    is_quantized = False
    is_meta = False

    def is_floating_point(self):
        """Whether the values are floating point."""
        return self._vals.is_floating_point()

    def sparse_dim(self):
        """The number of sparse dimensions (rows of ``indices``)."""
        return self._index.shape[0]

    def dense_dim(self):
        """The number of dense dimensions (of each value)."""
        return self._vals.ndim - 1

    def _nnz(self):
        """The number of stored entries (duplicates counted)."""
        return self._vals.shape[0]

    def is_coalesced(self):
        """Whether the indices are sorted and unique (``coalesce()`` makes them so)."""
        return self._coalesced

    def _indices(self):
        """The indices ``(sparse_dim, nnz)``, coalesced or not."""
        return self._index

    def _values(self):
        """The values ``(nnz, *dense shape)``, coalesced or not (in the graph)."""
        return self._vals

    def indices(self):
        """The indices of a coalesced tensor (RuntimeError otherwise, as in PyTorch)."""
        if self._layout is not sparse_coo:
            raise _unsupported("indices", self._layout)
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._index

    def values(self):
        """The values of a coalesced tensor (RuntimeError otherwise, as in PyTorch)."""
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._vals

    def crow_indices(self):
        """The compressed row pointers of a CSR tensor (``n_rows + 1``)."""
        if self._layout is not sparse_csr:
            raise RuntimeError(f"crow_indices(): expected a CSR tensor, got layout "
                               f"{self._layout!r}")
        counts = np.bincount(self._index._data[0], minlength=self._size[0])
        return _wrap(np.concatenate([[0], np.cumsum(counts)]).astype(np.int64))

    def col_indices(self):
        """The column of each value of a CSR tensor."""
        if self._layout is not sparse_csr:
            raise RuntimeError(f"col_indices(): expected a CSR tensor, got layout "
                               f"{self._layout!r}")
        return self._index[1]

    # -- autograd: the values carry the graph --

    @property
    def requires_grad(self):
        """Whether the values require grad."""
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self._vals.requires_grad = value

    def requires_grad_(self, requires_grad=True):
        """Make the values (a leaf) require grad; returns self."""
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        """Whether the values are a leaf of the graph."""
        return self._vals.is_leaf

    @property
    def grad_fn(self):
        """The node that made the values (None for a leaf)."""
        return self._vals.grad_fn

    @property
    def grad(self):
        """The gradient of a leaf (or None): a coalesced sparse tensor on this one's
        positions, as ``torch.sparse.mm`` gives.

        It is the gradient with respect to the dense equivalent at the stored
        positions: entries stored twice each got that same gradient, which
        is given once (adding them up would double it).
        """
        grad = self._vals.grad
        if grad is None:
            return None
        if self._coalesced:
            return self._like(values=grad)
        sparse_shape = self._size[:self.sparse_dim()]
        flat = np.ravel_multi_index(tuple(self._index._data), sparse_shape)
        unique, first = np.unique(flat, return_index=True)
        indices = np.stack(np.unravel_index(unique, sparse_shape)).astype(np.int64)
        return SparseTensor(_wrap(indices.reshape(len(sparse_shape), -1)),
                            grad[_wrap(first.astype(np.int64))], self._size, True, self._layout)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise RuntimeError("sparse tensor .grad can only be set to None")
        self._vals.grad = None

    def detach(self):
        """The same pattern with values out of the graph."""
        return self._like(values=self._vals.detach())

    def clone(self):
        """A copy (values cloned, in the graph)."""
        return self._like(values=self._vals.clone())

    # -- conversions --

    def to_dense(self, dtype=None, *, masked_grad=None):
        """The dense tensor (repeated entries add up); differentiable w.r.t. the values.

        Examples
        --------
        >>> import oxmera
        >>> oxmera.sparse_coo_tensor([[0, 0], [1, 1]], [1.0, 2.0], (1, 2)).to_dense()
        tensor([[0., 3.]], dtype=float32)
        """
        values = self._vals if dtype is None else self._vals.to(dtype)
        sparse_shape = self._size[:self.sparse_dim()]
        flat = np.ravel_multi_index(tuple(self._index._data), sparse_shape)
        base = zeros((int(np.prod(sparse_shape, dtype=np.int64)),) + tuple(values.shape[1:]),
                     dtype=values.dtype)
        return base.index_add(0, _wrap(flat), values).reshape(self._size)

    def coalesce(self):
        """Sorted, unique indices; repeated entries' values added (differentiable).

        Examples
        --------
        >>> import oxmera
        >>> s = oxmera.sparse_coo_tensor([[1, 0, 1]], [1.0, 2.0, 3.0], (2,)).coalesce()
        >>> s.indices(), s.values()
        (tensor([[0, 1]], dtype=int64), tensor([2., 4.], dtype=float32))
        """
        if self._coalesced:
            return self
        sparse_shape = self._size[:self.sparse_dim()]
        flat = np.ravel_multi_index(tuple(self._index._data), sparse_shape)
        unique, inverse = np.unique(flat, return_inverse=True)
        base = zeros((len(unique),) + tuple(self._vals.shape[1:]), dtype=self._vals.dtype)
        values = base.index_add(0, _wrap(inverse.reshape(-1)), self._vals)
        indices = np.stack(np.unravel_index(unique, sparse_shape)).astype(np.int64)
        return SparseTensor(_wrap(indices.reshape(len(sparse_shape), -1)), values, self._size,
                            True, self._layout)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """This tensor in ``layout`` (COO by default, or CSR)."""
        if layout is None or layout is sparse_coo:
            return self if self._layout is sparse_coo else self._like(
                indices=self._index, size=self._size)
        if layout is sparse_csr:
            return self.to_sparse_csr()
        raise _unsupported(f"to_sparse(layout={layout!r})", self._layout)

    def to_sparse_coo(self):
        """This tensor as COO."""
        return self.to_sparse()

    def to_sparse_csr(self, dense_dim=None):
        """This 2-D tensor as CSR (coalesced: rows sorted, entries unique)."""
        if self.sparse_dim() != 2 or self.dense_dim() != 0:
            raise RuntimeError(f"to_sparse_csr(): expected a 2-D sparse tensor without dense "
                               f"dimensions, got size {tuple(self._size)} with "
                               f"{self.dense_dim()} dense dimension(s)")
        coalesced = self.coalesce()
        return SparseTensor(coalesced._index, coalesced._vals, self._size, True, sparse_csr)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def numpy(self, *, force=False):
        """Refused, as in PyTorch: ``to_dense().numpy()``."""
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def to(self, *args, **kwargs):
        """The values converted (dtype; the CPU is the only device), the pattern kept."""
        values = self._vals.to(*args, **kwargs)
        return self if values is self._vals else self._like(values=values)

    def type(self, dtype):
        """The values converted to ``dtype``."""
        return self._like(values=self._vals.to(dtype))

    def cpu(self):
        """Self: oxmera tensors live on the CPU."""
        return self

    def cuda(self, *args, **kwargs):
        """Refused as every tensor's (no accelerator)."""
        return self._like(values=self._vals.cuda(*args, **kwargs))

    def float(self):
        """Values as float32."""
        return self.to(np.float32)

    def double(self):
        """Values as float64."""
        return self.to(np.float64)

    def half(self):
        """Values as float16."""
        return self.to(np.float16)

    def long(self):
        """Values as int64."""
        return self.to(np.int64)

    def int(self):
        """Values as int32."""
        return self.to(np.int32)

    def bool(self):
        """Values as bool."""
        return self.to(np.bool_)

    # -- arithmetic defined on the pattern --

    def t(self):
        """The transpose of a 2-D sparse matrix."""
        if self.sparse_dim() != 2:
            raise RuntimeError(f"t() expects a tensor with 2 sparse dimensions, but got "
                               f"{self.sparse_dim()}")
        return self.transpose(0, 1)

    @property
    def T(self):
        """The transpose (2-D)."""
        return self.t()

    def transpose(self, dim0, dim1):
        """Two sparse dimensions swapped (the result is not coalesced)."""
        n = self.sparse_dim()
        d0, d1 = (d + self.ndim if d < 0 else d for d in (dim0, dim1))
        if not (0 <= d0 < n and 0 <= d1 < n):
            raise _unsupported(f"transpose({dim0}, {dim1}) of a dense dimension", self._layout)
        order = list(range(n))
        order[d0], order[d1] = order[d1], order[d0]
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        return SparseTensor(_wrap(self._index._data[order]), self._vals, size, False)

    def _scaled(self, name, other, scale):
        if isinstance(other, numbers.Number) or (isinstance(other, Tensor) and other.ndim == 0):
            return self._like(values=scale(self._vals, other))
        raise _unsupported(f"{name} by a {type(other).__name__} that is not a number",
                           self._layout)

    def mul(self, other):
        """Values times a number (or a 0-d tensor)."""
        return self._scaled("mul", other, lambda v, o: v * o)

    def div(self, other):
        """Values divided by a number (or a 0-d tensor)."""
        return self._scaled("div", other, lambda v, o: v / o)

    __mul__ = __rmul__ = mul
    __truediv__ = div

    def __neg__(self):
        return self._like(values=-self._vals)

    def add(self, other, *, alpha=1):
        """``self + alpha * other`` for a sparse ``other`` of the same size (uncoalesced)."""
        if not isinstance(other, SparseTensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        if other._size != self._size or other.sparse_dim() != self.sparse_dim():
            raise RuntimeError(f"add(): sparse tensors of sizes {tuple(self._size)} and "
                               f"{tuple(other._size)} (sparse dims {self.sparse_dim()} and "
                               f"{other.sparse_dim()}) cannot be added")
        values = other._vals if alpha == 1 else other._vals * alpha
        return SparseTensor(_wrap(np.concatenate([self._index._data, other._index._data], 1)),
                            _core_cat(self._vals, values), self._size, False)

    def sub(self, other, *, alpha=1):
        """``self - alpha * other`` for a sparse ``other`` of the same size."""
        return self.add(other, alpha=-alpha)

    __add__ = add
    __sub__ = sub

    def sum(self, dim=None, keepdim=False, dtype=None):
        """``oxmera.sparse.sum`` (dense for a full sum)."""
        if keepdim:
            raise _unsupported("sum(keepdim=True)", self._layout)
        from oxmera.sparse import sum as sparse_sum
        return sparse_sum(self, dim, dtype=dtype)

    def matmul(self, other):
        """``self @ other`` with a dense ``other``."""
        return _matmul(self, other)

    mm = matmul

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def __repr__(self):
        def block(label, value):
            lines = repr(value).split("\n")
            pad = " " * (len(label) + 7)
            return "\n".join([lines[0]] + [pad + line for line in lines[1:]])
        if self._layout is sparse_csr:
            parts = [block("crow_indices=", self.crow_indices()),
                     block("col_indices=", self.col_indices())]
            names = ["crow_indices=", "col_indices="]
        else:
            parts, names = [block("indices=", self._index)], ["indices="]
        parts.append(block("values=", self._vals.detach()))
        names.append("values=")
        head = ",\n       ".join(n + p for n, p in zip(names, parts))
        tail = (f"size={tuple(self._size)}, nnz={self._nnz()}, layout={self._layout!r}")
        if self._vals.grad_fn is not None:
            tail += f", grad_fn=<{self._vals.grad_fn.name}>"
        elif self._vals.requires_grad:
            tail += ", requires_grad=True"
        return f"tensor({head},\n       {tail})"


def _core_cat(a, b):
    from oxmera.ops.shape import cat
    return cat([a, b], 0)


def _matrix(sparse, opname):
    if sparse.sparse_dim() != 2 or sparse.dense_dim() != 0:
        raise RuntimeError(f"{opname}(): the sparse operand must be a 2-D matrix without "
                           f"dense dimensions, got size {tuple(sparse.shape)} with "
                           f"{sparse.dense_dim()} dense dimension(s)")
    return sparse._index._data


def _matmul(left, right, opname="matmul"):
    """``left @ right`` with one sparse operand, a 2-D matrix; the other dense, 1-D or 2-D."""
    if isinstance(left, SparseTensor) and isinstance(right, SparseTensor):
        raise _unsupported(f"{opname} of two sparse tensors", left._layout)
    if isinstance(left, SparseTensor):
        index = _matrix(left, opname)
        dense = right if isinstance(right, Tensor) else tensor(right)
        if dense.ndim not in (1, 2) or dense.shape[0] != left.shape[1]:
            raise RuntimeError(f"{opname}(): sparse matrix of size {tuple(left.shape)} and "
                               f"dense operand of shape {tuple(dense.shape)} cannot be "
                               f"multiplied")
        return sparse_dense_mm(left._vals, dense, index[0], index[1], tuple(left.shape))
    # dense @ S = (S^T @ dense^T)^T
    index = _matrix(right, opname)
    dense = left if isinstance(left, Tensor) else tensor(left)
    if dense.ndim not in (1, 2) or dense.shape[-1] != right.shape[0]:
        raise RuntimeError(f"{opname}(): dense operand of shape {tuple(dense.shape)} and "
                           f"sparse matrix of size {tuple(right.shape)} cannot be multiplied")
    transposed = (right.shape[1], right.shape[0])
    product = sparse_dense_mm(right._vals, dense.mT if dense.ndim == 2 else dense, index[1],
                              index[0], transposed)
    return product.mT if dense.ndim == 2 else product


# -- construction ----------------------------------------------------------------------------

def _finish(where, index, values, size, coalesced, requires_grad, layout=sparse_coo):
    if index.ndim != 2:
        raise RuntimeError(f"{where}: indices must be a 2-D tensor (sparse_dim, nnz), got "
                           f"shape {index.shape}")
    if values.ndim == 0:
        raise RuntimeError(f"{where}: values must have at least one dimension (nnz, ...), "
                           f"got a 0-d tensor")
    sparse_dim, nnz = index.shape
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0]}")
    if sparse_dim == 0:
        raise RuntimeError(f"{where}: at least one sparse dimension is needed")
    dense_shape = tuple(values.shape[1:])
    if size is None:
        if nnz == 0:
            raise RuntimeError(f"{where}: cannot infer the size of a sparse tensor without "
                               f"entries; give size")
        size = tuple(int(m) + 1 for m in index.max(1)) + dense_shape
    size = tuple(int(s) for s in size)
    if len(size) != sparse_dim + len(dense_shape):
        raise RuntimeError(f"{where}: number of dimensions must be sparse_dim ({sparse_dim}) + "
                           f"dense_dim ({len(dense_shape)}), but got {len(size)}")
    if size[sparse_dim:] != dense_shape:
        raise RuntimeError(f"{where}: values have dense shape {dense_shape}, but size "
                           f"{size} asks for {size[sparse_dim:]}")
    if nnz:
        low, high = index.min(1), index.max(1)
        for d in range(sparse_dim):
            if low[d] < 0 or high[d] >= size[d]:
                bad = low[d] if low[d] < 0 else high[d]
                raise RuntimeError(f"{where}: size is inconsistent with indices: for dim {d}, "
                                   f"size is {size[d]} but found index {bad}")
    if requires_grad:
        values = values.detach().requires_grad_()
    if coalesced is None:
        flat = np.ravel_multi_index(tuple(index), size[:sparse_dim]) if nnz else index[0]
        coalesced = bool(np.all(np.diff(flat) > 0))
    return SparseTensor(_wrap(index), values, size, coalesced, layout)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor with ``values[k]`` at ``indices[:, k]`` (PyTorch's
    ``torch.sparse_coo_tensor``).

    ``indices`` is an integer ``(sparse_dim, nnz)`` tensor, ``values`` a
    ``(nnz, *dense_shape)`` tensor (kept in the graph when it is a Tensor:
    the result is differentiable with respect to it), ``size`` is inferred
    from the largest indices when not given. Repeated indices are allowed
    (they add up); indices out of ``size`` are a RuntimeError.
    ``requires_grad=True`` makes the result a leaf whose ``.grad`` is sparse.

    Examples
    --------
    >>> import oxmera
    >>> s = oxmera.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    >>> s
    tensor(indices=tensor([[0, 1, 1],
                           [2, 0, 2]], dtype=int64),
           values=tensor([3., 4., 5.], dtype=float32),
           size=(2, 3), nnz=3, layout=oxmera.sparse_coo)
    >>> s.to_dense()
    tensor([[0., 0., 3.],
            [4., 0., 5.]], dtype=float32)
    """
    from oxmera._device import check_cpu
    check_cpu("sparse_coo_tensor()", device)
    if isinstance(indices, SparseTensor) or isinstance(values, SparseTensor):
        raise TypeError("sparse_coo_tensor(): indices and values must be dense tensors")
    index = _index_array(indices, "sparse_coo_tensor()")
    values = _values_tensor(values, dtype)
    return _finish("sparse_coo_tensor()", index, values, size,
                   True if is_coalesced else None, requires_grad)


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None):
    """A sparse CSR matrix (PyTorch's ``torch.sparse_csr_tensor``): row ``i``'s values are
    ``values[crow_indices[i]:crow_indices[i + 1]]``, in columns ``col_indices`` of the
    same range.

    Stored as the equivalent coalesced COO pattern; it multiplies and converts as a
    COO tensor does, and answers ``crow_indices()``/``col_indices()``.

    Examples
    --------
    >>> import oxmera
    >>> s = oxmera.sparse_csr_tensor([0, 1, 3], [2, 0, 2], [3.0, 4.0, 5.0], (2, 3))
    >>> s.layout, s.is_sparse_csr
    (oxmera.sparse_csr, True)
    >>> s.to_dense()
    tensor([[0., 0., 3.],
            [4., 0., 5.]], dtype=float32)
    """
    from oxmera._device import check_cpu
    check_cpu("sparse_csr_tensor()", device)
    crow = _index_array(crow_indices, "sparse_csr_tensor()")
    col = _index_array(col_indices, "sparse_csr_tensor()")
    values = _values_tensor(values, dtype)
    if crow.ndim != 1 or col.ndim != 1 or len(crow) == 0:
        raise RuntimeError(f"sparse_csr_tensor(): crow_indices and col_indices must be 1-D "
                           f"(crow_indices non-empty), got shapes {crow.shape} and {col.shape}")
    counts = np.diff(crow)
    if crow[0] != 0 or crow[-1] != len(col) or np.any(counts < 0):
        raise RuntimeError(f"sparse_csr_tensor(): crow_indices must start at 0, not decrease "
                           f"and end at nnz ({len(col)}), got {crow.tolist()}")
    rows = np.repeat(np.arange(len(crow) - 1, dtype=np.int64), counts)
    if size is None:
        size = (len(crow) - 1, int(col.max()) + 1 if len(col) else 0)
    if len(size) != 2 or size[0] != len(crow) - 1:
        raise RuntimeError(f"sparse_csr_tensor(): size {tuple(size)} does not fit "
                           f"{len(crow) - 1} rows of crow_indices")
    index = np.stack([rows, col])
    flat = rows * size[1] + col
    if np.any(np.diff(flat) <= 0) if len(flat) > 1 else False:
        raise RuntimeError("sparse_csr_tensor(): the column indices of each row must be "
                           "sorted and unique")
    return _finish("sparse_csr_tensor()", index, values, size, True, requires_grad, sparse_csr)


def spmm(input, mat2):
    """``input @ mat2`` for a sparse matrix ``input`` and a dense ``mat2`` (PyTorch's
    ``torch.spmm``).

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> oxmera.spmm(a, oxmera.eye(2))
    tensor([[0., 2.],
            [3., 0.]], dtype=float32)
    """
    return _matmul(input, mat2, "spmm")


def smm(input, mat):
    """``input @ mat`` for a sparse ``input`` (PyTorch's ``torch.smm``; the result is
    dense here, where PyTorch's is sparse: convert with ``to_sparse()``).

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.sparse_coo_tensor([[0], [1]], [2.0], (2, 2))
    >>> oxmera.smm(a, oxmera.ones(2, 1))
    tensor([[2.],
            [0.]], dtype=float32)
    """
    return _matmul(input, mat, "smm")


# -- the dense Tensor's side ---------------------------------------------------------------

def _to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """This dense tensor as a sparse one (its nonzero entries, coalesced); the values
    stay in the graph. ``sparse_dim`` leading dimensions are sparse (default: all);
    ``layout=oxmera.sparse_csr`` gives CSR.

    Examples
    --------
    >>> import oxmera
    >>> s = oxmera.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
    >>> s.indices(), s.values()
    (tensor([[0, 1],
            [1, 0]], dtype=int64), tensor([2., 3.], dtype=float32))
    """
    if blocksize is not None:
        raise _unsupported("to_sparse(blocksize=...)")
    if layout is not None and layout not in (sparse_coo, sparse_csr, strided):
        raise _unsupported(f"to_sparse(layout={layout!r})")
    if layout is strided:
        return self
    ndim = self.ndim
    if layout is sparse_csr:
        if ndim != 2:
            raise RuntimeError(f"to_sparse_csr(): expected a 2-D tensor, got shape "
                               f"{tuple(self.shape)}")
        sparse_dim = 2
    if sparse_dim is None:
        sparse_dim = ndim - (dense_dim or 0)
    if not 1 <= sparse_dim <= ndim:
        raise RuntimeError(f"to_sparse(): sparse_dim must be in [1, {ndim}] for a tensor of "
                           f"shape {tuple(self.shape)}, got {sparse_dim}")
    data = self._data
    mask = data != 0
    if sparse_dim < ndim:
        mask = mask.any(axis=tuple(range(sparse_dim, ndim)))
    positions = np.nonzero(mask)
    index = np.stack(positions).astype(np.int64).reshape(sparse_dim, -1)
    values = self[tuple(_wrap(p.astype(np.int64)) for p in positions)]
    out = SparseTensor(_wrap(index), values, self.shape, True)
    return out.to_sparse_csr() if layout is sparse_csr else out


def _to_sparse_csr(self, dense_dim=None):
    """This dense 2-D tensor as a CSR sparse tensor.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.eye(2).to_sparse_csr().crow_indices()
    tensor([0, 1, 2], dtype=int64)
    """
    return _to_sparse(self, layout=sparse_csr)


def _to_dense(self, dtype=None, *, masked_grad=None):
    """Self (or a copy in ``dtype``): a dense tensor is its own dense form.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.ones(2)
    >>> x.to_dense() is x
    True
    """
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


_registry.add_tensor_attribute("to_sparse", _to_sparse)
_registry.add_tensor_attribute("to_sparse_coo", _to_sparse)
_registry.add_tensor_attribute("to_sparse_csr", _to_sparse_csr)
_registry.add_tensor_attribute("to_dense", _to_dense)
_registry.add_tensor_attribute("is_sparse", property(lambda self: False,
                                                     doc="False: a Tensor is dense."))
_registry.add_tensor_attribute("is_sparse_csr", property(lambda self: False,
                                                         doc="False: a Tensor is dense."))
_registry.add_tensor_attribute("layout", property(lambda self: strided,
                                                  doc="``oxmera.strided``: a Tensor is dense."))
