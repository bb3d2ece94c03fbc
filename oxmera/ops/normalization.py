"""Normalization ops: layer_norm, batch_norm."""

__all__ = []
