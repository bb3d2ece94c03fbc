"""Normalization ops with a fused VJP: ``layer_norm``'s.

``layer_norm`` is one op (``nn.functional.layer_norm`` checks its arguments
and calls it): composed from ``mean``, ``sub``, ``mul`` and ``rsqrt`` it was
ten ops and ten VJPs, some twenty full-size passes in the backward, in every
transformer block twice. Its forward keeps the per-row mean and reciprocal
standard deviation (two small arrays, one value per normalized row) as
hidden outputs, as PyTorch's ``native_layer_norm`` does; the VJP is written
with oxmera ops (so ``create_graph`` works): without recording it reads the
kept statistics, and when recording it computes them again from the input
with ops, so they are differentiated too. The statistics are declared
``hidden``: not differentiable, and their VJP gradients are None (no zero
arrays made in each backward).

``batch_norm`` is composed in :mod:`oxmera.nn.functional` from ``mean``,
``sub``, ``mul``, ``sqrt`` and ``div``.
"""
import numpy as np

from oxmera._core.autograd import is_grad_enabled
from oxmera.extend import op
from oxmera.ops._utils import accumulation_dtype, narrow
from oxmera.ops.elementwise import rsqrt

__all__ = []


def _layer_norm_forward(input, weight=None, bias=None, dims=1, eps=1e-5):
    """The op behind ``nn.functional.layer_norm`` over the last ``dims`` dims:
    ``(output, mean, rstd)``, the statistics in the computing dtype with the
    normalized dims kept (as size 1).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.normalization import _layer_norm
    >>> _layer_norm(oxmera.tensor([[1.0, 3.0]])).output
    tensor([[-1.,  1.]], dtype=float32)
    """
    # float16 is normalized in float32 and rounded once, as PyTorch does: the
    # squared deviations of values 1000 apart are inf in float16.
    wide = accumulation_dtype(input.dtype)
    x = input.astype(wide, copy=False)
    axes = tuple(range(x.ndim - dims, x.ndim))
    mean = np.mean(x, axis=axes, keepdims=True)
    out = np.subtract(x, mean)
    square = np.multiply(out, out)
    rstd = np.mean(square, axis=axes, keepdims=True)
    del square
    rstd += eps
    rstd = np.sqrt(rstd)
    rstd = np.reciprocal(rstd, out=rstd)
    out *= rstd
    if weight is not None:
        out *= weight
    if bias is not None:
        out += bias
    return narrow(out, input.dtype), np.asarray(mean), np.asarray(rstd)


_layer_norm = op("layer_norm", inputs=3, save=("input", "weight"), save_output=True,
                 quiet=True, outputs=("output", "mean", "rstd"),
                 hidden=("mean", "rstd"))(_layer_norm_forward)


@_layer_norm.vjp
def _(ctx, grads, input, weight=None, bias=None, dims=1, eps=1e-5):
    grad = grads[0]     # the hidden statistics' gradients are None (see the module doc)
    needs = ctx.needs_input_grad
    wide = accumulation_dtype(input.dtype)
    if wide != input.dtype:         # float16: in float32, as the forward
        input, grad = input.to(wide), grad.to(wide)
        weight = None if weight is None else weight.to(wide)
    axes = tuple(range(input.ndim - dims, input.ndim))
    if is_grad_enabled():
        mean = input.mean(axes, keepdim=True)
        centered = input - mean
        rstd = rsqrt((centered * centered).mean(axes, keepdim=True) + eps)
        normalized = centered * rstd
    else:
        _, mean, rstd = ctx.output
        normalized = (input - mean) * rstd
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        scaled = grad if weight is None else grad * weight
        grad_input = (scaled - scaled.mean(axes, keepdim=True)
                      - normalized * (scaled * normalized).mean(axes, keepdim=True)) * rstd
    batch = tuple(range(input.ndim - dims))
    if needs[1]:
        grad_weight = _sum_batch(grad * normalized, batch)
    if needs[2]:
        grad_bias = _sum_batch(grad, batch)
    return grad_input, grad_weight, grad_bias


def _sum_batch(value, batch):
    # sum(()) would reduce every dim (PyTorch's rule for an empty dim tuple)
    return value.sum(batch) if batch else value
