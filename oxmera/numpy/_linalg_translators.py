"""``numpy.linalg`` functions whose arguments differ from ``oxmera.linalg``'s, as translators.

Registered in ``oxmera.ops.interop``'s table, so ``np.linalg.svd(t)`` and
``oxmera.numpy.linalg.svd(t)`` both run them. The others map by name (see
``interop._by_name``: ``axis`` -> ``dim``, ``keepdims`` -> ``keepdim``).
"""
import numpy as np

from oxmera.ops import interop as _interop

_implements = _interop._implements
_tensor = _interop._tensor


def _linalg():
    import oxmera
    return oxmera.linalg


@_implements("linalg.svd")
def _np_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        return _linalg().svdvals(a)
    return _linalg().svd(a, full_matrices=full_matrices)


@_implements("linalg.qr")
def _np_qr(a, mode="reduced"):
    if mode == "r":
        return _linalg().qr(a, mode="r").R
    if mode not in ("reduced", "complete"):
        raise _interop._unsupported("numpy.linalg.qr", f"mode={mode!r}")
    return _linalg().qr(a, mode=mode)


@_implements("linalg.matrix_rank")
def _np_matrix_rank(A, tol=None, hermitian=False, *, rtol=None):
    return _linalg().matrix_rank(A, atol=tol, rtol=rtol, hermitian=hermitian)


@_implements("linalg.tensorsolve")
def _np_tensorsolve(a, b, axes=None):
    return _linalg().tensorsolve(a, b, dims=axes)


@_implements("linalg.trace")
def _np_trace(x, /, *, offset=0, dtype=None):
    diagonal = _linalg().diagonal(_interop._cast(_tensor(x), dtype), offset=offset)
    return diagonal.sum(dim=-1)


@_implements("linalg.outer")
def _np_outer(x1, x2, /):
    x, y = _tensor(x1), _tensor(x2)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"numpy.linalg.outer: Input arrays must be one-dimensional, got shapes "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    return x.reshape(-1, 1) * y.reshape(1, -1)


@_implements("linalg.cross")
def _np_cross(x1, x2, /, *, axis=-1):
    return _linalg().cross(_tensor(x1), _tensor(x2), dim=axis)


@_implements("linalg.matrix_transpose")
def _np_matrix_transpose(x, /):
    return _tensor(x).transpose(-2, -1)


@_implements("linalg.vecdot")
def _np_vecdot(x1, x2, /, *, axis=-1):
    return _linalg().vecdot(_tensor(x1), _tensor(x2), dim=axis)


@_implements("linalg.cholesky")
def _np_cholesky(a, /, *, upper=False):
    return _linalg().cholesky(a, upper=upper)


@_implements("linalg.lstsq")
def _np_lstsq(a, b, rcond=None):
    # NumPy reports the singular values: the "gelsd" driver computes them.
    B = _tensor(b)
    vector = B.ndim == 1
    result = _linalg().lstsq(a, B.unsqueeze(-1) if vector else B, rcond=rcond, driver="gelsd")
    solution, residuals = result.solution, result.residuals
    if vector:
        solution = solution.squeeze(-1)
        residuals = residuals.reshape(-1)
    return solution, residuals, result.rank, result.singular_values


# NumPy up to 2.4 gives a real matrix whose eigenvalues are all real real results;
# NumPy 2.5 always gives complex ones. Asked of the installed NumPy once.
_REAL_WHEN_ALL_REAL = np.linalg.eigvals(np.eye(1)).dtype.kind != "c"


def _real_if_all_real(A, values, *others):
    """The installed NumPy's dtype rule for ``eig``/``eigvals``: up to NumPy 2.4, a real
    matrix whose eigenvalues are all real gets real results (the real parts, which carry
    the gradient); else, and always from NumPy 2.5, complex."""
    if _REAL_WHEN_ALL_REAL and A.dtype.kind != "c" and not values._data.imag.any():
        import oxmera
        return (oxmera.real(values),) + tuple(oxmera.real(o) for o in others)
    return (values,) + others


def _square_input(a):
    # NumPy's: integer matrices are decomposed in float64.
    A = _tensor(a)
    return A if A.dtype.kind in "fc" else A.to(np.float64)


@_implements("linalg.eig")
def _np_eig(a):
    A = _square_input(a)
    result = _linalg().eig(A)
    return type(result)(*_real_if_all_real(A, result.eigenvalues, result.eigenvectors))


@_implements("linalg.eigvals")
def _np_eigvals(a):
    A = _square_input(a)
    return _real_if_all_real(A, _linalg().eigvals(A))[0]
