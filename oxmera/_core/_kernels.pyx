# cython: language_level=3
"""Compiled elementwise kernels NumPy has no ufunc for (the C is in ``_kernels.h``).

Private: ``oxmera.ops`` calls them on NumPy arrays (any layout; the loops run
over a C-contiguous copy when the input is not one), without the GIL. They
keep oxmera's runtime dependencies to NumPy: SciPy's ``erf`` was the fast path
before, and ``gelu`` (every transformer's activation) spent most of its time
in it.
"""

import numpy as np

cdef extern from "_kernels.h" nogil:
    void oxmera_erf_float32(const float *x, float *out, Py_ssize_t n)
    void oxmera_erf_float64(const double *x, double *out, Py_ssize_t n)
    void oxmera_erfc_float64(const double *x, double *out, Py_ssize_t n)
    void oxmera_gelu_backward_float32(const float *grad, const float *x, const float *cdf,
                                      float *out, Py_ssize_t n)


def erf(x):
    """erf of a float32 or float64 array: a new C-contiguous array, same shape and dtype.

    float64 within one ulp (libm); float32 evaluated in double and rounded
    once (see ``_kernels.h``).
    """
    source = np.asarray(x, order="C")     # (ascontiguousarray would make 0-d arrays 1-d)
    out = np.empty(source.shape, source.dtype)     # (float32 or float64: checked below)
    cdef Py_ssize_t n = source.size
    cdef const float[::1] x32
    cdef float[::1] out32
    cdef const double[::1] x64
    cdef double[::1] out64
    if source.dtype == np.float32:
        if n:
            x32, out32 = source.reshape(-1), out.reshape(-1)
            with nogil:
                oxmera_erf_float32(&x32[0], &out32[0], n)
    elif source.dtype == np.float64:
        if n:
            x64, out64 = source.reshape(-1), out.reshape(-1)
            with nogil:
                oxmera_erf_float64(&x64[0], &out64[0], n)
    else:
        raise TypeError(f"erf kernel: native float32 or float64 arrays only, got {source.dtype}")
    return out


def erfc(x):
    """erfc of a float64 array (libm, within one ulp): a new C-contiguous array."""
    source = np.asarray(x, order="C")     # (ascontiguousarray would make 0-d arrays 1-d)
    if source.dtype != np.float64:
        raise TypeError(f"erfc kernel: native float64 arrays only, got {source.dtype}")
    out = np.empty(source.shape, np.float64)
    cdef Py_ssize_t n = source.size
    cdef const double[::1] x64
    cdef double[::1] out64
    if n:
        x64, out64 = source.reshape(-1), out.reshape(-1)
        with nogil:
            oxmera_erfc_float64(&x64[0], &out64[0], n)
    return out


def gelu_backward(grad, x, cdf):
    """gelu's VJP ``grad * (cdf + x * pdf(x))`` (``approximate='none'``) of float32
    arrays of one shape, in one pass: a new C-contiguous float32 array."""
    grad, x, cdf = (np.asarray(a, order="C") for a in (grad, x, cdf))
    if not grad.dtype == x.dtype == cdf.dtype == np.float32:
        raise TypeError(f"gelu_backward kernel: float32 arrays only, got "
                        f"{grad.dtype}, {x.dtype}, {cdf.dtype}")
    if not grad.shape == x.shape == cdf.shape:
        raise ValueError(f"gelu_backward kernel: one shape for all, got "
                         f"{grad.shape}, {x.shape}, {cdf.shape}")
    out = np.empty(x.shape, np.float32)
    cdef Py_ssize_t n = x.size
    cdef const float[::1] g32, x32, c32
    cdef float[::1] out32
    if n:
        g32, x32, c32, out32 = grad.reshape(-1), x.reshape(-1), cdf.reshape(-1), out.reshape(-1)
        with nogil:
            oxmera_gelu_backward_float32(&g32[0], &x32[0], &c32[0], &out32[0], n)
    return out
