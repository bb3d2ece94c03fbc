"""The matrix decompositions behind ``oxmera.linalg`` (as ``torch.linalg``),
for float32, float64, complex64 and complex128 inputs: svd (public; the op is in
``oxmera.ops.linalg``), eigh, eig, cholesky, qr, LU, triangular solves.

Primitives with VJPs of their own (PyTorch's formulas, written with oxmera
ops so they differentiate again): eigh, cholesky_ex, qr, lu_factor_ex and
solve_triangular, eig. eigvalsh, eigvals, cholesky, lu, lu_solve, lu_unpack and the
legacy ``oxmera.svd`` / ``cholesky`` / ``qr`` are composed of them. The
functions of matrices built on these are in ``oxmera.ops.matrix_functions``.

Every one takes real and complex matrices (eig and eigvals give complex
results for real ones too); for complex ones the gradients are PyTorch's, the
transposes of the real formulas becoming conjugate transposes. lu_factor
computes with SciPy (``pip install oxmera[scipy]``); everything else here with NumPy.

``__all__`` lists what is also ``oxmera.NAME`` (PyTorch's top-level names);
the ``oxmera.linalg`` names are re-exported there.
"""
import collections
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops import shape as _shape
from oxmera.ops._utils import complex_of
from oxmera.ops.complex import cj, real
from oxmera.ops.construction import diag_embed
from oxmera.ops.creation import eye, ones, tensor, zeros
from oxmera.ops.elementwise import where
from oxmera.ops.linalg import (LinAlgError, _absent, _as_tensor, _check_square, _shape_of, _svd)

__all__ = ["svd", "cholesky", "qr", "lu_unpack", "cholesky_solve", "cholesky_inverse"]

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


def _mh(x):
    """The conjugate transpose ``x^H`` (``x.mT`` for a real tensor: no op more)."""
    return cj(x).mT


def _check_phase(product, opname):
    """PyTorch's gauge check: eigen/singular vectors are unique only up to a phase
    ``e^(i phi)`` each, so a well-defined loss has ``Im(diag(V^H gV)) = 0``."""
    if product.dtype.kind != "c":
        return
    diagonal = product.diagonal(0, -2, -1)
    imaginary = np.abs(diagonal.imag.detach().numpy())
    if imaginary.size and not np.allclose(imaginary, 0, atol=1e-2, rtol=1e-2):
        raise RuntimeError(
            f"{opname}: The eigenvectors in the complex case are specified up to "
            f"multiplication by e^{{i phi}}. The specified loss function depends on this "
            f"quantity, so it is ill-defined.")


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
    gradient; for real inputs, as in PyTorch, this is not checked. For complex
    inputs each pair of singular vectors is unique up to a phase ``e^(i phi)``:
    a loss that depends on it (``U.real``; ``abs(U)`` is fine) raises a
    ``RuntimeError`` in backward, as PyTorch's gauge check. Through ``U`` or ``Vh`` the
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
        dtype = A.dtype if A.dtype.kind == "c" else S.dtype
        return _LegacySVD(zeros(batch + (m, m), dtype=dtype), S,
                          zeros(batch + (n, n), dtype=dtype))
    U, S, Vh = _svd(A, not some)
    return _LegacySVD(U, S, _mh(Vh))



# -- eigh, eigvalsh ----------------------------------------------------------------------------

@op("linalg_eigh", save=(), save_output=True, float_only=True, complex_inputs=True,
    outputs=("eigenvalues", "eigenvectors"))
def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of a
    symmetric (complex: Hermitian) matrix: ``oxmera.linalg.eigh``.

    Only the triangle ``UPLO`` (``'L'`` or ``'U'``) is read. The gradient is
    PyTorch's: ``V (diag(gL) + skew(V^H gV) / E) V^H`` with ``E_ij = L_j -
    L_i``, Hermitian whatever the input. A complex eigenvector is unique only
    up to a phase ``e^(i phi)``: a loss that depends on it (``V.real``;
    ``V.abs()`` is fine) raises a ``RuntimeError`` in backward, as PyTorch's.
    The eigenvalues are real (float64 for complex128). The eigenvectors are unique only up
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
    Vh = _mh(V)
    if _absent(grad_v):
        return (V * grad_l.unsqueeze(-2)) @ Vh
    product = Vh @ grad_v
    _check_phase(product, "linalg_eigh_backward")
    skew = 0.5 * (product - _mh(product))
    n = L.shape[-1]
    eye_mask = np.eye(n, dtype=bool)
    if skew.dtype.kind == "c":
        # The skew-Hermitian part's diagonal is i Im(diag(V^H gV)), the phase
        # direction the check above found (near) zero: dropped, as PyTorch.
        skew = where(eye_mask, 0.0, skew)
    E = where(eye_mask, 1.0, L.unsqueeze(-2) - L.unsqueeze(-1))
    return V @ (skew / E + diag_embed(grad_l)) @ Vh


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


# -- eig, eigvals ------------------------------------------------------------------------------

@op("linalg_eig", save=(), save_output=True, outputs=("eigenvalues", "eigenvectors"))
def eig(A):
    """Eigenvalues and eigenvectors (columns, each of norm 1) of a general square
    matrix: ``oxmera.linalg.eig``. Both are complex, also for a real ``A``
    (float32 gives complex64, float64 complex128), as in PyTorch; the order
    and the vectors' phases are LAPACK's (NumPy's ``eig``, PyTorch's too).

    The gradient is PyTorch's: ``V^-H (diag(gL) + P(V^H gV) / conj(E)) V^H``
    with ``E_ij = L_j - L_i`` and ``P`` removing the part that only moves the
    vectors' norms; for a real ``A``, its real part. An eigenvector is unique
    only up to a phase ``e^(i phi)``, so a loss must not depend on it
    (``abs(V)`` is fine, ``V.real`` is not): as PyTorch, such a loss raises a
    ``RuntimeError`` in backward. At repeated eigenvalues a loss through the
    eigenvectors divides by zero (inf/nan), as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> L, V = oxmera.linalg.eig(oxmera.tensor([[0.0, -1.0], [1.0, 0.0]]))
    >>> L
    tensor([0.+1.j, 0.-1.j], dtype=complex64)
    """
    _check_square(A.shape, "linalg.eig")
    if A.dtype.kind in "biu":
        raise RuntimeError(f"linalg.eig(): expected a floating point or complex tensor as "
                           f"input, got {A.dtype}")
    if not np.isfinite(A).all():
        raise LinAlgError(f"linalg.eig(): the input of shape {A.shape} has non-finite values")
    dtype = complex_of(A.dtype)
    if A.size == 0:
        return np.zeros(A.shape[:-1], dtype), np.zeros(A.shape, dtype)
    values, vectors = np.linalg.eig(A)
    return values.astype(dtype, copy=False), vectors.astype(dtype, copy=False)


@eig.vjp
def _(ctx, grads, A):
    grad_l, grad_v = grads
    L, V = ctx.output
    Vh = cj(V).mT
    n = L.shape[-1]
    if _absent(grad_v):
        inner = diag_embed(grad_l)
    else:
        product = Vh @ grad_v
        diagonal = product.diagonal(0, -2, -1)
        _check_phase(product, "linalg_eig_backward")
        product = product - Vh @ (V * real(diagonal).unsqueeze(-2))
        conj_l = cj(L)
        E = where(np.eye(n, dtype=bool), 1.0, conj_l.unsqueeze(-2) - conj_l.unsqueeze(-1))
        inner = product / E
        if not _absent(grad_l):
            inner = inner + diag_embed(grad_l)
    # V^-H inner V^H, as a solve (V is not unitary).
    from oxmera.ops.linalg import solve
    return solve(Vh, inner @ Vh)


def eigvals(A):
    """Eigenvalues of a general square matrix (complex): ``oxmera.linalg.eigvals``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.eigvals(oxmera.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor([2.+0.j, 3.+0.j], dtype=complex64)
    """
    return eig(A).eigenvalues


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


@op("linalg_cholesky_ex", save=(), save_output=True, float_only=True, complex_inputs=True,
    outputs=("L", "info"))
def _cholesky_ex(A, upper=False, check_errors=False):
    """The recorded op behind :func:`oxmera.linalg.cholesky` and :func:`oxmera.linalg.cholesky_ex`.

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
    # PyTorch's cholesky_backward (Murray 2016): gA = L^-H Phi(L^H gL) L^-1,
    # Phi taking the lower triangle with the diagonal halved, Hermitian-symmetrized.
    L = ctx.output[0]
    grad = grads[0]
    if upper:
        L, grad = _mh(L), _mh(grad)
    Lh = _mh(L)
    gA = (Lh @ grad).tril()
    gA = 0.5 * (gA + _mh(gA.tril(-1)))
    gA = solve_triangular(Lh, gA, upper=True)
    return solve_triangular(L, gA, upper=False, left=False)


def linalg_cholesky(A, *, upper=False):
    """Cholesky factor of a symmetric (complex: Hermitian) positive-definite matrix:
    ``oxmera.linalg.cholesky``.

    ``L`` lower-triangular with ``A = L L^H`` (``upper=True``: ``U`` with
    ``A = U^H U``; ``^H`` the conjugate transpose, ``^T`` for real ones);
    only that triangle of ``A`` is read. A matrix that is not
    positive-definite is a :class:`oxmera.linalg.LinAlgError` naming the leading minor at
    fault. The gradient is PyTorch's: the gradient with respect to a
    symmetric (Hermitian) ``A`` (so symmetric itself), not with respect to the
    triangle read; differentiate a function of such a matrix (``A = X X^H``, ...).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.cholesky(oxmera.tensor([[4.0, 2.0], [2.0, 2.0]]))
    tensor([[2., 0.],
            [1., 1.]], dtype=float32)
    """
    return _cholesky_ex(A, upper, True).L


def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`oxmera.linalg.cholesky` that reports failure instead of raising:
    ``oxmera.linalg.cholesky_ex``, a named tuple ``(L, info)``.

    ``info`` (int32, one per matrix) is 0 or the order of the first leading
    minor that is not positive-definite; ``L`` of such a matrix is not a
    factorization (NaN here). ``check_errors=True`` raises as :func:`oxmera.linalg.cholesky`.

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

@op("linalg_qr", save=(), save_output=True, float_only=True, complex_inputs=True,
    outputs=("Q", "R"))
def _qr(A, mode="reduced"):
    """The recorded op behind :func:`oxmera.linalg.qr`.

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
    grad_x = _qr_backward_tall(Q, R1, grad_q + Y @ _mh(grad_r2), grad_r1)
    return _shape.cat([grad_x, Q @ grad_r2], -1)


def _qr_backward_tall(Q, R, grad_q, grad_r):
    # m >= n: M = R gR^H - gQ^H Q; gA = (gQ + Q copyltu(M)) R^-H, copyltu
    # mirroring the lower triangle onto the upper one, conjugated, and keeping
    # the real part of the diagonal (PyTorch's linalg_qr_backward: R's
    # diagonal is real, so only that part of it moves).
    M = R @ _mh(grad_r) - _mh(grad_q) @ Q
    if M.dtype.kind == "c":
        M = M.tril(-1) + _mh(M.tril(-1)) + diag_embed(real(M.diagonal(0, -2, -1)))
    else:
        M = M.tril() + M.tril(-1).mT
    return solve_triangular(_mh(R), grad_q + Q @ M, upper=False, left=False)


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
    float_only=True, complex_inputs=True)
def _solve_triangular(A, B, upper, left=True, unitriangular=False):
    """The recorded op behind :func:`oxmera.linalg.solve_triangular`.

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
    if not left:        # X A = B is A^T X^T = B^T, with the other triangle
        T, B, upper = np.swapaxes(T, -1, -2), np.swapaxes(B, -1, -2), not upper
    try:
        X = np.linalg.solve(T, B)
    except np.linalg.LinAlgError:
        X = _substitute(T, B, upper)
    return X if left else np.swapaxes(X, -1, -2)


def _substitute(T, B, upper):
    """Back (or forward) substitution, for a triangular ``T`` with a zero on
    its diagonal: the inf/nan LAPACK's trsm (and so PyTorch) gives, where
    ``np.linalg.solve`` refuses."""
    batch = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    n = T.shape[-1]
    X = np.zeros(batch + B.shape[-2:], dtype=np.result_type(T, B))
    with np.errstate(all="ignore"):
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            # The rows not solved yet are 0 in X: only solved ones count.
            X[..., i, :] = (B[..., i, :] - (T[..., i:i + 1, :] @ X)[..., 0, :]) / T[..., i, i,
                                                                                    None]
    return X


@_solve_triangular.vjp
def _(ctx, grad, A, B, upper, left=True, unitriangular=False):
    # PyTorch's: gB = A^-H gX (a triangular solve with the other triangle),
    # gA = -gB X^H (left) or -X^H gB, kept to A's (strict) triangle.
    X = ctx.output
    grad_b = _solve_triangular(_mh(A), grad, not upper, left, unitriangular)
    grad_a = None
    if ctx.needs_input_grad[0]:
        grad_a = -(grad_b @ _mh(X)) if left else -(_mh(X) @ grad_b)
        grad_a = grad_a.triu(int(unitriangular)) if upper else grad_a.tril(-int(unitriangular))
    return grad_a, grad_b if ctx.needs_input_grad[1] else None


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` with ``left=False``)
    for a triangular ``A``: ``oxmera.linalg.solve_triangular``.

    Only the triangle ``upper`` selects is read, and not its diagonal when
    ``unitriangular`` (taken as ones). ``B`` is ``(*, n, k)`` (``(*, k, n)``
    when ``left=False``); batch dims broadcast. A zero on the diagonal gives
    inf/nan, as PyTorch's (LAPACK's ``trsm``), not an error.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> oxmera.linalg.solve_triangular(A, oxmera.tensor([[4.0], [8.0]]), upper=True)
    tensor([[1.],
            [2.]], dtype=float32)
    """
    return _solve_triangular(A, B, upper, left, unitriangular)


def cholesky_solve(B, L, upper=False):
    """The solution ``X`` of ``A X = B`` given the Cholesky factor ``L`` of
    ``A`` (``A = L L^H``; ``upper=True``: ``A = U^H U``): ``oxmera.cholesky_solve``.

    ``B`` is ``(*, n, k)``; batch dims broadcast. Two triangular solves,
    differentiable in ``B`` and ``L``.

    Examples
    --------
    >>> import oxmera
    >>> L = oxmera.linalg.cholesky(oxmera.tensor([[4.0, 2.0], [2.0, 2.0]]))
    >>> oxmera.cholesky_solve(oxmera.tensor([[6.0], [4.0]]), L)
    tensor([[1.],
            [1.]], dtype=float32)
    """
    L = _as_tensor(L)
    _check_square(L.shape, "cholesky_solve", "L")
    _check_matrix(_shape_of(B), "cholesky_solve", "B")
    if upper:
        return solve_triangular(L, solve_triangular(_mh(L), B, upper=False), upper=True)
    return solve_triangular(_mh(L), solve_triangular(L, B, upper=False), upper=True)


def cholesky_inverse(L, upper=False):
    """The inverse of ``A`` given its Cholesky factor ``L`` (``A = L L^H``;
    ``upper=True``: ``A = U^H U``): ``oxmera.cholesky_inverse``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cholesky_inverse(oxmera.tensor([[2.0, 0.0], [1.0, 1.0]]))
    tensor([[ 0.5, -0.5],
            [-0.5,  1. ]], dtype=float32)
    """
    L = _as_tensor(L)
    _check_square(L.shape, "cholesky_inverse", "L")
    return cholesky_solve(eye(L.shape[-1], dtype=L.dtype), L, upper)


def vander(x, *, N=None):
    """Vandermonde matrix of ``x`` (``(*, n)``): ``(*, n, N)`` with columns
    ``x**0, x**1, ..., x**(N-1)`` (increasing powers, as PyTorch's;
    ``N`` defaults to ``n`` and must be greater than 1): ``oxmera.linalg.vander``.
    Built by a running product, as PyTorch's, so its gradient is exact at 0.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.vander(oxmera.tensor([1.0, 2.0, 3.0]))
    tensor([[1., 1., 1.],
            [1., 2., 4.],
            [1., 3., 9.]], dtype=float32)
    """
    from oxmera.ops.reduce import cumprod
    x = _as_tensor(x)
    if x.ndim == 0:
        raise OpError("linalg.vander(): x must have at least 1 dimension, got a 0-d tensor")
    N = x.shape[-1] if N is None else N
    if N <= 1:
        raise OpError(f"linalg.vander(): N must be greater than 1, got {N}")
    powers = cumprod(x.unsqueeze(-1).expand(*x.shape, N - 1), -1)
    return _shape.cat([ones(tuple(x.shape) + (1,), dtype=powers.dtype), powers], -1)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of a batch of matrices (the last two dims by default):
    ``oxmera.linalg.diagonal``, :func:`oxmera.diagonal` with matrix defaults.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.diagonal(oxmera.arange(8.0).reshape(2, 2, 2))
    tensor([[0., 3.],
            [4., 7.]], dtype=float32)
    """
    return _shape.diagonal(A, offset, dim1, dim2)


# -- LU ----------------------------------------------------------------------------------------

@op("linalg_lu_factor_ex", save=(), save_output=True, float_only=True, complex_inputs=True,
    outputs=("LU", "pivots", "info"))
def _lu_factor_ex(A, pivot=True, check_errors=False):
    """The recorded op behind :func:`oxmera.linalg.lu_factor`,
    :func:`oxmera.linalg.lu_factor_ex` and :func:`oxmera.linalg.lu`.

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
        # gA = P L^-H [L^H gL o 1_L + gU U^H o 1_U] U^-H
        gA = (_mh(L) @ grad_l).tril(-1) + (grad_u @ _mh(U)).triu()
        gA = solve_triangular(_mh(U), gA, upper=False, left=False)
        gA = solve_triangular(_mh(L), gA, upper=True, unitriangular=True)
    elif m < n:
        U1, grad_u1, grad_u2 = U[..., :k], grad_u[..., :k], grad_u[..., k:]
        gA = _mh(L) @ grad_l - grad_u.triu() @ _mh(U)
        gA = solve_triangular(_mh(U1), gA.tril(-1), upper=False, left=False)
        gA = _shape.cat([gA + grad_u1.triu(), grad_u2], -1)
        gA = solve_triangular(_mh(L), gA, upper=True, unitriangular=True)
    else:
        L1, grad_l1, grad_l2 = L[..., :k, :], grad_l[..., :k, :], grad_l[..., k:, :]
        gA = grad_u @ _mh(U) - _mh(L) @ grad_l.tril(-1)
        gA = solve_triangular(_mh(L1), gA.triu(), upper=True, unitriangular=True)
        gA = _shape.cat([gA + grad_l1.tril(-1), grad_l2], -2)
        gA = solve_triangular(_mh(U), gA, upper=False, left=False)
    return P @ gA


_LUFactor = _result_type("linalg_lu_factor", ("LU", "pivots"))


def lu_factor(A, *, pivot=True):
    """Compact LU decomposition with partial pivoting: ``oxmera.linalg.lu_factor``,
    a named tuple ``(LU, pivots)`` as LAPACK's ``getrf`` (``pivots`` int32,
    1-based: row ``i`` was swapped with row ``pivots[i]``).

    A matrix with an exact zero on ``U``'s diagonal is a
    :class:`oxmera.linalg.LinAlgError` (use :func:`oxmera.linalg.lu_factor_ex`
    or :func:`oxmera.linalg.lu` then). ``pivot=False`` is not
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
    """:func:`oxmera.linalg.lu_factor` that reports singular matrices instead of raising:
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
    """The solution of ``A X = B`` from :func:`oxmera.linalg.lu_factor`'s ``(LU, pivots)``:
    ``oxmera.linalg.lu_solve`` (``left=False``: ``X A = B``; ``adjoint=True``:
    with ``A^H``, the conjugate transpose). Composed of triangular solves, differentiable in ``LU``
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
    if left:                        # X = P L^-H U^-H B
        X = solve_triangular(_mh(U), B, upper=False)
        return P @ solve_triangular(_mh(L), X, upper=True, unitriangular=True)
    if not adjoint:                 # X = B U^-1 L^-1 P^T
        X = solve_triangular(U, B, upper=True, left=False)
        return solve_triangular(L, X, upper=False, left=False, unitriangular=True) @ P.mT
    X = solve_triangular(_mh(L), B @ P, upper=True, left=False, unitriangular=True)
    return solve_triangular(_mh(U), X, upper=False, left=False)   # X = B P L^-H U^-H


# -- Tensor methods (as in PyTorch) ----------------------------------------------------------

def _method(fn, name):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``oxmera.{name}(self, ...)``: PyTorch's ``Tensor.{name}``."
    return method


for _name, _fn in (("svd", svd), ("cholesky", cholesky), ("qr", qr),
                   ("cholesky_solve", cholesky_solve), ("cholesky_inverse", cholesky_inverse)):
    _registry.add_tensor_attribute(_name, _method(_fn, _name))
del _name, _fn


for _fn in (linalg_svd, linalg_cholesky, linalg_qr):
    # Documented and re-exported as oxmera.linalg.svd etc.
    _fn.__name__ = _fn.__qualname__ = _fn.__name__[len("linalg_"):]
del _fn
