"""``oxmera.numpy``: NumPy's functions over oxmera tensors, differentiable.

``import oxmera.numpy as onp`` and write NumPy code: ``onp.sum(x, axis=0)``,
``onp.linalg.cholesky(K)``, ``onp.fft.rfft(x)``, ``onp.array([[a, b], [c, d]])``
take arrays, lists, numbers and tensors (real or complex) and return tensors
whose gradients flow back, as ``autograd.numpy`` and ``jax.numpy`` do. NumPy's names, argument names
(``axis``, ``keepdims``, ``ddof``) and defaults hold; ``out=`` raises
``TypeError``.

How it is made
    Each NumPy function's ``onp`` twin is generated (``_wrap.wrap``): it
    runs the same translator ``Tensor.__array_function__`` runs for
    ``np.NAME(t)`` (``oxmera/ops/interop.py``, and ``_composed.py`` for the
    functions composed from oxmera ops: ``sort``, ``interp``, ``convolve``,
    ``gradient``, ``trapezoid``, ``linspace`` ...). Written out here are only
    what NumPy's protocols cannot reach: ``array``/``asarray`` of lists
    holding tensors, ``r_``, ``c_``, ``append`` (``_construct.py``).

What has no gradient
    A NumPy function oxmera has no op for runs NumPy on the values when no
    input requires grad, and raises ``TypeError`` naming it when one does:
    a gradient is never dropped silently. Functions that write into their
    argument (``copyto``, ``put``, ``fill_diagonal`` ...) are not offered:
    write ``t[...] = v``.

NumPy's meaning where PyTorch's differs
    ``onp.size(t)`` is the number of elements (``t.size()`` is the shape),
    ``onp.transpose(t)`` reverses the axes, ``onp.repeat`` is
    ``repeat_interleave``, ``onp.median`` averages the middle two, ``onp.var``
    and ``onp.std`` default to ``ddof=0``, ``onp.max(t, axis=0)`` returns
    values only, ``onp.meshgrid`` defaults to ``indexing="xy"``.
"""
import sys as _sys

import numpy as _np

from oxmera import _exports
from oxmera.numpy import _composed  # noqa: F401  (registers the composed translators)
from oxmera.numpy import _wrap
from oxmera.numpy._construct import append, array, asarray, c_, r_  # noqa: F401
from oxmera.numpy._examples import example_section

#: NumPy's functions that take no array data (dtypes, printing, settings):
#: the same objects, so their results are NumPy's. Reachable, but not in
#: ``__all__``: they are NumPy's, documented there.
_NUMPY_ITSELF = ("base_repr", "binary_repr", "broadcast_shapes", "format_float_positional",
                 "format_float_scientific", "get_printoptions", "getbufsize", "geterr",
                 "geterrcall", "isdtype", "issubdtype", "mintypecode", "printoptions",
                 "promote_types", "set_printoptions", "setbufsize", "seterr", "seterrcall",
                 "typename", "isscalar", "iterable")

#: NumPy's constants, the same objects.
_CONSTANTS = ("pi", "e", "inf", "nan", "newaxis", "euler_gamma", "s_", "index_exp")

#: NumPy's types, the same objects, so ``onp.float64`` works as a dtype
#: argument and in ``isinstance``; reachable, but not part of ``__all__``
#: (they are NumPy's classes, documented there).
_TYPES = ("dtype", "finfo", "iinfo", "errstate", "bool", "bool_", "float16", "float32",
          "float64", "half", "single", "double", "complex64", "complex128", "csingle",
          "cdouble", "int8", "int16", "int32", "int64", "intp",
          "int_", "uint8", "uint16", "uint32", "uint64", "uint", "generic", "number", "integer",
          "signedinteger", "unsignedinteger", "floating", "complexfloating", "inexact")

#: NumPy functions left out of oxmera.numpy, and why (tests check the list is complete).
NOT_OFFERED = {
    **dict.fromkeys(("copyto", "place", "put", "putmask", "put_along_axis", "fill_diagonal"),
                    "writes into its argument: use t[...] = v"),
    **dict.fromkeys(("asmatrix", "bmat"), "numpy.matrix has no tensor counterpart"),
    **dict.fromkeys(("nested_iters", "frompyfunc", "get_include", "show_config", "show_runtime",
                     "test", "info", "datetime_as_string", "datetime_data", "busday_count",
                     "busday_offset", "is_busday"),
                    "not about array values (use numpy's own)"),
    "from_dlpack": "use oxmera.from_dlpack",
}

#: Written out in _construct.py; every other NumPy function is generated.
_WRITTEN = {"array": array, "asarray": asarray, "asanyarray": asarray, "append": append}


def _numpy_functions():
    names = []
    loaded = vars(_np)      # not dir(): getattr on it would import numpy.testing & co.
    for name in sorted(loaded):
        value = loaded[name]
        if (name.startswith("_") or isinstance(value, type) or not callable(value)
                or name in NOT_OFFERED or name in _NUMPY_ITSELF):
            continue
        names.append(name)
    return names


def _generate():
    namespace = {}
    for name in _numpy_functions():
        function = _WRITTEN.get(name) or _wrap.wrap(name, getattr(_np, name))
        if name not in _WRITTEN:
            function.__doc__ = (f"NumPy's ``numpy.{name}`` on oxmera tensors "
                                f"(differentiable where oxmera has the ops).\n\n"
                                f"{example_section(name)}")
        namespace[name] = function
    for name in _NUMPY_ITSELF + _CONSTANTS + _TYPES:
        namespace[name] = getattr(_np, name)
    return namespace


globals().update(_generate())

from oxmera.numpy import fft, linalg, random  # noqa: E402  (submodules use the functions above)

__all__ = sorted({*_numpy_functions(), *_CONSTANTS, "r_", "c_", "fft", "linalg", "random"})

_exports.tidy(fft)
_exports.tidy(linalg)
_exports.tidy(random)
_exports.tidy(_sys.modules[__name__])
