"""Neural-network building blocks: ``oxmera.nn.functional`` (stateless ops)."""
from oxmera.nn import functional

__all__ = ["functional"]
