"""Data loading, as ``torch.utils.data`` (a package, as PyTorch lays it out)."""
from oxmera.utils.data.dataset import *  # noqa: F403
from oxmera.utils.data.dataset import __all__  # noqa: F401
