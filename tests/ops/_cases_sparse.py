"""Gradient cases and PyTorch comparisons of ``oxmera.ops.sparse`` (see ``_case_table``).

``sparse_dense_mm`` is the one primitive (a sparse matrix, given by its
values at fixed positions, times a dense matrix or vector); the products of
``mm``/``matmul``/``@``/``addmm``/``oxmera.sparse.mm`` with a sparse operand
record it, so their cases are filed here. The conversions and
``oxmera.sparse.sum``/``softmax`` are composed of index ops: their gradients
are checked in ``tests/sparse/``. Positions include a repeated one (its
values add up).
"""
import numpy as np

import oxmera

from ._case_table import T, Leaf, add_cases, add_torch_cases, const

#: (row, column) positions of a 3x4 sparse matrix, (1, 2) twice.
_INDEX = [[0, 1, 1, 2, 1], [3, 2, 0, 1, 2]]


def _sparse(values, shape=(3, 4), index=_INDEX, lib=oxmera):
    index = lib.tensor(np.array(index, dtype=np.int64).reshape(2, -1))
    # check_invariants: torch warns when it is not given (oxmera always checks)
    return lib.sparse_coo_tensor(index, values, shape, check_invariants=True)


add_cases(
    "sparse_dense_mm",
    ("matrix", lambda v, d: _sparse(v) @ d, (Leaf((5,)), Leaf((4, 2)))),
    ("vector", lambda v, d: oxmera.matmul(_sparse(v), d), (Leaf((5,)), Leaf((4,)))),
    ("dense-left", lambda d, v: oxmera.mm(d, _sparse(v)), (Leaf((2, 3)), Leaf((5,)))),
    ("vector-left", lambda d, v: d @ _sparse(v), (Leaf((3,)), Leaf((5,)))),
    ("transposed", lambda v, d: oxmera.spmm(_sparse(v), d), (Leaf((5,)), T((4, 3)))),
    ("sparse-t", lambda v, d: _sparse(v).t() @ d, (Leaf((5,)), Leaf((3, 2)))),
    ("addmm", lambda x, v, d: oxmera.addmm(x, _sparse(v), d, beta=0.5, alpha=-2.0),
     (Leaf((3, 2)), Leaf((5,)), Leaf((4, 2)))),
    ("values-only", lambda v, d: oxmera.sparse.mm(_sparse(v), d), (Leaf((5,)), const((4, 2)))),
    ("dense-only", lambda v, d: oxmera.sparse.mm(_sparse(v), d), (const((5,)), Leaf((4, 2)))),
    ("no-entries", lambda v, d: _sparse(v, index=[[], []]) @ d, (Leaf((0,)), Leaf((4, 2)))),
    ("size-0", lambda v, d: _sparse(v) @ d, (Leaf((5,)), Leaf((4, 0)))),
)

add_torch_cases(
    "sparse_dense_mm",
    ("sparse.mm", lambda lib, v, d: lib.sparse.mm(_sparse(v, lib=lib), d),
     (Leaf((5,)), Leaf((4, 2)))),
    ("mm", lambda lib, v, d: lib.mm(_sparse(v, lib=lib), d), (Leaf((5,)), Leaf((4, 3)))),
    ("matmul-vector", lambda lib, v, d: lib.matmul(_sparse(v, lib=lib), d),
     (Leaf((5,)), Leaf((4,)))),
    ("operator", lambda lib, v, d: _sparse(v, lib=lib) @ d, (Leaf((5,)), Leaf((4, 2)))),
    ("dense-left", lambda lib, d, v: lib.mm(d, _sparse(v, lib=lib)), (Leaf((2, 3)), Leaf((5,)))),
    ("spmm", lambda lib, v, d: lib.spmm(_sparse(v, lib=lib), d), (Leaf((5,)), Leaf((4, 2)))),
    ("addmm", lambda lib, x, v, d: lib.addmm(x, _sparse(v, lib=lib), d, beta=0.5, alpha=-2.0),
     (Leaf((3, 2)), Leaf((5,)), Leaf((4, 2)))),
    ("sparse.addmm", lambda lib, x, v, d: lib.sparse.addmm(x, _sparse(v, lib=lib), d, beta=2.0),
     (Leaf((3, 2)), Leaf((5,)), Leaf((4, 2)))),
)
