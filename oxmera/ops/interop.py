"""Interoperability: the NumPy protocols, DLPack, pickling and copying of tensors.

What this module owns
    Tensor attributes installed through the registry: ``__array_ufunc__`` and
    ``__array_function__`` (NumPy functions on tensors run oxmera ops, so they
    return tensors and are differentiable), ``__dlpack__`` /
    ``__dlpack_device__`` and :func:`from_dlpack` (zero-copy exchange with
    NumPy, PyTorch and any DLPack producer), ``__reduce_ex__``, ``__copy__``
    and ``__deepcopy__`` (pickle and :mod:`copy`, Tensor subclasses included).

What it leaves to others
    Every computation is an existing oxmera op, looked up by name *when the
    NumPy function is called* (so ops added later are picked up); this module
    registers no op and has no VJP. ``__array__`` (``np.asarray(t)``) is the
    core's: it refuses a tensor that requires grad, as ``numpy()`` does.

The NumPy rule
    A ufunc ``np.NAME`` runs ``oxmera.NAME`` (or its PyTorch-named alias:
    ``subtract`` -> ``sub``, ``less`` -> ``lt`` ...). Other NumPy functions
    run a translator written here with NumPy's signature (``axis`` ->
    ``dim``, ``keepdims`` -> ``keepdim``, NumPy's defaults, e.g. ``ddof=0``
    for ``np.var``), or, for a name not translated here, ``oxmera.NAME`` with
    ``axis``/``keepdims``/``axes`` renamed. Whatever oxmera cannot do raises
    ``TypeError`` naming the NumPy function: the graph is never dropped
    silently. ``out=`` is not supported (``TypeError``): NumPy functions do
    not write into tensors.
"""
import copy as copy_module
import copyreg
import numbers
import operator
import sys

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import _registry

__all__ = ["from_dlpack"]

Tensor = _core.Tensor
_NoValue = np._NoValue


def _oxmera():
    # Looked up at call time: this module is imported while oxmera.ops is
    # still being defined, and ops may be added after it.
    import oxmera
    return oxmera


def _numpy_name(func):
    module = getattr(func, "__module__", None) or "numpy"
    if not module.startswith("numpy"):
        module = "numpy"
    return f"{module}.{func.__name__}"


def _op(name, numpy_name, namespace=None):
    """``oxmera.<name>`` (or ``namespace.<name>``), or a TypeError naming ``numpy_name``."""
    fn = getattr(namespace if namespace is not None else _oxmera(), name, None)
    if fn is None or isinstance(fn, type) or not callable(fn):
        raise TypeError(f"{numpy_name} is not supported on oxmera tensors: oxmera has no op "
                        f"{name!r}. Call it on t.detach().numpy() for a NumPy result (no "
                        f"gradient).")
    return fn


def _unsupported(numpy_name, what):
    return TypeError(f"{numpy_name}: {what} is not supported on oxmera tensors")


def _check_out(out, numpy_name):
    if out is not None and not (isinstance(out, tuple) and all(o is None for o in out)):
        raise TypeError(f"{numpy_name}: out= is not supported on oxmera tensors (NumPy functions "
                        f"do not write into tensors); use the returned tensor instead")


def _check_where(where, numpy_name):
    if where is not _NoValue and not (isinstance(where, (bool, np.bool_)) and where):
        raise _unsupported(numpy_name, "where=")


def _check_initial(initial, numpy_name):
    if initial is not _NoValue:
        raise _unsupported(numpy_name, "initial=")


def _keepdims(keepdims):
    return False if keepdims is _NoValue else bool(keepdims)


def _tensor(x):
    """A Tensor for an array-like argument (a Tensor stays itself; arrays share memory)."""
    if isinstance(x, Tensor):
        return x
    return _oxmera().as_tensor(x)


def _cast(x, dtype):
    if dtype is None:
        return x
    dtype = np.dtype(dtype)
    if isinstance(x, Tensor):
        return x if x.dtype == dtype else _oxmera().to(x, dtype)
    if isinstance(x, (np.ndarray, list, tuple)):
        return np.asarray(x, dtype=dtype)
    return x


def _data(x):
    """The raw values, for functions whose result carries no gradient (shapes, bools)."""
    return x._data if isinstance(x, Tensor) else x


def _dtype_of(x):
    return x.dtype if isinstance(x, (Tensor, np.ndarray)) else np.asarray(x).dtype


def _deep_data(value):
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, (list, tuple)):
        return type(value)(_deep_data(v) for v in value)
    return value


def _normalize_axis(axis, ndim, numpy_name):
    n = ndim if ndim else 1
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{numpy_name}: axis must be an int, got {type(axis).__name__}") from None
    if not -n <= a < n:
        raise np.exceptions.AxisError(a, ndim, numpy_name)
    return a % n


# ---------------------------------------------------------------------------------------------
# __array_ufunc__
# ---------------------------------------------------------------------------------------------

#: NumPy ufunc name -> the PyTorch-style name of the oxmera op, tried when
#: oxmera has no op of the NumPy name itself.
_UFUNC_ALIASES = {
    "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
    "negative": "neg", "absolute": "abs", "fabs": "abs", "power": "pow",
    "arctan2": "atan2", "arcsin": "asin", "arccos": "acos", "arctan": "atan",
    "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
    "greater": "gt", "greater_equal": "ge", "rint": "round",
    "radians": "deg2rad", "degrees": "rad2deg", "conjugate": "conj",
    "invert": "bitwise_not", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "clip": "clamp",
}

#: ufunc.reduce / ufunc.accumulate -> the reduction op that computes it.
_UFUNC_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "amax", "minimum": "amin",
                     "logical_and": "all", "logical_or": "any"}
_UFUNC_ACCUMULATIONS = {"add": "cumsum", "multiply": "cumprod"}

# Keyword arguments of a ufunc call that do not change the values computed.
_LAYOUT_KWARGS = ("casting", "order", "subok")


#: ufunc name -> a function composed from oxmera ops (oxmera.numpy._composed fills it),
#: for ufuncs oxmera has no op of their own for.
_COMPOSED_UFUNCS = {}


def _ufunc_op(ufunc, numpy_name):
    name = ufunc.__name__
    if name in _COMPOSED_UFUNCS:
        return _COMPOSED_UFUNCS[name]
    ox = _oxmera()
    for candidate in (name, _UFUNC_ALIASES.get(name)):
        if candidate is None:
            continue
        fn = getattr(ox, candidate, None)
        if fn is not None and callable(fn) and not isinstance(fn, type):
            return fn
    alias = _UFUNC_ALIASES.get(name)
    scipy_special = sys.modules.get("scipy.special")
    if scipy_special is not None and getattr(scipy_special, name, None) is ufunc:
        # SciPy's special functions are ufuncs too: name SciPy, and the twin in oxmera.scipy
        import oxmera.scipy.special as twins
        twin = (f"oxmera.scipy.special.{name}" if name in twins.__all__
                else "the differentiable functions of oxmera.scipy.special")
        raise TypeError(f"scipy.special.{name} is not supported on oxmera tensors: use {twin} "
                        f"(SciPy's values, differentiable), or call it on t.detach().numpy() "
                        f"for a NumPy result (no gradient).")
    raise TypeError(f"{numpy_name} is not supported on oxmera tensors: oxmera has no op "
                    f"{name!r}{f' or {alias!r}' if alias else ''}. Call it on "
                    f"t.detach().numpy() for a NumPy result (no gradient).")


def _accepted_input(x):
    return isinstance(x, (Tensor, np.ndarray, np.generic, numbers.Number, list, tuple))


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy ufuncs on tensors run the oxmera op of the same name: a tensor, differentiable.

    ``np.NAME(t, ...)`` calls ``oxmera.NAME`` (or its PyTorch-named alias,
    e.g. ``np.subtract`` -> ``oxmera.sub``); ``reduce``, ``accumulate`` and
    ``outer`` work for the ufuncs oxmera has reductions for (``np.add.reduce``
    is ``sum``). Inputs may mix tensors, arrays and numbers. ``out=`` and
    ``where=`` raise ``TypeError``, as does a ufunc oxmera has no op for.

    Examples
    --------
    >>> import numpy as np
    >>> import oxmera
    >>> x = oxmera.tensor([0.0, 1.0], requires_grad=True)
    >>> y = np.exp(x)
    >>> y
    tensor([1.    , 2.7183], dtype=float32, grad_fn=<ExpBackward>)
    >>> np.add(np.ones(2, np.float32), x)
    tensor([1., 2.], dtype=float32, grad_fn=<AddBackward>)
    >>> np.add.reduce(x * 2)
    tensor(2., dtype=float32, grad_fn=<SumBackward>)
    """
    if not all(_accepted_input(x) for x in inputs):
        return NotImplemented
    numpy_name = f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
    _check_out(kwargs.pop("out", None), numpy_name)
    _check_where(kwargs.pop("where", True), numpy_name)
    for name in _LAYOUT_KWARGS:
        kwargs.pop(name, None)
    dtype = kwargs.pop("dtype", None)
    if kwargs.pop("signature", None) is not None or kwargs.pop("sig", None) is not None:
        raise _unsupported(numpy_name, "signature=")
    if method == "__call__":
        if kwargs:
            raise _unsupported(numpy_name, f"keyword argument(s) {sorted(kwargs)}")
        fn = _ufunc_op(ufunc, numpy_name)
        args = [_cast(x, dtype) for x in inputs] if dtype is not None else inputs
        result = fn(*args)
        if dtype is not None and isinstance(result, Tensor):
            result = _cast(result, dtype)
        return result
    if method == "reduce":
        return _ufunc_reduce(ufunc, numpy_name, dtype, *inputs, **kwargs)
    if method == "accumulate":
        return _ufunc_accumulate(ufunc, numpy_name, dtype, *inputs, **kwargs)
    if method == "outer":
        if kwargs:
            raise _unsupported(numpy_name, f"keyword argument(s) {sorted(kwargs)}")
        a, b = (_tensor(x) for x in inputs)
        a = a.reshape(tuple(a.shape) + (1,) * b.ndim)
        return _array_ufunc(self, ufunc, "__call__", a, b, **({"dtype": dtype} if dtype else {}))
    raise _unsupported(numpy_name, f"the ufunc method {method!r}")


def _ufunc_reduce(ufunc, numpy_name, dtype, array, axis=0, keepdims=False, initial=_NoValue):
    _check_initial(initial, numpy_name)
    target = _UFUNC_REDUCTIONS.get(ufunc.__name__)
    if target is None:
        raise TypeError(f"{numpy_name} is not supported on oxmera tensors: no oxmera reduction "
                        f"computes it")
    fn = _op(target, numpy_name)
    x = _cast(_tensor(array), dtype)
    if isinstance(axis, list):
        axis = tuple(axis)
    return fn(x, dim=axis, keepdim=bool(keepdims))


def _ufunc_accumulate(ufunc, numpy_name, dtype, array, axis=0):
    target = _UFUNC_ACCUMULATIONS.get(ufunc.__name__)
    if target is None:
        raise TypeError(f"{numpy_name} is not supported on oxmera tensors: no oxmera op "
                        f"computes it")
    return _op(target, numpy_name)(_cast(_tensor(array), dtype), dim=axis)


# ---------------------------------------------------------------------------------------------
# __array_function__: translators with NumPy's signatures
# ---------------------------------------------------------------------------------------------

#: NumPy function -> translator(*args, **kwargs) with NumPy's signature.
_TRANSLATORS = {}

#: NumPy functions answered from the raw values: their results are metadata,
#: bools or text, so no gradient can be lost.
_METADATA = {}

#: NumPy names with the same name as an oxmera op but other semantics; never
#: mapped by name (a translator below handles those that can be).
_DIVERGENT = {"repeat", "split", "transpose", "max", "min", "sort", "argsort", "median",
              "nanmedian", "var", "std", "cumsum", "cumprod", "reshape", "resize", "flip",
              "dot", "outer", "inner", "trace", "take", "nonzero", "squeeze", "meshgrid", "cov",
              "corrcoef", "unique", "histogram", "tensordot", "einsum", "round", "linspace",
              "logspace", "arange", "full", "zeros", "ones", "empty", "eye", "tensor", "select"}


def _implements(*names, table=None):
    """Register a translator for the NumPy functions ``names`` (those this NumPy has)."""
    table = _TRANSLATORS if table is None else table

    def decorate(fn):
        for name in names:
            namespace = np
            if "." in name:
                sub, name = name.split(".")
                namespace = getattr(np, sub)
            func = getattr(namespace, name, None)
            if func is not None:
                table[func] = fn
        return fn
    return decorate


# -- reductions ------------------------------------------------------------------------------------

def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


@_implements("sum")
def _np_sum(a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue,
            where=_NoValue):
    _check_out(out, "numpy.sum")
    _check_initial(initial, "numpy.sum")
    _check_where(where, "numpy.sum")
    kwargs = {} if dtype is None else {"dtype": dtype}
    return _op("sum", "numpy.sum")(a, dim=_axis(axis), keepdim=_keepdims(keepdims), **kwargs)


@_implements("prod")
def _np_prod(a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue,
             where=_NoValue):
    _check_out(out, "numpy.prod")
    _check_initial(initial, "numpy.prod")
    _check_where(where, "numpy.prod")
    kwargs = {} if dtype is None else {"dtype": dtype}
    return _op("prod", "numpy.prod")(a, dim=_axis(axis), keepdim=_keepdims(keepdims), **kwargs)


@_implements("mean")
def _np_mean(a, axis=None, dtype=None, out=None, keepdims=_NoValue, *, where=_NoValue):
    _check_out(out, "numpy.mean")
    _check_where(where, "numpy.mean")
    if dtype is None and _dtype_of(a).kind not in "fc":
        dtype = np.float64      # NumPy's rule: the mean of integers is float64
    kwargs = {} if dtype is None else {"dtype": dtype}
    return _op("mean", "numpy.mean")(a, dim=_axis(axis), keepdim=_keepdims(keepdims), **kwargs)


def _np_extreme(name, op_all, op_dim):
    numpy_name = f"numpy.{name}"

    def translator(a, axis=None, out=None, keepdims=_NoValue, initial=_NoValue,
                   where=_NoValue):
        _check_out(out, numpy_name)
        _check_initial(initial, numpy_name)
        _check_where(where, numpy_name)
        keep = _keepdims(keepdims)
        if axis is None and not keep:
            # max/min over everything: a 0-d tensor (ties share the gradient)
            return _op(op_all, numpy_name)(a)
        return _op(op_dim, numpy_name)(a, dim=_axis(axis), keepdim=keep)
    translator.__name__ = f"_np_{name}"
    return translator


_implements("max", "amax")(_np_extreme("max", "max", "amax"))
_implements("min", "amin")(_np_extreme("min", "min", "amin"))


def _np_arg_extreme(name):
    numpy_name = f"numpy.{name}"

    def translator(a, axis=None, out=None, *, keepdims=_NoValue):
        _check_out(out, numpy_name)
        return _op(name, numpy_name)(a, dim=axis, keepdim=_keepdims(keepdims))
    translator.__name__ = f"_np_{name}"
    return translator


_implements("argmax")(_np_arg_extreme("argmax"))
_implements("argmin")(_np_arg_extreme("argmin"))


def _np_logical_reduction(name):
    numpy_name = f"numpy.{name}"

    def translator(a, axis=None, out=None, keepdims=_NoValue, *, where=_NoValue):
        _check_out(out, numpy_name)
        _check_where(where, numpy_name)
        return _op(name, numpy_name)(a, dim=_axis(axis), keepdim=_keepdims(keepdims))
    translator.__name__ = f"_np_{name}"
    return translator


_implements("all")(_np_logical_reduction("all"))
_implements("any")(_np_logical_reduction("any"))


def _np_moment(name):
    numpy_name = f"numpy.{name}"

    def translator(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *,
                   where=_NoValue, mean=_NoValue, correction=_NoValue):
        _check_out(out, numpy_name)
        _check_where(where, numpy_name)
        if mean is not _NoValue:
            raise _unsupported(numpy_name, "mean=")
        if correction is _NoValue:
            correction = ddof       # NumPy's default is ddof=0, PyTorch's correction=1
        x = _cast(_tensor(a), dtype)
        return _op(name, numpy_name)(x, dim=_axis(axis), correction=correction,
                                     keepdim=_keepdims(keepdims))
    translator.__name__ = f"_np_{name}"
    return translator


_implements("var")(_np_moment("var"))
_implements("std")(_np_moment("std"))


def _np_cumulative(name):
    numpy_name = f"numpy.{name}"

    def translator(a, axis=None, dtype=None, out=None):
        _check_out(out, numpy_name)
        x = _cast(_tensor(a), dtype)
        if axis is None:
            x, axis = x.reshape(-1), 0      # NumPy flattens without an axis
        return _op(name, numpy_name)(x, dim=axis)
    translator.__name__ = f"_np_{name}"
    return translator


_implements("cumsum")(_np_cumulative("cumsum"))
_implements("cumprod")(_np_cumulative("cumprod"))


@_implements("ptp")
def _np_ptp(a, axis=None, out=None, keepdims=_NoValue):
    _check_out(out, "numpy.ptp")
    top = _np_extreme("max", "max", "amax")(a, axis, keepdims=keepdims)
    return top - _np_extreme("min", "min", "amin")(a, axis, keepdims=keepdims)


@_implements("average")
def _np_average(a, axis=None, weights=None, returned=False, *, keepdims=_NoValue):
    keep = _keepdims(keepdims)
    x = _tensor(a)
    if weights is None:
        result = _np_mean(x, axis, keepdims=keep)
        total = x.numel() / max(result.numel(), 1)
        total = _oxmera().full_like(result, total)
    else:
        w = _tensor(weights)
        if w.shape != x.shape:
            if axis is None or w.ndim != 1:
                raise TypeError("numpy.average: axis must be specified when the shapes of a and "
                                "weights differ")
            ax = _normalize_axis(axis, x.ndim, "numpy.average")
            w = w.reshape(tuple(-1 if d == ax else 1 for d in range(x.ndim)))
        total = _np_sum(w * _oxmera().ones_like(x, dtype=w.dtype), axis, keepdims=keep)
        result = _np_sum(x * w, axis, keepdims=keep) / total
    return (result, total) if returned else result


# -- shape ---------------------------------------------------------------------------------------

def _reverse(ndim):
    return tuple(range(ndim - 1, -1, -1))


def _f_order(x, fn):
    """Apply a C-order reshape ``fn`` as if in Fortran order."""
    rev = _reverse(x.ndim)
    y = fn(x.permute(*rev) if x.ndim > 1 else x)
    return y.permute(*_reverse(y.ndim)) if y.ndim > 1 else y


@_implements("reshape")
def _np_reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    shape = tuple(shape)
    x = _tensor(a)
    if copy is False:
        fn = _op("view", "numpy.reshape")
    else:
        fn = _op("reshape", "numpy.reshape")
    if order == "F":
        result = _f_order(x, lambda y: fn(y, shape[::-1]))
    elif order in ("C", "A"):
        result = fn(x, shape)
    else:
        raise ValueError(f"numpy.reshape: order must be one of 'C', 'F', 'A', got {order!r}")
    return _op("clone", "numpy.reshape")(result) if copy else result


@_implements("ravel")
def _np_ravel(a, order="C"):
    return _np_reshape(a, (-1,), order="F" if order == "F" else "C")


@_implements("transpose", "permute_dims")
def _np_transpose(a, axes=None):
    x = _tensor(a)
    if axes is None:
        axes = _reverse(x.ndim)
    return _op("permute", "numpy.transpose")(x, *axes) if x.ndim else x


@_implements("swapaxes")
def _np_swapaxes(a, axis1, axis2):
    return _op("transpose", "numpy.swapaxes")(a, axis1, axis2)


@_implements("moveaxis")
def _np_moveaxis(a, source, destination):
    x = _tensor(a)
    source = [source] if isinstance(source, numbers.Integral) else list(source)
    destination = ([destination] if isinstance(destination, numbers.Integral)
                   else list(destination))
    if len(source) != len(destination):
        raise ValueError("numpy.moveaxis: `source` and `destination` arguments must have the "
                         "same number of elements")
    source = [_normalize_axis(s, x.ndim, "numpy.moveaxis") for s in source]
    destination = [_normalize_axis(d, x.ndim, "numpy.moveaxis") for d in destination]
    order = [n for n in range(x.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return _op("permute", "numpy.moveaxis")(x, *order)


@_implements("squeeze")
def _np_squeeze(a, axis=None):
    x = _tensor(a)
    if axis is None:
        return _op("reshape", "numpy.squeeze")(x, tuple(s for s in x.shape if s != 1))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    axes = {_normalize_axis(d, x.ndim, "numpy.squeeze") for d in axes}
    for d in axes:
        if x.shape[d] != 1:
            raise ValueError(f"numpy.squeeze: cannot select an axis to squeeze out which has "
                             f"size not equal to one (axis {d} of shape {x.shape})")
    return _op("reshape", "numpy.squeeze")(
        x, tuple(s for d, s in enumerate(x.shape) if d not in axes))


@_implements("expand_dims")
def _np_expand_dims(a, axis):
    x = _tensor(a)
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    out_ndim = x.ndim + len(axes)
    axes = [_normalize_axis(d, out_ndim, "numpy.expand_dims") for d in axes]
    if len(set(axes)) != len(axes):
        raise ValueError("numpy.expand_dims: repeated axis")
    sizes = iter(x.shape)
    shape = tuple(1 if d in axes else next(sizes) for d in range(out_ndim))
    return _op("reshape", "numpy.expand_dims")(x, shape)


def _atleast(x, n):
    x = _tensor(x)
    if x.ndim >= n:
        return x
    if n == 1 or x.ndim == 0:
        shape = (1,) * (n - x.ndim) + tuple(x.shape)
    elif n == 2:
        shape = (1,) + tuple(x.shape)
    else:   # numpy.atleast_3d: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)
        shape = ((1,) + tuple(x.shape) + (1,)) if x.ndim == 1 else tuple(x.shape) + (1,)
    return x.reshape(shape)


def _np_atleast(n):
    def translator(*arys):
        result = tuple(_atleast(a, n) for a in arys)
        return result[0] if len(result) == 1 else result
    translator.__name__ = f"_np_atleast_{n}d"
    return translator


_implements("atleast_1d")(_np_atleast(1))
_implements("atleast_2d")(_np_atleast(2))
_implements("atleast_3d")(_np_atleast(3))


@_implements("broadcast_to")
def _np_broadcast_to(array, shape, subok=False):
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    return _op("broadcast_to", "numpy.broadcast_to")(array, tuple(shape))


@_implements("broadcast_arrays")
def _np_broadcast_arrays(*args, subok=False):
    shape = np.broadcast_shapes(*(np.shape(_data(a)) for a in args))
    return tuple(_np_broadcast_to(a, shape) for a in args)


@_implements("flip")
def _np_flip(m, axis=None):
    x = _tensor(m)
    if axis is None:
        axis = tuple(range(x.ndim))
    elif isinstance(axis, numbers.Integral):
        axis = (axis,)
    return _op("flip", "numpy.flip")(x, tuple(axis))


@_implements("fliplr")
def _np_fliplr(m):
    return _np_flip(m, 1)


@_implements("flipud")
def _np_flipud(m):
    return _np_flip(m, 0)


@_implements("roll")
def _np_roll(a, shift, axis=None):
    return _op("roll", "numpy.roll")(a, shift, axis)


@_implements("tile")
def _np_tile(A, reps):
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    return _op("tile", "numpy.tile")(A, reps)


@_implements("repeat")
def _np_repeat(a, repeats, axis=None):
    # NumPy's repeat is PyTorch's repeat_interleave; built from indexing so
    # repeated entries accumulate their gradients.
    x = _tensor(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _normalize_axis(axis, x.ndim, "numpy.repeat")
    index = np.repeat(np.arange(x.shape[axis]), np.asarray(_data(repeats)))
    return x[(slice(None),) * axis + (index,)]


def _split_at(x, bounds, axis):
    # As numpy.array_split: plain slices between consecutive division points.
    points = [0] + [int(b) for b in bounds] + [x.shape[axis]]
    lead = (slice(None),) * axis
    return [x[lead + (slice(start, end),)] for start, end in zip(points[:-1], points[1:])]


@_implements("array_split")
def _np_array_split(ary, indices_or_sections, axis=0):
    x = _tensor(ary)
    axis = _normalize_axis(axis, x.ndim, "numpy.array_split")
    if isinstance(indices_or_sections, numbers.Integral):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("numpy.array_split: number sections must be larger than 0.")
        each, extra = divmod(x.shape[axis], sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.cumsum(sizes)[:-1]
    else:
        bounds = list(indices_or_sections)
    return _split_at(x, bounds, axis)


@_implements("split")
def _np_split(ary, indices_or_sections, axis=0):
    x = _tensor(ary)
    if isinstance(indices_or_sections, numbers.Integral):
        n = x.shape[_normalize_axis(axis, x.ndim, "numpy.split")]
        if indices_or_sections <= 0 or n % indices_or_sections:
            raise ValueError(f"numpy.split: array split does not result in an equal division "
                             f"({n} into {indices_or_sections})")
    return _np_array_split(x, indices_or_sections, axis)


def _sequence(arrays, numpy_name):
    if isinstance(arrays, (Tensor, np.ndarray)):
        raise TypeError(f"{numpy_name}: expected a sequence of arrays, got a single "
                        f"{type(arrays).__name__}")
    return [_tensor(a) for a in arrays]


@_implements("concatenate", "concat")
def _np_concatenate(arrays, axis=0, out=None, *, dtype=None, casting=None):
    _check_out(out, "numpy.concatenate")
    tensors = _sequence(arrays, "numpy.concatenate")
    if axis is None:
        tensors, axis = [t.reshape(-1) for t in tensors], 0
    tensors = [_cast(t, dtype) for t in tensors]
    return _op("cat", "numpy.concatenate")(tensors, axis)


@_implements("stack")
def _np_stack(arrays, axis=0, out=None, *, dtype=None, casting=None):
    _check_out(out, "numpy.stack")
    tensors = [_cast(t, dtype) for t in _sequence(arrays, "numpy.stack")]
    return _op("stack", "numpy.stack")(tensors, axis)


@_implements("vstack", "row_stack")
def _np_vstack(tup, *, dtype=None, casting=None):
    return _np_concatenate([_atleast(t, 2) for t in _sequence(tup, "numpy.vstack")], 0,
                           dtype=dtype)


@_implements("hstack")
def _np_hstack(tup, *, dtype=None, casting=None):
    tensors = [_atleast(t, 1) for t in _sequence(tup, "numpy.hstack")]
    axis = 0 if tensors and tensors[0].ndim == 1 else 1
    return _np_concatenate(tensors, axis, dtype=dtype)


@_implements("dstack")
def _np_dstack(tup):
    return _np_concatenate([_atleast(t, 3) for t in _sequence(tup, "numpy.dstack")], 2)


@_implements("column_stack")
def _np_column_stack(tup):
    tensors = [t.reshape(-1, 1) if t.ndim < 2 else t for t in _sequence(tup, "numpy.column_stack")]
    return _np_concatenate(tensors, 1)


@_implements("diagonal")
def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    return _op("diagonal", "numpy.diagonal")(a, offset, axis1, axis2)


@_implements("trace")
def _np_trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    _check_out(out, "numpy.trace")
    diag = _np_diagonal(_cast(_tensor(a), dtype), offset, axis1, axis2)
    return _op("sum", "numpy.trace")(diag, dim=-1)


@_implements("tril")
def _np_tril(m, k=0):
    return _op("tril", "numpy.tril")(m, k)


@_implements("triu")
def _np_triu(m, k=0):
    return _op("triu", "numpy.triu")(m, k)


@_implements("diff")
def _np_diff(a, n=1, axis=-1, prepend=_NoValue, append=_NoValue):
    x = _tensor(a)
    if n < 0:
        raise ValueError(f"numpy.diff: order must be non-negative but got {n}")
    axis = _normalize_axis(axis, x.ndim, "numpy.diff")
    parts = []
    for extra in (prepend, None, append):
        if extra is None:
            parts.append(x)
        elif extra is not _NoValue:
            e = _tensor(extra)
            if e.ndim == 0:
                shape = list(x.shape)
                shape[axis] = 1
                e = e.expand(*shape)
            parts.append(e)
    if len(parts) > 1:
        x = _np_concatenate(parts, axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        x = x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)]
    return x


# -- indexing ------------------------------------------------------------------------------------

@_implements("where")
def _np_where(condition, x=_NoValue, y=_NoValue):
    if x is _NoValue and y is _NoValue:
        return _np_nonzero(condition)
    if x is _NoValue or y is _NoValue:
        raise ValueError("numpy.where: either both or neither of x and y should be given")
    return _op("where", "numpy.where")(condition, x, y)


@_implements("nonzero")
def _np_nonzero(a):
    # Integer results: no gradient to keep, so NumPy computes them.
    return tuple(_core._wrap(i.astype(np.int64)) for i in np.nonzero(np.asarray(_data(a))))


@_implements("argwhere")
def _np_argwhere(a):
    return _core._wrap(np.argwhere(np.asarray(_data(a))).astype(np.int64))


@_implements("flatnonzero")
def _np_flatnonzero(a):
    return _core._wrap(np.flatnonzero(np.asarray(_data(a))).astype(np.int64))


@_implements("take")
def _np_take(a, indices, axis=None, out=None, mode="raise"):
    _check_out(out, "numpy.take")
    if mode != "raise":
        raise _unsupported("numpy.take", f"mode={mode!r}")
    x = _tensor(a)
    index = np.asarray(_data(indices))
    if axis is None:
        return x.reshape(-1)[index]
    axis = _normalize_axis(axis, x.ndim, "numpy.take")
    return x[(slice(None),) * axis + (index,)]


@_implements("take_along_axis")
def _np_take_along_axis(arr, indices, axis=-1):
    x = _tensor(arr)
    if axis is None:
        x, axis = x.reshape(-1), 0
    return _op("take_along_dim", "numpy.take_along_axis")(x, _tensor(indices), dim=axis)


# -- elementwise functions (not ufuncs) ----------------------------------------------------------

@_implements("clip")
def _np_clip(a, a_min=_NoValue, a_max=_NoValue, out=None, *, min=_NoValue, max=_NoValue,
             **kwargs):
    _check_out(out, "numpy.clip")
    if kwargs:
        raise _unsupported("numpy.clip", f"keyword argument(s) {sorted(kwargs)}")
    low = a_min if a_min is not _NoValue else (None if min is _NoValue else min)
    high = a_max if a_max is not _NoValue else (None if max is _NoValue else max)
    return _op("clamp", "numpy.clip")(a, low, high)


@_implements("round", "around")
def _np_round(a, decimals=0, out=None):
    _check_out(out, "numpy.round")
    fn = _op("round", "numpy.round")
    return fn(a, decimals=decimals) if decimals else fn(a)


@_implements("nan_to_num")
def _np_nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    return _op("nan_to_num", "numpy.nan_to_num")(x, nan=nan, posinf=posinf, neginf=neginf)


@_implements("isclose")
def _np_isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _op("isclose", "numpy.isclose")(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


@_implements("allclose")
def _np_allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.allclose(_data(a), _data(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


@_implements("copy")
def _np_copy(a, order="K", subok=False):
    return _op("clone", "numpy.copy")(a)


def _np_like(name):
    numpy_name = f"numpy.{name}"

    def translator(prototype, *args, dtype=None, order="K", subok=True, shape=None, device=None):
        # Creation: the result is a new leaf, as in NumPy (no graph to keep).
        ox = _oxmera()
        base = _data(prototype)
        dtype = _dtype_of(base) if dtype is None else np.dtype(dtype)
        if shape is None:
            shape = np.shape(base)
        shape = tuple(shape) if np.iterable(shape) else (int(shape),)
        if name == "full_like":
            if len(args) != 1:
                raise TypeError(f"{numpy_name}: expected one fill_value, got {len(args)}")
            return ox.full(shape, args[0], dtype=dtype)
        if args:
            raise TypeError(f"{numpy_name}: unexpected positional arguments {args!r}")
        return {"zeros_like": ox.zeros, "ones_like": ox.ones, "empty_like": ox.empty}[name](
            shape, dtype=dtype)
    translator.__name__ = f"_np_{name}"
    return translator


for _name in ("zeros_like", "ones_like", "empty_like", "full_like"):
    _implements(_name)(_np_like(_name))


# -- linear algebra ------------------------------------------------------------------------------

@_implements("dot")
def _np_dot(a, b, out=None):
    _check_out(out, "numpy.dot")
    x, y = _tensor(a), _tensor(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    if y.ndim <= 2:
        return _op("matmul", "numpy.dot")(x, y)
    # N-D . M-D: a sum over the last axis of a and the second-to-last of b.
    return _op("tensordot", "numpy.dot")(x, y, dims=([x.ndim - 1], [y.ndim - 2]))


@_implements("vdot")
def _np_vdot(a, b):
    from oxmera.ops.complex import cj
    # NumPy's vdot conjugates its first argument (a no-op for real ones).
    return _op("sum", "numpy.vdot")(cj(_tensor(a).reshape(-1)) * _tensor(b).reshape(-1))


@_implements("inner")
def _np_inner(a, b):
    x, y = _tensor(a), _tensor(b)
    if x.ndim == 0 or y.ndim == 0:
        return x * y
    return _op("tensordot", "numpy.inner")(x, y, dims=([x.ndim - 1], [y.ndim - 1]))


@_implements("outer")
def _np_outer(a, b, out=None):
    _check_out(out, "numpy.outer")
    x, y = _tensor(a).reshape(-1), _tensor(b).reshape(-1)
    return x.reshape(-1, 1) * y.reshape(1, -1)


@_implements("tensordot")
def _np_tensordot(a, b, axes=2):
    return _op("tensordot", "numpy.tensordot")(a, b, dims=axes)


@_implements("einsum")
def _np_einsum(*operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    _check_out(out, "numpy.einsum")
    if operands and not isinstance(operands[0], str):
        operands = _einsum_equation(operands)
    tensors = [_cast(_tensor(o), dtype) for o in operands[1:]]
    return _op("einsum", "numpy.einsum")(operands[0], *tensors)


_SUBSCRIPTS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_equation(operands):
    """The sublist form ``(a, [0, 1], b, [1, 2], [0, 2])`` as ``("ab,bc->ac", a, b)``."""
    def letters(sublist):
        try:
            return "".join("..." if s is Ellipsis else _SUBSCRIPTS[operator.index(s)]
                           if 0 <= operator.index(s) < len(_SUBSCRIPTS) else _SUBSCRIPTS[52]
                           for s in sublist)
        except (IndexError, TypeError):
            raise ValueError(f"numpy.einsum: a sublist holds subscripts in [0, 52) or "
                             f"Ellipsis, got {sublist!r}") from None
    arrays, inputs = list(operands[0::2]), list(operands[1::2])
    output = None
    if len(arrays) > len(inputs):       # a trailing output sublist
        output = arrays.pop()
    equation = ",".join(letters(s) for s in inputs)
    if output is not None:
        equation += "->" + letters(output)
    return (equation, *arrays)


#: numpy.linalg names whose oxmera counterpart lives at the top level.
_LINALG_TOP_LEVEL = {"matmul": "matmul", "tensordot": "tensordot"}


# -- answered from the values: shapes, bools, text, files ------------------------------------------

def _values_of(func):
    def answer(*args, **kwargs):
        return func(*_deep_data(args), **{k: _deep_data(v) for k, v in kwargs.items()})
    return answer


for _func_name in ("shape", "ndim", "size", "result_type", "shares_memory", "may_share_memory",
                   "iscomplexobj", "isrealobj", "array_equal", "array_equiv", "array_repr",
                   "array_str", "array2string", "min_scalar_type", "can_cast"):
    _func = getattr(np, _func_name, None)
    if _func is not None:
        _METADATA[_func] = _values_of(_func)


def _via_numpy_rule(func):
    # Data leaving for a file: as np.asarray(t), so a tensor that requires
    # grad is refused like numpy() refuses it.
    def answer(*args, **kwargs):
        return func(*_as_arrays(args), **{k: _as_arrays(v) for k, v in kwargs.items()})
    return answer


def _as_arrays(value):
    if isinstance(value, Tensor):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_as_arrays(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_arrays(v) for k, v in value.items()}
    return value


for _func_name in ("save", "savez", "savez_compressed", "savetxt"):
    _func = getattr(np, _func_name, None)
    if _func is not None:
        _METADATA[_func] = _via_numpy_rule(_func)


# -- the protocol ----------------------------------------------------------------------------------

_KWARG_NAMES = {"axis": "dim", "keepdims": "keepdim", "axes": "dims"}


def _by_name(func, numpy_name):
    """A NumPy function no translator handles: ``oxmera.NAME`` with renamed keywords."""
    name = func.__name__
    module = getattr(func, "__module__", "") or ""
    if module == "numpy.linalg":
        if name in _LINALG_TOP_LEVEL:
            fn = _op(_LINALG_TOP_LEVEL[name], numpy_name)
        else:
            fn = _op(name, numpy_name, namespace=_oxmera().linalg)
    elif module == "numpy" and name not in _DIVERGENT:
        fn = _op(name, numpy_name)
    else:
        raise TypeError(f"{numpy_name} is not supported on oxmera tensors. Call it on "
                        f"t.detach().numpy() for a NumPy result (no gradient).")

    def call(*args, **kwargs):
        _check_out(kwargs.pop("out", None), numpy_name)
        renamed = {_KWARG_NAMES.get(k, k): v for k, v in kwargs.items()}
        if "keepdim" in renamed and renamed["keepdim"] is _NoValue:
            del renamed["keepdim"]
        return fn(*args, **renamed)
    return call


def _array_function(self, func, types, args, kwargs):
    """NumPy functions on tensors run oxmera ops: the result is a tensor, differentiable.

    ``np.sum(t, axis=0)``, ``np.concatenate([t, u])``, ``np.where(c, t, u)``,
    ``np.linalg.norm(t)`` ... are translated to the oxmera op (``axis`` ->
    ``dim``, ``keepdims`` -> ``keepdim``, NumPy's defaults kept), so
    gradients flow through them. Functions answered from the values alone
    (``np.shape``, ``np.ndim``, ``np.array_equal`` ...) work on any tensor.
    A NumPy function oxmera cannot run raises ``TypeError`` naming it.

    Examples
    --------
    >>> import numpy as np
    >>> import oxmera
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> s = np.sum(x, axis=0)
    >>> s
    tensor([4., 6.], dtype=float32, grad_fn=<SumBackward>)
    >>> np.concatenate([x, np.zeros((1, 2), np.float32)]).shape
    oxmera.Size([3, 2])
    >>> np.shape(x)
    (2, 2)
    """
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    translator = _TRANSLATORS.get(func)
    if translator is None:
        translator = _METADATA.get(func)
    if translator is None:
        translator = _by_name(func, _numpy_name(func))
    return translator(*args, **kwargs)


_registry.add_tensor_attribute("__array_ufunc__", _array_ufunc)
_registry.add_tensor_attribute("__array_function__", _array_function)


# ---------------------------------------------------------------------------------------------
# DLPack
# ---------------------------------------------------------------------------------------------

def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export the tensor's memory as a DLPack capsule (no copy), for ``from_dlpack``.

    Raises ``BufferError`` for a tensor that requires grad, as PyTorch does
    (the consumer could write to memory autograd relies on); export
    ``t.detach()`` instead. So it does while a live graph saved the memory
    for backward (it is read-only then: see :doc:`/autograd_mechanics`).
    CPU tensors take ``stream=None`` (or PyTorch's ``-1``).

    Examples
    --------
    >>> import numpy as np
    >>> import oxmera
    >>> t = oxmera.tensor([1.0, 2.0])
    >>> a = np.from_dlpack(t)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 2.], dtype=float32)
    """
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and stream != -1:
        raise ValueError(f"__dlpack__: stream should be None on cpu, got {stream!r}")
    kwargs = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    if _core._memory_is_locked(self._data):
        # The consumer's array would be read-only for good (oxmera gives the
        # flag back only to arrays it knows), or writable over saved values.
        raise BufferError(f"__dlpack__: this tensor's memory (shape {self.shape}) is saved for "
                          f"backward by a live graph and read-only until the graph is freed; "
                          f"export it after backward, or export t.clone()")
    return self._data.__dlpack__(**kwargs)


def _dlpack_device(self):
    """The DLPack device of the tensor's memory: ``(1, 0)``, the CPU.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(2).__dlpack_device__()
    (1, 0)
    """
    device_type, device_id = self._data.__dlpack_device__()
    return int(device_type), int(device_id)


class _Capsule:
    """Gives a bare DLPack capsule the ``__dlpack__`` interface ``np.from_dlpack`` wants."""

    __slots__ = ("capsule",)

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        capsule, self.capsule = self.capsule, None     # a capsule is consumed once
        if capsule is None:
            raise BufferError("from_dlpack: this DLPack capsule was already consumed")
        return capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing the memory of any DLPack producer (NumPy, PyTorch, JAX, ...).

    Parameters
    ----------
    ext_tensor : object with ``__dlpack__``, or a DLPack capsule
        A CPU tensor or array (a Tensor of oxmera too).
    device : None or "cpu"
        Where the result lives; oxmera tensors live on the CPU.
    copy : bool, optional
        ``True`` copies, ``False`` refuses to copy, ``None`` copies only if
        it must.

    Returns
    -------
    Tensor
        A leaf that does not require grad. It shares memory with
        ``ext_tensor``: writes through either side show on the other.

    Examples
    --------
    >>> import numpy as np
    >>> import oxmera
    >>> a = np.arange(3.0)
    >>> t = oxmera.from_dlpack(a)
    >>> a[0] = 7.0
    >>> t
    tensor([7., 1., 2.], dtype=float64)
    """
    if device not in (None, "cpu") and not (isinstance(device, tuple) and tuple(device) == (1, 0)):
        raise ValueError(f"from_dlpack: oxmera tensors live on the cpu, got device={device!r}")
    if type(ext_tensor) is np.ndarray or isinstance(ext_tensor, Tensor):
        # NumPy's and oxmera's own memory: the array itself, not a capsule's
        # view of it, so oxmera still knows what memory it is (the lock of
        # memory saved for backward is counted per owner of the memory).
        if isinstance(ext_tensor, Tensor):
            if ext_tensor.requires_grad:
                raise BufferError("Can't export tensors that require gradient, use "
                                  "tensor.detach()")
            ext_tensor = _core._exported_array(ext_tensor)
        array = ext_tensor.copy() if copy else ext_tensor
    elif type(ext_tensor).__name__ == "PyCapsule":
        if copy is not None:
            raise ValueError("from_dlpack: copy= is not supported for a bare DLPack capsule")
        array = np.from_dlpack(_Capsule(ext_tensor))
    else:
        if not hasattr(ext_tensor, "__dlpack__"):
            raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack "
                            f"capsule, got {type(ext_tensor).__name__}")
        kwargs = {} if copy is None else {"copy": copy}
        array = np.from_dlpack(ext_tensor, **kwargs)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"from_dlpack: unsupported dtype {array.dtype}: oxmera tensors hold bool, "
                        f"integer or floating values")
    return _core._wrap(array)


_registry.add_tensor_attribute("__dlpack__", _dlpack)
_registry.add_tensor_attribute("__dlpack_device__", _dlpack_device)


# ---------------------------------------------------------------------------------------------
# pickle, copy.copy, copy.deepcopy
# ---------------------------------------------------------------------------------------------

def _rebuild(cls, array, requires_grad, writeable=None):
    """A leaf of type ``cls`` around ``array`` (what pickles and copies are rebuilt with).

    ``writeable``: whether the pickled array was writeable apart from the lock
    oxmera keeps on memory saved for backward (a pickle must not make the copy
    read-only for good); None for pickles written before it was recorded.
    """
    return _core._rebuild_tensor(cls, array, requires_grad, writeable)


def _state(t):
    """What a Tensor subclass instance carries besides its values (its __dict__, slots)."""
    cls = type(t)
    getstate = getattr(cls, "__getstate__", None)
    if getstate is not None and getstate is not getattr(object, "__getstate__", None):
        return t.__getstate__()
    state = getattr(t, "__dict__", None) or None
    slots = {}
    for name in copyreg._slotnames(cls):
        if hasattr(t, name):
            slots[name] = getattr(t, name)
    if slots:
        return (state, slots)
    return state


def _set_state(t, state):
    if state is None:
        return
    if hasattr(t, "__setstate__"):
        t.__setstate__(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        t.__dict__.update(state)
    if slots:
        for name, value in slots.items():
            setattr(t, name, value)


def _reduce_ex(self, protocol):
    """Pickle support: the values, the dtype, ``requires_grad`` and the type.

    A Tensor subclass is rebuilt as that subclass, with its instance
    attributes. Like PyTorch, a pickle holds no graph and no ``.grad``: a
    non-leaf comes back as a leaf that requires grad.

    Examples
    --------
    >>> import pickle
    >>> import oxmera
    >>> t = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> pickle.loads(pickle.dumps(t))
    tensor([1., 2.], dtype=float32, requires_grad=True)
    """
    return (_rebuild, (type(self), self._data, self.requires_grad,
                       _core._is_writeable(self._data)), _state(self))


def _copy(self):
    """``copy.copy``: a new leaf sharing this tensor's memory (and version counter).

    As in PyTorch, ``requires_grad`` is kept, the graph and ``.grad`` are not.

    Examples
    --------
    >>> import copy
    >>> import oxmera
    >>> t = oxmera.tensor([1.0, 2.0])
    >>> c = copy.copy(t)
    >>> c[0] = 9.0
    >>> t
    tensor([9., 2.], dtype=float32)
    """
    new = _rebuild(type(self), self._data, self.requires_grad)
    new._share_version_counter(self)
    state = _state(self)
    if state is not None:
        _set_state(new, copy_module.copy(state))
    return new


# Where __deepcopy__ keeps, per deepcopy call, the first copy made of each
# block of memory, so copies of views share a version counter again.
_MEMO_COUNTERS = object()

_DEEPCOPY_NON_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the "
                      "deepcopy protocol at the moment. Use t.detach().clone() to copy the "
                      "values of a tensor with a grad_fn.")


def _root(array):
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _deepcopy_array(array, memo):
    """Copy ``array``; views of one block of memory stay views of one new block."""
    root = _root(array)
    if root is array:
        return copy_module.deepcopy(array, memo)
    if root.base is not None or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return copy_module.deepcopy(array, memo)
    new_root = copy_module.deepcopy(root, memo)
    offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    raw = new_root.ravel(order="K").view(np.uint8)     # its memory, in memory order
    view = np.ndarray(array.shape, array.dtype, buffer=raw, offset=offset, strides=array.strides)
    if not _core._is_writeable(array):     # read-only apart from oxmera's lock on saved memory
        view.flags.writeable = False
    return view


def _deepcopy(self, memo):
    """``copy.deepcopy``: new memory, ``requires_grad`` and ``.grad`` (deep-copied) kept.

    Only leaves can be deep-copied (``RuntimeError`` otherwise, as in
    PyTorch). Within one ``deepcopy`` call, a tensor met twice is copied
    once, and tensors viewing the same memory are copied to views of the
    same new memory. Subclasses keep their type and instance attributes.

    Examples
    --------
    >>> import copy
    >>> import oxmera
    >>> w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> w2 = copy.deepcopy(w)
    >>> w2.grad
    tensor([2., 4.], dtype=float32)
    >>> w2.grad is w.grad
    False
    """
    if not self.is_leaf:
        raise RuntimeError(_DEEPCOPY_NON_LEAF)
    if id(self) in memo:
        return memo[id(self)]
    data = _deepcopy_array(self._data, memo)
    new = _rebuild(type(self), data, self.requires_grad)
    memo[id(self)] = new
    counters = memo.setdefault(_MEMO_COUNTERS, {})
    key = id(_root(self._data))
    first = counters.get(key)
    if first is None:
        counters[key] = new
        # keep the key's array alive for the memo's lifetime (ids stay unique)
        memo.setdefault(id(memo), []).append(self._data)
    else:
        new._share_version_counter(first)
    grad = self.grad
    if grad is not None:
        new.grad = copy_module.deepcopy(grad, memo)
    state = _state(self)
    if state is not None:
        _set_state(new, copy_module.deepcopy(state, memo))
    return new


_registry.add_tensor_attribute("__reduce_ex__", _reduce_ex)
_registry.add_tensor_attribute("__copy__", _copy)
_registry.add_tensor_attribute("__deepcopy__", _deepcopy)
