# cython: language_level=3
"""Compiled elementwise kernels NumPy has no ufunc for (the C is in ``_kernels.h``),
the gathers of the convolutions and max pooling (``_conv_kernels.h``), and ``exp``:
NumPy's ufunc with a float32 loop of oxmera's.

Private: ``oxmera.ops`` calls them on NumPy arrays (any layout; the loops run
over a C-contiguous copy when the input is not one), without the GIL. They
keep oxmera's runtime dependencies to NumPy: SciPy's ``erf`` was the fast path
before, and ``gelu`` (every transformer's activation) spent most of its time
in it.
"""

from libc.string cimport memcmp

import operator

import numpy as np

cimport numpy as cnp

cnp.import_array()

cdef extern from "_kernels.h" nogil:
    void oxmera_erf_float32(const float *x, float *out, Py_ssize_t n)
    void oxmera_erf_float64(const double *x, double *out, Py_ssize_t n)
    void oxmera_erfc_float64(const double *x, double *out, Py_ssize_t n)
    void oxmera_layer_norm_float32(const float *x, const float *weight, const float *bias,
                                   float *out, float *mean, float *rstd, Py_ssize_t rows,
                                   Py_ssize_t n, double eps)
    void oxmera_layer_norm_backward_float32(const float *grad, const float *x,
                                            const float *weight, const float *mean,
                                            const float *rstd, float *grad_input,
                                            double *grad_weight, double *grad_bias,
                                            Py_ssize_t rows, Py_ssize_t n)
    void oxmera_gelu_float32(const float *x, float *out, float *cdf, Py_ssize_t n)
    void oxmera_relu_backward_float32(const float *grad, const float *output, float *out,
                                      Py_ssize_t n)
    void oxmera_relu_backward_float64(const double *grad, const double *output, double *out,
                                      Py_ssize_t n)
    void oxmera_tanh_backward_float32(const float *grad, const float *output, float *out,
                                      Py_ssize_t n)
    void oxmera_tanh_backward_float64(const double *grad, const double *output, double *out,
                                      Py_ssize_t n)
    void oxmera_sigmoid_backward_float32(const float *grad, const float *output, float *out,
                                         Py_ssize_t n)
    void oxmera_sigmoid_backward_float64(const double *grad, const double *output, double *out,
                                         Py_ssize_t n)
    void oxmera_scaled_update_float32(float *target, const float *value, float alpha,
                                      int subtract, Py_ssize_t n)
    void oxmera_scaled_update_float64(double *target, const double *value, double alpha,
                                      int subtract, Py_ssize_t n)
    void oxmera_adam_update_float32(float *param, const float *grad, float *exp_avg,
                                    float *exp_avg_sq, float *max_sq, float lerp, int lerp_big,
                                    float beta2, float one_minus_beta2, float bias2_sqrt,
                                    float eps, float neg_step_size, Py_ssize_t n)
    void oxmera_adam_update_float64(double *param, const double *grad, double *exp_avg,
                                    double *exp_avg_sq, double *max_sq, double lerp,
                                    int lerp_big, double beta2, double one_minus_beta2,
                                    double bias2_sqrt, double eps, double neg_step_size,
                                    Py_ssize_t n)
    void oxmera_relu_float32(const float *x, float *out, Py_ssize_t n)
    void oxmera_sigmoid_float32(const float *x, float *out, Py_ssize_t n)
    void oxmera_sigmoid_float64(const double *x, double *out, Py_ssize_t n)
    void oxmera_relu_float64(const double *x, double *out, Py_ssize_t n)
    void oxmera_mul_pair_float32(const float *factor, const float *a, const float *b,
                                 float *out_a, float *out_b, Py_ssize_t n)
    void oxmera_mul_pair_float64(const double *factor, const double *a, const double *b,
                                 double *out_a, double *out_b, Py_ssize_t n)
    void oxmera_gelu_backward_float32(const float *grad, const float *x, const float *cdf,
                                      float *out, Py_ssize_t n)
    void oxmera_lstm_gates_float32(const float *i, const float *f, const float *g,
                                   const float *o, Py_ssize_t ld_gates, const float *cx,
                                   Py_ssize_t ld_cx, float *h, float *c, Py_ssize_t rows,
                                   Py_ssize_t n)
    void oxmera_lstm_gates_backward_float32(const float *grad_h, const float *grad_c,
                                            const float *i, const float *f, const float *g,
                                            const float *o, Py_ssize_t ld_gates,
                                            const float *cx, Py_ssize_t ld_cx, float *out,
                                            Py_ssize_t rows, Py_ssize_t n)


# The kernels read and write the arrays' memory through these pointers (the
# arrays checked C-contiguous, aligned, native and of the dtype): typed
# memoryviews cost ~0.3 us each to acquire, and a small array's kernel call
# acquired four, more than its arithmetic (relu's VJP, an optimizer update).
cdef void *_data(object array, int typenum, bint write, str what) except? NULL:
    """The memory of ``array``, a C-contiguous native array of ``typenum``
    (writable when ``write``); valid while the caller holds the array."""
    cdef cnp.ndarray a
    if not cnp.PyArray_Check(array):
        raise TypeError(f"{what} kernel: ndarrays only, got {type(array).__name__}")
    a = <cnp.ndarray>array
    if (cnp.PyArray_TYPE(a) != typenum or not cnp.PyArray_ISNOTSWAPPED(a)
            or not cnp.PyArray_ISALIGNED(a)):
        raise TypeError(f"{what} kernel: native {cnp.PyArray_DescrFromType(typenum)} "
                        f"arrays only, got {a.dtype}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(a):
        raise ValueError(f"{what} kernel: C-contiguous arrays only")
    if write and not cnp.PyArray_ISWRITEABLE(a):
        raise ValueError(f"{what} kernel: the output is read-only")
    return cnp.PyArray_DATA(a)


cdef object _carray(object array, int typenum):
    """``array`` itself when it is a C-contiguous, aligned, native array of
    ``typenum``, else such a copy (of memory a user shared unaligned, say):
    what ``_data`` reads. The callers checked the dtype."""
    return cnp.PyArray_FROMANY(array, typenum, 0, 0, cnp.NPY_ARRAY_CARRAY_RO)


cdef inline object _empty_like(object array, int typenum):
    """A new C-contiguous array of ``array``'s shape and ``typenum`` (np.empty in C)."""
    return cnp.PyArray_EMPTY(cnp.PyArray_NDIM(<cnp.ndarray>array),
                             cnp.PyArray_DIMS(<cnp.ndarray>array), typenum, 0)


ctypedef void (*_unary_f32)(const float *, float *, Py_ssize_t) noexcept nogil
ctypedef void (*_unary_f64)(const double *, double *, Py_ssize_t) noexcept nogil


cdef object _unary_pass(source, out, int typenum, _unary_f32 f32, _unary_f64 f64):
    # One elementwise kernel from ``source``'s memory into ``out``'s (float32
    # or float64 ``typenum``, the same size and element order): ``out``.
    cdef const void *xp = cnp.PyArray_DATA(<cnp.ndarray>source)
    cdef void *o = cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>source)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            f32(<const float *>xp, <float *>o, n)
        else:
            f64(<const double *>xp, <double *>o, n)
    return out


def erf(x):
    """erf of a float32 or float64 array: a new C-contiguous array, same shape and dtype.

    float64 within one ulp (libm); float32 evaluated in double and rounded
    once (see ``_kernels.h``).
    """
    source = np.asarray(x, order="C")     # (ascontiguousarray would make 0-d arrays 1-d)
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>source)
    if typenum != cnp.NPY_FLOAT and typenum != cnp.NPY_DOUBLE:
        raise TypeError(f"erf kernel: native float32 or float64 arrays only, got {source.dtype}")
    source = _carray(source, typenum)
    return _unary_pass(source, _empty_like(source, typenum), typenum, oxmera_erf_float32,
                       oxmera_erf_float64)


def erfc(x):
    """erfc of a float64 array (libm, within one ulp): a new C-contiguous array."""
    source = np.asarray(x, order="C")     # (ascontiguousarray would make 0-d arrays 1-d)
    if source.dtype != np.float64:
        raise TypeError(f"erfc kernel: native float64 arrays only, got {source.dtype}")
    source = _carray(source, cnp.NPY_DOUBLE)
    cdef const double *xp = <const double *>_data(source, cnp.NPY_DOUBLE, False, "erfc")
    out = _empty_like(source, cnp.NPY_DOUBLE)
    cdef double *o = <double *>_data(out, cnp.NPY_DOUBLE, True, "erfc")
    cdef Py_ssize_t n = source.size
    with nogil:
        oxmera_erfc_float64(xp, o, n)
    return out


def gelu(x):
    """gelu (``approximate='none'``) of a float32 array in one pass: ``(output, cdf)``,
    the values of ``x * cdf`` and ``cdf = (erf(x * float32(1 / sqrt 2)) + 1) / 2``
    in float32 arithmetic, erf from this module's float32 kernel."""
    x = np.asarray(x, order="C")
    if x.dtype != np.float32:
        raise TypeError(f"gelu kernel: float32 arrays only, got {x.dtype}")
    x = _carray(x, cnp.NPY_FLOAT)
    out, cdf = _empty_like(x, cnp.NPY_FLOAT), _empty_like(x, cnp.NPY_FLOAT)
    cdef const float *xv = <const float *>_data(x, cnp.NPY_FLOAT, False, "gelu")
    cdef float *ov = <float *>_data(out, cnp.NPY_FLOAT, True, "gelu")
    cdef float *cv = <float *>_data(cdf, cnp.NPY_FLOAT, True, "gelu")
    cdef Py_ssize_t n = x.size
    with nogil:
        oxmera_gelu_float32(xv, ov, cv, n)
    return out, cdf


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
    grad, x, cdf = _carray(grad, cnp.NPY_FLOAT), _carray(x, cnp.NPY_FLOAT), _carray(
        cdf, cnp.NPY_FLOAT)
    out = _empty_like(x, cnp.NPY_FLOAT)
    cdef const float *gv = <const float *>_data(grad, cnp.NPY_FLOAT, False, "gelu_backward")
    cdef const float *xv = <const float *>_data(x, cnp.NPY_FLOAT, False, "gelu_backward")
    cdef const float *cv = <const float *>_data(cdf, cnp.NPY_FLOAT, False, "gelu_backward")
    cdef float *ov = <float *>_data(out, cnp.NPY_FLOAT, True, "gelu_backward")
    cdef Py_ssize_t n = x.size
    with nogil:
        oxmera_gelu_backward_float32(gv, xv, cv, ov, n)
    return out


cdef const float *_float32_data(array, Py_ssize_t n, str what) except? NULL:
    """The data of a C-contiguous float32 array of n elements, or NULL for None
    (valid while the caller holds the array)."""
    if array is None:
        return NULL
    cdef const float *data = <const float *>_data(array, cnp.NPY_FLOAT, False, "layer_norm")
    if array.size != n:
        raise ValueError(f"layer_norm kernel: {what} has {array.size} elements, expected {n}")
    return data


def _rows_of(x, Py_ssize_t n, str what):
    x = np.asarray(x, order="C")
    if x.dtype != np.float32:
        raise TypeError(f"layer_norm kernel: float32 arrays only, got {what} {x.dtype}")
    if n <= 0 or x.size == 0 or x.size % n:
        raise ValueError(f"layer_norm kernel: {what} of shape {x.shape} is not rows of {n}")
    return _carray(x, cnp.NPY_FLOAT)


def layer_norm(x, weight, bias, Py_ssize_t n, double eps):
    """layer_norm of float32 ``x`` over rows of its last ``n`` elements (weight and
    bias float32 of n elements, or None): ``(output, mean, rstd)``, the output
    of x's shape, the statistics one float32 a row (computed in double)."""
    x = _rows_of(x, n, "input")
    weight = None if weight is None else _rows_of(weight, n, "weight")
    bias = None if bias is None else _rows_of(bias, n, "bias")
    cdef Py_ssize_t rows = x.size // n
    out = _empty_like(x, cnp.NPY_FLOAT)
    mean = np.empty(rows, np.float32)
    rstd = np.empty(rows, np.float32)
    cdef const float *xv = <const float *>_data(x, cnp.NPY_FLOAT, False, "layer_norm")
    cdef float *ov = <float *>_data(out, cnp.NPY_FLOAT, True, "layer_norm")
    cdef float *mv = <float *>_data(mean, cnp.NPY_FLOAT, True, "layer_norm")
    cdef float *rv = <float *>_data(rstd, cnp.NPY_FLOAT, True, "layer_norm")
    cdef const float *w = _float32_data(weight, n, "weight")
    cdef const float *b = _float32_data(bias, n, "bias")
    with nogil:
        oxmera_layer_norm_float32(xv, w, b, ov, mv, rv, rows, n, eps)
    return out, mean, rstd


def layer_norm_backward(grad, x, weight, mean, rstd, Py_ssize_t n):
    """layer_norm's VJP for float32 arrays over rows of ``n`` (``weight`` may be
    None): ``(grad_input, grad_weight, grad_bias)``, the last two of n elements
    summed over the rows in double."""
    x = _rows_of(x, n, "input")
    grad = _rows_of(grad, n, "grad")
    weight = None if weight is None else _rows_of(weight, n, "weight")
    cdef Py_ssize_t rows = x.size // n
    if grad.size != x.size:
        raise ValueError(f"layer_norm kernel: grad of shape {grad.shape} for input {x.shape}")
    mean = _carray(mean, cnp.NPY_FLOAT)
    rstd = _carray(rstd, cnp.NPY_FLOAT)
    grad_input = _empty_like(x, cnp.NPY_FLOAT)
    grad_weight = np.zeros(n)
    grad_bias = np.zeros(n)
    cdef const float *gv = <const float *>_data(grad, cnp.NPY_FLOAT, False, "layer_norm")
    cdef const float *xv = <const float *>_data(x, cnp.NPY_FLOAT, False, "layer_norm")
    cdef float *giv = <float *>_data(grad_input, cnp.NPY_FLOAT, True, "layer_norm")
    cdef double *gwv = <double *>_data(grad_weight, cnp.NPY_DOUBLE, True, "layer_norm")
    cdef double *gbv = <double *>_data(grad_bias, cnp.NPY_DOUBLE, True, "layer_norm")
    cdef const float *w = _float32_data(weight, n, "weight")
    cdef const float *m = _float32_data(mean, rows, "mean")
    cdef const float *r = _float32_data(rstd, rows, "rstd")
    with nogil:
        oxmera_layer_norm_backward_float32(gv, xv, w, m, r, giv, gwv, gbv,
                                           rows, n)
    return grad_input, grad_weight.astype(np.float32), grad_bias.astype(np.float32)


# ---- softmax and log_softmax over contiguous rows (float32) -------------------------
# The C is the block of the same name in _kernels.h. The callers (oxmera.ops.activation)
# use these for C-contiguous float32 arrays along the last dim only; other
# layouts and dtypes keep the NumPy formulas.

cdef extern from "_kernels.h" nogil:
    void oxmera_log_softmax_float32(const float *x, float *out, float *exps, float *sums,
                                    Py_ssize_t rows, Py_ssize_t n)
    void oxmera_softmax_float32(const float *x, float *out, double *wide, Py_ssize_t rows,
                                Py_ssize_t n)
    void oxmera_log_softmax_backward_float32(const float *grad, int grad_row,
                                             const float *exps, const float *sums,
                                             float *out, Py_ssize_t rows, Py_ssize_t n)
    void oxmera_softmax_backward_float32(const float *grad, int grad_row, const float *y,
                                         float *out, Py_ssize_t rows, Py_ssize_t n)
    Py_ssize_t oxmera_cross_entropy_backward_float32(const float *scale, int scale_row,
                                                     const cnp.int64_t *target,
                                                     const float *exps, const float *sums,
                                                     float *out, Py_ssize_t rows, Py_ssize_t n)
    void oxmera_log_softmax_float64(const double *x, double *out, double *exps, double *sums,
                                    Py_ssize_t rows, Py_ssize_t n)
    void oxmera_softmax_float64(const double *x, double *out, Py_ssize_t rows, Py_ssize_t n)
    void oxmera_log_softmax_backward_float64(const double *grad, int grad_row,
                                             const double *exps, const double *sums,
                                             double *out, Py_ssize_t rows, Py_ssize_t n)
    void oxmera_softmax_backward_float64(const double *grad, int grad_row, const double *y,
                                         double *out, Py_ssize_t rows, Py_ssize_t n)


def _softmax_rows_input(x, str opname):
    """``(x, typenum)``: x checked, a C-contiguous float32 or float64 array of at least
    one dim and no zero size (an aligned copy when its memory is not)."""
    if (not isinstance(x, np.ndarray) or x.dtype not in (np.float32, np.float64)
            or not x.flags.c_contiguous):
        raise TypeError(f"{opname} kernel: C-contiguous float32 or float64 arrays only")
    if x.ndim == 0 or x.size == 0:
        raise ValueError(f"{opname} kernel: rows of at least one element, got shape {x.shape}")
    cdef int typenum = cnp.NPY_FLOAT if x.dtype == np.float32 else cnp.NPY_DOUBLE
    return _carray(x, typenum), typenum


cpdef bint float_rows(x, dim) except -1:
    """Whether the row kernels take ``x`` along ``dim``: ``x`` a non-empty,
    C-contiguous, native float32 or float64 array of at least one dim (unaligned
    memory the kernels copy), and ``dim`` its last, an integer (-1 or ndim - 1;
    not a bool).

    The one test of softmax, log_softmax and their VJPs, in C: the forwards
    ask it before their general path (the dtype argument, the dim's
    normalization: five Python frames on every attention softmax and
    classifier loss).
    """
    cdef cnp.ndarray a
    cdef int nd, typenum
    if not cnp.PyArray_Check(x):
        return False
    if type(dim) is not int:
        if isinstance(dim, bool):
            return False
        try:
            dim = operator.index(dim)       # (a NumPy integer; an array of one raises)
        except TypeError:
            return False
    a = <cnp.ndarray>x
    nd = cnp.PyArray_NDIM(a)
    typenum = cnp.PyArray_TYPE(a)
    if (nd == 0 or (typenum != cnp.NPY_FLOAT and typenum != cnp.NPY_DOUBLE)
            or not cnp.PyArray_ISNOTSWAPPED(a)
            or not cnp.PyArray_IS_C_CONTIGUOUS(a) or cnp.PyArray_SIZE(a) == 0):
        return False
    return dim == -1 or dim == nd - 1


def log_softmax_rows(x):
    """log_softmax of a C-contiguous float32 or float64 array along its last dim:
    ``(output, exps, sums)``, ``exps`` the exponentials of x minus its row
    maxima and ``sums`` their sums (shape ``x.shape[:-1] + (1,)``), all of x's dtype."""
    cdef int typenum
    x, typenum = _softmax_rows_input(x, "log_softmax")
    cdef Py_ssize_t n = x.shape[x.ndim - 1]
    cdef Py_ssize_t rows = x.size // n
    out, exps = _empty_like(x, typenum), _empty_like(x, typenum)
    sums = np.empty(x.shape[:x.ndim - 1] + (1,), x.dtype)
    cdef void *xv = _data(x, typenum, False, "log_softmax")
    cdef void *ov = _data(out, typenum, True, "log_softmax")
    cdef void *ev = _data(exps, typenum, True, "log_softmax")
    cdef void *sv = _data(sums, typenum, True, "log_softmax")
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            oxmera_log_softmax_float32(<const float *>xv, <float *>ov, <float *>ev,
                                       <float *>sv, rows, n)
        else:
            oxmera_log_softmax_float64(<const double *>xv, <double *>ov, <double *>ev,
                                       <double *>sv, rows, n)
    return out, exps, sums


def softmax_rows(x):
    """softmax of a C-contiguous float32 or float64 array along its last dim: a new array."""
    cdef int typenum
    x, typenum = _softmax_rows_input(x, "softmax")
    cdef Py_ssize_t n = x.shape[x.ndim - 1]
    cdef Py_ssize_t rows = x.size // n
    out = _empty_like(x, typenum)
    cdef void *xv = _data(x, typenum, False, "softmax")
    cdef void *ov = _data(out, typenum, True, "softmax")
    cdef double *wide
    if typenum == cnp.NPY_DOUBLE:
        with nogil:
            oxmera_softmax_float64(<const double *>xv, <double *>ov, rows, n)
        return out
    scratch = np.empty(n)       # (float32: the exponentials in double, rounded once)
    wide = <double *>_data(scratch, cnp.NPY_DOUBLE, True, "softmax")
    with nogil:
        oxmera_softmax_float32(<const float *>xv, <float *>ov, wide, rows, n)
    return out


def _grad_rows(grad, shape, dtype, int typenum):
    """``(array, by_row)``: grad (of ``shape`` after broadcasting, of ``dtype``) as
    C-contiguous rows (by_row True) or, when it is broadcast along the last dim, one
    value a row."""
    if grad.shape != shape:     # np.broadcast_to is a Python function: ~1.5 us a call
        grad = np.broadcast_to(grad, shape)
    if grad.dtype != dtype:
        raise TypeError(f"softmax kernels: {dtype} gradients only, got {grad.dtype}")
    if grad.strides[grad.ndim - 1] == 0:
        return _carray(grad[..., 0], typenum), False
    return _carray(grad, typenum), True


def log_softmax_rows_backward(grad, exps, sums, out=None):
    """log_softmax's VJP ``grad - exps * (grad.sum(-1) / sums)`` for the float32 or
    float64 arrays of ``log_softmax_rows`` (``grad`` of their dtype): a new array, or
    ``out`` (which may be ``exps``)."""
    cdef int typenum
    exps, typenum = _softmax_rows_input(exps, "log_softmax_backward")
    sums = _carray(sums, typenum)
    cdef Py_ssize_t n = exps.shape[exps.ndim - 1]
    cdef Py_ssize_t rows = exps.size // n
    if sums.size != rows:
        raise ValueError(f"log_softmax_backward kernel: {sums.size} sums for {rows} rows")
    g, by_row = _grad_rows(grad, exps.shape, exps.dtype, typenum)
    if out is None:
        out = _empty_like(exps, typenum)
    elif (out.dtype != exps.dtype or out.shape != exps.shape or not out.flags.c_contiguous
          or not out.flags.writeable):
        raise ValueError("log_softmax_backward kernel: out must be a writable C-contiguous "
                         "array of the exponentials' dtype and shape")
    cdef void *gv = _data(g, typenum, False, "log_softmax_backward")
    cdef void *sv = _data(sums, typenum, False, "log_softmax_backward")
    cdef void *ev = _data(exps, typenum, False, "log_softmax_backward")
    cdef void *ov = _data(out, typenum, True, "log_softmax_backward")
    cdef int grad_row = by_row
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            oxmera_log_softmax_backward_float32(<const float *>gv, grad_row, <const float *>ev,
                                                <const float *>sv, <float *>ov, rows, n)
        else:
            oxmera_log_softmax_backward_float64(<const double *>gv, grad_row,
                                                <const double *>ev, <const double *>sv,
                                                <double *>ov, rows, n)
    return out


def cross_entropy_rows_takes(scale, target, exps, sums):
    """Whether ``cross_entropy_rows_backward`` takes these: float32 ``exps`` (N, C),
    C-contiguous, with float32 ``sums`` (N, 1), int64 ``target`` (N,) and a float32
    ``scale`` of shape () or (N,) (all ndarrays)."""
    cdef cnp.ndarray e, s, t, g
    if not (cnp.PyArray_Check(scale) and cnp.PyArray_Check(target) and cnp.PyArray_Check(exps)
            and cnp.PyArray_Check(sums)):
        return False
    e, s, t, g = <cnp.ndarray>exps, <cnp.ndarray>sums, <cnp.ndarray>target, <cnp.ndarray>scale
    if (cnp.PyArray_TYPE(e) != cnp.NPY_FLOAT or cnp.PyArray_NDIM(e) != 2
            or not cnp.PyArray_IS_C_CONTIGUOUS(e) or cnp.PyArray_DIM(e, 1) == 0):
        return False
    cdef cnp.npy_intp rows = cnp.PyArray_DIM(e, 0)
    return (cnp.PyArray_TYPE(s) == cnp.NPY_FLOAT and cnp.PyArray_SIZE(s) == rows
            and cnp.PyArray_TYPE(t) == cnp.NPY_INT64 and cnp.PyArray_NDIM(t) == 1
            and cnp.PyArray_DIM(t, 0) == rows
            and cnp.PyArray_TYPE(g) == cnp.NPY_FLOAT
            and (cnp.PyArray_NDIM(g) == 0
                 or (cnp.PyArray_NDIM(g) == 1 and cnp.PyArray_DIM(g, 0) == rows)))


def cross_entropy_rows_backward(scale, target, exps, sums, bint reuse_exps=False):
    """cross_entropy's VJP for class-index targets from log_softmax's kept
    exponentials (``cross_entropy_rows_takes`` true of the arguments): the
    gradient of the logits, log_softmax's VJP of nll_loss's gradient (``-scale``
    at each row's target) without building that gradient. A new array, or
    ``exps`` itself when ``reuse_exps`` (it must be writable then)."""
    if not cross_entropy_rows_takes(scale, target, exps, sums):
        raise TypeError("cross_entropy_backward kernel: float32 (N, C) exponentials, (N, 1) "
                        "sums, int64 (N,) targets and a float32 scale of () or (N,)")
    cdef Py_ssize_t rows = exps.shape[0], n = exps.shape[1]
    g = _carray(scale, cnp.NPY_FLOAT)
    t = _carray(target, cnp.NPY_INT64)
    s = _carray(sums, cnp.NPY_FLOAT)
    e = exps if reuse_exps else _carray(exps, cnp.NPY_FLOAT)
    out = exps if reuse_exps else _empty_like(exps, cnp.NPY_FLOAT)
    cdef const float *gv = <const float *>_data(g, cnp.NPY_FLOAT, False, "cross_entropy_backward")
    cdef const cnp.int64_t *tv = <const cnp.int64_t *>_data(
        t, cnp.NPY_INT64, False, "cross_entropy_backward")
    cdef const float *ev = <const float *>_data(e, cnp.NPY_FLOAT, False,
                                                "cross_entropy_backward")
    cdef const float *sv = <const float *>_data(s, cnp.NPY_FLOAT, False, "cross_entropy_backward")
    cdef float *ov = <float *>_data(out, cnp.NPY_FLOAT, True, "cross_entropy_backward")
    cdef int scale_row = g.ndim == 1
    cdef Py_ssize_t bad
    with nogil:
        bad = oxmera_cross_entropy_backward_float32(gv, scale_row, tv, ev, sv, ov, rows, n)
    if bad >= 0:
        raise IndexError(f"cross_entropy_backward kernel: target {target[bad]} is out of bounds "
                         f"for {n} classes")
    return out


def softmax_rows_backward(grad, y):
    """softmax's VJP ``y * (grad - (grad * y).sum(-1))`` for float32 or float64 arrays,
    ``y`` the C-contiguous output of ``softmax_rows`` (``grad`` of its dtype): a new array."""
    cdef int typenum
    y, typenum = _softmax_rows_input(y, "softmax_backward")
    cdef Py_ssize_t n = y.shape[y.ndim - 1]
    cdef Py_ssize_t rows = y.size // n
    g, by_row = _grad_rows(grad, y.shape, y.dtype, typenum)
    out = _empty_like(y, typenum)
    cdef void *gv = _data(g, typenum, False, "softmax_backward")
    cdef void *yv = _data(y, typenum, False, "softmax_backward")
    cdef void *ov = _data(out, typenum, True, "softmax_backward")
    cdef int grad_row = by_row
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            oxmera_softmax_backward_float32(<const float *>gv, grad_row, <const float *>yv,
                                            <float *>ov, rows, n)
        else:
            oxmera_softmax_backward_float64(<const double *>gv, grad_row, <const double *>yv,
                                            <double *>ov, rows, n)
    return out

# ---- end of softmax and log_softmax ----


# ---- LSTM gates ----

def lstm_gates_takes(gates, others):
    """Whether the LSTM gate kernels take these arrays: the four gate
    pre-activations ``gates`` and the ``others`` (cx, the gradients) float32
    ndarrays of one 2-D shape, aligned, each row contiguous (the four gate
    slices of one (B, 4H) matrix are), the four gates one row stride apart."""
    first = gates[0]
    if type(first) is not np.ndarray or first.ndim != 2:
        return False            # (a gate op may get Python numbers)
    shape = first.shape
    for group in (gates, others):
        for a in group:
            if (type(a) is not np.ndarray or a.dtype != np.float32 or a.shape != shape
                    or a.strides[1] != 4 or not a.flags.aligned):
                return False
    row = gates[0].strides[0]
    return all(a.strides[0] == row for a in gates)


cdef const float *_gate_rows(object array, Py_ssize_t rows, Py_ssize_t n,
                             Py_ssize_t *ld) except? NULL:
    """The memory of a float32 (rows, n) ``array`` whose rows are contiguous, and
    (in ``ld``) its row stride in floats."""
    cdef cnp.ndarray a
    if not cnp.PyArray_Check(array):
        raise TypeError(f"lstm_gates kernel: ndarrays only, got {type(array).__name__}")
    a = <cnp.ndarray>array
    if (cnp.PyArray_TYPE(a) != cnp.NPY_FLOAT or not cnp.PyArray_ISNOTSWAPPED(a)
            or not cnp.PyArray_ISALIGNED(a) or cnp.PyArray_NDIM(a) != 2
            or cnp.PyArray_DIM(a, 0) != rows or cnp.PyArray_DIM(a, 1) != n
            or cnp.PyArray_STRIDE(a, 1) != 4 or (rows > 1 and cnp.PyArray_STRIDE(a, 0) % 4)):
        raise ValueError(f"lstm_gates kernel: aligned float32 arrays of shape ({rows}, {n}) "
                         f"with contiguous rows only, got {array.dtype} {array.shape}")
    ld[0] = cnp.PyArray_STRIDE(a, 0) // 4 if rows > 1 else n     # (one row: never read)
    return <const float *>cnp.PyArray_DATA(a)


cdef struct _Gates:
    const float *i
    const float *f
    const float *g
    const float *o
    const float *cx
    Py_ssize_t ld        # the four gates' row stride, in floats
    Py_ssize_t ld_cx


cdef int _gates(_Gates *v, i, f, g, o, cx, Py_ssize_t rows, Py_ssize_t n) except -1:
    """The memory and row strides of one step's four gates and cell."""
    cdef Py_ssize_t ld_f, ld_g, ld_o
    v.i = _gate_rows(i, rows, n, &v.ld)
    v.f = _gate_rows(f, rows, n, &ld_f)
    v.g = _gate_rows(g, rows, n, &ld_g)
    v.o = _gate_rows(o, rows, n, &ld_o)
    v.cx = _gate_rows(cx, rows, n, &v.ld_cx)
    if not v.ld == ld_f == ld_g == ld_o:
        raise ValueError("lstm_gates kernel: the four gates must be one row stride apart")
    return 0


def lstm_gates(i, f, g, o, cx):
    """One LSTM step's pointwise part from float32 (B, H) gate pre-activations
    and cell (``lstm_gates_takes`` true of ``(i, f, g, o, cx)``): ``(h, c)``,
    new C-contiguous arrays."""
    cdef Py_ssize_t rows = i.shape[0], n = i.shape[1]
    h = np.empty((rows, n), np.float32)
    c = np.empty((rows, n), np.float32)
    if rows == 0 or n == 0:
        return h, c
    cdef _Gates v
    _gates(&v, i, f, g, o, cx, rows, n)
    cdef float *vh = <float *>_data(h, cnp.NPY_FLOAT, True, "lstm_gates")
    cdef float *vcell = <float *>_data(c, cnp.NPY_FLOAT, True, "lstm_gates")
    with nogil:
        oxmera_lstm_gates_float32(v.i, v.f, v.g, v.o, v.ld, v.cx, v.ld_cx, vh, vcell, rows, n)
    return h, c


def lstm_gates_backward(grad_h, grad_c, i, f, g, o, cx):
    """The VJP of ``lstm_gates`` (``lstm_gates_takes`` true of all seven
    arrays): the five gradients ``(i, f, g, o, cx)``, C-contiguous (B, H)
    slices of one new array."""
    grad_h = np.ascontiguousarray(grad_h)
    grad_c = np.ascontiguousarray(grad_c)
    cdef Py_ssize_t rows = i.shape[0], n = i.shape[1]
    out = np.empty((5, rows, n), np.float32)
    if rows == 0 or n == 0:
        return tuple(out)
    cdef Py_ssize_t ld_gh, ld_gc
    cdef const float *vgh = _gate_rows(grad_h, rows, n, &ld_gh)
    cdef const float *vgc = _gate_rows(grad_c, rows, n, &ld_gc)
    cdef _Gates v
    _gates(&v, i, f, g, o, cx, rows, n)
    if ld_gh != n or ld_gc != n:
        raise ValueError("lstm_gates kernel: the gradients must be C-contiguous")
    cdef float *vout = <float *>_data(out, cnp.NPY_FLOAT, True, "lstm_gates")
    with nogil:
        oxmera_lstm_gates_backward_float32(vgh, vgc, v.i, v.f, v.g, v.o, v.ld, v.cx, v.ld_cx,
                                           vout, rows, n)
    return tuple(out)


# -- convolution and max pooling (the C is in _conv_kernels.h) -------------------------

cimport numpy as cnp

cnp.import_array()

cdef extern from "_conv_kernels.h" nogil:
    ctypedef struct oxmera_conv_geometry:
        Py_ssize_t n, c
        Py_ssize_t size[3]
        Py_ssize_t in_stride[5]
        Py_ssize_t kernel[3]
        Py_ssize_t out[3]
        Py_ssize_t stride[3]
        Py_ssize_t pad[3]
        Py_ssize_t dilation[3]
        Py_ssize_t col_n, col_row
    int oxmera_im2col_uint16_t(const void *x, void *cols, const oxmera_conv_geometry *g)
    int oxmera_im2col_uint32_t(const void *x, void *cols, const oxmera_conv_geometry *g)
    int oxmera_im2col_uint64_t(const void *x, void *cols, const oxmera_conv_geometry *g)
    int oxmera_col2im_float(const float *cols, float *out, const oxmera_conv_geometry *g)
    int oxmera_col2im_double(const double *cols, double *out, const oxmera_conv_geometry *g)
    int oxmera_rows_apply(const oxmera_conv_geometry *g)
    int oxmera_max_pool2d_float(
        const float *x, float *values, cnp.int64_t *indices,
        Py_ssize_t n, Py_ssize_t c, Py_ssize_t h, Py_ssize_t w,
        const Py_ssize_t *in_stride, const Py_ssize_t *kernel, const Py_ssize_t *out,
        const Py_ssize_t *stride, const Py_ssize_t *pad, const Py_ssize_t *dilation)
    int oxmera_max_pool2d_double(
        const double *x, double *values, cnp.int64_t *indices,
        Py_ssize_t n, Py_ssize_t c, Py_ssize_t h, Py_ssize_t w,
        const Py_ssize_t *in_stride, const Py_ssize_t *kernel, const Py_ssize_t *out,
        const Py_ssize_t *stride, const Py_ssize_t *pad, const Py_ssize_t *dilation)
    void oxmera_plane_scatter_float(const float *grad, const cnp.int64_t *indices, float *out,
                                    Py_ssize_t planes, Py_ssize_t outputs, Py_ssize_t plane_size)
    void oxmera_plane_scatter_double(const double *grad, const cnp.int64_t *indices,
                                     double *out, Py_ssize_t planes, Py_ssize_t outputs,
                                     Py_ssize_t plane_size)


cdef void _geometry(oxmera_conv_geometry *g, x, tuple spatial, tuple kernel,
                    tuple out, tuple stride, tuple pad, tuple dilation, bint batch_layout) except *:
    """Fill ``g`` for ``x`` (N, C, *spatial) and 1 to 3 spatial dims (the missing leading
    ones are 1); element strides from x's byte strides."""
    cdef int nd = len(kernel), i, skip = 3 - len(kernel)
    if not (1 <= nd <= 3 and len(spatial) == len(out) == len(stride) == len(pad)
            == len(dilation) == nd and x.ndim == nd + 2):
        raise ValueError(f"conv kernel: {nd}-D geometry for an array of shape {x.shape}")
    cdef Py_ssize_t itemsize = x.itemsize
    g.n, g.c = x.shape[0], x.shape[1]
    for i in range(3):
        g.size[i] = g.kernel[i] = g.out[i] = g.stride[i] = g.dilation[i] = 1
        g.pad[i] = 0
    for i in range(5):
        g.in_stride[i] = 0
    g.in_stride[0] = x.strides[0] // itemsize
    g.in_stride[1] = x.strides[1] // itemsize
    for i in range(nd):
        g.size[skip + i] = spatial[i]
        g.in_stride[2 + skip + i] = x.strides[2 + i] // itemsize
        g.kernel[skip + i] = kernel[i]
        g.out[skip + i] = out[i]
        g.stride[skip + i] = stride[i]
        g.pad[skip + i] = pad[i]
        g.dilation[skip + i] = dilation[i]
    cdef Py_ssize_t positions = g.out[0] * g.out[1] * g.out[2]
    cdef Py_ssize_t rows = g.c * g.kernel[0] * g.kernel[1] * g.kernel[2]
    if batch_layout:
        g.col_n, g.col_row = positions, g.n * positions
    else:
        g.col_n, g.col_row = rows * positions, positions


def _is_aligned(x):
    return x.flags.aligned and not any(s % x.itemsize for s in x.strides)


def _check_aligned(x, str what):
    if not _is_aligned(x):
        raise ValueError(f"conv kernel: {what} is not aligned to its items")


def im2col(x, tuple kernel, tuple out, tuple stride, tuple pad, tuple dilation,
           bint batch_layout, bint rows_only=False):
    """The column matrix of ``x`` (N, C, *spatial), 1 to 3 spatial dims, any strides, any
    dtype of 2, 4 or 8 bytes (a copy: zero bits read as 0): ``(C*K, N*P)`` in the batch
    layout, else ``(N, C*K, P)`` (K the kernel's size, P the output's). ``pad`` is the
    padding before each dim (negative crops); ``out`` the output size. ``rows_only``:
    None instead of the table pass when the row pass does not apply (the caller has a
    faster way; ``oxmera_rows_apply`` in ``_conv_kernels.h`` is the one rule)."""
    a = np.asarray(x)
    if a.dtype.hasobject or a.itemsize not in (2, 4, 8):
        raise TypeError(f"im2col kernel: items of 2, 4 or 8 bytes only, got {a.dtype}")
    if not _is_aligned(a):
        a = a.copy()
    cdef oxmera_conv_geometry g
    _geometry(&g, a, a.shape[2:], kernel, out, stride, pad, dilation, batch_layout)
    if rows_only and not oxmera_rows_apply(&g):
        return None
    cdef Py_ssize_t positions = g.out[0] * g.out[1] * g.out[2]
    cdef Py_ssize_t rows = g.c * g.kernel[0] * g.kernel[1] * g.kernel[2]
    if batch_layout:
        shape = (rows, g.n * positions)
    else:
        shape = (g.n, rows, positions)
    cols = np.empty(shape, a.dtype)
    cdef const void *src = cnp.PyArray_DATA(<cnp.ndarray>a)
    cdef void *dst = cnp.PyArray_DATA(<cnp.ndarray>cols)
    cdef Py_ssize_t itemsize = a.itemsize
    if cols.size == 0:
        return cols
    cdef int status
    with nogil:
        if itemsize == 2:
            status = oxmera_im2col_uint16_t(src, dst, &g)
        elif itemsize == 4:
            status = oxmera_im2col_uint32_t(src, dst, &g)
        else:
            status = oxmera_im2col_uint64_t(src, dst, &g)
    if status:
        raise MemoryError("im2col kernel: out of memory")
    return cols


def col2im(cols, out, tuple kernel, tuple out_size, tuple stride, tuple pad, tuple dilation,
           bint batch_layout):
    """The adjoint of :func:`im2col`: adds every element of ``cols`` (float32 or float64,
    C-contiguous in the layout given) at its input position of ``out`` (N, C, *spatial),
    an aligned writable array of the same dtype, any strides. Returns ``out``."""
    if type(cols) is not np.ndarray or type(out) is not np.ndarray:
        raise TypeError("col2im kernel: NumPy arrays only")
    if cols.dtype != out.dtype or (cols.dtype != np.float32 and cols.dtype != np.float64):
        raise TypeError(f"col2im kernel: float32 or float64 only, one for both, got "
                        f"{cols.dtype} and {out.dtype}")
    if not cols.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("col2im kernel: the columns must be C-contiguous, out writable")
    _check_aligned(out, "out")
    _check_aligned(cols, "columns")
    cdef oxmera_conv_geometry g
    _geometry(&g, out, out.shape[2:], kernel, out_size, stride, pad, dilation, batch_layout)
    cdef Py_ssize_t rows = g.c * g.kernel[0] * g.kernel[1] * g.kernel[2]
    if cols.size != rows * g.n * g.out[0] * g.out[1] * g.out[2]:
        raise ValueError(f"col2im kernel: columns of shape {cols.shape} for input shape "
                         f"{out.shape} and kernel {kernel}")
    if cols.size == 0:
        return out
    cdef bint single = cols.itemsize == 4
    cdef int status
    with nogil:
        if single:
            status = oxmera_col2im_float(<const float *>cnp.PyArray_DATA(<cnp.ndarray>cols),
                                         <float *>cnp.PyArray_DATA(<cnp.ndarray>out), &g)
        else:
            status = oxmera_col2im_double(<const double *>cnp.PyArray_DATA(<cnp.ndarray>cols),
                                          <double *>cnp.PyArray_DATA(<cnp.ndarray>out), &g)
    if status:
        raise MemoryError("col2im kernel: out of memory")
    return out


def max_pool2d(x, tuple kernel, tuple out, tuple stride, tuple pad, tuple dilation):
    """2-D max pooling of float32/float64 ``x`` (N, C, H, W), any strides: ``(values,
    indices)``, C-contiguous (N, C, *out), the indices int64 and flat in each (H, W)
    plane. ``pad`` is the padding before (top, left); every window must hold an element
    of the input (the caller checks)."""
    a = np.asarray(x)
    if (a.dtype != np.float32 and a.dtype != np.float64) or a.ndim != 4:
        raise TypeError(f"max_pool2d kernel: 4-D float32 or float64 only, got {a.dtype} "
                        f"of shape {a.shape}")
    if not _is_aligned(a):
        a = a.copy()
    cdef Py_ssize_t strides[4]
    cdef Py_ssize_t k[2]
    cdef Py_ssize_t o[2]
    cdef Py_ssize_t s[2]
    cdef Py_ssize_t p[2]
    cdef Py_ssize_t d[2]
    cdef int i
    for i in range(4):
        strides[i] = a.strides[i] // a.itemsize
    for i in range(2):
        k[i], o[i], s[i], p[i], d[i] = kernel[i], out[i], stride[i], pad[i], dilation[i]
    shape = (a.shape[0], a.shape[1], o[0], o[1])
    values = np.empty(shape, a.dtype)
    indices = np.empty(shape, np.int64)
    cdef Py_ssize_t n = a.shape[0], c = a.shape[1], h = a.shape[2], w = a.shape[3]
    if values.size == 0:
        return values, indices
    cdef bint single = a.itemsize == 4
    cdef int status
    with nogil:
        if single:
            status = oxmera_max_pool2d_float(
                <const float *>cnp.PyArray_DATA(<cnp.ndarray>a),
                <float *>cnp.PyArray_DATA(<cnp.ndarray>values),
                <cnp.int64_t *>cnp.PyArray_DATA(<cnp.ndarray>indices),
                n, c, h, w, strides, k, o, s, p, d)
        else:
            status = oxmera_max_pool2d_double(
                <const double *>cnp.PyArray_DATA(<cnp.ndarray>a),
                <double *>cnp.PyArray_DATA(<cnp.ndarray>values),
                <cnp.int64_t *>cnp.PyArray_DATA(<cnp.ndarray>indices),
                n, c, h, w, strides, k, o, s, p, d)
    if status:
        raise MemoryError("max_pool2d kernel: out of memory")
    return values, indices


def plane_scatter(grad, indices, Py_ssize_t planes, Py_ssize_t plane_size):
    """``out[p, indices[p, o]] += grad[p, o]`` into zeros of ``(planes, plane_size)``:
    float32/float64 ``grad`` and int64 ``indices`` of ``planes * outputs`` elements,
    every index in ``[0, plane_size)`` (the caller checks)."""
    g = np.ascontiguousarray(grad)
    idx = np.ascontiguousarray(indices, np.int64)
    if g.dtype != np.float32 and g.dtype != np.float64:
        raise TypeError(f"plane_scatter kernel: float32 or float64 only, got {g.dtype}")
    if g.size != idx.size or (planes and g.size % planes):
        raise ValueError(f"plane_scatter kernel: {g.size} gradients, {idx.size} indices, "
                         f"{planes} planes")
    out = np.zeros((planes, plane_size), g.dtype)
    cdef Py_ssize_t outputs = g.size // planes if planes else 0
    if g.size == 0:
        return out
    cdef bint single = g.itemsize == 4
    with nogil:
        if single:
            oxmera_plane_scatter_float(<const float *>cnp.PyArray_DATA(<cnp.ndarray>g),
                                       <const cnp.int64_t *>cnp.PyArray_DATA(<cnp.ndarray>idx),
                                       <float *>cnp.PyArray_DATA(<cnp.ndarray>out), planes, outputs,
                                       plane_size)
        else:
            oxmera_plane_scatter_double(
                <const double *>cnp.PyArray_DATA(<cnp.ndarray>g),
                <const cnp.int64_t *>cnp.PyArray_DATA(<cnp.ndarray>idx),
                <double *>cnp.PyArray_DATA(<cnp.ndarray>out), planes, outputs, plane_size)
    return out


def take_targets(values, target):
    """``values[arange(N), target]`` for a C-contiguous float32 or float64 (N, C)
    ``values`` and int64 (N,) ``target``: a new (N,) array of the same dtype; None
    for other arrays, or when a target is outside ``[0, C)`` (NumPy's fancy
    index then, which raises its IndexError).

    NumPy's fancy index builds an index array and an iterator each call, more
    work than picking a batch of log-probabilities (nll_loss, cross_entropy).
    """
    cdef cnp.ndarray v, t
    if not (cnp.PyArray_Check(values) and cnp.PyArray_Check(target)):
        return None
    v, t = <cnp.ndarray>values, <cnp.ndarray>target
    cdef int typenum = cnp.PyArray_TYPE(v)
    if ((typenum != cnp.NPY_FLOAT and typenum != cnp.NPY_DOUBLE) or cnp.PyArray_NDIM(v) != 2
            or not cnp.PyArray_IS_C_CONTIGUOUS(v) or not cnp.PyArray_ISNOTSWAPPED(v)
            or not cnp.PyArray_ISALIGNED(v) or cnp.PyArray_TYPE(t) != cnp.NPY_INT64
            or cnp.PyArray_NDIM(t) != 1 or cnp.PyArray_DIM(t, 0) != cnp.PyArray_DIM(v, 0)
            or not cnp.PyArray_ISNOTSWAPPED(t)):
        return None
    t = cnp.PyArray_GETCONTIGUOUS(t)
    if not cnp.PyArray_ISALIGNED(t):
        return None
    cdef Py_ssize_t r, rows = cnp.PyArray_DIM(v, 0), n = cnp.PyArray_DIM(v, 1)
    cdef cnp.int64_t k
    cdef const cnp.int64_t *tp = <const cnp.int64_t *>cnp.PyArray_DATA(t)
    out = cnp.PyArray_EMPTY(1, cnp.PyArray_DIMS(v), typenum, 0)
    cdef char *src = <char *>cnp.PyArray_DATA(v)
    cdef char *dst = <char *>cnp.PyArray_DATA(<cnp.ndarray>out)
    cdef bint inside = True
    with nogil:
        for r in range(rows):
            k = tp[r]
            if k < 0 or k >= n:
                inside = False
                break
            if typenum == cnp.NPY_FLOAT:
                (<float *>dst)[r] = (<const float *>src)[r * n + k]
            else:
                (<double *>dst)[r] = (<const double *>src)[r * n + k]
    return out if inside else None


def class_targets_valid(index, Py_ssize_t classes, ignore_index):
    """Whether every entry of the int64 array ``index`` is a class in ``[0, classes)``
    and none equals ``ignore_index``; None when ``index`` is not a native int64
    array (the caller checks with NumPy then).

    One pass in C: NumPy's two reductions for the range cost ~4 us on a batch
    of targets, more than the rest of a small classifier's loss.
    """
    cdef cnp.ndarray a
    if not cnp.PyArray_Check(index):
        return None
    a = <cnp.ndarray>index
    if cnp.PyArray_TYPE(a) != cnp.NPY_INT64 or not cnp.PyArray_ISNOTSWAPPED(a):
        return None
    a = cnp.PyArray_GETCONTIGUOUS(a)
    if not cnp.PyArray_ISALIGNED(a):
        return None
    cdef const cnp.int64_t *t = <const cnp.int64_t *>cnp.PyArray_DATA(a)
    cdef Py_ssize_t i, n = cnp.PyArray_SIZE(a)
    cdef cnp.int64_t ignored = -1
    cdef bint check_ignored = False, valid = True
    if not isinstance(ignore_index, (int, np.integer)):
        return None
    if 0 <= ignore_index < classes:
        ignored, check_ignored = int(ignore_index), True
    with nogil:
        for i in range(n):
            if t[i] < 0 or t[i] >= classes or (check_ignored and t[i] == ignored):
                valid = False
                break
    return valid


cpdef bint float_pair(a, b):
    """Whether ``a`` and ``b`` are what the one-pass kernels (``scaled_update``,
    ``relu_backward``) take: ndarrays of one native float32 or float64 dtype and
    one shape, both C-contiguous and aligned (callers take NumPy's path otherwise).

    Read from the array structs: it runs before every optimizer update and
    relu VJP, where building ``a.dtype``, ``a.shape`` and ``a.flags`` cost
    more than a small array's arithmetic.
    """
    cdef cnp.ndarray x, y
    cdef int num, nd
    if not (cnp.PyArray_Check(a) and cnp.PyArray_Check(b)):
        return False
    x, y = <cnp.ndarray>a, <cnp.ndarray>b
    num = cnp.PyArray_TYPE(x)
    if num != cnp.PyArray_TYPE(y) or (num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE):
        return False
    nd = cnp.PyArray_NDIM(x)
    return (cnp.PyArray_ISNOTSWAPPED(x) and cnp.PyArray_ISNOTSWAPPED(y)
            and nd == cnp.PyArray_NDIM(y)
            and memcmp(cnp.PyArray_DIMS(x), cnp.PyArray_DIMS(y), nd * sizeof(cnp.npy_intp)) == 0
            and cnp.PyArray_IS_C_CONTIGUOUS(x) and cnp.PyArray_IS_C_CONTIGUOUS(y)
            and cnp.PyArray_ISALIGNED(x) and cnp.PyArray_ISALIGNED(y))


cpdef bint contiguous_overlap(a, b) except -1:
    """Whether C-contiguous arrays ``a`` and ``b`` share memory: their byte ranges
    meet (exact for contiguous arrays; ``np.may_share_memory`` costs ~0.7 us)."""
    cdef cnp.ndarray x = a, y = b
    if not (cnp.PyArray_IS_C_CONTIGUOUS(x) and cnp.PyArray_IS_C_CONTIGUOUS(y)):
        raise ValueError("contiguous_overlap: C-contiguous arrays only")
    cdef char* x0 = <char*>cnp.PyArray_DATA(x)
    cdef char* y0 = <char*>cnp.PyArray_DATA(y)
    if cnp.PyArray_NBYTES(x) == 0 or cnp.PyArray_NBYTES(y) == 0:
        return False
    return x0 < y0 + cnp.PyArray_NBYTES(y) and y0 < x0 + cnp.PyArray_NBYTES(x)


cdef int _check_float_pair(a, b, str what) except -1:
    # float_pair, or the error that says which part fails.
    if float_pair(a, b):
        return 0
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        raise TypeError(f"{what} kernel: ndarrays only")
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64) or not a.dtype.isnative:
        raise TypeError(f"{what} kernel: float32 or float64 arrays of one dtype, got "
                        f"{a.dtype} and {b.dtype}")
    if a.shape != b.shape:
        raise ValueError(f"{what} kernel: one shape for both, got {a.shape} and {b.shape}")
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        raise ValueError(f"{what} kernel: C-contiguous arrays only")
    raise ValueError(f"{what} kernel: aligned arrays only")


def scaled_update(target, value, alpha, bint subtract):
    """``target -= value * alpha`` (``+=`` when not ``subtract``) in place, in one pass,
    if the arguments are the kernel's; whether it was (False: nothing written).

    The kernel's: ``target`` and ``value`` C-contiguous aligned native arrays
    of one shape and one dtype, float32 or float64 (``float_pair``), not
    overlapping, ``target`` writeable; ``alpha`` a Python int or float (not a
    bool or an array), rounded to that dtype. Each element is rounded as
    NumPy's ``multiply`` then ``subtract`` round it (the product, then the
    sum), without the temporary. Refusing rather than raising lets the caller
    (``oxmera.ops.inplace``) make one call on its hot path and take NumPy's
    path, with NumPy's errors, otherwise.
    """
    if not (type(alpha) is float or type(alpha) is int) or not float_pair(target, value):
        return False
    if not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>target) or contiguous_overlap(target, value):
        return False
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>target)
    cdef void *t = cnp.PyArray_DATA(<cnp.ndarray>target)
    cdef const void *v = cnp.PyArray_DATA(<cnp.ndarray>value)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>target)
    cdef double a64 = float(alpha)
    cdef float a32 = <float>a64
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            oxmera_scaled_update_float32(<float *>t, <const float *>v, a32, subtract, n)
        else:
            oxmera_scaled_update_float64(<double *>t, <const double *>v, a64, subtract, n)
    return True


def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, double weight,
                double beta2, double bias_correction2_sqrt, double eps, double step_size):
    """One Adam step in place, in one pass, if the arrays are the kernel's; whether it was.

    ``param``, ``exp_avg``, ``exp_avg_sq`` (and ``max_exp_avg_sq`` for AMSGrad,
    else None) are updated from ``grad`` as ``optim.Adam``'s NumPy sequence
    updates them, bit for bit: the first moment's lerp with ``weight`` (1 -
    beta1), the second moment, AMSGrad's maximum, then
    ``param += -step_size * exp_avg / (sqrt(v) / bias_correction2_sqrt + eps)``,
    each number rounded to the arrays' dtype as NumPy rounds it. The kernel's
    arrays: one shape, one float32 or float64 dtype, C-contiguous, aligned,
    the updated ones writable, no two overlapping. Otherwise nothing is done
    and the result is False (the caller takes NumPy's path).
    """
    arrays = (param, grad, exp_avg, exp_avg_sq) + (
        () if max_exp_avg_sq is None else (max_exp_avg_sq,))
    cdef Py_ssize_t i, j
    for i in range(1, len(arrays)):
        if not float_pair(param, arrays[i]):
            return False
    for i in range(len(arrays)):
        if i != 1 and not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>arrays[i]):
            return False
        for j in range(i):
            if contiguous_overlap(arrays[i], arrays[j]):
                return False
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>param)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>param)
    cdef void *p = cnp.PyArray_DATA(<cnp.ndarray>param)
    cdef void *g = cnp.PyArray_DATA(<cnp.ndarray>grad)
    cdef void *m = cnp.PyArray_DATA(<cnp.ndarray>exp_avg)
    cdef void *v = cnp.PyArray_DATA(<cnp.ndarray>exp_avg_sq)
    cdef void *mx = (NULL if max_exp_avg_sq is None
                     else cnp.PyArray_DATA(<cnp.ndarray>max_exp_avg_sq))
    # NumPy's two forms of the lerp (optim.optimizer._lerp_): w (g - m) for
    # |w| < 0.5, else (g - m) (1 - w); the numbers as Python computes them.
    cdef bint big = not abs(weight) < 0.5
    cdef double lerp = 1 - weight if big else weight
    cdef double one_minus_beta2 = 1 - beta2
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            oxmera_adam_update_float32(<float *>p, <const float *>g, <float *>m, <float *>v,
                                       <float *>mx, <float>lerp, big, <float>beta2,
                                       <float>one_minus_beta2, <float>bias_correction2_sqrt,
                                       <float>eps, <float>(-step_size), n)
        else:
            oxmera_adam_update_float64(<double *>p, <const double *>g, <double *>m,
                                       <double *>v, <double *>mx, lerp, big, beta2,
                                       one_minus_beta2, bias_correction2_sqrt, eps, -step_size,
                                       n)
    return True


ctypedef void (*_from_output_f32)(const float *, const float *, float *,
                                  Py_ssize_t) noexcept nogil
ctypedef void (*_from_output_f64)(const double *, const double *, double *,
                                  Py_ssize_t) noexcept nogil


cdef object _from_output(grad, output, str what, _from_output_f32 f32, _from_output_f64 f64):
    # An activation's VJP from its output, one pass over C-contiguous float32
    # or float64 arrays of one shape and dtype: a new array.
    _check_float_pair(grad, output, what)
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>grad)
    out = _empty_like(grad, typenum)
    cdef const void *g = _data(grad, typenum, False, what)
    cdef const void *y = _data(output, typenum, False, what)
    cdef void *o = _data(out, typenum, True, what)
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>grad)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            f32(<const float *>g, <const float *>y, <float *>o, n)
        else:
            f64(<const double *>g, <const double *>y, <double *>o, n)
    return out


cpdef bint float_dense(x):
    """Whether :func:`relu` computes ``x``: a native, aligned float32 or float64
    ndarray whose elements fill its memory with no gaps, in any axis order
    and positive strides (C- or F-contiguous, or a permutation of such an
    array: a channels-last batch seen as NCHW).

    Read from the array struct, as :func:`float_pair`.
    """
    cdef cnp.ndarray a
    cdef int num, nd, k, j
    cdef cnp.npy_intp expected, stride, best
    cdef cnp.npy_intp strides[32]
    cdef cnp.npy_intp dims[32]
    cdef int used[32]
    if not cnp.PyArray_Check(x):
        return False
    a = <cnp.ndarray>x
    num = cnp.PyArray_TYPE(a)
    if ((num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE) or not cnp.PyArray_ISNOTSWAPPED(a)
            or not cnp.PyArray_ISALIGNED(a)):
        return False
    if cnp.PyArray_IS_C_CONTIGUOUS(a) or cnp.PyArray_IS_F_CONTIGUOUS(a):
        return True
    # Dense in another order: walk the dims of more than one element from the
    # smallest stride up; each must step over exactly the ones before it.
    nd = 0
    for k in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_DIM(a, k) > 1:
            if nd == 32:
                return False
            strides[nd] = cnp.PyArray_STRIDE(a, k)
            dims[nd] = cnp.PyArray_DIM(a, k)
            used[nd] = 0
            nd += 1
    expected = cnp.PyArray_ITEMSIZE(a)
    for _ in range(nd):
        best = -1
        for j in range(nd):
            if not used[j] and (best < 0 or strides[j] < strides[best]):
                best = j
        stride = strides[best]
        if stride != expected:
            return False
        used[best] = 1
        expected *= dims[best]
    return True


def relu(x):
    """relu of a float32 or float64 array whose memory is dense (see
    :func:`float_dense`): a new array of ``x``'s strides, 0 where ``x < 0``,
    else ``x`` itself (nan and -0.0 kept, as PyTorch's relu); None for any
    other ``x`` (the caller takes another path: one test, here).

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._core import _kernels
    >>> _kernels.relu(np.array([-1.0, 2.0, np.nan]))
    array([ 0.,  2., nan])
    """
    return _dense_pass(x, oxmera_relu_float32, oxmera_relu_float64)


cdef object _dense_pass(x, _unary_f32 f32, _unary_f64 f64):
    # An elementwise kernel over the memory of a float32/float64 array whose
    # elements fill it in any order (float_dense), into a new array of x's very
    # strides (dense and positive, so size * itemsize bytes from offset 0 hold
    # it): one pass, x's layout kept. None for any other x.
    if not float_dense(x):
        return None
    cdef cnp.ndarray a = <cnp.ndarray>x
    cdef int typenum = cnp.PyArray_TYPE(a)
    out = cnp.PyArray_New(np.ndarray, cnp.PyArray_NDIM(a), cnp.PyArray_DIMS(a), typenum,
                          cnp.PyArray_STRIDES(a), NULL, 0, 0, None)
    return _unary_pass(a, out, typenum, f32, f64)


def sigmoid(x):
    """sigmoid of a float32 or float64 array whose memory is dense (see
    :func:`float_dense`), one exponential an element (see ``_kernels.h``): a
    new array of ``x``'s strides; None for any other ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._core import _kernels
    >>> _kernels.sigmoid(np.array([0.0, -np.inf, np.inf, np.nan]))
    array([0.5, 0. , 1. , nan])
    """
    return _dense_pass(x, oxmera_sigmoid_float32, oxmera_sigmoid_float64)


def relu_backward(grad, output):
    """relu's VJP, 0 where ``output <= 0``, else ``grad`` (PyTorch's: a nan output
    passes ``grad`` on), of C-contiguous float32 or float64 arrays of one shape
    and dtype, in one pass: a new array."""
    return _from_output(grad, output, "relu_backward", oxmera_relu_backward_float32,
                        oxmera_relu_backward_float64)


def tanh_backward(grad, output):
    """tanh's VJP ``grad * (1 - output * output)`` in one pass (arrays as for
    :func:`relu_backward`), each operation rounded as NumPy's ufuncs round it."""
    return _from_output(grad, output, "tanh_backward", oxmera_tanh_backward_float32,
                        oxmera_tanh_backward_float64)


def sigmoid_backward(grad, output):
    """sigmoid's VJP ``grad * output * (1 - output)`` in one pass (arrays as for
    :func:`relu_backward`), each operation rounded as NumPy's ufuncs round it."""
    return _from_output(grad, output, "sigmoid_backward", oxmera_sigmoid_backward_float32,
                        oxmera_sigmoid_backward_float64)


def mul_pair(factor, a, b):
    """``(factor * a, factor * b)`` in one pass, ``factor`` read once: C-contiguous
    float32 or float64 arrays of one shape and dtype (:func:`float_pair` of
    ``factor`` with each), two new arrays; each product NumPy's bits.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._core import _kernels
    >>> _kernels.mul_pair(np.array([2.0, 3.0]), np.array([1.0, 2.0]), np.array([4.0, 5.0]))
    (array([2., 6.]), array([ 8., 15.]))
    """
    _check_float_pair(factor, a, "mul_pair")
    _check_float_pair(factor, b, "mul_pair")
    cdef int typenum = cnp.PyArray_TYPE(<cnp.ndarray>factor)
    out_a = _empty_like(factor, typenum)
    out_b = _empty_like(factor, typenum)
    cdef const void *f = _data(factor, typenum, False, "mul_pair")
    cdef const void *pa = _data(a, typenum, False, "mul_pair")
    cdef const void *pb = _data(b, typenum, False, "mul_pair")
    cdef void *oa = _data(out_a, typenum, True, "mul_pair")
    cdef void *ob = _data(out_b, typenum, True, "mul_pair")
    cdef Py_ssize_t n = cnp.PyArray_SIZE(<cnp.ndarray>factor)
    with nogil:
        if typenum == cnp.NPY_FLOAT:
            oxmera_mul_pair_float32(<const float *>f, <const float *>pa, <const float *>pb,
                                    <float *>oa, <float *>ob, n)
        else:
            oxmera_mul_pair_float64(<const double *>f, <const double *>pa, <const double *>pb,
                                    <double *>oa, <double *>ob, n)
    return out_a, out_b


# -- exp: NumPy's ufunc with a faster float32 loop -------------------------------------

cdef extern from "_kernels.h" nogil:
    void oxmera_exp_float32_loop(char **args, const Py_ssize_t *dims,
                                 const Py_ssize_t *steps, void *data)

cdef extern from "_ufunc_table.h":
    object oxmera_ufunc_replacing(object base, int typenum,
                                  cnp.PyUFuncGenericFunction loop, const char *name,
                                  const char *doc)

cnp.import_ufunc()

#: ``np.exp`` with the float32 loop of ``_kernels.h`` (within one ulp of the
#: exact value where NumPy 2.4's loop is within 3, and a little faster); every
#: other loop, dtype rule and argument is NumPy's own.
exp = oxmera_ufunc_replacing(
    np.exp, cnp.NPY_FLOAT, <cnp.PyUFuncGenericFunction>oxmera_exp_float32_loop, b"exp",
    b"exp(x, /, out=None, *, where=True, ...)\n\nnumpy.exp, with oxmera's float32 loop "
    b"(evaluated in double, rounded once).")


# -- glibc's malloc thresholds -------------------------------------------------------

cdef extern from *:
    """
    #include <stdlib.h>
    #if defined(__GLIBC__)
    /* glibc serves a request of at least its mmap threshold (128 KiB at start) by
     * mmap, and gives the top of its heap back to the kernel once more than its
     * trim threshold (twice the mmap threshold) lies free there. Freeing an
     * mmapped block larger than the threshold, up to DEFAULT_MMAP_THRESHOLD_MAX
     * (32 MiB on 64-bit), raises the threshold to that block's size: glibc's own
     * rule for programs that work with large blocks. One block of just under the
     * maximum, never touched (no page is faulted in), puts the process where a
     * program that once freed a 32 MiB array already is. */
    static int oxmera_raise_malloc_thresholds(void) {
        size_t largest = (size_t)4 * 1024 * 1024 * sizeof(long);
        void *volatile block = malloc(largest - 2 * 4096);
        if (block == NULL) return 0;
        free(block);
        return 1;
    }
    #else
    static int oxmera_raise_malloc_thresholds(void) { return 0; }
    #endif
    """
    int oxmera_raise_malloc_thresholds() nogil


def raise_malloc_thresholds():
    """Raise glibc's mmap and trim thresholds as freeing a 32 MiB block does; False
    where the C library is not glibc (nothing is done).

    Why: a training step allocates gradients and temporaries of a few MiB and frees
    them at its end. At glibc's starting thresholds each such array is a fresh
    ``mmap`` (every page faulted in, then unmapped), or the heap top they leave
    free is handed back to the kernel and faulted in again next step: measured,
    a fresh process spent 1.4–2.8 ms a step in the kernel on 512² matmuls (12 ms)
    and 22 ms on a 26 ms convolution step. With the thresholds raised, arrays
    under 32 MiB are served from the heap, and up to 64 MiB of free heap top is
    kept for the next step instead of being returned.
    """
    return bool(oxmera_raise_malloc_thresholds())
