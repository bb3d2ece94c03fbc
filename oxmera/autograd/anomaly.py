"""Anomaly detection: find the op whose gradient first went NaN or Inf.

While anomaly mode is on, every recorded node keeps the forward stack where
its op ran, and backward checks each VJP's result; the first non-finite
gradient raises ``RuntimeError`` naming the op and showing that stack. When
off, the core tests one C flag per node (and the build option
``OXMERA_NO_ANOMALY=1`` removes even that, for measuring).
"""
import functools

from oxmera._core import autograd as _core

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

is_anomaly_enabled = _core.is_anomaly_enabled
is_anomaly_check_nan_enabled = _core.is_anomaly_check_nan_enabled


class _AnomalyMode:
    def __init__(self, mode, check_nan):
        self.mode = bool(mode)
        self.check_nan = bool(check_nan)
        self.previous = None

    def __enter__(self):
        self.previous = _core.set_detect_anomaly(self.mode, self.check_nan)
        return self

    def __exit__(self, *exc):
        _core.set_detect_anomaly(*self.previous)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _AnomalyMode(self.mode, self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class detect_anomaly(_AnomalyMode):
    """Context manager (and decorator) turning anomaly detection on.

    Inside it, backward raises ``RuntimeError`` at the first VJP returning
    NaN or Inf, naming the op and showing where the forward created it.
    Slow: use it to debug, not to train.

    Parameters
    ----------
    check_nan : bool
        Check gradients for NaN/Inf (the default); with False only the
        forward stacks are recorded.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([0.0], requires_grad=True)
    >>> with oxmera.autograd.detect_anomaly():
    ...     y = oxmera.sqrt(x) * 0.0
    ...     try:
    ...         y.sum().backward()
    ...     except RuntimeError as err:
    ...         print(str(err).split(" (")[0])
    Function 'SqrtBackward' returned nan values in its 0th output
    """

    def __init__(self, check_nan=True):
        super().__init__(True, check_nan)


class set_detect_anomaly(_AnomalyMode):
    """Turn anomaly detection on or off: call it, or use it as a context manager.

    Examples
    --------
    >>> from oxmera.autograd import set_detect_anomaly, is_anomaly_enabled
    >>> with set_detect_anomaly(True):
    ...     is_anomaly_enabled()
    True
    >>> is_anomaly_enabled()
    False
    """

    def __init__(self, mode, check_nan=True):
        super().__init__(mode, check_nan)
        # Calling it sets the mode at once, as in PyTorch; leaving a `with`
        # block restores the previous one.
        self.previous = _core.set_detect_anomaly(self.mode, self.check_nan)

    def __enter__(self):
        return self
