"""Gradient cases and PyTorch comparisons of the decompositions on complex
inputs (see ``_case_table``; ``C`` is a complex128 leaf): cholesky, eigh, qr,
solve_triangular, ...

Hermitian inputs are built inside each function (``A A^H + n I``, ``A +
A^H``), as these gradients are the Hermitian ones; losses through
eigenvectors use only phase-free quantities (``abs(V)``, projectors), the only
ones with a defined gradient (PyTorch raises otherwise, and so does oxmera:
checked in test_complex_linalg.py).
"""
import oxmera

from ._case_table import COMPOSITE_CASES, C, Case, Leaf, add_cases, add_torch_cases

LA = oxmera.linalg


def _h(lib, a):
    """``a^H`` in either library."""
    return lib.conj_physical(a).mT


def _hpd(lib, a):
    """A Hermitian positive-definite matrix from any square ``a``."""
    n = a.shape[-1]
    return a @ _h(lib, a) + n * lib.eye(n, dtype=a.dtype)


def _herm(lib, a):
    return a + _h(lib, a)


def _conditioned(lib, a):
    n = a.shape[-1]
    return a + 2.0 * n * lib.eye(n, dtype=a.dtype)


# -- cholesky --------------------------------------------------------------------------------

def _cholesky(lib, a, upper=False):
    return lib.linalg.cholesky(_hpd(lib, a), upper=upper)


add_cases(
    "linalg_cholesky_ex",
    ("complex", lambda a: _cholesky(oxmera, a), (C((3, 3)),)),
    ("complex-upper", lambda a: _cholesky(oxmera, a, True), (C((3, 3)),)),
    ("complex-batched-transposed", lambda a: _cholesky(oxmera, a),
     (C((2, 3, 3), layout="transposed"),)),
    ("complex-ex-strided", lambda a: LA.cholesky_ex(_hpd(oxmera, a)).L,
     (C((2, 2), layout="strided"),)),
    ("complex-legacy-upper", lambda a: oxmera.cholesky(_hpd(oxmera, a), True), (C((2, 2)),)),
    ("complex-size-0", lambda a: _cholesky(oxmera, a), (C((0, 2, 2)),)),
)
add_torch_cases(
    "linalg_cholesky_ex",
    ("complex", _cholesky, (C((3, 3)),)),
    ("complex-upper", lambda lib, a: _cholesky(lib, a, True), (C((2, 3, 3)),)),
    ("complex-ex", lambda lib, a: tuple(lib.linalg.cholesky_ex(_hpd(lib, a))), (C((2, 2)),)),
    ("complex-ex-failing", lambda lib, a: lib.linalg.cholesky_ex(
        a - 10 * lib.eye(3, dtype=a.dtype)).info, (C((3, 3)),), {"grad": False}),
)


# -- eigh, eigvalsh --------------------------------------------------------------------------

def _eigh_invariants(lib, a, UPLO="L"):
    L, V = lib.linalg.eigh(_herm(lib, a), UPLO=UPLO)
    return L, (V * L.unsqueeze(-2).exp()) @ _h(lib, V), V.abs()


add_cases(
    "linalg_eigh",
    ("complex", lambda a: _eigh_invariants(oxmera, a), (C((3, 3)),)),
    ("complex-upper-batched", lambda a: _eigh_invariants(oxmera, a, "U"), (C((2, 3, 3)),)),
    ("complex-transposed", lambda a: _eigh_invariants(oxmera, a),
     (C((3, 3), layout="transposed"),)),
    ("complex-strided", lambda a: _eigh_invariants(oxmera, a), (C((2, 2), layout="strided"),)),
    ("complex-size-0", lambda a: _eigh_invariants(oxmera, a), (C((0, 2, 2)),)),
    ("complex-eigvalsh", lambda a: LA.eigvalsh(_herm(oxmera, a)), (C((3, 3)),)),
)
add_torch_cases(
    "linalg_eigh",
    ("complex", _eigh_invariants, (C((3, 3)),)),
    ("complex-upper-batched", lambda lib, a: _eigh_invariants(lib, a, "U"), (C((2, 3, 3)),)),
    ("complex-eigvalsh", lambda lib, a: lib.linalg.eigvalsh(_herm(lib, a)), (C((4, 4)),)),
    ("complex-uplo-reads-one-triangle", lambda lib, a: lib.linalg.eigvalsh(a, UPLO="U"),
     (C((3, 3)),), {"grad": False}),
)


# -- qr --------------------------------------------------------------------------------------

add_cases(
    "linalg_qr",
    ("complex-square", LA.qr, (C((3, 3)),)),
    ("complex-tall", LA.qr, (C((4, 2)),)),
    ("complex-wide", LA.qr, (C((2, 4)),)),
    ("complex-batched-transposed", LA.qr, (C((2, 3, 2), layout="transposed"),)),
    ("complex-complete-wide", lambda a: LA.qr(a, mode="complete"), (C((2, 3), layout="strided"),)),
    ("complex-size-0", LA.qr, (C((0, 3, 2)),)),
)
add_torch_cases(
    "linalg_qr",
    ("complex-tall", lambda lib, a: tuple(lib.linalg.qr(a)), (C((4, 3)),)),
    ("complex-wide", lambda lib, a: tuple(lib.linalg.qr(a)), (C((2, 2, 4)),)),
    ("complex-complete", lambda lib, a: tuple(lib.linalg.qr(a, mode="complete")), (C((3, 3)),)),
)


# -- solve_triangular ------------------------------------------------------------------------

def _tri(lib, A, B, **kw):
    return lib.linalg.solve_triangular(_conditioned(lib, A), B, **kw)


add_cases(
    "linalg_solve_triangular",
    ("complex-upper", lambda A, B: _tri(oxmera, A, B, upper=True), (C((3, 3)), C((3, 2)))),
    ("complex-lower-right", lambda A, B: _tri(oxmera, A, B, upper=False, left=False),
     (C((3, 3)), C((2, 3)))),
    ("complex-unitriangular", lambda A, B: _tri(oxmera, A, B, upper=True, unitriangular=True),
     (C((3, 3), layout="transposed"), C((3, 2), layout="strided"))),
    ("complex-real-B", lambda A, B: _tri(oxmera, A, B, upper=False), (C((2, 3, 3)), Leaf((3, 1)))),
    ("real-complex-B", lambda A, B: _tri(oxmera, A, B, upper=True, left=False),
     (Leaf((3, 3)), C((2, 3)))),
    ("complex-size-0", lambda A, B: _tri(oxmera, A, B, upper=True), (C((3, 3)), C((3, 0)))),
)
add_torch_cases(
    "linalg_solve_triangular",
    ("complex-upper", lambda lib, A, B: _tri(lib, A, B, upper=True), (C((3, 3)), C((3, 2)))),
    ("complex-lower-right-unit", lambda lib, A, B: _tri(lib, A, B, upper=False, left=False,
                                                      unitriangular=True),
     (C((2, 3, 3)), C((2, 2, 3)))),
)


# -- slogdet, logdet, matrix_exp -------------------------------------------------------------

add_cases(
    "linalg_slogdet",
    ("complex", LA.slogdet, (C((3, 3)),)),
    ("complex-batched-transposed", LA.slogdet, (C((2, 3, 3), layout="transposed"),)),
    ("complex-sign-only", lambda a: LA.slogdet(a).sign, (C((2, 2), layout="strided"),)),
    ("complex-logdet", oxmera.logdet, (C((3, 3)),)),
    ("complex-size-0", LA.slogdet, (C((0, 2, 2)),)),
)
add_torch_cases(
    "linalg_slogdet",
    ("complex", lambda lib, a: tuple(lib.linalg.slogdet(a)), (C((3, 3)),)),
    ("complex-batched", lambda lib, a: tuple(lib.linalg.slogdet(a)), (C((2, 4, 4)),)),
    ("complex-logdet", lambda lib, a: lib.logdet(a), (C((3, 3)),)),
)
add_cases(
    "linalg_matrix_exp",
    ("complex", LA.matrix_exp, (C((3, 3)),)),
    ("complex-batched-transposed", LA.matrix_exp, (C((2, 2, 2), layout="transposed"),)),
    ("complex-strided", LA.matrix_exp, (C((2, 2), layout="strided"),)),
)
add_torch_cases(
    "linalg_matrix_exp",
    ("complex", lambda lib, a: lib.linalg.matrix_exp(a), (C((3, 3)),)),
)


# -- svd, svdvals: losses through phase-free quantities ---------------------------------------

def _svd_invariants(lib, a, full=False):
    U, S_, Vh = lib.linalg.svd(a, full_matrices=full)
    k = S_.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return S_, U.abs(), Vh.abs(), (U * S_.unsqueeze(-2)) @ Vh, U @ _h(lib, U)


add_cases(
    "linalg_svd",
    ("complex-square", lambda a: _svd_invariants(oxmera, a), (C((3, 3)),)),
    ("complex-tall", lambda a: _svd_invariants(oxmera, a), (C((4, 2)),)),
    ("complex-wide-full", lambda a: _svd_invariants(oxmera, a, True), (C((2, 3)),)),
    ("complex-batched-transposed", lambda a: _svd_invariants(oxmera, a),
     (C((2, 3, 2), layout="transposed"),)),
    ("complex-u-only", lambda a: LA.svd(a, full_matrices=False).U.abs(), (C((3, 2)),)),
    ("complex-vh-only", lambda a: LA.svd(a, full_matrices=False).Vh.abs(),
     (C((2, 3), layout="strided"),)),
    ("complex-svdvals", LA.svdvals, (C((3, 2)),)),
    ("complex-legacy", lambda a: (lambda r: (r.U * r.S.unsqueeze(-2)) @ _h(oxmera, r.V))(
        oxmera.svd(a)), (C((3, 2)),)),
    ("complex-size-0", lambda a: _svd_invariants(oxmera, a), (C((0, 2, 3)),)),
)
add_torch_cases(
    "linalg_svd",
    ("complex-tall", _svd_invariants, (C((4, 2)),)),
    ("complex-wide-full", lambda lib, a: _svd_invariants(lib, a, True), (C((2, 2, 3)),)),
    ("complex-svdvals", lambda lib, a: lib.linalg.svdvals(a), (C((3, 4)),)),
    ("complex-legacy", lambda lib, a: (lambda r: ((r.U * r.S.unsqueeze(-2)) @ _h(lib, r.V),
                                                  r.S))(lib.svd(a)), (C((3, 2)),)),
    ("complex-legacy-no-uv", lambda lib, a: tuple(lib.svd(a, compute_uv=False)), (C((3, 2)),)),
)


# -- pinv, lstsq, matrix_rank ----------------------------------------------------------------

add_cases(
    "linalg_pinv",
    ("complex-tall", LA.pinv, (C((4, 2)),)),
    ("complex-wide-batched", LA.pinv, (C((2, 2, 3)),)),
    ("complex-hermitian", lambda a: LA.pinv(_herm(oxmera, a), hermitian=True),
     (C((3, 3), layout="transposed"),)),
    ("complex-pinverse", oxmera.pinverse, (C((2, 3), layout="strided"),)),
    ("complex-size-0", LA.pinv, (C((0, 3)),)),
)
add_torch_cases(
    "linalg_pinv",
    ("complex-tall", lambda lib, a: lib.linalg.pinv(a), (C((4, 3)),)),
    ("complex-wide", lambda lib, a: lib.linalg.pinv(a), (C((2, 2, 3)),)),
    ("complex-hermitian", lambda lib, a: lib.linalg.pinv(_herm(lib, a), hermitian=True),
     (C((3, 3)),)),
)
add_cases(
    "linalg_lstsq",
    ("complex-tall", lambda a, b: LA.lstsq(a, b).solution, (C((4, 2)), C((4, 3)))),
    ("complex-vector", lambda a, b: LA.lstsq(a, b).solution, (C((4, 2)), C((4,)))),
    ("complex-wide", lambda a, b: LA.lstsq(a, b, driver="gelsd").solution,
     (C((2, 3), layout="transposed"), C((2, 2)))),
    ("real-complex", lambda a, b: LA.lstsq(a, b).solution, (Leaf((4, 2)), C((4, 1)))),
    ("complex-size-0", lambda a, b: LA.lstsq(a, b).solution, (C((0, 3, 2)), C((0, 3, 1)))),
)
add_torch_cases(
    "linalg_lstsq",
    ("complex-tall", lambda lib, a, b: lib.linalg.lstsq(a, b).solution, (C((4, 2)), C((4, 3)))),
    ("complex-batched", lambda lib, a, b: lib.linalg.lstsq(a, b).solution,
     (C((2, 4, 2)), C((2, 4, 1)))),
    *[(f"complex-fields-{d}", lambda lib, a, b, d=d: tuple(lib.linalg.lstsq(a, b, driver=d))[1:],
       (C((4, 2)), C((4, 3))), {"grad": False}) for d in ("gelsy", "gelsd", "gelss")],
)
add_torch_cases(
    "linalg_matrix_rank",
    ("complex", lambda lib, a: lib.linalg.matrix_rank(a[:, :1] @ a[:1, :]), (C((3, 3)),),
     {"grad": False}),
    ("complex-hermitian", lambda lib, a: lib.linalg.matrix_rank(a @ _h(lib, a), hermitian=True),
     (C((3, 2)),), {"grad": False}),
)


# -- norms and cond (composed of svd and others) -----------------------------------------------

for _k, _ord in enumerate(["fro", "nuc", 2, -2, 1, float("inf")]):
    add_torch_cases("linalg_svd", (f"complex-matrix-norm-{_k}",
                                   lambda lib, a, o=_ord: lib.linalg.matrix_norm(a, o),
                                   (C((3, 4)),)))
for _k, _p in enumerate([None, 2, "nuc", -2]):
    add_torch_cases("linalg_svd", (f"complex-cond-{_k}", lambda lib, a, p=_p: lib.linalg.cond(a, p),
                                   (C((3, 3)),)))
# PyTorch's own backward of cond(A, 'fro') and cond(A, 1) fails (an in-place write):
# values only.
for _k, _p in enumerate(["fro", 1]):
    add_torch_cases("linalg_inv", (f"complex-cond-values-{_k}",
                                   lambda lib, a, p=_p: lib.linalg.cond(a, p), (C((3, 3)),),
                                   {"grad": False}))
COMPOSITE_CASES.extend([
    Case("composite:complex-cond", LA.cond, (C((3, 3)),)),
    Case("composite:complex-cond-fro", lambda a: LA.cond(a, "fro"), (C((2, 3, 3)),)),
    Case("composite:complex-matrix-norm-2", lambda a: LA.matrix_norm(a, 2), (C((3, 2)),)),
    Case("composite:complex-matrix-norm-nuc", lambda a: LA.matrix_norm(a, "nuc"),
         (C((2, 3), layout="transposed"),)),
    Case("composite:complex-cholesky-solve", lambda a, b: oxmera.cholesky_solve(
        b, LA.cholesky(_hpd(oxmera, a))), (C((3, 3)), C((3, 2)))),
    Case("composite:complex-cholesky-inverse", lambda a: oxmera.cholesky_inverse(
        LA.cholesky(_hpd(oxmera, a)), upper=False), (C((3, 3)),)),
])
add_torch_cases(
    "linalg_solve_triangular",
    *[(f"complex-cholesky-solve-{upper}", lambda lib, a, b, u=upper: lib.cholesky_solve(
        b, lib.linalg.cholesky(_hpd(lib, a), upper=u), u), (C((3, 3)), C((3, 2))))
      for upper in (False, True)],
    ("complex-cholesky-inverse", lambda lib, a: lib.cholesky_inverse(
        lib.linalg.cholesky(_hpd(lib, a))), (C((3, 3)),)),
)


# -- LU ----------------------------------------------------------------------------------------

add_cases(
    "linalg_lu_factor_ex",
    ("complex-factor", lambda a: LA.lu_factor(a).LU, (C((3, 3)),)),
    ("complex-lu-tall", lambda a: LA.lu(a)[1:], (C((4, 3), layout="transposed"),)),
    ("complex-lu-wide", lambda a: LA.lu(a)[1:], (C((2, 3), layout="strided"),)),
    ("complex-lu-batched", lambda a: LA.lu(a)[1:], (C((2, 3, 3)),)),
    ("complex-lu-solve", lambda a, b: LA.lu_solve(*LA.lu_factor(_conditioned(oxmera, a)), b),
     (C((3, 3)), C((3, 2)))),
    ("complex-lu-solve-adjoint-right", lambda a, b: LA.lu_solve(
        *LA.lu_factor(_conditioned(oxmera, a)), b, left=False, adjoint=True),
     (C((3, 3)), C((2, 3)))),
    ("complex-size-0", lambda a: LA.lu_factor(a).LU, (C((0, 2, 2)),)),
)
add_torch_cases(
    "linalg_lu_factor_ex",
    ("complex-factor", lambda lib, a: tuple(lib.linalg.lu_factor(a)), (C((3, 3)),)),
    ("complex-lu-tall", lambda lib, a: tuple(lib.linalg.lu(a)), (C((2, 4, 3)),)),
    ("complex-lu-wide", lambda lib, a: tuple(lib.linalg.lu(a)), (C((3, 5)),)),
    # (* 1: PyTorch returns a lazily conjugated view here, which its own
    # view_as_real, used by the comparison's gradient, refuses.)
    *[(f"complex-lu-solve-{left}-{adjoint}", lambda lib, a, b, left=left, adjoint=adjoint:
       lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, left=left, adjoint=adjoint) * 1,
       (C((3, 3)), C((3, 3)))) for left in (True, False) for adjoint in (True, False)],
)
