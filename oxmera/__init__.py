"""oxmera: NumPy-backed tensors with reverse-mode automatic differentiation.

Curated re-exports only; the code lives in ``oxmera._core`` (compiled),
``oxmera.ops`` and ``oxmera.autograd``.
"""
import os as _os

import numpy as _np

from oxmera._core import autograd as _autograd_core
from oxmera._core import _kernels as _kernels_core

# A training step frees arrays of a few MiB that the next step allocates again;
# at glibc's starting thresholds each one is unmapped or trimmed and faulted back
# in (up to half a convolution step's time). Raised here as freeing one 32 MiB
# array would; OXMERA_MALLOC_THRESHOLDS=0 leaves malloc as the process set it.
if _os.environ.get("OXMERA_MALLOC_THRESHOLDS", "") != "0":
    _kernels_core.raise_malloc_thresholds()
from oxmera import _settings
from oxmera._device import device, get_default_device, set_default_device
from oxmera._layout import (channels_last, channels_last_3d, contiguous_format, layout,
                            memory_format, preserve_format, sparse_coo, sparse_csr, strided)
from oxmera import random
from oxmera.random import (Generator, default_generator, get_rng_state, initial_seed,
                           manual_seed, seed, set_rng_state)
from oxmera._core.autograd import (AutogradMeta, GradFn, OpError, Size, Tensor,
                                   get_default_dtype, set_default_dtype)
from oxmera import ops as _ops  # defines every op and installs the Tensor methods
from oxmera import autograd
from oxmera.autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from oxmera.ops.activation import *  # noqa: F403  (each op module's __all__ is its public ops)
from oxmera.ops.blas import *  # noqa: F403
from oxmera.ops.complex import *  # noqa: F403
from oxmera.ops.construction import *  # noqa: F403
from oxmera.ops.conversion import *  # noqa: F403
from oxmera.ops.creation import *  # noqa: F403
from oxmera.ops.decompositions import *  # noqa: F403
from oxmera.ops.elementwise import *  # noqa: F403
from oxmera.ops.index import *  # noqa: F403
from oxmera.ops.inplace import *  # noqa: F403
from oxmera.ops.interop import *  # noqa: F403
from oxmera.ops.linalg import *  # noqa: F403
from oxmera.ops.matrix_functions import *  # noqa: F403
from oxmera.ops.pointwise import *  # noqa: F403
from oxmera.ops.reduce import *  # noqa: F403
from oxmera.ops.sampling import *  # noqa: F403
from oxmera.ops.scatter import *  # noqa: F403
from oxmera.ops.shape import *  # noqa: F403
from oxmera.ops.sorting import *  # noqa: F403
from oxmera.ops.sparse import *  # noqa: F403
from oxmera.ops.special import *  # noqa: F403
from oxmera.ops.statistics import *  # noqa: F403
from oxmera.ops.tensor_api import *  # noqa: F403
from oxmera.ops.tensor_types import *  # noqa: F403
from oxmera import _dtypes, _printing
from oxmera._dtypes import *  # noqa: F403
from oxmera._printing import *  # noqa: F403
from oxmera import fft, linalg, nn, sparse, special
from oxmera import distributed
from oxmera import numpy  # NumPy's names over tensors; registers its composed translators
from oxmera import optim, utils
from oxmera import accelerator, backends, cuda
from oxmera._settings import *  # noqa: F403
from oxmera.serialization import load, save

__version__ = "0.1.0"

float16 = _np.dtype(_np.float16)
float32 = _np.dtype(_np.float32)
float64 = _np.dtype(_np.float64)
int8 = _np.dtype(_np.int8)
int16 = _np.dtype(_np.int16)
int32 = _np.dtype(_np.int32)
int64 = _np.dtype(_np.int64)
uint8 = _np.dtype(_np.uint8)
complex64 = _np.dtype(_np.complex64)
complex128 = _np.dtype(_np.complex128)
cfloat, cdouble = complex64, complex128
bool = _np.dtype(_np.bool_)
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64

__all__ = [
    "Tensor", "Size", "AutogradMeta", "GradFn", "OpError", "autograd", "fft", "linalg", "nn",
    "optim",
    "utils",
    "save", "load", "random", "cuda", "backends", "accelerator", "special", "distributions",  # noqa: F405
    "distributed", "profiler",  # noqa: F405
    "device", "get_default_device", "set_default_device",
    "memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d",
    "layout", "strided", "sparse_coo", "sparse_csr", "sparse",
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
    "set_rng_state",
    "get_default_dtype", "set_default_dtype",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    *_settings.__all__,
    # the op modules star-imported above, one a line
    *_ops.activation.__all__,
    *_ops.blas.__all__,
    *_ops.complex.__all__,
    *_ops.construction.__all__,
    *_ops.conversion.__all__,
    *_ops.creation.__all__,
    *_ops.decompositions.__all__,
    *_ops.elementwise.__all__,
    *_ops.index.__all__,
    *_ops.inplace.__all__,
    *_ops.interop.__all__,
    *_ops.linalg.__all__,
    *_ops.matrix_functions.__all__,
    *_ops.pointwise.__all__,
    *_ops.reduce.__all__,
    *_ops.sampling.__all__,
    *_ops.scatter.__all__,
    *_ops.shape.__all__,
    *_ops.sorting.__all__,
    *_ops.sparse.__all__,
    *_ops.special.__all__,
    *_ops.statistics.__all__,
    *_ops.tensor_api.__all__,
    *_ops.tensor_types.__all__,
    *_dtypes.__all__,
    *_printing.__all__,
    "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
    "half", "float", "double", "short", "int", "long",
    "complex64", "complex128", "cfloat", "cdouble",
]

# Loaded on first use, not by ``import oxmera``: 1.5 MB and ~40 modules that
# most programs never touch. ``oxmera.distributions`` as an attribute,
# ``import oxmera.profiler`` and ``from oxmera import distributions`` all work
# as before (each tidies its own dir() when it loads).
_ON_FIRST_USE = ("distributions", "profiler")


def __getattr__(name):
    if name in _ON_FIRST_USE:
        import importlib
        return importlib.import_module(f"oxmera.{name}")
    raise AttributeError(f"module 'oxmera' has no attribute {name!r}")


from oxmera import _exports  # noqa: E402  (last: every public module is loaded by now)

_exports.tidy_loaded_modules()
