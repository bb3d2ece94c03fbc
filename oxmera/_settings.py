"""Process-wide settings PyTorch programs make: matmul precision, determinism, threads.

``set_float32_matmul_precision`` and ``use_deterministic_algorithms`` are
recorded and read back as in PyTorch, and change nothing in oxmera: its
float32 matrix products are always computed in full float32 (NumPy's BLAS
has no TF32 or bfloat16 shortcut to allow), and it has no nondeterministic
op to refuse. ``set_num_threads`` sets the size of NumPy's BLAS and OpenMP
thread pools, where the work that uses threads is done, through
threadpoolctl (the optional extra ``oxmera[threadpoolctl]``).
"""
import operator
import os
import warnings

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "get_num_threads",
           "set_num_threads", "get_num_interop_threads", "set_num_interop_threads"]

_PRECISIONS = ("highest", "high", "medium")


class _Settings:
    precision = "highest"
    deterministic = False
    deterministic_warn_only = False
    interop_threads = 1


_state = _Settings()


def set_float32_matmul_precision(precision):
    """Record the float32 matmul precision: ``"highest"``, ``"high"`` or ``"medium"``.

    Accepted and ignored: oxmera always computes float32 matrix products in
    float32 (``"highest"``); the lower precisions PyTorch may use on some
    hardware (TF32, bfloat16) do not exist in NumPy's BLAS. As in PyTorch, a
    value that is not a string is a RuntimeError and an unknown string only
    warns and changes nothing. ``oxmera.backends.cuda.matmul.allow_tf32``
    reads and sets the same setting.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.set_float32_matmul_precision("high")
    >>> oxmera.get_float32_matmul_precision()
    'high'
    >>> oxmera.set_float32_matmul_precision("highest")
    """
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"set_float32_matmul_precision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _state.precision = precision


def get_float32_matmul_precision():
    """The recorded float32 matmul precision, ``"highest"`` unless set.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.get_float32_matmul_precision()
    'highest'
    """
    return _state.precision


def _check_bool(where, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{where}: argument '{name}' must be bool, not {type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record whether only deterministic algorithms may be used.

    Accepted and recorded, with no other effect: none of oxmera's ops is
    nondeterministic (NumPy on the CPU, no atomics, no racing reductions),
    so there is nothing to refuse or warn about. As in PyTorch, both
    arguments must be bools (a TypeError otherwise).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.use_deterministic_algorithms(True)
    >>> oxmera.are_deterministic_algorithms_enabled()
    True
    >>> oxmera.use_deterministic_algorithms(False)
    """
    _check_bool("use_deterministic_algorithms()", "mode", mode)
    _check_bool("use_deterministic_algorithms()", "warn_only", warn_only)
    _state.deterministic = mode
    _state.deterministic_warn_only = warn_only


def are_deterministic_algorithms_enabled():
    """What :func:`oxmera.use_deterministic_algorithms` last recorded (False by default).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.are_deterministic_algorithms_enabled()
    False
    """
    return _state.deterministic


def is_deterministic_algorithms_warn_only_enabled():
    """The ``warn_only`` that :func:`oxmera.use_deterministic_algorithms` last recorded.

    False unless set.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _state.deterministic_warn_only


def _thread_count(where, value):
    # PyTorch's checks: an int (a RuntimeError otherwise, bools too), and positive.
    if isinstance(value, bool):
        raise RuntimeError(f"{where} expects an int, but got bool")
    try:
        count = operator.index(value)
    except TypeError:
        raise RuntimeError(f"{where} expects an int, but got {type(value).__name__}") from None
    if count <= 0:
        raise RuntimeError(f"{where} expects a positive integer")
    return count


def _threadpoolctl():
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


# The environment variables BLAS and OpenMP read their thread count from at start-up.
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                     "BLIS_NUM_THREADS")


def get_num_threads():
    """The number of threads NumPy's BLAS (and OpenMP) use for one op.

    With threadpoolctl installed: the largest thread pool it finds in the
    process. Without it (or when it finds no pool), a best guess: the first
    of ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``,
    ``BLIS_NUM_THREADS`` that is set to a positive int, else the number of
    CPUs, which is what BLAS libraries start with.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.get_num_threads() >= 1
    True
    """
    threadpoolctl = _threadpoolctl()
    if threadpoolctl is not None:
        counts = [pool["num_threads"] for pool in threadpoolctl.threadpool_info()]
        if counts:
            return max(counts)
    for name in _THREAD_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


def set_num_threads(num):
    """Set the number of threads NumPy's BLAS and OpenMP thread pools use.

    Done through threadpoolctl (``pip install oxmera[threadpoolctl]``), for
    the whole process, from now on. Without threadpoolctl the call has no
    effect and says so with a RuntimeWarning (setting ``OMP_NUM_THREADS``
    before Python starts works without it). oxmera's own code is
    single-threaded: the threads are BLAS's, in matrix products and
    convolutions. ``num`` must be a positive int (a RuntimeError otherwise,
    as in PyTorch).

    Examples
    --------
    >>> import oxmera
    >>> n = oxmera.get_num_threads()
    >>> oxmera.set_num_threads(n)
    """
    count = _thread_count("set_num_threads", num)
    threadpoolctl = _threadpoolctl()
    if threadpoolctl is None:
        warnings.warn(f"set_num_threads({count}) had no effect: it needs threadpoolctl "
                      f"(pip install oxmera[threadpoolctl]) to resize NumPy's BLAS and "
                      f"OpenMP thread pools; OMP_NUM_THREADS={count} set before Python "
                      f"starts works without it", RuntimeWarning, stacklevel=2)
        return
    # Not used as a context manager: the limit stays, as set_num_threads' does in PyTorch.
    threadpoolctl.threadpool_limits(limits=count)


def get_num_interop_threads():
    """The number recorded by :func:`oxmera.set_num_interop_threads` (1 unless set).

    oxmera runs ops one after another on the calling thread: it has no
    inter-op thread pool, so the number changes nothing.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.get_num_interop_threads() >= 1
    True
    """
    return _state.interop_threads


def set_num_interop_threads(num):
    """Record the inter-op thread count: accepted and ignored (oxmera has no inter-op pool).

    ``num`` must be a positive int, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.set_num_interop_threads(1)
    >>> oxmera.get_num_interop_threads()
    1
    """
    _state.interop_threads = _thread_count("set_num_interop_threads", num)
