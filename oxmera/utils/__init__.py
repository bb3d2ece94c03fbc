"""Utilities around training, as in ``torch.utils``: ``oxmera.utils.data``
(datasets, ``DataLoader``, ``random_split``)."""
from oxmera.utils import data

__all__ = ["data"]
