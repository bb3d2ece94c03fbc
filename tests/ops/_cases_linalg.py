"""Gradient cases and PyTorch comparisons of the linalg ops (see ``_case_table``)."""
import math

import numpy as np

import oxmera
from oxmera.ops.linalg import _svd

from ._case_table import (COMPOSITE_CASES, C, S, T, Case, Leaf, add_cases, add_torch_cases, const,
                          shape_label)

INF = math.inf

# -- matmul ----------------------------------------------------------------------------------

#: matmul operand shapes: every combination of ranks NumPy's rules allow.
MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (2, 3, 4)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((2, 2, 3), (3,)),
    ((3,), (2, 3, 2)),
    ((1, 3), (2, 3, 2)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
]

add_cases("matmul", *[(f"{shape_label(a)}-{shape_label(b)}", oxmera.matmul,
                       (Leaf(a), Leaf(b))) for a, b in MATMUL_SHAPES])
add_cases("matmul",
          ("operator", lambda x, y: x @ y, (Leaf((2, 3)), Leaf((3, 2)))),
          ("transposed", oxmera.matmul, (T((3, 2)), T((2, 4)))),
          ("mT", lambda x, y: x @ y.mT, (Leaf((2, 3)), Leaf((4, 3)))),
          ("no-grad-right", oxmera.matmul, (Leaf((2, 3)), const((3, 2)))),
          ("ndarray-right", lambda x: x @ np.arange(6.0).reshape(3, 2), (Leaf((2, 3)),)),
          ("ndarray-left", lambda y: np.arange(6.0).reshape(2, 3) @ y, (Leaf((3, 2)),)),
          ("quadratic", lambda x: x @ x, (Leaf((3, 3)),)),
          ("strided", oxmera.matmul, (S((2, 3)), Leaf((3, 2)))))

# -- einsum ------------------------------------------------------------------------------------

#: (label, equation, operand shapes): every kind of subscript NumPy accepts.
EINSUM_CASES = [
    ("matmul", "ij,jk->ik", ((2, 3), (3, 4))),
    ("implicit", "ij,jk", ((2, 3), (3, 4))),
    ("implicit-order", "ba", ((2, 3),)),
    ("transpose", "ij->ji", ((2, 3),)),
    ("sum-all", "ij->", ((2, 3),)),
    ("sum-one-dim", "ij->i", ((2, 3),)),
    ("diagonal", "ii->i", ((3, 3),)),
    ("trace", "ii", ((3, 3),)),
    ("diagonal-3", "iii->i", ((2, 2, 2),)),
    ("repeated-with-other", "iij->ij", ((2, 2, 3),)),
    ("repeated-in-second", "i,jj->ij", ((2,), (3, 3))),
    ("outer", "i,j->ij", ((2,), (3,))),
    ("inner", "i,i->", ((3,), (3,))),
    ("elementwise", "ij,ij->ij", ((2, 3), (2, 3))),
    ("batch-matmul", "bij,bjk->bik", ((2, 2, 3), (2, 3, 4))),
    ("ellipsis", "...ij,...jk->...ik", ((2, 2, 3), (2, 3, 4))),
    ("ellipsis-broadcast", "...ij,...jk->...ik", ((2, 1, 2, 3), (4, 3, 2))),
    ("ellipsis-size-1", "...ij,...jk", ((1, 2, 3), (4, 3, 2))),
    ("ellipsis-implicit", "...ij,...jk", ((2, 2, 3), (3, 4))),
    ("ellipsis-middle", "i...j,j...->i...", ((2, 4, 3), (3, 4))),
    ("ellipsis-summed", "...i->i", ((2, 3),)),
    ("labeled-broadcast", "ij,ij->i", ((2, 3), (2, 1))),
    ("labeled-broadcast-left", "ij,ij->i", ((2, 1), (2, 3))),
    ("three-operands", "ij,jk,kl->il", ((2, 3), (3, 4), (4, 2))),
    ("bilinear", "i,ij,j->", ((2,), (2, 3), (3,))),
    ("scalar-operand", ",ij->ij", ((), (2, 3))),
    ("0d", "->", ((),)),
    ("size-0", "ij,jk->ik", ((0, 3), (3, 2))),
    ("size-0-contracted", "ij,jk->ik", ((2, 0), (0, 3))),
    ("uppercase", "iJ,Jk->ik", ((2, 3), (3, 2))),
    ("spaces", "i j , j k -> i k", ((2, 3), (3, 2))),
]


def _einsum(equation):
    return lambda *operands: oxmera.einsum(equation, *operands)


add_cases("einsum", *[(label, _einsum(eq), tuple(Leaf(s) for s in shapes))
                      for label, eq, shapes in EINSUM_CASES])
add_cases(
    "einsum",
    ("list-operands", lambda a, b: oxmera.einsum("ij,jk->ik", [a, b]),
     (Leaf((2, 3)), Leaf((3, 2)))),
    ("sublist", lambda a, b: oxmera.einsum(a, [0, 1], b, [1, 2], [0, 2]),
     (Leaf((2, 3)), Leaf((3, 2)))),
    ("same-operand-twice", lambda a: oxmera.einsum("ij,ij->", a, a), (Leaf((2, 3)),)),
    ("transposed", _einsum("ij,jk->ik"), (T((2, 3)), S((3, 2)))),
    ("no-grad-operand", _einsum("ij,jk->ik"), (const((2, 3)), Leaf((3, 2)))),
    ("ndarray-operand", lambda b: oxmera.einsum("ij,jk->ik", np.ones((2, 3)), b),
     (Leaf((3, 2)),)),
)

# -- inv, det, solve, svd ----------------------------------------------------------------------

def _well_conditioned(a):
    """``a`` plus a multiple of the identity: far from singular."""
    n = a.shape[-1]
    return a + 2.0 * n * oxmera.eye(n, dtype=oxmera.float64)


add_cases(
    "linalg_inv",
    ("2x2", lambda a: oxmera.linalg.inv(_well_conditioned(a)), (Leaf((2, 2)),)),
    ("3x3", lambda a: oxmera.linalg.inv(_well_conditioned(a)), (Leaf((3, 3)),)),
    ("1x1", oxmera.linalg.inv, (Leaf((1, 1)),)),
    ("batched", lambda a: oxmera.linalg.inv(_well_conditioned(a)), (Leaf((2, 3, 3)),)),
    ("general", oxmera.linalg.inv, (Leaf((3, 3), values=(2.0, -1.0, 0.5, 1.0, 1.5, -0.5,
                                                           0.25, 1.0, 3.0)),)),
    ("size-0-batch", oxmera.linalg.inv, (Leaf((0, 2, 2)),)),
    ("size-0-matrix", oxmera.linalg.inv, (Leaf((0, 0)),)),
    ("transposed", lambda a: oxmera.linalg.inv(_well_conditioned(a)), (T((3, 3)),)),
    ("method", lambda a: _well_conditioned(a).inverse(), (S((2, 2)),)),
)

#: A singular matrix (rank 2 of 3) and one of rank 1: det's gradient there is
#: the cofactor matrix, which is not zero for rank n - 1.
_RANK_2 = (1.0, 2.0, 3.0, 0.5, -1.0, 2.0, 1.5, 1.0, 5.0)
_RANK_1 = (1.0, 2.0, -1.0, 2.0, 4.0, -2.0, 0.5, 1.0, -0.5)
_ROWS = np.random.default_rng(5).uniform(-1.0, 1.0, (4, 5))
_RANK_4 = tuple(np.vstack([_ROWS, _ROWS[0] + 0.5 * _ROWS[1]]).ravel())    # 5 x 5, singular

add_cases(
    "linalg_det",
    ("2x2", oxmera.linalg.det, (Leaf((2, 2)),)),
    ("3x3", oxmera.linalg.det, (Leaf((3, 3)),)),
    ("4x4", oxmera.linalg.det, (Leaf((4, 4)),)),
    ("1x1", oxmera.linalg.det, (Leaf((1, 1)),)),
    ("batched", oxmera.linalg.det, (Leaf((2, 3, 3)),)),
    ("singular-rank-2", oxmera.linalg.det, (Leaf((3, 3), values=_RANK_2),)),
    ("singular-rank-1", oxmera.linalg.det, (Leaf((3, 3), values=_RANK_1),)),
    ("singular-in-batch", oxmera.linalg.det, (Leaf((2, 3, 3), values=_RANK_2 + tuple(
        np.arange(9.0) ** 0.5)),)),
    ("zero-matrix", oxmera.linalg.det, (Leaf((2, 2), values=(0.0,) * 4),)),
    ("singular-5x5", oxmera.linalg.det, (Leaf((5, 5), values=_RANK_4),)),
    ("5x5", oxmera.linalg.det, (Leaf((5, 5)),)),
    ("size-0-batch", oxmera.linalg.det, (Leaf((0, 2, 2)),)),
    ("size-0-matrix", oxmera.linalg.det, (Leaf((0, 0)),)),
    ("transposed", oxmera.linalg.det, (T((3, 3)),)),
    ("strided", oxmera.linalg.det, (S((2, 2)),)),
    ("method", lambda a: a.det(), (Leaf((3, 3)),)),
)


def _solve(A, B, **kwargs):
    return oxmera.linalg.solve(_well_conditioned(A), B, **kwargs)


add_cases(
    "linalg_solve",
    ("matrix", _solve, (Leaf((3, 3)), Leaf((3, 2)))),
    ("vector", _solve, (Leaf((3, 3)), Leaf((3,)))),
    ("batched", _solve, (Leaf((2, 3, 3)), Leaf((2, 3, 2)))),
    ("batched-vectors", _solve, (Leaf((2, 3, 3)), Leaf((2, 3)))),
    ("broadcast-A", _solve, (Leaf((3, 3)), Leaf((2, 3, 2)))),
    ("broadcast-B", _solve, (Leaf((2, 3, 3)), Leaf((3, 1)))),
    ("vector-broadcast", _solve, (Leaf((2, 3, 3)), Leaf((3,)))),
    ("left-false", lambda A, B: _solve(A, B, left=False), (Leaf((3, 3)), Leaf((2, 3)))),
    ("left-false-vector", lambda A, B: _solve(A, B, left=False), (Leaf((3, 3)), Leaf((3,)))),
    ("no-grad-A", _solve, (const((3, 3)), Leaf((3, 2)))),
    ("no-grad-B", _solve, (Leaf((3, 3)), const((3, 2)))),
    ("size-0-columns", _solve, (Leaf((3, 3)), Leaf((3, 0)))),
    ("size-0-batch", _solve, (Leaf((0, 2, 2)), Leaf((0, 2, 1)))),
    ("transposed", _solve, (T((3, 3)), S((3, 2)))),
)


def _projectors(a):
    """Functions of the SVD that do not depend on the singular vectors' signs."""
    U, S_, Vh = _svd(a)
    return U @ U.mT, S_, Vh.mT @ Vh, (U * S_.unsqueeze(-2)) @ Vh


add_cases(
    "linalg_svd",
    ("square", _projectors, (Leaf((3, 3)),)),
    ("tall", _projectors, (Leaf((4, 2)),)),
    ("wide", _projectors, (Leaf((2, 4)),)),
    ("batched", _projectors, (Leaf((2, 3, 2)),)),
    ("values-only", lambda a: _svd(a).S, (Leaf((3, 4)),)),
    ("vectors-only", lambda a: _svd(a).U @ _svd(a).Vh, (Leaf((3, 3)),)),
    ("size-0-batch", _projectors, (Leaf((0, 2, 2)),)),
    ("transposed", _projectors, (T((3, 2)),)),
    ("svdvals", oxmera.linalg.svdvals, (S((2, 3)),)),
)

# -- composites: mm, bmm, dot, outer, tensordot, matrix norms -------------------------------------

COMPOSITE_CASES.extend([
    Case("composite:mm", oxmera.mm, (Leaf((2, 3)), T((3, 4)))),
    Case("composite:mm-method", lambda a, b: a.mm(b), (Leaf((0, 3)), Leaf((3, 2)))),
    Case("composite:bmm", oxmera.bmm, (Leaf((2, 2, 3)), Leaf((2, 3, 4)))),
    Case("composite:dot", oxmera.dot, (Leaf((3,)), S((3,)))),
    Case("composite:outer", oxmera.outer, (Leaf((2,)), Leaf((3,)))),
    Case("composite:outer-method", lambda a, b: a.outer(b), (Leaf((0,)), Leaf((3,)))),
    Case("composite:tensordot-int", lambda a, b: oxmera.tensordot(a, b, 2),
         (Leaf((2, 3, 4)), Leaf((3, 4, 2)))),
    Case("composite:tensordot-lists", lambda a, b: oxmera.tensordot(a, b, ([0, 2], [2, 0])),
         (T((4, 3, 2)), Leaf((2, 3, 4)))),
    Case("composite:tensordot-0", lambda a, b: oxmera.tensordot(a, b, 0), (Leaf((2,)),
                                                                           Leaf(()))),
    Case("composite:matrix-norm-1", lambda a: oxmera.linalg.matrix_norm(a, 1),
         (Leaf((2, 3, 4)),)),
    Case("composite:matrix-norm-inf", lambda a: oxmera.linalg.matrix_norm(a, -INF, keepdim=True),
         (Leaf((3, 4)),)),
    Case("composite:matrix-norm-nuc", lambda a: oxmera.linalg.norm(a, "nuc", dim=(0, 2)),
         (Leaf((3, 2, 4)),)),
    Case("composite:matrix-norm-2", lambda a: oxmera.linalg.matrix_norm(a, 2), (Leaf((3, 4)),)),
    Case("composite:matrix-norm--2", lambda a: oxmera.linalg.matrix_norm(a, -2), (Leaf((4, 3)),)),
    Case("composite:linalg-norm-ord", lambda a: oxmera.linalg.norm(a, 1), (Leaf((3, 3)),)),
])

# -- PyTorch comparisons -------------------------------------------------------------------------

add_torch_cases("matmul", *[(f"{shape_label(a)}-{shape_label(b)}",
                             lambda lib, x, y: lib.matmul(x, y), (Leaf(a), Leaf(b)))
                            for a, b in MATMUL_SHAPES])
add_torch_cases("matmul", ("operator", lambda lib, x, y: x @ y, (Leaf((2, 3)), Leaf((3, 2)))))
add_torch_cases("einsum", *[(label, lambda lib, *ops, eq=eq: lib.einsum(eq, *ops),
                             tuple(Leaf(s) for s in shapes))
                            for label, eq, shapes in EINSUM_CASES
                            if label != "ellipsis-summed"])
add_torch_cases(
    "einsum",
    # NumPy refuses to sum an ellipsis the output leaves out; PyTorch sums it.
    ("ellipsis-summed", lambda lib, x: lib.einsum("...i->i", x), (Leaf((2, 3)),)),
    ("list-operands", lambda lib, a, b: lib.einsum("ij,jk->ik", [a, b]),
     (Leaf((2, 3)), Leaf((3, 2)))),
    ("sublist", lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
     (Leaf((2, 3)), Leaf((3, 2)))),
)
add_torch_cases(
    "mm",
    ("2x3-3x4", lambda lib, a, b: lib.mm(a, b), (Leaf((2, 3)), Leaf((3, 4)))),
    ("method", lambda lib, a, b: a.mm(b), (Leaf((0, 3)), Leaf((3, 2)))),
)
add_torch_cases("bmm", ("3d", lambda lib, a, b: lib.bmm(a, b), (Leaf((2, 2, 3)), Leaf((2, 3, 4)))),
                ("method", lambda lib, a, b: a.bmm(b), (Leaf((1, 2, 3)), Leaf((1, 3, 1)))))
add_torch_cases("dot", ("1d", lambda lib, a, b: lib.dot(a, b), (Leaf((3,)), Leaf((3,)))),
                ("method", lambda lib, a, b: a.dot(b), (Leaf((0,)), Leaf((0,)))))
add_torch_cases("outer", ("1d", lambda lib, a, b: lib.outer(a, b), (Leaf((2,)), Leaf((3,)))),
                ("method", lambda lib, a, b: a.outer(b), (Leaf((3,)), Leaf((2,)))))
add_torch_cases(
    "tensordot",
    ("int", lambda lib, a, b: lib.tensordot(a, b, 2), (Leaf((2, 3, 4)), Leaf((3, 4, 2)))),
    ("default", lambda lib, a, b: lib.tensordot(a, b), (Leaf((2, 3, 4)), Leaf((3, 4, 2)))),
    ("lists", lambda lib, a, b: lib.tensordot(a, b, dims=([0, 2], [2, 0])),
     (Leaf((4, 3, 2)), Leaf((2, 3, 4)))),
    ("pair", lambda lib, a, b: lib.tensordot(a, b, dims=([1], [0])),
     (Leaf((2, 3)), Leaf((3, 2)))),
    ("outer", lambda lib, a, b: lib.tensordot(a, b, 0), (Leaf((2,)), Leaf((3,)))),
)


def _conditioned(lib, a):
    n = a.shape[-1]
    return a + 2.0 * n * lib.eye(n, dtype=lib.float64)


add_torch_cases(
    "linalg_inv",
    ("3x3", lambda lib, a: lib.linalg.inv(_conditioned(lib, a)), (Leaf((3, 3)),)),
    ("batched", lambda lib, a: lib.linalg.inv(_conditioned(lib, a)), (Leaf((2, 2, 2)),)),
    ("method", lambda lib, a: _conditioned(lib, a).inverse(), (Leaf((2, 2)),)),
    ("size-0", lambda lib, a: lib.linalg.inv(a), (Leaf((0, 2, 2)),)),
)
add_torch_cases(
    "linalg_det",
    ("3x3", lambda lib, a: lib.linalg.det(a), (Leaf((3, 3)),)),
    ("batched", lambda lib, a: lib.linalg.det(a), (Leaf((2, 4, 4)),)),
    ("singular", lambda lib, a: lib.linalg.det(a), (Leaf((3, 3), values=_RANK_2),)),
    ("method", lambda lib, a: a.det(), (Leaf((2, 2)),)),
    ("1x1", lambda lib, a: lib.linalg.det(a), (Leaf((1, 1)),)),
)
add_torch_cases(
    "linalg_solve",
    ("matrix", lambda lib, a, b: lib.linalg.solve(_conditioned(lib, a), b),
     (Leaf((3, 3)), Leaf((3, 2)))),
    ("vector", lambda lib, a, b: lib.linalg.solve(_conditioned(lib, a), b),
     (Leaf((3, 3)), Leaf((3,)))),
    ("batched-vectors", lambda lib, a, b: lib.linalg.solve(_conditioned(lib, a), b),
     (Leaf((2, 3, 3)), Leaf((2, 3)))),
    ("broadcast", lambda lib, a, b: lib.linalg.solve(_conditioned(lib, a), b),
     (Leaf((3, 3)), Leaf((2, 3, 2)))),
    ("left-false", lambda lib, a, b: lib.linalg.solve(_conditioned(lib, a), b, left=False),
     (Leaf((3, 3)), Leaf((2, 3)))),
)


def _svd_invariants(lib, a):
    if lib is oxmera:
        U, S_, Vh = _svd(a)
    else:
        U, S_, Vh = lib.linalg.svd(a, full_matrices=False)
    return U @ U.mT, S_, Vh.mT @ Vh


add_torch_cases(
    "linalg_svd",
    ("invariants-tall", _svd_invariants, (Leaf((4, 3)),)),
    ("invariants-wide", _svd_invariants, (Leaf((2, 2, 3)),)),
    ("svdvals", lambda lib, a: lib.linalg.svdvals(a), (Leaf((3, 4)),)),
)
add_torch_cases(
    "linalg.norm",
    ("default", lambda lib, a: lib.linalg.norm(a), (Leaf((2, 3, 4)),)),
    ("vector-dim", lambda lib, a: lib.linalg.norm(a, 3, dim=1), (Leaf((3, 4)),)),
    ("vector-ord-1d", lambda lib, a: lib.linalg.norm(a, INF), (Leaf((5,)),)),
    ("fro", lambda lib, a: lib.linalg.norm(a, "fro"), (Leaf((3, 4)),)),
    ("nuc", lambda lib, a: lib.linalg.norm(a, "nuc"), (Leaf((3, 4)),)),
    ("1", lambda lib, a: lib.linalg.norm(a, 1), (Leaf((3, 4)),)),
    ("-1", lambda lib, a: lib.linalg.norm(a, -1), (Leaf((3, 4)),)),
    ("inf", lambda lib, a: lib.linalg.norm(a, INF), (Leaf((3, 4)),)),
    ("-inf", lambda lib, a: lib.linalg.norm(a, -INF), (Leaf((3, 4)),)),
    ("2", lambda lib, a: lib.linalg.norm(a, 2), (Leaf((3, 4)),)),
    ("-2", lambda lib, a: lib.linalg.norm(a, -2), (Leaf((4, 3)),)),
    ("matrix-dims-keepdim", lambda lib, a: lib.linalg.norm(a, 1, dim=(2, 0), keepdim=True),
     (Leaf((3, 2, 4)),)),
    ("matrix-norm-batched", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), (Leaf((2, 3, 3)),)),
    ("vector-norm-zero", lambda lib, a: lib.linalg.vector_norm(a * 0), (Leaf((3,)),)),
)

# -- matmul_nt / matmul_tn (matmul's VJP, the transposes inside NumPy) ------------------------

from oxmera.ops.linalg import matmul_nt, matmul_tn  # noqa: E402

add_cases("matmul_nt",
          ("2d", matmul_nt, (Leaf((2, 3)), Leaf((4, 3)))),
          ("batched", matmul_nt, (Leaf((2, 2, 3)), Leaf((2, 4, 3)))),
          ("broadcast-batch", matmul_nt, (Leaf((2, 1, 2, 3)), Leaf((5, 4, 3)))),
          ("transposed", matmul_nt, (T((2, 3)), T((4, 3)))),
          ("strided", matmul_nt, (S((2, 3)), Leaf((4, 3)))),
          ("size-0", matmul_nt, (Leaf((0, 3)), Leaf((2, 3)))),
          ("size-0-inner", matmul_nt, (Leaf((2, 0)), Leaf((3, 0)))),
          ("no-grad-right", matmul_nt, (Leaf((2, 3)), const((4, 3)))))
add_cases("matmul_tn",
          ("2d", matmul_tn, (Leaf((3, 2)), Leaf((3, 4)))),
          ("batched", matmul_tn, (Leaf((2, 3, 2)), Leaf((2, 3, 4)))),
          ("broadcast-batch", matmul_tn, (Leaf((2, 1, 3, 2)), Leaf((5, 3, 4)))),
          ("transposed", matmul_tn, (T((3, 2)), T((3, 4)))),
          ("strided", matmul_tn, (S((3, 2)), Leaf((3, 4)))),
          ("size-0", matmul_tn, (Leaf((3, 0)), Leaf((3, 2)))),
          ("size-0-inner", matmul_tn, (Leaf((0, 2)), Leaf((0, 3)))),
          ("no-grad-left", matmul_tn, (const((3, 2)), Leaf((3, 4)))))
add_cases("matmul_nt", ("complex", matmul_nt, (C((2, 3)), C((4, 3)))))
add_cases("matmul_tn", ("complex", matmul_tn, (C((3, 2)), C((3, 4)))))
add_torch_cases("matmul_nt", ("2d", lambda lib, a, b: (a @ b.mT) if lib is not oxmera
                              else matmul_nt(a, b), (Leaf((2, 3)), Leaf((4, 3)))))
add_torch_cases("matmul_tn", ("2d", lambda lib, a, b: (a.mT @ b) if lib is not oxmera
                              else matmul_tn(a, b), (Leaf((3, 2)), Leaf((3, 4)))))

# -- materialize_broadcast (the gradient matmul's VJP hands to BLAS) ------------------------

from oxmera.ops.linalg import materialize_broadcast  # noqa: E402

add_cases("materialize_broadcast",
          ("vector", materialize_broadcast, (Leaf((3,)),)),
          ("broadcast", lambda x: materialize_broadcast(x.expand(2, 3)), (Leaf((3,)),)),
          ("0d", materialize_broadcast, (Leaf(()),)),
          ("size-0", materialize_broadcast, (Leaf((0, 2)),)),
          ("transposed", materialize_broadcast, (T((2, 3)),)),
          ("complex", lambda x: materialize_broadcast(x.expand(2, 2)), (C((2,)),)))
add_torch_cases("materialize_broadcast",
                ("broadcast", lambda lib, x: x.expand(2, 3).contiguous() if lib is not oxmera
                 else materialize_broadcast(x.expand(2, 3)), (Leaf((3,)),)))
