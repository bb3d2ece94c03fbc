"""``oxmera.distributed.nn``: collectives that autograd differentiates (``functional``)."""
from oxmera.distributed.nn import functional

__all__ = ["functional"]
