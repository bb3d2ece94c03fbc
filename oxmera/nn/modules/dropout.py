"""Dropout layers: zero elements (``Dropout``), whole channels (``Dropout1d/2d/3d``) or
move them to SELU's saturation (``AlphaDropout``, ``FeatureAlphaDropout``) at random in
training mode; the identity in eval mode."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class Dropout(Module):
    """Zero each element with probability ``p`` while training, scaling the rest by ``1/(1-p)``.

    In evaluation mode (``eval()``) it returns its input unchanged. The
    masks come from oxmera's generator (``oxmera.manual_seed``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> drop = nn.Dropout(p=0.5)
    >>> drop
    Dropout(p=0.5, inplace=False)
    >>> out = drop(oxmera.ones(1000))
    >>> sorted(set(out.tolist()))
    [0.0, 2.0]
    >>> drop.eval()(oxmera.ones(3))
    tensor([1., 1., 1.], dtype=float32)
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _DropoutVariant(Dropout):
    """A Dropout whose function is another of ``nn.functional``'s (``_function``)."""

    _function = None

    def forward(self, input):
        return type(self)._function(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutVariant):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input while training.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Dropout1d(0.3)
    Dropout1d(p=0.3, inplace=False)
    """

    _function = F.dropout1d


class Dropout2d(_DropoutVariant):
    """Zero whole channels of ``(N, C, H, W)`` or ``(C, H, W)`` input while training.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Dropout2d().eval()(oxmera.ones(1, 2, 2, 2)).sum().item()
    8.0
    """

    _function = F.dropout2d


class Dropout3d(_DropoutVariant):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input while training.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Dropout3d(p=1.0)(oxmera.ones(1, 2, 2, 2, 2)).sum().item()
    0.0
    """

    _function = F.dropout3d


class AlphaDropout(_DropoutVariant):
    """Alpha dropout (for SELU networks) while training.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.AlphaDropout(0.2)
    AlphaDropout(p=0.2, inplace=False)
    """

    _function = F.alpha_dropout


class FeatureAlphaDropout(_DropoutVariant):
    """Alpha dropout of whole channels while training.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.FeatureAlphaDropout().eval()(oxmera.ones(2, 3)).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    _function = F.feature_alpha_dropout
