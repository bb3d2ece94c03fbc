"""``ChannelShuffle``: ``F.channel_shuffle`` as a layer."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave the channels of ``(N, C, *)`` input from ``groups`` groups (ShuffleNet).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> shuffle = nn.ChannelShuffle(2)
    >>> shuffle
    ChannelShuffle(groups=2)
    >>> shuffle(oxmera.arange(4.0).reshape(1, 4, 1)).flatten()
    tensor([0., 2., 1., 3.], dtype=float32)
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
