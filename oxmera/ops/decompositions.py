"""The matrix decompositions and the functions built on them behind
``oxmera.linalg`` (as ``torch.linalg``), for float32 and float64 inputs.

Primitives with VJPs of their own (PyTorch's formulas, written with oxmera
ops so they differentiate again): eigh, cholesky, qr, lu_factor, slogdet,
solve_triangular, pinv, the least-squares solution and matrix_exp (svd is
in ``oxmera.ops.linalg``). Everything else (eigvalsh, lu, lu_solve, logdet,
matrix_power, cond, vecdot, tensorinv, tensorsolve, inv_ex, solve_ex, the
legacy ``oxmera.svd`` / ``cholesky`` / ``qr`` / ``lu_unpack``) is composed
of them. matrix_rank is not differentiable.

Complex dtypes do not exist yet, so ``eig``/``eigvals`` (complex results for
a general real matrix) are not provided. lu_factor and matrix_exp compute
with SciPy (``pip install oxmera[scipy]``); everything else with NumPy.

``__all__`` lists what is also ``oxmera.NAME`` (PyTorch's top-level names);
the ``oxmera.linalg`` names are re-exported there.
"""
import collections
import math
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops import shape as _shape
from oxmera.ops.construction import diag_embed
from oxmera.ops.creation import eye, tensor, zeros
from oxmera.ops.elementwise import where
from oxmera.ops.linalg import (LinAlgError, _absent, _as_tensor, _check_square, _shape_of, _svd,
                               inv, solve)

__all__ = ["svd", "cholesky", "qr", "slogdet", "logdet", "matrix_power", "matrix_exp",
           "pinverse", "lu_unpack"]

#: The ``oxmera.linalg`` names that differ from PyTorch's top-level ones of
#: the same name (``torch.svd`` returns V, ``torch.qr`` takes ``some``).
LINALG_NAMES = ("linalg_svd", "linalg_cholesky", "linalg_qr")

OpError = _core.OpError
Tensor = _core.Tensor




def _result_type(name, fields):
    kind = collections.namedtuple(name, fields)
    kind.__module__ = "oxmera.return_types"
    return kind


def _check_matrix(shape, opname, what="the input"):
    if len(shape) < 2:
        raise OpError(f"{opname}(): {what} must have at least 2 dimensions, got shape "
                      f"{tuple(shape)}")


def _scipy_linalg(opname):
    try:
        import scipy.linalg
    except ImportError:
        raise ImportError(f"{opname}() computes with SciPy, which is not installed: "
                          f"pip install oxmera[scipy]") from None
    return scipy.linalg


def _unsqueeze2(x):
    return x.unsqueeze(-1).unsqueeze(-1)


def _batch_label(index, batch_shape):
    return f"(Batch element {np.ravel_multi_index(index, batch_shape)}): " if batch_shape else ""


# -- svd -------------------------------------------------------------------------------------

def linalg_svd(A, full_matrices=True, *, driver=None):
    """Singular value decomposition ``A = U diag(S) Vh``: ``oxmera.linalg.svd``.

    A named tuple ``(U, S, Vh)``: ``S`` is ``(*, k)`` descending, ``k =
    min(m, n)``; ``U`` is ``(*, m, m)`` and ``Vh`` ``(*, n, n)`` with
    ``full_matrices=True`` (the default, as PyTorch's), ``(*, m, k)`` and
    ``(*, k, n)`` otherwise. ``driver`` (a CUDA option in PyTorch) must be None.

    The gradient is PyTorch's ``svd_backward``: with ``full_matrices=True``
    only the first ``k`` columns of ``U`` (rows of ``Vh``) carry gradient, the
    others are not unique. The singular vectors are unique only up to sign,
    so only a loss that does not depend on those signs has a well-defined
    gradient; for real inputs, as in PyTorch, this is not checked (PyTorch's
    gauge check concerns the complex phase). Through ``U`` or ``Vh`` the
    gradient divides by ``S_i^2 - S_j^2``: at repeated singular values it is
    inf/nan, as PyTorch's and as documented there; through ``S`` alone it is
    ``U diag(gS) Vh``, finite everywhere.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[3.0, 0.0], [0.0, -4.0], [0.0, 0.0]])
    >>> U, S, Vh = oxmera.linalg.svd(A)
    >>> S
    tensor([4., 3.], dtype=float32)
    >>> tuple(U.shape), tuple(Vh.shape)
    ((3, 3), (2, 2))
    >>> tuple(oxmera.linalg.svd(A, full_matrices=False).U.shape)
    (3, 2)
    """
    if driver is not None:
        raise OpError(f"linalg.svd(): driver={driver!r} is a CUDA option; on the CPU it must "
                      f"be None")
    return _svd(A, full_matrices)


_LegacySVD = _result_type("svd", ("U", "S", "V"))


def svd(input, some=True, compute_uv=True):
    """``torch.svd``: ``(U, S, V)`` with ``V`` (not ``Vh``), reduced unless
    ``some=False``; with ``compute_uv=False``, ``U`` and ``V`` are zero
    ``(m, m)`` and ``(n, n)`` matrices. Prefer :func:`oxmera.linalg.svd`.

    Examples
    --------
    >>> import oxmera
    >>> U, S, V = oxmera.svd(oxmera.tensor([[0.0, 2.0], [1.0, 0.0]]))
    >>> S
    tensor([2., 1.], dtype=float32)
    >>> V.abs()
    tensor([[0., 1.],
            [1., 0.]], dtype=float32)
    """
    A = _as_tensor(input)
    if not compute_uv:
        _check_matrix(A.shape, "svd")
        S = _svd(A).S
        m, n = A.shape[-2], A.shape[-1]
        batch = tuple(A.shape[:-2])
        return _LegacySVD(zeros(batch + (m, m), dtype=S.dtype), S,
                          zeros(batch + (n, n), dtype=S.dtype))
    U, S, Vh = _svd(A, not some)
    return _LegacySVD(U, S, Vh.mT)



# -- eigh, eigvalsh ----------------------------------------------------------------------------

@op("linalg_eigh", save=(), save_output=True, float_only=True,
    outputs=("eigenvalues", "eigenvectors"))
def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of a
    symmetric matrix: ``oxmera.linalg.eigh``.

    Only the triangle ``UPLO`` (``'L'`` or ``'U'``) is read. The gradient is
    PyTorch's: ``V (diag(gL) + skew(V^T gV) / E) V^T`` with ``E_ij = L_j -
    L_i``, symmetric whatever the input. The eigenvectors are unique only up
    to sign (and, at a repeated eigenvalue, up to a rotation of their
    eigenspace): a loss through them divides by ``L_j - L_i``, inf/nan at
    repeated eigenvalues, as in PyTorch; through the eigenvalues alone it is
    finite everywhere.

    Examples
    --------
    >>> import oxmera
    >>> L, V = oxmera.linalg.eigh(oxmera.tensor([[2.0, 1.0], [1.0, 2.0]]))
    >>> L
    tensor([1., 3.], dtype=float32)
    """
    _check_square(A.shape, "linalg.eigh")
    if UPLO not in ("L", "U"):
        raise OpError(f"linalg.eigh(): UPLO must be 'L' or 'U', got {UPLO!r}")
    values, vectors = np.linalg.eigh(A, UPLO=UPLO)
    return values, vectors


@eigh.vjp
def _(ctx, grads, A, UPLO="L"):
    grad_l, grad_v = grads
    L, V = ctx.output
    if _absent(grad_v):
        return (V * grad_l.unsqueeze(-2)) @ V.mT
    product = V.mT @ grad_v
    skew = 0.5 * (product - product.mT)
    n = L.shape[-1]
    E = where(np.eye(n, dtype=bool), 1.0, L.unsqueeze(-2) - L.unsqueeze(-1))
    return V @ (skew / E + diag_embed(grad_l)) @ V.mT


def eigvalsh(A, UPLO="L"):
    """Eigenvalues (ascending) of a symmetric matrix: ``oxmera.linalg.eigvalsh``.

    Only the triangle ``UPLO`` is read; the gradient ``V diag(gL) V^T`` is
    finite at repeated eigenvalues too.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.eigvalsh(oxmera.tensor([[2.0, 1.0], [1.0, 2.0]]))
    tensor([1., 3.], dtype=float32)
    """
    return eigh(A, UPLO).eigenvalues


# -- cholesky --------------------------------------------------------------------------------

def _cholesky_info(a, upper):
    """The order of the first leading minor that is not positive-definite
    (0 when there is none) of one matrix, as LAPACK's ``potrf`` reports it."""
    if upper:
        a = a.T
    for k in range(1, a.shape[-1] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


@op("linalg_cholesky_ex", save=(), save_output=True, float_only=True, outputs=("L", "info"))
def _cholesky_ex(A, upper=False, check_errors=False):
    """The recorded op behind :func:`cholesky` and :func:`cholesky_ex`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.decompositions import _cholesky_ex
    >>> _cholesky_ex(4 * oxmera.eye(2)).L
    tensor([[2., 0.],
            [0., 2.]], dtype=float32)
    """
    _check_square(A.shape, "linalg.cholesky")
    batch = A.shape[:-2]
    info = np.zeros(batch, dtype=np.int32)
    try:
        return np.linalg.cholesky(A, upper=upper), info
    except np.linalg.LinAlgError:
        pass
    # One matrix at least is not positive-definite: factor one by one, the
    # failing ones left NaN (PyTorch leaves them unspecified).
    out = np.full(A.shape, np.nan, dtype=A.dtype)
    for index in np.ndindex(*batch):
        try:
            out[index] = np.linalg.cholesky(A[index], upper=upper)
        except np.linalg.LinAlgError:
            info[index] = _cholesky_info(A[index], upper)
            if check_errors:
                raise LinAlgError(
                    f"linalg.cholesky(): {_batch_label(index, batch)}The factorization could "
                    f"not be completed because the input is not positive-definite (the leading "
                    f"minor of order {info[index]} is not positive-definite)") from None
    return out, info


@_cholesky_ex.vjp
def _(ctx, grads, A, upper=False, check_errors=False):
    # PyTorch's cholesky_backward (Murray 2016): gA = L^-T Phi(L^T gL) L^-1,
    # Phi taking the lower triangle with the diagonal halved, symmetrized.
    L = ctx.output[0]
    grad = grads[0]
    if upper:
        L, grad = L.mT, grad.mT
    gA = (L.mT @ grad).tril()
    gA = 0.5 * (gA + gA.tril(-1).mT)
    gA = solve_triangular(L.mT, gA, upper=True)
    return solve_triangular(L, gA, upper=False, left=False)


def linalg_cholesky(A, *, upper=False):
    """Cholesky factor of a symmetric positive-definite matrix:
    ``oxmera.linalg.cholesky``.

    ``L`` lower-triangular with ``A = L L^T`` (``upper=True``: ``U`` with
    ``A = U^T U``); only that triangle of ``A`` is read. A matrix that is not
    positive-definite is a :class:`LinAlgError` naming the leading minor at
    fault. The gradient is PyTorch's (symmetric).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.cholesky(oxmera.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]], dtype=float32)
    """
    return _cholesky_ex(A, upper, True).L


def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`cholesky` that reports failure instead of raising:
    ``oxmera.linalg.cholesky_ex``, a named tuple ``(L, info)``.

    ``info`` (int32, one per matrix) is 0 or the order of the first leading
    minor that is not positive-definite; ``L`` of such a matrix is not a
    factorization (NaN here). ``check_errors=True`` raises as :func:`cholesky`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.cholesky_ex(oxmera.tensor([[1.0, 2.0], [2.0, 1.0]])).info
    tensor(2, dtype=int32)
    """
    return _cholesky_ex(A, upper, check_errors)


def cholesky(input, upper=False):
    """``torch.cholesky``: :func:`oxmera.linalg.cholesky` with ``upper``
    positional. Prefer ``oxmera.linalg.cholesky``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cholesky(oxmera.tensor([[4.0, 2.0], [2.0, 2.0]]), True)
    tensor([[2., 1.],
            [0., 1.]], dtype=float32)
    """
    return linalg_cholesky(input, upper=upper)


# -- qr --------------------------------------------------------------------------------------

@op("linalg_qr", save=(), save_output=True, float_only=True, outputs=("Q", "R"))
def _qr(A, mode="reduced"):
    """The recorded op behind :func:`qr`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.decompositions import _qr
    >>> _qr(oxmera.eye(2)).R
    tensor([[1., 0.],
            [0., 1.]], dtype=float32)
    """
    _check_matrix(A.shape, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise OpError(f"linalg.qr(): mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    if mode == "r":
        return np.empty((0,), dtype=A.dtype), np.linalg.qr(A, mode="r")
    Q, R = np.linalg.qr(A, mode=mode)
    return Q, R


@_qr.vjp
def _(ctx, grads, A, mode="reduced"):
    if mode == "r":
        raise OpError("linalg.qr(): the derivative of linalg.qr depends on Q, which is not "
                      "computed when mode='r'. Use mode='reduced' to differentiate through it")
    Q, R = ctx.output
    grad_q, grad_r = grads
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise OpError(f"linalg.qr(): the QR decomposition is not differentiable when "
                      f"mode='complete' and nrows > ncols (got {m} x {n})")
    if m >= n:
        return _qr_backward_tall(Q, R, grad_q, grad_r)
    # Wide: A = Q [R1 R2] with Q R1 the QR of the first m columns X and
    # R2 = Q^T Y for the others: Y's gradient is Q gR2, and X's that of a
    # square QR with gQ + Y gR2^T.
    R1, grad_r1, grad_r2 = R[..., :m], grad_r[..., :m], grad_r[..., m:]
    Y = (Q @ R)[..., m:]
    grad_x = _qr_backward_tall(Q, R1, grad_q + Y @ grad_r2.mT, grad_r1)
    return _shape.cat([grad_x, Q @ grad_r2], -1)


def _qr_backward_tall(Q, R, grad_q, grad_r):
    # m >= n: M = R gR^T - gQ^T Q; gA = (gQ + Q copyltu(M)) R^-T, copyltu
    # mirroring the lower triangle onto the upper one (the same gradient as
    # PyTorch's linalg_qr_backward).
    M = R @ grad_r.mT - grad_q.mT @ Q
    M = M.tril() + M.tril(-1).mT
    return solve_triangular(R.mT, grad_q + Q @ M, upper=False, left=False)


def linalg_qr(A, mode="reduced"):
    """QR decomposition ``A = Q R`` (``Q`` orthonormal columns, ``R`` upper
    triangular): ``oxmera.linalg.qr``, a named tuple ``(Q, R)``.

    ``mode``: ``'reduced'`` (``Q`` ``(*, m, k)``, ``R`` ``(*, k, n)``),
    ``'complete'`` (``Q`` ``(*, m, m)``, ``R`` ``(*, m, n)``) or ``'r'`` (``R``
    alone, ``Q`` empty). Differentiable as PyTorch's: not in mode ``'r'``,
    nor in mode ``'complete'`` with ``m > n``; these raise when backward
    reaches them.

    Examples
    --------
    >>> import oxmera
    >>> Q, R = oxmera.linalg.qr(oxmera.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> R.abs()
    tensor([[5. , 2.2],
            [0. , 0.4]], dtype=float32)
    """
    return _qr(A, mode)


def qr(input, some=True):
    """``torch.qr``: :func:`oxmera.linalg.qr` in mode ``'reduced'``
    (``some=False``: ``'complete'``). Prefer ``oxmera.linalg.qr``.

    Examples
    --------
    >>> import oxmera
    >>> tuple(oxmera.qr(oxmera.ones(3, 2), some=False).Q.shape)
    (3, 3)
    """
    return _qr(input, "reduced" if some else "complete")



# -- triangular solves -------------------------------------------------------------------------

@op("linalg_solve_triangular", inputs=2, save=("A",), save_output=True, promote=True,
    float_only=True)
def _solve_triangular(A, B, upper, left=True, unitriangular=False):
    """The recorded op behind :func:`solve_triangular`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.decompositions import _solve_triangular
    >>> _solve_triangular(2 * oxmera.eye(2), oxmera.ones(2, 1), True)
    tensor([[0.5],
            [0.5]], dtype=float32)
    """
    name = "linalg.solve_triangular"
    _check_square(A.shape, name, "A")
    _check_matrix(B.shape, name, "B")
    if B.shape[-2 if left else -1] != A.shape[-1]:
        raise OpError(f"{name}(): incompatible shapes: A {A.shape} and B {B.shape} "
                      f"(left={left})")
    try:
        np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise OpError(f"{name}(): the batch dims of A {A.shape} and B {B.shape} do not "
                      f"broadcast") from None
    # Only the triangle is read (and not its diagonal when unitriangular).
    T = np.triu(A) if upper else np.tril(A)
    if unitriangular:
        n = A.shape[-1]
        T = T.copy()
        T[..., range(n), range(n)] = 1
    try:
        if left:
            return np.linalg.solve(T, B)
        return np.swapaxes(np.linalg.solve(np.swapaxes(T, -1, -2), np.swapaxes(B, -1, -2)),
                           -1, -2)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"{name}(): A (shape {A.shape}) has a zero on its diagonal: the "
                          f"system has no unique solution") from None


@_solve_triangular.vjp
def _(ctx, grad, A, B, upper, left=True, unitriangular=False):
    # PyTorch's: gB = A^-T gX (a triangular solve with the other triangle),
    # gA = -gB X^T (left) or -X^T gB, kept to A's (strict) triangle.
    X = ctx.output
    grad_b = _solve_triangular(A.mT, grad, not upper, left, unitriangular)
    grad_a = None
    if ctx.needs_input_grad[0]:
        grad_a = -(grad_b @ X.mT) if left else -(X.mT @ grad_b)
        grad_a = grad_a.triu(int(unitriangular)) if upper else grad_a.tril(-int(unitriangular))
    return grad_a, grad_b if ctx.needs_input_grad[1] else None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` with ``left=False``)
    for a triangular ``A``: ``oxmera.linalg.solve_triangular``.

    Only the triangle ``upper`` selects is read, and not its diagonal when
    ``unitriangular`` (taken as ones). ``B`` is ``(*, n, k)`` (``(*, k, n)``
    when ``left=False``); batch dims broadcast. A zero on the diagonal is a
    :class:`LinAlgError` (PyTorch returns inf/nan there).

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> oxmera.linalg.solve_triangular(A, oxmera.tensor([[4.0], [8.0]]), upper=True)
    tensor([[1.],
            [2.]], dtype=float32)
    """
    return _solve_triangular(A, B, upper, left, unitriangular)


# -- LU ----------------------------------------------------------------------------------------

@op("linalg_lu_factor_ex", save=(), save_output=True, float_only=True,
    outputs=("LU", "pivots", "info"))
def _lu_factor_ex(A, pivot=True, check_errors=False):
    """The recorded op behind :func:`lu_factor`, :func:`lu_factor_ex` and :func:`lu`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.decompositions import _lu_factor_ex
    >>> _lu_factor_ex(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
    tensor([2, 2], dtype=int32)
    """
    name = "linalg.lu_factor"
    _check_matrix(A.shape, name)
    if not pivot:
        raise OpError(f"{name}(): LU without pivoting is not implemented on the CPU")
    linalg = _scipy_linalg(name)
    m, n = A.shape[-2:]
    k = min(m, n)
    batch = A.shape[:-2]
    LU = np.empty(A.shape, dtype=A.dtype)
    pivots = np.empty(batch + (k,), dtype=np.int32)
    info = np.zeros(batch, dtype=np.int32)
    if A.size:
        for index in np.ndindex(*batch):
            with warnings.catch_warnings():
                # A singular matrix is reported by info (or raised), as PyTorch does.
                warnings.simplefilter("ignore", linalg.LinAlgWarning)
                lu, piv = linalg.lu_factor(A[index], check_finite=False)
            LU[index], pivots[index] = lu, piv + 1
            zero = np.flatnonzero(np.diagonal(lu) == 0)
            if zero.size:
                info[index] = zero[0] + 1
                if check_errors:
                    raise LinAlgError(f"{name}(): {_batch_label(index, batch)}U[{zero[0]},"
                                      f"{zero[0]}] is zero: the matrix is singular")
    return LU, pivots, info


@_lu_factor_ex.vjp
def _(ctx, grads, A, pivot=True, check_errors=False):
    # PyTorch's lu_factor_ex_backward: the packed gradient split into L's and
    # U's, then linalg_lu_backward.
    LU, pivots = ctx.output[0], ctx.output[1]
    grad = grads[0]
    P, L, U = lu_unpack(LU, pivots)
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    return _lu_backward(grad[..., :k], grad[..., :k, :], P, L, U)


def _lu_backward(grad_l, grad_u, P, L, U):
    """PyTorch's linalg_lu_backward for ``A = P L U`` (L ``(*, m, k)``, U ``(*, k, n)``)."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        # gA = P L^-T [L^T gL o 1_L + gU U^T o 1_U] U^-T
        gA = (L.mT @ grad_l).tril(-1) + (grad_u @ U.mT).triu()
        gA = solve_triangular(U.mT, gA, upper=False, left=False)
        gA = solve_triangular(L.mT, gA, upper=True, unitriangular=True)
    elif m < n:
        U1, grad_u1, grad_u2 = U[..., :k], grad_u[..., :k], grad_u[..., k:]
        gA = L.mT @ grad_l - grad_u.triu() @ U.mT
        gA = solve_triangular(U1.mT, gA.tril(-1), upper=False, left=False)
        gA = _shape.cat([gA + grad_u1.triu(), grad_u2], -1)
        gA = solve_triangular(L.mT, gA, upper=True, unitriangular=True)
    else:
        L1, grad_l1, grad_l2 = L[..., :k, :], grad_l[..., :k, :], grad_l[..., k:, :]
        gA = grad_u @ U.mT - L.mT @ grad_l.tril(-1)
        gA = solve_triangular(L1.mT, gA.triu(), upper=True, unitriangular=True)
        gA = _shape.cat([gA + grad_l1.tril(-1), grad_l2], -2)
        gA = solve_triangular(U.mT, gA, upper=False, left=False)
    return P @ gA


_LUFactor = _result_type("linalg_lu_factor", ("LU", "pivots"))


def lu_factor(A, *, pivot=True):
    """Compact LU decomposition with partial pivoting: ``oxmera.linalg.lu_factor``,
    a named tuple ``(LU, pivots)`` as LAPACK's ``getrf`` (``pivots`` int32,
    1-based: row ``i`` was swapped with row ``pivots[i]``).

    A matrix with an exact zero on ``U``'s diagonal is a :class:`LinAlgError`
    (use :func:`lu_factor_ex` or :func:`lu` then). ``pivot=False`` is not
    supported on the CPU (as PyTorch). Needs SciPy.

    Examples
    --------
    >>> import oxmera
    >>> LU, pivots = oxmera.linalg.lu_factor(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU
    tensor([[3.    , 4.    ],
            [0.3333, 0.6667]], dtype=float32)
    """
    LU, pivots, _ = _lu_factor_ex(A, pivot, True)
    return _LUFactor(LU, pivots)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """:func:`lu_factor` that reports singular matrices instead of raising:
    ``oxmera.linalg.lu_factor_ex``, a named tuple ``(LU, pivots, info)``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.lu_factor_ex(oxmera.zeros(2, 2)).info
    tensor(1, dtype=int32)
    """
    return _lu_factor_ex(A, pivot, check_errors)


_LUUnpack = _result_type("lu_unpack", ("P", "L", "U"))


def _permutation(pivots, m):
    """The permutation matrices ``P`` (``A = P L U``) of LAPACK pivots."""
    piv = np.asarray(pivots) - 1
    batch = piv.shape[:-1]
    rows = np.broadcast_to(np.arange(m), batch + (m,)).copy()
    flat_rows, flat_piv = rows.reshape(-1, m), piv.reshape(-1, piv.shape[-1])
    for row, swaps in zip(flat_rows, flat_piv):
        for i, j in enumerate(swaps):
            row[i], row[j] = row[j], row[i]
    # The swaps take A's rows to LU's order: P^T A = L U, P^T = I[rows].
    return tensor(np.swapaxes(np.eye(m)[flat_rows.reshape(batch + (m,))], -1, -2))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``P``, ``L``, ``U`` from :func:`oxmera.linalg.lu_factor`'s packed
    result: ``torch.lu_unpack``. Differentiable with respect to ``LU_data``.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> P, L, U = oxmera.lu_unpack(*oxmera.linalg.lu_factor(A))
    >>> P
    tensor([[0., 1.],
            [1., 0.]], dtype=float32)
    >>> bool(oxmera.allclose(P @ L @ U, A))
    True
    """
    LU = _as_tensor(LU_data)
    _check_matrix(LU.shape, "lu_unpack", "LU_data")
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    empty = zeros(0, dtype=LU.dtype)
    P = L = U = empty
    if unpack_data:
        L = LU[..., :k].tril(-1) + eye(m, k, dtype=LU.dtype)
        U = LU[..., :k, :].triu()
    if unpack_pivots:
        pivots = LU_pivots.numpy() if isinstance(LU_pivots, Tensor) else LU_pivots
        P = _permutation(pivots, m).to(LU.dtype)
    return _LUUnpack(P, L, U)


def lu(A, *, pivot=True):
    """LU decomposition with partial pivoting ``A = P L U``: ``oxmera.linalg.lu``,
    a named tuple ``(P, L, U)`` (``L`` unit lower ``(*, m, k)``, ``U`` upper
    ``(*, k, n)``). Singular matrices are factored too. The gradient is
    PyTorch's (linalg_lu_backward). Needs SciPy.

    Examples
    --------
    >>> import oxmera
    >>> P, L, U = oxmera.linalg.lu(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> U
    tensor([[3.    , 4.    ],
            [0.    , 0.6667]], dtype=float32)
    """
    LU, pivots, _ = _lu_factor_ex(A, pivot, False)
    return lu_unpack(LU, pivots)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """The solution of ``A X = B`` from :func:`lu_factor`'s ``(LU, pivots)``:
    ``oxmera.linalg.lu_solve`` (``left=False``: ``X A = B``; ``adjoint=True``:
    with ``A^T``). Composed of triangular solves, differentiable in ``LU``
    and ``B``.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[2.0, 1.0], [1.0, 3.0]])
    >>> LU, pivots = oxmera.linalg.lu_factor(A)
    >>> oxmera.linalg.lu_solve(LU, pivots, oxmera.tensor([[3.0], [5.0]]))
    tensor([[0.8],
            [1.4]], dtype=float32)
    """
    LU = _as_tensor(LU)
    _check_square(LU.shape, "linalg.lu_solve", "LU")
    _check_matrix(_shape_of(B), "linalg.lu_solve", "B")
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:        # X = U^-1 L^-1 P^T B
        X = solve_triangular(L, P.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(U, X, upper=True)
    if left:                        # X = P L^-T U^-T B
        X = solve_triangular(U.mT, B, upper=False)
        return P @ solve_triangular(L.mT, X, upper=True, unitriangular=True)
    if not adjoint:                 # X = B U^-1 L^-1 P^T
        X = solve_triangular(U, B, upper=True, left=False)
        return solve_triangular(L, X, upper=False, left=False, unitriangular=True) @ P.mT
    X = solve_triangular(L.mT, B @ P, upper=True, left=False, unitriangular=True)
    return solve_triangular(U.mT, X, upper=False, left=False)   # X = B P L^-T U^-T


# -- slogdet, logdet ---------------------------------------------------------------------------

@op("linalg_slogdet", save=("A",), float_only=True, outputs=("sign", "logabsdet"))
def slogdet(A):
    """Sign and log of the absolute value of the determinant:
    ``oxmera.linalg.slogdet`` (also ``oxmera.slogdet``), a named tuple
    ``(sign, logabsdet)``; a singular matrix gives ``(0, -inf)``.

    The gradient of ``logabsdet`` is ``inv(A)^T``, as PyTorch's (a singular
    matrix has none: its backward is a :class:`LinAlgError`); ``sign`` is
    piecewise constant, its gradient zero.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.slogdet(oxmera.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    linalg_slogdet(sign=tensor(-1., dtype=float32), logabsdet=tensor(1.7918, dtype=float32))
    """
    _check_square(A.shape, "linalg.slogdet")
    sign, logabsdet = np.linalg.slogdet(A)
    return np.asarray(sign, dtype=A.dtype), np.asarray(logabsdet, dtype=A.dtype)


@slogdet.vjp
def _(ctx, grads, A):
    return _unsqueeze2(grads[1]) * _inv_checked(A, "linalg.slogdet").mT


def _inv_checked(A, opname):
    try:
        return inv(A)
    except OpError:
        raise LinAlgError(f"{opname}(): the gradient of log|det A| is inv(A)^T, and A (shape "
                          f"{tuple(A.shape)}) is singular") from None


def logdet(input):
    """Log of the determinant: ``oxmera.logdet``; NaN for a negative
    determinant and ``-inf`` for zero, as PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.logdet(oxmera.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918, dtype=float32)
    >>> oxmera.logdet(oxmera.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    tensor(nan, dtype=float32)
    """
    sign, logabsdet = slogdet(input)
    return where(sign.detach() < 0, math.nan, logabsdet)


# -- pinv, matrix_rank, lstsq ------------------------------------------------------------------

def _tolerance(s_max, m, n, dtype, atol, rtol, opname):
    """The cutoff below which singular values count as zero: max(atol, rtol *
    s_max), rtol defaulting to eps * max(m, n) unless atol > 0 is given."""
    def value(x, what):
        if isinstance(x, Tensor):
            if x.requires_grad:
                x = x.detach()
            x = x.numpy()
        x = np.asarray(x, dtype=np.float64)
        if np.any(x < 0):
            raise OpError(f"{opname}(): {what} must be non-negative, got {x}")
        return x
    atol_v = 0.0 if atol is None else value(atol, "atol")
    if rtol is None:
        default = np.finfo(dtype).eps * max(m, n)
        rtol_v = default if atol is None else np.where(atol_v > 0, 0.0, default)
    else:
        rtol_v = value(rtol, "rtol")
    return np.maximum(atol_v, rtol_v * s_max)


def _spectrum(A, hermitian):
    """``(U, S, Vh)`` of ``A`` (by ``eigh`` when hermitian, |eigenvalues|
    and the signs moved into ``Vh``)."""
    if not hermitian:
        return np.linalg.svd(A, full_matrices=False)
    w, V = np.linalg.eigh(A)
    return V, np.abs(w), np.swapaxes(V * np.sign(w)[..., None, :], -1, -2)


@op("linalg_pinv", save=("A",), save_output=True, float_only=True)
def _pinv(A, atol=None, rtol=None, hermitian=False):
    """The recorded op behind :func:`pinv`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.decompositions import _pinv
    >>> _pinv(oxmera.tensor([[2.0, 0.0], [0.0, 0.0]]))
    tensor([[0.5, 0. ],
            [0. , 0. ]], dtype=float32)
    """
    _check_matrix(A.shape, "linalg.pinv")
    m, n = A.shape[-2:]
    if hermitian and m != n:
        raise OpError(f"linalg.pinv(): hermitian=True needs square matrices, got shape {A.shape}")
    if A.size == 0:
        return np.zeros(A.shape[:-2] + (n, m), dtype=A.dtype)
    U, S, Vh = _spectrum(A, hermitian)
    cutoff = _tolerance(S.max(-1), m, n, A.dtype, atol, rtol, "linalg.pinv")
    with np.errstate(divide="ignore"):
        inverse = np.where(S > np.asarray(cutoff)[..., None], 1.0 / S, 0.0).astype(A.dtype)
    return np.swapaxes(Vh, -1, -2) @ (inverse[..., None] * np.swapaxes(U, -1, -2))


@_pinv.vjp
def _(ctx, grad, A, atol=None, rtol=None, hermitian=False):
    return _pinv_backward(grad, ctx.output, A)


def _pinv_backward(grad, P, A):
    # PyTorch's pinv_backward (Golub & Pereyra: the rank held constant).
    m, n = A.shape[-2], A.shape[-1]
    Ph, gh = P.mT, grad.mT
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        return -(P @ K).mT + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    K = P @ gh
    PhK = Ph @ K
    return -(K @ P).mT + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    """Moore-Penrose pseudo-inverse: ``oxmera.linalg.pinv``.

    Singular values at or below ``max(atol, rtol * s_max)`` count as zero;
    ``rtol`` defaults to ``eps * max(m, n)`` when ``atol`` is not given
    (or is 0), else to 0. ``rcond`` is PyTorch's older name of ``rtol``.
    ``hermitian=True`` uses ``eigh`` on the lower triangle. The gradient is
    PyTorch's, which assumes the rank does not change near ``A``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.pinv(oxmera.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]))
    tensor([[1. , 0. , 0. ],
            [0. , 0. , 0.5]], dtype=float32)
    """
    if rcond is not None:
        if rtol is not None:
            raise OpError("linalg.pinv(): give rtol or its older name rcond, not both")
        rtol = rcond
    return _pinv(A, atol, rtol, hermitian)


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: :func:`oxmera.linalg.pinv` with ``rtol=rcond``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.pinverse(oxmera.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]], dtype=float32)
    """
    return _pinv(input, None, rcond, False)



@op("linalg_matrix_rank", differentiable=False, float_only=True)
def _matrix_rank(A, atol=None, rtol=None, hermitian=False):
    """The op behind :func:`matrix_rank` (not differentiable).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.decompositions import _matrix_rank
    >>> _matrix_rank(oxmera.ones(3, 3))
    tensor(1, dtype=int64)
    """
    _check_matrix(A.shape, "linalg.matrix_rank")
    m, n = A.shape[-2:]
    if hermitian and m != n:
        raise OpError(f"linalg.matrix_rank(): hermitian=True needs square matrices, got shape "
                      f"{A.shape}")
    if A.size == 0:
        return np.zeros(A.shape[:-2], dtype=np.int64)
    S = np.abs(np.linalg.eigvalsh(A)) if hermitian else np.linalg.svd(A, compute_uv=False)
    cutoff = _tolerance(S.max(-1), m, n, A.dtype, atol, rtol, "linalg.matrix_rank")
    return np.asarray(np.sum(S > np.asarray(cutoff)[..., None], axis=-1), dtype=np.int64)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """Numerical rank (int64): the number of singular values above
    ``max(atol, rtol * s_max)`` (defaults as :func:`pinv`):
    ``oxmera.linalg.matrix_rank``. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.matrix_rank(oxmera.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1, dtype=int64)
    """
    return _matrix_rank(A, atol, rtol, hermitian)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@op("linalg_lstsq", inputs=2, promote=True, float_only=True)
def _lstsq_solution(A, B, rcond=None):
    """The recorded least-squares solution behind :func:`lstsq` (``B`` a batch
    of matrices).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.decompositions import _lstsq_solution
    >>> _lstsq_solution(oxmera.tensor([[1.0], [1.0]]), oxmera.tensor([[1.0], [3.0]]))
    tensor([[2.]], dtype=float32)
    """
    return _lstsq_arrays(A, B, rcond)[0]


def _lstsq_arrays(A, B, rcond):
    """Solution, residuals, rank, singular values of each system (NumPy's gelsd)."""
    name = "linalg.lstsq"
    _check_matrix(A.shape, name, "A")
    if B.ndim < 2 or B.shape[-2] != A.shape[-2]:
        raise OpError(f"{name}(): incompatible shapes: A {A.shape} and B {B.shape}")
    try:
        batch = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise OpError(f"{name}(): the batch dims of A {A.shape} and B {B.shape} do not "
                      f"broadcast") from None
    m, n = A.shape[-2:]
    k = B.shape[-1]
    A = np.broadcast_to(A, batch + (m, n))
    B = np.broadcast_to(B, batch + (m, k))
    if rcond is None:
        rcond = np.finfo(A.dtype).eps * max(m, n)
    X = np.zeros(batch + (n, k), dtype=A.dtype)
    residuals = np.zeros(batch + (k,), dtype=A.dtype)
    rank = np.zeros(batch, dtype=np.int64)
    values = np.zeros(batch + (min(m, n),), dtype=A.dtype)
    if A.size:
        for index in np.ndindex(*batch):
            x, res, r, s = np.linalg.lstsq(A[index], B[index], rcond=rcond)
            X[index], rank[index], values[index] = x, r, s
            if res.size:
                residuals[index] = res
    return X, residuals, rank, values


@_lstsq_solution.vjp
def _(ctx, grad, A, B, rcond=None):
    # PyTorch's linalg_lstsq_backward: through pinv(A) (default tolerances).
    needs = ctx.needs_input_grad
    P = _pinv(A)
    grad_a = _pinv_backward(grad @ B.mT, P, A) if needs[0] else None
    return grad_a, (P.mT @ grad) if needs[1] else None


_Lstsq = _result_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


def lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A X = B``: ``oxmera.linalg.lstsq``, a named
    tuple ``(solution, residuals, rank, singular_values)``.

    ``B`` is ``(*, m, k)`` or ``(*, m)`` (a batch of vectors); batch dims
    broadcast. Singular values below ``rcond * s_max`` (default ``eps *
    max(m, n)``) count as zero; a rank-deficient system gets its minimum-norm
    solution. The solution is NumPy's (LAPACK ``gelsd``) whatever the
    ``driver``; the other fields follow PyTorch's per driver (``None`` is
    ``'gelsy'``, PyTorch's CPU default): ``residuals`` (squared residual
    norms, ``(*, k)``) for ``'gels'``, ``'gelsd'``, ``'gelss'`` when ``m > n``
    and every matrix has full rank, else empty; ``rank`` (int64) except for
    ``'gels'``; ``singular_values`` for ``'gelsd'`` and ``'gelss'``. Only the
    solution is differentiable, with PyTorch's gradient (through ``pinv(A)``).

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> out = oxmera.linalg.lstsq(A, oxmera.tensor([[1.0], [2.0], [4.0]]), driver="gelsd")
    >>> out.solution
    tensor([[1.3333],
            [2.3333]], dtype=float32)
    >>> out.rank
    tensor(2, dtype=int64)
    """
    driver = "gelsy" if driver is None else driver
    if driver not in _LSTSQ_DRIVERS:
        raise OpError(f"linalg.lstsq(): driver must be one of {_LSTSQ_DRIVERS} on the CPU, got "
                      f"{driver!r}")
    sa, sb = _shape_of(A), _shape_of(B)
    _check_matrix(sa, "linalg.lstsq", "A")
    vector = len(sb) == len(sa) - 1
    if vector:
        B = _shape.unsqueeze(_as_tensor(B), -1)
    X = _lstsq_solution(A, B, rcond)
    a, b = (t.detach().numpy() if isinstance(t, Tensor) else np.asarray(t) for t in (A, B))
    dtype = X.detach().numpy().dtype
    _, residuals, rank, values = _lstsq_arrays(a.astype(dtype), b.astype(dtype), rcond)
    m, n = sa[-2:]
    empty = np.zeros((0,), dtype=values.dtype)
    full_rank = bool(np.all(rank == min(m, n)))
    if driver == "gelsy" or not (m > n and full_rank):
        residuals = empty
    if vector and residuals.size:
        residuals = residuals[..., 0]
    if driver == "gels":
        rank = np.zeros((0,), dtype=np.int64)
    if driver not in ("gelsd", "gelss"):
        values = empty
    return _Lstsq(X.squeeze(-1) if vector else X, tensor(residuals), tensor(rank),
                  tensor(values))


# -- matrix functions --------------------------------------------------------------------------

@op("linalg_matrix_exp", save=("A",), float_only=True)
def matrix_exp(A):
    """Matrix exponential: ``oxmera.linalg.matrix_exp`` (also ``oxmera.matrix_exp``).

    The gradient is PyTorch's: the upper-right block of the exponential of
    ``[[A^T, G], [0, A^T]]``, itself a matrix_exp, so it differentiates
    again. Needs SciPy (``scipy.linalg.expm``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.matrix_exp(oxmera.tensor([[0.0, 1.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [0., 1.]], dtype=float32)
    """
    _check_square(A.shape, "linalg.matrix_exp")
    linalg = _scipy_linalg("linalg.matrix_exp")
    if A.size == 0:
        return np.empty(A.shape, dtype=A.dtype)
    return np.asarray(linalg.expm(A), dtype=A.dtype)


@matrix_exp.vjp
def _(ctx, grad, A):
    n = A.shape[-1]
    top = _shape.cat([A.mT, grad], -1)
    bottom = _shape.cat([zeros(tuple(grad.shape), dtype=grad.dtype), A.mT], -1)
    return matrix_exp(_shape.cat([top, bottom], -2))[..., :n, n:]


def matrix_power(A, n):
    """``A`` to the integer power ``n`` (``n < 0``: of ``inv(A)``; ``n = 0``:
    the identity): ``oxmera.linalg.matrix_power`` (also ``oxmera.matrix_power``).
    Composed of matmul by repeated squaring, as PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[1.0, 1.0], [0.0, 1.0]])
    >>> oxmera.linalg.matrix_power(A, 3)
    tensor([[1., 3.],
            [0., 1.]], dtype=float32)
    >>> oxmera.linalg.matrix_power(A, -2)
    tensor([[ 1., -2.],
            [ 0.,  1.]], dtype=float32)
    """
    A = _as_tensor(A)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"linalg.matrix_power(): n must be an int, got {type(n).__name__}")
    _check_square(A.shape, "linalg.matrix_power")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype).expand(*A.shape).clone()
    if n < 0:
        A, n = inv(A), -n
    result = None
    while n:
        if n & 1:
            result = A if result is None else result @ A
        n >>= 1
        if n:
            A = A @ A
    return result


# -- cond, vecdot, tensorinv, tensorsolve, inv_ex, solve_ex ----------------------------------------

def cond(A, p=None):
    """Condition number of ``A`` in the matrix norm ``p``: ``oxmera.linalg.cond``.

    ``p`` None or 2: ``s_max / s_min`` (any shape; inf for a singular
    matrix); -2: ``s_min / s_max``; ``'fro'``, ``'nuc'``, ``inf``, ``-inf``,
    1, -1: ``norm(A, p) * norm(inv(A), p)`` for square matrices, inf where
    ``A`` is singular, as PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.cond(oxmera.tensor([[1.0, 0.0], [0.0, 4.0]]))
    tensor(4., dtype=float32)
    >>> oxmera.linalg.cond(oxmera.tensor([[1.0, 0.0], [0.0, 4.0]]), 1)
    tensor(4., dtype=float32)
    """
    from oxmera.ops.linalg import matrix_norm, svdvals
    A = _as_tensor(A)
    _check_matrix(A.shape, "linalg.cond")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        S = svdvals(A)
        if p == -2:
            return S[..., -1] / S[..., 0]
        return S[..., 0] / S[..., -1]
    if p not in ("fro", "nuc", math.inf, -math.inf, 1, -1):
        raise OpError(f"linalg.cond(): unsupported p {p!r}")
    _check_square(A.shape, "linalg.cond")
    inverse, info = inv_ex(A)
    singular = info.numpy() > 0
    # A singular matrix (inverse NaN) has an infinite condition number.
    inverse = where(_unsqueeze2(tensor(singular)), 0.0, inverse)
    return where(tensor(singular), math.inf, matrix_norm(A, p) * matrix_norm(inverse, p))


def vecdot(x, y, *, dim=-1):
    """Dot product of vectors along ``dim`` (batch dims broadcast):
    ``oxmera.linalg.vecdot`` (real dtypes: ``(x * y).sum(dim)``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.vecdot(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]), oxmera.tensor([1.0, 1.0]))
    tensor([3., 7.], dtype=float32)
    """
    x, y = _as_tensor(x), _as_tensor(y)
    return (x * y).sum(dim)


def tensorinv(A, ind=2):
    """The "inverse" of ``A`` for :func:`oxmera.tensordot` with ``ind`` dims:
    ``oxmera.linalg.tensorinv``; ``prod(A.shape[:ind])`` must equal
    ``prod(A.shape[ind:])``. The result has shape ``A.shape[ind:] + A.shape[:ind]``.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.eye(4).reshape(4, 2, 2)
    >>> tuple(oxmera.linalg.tensorinv(A, ind=1).shape)
    (2, 2, 4)
    """
    A = _as_tensor(A)
    if isinstance(ind, bool) or not isinstance(ind, int) or ind <= 0:
        raise OpError(f"linalg.tensorinv(): ind must be a positive int, got {ind!r}")
    left, right = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(left), math.prod(right)
    if rows != cols:
        raise OpError(f"linalg.tensorinv(): the product of the first ind={ind} dims of shape "
                      f"{tuple(A.shape)} ({rows}) must equal that of the others ({cols})")
    return inv(A.reshape(rows, cols)).reshape(*right, *left)


def tensorsolve(A, B, dims=None):
    """The ``X`` with ``tensordot(A, X, X.ndim) == B``: ``oxmera.linalg.tensorsolve``.

    ``dims`` (optional) are dims of ``A`` moved to the end first. ``X`` has
    shape ``A.shape[B.ndim:]``.

    Examples
    --------
    >>> import oxmera
    >>> A = 2 * oxmera.eye(6).reshape(2, 3, 6)
    >>> tuple(oxmera.linalg.tensorsolve(A, oxmera.ones(2, 3)).shape)
    (6,)
    """
    A, B = _as_tensor(A), _as_tensor(B)
    if dims is not None:
        dims = [_core.normalize_dim(d, A.ndim, "linalg.tensorsolve") for d in dims]
        rest = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(*rest, *dims)
    result_shape = tuple(A.shape[B.ndim:])
    rows, cols = B.numel(), math.prod(result_shape)
    if tuple(A.shape[:B.ndim]) != tuple(B.shape) or rows != cols:
        raise OpError(f"linalg.tensorsolve(): A of shape {tuple(A.shape)} does not fit B of "
                      f"shape {tuple(B.shape)}: A's leading dims must be B's shape and the "
                      f"product of the others must equal B.numel() ({rows})")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(*result_shape)


def _lu_zero_pivot(a):
    """The 1-based index of the first exact zero pivot of LU with partial
    pivoting of one matrix (LAPACK getrf's info); n when rounding hid it."""
    a = np.array(a, dtype=np.float64)
    n = a.shape[-1]
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if a[p, j] == 0:
            return j + 1
        a[[j, p]] = a[[p, j]]
        a[j + 1:, j:] -= np.outer(a[j + 1:, j] / a[j, j], a[j, j:])
    return n


def _singular_info(A, opname):
    """int32 info per matrix of ``A`` (0 when it inverts), found without
    recording; None when none is singular."""
    a = A.detach().numpy() if isinstance(A, Tensor) else np.asarray(A)
    _check_square(a.shape, opname)
    try:
        np.linalg.inv(a)
        return None
    except np.linalg.LinAlgError:
        pass
    info = np.zeros(a.shape[:-2], dtype=np.int32)
    for index in np.ndindex(*info.shape):
        try:
            np.linalg.inv(a[index])
        except np.linalg.LinAlgError:
            info[index] = _lu_zero_pivot(a[index])
    return info


_InvEx = _result_type("linalg_inv_ex", ("inverse", "info"))
_SolveEx = _result_type("linalg_solve_ex", ("result", "info"))


def _masked_singular(A, info):
    # The singular matrices replaced by the identity (so the others go
    # through the op, differentiably); their results are NaN afterwards.
    mask = tensor(info > 0)
    return mask, where(_unsqueeze2(mask), eye(A.shape[-1], dtype=A.dtype), A)


def inv_ex(A, *, check_errors=False):
    """:func:`oxmera.linalg.inv` that reports singular matrices instead of
    raising: ``oxmera.linalg.inv_ex``, a named tuple ``(inverse, info)``.

    ``info`` (int32 per matrix) is 0, or the 1-based index of the first zero
    pivot of the LU factorization; that matrix's inverse is NaN here
    (unspecified in PyTorch). ``check_errors=True`` raises as ``inv``.

    Examples
    --------
    >>> import oxmera
    >>> out = oxmera.linalg.inv_ex(oxmera.tensor([[[2.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]]))
    >>> out.info
    tensor([0, 2], dtype=int32)
    """
    A = _as_tensor(A)
    info = _singular_info(A, "linalg.inv_ex")
    if info is None or check_errors:
        inverse = inv(A)
        return _InvEx(inverse, tensor(np.zeros(tuple(A.shape[:-2]), dtype=np.int32)))
    mask, fixed = _masked_singular(A, info)
    return _InvEx(where(_unsqueeze2(mask), math.nan, inv(fixed)), tensor(info))


def solve_ex(A, B, *, left=True, check_errors=False):
    """:func:`oxmera.linalg.solve` that reports singular matrices instead of
    raising: ``oxmera.linalg.solve_ex``, a named tuple ``(result, info)``
    (``info`` as :func:`inv_ex`'s; a singular system's result NaN).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.solve_ex(oxmera.eye(2), oxmera.ones(2)).info
    tensor(0, dtype=int32)
    """
    A = _as_tensor(A)
    info = _singular_info(A, "linalg.solve_ex")
    if info is None or check_errors:
        return _SolveEx(solve(A, B, left=left), tensor(np.zeros(tuple(A.shape[:-2]), dtype=np.int32)))
    mask, fixed = _masked_singular(A, info)
    result = solve(fixed, B, left=left)
    # The mask over the result: a batch of vectors lacks the last dim.
    vector = result.ndim == max(A.ndim - 1, _as_tensor(B).ndim) and result.ndim < A.ndim
    mask = mask.unsqueeze(-1) if vector else _unsqueeze2(mask)
    return _SolveEx(where(mask, math.nan, result), tensor(info))


# -- Tensor methods (as in PyTorch) ----------------------------------------------------------

def _method(fn, name):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``oxmera.{name}(self, ...)``: PyTorch's ``Tensor.{name}``."
    return method


for _name, _fn in (("svd", svd), ("cholesky", cholesky), ("qr", qr), ("slogdet", slogdet),
                   ("logdet", logdet), ("matrix_power", matrix_power),
                   ("matrix_exp", matrix_exp), ("pinverse", pinverse)):
    _registry.add_tensor_attribute(_name, _method(_fn, _name))
del _name, _fn


for _fn in (linalg_svd, linalg_cholesky, linalg_qr):
    # Documented and re-exported as oxmera.linalg.svd etc.
    _fn.__name__ = _fn.__qualname__ = _fn.__name__[len("linalg_"):]
del _fn
