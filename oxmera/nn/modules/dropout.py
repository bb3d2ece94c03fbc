"""``Dropout``: zeroes elements at random in training mode, the identity in eval mode."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["Dropout"]


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
