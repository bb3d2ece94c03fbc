"""``Fold`` and ``Unfold``: the sliding-block functions ``F.fold``/``F.unfold`` as layers."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


class _Blocks(Module):
    """The block geometry ``Fold`` and ``Unfold`` share, kept as given (as PyTorch)."""

    def __init__(self, kernel_size, dilation, padding, stride):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(_Blocks):
    """Extract sliding local blocks: ``(N, C, H, W)`` to ``(N, C * kH * kW, L)``.

    See ``oxmera.nn.functional.unfold``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> unfold = nn.Unfold(kernel_size=(2, 3))
    >>> unfold
    Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1)
    >>> unfold(oxmera.randn(2, 5, 3, 4)).shape
    oxmera.Size([2, 30, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(_Blocks):
    """Combine sliding local blocks: ``(N, C * kH * kW, L)`` to ``(N, C, *output_size)``.

    Overlapping values are summed; see ``oxmera.nn.functional.fold``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> fold = nn.Fold(output_size=(4, 5), kernel_size=(2, 2))
    >>> fold
    Fold(output_size=(4, 5), kernel_size=(2, 2), dilation=1, padding=0, stride=1)
    >>> fold(oxmera.randn(1, 12, 12)).shape
    oxmera.Size([1, 3, 4, 5])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()
