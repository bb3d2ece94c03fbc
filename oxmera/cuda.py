"""``oxmera.cuda``: PyTorch's ``torch.cuda`` on a machine without CUDA, which oxmera always is.

oxmera computes on the CPU with NumPy, so a program's usual device choice
works unchanged::

    device = "cuda" if oxmera.cuda.is_available() else "cpu"

The seeding functions are accepted and do nothing (there is no CUDA
generator; seed the CPU one with ``oxmera.manual_seed``), as in a PyTorch
built without CUDA. ``empty_cache`` has nothing to free. The calls that
need a CUDA device (``current_device``, ``set_device``, ``synchronize``)
raise the RuntimeError every non-CPU device gets in oxmera; PyTorch without
CUDA raises too (an AssertionError).
"""
from oxmera import _device

__all__ = ["is_available", "device_count", "is_initialized", "manual_seed", "manual_seed_all",
           "current_device", "set_device", "synchronize", "empty_cache"]


def is_available():
    """False: oxmera has no CUDA device.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.is_available()
    False
    """
    return False


def device_count():
    """0: oxmera has no CUDA device.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.device_count()
    0
    """
    return 0


def is_initialized():
    """False: CUDA is never initialized in oxmera.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.is_initialized()
    False
    """
    return False


def manual_seed(seed):
    """Accepted and ignored: there is no CUDA generator (``oxmera.manual_seed`` seeds the CPU's).

    ``seed`` must convert to an int, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.manual_seed(0)
    """
    int(seed)       # checked as PyTorch checks it, then ignored: no CUDA generator


def manual_seed_all(seed):
    """Accepted and ignored, as :func:`oxmera.cuda.manual_seed`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.manual_seed_all(0)
    """
    int(seed)


def empty_cache():
    """Nothing to free: oxmera keeps no CUDA memory cache (does nothing, as PyTorch without CUDA).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.empty_cache()
    """


def current_device():
    """Always a RuntimeError: there is no current CUDA device.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.current_device()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    RuntimeError: cuda.current_device(): cannot use device 'cuda': oxmera computes on the CPU ...
    """
    _device.check_cpu("cuda.current_device()", "cuda")


def set_device(device):
    """Always a RuntimeError: there is no CUDA device to select.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.set_device(0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    RuntimeError: cuda.set_device(): cannot use device 'cuda:0': oxmera computes on the CPU ...
    """
    _device.check_cpu("cuda.set_device()", _device.cuda_device("cuda.set_device()", device))


def synchronize(device=None):
    """Always a RuntimeError, as in PyTorch without CUDA: there is no CUDA device to wait for.

    oxmera's own computations are synchronous: nothing needs waiting for.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cuda.synchronize()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    RuntimeError: cuda.synchronize(): cannot use device 'cuda': oxmera computes on the CPU ...
    """
    _device.check_cpu("cuda.synchronize()", _device.cuda_device("cuda.synchronize()", device))
