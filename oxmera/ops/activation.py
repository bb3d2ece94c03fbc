"""Activation ops with a VJP of their own: softmax, log_softmax, softplus.

Each has a numerical reason not to be composed from elementwise ops:

- ``softmax``/``log_softmax`` subtract the row maximum before ``exp`` (the
  composition ``exp(x) / exp(x).sum()`` overflows for logits of magnitude
  1e4) and normalize in one pass, so float32 rows sum to 1; their VJPs
  reuse the output (``out * (g - sum(g * out))``, ``g - exp(out) * sum(g)``)
  instead of differentiating through the max and the log of a sum.
- ``softplus`` is ``log1p(exp(beta * x)) / beta``: composed, ``exp``
  overflows for large ``x`` and its VJP multiplies the zero gradient of the
  branch ``where`` did not pick by ``inf`` (giving nan); here the forward
  is ``logaddexp(0, beta * x)`` and the derivative ``sigmoid(beta * x)``,
  both finite everywhere.

Activations that compose exactly from elementwise ops (relu, leaky_relu,
elu, gelu, silu, ...) are defined in :mod:`oxmera.nn.functional`.
``softmax`` and ``log_softmax`` are also ``oxmera.softmax`` and Tensor
methods, as in PyTorch; ``softplus`` is only in ``oxmera.nn.functional``.
"""
import warnings

import numpy as np

from oxmera.extend import op
from oxmera.ops._utils import accumulation_dtype, narrow, normalize_dim
from oxmera.ops.creation import zeros_like
from oxmera.ops.elementwise import exp, gt, sigmoid, where

__all__ = ["softmax", "log_softmax"]


def _softmax_dim(dim, ndim, opname, stacklevel=None):
    """``dim`` normalized; None picks PyTorch's legacy implicit dim, with its warning."""
    if dim is None:
        dim = 0 if ndim in (0, 1, 3) else 1
        if stacklevel is not None:
            warnings.warn(f"Implicit dimension choice for {opname} has been deprecated. Change "
                          f"the call to include dim=X as an argument.", UserWarning,
                          stacklevel=stacklevel)
    return normalize_dim(dim, ndim, opname)


def _softmax_input(input, dtype, opname):
    """The input cast to ``dtype``, and the dtype to compute in: float32 for
    float16 (a row's sum of exps passes 65504 at 65505 equal logits)."""
    if dtype is not None:
        input = input.astype(dtype, copy=False)
    if input.dtype.kind != "f":
        raise TypeError(f"{opname}(): expected a floating point input (or dtype=), got dtype "
                        f"{input.dtype}")
    return input, accumulation_dtype(input.dtype)


def _shifted(input, d):
    """``input`` minus its maximum along ``d``: every entry <= 0, so exp cannot overflow.

    A row of -inf (or with +inf) gives nan, as in PyTorch.
    """
    return input - np.maximum.reduce(input, axis=d, keepdims=True)


@op(save=(), save_output=True, method=True, quiet=True)
def softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    """Softmax along ``dim``: ``exp(x) / exp(x).sum(dim)``, computed stably.

    The row maximum is subtracted first, so logits of any magnitude work and
    float32 rows sum to 1 (to rounding). ``dtype`` casts the input first (as
    in PyTorch; the gradient is cast back). ``dim=None`` picks PyTorch's
    deprecated implicit dim (0 for 0-, 1- and 3-d inputs, else 1) and warns.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.softmax(oxmera.tensor([[1.0, 1.0], [0.0, 1e4]]), dim=1)
    tensor([[0.5, 0.5],
            [0. , 1. ]], dtype=float32)
    """
    input, wide = _softmax_input(input, dtype, "softmax")
    d = _softmax_dim(dim, input.ndim, "softmax", _stacklevel + 1)
    if input.size == 0:
        return np.empty_like(input)
    if input.ndim == 0:
        return np.ones_like(input)
    e = np.exp(_shifted(input.astype(wide, copy=False), d))
    e /= np.add.reduce(e, axis=d, keepdims=True)
    return narrow(e, input.dtype)


@softmax.vjp
def _(ctx, grad, input, dim=None, dtype=None, *, _stacklevel=3):
    out = ctx.output
    d = _softmax_dim(dim, out.ndim, "softmax")
    if out.ndim == 0:
        return zeros_like(grad)     # a constant 1 (not grad * 0: nan where grad is inf)
    return softmax_backward(grad, out, d)


# The VJPs of softmax and log_softmax are ops of their own (as in PyTorch):
# composed, each is four or five passes over the array with a temporary per
# op; fused, NumPy works in place on one temporary (the speed reason, measured
# on bench/ softmax_rows). Their own VJPs are composed, so higher orders work.

@op(inputs=2, save=("grad", "output"), quiet=True)
def softmax_backward(grad, output, dim):
    """The VJP of softmax from its output: ``output * (grad - (grad * output).sum(dim))``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.activation import softmax_backward
    >>> softmax_backward(oxmera.tensor([1.0, 0.0]), oxmera.tensor([0.5, 0.5]), 0)
    tensor([ 0.25, -0.25], dtype=float32)
    """
    # float16 in float32, as the forward.
    wide = accumulation_dtype(np.result_type(grad, output))
    out = np.multiply(grad, output, dtype=wide)
    total = np.add.reduce(out, axis=dim, keepdims=True)
    np.subtract(grad, total, out=out)
    out *= output
    return narrow(out, np.result_type(grad, output))


@softmax_backward.vjp
def _(ctx, grad_of_grad, grad, output, dim):
    needs = ctx.needs_input_grad
    inner = (grad_of_grad * output).sum(dim, keepdim=True)
    grad_grad = output * grad_of_grad - output * inner if needs[0] else None
    grad_output = None
    if needs[1]:
        total = (grad * output).sum(dim, keepdim=True)
        grad_output = (grad_of_grad * (grad - total)
                       - grad * inner)
    return grad_grad, grad_output


@op(save=(), save_output=True, method=True, quiet=True)
def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    """Log of the softmax along ``dim``: ``x - logsumexp(x, dim)``, computed stably.

    Exact (no ``log`` of a rounded-to-zero probability) for logits of any
    magnitude: a logit 1e4 below the maximum gives -1e4, not -inf.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.log_softmax(oxmera.tensor([0.0, 1e4]), dim=0)
    tensor([-10000.,      0.], dtype=float32)
    """
    input, wide = _softmax_input(input, dtype, "log_softmax")
    d = _softmax_dim(dim, input.ndim, "log_softmax", _stacklevel + 1)
    if input.size == 0:
        return np.empty_like(input)
    if input.ndim == 0:
        return np.zeros_like(input)
    shifted = _shifted(input.astype(wide, copy=False), d)
    out = shifted - np.log(np.add.reduce(np.exp(shifted), axis=d, keepdims=True))
    return narrow(out, input.dtype)


@log_softmax.vjp
def _(ctx, grad, input, dim=None, dtype=None, *, _stacklevel=3):
    out = ctx.output
    d = _softmax_dim(dim, out.ndim, "log_softmax")
    if out.ndim == 0:
        return zeros_like(grad)
    return log_softmax_backward(grad, out, d)


@op(inputs=2, save=("grad", "output"), quiet=True)
def log_softmax_backward(grad, output, dim):
    """The VJP of log_softmax from its output: ``grad - exp(output) * grad.sum(dim)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.activation import log_softmax_backward
    >>> log_softmax_backward(oxmera.tensor([1.0, 0.0]), oxmera.tensor([-0.6931, -0.6931]), 0)
    tensor([ 0.5, -0.5], dtype=float32)
    """
    dtype = np.result_type(grad, output)
    # float16 in float32, as the forward.
    out = np.exp(output, dtype=accumulation_dtype(dtype))
    out *= np.add.reduce(grad, axis=dim, keepdims=True, dtype=out.dtype)
    np.subtract(grad, out, out=out)
    return narrow(out, dtype)


@log_softmax_backward.vjp
def _(ctx, grad_of_grad, grad, output, dim):
    needs = ctx.needs_input_grad
    softmax_ = exp(output)
    grad_grad = None
    if needs[0]:
        grad_grad = grad_of_grad - (grad_of_grad * softmax_).sum(dim, keepdim=True)
    grad_output = None
    if needs[1]:
        grad_output = -grad_of_grad * softmax_ * grad.sum(dim, keepdim=True)
    return grad_grad, grad_output


@op(save=("input",), float_only=True, quiet=True)
def softplus(input, beta=1, threshold=20):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    Computed as ``logaddexp(0, beta * x) / beta``, so it neither overflows
    for large ``x`` nor loses the tiny values for very negative ``x``; its
    gradient is ``sigmoid(beta * x)`` (1 above the threshold), as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.functional import softplus
    >>> softplus(oxmera.tensor([0.0, 100.0]))
    tensor([  0.6931, 100.    ], dtype=float32)
    """
    scaled = input * beta
    soft = np.logaddexp(0, scaled) / beta
    return np.where(scaled > threshold, input, soft).astype(input.dtype, copy=False)


@softplus.vjp
def _(ctx, grad, input, beta=1, threshold=20):
    scaled = input * beta
    return where(gt(scaled, threshold), grad, grad * sigmoid(scaled))
