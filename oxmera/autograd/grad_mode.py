"""Grad mode: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The flag itself is per thread and lives in the compiled core; these classes
save and restore it (never hard-coding the value on exit), nest, restore on
exceptions, and work as decorators, also on generators, where the mode is
re-applied at every resume so it never leaks into the caller.
"""
import functools
import inspect

from oxmera._core import autograd as _core

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled"]

is_grad_enabled = _core.is_grad_enabled
_set = _core._set_grad_enabled


class _GradMode(_core.GradModeContext):
    """Base of the grad-mode context managers: set ``mode`` inside, restore after
    (entering and exiting are the compiled base's, reentrant)."""

    mode = True

    def clone(self):
        return type(self)()

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} decorates functions, not classes")
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorated

    def _wrap_generator(self, func):
        @functools.wraps(func)
        def generator(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        # One-argument throw: the (type, value, tb) form is
                        # deprecated since Python 3.12.
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return generator


class _BareDecorator(_GradMode):
    """A mode that also decorates without parentheses (``@no_grad``), as PyTorch's do."""

    def __new__(cls, func=None):
        if func is not None:
            return cls()(func)
        return super().__new__(cls)


class no_grad(_BareDecorator):
    """Context manager and decorator that turns recording off.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.ones(2, requires_grad=True)
    >>> with oxmera.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> @oxmera.no_grad()
    ... def double(t):
    ...     return t * 2
    >>> double(x).requires_grad
    False
    >>> @oxmera.no_grad            # without parentheses too, as in PyTorch
    ... def triple(t):
    ...     return t * 3
    >>> triple(x).requires_grad
    False
    """

    mode = False


class enable_grad(_BareDecorator):
    """Context manager and decorator that turns recording on (inside ``no_grad``).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.ones(2, requires_grad=True)
    >>> with oxmera.no_grad():
    ...     with oxmera.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    mode = True


class inference_mode(_GradMode):
    """Like :class:`no_grad` (an alias kept for PyTorch code); ``mode=False`` does nothing.

    Examples
    --------
    >>> import oxmera
    >>> with oxmera.inference_mode():
    ...     oxmera.is_grad_enabled()
    False
    """

    def __new__(cls, mode=True):
        # ``@inference_mode`` without parentheses hands over the function.
        if callable(mode):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        super().__init__()
        self._inference = bool(mode)
        self.mode = False

    def __enter__(self):
        # inference_mode(False) leaves the current mode as it is.
        self.mode = False if self._inference else is_grad_enabled()
        return super().__enter__()

    def clone(self):
        return type(self)(self._inference)


class set_grad_enabled(_GradMode):
    """Set recording on or off: at once as a call, for a block as a context manager.

    Examples
    --------
    >>> import oxmera
    >>> with oxmera.set_grad_enabled(False):
    ...     oxmera.is_grad_enabled()
    False
    >>> oxmera.is_grad_enabled()
    True
    """

    def __init__(self, mode):
        super().__init__()
        self.mode = bool(mode)
        # Like PyTorch, the call itself sets the mode, so that the plain
        # function form ``set_grad_enabled(False)`` works.
        self._prev = _set(self.mode)

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc, tb):
        _set(self._prev)
        return False

    def clone(self):
        clone = _GradMode()
        clone.mode = self.mode
        return clone

    def __call__(self, func):
        _set(self._prev)       # decorating must not change the current mode
        return super().__call__(func)
