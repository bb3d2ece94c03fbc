"""``oxmera.numpy.fft``: ``numpy.fft`` over oxmera tensors (``oxmera.fft``'s ops).

Generated as ``oxmera.numpy.linalg`` is: each name runs the translator
``Tensor.__array_function__`` runs for ``np.fft.NAME(t)``, which maps NumPy's
arguments onto ``oxmera.fft`` (``axis``/``axes`` -> ``dim``; ``n``, ``s`` and
``norm`` as they are), so the transforms are differentiable to any order.
Integer inputs transform as float64, as in NumPy. ``fftfreq(n, d)`` and
``rfftfreq`` are NumPy's own values (as float64 tensors) unless ``d`` is a
tensor, whose gradient they then carry.
"""
import numpy as _np

from oxmera.numpy import _fft_translators  # noqa: F401  (registers NumPy's argument names)
from oxmera.numpy import _wrap

__all__ = list(_np.fft.__all__)

globals().update(_wrap.wrap_submodule("fft", __all__, __name__))
