"""``oxmera.accelerator``: PyTorch's ``torch.accelerator``; oxmera has no accelerator.

A program that picks its device with
``oxmera.accelerator.current_accelerator() or oxmera.device("cpu")`` runs
on the CPU.
"""

__all__ = ["is_available", "current_accelerator", "device_count"]


def is_available():
    """False: oxmera computes on the CPU.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.accelerator.is_available()
    False
    """
    return False


def current_accelerator(check_available=False):
    """None: there is no accelerator (``check_available`` changes nothing, as in PyTorch).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.accelerator.current_accelerator() is None
    True
    """
    return None


def device_count():
    """0: there is no accelerator.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.accelerator.device_count()
    0
    """
    return 0
