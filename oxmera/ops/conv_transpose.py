"""Transposed convolutions (conv_transpose1d/2d/3d) and conv_tbc, composed from the conv ops.

A transposed convolution is the gradient of a convolution with respect to
its input, so each is :func:`oxmera.ops.conv.conv_input_grad` (plus a
bias): no second im2col, and its gradients to any order are that op's VJPs
(a convolution and ``conv_weight_grad``). ``output_padding`` adds rows at
the end of the output: the convolution whose gradient this is runs over
that longer output with its end padding reduced by as much (a negative
amount crops), so that it has exactly the input's length.
"""
from oxmera._core import autograd as _core
from oxmera.ops.conv import _check_conv_dims, _is_int, _ntuple, conv1d, conv_input_grad
from oxmera.ops.creation import as_tensor

__all__ = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "conv_tbc"]

OpError = _core.OpError


def transposed_output_size(opname, input_size, kernel, stride, padding, output_padding,
                           dilation):
    """The spatial size of a transposed convolution's output (PyTorch's formula), checked."""
    size = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1
                 for n, k, s, p, op, d in zip(input_size, kernel, stride, padding,
                                              output_padding, dilation))
    if any(n < 1 for n in size):
        raise OpError(f"{opname}(): given input size per channel {tuple(input_size)}, the "
                      f"calculated output size per channel {size} is too small (kernel "
                      f"{tuple(kernel)}, stride {stride}, padding {padding}, output_padding "
                      f"{output_padding}, dilation {dilation})")
    return size


def _conv_transpose(nd, opname, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    input, weight = as_tensor(input), as_tensor(weight)
    if weight.ndim != nd + 2:
        kernel = ", ".join(("kT", "kH", "kW")[3 - nd:]) if nd > 1 else "kL"
        raise OpError(f"{opname}(): expected a {nd + 2}-D weight (in_channels, out_channels / "
                      f"groups, {kernel}), got weight of shape {tuple(weight.shape)}")
    _check_conv_dims(nd, opname, input, weight)
    if not _is_int(groups):
        raise TypeError(f"{opname}(): groups must be an int, got {groups!r}")
    if groups < 1:
        raise OpError(f"{opname}(): groups must be positive, got groups={groups}")
    unbatched = input.ndim == nd + 1
    shown = tuple(input.shape)
    if unbatched:
        input = input.unsqueeze(0)
    in_channels = weight.shape[0]
    if in_channels % groups:
        raise OpError(f"{opname}(): the weight's {in_channels} input channels (weight shape "
                      f"{tuple(weight.shape)}) are not divisible by groups={groups}")
    if input.shape[1] != in_channels:
        raise OpError(f"{opname}(): given transposed=1, weight of shape {tuple(weight.shape)}, "
                      f"expected input of shape {shown} to have {in_channels} channels, but got "
                      f"{input.shape[1]} channels instead")
    out_channels = weight.shape[1] * groups
    if bias is not None:
        bias = as_tensor(bias)
        if tuple(bias.shape) != (out_channels,):
            raise OpError(f"{opname}(): expected bias of shape ({out_channels},) for weight of "
                          f"shape {tuple(weight.shape)} and groups={groups}, got bias of shape "
                          f"{tuple(bias.shape)}")
    if isinstance(padding, str):
        raise TypeError(f"{opname}(): padding must be an int or a tuple of {nd} ints (a "
                        f"transposed convolution takes no padding string), got {padding!r}")
    stride = _ntuple(stride, nd, "stride", opname, 1)
    padding = _ntuple(padding, nd, "padding", opname, 0)
    output_padding = _ntuple(output_padding, nd, "output_padding", opname, 0)
    dilation = _ntuple(dilation, nd, "dilation", opname, 1)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        raise OpError(f"{opname}(): output padding must be smaller than either stride or "
                      f"dilation, but got output_padding={output_padding}, stride={stride}, "
                      f"dilation={dilation}")
    size = transposed_output_size(opname, input.shape[2:], weight.shape[2:], stride, padding,
                                  output_padding, dilation)
    pads = tuple((p, p - op) for p, op in zip(padding, output_padding))
    out = conv_input_grad(input, weight, (input.shape[0], out_channels) + size, stride, pads,
                          dilation, groups)
    if bias is not None:
        out = out + bias.reshape((out_channels,) + (1,) * nd)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution over ``(N, C_in, L)`` or ``(C_in, L)`` input.

    ``weight`` is ``(in_channels, out_channels / groups, kL)``, ``bias``
    ``(out_channels,)`` or None. The output has length ``(L - 1) * stride -
    2 * padding + dilation * (kL - 1) + output_padding + 1``;
    ``output_padding`` must be smaller than ``stride`` or ``dilation``. It
    is the gradient of ``conv1d`` with respect to its input.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[1.0, 2.0, 3.0]]])
    >>> F.conv_transpose1d(x, oxmera.tensor([[[1.0, 10.0]]]))
    tensor([[[ 1., 12., 23., 30.]]], dtype=float32)
    >>> F.conv_transpose1d(x, oxmera.ones(1, 2, 3), stride=2, output_padding=1).shape
    oxmera.Size([1, 2, 8])
    """
    return _conv_transpose(1, "conv_transpose1d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)`` input.

    ``weight`` is ``(in_channels, out_channels / groups, kH, kW)``, ``bias``
    ``(out_channels,)`` or None; ``stride``, ``padding``, ``output_padding``
    and ``dilation`` are ints or pairs. Each output size is ``(n - 1) *
    stride - 2 * padding + dilation * (k - 1) + output_padding + 1``. It is
    the gradient of ``conv2d`` with respect to its input.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.conv_transpose2d(oxmera.ones(1, 1, 2, 2), oxmera.ones(1, 1, 2, 2))
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]], dtype=float32)
    >>> F.conv_transpose2d(oxmera.ones(2, 4, 5, 5), oxmera.ones(4, 3, 3, 3), stride=2,
    ...                    padding=1, output_padding=1, groups=2).shape
    oxmera.Size([2, 6, 10, 10])
    """
    return _conv_transpose(2, "conv_transpose2d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)`` input.

    ``weight`` is ``(in_channels, out_channels / groups, kT, kH, kW)``; the
    arguments are ``conv_transpose2d``'s, with triples. It is the gradient
    of ``conv3d`` with respect to its input.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.conv_transpose3d(oxmera.ones(1, 2, 2, 3, 3), oxmera.ones(2, 1, 2, 2, 2),
    ...                    stride=2).shape
    oxmera.Size([1, 1, 4, 6, 6])
    """
    return _conv_transpose(3, "conv_transpose3d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_tbc(input, weight, bias, pad=0):
    """1-D convolution in time-batch-channel layout: ``(T, B, C_in)`` to ``(T', B, C_out)``.

    ``weight`` is ``(kernel, C_in, C_out)``, ``bias`` ``(C_out,)``, ``pad``
    zeros on both ends of time; ``conv1d`` on the permuted operands, as
    ``torch.conv_tbc``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.conv_tbc(oxmera.ones(5, 2, 3), oxmera.ones(3, 3, 4), oxmera.zeros(4), 1)[:, 0, 0]
    tensor([6., 9., 9., 9., 6.], dtype=float32)
    """
    input, weight, bias = as_tensor(input), as_tensor(weight), as_tensor(bias)
    if input.ndim != 3 or weight.ndim != 3 or bias.ndim != 1:
        raise OpError(f"conv_tbc(): expected a 3-D input (time, batch, channels), a 3-D weight "
                      f"(kernel, in, out) and a 1-D bias, got shapes {tuple(input.shape)}, "
                      f"{tuple(weight.shape)} and {tuple(bias.shape)}")
    if input.shape[2] != weight.shape[1]:
        raise OpError(f"conv_tbc(): input dim 2 (input channels) is not == dim 1 in the weight "
                      f"tensor: input of shape {tuple(input.shape)}, weight of shape "
                      f"{tuple(weight.shape)}")
    if bias.shape[0] != weight.shape[2]:
        raise OpError(f"conv_tbc(): bias size must equal dim 2 in the weight tensor (output "
                      f"channels): bias of shape {tuple(bias.shape)}, weight of shape "
                      f"{tuple(weight.shape)}")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, 1, pad)
    return out.permute(2, 0, 1)
