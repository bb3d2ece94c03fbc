"""``oxmera.backends.mps``: Apple's Metal (MPS) backend; oxmera has none.

Examples
--------
>>> import oxmera
>>> oxmera.backends.mps.is_available()
False
"""

__all__ = ["is_available", "is_built"]


def is_available():
    """False: oxmera has no MPS device.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.backends.mps.is_available()
    False
    """
    return False


def is_built():
    """False: oxmera is not built with MPS.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.backends.mps.is_built()
    False
    """
    return False
