"""Utilities around training, as in ``torch.utils``: ``oxmera.utils.data``
(datasets, ``DataLoader``, ``random_split``) and ``oxmera.utils.checkpoint``
(recompute activations in backward to save memory)."""
from oxmera.utils import checkpoint, data

__all__ = ["checkpoint", "data"]
