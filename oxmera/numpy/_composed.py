"""NumPy functions oxmera has no op for, composed from oxmera ops (so no VJP is written here).

Each is a translator with NumPy's signature, registered in the same table as
``oxmera.ops.interop``'s: ``np.sort(t)`` (through ``__array_function__``)
and ``oxmera.numpy.sort(t)`` run the same code. Index bookkeeping that has
no gradient (where to look up, which positions to keep) is computed with
NumPy on the values; everything the result's values are made of is an
oxmera op, so gradients flow to every tensor input.
"""
import numbers

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import interop as _interop
from oxmera.ops.complex import cj

Tensor = _core.Tensor
_implements = _interop._implements


def _tensor(x):
    """A tensor for an argument; a list or number takes NumPy's dtype (floats are float64)."""
    return x if isinstance(x, Tensor) else _core._wrap(np.asarray(x))

_NoValue = np._NoValue


def _ox():
    import oxmera
    return oxmera


def _axis_index(ndim, axis, index):
    """An indexing key that applies ``index`` along ``axis``."""
    return (slice(None),) * axis + (index,)


def _float(x):
    """``x`` as a floating or complex tensor (NumPy's float64 for integers and bools)."""
    x = _tensor(x)
    return x if x.dtype.kind in "fc" else x.to(np.float64)


def _common(*tensors):
    dtype = np.result_type(*(t.dtype for t in tensors))
    return [t if t.dtype == dtype else t.to(dtype) for t in tensors]


# -- sorting and order statistics ----------------------------------------------------------------

@_implements("sort")
def _np_sort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise _interop._unsupported("numpy.sort", "order=")
    x = _tensor(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    return _ox().sort(x, dim=axis, stable=bool(stable) or kind == "stable").values


@_implements("argsort")
def _np_argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    if order is not None:
        raise _interop._unsupported("numpy.argsort", "order=")
    x = _tensor(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    # NumPy's default quicksort is not stable either; ask for a stable one so
    # ties come out in NumPy's "stable" order, which its tests compare with.
    return _ox().argsort(x, dim=axis, stable=True)


@_implements("median")
def _np_median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    # NumPy's median averages the two middle values (PyTorch's takes the lower).
    return _np_quantile(a, 0.5, axis, out, keepdims=keepdims)


@_implements("quantile")
def _np_quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, *, weights=None, interpolation=None):
    _interop._check_out(out, "numpy.quantile")
    if weights is not None:
        raise _interop._unsupported("numpy.quantile", "weights=")
    method = interpolation or method
    x = _float(a)
    if isinstance(axis, (tuple, list)):
        raise _interop._unsupported("numpy.quantile", "a tuple axis")
    qs = _float(q)
    if _core.is_grad_enabled() and qs.requires_grad:
        raise TypeError("oxmera.numpy.quantile has no gradient rule for q")
    q_tensor = qs.detach().to(x.dtype)
    return _ox().quantile(x, q_tensor if q_tensor.ndim else float(q_tensor), dim=axis,
                          keepdim=bool(keepdims), interpolation=method)


@_implements("percentile")
def _np_percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None, interpolation=None):
    qs = np.asarray(_interop._data(q), dtype=np.float64) / 100.0
    return _np_quantile(a, qs, axis, out, method=method, keepdims=keepdims, weights=weights,
                        interpolation=interpolation)


# -- interpolation and polynomials ----------------------------------------------------------------

@_implements("interp")
def _np_interp(x, xp, fp, left=None, right=None, period=None):
    if period is not None:
        raise _interop._unsupported("numpy.interp", "period=")
    values = _tensor(fp)
    if values.dtype.kind == "c":
        # NumPy interpolates the real and imaginary parts separately.
        def part(of, value):
            return None if value is None else of(value)
        return _ox().complex(_np_interp(x, xp, _np_real(values), part(_np_real, left),
                                        part(_np_real, right)),
                             _np_interp(x, xp, _np_imag(values), part(_np_imag, left),
                                        part(_np_imag, right)))
    x, xp, fp = _common(_float(x), _float(xp), _float(fp))
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape[0] != fp.shape[0]:
        raise ValueError(f"numpy.interp: xp and fp must be 1-D sequences of the same length, "
                         f"got shapes {tuple(xp.shape)} and {tuple(fp.shape)}")
    n = xp.shape[0]
    if n == 0:
        raise ValueError("numpy.interp: array of sample points is empty")
    ox = _ox()
    if n == 1:
        y = fp[0] + ox.zeros_like(x)
    else:
        # Which interval each x falls in: bookkeeping, no gradient.
        lower = np.searchsorted(xp._data, x._data, side="right") - 1
        lower = np.clip(lower, 0, n - 2)
        x0, x1, y0, y1 = xp[lower], xp[lower + 1], fp[lower], fp[lower + 1]
        y = y0 + (x - x0) * (y1 - y0) / (x1 - x0)
    below = fp[0] if left is None else _tensor(left).to(x.dtype)
    above = fp[-1] if right is None else _tensor(right).to(x.dtype)
    y = ox.where(x < xp[0], below, y)
    return ox.where(x > xp[-1], above, y)


@_implements("polyval")
def _np_polyval(p, x):
    coefficients = _tensor(p)
    y = _tensor(x) * 0
    for c in coefficients.unbind(0) if coefficients.ndim else (coefficients,):
        y = y * _tensor(x) + c      # Horner's rule, as NumPy computes it
    return y


def _poly_pair(a1, a2):
    p, q = _common(_tensor(a1).reshape(-1), _tensor(a2).reshape(-1))
    ox = _ox()
    width = max(p.shape[0], q.shape[0])
    p = ox.cat([ox.zeros(width - p.shape[0], dtype=p.dtype), p])
    q = ox.cat([ox.zeros(width - q.shape[0], dtype=q.dtype), q])
    return p, q


@_implements("polyadd")
def _np_polyadd(a1, a2):
    p, q = _poly_pair(a1, a2)
    return p + q


@_implements("polysub")
def _np_polysub(a1, a2):
    p, q = _poly_pair(a1, a2)
    return p - q


@_implements("polymul")
def _np_polymul(a1, a2):
    return _np_convolve(_tensor(a1).reshape(-1), _tensor(a2).reshape(-1))


@_implements("polyder")
def _np_polyder(p, m=1):
    c = _tensor(p).reshape(-1)
    for _ in range(int(m)):
        n = c.shape[0] - 1
        if n <= 0:
            return c[:0] if n < 0 else c[:1] * 0
        powers = _core._wrap(np.arange(n, 0, -1).astype(np.result_type(c.dtype, np.int64)))
        c = c[:-1] * powers
    return c


# -- convolution ---------------------------------------------------------------------------------

def _convolve_full(a, v):
    """The full discrete convolution of 1-D ``a`` and ``v``, as a matrix product."""
    n, m = a.shape[0], v.shape[0]
    k = np.arange(n + m - 1)[:, None]
    i = np.arange(n)[None, :]
    shift = k - i
    valid = (shift >= 0) & (shift < m)
    # Entry (k, i) is v[k - i] where that exists, else a padding zero at v[m].
    ox = _ox()
    padded = ox.cat([v, ox.zeros(1, dtype=v.dtype)])
    return padded[np.where(valid, shift, m)] @ a


def _convolve(a, v, mode, numpy_name):
    a, v = _common(_tensor(a), _tensor(v))
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{numpy_name}: object too deep for desired array (expected 1-D "
                         f"inputs, got shapes {tuple(a.shape)} and {tuple(v.shape)})")
    n, m = a.shape[0], v.shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"{numpy_name}: inputs cannot be empty")
    full = _convolve_full(a, v)
    short = min(n, m)
    if mode == "full":
        return full
    if mode == "same":
        start = (short - 1) // 2
        return full[start:start + max(n, m)]
    if mode == "valid":
        return full[short - 1:short - 1 + max(n, m) - short + 1]
    raise ValueError(f"{numpy_name}: mode must be one of 'full', 'same', 'valid', got {mode!r}")


@_implements("convolve")
def _np_convolve(a, v, mode="full"):
    return _convolve(a, v, mode, "numpy.convolve")


@_implements("correlate")
def _np_correlate(a, v, mode="valid"):
    a, v = _tensor(a), _tensor(v)
    if v.ndim == 1 and a.ndim == 1 and v.shape[0] > a.shape[0]:
        # NumPy swaps the inputs and reverses the result then.
        return _convolve(v, a.flip(0), mode, "numpy.correlate").flip(0)
    return _convolve(a, v.flip(0) if v.ndim == 1 else v, mode, "numpy.correlate")


# -- calculus -------------------------------------------------------------------------------------

@_implements("ediff1d")
def _np_ediff1d(ary, to_end=None, to_begin=None):
    x = _tensor(ary).reshape(-1)
    parts = [x[1:] - x[:-1]]
    if to_begin is not None:
        parts.insert(0, _tensor(to_begin).reshape(-1).to(x.dtype))
    if to_end is not None:
        parts.append(_tensor(to_end).reshape(-1).to(x.dtype))
    return _ox().cat(parts) if len(parts) > 1 else parts[0]


def _spacing_along(spacing, n, numpy_name):
    """``(dx_left, dx_right)`` per interior point, then the edge steps (scalar or coordinates)."""
    h = _tensor(spacing)
    if h.ndim == 0:
        return h, h, h, h
    if h.ndim != 1 or h.shape[0] != n:
        raise ValueError(f"{numpy_name}: when spacing is an array, it must be 1-D and match "
                         f"the length of the axis ({n}), got shape {tuple(h.shape)}")
    steps = h[1:] - h[:-1]
    return steps[:-1], steps[1:], steps[0], steps[-1]


@_implements("gradient")
def _np_gradient(f, *varargs, axis=None, edge_order=1):
    if edge_order != 1:
        raise _interop._unsupported("numpy.gradient", "edge_order=2")
    y = _float(f)
    axes = (tuple(range(y.ndim)) if axis is None else
            (axis,) if isinstance(axis, numbers.Integral) else tuple(axis))
    axes = tuple(_interop._normalize_axis(d, y.ndim, "numpy.gradient") for d in axes)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"numpy.gradient: invalid number of arguments ({len(varargs)} spacings "
                        f"for {len(axes)} axes)")
    results = []
    for d, spacing in zip(axes, spacings):
        n = y.shape[d]
        if n < 2:
            raise ValueError("numpy.gradient: shape of array too small to calculate a numerical "
                             "gradient, at least (edge_order + 1) elements are required")
        left, right, first, last = _spacing_along(spacing, n, "numpy.gradient")
        shape = [1] * y.ndim
        shape[d] = -1

        def along(t):
            return t.reshape(shape) if t.ndim else t

        def part(start, stop):
            return y[_axis_index(y.ndim, d, slice(start, stop))]
        before, here, after = part(None, -2), part(1, -1), part(2, None)
        left, right = along(left), along(right)
        # Second-order central differences for uneven spacing (NumPy's formula).
        interior = (-right / (left * (left + right)) * before
                    + (right - left) / (left * right) * here
                    + left / (right * (left + right)) * after)
        head = (part(1, 2) - part(0, 1)) / first
        tail = (part(-1, None) - part(-2, -1)) / last
        results.append(_ox().cat([head, interior, tail], d) if n > 2 else
                       _ox().cat([head, tail], d))
    return results[0] if len(results) == 1 else tuple(results)


@_implements("trapezoid")
def _np_trapezoid(y, x=None, dx=1.0, axis=-1):
    values = _float(y)
    d = _interop._normalize_axis(axis, values.ndim, "numpy.trapezoid")

    def part(start, stop):
        return values[_axis_index(values.ndim, d, slice(start, stop))]
    if x is None:
        widths = _tensor(dx)
    else:
        xs = _float(x)
        if xs.ndim == 1:
            widths = xs[1:] - xs[:-1]
            shape = [1] * values.ndim
            shape[d] = -1
            widths = widths.reshape(shape)
        else:
            widths = xs[_axis_index(xs.ndim, d, slice(1, None))] - \
                xs[_axis_index(xs.ndim, d, slice(None, -1))]
    return _ox().sum(widths * (part(1, None) + part(None, -1)) / 2.0, dim=d)


# -- construction ---------------------------------------------------------------------------------

@_implements("linspace")
def _np_linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
                 device=None):
    num = int(num)
    if num < 0:
        raise ValueError(f"numpy.linspace: number of samples, {num}, must be non-negative")
    lo, hi = _common(_float(start), _float(stop))
    div = (num - 1) if endpoint else num
    fraction = np.arange(num, dtype=np.float64) / div if div > 0 else np.zeros(num)
    fraction = _core._wrap(fraction.astype(lo.dtype).reshape((-1,) + (1,) *
                                                             max(lo.ndim, hi.ndim)))
    step = (hi - lo) / div if div > 0 else (hi - lo) * np.nan
    result = lo + fraction * (hi - lo)
    if endpoint and num > 1:
        result = _ox().cat([result[:-1], (hi + 0 * lo).unsqueeze(0)])
    if axis != 0:
        result = _interop._np_moveaxis(result, 0, axis)
    if dtype is not None:
        result = result.to(dtype)
    return (result, step) if retstep else result


@_implements("logspace")
def _np_logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    exponents = _np_linspace(start, stop, num, endpoint, axis=axis)
    base = _tensor(base)
    if base.ndim:
        base = _interop._np_expand_dims(base, axis)
    result = base.to(exponents.dtype) ** exponents
    return result if dtype is None else result.to(dtype)


@_implements("meshgrid")
def _np_meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"numpy.meshgrid: Valid values for `indexing` are 'xy' and 'ij', got "
                         f"{indexing!r}")
    vectors = [_tensor(v).reshape(-1) for v in xi]
    ndim = len(vectors)
    shapes = []
    for i, v in enumerate(vectors):
        shape = [1] * ndim
        shape[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            shape[0], shape[1] = shape[1], shape[0]
        shapes.append(shape)
    grids = [v.reshape(shape) for v, shape in zip(vectors, shapes)]
    if not sparse:
        grids = list(_interop._np_broadcast_arrays(*grids))
    return tuple(grids)


@_implements("full")
def _np_full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    fill = _tensor(fill_value)
    if dtype is not None:
        fill = fill.to(dtype)
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return _ox().broadcast_to(fill, shape).clone()


@_implements("astype")
def _np_astype(x, dtype, /, *, copy=True, device=None):
    t = _tensor(x)
    result = t.to(dtype)
    return result.clone() if copy and result is t else result


@_implements("cross")
def _np_cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    x = _interop._np_moveaxis(_tensor(a), axisa, -1)
    y = _interop._np_moveaxis(_tensor(b), axisb, -1)
    if x.shape[-1] != 3 or y.shape[-1] != 3:
        raise ValueError(f"numpy.cross: oxmera supports 3-vectors only, got vectors of length "
                         f"{x.shape[-1]} and {y.shape[-1]}")
    x, y = _common(x, y)
    result = _ox().linalg.cross(x, y, dim=-1)
    return _interop._np_moveaxis(result, -1, axisc) if result.ndim > 1 else result


@_implements("cov")
def _np_cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
            dtype=None):
    if fweights is not None or aweights is not None:
        raise _interop._unsupported("numpy.cov", "fweights=/aweights=")
    x = _float(m)
    if x.ndim == 1:
        x = x.reshape(1, -1)
    elif not rowvar:
        x = x.transpose(0, 1)
    if y is not None:
        other = _float(y)
        other = other.reshape(1, -1) if other.ndim == 1 else (other if rowvar else
                                                              other.transpose(0, 1))
        x = _ox().cat(_common(x, other), 0)
    if dtype is not None:
        x = x.to(dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    centred = x - x.mean(dim=1, keepdim=True)
    # NumPy's covariance of complex rows conjugates the second factor.
    result = centred @ cj(centred).transpose(0, 1) / (x.shape[1] - ddof)
    return result.reshape(()) if result.shape == (1, 1) else result


@_implements("corrcoef")
def _np_corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = _np_cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = _ox().real(c.diagonal()).sqrt()     # the variances: real also for complex rows
    return c / d.reshape(-1, 1) / d.reshape(1, -1)


@_implements("pad")
def _np_pad(array, pad_width, mode="constant", **kwargs):
    x = _tensor(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64).reshape(-1, 2)
                             if np.ndim(pad_width) else np.asarray([[pad_width] * 2]),
                             (x.ndim, 2))
    ox = _ox()
    if mode == "constant":
        value = kwargs.pop("constant_values", 0)
        if kwargs or np.ndim(value):
            raise _interop._unsupported("numpy.pad", "per-axis constant_values")
        for d, (before, after) in enumerate(widths):
            parts = []
            for count in (before, after):
                shape = list(x.shape)
                shape[d] = int(count)
                parts.append(ox.full(tuple(shape), value, dtype=x.dtype))
            x = ox.cat([parts[0], x, parts[1]], d)
        return x
    if mode not in ("edge", "reflect", "symmetric", "wrap") or kwargs:
        raise _interop._unsupported("numpy.pad", f"mode={mode!r} with {sorted(kwargs)}")
    for d, (before, after) in enumerate(widths):
        # NumPy's own pad of the positions says which entry each output reads.
        index = np.pad(np.arange(x.shape[d]), (int(before), int(after)), mode=mode)
        x = x[_axis_index(x.ndim, d, index)]
    return x


@_implements("delete")
def _np_delete(arr, obj, axis=None):
    x = _tensor(arr)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _interop._normalize_axis(axis, x.ndim, "numpy.delete")
    keep = np.delete(np.arange(x.shape[axis]), _interop._data(obj))
    return x[_axis_index(x.ndim, axis, keep)]


@_implements("compress")
def _np_compress(condition, a, axis=None, out=None):
    _interop._check_out(out, "numpy.compress")
    x = _tensor(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    axis = _interop._normalize_axis(axis, x.ndim, "numpy.compress")
    keep = np.flatnonzero(np.asarray(_interop._data(condition)))
    return x[_axis_index(x.ndim, axis, keep)]


@_implements("extract")
def _np_extract(condition, arr):
    return _tensor(arr).reshape(-1)[np.flatnonzero(np.asarray(_interop._data(condition)))]


# -- more of NumPy's functions, each a line or two of oxmera ops ---------------------------------

def _composed_ufunc(name):
    def register(fn):
        _interop._COMPOSED_UFUNCS[name] = fn
        return fn
    return register


@_composed_ufunc("cbrt")
def _np_cbrt(x):
    x = _float(x)
    return _ox().sign(x) * _ox().abs(x) ** (1.0 / 3.0)


@_composed_ufunc("positive")
def _np_positive(x):
    return _ox().clone(_tensor(x))


@_composed_ufunc("vecdot")
def _np_vecdot(x1, x2):
    x, y = _common(_tensor(x1), _tensor(x2))
    return _ox().sum(x * y, dim=-1)


@_composed_ufunc("matvec")
def _np_matvec(x1, x2):
    m, v = _common(_tensor(x1), _tensor(x2))
    return (m @ v.unsqueeze(-1)).squeeze(-1)


@_composed_ufunc("vecmat")
def _np_vecmat(x1, x2):
    v, m = _common(_tensor(x1), _tensor(x2))
    return (v.unsqueeze(-2) @ m).squeeze(-2)


# -- complex numbers: NumPy's names over oxmera's complex ops ------------------------------------

@_implements("real")
def _np_real(val):
    # A real tensor is its own real part (NumPy returns the array itself too).
    return _ox().real(_tensor(val))


@_implements("imag")
def _np_imag(val):
    t = _tensor(val)
    if t.dtype.kind == "c":
        return _ox().imag(t)
    return _ox().zeros_like(t)      # NumPy's imaginary part of real values: zeros


@_implements("angle")
def _np_angle(z, deg=False):
    t = _tensor(z)
    angle = _ox().angle(t if t.dtype.kind == "c" else _float(t))
    return angle * (180.0 / np.pi) if deg else angle


@_implements("real_if_close")
def _np_real_if_close(a, tol=100):
    t = _tensor(a)
    if t.dtype.kind != "c":
        return t
    if tol > 1:
        tol = np.finfo(t.dtype).eps * tol
    # Which dtype comes back depends on the values (as in NumPy); the values
    # taken carry the gradient either way.
    if bool(np.all(np.absolute(t._data.imag) < tol)):
        return _ox().real(t)
    return t


@_implements("sort_complex")
def _np_sort_complex(a):
    t = _tensor(a)
    if t.dtype.kind != "c":
        # NumPy's result dtype for real input: complex64 for small integers, else complex128.
        t = t.to(np.complex64 if t.dtype.char in "bhBH" else np.complex128)
    if t.ndim == 0:
        return _ox().clone(t)
    # The order (by real part, then imaginary part) has no gradient: NumPy finds it.
    order = np.argsort(t._data, axis=-1, kind="stable")
    return _ox().take_along_dim(t, _core._wrap(order), dim=-1)


@_implements("fix")
def _np_fix(x, out=None):
    _interop._check_out(out, "numpy.fix")
    return _ox().trunc(_tensor(x))


@_implements("ascontiguousarray", "asfortranarray")
def _np_ascontiguousarray(a, dtype=None, *, like=None):
    return _interop._cast(_tensor(a), dtype)


@_implements("require")
def _np_require(a, dtype=None, requirements=None, *, like=None):
    return _interop._cast(_tensor(a), dtype)


@_implements("asarray_chkfinite")
def _np_asarray_chkfinite(a, dtype=None, order=None):
    t = _interop._cast(_tensor(a), dtype)
    if not np.isfinite(t._data).all():
        raise ValueError("numpy.asarray_chkfinite: array must not contain infs or NaNs")
    return t


def _cumulative(name, op, initial):
    numpy_name = f"numpy.{name}"

    def translator(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _interop._check_out(out, numpy_name)
        t = _interop._cast(_tensor(x), dtype)
        if axis is None:
            if t.ndim > 1:
                raise ValueError(f"{numpy_name}: axis must be given for arrays of more than "
                                 f"one dimension")
            t, axis = t.reshape(-1), 0
        result = getattr(_ox(), op)(t, dim=axis)
        if include_initial:
            shape = list(result.shape)
            shape[axis] = 1
            result = _ox().cat([_ox().full(tuple(shape), initial, dtype=result.dtype), result],
                               axis)
        return result
    translator.__name__ = f"_np_{name}"
    return translator


_implements("cumulative_sum")(_cumulative("cumulative_sum", "cumsum", 0))
_implements("cumulative_prod")(_cumulative("cumulative_prod", "cumprod", 1))


@_implements("matrix_transpose")
def _np_matrix_transpose(x, /):
    t = _tensor(x)
    if t.ndim < 2:
        raise ValueError(f"numpy.matrix_transpose: Input array must be at least 2-dimensional, "
                         f"got shape {tuple(t.shape)}")
    return t.transpose(-2, -1)


@_implements("rollaxis")
def _np_rollaxis(a, axis, start=0):
    t = _tensor(a)
    axis = _interop._normalize_axis(axis, t.ndim, "numpy.rollaxis")
    if start < 0:
        start += t.ndim
    if not 0 <= start <= t.ndim:
        raise np.exceptions.AxisError(f"numpy.rollaxis: start {start} out of range")
    if axis < start:
        start -= 1          # NumPy's rule: the axis is rolled to before `start`
    return _interop._np_moveaxis(t, axis, start)


@_implements("unstack")
def _np_unstack(x, /, *, axis=0):
    return tuple(_tensor(x).unbind(axis))


@_implements("vander")
def _np_vander(x, N=None, increasing=False):
    t = _tensor(x)
    if t.ndim != 1:
        raise ValueError("numpy.vander: x must be a one-dimensional array or sequence.")
    N = t.shape[0] if N is None else int(N)
    powers = range(N) if increasing else range(N - 1, -1, -1)
    return _ox().stack([t ** p if p else _ox().ones_like(t) for p in powers], 1) if N else \
        t.reshape(-1, 1)[:, :0]


@_implements("geomspace")
def _np_geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    lo, hi = _common(_float(start), _float(stop))
    if bool((lo._data == 0).any()) or bool((hi._data == 0).any()):
        raise ValueError("numpy.geomspace: Geometric sequence cannot include zero")
    if bool((lo._data < 0).any()) or bool((hi._data < 0).any()):
        raise _interop._unsupported("numpy.geomspace", "negative endpoints")
    result = _ox().exp(_np_linspace(_ox().log(lo), _ox().log(hi), num, endpoint, axis=axis))
    if num > 0:         # the endpoints exactly, as NumPy sets them
        first = _interop._np_expand_dims(lo, axis) if lo.ndim else lo.reshape(1)
        pieces = [first, result[_axis_index(result.ndim, axis % result.ndim, slice(1, None))]]
        result = _ox().cat(pieces, axis)
        if endpoint and num > 1:
            last = _interop._np_expand_dims(hi, axis) if hi.ndim else hi.reshape(1)
            body = result[_axis_index(result.ndim, axis % result.ndim, slice(None, -1))]
            result = _ox().cat([body, last], axis)
    return result if dtype is None else result.to(dtype)


# NaN-ignoring reductions: the NaNs replaced by the reduction's identity.

def _nan_reduction(name, op, fill):
    numpy_name = f"numpy.{name}"

    def translator(a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue,
                   where=_NoValue):
        _interop._check_out(out, numpy_name)
        _interop._check_initial(initial, numpy_name)
        _interop._check_where(where, numpy_name)
        x = _interop._cast(_tensor(a), dtype)
        cleaned = _ox().where(_ox().isnan(x), fill, x)
        return _interop._TRANSLATORS[getattr(np, op)](cleaned, axis,
                                                      keepdims=keepdims)
    translator.__name__ = f"_np_{name}"
    return translator


_implements("nanmax")(_nan_reduction("nanmax", "max", -np.inf))
_implements("nanmin")(_nan_reduction("nanmin", "min", np.inf))
_implements("nanprod")(_nan_reduction("nanprod", "prod", 1.0))


def _nan_cumulative(name, op, fill):
    def translator(a, axis=None, dtype=None, out=None):
        _interop._check_out(out, f"numpy.{name}")
        x = _interop._cast(_tensor(a), dtype)
        return _interop._TRANSLATORS[getattr(np, op)](_ox().where(_ox().isnan(x), fill, x),
                                                      axis)
    translator.__name__ = f"_np_{name}"
    return translator


_implements("nancumsum")(_nan_cumulative("nancumsum", "cumsum", 0.0))
_implements("nancumprod")(_nan_cumulative("nancumprod", "cumprod", 1.0))


def _nan_moment(name, root):
    numpy_name = f"numpy.{name}"

    def translator(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *,
                   where=_NoValue, mean=_NoValue, correction=_NoValue):
        _interop._check_out(out, numpy_name)
        _interop._check_where(where, numpy_name)
        if mean is not _NoValue:
            raise _interop._unsupported(numpy_name, "mean=")
        if correction is not _NoValue:
            ddof = correction
        x = _interop._cast(_float(a), dtype)
        present = _ox().logical_not(_ox().isnan(x))
        # The count, and the variance, are real also for complex values (as NumPy's).
        count = _ox().sum(present.to(np.real(x._data[:0]).dtype), dim=_interop._axis(axis),
                          keepdim=True)
        zeroed = _ox().where(present, x, 0.0)
        centre = _ox().sum(zeroed, dim=_interop._axis(axis), keepdim=True) / count
        # (zeroed, not x: a NaN in the unused branch would poison the gradient)
        deviation = zeroed - centre
        if x.dtype.kind == "c":
            deviation = _ox().abs(deviation)
        squares = _ox().where(present, deviation ** 2, 0.0)
        result = _ox().sum(squares, dim=_interop._axis(axis), keepdim=True) / (count - ddof)
        if root:
            result = _ox().sqrt(result)
        if not _interop._keepdims(keepdims):
            result = result.reshape(tuple(s for d, s in enumerate(result.shape)
                                          if d not in _reduced(axis, x.ndim)))
        return result
    translator.__name__ = f"_np_{name}"
    return translator


def _reduced(axis, ndim):
    if axis is None:
        return set(range(ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    return {_interop._normalize_axis(d, ndim, "numpy") for d in axes}


_implements("nanvar")(_nan_moment("nanvar", False))
_implements("nanstd")(_nan_moment("nanstd", True))


@_implements("select")
def _np_select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("numpy.select: list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("numpy.select: select with an empty condition list is not possible")
    choices = [_tensor(c) for c in choicelist]
    result = _tensor(default)
    result = result.to(np.result_type(result.dtype, *(c.dtype for c in choices)))
    # The first condition that holds wins: apply them from the last one back.
    for condition, choice in zip(reversed(condlist), reversed(choices)):
        result = _ox().where(_tensor(condition), choice, result)
    return result


@_implements("piecewise")
def _np_piecewise(x, condlist, funclist, *args, **kw):
    t = _tensor(x)
    if isinstance(condlist, (Tensor, np.ndarray)) and np.ndim(_interop._data(condlist)) == \
            t.ndim or isinstance(condlist, (bool, np.bool_)):
        condlist = [condlist]
    masks = [np.broadcast_to(np.asarray(_interop._data(c), dtype=bool), tuple(t.shape))
             for c in condlist]
    if len(funclist) == len(masks) + 1:     # the last function: where no condition holds
        masks.append(~np.any(masks, axis=0) if masks else np.ones(tuple(t.shape), bool))
    elif len(funclist) != len(masks):
        raise ValueError(f"numpy.piecewise: with {len(masks)} condition(s), either "
                         f"{len(masks)} or {len(masks) + 1} functions are expected")
    result = _ox().zeros_like(t)
    for mask, piece in zip(masks, funclist):
        if not mask.any():
            continue
        # As NumPy: each function sees only the entries its condition selects
        # (so it is never evaluated, nor differentiated, outside its domain).
        values = piece(t[mask], *args, **kw) if callable(piece) else piece
        result[mask] = values
    return result
