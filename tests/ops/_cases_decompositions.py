"""Gradient cases and PyTorch comparisons of the decompositions behind
``oxmera.linalg`` (see ``_case_table``): eigh, cholesky, qr, LU, slogdet,
triangular solves, pinv, lstsq, matrix_exp, the full svd, and the functions
composed of them.

Functions of eigenvectors or singular vectors are checked through
quantities that do not depend on their signs (projectors, products), the
only ones with a well-defined gradient; eigh's input is symmetrized inside
the function, as its gradient is the symmetric one.
"""
import math


import oxmera
from oxmera.ops.matrix_functions import _matrix_rank

from ._case_table import (COMPOSITE_CASES, NO_GRADIENT_CALLS, S, T, Case, Leaf, add_cases,
                          add_torch_cases, const)

LA = oxmera.linalg
INF = math.inf


def _spd(a):
    """A symmetric positive-definite matrix from any square ``a``."""
    n = a.shape[-1]
    return a @ a.mT + n * oxmera.eye(n, dtype=a.dtype)


def _sym(a):
    return a + a.mT


def _conditioned(a):
    n = a.shape[-1]
    return a + 2.0 * n * oxmera.eye(n, dtype=a.dtype)


# -- svd (full_matrices, legacy) ------------------------------------------------------------------

def _full_svd_invariants(a):
    U, S_, Vh = LA.svd(a, full_matrices=True)
    k = S_.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return U @ U.mT, S_, Vh.mT @ Vh, (U * S_.unsqueeze(-2)) @ Vh


add_cases(
    "linalg_svd",
    ("full-tall", _full_svd_invariants, (Leaf((4, 2)),)),
    ("full-wide", _full_svd_invariants, (Leaf((2, 3)),)),
    ("full-batched", _full_svd_invariants, (Leaf((2, 3, 3)),)),
    ("full-transposed", _full_svd_invariants, (T((3, 2)),)),
    ("full-size-0-batch", _full_svd_invariants, (Leaf((0, 2, 3)),)),
    ("reduced-public", lambda a: LA.svd(a, full_matrices=False).U @ LA.svd(
        a, full_matrices=False).Vh, (Leaf((3, 2)),)),
    ("legacy", lambda a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ r.V.mT)(oxmera.svd(a)),
     (S((3, 2)),)),
    ("legacy-method", lambda a: a.svd().S, (Leaf((2, 3)),)),
)


# -- eigh ------------------------------------------------------------------------------------------

def _eigh_invariants(a, UPLO="L"):
    L, V = LA.eigh(_sym(a), UPLO=UPLO)
    return L, (V * L.unsqueeze(-2).exp()) @ V.mT, V * V


add_cases(
    "linalg_eigh",
    ("3x3", _eigh_invariants, (Leaf((3, 3)),)),
    ("1x1", _eigh_invariants, (Leaf((1, 1)),)),
    ("batched", _eigh_invariants, (Leaf((2, 3, 3)),)),
    ("upper", lambda a: _eigh_invariants(a, "U"), (Leaf((3, 3)),)),
    ("size-0-batch", _eigh_invariants, (Leaf((0, 2, 2)),)),
    ("size-0-matrix", _eigh_invariants, (Leaf((0, 0)),)),
    ("transposed", _eigh_invariants, (T((3, 3)),)),
    ("strided", _eigh_invariants, (S((2, 2)),)),
    ("eigvalsh", lambda a: LA.eigvalsh(_sym(a)), (Leaf((3, 3)),)),
    ("eigvalsh-upper", lambda a: LA.eigvalsh(_sym(a), UPLO="U"), (Leaf((2, 3, 3)),)),
)


# -- cholesky ----------------------------------------------------------------------------------

add_cases(
    "linalg_cholesky_ex",
    ("3x3", lambda a: LA.cholesky(_spd(a)), (Leaf((3, 3)),)),
    ("upper", lambda a: LA.cholesky(_spd(a), upper=True), (Leaf((3, 3)),)),
    ("1x1", lambda a: LA.cholesky(a * a + 1.0), (Leaf((1, 1)),)),
    ("batched", lambda a: LA.cholesky(_spd(a)), (Leaf((2, 3, 3)),)),
    ("ex", lambda a: LA.cholesky_ex(_spd(a)).L, (Leaf((2, 2)),)),
    ("legacy", lambda a: oxmera.cholesky(_spd(a), True), (T((3, 3)),)),
    ("method", lambda a: _spd(a).cholesky(), (S((2, 2)),)),
    ("size-0-batch", lambda a: LA.cholesky(_spd(a)), (Leaf((0, 2, 2)),)),
    ("size-0-matrix", LA.cholesky, (Leaf((0, 0)),)),
)


# -- qr ----------------------------------------------------------------------------------------

add_cases(
    "linalg_qr",
    ("square", LA.qr, (Leaf((3, 3)),)),
    ("tall", LA.qr, (Leaf((4, 2)),)),
    ("wide", LA.qr, (Leaf((2, 4)),)),
    ("batched", LA.qr, (Leaf((2, 3, 2)),)),
    ("complete-square", lambda a: LA.qr(a, mode="complete"), (Leaf((3, 3)),)),
    ("complete-wide", lambda a: LA.qr(a, mode="complete"), (Leaf((2, 3)),)),
    ("q-only", lambda a: LA.qr(a).Q, (T((3, 2)),)),
    ("r-only", lambda a: LA.qr(a).R, (S((3, 3)),)),
    ("legacy", lambda a: oxmera.qr(a), (Leaf((3, 2)),)),
    ("method", lambda a: a.qr().R, (Leaf((2, 2)),)),
    ("size-0-batch", LA.qr, (Leaf((0, 3, 2)),)),
)


# -- triangular solves -------------------------------------------------------------------------

def _tri(A, B, **kw):
    return LA.solve_triangular(_conditioned(A), B, **kw)


add_cases(
    "linalg_solve_triangular",
    ("upper", lambda A, B: _tri(A, B, upper=True), (Leaf((3, 3)), Leaf((3, 2)))),
    ("lower", lambda A, B: _tri(A, B, upper=False), (Leaf((3, 3)), Leaf((3, 2)))),
    ("right", lambda A, B: _tri(A, B, upper=True, left=False), (Leaf((3, 3)), Leaf((2, 3)))),
    ("right-lower", lambda A, B: _tri(A, B, upper=False, left=False),
     (Leaf((3, 3)), Leaf((2, 3)))),
    ("unitriangular", lambda A, B: _tri(A, B, upper=True, unitriangular=True),
     (Leaf((3, 3)), Leaf((3, 2)))),
    ("unitriangular-lower-right",
     lambda A, B: _tri(A, B, upper=False, left=False, unitriangular=True),
     (Leaf((3, 3)), Leaf((1, 3)))),
    ("broadcast", lambda A, B: _tri(A, B, upper=True), (Leaf((3, 3)), Leaf((2, 3, 2)))),
    ("batched", lambda A, B: _tri(A, B, upper=False), (Leaf((2, 2, 2)), Leaf((2, 2, 1)))),
    ("no-grad-A", lambda A, B: _tri(A, B, upper=True), (const((3, 3)), Leaf((3, 2)))),
    ("no-grad-B", lambda A, B: _tri(A, B, upper=True), (Leaf((3, 3)), const((3, 2)))),
    ("transposed", lambda A, B: _tri(A, B, upper=True), (T((3, 3)), S((3, 2)))),
    ("size-0", lambda A, B: _tri(A, B, upper=True), (Leaf((3, 3)), Leaf((3, 0)))),
)


# -- LU ----------------------------------------------------------------------------------------

add_cases(
    "linalg_lu_factor_ex",
    ("factor-square", lambda a: LA.lu_factor(a).LU, (Leaf((3, 3)),)),
    ("factor-tall", lambda a: LA.lu_factor_ex(a).LU, (Leaf((4, 2)),)),
    ("factor-wide", lambda a: LA.lu_factor_ex(a).LU, (Leaf((2, 4)),)),
    ("factor-batched", lambda a: LA.lu_factor(a).LU, (Leaf((2, 3, 3)),)),
    ("lu-square", lambda a: LA.lu(a)[1:], (Leaf((3, 3)),)),
    ("lu-tall", lambda a: LA.lu(a)[1:], (T((4, 3)),)),
    ("lu-wide", lambda a: LA.lu(a)[1:], (S((2, 3)),)),
    ("lu-u-only", lambda a: LA.lu(a).U, (Leaf((3, 3)),)),
    ("lu-solve", lambda a, b: LA.lu_solve(*LA.lu_factor(_conditioned(a)), b),
     (Leaf((3, 3)), Leaf((3, 2)))),
    ("lu-solve-adjoint", lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, adjoint=True),
     (Leaf((3, 3)), Leaf((3, 1)))),
    ("lu-solve-right", lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, left=False),
     (Leaf((2, 3, 3)), Leaf((2, 2, 3)))),
    ("lu-solve-right-adjoint",
     lambda a, b: LA.lu_solve(*LA.lu_factor(a), b, left=False, adjoint=True),
     (Leaf((3, 3)), Leaf((2, 3)))),
    ("size-0-batch", lambda a: LA.lu_factor(a).LU, (Leaf((0, 2, 2)),)),
)


# -- slogdet, pinv, lstsq, matrix_exp -----------------------------------------------------------

add_cases(
    "linalg_slogdet",
    ("3x3", LA.slogdet, (Leaf((3, 3)),)),
    ("batched", lambda a: LA.slogdet(a).logabsdet, (Leaf((2, 3, 3)),)),
    ("1x1", LA.slogdet, (Leaf((1, 1)),)),
    ("top-level", lambda a: oxmera.slogdet(a).logabsdet, (T((2, 2)),)),
    ("logdet", lambda a: oxmera.logdet(_spd(a)), (S((2, 2)),)),
    ("logdet-method", lambda a: _spd(a).logdet(), (Leaf((3, 3)),)),
    ("size-0-batch", LA.slogdet, (Leaf((0, 2, 2)),)),
    ("size-0-matrix", LA.slogdet, (Leaf((0, 0)),)),
)
add_cases(
    "linalg_pinv",
    ("square", LA.pinv, (Leaf((3, 3)),)),
    ("tall", LA.pinv, (Leaf((4, 2)),)),
    ("wide", LA.pinv, (Leaf((2, 4)),)),
    ("batched", LA.pinv, (Leaf((2, 3, 2)),)),
    ("hermitian", lambda a: LA.pinv(_sym(a), hermitian=True), (Leaf((3, 3)),)),
    ("atol", lambda a: LA.pinv(a, atol=1e-3), (T((3, 2)),)),
    ("pinverse", lambda a: oxmera.pinverse(a), (S((2, 3)),)),
    ("size-0", LA.pinv, (Leaf((0, 3)),)),
)
add_cases(
    "linalg_lstsq",
    ("tall", lambda a, b: LA.lstsq(a, b).solution, (Leaf((4, 2)), Leaf((4, 3)))),
    ("square", lambda a, b: LA.lstsq(_conditioned(a), b).solution, (Leaf((3, 3)), Leaf((3, 1)))),
    ("wide", lambda a, b: LA.lstsq(a, b, driver="gelsd").solution, (Leaf((2, 3)), Leaf((2, 2)))),
    ("vector", lambda a, b: LA.lstsq(a, b).solution, (Leaf((4, 2)), Leaf((4,)))),
    ("batched", lambda a, b: LA.lstsq(a, b).solution, (Leaf((2, 4, 2)), Leaf((2, 4, 1)))),
    ("broadcast", lambda a, b: LA.lstsq(a, b).solution, (Leaf((3, 2)), Leaf((2, 3, 2)))),
    ("no-grad-A", lambda a, b: LA.lstsq(a, b).solution, (const((4, 2)), T((4, 3)))),
    ("no-grad-B", lambda a, b: LA.lstsq(a, b).solution, (S((4, 2)), const((4, 3)))),
    ("size-0-batch", lambda a, b: LA.lstsq(a, b).solution, (Leaf((0, 3, 2)), Leaf((0, 3, 1)))),
)
add_cases(
    "linalg_matrix_exp",
    ("2x2", LA.matrix_exp, (Leaf((2, 2)),)),
    ("3x3", LA.matrix_exp, (Leaf((3, 3)),)),
    ("1x1", LA.matrix_exp, (Leaf((1, 1)),)),
    ("batched", LA.matrix_exp, (Leaf((2, 3, 3)),)),
    ("top-level", oxmera.matrix_exp, (T((3, 3)),)),
    ("method", lambda a: a.matrix_exp(), (S((2, 2)),)),
    ("size-0-batch", LA.matrix_exp, (Leaf((0, 2, 2)),)),
)

NO_GRADIENT_CALLS["linalg_matrix_rank"] = lambda x, y: _matrix_rank(oxmera.outer(x, y))

# -- composites ----------------------------------------------------------------------------------

COMPOSITE_CASES.extend([
    Case("composite:matrix-power-3", lambda a: LA.matrix_power(a, 3), (Leaf((3, 3)),)),
    Case("composite:matrix-power-0", lambda a: LA.matrix_power(a, 0), (Leaf((2, 2, 2)),)),
    Case("composite:matrix-power-neg", lambda a: LA.matrix_power(_conditioned(a), -2),
         (Leaf((2, 3, 3)),)),
    Case("composite:matrix-power-method", lambda a: a.matrix_power(5), (T((2, 2)),)),
    Case("composite:cond", LA.cond, (Leaf((3, 3)),)),
    Case("composite:cond-tall", lambda a: LA.cond(a, -2), (Leaf((4, 2)),)),
    Case("composite:cond-fro", lambda a: LA.cond(a, "fro"), (Leaf((2, 3, 3)),)),
    Case("composite:cond-1", lambda a: LA.cond(a, 1), (Leaf((3, 3)),)),
    Case("composite:vecdot", lambda x, y: LA.vecdot(x, y), (Leaf((2, 3)), Leaf((3,)))),
    Case("composite:vecdot-dim", lambda x, y: LA.vecdot(x, y, dim=0), (T((3, 2)), Leaf((3, 1)))),
    Case("composite:tensorinv", lambda a: LA.tensorinv(_conditioned(a).reshape(2, 2, 4), 2),
         (Leaf((4, 4)),)),
    Case("composite:tensorsolve", lambda a, b: LA.tensorsolve(
        _conditioned(a).reshape(2, 3, 6), b), (Leaf((6, 6)), Leaf((2, 3)))),
    Case("composite:inv-ex", lambda a: LA.inv_ex(_conditioned(a)).inverse, (Leaf((2, 3, 3)),)),
    Case("composite:inv-ex-singular-in-batch", lambda a: LA.inv_ex(
        a * oxmera.tensor([[[1.0]], [[0.0]]], dtype=oxmera.float64)).inverse[0],
        (Leaf((2, 2, 2)),)),
    Case("composite:solve-ex", lambda a, b: LA.solve_ex(_conditioned(a), b).result,
         (Leaf((3, 3)), Leaf((3,)))),
    Case("composite:solve-ex-left-false", lambda a, b: LA.solve_ex(
        _conditioned(a), b, left=False).result, (Leaf((3, 3)), Leaf((2, 3)))),
])

# -- PyTorch comparisons -----------------------------------------------------------------------


def _lib_sym(lib, a):
    return a + a.mT


def _torch_eigh(lib, a, UPLO="L"):
    L, V = lib.linalg.eigh(a + a.mT, UPLO=UPLO)
    return L, (V * L.unsqueeze(-2).exp()) @ V.mT, V * V


def _torch_svd(lib, a, full=True):
    U, S_, Vh = lib.linalg.svd(a, full_matrices=full)
    k = S_.shape[-1]
    return U[..., :k] @ U[..., :k].mT, S_, Vh[..., :k, :].mT @ Vh[..., :k, :], U @ U.mT


def _spd_lib(lib, a):
    n = a.shape[-1]
    return a @ a.mT + n * lib.eye(n, dtype=lib.float64)


def _cond_lib(lib, a):
    n = a.shape[-1]
    return a + 2.0 * n * lib.eye(n, dtype=lib.float64)


add_torch_cases(
    "linalg_svd",
    ("full-tall", _torch_svd, (Leaf((4, 2)),)),
    ("full-wide", _torch_svd, (Leaf((2, 2, 3)),)),
    ("reduced", lambda lib, a: _torch_svd(lib, a, False)[:3], (Leaf((3, 4)),)),
    ("legacy", lambda lib, a: (lambda r: ((r.U * r.S.unsqueeze(-2)) @ r.V.mT, r.S))(
        lib.svd(a)), (Leaf((3, 2)),)),
    ("legacy-some-false", lambda lib, a: (lambda r: (r.U.shape, r.V @ r.V.mT))(
        lib.svd(a, some=False)), (Leaf((3, 2)),), {"grad": False}),
    ("legacy-no-uv", lambda lib, a: tuple(lib.svd(a, compute_uv=False)), (Leaf((3, 2)),)),
)
add_torch_cases(
    "linalg_eigh",
    ("3x3", _torch_eigh, (Leaf((3, 3)),)),
    ("batched-upper", lambda lib, a: _torch_eigh(lib, a, "U"), (Leaf((2, 3, 3)),)),
    ("uplo-reads-one-triangle", lambda lib, a: lib.linalg.eigvalsh(a, UPLO="U"),
     (Leaf((3, 3)),), {"grad": False}),
    ("eigvalsh", lambda lib, a: lib.linalg.eigvalsh(a + a.mT), (Leaf((4, 4)),)),
)
add_torch_cases(
    "linalg_cholesky_ex",
    ("lower", lambda lib, a: lib.linalg.cholesky(_spd_lib(lib, a)), (Leaf((3, 3)),)),
    ("upper", lambda lib, a: lib.linalg.cholesky(_spd_lib(lib, a), upper=True),
     (Leaf((2, 3, 3)),)),
    ("ex", lambda lib, a: tuple(lib.linalg.cholesky_ex(_spd_lib(lib, a))), (Leaf((2, 2)),)),
    ("ex-failing", lambda lib, a: lib.linalg.cholesky_ex(a - 10 * lib.eye(3, dtype=a.dtype)).info,
     (Leaf((3, 3)),), {"grad": False}),
    ("legacy", lambda lib, a: lib.cholesky(_spd_lib(lib, a), True), (Leaf((3, 3)),)),
    ("method", lambda lib, a: _spd_lib(lib, a).cholesky(), (Leaf((2, 2)),)),
)
add_torch_cases(
    "linalg_qr",
    ("reduced-tall", lambda lib, a: tuple(lib.linalg.qr(a)), (Leaf((4, 3)),)),
    ("reduced-wide", lambda lib, a: tuple(lib.linalg.qr(a)), (Leaf((2, 2, 4)),)),
    ("complete", lambda lib, a: tuple(lib.linalg.qr(a, mode="complete")), (Leaf((3, 3)),)),
    ("complete-tall-values", lambda lib, a: tuple(lib.linalg.qr(a, mode="complete")),
     (Leaf((4, 2)),), {"grad": False}),
    ("r", lambda lib, a: tuple(lib.linalg.qr(a, mode="r")), (Leaf((3, 2)),), {"grad": False}),
    ("legacy", lambda lib, a: tuple(lib.qr(a, some=False)), (Leaf((2, 3)),)),
)
add_torch_cases(
    "linalg_solve_triangular",
    ("upper", lambda lib, a, b: lib.linalg.solve_triangular(_cond_lib(lib, a), b, upper=True),
     (Leaf((3, 3)), Leaf((3, 2)))),
    ("lower-right-unit", lambda lib, a, b: lib.linalg.solve_triangular(
        _cond_lib(lib, a), b, upper=False, left=False, unitriangular=True),
     (Leaf((2, 3, 3)), Leaf((2, 2, 3)))),
    ("broadcast", lambda lib, a, b: lib.linalg.solve_triangular(
        _cond_lib(lib, a), b, upper=False), (Leaf((3, 3)), Leaf((2, 3, 1)))),
    # A zero on the diagonal: inf/nan, not an error.
    *[(f"zero-diagonal-{upper}-{left}", lambda lib, a, b, upper=upper, left=left:
       lib.linalg.solve_triangular(a * lib.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0],
                                                   [1.0, 1.0, 1.0]], dtype=a.dtype), b,
                                   upper=upper, left=left),
       (Leaf((3, 3)), Leaf((3, 3))), {"grad": False})
      for upper in (True, False) for left in (True, False)],
)
add_torch_cases(
    "linalg_lu_factor_ex",
    ("factor", lambda lib, a: tuple(lib.linalg.lu_factor(a)), (Leaf((3, 3)),)),
    ("factor-tall", lambda lib, a: tuple(lib.linalg.lu_factor(a)), (Leaf((4, 2)),)),
    ("factor-wide-batched", lambda lib, a: tuple(lib.linalg.lu_factor(a)), (Leaf((2, 2, 4)),)),
    ("factor-ex-singular", lambda lib, a: tuple(lib.linalg.lu_factor_ex(a * 0)),
     (Leaf((2, 2)),), {"grad": False}),
    ("lu", lambda lib, a: tuple(lib.linalg.lu(a)), (Leaf((3, 3)),)),
    ("lu-tall", lambda lib, a: tuple(lib.linalg.lu(a)), (Leaf((2, 4, 3)),)),
    ("lu-wide", lambda lib, a: tuple(lib.linalg.lu(a)), (Leaf((3, 5)),)),
    ("lu-unpack", lambda lib, a: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a))),
     (Leaf((3, 3)),)),
    ("lu-solve", lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b),
     (Leaf((3, 3)), Leaf((3, 2)))),
    ("lu-solve-adjoint-right", lambda lib, a, b: lib.linalg.lu_solve(
        *lib.linalg.lu_factor(a), b, left=False, adjoint=True), (Leaf((3, 3)), Leaf((2, 3)))),
)
add_torch_cases(
    "linalg_slogdet",
    ("3x3", lambda lib, a: tuple(lib.linalg.slogdet(a)), (Leaf((3, 3)),)),
    ("batched", lambda lib, a: tuple(lib.linalg.slogdet(a)), (Leaf((2, 4, 4)),)),
    ("top-level", lambda lib, a: tuple(lib.slogdet(a)), (Leaf((2, 2)),)),
    ("logdet", lambda lib, a: lib.logdet(_spd_lib(lib, a)), (Leaf((3, 3)),)),
    ("logdet-negative", lambda lib, a: lib.logdet(lib.diag(a * 0 + lib.tensor(
        [-1.0, 2.0], dtype=a.dtype))), (Leaf((2,)),), {"grad": False}),
    ("singular", lambda lib, a: tuple(lib.linalg.slogdet(a * 0)), (Leaf((2, 2)),),
     {"grad": False}),
)
add_torch_cases(
    "linalg_pinv",
    ("tall", lambda lib, a: lib.linalg.pinv(a), (Leaf((4, 3)),)),
    ("wide-batched", lambda lib, a: lib.linalg.pinv(a), (Leaf((2, 2, 3)),)),
    ("hermitian", lambda lib, a: lib.linalg.pinv(a + a.mT, hermitian=True), (Leaf((3, 3)),)),
    ("rank-deficient", lambda lib, a: lib.linalg.pinv(a[:, :1] @ a[:1, :]), (Leaf((3, 3)),),
     {"grad": False}),
    ("rtol", lambda lib, a: lib.linalg.pinv(lib.diag(a), rtol=0.5), (Leaf((3,), values=(
        1.0, 0.1, 3.0)),), {"grad": False}),
    ("atol", lambda lib, a: lib.linalg.pinv(lib.diag(a), atol=0.5), (Leaf((3,), values=(
        1.0, 0.1, 3.0)),), {"grad": False}),
    ("pinverse", lambda lib, a: lib.pinverse(a), (Leaf((3, 2)),)),
    ("rcond-positional", lambda lib, a: lib.linalg.pinv(lib.diag(a), 0.05, True),
     (Leaf((3,), values=(1.0, 0.1, 3.0)),), {"grad": False}),
)
add_torch_cases(
    "linalg_lstsq",
    ("tall", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, (Leaf((4, 2)), Leaf((4, 3)))),
    ("vector", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, (Leaf((4, 2)), Leaf((4,)))),
    ("batched", lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
     (Leaf((2, 4, 2)), Leaf((2, 4, 1)))),
    ("wide", lambda lib, a, b: lib.linalg.lstsq(a, b, driver="gelsd").solution,
     (Leaf((2, 3)), Leaf((2, 1)))),
    *[(f"fields-{d}", lambda lib, a, b, d=d: tuple(lib.linalg.lstsq(a, b, driver=d))[1:],
       (Leaf((4, 2)), Leaf((4, 3))), {"grad": False}) for d in ("gels", "gelsy", "gelsd", "gelss")],
    # Values only: PyTorch's residuals of a batch of vectors require grad
    # (not those of matrices); oxmera's never do (the solution's gradient is
    # compared in "vector" and "batched").
    ("fields-vector-batched", lambda lib, a, b: tuple(lib.linalg.lstsq(a, b, driver="gelsd")),
     (Leaf((3, 4, 2)), Leaf((3, 4))), {"grad": False}),
    ("fields-default", lambda lib, a, b: tuple(lib.linalg.lstsq(a, b)), (Leaf((4, 2)),
                                                                           Leaf((4, 3)))),
    ("rank-deficient", lambda lib, a, b: tuple(lib.linalg.lstsq(
        a[:, :1] @ a[:1, :], b, driver="gelsd")), (Leaf((3, 3)), Leaf((3, 1))), {"grad": False}),
)
add_torch_cases(
    "linalg_matrix_exp",
    ("3x3", lambda lib, a: lib.linalg.matrix_exp(a), (Leaf((3, 3)),)),
    ("batched", lambda lib, a: lib.linalg.matrix_exp(a), (Leaf((2, 2, 2)),)),
    ("top-level", lambda lib, a: lib.matrix_exp(a), (Leaf((2, 2)),)),
)
add_torch_cases(
    "linalg.matrix_power",
    ("3", lambda lib, a: lib.linalg.matrix_power(a, 3), (Leaf((3, 3)),)),
    ("0", lambda lib, a: lib.linalg.matrix_power(a, 0), (Leaf((2, 2, 2)),)),
    ("-3", lambda lib, a: lib.linalg.matrix_power(_cond_lib(lib, a), -3), (Leaf((3, 3)),)),
    ("method", lambda lib, a: a.matrix_power(2), (Leaf((2, 2)),)),
)
add_torch_cases(
    "linalg_matrix_rank",
    ("full", lambda lib, a: lib.linalg.matrix_rank(a), (Leaf((3, 4)),), {"grad": False}),
    ("deficient", lambda lib, a: lib.linalg.matrix_rank(a[:, :1] @ a[:1, :]), (Leaf((2, 3, 3)),),
     {"grad": False}),
    ("hermitian-atol", lambda lib, a: lib.linalg.matrix_rank(lib.diag(a), atol=0.5,
                                                             hermitian=True),
     (Leaf((3,), values=(1.0, -0.1, 3.0)),), {"grad": False}),
    ("rtol", lambda lib, a: lib.linalg.matrix_rank(lib.diag(a), rtol=0.5),
     (Leaf((3,), values=(1.0, -0.1, 3.0)),), {"grad": False}),
    ("tol-positional", lambda lib, a: lib.linalg.matrix_rank(lib.diag(a), 0.5, True),
     (Leaf((3,), values=(1.0, -0.1, 3.0)),), {"grad": False}),
)
add_torch_cases(
    "linalg.cond",
    ("2", lambda lib, a: lib.linalg.cond(a), (Leaf((3, 3)),)),
    ("-2-tall", lambda lib, a: lib.linalg.cond(a, -2), (Leaf((2, 4, 2)),)),
    ("p-nuc", lambda lib, a: lib.linalg.cond(a, "nuc"), (Leaf((3, 3)),)),
    # PyTorch 2.13's own backward fails for these p (its cond writes in place
    # into an output its backward needs): values only; the gradient is
    # checked by the composite gradient cases.
    *[(f"p-{p}", lambda lib, a, p=p: lib.linalg.cond(a, p), (Leaf((3, 3)),), {"grad": False})
      for p in ("fro", INF, -INF, 1, -1)],
    ("singular-fro", lambda lib, a: lib.linalg.cond(a * 0, "fro"), (Leaf((2, 2)),),
     {"grad": False}),
)
add_torch_cases(
    "linalg.vecdot",
    ("broadcast", lambda lib, x, y: lib.linalg.vecdot(x, y), (Leaf((2, 3)), Leaf((3,)))),
    ("dim", lambda lib, x, y: lib.linalg.vecdot(x, y, dim=0), (Leaf((3, 2)), Leaf((3, 1)))),
)
add_torch_cases(
    "linalg.tensorinv",
    ("ind-2", lambda lib, a: lib.linalg.tensorinv(_cond_lib(lib, a).reshape(2, 2, 4)),
     (Leaf((4, 4)),)),
    ("ind-1", lambda lib, a: lib.linalg.tensorinv(_cond_lib(lib, a).reshape(6, 2, 3), ind=1),
     (Leaf((6, 6)),)),
)
add_torch_cases(
    "linalg.tensorsolve",
    ("plain", lambda lib, a, b: lib.linalg.tensorsolve(_cond_lib(lib, a).reshape(2, 3, 6), b),
     (Leaf((6, 6)), Leaf((2, 3)))),
    ("dims", lambda lib, a, b: lib.linalg.tensorsolve(
        _cond_lib(lib, a).reshape(6, 2, 3), b, dims=(0,)), (Leaf((6, 6)), Leaf((2, 3)))),
)
add_torch_cases(
    "linalg.inv_ex",
    ("ok", lambda lib, a: tuple(lib.linalg.inv_ex(_cond_lib(lib, a))), (Leaf((2, 3, 3)),)),
    ("singular-info", lambda lib, a: lib.linalg.inv_ex(a * lib.tensor(
        [[[1.0]], [[0.0]]], dtype=a.dtype)).info, (Leaf((2, 2, 2)),), {"grad": False}),
    ("solve-ex", lambda lib, a, b: tuple(lib.linalg.solve_ex(_cond_lib(lib, a), b)),
     (Leaf((3, 3)), Leaf((3, 2)))),
)

# -- cholesky_solve / cholesky_inverse, vander, diagonal, matmul, det, inverse ----------------

COMPOSITE_CASES.extend([
    Case("composite:cholesky-solve", lambda a, b: oxmera.cholesky_solve(b, LA.cholesky(_spd(a))),
         (Leaf((3, 3)), Leaf((3, 2)))),
    Case("composite:cholesky-solve-upper-broadcast", lambda a, b: oxmera.cholesky_solve(
        b, LA.cholesky(_spd(a), upper=True), upper=True), (T((3, 3)), Leaf((2, 3, 1)))),
    Case("composite:cholesky-inverse", lambda a: oxmera.cholesky_inverse(LA.cholesky(_spd(a))),
         (Leaf((2, 3, 3)),)),
    Case("composite:cholesky-inverse-method", lambda a: LA.cholesky(
        _spd(a), upper=True).cholesky_inverse(upper=True), (Leaf((2, 2)),)),
    Case("composite:vander", LA.vander, (Leaf((3,)),)),
    Case("composite:vander-zero", lambda x: LA.vander(x, N=4), (Leaf((2, 3), values=(
        0.0, 1.5, -2.0, 0.5, 0.0, 1.0)),)),
    Case("composite:linalg-diagonal", lambda a: LA.diagonal(a, offset=1), (S((2, 3, 3)),)),
])
add_torch_cases(
    "cholesky_solve",
    ("lower", lambda lib, a, b: lib.cholesky_solve(b, lib.linalg.cholesky(_spd_lib(lib, a))),
     (Leaf((3, 3)), Leaf((3, 2)))),
    ("upper-batched", lambda lib, a, b: lib.cholesky_solve(
        b, lib.linalg.cholesky(_spd_lib(lib, a), upper=True), upper=True),
     (Leaf((2, 3, 3)), Leaf((2, 3, 1)))),
    ("inverse", lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(_spd_lib(lib, a))),
     (Leaf((3, 3)),)),
    ("inverse-upper-method", lambda lib, a: lib.linalg.cholesky(
        _spd_lib(lib, a), upper=True).cholesky_inverse(upper=True), (Leaf((2, 2)),)),
)
add_torch_cases(
    "linalg.vander",
    ("default", lambda lib, x: lib.linalg.vander(x), (Leaf((2, 3)),)),
    ("N-zero", lambda lib, x: lib.linalg.vander(x, N=4), (Leaf((3,), values=(0.0, 2.0, -1.0)),)),
)
add_torch_cases(
    "linalg.aliases",
    ("diagonal", lambda lib, a: lib.linalg.diagonal(a, offset=-1), (Leaf((2, 3, 4)),)),
    ("matmul", lambda lib, a, b: lib.linalg.matmul(a, b), (Leaf((2, 3)), Leaf((3, 2)))),
    ("det", lambda lib, a: lib.det(a), (Leaf((3, 3)),)),
    ("inverse", lambda lib, a: lib.inverse(_cond_lib(lib, a)), (Leaf((3, 3)),)),
)
