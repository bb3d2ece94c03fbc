"""Gradient cases and PyTorch comparisons of the model ops with fused VJPs.

``linear`` (``oxmera.ops.blas``) is the op behind ``nn.functional.linear``:
its cases cover batched (3-D) inputs, a 1-D input, a 1-D weight, size-0
batches, a bias broadcast from a smaller shape, no bias, inputs that need no
gradient and non-contiguous layouts, each checked to second order.
"""
import math

from oxmera.ops.blas import linear
from oxmera.ops.normalization import _layer_norm as _layer_norm_op

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


# -- gelu and its VJP ------------------------------------------------------------------------

def _gelu(approximate):
    from oxmera.nn.functional import gelu
    return lambda x: gelu(x, approximate=approximate)


def _gelu_backward(approximate):
    from oxmera.ops.activation import gelu_backward
    return lambda g, x, cdf: gelu_backward(g, x, cdf, approximate)


for _approximate in ("none", "tanh"):
    add_cases(
        "gelu",
        *[(f"{_approximate}-{label}", _gelu(_approximate), (spec,))
          for label, spec in (("0d", Leaf(())), ("5", Leaf((5,))), ("3x4", Leaf((3, 4))),
                              ("size-0", Leaf((0, 3))), ("2x1x3", Leaf((2, 1, 3))),
                              ("transposed", T((3, 4))), ("strided", S((2, 3))))],
    )
    add_cases(
        "gelu_backward",
        (f"{_approximate}-3x4", _gelu_backward(_approximate),
         (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4), "positive"))),
        (f"{_approximate}-0d", _gelu_backward(_approximate), (Leaf(()), Leaf(()), Leaf(()))),
        (f"{_approximate}-size-0", _gelu_backward(_approximate),
         (Leaf((0, 2)), Leaf((0, 2)), Leaf((0, 2)))),
        (f"{_approximate}-broadcast", _gelu_backward(_approximate),
         (Leaf((2, 3)), Leaf((3,)), Leaf((2, 1), "positive"))),
        (f"{_approximate}-layouts", _gelu_backward(_approximate),
         (T((3, 4)), S((3, 4)), Leaf((3, 4)))),
        (f"{_approximate}-no-grad-cdf", _gelu_backward(_approximate),
         (Leaf((2, 3)), Leaf((2, 3)), const((2, 3), "positive"))),
    )


def _lib_gelu(approximate):
    return lambda lib, x: lib.nn.functional.gelu(x, approximate=approximate)


def _lib_gelu_backward(approximate):
    """Torch's gelu VJP against gelu_backward given the CDF at the same point."""
    def fn(lib, g, x):
        if lib.__name__ == "torch":
            return lib.ops.aten.gelu_backward(g, x, approximate=approximate)
        # the CDF composed from ops, so that gradients reach x through it too, as in torch
        if approximate == "tanh":
            cdf = (lib.tanh((x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)) + 1) * 0.5
        else:
            cdf = (lib.erf(x * math.sqrt(0.5)) + 1) * 0.5
        return _gelu_backward(approximate)(g, x, cdf)
    return fn


for _approximate in ("none", "tanh"):
    add_torch_cases(
        "gelu",
        (f"{_approximate}-3x4", _lib_gelu(_approximate), (Leaf((3, 4)),)),
        (f"{_approximate}-0d", _lib_gelu(_approximate), (Leaf(()),)),
        (f"{_approximate}-size-0", _lib_gelu(_approximate), (Leaf((0, 3)),)),
        (f"{_approximate}-float32", lambda lib, x, a=_approximate:
         lib.nn.functional.gelu(x.float() * 4, approximate=a), (Leaf((3, 5)),),
         {"rtol": 1e-5, "atol": 1e-6}),
    )
    add_torch_cases(
        "gelu_backward",
        (f"{_approximate}-3x4", _lib_gelu_backward(_approximate), (Leaf((3, 4)), Leaf((3, 4)))),
    )


# -- layer_norm ------------------------------------------------------------------------------

def _layer_norm(shape, eps=1e-5):
    from oxmera.nn.functional import layer_norm
    return lambda x, *params: layer_norm(x, shape, *params, eps=eps)


add_cases(
    "layer_norm",
    ("3x4", _layer_norm((4,)), (Leaf((3, 4)),)),
    ("affine-2d-shape", _layer_norm((3, 4)), (Leaf((2, 3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
    ("weight-only", _layer_norm(5, 0.5), (Leaf((2, 5)), S((5,)))),
    ("bias-only", lambda x, b: _layer_norm((4,))(x, None, b), (Leaf((3, 4)), Leaf((4,)))),
    ("1d", _layer_norm((5,)), (Leaf((5,)), Leaf((5,)), Leaf((5,)))),
    ("size-0-batch", _layer_norm((3,)), (Leaf((0, 3)), Leaf((3,)), Leaf((3,)))),
    ("transposed", _layer_norm((3,)), (T((4, 3)), Leaf((3,)), Leaf((3,)))),
    ("strided", _layer_norm((3,)), (S((2, 3)),)),
    ("no-grad-input", _layer_norm((4,)), (const((3, 4)), Leaf((4,)), Leaf((4,)))),
    ("no-grad-params", _layer_norm((4,)), (Leaf((3, 4)), const((4,)), const((4,)))),
    # the op itself broadcasts its parameters (F.layer_norm wants normalized_shape's)
    ("op-0d-params", lambda x, w, b: _layer_norm_op(x, w, b, 1).output,
     (Leaf((2, 3)), Leaf(()), Leaf(()))),
)


def _lib_layer_norm(shape):
    def fn(lib, x, *params):
        return lib.nn.functional.layer_norm(x, shape, *params)
    return fn


add_torch_cases(
    "layer_norm",
    ("3x4", _lib_layer_norm((4,)), (Leaf((3, 4)), Leaf((4,)), Leaf((4,)))),
    ("2x3x4-over-3x4", _lib_layer_norm((3, 4)), (Leaf((2, 3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
    ("no-affine", _lib_layer_norm((4,)), (Leaf((2, 4)),)),
    ("size-0", _lib_layer_norm((3,)), (Leaf((0, 3)), Leaf((3,)), Leaf((3,)))),
    ("float32", lambda lib, x, w, b: lib.nn.functional.layer_norm(x.float() * 10, (5,), w.float(),
                                                                  b.float()),
     (Leaf((3, 5)), Leaf((5,)), Leaf((5,))), {"rtol": 1e-5, "atol": 1e-5}),
)
