"""Functions of matrices behind ``oxmera.linalg`` (as ``torch.linalg``), for
float32, float64, complex64 and complex128 inputs, built on the decompositions of
``oxmera.ops.decompositions``.

Primitives with VJPs of their own (PyTorch's formulas, written with oxmera
ops so they differentiate again): slogdet, pinv, the least-squares solution
and matrix_exp. logdet, matrix_power, cond, vecdot, tensorinv, tensorsolve,
inv_ex and solve_ex are composed of ops; matrix_rank is not differentiable.
matrix_exp computes with SciPy (``pip install oxmera[scipy]``); the others
with NumPy.

``__all__`` lists what is also ``oxmera.NAME`` (PyTorch's top-level names);
the ``oxmera.linalg`` names are re-exported there.
"""
import math

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops import shape as _shape
from oxmera.ops._utils import real_of
from oxmera.ops.complex import cj, imag
from oxmera.ops.creation import eye, tensor, zeros
from oxmera.ops.decompositions import (_check_matrix, _method, _result_type, _scipy_linalg,
                                       _unsqueeze2)
from oxmera.ops.elementwise import log, where
from oxmera.ops.linalg import _as_tensor, _check_square, _shape_of, inv, solve

__all__ = ["slogdet", "logdet", "matrix_power", "matrix_exp", "pinverse"]

OpError = _core.OpError
Tensor = _core.Tensor


# -- slogdet, logdet ---------------------------------------------------------------------------

@op("linalg_slogdet", save=("A",), save_output=True, float_only=True, complex_inputs=True,
    outputs=("sign", "logabsdet"))
def slogdet(A):
    """Sign and log of the absolute value of the determinant:
    ``oxmera.linalg.slogdet`` (also ``oxmera.slogdet``), a named tuple
    ``(sign, logabsdet)``; a singular matrix gives ``(0, -inf)``.

    The gradient of ``logabsdet`` is ``inv(A)^T``, as PyTorch's (NaN at a
    singular matrix, as PyTorch's); ``sign`` is piecewise constant, its
    gradient zero. For a complex ``A``, ``sign`` is complex with ``|sign| =
    1`` (``logabsdet`` real) and differentiable: the gradient is ``(g_l + i
    Im(conj(sign) g_s)) inv(A)^H``, PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.slogdet(oxmera.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    linalg_slogdet(sign=tensor(-1., dtype=float32), logabsdet=tensor(1.7918, dtype=float32))
    """
    _check_square(A.shape, "linalg.slogdet")
    sign, logabsdet = np.linalg.slogdet(A)
    return np.asarray(sign, dtype=A.dtype), np.asarray(logabsdet, dtype=real_of(A.dtype))


@slogdet.vjp
def _(ctx, grads, A):
    try:
        inverse = inv(A)
    except OpError:
        # A singular matrix: log|det| is -inf there and has no gradient;
        # PyTorch's is NaN, so is this one.
        inverse = A * math.nan
    if A.dtype.kind != "c":
        return _unsqueeze2(grads[1]) * inverse.mT
    # log det A = logabsdet + i angle(sign): the sign's gradient moves the angle.
    sign = ctx.output[0]
    g = grads[1] + 1j * imag(cj(sign) * grads[0])
    return _unsqueeze2(g) * cj(inverse).mT


def logdet(input):
    """Log of the determinant: ``oxmera.logdet``; NaN for a negative
    determinant and ``-inf`` for zero, as PyTorch's. For a complex matrix,
    the complex logarithm ``log(sign) + logabsdet``, as PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.logdet(oxmera.tensor([[2.0, 0.0], [0.0, 3.0]]))
    tensor(1.7918, dtype=float32)
    >>> oxmera.logdet(oxmera.tensor([[-2.0, 0.0], [0.0, 3.0]]))
    tensor(nan, dtype=float32)
    """
    sign, logabsdet = slogdet(input)
    if sign.dtype.kind == "c":
        # log det A, complex: its imaginary part is the determinant's angle.
        return log(sign) + logabsdet
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
    return V, np.abs(w), _adjoint(V * np.sign(w)[..., None, :])


def _adjoint(a):
    """The conjugate transpose of an array (no copy for a real one)."""
    return np.swapaxes(a.conj() if a.dtype.kind == "c" else a, -1, -2)


@op("linalg_pinv", save=("A",), save_output=True, float_only=True, complex_inputs=True)
def _pinv(A, atol=None, rtol=None, hermitian=False):
    """The recorded op behind :func:`oxmera.linalg.pinv`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.matrix_functions import _pinv
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
    return _adjoint(Vh) @ (inverse[..., None] * _adjoint(U))


@_pinv.vjp
def _(ctx, grad, A, atol=None, rtol=None, hermitian=False):
    return _pinv_backward(grad, ctx.output, A)


def _pinv_backward(grad, P, A):
    # PyTorch's pinv_backward (Golub & Pereyra: the rank held constant).
    m, n = A.shape[-2], A.shape[-1]
    Ph, gh = cj(P).mT, cj(grad).mT
    if m <= n:
        K = gh @ P
        KPh = K @ Ph
        return -cj(P @ K).mT + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    K = P @ gh
    PhK = Ph @ K
    return -cj(K @ P).mT + (gh - A @ K) @ P @ Ph + PhK - PhK @ P @ A


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """Moore-Penrose pseudo-inverse: ``oxmera.linalg.pinv``.

    Singular values at or below ``max(atol, rtol * s_max)`` count as zero;
    ``rtol`` defaults to ``eps * max(m, n)`` when ``atol`` is not given
    (or is 0), else to 0. ``rcond`` (also positional, as in PyTorch and NumPy) is the older name of
    ``rtol``.
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



@op("linalg_matrix_rank", differentiable=False, float_only=True, complex_inputs=True)
def _matrix_rank(A, atol=None, rtol=None, hermitian=False):
    """The op behind :func:`oxmera.linalg.matrix_rank` (not differentiable).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.matrix_functions import _matrix_rank
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


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """Numerical rank (int64): the number of singular values above
    ``max(atol, rtol * s_max)`` (defaults as :func:`oxmera.linalg.pinv`):
    ``oxmera.linalg.matrix_rank``. ``tol`` (also positional, as in PyTorch
    and NumPy) is the older name of ``atol``. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.matrix_rank(oxmera.tensor([[1.0, 2.0], [2.0, 4.0]]))
    tensor(1, dtype=int64)
    >>> oxmera.linalg.matrix_rank(oxmera.tensor([[1.0, 0.0], [0.0, 0.1]]), 0.5)
    tensor(1, dtype=int64)
    """
    if tol is not None:
        if atol is not None:
            raise OpError("linalg.matrix_rank(): give atol or its older name tol, not both")
        atol = tol
    return _matrix_rank(A, atol, rtol, hermitian)


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@op("linalg_lstsq", inputs=2, promote=True, float_only=True, complex_inputs=True)
def _lstsq_solution(A, B, rcond=None):
    """The recorded least-squares solution behind :func:`oxmera.linalg.lstsq` (``B`` a batch
    of matrices).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.matrix_functions import _lstsq_solution
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
    residuals = np.zeros(batch + (k,), dtype=real_of(A.dtype))
    rank = np.zeros(batch, dtype=np.int64)
    values = np.zeros(batch + (min(m, n),), dtype=real_of(A.dtype))
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
    grad_a = _pinv_backward(grad @ cj(B).mT, P, A) if needs[0] else None
    return grad_a, (cj(P).mT @ grad) if needs[1] else None


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
    norms, ``(*, k)``, ``k = 1`` for vectors) for ``'gels'``, ``'gelsd'``,
    ``'gelss'`` when ``m > n`` and every matrix has full rank, else empty;
    ``rank`` (int64) except for ``'gels'``; ``singular_values`` for
    ``'gelsd'`` and ``'gelss'``. Only the solution is differentiable, with
    PyTorch's gradient (through ``pinv(A)``); PyTorch's residuals of a batch
    of vectors also record a gradient, oxmera's never do.

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
    # The other fields again, outside the graph (not differentiable, as in
    # PyTorch): a second NumPy pass rather than outputs of the recorded op.
    dtype = X.detach().numpy().dtype
    _, residuals, rank, values = _lstsq_arrays(a.astype(dtype), b.astype(dtype), rcond)
    m, n = sa[-2:]
    empty = np.zeros((0,), dtype=values.dtype)
    full_rank = bool(np.all(rank == min(m, n)))
    if driver == "gelsy" or not (m > n and full_rank):
        residuals = empty
    if driver == "gels":
        rank = np.zeros((0,), dtype=np.int64)
    if driver not in ("gelsd", "gelss"):
        values = empty
    return _Lstsq(X.squeeze(-1) if vector else X, tensor(residuals), tensor(rank),
                  tensor(values))


# -- matrix functions --------------------------------------------------------------------------

@op("linalg_matrix_exp", save=("A",), float_only=True, complex_inputs=True)
def matrix_exp(A):
    """Matrix exponential: ``oxmera.linalg.matrix_exp`` (also ``oxmera.matrix_exp``).

    The gradient is PyTorch's: the upper-right block of the exponential of
    ``[[A^H, G], [0, A^H]]``, itself a matrix_exp, so it differentiates
    again; real and complex inputs. Needs SciPy (``scipy.linalg.expm``).

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
    # The adjoint of the Frechet derivative at A is the derivative at A^H.
    n = A.shape[-1]
    Ah = cj(A).mT
    top = _shape.cat([Ah, grad], -1)
    bottom = _shape.cat([zeros(tuple(grad.shape), dtype=grad.dtype), Ah], -1)
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
    ``oxmera.linalg.vecdot``: ``(conj(x) * y).sum(dim)``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.vecdot(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]), oxmera.tensor([1.0, 1.0]))
    tensor([3., 7.], dtype=float32)
    """
    x, y = _as_tensor(x), _as_tensor(y)
    return (cj(x) * y).sum(dim)


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


def _no_info(A):
    return tensor(np.zeros(tuple(A.shape[:-2]), dtype=np.int32))


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
    >>> A = oxmera.tensor([[[2.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]])
    >>> oxmera.linalg.inv_ex(A).info
    tensor([0, 2], dtype=int32)
    """
    A = _as_tensor(A)
    info = _singular_info(A, "linalg.inv_ex")
    if info is None or check_errors:
        inverse = inv(A)
        return _InvEx(inverse, _no_info(A))
    mask, fixed = _masked_singular(A, info)
    return _InvEx(where(_unsqueeze2(mask), math.nan, inv(fixed)), tensor(info))


def solve_ex(A, B, *, left=True, check_errors=False):
    """:func:`oxmera.linalg.solve` that reports singular matrices instead of
    raising: ``oxmera.linalg.solve_ex``, a named tuple ``(result, info)``
    (``info`` as :func:`oxmera.linalg.inv_ex`'s; a singular system's result NaN).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.solve_ex(oxmera.eye(2), oxmera.ones(2)).info
    tensor(0, dtype=int32)
    """
    A = _as_tensor(A)
    info = _singular_info(A, "linalg.solve_ex")
    if info is None or check_errors:
        return _SolveEx(solve(A, B, left=left), _no_info(A))
    mask, fixed = _masked_singular(A, info)
    result = solve(fixed, B, left=left)
    # The mask over the result: a batch of vectors lacks the last dim.
    vector = result.ndim == max(A.ndim - 1, _as_tensor(B).ndim) and result.ndim < A.ndim
    mask = mask.unsqueeze(-1) if vector else _unsqueeze2(mask)
    return _SolveEx(where(mask, math.nan, result), tensor(info))


# -- Tensor methods (as in PyTorch) ----------------------------------------------------------

for _name, _fn in (("slogdet", slogdet), ("logdet", logdet), ("matrix_power", matrix_power),
                   ("matrix_exp", matrix_exp), ("pinverse", pinverse)):
    _registry.add_tensor_attribute(_name, _method(_fn, _name))
del _name, _fn
