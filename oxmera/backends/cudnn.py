"""``oxmera.backends.cudnn``: cuDNN's switches; oxmera has no cuDNN.

The attributes ``enabled`` (True), ``benchmark`` (False), ``deterministic``
(False) and ``allow_tf32`` (True) have PyTorch's defaults and can be set
(``oxmera.backends.cudnn.benchmark = True``): accepted and ignored, since
no oxmera op runs on cuDNN.

Examples
--------
>>> import oxmera
>>> oxmera.backends.cudnn.benchmark
False
"""
import contextlib

__all__ = ["is_available", "version", "flags"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    """False: oxmera has no cuDNN.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.backends.cudnn.is_available()
    False
    """
    return False


def version():
    """None: no cuDNN version (as PyTorch without cuDNN).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.backends.cudnn.version() is None
    True
    """
    return None


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, deterministic=False, allow_tf32=True):
    """Set the four switches inside a ``with`` block, restoring them after (ignored as they are).

    Examples
    --------
    >>> import oxmera
    >>> with oxmera.backends.cudnn.flags(enabled=True, deterministic=True):
    ...     oxmera.backends.cudnn.deterministic
    True
    >>> oxmera.backends.cudnn.deterministic
    False
    """
    module = globals()
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    saved = {name: module[name] for name in names}
    module.update(zip(names, (enabled, benchmark, deterministic, allow_tf32)))
    try:
        yield
    finally:
        module.update(saved)
