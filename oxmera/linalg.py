"""``oxmera.linalg``: norm, inv, det, solve (the ops live in ``oxmera.ops.linalg``)."""

__all__ = []
