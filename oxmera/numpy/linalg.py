"""``oxmera.numpy.linalg``: ``numpy.linalg`` over oxmera tensors (``oxmera.linalg``'s ops).

Generated as ``oxmera.numpy`` is: each name runs the translator
``Tensor.__array_function__`` runs for ``np.linalg.NAME(t)``, which maps
NumPy's arguments onto ``oxmera.linalg`` (``axis`` -> ``dim``, ``rcond`` ->
``rtol``, ``compute_uv=False`` -> ``svdvals`` ...). ``eig`` and ``eigvals``
follow the installed NumPy's dtype rule: up to NumPy 2.4 the eigenvalues of a
real matrix come back real when all of them are, complex otherwise; from
NumPy 2.5 they are always complex.
"""
import numpy as _np

from oxmera.numpy import _linalg_translators  # noqa: F401  (registers NumPy's argument names)
from oxmera.numpy import _wrap

__all__ = [name for name in _np.linalg.__all__ if name != "LinAlgError"] + ["LinAlgError"]

# What oxmera.linalg raises (NumPy's own class is not its base), so that
# ``except onp.linalg.LinAlgError`` catches a failed factorization.
from oxmera.linalg import LinAlgError  # noqa: E402


globals().update(_wrap.wrap_submodule("linalg", __all__[:-1], __name__))
