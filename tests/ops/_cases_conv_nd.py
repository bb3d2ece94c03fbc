"""Gradient cases and PyTorch comparisons of conv3d and the sliding-block ops.

``conv3d`` runs the N-D convolution kernels that conv1d/conv2d share (their
cases are in ``_cases_conv.py``); ``im2col``/``col2im`` are the ops behind
``F.unfold``/``F.fold``, each the other's VJP. Negative end padding (the
transposed convolution's ``output_padding``) reaches ``conv_input_grad`` and
``conv_weight_grad`` here too. None takes a 0-d input (test_registry's
CANNOT_TAKE says so).
"""
import oxmera.nn.functional as F
from oxmera.ops.conv import conv_input_grad, conv_weight_grad
from oxmera.ops.fold import col2im, im2col

from ._case_table import S, T, Leaf, add_cases, add_torch_cases, const

add_cases(
    "conv3d",
    ("plain", F.conv3d, (Leaf((2, 2, 3, 3, 3)), Leaf((2, 2, 2, 2, 2)))),
    ("bias-stride-padding", lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=1),
     (Leaf((1, 2, 3, 3, 2)), Leaf((2, 2, 2, 2, 2)), Leaf((2,)))),
    ("dilation-groups", lambda x, w: F.conv3d(x, w, dilation=(1, 2, 1), groups=2),
     (Leaf((1, 4, 2, 4, 2)), Leaf((2, 2, 1, 2, 2)))),
    ("same-even-kernel", lambda x, w: F.conv3d(x, w, padding="same"),
     (Leaf((1, 1, 3, 2, 3)), Leaf((1, 1, 2, 2, 2)))),
    ("unbatched", lambda x, w: F.conv3d(x, w, padding=(0, 1, 0)),
     (Leaf((2, 2, 2, 3)), Leaf((2, 2, 2, 2, 2)))),
    ("size-0-batch", F.conv3d, (Leaf((0, 2, 2, 2, 2)), Leaf((2, 2, 2, 2, 2)), Leaf((2,)))),
    ("transposed", F.conv3d, (T((2, 2, 3, 2, 2)), S((2, 2, 2, 2, 1)))),
    ("no-grad-input", F.conv3d, (const((1, 2, 2, 2, 3)), Leaf((1, 2, 2, 1, 2)))),
)

# A transposed convolution with output_padding 1 is conv_input_grad with an
# end padding of padding - 1: negative here, a crop.
add_cases(
    "conv_input_grad",
    ("negative-end-padding", lambda g, w: conv_input_grad(g, w, (1, 2, 7), stride=2,
                                                          padding=((0, -1),)),
     (Leaf((1, 2, 3)), Leaf((2, 2, 2)))),
    ("3d", lambda g, w: conv_input_grad(g, w, (1, 2, 3, 3, 3), stride=2, padding=1),
     (Leaf((1, 2, 2, 2, 2)), Leaf((2, 2, 2, 2, 2)))),
)
add_cases(
    "conv_weight_grad",
    ("negative-end-padding", lambda x, g: conv_weight_grad(x, g, (2, 2, 2), stride=2,
                                                           padding=((0, -1),)),
     (Leaf((1, 2, 7)), Leaf((1, 2, 3)))),
    ("3d", lambda x, g: conv_weight_grad(x, g, (2, 2, 2, 2, 2), stride=2, padding=1),
     (Leaf((1, 2, 3, 3, 3)), Leaf((1, 2, 2, 2, 2)))),
)

add_cases(
    "im2col",
    ("plain", lambda x: im2col(x, 2), (Leaf((2, 2, 3, 3)),)),
    ("geometry", lambda x: im2col(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
     (Leaf((1, 2, 4, 5)),)),
    ("unbatched", lambda x: im2col(x, (1, 2), stride=2), (Leaf((3, 2, 4)),)),
    ("size-0", lambda x: im2col(x, 2), (Leaf((0, 2, 3, 3)),)),
    ("transposed", lambda x: im2col(x, 2, padding=1), (T((2, 2, 3, 2)),)),
)
add_cases(
    "col2im",
    ("plain", lambda c: col2im(c, (3, 3), 2), (Leaf((2, 8, 4)),)),
    ("geometry", lambda c: col2im(c, (4, 5), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2)),
     (Leaf((1, 12, 12)),)),
    ("unbatched", lambda c: col2im(c, (2, 4), (1, 2), stride=2), (Leaf((6, 2)),)),
    ("size-0", lambda c: col2im(c, (3, 3), 2), (Leaf((0, 8, 4)),)),
    ("strided", lambda c: col2im(c, (3, 3), 2), (S((1, 4, 4)),)),
)

add_torch_cases(
    "conv3d",
    ("bias-stride-padding-dilation", lambda lib, x, w, b: lib.nn.functional.conv3d(
        x, w, b, stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1)),
     (Leaf((2, 3, 5, 5, 4)), Leaf((4, 3, 2, 3, 2)), Leaf((4,)))),
    ("groups", lambda lib, x, w: lib.nn.functional.conv3d(x, w, groups=2),
     (Leaf((1, 4, 3, 4, 3)), Leaf((6, 2, 2, 2, 2)))),
    ("same", lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding="same"),
     (Leaf((2, 3, 3, 4)), Leaf((2, 2, 3, 2, 2)))),
)
add_torch_cases(
    "im2col",
    ("geometry", lambda lib, x: lib.nn.functional.unfold(x, (2, 3), (2, 1), 1, (1, 2)),
     (Leaf((2, 3, 5, 6)),)),
    ("unbatched", lambda lib, x: lib.nn.functional.unfold(x, 2, stride=2), (Leaf((2, 4, 5)),)),
)
add_torch_cases(
    "col2im",
    ("geometry", lambda lib, c: lib.nn.functional.fold(c, (4, 5), (2, 3), (2, 1), 1, (1, 2)),
     (Leaf((2, 18, 12)),)),
    ("unbatched", lambda lib, c: lib.nn.functional.fold(c, (4, 5), 2, stride=2),
     (Leaf((8, 4)),)),
)
