"""``oxmera.numpy.linalg``: ``numpy.linalg`` over oxmera tensors (``oxmera.linalg``'s ops).

Generated as ``oxmera.numpy`` is: each name runs the translator
``Tensor.__array_function__`` runs for ``np.linalg.NAME(t)``, which maps
NumPy's arguments onto ``oxmera.linalg`` (``axis`` -> ``dim``, ``rcond`` ->
``rtol``, ``compute_uv=False`` -> ``svdvals`` ...). Complex results
(``eig``, ``eigvals``) need complex tensors, which oxmera does not have yet:
they raise ``TypeError`` for inputs that require grad.
"""
import numpy as _np

from oxmera.numpy import _linalg_translators  # noqa: F401  (registers NumPy's argument names)
from oxmera.numpy import _wrap
from oxmera.numpy._examples import example_section

__all__ = [name for name in _np.linalg.__all__ if name != "LinAlgError"] + ["LinAlgError"]

# What oxmera.linalg raises (NumPy's own class is not its base), so that
# ``except onp.linalg.LinAlgError`` catches a failed factorization.
from oxmera.linalg import LinAlgError  # noqa: E402


def _generate():
    namespace = {}
    for name in __all__[:-1]:
        function = _wrap.wrap(f"linalg.{name}", getattr(_np.linalg, name))
        function.__name__ = function.__qualname__ = name
        function.__module__ = __name__
        function.__doc__ = (f"NumPy's ``numpy.linalg.{name}`` on oxmera tensors (differentiable "
                            f"where oxmera.linalg has the op).\n\n"
                            f"{example_section('linalg.' + name)}")
        namespace[name] = function
    return namespace


globals().update(_generate())
