"""``oxmera.nn.functional``: stateless neural-network functions.

Composed from oxmera ops where that is exact and stable; the ops with a
fused VJP of their own live in ``oxmera.ops.activation``, ``.loss``,
``.normalization`` and ``.conv``.
"""
from oxmera.ops.activation import *  # noqa: F403
from oxmera.ops.conv import *  # noqa: F403
from oxmera.ops.loss import *  # noqa: F403
from oxmera.ops.normalization import *  # noqa: F403
from oxmera.ops import activation as _activation, conv as _conv, loss as _loss
from oxmera.ops import normalization as _normalization

__all__ = [*_activation.__all__, *_conv.__all__, *_loss.__all__, *_normalization.__all__]
