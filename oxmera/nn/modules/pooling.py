"""Pooling layers: ``MaxPool2d``, ``AvgPool2d``, ``AdaptiveAvgPool1d``, ``AdaptiveAvgPool2d``.

The fixed-window ones call ``oxmera.nn.functional``. The adaptive ones are
composed from ops (no VJP of their own): output cell ``i`` of a dim of size
``L_in`` pooled to ``L_out`` averages the inputs from
``floor(i * L_in / L_out)`` up to ``ceil((i + 1) * L_in / L_out)``, PyTorch's
windows. When ``L_out`` divides ``L_in`` the windows tile the dim, and a
reshape and a mean compute them; otherwise (overlapping or uneven windows)
a matmul with the constant averaging matrix does. An average over a
rectangle is the average over rows of the averages over columns, so the 2-D
pool is the 1-D one applied along H, then along W.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d"]


class MaxPool2d(Module):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    ``stride`` defaults to ``kernel_size``. With ``return_indices=True`` the
    call returns ``(values, indices)``, the indices flat within each
    ``(H, W)`` plane, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(oxmera.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]], dtype=float32)
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    ``stride`` defaults to ``kernel_size``; ``count_include_pad`` and
    ``divisor_override`` choose each window's divisor, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.AvgPool2d(2)
    >>> pool
    AvgPool2d(kernel_size=2, stride=2, padding=0)
    >>> pool(oxmera.arange(16.0).reshape(1, 1, 4, 4))
    tensor([[[[ 2.5,  4.5],
              [10.5, 12.5]]]], dtype=float32)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _averaging_matrix(in_size, out_size, dtype):
    """``(out_size, in_size)``: row ``i`` averages PyTorch's adaptive window ``i``."""
    matrix = np.zeros((out_size, in_size), dtype)
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -((-(i + 1) * in_size) // out_size)     # ceil((i + 1) * in / out)
        matrix[i, start:end] = 1.0 / (end - start)
    return _core._wrap(matrix)


def _adaptive_mean(input, dim, out_size):
    """Adaptive average pooling of ``input`` along ``dim`` (-1 or -2) to ``out_size``."""
    in_size = input.shape[dim]
    if out_size == in_size:
        return input
    if out_size > 0 and in_size % out_size == 0:
        shape = list(input.shape)
        shape[dim:dim + 1 if dim != -1 else None] = [out_size, in_size // out_size]
        return input.reshape(shape).mean(dim)
    matrix = _averaging_matrix(in_size, out_size, input.dtype)
    return input @ matrix.mT if dim == -1 else matrix @ input


def _output_sizes(output_size, n, input_shape):
    sizes = (output_size,) * n if not isinstance(output_size, (tuple, list)) else output_size
    if len(sizes) != n:
        raise ValueError(f"output_size must be an int or {n} ints (None keeps the input's "
                         f"size), got {output_size!r}")
    spatial = input_shape[-n:]
    return tuple(s if o is None else int(o) for o, s in zip(sizes, spatial))


def _check_adaptive_input(input, n, opname, output_size):
    if not isinstance(input, _core.Tensor):
        raise TypeError(f"{opname}(): expected a Tensor input, got {type(input).__name__}")
    if input.ndim not in (n + 1, n + 2):
        raise _core.OpError(f"{opname}(): expected a {n + 1}-D or {n + 2}-D input, got shape "
                            f"{input.shape}")
    if input.dtype.kind != "f":
        raise TypeError(f"{opname}(): expected a floating point input, got dtype {input.dtype}")
    if any(s == 0 for s in input.shape[-n:]):
        raise _core.OpError(f"{opname}(): expected non-empty spatial dims, got input of shape "
                            f"{input.shape}")
    sizes = _output_sizes(output_size, n, input.shape)
    if any(s < 0 for s in sizes):
        raise ValueError(f"{opname}(): output_size must be non-negative, got {output_size!r}")
    return sizes


class AdaptiveAvgPool1d(Module):
    """1-D average pooling to a fixed output length, over ``(N, C, L)`` or ``(C, L)`` input.

    Output cell ``i`` averages the inputs ``floor(i * L / out)`` up to
    ``ceil((i + 1) * L / out)``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.AdaptiveAvgPool1d(2)(oxmera.tensor([[1.0, 2.0, 3.0]]))
    tensor([[1.5, 2.5]], dtype=float32)
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        (length,) = _check_adaptive_input(input, 1, "adaptive_avg_pool1d", self.output_size)
        return _adaptive_mean(input, -1, length)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(Module):
    """2-D average pooling to a fixed output size, over ``(N, C, H, W)`` or ``(C, H, W)``.

    ``output_size`` is an int or a pair (``None`` keeps that input size).
    Output cell ``(i, j)`` averages PyTorch's window: rows
    ``floor(i * H / out_h)`` up to ``ceil((i + 1) * H / out_h)``, and the
    same for the columns. ``AdaptiveAvgPool2d(1)`` is global average
    pooling.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.AdaptiveAvgPool2d((2, 1))
    >>> pool
    AdaptiveAvgPool2d(output_size=(2, 1))
    >>> pool(oxmera.arange(12.0).reshape(1, 3, 4))
    tensor([[[3.5],
             [7.5]]], dtype=float32)
    >>> nn.AdaptiveAvgPool2d(1)(oxmera.ones(8, 16, 5, 5)).shape
    oxmera.Size([8, 16, 1, 1])
    """

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        height, width = _check_adaptive_input(input, 2, "adaptive_avg_pool2d", self.output_size)
        return _adaptive_mean(_adaptive_mean(input, -2, height), -1, width)

    def extra_repr(self):
        return f"output_size={self.output_size}"

