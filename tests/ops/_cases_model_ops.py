"""Gradient cases and PyTorch comparisons of the model ops with fused VJPs.

``linear`` (``oxmera.ops.blas``) is the op behind ``nn.functional.linear``:
its cases cover batched (3-D) inputs, a 1-D input, a 1-D weight, size-0
batches, a bias broadcast from a smaller shape, no bias, inputs that need no
gradient and non-contiguous layouts, each checked to second order.
"""
from oxmera.ops.blas import linear

from ._case_table import S, T, Leaf, const, add_cases, add_torch_cases


add_cases(
    "linear",
    ("2d-bias", linear, (Leaf((3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("3d-no-bias", linear, (Leaf((2, 3, 4)), Leaf((2, 4)))),
    ("3d-bias", linear, (Leaf((2, 3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("3d-bias-1x5", linear, (Leaf((2, 3, 4)), Leaf((5, 4)), Leaf((1, 5)))),
    ("1d-input", linear, (Leaf((4,)), Leaf((2, 4)), Leaf((2,)))),
    ("1d-weight", linear, (Leaf((3, 4)), Leaf((4,)), Leaf(()))),
    ("1d-both", linear, (Leaf((4,)), Leaf((4,)), Leaf(()))),
    ("0d-bias", linear, (Leaf((3, 4)), Leaf((2, 4)), Leaf(()))),
    ("size-0-batch", linear, (Leaf((0, 4)), Leaf((2, 4)), Leaf((2,)))),
    ("size-0-features", linear, (Leaf((3, 0)), Leaf((2, 0)), Leaf((2,)))),
    ("transposed", linear, (T((3, 4)), T((5, 4)), S((5,)))),
    ("strided-3d", linear, (S((2, 3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("no-grad-input", linear, (const((2, 3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("no-grad-weight", linear, (Leaf((2, 3, 4)), const((5, 4)), Leaf((5,)))),
    ("no-grad-bias", linear, (Leaf((3, 4)), Leaf((5, 4)), const((5,)))),
)


def _linear(lib, *inputs):
    return lib.nn.functional.linear(*inputs)


add_torch_cases(
    "linear",
    ("2d-bias", _linear, (Leaf((3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("3d-no-bias", _linear, (Leaf((2, 3, 4)), Leaf((2, 4)))),
    ("4d-bias", _linear, (Leaf((2, 2, 3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("1d-input", _linear, (Leaf((4,)), Leaf((2, 4)), Leaf((2,)))),
    ("size-0-batch", _linear, (Leaf((0, 4)), Leaf((2, 4)), Leaf((2,)))),
    ("transposed", _linear, (T((3, 4)), T((5, 4)), S((5,)))),
)
