"""Pooling layers: max, average, adaptive, Lp pooling in 1-3 dims, and max unpooling.

Each layer keeps its arguments as PyTorch's does (the same attribute names,
the same normalisation: ``AvgPool1d`` and the unpooling layers store tuples,
the others what they were given, ``stride`` defaulting to ``kernel_size``)
and calls the function of ``oxmera.nn.functional`` of the same name, where
the computation and the argument checks live.
"""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "FractionalMaxPool2d", "FractionalMaxPool3d"]


def _tuple(value, n):
    """PyTorch's ``_single``/``_pair``/``_triple``: an int repeated ``n`` times, or a tuple."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _MaxPoolNd(Module):
    _pool = None

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
        return type(self)._pool(input, self.kernel_size, self.stride, self.padding,
                                self.dilation, ceil_mode=self.ceil_mode,
                                return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)`` input (``F.max_pool1d``).

    ``stride`` defaults to ``kernel_size``. With ``return_indices=True`` the
    call returns ``(values, indices)``, the indices along L, for
    ``MaxUnpool1d``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.MaxPool1d(2)
    >>> pool
    MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(oxmera.tensor([[[1.0, 5.0, 2.0, 7.0, 3.0]]]))
    tensor([[[5., 7.]]], dtype=float32)
    """

    _pool = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input (``F.max_pool2d``).

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

    _pool = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input (``F.max_pool3d``).

    ``stride`` defaults to ``kernel_size``. With ``return_indices=True`` the
    call returns ``(values, indices)``, the indices flat within each
    ``(D, H, W)`` volume.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.MaxPool3d((1, 2, 2), return_indices=True)
    >>> values, indices = pool(oxmera.arange(8.0).reshape(1, 2, 2, 2))
    >>> values.flatten(), indices.flatten()
    (tensor([3., 7.], dtype=float32), tensor([3, 7], dtype=int64))
    """

    _pool = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)`` input (``F.avg_pool1d``).

    ``stride`` defaults to ``kernel_size``; ``count_include_pad`` chooses
    whether the zero padding counts in each window's divisor. Like PyTorch's,
    it has no ``divisor_override`` and stores its sizes as 1-tuples.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.AvgPool1d(2)
    >>> pool
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> pool(oxmera.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]]))
    tensor([[[1.5, 3.5]]], dtype=float32)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input (``F.avg_pool2d``).

    ``stride`` defaults to ``kernel_size``; ``ceil_mode``,
    ``count_include_pad`` and ``divisor_override`` choose the windows and
    each window's divisor, as in PyTorch.

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


class AvgPool3d(AvgPool2d):
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input (``F.avg_pool3d``).

    As ``AvgPool2d``, with ints or triples.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.AvgPool3d(2, divisor_override=1)
    >>> pool
    AvgPool3d(kernel_size=2, stride=2, padding=0)
    >>> pool(oxmera.ones(1, 2, 2, 4))
    tensor([[[[8., 8.]]]], dtype=float32)
    """

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveMaxPoolNd(Module):
    _pool = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._pool(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-D max pooling to a fixed output length (``F.adaptive_max_pool1d``).

    Output ``i`` is the maximum of the inputs ``floor(i * L / out)`` up to
    ``ceil((i + 1) * L / out)``, as in PyTorch; with ``return_indices=True``
    the call returns ``(values, indices)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.AdaptiveMaxPool1d(3)(oxmera.tensor([[1.0, 5.0, 2.0, 7.0, 3.0]]))
    tensor([[5., 7., 7.]], dtype=float32)
    """

    _pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-D max pooling to a fixed output size (``F.adaptive_max_pool2d``).

    ``output_size`` is an int or a pair (``None`` keeps that input size);
    with ``return_indices=True`` the call returns ``(values, indices)``, the
    indices flat within each ``(H, W)`` plane.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.AdaptiveMaxPool2d((1, None))
    >>> pool
    AdaptiveMaxPool2d(output_size=(1, None))
    >>> pool(oxmera.arange(6.0).reshape(1, 2, 3))
    tensor([[[3., 4., 5.]]], dtype=float32)
    """

    _pool = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-D max pooling to a fixed output size (``F.adaptive_max_pool3d``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.AdaptiveMaxPool3d(1)(oxmera.arange(8.0).reshape(1, 2, 2, 2))
    tensor([[[[7.]]]], dtype=float32)
    """

    _pool = staticmethod(F.adaptive_max_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _pool = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._pool(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
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

    _pool = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
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

    _pool = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-D average pooling to a fixed output size, over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    ``output_size`` is an int or a triple (``None`` keeps that input size).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.AdaptiveAvgPool3d((1, 1, 2))(oxmera.arange(8.0).reshape(1, 2, 2, 2))
    tensor([[[[3., 4.]]]], dtype=float32)
    """

    _pool = staticmethod(F.adaptive_avg_pool3d)


class _MaxUnpoolNd(Module):
    _unpool = None
    _dims = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._dims
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride if stride is not None else kernel_size, n)
        self.padding = _tuple(padding, n)

    def forward(self, input, indices, output_size=None):
        return type(self)._unpool(input, indices, self.kernel_size, self.stride, self.padding,
                                  output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d`` (``F.max_unpool1d``): values back at their indices.

    Called with the pooled values, the indices ``MaxPool1d(...,
    return_indices=True)`` gave, and optionally ``output_size`` (to recover an
    input length the pooling rounded down).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool, unpool = nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)
    >>> unpool
    MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> x = oxmera.tensor([[[1.0, 5.0, 2.0, 7.0, 3.0]]])
    >>> unpool(*pool(x), output_size=x.shape)
    tensor([[[0., 5., 0., 7., 0.]]], dtype=float32)
    """

    _unpool = staticmethod(F.max_unpool1d)
    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d`` (``F.max_unpool2d``): values back at their indices.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
    >>> unpool(*pool(oxmera.tensor([[[[1.0, 2.0], [4.0, 3.0]]]])))
    tensor([[[[0., 0.],
              [4., 0.]]]], dtype=float32)
    """

    _unpool = staticmethod(F.max_unpool2d)
    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool3d`` (``F.max_unpool3d``): values back at their indices.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool, unpool = nn.MaxPool3d(2, return_indices=True), nn.MaxUnpool3d(2)
    >>> unpool(*pool(oxmera.arange(8.0).reshape(1, 2, 2, 2))).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.], dtype=float32)
    """

    _unpool = staticmethod(F.max_unpool3d)
    _dims = 3


class _LPPoolNd(Module):
    _pool = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._pool(input, float(self.norm_type), self.kernel_size, self.stride,
                                self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling, ``(sum of x ** p over a window) ** (1 / p)`` (``F.lp_pool1d``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.LPPool1d(2, 2)
    >>> pool
    LPPool1d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    >>> pool(oxmera.tensor([[[3.0, 4.0, 6.0, 8.0]]]))
    tensor([[[ 5., 10.]]], dtype=float32)
    """

    _pool = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input (``F.lp_pool2d``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.LPPool2d(1, 2)(oxmera.ones(1, 2, 4))
    tensor([[[4., 4.]]], dtype=float32)
    """

    _pool = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (``F.lp_pool3d``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.LPPool3d(2, 2)(oxmera.ones(1, 2, 2, 2))
    tensor([[[[2.8284]]]], dtype=float32)
    """

    _pool = staticmethod(F.lp_pool3d)


class _FractionalMaxPoolNd(Module):
    _pool = None
    _dims = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n, name = self._dims, type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be specified")
        self.kernel_size = _tuple(kernel_size, n)
        self.return_indices = return_indices
        # A buffer, as in PyTorch (None, the default, is not in the state_dict).
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _tuple(output_size, n) if output_size is not None else None
        self.output_ratio = _tuple(output_ratio, n) if output_ratio is not None else None
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"{name}: output_ratio must be between 0 and 1 (got "
                             f"{output_ratio})")

    def forward(self, input):
        return type(self)._pool(input, self.kernel_size, self.output_size, self.output_ratio,
                                self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (``F.fractional_max_pool2d``).

    Windows of ``kernel_size`` at pseudo-random offsets give an output of
    ``output_size``, or ``output_ratio`` (in (0, 1)) times the input size;
    ``_random_samples`` (a buffer, ``(N, C, 2)``) fixes the offsets, else
    each call draws them from oxmera's default generator.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.FractionalMaxPool2d(3, output_ratio=0.5)
    >>> pool(oxmera.randn(2, 3, 10, 8)).shape
    oxmera.Size([2, 3, 5, 4])
    """

    _pool = staticmethod(F.fractional_max_pool2d)
    _dims = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (``F.fractional_max_pool3d``); samples ``(N, C, 3)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> pool = nn.FractionalMaxPool3d(2, output_size=(3, 2, 4), return_indices=True)
    >>> pool(oxmera.randn(3, 5, 4, 6))[1].shape
    oxmera.Size([3, 3, 2, 4])
    """

    _pool = staticmethod(F.fractional_max_pool3d)
    _dims = 3
