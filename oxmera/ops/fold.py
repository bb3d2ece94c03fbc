"""Sliding-block ops: ``im2col`` (``F.unfold``) and ``col2im`` (``F.fold``).

``im2col`` copies every ``kernel_size`` block of a padded ``(N, C, H, W)``
input into a column, ``(N, C * kH * kW, L)``, from the convolution's window
view; ``col2im`` sums such columns back onto an image (overlaps add), with
the convolution's col2im. Each is linear and the adjoint of the other with
the same arguments, so each is the other's VJP and gradients of any order
work. Arguments and errors follow ``torch.nn.functional.unfold``/``fold``.
"""
import math

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops.conv import _add_windows, _ntuple, _pad, _unpad, _windows

__all__ = ["unfold", "fold"]

OpError = _core.OpError


def _block_geometry(opname, spatial, kernel_size, dilation, padding, stride):
    """Check the arguments; return ``(kernel, dilation, padding, stride, blocks per dim)``."""
    kernel = _ntuple(kernel_size, 2, "kernel_size", opname, 1)
    dilation = _ntuple(dilation, 2, "dilation", opname, 1)
    padding = _ntuple(padding, 2, "padding", opname, 0)
    stride = _ntuple(stride, 2, "stride", opname, 1)
    blocks = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                   for n, k, d, p, s in zip(spatial, kernel, dilation, padding, stride))
    if any(b < 1 for b in blocks):
        raise OpError(f"{opname}(): given input with spatial size {tuple(spatial)}, "
                      f"kernel_size={kernel}, dilation={dilation}, padding={padding}, calculated "
                      f"shape of the array of sliding blocks as {blocks}, but its components "
                      f"must be at least one")
    return kernel, dilation, padding, stride, blocks


@op(save=())
def im2col(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of ``input`` ``(N, C, H, W)`` or ``(C, H, W)`` as columns.

    The op behind ``F.unfold``: ``(N, C * kH * kW, L)`` (or without ``N``),
    ``L`` blocks in row-major order, each column channel-major then kernel
    row then column, as PyTorch. Its VJP is :func:`col2im`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.fold import im2col
    >>> im2col(oxmera.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[0., 1., 3., 4.],
            [1., 2., 4., 5.]], dtype=float32)
    """
    if input.ndim not in (3, 4):
        raise OpError(f"unfold(): expected a 3-D (unbatched) or 4-D (batched) input, got input "
                      f"of shape {input.shape}")
    kernel, dilation, padding, stride, blocks = _block_geometry(
        "unfold", input.shape[-2:], kernel_size, dilation, padding, stride)
    windows = _windows(_pad(input, tuple((p, p) for p in padding), 0), kernel, stride, dilation,
                       blocks)
    return windows.reshape(input.shape[:-3] + (input.shape[-3] * math.prod(kernel),
                                               math.prod(blocks)))


@im2col.vjp
def _(ctx, grad, input, kernel_size, dilation=1, padding=0, stride=1):
    return col2im(grad, ctx.input_shape(0)[-2:], kernel_size, dilation, padding, stride)


@op(save=())
def col2im(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns of sliding blocks ``(N, C * kH * kW, L)`` onto ``(N, C, *output_size)``.

    The op behind ``F.fold`` (also ``(C * kH * kW, L)`` unbatched); blocks that
    overlap add. Its VJP is :func:`im2col`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.fold import col2im
    >>> col2im(oxmera.ones(2, 2), (1, 3), (1, 2))
    tensor([[[1., 2., 1.]]], dtype=float32)
    """
    output_size = _ntuple(output_size, 2, "output_size", "fold", 1)
    if input.ndim not in (2, 3):
        raise OpError(f"fold(): expected a 2-D (unbatched) or 3-D (batched) input, got input of "
                      f"shape {input.shape}")
    kernel, dilation, padding, stride, blocks = _block_geometry(
        "fold", output_size, kernel_size, dilation, padding, stride)
    rows, count = input.shape[-2:]
    if rows % math.prod(kernel):
        raise OpError(f"fold(): expected size of input's dimension {input.ndim - 2} to be "
                      f"divisible by the product of kernel_size, but got input.size("
                      f"{input.ndim - 2})={rows} and kernel_size={kernel}")
    if count != math.prod(blocks):
        raise OpError(f"fold(): given output_size={output_size}, kernel_size={kernel}, "
                      f"dilation={dilation}, padding={padding}, stride={stride}, expected size "
                      f"of input's dimension {input.ndim - 1} to match the calculated number of "
                      f"sliding blocks {blocks[0]} * {blocks[1]} = {math.prod(blocks)}"
                      f", but got input.size({input.ndim - 1})={count}")
    channels = rows // math.prod(kernel)
    batch = input.shape[:-2]
    cols = input.reshape(batch + (channels,) + kernel + blocks)
    pads = tuple((p, p) for p in padding)
    out = np.zeros(batch + (channels,) + tuple(n + 2 * p for n, p in zip(output_size, padding)),
                   input.dtype)
    _add_windows(out, lambda i, j: cols[..., i, j, :, :], kernel, stride, dilation, blocks)
    return _unpad(out, pads, output_size)


@col2im.vjp
def _(ctx, grad, input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    return im2col(grad, kernel_size, dilation, padding, stride)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks of a batched ``(N, C, H, W)`` (or ``(C, H, W)``) input.

    Returns ``(N, C * kH * kW, L)`` with ``L`` the number of blocks,
    ``prod((size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1)``,
    as ``torch.nn.functional.unfold``. Differentiable to any order (its
    gradient is ``fold``).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.unfold(oxmera.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]], dtype=float32)
    >>> F.unfold(oxmera.ones(2, 3, 8, 8), (2, 3), padding=1, stride=2).shape
    oxmera.Size([2, 18, 20])
    """
    return im2col(input, kernel_size, dilation, padding, stride)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks ``(N, C * kH * kW, L)`` into ``(N, C, *output_size)``.

    The adjoint of ``unfold``: overlapping values are summed, as
    ``torch.nn.functional.fold``. Also takes an unbatched ``(C * kH * kW, L)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.fold(oxmera.ones(1, 4, 4), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]], dtype=float32)
    """
    return col2im(input, output_size, kernel_size, dilation, padding, stride)
