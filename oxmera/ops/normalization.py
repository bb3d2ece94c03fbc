"""Normalization ops with a fused VJP: none so far.

``layer_norm`` and ``batch_norm`` are composed in :mod:`oxmera.nn.functional`
from ``mean``, ``sub``, ``mul``, ``sqrt`` and ``div``: the two-pass variance
(the mean of the squared centered values) is exact and stable, and the
composition is differentiable to any order with no code of its own. A fused
op belongs here only if a benchmark shows the composed graph is too slow.
"""

__all__ = []
