"""``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d``: learnable (transposed) cross-correlations.

Initialized as in PyTorch. The arithmetic is ``oxmera.nn.functional.conv*d``
and ``conv_transpose*d``; non-zero padding modes of a convolution pad first
with ``oxmera.nn.functional.pad``.
"""
import math

from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn.modules._utils import empty, factory_dtype, ntuple, pair, single
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

triple = ntuple(3)

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What the convolutions share: checks, parameters, init and repr.

    A transposed convolution's weight is ``(in_channels, out_channels //
    groups, *kernel_size)`` (PyTorch's layout), a convolution's
    ``(out_channels, in_channels // groups, *kernel_size)``.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, device, dtype, transposed=False,
                 output_padding=None):
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
        if transposed and padding_mode != "zeros":
            raise ValueError(f"Only 'zeros' padding mode is supported for {name}, got "
                             f"padding_mode={padding_mode!r}")
        if transposed and isinstance(padding, str):
            raise ValueError(f"{name}: padding must be an int or a tuple of ints (a transposed "
                             f"convolution takes no padding string), got padding={padding!r}")
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
        self.transposed = transposed
        self.output_padding = (0,) * len(kernel_size) if output_padding is None else output_padding
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
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups))
        self.weight = Parameter(empty(shape + tuple(kernel_size), dtype))
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
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
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


class Conv3d(_ConvNd):
    """3-D convolution (cross-correlation) over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``.

    ``weight`` is ``(out_channels, in_channels // groups, kT, kH, kW)``;
    weight and bias start from ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, as in
    PyTorch. ``stride``, ``padding`` and ``dilation`` are ints or triples
    (``padding`` also ``'valid'`` or ``'same'``); ``padding_mode`` one of
    ``'zeros'``, ``'reflect'``, ``'replicate'``, ``'circular'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> conv = nn.Conv3d(4, 6, (3, 2, 2), stride=2, padding=1, padding_mode="replicate")
    >>> conv
    Conv3d(4, 6, kernel_size=(3, 2, 2), stride=(2, 2, 2), padding=(1, 1, 1), padding_mode=replicate)
    >>> conv(oxmera.randn(2, 4, 5, 6, 6)).shape
    oxmera.Size([2, 6, 3, 4, 4])
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, triple(kernel_size), triple(stride),
                         padding if isinstance(padding, str) else triple(padding),
                         triple(dilation), groups, bias, padding_mode, device, dtype)

    def forward(self, input):
        return self._conv(input, F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """What ``ConvTranspose1d/2d/3d`` share: the constructor and ``output_size``."""

    _tuple = None
    _function = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        expand = type(self)._tuple
        super().__init__(in_channels, out_channels, expand(kernel_size), expand(stride),
                         padding if isinstance(padding, str) else expand(padding),
                         expand(dilation), groups, bias, padding_mode, device, dtype,
                         transposed=True, output_padding=expand(output_padding))

    def _output_padding(self, input, output_size):
        """``output_padding``, or the one that makes the output ``output_size`` (PyTorch's rule)."""
        if output_size is None:
            return self.output_padding
        nd = len(self.kernel_size)
        non_spatial = 2 if input.ndim == nd + 2 else 1
        output_size = tuple(int(n) for n in output_size)
        if len(output_size) == non_spatial + nd:
            output_size = output_size[non_spatial:]
        if len(output_size) != nd:
            raise ValueError(f"ConvTranspose{nd}D: for {input.ndim}D input, output_size must "
                             f"have {nd} or {non_spatial + nd} elements (got "
                             f"{len(output_size)})")
        spatial = tuple(input.shape[-nd:])
        smallest = [(n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in
                    zip(spatial, self.stride, self.padding, self.dilation, self.kernel_size)]
        largest = [n + s - 1 for n, s in zip(smallest, self.stride)]
        if any(not lo <= n <= hi for n, lo, hi in zip(output_size, smallest, largest)):
            raise ValueError(f"{type(self).__name__}: requested an output size of "
                             f"{list(output_size)}, but valid sizes range from {smallest} to "
                             f"{largest} (for an input of {spatial})")
        return tuple(n - lo for n, lo in zip(output_size, smallest))

    def forward(self, input, output_size=None):
        output_padding = self._output_padding(input, output_size)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding,
                                    output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over ``(N, C_in, L)`` or ``(C_in, L)`` input.

    ``weight`` is ``(in_channels, out_channels // groups, kernel_size)``,
    initialized as PyTorch does. ``forward(input, output_size=None)``:
    ``output_size`` picks the ``output_padding`` that gives that length.
    Only ``padding_mode='zeros'``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> up = nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1)
    >>> up
    ConvTranspose1d(4, 2, kernel_size=(3,), stride=(2,), padding=(1,))
    >>> up(oxmera.randn(5, 4, 8)).shape
    oxmera.Size([5, 2, 15])
    >>> up(oxmera.randn(5, 4, 8), output_size=[16]).shape
    oxmera.Size([5, 2, 16])
    """

    _tuple = staticmethod(single)
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input.

    ``weight`` is ``(in_channels, out_channels // groups, kH, kW)``,
    initialized as PyTorch does; ``stride``, ``padding``, ``output_padding``
    and ``dilation`` are ints or pairs. ``forward(input, output_size=None)``:
    ``output_size`` picks the ``output_padding`` that gives that size. Only
    ``padding_mode='zeros'``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> up = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1)
    >>> x = oxmera.randn(1, 16, 12, 12)
    >>> up(x).shape
    oxmera.Size([1, 8, 23, 23])
    >>> up(x, output_size=(1, 8, 24, 24)).shape
    oxmera.Size([1, 8, 24, 24])
    """

    _tuple = staticmethod(pair)
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` input.

    ``weight`` is ``(in_channels, out_channels // groups, kT, kH, kW)``; the
    arguments are ``ConvTranspose2d``'s, with triples.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> up = nn.ConvTranspose3d(2, 4, 2, stride=2, bias=False)
    >>> up
    ConvTranspose3d(2, 4, kernel_size=(2, 2, 2), stride=(2, 2, 2), bias=False)
    >>> up(oxmera.randn(2, 3, 4, 5)).shape
    oxmera.Size([4, 6, 8, 10])
    """

    _tuple = staticmethod(triple)
    _function = staticmethod(F.conv_transpose3d)
