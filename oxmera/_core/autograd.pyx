# cython: language_level=3
"""The compiled core of oxmera: tensors, the tape, grad mode and the backward engine.

What lives here
    ``Tensor`` (wraps one ``numpy.ndarray``), ``AutogradMeta`` (what a tensor
    that takes part in autograd carries), ``GradFn`` (one node of the tape),
    ``VersionCounter``, ``OpDef`` (the record describing an op), the
    per-thread recording flag, ``apply_op`` (runs an op's forward and
    records its node) and ``run_backward`` (the engine).

What does not
    No op. The core calls an op's forward and VJP through the OpDef it is
    handed (built by ``oxmera.extend.op``), and the few ops the engine
    itself needs (summing a broadcast gradient back, casting, adding) are
    handed to it by ``oxmera.ops`` through :func:`set_engine_ops`. Tensor
    methods and operators are installed by ``oxmera.ops`` as well
    (:func:`install_tensor_attributes`).
"""

cimport cython
from cpython.object cimport (PyObject, PyObject_TypeCheck, PyTypeObject, destructor, inquiry,
                             traverseproc, visitproc)
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow, PyLong_FromVoidPtr
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.string cimport memcmp, memcpy, memset
from cpython.ref cimport Py_DECREF, Py_INCREF, Py_REFCNT
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_New, PyTuple_SET_ITEM
from cpython.bytes cimport PyBytes_AS_STRING

import collections
import collections.abc
import copyreg
import dis
import gc
import itertools
import operator
import sys
import threading
import traceback
import warnings
import weakref

import numpy as np
cimport numpy as cnp

cnp.import_array()

# For the collector's view of owned containers (see _tensor_traverse).
cdef extern from *:
    """
    typedef traverseproc oxm_traverse;
    static int oxm_visit(PyObject *o, visitproc visit, void *arg) { Py_VISIT(o); return 0; }
    static int oxm_visit_owned_tuple(PyObject *t, visitproc visit, void *arg) {
        Py_ssize_t i;
        if (!PyTuple_CheckExact(t) || PyObject_GC_IsTracked(t)) return 0;
        for (i = 0; i < PyTuple_GET_SIZE(t); i++) Py_VISIT(PyTuple_GET_ITEM(t, i));
        return 0;
    }
    /* The trashcan for a replaced tp_dealloc (self): CPython's applies only
       while tp_dealloc is the function that opened it, so the generated one
       (base) no longer does. Without it, freeing a chain of nodes that hold
       one another directly recurses once per node. */
    static void oxm_trashcan_dealloc(PyObject *o, destructor self, destructor base) {
        PyObject_GC_UnTrack(o);
        Py_TRASHCAN_BEGIN(o, self)
        base(o);
        Py_TRASHCAN_END
    }
    """
    int oxm_visit_owned_tuple(PyObject* t, visitproc visit, void* arg) noexcept
    void oxm_trashcan_dealloc(PyObject* o, destructor self, destructor base) noexcept
    int oxm_visit(PyObject* o, visitproc visit, void* arg) noexcept
    int PyObject_GC_IsTracked(PyObject* op) noexcept
    void PyObject_GC_UnTrack(void* op) noexcept
    void PyObject_GC_Track(void* op) noexcept
    ctypedef int (*oxm_traverse)(PyObject*, visitproc, void*) noexcept

cdef extern from "Python.h":
    ctypedef struct PyFrameObject
    PyFrameObject* PyEval_GetFrame()
    unsigned long Py_TPFLAGS_IMMUTABLETYPE
    void PyType_Modified(PyTypeObject*)

cdef extern from "pythread.h":
    ctypedef void* PyThread_type_lock
    PyThread_type_lock PyThread_allocate_lock()
    int PyThread_acquire_lock(PyThread_type_lock, int) nogil
    void PyThread_release_lock(PyThread_type_lock) nogil
    unsigned long PyThread_get_thread_ident() nogil

cdef extern from *:
    """
    #ifdef OXMERA_NO_ANOMALY
    #define OXMERA_ANOMALY_COMPILED 0
    #else
    #define OXMERA_ANOMALY_COMPILED 1
    #endif
    #ifdef OXMERA_NO_SAVED_LOCKS
    #define OXMERA_LOCKS_COMPILED 0
    #else
    #define OXMERA_LOCKS_COMPILED 1
    #endif
    #ifdef OXMERA_NO_PROFILER
    #define OXMERA_PROFILER_COMPILED 0
    #else
    #define OXMERA_PROFILER_COMPILED 1
    #endif
    """
    # 0 when built with OXMERA_NO_ANOMALY=1: the C compiler then drops every
    # anomaly-mode test, which is how bench/feature_cost.py shows they cost
    # nothing. OXMERA_NO_SAVED_LOCKS=1 likewise drops the read-only saved
    # arrays (mutation safety), to measure what they cost. OXMERA_NO_PROFILER=1
    # drops the profiler's tests (bench/feature_cost.py: their cost when off).
    const bint OXMERA_ANOMALY_COMPILED
    const bint OXMERA_LOCKS_COMPILED
    const bint OXMERA_PROFILER_COMPILED

cdef extern from *:
    """
    /* A tuple subclass instance filled straight from an array's dims: what
       numpy's own ``shape`` getter does for a plain tuple, with one
       allocation (``tuple.__new__(Size, shape)`` would build the tuple
       twice). Sound for a subclass without instance fields (``__slots__ =
       ()``), whose layout is a tuple's. */
    static PyObject* oxmera_size_from_dims(PyObject* type, int nd, npy_intp* dims) {
        PyObject* out = ((PyTypeObject*)type)->tp_alloc((PyTypeObject*)type, nd);
        if (out == NULL) return NULL;
        for (int i = 0; i < nd; i++) {
            PyObject* v = PyLong_FromSsize_t((Py_ssize_t)dims[i]);
            if (v == NULL) { Py_DECREF(out); return NULL; }
            PyTuple_SET_ITEM(out, i, v);
        }
        return out;
    }
    """
    object oxmera_size_from_dims(object type, int nd, cnp.npy_intp* dims)

cdef object ndarray = np.ndarray
cdef object _np_asarray = np.asarray
cdef object _np_empty_like = np.empty_like
cdef object _np_zeros = np.zeros
cdef object _np_add = np.add
cdef object _np_add_reduce = np.add.reduce
cdef object _np_generic = np.generic    # module attribute lookups cost on hot paths


# isinstance(v, ndarray) and isinstance(v, np.generic), in C. Python's isinstance
# against a class object looks ``v.__class__`` up whenever the answer is no
# (~1,000 instructions for a None or a Python number: an op given one paid it
# twice, and releasing a node's saved values once per None among them).
# NumPy's own checks are a type test.
cdef inline bint _is_ndarray(object v) noexcept:
    return PyObject_TypeCheck(v, <PyTypeObject*>ndarray)


cdef inline bint _is_np_scalar(object v) noexcept:
    return PyObject_TypeCheck(v, <PyTypeObject*>_np_generic)


class OpError(ValueError, RuntimeError):
    """An op rejected its arguments: shapes that do not broadcast or multiply,
    a dim out of range, a value outside the op's domain.

    It is both a ``ValueError`` (what NumPy raises for these) and a
    ``RuntimeError`` (what PyTorch raises), so code written for either
    catches it. The message names the op and the shapes involved.

    Examples
    --------
    >>> import oxmera
    >>> try:
    ...     oxmera.ones(2, 3) + oxmera.ones(4)
    ... except oxmera.OpError as err:
    ...     print(isinstance(err, ValueError), isinstance(err, RuntimeError))
    True True
    """


# ---------------------------------------------------------------------------
# Grad mode: the recording flag, one per thread.
# ---------------------------------------------------------------------------

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #define OXMERA_THREAD_LOCAL __declspec(thread)
    #else
    #define OXMERA_THREAD_LOCAL __thread
    #endif
    /* This thread's flag (0: recording), in C: read on every op. Zero
       (recording) in every new thread, whatever another thread set. */
    static OXMERA_THREAD_LOCAL int oxmera_grad_off = 0;
    static inline int oxmera_get_grad_off(void) { return oxmera_grad_off; }
    static inline void oxmera_set_grad_off(int off) { oxmera_grad_off = off; }
    /* The _Tracer watching the VJP this thread runs, or NULL (borrowed: the
       caller of _trace_vjp holds it). */
    static OXMERA_THREAD_LOCAL PyObject* oxmera_tracer = NULL;
    static inline PyObject* oxmera_get_tracer(void) { return oxmera_tracer; }
    static inline void oxmera_set_tracer(PyObject* t) { oxmera_tracer = t; }
    """
    int oxmera_get_grad_off() noexcept nogil
    void oxmera_set_grad_off(int off) noexcept nogil
    PyObject* oxmera_get_tracer() noexcept nogil
    void oxmera_set_tracer(PyObject* t) noexcept nogil


# Threads tracing a VJP now (changed under the GIL): what the hot paths test,
# one load, before the thread-local tracer.
cdef Py_ssize_t _n_tracing = 0


# The flag's values: 0 recording, 1 not; _OFF_IN_BACKWARD: not, and the code
# running is one of oxmera's own VJPs in a backward that records nothing (set
# around that call alone, _call_own_vjp; a nested no_grad() or backward
# inside it leaves 1 behind, which only forgoes _unit_product for its rest).
cdef enum:
    _OFF_IN_BACKWARD = 2


cdef bint grad_enabled() except -1:
    return not oxmera_get_grad_off()


cdef inline void _store_grad_mode(bint mode) noexcept:
    # The one writer of the flag. (A threading.local mirrored it, written at
    # every change and read nowhere: ~600 instructions a write.)
    if _n_tracing:
        _trace_refuse()         # no_grad()/enable_grad() inside a traced VJP (_Tracer)
    oxmera_set_grad_off(not mode)


def is_grad_enabled():
    """Return whether operations on tensors are being recorded in this thread.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.is_grad_enabled()
    True
    """
    return not oxmera_get_grad_off()


def _set_grad_enabled(bint mode):
    """Set this thread's recording flag and return the previous value."""
    prev = not oxmera_get_grad_off()
    _store_grad_mode(mode)
    return prev


@cython.auto_pickle(False)      # (Cython's generated __setstate_cython__ trusts its tuple)
cdef class GradModeContext:
    """Base of the grad-mode context managers (``oxmera.autograd.grad_mode``): entering
    sets this thread's recording flag to the instance's ``mode`` attribute (a class
    attribute of the subclass, or one set on the instance), exiting restores the
    value it replaced.

    An instance may be entered again before it exits (``with ng: with ng:``):
    the values it replaced are a stack, restored in reverse order. In C: every
    ``with no_grad():`` of a training step runs it (four Python frames and a
    list were a microsecond).

    Examples
    --------
    >>> from oxmera._core.autograd import GradModeContext, is_grad_enabled
    >>> class off(GradModeContext):
    ...     mode = False
    >>> with off():
    ...     is_grad_enabled()
    False
    >>> is_grad_enabled()
    True
    """
    # The replaced values: the first 64 as bits of _saved_bits (bit i: level
    # i), deeper ones in _deeper (a list made only then).
    cdef unsigned long long _saved_bits
    cdef Py_ssize_t _depth
    cdef list _deeper

    def __enter__(self):
        cdef bint mode = self.mode
        cdef bint prev = not oxmera_get_grad_off()
        if self._depth < 0:
            raise RuntimeError(f"{type(self).__name__}: a negative nesting depth (a bad state)")
        if self._depth < 64:
            if prev:
                self._saved_bits |= 1ULL << self._depth
            else:
                self._saved_bits &= ~(1ULL << self._depth)
        else:
            if self._deeper is None:
                self._deeper = []
            self._deeper.append(prev)
        self._depth += 1
        _store_grad_mode(mode)
        return None

    def __reduce__(self):
        # A copy (copy, deepcopy, pickle) is the same kind of manager with the
        # same attributes, not entered: as Python copies an object it makes
        # without __init__ (set_grad_enabled's sets the mode as it is made).
        return (copyreg.__newobj__, (type(self),), getattr(self, "__dict__", None))

    def __exit__(self, exc_type, exc, tb):
        cdef bint prev
        # (the depth is checked: an exit without its enter, or more than one)
        if self._depth <= 0 or (self._depth > 64 and not self._deeper):
            raise RuntimeError(f"{type(self).__name__}: __exit__ without a matching __enter__")
        self._depth -= 1
        if self._depth < 64:
            prev = (self._saved_bits >> self._depth) & 1
        else:
            prev = self._deeper.pop()
        _store_grad_mode(prev)
        return False


# ---------------------------------------------------------------------------
# dtypes and conversion of Python data
# ---------------------------------------------------------------------------

# Anomaly mode is process-wide, as in PyTorch (a debugging switch, not a
# per-thread mode). A C global: reading it costs one load.
cdef bint _anomaly_enabled = False
cdef bint _anomaly_check_nan = True


def set_detect_anomaly(bint mode, bint check_nan=True):
    """Turn anomaly detection on or off (see :class:`oxmera.autograd.detect_anomaly`).

    Returns the previous ``(mode, check_nan)`` pair.

    Examples
    --------
    >>> from oxmera._core.autograd import set_detect_anomaly, is_anomaly_enabled
    >>> previous = set_detect_anomaly(True)
    >>> is_anomaly_enabled()
    True
    >>> _ = set_detect_anomaly(*previous)
    """
    global _anomaly_enabled, _anomaly_check_nan
    if mode and not OXMERA_ANOMALY_COMPILED:
        raise RuntimeError("anomaly mode was compiled out of this build (OXMERA_NO_ANOMALY=1)")
    previous = (_anomaly_enabled, _anomaly_check_nan)
    _anomaly_enabled = mode
    _anomaly_check_nan = check_nan
    return previous


def is_anomaly_enabled():
    """Whether anomaly detection is on.

    Examples
    --------
    >>> from oxmera._core.autograd import is_anomaly_enabled
    >>> is_anomaly_enabled()
    False
    """
    return _anomaly_enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly mode checks gradients for NaN/Inf.

    Examples
    --------
    >>> import oxmera
    >>> with oxmera.autograd.detect_anomaly(check_nan=False):
    ...     oxmera.autograd.is_anomaly_check_nan_enabled()
    False
    """
    return _anomaly_check_nan


# How a tensor's repr shows its values, handed over by oxmera._printing (which
# owns the print options, set_printoptions); until then, NumPy's defaults.
cdef object _values_formatter = None

cdef object _default_dtype = np.dtype(np.float32)
cdef object _float64 = np.dtype(np.float64)
cdef object _complex64 = np.dtype(np.complex64)
cdef object _complex128 = np.dtype(np.complex128)
cdef object _int64 = np.dtype(np.int64)
cdef object _bool = np.dtype(np.bool_)
cdef object _abc_sequence = collections.abc.Sequence


def get_default_dtype():
    """Return the dtype Python floats become (``float32`` unless changed).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.get_default_dtype()
    dtype('float32')
    """
    return _default_dtype


def set_default_dtype(dtype):
    """Set the dtype Python floats and float lists become.

    Only floating dtypes are accepted (``TypeError`` otherwise).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.set_default_dtype(oxmera.float64)
    >>> oxmera.tensor([1.5]).dtype
    dtype('float64')
    >>> oxmera.set_default_dtype(oxmera.float32)
    """
    global _default_dtype
    d = np.dtype(dtype)
    if d.kind != "f":
        raise TypeError(f"set_default_dtype: only floating dtypes are allowed, got {d}")
    _default_dtype = d


cdef inline bint _supported_kind(object dtype):
    return dtype.kind in "biufc"


cdef object _default_complex_dtype():
    # PyTorch's default complex dtype follows the default float one
    # (complex64 beside float32, complex128 beside float64; complex64 for
    # float16, as oxmera has no complex32).
    return _complex128 if _default_dtype == _float64 else _complex64


def get_default_complex_dtype():
    """The dtype Python complex numbers become: complex128 when the default float dtype is
    float64, complex64 otherwise (as PyTorch's).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1 + 2j]).dtype
    dtype('complex64')
    """
    return _default_complex_dtype()


cdef object _base_ndarray(object array):
    # Tensors hold base-class ndarrays only: a subclass changes what NumPy's
    # functions compute (np.matrix keeps two dimensions, a MaskedArray skips
    # masked values), so the ops would silently compute something else.
    # np.asarray gives a base-class view sharing the memory (np.memmap too).
    # A MaskedArray is refused: dropping its mask would silently change data.
    # (numpy.ma is not imported for this: no MaskedArray exists until it is.)
    masked = sys.modules.get("numpy.ma")
    if masked is not None and isinstance(array, masked.MaskedArray):
        raise TypeError(
            "oxmera tensors cannot hold a numpy.ma.MaskedArray: dropping its mask would change "
            "the data silently; pass array.filled(fill_value) to fill the masked entries, or "
            "array.data for the raw values")
    return _np_asarray(array)


cdef object _as_storage(object array):
    # Any array-like as what a Tensor holds: a base-class ndarray of a
    # supported dtype (used where arrays arrive without as_array's rules).
    if type(array) is not ndarray:
        if _is_ndarray(array):
            array = _base_ndarray(array)
        else:
            return as_array(array)
    if not _supported_kind(array.dtype):
        raise TypeError(f"unsupported dtype {array.dtype}: oxmera tensors hold bool, integer, "
                        f"floating or complex values")
    return array


cdef bint _leads_to_tensor(object data) except -1:
    # Whether the first leaf of nested lists/tuples is a Tensor or a NumPy
    # scalar: then NumPy's reading differs from PyTorch's (a one-element
    # tensor is a number to PyTorch, a nested array of shape (1,) to NumPy; a
    # float64 scalar keeps its dtype in PyTorch, where NumPy's result would
    # become the default float), so data goes the slow way. Only the first
    # leaf is looked at: the fast way stays fast, and a later tensor that
    # NumPy reads differently makes NumPy fail (ragged).
    while type(data) is list or type(data) is tuple:
        if not data:
            return False
        data = data[0]
    return isinstance(data, Tensor) or _is_np_scalar(data)


cdef bint _is_nested_sequence(object value):
    return (isinstance(value, (list, tuple, range)) or
            (isinstance(value, _abc_sequence) and not isinstance(value, (str, bytes, bytearray)))
            or isinstance(value, collections.deque))


def _nested_array(data, dtype=None):
    """``data`` (nested sequences of numbers, one-element tensors, arrays) as an array, read
    as ``torch.tensor`` reads it.

    Every sequence (list, tuple, deque, range, any ``collections.abc.Sequence``
    but strings) is a dimension; a one-element tensor of any shape is a
    number of its dtype; NumPy arrays and scalars keep theirs. Without
    ``dtype``, the result's is PyTorch's promotion of all the elements'
    (Python floats count as the default float dtype, ints as int64).
    """
    promote = None
    if dtype is None:
        from oxmera.ops._utils import _promote as promote
    inferred = [None]

    def convert(value):
        if isinstance(value, Tensor):
            array = (<Tensor>value)._data
            if array.size != 1:
                raise ValueError(
                    f"tensor(): only one-element tensors can be converted to Python scalars "
                    f"inside a sequence, got one of shape {array.shape} (use oxmera.stack to "
                    f"join tensors)")
            value = array.reshape(())
        if _is_ndarray(value) or _is_np_scalar(value):
            kind = value.dtype
        elif isinstance(value, bool):
            kind = _bool
        elif isinstance(value, int):
            kind = _int64
        elif isinstance(value, float):
            kind = _default_dtype
        elif isinstance(value, complex):
            kind = _default_complex_dtype()
        elif _is_nested_sequence(value):
            return [convert(v) for v in value]
        else:
            raise TypeError(f"could not convert {type(data).__name__} to a tensor: could not "
                            f"infer the dtype of {type(value).__name__}")
        if promote is not None:
            inferred[0] = promote(inferred[0], np.dtype(kind))
        return value

    nested = convert(data)
    target = dtype if dtype is not None else (inferred[0] if inferred[0] is not None
                                              else _default_dtype)
    try:
        return np.array(nested, dtype=target)
    except (ValueError, TypeError) as e:
        raise TypeError(f"could not convert {type(data).__name__} to a tensor: {e}") from None


cdef object _legacy_sizes(tuple args):
    # The sizes of torch.Tensor(2, 3) / Tensor(Size([2, 3])), or None when
    # the arguments are data (bools are data, not sizes).
    if len(args) == 1 and type(args[0]) is _Size:
        return tuple(args[0])
    if not args:
        return None
    for a in args:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            return None
    sizes = tuple(operator.index(a) for a in args)
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Tensor(): Trying to create tensor with negative dimension {s}: "
                               f"{list(sizes)}")
    return sizes


def as_array(data, dtype=None, bint copy=False):
    """Convert ``data`` to a ndarray with oxmera's dtype rules.

    Python floats (and lists holding any) become the default float dtype,
    Python ints ``int64``, bools ``bool``; NumPy arrays and scalars keep their
    dtype; a Tensor gives its array. ``copy=True`` guarantees fresh memory.
    """
    cdef bint fresh = False
    if isinstance(data, Tensor):
        arr = (<Tensor>data)._data
    elif _is_ndarray(data):
        arr = data if type(data) is ndarray else _base_ndarray(data)
    elif _is_np_scalar(data):
        arr = _np_asarray(data)
        fresh = True
    else:
        arr = None
        if not _leads_to_tensor(data):
            try:
                arr = _np_asarray(data)
            except (ValueError, TypeError, RuntimeError):
                # Ragged because of one-element tensors, or a tensor that
                # requires grad (its __array__ refuses): PyTorch's walk below.
                arr = None
            else:
                if arr.dtype.kind == "O":
                    arr = None
        fresh = True
        if arr is None:
            # PyTorch's reading of nested data (torch.tensor): any sequence
            # (tuple, deque, range ...) is a dimension, a one-element tensor is
            # a number, and the dtype is the promotion of every element's.
            arr = _nested_array(data, dtype)
        elif dtype is None:
            kind = arr.dtype.kind
            if kind == "f":
                if arr.dtype is not _default_dtype:
                    arr = arr.astype(_default_dtype)
            elif kind in "iu":
                if arr.dtype is not _int64:
                    arr = arr.astype(_int64)
            elif kind == "c":
                # Python complex numbers: the default complex dtype.
                if arr.dtype != _default_complex_dtype():
                    arr = arr.astype(_default_complex_dtype())
            elif kind != "b":
                raise TypeError(
                    f"could not convert {type(data).__name__} to a tensor: "
                    f"its elements give dtype {arr.dtype}, which oxmera does not support")
    if dtype is not None:
        d = np.dtype(dtype)
        if not _supported_kind(d):
            raise TypeError(f"unsupported dtype {d}: oxmera tensors hold bool, integer, "
                            f"floating or complex values")
        if arr.dtype != d:
            arr = arr.astype(d)
            fresh = True
    elif not _supported_kind(arr.dtype):
        raise TypeError(f"unsupported dtype {arr.dtype}: oxmera tensors hold bool, integer, "
                        f"floating or complex values")
    if copy and not fresh:
        arr = arr.copy()
    return arr


# ---------------------------------------------------------------------------
# Size: what ``Tensor.shape`` and ``Tensor.size()`` return
# ---------------------------------------------------------------------------

class Size(tuple):
    """The shape of a tensor: a tuple of ints with ``numel()``, as ``torch.Size``.

    It equals, hashes and pickles like the plain tuple of its sizes; slicing
    it, adding a tuple to it or repeating it gives a ``Size``. Built from any
    iterable of integers (0-d integer tensors included). Its repr is
    PyTorch's (``oxmera.Size([2, 3])``); its ``str``, as in error messages
    and ``print``, is the tuple's ``(2, 3)``.

    Examples
    --------
    >>> import oxmera
    >>> s = oxmera.zeros(2, 3).shape
    >>> s
    oxmera.Size([2, 3])
    >>> s.numel(), s == (2, 3), s[1:]
    (6, True, oxmera.Size([3]))
    """
    __slots__ = ()      # no instance dict: the core fills instances as plain tuples

    def __new__(cls, sizes=()):
        values = []
        for i, s in enumerate(sizes):
            try:
                values.append(operator.index(s))
            except TypeError:
                raise TypeError(f"oxmera.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')") from None
        return tuple.__new__(cls, values)

    def numel(self):
        """The number of elements a tensor of this shape holds (1 for ``Size([])``)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"oxmera.Size({list(self)!r})"

    # str() (and so print() and f-strings) is the tuple's: error messages
    # throughout oxmera name shapes as "(2, 3)", and a shape in a message
    # reads better so. PyTorch's str is its repr; only the look differs.
    __str__ = tuple.__repr__

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return tuple.__new__(Size, item) if isinstance(key, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        result = tuple.__mul__(self, n)
        return NotImplemented if result is NotImplemented else tuple.__new__(Size, result)

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


Size.__module__ = "oxmera"
cdef object _Size = Size


cdef inline object _size_of(object array):
    # Size(array.shape), built from the dims in one allocation: Tensor.shape
    # is read on hot paths (the core itself reads the array's shape tuple).
    return oxmera_size_from_dims(_Size, cnp.PyArray_NDIM(<cnp.ndarray>array),
                                 cnp.PyArray_DIMS(<cnp.ndarray>array))


# ---------------------------------------------------------------------------
# The three classes (and the version counter they share)
# ---------------------------------------------------------------------------

_NOT_COPYABLE = ("{} objects cannot be copied or pickled: they belong to the graph (or the "
                 "tensor) the engine made them for")


@cython.final
@cython.freelist(64)
@cython.auto_pickle(False)
cdef class VersionCounter:
    """Counts in-place writes to one block of memory; shared by its views."""

    @property
    def value(self):
        return self.value

    def __reduce__(self):
        raise TypeError(_NOT_COPYABLE.format("VersionCounter"))


@cython.final
@cython.freelist(256)
# Not a container the collector knows: a meta is made by the core for one
# tensor and never handed out or shared, so its tensor's tp_traverse visits
# what it holds (_tensor_traverse) and its tp_clear drops it. Without the
# collector's 16-byte header it is 48 bytes, not 64: a deep graph holds one
# a node. (No trashcan: CPython's needs that header; the Tensor and GradFn a
# dealloc chain passes through have theirs.)
@cython.no_gc
@cython.auto_pickle(False)
cdef class AutogradMeta:
    """Autograd state of one tensor that requires grad (internal).

    A tensor that needs no gradient carries none (a C-level None), so the
    no-grad path is one pointer test. What it holds shows through the
    tensor's autograd attributes.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0], requires_grad=True)   # a leaf: meta without a node
    >>> x.requires_grad, x.is_leaf, x.grad_fn is None
    (True, True, True)
    >>> y = x * 2                                       # meta pointing at MulBackward
    >>> y.is_leaf, y.grad_fn.name()
    (False, 'MulBackward')
    """

    def __repr__(self):
        return (f"AutogradMeta(requires_grad={bool(self.requires_grad)}, "
                f"grad_fn={self.grad_fn!r}, output_nr={self.output_nr})")

    def __reduce__(self):
        raise TypeError(_NOT_COPYABLE.format("AutogradMeta"))


cdef inline bint _takes_grad(GradFn node, Py_ssize_t nr, object dtype):
    # Can output nr of node have a gradient: floating, and not one of its op's
    # hidden outputs (OpDef.hidden: kept only for the VJP, never differentiable,
    # so they get no grad_fn and their VJP gradient is None, not a zero array).
    if dtype.kind not in "fc":
        return False
    return node.op is None or node.op.hidden is None or nr not in node.op.hidden


cdef inline AutogradMeta _new_meta(GradFn grad_fn, Py_ssize_t output_nr):
    cdef AutogradMeta meta = AutogradMeta.__new__(AutogradMeta)
    meta.requires_grad = True
    meta.grad_fn = grad_fn
    meta.output_nr = output_nr
    return meta


# A tensor's rare links, in one slot: how it is a view of a base (for
# in-place ops) and why it is cut from the graph (for explain).

cdef inline object _view_info(Tensor t):
    return None if t._links is None else (<tuple>t._links)[0]


cdef inline object _origin_info(Tensor t):
    return None if t._links is None else (<tuple>t._links)[1]


cdef inline void _set_links(Tensor t, object view, object origin) noexcept:
    if t._sealed and (view is not None or origin is not None):
        _unseal_all()
    t._links = None if view is None and origin is None else (view, origin)


cdef Tensor wrap_array(object array):
    """A new Tensor around ``array`` (no copy, no grad): the fast constructor."""
    cdef Tensor t = Tensor.__new__(Tensor)
    t._data = array
    return t


def _wrap(array):
    """Python-callable twin of ``wrap_array``: a Tensor around ``array``, no copy.

    ``array`` may be anything ``as_tensor`` takes; it becomes a base-class
    ndarray of a supported dtype (sharing memory where it can).
    """
    return wrap_array(_as_storage(array))


cdef int _check_can_require_grad(object dtype) except -1:
    if dtype.kind != "f" and dtype.kind != "c":
        raise RuntimeError(
            f"only Tensors of floating point and complex dtype can require gradients, got "
            f"dtype {dtype}")
    return 0


cdef VersionCounter _counter_of(Tensor t):
    if t._version_counter is None:
        t._version_counter = VersionCounter.__new__(VersionCounter)
    return t._version_counter


cdef object _next_hook_key = itertools.count()


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_key")

    def __init__(self, hooks, key):
        self._hooks = hooks
        self._key = key

    def remove(self):
        """Unregister the hook (a second call does nothing)."""
        hooks = self._hooks
        if hooks is None:
            return
        for i in range(len(hooks)):
            if hooks[i][0] == self._key:
                del hooks[i]
                break
        self._hooks = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# SciPy (and any NumPy-only library) reaches here through __array__: the
# message names oxmera.scipy, where the SciPy functions NumPy code
# differentiates have twins that keep the graph.
_NUMPY_WITH_GRAD = ("Can't call numpy() on Tensor that requires grad. "
                    "Use tensor.detach().numpy() instead, or, to differentiate "
                    "a SciPy function, its twin in oxmera.scipy "
                    "(e.g. oxmera.scipy.special.gammaln, oxmera.scipy.stats.norm.logpdf).")


@cython.trashcan(True)
cdef class Tensor:
    """A multi-dimensional array with reverse-mode automatic differentiation.

    ``Tensor(data, dtype=None, requires_grad=False)`` copies ``data`` like
    :func:`oxmera.tensor`, except that Python numbers and sequences become
    the default float dtype, as ``torch.Tensor(data)`` makes them (NumPy
    arrays and tensors keep their dtype). PyTorch's legacy forms work too:
    ``Tensor(2, 3)`` (or ``Tensor(oxmera.Size([2, 3]))``) is an uninitialized
    tensor of that shape, ``Tensor()`` an empty one. Operations on tensors
    that require grad are recorded, and ``backward()`` sends gradients back
    to the leaves.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 4., 6.], dtype=float32)
    >>> oxmera.Tensor(2, 3).shape, oxmera.Tensor([1, 2])
    (oxmera.Size([2, 3]), tensor([1., 2.], dtype=float32))
    """

    # ndarray-first dispatch: NumPy binary operators defer to ours, so
    # ``ndarray + tensor`` gives a tensor (oxmera.ops.interop replaces this
    # with the full NumPy protocol).
    __array_ufunc__ = None

    # The arithmetic operators, in C: each runs the op that oxmera.ops
    # registered for it (install_tensor_attributes), without the Python
    # frame of an installed method. The core still knows no op: only which
    # registered op each Python operator slot calls.
    def __add__(self, other):
        return _binary_slot(_SLOT_ADD, self, other)

    def __radd__(self, other):
        return _binary_slot(_SLOT_RADD, other, self)

    def __sub__(self, other):
        return _binary_slot(_SLOT_SUB, self, other)

    def __rsub__(self, other):
        return _binary_slot(_SLOT_RSUB, other, self)

    def __mul__(self, other):
        return _binary_slot(_SLOT_MUL, self, other)

    def __rmul__(self, other):
        return _binary_slot(_SLOT_RMUL, other, self)

    def __truediv__(self, other):
        return _binary_slot(_SLOT_TRUEDIV, self, other)

    def __rtruediv__(self, other):
        return _binary_slot(_SLOT_RTRUEDIV, other, self)

    def __matmul__(self, other):
        return _binary_slot(_SLOT_MATMUL, self, other)

    def __rmatmul__(self, other):
        return _binary_slot(_SLOT_RMATMUL, other, self)

    def __neg__(self):
        cdef object op = _slot_ops[<Py_ssize_t>_SLOT_NEG]
        if op is None:
            raise TypeError("bad operand type for unary -: 'Tensor' (no op registered)")
        return apply_op(<OpDef>op, (self,), None)

    def __init__(self, *args, dtype=None, requires_grad=False):
        if self._locks:
            # The graph that saved this tensor reads its values at backward
            # time, and its memory is locked under the old array.
            raise RuntimeError(
                f"Tensor.__init__(): this tensor (shape {self._data.shape}) is saved for "
                f"backward by a live graph, which needs its values; it cannot be re-initialized "
                f"(make a new tensor instead)")
        sizes = _legacy_sizes(args)
        if sizes is not None:
            # torch.Tensor(2, 3): uninitialized memory of that shape.
            array = as_array(np.empty(sizes, _default_dtype if dtype is None else dtype))
        else:
            if len(args) > 3:
                raise TypeError(f"Tensor() takes data, dtype and requires_grad, or sizes; got "
                                f"{len(args)} positional arguments")
            # Tensor(data, dtype, requires_grad), positionally as well.
            data = args[0] if args else None
            if len(args) > 1:
                dtype = args[1]
            if len(args) > 2:
                requires_grad = args[2]
            if data is None:
                data = np.empty((0,), dtype=_default_dtype if dtype is None else dtype)
            elif dtype is None and not (isinstance(data, Tensor) or _is_ndarray(data)
                                        or _is_np_scalar(data)):
                dtype = _default_dtype      # torch.Tensor([1, 2]) is a float tensor
            array = as_array(data, dtype, copy=True)
        if requires_grad:
            _check_can_require_grad(array.dtype)
        # A second __init__ makes a new leaf: nothing of the old state is kept
        # (history, view links and version counter described other memory).
        if self._sealed:
            _unseal_all()               # the new array is not checked to be an atom
        self._data = array
        self._meta = _new_meta(None, 0) if requires_grad else None
        self._links = None
        self._version_counter = None

    # -- the array and its description ------------------------------------

    @property
    def shape(self):
        """The shape, as an :class:`oxmera.Size` (a tuple of ints)."""
        return _size_of(self._data)

    @property
    def dtype(self):
        """The NumPy dtype of the elements."""
        return self._data.dtype

    @property
    def ndim(self):
        """Number of dimensions."""
        return self._data.ndim

    def dim(self):
        """Number of dimensions (same as ``ndim``)."""
        return self._data.ndim

    def numel(self):
        """Number of elements."""
        return self._data.size

    def size(self, dim=None):
        """The shape as an :class:`oxmera.Size`, or the length of dimension ``dim``.

        Examples
        --------
        >>> import oxmera
        >>> oxmera.zeros(2, 3).size(-1)
        3
        """
        if dim is None:
            return _size_of(self._data)
        shape = self._data.shape
        if len(shape) == 0:
            # _normalize_dim lets dim 0 / -1 through for a 0-d tensor (as
            # reductions want), and indexing () unchecked would crash.
            raise IndexError(f"size(): dimension specified as {dim} but the tensor has no "
                             f"dimensions")
        return shape[_normalize_dim(dim, len(shape), "size")]

    @property
    def nbytes(self):
        return self._data.nbytes

    def element_size(self):
        """Bytes per element."""
        return self._data.itemsize

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if _n_tracing:
            _trace_refuse()     # a value read: a trace cannot replay it
        if self._data.size != 1:
            raise RuntimeError(
                f"item(): a Tensor with {self._data.size} elements cannot be converted to a "
                f"Python scalar")
        return self._data.item()

    def tolist(self):
        """The values as (nested) Python lists of numbers."""
        if _n_tracing:
            _trace_refuse()     # a value read: a trace cannot replay it
        return self._data.tolist()

    def numpy(self, *, force=False):
        """The underlying ndarray, sharing memory.

        Raises ``RuntimeError`` for a tensor that requires grad, unless
        ``force=True``, as PyTorch does: writing to the array would corrupt
        gradients silently.
        """
        if not force and self._meta is not None and self._meta.requires_grad:
            raise RuntimeError(_NUMPY_WITH_GRAD)
        if _n_tracing:
            _trace_refuse()
        return _exposed(self)

    def __array__(self, dtype=None, copy=None):
        if self._meta is not None and self._meta.requires_grad:
            raise RuntimeError(_NUMPY_WITH_GRAD)
        if _n_tracing:
            _trace_refuse()
        arr = _exposed(self)
        if dtype is not None and arr.dtype != dtype:
            if copy is False:
                raise ValueError(f"Unable to avoid copy while creating an array as requested: "
                                 f"the tensor has dtype {arr.dtype}, not {np.dtype(dtype)}")
            return arr.astype(dtype)
        if copy:
            return arr.copy()
        return arr

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __bool__(self):
        if _n_tracing:
            _trace_refuse()     # a value read: a trace cannot replay it
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self._data.size} values is ambiguous")
        return bool(self._data)

    def __float__(self):
        return float(self.item())

    def __complex__(self):
        return complex(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if _n_tracing:
            _trace_refuse()     # a value read: a trace cannot replay it
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.item())

    def __hash__(self):
        # Tensors hash by identity, like PyTorch: == is elementwise.
        return <Py_ssize_t><void*>self

    def __format__(self, spec):
        if self._data.ndim == 0 and spec:
            return format(self._data.item(), spec)
        return format(repr(self), spec)

    def __reduce__(self):
        return (_rebuild_tensor, (type(self), self._data, self.requires_grad,
                                  _is_writeable(self._data)))

    def __repr__(self):
        arr = self._data
        prefix = "tensor("
        if arr.size == 0 and arr.ndim > 1:
            body = f"[], size={arr.shape}"
        elif _values_formatter is not None:
            body = _values_formatter(arr, prefix)
        else:
            body = np.array2string(arr, separator=", ", prefix=prefix, threshold=1000,
                                   edgeitems=3, precision=4)
        extras = [f"dtype={arr.dtype}"]
        meta = self._meta
        if meta is not None:
            if meta.grad_fn is not None:
                extras.append(f"grad_fn=<{meta.grad_fn.op.backward_name}>")
            elif meta.requires_grad:
                extras.append("requires_grad=True")
        return f"{prefix}{body}, {', '.join(extras)})"

    def __str__(self):
        return self.__repr__()

    # -- autograd attributes ----------------------------------------------

    @property
    def requires_grad(self):
        """Whether gradients are computed for this tensor (settable on leaves)."""
        return self._meta is not None and self._meta.requires_grad != 0

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place on a leaf and return the tensor.

        Examples
        --------
        >>> import oxmera
        >>> oxmera.ones(2).requires_grad_()
        tensor([1., 1.], dtype=float32, requires_grad=True)
        """
        cdef bint flag = bool(requires_grad)
        meta = self._meta
        if meta is not None and meta.grad_fn is not None:
            if flag:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if flag:
            _check_can_require_grad(self._data.dtype)
            if meta is None:
                self._meta = _new_meta(None, 0)
            else:
                meta.requires_grad = True
        elif meta is not None:
            if meta.grad is None and meta.hooks is None:
                self._meta = None      # back to the no-grad fast path
            else:
                meta.requires_grad = False
        return self

    @property
    def is_leaf(self):
        """True unless the tensor was produced by a recorded op."""
        return self._meta is None or self._meta.grad_fn is None

    @property
    def grad_fn(self):
        """The node that produced this tensor (a :class:`GradFn`), or None."""
        if self._links is not None:
            _refresh_view(self)
        return None if self._meta is None else self._meta.grad_fn

    @property
    def output_nr(self):
        return 0 if self._meta is None else self._meta.output_nr

    @property
    def grad(self):
        """The accumulated gradient (a Tensor) or None. Settable."""
        meta = self._meta
        if meta is None:
            return None
        if meta.grad_fn is not None and not meta.retains_grad and meta.grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "It won't be populated during backward(); use .retain_grad() on the non-leaf "
                "Tensor if you want it.", UserWarning, stacklevel=2)
        return meta.grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got "
                                f"{type(value).__name__}")
            if (<Tensor>value)._data.shape != self._data.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: {(<Tensor>value)._data.shape} "
                    f"for a tensor of shape {self._data.shape}")
            if (<Tensor>value)._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"assigned grad has dtype {(<Tensor>value)._data.dtype} for a tensor of "
                    f"dtype {self._data.dtype}")
        if self._meta is None:
            if value is None:
                return
            self._meta = _new_meta(None, 0)
            self._meta.requires_grad = False
        _grad_edge(self, value)
        self._meta.grad = value

    @property
    def retains_grad(self):
        """True if ``retain_grad()`` was called on this non-leaf tensor."""
        return self._meta is not None and self._meta.retains_grad != 0

    def retain_grad(self):
        """Make ``backward()`` fill ``.grad`` of this non-leaf tensor too."""
        meta = self._meta
        if meta is None or not meta.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if meta.grad_fn is None or meta.retains_grad:
            return
        extras = _extras_of(meta.grad_fn)
        if extras.retained is None:
            extras.retained = []
        extras.retained.append([meta.output_nr, weakref.ref(self)])
        meta.retains_grad = True

    def register_hook(self, hook):
        """Register ``hook(grad)`` to run on this tensor's gradient.

        The hook may return a Tensor that replaces the gradient. Returns a
        handle whose ``remove()`` unregisters it.

        Examples
        --------
        >>> import oxmera
        >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2)
        >>> x.sum().backward()
        >>> x.grad
        tensor([2., 2.], dtype=float32)
        >>> h.remove()
        """
        meta = self._meta
        if meta is None or not meta.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if not callable(hook):
            raise TypeError(f"register_hook expects a callable, got {type(hook).__name__}")
        key = next(_next_hook_key)
        if meta.grad_fn is None:
            if self._sealed:
                _unseal_all()
            if meta.hooks is None:
                meta.hooks = []
            meta.hooks.append([key, hook])
            return RemovableHandle(meta.hooks, key)
        node = meta.grad_fn
        extras = _extras_of(node)
        if extras.pre_hooks is None:
            extras.pre_hooks = []
        extras.pre_hooks.append([key, meta.output_nr, hook])
        return RemovableHandle(extras.pre_hooks, key)

    def detach(self):
        """A new tensor sharing this one's memory, cut from the graph."""
        cdef Tensor t = Tensor.__new__(Tensor)
        t._data = self._data
        t._version_counter = _counter_of(self)
        if self._meta is not None and self._meta.requires_grad:
            _set_links(t, None, ("detach", None))
        return t

    def detach_(self):
        """Cut this tensor from the graph in place; it becomes a leaf."""
        if self._meta is not None and self._meta.requires_grad:
            _set_links(self, None, ("detach", None))
        else:
            self._links = None
        self._meta = None
        return self

    @property
    def data(self):
        """A tensor sharing this one's memory without its history.

        Unlike ``detach()``, writes through it are not seen by the version
        counter (PyTorch's ``.data`` rule). Setting it swaps the array.
        """
        return wrap_array(self._data)

    @data.setter
    def data(self, value):
        if self._locks:
            raise RuntimeError(
                f"cannot assign .data of a tensor (shape {self._data.shape}) that a live graph "
                f"saved for backward: the gradient needs the values it had; run backward (or "
                f"drop the graph) first, or assign to a new tensor")
        if self._sealed:
            _unseal_all()               # the new array is not checked to be an atom
        self._data = as_array(value)

    @property
    def _version(self):
        """Number of in-place writes to this tensor's memory (shared with views)."""
        return 0 if self._version_counter is None else self._version_counter.value

    def _bump_version(self):
        """Record one in-place write (for in-place ops).

        Every graph that saved this memory sees it: the versions of the
        tensors it saved over it are bumped too, when they count writes
        apart from this one (``as_tensor`` twice over one array, ``.data``).
        """
        cdef VersionCounter counter = _counter_of(self)
        counter.value += 1
        if _memory_locks:
            _bump_savers(self._data, counter)

    def _share_version_counter(self, Tensor base not None):
        """Make this tensor count writes together with ``base`` (it is a view of it)."""
        self._version_counter = _counter_of(base)

    @property
    def _view_of(self):
        """For a view made by a view op: ``(base, ((op, args, kwargs), ...))``, else None.

        ``base`` is the tensor owning the memory and the entries are the view
        ops that lead from it to this tensor, in order; in-place ops on a view
        replay them to rewrite the base's history (``oxmera.ops.inplace``).
        """
        view = _view_info(self)
        return None if view is None else view[:2]

    @property
    def _origin(self):
        """Why this tensor is cut from the graph, for ``oxmera.autograd.explain``.

        ``None``, or ``(reason, op name)`` with reason ``"no_grad"`` (made by
        the op from inputs that require grad while grad mode was off),
        ``"non-differentiable"`` (made by a non-differentiable op from such
        inputs) or ``"detach"`` (made by ``detach()``/``detach_()``).
        """
        return _origin_info(self)

    def _set_history(self, Tensor source not None):
        """Give this tensor ``source``'s place in the graph (in-place ops).

        An in-place op computes its result as ``source`` (recorded as usual)
        and writes it into this tensor's memory; this tensor then *is* that
        result for autograd: it takes ``source``'s node and output number,
        keeping its own hooks and ``retain_grad()``.
        """
        cdef AutogradMeta old = self._meta
        cdef AutogradMeta new = source._meta
        if new is None or new.grad_fn is None:
            return
        if self._sealed:
            _unseal_all()
        meta = _new_meta(new.grad_fn, new.output_nr)
        if old is not None:
            meta.hooks = old.hooks
            meta.retains_grad = old.retains_grad
            meta.grad = old.grad
        self._meta = meta
        _set_links(self, _current_view(self), None)
        if meta.retains_grad:
            extras = _extras_of(meta.grad_fn)
            if extras.retained is None:
                extras.retained = []
            extras.retained.append([meta.output_nr, weakref.ref(self)])

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the leaves' ``.grad``.

        Parameters
        ----------
        gradient : Tensor or array_like, optional
            The gradient with respect to this tensor; may be omitted for a
            one-element tensor (it is then 1).
        retain_graph : bool, optional
            Keep the saved values so backward can run through the graph again.
            Defaults to ``create_graph``.
        create_graph : bool
            Record the backward pass, for higher-order gradients.
        inputs : sequence of Tensor, optional
            Accumulate only into these tensors.

        Examples
        --------
        >>> import oxmera
        >>> x = oxmera.tensor(3.0, requires_grad=True)
        >>> (x ** 2).backward()
        >>> x.grad
        tensor(6., dtype=float32)
        """
        if inputs is not None:
            if isinstance(inputs, Tensor):
                inputs = (inputs,)
            inputs = tuple(inputs)
            if len(inputs) == 0:
                raise RuntimeError("backward(): 'inputs' argument to backward() cannot be empty")
        if retain_graph is None:
            retain_graph = create_graph
        run_backward((self,), (gradient,), bool(retain_graph), bool(create_graph),
                     inputs, False, True)


def _rebuild_tensor(cls, array, requires_grad, writeable=None):
    """Unpickling (and the ``copy`` module): a tensor of type ``cls`` over ``array``.

    ``writeable`` says whether the pickled array was writeable apart from
    oxmera's lock on saved memory: a pickle (protocol 5 keeps the flag) must
    not make a copy of a saved tensor read-only for good.
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"_rebuild_tensor(): {cls!r} is not a Tensor type")
    cdef Tensor t
    array = _as_storage(array)
    if writeable and not _is_writeable(array):
        try:
            array.flags.writeable = True
        except ValueError:          # over read-only memory (a bytes object): copy
            array = array.copy()
    t = cls.__new__(cls)
    t._data = array
    if requires_grad:
        _check_can_require_grad(array.dtype)
        t._meta = _new_meta(None, 0)
    return t


cdef Py_ssize_t _normalize_dim(object dim, Py_ssize_t ndim, str opname) except? -1:
    cdef Py_ssize_t d
    cdef Py_ssize_t n = ndim if ndim > 0 else 1
    try:
        d = dim.__index__()
    except AttributeError:
        raise TypeError(f"{opname}(): dim must be an int, got {type(dim).__name__}") from None
    if d < -n or d >= n:
        raise IndexError(
            f"{opname}(): Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
            f"but got {d})")
    return d + n if d < 0 else d


def normalize_dim(dim, ndim, opname="op"):
    """Map ``dim`` into ``range(ndim)``; ``IndexError`` naming the op if out of range."""
    return _normalize_dim(dim, ndim, opname)


def normalize_each_dim(dims, Py_ssize_t ndim, str opname not None):
    """``tuple(normalize_dim(d, ndim, opname) for d in dims)``, in C (permute, squeeze
    and the T property run it on every call); a repeat is left to the caller.

    Examples
    --------
    >>> from oxmera._core.autograd import normalize_each_dim
    >>> normalize_each_dim((-1, 0), 3, "permute")
    (2, 0)
    """
    cdef Py_ssize_t i, n
    cdef tuple items = dims if type(dims) is tuple else tuple(dims)
    n = len(items)
    cdef tuple out = PyTuple_New(n)
    for i in range(n):
        v = _normalize_dim(items[i], ndim, opname)
        Py_INCREF(v)
        PyTuple_SET_ITEM(out, i, v)
    return out


# -- the shape ops' argument parsing and broadcast views, in C ---------------
#
# expand, reshape and view run inside the VJPs of sum, mean and every
# broadcasting op, where these steps in Python cost more than the NumPy work
# (a microsecond or two per call on small tensors).

cdef inline bint _all_exact_ints(tuple items) noexcept:
    cdef Py_ssize_t i
    for i in range(len(items)):
        if type(items[i]) is not int:
            return False
    return True


def shape_arg(tuple shape not None, str opname not None):
    """A shape given as varargs ``f(2, 3)`` or as one sequence ``f((2, 3))``, as a
    tuple of ints (``operator.index`` of each: 2.5 or "2" is a mistake, not a
    size); ``TypeError`` naming ``opname`` otherwise.

    Examples
    --------
    >>> from oxmera._core.autograd import shape_arg
    >>> shape_arg((2, 3), "reshape"), shape_arg(([2, 3],), "reshape")
    ((2, 3), (2, 3))
    """
    seq = shape
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        seq = shape[0]
    if type(seq) is tuple and _all_exact_ints(<tuple>seq):
        return seq                      # the common call: nothing to convert
    try:
        return tuple([operator.index(s) for s in seq])
    except TypeError:
        raise TypeError(f"{opname}(): shape must be ints, got {seq!r}") from None


def expanded_shape(object array not None, tuple sizes not None, str opname not None):
    """The shape ``expand(array, *sizes)`` gives (-1 keeps a dimension), checked by
    PyTorch's rules: ``OpError`` naming ``opname`` for sizes that are no broadcast of
    ``array``'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._core.autograd import expanded_shape
    >>> expanded_shape(np.zeros((1, 3)), (2, -1), "expand")
    (2, 3)
    """
    cdef Py_ssize_t i, lead, ndim, n
    cdef cnp.npy_intp* dims
    cdef cnp.npy_intp have
    sizes = shape_arg(sizes, opname)
    if not cnp.PyArray_Check(array):
        array = _np_asarray(array)
    ndim = cnp.PyArray_NDIM(<cnp.ndarray>array)
    dims = cnp.PyArray_DIMS(<cnp.ndarray>array)
    n = len(<tuple>sizes)
    lead = n - ndim
    if lead < 0:
        raise OpError(f"{opname}(): the number of sizes provided ({n}) must be greater "
                      f"or equal to the number of dimensions in the tensor ({ndim}). "
                      f"Target sizes: {sizes}. Tensor sizes: {array.shape}")
    out = None
    for i in range(n):
        s = (<tuple>sizes)[i]
        if s == -1:
            if i < lead:
                raise OpError(f"{opname}(): -1 is not allowed in a leading, non-existing "
                              f"dimension {i}. Target sizes: {sizes}. Tensor sizes: "
                              f"{array.shape}")
            if out is None:
                out = list(sizes)
            out[i] = <Py_ssize_t>dims[i - lead]
        elif i >= lead:
            have = dims[i - lead]
            if have != s and have != 1:
                raise OpError(f"{opname}(): the expanded size of the tensor ({s}) must match "
                              f"the existing size ({have}) at non-singleton dimension {i}. "
                              f"Target sizes: {sizes}. Tensor sizes: {array.shape}")
    return sizes if out is None else tuple(out)


def reshape_shape(object array not None, tuple shape not None, str opname not None):
    """The shape ``reshape(array, *shape)`` asks for, parsed as :func:`shape_arg` does
    and checked by PyTorch's rules (one -1 at most, inferred from the size; no other
    negative size; as many elements as ``array``): ``OpError`` naming ``opname``.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._core.autograd import reshape_shape
    >>> reshape_shape(np.zeros(6), (2, -1), "reshape")
    (2, -1)
    """
    cdef Py_ssize_t i, free = 0
    shape = shape_arg(shape, opname)
    if not cnp.PyArray_Check(array):
        array = _np_asarray(array)
    size = cnp.PyArray_SIZE(<cnp.ndarray>array)
    known = 1                           # a Python int: a product of sizes cannot overflow
    for i in range(len(<tuple>shape)):
        s = (<tuple>shape)[i]
        if s == -1:
            free += 1
        elif s < 0:
            raise OpError(f"{opname}(): invalid shape dimension {s} in {shape}")
        else:
            known *= s
    if free > 1:
        raise OpError(f"{opname}(): only one dimension can be inferred, got shape {shape}")
    if (free and (known == 0 or size % known)) or (not free and known != size):
        raise OpError(f"{opname}(): shape {shape} is invalid for input of shape "
                      f"{array.shape} ({size} elements)")
    return shape


cdef extern from *:
    """
    /* A read-only view of ``a`` broadcast to ``shape`` (a tuple of ints the
       caller checked to be a broadcast of a's shape): stride 0 on the new
       leading dims and on the size-1 dims that grow. NumPy points it at the
       array owning the memory, as every view. */
    static PyObject* oxmera_broadcast_view(PyArrayObject* a, PyObject* shape) {
        npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
        Py_ssize_t nd = PyTuple_GET_SIZE(shape);
        int and_ = PyArray_NDIM(a);
        Py_ssize_t lead = nd - and_;
        if (nd > NPY_MAXDIMS || lead < 0) {
            PyErr_Format(PyExc_ValueError, "broadcast_view: cannot broadcast %d dims to %zd",
                         and_, nd);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < nd; i++) {
            dims[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
            if (dims[i] == -1 && PyErr_Occurred()) return NULL;
            if (dims[i] < 0) {
                PyErr_SetString(PyExc_ValueError, "broadcast_view: negative size");
                return NULL;
            }
            if (i < lead) {
                strides[i] = 0;
            } else {
                npy_intp have = PyArray_DIMS(a)[i - lead];
                if (have != dims[i] && have != 1) {
                    PyErr_Format(PyExc_ValueError, "broadcast_view: size %zd cannot grow to %zd",
                                 (Py_ssize_t)have, (Py_ssize_t)dims[i]);
                    return NULL;
                }
                strides[i] = (have == 1 && dims[i] != 1) ? 0 : PyArray_STRIDES(a)[i - lead];
            }
        }
        PyArray_Descr* descr = PyArray_DESCR(a);
        Py_INCREF(descr);                   /* stolen by PyArray_NewFromDescr */
        PyObject* out = PyArray_NewFromDescr(&PyArray_Type, descr, (int)nd, dims, strides,
                                             PyArray_DATA(a), 0 /* read-only */, NULL);
        if (out == NULL) return NULL;
        Py_INCREF(a);                       /* stolen by PyArray_SetBaseObject */
        if (PyArray_SetBaseObject((PyArrayObject*)out, (PyObject*)a) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        return out;
    }
    """
    object oxmera_broadcast_view(cnp.ndarray a, tuple shape)


def broadcast_view(object array not None, tuple shape not None):
    """``np.broadcast_to(array, shape)``: a read-only view, built in C.

    ``np.broadcast_to`` spends about 2 us in Python-level argument handling;
    this costs about 0.1 us. ``shape`` must be a broadcast target of
    ``array``'s shape (callers check it with PyTorch's messages). Anything
    else (a shape that is not one, or that NumPy cannot make: too many dims,
    too many elements) is left to ``np.broadcast_to``, so the error is NumPy's.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._core.autograd import broadcast_view
    >>> v = broadcast_view(np.arange(3.0), (2, 3))
    >>> v.strides, v.flags.writeable
    ((0, 8), False)
    """
    if not cnp.PyArray_Check(array):
        array = _np_asarray(array)
    try:
        return oxmera_broadcast_view(<cnp.ndarray>array, shape)
    except (ValueError, OverflowError):
        return np.broadcast_to(array, shape)


class _Name(str):
    """A node's name: a str, and callable like PyTorch's ``grad_fn.name()``."""

    __slots__ = ()

    def __call__(self):
        return str(self)


def backward_name(str name not None):
    """The readable node name for an op called ``name``: mul -> MulBackward."""
    parts = [part[:1].upper() + part[1:] for part in name.split("_") if part]
    return _Name("".join(parts) + "Backward")


class AccumulateGrad:
    """What ``next_functions`` shows for an edge into a leaf tensor."""

    __slots__ = ("variable",)
    name = _Name("AccumulateGrad")

    def __init__(self, variable):
        self.variable = variable

    @property
    def next_functions(self):
        return ()

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


@cython.final
cdef class OpDef:
    """One op: its NumPy forward, its VJP, and how the core calls them.

    Built by :func:`oxmera.extend.op`; see there for what each field means.
    """

    def __init__(self, str name, forward, Py_ssize_t n_inputs, tuple input_names,
                 bint differentiable, tuple save_mask, bint save_output, prepare, bint view,
                 output_type, numpy_forward=None, bint quiet=False, n_required=None,
                 tuple input_defaults=None, tuple hidden=None, bint promotes=False, unit=None,
                 bint replay=False, bint float_only=False):
        if self.forward is not None:
            raise TypeError(f"OpDef {self.name!r} is built already: an op's definition cannot "
                            f"change under the nodes recorded with it")
        n_required, input_defaults = _check_opdef(name, forward, n_inputs, input_names,
                                                  save_mask, prepare, output_type, numpy_forward,
                                                  n_required, input_defaults)
        self.n_required = n_required
        self.input_defaults = input_defaults
        self.name = name
        self.backward_name = backward_name(name)
        self.forward = forward
        self.vjp = None
        self.n_inputs = n_inputs
        self.input_names = input_names
        self.differentiable = differentiable
        self.save_mask = save_mask
        self.save_output = save_output
        self.prepare = prepare
        self.promotes = promotes and prepare is not None
        self.float_only = float_only and prepare is not None
        self.view = view
        self.output_type = output_type
        self.numpy_forward = numpy_forward
        # _small_ufunc's loops, when the forward is a ufunc of the op's arity
        # (1 + the loop's index: the zero an OpDef starts with means none).
        self.loop64 = self.loop32 = 0
        if type(numpy_forward) is cnp.ufunc and oxmera_ufunc_nin(numpy_forward) == n_inputs:
            self.loop64 = _ufunc_loop(numpy_forward, cnp.NPY_DOUBLE) + 1
            self.loop32 = _ufunc_loop(numpy_forward, cnp.NPY_FLOAT) + 1
        self.quiet = quiet
        self.hidden = _check_hidden(name, hidden, output_type)
        if unit is not None and (type(unit) not in (int, float) or not (
                n_inputs == 2 and output_type is None
                or n_inputs == 3 and output_type is not None and len(output_type._fields) == 2)):
            raise ValueError(f"op {name}: unit is a number for an op of two tensor inputs and "
                             f"one output, or of three inputs and two outputs, got {unit!r} for "
                             f"{n_inputs} input(s)")
        self.unit = unit
        self.replay = replay
        self.replays = []
        self.public = None
        self.module = getattr(forward, "__module__", None) or ""
        # oxmera's own VJPs never write into a product they computed, so they
        # may receive the read-only products _unit_product hands on; a user's
        # VJP (extend.op, autograd.Function) may, as PyTorch lets it.
        self.internal = self.module == "oxmera" or self.module.startswith("oxmera.")

    def __repr__(self):
        kind = "differentiable" if self.differentiable else "non-differentiable"
        return f"<op {self.name} ({kind})>"

    def __reduce__(self):
        raise TypeError(_NOT_COPYABLE.format("OpDef"))


cdef tuple _check_opdef(str name, forward, Py_ssize_t n_inputs, tuple input_names,
                        tuple save_mask, prepare, output_type, numpy_forward, n_required,
                        tuple input_defaults):
    # The core indexes the call's arguments, the save mask and the edges by
    # these numbers in C, unchecked: a declaration that does not fit must
    # never get as far as a call.
    cdef Py_ssize_t slots, required
    if not name:
        raise TypeError("OpDef: an op needs a name (a non-empty str)")
    if not callable(forward):
        raise TypeError(f"op {name}: forward must be callable, got {type(forward).__name__}")
    for what, fn in (("prepare", prepare), ("output_type", output_type),
                     ("numpy_forward", numpy_forward)):
        if fn is not None and not callable(fn):
            raise TypeError(f"op {name}: {what} must be callable or None, got "
                            f"{type(fn).__name__}")
    if n_inputs < -1:
        raise ValueError(f"op {name}: n_inputs must be -1 (a sequence of tensors) or >= 0, "
                         f"got {n_inputs}")
    slots = 1 if n_inputs < 0 else n_inputs
    if input_names is None or len(input_names) != slots or not all(
            type(n) is str for n in input_names):
        raise ValueError(f"op {name}: {slots} tensor input(s) need {slots} parameter name(s), "
                         f"got {input_names!r}")
    if save_mask is not None:
        if len(save_mask) != slots:
            raise ValueError(f"op {name}: the save mask has {len(save_mask)} entries for "
                             f"{slots} tensor input(s) {input_names}")
        for entry in save_mask:
            if type(entry) is bool:
                continue
            if (n_inputs < 0 or type(entry) is not tuple
                    or not all(type(j) is int and 0 <= j < slots for j in entry)):
                raise ValueError(f"op {name}: a save mask entry is True, False or a tuple of "
                                 f"input indices in range({slots}), got {entry!r}")
    required = slots if n_required is None else n_required
    if required < 0 or required > slots:
        raise ValueError(f"op {name}: n_required must be in [0, {slots}], got {n_required}")
    if input_defaults is None:
        input_defaults = (None,) * (slots - required)
    if len(input_defaults) != slots - required:
        raise ValueError(f"op {name}: {slots - required} input default(s) expected, got "
                         f"{len(input_defaults)}")
    return required, input_defaults


cdef tuple _check_hidden(str name, tuple hidden, output_type):
    # Hidden outputs are output indices of a multi-output op; at least one
    # output stays differentiable (else the op is declared non-differentiable).
    if not hidden:
        return None
    count = len(output_type._fields) if output_type is not None else 1
    if (count < 2 or not all(type(k) is int and 0 <= k < count for k in hidden)
            or len(set(hidden)) != len(hidden) or len(hidden) >= count):
        raise ValueError(f"op {name}: hidden must name distinct outputs of an op with several, "
                         f"leaving one differentiable; got {hidden!r} for {count} output(s)")
    return tuple(sorted(hidden))


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or "
          "if you need to access saved tensors after calling backward.")


@cython.final
@cython.no_gc_clear     # holds what a Function's node locked: see GradFn
@cython.auto_pickle(False)
cdef class NodeExtras:
    """The rarely used parts of a node: hooks, retained outputs, anomaly trace (internal)."""

    def __reduce__(self):
        raise TypeError(_NOT_COPYABLE.format("NodeExtras"))


cdef inline tuple _input_nrs(GradFn node):
    # Which output of its producer each input is: only nodes fed by a
    # multi-output op have it (in their extras), the rest read None.
    return None if node.extras is None else node.extras.next_nrs


cdef inline dict _kwargs_of(GradFn node):
    # The call's keyword arguments (kept in the node's extras), or None.
    return None if node.extras is None else node.extras.kwargs


cdef NodeExtras _extras_of(GradFn node):
    if node.extras is None:
        if node._sealed:
            _unseal_all()
        node.extras = NodeExtras.__new__(NodeExtras)
    return node.extras


# needs_input_grad's answers for one to three inputs: _NEEDS[n][mask], bit i of
# the mask set when input i needs a gradient.
cdef list _NEEDS = [tuple([tuple([bool(mask >> i & 1) for i in range(n)])
                           for mask in range(1 << n)]) for n in range(4)]


@cython.final
@cython.freelist(256)
@cython.trashcan(True)
# The collector never clears a node's fields: when a node is in a reference
# cycle (a hook capturing a tensor, a create_graph gradient on a leaf), what it
# saved must still be there when it is freed, so the memory it locked is
# unlocked. Its cycles are broken by clearing the other objects in them (a
# tensor's meta, a hook's closure), which every such cycle passes through.
@cython.no_gc_clear
@cython.auto_pickle(False)
cdef class GradFn:
    """One node of the tape: sends an op's output gradients to its inputs.

    The VJP of the op receives the node as ``ctx``: ``ctx.needs_input_grad``
    says which inputs need a gradient, ``ctx.output`` gives the op's output
    (rebuilt at backward time, never kept as a tensor, so no reference cycle).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * 2).sum()
    >>> y.grad_fn.name()
    'SumBackward'
    >>> y.grad_fn.next_functions[0][0].name()
    'MulBackward'
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("GradFn nodes cannot be made by hand: the engine makes one when an op "
                        "runs on tensors that require grad (see Tensor.grad_fn); define new ops "
                        "with oxmera.extend.op or oxmera.autograd.Function")

    def __reduce__(self):
        raise TypeError(_NOT_COPYABLE.format("GradFn"))

    @property
    def name(self):
        """The readable name, e.g. ``MulBackward``."""
        return _node_name(self)

    @property
    def next_functions(self):
        """Per input: ``(node, output_nr)``; ``AccumulateGrad`` for leaves, ``None`` if no grad."""
        out = []
        if self.next_fns is None:
            return ()
        for i in range(_n_edges(self)):
            fn = _edge(self, i)
            if isinstance(fn, Tensor):
                out.append((AccumulateGrad(fn), 0))
            else:
                out.append((fn, 0 if _input_nrs(self) is None else _input_nrs(self)[i]))
        return tuple(out)

    @property
    def needs_input_grad(self):
        """Per input of the op: whether a gradient must be computed for it."""
        # Derived from the edges on first use (by the VJP, at backward time),
        # so recording an op allocates one tuple less.
        cdef Py_ssize_t i, n
        cdef tuple flags
        cdef int mask = 0
        # Derived from the edges at each use (a node holds no tuple for it,
        # which keeps every node of a deep graph smaller): for up to three
        # inputs one of the shared tuples, else filled in place.
        if self.next_fns is None:
            return ()
        n = _n_edges(self)
        if n <= 3:
            for i in range(n):
                if _edge(self, i) is not None:
                    mask |= 1 << i
            return (<tuple>_NEEDS[n])[mask]
        flags = PyTuple_New(n)
        for i in range(n):
            flag = _edge(self, i) is not None
            Py_INCREF(flag)
            PyTuple_SET_ITEM(flags, i, flag)
        return flags

    @property
    def output(self):
        """The op's output, for VJPs that reuse it (declared ``save_output``).

        During a backward with ``create_graph=True`` it is connected to this
        node, so the VJP's own derivative through the output is right.
        """
        if (self.layout & _RELEASED):
            raise RuntimeError(_FREED)
        if self.extras is not None and self.extras.packed is not None \
                and self.op.save_output:
            return _unpacked_output(self)
        if self.saved_output is None:
            raise RuntimeError(f"{_node_name(self)}: the op did not declare save_output=True")
        if _num_outputs(self) == 1:
            out = _node_rebuild_output(self, self.saved_output, self.output_counter, 0)
            if _n_tracing:
                _trace_output(self, out)
            return out
        if _n_tracing:
            _trace_refuse()
        return tuple(_node_rebuild_output(self, a, c, i) for i, (a, c) in
                     enumerate(zip(self.saved_output, self.output_counter)))

    def input_shape(self, Py_ssize_t i):
        """Shape of input ``i`` (one that needs a gradient), without keeping it alive."""
        fn = _input_edge(self, i)
        shape = _expected_shape(fn, 0 if _input_nrs(self) is None else _input_nrs(self)[i])
        if _n_tracing:
            _trace_input_read(self, 0, i, shape)
        return shape

    def input_dtype(self, Py_ssize_t i):
        """Dtype of input ``i`` (one that needs a gradient)."""
        fn = _input_edge(self, i)
        dtype = _expected_dtype(fn, 0 if _input_nrs(self) is None else _input_nrs(self)[i])
        if _n_tracing:
            _trace_input_read(self, 1, i, dtype)
        return dtype

    def __repr__(self):
        return f"<{_node_name(self)} object at {<size_t><void*>self:#x}>"

    def register_prehook(self, hook):
        """Register ``hook(grad_outputs)`` to run before this node's VJP.

        ``grad_outputs`` is a tuple (one gradient per output of the op); the
        hook may return a tuple replacing it. Returns a handle whose
        ``remove()`` unregisters the hook.

        Examples
        --------
        >>> import oxmera
        >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> handle = y.grad_fn.register_prehook(lambda grads: (grads[0] * 2,))
        >>> y.sum().backward()
        >>> x.grad
        tensor([6., 6.], dtype=float32)
        """
        return self._add_fn_hook(0, hook)

    def register_hook(self, hook):
        """Register ``hook(grad_inputs, grad_outputs)`` to run after this node's VJP.

        Both are tuples (``None`` for an input needing no gradient); the hook
        may return a tuple replacing ``grad_inputs``. Returns a handle whose
        ``remove()`` unregisters the hook.

        Examples
        --------
        >>> import oxmera
        >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> seen = []
        >>> handle = y.grad_fn.register_hook(lambda gi, go: seen.append(gi[0]))
        >>> y.sum().backward()
        >>> seen
        [tensor([3., 3.], dtype=float32)]
        """
        return self._add_fn_hook(1, hook)

    def _add_fn_hook(self, Py_ssize_t which, hook):
        if not callable(hook):
            raise TypeError(f"{_node_name(self)}: a hook must be callable, got "
                            f"{type(hook).__name__}")
        extras = _extras_of(self)
        if extras.fn_hooks is None:
            extras.fn_hooks = [[], []]
        key = next(_next_hook_key)
        hooks = extras.fn_hooks[which]
        hooks.append([key, hook])
        return RemovableHandle(hooks, key)

    @property
    def metadata(self):
        """A dict for the user's own notes about this node (empty at first), as in PyTorch.

        Examples
        --------
        >>> import oxmera
        >>> y = oxmera.tensor([1.0], requires_grad=True) * 2
        >>> y.grad_fn.metadata["layer"] = "scale"
        >>> y.grad_fn.metadata
        {'layer': 'scale'}
        """
        extras = _extras_of(self)       # may hold user objects: re-tracks sealed ones
        if extras.metadata is None:
            extras.metadata = {}
        return extras.metadata

    def __getattr__(self, str name):
        # PyTorch's per-node saved attributes (_saved_self, _raw_saved_other,
        # _saved_result, _saved_dim...): the Python side maps their names.
        if _saved_attribute_resolver is not None and name.startswith(("_saved_",
                                                                      "_raw_saved_")):
            return _saved_attribute_resolver(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _saved_arguments(self, bint unpack=True):
        """The saved call ``(args, kwargs)``, packed values unpacked (for ``_saved_*``);
        without ``unpack``, packed values read None (see ``_packed_slots``)."""
        if (self.layout & _RELEASED):
            raise RuntimeError(_FREED)
        args = None if self.args is None else _args_of(self)
        if unpack and self.extras is not None and self.extras.packed is not None:
            args = _unpacked_args(self, False)
        return args, _kwargs_of(self)

    def _packed_slots(self):
        """The saved values given to pack hooks: input ``i >= 0``, output ``-1 - k``."""
        if self.extras is None or self.extras.packed is None:
            return ()
        return tuple([entry[0] for entry in self.extras.packed])

    @property
    def _output_count(self):
        """How many outputs the op has."""
        return _num_outputs(self)

    def _saved_output_value(self, Py_ssize_t k):
        """Output ``k`` as saved (its packed value unpacked), or None if not saved."""
        if (self.layout & _RELEASED):
            raise RuntimeError(_FREED)
        if self.op is None or not self.op.save_output or k < 0 or k >= _num_outputs(self):
            return None
        if self.saved_output is None:
            if self.extras is None or self.extras.packed is None:
                return None
            for entry in self.extras.packed:
                if entry[0] == -1 - k:
                    return _call_unpack(self, entry)
            return None
        array = self.saved_output if _num_outputs(self) == 1 else self.saved_output[k]
        return wrap_array(array)

    def _pack_saved_slot(self, Py_ssize_t slot, pack, unpack):
        """Hand one saved value to ``pack`` now (``SavedTensor.register_hooks``);
        ``slot``: input ``i >= 0`` or output ``-1 - k``."""
        if (self.layout & _RELEASED):
            raise RuntimeError(_FREED)
        if not callable(pack) or not callable(unpack):
            raise TypeError("register_hooks(pack_hook, unpack_hook): both must be callable")
        if self.extras is not None and self.extras.packed is not None:
            for entry in self.extras.packed:
                if entry[0] == slot:
                    raise RuntimeError("register_hooks(): this saved tensor has hooks already "
                                       "(they can be registered once per saved tensor)")
        _pack_saved(self, pack, unpack, slot)

    @property
    def _frees_saved(self):
        """Read by a VJP while it runs: whether the backward frees this node's saved
        values right after it (no ``retain_graph``, no saved-tensor hooks), so the VJP
        may write its result over the memory of a hidden output (internal)."""
        if _n_tracing:
            _trace_refuse()     # the VJP's writes depend on it
        return bool((self.layout & _FREES_SAVED) and not (self.layout & _RELEASED)
                    and (self.extras is None or self.extras.packed is None))

    @property
    def _released(self):
        """Whether a backward without ``retain_graph`` has freed the saved values."""
        return (self.layout & _RELEASED) != 0

    def _claimed(self):
        """Whether a backward holds this node's task (only while one runs through it)."""
        return type(self.aux) is _Task

    @property
    def _creation_trace(self):
        """The forward stack where the op ran, kept in anomaly mode, else None."""
        return None if self.extras is None else self.extras.creation_trace

    def _rebuild(self, array, Py_ssize_t output_nr):
        """A tensor for output ``output_nr`` with ``array`` as its values, attached
        to this node when grad mode is on (what ``ctx.output`` is made of)."""
        if self.op is None:
            raise RuntimeError(_EMPTY_NODE)
        if output_nr < 0 or output_nr >= _num_outputs(self):
            raise IndexError(f"{_node_name(self)}: output {output_nr} is out of range for a "
                             f"node with {_num_outputs(self)} outputs")
        return _node_rebuild_output(self, _as_storage(array), None, output_nr)

    def _lock_saved(self, tuple saved not None):
        """Keep what a custom Function saved read-only while this node holds its values.

        ``saved`` holds Tensors (saved inputs) and ``(array, tensor)`` pairs
        (a saved output's array and the output tensor counting its writes).
        Unlocked when the node frees its saved values or is freed.
        """
        cdef list entries = []
        if self.op is None:
            raise RuntimeError(_EMPTY_NODE)
        if (self.layout & _RELEASED):
            raise RuntimeError(_FREED)
        if self.extras is not None and self.extras.locked is not None:
            raise RuntimeError(f"{_node_name(self)}: its saved values are locked already")
        for item in saved:
            if isinstance(item, Tensor):
                entries.append(item)
            elif (type(item) is tuple and len(<tuple>item) == 2 and cnp.PyArray_Check(item[0])
                  and isinstance(item[1], Tensor)):
                entries.append((item[0], _counter_of(<Tensor>item[1])))
            else:
                raise TypeError(f"{_node_name(self)}._lock_saved(): expected Tensors and "
                                f"(ndarray, Tensor) pairs, got {type(item).__name__}")
        if not OXMERA_LOCKS_COMPILED or not entries:
            return
        _extras_of(self).locked = tuple(entries)
        for item in entries:
            if isinstance(item, Tensor):
                _lock_tensor(<Tensor>item)
            else:
                _lock_array(item[0], <VersionCounter>item[1])
        self.layout |= _LOCKED

    def __dealloc__(self):
        # A graph dropped without backward gives its saved arrays back too.
        if (self.layout & _LOCKED) and not (self.layout & _RELEASED):
            _unlock_saved(self)


# The node's routines the engine calls, as functions, not cdef methods: a
# cdef method gives every GradFn a vtable pointer, and 8 bytes less make a
# node 144 bytes, not 160 (a deep graph holds one a step).

cdef Tensor _node_rebuild_output(GradFn node, object array, object counter, Py_ssize_t nr):
    cdef Tensor t = Tensor.__new__(Tensor)
    t._data = array
    t._version_counter = counter
    if grad_enabled() and _takes_grad(node, nr, array.dtype):
        t._meta = _new_meta(node, nr)
    return t


cdef int _node_release(GradFn node) except -1:
    # As in PyTorch, only a node that saved tensors is spent by a backward
    # without retain_graph: one that saved none (a view, an add, a sum)
    # keeps its few numbers and can run again in another backward.
    if not (node.layout & _LOCKED) and _saved_no_tensor(node):
        return 0
    if (node.layout & _LOCKED):
        _unlock_saved(node)
    if node.extras is not None:
        node.extras.packed = None
    node.args = None
    if node.extras is not None:
        node.extras.kwargs = None
    node.saved_output = None
    # (the bits that placed a bare argument go with it)
    node.layout = (node.layout & ~(_PAIR_ARG | _PAIR_ARG_1)) | _RELEASED
    return 0


cdef int _node_check_saved(GradFn node) except -1:
    """Raise if the saved values were freed or modified in place since."""
    cdef Py_ssize_t i, now, then
    if (node.layout & _RELEASED):
        raise RuntimeError(_FREED)
    if node.args is not None:
        for i in range(_n_edges(node)):
            arg = _node_input_slot(node, i)
            if isinstance(arg, Tensor) and (<Tensor>arg)._version_counter is not None:
                now = (<Tensor>arg)._version_counter.value
                then = _saved_version(node, i)
                if now != then:
                    raise RuntimeError(
                        f"one of the variables needed for gradient computation has been "
                        f"modified by an inplace operation: input {i} of "
                        f"{node.op.backward_name} (shape {(<Tensor>arg)._data.shape}) is at "
                        f"version {now}; expected version {then} instead.")
    if node.saved_output is not None:
        now = _counter_sum(node.output_counter)
        if <unsigned int>now != _output_version(node):   # (modulo 2**32, as PyTorch's)
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified "
                f"by an inplace operation: the output of {node.op.backward_name} is at "
                f"version {now}; expected version {_output_version(node)} instead.")
    return 0


cdef object _node_input_slot(GradFn node, Py_ssize_t i):
    if node.op.n_inputs < 0:
        return node.args[0][i]
    return _arg_at(node, i)


cdef inline bint _holds_tensor(object value) noexcept:
    if isinstance(value, Tensor) or _is_ndarray(value):
        return True
    if type(value) is tuple or type(value) is list:
        for item in value:
            if isinstance(item, Tensor) or _is_ndarray(item):
                return True
    return False


cdef bint _saved_no_tensor(GradFn node) except -1:
    # Whether the node keeps no tensor or array for its VJP (its inputs, its
    # output, an index among its arguments, a Function's saved tensors).
    if node.saved_output is not None:
        return False
    if node.extras is not None and (node.extras.locked is not None
                                    or node.extras.packed is not None):
        return False
    if node.args is not None:
        for value in _args_of(node):
            if _holds_tensor(value):
                return False
    kwargs = _kwargs_of(node)
    if kwargs is not None:
        for value in (<dict>kwargs).values():
            if _holds_tensor(value):
                return False
    return True


_EMPTY_NODE = ("this GradFn was not made by the engine (GradFn.__new__ from Python): it "
               "belongs to no graph")


cdef object _node_name(GradFn node):
    # The node's name; a node made by GradFn.__new__ from Python has no op.
    if node.op is None:
        return _Name("GradFn")
    return node.op.backward_name


cdef object _input_edge(GradFn node, Py_ssize_t i):
    # ``i`` comes from a VJP author's code, and release builds index tuples
    # without bounds checks (boundscheck/wraparound off): check it here, or a
    # wrong index reads past the tuple and crashes the interpreter.
    if node.next_fns is None or i < 0 or i >= _n_edges(node):
        raise IndexError(f"{node.name}: input index {i} is out of range for an op with "
                         f"{0 if node.next_fns is None else _n_edges(node)} inputs")
    fn = _edge(node, i)
    if fn is None:
        raise RuntimeError(f"{node.name}: input {i} needs no gradient")
    return fn


cdef Py_ssize_t _counter_sum(object counter):
    # Versions only grow, so an unchanged sum means no write to any of them.
    cdef Py_ssize_t total = 0
    if isinstance(counter, VersionCounter):
        return (<VersionCounter>counter).value
    for c in counter:
        if c is not None:
            total += (<VersionCounter>c).value
    return total


# ---------------------------------------------------------------------------
# Looking inside (oxmera.autograd.graph, oxmera.profiler): saved-tensor hooks,
# node attributes, the profiler's entry points, callbacks at a backward's end.
# Each costs one C-level test when unused (_saved_hooks_on in _record,
# _profiler in apply_op and per node in the backward, _queued_callbacks per
# backward); the rest runs only when they are in use.
# ---------------------------------------------------------------------------

cdef bint _saved_hooks_on = False       # some thread may have saved-tensor hooks active
cdef object _saved_hooks_source = None  # () -> (pack, unpack) of this thread, or None
cdef object _saved_attribute_resolver = None  # (node, name) -> a _saved_*/_raw_saved_* value
cdef object _profiler = None            # the active profiler (begin/end of ops and nodes)
cdef list _queued_callbacks = []        # [thread ident, backward run, callback]
cdef Py_ssize_t _ALL_SLOTS = 1 << 30    # _pack_saved: every slot (no op has so many inputs)


def set_saved_tensors_hooks_source(source):
    """Make the core ask ``source()`` for the current thread's ``(pack, unpack)``
    (or None) as it records a node that saves tensors; None stops asking.

    Used by ``oxmera.autograd.graph.saved_tensors_hooks``, which keeps the
    per-thread stack of hooks and sets the source only while some are active.
    """
    global _saved_hooks_on, _saved_hooks_source
    if source is not None and not callable(source):
        raise TypeError(f"set_saved_tensors_hooks_source(): expected a callable or None, got "
                        f"{type(source).__name__}")
    _saved_hooks_source = source
    _saved_hooks_on = source is not None


def set_saved_attribute_resolver(resolver):
    """Make ``node._saved_<name>`` / ``node._raw_saved_<name>`` call ``resolver(node, attr)``."""
    global _saved_attribute_resolver
    _saved_attribute_resolver = resolver


def set_profiler(profiler):
    """Make every op call and node backward report to ``profiler`` (None: stop).

    ``profiler.op(op, args, kwargs)`` replaces an op call (it runs the op with
    ``apply_op_unprofiled``); ``profiler.node(node, grads)`` replaces a node's
    VJP call in the backward (it runs it with ``run_node_backward``).
    """
    global _profiler
    _profiler = profiler


def get_profiler():
    """The profiler that ``set_profiler`` set, or None."""
    return _profiler


cdef object _profiled_op(OpDef op, tuple args, dict kwargs):
    return _profiler.op(op, args, kwargs)


cdef object _profiled_vjp(GradFn node, object grads):
    return _profiler.node(node, grads)


def apply_op_unprofiled(OpDef op not None, tuple args not None, dict kwargs):
    """``apply_op`` for the profiler's ``op``: the op runs with the profiler off,
    so an op its forward calls is part of it, not an op of its own."""
    global _profiler
    prof = _profiler
    _profiler = None
    try:
        return apply_op(op, args, kwargs)
    finally:
        _profiler = prof


def run_node_backward(GradFn node not None, grads):
    """Run a node's VJP with its hooks (for the profiler's ``node``)."""
    if node.extras is None or node.extras.fn_hooks is None:
        return _call_own_vjp(node, grads)
    return _call_vjp_with_hooks(node, grads)


def _queue_callback(callback):
    """Run ``callback()`` when the backward running in this thread ends (call it
    from inside a backward, e.g. from a hook); dropped if that backward fails."""
    _queued_callbacks.append([threading.get_ident(), _next_run, callback])


cdef list _take_queued_callbacks(unsigned int run):
    # The callbacks queued in this thread since this backward began: by it, or
    # by a backward it re-entered that ended before they were queued.
    ident = threading.get_ident()
    taken = [e[2] for e in _queued_callbacks if e[0] == ident and e[1] >= run]
    if taken:
        _queued_callbacks[:] = [e for e in _queued_callbacks
                                if not (e[0] == ident and e[1] >= run)]
    return taken


cdef inline object _slot_value(GradFn node, Py_ssize_t slot):
    return _node_input_slot(node, slot) if slot >= 0 else None


cdef int _pack_saved(GradFn node, object pack, object unpack, Py_ssize_t only) except -1:
    # Hand the node's saved tensors (or only slot ``only``) to ``pack``; the node
    # keeps what pack returns, not the tensors, and gives it to ``unpack`` when
    # its backward (or a _saved_* attribute) needs them. The memory the node
    # had locked is released: it is the hooks' to keep now (with hooks, as in
    # PyTorch, no version check is made either). The packed values may be any
    # user objects: they hang from this node's extras, and a node with extras
    # is never sealed (_try_seal), so the collector sees any cycle through them.
    cdef Py_ssize_t i, k, n = _n_edges(node)
    cdef list slots, entries
    cdef bint sequence = node.op.n_inputs < 0
    cdef Tensor t
    if node.args is None or (node.op.n_inputs == 0 and n):
        # A custom Function's node (record_function): what its VJP reads is
        # what ctx.save_for_backward kept, which function.py packs itself.
        return 0
    cdef tuple args = _args_of(node)
    slots = list(args[0]) if sequence else list(args[:n])
    entries = []
    for i in range(n):
        if (only == _ALL_SLOTS or only == i) and isinstance(slots[i], Tensor):
            entries.append([i, slots[i], unpack])
    saved = node.saved_output
    if saved is not None:
        for k in range(_num_outputs(node)):
            if only == _ALL_SLOTS or only == -1 - k:
                t = Tensor.__new__(Tensor)      # no history: the node must not hold its output
                t._data = saved if _num_outputs(node) == 1 else saved[k]
                t._version_counter = (node.output_counter if _num_outputs(node) == 1
                                      else node.output_counter[k])
                entries.append([-1 - k, t, unpack])
    if not entries:
        return 0
    for entry in entries:               # pack everything before changing the node
        entry[1] = pack(entry[1])
    was_locked = (node.layout & _LOCKED) != 0
    if was_locked:
        _unlock_saved(node)
    for entry in entries:
        if entry[0] >= 0:
            slots[entry[0]] = None
    if any(entry[0] < 0 for entry in entries):
        if _num_outputs(node) == 1 or all([any([e[0] == -1 - k for e in entries])
                                           for k in range(_num_outputs(node))]):
            node.saved_output = None
        else:
            node.saved_output = tuple([None if any(e[0] == -1 - k for e in entries)
                                       else saved[k] for k in range(_num_outputs(node))])
    node.layout &= ~(_PAIR_ARG | _PAIR_ARG_1)
    node.args = (tuple(slots),) + args[1:] if sequence else tuple(slots) + args[n:]
    extras = _extras_of(node)
    if extras.packed is None:
        extras.packed = entries
    else:
        extras.packed.extend(entries)
    node.layout |= _SCALAR_INPUTS      # the VJP's args come from _vjp_args, which unpacks
    if was_locked and OXMERA_LOCKS_COMPILED:
        # What stays unpacked (one slot given to register_hooks) stays locked.
        _set_bit(node, _LOCKED, _lock_inputs(node))
        saved = node.saved_output
        if saved is not None:
            if _num_outputs(node) == 1:
                _lock_array(saved, <VersionCounter>node.output_counter)
                node.layout |= _LOCKED
            else:
                for k in range(_num_outputs(node)):
                    if saved[k] is not None:
                        _lock_array(saved[k], <VersionCounter>node.output_counter[k])
                        node.layout |= _LOCKED
    return 0


cdef object _call_unpack(GradFn node, list entry):
    value = entry[2](entry[1])
    if not isinstance(value, Tensor):
        raise TypeError(f"{_node_name(node)}: the unpack hook of a saved tensor returned "
                        f"{type(value).__name__}; it must return a Tensor")
    return value


cdef object _restored_input(GradFn node, Py_ssize_t i, Tensor value):
    # With grad mode on (create_graph=True), the VJP's use of a saved input
    # must reach that input's history: a value without it is attached to the
    # input's edge (PyTorch restores the grad_fn of what unpack returns too).
    # A leaf's edge is the leaf itself, which the node holds anyway: it is used.
    cdef Tensor t
    edge = _edge(node, i)
    if edge is None or not grad_enabled() or (value._meta is not None
                                              and value._meta.requires_grad):
        return value
    if isinstance(edge, Tensor):
        return edge
    t = Tensor.__new__(Tensor)
    t._data = value._data
    t._meta = _new_meta(<GradFn>edge, 0 if _input_nrs(node) is None else _input_nrs(node)[i])
    return t


cdef tuple _unpacked_args(GradFn node, bint for_vjp):
    # The node's saved args with packed inputs unpacked (and, for the VJP, as
    # it reads them: numbers as 0-d Tensors, inputs attached to their history).
    cdef Py_ssize_t i, n = _n_edges(node)
    cdef bint sequence = node.op.n_inputs < 0
    cdef tuple args = _args_of(node)
    slots = list(args[0]) if sequence else list(args[:n])
    for entry in node.extras.packed:
        i = entry[0]
        if i >= 0:
            value = _call_unpack(node, entry)
            slots[i] = _restored_input(node, i, value) if for_vjp else value
    if for_vjp and not sequence:
        for i in range(n):
            v = slots[i]
            if v is not None and not isinstance(v, Tensor):
                slots[i] = _scalar_tensor(v)
    if sequence:
        return (tuple(slots),) + args[1:]
    return tuple(slots) + args[n:]


cdef object _unpacked_output(GradFn node):
    # ctx.output of a node whose output was packed: rebuilt from what unpack gives.
    cdef Py_ssize_t k
    outs = []
    for k in range(_num_outputs(node)):
        array = None
        if node.saved_output is not None:
            array = node.saved_output if _num_outputs(node) == 1 else node.saved_output[k]
        counter = node.output_counter if _num_outputs(node) == 1 else node.output_counter[k]
        if array is None:
            for entry in node.extras.packed:
                if entry[0] == -1 - k:
                    array = (<Tensor>_call_unpack(node, entry))._data
                    counter = None
                    break
        outs.append(_node_rebuild_output(node, array, counter, k))
    return outs[0] if _num_outputs(node) == 1 else tuple(outs)


# ---------------------------------------------------------------------------
# Installing methods: the ops package gives Tensor its methods and operators.
# ---------------------------------------------------------------------------

cdef enum:
    _SLOT_ADD, _SLOT_RADD, _SLOT_SUB, _SLOT_RSUB, _SLOT_MUL, _SLOT_RMUL, _SLOT_TRUEDIV,
    _SLOT_RTRUEDIV, _SLOT_MATMUL, _SLOT_RMATMUL, _SLOT_NEG, _N_SLOTS

_SLOT_NAMES = {"__add__": _SLOT_ADD, "__radd__": _SLOT_RADD, "__sub__": _SLOT_SUB,
               "__rsub__": _SLOT_RSUB, "__mul__": _SLOT_MUL, "__rmul__": _SLOT_RMUL,
               "__truediv__": _SLOT_TRUEDIV, "__rtruediv__": _SLOT_RTRUEDIV,
               "__matmul__": _SLOT_MATMUL, "__rmatmul__": _SLOT_RMATMUL, "__neg__": _SLOT_NEG}

# slot -> the OpDef its operator runs (None: NotImplemented)
cdef list _slot_ops = [None] * _N_SLOTS


cdef object _binary_slot(Py_ssize_t slot, object left, object right):
    cdef object op = _slot_ops[slot]
    if op is None:
        return NotImplemented
    if (<OpDef>op).unit is not None and oxmera_get_grad_off() == _OFF_IN_BACKWARD:
        same = _unit_product(<OpDef>op, left, right)
        if same is not None:
            return same
    reuse = None
    if (<OpDef>op).numpy_forward is not None:
        reuse = _temporary_out(<OpDef>op, left, right)
    return _apply_op(<OpDef>op, (left, right), None, reuse)


# -- Temporaries: ``a * b + c`` allocates once, as in NumPy -------------------------
#
# The interpreter holds an operand of a binary operator that no variable,
# container or graph node refers to (``x * w`` in ``x * w + 1``) with the only
# reference to it: its memory can take the result, as NumPy does for its own
# arrays. Reused only when that is provably unobservable:
#   - the Tensor's and its array's only references are the operand itself
#     (reference counts of 1), the array owns its memory (no view of it, no
#     base), is writeable (saved memory is locked read-only) and is large
#     enough that an allocation costs more than these checks (NumPy's own
#     threshold, 256 KiB);
#   - the Tensor is exactly a Tensor (no subclass state), is not a view
#     and no weak references, and the op does not save it for backward;
#   - the operator was started by the interpreter's binary-operator
#     instruction: a C caller (a Cython function, ``sum()``, ``operator.add``)
#     may hold its only reference and read the operand afterwards, and is
#     then not running that instruction in the current frame;
#   - the result has the temporary's shape and dtype (checked again after
#     dtype promotion, _writes_into).
cdef Py_ssize_t _REUSE_MIN_BYTES = 256 * 1024
# The reference counts an unreferenced operand shows here: the interpreter's
# and the Tensor method's own (Cython's def slot holds its argument), and for
# its array the Tensor's and the local variable's. A test (test_temporaries)
# fails if a Cython upgrade changes them.
cdef Py_ssize_t _TEMP_REFS = 2
cdef Py_ssize_t _TEMP_ARRAY_REFS = 2
cdef object _BINARY_OPCODES = frozenset(
    [dis.opmap[name] for name in ("BINARY_OP", "BINARY_ADD", "BINARY_SUBTRACT",
                                  "BINARY_MULTIPLY", "BINARY_TRUE_DIVIDE")
     if name in dis.opmap])


# Python 3.14's interpreter may hold borrowed references on its stack
# (LOAD_FAST_BORROW): a named tensor can then show the counts of a temporary,
# so the proof above does not hold there and nothing is reused (NumPy moved to
# PyUnstable_Object_IsUniqueReferencedTemporary for this; oxmera's supported
# and tested versions are 3.10-3.13).
cdef extern from *:
    """
    #define OXM_TEMPORARIES_REUSABLE (PY_VERSION_HEX < 0x030E0000)
    """
    const bint _TEMPORARIES_REUSABLE "OXM_TEMPORARIES_REUSABLE"


def temporaries_reusable():
    """Whether this build may write an op's result into an unreferenced temporary
    operand (``a * b + c`` allocating once): False on Python 3.14 and later."""
    return _TEMPORARIES_REUSABLE


cdef object _temporary_out(OpDef op, object left, object right):
    """The array of ``left`` or ``right`` the op may write its result into, or None."""
    cdef Py_ssize_t i
    if not _TEMPORARIES_REUSABLE:
        return None
    for i in range(2):
        v = left if i == 0 else right
        arr = _temporary_array(v, _TEMP_REFS)
        if arr is None or cnp.PyArray_NBYTES(<cnp.ndarray>arr) < _REUSE_MIN_BYTES:
            continue
        other = right if i == 0 else left
        if op.save_mask is None or not _unsaved(op.save_mask[i], other):
            continue
        if not _fits_into(other, <cnp.ndarray>arr):
            continue
        if not _called_by_operator():
            return None
        return arr
    return None


cdef object _temporary_array(object v, Py_ssize_t refs):
    # The array of ``v`` if ``v`` is an unreferenced temporary whose memory may
    # take an op's result (the rules above but the size; ``refs``: the count
    # an unreferenced ``v`` shows, the caller holding it in one local
    # variable), else None.
    cdef Tensor t
    if type(v) is not Tensor or Py_REFCNT(v) != refs:
        return None
    t = <Tensor>v
    arr = t._data
    if (type(arr) is not ndarray or Py_REFCNT(arr) != _TEMP_ARRAY_REFS
            or cnp.PyArray_BASE(<cnp.ndarray>arr) != NULL
            or not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>arr)
            or not cnp.PyArray_ISALIGNED(<cnp.ndarray>arr)
            or not (cnp.PyTypeNum_ISFLOAT(cnp.PyArray_TYPE(<cnp.ndarray>arr))
                    or cnp.PyTypeNum_ISCOMPLEX(cnp.PyArray_TYPE(<cnp.ndarray>arr)))
            or _view_info(t) is not None or _has_weakrefs(t)):
        return None
    return arr


# -- A product by one: ``grad * f'(x)`` when grad is the broadcast 1 ----------------
#
# ``loss.sum().backward()`` hands the last node a broadcast 1: the
# ``grad * cj(ctx.output)`` of exp's VJP, or ``grad * cos(input)`` of sin's,
# is then its other operand unchanged, and computing it is a pass over memory
# the hand-written NumPy never makes (bench big_elementwise: a tenth of the
# step). An op declared with a ``unit`` (mul: 1) hands the other operand on
# instead, only in a backward that records nothing (its operands are the
# engine's gradients and saved values), only for real floating dtypes of
# equal dtype and the result's shape, and only when nothing can see the
# sharing:
#   - an unreferenced temporary (_temporary_array, _called_by_operator) is
#     handed on itself;
#   - read-only memory (what a node saved is locked so) as a read-only view,
#     which the engine neither adds into nor adopts as a .grad (it copies),
#     and which it copies before a hook or autograd.grad gives it to the
#     user (_private): a gradient never aliases a tensor the user may change;
#   - anything else (writeable memory someone holds) is multiplied.
# A pair product ``(u*v, u*w)`` (an op of three inputs and two outputs
# declared with a ``unit``: mul_pair, mul's VJP when both factors need a
# gradient) hands on read-only ``v`` and ``w`` when ``u`` is the unit
# (_unit_results, from _apply_op and _run_replay).
cdef object _unit_product(OpDef op, object left, object right):
    cdef Py_ssize_t i
    cdef cnp.ndarray varr
    for i in range(2):
        u = left if i == 0 else right
        v = right if i == 0 else left
        if type(u) is not Tensor or type(v) is not Tensor:
            return None
        if (type((<Tensor>u)._data) is ndarray and type((<Tensor>v)._data) is ndarray
                and _is_unit(<cnp.ndarray>(<Tensor>u)._data, <cnp.ndarray>(<Tensor>v)._data,
                             op.unit)):
            break
    else:
        return None
    # (``v`` is held here in one local, as in _temporary_out: same counts.)
    arr = _temporary_array(v, _TEMP_REFS) if _TEMPORARIES_REUSABLE else None
    if arr is not None and _called_by_operator():
        return v if (<Tensor>v)._meta is None else wrap_array(arr)
    varr = <cnp.ndarray>(<Tensor>v)._data
    if not cnp.PyArray_ISWRITEABLE(varr):
        return wrap_array(varr.view())
    return None


cdef bint _is_unit(cnp.ndarray u, cnp.ndarray v, object unit) except -1:
    # Does ``u`` equal ``unit`` everywhere and broadcast to ``v``'s shape, with
    # ``v``'s real floating dtype (so that ``u * v`` is ``v``, value and dtype)?
    cdef Py_ssize_t k, lead, d
    cdef int num = cnp.PyArray_TYPE(v)
    if (cnp.PyArray_TYPE(u) != num or not cnp.PyTypeNum_ISFLOAT(num)
            or u.ndim > v.ndim or cnp.PyArray_SIZE(u) == 0 or cnp.PyArray_SIZE(v) == 0):
        return False
    lead = v.ndim - u.ndim
    for k in range(u.ndim):
        d = u.shape[k]
        if d != 1 and (d != v.shape[lead + k] or u.strides[k] != 0):
            return False
    # (Read in C for the common dtypes: a 1-element gradient meets this test
    # at every product of a backward.)
    if num == cnp.NPY_DOUBLE:
        return (<double*>cnp.PyArray_DATA(u))[0] == <double>unit
    if num == cnp.NPY_FLOAT:
        return (<float*>cnp.PyArray_DATA(u))[0] == <float>unit
    return cnp.PyArray_GETITEM(u, <char*>cnp.PyArray_DATA(u)) == unit


cdef object _private(object g):
    # A gradient leaving the engine for the user's code (a hook, a result of
    # autograd.grad): read-only memory is shared (a broadcast, or saved memory
    # _unit_product handed on), so the user gets a copy, as PyTorch's
    # gradients are the user's own. (A gradient that requires grad, from
    # create_graph, is left as it is: it is never such an alias.)
    if (isinstance(g, Tensor) and (<Tensor>g)._meta is None
            and type((<Tensor>g)._data) is ndarray
            and not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>(<Tensor>g)._data)):
        return wrap_array(cnp.PyArray_NewCopy(<cnp.ndarray>(<Tensor>g)._data, cnp.NPY_KEEPORDER))
    return g


cdef extern from *:
    """
    static int oxm_has_weakrefs(PyObject* o) {
        Py_ssize_t offset = Py_TYPE(o)->tp_weaklistoffset;
        return offset > 0 && *(PyObject**)((char*)o + offset) != NULL;
    }
    """
    bint _has_weakrefs "oxm_has_weakrefs"(object o) noexcept


cdef bint _unsaved(object mask_entry, object other):
    # The save-mask entry of the temporary: False, or the inputs whose gradient
    # needs it (mul keeps x when y needs a gradient): then ``other`` must need none.
    if mask_entry is False:
        return True
    if type(mask_entry) is not tuple:
        return False
    return not (isinstance(other, Tensor) and (<Tensor>other)._meta is not None
                and (<Tensor>other)._meta.requires_grad)


cdef bint _fits_into(object other, cnp.ndarray arr):
    # The other operand leaves the result the temporary's shape and dtype.
    cdef Py_ssize_t k, lead
    cdef cnp.ndarray o
    if isinstance(other, (float, int)):
        return True                     # weakly typed: the tensor's dtype wins
    if not _sealable_type(other) or type((<Tensor>other)._data) is not ndarray:
        return False                    # (a Parameter: a bias added to a product)
    o = <cnp.ndarray>(<Tensor>other)._data
    if cnp.PyArray_TYPE(o) != cnp.PyArray_TYPE(arr) or o.ndim > arr.ndim:
        return False
    lead = arr.ndim - o.ndim
    for k in range(o.ndim):
        if o.shape[k] != 1 and o.shape[k] != arr.shape[lead + k]:
            return False
    return True


# -- One-input ops: ``(x * w + 1).exp()`` writes into the sum's memory ------------------
#
# A method or function call shows no instruction that proves the interpreter
# made it: ``max(gen, key=oxmera.exp)`` calls the op from C holding the only
# reference to an item it returns afterwards. So a one-input op takes its
# input's memory only when, besides the rules of _temporary_array (the count
# is the interpreter's and the call's argument tuple's), its caller is the
# interpreter's frame evaluation itself, read off the C stack as NumPy does
# for its own temporaries; where the stack cannot be read so (not glibc),
# nothing is reused. And the op must not save its input, and its NumPy
# function must give the input's dtype.
cdef Py_ssize_t _TEMP_CALL_REFS = 3

cdef extern from *:
    """
    #if defined(__GLIBC__) && !defined(OXMERA_NO_STACK_CHECK)
    #include <execinfo.h>
    #include <dlfcn.h>
    #include <link.h>
    #include <string.h>
    /* Is the nearest caller outside this module the interpreter's frame
       evaluation? (PyObject_Vectorcall and _PyObject_MakeTpCall, which only
       forward a call, the latter packing its arguments in a tuple, may sit
       between.)
       Each address must lie inside the exported symbol dladdr names, by the
       symbol's size: a static function placed after an exported one would
       otherwise be taken for it. */
    static int oxm_called_from_eval_loop(void) {
        void *frames[24];
        Dl_info self, info;
        const ElfW(Sym) *sym = NULL;
        int n = backtrace(frames, 24);
        if (!dladdr((void *)&oxm_called_from_eval_loop, &self)) return 0;
        for (int i = 1; i < n; i++) {
            uintptr_t at = (uintptr_t)frames[i] - 1;   /* inside the call instruction */
            if (!dladdr1((void *)at, &info, (void **)&sym, RTLD_DL_SYMENT)) return 0;
            if (info.dli_fbase == self.dli_fbase) continue;
            if (sym == NULL || info.dli_sname == NULL || info.dli_saddr == NULL) return 0;
            if (at < (uintptr_t)info.dli_saddr
                    || at >= (uintptr_t)info.dli_saddr + sym->st_size) return 0;
            if (strcmp(info.dli_sname, "_PyEval_EvalFrameDefault") == 0) return 1;
            if (strcmp(info.dli_sname, "PyObject_Vectorcall") == 0
                    || strcmp(info.dli_sname, "_PyObject_MakeTpCall") == 0) continue;
            return 0;
        }
        return 0;
    }
    #else
    static int oxm_called_from_eval_loop(void) { return 0; }
    #endif
    """
    bint _called_from_eval_loop "oxm_called_from_eval_loop"() noexcept


def called_from_eval_loop():
    """Whether this function's caller is the interpreter's frame evaluation
    (for tests of the check one-input ops reuse temporaries by)."""
    return _called_from_eval_loop()


cdef object _unary_temporary_out(OpDef op, tuple args):
    """The array of ``args[0]`` a one-input op may write its result into, or None."""
    if not _TEMPORARIES_REUSABLE or op.view:
        return None
    v = args[0]
    arr = _temporary_array(v, _TEMP_CALL_REFS)
    if arr is None or cnp.PyArray_NBYTES(<cnp.ndarray>arr) < _REUSE_MIN_BYTES:
        return None
    if op.save_mask is None or op.save_mask[0] is not False:
        return None
    try:
        dtypes = op.numpy_forward.resolve_dtypes(((<cnp.ndarray>arr).dtype, None))
    except (AttributeError, TypeError, ValueError):
        return None             # not a ufunc of one input and output, or no loop
    if len(dtypes) != 2 or dtypes[0] != dtypes[1] or dtypes[1] != (<cnp.ndarray>arr).dtype:
        return None
    if not _called_from_eval_loop():
        return None
    return arr


cdef bint _called_by_operator() except -1:
    # Is the current Python frame executing a binary-operator instruction?
    cdef PyFrameObject* frame = PyEval_GetFrame()
    if frame == NULL:
        return False
    f = <object><PyObject*>frame
    lasti = f.f_lasti
    code = f.f_code.co_code
    return 0 <= lasti < len(code) and code[lasti] in _BINARY_OPCODES


cdef bint _writes_into(cnp.ndarray reuse, tuple fargs, Py_ssize_t n) except -1:
    # After dtype promotion: the temporary is still an input, every array
    # input has its dtype and the rest are Python numbers, so the ufunc's
    # result has its dtype (and, checked before, its shape).
    cdef Py_ssize_t i
    cdef bint found = False
    for i in range(n):
        v = fargs[i]
        if v is reuse:
            found = True
        elif cnp.PyArray_Check(v):
            if cnp.PyArray_TYPE(<cnp.ndarray>v) != cnp.PyArray_TYPE(reuse):
                return False
        elif not _is_python_scalar(v):
            return False
    return found


def install_tensor_attributes(dict attributes not None):
    """Set ``Tensor.<name> = value`` for each item (methods, operators, properties).

    The type is immutable to users; it is opened only for this call, so the
    ops package can add the methods of the ops it defines while the core
    stays free of any op. An arithmetic operator given as a wrapper of an op
    (a callable with an ``op`` attribute holding its OpDef, as
    ``oxmera.extend`` makes them) is not set as a Python method: the C slot
    above runs that op directly.
    """
    cdef PyTypeObject* tp = <PyTypeObject*>Tensor
    tp.tp_flags &= ~Py_TPFLAGS_IMMUTABLETYPE
    try:
        for name, value in attributes.items():
            slot = _SLOT_NAMES.get(name)
            if slot is not None and isinstance(getattr(value, "op", None), OpDef):
                _slot_ops[slot] = value.op
                continue
            setattr(Tensor, name, value)
    finally:
        tp.tp_flags |= Py_TPFLAGS_IMMUTABLETYPE
        PyType_Modified(tp)


def set_values_formatter(formatter):
    """Make ``formatter(array, prefix) -> str`` write the values part of ``repr(tensor)``.

    ``prefix`` is the text before the values (``"tensor("``), for aligning
    continuation lines. None restores the built-in NumPy formatting.
    """
    global _values_formatter
    if formatter is not None and not callable(formatter):
        raise TypeError(f"set_values_formatter(): expected a callable or None, got "
                        f"{type(formatter).__name__}")
    _values_formatter = formatter


# The ops the engine itself needs, handed over by oxmera.ops (set_engine_ops).
cdef object _sum_to_op = None
cdef object _cast_op = None
cdef object _add_op = None


def set_engine_ops(sum_to, cast, add):
    """Give the engine the differentiable ops it applies to gradients.

    ``sum_to(grad, shape)`` sums a broadcast gradient back to an input's
    shape, ``cast(grad, dtype)`` converts it to the input's dtype, and
    ``add(a, b)`` accumulates gradients when the backward is recorded.
    """
    global _sum_to_op, _cast_op, _add_op
    _sum_to_op, _cast_op, _add_op = sum_to, cast, add


# ---------------------------------------------------------------------------
# Applying an op: forward, then (maybe) record its node.
# ---------------------------------------------------------------------------

cdef inline bint _is_python_scalar(object v):
    return isinstance(v, (float, int))      # bool is an int


cdef object _op_error(OpDef op, object err, list values):
    shapes = ", ".join(str(v._data.shape if isinstance(v, Tensor) else np.shape(v)) for v in values
                       if v is not None)
    return OpError(f"{op.name}(): {err} (input shapes: {shapes})")


def apply_op(OpDef op not None, tuple args not None, dict kwargs):
    """Run ``op`` on ``args``: its NumPy forward, and its node when recording.

    ``op.n_inputs`` leading positional arguments are the op's tensor inputs
    (``-1``: the first argument is a sequence of them); they reach the forward
    as arrays (Python scalars stay scalars), the rest as given. A node is
    recorded when grad mode is on, the op is differentiable and any input
    requires grad.
    """
    return _apply_op(op, args, kwargs, None)


def op_function(OpDef op not None):
    """The function that runs ``op``: ``f(*args, **kwargs)`` is ``apply_op(op, args, kwargs)``.

    Compiled, so an op call (``oxmera.sin(x)``, ``x.sin()``, and every op a
    VJP calls) runs no Python frame of its own: a function written in Python
    cost ~0.1 us an op. It is a method descriptor, as Python functions are,
    so installed on Tensor it binds like one (``x.sin()`` passes ``x``
    first). ``oxmera.extend.op`` names it and gives it the forward's
    docstring and signature (``__wrapped__``).
    """
    def public(*args, **kwargs):
        reuse = None
        if (op.n_inputs == 1 and op.numpy_forward is not None and not kwargs
                and len(args) == 1):
            reuse = _unary_temporary_out(op, args)
        return _apply_op(op, args, kwargs if kwargs else None, reuse)
    return public


def op_operator(OpDef op not None, str kind not None):
    """A Tensor operator method running ``op``: ``kind`` is ``"unary"`` (``op(self)``),
    ``"binary"`` (``op(self, other)``) or ``"reflected"`` (``op(other, self)``).

    For the operators without a C slot of their own here (``**``, ``%``,
    comparisons, ``abs``...): compiled, as :func:`op_function`.
    """
    if kind == "unary":
        def unary(self):
            return _apply_op(op, (self,), None, None)
        return unary
    if kind == "binary":
        def binary(self, other):
            return _apply_op(op, (self, other), None, None)
        return binary
    if kind == "reflected":
        def reflected(self, other):
            return _apply_op(op, (other, self), None, None)
        return reflected
    raise ValueError(f"op_operator(): kind must be 'unary', 'binary' or 'reflected', "
                     f"got {kind!r}")


cdef object _apply_op(OpDef op, tuple args, dict kwargs, object reuse):
    # ``reuse``: the array of an unreferenced temporary input the forward may
    # write its result into (_temporary_out), or None.
    cdef Py_ssize_t n = op.n_inputs
    cdef Py_ssize_t i, nargs
    cdef int num
    cdef bint recording = False, any_array = False, any_raw = False
    cdef tuple fargs, arrays
    cdef Tensor t
    if _n_tracing and oxmera_get_tracer() != NULL:     # (a C global when no VJP is traced)
        return _traced_op(op, args, kwargs)
    if OXMERA_PROFILER_COMPILED and _profiler is not None:  # the profiler's cost when off
        return _profiled_op(op, args, kwargs)
    if op.forward is None:
        raise TypeError("apply_op(): this OpDef was not built (OpDef.__new__ from Python); "
                        "define ops with oxmera.extend.op")
    if n < 0:
        return _apply_sequence_op(op, args, kwargs)
    nargs = len(args)
    if nargs < n:
        args = _inputs_from_kwargs(op, args, kwargs)
        nargs = n
        if kwargs is not None:
            kwargs = {k: v for k, v in kwargs.items() if k not in op.input_names}
    # The forward's arguments: the call's, with arrays in the tensor slots.
    # Built in place (this replaces ``tuple(arrays) + args[n:]``: one
    # allocation instead of three on every op call).
    fargs = PyTuple_New(nargs)
    for i in range(nargs):
        v = args[i]
        if i < n:
            if isinstance(v, Tensor):
                t = <Tensor>v
                if t._links is not None:
                    _refresh_view(t)
                v = t._data
                any_array = True
                if t._meta is not None and t._meta.requires_grad:
                    recording = True
            elif _is_np_scalar(v):
                # NumPy scalars act like Python numbers (numpy.float64 even
                # subclasses float): they must not upcast a float32 tensor.
                v = v.item()
            elif _is_ndarray(v):
                if type(v) is not ndarray:
                    v = _base_ndarray(v)        # np.matrix, memmap...: see _base_ndarray
                num = cnp.PyArray_TYPE(<cnp.ndarray>v)
                if not (cnp.PyTypeNum_ISBOOL(num) or cnp.PyTypeNum_ISINTEGER(num)
                        or cnp.PyTypeNum_ISFLOAT(num) or cnp.PyTypeNum_ISCOMPLEX(num)):
                    raise TypeError(f"{op.name}(): unsupported dtype {(<object>v).dtype}")
                any_array = True
                any_raw = True
            elif v is not None and not _is_python_scalar(v):
                handler = getattr(type(v), "__oxmera_function__", None)
                if handler is not None:
                    # A tensor-like that is not a Tensor (a sparse tensor)
                    # runs the op itself or refuses it by name; the hot path
                    # (Tensors, arrays, numbers) never reaches this test.
                    return handler(op, args, kwargs)
                v = as_array(v)
                any_array = True
                any_raw = True
        Py_INCREF(v)
        PyTuple_SET_ITEM(fargs, i, v)
    if n and not any_array:
        fargs = _numbers_to_arrays(fargs, n)
    arrays = fargs                          # the inputs as arrays, before any promotion
    out = None
    if op.unit is not None and n == 3 and oxmera_get_grad_off() == _OFF_IN_BACKWARD:
        out = _unit_results(op, fargs)      # (a product of two: _binary_slot's)
    if out is None:
        out = _forward(op, fargs, nargs, kwargs, reuse, args)

    if recording and not (op.differentiable and grad_enabled()):
        # Cut from the graph although an input requires grad: say why, for
        # explain() (the rare path; the common one stays a flag test).
        recording = False
        origin = (("no_grad" if op.differentiable else "non-differentiable"), op.name)
    else:
        origin = None
    if recording and any_raw:
        values = _tensor_inputs(args, arrays, n)
    else:
        values = args
    if type(out) is tuple:
        outputs = tuple([_output_tensor(o) for o in out])
        if recording:
            _record(op, values, n, args, kwargs, outputs, False)
        if op.view and n:
            _share_counters(args[0], outputs, op, args, kwargs)
        if origin is not None:
            for o in outputs:
                _set_links(<Tensor>o, _view_info(<Tensor>o), origin)
        if op.output_type is not None:
            return op.output_type(*outputs)
        return outputs
    if type(out) is not ndarray:
        out = _np_asarray(out)
    t = Tensor.__new__(Tensor)
    t._data = out
    if op.view and n and isinstance(args[0], Tensor) and _is_view_of(out, fargs[0]):
        t._version_counter = _counter_of(<Tensor>args[0])
        _set_links(t, _view_entry(<Tensor>args[0], op, args, kwargs), None)
        if _memory_locks:
            _adopt(out, fargs[0])
    if recording:
        _record(op, values, n, args, kwargs, (t,), False)
    elif origin is not None:
        _set_links(t, _view_info(t), origin)
    return t


# -- NumPy's own loops on small float arrays, without the ufunc's dispatch ---------
#
# On 16 elements a NumPy ufunc call costs ~4,300 instructions, of which the
# loop is ~50-1,000: the rest is dispatch (argument parsing, override checks,
# dtype resolution, loop selection, the output's wrap). For an op whose
# forward is a ufunc (``numpy_forward``: add, multiply, tanh, sin ...) and
# operands that need none of that (small float32/float64 arrays of one dtype
# and shape, each C-contiguous or one value broadcast, or such an array and a
# Python number), _small_ufunc calls the very loop NumPy's dispatch would
# pick: the first of the ufunc's loops whose types are exactly the operands'
# (``ufunc.types``, NumPy's legacy loop selection, which is how NumPy finds
# the loops of its float math), with the same pointers and steps, into a new
# C-contiguous array. The same code on the same data: the same bits.
#
# NumPy reports a division by zero, overflow, underflow or invalid operation
# after its loop, as its errstate says (a warning by default). Here the loop
# runs with those flags cleared, and if it raised any the result is dropped
# and NumPy's call runs instead, which computes the same values and reports
# them as NumPy does.

cdef extern from *:
    """
    #include <fenv.h>
    #define OXMERA_LOOP_FLAGS (FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW | FE_INVALID)
    typedef void (*oxmera_inner_loop)(char **, npy_intp const *, npy_intp const *, void *);

    /* The flags NumPy's float32/float64 loops can raise. On x86-64 they run on
       SSE/AVX, whose flags are MXCSR's low bits (the FE_ values are those
       bits): read and cleared there, where glibc's fetestexcept also reads the
       x87 status word and its feclearexcept rewrites the whole x87 environment
       (fnstenv/fldenv): ~5 % of a small op's time. Elsewhere, <fenv.h>. */
    #if defined(__x86_64__) && defined(__SSE2__)
    #include <xmmintrin.h>
    static inline int oxmera_loop_flags(void) {
        return (_mm_getcsr() & OXMERA_LOOP_FLAGS) != 0;
    }
    static inline void oxmera_clear_loop_flags(void) {
        unsigned int csr = _mm_getcsr();
        if (csr & OXMERA_LOOP_FLAGS)
            _mm_setcsr(csr & ~(unsigned int)OXMERA_LOOP_FLAGS);
    }
    #else
    static inline int oxmera_loop_flags(void) {
        return fetestexcept(OXMERA_LOOP_FLAGS) != 0;
    }
    static inline void oxmera_clear_loop_flags(void) {
        if (fetestexcept(OXMERA_LOOP_FLAGS))
            feclearexcept(OXMERA_LOOP_FLAGS);
    }
    #endif

    /* Run a ufunc's inner loop over n elements; nonzero when it raised a flag
       NumPy reports. (The results are stored before the flags are read: the
       loop is a call through a pointer, opaque to the compiler.) */
    static int oxmera_run_loop(void *loop, char **args, npy_intp n, npy_intp *steps,
                               void *data) {
        npy_intp dims[1];
        dims[0] = n;
        oxmera_clear_loop_flags();
        ((oxmera_inner_loop)loop)(args, dims, steps, data);
        return oxmera_loop_flags();
    }

    /* A Python float rounded to float32 as NumPy rounds a weak scalar; nonzero
       when that raised a flag (overflow to inf, underflow), which NumPy reports. */
    static int oxmera_to_float32(double value, float *out) {
        volatile double v = value;      /* converted at run time, flags and all */
        oxmera_clear_loop_flags();
        *out = (float)v;
        return oxmera_loop_flags();
    }
    """
    int oxmera_run_loop(void *loop, char **args, cnp.npy_intp n, cnp.npy_intp *steps,
                        void *data) noexcept
    int oxmera_to_float32(double value, float *out) noexcept


cdef extern from "_ufunc_table.h":
    # A ufunc's loop table (the header is shared with _kernels.pyx).
    int oxmera_ufunc_loop(object u, int typenum) noexcept
    int oxmera_ufunc_nin(object u) noexcept
    void *oxmera_ufunc_function(object u, int i) noexcept
    void *oxmera_ufunc_data(object u, int i) noexcept

cnp.import_ufunc()


# The largest array _small_ufunc takes: past it NumPy's dispatch is a small
# part of the call (and NumPy releases the GIL around its loop).
cdef enum:
    _SMALL_UFUNC_SIZE = 4096


cdef int _ufunc_loop(object ufunc, int typenum) noexcept:
    # The index of ``ufunc``'s loop NumPy runs when every operand is of
    # ``typenum``: the first whose types all are (NumPy's legacy selection),
    # or -1 (none, or not a ufunc of one or two inputs and one output).
    if type(ufunc) is not cnp.ufunc:
        return -1
    return oxmera_ufunc_loop(ufunc, typenum)


cdef int _add_loop64 = _ufunc_loop(np.add, cnp.NPY_DOUBLE) + 1     # (as OpDef.loop64)
cdef int _add_loop32 = _ufunc_loop(np.add, cnp.NPY_FLOAT) + 1


cdef inline int _loop_operand(object v, int *full) noexcept:
    # The dtype number of ``v`` when a loop can read it as it is, else -1:
    # an exact, small, aligned, native float32 or float64 ndarray, C-contiguous
    # (``full`` set to 1) or one value broadcast, all its strides 0 (``full``
    # 0: a sum's gradient, expanded from a 0-d one).
    cdef cnp.ndarray a
    cdef int num, d
    if type(v) is not ndarray:
        return -1
    a = <cnp.ndarray>v
    num = cnp.PyArray_TYPE(a)
    if num != cnp.NPY_DOUBLE and num != cnp.NPY_FLOAT:
        return -1
    if (not cnp.PyArray_ISALIGNED(a) or not cnp.PyArray_ISNOTSWAPPED(a)
            or cnp.PyArray_SIZE(a) > _SMALL_UFUNC_SIZE):
        return -1
    if cnp.PyArray_IS_C_CONTIGUOUS(a):
        full[0] = 1
        return num
    for d in range(cnp.PyArray_NDIM(a)):
        if cnp.PyArray_STRIDES(a)[d] != 0:
            return -1
    full[0] = 0
    return num


cdef inline bint _loop_number(object v, double *value) noexcept:
    # A Python float, or an int that every float dtype holds exactly (|v| <=
    # 2**24): what NumPy rounds to the array's dtype (a weak scalar).
    cdef long long i
    cdef int overflow = 0
    if type(v) is float:
        value[0] = PyFloat_AS_DOUBLE(v)
        return True
    if type(v) is int:
        i = PyLong_AsLongLongAndOverflow(v, &overflow)
        if overflow or i > 16777216 or i < -16777216:
            return False
        value[0] = <double>i
        return True
    return False


cdef inline bint _number_arg(object v, int num, double *d, float *f, char **arg) noexcept:
    # A Python number as a loop operand of dtype ``num`` (read at stride 0),
    # kept in ``d`` or ``f``: False when ``v`` is no such number, or rounding
    # it to float32 raised a flag (NumPy's call then reports it).
    if not _loop_number(v, d):
        return False
    if num == cnp.NPY_FLOAT:
        if oxmera_to_float32(d[0], f):
            return False
        arg[0] = <char *>f
    else:
        arg[0] = <char *>d
    return True


cdef object _small_ufunc(object ufunc, int loop64, int loop32, object a, object b):
    """``ufunc(a)`` or ``ufunc(a, b)`` by NumPy's own loop (``loop64``/``loop32``:
    1 + its index for float64/float32, see _ufunc_loop; 0: none), or None.

    It runs when the operands are small float arrays of one dtype and shape,
    each C-contiguous or one value broadcast (see _loop_operand), or one is
    such an array and the other a 0-d array of its dtype or a Python number;
    None otherwise, and when the loop raised a floating-point flag, which
    NumPy's call then reports.
    """
    cdef int nin = oxmera_ufunc_nin(ufunc)
    cdef int ta, tb, num, loop, k
    cdef int a_full = 1, b_full = 1     # (a number is not full: set below)
    cdef double sb = 0.0
    cdef float fb = 0.0
    cdef cnp.ndarray shape_of
    cdef char *args[3]
    cdef cnp.npy_intp steps[3]
    cdef cnp.npy_intp n, size
    ta = _loop_operand(a, &a_full)
    if nin == 1:
        if ta < 0:
            return None
        num = ta
        shape_of = <cnp.ndarray>a
        args[0] = <char *>cnp.PyArray_DATA(shape_of)
    else:
        tb = _loop_operand(b, &b_full)
        if ta >= 0 and tb >= 0:
            if ta != tb:
                return None
            if _same_dims(<cnp.ndarray>a, <cnp.ndarray>b):
                shape_of = <cnp.ndarray>a
            elif cnp.PyArray_NDIM(<cnp.ndarray>b) == 0:
                shape_of = <cnp.ndarray>a       # a 0-d array broadcasts as one value
                b_full = 0
            elif cnp.PyArray_NDIM(<cnp.ndarray>a) == 0:
                shape_of = <cnp.ndarray>b
                a_full = 0
            else:
                return None
            num = ta
            args[0] = <char *>cnp.PyArray_DATA(<cnp.ndarray>a)
            args[1] = <char *>cnp.PyArray_DATA(<cnp.ndarray>b)
        elif ta >= 0 or tb >= 0:
            # One array (at ``k``) and one Python number, read at stride 0.
            k = 0 if ta >= 0 else 1
            num = ta if k == 0 else tb
            shape_of = <cnp.ndarray>(a if k == 0 else b)
            args[k] = <char *>cnp.PyArray_DATA(shape_of)
            if k == 0:
                b_full = 0
            else:
                a_full = 0
            if not _number_arg(b if k == 0 else a, num, &sb, &fb, &args[1 - k]):
                return None
        else:
            return None
    loop = (loop64 if num == cnp.NPY_DOUBLE else loop32) - 1
    if loop < 0:
        return None
    size = 8 if num == cnp.NPY_DOUBLE else 4
    out = cnp.PyArray_EMPTY(cnp.PyArray_NDIM(shape_of), cnp.PyArray_DIMS(shape_of), num, 0)
    n = cnp.PyArray_SIZE(shape_of)
    if n == 0:
        return out          # (NumPy runs no loop on nothing, and reads no element)
    steps[0] = size if a_full else 0
    steps[1] = size if b_full else 0
    steps[nin] = size
    args[nin] = <char *>cnp.PyArray_DATA(<cnp.ndarray>out)
    if oxmera_run_loop(oxmera_ufunc_function(ufunc, loop), args, n, steps,
                       oxmera_ufunc_data(ufunc, loop)):
        return None
    return out


def add_reduce_all(x):
    """``np.add.reduce(x, None)``, the sum of all elements (as a 0-d array).

    A small C-contiguous float32/float64 array is summed by NumPy's own add
    loop, called as NumPy's reduction calls it (the result starts at add's
    identity, 0, and the loop adds the elements to it, pairwise), without the
    reduction's dispatch: the same bits. Anything else, and a sum that raised
    a floating-point flag, is NumPy's call.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._core.autograd import add_reduce_all
    >>> add_reduce_all(np.array([1.0, 2.0, 3.5]))
    array(6.5)
    """
    cdef int full = 1, num
    cdef int loop
    cdef char *args[3]
    cdef cnp.npy_intp steps[3]
    num = _loop_operand(x, &full)
    if num >= 0 and full and cnp.PyArray_SIZE(<cnp.ndarray>x) > 0:
        loop = (_add_loop64 if num == cnp.NPY_DOUBLE else _add_loop32) - 1
        if loop >= 0:
            out = cnp.PyArray_ZEROS(0, NULL, num, 0)    # add's identity, +0.0
            args[0] = args[2] = <char *>cnp.PyArray_DATA(<cnp.ndarray>out)
            args[1] = <char *>cnp.PyArray_DATA(<cnp.ndarray>x)
            steps[0] = steps[2] = 0
            steps[1] = cnp.PyArray_ITEMSIZE(<cnp.ndarray>x)
            if not oxmera_run_loop(oxmera_ufunc_function(_np_add, loop), args,
                                   cnp.PyArray_SIZE(<cnp.ndarray>x), steps,
                                   oxmera_ufunc_data(_np_add, loop)):
                return out
    return _np_add_reduce(x, None)


def _small_ufunc_for_tests(ufunc, a, b=None):
    """_small_ufunc for tests: ``ufunc`` on ``a`` (and ``b``) by NumPy's own loop,
    or None where that does not apply."""
    if type(ufunc) is not cnp.ufunc:
        return None         # (_small_ufunc reads a ufunc's fields: its callers pass one)
    return _small_ufunc(ufunc, _ufunc_loop(ufunc, cnp.NPY_DOUBLE) + 1,
                        _ufunc_loop(ufunc, cnp.NPY_FLOAT) + 1, a, b)


cdef inline bint _same_dims(cnp.ndarray a, cnp.ndarray b) noexcept:
    cdef int nd = cnp.PyArray_NDIM(a)
    return (nd == cnp.PyArray_NDIM(b)
            and memcmp(cnp.PyArray_DIMS(a), cnp.PyArray_DIMS(b), nd * sizeof(cnp.npy_intp)) == 0)


cdef tuple _numbers_to_arrays(tuple fargs, Py_ssize_t n):
    # Only Python numbers for the tensor inputs: they make a tensor by the §2 dtype rules.
    return tuple([v if v is None else as_array(v) for v in fargs[:n]]) + fargs[n:]


cdef object _forward(OpDef op, tuple fargs, Py_ssize_t nargs, dict kwargs, object reuse,
                     tuple args):
    # The op's forward on ``fargs`` (arrays in the tensor slots): dtype
    # promotion, then the NumPy call or the forward (``reuse``: an array the
    # result may be written into; ``args``: the call's, for error messages).
    cdef Py_ssize_t n = op.n_inputs
    if n and _needs_prepare(op, fargs, n):
        weak = (_weak_zero_dims(fargs, n) if op.promotes and op.numpy_forward is not None
                and nargs == n and not kwargs else None)
        if weak is not None:
            fargs = weak
        else:
            slots = op.prepare(list(fargs[:n]))
            if type(slots) is not list or len(slots) != n:
                raise TypeError(f"{op.name}(): its prepare step returned "
                                f"{type(slots).__name__} for {n} inputs; expected a list of {n}")
            fargs = tuple(slots) + fargs[n:]
    if op.loop64 and reuse is None and nargs == n and not kwargs:
        out = _small_ufunc(op.numpy_forward, op.loop64, op.loop32, fargs[0],
                           fargs[1] if n == 2 else None)
        if out is not None:
            return out
    if op.quiet:
        # PyTorch never warns about inf/nan results; NumPy would. This is
        # np.errstate(all="ignore") at a tenth of its cost (~2 us).
        token = _extobj_var.set(_quiet_extobj)
    try:
        if kwargs:
            out = op.forward(*fargs, **kwargs)
        elif nargs == n and op.numpy_forward is not None:
            # The forward is exactly this NumPy call: one Python frame less.
            if reuse is not None and _writes_into(reuse, fargs, n):
                out = op.numpy_forward(*fargs, out=reuse)
            else:
                out = op.numpy_forward(*fargs)
        else:
            out = op.forward(*fargs)
    except ValueError as err:
        if isinstance(err, OpError):
            raise
        raise _op_error(op, err, list(args[:n])) from None
    finally:
        if op.quiet:
            _extobj_var.reset(token)
    return out


cdef tuple _tensor_inputs(tuple args, tuple arrays, Py_ssize_t n):
    # The call's tensor inputs as the node keeps them: an array or list given
    # for a tensor input becomes a Tensor (of the array the forward got), so
    # every VJP receives Tensors (x @ np.ones(2) included) and the node locks
    # the array like any saved tensor. Python numbers stay numbers here (the
    # VJP gets them as 0-d tensors: _vjp_args).
    cdef Py_ssize_t i
    cdef list values = list(args[:n])
    for i in range(n):
        v = values[i]
        if v is not None and not isinstance(v, Tensor) and not _is_python_scalar(v) \
                and not _is_np_scalar(v):
            values[i] = wrap_array(arrays[i])
    return tuple(values)


def record_function(OpDef op not None, tuple inputs not None, tuple outputs not None,
                    tuple extra not None):
    """Record the node of a custom Function call (``oxmera.autograd.Function``).

    ``inputs`` are the call's tensors, ``outputs`` the tensors its forward
    returned (fresh, without history); the node keeps none of the inputs
    (the Function saves what it needs on its ctx) and passes ``extra`` to
    the op's VJP after one ``None`` per input.
    """
    if op.forward is None or op.n_inputs != 0 or op.save_mask is not None:
        raise TypeError(f"record_function(): {op!r} is not a custom Function's op (those are "
                        f"built with no tensor inputs and no save mask)")
    for i in inputs:
        if not isinstance(i, Tensor):
            raise TypeError(f"{op.name}: inputs must be Tensors, got {type(i).__name__}")
    for o in outputs:
        if not isinstance(o, Tensor) or (<Tensor>o)._meta is not None:
            raise TypeError(f"{op.name}: outputs must be new tensors without history")
    _record(op, inputs, len(inputs), (None,) * len(inputs) + extra, None, outputs, False)


# A node's edges (GradFn.next_fns): a tuple, or for one input the edge
# itself, which saves a 56-byte tuple on every unary node (most of a deep
# graph); for two inputs of which one has no edge (``x * 0.5``, ``x + b``
# with ``b`` needing no gradient) the other edge itself, with its index in
# GradFn.layout. Its args likewise: the one argument bare, or the one not
# None of two, or a shared tuple when all are None.
cdef tuple _NO_EDGE = (None,)
cdef tuple _NONES = tuple([(None,) * k for k in range(5)])   # shared all-None args
for _nones in _NONES:
    PyObject_GC_UnTrack(<PyObject*>_nones)
del _nones

cdef enum:
    _SCALAR_INPUTS = 1      # a saved input is a number or packed: args via _vjp_args
    _PAIR_EDGE = 2          # next_fns: the one edge of two inputs, bare...
    _PAIR_EDGE_1 = 4        # ...of input 1 (else of input 0)
    _PAIR_ARG = 8           # args: the one argument not None of two, bare...
    _PAIR_ARG_1 = 16        # ...in position 1 (else 0)
    _RELEASED = 32          # saved values freed by a backward without retain_graph
    _LOCKED = 64            # it locked saved memory read-only (released with the values)
    _FREES_SAVED = 128      # set before each VJP: the backward frees the saved values after it


cdef inline Py_ssize_t _saved_version(GradFn node, Py_ssize_t i):
    # The version saved input ``i`` had when the node was recorded.
    aux = node.aux
    return <Py_ssize_t>(<tuple>aux)[i] if type(aux) is tuple else 0


cdef inline unsigned int _output_version(GradFn node):
    # The version the saved output had (modulo 2**32, as PyTorch's); the last of aux.
    aux = node.aux
    return <unsigned int>(<tuple>aux)[len(<tuple>aux) - 1] if type(aux) is tuple else 0


cdef inline Py_ssize_t _num_outputs(GradFn node):
    # How many outputs the op gave (beyond the field's range: out_info has one pair each).
    if node.n_outputs != 0xFFFF:
        return node.n_outputs
    return len(<tuple>node.out_info)


cdef inline void _set_bit(GradFn node, unsigned char bit, bint on) noexcept:
    node.layout = (node.layout | bit) if on else (node.layout & ~bit)


cdef inline Py_ssize_t _n_edges(GradFn node) noexcept:
    fns = node.next_fns
    if type(fns) is tuple:
        return len(<tuple>fns)
    return 2 if node.layout & _PAIR_EDGE else 1


cdef inline object _pick(object held, Py_ssize_t i, unsigned char layout, unsigned char pair,
                         unsigned char second):
    # Item ``i`` of a node's edges or args: of the tuple, or the bare item
    # (of a pair when ``layout`` has ``pair``, at 1 when it has ``second``).
    if type(held) is tuple:
        return (<tuple>held)[i]
    if layout & pair and (i != 0) != ((layout & second) != 0):
        return None
    return held


cdef inline object _edge(GradFn node, Py_ssize_t i):
    return _pick(node.next_fns, i, node.layout, _PAIR_EDGE, _PAIR_EDGE_1)


cdef inline tuple _args_of(GradFn node):
    # GradFn.args as a tuple (a new one when the node keeps an argument bare).
    args = node.args
    if type(args) is tuple:
        return <tuple>args
    if node.layout & _PAIR_ARG:
        return (None, args) if node.layout & _PAIR_ARG_1 else (args, None)
    return (args,)


cdef inline object _arg_at(GradFn node, Py_ssize_t i):
    # GradFn.args[i] without building the tuple.
    return _pick(node.args, i, node.layout, _PAIR_ARG, _PAIR_ARG_1)


cdef inline bint _keeps(object mask_entry, GradFn node):
    # A save-mask entry: True/False, or the inputs whose gradient needs this
    # input (mul keeps x only if y needs a gradient): kept if any of them does.
    if type(mask_entry) is not tuple:
        return mask_entry
    for j in mask_entry:
        if _edge(node, <Py_ssize_t>j) is not None:
            return True
    return False


cdef int _set_edges(GradFn node, tuple edges) except -1:
    # GradFn.next_fns from the tuple of edges, compacted as described above.
    cdef Py_ssize_t n = len(edges)
    node.layout &= ~(_PAIR_EDGE | _PAIR_EDGE_1)
    if n == 2 and (edges[0] is None) != (edges[1] is None):
        if edges[0] is None:
            node.next_fns = edges[1]
            node.layout |= _PAIR_EDGE | _PAIR_EDGE_1
        else:
            node.next_fns = edges[0]
            node.layout |= _PAIR_EDGE
    elif n == 1:
        node.next_fns = _NO_EDGE if edges[0] is None else edges[0]
    else:
        node.next_fns = edges
        _own_untracked(edges)
    return 0


cdef int _set_args(GradFn node, tuple args) except -1:
    # GradFn.args from the tuple of arguments, compacted as described above.
    # ``args`` must be the caller's own (a tuple shared with anyone else is
    # left visible to the collector by _own_untracked).
    cdef Py_ssize_t k, n = len(args)
    node.layout &= ~(_PAIR_ARG | _PAIR_ARG_1)
    if n == 1 and args[0] is not None and type(args[0]) is not tuple:
        node.args = args[0]
        return 0
    if n == 2 and (args[0] is None) != (args[1] is None):
        k = 0 if args[1] is None else 1
        if type(args[k]) is not tuple:
            node.args = args[k]
            node.layout |= _PAIR_ARG | (_PAIR_ARG_1 if k else 0)
            return 0
    if n < len(_NONES):
        for k in range(n):
            if args[k] is not None:
                break
        else:
            node.args = _NONES[n]
            return 0
    node.args = args
    _own_untracked(args)
    return 0


# Output (shape, dtype) pairs recorded in nodes, shared: a deep graph of one
# shape then holds one pair instead of one per node. Bounded, so odd shapes
# cannot grow it.
cdef dict _out_infos = {}


# The pairs of the last two distinct outputs recorded, with their descriptors
# and dims as C values: a run of ops of one shape (most of a graph) then finds
# its pair without building a shape tuple or looking the dict up, and so does
# a step that alternates two shapes (a loss reduced to 0-d after each batch).
cdef object _last_out_info = None
cdef void* _last_descr = NULL
cdef int _last_nd = -1
cdef cnp.npy_intp _last_dims[8]
cdef object _prev_out_info = None
cdef void* _prev_descr = NULL
cdef int _prev_nd = -1
cdef cnp.npy_intp _prev_dims[8]


cdef object _out_info_of(object array):
    """The interned ``(shape, dtype)`` of an output array."""
    cdef cnp.ndarray arr
    cdef int nd
    global _last_out_info, _last_descr, _last_nd, _prev_out_info, _prev_descr, _prev_nd
    if not cnp.PyArray_Check(array):
        return _intern_out_info(array.shape, array.dtype)
    arr = <cnp.ndarray>array
    nd = cnp.PyArray_NDIM(arr)
    if (<void*>cnp.PyArray_DESCR(arr) == _last_descr and nd == _last_nd
            and memcmp(cnp.PyArray_DIMS(arr), _last_dims, nd * sizeof(cnp.npy_intp)) == 0):
        return _last_out_info
    if (<void*>cnp.PyArray_DESCR(arr) == _prev_descr and nd == _prev_nd
            and memcmp(cnp.PyArray_DIMS(arr), _prev_dims, nd * sizeof(cnp.npy_intp)) == 0):
        return _prev_out_info
    info = _intern_out_info(array.shape, array.dtype)
    if nd <= 8:
        # The last becomes the previous (its pair holds its dtype: the
        # pointer stays valid), this one the last.
        memcpy(_prev_dims, _last_dims, sizeof(_last_dims))
        _prev_nd = _last_nd
        _prev_descr = _last_descr
        _prev_out_info = _last_out_info
        memcpy(_last_dims, cnp.PyArray_DIMS(arr), nd * sizeof(cnp.npy_intp))
        _last_nd = nd
        _last_descr = <void*>cnp.PyArray_DESCR(arr)
        _last_out_info = info       # holds the dtype: the pointer above stays valid
    return info


cdef inline bint _is_inexact(object array):
    # dtype.kind in "fc", read in C for an ndarray
    cdef int num
    if cnp.PyArray_Check(array):
        num = cnp.PyArray_TYPE(<cnp.ndarray>array)
        return cnp.PyTypeNum_ISFLOAT(num) or cnp.PyTypeNum_ISCOMPLEX(num)
    return array.dtype.kind in "fc"


cdef object _intern_out_info(object shape, object dtype):
    info = (shape, dtype)
    found = _out_infos.get(info)
    if found is not None:
        return found
    if len(_out_infos) < 4096:
        _out_infos[info] = info
    return info


cdef tuple _view_entry(Tensor source, OpDef op, tuple args, dict kwargs):
    # The base owning the memory, the view ops from it to the new view, and
    # the memory's version when the view's history was made (see _refresh_view).
    # No kwargs is None, not {}: a view whose steps hold no dict can be sealed.
    step = (op, args[1:], kwargs if kwargs else None)
    view = _view_info(source)
    version = 0 if source._version_counter is None else source._version_counter.value
    if view is not None:
        return (view[0], view[1] + (step,), version)
    return (source, (step,), version)


cdef object _current_view(Tensor t):
    # The view entry of ``t`` with its history declared current.
    view = _view_info(t)
    if view is None or view[0] is None or t._version_counter is None:
        return view
    return (view[0], view[1], t._version_counter.value)


cdef int _refresh_view(Tensor t) except -1:
    """Give a view the history of its base's current value, if that changed.

    An in-place write to a base (or through another of its views) gives the
    base a new node; views taken before still hold the old history, so they
    are re-derived from the base here, when next used while grad mode is on
    (PyTorch regenerates a view's grad_fn the same way).
    """
    view = _view_info(t)
    if view is None or view[0] is None or t._version_counter is None:
        return 0
    if t._version_counter.value == view[2] or not grad_enabled():
        return 0
    base = <Tensor>view[0]
    if base._meta is None or not base._meta.requires_grad:
        _set_links(t, _current_view(t), _origin_info(t))
        return 0
    replayed = base
    for step in view[1]:
        replayed = apply_op(<OpDef>step[0], (replayed,) + step[1], step[2])
    t._set_history(<Tensor>replayed)
    _set_links(t, _current_view(t), _origin_info(t))
    return 0


class _QuietState:
    # Fallback if NumPy's error-state context variable moves: the same
    # interface as a ContextVar, through np.errstate.
    def set(self, value):
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def reset(self, state):
        state.__exit__(None, None, None)


try:
    from numpy._core.umath import _extobj_contextvar as _extobj_var, _make_extobj
    _quiet_extobj = _make_extobj(all="ignore")
except ImportError:         # pragma: no cover - NumPy internals changed
    _extobj_var, _quiet_extobj = _QuietState(), None


cdef object _weak_zero_dims(tuple fargs, Py_ssize_t n):
    """The arguments of a promoting op whose float inputs differ in dtype only by
    0-d arrays, with each such array as a Python float; None for any other call.

    Only for a call that runs the op's NumPy function (``numpy=``, a ufunc):
    PyTorch's rule that a 0-d tensor does not raise a dimensioned one's dtype
    within its category is NumPy's rule for Python numbers, so the ufunc gives
    the promoted dtype, and the same values: the number is rounded to that
    dtype first, as the cast in ``prepare`` rounds it (a forward that computes
    in a wider dtype would see it unrounded). This is the VJP of every
    op with a number operand (``x * 2.0`` saves 2.0, which its VJP gets as a
    0-d float64 tensor): ``prepare`` cost 1.8 us of a 3.2 us product.

    A 0-d integer or bool array (``x * 2`` saves 2, a 0-d int64 tensor to its
    VJP) joins a float one the same way, as a Python float, when the float
    dtype holds its value exactly (|v| <= 2**11 for float16, 2**24 for
    float32, 2**53 for float64): the cast in ``prepare`` gives that value too.
    """
    cdef Py_ssize_t i
    cdef int num, dim_num = -1
    cdef bint any_zero = False
    for i in range(n):
        v = fargs[i]
        if cnp.PyArray_Check(v):
            num = cnp.PyArray_TYPE(<cnp.ndarray>v)
            if cnp.PyArray_NDIM(<cnp.ndarray>v) == 0:
                if not (cnp.PyTypeNum_ISFLOAT(num) or cnp.PyTypeNum_ISINTEGER(num)
                        or cnp.PyTypeNum_ISBOOL(num)):
                    return None
                any_zero = True
                continue
            if num != cnp.NPY_FLOAT16 and num != cnp.NPY_FLOAT and num != cnp.NPY_DOUBLE:
                return None
            if dim_num < 0:
                dim_num = num
            elif num != dim_num:
                return None
        elif v is not None and (type(v) is bool or not _is_python_scalar(v)):
            return None
    if dim_num < 0 or not any_zero:
        return None
    weak = list(fargs)
    for i in range(n):
        v = fargs[i]
        if (cnp.PyArray_Check(v) and cnp.PyArray_NDIM(<cnp.ndarray>v) == 0
                and cnp.PyArray_TYPE(<cnp.ndarray>v) != dim_num):
            num = cnp.PyArray_TYPE(<cnp.ndarray>v)
            if cnp.PyTypeNum_ISFLOAT(num):
                if num == cnp.NPY_LONGDOUBLE:
                    return None             # (float() would round it: prepare's path)
                weak[i] = float(v)
            else:
                value = int(v)
                if abs(value) > (2048 if dim_num == cnp.NPY_FLOAT16 else 16777216
                                 if dim_num == cnp.NPY_FLOAT else 9007199254740992):
                    return None             # not exact in the float dtype: prepare rounds it
                weak[i] = float(value)
    return tuple(weak)


cdef bint _needs_prepare(OpDef op, tuple fargs, Py_ssize_t n) except -1:
    """Whether the op's dtype step must run: not when the inputs already agree.

    The fast cases: every array input has one floating dtype (Python numbers
    beside them are weakly typed and change nothing); or, in an op of
    PyTorch's promotion that keeps integers, one integer dtype beside Python
    ints and bools only (``e - 1`` on a saved 0-d int64 exponent in pow's
    VJP): the promoted dtype is that one, and the dtype step would pass the
    same values on.
    """
    cdef Py_ssize_t i
    cdef int num
    cdef int first = -1
    cdef bint other_numbers = False    # a number that is not an exact int or bool
    if op.prepare is None:
        return False
    for i in range(n):
        v = fargs[i]
        if cnp.PyArray_Check(v):
            # The descriptor read in C (this replaces ``v.dtype``/``.kind``,
            # two attribute lookups per input on every op).
            num = cnp.PyArray_TYPE(<cnp.ndarray>v)
            if first < 0:
                if not (cnp.PyTypeNum_ISFLOAT(num)
                        or (cnp.PyTypeNum_ISINTEGER(num) and op.promotes and not op.float_only)):
                    return True
                first = num
            elif num != first:
                return True
        elif v is not None and type(v) is not int and type(v) is not bool:
            other_numbers = True
    if first < 0:
        return True
    return other_numbers and not cnp.PyTypeNum_ISFLOAT(first)


cdef object _apply_sequence_op(OpDef op, tuple args, dict kwargs):
    """apply_op for ops whose first argument is a sequence of tensors (cat, stack)."""
    cdef Py_ssize_t i, count
    cdef bint recording = False
    cdef Tensor t
    cdef list values, arrays
    if len(args) == 0:
        if kwargs is None or op.input_names[0] not in kwargs:
            raise TypeError(f"{op.name}() missing 1 required positional argument: "
                            f"{op.input_names[0]!r} (a sequence of tensors)")
        kwargs = dict(kwargs)
        args = (kwargs.pop(op.input_names[0]),)
    seq = args[0]
    if isinstance(seq, Tensor) or _is_ndarray(seq):
        raise TypeError(f"{op.name}(): expected a sequence of tensors, got a single "
                        f"{type(seq).__name__}")
    values = list(seq)
    count = len(values)
    arrays = [None] * count
    for i in range(count):
        v = values[i]
        if isinstance(v, Tensor):
            t = <Tensor>v
            if t._links is not None:
                _refresh_view(t)
            arrays[i] = t._data
            if t._meta is not None and t._meta.requires_grad:
                recording = True
        else:
            handler = getattr(type(v), "__oxmera_function__", None)
            if handler is not None:
                return handler(op, args, kwargs)      # as in apply_op
            arrays[i] = as_array(v)
            values[i] = wrap_array(arrays[i])     # the VJP gets Tensors (see _tensor_inputs)
    if count and _needs_prepare(op, tuple(arrays), count):
        arrays = op.prepare(arrays)
        if type(arrays) is not list or len(arrays) != count:
            raise TypeError(f"{op.name}(): its prepare step returned "
                            f"{type(arrays).__name__} for {count} inputs; expected a list")
    try:
        if kwargs:
            out = op.forward(arrays, *args[1:], **kwargs)
        else:
            out = op.forward(arrays, *args[1:])
    except ValueError as err:
        if isinstance(err, OpError):
            raise
        raise _op_error(op, err, values) from None
    if type(out) is not ndarray:
        out = _np_asarray(out)
    t = Tensor.__new__(Tensor)
    t._data = out
    if recording and op.differentiable and grad_enabled():
        _record(op, values, count, args, kwargs, (t,), True)
    elif recording:
        _set_links(t, None, (("no_grad" if op.differentiable else "non-differentiable"),
                             op.name))
    return t


cdef Tensor _output_tensor(object o):
    cdef Tensor t = Tensor.__new__(Tensor)
    t._data = o if type(o) is ndarray else _np_asarray(o)
    return t


cdef inline bint _is_view_of(object out, object source):
    # NumPy points every view at the array owning the memory; a forward may
    # also hand back its input array itself.
    cdef PyObject* raw
    if out is source:
        return True
    if cnp.PyArray_Check(out):
        raw = <PyObject*>cnp.PyArray_BASE(<cnp.ndarray>out)   # ``out.base`` without a lookup
        if raw == NULL:
            return False
        base = <object>raw
    else:
        base = out.base
    if type(base) is _DummyArray:       # a view made the way as_strided makes them
        base = base.base
    if base is None:
        return False
    if base is source:
        return True
    if cnp.PyArray_Check(source):
        return <PyObject*>cnp.PyArray_BASE(<cnp.ndarray>source) == <PyObject*>base
    return base is source.base


cdef int _share_counters(object first, tuple outputs, OpDef op, tuple args,
                         dict kwargs) except -1:
    # Several outputs, each a view (split, unbind). As in PyTorch, such views
    # may not be modified in place while autograd records (their base's
    # history could not be rewritten once per output): their base is None,
    # and the entry names the op for the error message.
    if isinstance(first, Tensor):
        source = (<Tensor>first)._data
        for o in outputs:
            if _is_view_of((<Tensor>o)._data, source):
                (<Tensor>o)._version_counter = _counter_of(<Tensor>first)
                _set_links(<Tensor>o, (None, ((op, args[1:], kwargs if kwargs else None),)),
                           None)
                _adopt((<Tensor>o)._data, source)
    return 0


cdef tuple _inputs_from_kwargs(OpDef op, tuple args, dict kwargs):
    # Tensor inputs given by keyword (``clamp(x, min=t)``) join the positional
    # ones; one not given takes its default, or is missing, as Python says.
    cdef Py_ssize_t i
    cdef list full = list(args)
    cdef list missing = []
    names = op.input_names
    for i in range(len(args), op.n_inputs):
        name = names[i]
        if kwargs is not None and name in kwargs:
            full.append(kwargs[name])
        elif i >= op.n_required:
            full.append(op.input_defaults[i - op.n_required])
        else:
            missing.append(name)
    if missing:
        # Python's own wording: 'a', 'a' and 'b', 'a', 'b', and 'c'
        names = [repr(m) for m in missing]
        if len(names) == 1:
            listed = names[0]
        elif len(names) == 2:
            listed = f"{names[0]} and {names[1]}"
        else:
            listed = ", ".join(names[:len(names) - 1]) + ", and " + names[len(names) - 1]
        raise TypeError(f"{op.name}() missing {len(missing)} required positional "
                        f"argument{'s' if len(missing) > 1 else ''}: {listed}")
    return tuple(full)


cdef int _record(OpDef op, object values, Py_ssize_t n, tuple args, dict kwargs,
                 tuple outputs, bint sequence) except -1:
    """Create the node of a call: ``values[:n]`` are its tensor inputs."""
    cdef GradFn node = GradFn.__new__(GradFn)
    cdef Py_ssize_t i
    cdef Tensor t
    cdef AutogradMeta meta
    # Filled in place (this replaces ``tuple(list_of_edges)``); one edge is
    # kept without a tuple.
    cdef tuple next_fns = PyTuple_New(n) if n != 1 else None
    cdef object single = None
    cdef list nrs = None
    cdef list versions = None
    node.op = op
    save_mask = op.save_mask
    for i in range(n):
        v = values[i]
        edge = None
        if isinstance(v, Tensor):
            t = <Tensor>v
            meta = t._meta
            if meta is not None and meta.requires_grad:
                if meta.grad_fn is None:
                    edge = t
                else:
                    edge = meta.grad_fn
                    if meta.output_nr:
                        if nrs is None:
                            nrs = [0] * n
                        nrs[i] = meta.output_nr
            if t._version_counter is not None and (
                    save_mask is None or save_mask[i if not sequence else 0]):
                if versions is None:
                    versions = [0] * n
                versions[i] = t._version_counter.value
        if n == 1:
            single = edge
        else:
            Py_INCREF(edge)
            PyTuple_SET_ITEM(next_fns, i, edge)
    if n == 1:
        node.next_fns = _NO_EDGE if single is None else single
    else:
        _set_edges(node, next_fns)
        next_fns = None
    if nrs is not None:
        _extras_of(node).next_nrs = tuple(nrs)
    # What the VJP will read: the call's arguments, with inputs it does not
    # need dropped, so they can be freed before backward.
    if sequence:
        if save_mask is None or save_mask[0]:
            saved = tuple(values[:n])
        else:
            saved = (None,) * n
        kept = (saved,) + args[1:]
    elif save_mask is None:
        # A copy even of the call's own tuple: the node must be its only
        # holder for the collector to see its items through the node.
        kept = _tuple_copy(args) if values is args else tuple(values) + args[n:]
    else:
        # The inputs the VJP reads (others None) and the call's other
        # arguments, filled in place (this replaces ``tuple(kept) + args[n:]``).
        kept = PyTuple_New(len(args))
        for i in range(len(args)):
            if i >= n:
                v = args[i]
            elif _keeps(save_mask[i], node):
                v = values[i]
            else:
                v = None
            Py_INCREF(v)
            PyTuple_SET_ITEM(kept, i, v)
    if not sequence:
        for i in range(n):
            v = (<tuple>kept)[i]
            if v is not None and not isinstance(v, Tensor):
                node.layout |= _SCALAR_INPUTS   # the VJP gets it as a 0-d Tensor (_vjp_args)
                break
    _set_args(node, <tuple>kept)
    kept = None
    if kwargs:
        _extras_of(node).kwargs = kwargs
    cdef Py_ssize_t n_out = len(outputs)
    cdef unsigned int out_version = 0
    node.n_outputs = n_out if n_out < 0xFFFF else 0xFFFF
    if OXMERA_ANOMALY_COMPILED and _anomaly_enabled:
        # Op functions and operators are compiled: the innermost frame is the caller's.
        _extras_of(node).creation_trace = "".join(traceback.format_stack())
    if n_out == 1:
        t = <Tensor>outputs[0]
        node.out_info = _out_info_of(t._data)
        if _is_inexact(t._data):
            t._meta = _new_meta(node, 0)
        if op.save_output:
            node.saved_output = t._data
            node.output_counter = _counter_of(t)
            out_version = <unsigned int>(<VersionCounter>node.output_counter).value
            if OXMERA_LOCKS_COMPILED:
                _lock_array(t._data, <VersionCounter>node.output_counter)
                node.layout |= _LOCKED
    else:
        node.out_info = tuple([_out_info_of((<Tensor>o)._data) for o in outputs])
        for i in range(n_out):
            t = <Tensor>outputs[i]
            if _takes_grad(node, i, t._data.dtype):
                t._meta = _new_meta(node, i)
        if op.save_output:
            node.saved_output = tuple([(<Tensor>o)._data for o in outputs])
            node.output_counter = tuple([_counter_of(<Tensor>o) for o in outputs])
            out_version = <unsigned int>_counter_sum(node.output_counter)
            if OXMERA_LOCKS_COMPILED:
                for i in range(n_out):
                    _lock_array(node.saved_output[i], <VersionCounter>node.output_counter[i])
                node.layout |= _LOCKED
    if versions is not None or out_version:
        node.aux = (tuple(versions) if versions is not None else (0,) * n) + (out_version,)
    if OXMERA_LOCKS_COMPILED and _lock_inputs(node):
        node.layout |= _LOCKED
    if _saved_hooks_on:
        hooks = _saved_hooks_source()
        if hooks is not None:
            _pack_saved(node, hooks[0], hooks[1], _ALL_SLOTS)
    _try_seal(node, outputs)
    return 0


# -- mutation safety: memory saved for backward is read-only while its graph lives --
#
# PyTorch's version counter sees in-place ops, not writes through NumPy
# (t.numpy()[0] = 5, or into the array given to from_numpy), which then give
# silently wrong gradients. oxmera clears NumPy's WRITEABLE flag of the arrays
# over memory a node saved, for as long as the node keeps it, so such writes
# raise.
#
# The lock is counted per block of memory, not per tensor: tensors share memory
# in many ways (detach, views, from_numpy or as_tensor twice over one array,
# copy.copy, .data), and a graph that saved one of them needs the memory
# unchanged whichever tensor writes to it. A block of memory is named by the
# object at the end of the arrays' base chain (the ndarray owning the data, or
# the buffer exporter a NumPy array was made over), and the registry maps its
# address to a _MemoryLock holding the count, the arrays whose flag oxmera
# cleared (set again, and only those, when the count falls to zero) and the
# savers whose versions a write must bump.
#
# oxmera's own in-place ops still write (_begin_write/_end_write lift the flag
# for the write and hold a lock meanwhile, so the graph dying mid-write cannot
# leave the state half restored); every write bumps the version of each saver of
# the memory (Tensor._bump_version), so a backward needing the old values raises
# as in PyTorch, even when the writer shares no version counter with the saver.
#
# Limits: a NumPy view the user made of the memory before it was locked keeps
# its own flag (NumPy keeps no list of an array's views). Arrays oxmera hands out
# (numpy(), __array__, DLPack) while the memory is locked are made read-only
# then, and views oxmera makes of locked memory are given back their flag with it.

# The registry: address of a memory's owner -> its _MemoryLock, as an
# open-addressing table of owned _MemoryLock pointers (the key is the
# entry's own .key field). A dict of int keys cost ~85 bytes per saved
# tensor (a PyLong key and a dict entry); this costs 8-32 (one pointer at a
# load factor of 1/4 to 1/2), and a deep graph saves one tensor per node.
cdef PyObject** _lock_slots = NULL
cdef size_t _lock_mask = 0              # capacity - 1 (a power of two), 0 before the first
cdef Py_ssize_t _memory_locks = 0       # entries in use: the registry's truth value


cdef inline size_t _lock_home(size_t key) noexcept:
    # Fibonacci hashing: addresses are aligned, so their low bits are zeros.
    return <size_t>((<unsigned long long>key * 11400714819323198485ULL) >> 20) & _lock_mask


cdef inline size_t _slot_key(PyObject* e) noexcept:
    # A slot holds a _MemoryLock, or, for memory that one tensor's own array
    # owns and that tensor alone saved (a deep graph's every saved input),
    # that Tensor itself: an inline lock, 64 bytes less a saved tensor, made a
    # _MemoryLock by the first other use of the memory (_lock_get).
    if type(<object>e) is _MemoryLock:
        return (<_MemoryLock>e).key
    return <size_t>(<PyObject*>(<Tensor>e)._data)


cdef inline Py_ssize_t _lock_index(size_t key) noexcept:
    # The slot holding ``key``, or -1.
    cdef size_t i
    cdef PyObject* e
    if _memory_locks == 0:
        return -1
    i = _lock_home(key)
    while True:
        e = _lock_slots[i]
        if e == NULL:
            return -1
        if _slot_key(e) == key:
            return <Py_ssize_t>i
        i = (i + 1) & _lock_mask


cdef object _lock_get(size_t key):
    # The _MemoryLock under ``key`` (a new reference), or None; an inline lock
    # found there is made a _MemoryLock first.
    cdef Py_ssize_t i = _lock_index(key)
    cdef _MemoryLock entry
    cdef Tensor t
    if i < 0:
        return None
    if type(<object>_lock_slots[i]) is _MemoryLock:
        return <object>_lock_slots[i]
    entry = _MemoryLock.__new__(_MemoryLock)
    i = _lock_index(key)                # (the allocation may have run a finalizer)
    if i < 0:
        return None
    if type(<object>_lock_slots[i]) is _MemoryLock:
        return <object>_lock_slots[i]
    t = <Tensor>_lock_slots[i]
    entry.key = key
    entry.owner = t._data
    entry.count = 1
    entry.cleared = t._data
    _add_locker(entry, <PyObject*>t)
    Py_INCREF(entry)
    _lock_slots[i] = <PyObject*>entry
    return entry


cdef int _lock_grow() except -1:
    global _lock_slots, _lock_mask
    cdef size_t cap = 1024 if _lock_mask == 0 else 2 * (_lock_mask + 1)
    cdef size_t i, j, old_cap = 0 if _lock_mask == 0 else _lock_mask + 1
    cdef PyObject** old = _lock_slots
    cdef PyObject** slots = <PyObject**>PyMem_Malloc(cap * sizeof(PyObject*))
    if slots == NULL:
        raise MemoryError()
    memset(slots, 0, cap * sizeof(PyObject*))
    _lock_slots = slots
    _lock_mask = cap - 1
    for i in range(old_cap):
        if old[i] != NULL:
            j = _lock_home(_slot_key(old[i]))
            while slots[j] != NULL:
                j = (j + 1) & _lock_mask
            slots[j] = old[i]
    PyMem_Free(old)
    return 0


cdef int _lock_put(object entry) except -1:
    # Register ``entry`` (its key not present): a _MemoryLock, holding a
    # reference to it, or a Tensor, an inline lock, borrowed as a lock's
    # lockers are (its node holds it until it unlocks; a reference from
    # here would keep any garbage cycle through it from being collected).
    global _memory_locks
    cdef size_t i
    if _lock_mask == 0 or <size_t>(2 * (_memory_locks + 1)) > _lock_mask + 1:
        _lock_grow()
    i = _lock_home(_slot_key(<PyObject*>entry))
    while _lock_slots[i] != NULL:
        i = (i + 1) & _lock_mask
    if type(entry) is _MemoryLock:
        Py_INCREF(entry)
    _lock_slots[i] = <PyObject*>entry
    _memory_locks += 1
    return 0


cdef int _lock_remove(object entry) except -1:
    # Unregister ``entry`` if it is the one registered under its key.
    global _memory_locks
    cdef size_t i, j, home
    cdef PyObject* e
    if _memory_locks == 0:
        return 0
    i = _lock_home(_slot_key(<PyObject*>entry))
    while True:
        e = _lock_slots[i]
        if e == NULL:
            return 0
        if e == <PyObject*>entry:
            break
        i = (i + 1) & _lock_mask
    # Backward-shift deletion: move later members of the probe run into the
    # hole when their home does not lie (cyclically) in (hole, their slot].
    j = i
    while True:
        j = (j + 1) & _lock_mask
        e = _lock_slots[j]
        if e == NULL:
            break
        home = _lock_home(_slot_key(e))
        if (j > i and (home <= i or home > j)) or (j < i and (home <= i and home > j)):
            _lock_slots[i] = e
            i = j
    _lock_slots[i] = NULL
    _memory_locks -= 1
    if type(entry) is _MemoryLock:
        Py_DECREF(entry)                # the table's reference (the caller holds another)
    return 0


# ---------------------------------------------------------------------------
# The cyclic collector walks every tracked object on each full collection, and
# a recorded op used to leave five of them alive (the output Tensor, its
# AutogradMeta, the GradFn, its edges tuple and its arguments tuple). Three of
# them have exactly one holder, that is never handed out: a tensor's meta, a
# node's next_fns and args. They are untracked, and their holder's tp_traverse
# visits their contents in their place. To the collector the graph is then the
# same graph (every reference is still seen, from the object that owns the
# container), so every cycle it collected it still collects, and it walks two
# objects per op instead of five. An owned container that is still tracked
# (made from Python, or shared) is visited as before and its contents are not
# visited again: no reference is counted twice.

cdef inline tuple _tuple_copy(tuple items):
    cdef Py_ssize_t i, n = len(items)
    cdef tuple copy = PyTuple_New(n)
    for i in range(n):
        v = items[i]
        Py_INCREF(v)
        PyTuple_SET_ITEM(copy, i, v)
    return copy


cdef inline void _own_untracked(tuple items) noexcept:
    # Only a tuple the node alone holds (the caller's local is the other
    # reference): one shared with anyone else stays visible to the collector.
    if items is not None and Py_REFCNT(items) == 2:
        PyObject_GC_UnTrack(<PyObject*>items)


cdef oxm_traverse _tensor_base_traverse = <oxm_traverse>(<PyTypeObject*>Tensor).tp_traverse
cdef oxm_traverse _node_base_traverse = <oxm_traverse>(<PyTypeObject*>GradFn).tp_traverse


cdef int _tensor_traverse(PyObject* o, visitproc visit, void* arg) noexcept:
    cdef int r = _tensor_base_traverse(o, visit, arg)
    if r:
        return r
    cdef PyObject* meta = <PyObject*>(<Tensor>o)._meta
    if meta == <PyObject*>None or PyObject_GC_IsTracked(meta):
        return 0
    r = oxm_visit(<PyObject*>(<AutogradMeta>meta).grad, visit, arg)
    if r:
        return r
    r = oxm_visit(<PyObject*>(<AutogradMeta>meta).grad_fn, visit, arg)
    if r:
        return r
    return oxm_visit(<PyObject*>(<AutogradMeta>meta).hooks, visit, arg)


cdef int _node_traverse(PyObject* o, visitproc visit, void* arg) noexcept:
    cdef int r = _node_base_traverse(o, visit, arg)
    if r:
        return r
    r = oxm_visit_owned_tuple(<PyObject*>(<GradFn>o).next_fns, visit, arg)
    if r:
        return r
    return oxm_visit_owned_tuple(<PyObject*>(<GradFn>o).args, visit, arg)


(<PyTypeObject*>Tensor).tp_traverse = <traverseproc>_tensor_traverse
(<PyTypeObject*>GradFn).tp_traverse = <traverseproc>_node_traverse


# ---------------------------------------------------------------------------
# Sealed graph objects. Most of a graph cannot be part of a reference cycle:
# a node made from plain tensors and numbers references only older objects,
# and nothing can be attached to it or to its output without going through
# this module. Such a Tensor or GradFn is *sealed*: untracked, so the
# collector never walks it, and listed here. The invariants that keep this
# exact (every cycle the collector could free, it still frees):
#   1. a sealed object references only atoms (numbers, strings, slices of
#      numbers, exact ndarrays, VersionCounters, oxmera's own OpDefs, None)
#      and sealed objects, directly or through the containers folded into it;
#   2. no cycle is made of sealed objects alone.
# Then no cycle contains a sealed object, and the collector, which frees only
# cycles, loses nothing by not walking them. (1) is checked when an object is
# sealed: exact Tensors, GradFns and exact nn.Parameters, no kwargs, no
# node extras (hooks, anomaly traces), view links only of atoms, sealed
# tensors and oxmera's OpDefs (_sealable_link). A Parameter has a
# __dict__ anything can be put in, behind the core's back (p.x = y,
# vars(p), object.__setattr__): instead of watching the writes, the check
# runs where it matters, at the start of every collection (a gc callback,
# _check_sealed_dicts), and tracks everything again when a sealed
# Parameter's __dict__ holds anything but atoms. (2) holds because an
# object is sealed when it is made, referencing only older objects. Every
# later edge from a sealed object (a hook, a .grad, retain_grad, node extras,
# an in-place op giving it new history, view links, a new .data or __init__)
# goes through _unseal_all first, which tracks every sealed object again;
# the one exception is a .grad that is a sealed tensor referencing nothing
# (what backward stores), which can close no cycle. _unseal_all's cost is at
# most one step per sealing since the last one.

cdef PyObject** _sealed_list = NULL
cdef Py_ssize_t _n_sealed = 0
cdef Py_ssize_t _cap_sealed = 0


# The sealed Parameters (borrowed; each is also in _sealed_list): the objects
# whose __dict__ _check_sealed_dicts reads before each collection. Few (a
# model's weights), so a plain array searched linearly.
cdef PyObject** _sealed_dicts = NULL
cdef Py_ssize_t _n_sealed_dicts = 0
cdef Py_ssize_t _cap_sealed_dicts = 0
# nn.Parameter, once oxmera.nn registered it (_register_parameter_type).
cdef object _parameter_type = None


cdef inline void _set_seal_index(PyObject* o, Py_ssize_t index) noexcept:
    if (<PyObject*>o).ob_type == <PyTypeObject*>GradFn:
        (<GradFn>o)._sealed = index
    else:                               # an exact Tensor or a Parameter
        (<Tensor>o)._sealed = index


cdef inline bint _sealable_type(object v) noexcept:
    # A Tensor whose every reference the core controls, or a Parameter (its
    # __dict__ checked before each collection).
    return type(v) is Tensor or (type(v) is _parameter_type and _parameter_type is not None)


cdef bint _make_room(PyObject*** items, Py_ssize_t* cap, Py_ssize_t n,
                     Py_ssize_t first) noexcept:
    # Room for one more pointer in a growable array holding n (doubling from
    # first); False when memory ran out, which leaves the array as it was.
    cdef PyObject** grown
    cdef Py_ssize_t new_cap
    if n < cap[0]:
        return True
    new_cap = first if cap[0] == 0 else 2 * cap[0]
    grown = <PyObject**>PyMem_Realloc(items[0], new_cap * sizeof(PyObject*))
    if grown == NULL:
        return False
    items[0] = grown
    cap[0] = new_cap
    return True


cdef bint _seal(object o) noexcept:
    # o: an exact Tensor or GradFn, tracked, meeting invariant 1.
    global _sealed_list, _n_sealed, _cap_sealed
    if _n_sealed >= 0x7ffffffe:         # a Tensor keeps its index in an int
        return False
    if not _make_room(&_sealed_list, &_cap_sealed, _n_sealed, 4096):
        return False                    # stays tracked: always allowed
    _sealed_list[_n_sealed] = <PyObject*>o
    _n_sealed += 1
    _set_seal_index(<PyObject*>o, _n_sealed)
    PyObject_GC_UnTrack(<PyObject*>o)
    return True


cdef void _unseal_all() noexcept:
    global _n_sealed, _n_sealed_dicts
    cdef Py_ssize_t i
    cdef PyObject* o
    for i in range(_n_sealed):
        o = _sealed_list[i]
        _set_seal_index(o, 0)
        PyObject_GC_Track(o)
    _n_sealed = 0
    _n_sealed_dicts = 0


cdef bint _seal_with_dict(Tensor t) noexcept:
    # Seal a Parameter and list it for _check_sealed_dicts.
    global _sealed_dicts, _n_sealed_dicts, _cap_sealed_dicts
    if not _make_room(&_sealed_dicts, &_cap_sealed_dicts, _n_sealed_dicts, 64):
        return False                    # stays tracked: always allowed
    if not _seal(t):
        return False
    _sealed_dicts[_n_sealed_dicts] = <PyObject*>t
    _n_sealed_dicts += 1
    return True


cdef inline void _forget_sealed_dict(PyObject* o) noexcept:
    global _n_sealed_dicts
    cdef Py_ssize_t i
    for i in range(_n_sealed_dicts):
        if _sealed_dicts[i] == o:
            _n_sealed_dicts -= 1
            _sealed_dicts[i] = _sealed_dicts[_n_sealed_dicts]
            return


def _check_sealed_dicts(phase, info):
    """gc callback: before a collection, keep invariant 1 for sealed Parameters.

    Their __dict__ (or their class, by __class__ assignment) may have been
    given a reference the core never saw; any value that is not an atom
    could lead back into a sealed graph, so everything is tracked again and
    this collection sees every reference.
    """
    cdef Py_ssize_t i
    cdef object p
    if phase != "start" or _n_sealed_dicts == 0:
        return
    for i in range(_n_sealed_dicts):
        p = <object>_sealed_dicts[i]
        if type(p) is not _parameter_type:
            _unseal_all()
            return
        for v in (<dict>p.__dict__).values():
            if not _atom(v):
                _unseal_all()
                return


gc.callbacks.append(_check_sealed_dicts)


def _register_parameter_type(cls):
    """Let the core seal exact instances of ``cls`` (oxmera.nn.Parameter; internal)."""
    global _parameter_type
    _parameter_type = cls


cdef inline void _forget_sealed(PyObject* o, Py_ssize_t index) noexcept:
    # o is being freed: move the last listed object into its place.
    global _n_sealed
    cdef PyObject* last = _sealed_list[_n_sealed - 1]
    _sealed_list[index - 1] = last
    _set_seal_index(last, index)
    _n_sealed -= 1


ctypedef void (*_dealloc_fn)(PyObject*) noexcept
cdef _dealloc_fn _tensor_base_dealloc = <_dealloc_fn>(<PyTypeObject*>Tensor).tp_dealloc
cdef _dealloc_fn _node_base_dealloc = <_dealloc_fn>(<PyTypeObject*>GradFn).tp_dealloc


cdef void _tensor_dealloc(PyObject* o) noexcept:
    # Before the trashcan, which may defer the rest (and call this again).
    if (<Tensor>o)._sealed:
        _forget_sealed(o, (<Tensor>o)._sealed)
        if o.ob_type != <PyTypeObject*>Tensor:
            _forget_sealed_dict(o)
        (<Tensor>o)._sealed = 0
    oxm_trashcan_dealloc(o, <destructor>_tensor_dealloc, <destructor>_tensor_base_dealloc)


cdef void _node_dealloc(PyObject* o) noexcept:
    if (<GradFn>o)._sealed:
        _forget_sealed(o, (<GradFn>o)._sealed)
        (<GradFn>o)._sealed = 0
    oxm_trashcan_dealloc(o, <destructor>_node_dealloc, <destructor>_node_base_dealloc)


(<PyTypeObject*>Tensor).tp_dealloc = <destructor>_tensor_dealloc
(<PyTypeObject*>GradFn).tp_dealloc = <destructor>_node_dealloc


cdef int _tensor_clear(PyObject* o) noexcept:
    # The collector breaking a cycle through a tensor keeps its _data: an
    # ndarray holds no reference the collector sees (it closes no cycle), and
    # a tensor that a live node saved finds its memory's lock through _data
    # when the node, which the collector never clears, unlocks it, maybe
    # during this very clear (dropping the meta can free that node). The
    # other fields are all set to None before any of them is let go, so the
    # frees this sets off see a cleared tensor, never a half-cleared one.
    cdef Tensor t = <Tensor>o
    meta = t._meta
    counter = t._version_counter
    links = t._links
    t._meta = None
    t._version_counter = None
    t._links = None
    meta = counter = links = None
    return 0


(<PyTypeObject*>Tensor).tp_clear = <inquiry><void*>_tensor_clear


def _sealed_objects():
    """The sealed Tensors and GradFns, which gc.get_objects() does not list (for tests)."""
    return [<object>_sealed_list[i] for i in range(_n_sealed)]


cdef inline bint _atom(object v) noexcept:
    # Holds no reference the collector could follow back into a graph.
    cdef type tp = type(v)
    return (v is None or tp is float or tp is int or tp is bool or tp is str
            or tp is ndarray or tp is complex)


cdef bint _sealable_link(object v, int depth) noexcept:
    # A piece of a tensor's links (view entry: base, view steps (op, args,
    # kwargs), version; origin: why cut, an op name): atoms, tuples of them,
    # sealable tensors and oxmera's own OpDefs (see _try_seal). Kwargs dicts
    # are not (they could be shared and written to), nor anything deeper.
    cdef Py_ssize_t i
    if _atom(v) or v is Ellipsis:
        return True
    if _sealable_type(v):
        return _sealable_leaf(<Tensor>v)
    if type(v) is OpDef:
        return (<OpDef>v).internal
    if type(v) is slice:
        return _atom((<slice>v).start) and _atom((<slice>v).stop) and _atom((<slice>v).step)
    if type(v) is tuple and depth < 6:
        for i in range(len(<tuple>v)):
            if not _sealable_link((<tuple>v)[i], depth + 1):
                return False
        return True
    return False


cdef bint _sealable_leaf(Tensor t) noexcept:
    # Seal a leaf (or a tensor that needs no grad) that references only atoms.
    cdef AutogradMeta meta
    if t._sealed:
        return True
    if not _sealable_type(t) or type(t._data) is not ndarray \
            or not (t._links is None or _sealable_link(t._links, 0)):
        return False
    meta = t._meta
    if meta is not None:
        if PyObject_GC_IsTracked(<PyObject*>meta) or meta.grad_fn is not None \
                or meta.hooks is not None:
            return False
        if meta.grad is not None and not (type(meta.grad) is Tensor
                                          and (<Tensor>meta.grad)._sealed):
            return False
    if type(t) is not Tensor:
        return _seal_with_dict(t)
    return _seal(t)


cdef bint _sealable_value(object v) noexcept:
    cdef Py_ssize_t i
    if _atom(v):
        return True
    if _sealable_type(v):
        return _sealable_leaf(<Tensor>v)
    if type(v) is tuple:
        for i in range(len(<tuple>v)):
            item = (<tuple>v)[i]
            if not (_atom(item) or (_sealable_type(item) and _sealable_leaf(<Tensor>item))):
                return False
        return True
    if type(v) is slice:
        return _atom((<slice>v).start) and _atom((<slice>v).stop) and _atom((<slice>v).step)
    return v is Ellipsis


cdef void _try_seal(GradFn node, tuple outputs) noexcept:
    # Seal a new node and its outputs when invariant 1 allows it.
    cdef Py_ssize_t i
    cdef Tensor t
    if node.extras is not None or node.args is None \
            or (type(node.next_fns) is tuple and node.next_fns is not _NO_EDGE
                and PyObject_GC_IsTracked(<PyObject*>node.next_fns)) \
            or (type(node.args) is tuple and node.args is not _NO_EDGE
                and PyObject_GC_IsTracked(<PyObject*>node.args)):
        return
    # An OpDef is an atom only while something outside every graph keeps it:
    # oxmera's own ops, defined once in its modules and registered for good.
    if not node.op.internal:
        return
    saved = node.saved_output
    if saved is not None and type(saved) is not ndarray:
        if type(saved) is not tuple:
            return
        for item in <tuple>saved:
            if type(item) is not ndarray:
                return
    for i in range(_n_edges(node)):
        fn = _edge(node, i)
        if fn is None:
            continue
        if type(fn) is GradFn:
            if not (<GradFn>fn)._sealed:
                return
        elif not (_sealable_type(fn) and _sealable_leaf(<Tensor>fn)):
            return
    if type(node.args) is not tuple:
        if not _sealable_value(node.args):
            return
    else:
        for i in range(len(<tuple>node.args)):
            if not _sealable_value((<tuple>node.args)[i]):
                return
    if not _seal(node):
        return
    for o in outputs:
        t = <Tensor>o
        if (type(t) is Tensor and type(t._data) is ndarray
                and (t._meta is None or not PyObject_GC_IsTracked(<PyObject*>t._meta))
                and (t._links is None or _sealable_link(t._links, 0))):
            _seal(t)


cdef inline void _grad_edge(Tensor owner, object value) noexcept:
    # Before owner's .grad becomes value: keep invariant 1 (value sealed) and 2
    # (value references nothing, so it cannot lead back to owner).
    if not owner._sealed or value is None:
        return
    if (type(value) is Tensor and value is not owner and (<Tensor>value)._meta is None
            and _sealable_leaf(<Tensor>value)):
        return
    _unseal_all()


@cython.final
@cython.freelist(64)
@cython.no_gc        # holds arrays, a buffer owner and borrowed pointers: it closes no cycle
@cython.auto_pickle(False)
cdef class _MemoryLock:
    """The lock of one block of memory saved for backward (internal).

    Listed in the core's registry while a live graph saved a tensor over the
    memory; one made by hand is in no registry and locks nothing.
    """

    def __dealloc__(self):
        if self.cap_lockers > 1:
            PyMem_Free(self.lockers)
        self.lockers = NULL
        self.cap_lockers = 0

    def __reduce__(self):
        raise TypeError("a memory lock cannot be copied or pickled: it belongs to the graph "
                        "that saved the memory")

    @property
    def count(self):
        """Locks held on the memory (0 for one not in the registry)."""
        return self.count


try:                                    # NumPy's as_strided wraps its array in one
    from numpy.lib._stride_tricks_impl import DummyArray as _DummyArray
except ImportError:                     # pragma: no cover - older NumPy
    from numpy.lib.stride_tricks import DummyArray as _DummyArray


cdef inline object _next_base(object obj):
    # One step up the chain of objects the memory of ``obj`` belongs to: an
    # ndarray's base; the exporter behind a memoryview (np.frombuffer keeps
    # one per array, np.asarray(memoryview(a)) too); the array behind
    # as_strided's wrapper. None at the end (or for a foreign object, which
    # is the end: DLPack's capsules say nothing of their producer).
    cdef PyObject* base
    if cnp.PyArray_Check(obj):
        base = cnp.PyArray_BASE(<cnp.ndarray>obj)
        return None if base == NULL else <object>base
    if type(obj) is memoryview:
        return obj.obj
    if type(obj) is _DummyArray:
        return obj.base
    return None


cdef inline object _memory_owner(object array):
    # The end of the chain: the ndarray owning the data, or the object whose
    # buffer the chain's last array was made over (bytes, mmap, ...).
    obj = array
    while True:
        up = _next_base(obj)
        if up is None:
            return obj
        obj = up


cdef inline object _find_lock(object array):
    # The _MemoryLock of the memory behind ``array``, or None when not locked.
    if not _memory_locks:
        return None
    owner = _memory_owner(array)
    return _lock_get(<size_t><void*>owner)


cdef inline PyObject** _locker_slots(_MemoryLock entry) noexcept:
    # The lockers: the field itself while it holds one, else the array it points to.
    if entry.cap_lockers <= 1:
        return <PyObject**>&entry.lockers
    return <PyObject**>entry.lockers


# A lock's ``cleared`` field: None, the one array whose flag it cleared (the
# common case), or a dict from array address to the array, or to a weak
# reference to it for a view adopted while locked (_adopt). Views are held
# weakly: one that dies needs no flag back, and a graph kept alive while
# views of its saved memory are made and dropped (``W.mT`` in every matmul
# VJP) kept each of them, and scanned them all for each new one. The dict's
# _SWEEP_KEY entry (no array has address 0) is the size at which its dead
# references are next dropped: twice the live ones after each sweep.
cdef object _SWEEP_KEY = 0
cdef Py_ssize_t _SWEEP_MIN = 64


cdef inline object _cleared_key(object array):
    return PyLong_FromVoidPtr(<void*>array)


cdef bint _was_cleared(_MemoryLock entry, object array) except -1:
    cleared = entry.cleared
    if cleared is array:
        return True
    if type(cleared) is not dict:
        return False
    held = (<dict>cleared).get(_cleared_key(array))
    if held is None:
        return False
    return held is array or (type(held) is weakref.ReferenceType and held() is array)


cdef int _remember_cleared(_MemoryLock entry, object array, bint weak) except -1:
    cdef dict cleared
    if entry.cleared is None and not weak:
        entry.cleared = array
        return 0
    if type(entry.cleared) is dict:
        cleared = <dict>entry.cleared
    else:
        cleared = {_SWEEP_KEY: _SWEEP_MIN}
        if entry.cleared is not None:
            cleared[_cleared_key(entry.cleared)] = entry.cleared
        entry.cleared = cleared
    cleared[_cleared_key(array)] = weakref.ref(array) if weak else array
    if len(cleared) > <Py_ssize_t>cleared[_SWEEP_KEY]:
        for key in [k for k, v in cleared.items()
                    if type(v) is weakref.ReferenceType and v() is None]:
            del cleared[key]
        cleared[_SWEEP_KEY] = max(_SWEEP_MIN, 2 * len(cleared))
    return 0


cdef list _cleared_arrays(object cleared):
    # The live arrays of a ``cleared`` field, in the order their flags were cleared.
    if cleared is None:
        return []
    if type(cleared) is not dict:
        return [cleared]
    arrays = []
    for key, held in (<dict>cleared).items():
        if key is _SWEEP_KEY:
            continue
        if type(held) is weakref.ReferenceType:
            held = held()
            if held is None:
                continue
        arrays.append(held)
    return arrays


cdef int _clear_chain(_MemoryLock entry, object array) except -1:
    # Clear the WRITEABLE flag of ``array`` and of every array between it and
    # the owner that still has it, remembering each: those are the flags the
    # last unlock sets again.
    obj = array
    while obj is not None:
        if cnp.PyArray_Check(obj) and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>obj):
            cnp.PyArray_CLEARFLAGS(<cnp.ndarray>obj, cnp.NPY_ARRAY_WRITEABLE)
            _remember_cleared(entry, obj, False)
        obj = _next_base(obj)
    return 0


cdef _MemoryLock _acquire_memory(object array):
    # One more lock on the memory behind ``array`` (an ndarray), made read-only.
    cdef _MemoryLock entry
    owner = _memory_owner(array)
    cdef size_t key = <size_t><void*>owner
    found = _lock_get(key)
    if found is None:
        entry = _MemoryLock.__new__(_MemoryLock)
        # (the allocation may have run a finalizer that locked this memory)
        found = _lock_get(key)
    if found is None:
        entry.key = key
        entry.owner = owner
        _lock_put(entry)
    else:
        entry = <_MemoryLock>found
    entry.count += 1
    _clear_chain(entry, array)
    return entry


cdef int _release_memory(_MemoryLock entry) except -1:
    # One lock less; the last one gives back every flag oxmera cleared.
    entry.count -= 1
    if entry.count > 0:
        return 0
    cleared = entry.cleared
    entry.cleared = None
    for obj in _cleared_arrays(cleared):
        cnp.PyArray_ENABLEFLAGS(<cnp.ndarray>obj, cnp.NPY_ARRAY_WRITEABLE)
    _lock_remove(entry)
    return 0


cdef int _add_locker(_MemoryLock entry, PyObject* saver) except -1:
    cdef Py_ssize_t cap
    cdef PyObject** grown
    if entry.cap_lockers == 0:
        entry.cap_lockers = 1           # the field holds it (_locker_slots)
    elif entry.n_lockers == entry.cap_lockers:
        cap = 2 * entry.cap_lockers
        if entry.cap_lockers == 1:
            grown = <PyObject**>PyMem_Malloc(cap * sizeof(PyObject*))
            if grown != NULL:
                grown[0] = <PyObject*>entry.lockers
        else:
            grown = <PyObject**>PyMem_Realloc(entry.lockers, cap * sizeof(PyObject*))
        if grown == NULL:
            raise MemoryError()
        entry.lockers = grown
        entry.cap_lockers = cap
    _locker_slots(entry)[entry.n_lockers] = saver
    entry.n_lockers += 1
    return 0


cdef void _remove_locker(_MemoryLock entry, PyObject* saver) noexcept:
    cdef Py_ssize_t i
    cdef PyObject** slots = _locker_slots(entry)
    for i in range(entry.n_lockers - 1, -1, -1):
        if slots[i] == saver:
            entry.n_lockers -= 1
            slots[i] = slots[entry.n_lockers]
            return


cdef int _lock_tensor(Tensor t) except -1:
    # A node saved ``t``: its memory stays read-only while the node keeps it.
    # (A NumPy scalar has no flags: only arrays are locked.)
    cdef _MemoryLock entry
    if t._locks == 0:
        if not cnp.PyArray_Check(t._data):
            return 0
        arr = t._data
        if (type(arr) is ndarray and cnp.PyArray_BASE(<cnp.ndarray>arr) == NULL
                and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>arr) and t._links is None
                and _lock_index(<size_t><PyObject*>arr) < 0):
            # Memory its own array owns, locked by nobody: an inline lock.
            _lock_put(t)
            cnp.PyArray_CLEARFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_WRITEABLE)
            t._locks = 1
            return 0
        entry = _acquire_memory(t._data)
        _add_locker(entry, <PyObject*>t)
        # A view's base tensor holds an array over the same memory that its
        # chain to the owner does not pass through (NumPy points views at the
        # owner): from_numpy of a user's NumPy view, say. Its flag is cleared
        # too, or a write through it would change the saved values silently.
        view = _view_info(t)
        if view is not None and view[0] is not None:
            base_data = (<Tensor>view[0])._data
            if cnp.PyArray_Check(base_data) and _memory_owner(base_data) is entry.owner:
                _clear_chain(entry, base_data)
    t._locks += 1
    return 0


cdef int _unlock_tensor(Tensor t) except -1:
    cdef _MemoryLock entry
    if t._locks <= 0:
        return 0
    t._locks -= 1
    if t._locks or not cnp.PyArray_Check(t._data):
        return 0
    cdef Py_ssize_t i = _lock_index(<size_t><PyObject*>t._data)
    if i >= 0 and _lock_slots[i] == <PyObject*>t:
        _lock_remove(t)                 # its inline lock: the flag it cleared goes back
        cnp.PyArray_ENABLEFLAGS(<cnp.ndarray>t._data, cnp.NPY_ARRAY_WRITEABLE)
        return 0
    found = _find_lock(t._data)         # the entry _lock_tensor acquired (_data is unchanged)
    if found is None:
        return 0
    entry = <_MemoryLock>found
    _remove_locker(entry, <PyObject*>t)
    _release_memory(entry)
    return 0


cdef int _lock_array(object array, VersionCounter counter) except -1:
    # A node saved an output ``array``, whose writes ``counter`` counts.
    if cnp.PyArray_Check(array):
        _add_locker(_acquire_memory(array), <PyObject*>counter)
    return 0


cdef int _unlock_array(object array, VersionCounter counter) except -1:
    if not cnp.PyArray_Check(array):
        return 0
    found = _find_lock(array)
    if found is not None:
        _remove_locker(<_MemoryLock>found, <PyObject*>counter)
        _release_memory(<_MemoryLock>found)
    return 0


cdef bint _lock_inputs(GradFn node) except -1:
    cdef Py_ssize_t i
    cdef bint any_locked = False
    if node.args is None:
        return False
    for i in range(_n_edges(node)):
        v = _node_input_slot(node, i)
        if type(v) is Tensor or isinstance(v, Tensor):
            _lock_tensor(<Tensor>v)
            any_locked = True
    return any_locked


cdef int _unlock_saved(GradFn node) except -1:
    # Also runs from __dealloc__. GradFn and NodeExtras are never cleared by
    # the garbage collector (no_gc_clear), so what the node locked is still
    # there to unlock, even when the node was in a reference cycle.
    cdef Py_ssize_t i, n
    node.layout &= ~_LOCKED
    if node.op is None or node.next_fns is None or node.args is None:
        args = ()
    else:
        args = _args_of(node)
        if node.op.n_inputs < 0:
            args = args[0] if len(args) and type(args[0]) is tuple else ()
    n = min(_n_edges(node) if node.next_fns is not None else 0, len(args))
    for i in range(n):
        item = args[i]
        if isinstance(item, Tensor):
            _unlock_tensor(<Tensor>item)
    saved = node.saved_output
    counter = node.output_counter
    if saved is not None and counter is not None:
        if _num_outputs(node) == 1:
            if isinstance(counter, VersionCounter):
                _unlock_array(saved, <VersionCounter>counter)
        elif type(saved) is tuple and type(counter) is tuple:
            for i in range(min(len(<tuple>saved), len(<tuple>counter))):
                if isinstance((<tuple>counter)[i], VersionCounter) \
                        and (<tuple>saved)[i] is not None:     # None: packed by a hook
                    _unlock_array((<tuple>saved)[i], <VersionCounter>(<tuple>counter)[i])
    if node.extras is not None and node.extras.locked is not None:
        locked = node.extras.locked
        node.extras.locked = None
        for item in locked:
            if isinstance(item, Tensor):
                _unlock_tensor(<Tensor>item)
            else:
                _unlock_array(item[0], <VersionCounter>item[1])
    return 0


cdef bint _has_overlap(object array) noexcept:
    # A broadcast view: several elements at one address (read-only by design).
    # An empty array has no elements to share one (NumPy gives some a 0 stride).
    cdef int i
    cdef bint zero_stride = False
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(<cnp.ndarray>array)
    cdef cnp.npy_intp* strides = cnp.PyArray_STRIDES(<cnp.ndarray>array)
    for i in range(cnp.PyArray_NDIM(<cnp.ndarray>array)):
        if dims[i] == 0:
            return False
        if strides[i] == 0 and dims[i] > 1:
            zero_stride = True
    return zero_stride


cdef int _adopt(object array, object source) except -1:
    """Count a view oxmera made of locked memory as made read-only by oxmera.

    ``array`` is a view the op made of ``source``; made of an array oxmera
    made read-only, it is read-only as well (NumPy's rule), so oxmera gives
    it its flag back with the others when the memory is unlocked, and lets
    its own in-place ops write through it. Only when ``source`` is one of the
    arrays oxmera cleared (or adopted): a view of a user's read-only array,
    or a broadcast view, stays read-only. (NumPy points views at the array
    owning the memory, so their base cannot tell which array they came from.)
    """
    if (not _memory_locks or not cnp.PyArray_Check(array)
            or cnp.PyArray_ISWRITEABLE(<cnp.ndarray>array) or _has_overlap(array)):
        return 0
    found = _find_lock(array)
    if found is None or not _was_cleared(<_MemoryLock>found, source):
        return 0
    if not _was_cleared(<_MemoryLock>found, array):
        _remember_cleared(<_MemoryLock>found, array, True)
    return 0


cdef object _exposed(Tensor t):
    # ``t``'s array, about to be handed to the user (numpy(), __array__,
    # DLPack): if its memory is locked, it is made read-only now, like the
    # arrays that were there when the lock was taken.
    arr = t._data
    if _memory_locks and cnp.PyArray_Check(arr) and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>arr):
        found = _find_lock(arr)
        if found is not None:
            _clear_chain(<_MemoryLock>found, arr)
    return arr


def _memory_is_locked(array):
    """Whether a live graph saved the memory behind ``array`` for backward."""
    return cnp.PyArray_Check(array) and _find_lock(array) is not None


def _exported_array(Tensor t not None):
    """Python-callable twin of ``_exposed``: ``t``'s array, read-only while its memory is
    saved for backward (for exports such as DLPack)."""
    return _exposed(t)


cdef int _bump_savers(object array, VersionCounter own) except -1:
    # A write into ``array``'s memory: each graph that saved it must see it,
    # also through savers that share no version counter with the writer.
    cdef Py_ssize_t i, j
    cdef _MemoryLock entry
    cdef list bumped
    if not cnp.PyArray_Check(array):
        return 0
    found = _find_lock(array)
    if found is None:
        return 0
    entry = <_MemoryLock>found
    bumped = [own]
    i = 0
    while i < entry.n_lockers:          # (re-read: the list is the lock's, not a copy)
        saver = <object>_locker_slots(entry)[i]
        i += 1
        if isinstance(saver, Tensor):
            counter = _counter_of(<Tensor>saver)
        else:
            counter = saver
        for j in range(len(bumped)):
            if bumped[j] is counter:
                break
        else:
            (<VersionCounter>counter).value += 1
            bumped.append(counter)
    return 0


def _is_writeable(array):
    """Whether ``array`` is writeable, or read-only only because oxmera locked its memory.

    What copies of a tensor (pickle, deepcopy) should be: oxmera's lock is
    the live graph's, not part of the values.
    """
    if not cnp.PyArray_Check(array):
        return False
    if cnp.PyArray_ISWRITEABLE(<cnp.ndarray>array):
        return True
    found = _find_lock(array)
    return found is not None and _was_cleared(<_MemoryLock>found, array)


def _locked_memory():
    """How many blocks of memory are saved for backward by live graphs, and locks held
    on them: ``(blocks, locks)`` (for tests of the lock's bookkeeping)."""
    cdef size_t i
    cdef Py_ssize_t locks = 0
    if _lock_mask:
        for i in range(_lock_mask + 1):
            if _lock_slots[i] != NULL:
                if type(<object>_lock_slots[i]) is _MemoryLock:
                    locks += (<_MemoryLock>_lock_slots[i]).count
                else:
                    locks += 1              # an inline lock: one tensor saved it
    return _memory_locks, locks


def _inline_locks():
    """How many of the locked blocks of memory hold their saving tensor as the
    lock itself (no _MemoryLock made yet; for tests of that fast path)."""
    cdef size_t i
    cdef Py_ssize_t n = 0
    if _lock_mask:
        for i in range(_lock_mask + 1):
            if _lock_slots[i] != NULL and type(<object>_lock_slots[i]) is not _MemoryLock:
                n += 1
    return n


@cython.final
@cython.no_gc
@cython.auto_pickle(False)
cdef class _WriteBracket:
    """What :func:`_begin_write` returns and :func:`_end_write` takes (internal)."""
    cdef _MemoryLock entry         # the memory's lock, held for the write; None once ended
    cdef object array              # the array whose flag was lifted

    def __reduce__(self):
        raise TypeError("a write bracket cannot be copied or pickled")


def _begin_write(Tensor t not None):
    """Let an in-place op write into ``t``'s array if only oxmera's lock stops it.

    Returns what :func:`_end_write` needs to lock it again (None: nothing to
    do). The memory stays locked until then, whatever graph dies meanwhile
    (an operand's ``__array__``, another thread's backward). An array that is
    read-only for another reason (a broadcast view, a user's read-only array)
    stays read-only, so the write raises as it should.
    """
    cdef _WriteBracket bracket
    arr = t._data
    if not cnp.PyArray_Check(arr) or cnp.PyArray_ISWRITEABLE(<cnp.ndarray>arr):
        return None
    found = _find_lock(arr)
    if found is None or not _was_cleared(<_MemoryLock>found, arr):
        return None
    bracket = _WriteBracket.__new__(_WriteBracket)
    bracket.entry = <_MemoryLock>found
    bracket.array = arr
    bracket.entry.count += 1
    cnp.PyArray_ENABLEFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_WRITEABLE)
    return bracket


def _end_write(bracket):
    """Undo :func:`_begin_write` (None: nothing to undo; a second call does nothing)."""
    cdef _WriteBracket b
    if bracket is None:
        return
    if not isinstance(bracket, _WriteBracket):
        raise TypeError(f"_end_write() takes what _begin_write() returned, got "
                        f"{type(bracket).__name__}")
    b = <_WriteBracket>bracket
    if b.entry is None:
        return
    entry = b.entry
    arr = b.array
    b.entry = None
    b.array = None
    cnp.PyArray_CLEARFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_WRITEABLE)
    _release_memory(entry)


def write_unrecorded(t, other, kernel, *args):
    """``kernel(t's array, other's array, *args)`` for an in-place op that records
    nothing; whether the kernel wrote.

    Nothing happens (False) when ``t`` is not a Tensor, or when the write would
    be recorded: grad mode on and ``t`` or ``other`` (a Tensor, or an array or
    number, taken as it is) requiring grad. Otherwise ``kernel`` runs inside
    the write bracket (:func:`_begin_write`: memory only oxmera's lock keeps
    read-only is writeable for the call) and returns whether it wrote, as
    ``_kernels.scaled_update`` does; ``t``'s version is bumped when it did.
    A kernel that declines leaves the caller to take its general path. One
    compiled call for the optimizer's ``p.sub_(g, alpha=lr)`` (in Python the
    checks, the bracket and the bump were four frames an update).

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> from oxmera._core import _kernels
    >>> from oxmera._core.autograd import write_unrecorded
    >>> p = oxmera.ones(3)
    >>> write_unrecorded(p, oxmera.ones(3), _kernels.scaled_update, 0.5, True)
    True
    >>> p
    tensor([0.5, 0.5, 0.5], dtype=float32)
    """
    cdef bint other_is_tensor = isinstance(other, Tensor)
    if not isinstance(t, Tensor):
        return False
    if not oxmera_get_grad_off() and (
            ((<Tensor>t)._meta is not None and (<Tensor>t)._meta.requires_grad)
            or (other_is_tensor and (<Tensor>other)._meta is not None
                and (<Tensor>other)._meta.requires_grad)):
        return False
    bracket = _begin_write(<Tensor>t)
    try:
        wrote = kernel((<Tensor>t)._data, (<Tensor>other)._data if other_is_tensor else other,
                       *args)
    finally:
        _end_write(bracket)
    if not wrote:
        return False
    (<Tensor>t)._bump_version()
    return True


# ---------------------------------------------------------------------------
# The backward engine
# ---------------------------------------------------------------------------

cdef inline object _key(object o):
    # Node identity is the C address of the node (or leaf tensor), valid while
    # the graph is alive, which it is for the whole backward. A GradFn is its
    # own key: its hash is CPython's default, the address itself (computed in
    # C; GradFn defines no __hash__/__eq__), which saves building an int per
    # lookup. A Tensor (whose __hash__ is Python-level) is keyed by its address.
    if type(o) is GradFn:
        return o
    return <size_t><void*>o


cdef object _expected_shape(object fn, Py_ssize_t nr):
    if isinstance(fn, Tensor):
        return (<Tensor>fn)._data.shape
    if _num_outputs(<GradFn>fn) == 1:
        return (<tuple>(<GradFn>fn).out_info)[0]
    return (<tuple>(<tuple>(<GradFn>fn).out_info)[nr])[0]


cdef object _expected_dtype(object fn, Py_ssize_t nr):
    if isinstance(fn, Tensor):
        return (<Tensor>fn)._data.dtype
    if _num_outputs(<GradFn>fn) == 1:
        return (<tuple>(<GradFn>fn).out_info)[1]
    return (<tuple>(<tuple>(<GradFn>fn).out_info)[nr])[1]


cdef Tensor _as_grad_tensor(object g, GradFn node, Py_ssize_t i):
    if isinstance(g, Tensor):
        return <Tensor>g
    if _is_ndarray(g) or _is_np_scalar(g) or isinstance(g, (float, int)):
        return wrap_array(_np_asarray(g))
    raise TypeError(f"{node.op.backward_name} returned a {type(g).__name__} as the gradient of "
                    f"input {i}; a VJP must return Tensors or None")


cdef Tensor _fit_grad(Tensor g, object fn, Py_ssize_t nr, GradFn node, Py_ssize_t i):
    """Bring a VJP's gradient to the shape and dtype of the input it is for."""
    if (_sealable_type(fn) and cnp.PyArray_Check(g._data)
            and cnp.PyArray_Check((<Tensor>fn)._data)
            and _same_layout(<cnp.ndarray>g._data, <cnp.ndarray>(<Tensor>fn)._data)):
        return g        # a leaf's (or Parameter's) gradient of its shape and dtype: in C
    shape = _expected_shape(fn, nr)
    if not _has_shape(g._data, shape):
        got = g._data.shape
        summed = _sum_leading(g._data, shape)
        g = _sum_to_op(g, shape) if summed is None else wrap_array(summed)
        if g._data.shape != shape:
            raise RuntimeError(
                f"{node.op.backward_name} returned a gradient of shape {got} for input {i}, "
                f"which does not reduce to the input's shape {shape}")
    dtype = _expected_dtype(fn, nr)
    if (not cnp.PyArray_Check(g._data)
            or <void*>cnp.PyArray_DESCR(<cnp.ndarray>g._data) != <void*>dtype):
        if g._data.dtype != dtype:
            g = _cast_op(g, dtype)
    return g


cdef object _sum_leading(object array, tuple shape):
    """A float32 or float64 gradient with one leading dim more than ``shape`` (a
    bias's, over the batch) summed over it, when the backward records nothing
    and no profiler or anomaly mode watches ops; None otherwise (sum_to then).

    The add.reduce sum_to's op runs (the same loop, so the same bits), without
    the op's Python frames and wrapping, which cost more than a small reduction
    (~1 us a bias, three in an MLP's step).
    """
    cdef cnp.ndarray a
    cdef Py_ssize_t i, nd
    cdef int typenum
    if grad_enabled() or _profiler is not None or _anomaly_enabled:
        return None
    if not cnp.PyArray_Check(array):
        return None
    a = <cnp.ndarray>array
    nd = len(shape)
    typenum = cnp.PyArray_TYPE(a)
    if (cnp.PyArray_NDIM(a) != nd + 1 or (typenum != cnp.NPY_FLOAT and typenum != cnp.NPY_DOUBLE)
            or not cnp.PyArray_ISNOTSWAPPED(a)):
        return None
    for i in range(nd):
        if cnp.PyArray_DIM(a, i + 1) != <cnp.npy_intp>shape[i]:
            return None
    # (np.add.reduce, not the C API's PyArray_Sum: that kept a few bytes per
    # call alive, seen by tests/reliability/test_memory_soak.py)
    return _np_asarray(_np_add_reduce(a, 0))


cdef inline bint _same_layout(cnp.ndarray a, cnp.ndarray b) noexcept:
    # Same dtype descriptor and dims (not strides): ``a.shape == b.shape and
    # a.dtype is b.dtype`` without building tuples.
    cdef int nd = cnp.PyArray_NDIM(a)
    return (cnp.PyArray_DESCR(a) == cnp.PyArray_DESCR(b) and nd == cnp.PyArray_NDIM(b)
            and memcmp(cnp.PyArray_DIMS(a), cnp.PyArray_DIMS(b), nd * sizeof(cnp.npy_intp)) == 0)


cdef bint _has_shape(object array, tuple shape) except -1:
    # ``array.shape == shape`` read in C (``.shape`` builds a tuple per call).
    cdef Py_ssize_t i, ndim
    cdef cnp.npy_intp* dims
    if not cnp.PyArray_Check(array):
        return array.shape == shape
    ndim = cnp.PyArray_NDIM(<cnp.ndarray>array)
    dims = cnp.PyArray_DIMS(<cnp.ndarray>array)
    if ndim != len(shape):
        return False
    for i in range(ndim):
        if dims[i] != <cnp.npy_intp>shape[i]:
            return False
    return True


cdef object _accumulate(object old, Tensor g, bint create_graph):
    if old is None:
        return g
    if create_graph:
        return _add_op(old, g)
    old_arr = (<Tensor>old)._data
    arr = g._data
    # Small float arrays: NumPy's loop into a new array costs less than its
    # add even in place (the dispatch is most of the cost).
    total = _small_ufunc(_np_add, _add_loop64, _add_loop32, old_arr, arr)
    if total is not None:
        return wrap_array(total)
    # In place when nothing but the engine can see the pending gradient (the
    # caller, _task_add, holds the only reference to `old`, and `old` and
    # this local the only ones to its array, which is no view): the sum of a
    # weight's gradients over the steps of a recurrence was one fresh array
    # per step, at three times the cost of the add (bench/lstm.py).
    if (Py_REFCNT(old) == 1 and cnp.PyArray_Check(old_arr) and cnp.PyArray_Check(arr)
            and Py_REFCNT(old_arr) <= 2
            and cnp.PyArray_BASE(<cnp.ndarray>old_arr) == NULL
            and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>old_arr)
            and _same_layout(<cnp.ndarray>old_arr, <cnp.ndarray>arr)):
        _np_add(old_arr, arr, old_arr)
        return old
    total = _np_add(old_arr, arr)
    # NumPy returns a scalar, not an array, for two 0-d arrays.
    return wrap_array(total if type(total) is ndarray else _np_asarray(total))


cdef object _run_hooks(list hooks, Py_ssize_t nr, object grad, bint with_nr):
    # Hooks see the total gradient of one tensor; one returning a Tensor replaces it.
    grad = _private(grad)
    for entry in list(hooks):
        if with_nr:
            if entry[1] != nr:
                continue
            result = entry[2](grad)
        else:
            result = entry[1](grad)
        if result is not None:
            if not isinstance(result, Tensor):
                raise TypeError(f"a gradient hook returned a {type(result).__name__}; it must "
                                f"return a Tensor or None")
            if (<Tensor>result)._data.shape != (<Tensor>grad)._data.shape:
                raise RuntimeError(f"a gradient hook returned a gradient of shape "
                                   f"{(<Tensor>result)._data.shape} for a gradient of shape "
                                   f"{(<Tensor>grad)._data.shape}")
            # As PyTorch: a hook may not change the dtype either, or .grad
            # would silently take a dtype its tensor does not have.
            if (<Tensor>result)._data.dtype != (<Tensor>grad)._data.dtype:
                raise RuntimeError(f"a gradient hook returned a gradient of dtype "
                                   f"{(<Tensor>result)._data.dtype} for a gradient of dtype "
                                   f"{(<Tensor>grad)._data.dtype}")
            grad = result
    return grad


# Python numbers given for tensor inputs, as the 0-d arrays VJPs receive them
# (read-only: shared by every node that saved the same number), one table per
# type (2 == 2.0 == True as dict keys).
cdef dict _float_arrays = {}
cdef dict _int_arrays = {}


cdef Tensor _scalar_tensor(object v):
    # NumPy's dtype for the number (float64, int64, bool): exact, and 0-d, so
    # by the promotion rules it does not upcast the gradient it multiplies.
    if _is_np_scalar(v):
        v = v.item()
    table = _float_arrays if type(v) is float else _int_arrays if type(v) is int else None
    arr = None if table is None else (<dict>table).get(v)
    if arr is None:
        arr = _np_asarray(v)
        cnp.PyArray_CLEARFLAGS(<cnp.ndarray>arr, cnp.NPY_ARRAY_WRITEABLE)
        if table is not None and len(<dict>table) < 1024:
            (<dict>table)[v] = arr
    return wrap_array(arr)


cdef tuple _vjp_args(GradFn node):
    # The saved arguments with each Python number in a tensor slot as a 0-d
    # Tensor: a VJP only ever sees Tensors (or None) for its tensor inputs.
    # (Built in place, as apply_op builds a forward's arguments.)
    if node.extras is not None and node.extras.packed is not None:
        return _unpacked_args(node, True)
    held = node.args
    cdef Py_ssize_t i, n = _n_edges(node)
    cdef Py_ssize_t total = (len(<tuple>held) if type(held) is tuple
                             else 2 if node.layout & _PAIR_ARG else 1)
    cdef tuple args = PyTuple_New(total)
    for i in range(total):
        v = _arg_at(node, i)
        if i < n and v is not None and not isinstance(v, Tensor):
            v = _scalar_tensor(v)
        Py_INCREF(v)
        PyTuple_SET_ITEM(args, i, v)
    return args


cdef extern from "Python.h":
    object PyObject_Vectorcall(object callable, PyObject** args, size_t nargsf, PyObject* kwnames)


cdef object _vectorcall_vjp(object vjp, GradFn node, object grads, tuple args):
    # vjp(node, grads, *args) from a C array of borrowed references (the node
    # holds args): no argument tuple is built for the call, as Python builds
    # none for a Python function's.
    cdef PyObject* stack[10]
    cdef Py_ssize_t i, n = len(args)
    if n > 8:
        return vjp(node, grads, *args)
    stack[0] = <PyObject*>node
    stack[1] = <PyObject*>grads
    for i in range(n):
        stack[2 + i] = PyTuple_GET_ITEM(args, i)
    return PyObject_Vectorcall(vjp, stack, 2 + n, NULL)


cdef object _call_vjp(GradFn node, object grads, object args=None):
    # ``args``: the VJP's arguments if the caller made them (a tracer must see
    # the very 0-d Tensors _vjp_args made for Python numbers), else None.
    cdef OpDef op = node.op
    vjp = op.vjp
    if vjp is None:
        raise RuntimeError(f"{op.name} has no VJP registered, so it cannot be differentiated")
    if args is None:
        if node.layout & _SCALAR_INPUTS:
            args = _vjp_args(node)
        elif node.layout & _PAIR_ARG:
            args = _args_of(node)
        else:
            args = node.args
    kwargs = _kwargs_of(node)
    if kwargs is not None:
        result = vjp(node, grads, *(args if type(args) is tuple else (args,)), **kwargs)
    elif type(args) is not tuple:
        result = vjp(node, grads, args)
    else:
        result = _vectorcall_vjp(vjp, node, grads, <tuple>args)
    cdef Py_ssize_t n = _n_edges(node)
    if type(result) is not tuple and type(result) is not list:
        if n != 1 or op.n_inputs < 0:
            raise RuntimeError(f"{op.backward_name} returned one gradient for {n} inputs")
        return (result,)
    if len(result) != n:
        raise RuntimeError(f"{op.backward_name} returned {len(result)} gradients for {n} inputs")
    return result


# ---------------------------------------------------------------------------
# Replayed VJPs: the op calls of a VJP, noted once, rerun on arrays.
# ---------------------------------------------------------------------------
#
# In a backward that records nothing, a VJP's Python frame, the Tensor made
# for each intermediate and each op call's argument handling cost more than
# the NumPy calls themselves on small tensors (a sin node's VJP: ~13k
# instructions around ~7k of NumPy). For an op declared ``replay``
# (oxmera.extend.op), the first node of each *signature* runs its VJP with a
# _Tracer watching: every op the VJP calls is noted with where each tensor
# argument came from (the gradient, a saved input, the output, an earlier
# op's result) and its other arguments as constants, and what it returns.
# Later nodes of that signature rerun the noted ops on the arrays directly
# (_run_replay): no Python frame, no Tensor per intermediate, no parsing.
# The VJP stays the one definition, written in oxmera ops; create_graph,
# hooks, anomaly mode and the profiler run it as it is.
#
# The signature is everything a VJP may branch on besides values: which
# inputs need a gradient, the dtype and shape of the gradient, of each saved
# input and of the output it read, which inputs are one tensor (x * x), the
# call's other arguments (type and value), and the input shapes and dtypes
# it asked ctx for. Sound for a VJP whose op calls follow from those. The
# tracer refuses (the signature then runs the VJP as before, untraced) what
# it can see breaks that: a tensor argument that came from none of those
# (made outside an op), an argument that is not a constant (a list, an
# array, a NumPy scalar), a value read (item(), bool(), numpy(), tolist()),
# no_grad()/enable_grad() inside, ctx._frees_saved, a result that is not one
# of its tensors. What it cannot see (a VJP reading ``_data`` and computing
# with NumPy, an op whose output shape depends on values) is why ``replay``
# is declared per op, for VJPs read to meet the rule, and why the tests rerun
# every gradient case of those ops both ways and compare the bits.

# Signatures traced per op; past that, nodes of new signatures run the VJP.
cdef Py_ssize_t _MAX_REPLAYS = 8
cdef bint _replay_on = True


def set_vjp_replay(bint enabled):
    """Turn replayed VJPs on or off (for tests and measurements); returns the previous
    setting. Off, every VJP runs as Python code in every backward.

    Examples
    --------
    >>> from oxmera._core.autograd import set_vjp_replay
    >>> previous = set_vjp_replay(False)
    >>> _ = set_vjp_replay(previous)
    """
    global _replay_on
    previous = _replay_on
    _replay_on = enabled
    return previous


def forget_vjp_replays(OpDef op not None):
    """Drop the traces of ``op``'s VJP (the next nodes trace it again; for tests)."""
    op.replays = []


def vjp_replays(OpDef op not None):
    """The signatures of ``op`` traced so far, as ``(replayed, steps)`` pairs:
    ``replayed`` False for one the tracer refused, ``steps`` the op names it
    replays (for tests and for explaining a backward's cost)."""
    return [(not (<_Replay>r).refused,
             tuple([(<_Step>st).op.name for st in (<_Replay>r).steps or ()]))
            for r in op.replays]


@cython.final
@cython.auto_pickle(False)
cdef class _Ref:
    """A traced argument: the value in slot ``i`` of a replay (internal)."""
    cdef Py_ssize_t i


@cython.final
@cython.auto_pickle(False)
cdef class _Step:
    """One op call of a traced VJP (internal)."""
    cdef OpDef op
    cdef tuple args            # constants, and _Ref for the tensor arguments
    cdef dict kwargs           # its keyword arguments (constants), or None
    cdef Py_ssize_t out        # the slot of its (first) result
    cdef Py_ssize_t n_out      # results: 1, or the length of the tuple it returned
    cdef Py_ssize_t reuse      # a slot whose array dies here and may take the result, or -1
    cdef tuple frees           # slots last read here, dropped after it (memory)


@cython.final
@cython.auto_pickle(False)
cdef class _Replay:
    """A traced VJP: its signature and its op calls (internal)."""
    cdef bint refused          # the tracer refused it: the VJP runs as Python code
    cdef int mask              # the needs_input_grad flags, bit i for input i
    cdef Py_ssize_t n_in       # tensor inputs (the node's edges)
    cdef tuple descrs          # per slot 0..n_in (gradient, inputs): the dtype, or None if absent
    # npy_intp: per slot its ndim (-1 if absent) and dims, then per input the
    # index of an earlier input it is, or -1
    cdef bytes layout
    cdef tuple rest            # the node's arguments after its tensor inputs
    cdef dict kwargs           # the node's keyword arguments, or None
    cdef object out_descr      # the output's dtype when the VJP read ctx.output, else None
    cdef tuple out_shape
    cdef tuple reads           # ((kind, input, value), ...): ctx.input_shape/input_dtype read
    cdef list steps
    cdef Py_ssize_t n_slots
    cdef tuple results         # per input: the slot of its gradient, or -1 for None
    cdef object vjp            # the VJP traced (OpDef.vjp then)


@cython.final
@cython.auto_pickle(False)
cdef class _Tracer:
    """Watches one VJP's op calls (internal; see above)."""
    cdef dict slot_of          # id(Tensor) -> slot
    cdef list keep             # every tensor seen, so that no id is reused meanwhile
    cdef list steps
    cdef Py_ssize_t n_slots
    cdef Py_ssize_t output_slot     # ctx.output's slot (reserved if the op saves it), or -1
    cdef bint output_read
    cdef GradFn node
    cdef bint refused
    cdef list reads            # [(kind, input, value)] of ctx.input_shape/input_dtype

    cdef int add(self, object t, Py_ssize_t slot) except -1:
        self.keep.append(t)
        self.slot_of[id(t)] = slot
        return 0

    cdef object spec(self, object v):
        # A traced argument: a _Ref for a tensor of the trace, the value
        # itself for a constant; anything else refuses the trace.
        if isinstance(v, Tensor):
            slot = self.slot_of.get(id(v))
            if slot is None:
                self.refused = True
                return None
            ref = _Ref.__new__(_Ref)
            (<_Ref>ref).i = <Py_ssize_t>slot
            return ref
        if not _is_constant(v):
            self.refused = True
        return v


cdef bint _is_constant(object v) except -1:
    # Values a trace may keep as they are: immutable, and not read from a
    # tensor's values (Python numbers could be, but only through a read the
    # tracer sees: item(), float(), ...).
    cdef type t = type(v)
    if v is None or v is Ellipsis or t is bool or t is int or t is float or t is complex \
            or t is str or isinstance(v, np.dtype):
        return True
    if isinstance(v, tuple):
        for item in <tuple>v:
            if not _is_constant(item):
                return False
        return True
    if t is slice:
        return (_is_constant((<slice>v).start) and _is_constant((<slice>v).stop)
                and _is_constant((<slice>v).step))
    return False


cdef void _trace_refuse() noexcept:
    cdef PyObject* tracer = oxmera_get_tracer()
    if tracer != NULL:
        (<_Tracer>tracer).refused = True


cdef int _trace_output(GradFn node, object out) except -1:
    cdef PyObject* raw = oxmera_get_tracer()
    if raw == NULL:
        return 0
    tracer = <_Tracer>raw
    if node is not tracer.node:
        tracer.refused = True       # another node's output
        return 0
    if tracer.output_slot < 0:
        tracer.refused = True       # (an op that saves its output reserves the slot)
        return 0
    tracer.output_read = True
    tracer.add(out, tracer.output_slot)
    return 0


cdef int _trace_input_read(GradFn node, int kind, Py_ssize_t i, object value) except -1:
    cdef PyObject* raw = oxmera_get_tracer()
    if raw == NULL:
        return 0
    tracer = <_Tracer>raw
    if node is not tracer.node:
        tracer.refused = True
        return 0
    tracer.reads.append((kind, i, value))
    return 0


cdef object _traced_op(OpDef op, tuple args, dict kwargs):
    # An op called by a traced VJP: run it (untraced inside: its forward is
    # not the VJP's business) and note the call.
    cdef _Tracer tracer = <_Tracer>oxmera_get_tracer()
    cdef _Step step
    cdef Py_ssize_t k
    spec_args = tuple([tracer.spec(v) for v in args])
    spec_kwargs = None
    refs = False
    if kwargs:
        spec_kwargs = {}
        for key, v in kwargs.items():
            spec_kwargs[key] = tracer.spec(v)
            refs = refs or isinstance(v, Tensor)
    oxmera_set_tracer(NULL)
    try:
        out = _apply_op(op, args, kwargs, None)
    finally:
        oxmera_set_tracer(<PyObject*>tracer)
    if tracer.refused:
        return out
    if (op.n_inputs < 0 or (op.output_type is not None and op.view) or not op.internal
            or refs or len(args) < op.n_inputs):
        # A sequence of tensors (cat), a view among named outputs, a user's
        # op, or tensor inputs given by keyword or left to defaults (a replay
        # passes the forward exactly the positional arguments it noted): not
        # replayed.
        tracer.refused = True
        return out
    step = _Step.__new__(_Step)
    step.op = op
    step.args = spec_args
    step.kwargs = spec_kwargs
    step.out = tracer.n_slots
    step.reuse = -1
    step.frees = ()
    # (Named outputs come as their named tuple, all of them, hidden ones
    # included: the forward's results, which a replay gets.)
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    step.n_out = len(outs)
    for k in range(step.n_out):
        if not isinstance(outs[k], Tensor):
            tracer.refused = True
            return out
        tracer.add(outs[k], tracer.n_slots)
        tracer.n_slots += 1
    tracer.steps.append(step)
    return out


cdef inline int _needs_mask(GradFn node):
    cdef int mask = 0
    cdef Py_ssize_t i
    for i in range(_n_edges(node)):
        if _edge(node, i) is not None:
            mask |= 1 << i
    return mask


cdef inline bint _same_shape(cnp.ndarray a, tuple shape):
    cdef Py_ssize_t k, nd = cnp.PyArray_NDIM(a)
    cdef cnp.npy_intp* dims = cnp.PyArray_DIMS(a)
    if nd != len(shape):
        return False
    for k in range(nd):
        if dims[k] != <Py_ssize_t>(<object>PyTuple_GET_ITEM(shape, k)):
            return False
    return True


cdef inline bint _same_value(object a, object b) except -1:
    # Arguments of one signature: same type and equal (1, 1.0 and True differ).
    return a is b or (type(a) is type(b) and a == b)


cdef object _slot_array(object v):
    # A gradient, input or output's array as a replay reads it, or None when
    # it is not a base-class ndarray (a trace only ever holds those) of an
    # exact Tensor or a Parameter (what _replay_matches accepts: a subclass
    # of one's own may change what the VJP's ops do).
    if isinstance(v, Tensor):
        if not _sealable_type(v):
            return None
        v = (<Tensor>v)._data
    return v if type(v) is ndarray else None


cdef bint _replayable_values(object grad, tuple args, Py_ssize_t n) noexcept:
    # No gradient or input is a Tensor subclass other than Parameter: a trace
    # of such a call could never be matched, so it would only take a slot.
    cdef Py_ssize_t i
    for i in range(min(n, len(args)) + 1):
        v = grad if i == 0 else <object>PyTuple_GET_ITEM(args, i - 1)
        if isinstance(v, Tensor) and not _sealable_type(v):
            return False
    return True


cdef bint _replay_matches(_Replay r, GradFn node, object grad, tuple args) except -1:
    cdef Py_ssize_t i, j, nd, n = r.n_in
    cdef const cnp.npy_intp* p = <const cnp.npy_intp*>PyBytes_AS_STRING(r.layout)
    cdef PyObject* v
    cdef cnp.ndarray arr
    if (r.mask != _needs_mask(node) or _n_edges(node) != n
            or len(args) != n + len(r.rest)):
        return False        # (the edge count guards the layout's length too)
    for i in range(n + 1):
        v = <PyObject*>grad if i == 0 else PyTuple_GET_ITEM(args, i - 1)
        nd = p[0]
        p += 1
        if v == <PyObject*>None:
            if nd >= 0:
                return False
            continue
        if nd < 0 or not _sealable_type(<object>v) or type((<Tensor>v)._data) is not ndarray:
            return False
        arr = <cnp.ndarray>(<Tensor>v)._data
        if (<PyObject*>cnp.PyArray_DESCR(arr) != PyTuple_GET_ITEM(r.descrs, i)
                or cnp.PyArray_NDIM(arr) != nd
                or memcmp(cnp.PyArray_DIMS(arr), p, nd * sizeof(cnp.npy_intp)) != 0):
            return False
        p += nd
    # Which inputs are one tensor: p[i] the earlier input that input i is, or -1.
    for i in range(1, n):
        j = p[i]
        v = PyTuple_GET_ITEM(args, i)
        if j >= 0:
            if v != PyTuple_GET_ITEM(args, j):
                return False
        elif v != <PyObject*>None:
            for j in range(i):
                if PyTuple_GET_ITEM(args, j) == v:
                    return False
    for i in range(len(r.rest)):
        if not _same_value(args[n + i], r.rest[i]):
            return False
    kwargs = _kwargs_of(node)
    if (kwargs is None) != (r.kwargs is None):
        return False
    if kwargs is not None:
        if len(kwargs) != len(r.kwargs):
            return False
        for key, value in kwargs.items():
            if key not in r.kwargs or not _same_value(value, r.kwargs[key]):
                return False
    if r.out_descr is not None:
        out = node.saved_output
        if (type(out) is not ndarray
                or <object>cnp.PyArray_DESCR(<cnp.ndarray>out) is not r.out_descr
                or not _same_shape(<cnp.ndarray>out, r.out_shape)):
            return False
    if r.reads is not None:
        for kind, i, value in r.reads:
            fn = _input_edge(node, i)
            nr = 0 if _input_nrs(node) is None else _input_nrs(node)[i]
            now = _expected_shape(fn, nr) if kind == 0 else _expected_dtype(fn, nr)
            if now != value:
                return False
    return True


cdef _Replay _signature(GradFn node, object grad, tuple args, Py_ssize_t n):
    # The signature of this call, as _replay_matches reads it.
    cdef _Replay r = _Replay.__new__(_Replay)
    cdef Py_ssize_t i, j
    r.mask = _needs_mask(node)
    r.n_in = n
    descrs = []
    shapes = []
    for i in range(n + 1):
        v = grad if i == 0 else args[i - 1]
        arr = None if v is None else _slot_array(v)
        if v is not None and arr is None:
            r.refused = True            # an array subclass or a non-array: not traced
        descrs.append(None if arr is None else arr.dtype)
        shapes.append(None if arr is None else arr.shape)
    r.descrs = tuple(descrs)
    # The layout _replay_matches reads: per slot its number of dims (-1 if
    # absent) and its dims, then per input the earlier input it is, or -1.
    layout = []
    for shape in shapes:
        if shape is None:
            layout.append(-1)
        else:
            layout.append(len(shape))
            layout.extend(shape)
    for i in range(n):
        found = -1
        if args[i] is not None:
            for j in range(i):
                if args[j] is args[i]:
                    found = j
                    break
        layout.append(found)
    r.layout = np.array(layout, dtype=np.intp).tobytes()
    r.rest = args[n:]
    for v in r.rest:
        if not _is_constant(v):
            r.refused = True
    kwargs = _kwargs_of(node)
    r.kwargs = None if kwargs is None else dict(kwargs)
    if r.kwargs is not None:
        for v in r.kwargs.values():
            if not _is_constant(v):
                r.refused = True
    return r


cdef object _trace_vjp(GradFn node, object grad, tuple args):
    # Run the VJP with a tracer watching, keep what it noted as a replay of
    # this signature, and return the VJP's result.
    global _n_tracing
    cdef Py_ssize_t i, n = _n_edges(node)
    cdef _Replay r = _signature(node, grad, args, n)
    cdef _Tracer tracer = _Tracer.__new__(_Tracer)
    r.vjp = node.op.vjp
    tracer.slot_of = {}
    tracer.keep = []
    tracer.steps = []
    tracer.reads = []
    tracer.node = node
    tracer.output_slot = -1
    tracer.n_slots = n + 1
    if node.op.save_output:
        tracer.output_slot = n + 1
        tracer.n_slots = n + 2
    tracer.refused = r.refused
    tracer.add(grad, 0)
    for i in range(n):
        if isinstance(args[i], Tensor):
            tracer.add(args[i], i + 1)
    previous = oxmera_get_tracer()
    _n_tracing += 1
    oxmera_set_tracer(<PyObject*>tracer)
    # Plain no-grad mode, not _OFF_IN_BACKWARD: the trace notes every product
    # (a replay makes _unit_product's test itself, on each node's arrays).
    try:
        # The arguments the tracer was given: a Python number's 0-d Tensor is
        # made anew by each _vjp_args (a trace of another one would refuse).
        result = _call_vjp(node, grad, args)
    finally:
        oxmera_set_tracer(previous)
        _n_tracing -= 1
    _finish_trace(r, tracer, node, result)
    if len(node.op.replays) < _MAX_REPLAYS:
        node.op.replays.append(r)
    return result


cdef int _finish_trace(_Replay r, _Tracer tracer, GradFn node, object result) except -1:
    # The trace's steps, its results, and when each slot's array can go.
    cdef Py_ssize_t k, s
    cdef _Step step
    r.steps = tracer.steps
    r.n_slots = tracer.n_slots
    r.reads = tuple(tracer.reads) if tracer.reads else None
    r.refused = r.refused or tracer.refused
    if tracer.output_read:
        if type(node.saved_output) is not ndarray:
            r.refused = True
        else:
            r.out_descr = node.saved_output.dtype
            r.out_shape = node.saved_output.shape
    results = []
    for g in result:
        if g is None:
            results.append(-1)
            continue
        slot = tracer.slot_of.get(id(g)) if isinstance(g, Tensor) else None
        if slot is None:
            r.refused = True
            break
        results.append(slot)
    r.results = tuple(results)
    if r.refused:
        r.steps = None
        return 0
    # Each intermediate's last reader drops it; its array may take that
    # step's result when the step is a plain NumPy call (_run_replay checks
    # at run time that nothing else holds it).
    last = [-1] * r.n_slots
    for k in range(len(r.steps)):
        step = <_Step>r.steps[k]
        for v in step.args:
            if type(v) is _Ref:
                last[(<_Ref>v).i] = k
    kept = set(r.results)
    first = r.n_in + 1 + (1 if tracer.output_slot >= 0 else 0)     # the first intermediate
    for k in range(len(r.steps)):
        step = <_Step>r.steps[k]
        frees = []
        for s in range(first, r.n_slots):
            if last[s] == k and s not in kept:
                frees.append(s)
        step.frees = tuple(frees)
        if (step.op.numpy_forward is not None and step.kwargs is None and step.n_out == 1
                and not step.op.view and step.op.n_inputs == 2 and len(step.args) == 2):
            for v in step.args:
                if type(v) is _Ref and (<_Ref>v).i in frees:
                    step.reuse = (<_Ref>v).i
                    break
    return 0


cdef object _run_replay(_Replay r, GradFn node, Tensor grad, tuple args):
    # The traced VJP's op calls, on the arrays of this node.
    cdef Py_ssize_t i, k, s, n = r.n_in, nargs, n_in
    cdef _Step step
    cdef OpDef op
    cdef list vals = [None] * r.n_slots
    cdef tuple fargs
    cdef bint any_array
    vals[0] = grad._data
    for i in range(n):
        v = args[i]
        if v is not None:
            vals[i + 1] = (<Tensor>v)._data
    if r.out_descr is not None:
        vals[n + 1] = node.saved_output
    for step_obj in r.steps:
        step = <_Step>step_obj
        op = step.op
        nargs = len(step.args)
        n_in = op.n_inputs
        any_array = False
        fargs = PyTuple_New(nargs)
        for i in range(nargs):
            v = <object>PyTuple_GET_ITEM(step.args, i)
            if type(v) is _Ref:
                v = vals[(<_Ref>v).i]
                if i < n_in:
                    any_array = True
            Py_INCREF(v)
            PyTuple_SET_ITEM(fargs, i, v)
        if n_in and not any_array:
            fargs = _numbers_to_arrays(fargs, n_in)
        out = None
        if op.unit is not None and nargs == n_in:
            out = _unit_results(op, fargs)
        if out is None:
            reuse = None
            if step.reuse >= 0:
                reuse = _dead_array(vals, step.reuse, fargs)
            out = _forward(op, fargs, nargs, step.kwargs, reuse, fargs)
            if op.view and _memory_locks and _is_view_of(out, fargs[0]):
                _adopt(out, fargs[0])       # as apply_op does: a view of locked memory
        fargs = None
        if step.n_out == 1:
            if type(out) is tuple:
                raise RuntimeError(f"{node.op.backward_name}: a replayed call of {op.name} "
                                   f"returned several results where its trace had one")
            vals[step.out] = out if type(out) is ndarray else _np_asarray(out)
        else:
            if type(out) is not tuple or len(<tuple>out) != step.n_out:
                raise RuntimeError(f"{node.op.backward_name}: a replayed call of {op.name} "
                                   f"returned another number of results than its trace")
            for k in range(step.n_out):
                o = (<tuple>out)[k]
                vals[step.out + k] = o if type(o) is ndarray else _np_asarray(o)
        out = None
        for s in step.frees:
            vals[s] = None
    # The gradients: the node's own tensors where the VJP returned one of
    # them, one Tensor per other slot (a slot returned twice is one Tensor).
    results = PyTuple_New(n)
    for i in range(n):
        s = <Py_ssize_t>r.results[i]
        if s < 0:
            g = None
        elif s == 0:
            g = grad
        elif s <= n:
            g = args[s - 1]
        else:
            g = None
            for k in range(i):
                if <Py_ssize_t>r.results[k] == s:
                    g = <object>PyTuple_GET_ITEM(results, k)
                    break
            if g is None:
                g = wrap_array(vals[s])
        Py_INCREF(g)
        PyTuple_SET_ITEM(results, i, g)
    return results


cdef object _unit_results(OpDef op, tuple fargs):
    # _unit_product on the arrays of a call (a replayed one, or a pair
    # product's): for a product of two, the read-only operand itself (as a
    # view) when the other is the op's unit; for a pair product
    # ``(u*v, u*w)``, views of read-only ``v`` and ``w`` when ``u`` is the
    # unit; else None (computed).
    cdef Py_ssize_t i
    u0 = fargs[0]
    u1 = fargs[1]
    if type(u0) is not ndarray or type(u1) is not ndarray:
        return None
    if op.n_inputs == 3:
        u2 = fargs[2]
        if (type(u2) is ndarray
                and _is_unit(<cnp.ndarray>u0, <cnp.ndarray>u1, op.unit)
                and _is_unit(<cnp.ndarray>u0, <cnp.ndarray>u2, op.unit)
                and not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>u1)
                and not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>u2)):
            return ((<cnp.ndarray>u1).view(), (<cnp.ndarray>u2).view())
        return None
    for i in range(2):
        u = u0 if i == 0 else u1
        v = u1 if i == 0 else u0
        if (_is_unit(<cnp.ndarray>u, <cnp.ndarray>v, op.unit)
                and not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>v)):
            return (<cnp.ndarray>v).view()
    return None


cdef object _dead_array(list vals, Py_ssize_t s, tuple fargs):
    # The array in slot ``s``, read for the last time by this step (of two
    # inputs), when nothing else holds it (the list, the step's argument
    # tuple and this local do), it owns its writable memory, is big enough
    # to be worth it, and the other operand leaves the result its shape and
    # dtype: the result may be written into it, as NumPy does with its own
    # temporaries (_writes_into checks the dtypes again after promotion).
    cdef Py_ssize_t k, lead
    cdef cnp.ndarray o, a
    arr = vals[s]
    if (type(arr) is not ndarray or Py_REFCNT(arr) != 3
            or cnp.PyArray_BASE(<cnp.ndarray>arr) != NULL
            or not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>arr)
            or cnp.PyArray_NBYTES(<cnp.ndarray>arr) < _REUSE_MIN_BYTES):
        return None
    a = <cnp.ndarray>arr
    other = fargs[1] if fargs[0] is arr else fargs[0]
    if isinstance(other, (float, int)):
        return arr
    if type(other) is not ndarray:
        return None
    o = <cnp.ndarray>other
    if (cnp.PyArray_TYPE(o) != cnp.PyArray_TYPE(a)
            or cnp.PyArray_NDIM(o) > cnp.PyArray_NDIM(a)):
        return None
    lead = cnp.PyArray_NDIM(a) - cnp.PyArray_NDIM(o)
    for k in range(cnp.PyArray_NDIM(o)):
        if cnp.PyArray_DIMS(o)[k] != 1 and cnp.PyArray_DIMS(o)[k] != cnp.PyArray_DIMS(a)[lead + k]:
            return None
    return arr


cdef object _replayed_vjp(GradFn node, object grads):
    # The VJP of a ``replay`` op's node in a backward that records nothing:
    # replayed when a trace of its signature exists, traced when none does
    # (and there is room), else run as Python code.
    cdef OpDef op = node.op
    if (_num_outputs(node) != 1 or type(grads) is not Tensor or op.vjp is None
            or (node.extras is not None and node.extras.packed is not None)
            or _n_edges(node) > 30):      # (the needs flags are bits of an int)
        return None
    if op.replays and (<_Replay>op.replays[0]).vjp is not op.vjp:
        op.replays = []     # OpDef.vjp was replaced: the traces are of another function
    args = _vjp_args(node) if node.layout & _SCALAR_INPUTS else _args_of(node)
    for r in op.replays:
        if _replay_matches(<_Replay>r, node, grads, <tuple>args):
            if (<_Replay>r).refused:
                return None
            return _run_replay(<_Replay>r, node, <Tensor>grads, <tuple>args)
    if len(op.replays) >= _MAX_REPLAYS:
        return None
    if not _replayable_values(grads, <tuple>args, _n_edges(node)):
        return None
    return _trace_vjp(node, grads, <tuple>args)


cdef object _call_own_vjp(GradFn node, object grads):
    # One of oxmera's own VJPs, in a backward that records nothing, runs with
    # the flag at _OFF_IN_BACKWARD (_unit_product); only it: hooks, a user's
    # VJP and the engine between nodes see 1, so their products are computed.
    if oxmera_get_grad_off() != 1 or not node.op.internal:
        return _call_vjp(node, grads)
    if node.op.replay and _replay_on:
        result = _replayed_vjp(node, grads)
        if result is not None:
            return result
    oxmera_set_grad_off(_OFF_IN_BACKWARD)
    try:
        return _call_vjp(node, grads)
    finally:
        oxmera_set_grad_off(1)


cdef object _call_vjp_with_hooks(GradFn node, object grads):
    # Node hooks see and return tuples, whatever the number of outputs.
    multi = _num_outputs(node) > 1
    outs = tuple([_private(g) for g in grads]) if multi else (_private(grads),)
    for entry in list(node.extras.fn_hooks[0]):
        result = entry[1](outs)
        if result is not None:
            result = tuple(result)
            if len(result) != len(outs):
                raise RuntimeError(f"a pre-hook of {node.op.backward_name} returned "
                                   f"{len(result)} gradients for {len(outs)} outputs")
            outs = result
    grads_in = tuple([_private(g) for g in _call_own_vjp(node, outs if multi else outs[0])])
    for entry in list(node.extras.fn_hooks[1]):
        result = entry[1](grads_in, outs)
        if result is not None:
            result = tuple(result)
            if len(result) != len(grads_in):
                raise RuntimeError(f"a hook of {node.op.backward_name} returned "
                                   f"{len(result)} gradients for {len(grads_in)} inputs")
            grads_in = result
    return grads_in


cdef int _check_anomaly(GradFn node, object grads_in) except -1:
    # Anomaly mode: the first VJP to produce a NaN/Inf stops the backward,
    # naming the op and showing where the forward created it.
    for i in range(len(grads_in)):
        g = grads_in[i]
        if g is None:
            continue
        arr = (<Tensor>g)._data if isinstance(g, Tensor) else _np_asarray(g)
        if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            kind = "nan" if np.isnan(arr).any() else "inf"
            trace = None if node.extras is None else node.extras.creation_trace
            where = (f"\nThe forward call that created {node.op.backward_name} "
                     f"(most recent call last):\n{trace}" if trace is not None else
                     "\n(No forward traceback: the op ran before anomaly mode was enabled.)")
            raise RuntimeError(f"Function '{node.op.backward_name}' returned {kind} values in "
                               f"its {i}th output (the gradient for input {i} of "
                               f"{node.op.name}).{where}")
    return 0


cdef extern from "numpy/arrayobject.h":
    # np.empty_like without its Python-level dispatch (descr NULL: the prototype's)
    object PyArray_NewLikeArray(cnp.ndarray prototype, cnp.NPY_ORDER order, void* descr,
                                int subok)


cdef Tensor _root_gradient(Tensor t, object gradient, Py_ssize_t i, bint create_graph):
    cdef cnp.ndarray seed
    if (gradient is None and cnp.PyArray_Check(t._data)
            and cnp.PyArray_SIZE(<cnp.ndarray>t._data) == 1
            and not cnp.PyTypeNum_ISCOMPLEX(cnp.PyArray_TYPE(<cnp.ndarray>t._data))):
        # loss.backward()'s seed of ones, made and filled in C (np.ones is a
        # Python function, np.empty_like dispatches through Python: ~0.5 us)
        seed = PyArray_NewLikeArray(<cnp.ndarray>t._data, cnp.NPY_KEEPORDER, NULL, 0)
        cnp.PyArray_FillWithScalar(seed, 1)
        return wrap_array(seed)
    if gradient is None:
        if t._data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs; the output {i} has "
                f"shape {t._data.shape}: pass `gradient` (a tensor of that shape)")
        if t._data.dtype.kind == "c":
            raise RuntimeError(
                f"grad can be implicitly created only for real scalar outputs; the output {i} "
                f"has dtype {t._data.dtype}: pass `gradient`, or take a real part or abs first")
        # loss.backward()'s seed of ones: np.empty_like and fill are C calls
        # (np.ones is a Python function, 0.3 us more)
        seed = _np_empty_like(t._data)
        seed.fill(1)
        return wrap_array(seed)
    shape = t._data.shape
    if isinstance(gradient, Tensor) and create_graph:
        g = <Tensor>gradient
    elif isinstance(gradient, Tensor):
        g = wrap_array((<Tensor>gradient)._data)        # as_array's answer, minus a call
    else:
        g = wrap_array(as_array(gradient))
    if (cnp.PyArray_Check(g._data) and cnp.PyArray_Check(t._data)
            and _same_layout(<cnp.ndarray>g._data, <cnp.ndarray>t._data)):
        return g        # the commonest case, checked in C
    if g._data.shape != shape:
        raise RuntimeError(
            f"Mismatch in shape: grad_output[{i}] has a shape of {g._data.shape} and "
            f"output[{i}] has a shape of {shape}")
    if g._data.dtype != t._data.dtype:
        if g._data.dtype.kind not in "biufc":
            raise TypeError(f"grad_output[{i}] has dtype {g._data.dtype}")
        if create_graph:
            g = _cast_op(g, t._data.dtype)
        else:
            g = wrap_array(g._data.astype(t._data.dtype))
    return g


@cython.final
@cython.freelist(256)
@cython.no_gc        # a pending gradient references no task or node: no cycles
@cython.auto_pickle(False)
cdef class _Task:
    """One node's (or leaf's) bookkeeping during one backward (internal)."""
    # 32 bytes: one per node of the graph, all alive at once during a backward.
    # (The node or leaf a task belongs to is known wherever the task is read.)
    cdef object grad          # pending gradient: a Tensor, a list per output, or None
    cdef int deps             # incoming edges that have not delivered yet
    # The backward this task belongs to (run << 2) and its state (the two low
    # bits): 1 a wanted input; 2 leads to one (always 2 without inputs).
    cdef unsigned int mark

    def __reduce__(self):
        raise TypeError(_NOT_COPYABLE.format("_Task"))


cdef inline _Task _new_task(int deps, unsigned int run, int state):
    cdef _Task task = _Task.__new__(_Task)
    task.deps = deps
    task.mark = run << 2 | <unsigned int>state
    return task


cdef inline int _state(_Task task) noexcept:
    return task.mark & 3


cdef inline void _set_state(_Task task, int state) noexcept:
    task.mark = (task.mark & ~<unsigned int>3) | <unsigned int>state


# Each backward's number, telling its tasks from another thread's (30 bits,
# beside a task's state; 0 is never used).
cdef unsigned int _next_run = 0
cdef unsigned int _RUN_MASK = (1 << 30) - 1


# Finding a node's task: the node holds it (GradFn.aux) while the backward
# runs, so the common lookup is a field read, and a deep graph needs no
# dictionary of all its nodes. Leaves, which threads share, and nodes that
# another thread's backward holds at the moment, are keyed in ``tasks``.

cdef inline object _find(object fn, dict tasks, unsigned int run):
    cdef object found
    if type(fn) is GradFn:
        found = (<GradFn>fn).aux
        if type(found) is _Task and (<_Task>found).mark >> 2 == run:
            return found
        return tasks.get(fn)
    return tasks.get(<size_t><void*>fn)


@cython.final
@cython.no_gc        # nodes and numbers only, and nothing references it but its backward
@cython.auto_pickle(False)
cdef class _Claims:
    """The nodes whose GradFn.aux one backward set (internal), to reset at its end."""
    # A backward with ``inputs`` lists them: its nodes that lead to none never
    # run. One without releases each node's claim when the node runs, so it
    # keeps only a count (a list would cost 8 bytes a node at the backward's
    # peak), and on an error walks the graph from its roots.
    cdef list nodes               # the claimed nodes, or None (counted only)
    cdef Py_ssize_t outstanding   # claims not yet released (counted mode)
    cdef list roots               # the roots' nodes and leaves, for that walk
    # Counted mode: what GradFn.aux holds for a node reached by one edge so
    # far, which needs no task of its own (no run matches its mark, 0): most
    # nodes of a chain or a tree, whose task is made when the gradient arrives.
    cdef _Task once


cdef inline int _claim(object fn, _Task task, dict tasks, _Claims claims) except -1:
    if type(fn) is GradFn and (<GradFn>fn).aux is None:
        (<GradFn>fn).aux = task
        if claims.nodes is not None:
            claims.nodes.append(fn)
        else:
            claims.outstanding += 1
    else:
        tasks[_key(fn)] = task
    return 0


cdef inline void _unclaim(GradFn node, _Task task, _Claims claims) noexcept:
    # A node that ran gives its claim back at once (counted mode).
    if claims.nodes is None and node.aux is task:
        node.aux = None
        claims.outstanding -= 1


cdef int _release_claims(_Claims claims, unsigned int run) except -1:
    cdef GradFn node
    cdef Py_ssize_t i
    if claims.nodes is not None:
        for fn in claims.nodes:
            node = <GradFn>fn
            if type(node.aux) is _Task and (<_Task>node.aux).mark >> 2 == run:
                node.aux = None
        return 0
    if claims.outstanding <= 0:
        return 0
    # Some nodes never ran (an error stopped the backward): find them from
    # the roots, through nodes that did run too.
    seen = set()
    stack = list(claims.roots)
    while stack:
        fn = stack.pop()
        if type(fn) is not GradFn or id(fn) in seen:
            continue
        seen.add(id(fn))
        node = <GradFn>fn
        if type(node.aux) is _Task and (node.aux is claims.once
                                        or (<_Task>node.aux).mark >> 2 == run):
            node.aux = None
        for i in range(_n_edges(node)):
            nxt = _edge(node, i)
            if type(nxt) is GradFn:
                stack.append(nxt)
    claims.outstanding = 0
    return 0


def run_backward(tuple tensors not None, tuple grad_tensors not None, bint retain_graph,
                 bint create_graph, tuple inputs=None, bint allow_unused=False,
                 bint accumulate=True):
    """The engine. Send ``grad_tensors`` back from ``tensors`` through the tape.

    With ``accumulate`` (``backward``), gradients are added into ``.grad`` of
    the leaves (only of ``inputs`` if given) and of tensors that called
    ``retain_grad()``. Without it (``autograd.grad``), the gradients of
    ``inputs`` are returned as a tuple and no ``.grad`` changes.

    The pass is in two phases: an iterative depth-first search (an explicit
    stack, no recursion) gives every reachable node a task recording its
    incoming edges (its dependency count), and, when only some inputs are
    wanted, marks the nodes on a path to them (in post-order); then
    gradients are propagated from the outputs, a node running once all its
    incoming edges have delivered (its count reaches zero). Nodes are
    identified by their address while searching; pending gradients live in
    the tasks and are dropped as soon as consumed.
    """
    cdef Py_ssize_t i
    cdef Tensor t, g
    cdef dict tasks = {}            # leaf address (or contested node) -> its _Task
    cdef dict leaf_targets = None  # key -> [indices into inputs] (a leaf may be listed twice)
    cdef dict node_targets = None  # key -> [(output_nr, index into inputs)]
    cdef list results = None
    cdef bint targeted = inputs is not None

    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} gradients for {len(tensors)} outputs")
    # -- validate everything before changing anything --------------------
    roots = []
    for i in range(len(tensors)):
        r = tensors[i]
        if not isinstance(r, Tensor):
            raise TypeError(f"backward(): outputs must be Tensors, got {type(r).__name__} at {i}")
        t = <Tensor>r
        if t._links is not None:
            _refresh_view(t)
        if t._meta is None or not t._meta.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        g = _root_gradient(t, grad_tensors[i], i, create_graph)
        roots.append((t, g))
    if targeted:
        leaf_targets = {}
        node_targets = {}
        results = [None] * len(inputs)
        for i in range(len(inputs)):
            r = inputs[i]
            if not isinstance(r, Tensor):
                raise TypeError(f"inputs must be Tensors, got {type(r).__name__} at {i}")
            t = <Tensor>r
            if t._meta is None or not t._meta.requires_grad:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not "
                                   f"require grad")
            if t._meta.grad_fn is None:
                leaf_targets.setdefault(_key(t), []).append(i)
            else:
                entries = node_targets.setdefault(_key(t._meta.grad_fn), [])
                # backward(inputs=[y, y]) accumulates into y.grad once; grad()
                # must still fill every position, so only accumulate dedupes.
                if accumulate and any(inputs[j] is t for _, j in entries):
                    continue
                entries.append((t._meta.output_nr, i))

    global _next_run
    # under the GIL: each backward gets its own number
    _next_run = (_next_run & _RUN_MASK) + 1 if _next_run < _RUN_MASK else 1
    cdef unsigned int run = _next_run
    cdef _Claims claims = _Claims.__new__(_Claims)
    claims.nodes = [] if targeted else None
    claims.roots = []
    claims.once = None if targeted else _new_task(1, 0, 2)
    try:
        result = _run_phases(roots, tasks, leaf_targets, node_targets, results,
                             inputs, targeted, retain_graph, create_graph, allow_unused,
                             accumulate, run, claims)
    except BaseException:
        if _queued_callbacks:
            _take_queued_callbacks(run)     # dropped: this backward failed
        raise
    finally:
        _release_claims(claims, run)
    if _queued_callbacks:
        for callback in _take_queued_callbacks(run):
            callback()
    return result


cdef inline int _stack_push(list stack, Py_ssize_t depth, object item) except -1:
    # Put ``item`` at ``depth`` of a list used as a stack of that depth.
    if depth < len(stack):
        stack[depth] = item
    else:
        stack.append(item)
    return 0


cdef object _run_phases(list roots, dict tasks, dict leaf_targets, dict node_targets,
                        list results, tuple inputs, bint targeted,
                        bint retain_graph, bint create_graph, bint allow_unused,
                        bint accumulate, unsigned int run, _Claims claims):
    cdef Py_ssize_t i, nr, pos
    cdef Tensor t, g
    cdef GradFn node
    cdef _Task task, child
    cdef list stack, ready, commits, positions
    cdef list root_fns = claims.roots      # the roots' nodes and leaves, each once
    # The stacks' depths: a slot past it is None, not removed, so a stack that
    # empties and fills again on every node (a chain) never frees and
    # reallocates its storage, as list.pop() and append() would.
    cdef Py_ssize_t depth = 0, n_ready

    # -- phase 1: depth-first search, counting dependencies ----------------
    stack = []
    positions = [] if targeted else None    # per stacked node: the next edge to visit
    for t, _ in roots:
        fn = t._meta.grad_fn if t._meta.grad_fn is not None else t
        if _find(fn, tasks, run) is None:
            task = _new_task(0, run, 0 if targeted else 2)
            _claim(fn, task, tasks, claims)
            root_fns.append(fn)
            if isinstance(fn, GradFn):
                _stack_push(stack, depth, fn)
                if targeted:
                    _stack_push(positions, depth, 0)
                depth += 1
            elif targeted:
                _set_state(task, 1 if _key(fn) in leaf_targets else 0)
    if not targeted:
        # Every node leads to what is wanted: any order counts the edges, and
        # taking a node off the stack as it is visited keeps the stack as
        # small as the graph's width (a chain's is one node deep). A node
        # reached once holds claims.once; a second edge gives it a task.
        once = claims.once
        while depth:
            depth -= 1
            node = <GradFn>stack[depth]
            stack[depth] = None
            for i in range(_n_edges(node)):
                nxt = _edge(node, i)
                if nxt is None:
                    continue
                if type(nxt) is GradFn:
                    held = (<GradFn>nxt).aux
                    if held is None:
                        (<GradFn>nxt).aux = once
                        claims.outstanding += 1
                        _stack_push(stack, depth, nxt)
                        depth += 1
                        continue
                    if held is once:
                        (<GradFn>nxt).aux = _new_task(2, run, 2)
                        continue
                found = _find(nxt, tasks, run)
                if found is None:
                    _claim(nxt, _new_task(1, run, 2), tasks, claims)
                    if isinstance(nxt, GradFn):
                        _stack_push(stack, depth, nxt)
                        depth += 1
                else:
                    (<_Task>found).deps += 1
            _node_check_saved(node)
    while depth:
        # With inputs: post-order, so a node's state follows its children's.
        node = <GradFn>stack[depth - 1]
        pos = positions[depth - 1]
        if pos < _n_edges(node):
            positions[depth - 1] = pos + 1
            nxt = _edge(node, pos)
            if nxt is None:
                continue
            found = _find(nxt, tasks, run)
            if found is None:
                child = _new_task(1, run, 0)
                _claim(nxt, child, tasks, claims)
                if isinstance(nxt, GradFn):
                    _stack_push(stack, depth, nxt)
                    _stack_push(positions, depth, 0)
                    depth += 1
                else:
                    _set_state(child, 1 if _key(nxt) in leaf_targets else 0)
            else:
                (<_Task>found).deps += 1
            continue
        # All children done (post-order): does this node lead to a wanted input?
        depth -= 1
        stack[depth] = None
        task = <_Task>_find(node, tasks, run)
        _set_state(task, 1 if _key(node) in node_targets else 0)
        for i in range(_n_edges(node)):
            nxt = _edge(node, i)
            if nxt is not None and _state(<_Task>_find(nxt, tasks, run)):
                _set_state(task, _state(task) | 2)
                break
        if _state(task) & 2:
            _node_check_saved(node)
    stack = positions = None
    if targeted and not accumulate and not allow_unused:
        for i in range(len(inputs)):
            t = <Tensor>inputs[i]
            fn = t if t._meta.grad_fn is None else t._meta.grad_fn
            if _find(fn, tasks, run) is None:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been used "
                    f"in the graph. Set allow_unused=True if this is the desired behavior.")

    # -- phase 2: propagate, a node running when its count reaches zero ----
    for t, g in roots:
        fn = t._meta.grad_fn if t._meta.grad_fn is not None else t
        _task_add(<_Task>_find(fn, tasks, run), fn, t._meta.output_nr, g, create_graph)
    ready = [fn for fn in root_fns if (<_Task>_find(fn, tasks, run)).deps == 0]
    n_ready = len(ready)
    roots = None
    commits = []
    prev_mode = grad_enabled()
    _store_grad_mode(create_graph)
    try:
        while n_ready:
            n_ready -= 1
            fn = ready[n_ready]
            ready[n_ready] = None
            task = <_Task>_find(fn, tasks, run)
            grads = task.grad
            task.grad = None
            if isinstance(fn, Tensor):
                _finish_leaf(<Tensor>fn, grads, leaf_targets, results, commits, accumulate)
                grads = None
                continue
            node = <GradFn>fn
            _unclaim(node, task, claims)
            if grads is not None:
                grads = _node_output_grads(node, grads, _state(task), node_targets, inputs,
                                           results, commits, accumulate)
            if _state(task) & 2:
                _set_bit(node, _FREES_SAVED, not retain_graph)     # for GradFn._frees_saved
                if grads is None:
                    grads_in = None
                elif OXMERA_PROFILER_COMPILED and _profiler is not None:
                    grads_in = _profiled_vjp(node, grads)
                elif node.extras is None or node.extras.fn_hooks is None:
                    grads_in = _call_own_vjp(node, grads)
                else:
                    grads_in = _call_vjp_with_hooks(node, grads)
                if (OXMERA_ANOMALY_COMPILED and _anomaly_enabled and _anomaly_check_nan
                        and grads_in is not None):
                    _check_anomaly(node, grads_in)
                for i in range(_n_edges(node)):
                    nxt = _edge(node, i)
                    if nxt is None:
                        continue
                    if (claims.once is not None and type(nxt) is GradFn
                            and (<GradFn>nxt).aux is claims.once):
                        # its only edge delivers now: its task starts here
                        child = _new_task(1, run, 2)
                        (<GradFn>nxt).aux = child
                    else:
                        child = <_Task>_find(nxt, tasks, run)
                    if not _state(child):
                        continue
                    if grads_in is not None:
                        gi = grads_in[i]
                        if gi is not None:
                            nr = 0 if _input_nrs(node) is None else _input_nrs(node)[i]
                            g = _fit_grad(_as_grad_tensor(gi, node, i), nxt, nr, node, i)
                            _task_add(child, nxt, nr, g, create_graph)
                    child.deps -= 1
                    if child.deps == 0:
                        _stack_push(ready, n_ready, nxt)
                        n_ready += 1
                # Drop every local reference to the gradients handed on, so
                # the steal rule in _accumulate_into can see they are unshared.
                grads_in = gi = g = None
            grads = None
            task = None
            if not retain_graph:
                _node_release(node)
        _commit(commits, create_graph)
    finally:
        _store_grad_mode(prev_mode)
    if results is not None and not accumulate:
        return tuple(results)
    return None


cdef int _task_add(_Task task, object fn, Py_ssize_t nr, Tensor g, bint create_graph) except -1:
    cdef list slots
    if isinstance(fn, GradFn) and _num_outputs(<GradFn>fn) > 1:
        if task.grad is None:
            task.grad = [None] * _num_outputs(<GradFn>fn)
        slots = <list>task.grad
        old = slots[nr]
        slots[nr] = None        # `old` is now the engine's only reference (see _accumulate)
        slots[nr] = _accumulate(old, g, create_graph)
    else:
        old = task.grad
        task.grad = None        # `old` is now the engine's only reference (see _accumulate)
        task.grad = _accumulate(old, g, create_graph)
    return 0


cdef object _node_output_grads(GradFn node, object grads, int state, dict node_targets,
                               tuple targets, list results, list commits, bint accumulate):
    """Hooks, retain_grad and captures for a node's output gradients; the VJP's input."""
    cdef Py_ssize_t nr, i
    cdef list slots
    cdef NodeExtras extras
    multi = _num_outputs(node) > 1
    extras = node.extras
    if not multi and extras is None and not state & 1:
        return grads        # the common case: nothing to do
    if multi:
        slots = list(grads)
        for nr in range(_num_outputs(node)):
            shape, dtype = node.out_info[nr]
            if slots[nr] is None and _takes_grad(node, nr, dtype):
                slots[nr] = wrap_array(_np_zeros(shape, dtype))
    else:
        slots = [grads]
    if extras is not None and extras.pre_hooks is not None:
        for nr in range(_num_outputs(node)):
            if slots[nr] is not None:
                slots[nr] = _run_hooks(extras.pre_hooks, nr, slots[nr], True)
    if extras is not None and extras.retained is not None and accumulate:
        for entry in extras.retained:
            owner = entry[1]()
            if owner is not None and slots[entry[0]] is not None:
                commits.append((owner, slots[entry[0]]))
    if state & 1:
        for nr, i in node_targets[_key(node)]:
            if accumulate:
                # A target that called retain_grad() was committed just above;
                # committing it again would count its gradient twice.
                if slots[nr] is not None and not (<Tensor>targets[i])._meta.retains_grad:
                    commits.append((targets[i], slots[nr]))
            else:
                if results[i] is not None:
                    results[i] = _accumulate(results[i], slots[nr], False)
                else:
                    results[i] = _private(slots[nr])
    if multi:
        return tuple(slots)
    return slots[0]


cdef int _finish_leaf(Tensor leaf, object grad, dict leaf_targets, list results, list commits,
                      bint accumulate) except -1:
    if grad is None or leaf._meta is None:
        return 0
    if accumulate and not leaf._meta.requires_grad:
        # requires_grad_(False) after the graph was built: like PyTorch's
        # AccumulateGrad, leave its .grad alone (and run none of its hooks).
        return 0
    if leaf._meta.hooks is not None:
        grad = _run_hooks(leaf._meta.hooks, 0, grad, False)
    if accumulate:
        commits.append((leaf, grad))
    elif leaf_targets is not None:
        for i in leaf_targets[_key(leaf)]:
            results[i] = _private(grad)
    return 0


cdef int _commit(list commits, bint create_graph) except -1:
    # The backward has succeeded: only now do the .grad fields change.
    #
    # No oxmera lock is held while code of the user's can run: a gradient or
    # a replaced .grad dropped here (which may run a __del__ or a weakref
    # callback) is dropped with the lock released, and each .grad is read and
    # written with no Python code in between, so a backward run by such code
    # (or by another thread meanwhile) adds its gradients, none lost.
    cdef Py_ssize_t i
    if _grad_lock_owner == PyThread_get_thread_ident():
        # Re-entered from code the collector ran while this thread held the
        # lock (a finalizer): the commit under way adds these when it is done.
        global _deferred_count
        _deferred.append((commits, create_graph))
        _deferred_count += 1
        return 0
    while True:
        for i in range(len(commits)):
            # Take the entry out of the list first: the reference count then
            # tells whether anything else still holds the gradient.
            owner, grad = commits[i]
            commits[i] = None
            _accumulate_into(<Tensor>owner, <Tensor>grad, create_graph)
            owner = grad = None
        if not _deferred:
            return 0
        commits, create_graph = _deferred.pop()


# Serializes reading and writing the arrays of .grad, which threads may share
# (NumPy releases the GIL while it adds large arrays). Held only around NumPy's
# add of two base-class arrays and the read and write of one .grad, never while
# a hook, a __del__ or an __array__ is called, nor while anything is dropped.
# The collector may still run a finalizer inside (an allocation can start it):
# a backward run by one finds _grad_lock_owner is its own thread and leaves its
# gradients to the commit under way (_deferred) instead of waiting forever.
cdef PyThread_type_lock _grad_lock = PyThread_allocate_lock()
cdef unsigned long _grad_lock_owner = 0     # the thread holding it, 0 when free
cdef list _deferred = []                    # (commits, create_graph) left by re-entered backwards
cdef Py_ssize_t _deferred_count = 0         # how many, ever (for the tests of that path)


def _deferred_commits():
    """How many backward passes re-entered while their thread held the .grad lock
    left their gradients to the commit under way (for tests)."""
    return _deferred_count


cdef inline void _lock_grads() noexcept:
    global _grad_lock_owner
    if not PyThread_acquire_lock(_grad_lock, 0):
        with nogil:
            PyThread_acquire_lock(_grad_lock, 1)
    _grad_lock_owner = PyThread_get_thread_ident()


cdef inline void _unlock_grads() noexcept:
    global _grad_lock_owner
    _grad_lock_owner = 0
    PyThread_release_lock(_grad_lock)


# References to a gradient (and its array) that only the committing code holds:
# the caller's local variable, the argument, ``arr`` here. Checked by
# tests/core/test_engine.py::test_grad_buffers_are_never_shared.
cdef enum:
    _STEAL_TENSOR_REFS = 1
    _STEAL_ARRAY_REFS = 2


cdef inline bint _plain(Tensor t):
    # Nothing but its array: no history, counter, view links, locks, weak
    # references or subclass state. Unshared (the steal rule's counts), such a
    # gradient becomes the .grad itself instead of a new Tensor around its array.
    return (type(t) is Tensor and t._meta is None and t._version_counter is None
            and t._links is None and t._locks == 0 and not _has_weakrefs(t))


cdef inline Py_ssize_t _version_or_zero(Tensor t) noexcept:
    return 0 if t._version_counter is None else t._version_counter.value


cdef int _accumulate_into(Tensor owner, Tensor grad, bint create_graph) except -1:
    """Add ``grad`` into ``owner.grad``.

    ``old`` (a local reference) keeps a replaced .grad alive until the lock is
    released, so it is never freed under it.
    """
    cdef AutogradMeta meta = owner._meta
    cdef Tensor old
    cdef Py_ssize_t version
    if meta is None:
        return 0
    arr = grad._data
    while True:
        if meta.grad is None:
            # Keep the engine's buffer when nothing else can see it (PyTorch's
            # "steal" rule); otherwise copy, so .grad never aliases another tensor.
            # With create_graph too: an add hands one gradient tensor to both of
            # its inputs and a user's `gradient` may pass straight through, so
            # keeping it as is would let a later backward, which adds into .grad
            # in place, change another .grad or the user's tensor.
            recorded = create_graph and grad._meta is not None and grad._meta.requires_grad
            if (cnp.PyArray_BASE(<cnp.ndarray>arr) == NULL
                    and Py_REFCNT(arr) <= _STEAL_ARRAY_REFS
                    and Py_REFCNT(grad) <= _STEAL_TENSOR_REFS
                    and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>arr)):
                new = grad if recorded or _plain(grad) else wrap_array(arr)
            elif recorded:
                # A differentiable copy: casting to its own dtype copies (astype),
                # and its node sends the gradient straight through.
                new = _cast_op(grad, arr.dtype)
            else:
                new = wrap_array(arr.copy())
            if meta.grad is None:       # (still: making `new` may have run code)
                _grad_edge(owner, new)
                meta.grad = new
                return 0
            continue                    # set meanwhile: add to it instead
        old = <Tensor>meta.grad
        if create_graph:
            # Out of place and recorded: computed with the lock released (it
            # runs ops), then written only if .grad did not change meanwhile.
            version = _version_or_zero(old)
            new = _add_op(old, grad)
            _lock_grads()
            try:
                if meta.grad is old and _version_or_zero(old) == version:
                    _grad_edge(owner, new)
                    meta.grad = new
                    return 0
            finally:
                _unlock_grads()
            continue
        counter = _counter_of(old)      # (before the lock: it allocates)
        _lock_grads()
        try:
            if meta.grad is not old:
                continue
            old_arr = old._data
            if (cnp.PyArray_Check(old_arr) and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>old_arr)
                    and old._meta is None and _has_shape(old_arr, arr.shape)
                    and old_arr.dtype == arr.dtype and _find_lock(old_arr) is None):
                # In place, as PyTorch does: .grad keeps its identity and memory.
                # (Not into memory a live graph saved: a .grad may be such a view.)
                _np_add(old_arr, arr, old_arr)
                (<VersionCounter>counter).value += 1
            else:
                total = _np_add(old_arr, arr)
                new = wrap_array(total if type(total) is ndarray else _np_asarray(total))
                _grad_edge(owner, new)
                meta.grad = new
            return 0
        finally:
            _unlock_grads()
