"""Helpers the layer modules share: factory arguments and PyTorch's n-tuple expansion."""
import collections.abc
import itertools

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import creation as _creation


def factory_dtype(device, dtype, layer):
    """The float dtype a layer creates its parameters in (the default one unless given)."""
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"{layer}: oxmera runs on the CPU only, got device {device!r}")
    dtype = _core.get_default_dtype() if dtype is None else np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"{layer}: parameters must have a floating point dtype, got {dtype}")
    return dtype


def empty(shape, dtype):
    """An uninitialized tensor (reset_parameters fills it)."""
    return _creation.empty(*shape, dtype=dtype)


def ntuple(n):
    """``ntuple(2)(3) == (3, 3)``; an iterable is made a tuple as is (PyTorch's ``_ntuple``)."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable) and not isinstance(x, str):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    return parse


single, pair = ntuple(1), ntuple(2)
