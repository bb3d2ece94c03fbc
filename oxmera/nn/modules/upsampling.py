"""``Upsample``, ``UpsamplingNearest2d``, ``UpsamplingBilinear2d``: ``F.interpolate`` as layers."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resample ``(N, C, *spatial)`` input to ``size`` or by ``scale_factor``.

    The arguments are ``oxmera.nn.functional.interpolate``'s (``mode``
    ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``,
    ``'bicubic'``, ``'trilinear'``, ``'area'``); a scale factor is kept as a
    float (or a tuple of floats), as PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> up = nn.Upsample(scale_factor=2, mode="bilinear")
    >>> up
    Upsample(scale_factor=2.0, mode='bilinear')
    >>> up(oxmera.tensor([[[[1.0, 2.0]]]]))
    tensor([[[[1.  , 1.25, 1.75, 2.  ],
              [1.  , 1.25, 1.75, 2.  ]]]], dtype=float32)
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(factor) for factor in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """2-D nearest-neighbour upsampling: ``Upsample(size, scale_factor, mode='nearest')``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.UpsamplingNearest2d(scale_factor=2)(oxmera.tensor([[[[1.0, 2.0]]]]))
    tensor([[[[1., 1., 2., 2.],
              [1., 1., 2., 2.]]]], dtype=float32)
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling with ``align_corners=True`` (as PyTorch's).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.UpsamplingBilinear2d(size=(1, 4))(oxmera.tensor([[[[0.0, 3.0]]]]))
    tensor([[[[0., 1., 2., 3.]]]], dtype=float32)
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
