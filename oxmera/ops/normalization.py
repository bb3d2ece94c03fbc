"""Normalization ops with a fused VJP: ``layer_norm``'s.

``layer_norm`` is one op (``nn.functional.layer_norm`` checks its arguments
and calls it): composed from ``mean``, ``sub``, ``mul`` and ``rsqrt`` it was
ten ops and ten VJPs, some twenty full-size passes in the backward, in every
transformer block twice. Its forward keeps the per-row mean and reciprocal
standard deviation (two small arrays, one value per normalized row) as
hidden outputs, as PyTorch's ``native_layer_norm`` does; the VJP is written
with oxmera ops (so ``create_graph`` works): without recording it is one op,
``layer_norm_backward``, from the kept statistics (as PyTorch's
``native_layer_norm_backward``), and when recording it computes them again
from the input with ops, so they are differentiated too. The statistics are
declared ``hidden``: not differentiable, and their VJP gradients are None (no
zero arrays made in each backward). For float32 the forward and
``layer_norm_backward`` run compiled loops over the rows
(``oxmera/_core/_kernels.h``, statistics in double).

``batch_norm`` is composed in :mod:`oxmera.nn.functional` from ``mean``,
``sub``, ``mul``, ``sqrt`` and ``div``.
"""
import math

import numpy as np

from oxmera._core import _kernels
from oxmera._core.autograd import is_grad_enabled
from oxmera.extend import op
from oxmera.ops._utils import accumulation_dtype, narrow
from oxmera.ops.elementwise import rsqrt

__all__ = []


def _kernel_takes(input, dims, *params):
    """Whether the compiled float32 kernels (oxmera/_core/_kernels.h) apply: a
    float32 input with elements, every parameter None or a float32 array of
    the normalized shape (the op itself also broadcasts smaller ones)."""
    normalized = input.shape[input.ndim - dims:]
    return (input.dtype == np.float32 and input.size > 0
            and all(p is None or (np.result_type(p) == np.float32 and np.shape(p) == normalized)
                    for p in params))


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
    if _kernel_takes(input, dims, weight, bias):
        # one pass a row in C (statistics in double) instead of ten NumPy passes
        n = math.prod(input.shape[input.ndim - dims:])
        out, mean, rstd = _kernels.layer_norm(input, weight, bias, n, eps)
        kept = input.shape[:input.ndim - dims] + (1,) * dims
        return out, mean.reshape(kept), rstd.reshape(kept)
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
    if not is_grad_enabled():
        # nothing records: one op from the kept statistics
        _, mean, rstd = ctx.output
        grads = layer_norm_backward(grad, input, weight, mean, rstd, dims)
        return tuple(g if need else None for g, need in zip(grads, needs))
    axes = tuple(range(input.ndim - dims, input.ndim))
    mean = input.mean(axes, keepdim=True)
    centered = input - mean
    rstd = rsqrt((centered * centered).mean(axes, keepdim=True) + eps)
    return _layer_norm_grads(grad, centered * rstd, weight, rstd, dims, needs)


def _layer_norm_grads(grad, normalized, weight, rstd, dims, needs):
    """layer_norm's gradients from the normalized input (Tensors or arrays alike)."""
    axes = tuple(range(normalized.ndim - dims, normalized.ndim))
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        scaled = grad if weight is None else grad * weight
        grad_input = (scaled - _row_mean(scaled, axes)
                      - normalized * _row_mean(scaled * normalized, axes)) * rstd
    batch = tuple(range(normalized.ndim - dims))
    if needs[1]:
        grad_weight = _sum_batch(grad * normalized, batch)
    if needs[2]:
        grad_bias = _sum_batch(grad, batch)
    return grad_input, grad_weight, grad_bias


def _row_mean(value, axes):
    # (Tensor.mean takes keepdim=, ndarray.mean keepdims=)
    if isinstance(value, np.ndarray):
        return value.mean(axes, keepdims=True)
    return value.mean(axes, keepdim=True)


@op(inputs=5, quiet=True, outputs=("grad_input", "grad_weight", "grad_bias"))
def layer_norm_backward(grad, input, weight, mean, rstd, dims=1):
    """The VJP of layer_norm from the statistics its forward kept (the engine's
    path when nothing records): ``(grad_input, grad_weight, grad_bias)``, the
    last two over the normalized shape (``weight`` None: the gradient a unit
    weight would get). Its own VJP treats ``mean`` and ``rstd`` as inputs
    independent of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.normalization import layer_norm_backward
    >>> x = oxmera.tensor([[0.0, 1.0, 5.0]])
    >>> mean, rstd = oxmera.tensor([[2.0]]), oxmera.tensor([[0.5]])
    >>> layer_norm_backward(oxmera.tensor([[1.0, 0.0, 0.0]]), x, None, mean, rstd).grad_input
    tensor([[ 0.1667, -0.25  ,  0.0833]], dtype=float32)
    """
    if _kernel_takes(input, dims, weight) and np.result_type(grad, mean, rstd) == np.float32:
        n = math.prod(input.shape[input.ndim - dims:])
        grad_input, grad_weight, grad_bias = _kernels.layer_norm_backward(
            np.broadcast_to(grad, input.shape), input, weight, mean, rstd, n)
        normalized = input.shape[input.ndim - dims:]
        return grad_input, grad_weight.reshape(normalized), grad_bias.reshape(normalized)
    grad = np.broadcast_to(grad, input.shape)
    return _layer_norm_grads(grad, (input - mean) * rstd, weight, rstd, dims, (True,) * 3)


@layer_norm_backward.vjp
def _(ctx, grads, grad, input, weight, mean, rstd, dims=1):
    # the derivative of grad_input = (gs - m(gs) - xhat * m(gs * xhat)) * rstd,
    # gs = grad * weight, xhat = (input - mean) * rstd, m the row mean, and of
    # grad_weight = sum(grad * xhat) and grad_bias = sum(grad) over the batch
    cot_input, cot_weight, cot_bias = grads
    needs = ctx.needs_input_grad
    axes = tuple(range(input.ndim - dims, input.ndim))
    batch = tuple(range(input.ndim - dims))
    centered = input - mean
    xhat = centered * rstd
    scaled = grad if weight is None else grad * weight
    scaled_xhat = (scaled * xhat).mean(axes, keepdim=True)
    cot_scaled_input = cot_input * rstd
    cot_mean_xhat = (cot_scaled_input * xhat).mean(axes, keepdim=True)
    # through gs, and through xhat
    cot_scaled = cot_scaled_input - cot_scaled_input.mean(axes, keepdim=True) - xhat * cot_mean_xhat
    cot_xhat = cot_weight * grad - cot_scaled_input * scaled_xhat - scaled * cot_mean_xhat
    cot_xhat_input = cot_xhat * rstd
    d_grad = d_input = d_weight = d_mean = d_rstd = None
    if needs[0]:
        through_scaled = cot_scaled if weight is None else cot_scaled * weight
        d_grad = through_scaled + cot_weight * xhat + cot_bias
    if needs[1]:
        d_input = cot_xhat_input
    if needs[2]:
        d_weight = _sum_batch(cot_scaled * grad, batch)
    if needs[3]:
        d_mean = -cot_xhat_input.sum(axes, keepdim=True)
    if needs[4]:
        d_rstd = ((cot_input * (scaled - scaled.mean(axes, keepdim=True) - xhat * scaled_xhat))
                  .sum(axes, keepdim=True) + (cot_xhat * centered).sum(axes, keepdim=True))
    return d_grad, d_input, d_weight, d_mean, d_rstd


def _sum_batch(value, batch):
    # sum(()) would reduce every dim (PyTorch's rule for an empty dim tuple)
    return value.sum(batch) if batch else value
