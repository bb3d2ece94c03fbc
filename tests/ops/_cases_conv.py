"""Gradient cases and PyTorch comparisons of the convolution and pooling ops.

Shapes are small (gradgradcheck perturbs every element); each op's cases
cover stride, padding (ints, pairs, 'same'), dilation, groups, bias,
unbatched inputs, a size-0 batch and non-contiguous (transposed, strided)
inputs. None can take a 0-d input (a convolution or a pooling needs channel
and spatial dims): test_registry's CANNOT_TAKE lists them.

Max pooling uses the ``distinct`` domain so no window holds a tie (a tie is
a kink, where finite differences mean nothing); tie handling is tested in
``tests/nn/test_conv.py``.
"""
import numpy as np

import oxmera
import oxmera.nn.functional as F
from oxmera.ops.conv import (avg_pool2d_backward, conv_input_grad, conv_weight_grad,
                             max_pool2d_backward, max_pool2d_gather)

from ._case_table import S, T, Leaf, add_cases, add_torch_cases, const

# -- conv2d ------------------------------------------------------------------------------

add_cases(
    "conv2d",
    ("plain", F.conv2d, (Leaf((2, 2, 4, 4)), Leaf((3, 2, 2, 2)))),
    ("bias", F.conv2d, (Leaf((2, 2, 4, 3)), Leaf((3, 2, 2, 2)), Leaf((3,)))),
    ("stride-padding", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
     (Leaf((1, 2, 5, 4)), Leaf((2, 2, 3, 3)), Leaf((2,)))),
    ("stride-pair-padding-pair", lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(2, 0)),
     (Leaf((1, 2, 3, 5)), Leaf((2, 2, 2, 3)))),
    ("dilation", lambda x, w: F.conv2d(x, w, dilation=(2, 1), padding=1),
     (Leaf((1, 2, 5, 4)), Leaf((2, 2, 2, 2)))),
    ("groups", lambda x, w, b: F.conv2d(x, w, b, groups=2),
     (Leaf((2, 4, 3, 3)), Leaf((4, 2, 2, 2)), Leaf((4,)))),
    ("depthwise", lambda x, w: F.conv2d(x, w, padding=1, groups=3),
     (Leaf((1, 3, 3, 3)), Leaf((6, 1, 2, 2)))),
    ("same-even-kernel", lambda x, w: F.conv2d(x, w, padding="same"),
     (Leaf((1, 2, 3, 4)), Leaf((2, 2, 2, 2)))),
    ("valid", lambda x, w: F.conv2d(x, w, padding="valid"),
     (Leaf((1, 1, 3, 3)), Leaf((1, 1, 2, 2)))),
    ("unbatched", lambda x, w, b: F.conv2d(x, w, b, padding=1),
     (Leaf((2, 3, 3)), Leaf((2, 2, 2, 2)), Leaf((2,)))),
    ("size-0-batch", F.conv2d, (Leaf((0, 2, 3, 3)), Leaf((2, 2, 2, 2)), Leaf((2,)))),
    ("transposed-input", lambda x, w: F.conv2d(x, w, stride=2),
     (T((2, 2, 4, 5)), Leaf((2, 2, 2, 2)))),
    ("strided-weight", lambda x, w: F.conv2d(x, w, padding=1),
     (Leaf((1, 2, 3, 3)), S((2, 2, 2, 2)))),
    ("no-grad-weight", F.conv2d, (Leaf((1, 2, 3, 3)), const((2, 2, 2, 2)))),
    ("no-grad-input", F.conv2d, (const((1, 2, 3, 3)), Leaf((2, 2, 2, 2)), Leaf((2,)))),
    ("bias-only", lambda b, x, w: F.conv2d(x, w, b),
     (Leaf((2,)), const((1, 2, 3, 3)), const((2, 2, 2, 2)))),
)

# -- conv1d ------------------------------------------------------------------------------

add_cases(
    "conv1d",
    ("plain", F.conv1d, (Leaf((2, 2, 5)), Leaf((3, 2, 2)))),
    ("bias-stride-padding", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
     (Leaf((2, 2, 6)), Leaf((3, 2, 3)), Leaf((3,)))),
    ("dilation-groups", lambda x, w: F.conv1d(x, w, dilation=2, groups=2),
     (Leaf((1, 4, 6)), Leaf((2, 2, 2)))),
    ("same", lambda x, w: F.conv1d(x, w, padding="same", dilation=3),
     (Leaf((1, 1, 5)), Leaf((2, 1, 2)))),
    ("unbatched", lambda x, w: F.conv1d(x, w, padding=1), (Leaf((2, 4)), Leaf((2, 2, 3)))),
    ("size-0-batch", F.conv1d, (Leaf((0, 2, 4)), Leaf((2, 2, 2)))),
    ("transposed", F.conv1d, (T((2, 3, 4)), T((2, 3, 2)))),
)

# -- the gradient ops (checked on their own, to second order: third order of a conv) ------

_GEOMETRY = {"stride": 2, "padding": 1, "dilation": 1, "groups": 2}
_GEOMETRY_1D = {"stride": 1, "padding": ((2, 0),), "dilation": 2, "groups": 1}

add_cases(
    "conv_input_grad",
    ("2d", lambda g, w: conv_input_grad(g, w, (2, 4, 4, 3), **_GEOMETRY),
     (Leaf((2, 4, 3, 2)), Leaf((4, 2, 2, 2)))),
    ("2d-stride-remainder", lambda g, w: conv_input_grad(g, w, (1, 1, 5, 5), stride=2),
     (Leaf((1, 2, 2, 2)), Leaf((2, 1, 2, 2)))),
    ("1d", lambda g, w: conv_input_grad(g, w, (1, 2, 4), **_GEOMETRY_1D),
     (Leaf((1, 2, 4)), Leaf((2, 2, 2)))),
    ("size-0", lambda g, w: conv_input_grad(g, w, (0, 2, 3, 3)),
     (Leaf((0, 2, 2, 2)), Leaf((2, 2, 2, 2)))),
    ("transposed", lambda g, w: conv_input_grad(g, w, (2, 2, 3, 3), padding=1),
     (T((2, 2, 3, 3)), S((2, 2, 3, 3)))),
)

add_cases(
    "conv_weight_grad",
    ("2d", lambda x, g: conv_weight_grad(x, g, (4, 2, 2, 2), **_GEOMETRY),
     (Leaf((2, 4, 4, 3)), Leaf((2, 4, 3, 2)))),
    ("1d", lambda x, g: conv_weight_grad(x, g, (2, 2, 2), **_GEOMETRY_1D),
     (Leaf((1, 2, 4)), Leaf((1, 2, 4)))),
    ("size-0", lambda x, g: conv_weight_grad(x, g, (2, 2, 2, 2)),
     (Leaf((0, 2, 3, 3)), Leaf((0, 2, 2, 2)))),
    ("transposed", lambda x, g: conv_weight_grad(x, g, (2, 2, 3, 3), padding=1),
     (T((2, 2, 3, 3)), S((2, 2, 3, 3)))),
)

# -- pooling -----------------------------------------------------------------------------

add_cases(
    "max_pool2d",
    ("kernel-2", lambda x: F.max_pool2d(x, 2), (Leaf((2, 2, 4, 4), "distinct"),)),
    ("overlapping", lambda x: F.max_pool2d(x, 3, stride=1), (Leaf((1, 2, 4, 5), "distinct"),)),
    ("padding-ceil", lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
     (Leaf((1, 2, 6, 5), "distinct"),)),
    ("dilation", lambda x: F.max_pool2d(x, (2, 2), stride=1, dilation=2),
     (Leaf((1, 1, 5, 5), "distinct"),)),
    ("unbatched", lambda x: F.max_pool2d(x, (2, 1)), (Leaf((2, 4, 3), "distinct"),)),
    ("return-indices", lambda x: F.max_pool2d(x, 2, return_indices=True)[0],
     (Leaf((1, 1, 4, 4), "distinct"),)),
    ("size-0", lambda x: F.max_pool2d(x, 2), (Leaf((0, 2, 4, 4)),)),
    ("transposed", lambda x: F.max_pool2d(x, 2, stride=1), (T((2, 2, 3, 4), "distinct"),)),
    ("strided", lambda x: F.max_pool2d(x, 2), (S((1, 2, 4, 4), "distinct"),)),
)

add_cases(
    "avg_pool2d",
    ("kernel-2", lambda x: F.avg_pool2d(x, 2), (Leaf((2, 2, 4, 4)),)),
    ("overlapping", lambda x: F.avg_pool2d(x, (3, 2), stride=1), (Leaf((1, 2, 4, 5)),)),
    ("padding", lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), (Leaf((1, 1, 5, 5)),)),
    ("exclude-pad-ceil", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                count_include_pad=False),
     (Leaf((1, 2, 6, 5)),)),
    ("divisor-override", lambda x: F.avg_pool2d(x, 2, padding=1, divisor_override=3),
     (Leaf((1, 1, 3, 4)),)),
    ("unbatched", lambda x: F.avg_pool2d(x, 2), (Leaf((2, 4, 4)),)),
    ("size-0", lambda x: F.avg_pool2d(x, 2), (Leaf((0, 2, 4, 4)),)),
    ("transposed", lambda x: F.avg_pool2d(x, 2, stride=1), (T((2, 2, 3, 4)),)),
    ("strided", lambda x: F.avg_pool2d(x, 2), (S((1, 2, 4, 4)),)),
)

add_cases(
    "avg_pool2d_backward",
    ("kernel-2", lambda g: avg_pool2d_backward(g, (2, 2, 4, 4), 2), (Leaf((2, 2, 2, 2)),)),
    ("overlapping-padding", lambda g: avg_pool2d_backward(g, (1, 2, 5, 4), 3, 1, 1),
     (Leaf((1, 2, 5, 4)),)),
    ("exclude-pad-ceil", lambda g: avg_pool2d_backward(g, (1, 2, 6, 5), 3, 2, 1, True, False),
     (Leaf((1, 2, 4, 3)),)),
    ("size-0", lambda g: avg_pool2d_backward(g, (0, 2, 4, 4), 2), (Leaf((0, 2, 2, 2)),)),
    ("transposed", lambda g: avg_pool2d_backward(g, (2, 3, 4, 4), 2), (T((2, 3, 2, 2)),)),
)

# Indices as max_pool2d returns them: flat per (H, W) plane, some repeated
# (overlapping windows share a maximum).
_INDICES = np.array([[[[0, 5], [5, 11]], [[3, 3], [8, 2]]],
                     [[[1, 1], [1, 1]], [[11, 10], [9, 4]]]])

add_cases(
    "max_pool2d_backward",
    ("repeated-indices", lambda g: max_pool2d_backward(g, _INDICES, (2, 2, 3, 4)),
     (Leaf((2, 2, 2, 2)),)),
    ("unbatched", lambda g: max_pool2d_backward(g, _INDICES[0], (2, 3, 4)),
     (Leaf((2, 2, 2)),)),
    ("size-0", lambda g: max_pool2d_backward(g, _INDICES[:0], (0, 2, 3, 4)),
     (Leaf((0, 2, 2, 2)),)),
    ("transposed", lambda g: max_pool2d_backward(g, _INDICES, (2, 2, 3, 4)),
     (T((2, 2, 2, 2)),)),
)

add_cases(
    "max_pool2d_gather",
    ("repeated-indices", lambda x: max_pool2d_gather(x, _INDICES), (Leaf((2, 2, 3, 4)),)),
    ("unbatched", lambda x: max_pool2d_gather(x, _INDICES[1]), (Leaf((2, 3, 4)),)),
    ("size-0", lambda x: max_pool2d_gather(x, _INDICES[:0]), (Leaf((0, 2, 3, 4)),)),
    ("strided", lambda x: max_pool2d_gather(x, _INDICES), (S((2, 2, 3, 4)),)),
)

# -- PyTorch comparisons ----------------------------------------------------------------------


def _lib_grad_op(lib, ours, theirs_name):
    """Our gradient op, or its ``torch.nn.grad`` counterpart (arguments reordered)."""
    if lib is oxmera:
        return ours
    fn = getattr(lib.nn.grad, theirs_name)
    return lambda first, second, shape, **kwargs: fn(*_torch_order(theirs_name, first, second,
                                                                   shape), **kwargs)


def _torch_order(name, first, second, shape):
    # conv2d_input(input_size, weight, grad_output); conv2d_weight(input, weight_size, grad_output)
    if name.endswith("_input"):
        return shape, second, first
    return first, shape, second


add_torch_cases(
    "conv2d",
    ("bias", lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b),
     (Leaf((2, 3, 6, 5)), Leaf((4, 3, 3, 2)), Leaf((4,)))),
    ("stride-padding-dilation", lambda lib, x, w: lib.nn.functional.conv2d(
        x, w, stride=(2, 1), padding=(1, 2), dilation=(1, 2)),
     (Leaf((2, 3, 7, 6)), Leaf((4, 3, 3, 3)))),
    ("groups", lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, 2, 1, 1, 3),
     (Leaf((2, 6, 5, 5)), Leaf((9, 2, 3, 3)), Leaf((9,)))),
    ("same", lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same", dilation=2),
     (Leaf((1, 2, 6, 5)), Leaf((3, 2, 2, 3)))),
    ("valid", lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="valid"),
     (Leaf((1, 2, 4, 4)), Leaf((3, 2, 2, 2)))),
    ("unbatched", lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2),
     (Leaf((2, 5, 5)), Leaf((3, 2, 3, 3)))),
    ("size-0-batch", lambda lib, x, w: lib.nn.functional.conv2d(x, w),
     (Leaf((0, 2, 4, 4)), Leaf((3, 2, 3, 3)))),
)
add_torch_cases(
    "conv1d",
    ("bias-stride-padding", lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, 2, 1),
     (Leaf((2, 3, 9)), Leaf((4, 3, 3)), Leaf((4,)))),
    ("dilation-groups", lambda lib, x, w: lib.nn.functional.conv1d(x, w, dilation=2, groups=2),
     (Leaf((2, 4, 9)), Leaf((6, 2, 3)))),
    ("same-even-kernel", lambda lib, x, w: lib.nn.functional.conv1d(x, w, padding="same"),
     (Leaf((1, 2, 7)), Leaf((3, 2, 4)))),
    ("unbatched", lambda lib, x, w: lib.nn.functional.conv1d(x, w),
     (Leaf((3, 6)), Leaf((2, 3, 2)))),
)
add_torch_cases(
    "conv_input_grad",
    ("2d", lambda lib, g, w: _lib_grad_op(lib, conv_input_grad, "conv2d_input")(
        g, w, (2, 4, 7, 6), stride=2, padding=1, dilation=(1, 2), groups=2),
     (Leaf((2, 6, 4, 2)), Leaf((6, 2, 3, 3)))),
    ("1d", lambda lib, g, w: _lib_grad_op(lib, conv_input_grad, "conv1d_input")(
        g, w, (2, 3, 8), stride=3, padding=2),
     (Leaf((2, 2, 4)), Leaf((2, 3, 2)))),
)
add_torch_cases(
    "conv_weight_grad",
    ("2d", lambda lib, x, g: _lib_grad_op(lib, conv_weight_grad, "conv2d_weight")(
        x, g, (6, 2, 3, 3), stride=2, padding=1, dilation=(1, 2), groups=2),
     (Leaf((2, 4, 7, 6)), Leaf((2, 6, 4, 2)))),
    ("1d", lambda lib, x, g: _lib_grad_op(lib, conv_weight_grad, "conv1d_weight")(
        x, g, (2, 3, 2), stride=3, padding=2),
     (Leaf((2, 3, 8)), Leaf((2, 2, 4)))),
)
add_torch_cases(
    "max_pool2d",
    ("kernel-stride", lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2),
     (Leaf((2, 3, 7, 6), "distinct"),)),
    ("padding-dilation-ceil", lambda lib, x: lib.nn.functional.max_pool2d(
        x, (3, 2), (2, 1), (1, 1), dilation=(1, 2), ceil_mode=True),
     (Leaf((2, 2, 8, 7), "distinct"),)),
    ("return-indices", lambda lib, x: lib.nn.functional.max_pool2d(x, 2, 1, return_indices=True),
     (Leaf((3, 5, 4), "distinct"),)),
)
add_torch_cases(
    "avg_pool2d",
    ("kernel-stride", lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2),
     (Leaf((2, 3, 7, 6)),)),
    ("padding-ceil", lambda lib, x: lib.nn.functional.avg_pool2d(x, (3, 2), 2, (1, 1), True),
     (Leaf((2, 2, 6, 7)),)),
    ("exclude-pad", lambda lib, x: lib.nn.functional.avg_pool2d(
        x, 3, 2, 1, True, count_include_pad=False),
     (Leaf((2, 2, 6, 7)),)),
    ("divisor-override", lambda lib, x: lib.nn.functional.avg_pool2d(
        x, 2, 1, 1, divisor_override=3),
     (Leaf((3, 4, 5)),)),
)


def _torch_avg_backward(lib, g, shape, *args):
    """``avg_pool2d_backward`` in PyTorch: the VJP of avg_pool2d, taken with create_graph."""
    if lib is oxmera:
        return avg_pool2d_backward(g, shape, *args)
    x = lib.zeros(shape, dtype=g.dtype, requires_grad=True)
    out = lib.nn.functional.avg_pool2d(x, *args)
    return lib.autograd.grad(out, x, g, create_graph=True)[0]


add_torch_cases(
    "avg_pool2d_backward",
    ("padding-ceil", lambda lib, g: _torch_avg_backward(lib, g, (2, 2, 6, 7), 3, 2, 1, True,
                                                        False),
     (Leaf((2, 2, 4, 4)),)),
)


def _torch_indices(lib, indices):
    return indices if lib is oxmera else lib.from_numpy(indices)


def _scatter(lib, g, indices, shape):
    if lib is oxmera:
        return max_pool2d_backward(g, indices, shape)
    flat = lib.zeros(shape[:-2] + (shape[-2] * shape[-1],), dtype=g.dtype)
    return flat.scatter_add(-1, lib.from_numpy(indices).flatten(-2), g.flatten(-2)).view(shape)


def _gather(lib, x, indices):
    if lib is oxmera:
        return max_pool2d_gather(x, indices)
    return x.flatten(-2).gather(-1, lib.from_numpy(indices).flatten(-2)).view(indices.shape)


add_torch_cases(
    "max_pool2d_backward",
    ("repeated-indices", lambda lib, g: _scatter(lib, g, _INDICES, (2, 2, 3, 4)),
     (Leaf((2, 2, 2, 2)),)),
)
add_torch_cases(
    "max_pool2d_gather",
    ("repeated-indices", lambda lib, x: _gather(lib, x, _INDICES), (Leaf((2, 2, 3, 4)),)),
)
