"""Gradient cases and PyTorch comparisons of layer_norm_backward (oxmera.ops.normalization).

The op is layer_norm's VJP when nothing records (a compiled kernel for
float32, NumPy otherwise: the float64 cases here check the NumPy path and
the op's own VJP, which treats the kept ``mean`` and ``rstd`` as inputs).
``rstd`` is drawn positive, as a reciprocal standard deviation is.
"""
from oxmera.ops.normalization import layer_norm_backward

from ._case_table import S, T, Leaf, add_cases, add_torch_cases, const


def _backward(dims=1, weighted=True):
    def fn(grad, x, *rest):
        weight, (mean, rstd) = (rest[0], rest[1:]) if weighted else (None, rest)
        return tuple(layer_norm_backward(grad, x, weight, mean, rstd, dims))
    return fn


add_cases(
    "layer_norm_backward",
    ("3x4", _backward(), (Leaf((3, 4)), Leaf((3, 4)), Leaf((4,)), Leaf((3, 1)),
                          Leaf((3, 1), "positive"))),
    ("2x3x4-over-3x4", _backward(dims=2),
     (Leaf((2, 3, 4)), Leaf((2, 3, 4)), Leaf((3, 4)), Leaf((2, 1, 1)),
      Leaf((2, 1, 1), "positive"))),
    ("no-weight", _backward(weighted=False),
     (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 1)), Leaf((3, 1), "positive"))),
    ("0d-weight", _backward(), (Leaf((2, 3)), Leaf((2, 3)), Leaf(()), Leaf((2, 1)),
                                Leaf((2, 1), "positive"))),
    ("size-0-batch", _backward(), (Leaf((0, 3)), Leaf((0, 3)), Leaf((3,)), Leaf((0, 1)),
                                   Leaf((0, 1), "positive"))),
    ("layouts", _backward(), (T((4, 3)), S((4, 3)), Leaf((3,)), Leaf((4, 1)),
                              Leaf((4, 1), "positive"))),
    ("no-grad-statistics", _backward(), (Leaf((3, 4)), Leaf((3, 4)), Leaf((4,)),
                                         const((3, 1)), const((3, 1), "positive"))),
)


def _lib_backward(dims=1):
    """Torch's native_layer_norm_backward against the op, from the statistics
    each library's own layer_norm forward kept (so only grad, input and weight
    vary)."""
    def fn(lib, grad, x, weight):
        shape = tuple(x.shape[x.dim() - dims:])
        if lib.__name__ == "torch":
            _, mean, rstd = lib.ops.aten.native_layer_norm(x.detach(), shape, weight.detach(),
                                                           None, 1e-5)
            return lib.ops.aten.native_layer_norm_backward(grad, x, shape, mean, rstd, weight,
                                                           weight, [True, True, True])
        from oxmera.ops.normalization import _layer_norm
        _, mean, rstd = _layer_norm(x.detach(), weight.detach(), None, dims, 1e-5)
        return tuple(layer_norm_backward(grad, x, weight, mean, rstd, dims))
    return fn


add_torch_cases(
    "layer_norm_backward",
    ("3x4", _lib_backward(), (Leaf((3, 4)), Leaf((3, 4)), Leaf((4,))), {"grad": False}),
    ("2x3x4-over-3x4", _lib_backward(2), (Leaf((2, 3, 4)), Leaf((2, 3, 4)), Leaf((3, 4))),
     {"grad": False}),
)
