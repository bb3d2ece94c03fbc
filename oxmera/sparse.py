"""``oxmera.sparse``: products and reductions of sparse tensors, as ``torch.sparse``.

The sparse tensor itself, its constructors and the one primitive (sparse
times dense) live in ``oxmera.ops.sparse``; the functions here are composed
of them and of index ops, so they are differentiable with respect to the
sparse values (and the dense operand). PyTorch's semi-structured sparsity,
``solve`` and ``check_sparse_tensor_invariants`` are not provided.
"""
import numbers

import numpy as np

from oxmera._core.autograd import _wrap
from oxmera.ops.blas import _combine
from oxmera.ops.creation import zeros
from oxmera.ops.sparse import SparseTensor, _matmul, _unsupported, sparse_coo_tensor

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "FloatTensor", "DoubleTensor",
           "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
           "BoolTensor"]


def _sparse(input, opname):
    if not isinstance(input, SparseTensor):
        raise TypeError(f"oxmera.sparse.{opname}(): expected a sparse tensor, got "
                        f"{type(input).__name__}")
    return input


def mm(mat1, mat2, reduce="sum"):
    """``mat1 @ mat2`` for a sparse matrix ``mat1`` and a dense matrix ``mat2`` (or a
    dense ``mat1`` and a sparse ``mat2``); differentiable w.r.t. both (the sparse
    one's gradient has its pattern). Only ``reduce="sum"``.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.sparse_coo_tensor([[0, 1, 1], [1, 0, 1]], [1.0, 2.0, 3.0], (2, 2))
    >>> oxmera.sparse.mm(a, oxmera.ones(2, 2))
    tensor([[1., 1.],
            [5., 5.]], dtype=float32)
    """
    if reduce != "sum":
        raise _unsupported(f"sparse.mm(reduce={reduce!r})")
    for value in (mat1, mat2):
        if not isinstance(value, SparseTensor) and getattr(value, "ndim", 2) != 2:
            raise RuntimeError(f"sparse.mm(): expected 2-D operands, got a dense operand of "
                               f"shape {tuple(value.shape)}")
    return _matmul(mat1, mat2, "sparse.mm")


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` for a sparse ``mat1`` and dense ``mat`` and
    ``mat2``.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.sparse_coo_tensor([[0], [0]], [2.0], (1, 1))
    >>> oxmera.sparse.addmm(oxmera.ones(1, 1), a, oxmera.ones(1, 1), beta=0.5)
    tensor([[2.5]], dtype=float32)
    """
    return _combine("sparse.addmm", mat, mm(_sparse(mat1, "addmm"), mat2), beta, alpha)


def _dims(input, dim, opname):
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    ndim = input.ndim
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"sparse.{opname}(): dim {d} out of range for a tensor of "
                             f"{ndim} dimensions")
        out.append(d % ndim)
    if len(set(out)) != len(out):
        raise RuntimeError(f"sparse.{opname}(): dim {dim} repeats a dimension")
    return sorted(out)


def sum(input, dim=None, dtype=None):
    """The sum of a sparse tensor's entries: over everything (a dense 0-d tensor),
    or over ``dim`` (int or tuple): sparse while sparse dimensions remain, else dense.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [1.0, 2.0, 3.0], (2, 3))
    >>> oxmera.sparse.sum(a)
    tensor(6., dtype=float32)
    >>> oxmera.sparse.sum(a, 1).to_dense()
    tensor([1., 5.], dtype=float32)
    """
    input = _sparse(input, "sum")
    values = input._values() if dtype is None else input._values().to(dtype)
    if dim is None:
        return values.sum()
    dims = _dims(input, dim, "sum")
    n_sparse = input.sparse_dim()
    dense_dims = tuple(d - n_sparse + 1 for d in dims if d >= n_sparse)
    if dense_dims:
        values = values.sum(dense_dims)
    keep = [d for d in range(n_sparse) if d not in dims]
    if not keep:
        return values.sum(0)
    size = [s for d, s in enumerate(input.shape) if d not in dims]
    index = _wrap(np.ascontiguousarray(input._indices()._data[keep]))
    return SparseTensor(index, values, size, False).coalesce()


def _groups(input, dim, opname):
    """The coalesced input, and for each entry the id of its slice along ``dim``."""
    input = _sparse(input, opname).coalesce()
    d = _dims(input, dim, opname)[0]
    if d >= input.sparse_dim() or input.dense_dim():
        raise _unsupported(f"sparse.{opname} over a dense dimension")
    index = input._indices()._data
    others = np.delete(index, d, axis=0)
    if others.shape[0] == 0:
        inverse = np.zeros(index.shape[1], dtype=np.int64)
    else:
        _, inverse = np.unique(others, axis=1, return_inverse=True)
    return input, _wrap(inverse.reshape(-1).astype(np.int64))


def _log_normalizer(values, group):
    """Per entry, the log of the sum of exp over its group (shifted by the group's max,
    a constant, so no overflow)."""
    count = int(group._data.max()) + 1 if group.numel() else 0
    peak = np.full(count, -np.inf)
    np.maximum.at(peak, group._data, values.detach()._data)
    shift = _wrap(peak.astype(values._data.dtype))[group]
    totals = zeros(count, dtype=values.dtype).index_add(0, group, (values - shift).exp())
    return totals.log()[group] + shift


def softmax(input, dim, *, dtype=None):
    """Softmax over the stored entries of each slice along ``dim`` (entries not stored
    count as minus infinity, as in PyTorch); a sparse tensor of the same pattern.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.sparse_coo_tensor([[0, 0, 1], [0, 2, 1]], [1.0, 1.0, 5.0], (2, 3))
    >>> oxmera.sparse.softmax(a, 1).to_dense()
    tensor([[0.5, 0. , 0.5],
            [0. , 1. , 0. ]], dtype=float32)
    """
    logs = log_softmax(input, dim, dtype=dtype)
    return logs._like(values=logs._values().exp())


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax over the stored entries of each slice along ``dim`` (see
    :func:`softmax`).

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.sparse_coo_tensor([[0, 0], [0, 1]], [0.0, 0.0], (1, 2))
    >>> oxmera.sparse.log_softmax(a, 1).to_dense()
    tensor([[-0.6931, -0.6931]], dtype=float32)
    """
    input, group = _groups(input, dim, "log_softmax")
    values = input._values() if dtype is None else input._values().to(dtype)
    return input._like(values=values - _log_normalizer(values, group))


# -- PyTorch's legacy constructors (``torch.sparse.FloatTensor(indices, values, size)``) --

class _LegacySparseType(type):
    def __instancecheck__(cls, value):
        return isinstance(value, SparseTensor) and value.dtype == cls.dtype


def _legacy(name, dtype):
    def __new__(cls, *args):
        if args and all(isinstance(a, numbers.Integral) for a in args):
            # (*size): an empty sparse tensor of that size
            return sparse_coo_tensor(np.zeros((len(args), 0), np.int64),
                                     np.zeros(0, dtype), args)
        if len(args) not in (2, 3):
            raise TypeError(f"oxmera.sparse.{name}(): expected (indices, values), "
                            f"(indices, values, size) or (*size), got {len(args)} arguments")
        return sparse_coo_tensor(*args, dtype=np.dtype(dtype))

    doc = f"""PyTorch's legacy ``torch.sparse.{name}``: ``{name}(indices, values, size)`` is
    ``oxmera.sparse_coo_tensor(indices, values, size, dtype={dtype})``; ``{name}(*size)``
    an empty sparse tensor. ``isinstance`` checks a sparse tensor's dtype.

    Examples
    --------
    >>> import oxmera
    >>> s = oxmera.sparse.{name}(oxmera.tensor([[0], [1]]), oxmera.tensor([1]), (2, 2))
    >>> s.dtype, isinstance(s, oxmera.sparse.{name})
    (dtype('{dtype}'), True)
    """
    return _LegacySparseType(name, (), {"__new__": __new__, "dtype": np.dtype(dtype),
                                        "__doc__": doc, "__module__": __name__})


FloatTensor = _legacy("FloatTensor", "float32")
DoubleTensor = _legacy("DoubleTensor", "float64")
HalfTensor = _legacy("HalfTensor", "float16")
LongTensor = _legacy("LongTensor", "int64")
IntTensor = _legacy("IntTensor", "int32")
ShortTensor = _legacy("ShortTensor", "int16")
CharTensor = _legacy("CharTensor", "int8")
ByteTensor = _legacy("ByteTensor", "uint8")
BoolTensor = _legacy("BoolTensor", "bool")

