"""``PixelShuffle`` and ``PixelUnshuffle``: ``F.pixel_shuffle``/``F.pixel_unshuffle`` as layers."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """Rearrange ``(*, C * r * r, H, W)`` into ``(*, C, H * r, W * r)``, ``r = upscale_factor``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> shuffle = nn.PixelShuffle(3)
    >>> shuffle
    PixelShuffle(upscale_factor=3)
    >>> shuffle(oxmera.randn(1, 9, 4, 4)).shape
    oxmera.Size([1, 1, 12, 12])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H * r, W * r)`` into ``(*, C * r * r, H, W)``, ``r = downscale_factor``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> unshuffle = nn.PixelUnshuffle(3)
    >>> unshuffle
    PixelUnshuffle(downscale_factor=3)
    >>> unshuffle(oxmera.randn(1, 1, 12, 12)).shape
    oxmera.Size([1, 9, 4, 4])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
