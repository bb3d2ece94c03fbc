"""SciPy's inputs as oxmera tensors, shared by the ``oxmera.scipy`` modules.

SciPy takes numbers, lists and arrays and computes in float64; its twins
here take the same, plus Tensors (kept as they are, graph and dtype
included). A value that is not a Tensor becomes a float64 tensor (integers
too, as SciPy's ufuncs promote them), so ``gammaln([1, 2])`` is float64 as
in SciPy, while ``gammaln(t)`` keeps ``t``'s dtype; a 0-d float64 tensor
does not widen a float32 tensor it meets (PyTorch's promotion).
"""
import numbers

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.ops.creation import from_numpy

__all__ = ["as_tensor", "as_tensors", "axis_dims"]


def as_tensor(value, name, what="input"):
    """``value`` as a Tensor (float64 unless it is one already); None stays None."""
    if value is None or isinstance(value, Tensor):
        return value
    if isinstance(value, (numbers.Number, list, tuple, np.ndarray, np.generic)):
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            return from_numpy(np.array(array, dtype=np.float64))
    raise TypeError(f"{name}(): {what} must be a Tensor, a real number or an array of them, "
                    f"got {type(value).__name__}"
                    + (f" of dtype {np.asarray(value).dtype}" if hasattr(value, "dtype") else ""))


def as_tensors(name, *values):
    """Each of ``values`` through :func:`as_tensor`."""
    return tuple(as_tensor(value, name) for value in values)


def axis_dims(axis):
    """SciPy's ``axis`` as oxmera's ``dim``: None (all axes) is ``()``."""
    if axis is None:
        return ()
    if isinstance(axis, (list, tuple)):
        return tuple(int(a) for a in axis)
    return int(axis)
