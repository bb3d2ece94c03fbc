"""``Conv1d`` and ``Conv2d``: learnable cross-correlations, initialized as in PyTorch.

The arithmetic is ``oxmera.nn.functional.conv1d``/``conv2d``; non-zero
padding modes pad first with ``oxmera.nn.functional.pad``.
"""
import math

from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn.modules._utils import empty, factory_dtype, pair, single
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What ``Conv1d`` and ``Conv2d`` share: checks, parameters, init and repr."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, device, dtype):
        super().__init__()
        name = type(self).__name__
        dtype = factory_dtype(device, dtype, name)
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups}")
        if in_channels % groups != 0:
            raise ValueError(f"{name}: in_channels ({in_channels}) must be divisible by groups "
                             f"({groups})")
        if out_channels % groups != 0:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by "
                             f"groups ({groups})")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: invalid padding string {padding!r}, should be one of "
                                 f"'same', 'valid'")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 f"convolutions (stride={stride})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {', '.join(_PADDING_MODES)}, "
                             f"but got padding_mode={padding_mode!r}")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.output_padding = (0,) * len(kernel_size)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts, last dim first (PyTorch's _reversed_padding_repeated_twice).
        amounts = []
        for i in reversed(range(len(kernel_size))):
            if padding == "same":
                total = dilation[i] * (kernel_size[i] - 1)
                amounts += [total // 2, total - total // 2]
            elif padding == "valid":
                amounts += [0, 0]
            else:
                amounts += [padding[i], padding[i]]
        self._reversed_padding_repeated_twice = amounts
        self.weight = Parameter(empty((out_channels, in_channels // groups, *kernel_size), dtype))
        if bias:
            self.bias = Parameter(empty((out_channels,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw weight and bias from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (PyTorch's)."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def _conv(self, input, conv):
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            padding = 0
        else:
            padding = self.padding
        return conv(input, self.weight, self.bias, self.stride, padding, self.dilation,
                    self.groups)

    def extra_repr(self):
        n = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution (cross-correlation) over ``(N, C_in, L)`` or ``(C_in, L)`` input.

    ``weight`` is ``(out_channels, in_channels // groups, kernel_size)``;
    weight and bias start from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``,
    ``fan_in = in_channels // groups * kernel_size``, as in PyTorch.
    ``padding`` is an int, ``'valid'`` or ``'same'``; ``padding_mode`` one of
    ``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> conv = nn.Conv1d(16, 33, 3, stride=2)
    >>> conv
    Conv1d(16, 33, kernel_size=(3,), stride=(2,))
    >>> conv(oxmera.randn(20, 16, 50)).shape
    oxmera.Size([20, 33, 24])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, single(kernel_size), single(stride),
                         padding if isinstance(padding, str) else single(padding),
                         single(dilation), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        return self._conv(input, F.conv1d)


class Conv2d(_ConvNd):
    """2-D convolution (cross-correlation) over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input.

    ``weight`` is ``(out_channels, in_channels // groups, kH, kW)``; weight
    and bias start from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``,
    ``fan_in = in_channels // groups * kH * kW``, as in PyTorch. ``stride``,
    ``padding`` and ``dilation`` are ints or pairs (``padding`` also
    ``'valid'`` or ``'same'``); ``padding_mode`` one of ``'zeros'``,
    ``'reflect'``, ``'replicate'``, ``'circular'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> conv = nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2))
    >>> conv
    Conv2d(16, 33, kernel_size=(3, 5), stride=(2, 1), padding=(4, 2))
    >>> conv(oxmera.randn(2, 16, 10, 12)).shape
    oxmera.Size([2, 33, 8, 12])
    >>> nn.Conv2d(1, 4, 3, padding="same", bias=False)
    Conv2d(1, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, bias=False)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, pair(kernel_size), pair(stride),
                         padding if isinstance(padding, str) else pair(padding),
                         pair(dilation), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        return self._conv(input, F.conv2d)
