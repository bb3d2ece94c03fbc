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

- ``gelu`` is one op for speed (both approximations): composed, it was six
  ops, and ``erf``, its one expensive pass, ran again in the backward; the
  op keeps the CDF it computed (see the comment at ``_gelu_forward``).

Activations that compose exactly from elementwise ops (leaky_relu, elu,
silu, ...) are defined in :mod:`oxmera.nn.functional`. ``softmax`` and
``log_softmax`` are also ``oxmera.softmax`` and Tensor methods, as in
PyTorch; ``softplus`` and ``gelu`` are only in ``oxmera.nn.functional``.
"""
import math
import warnings

import numpy as np

from oxmera._core import _kernels
from oxmera._core.autograd import is_grad_enabled
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import accumulation_dtype, narrow, normalize_dim
from oxmera.ops.creation import zeros_like
from oxmera.ops.elementwise import erf, erf_values, exp, gt, sigmoid, tanh, where

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


# float32 and float64 rows along the last dim (C-contiguous: every softmax of
# attention scores or logits) go to compiled kernels (oxmera/_core/_kernels.h):
# each row read and written while it stays in cache, exp by a branch-free
# formula that vectorizes (float32's evaluated in double and rounded once;
# NumPy's float64 exp is libm's scalar one without AVX-512), the VJPs in one
# pass over the row after its sum. NumPy's formulas make a full-size temporary
# per step and multiply by row-broadcast operands, about three times slower
# than by scalars. Other dtypes and layouts keep the formulas;
# _kernels.float_rows tells which arrays the kernels take.
def _rows_grad(grad, like):
    """Whether ``grad`` is an array of ``like``'s dtype and shape (any strides) for the kernels."""
    return (isinstance(grad, np.ndarray) and grad.dtype == like.dtype
            and grad.shape == like.shape)


@op(save=(), save_output=True, method=True, quiet=True, replay=True)
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
    if dtype is None and _kernels.float_rows(input, dim):
        return _kernels.softmax_rows(input)     # (attention's softmax: one test, the kernel)
    input, wide = _softmax_input(input, dtype, "softmax")
    d = _softmax_dim(dim, input.ndim, "softmax", _stacklevel)
    if input.size == 0:
        return np.empty_like(input)
    if input.ndim == 0:
        return np.ones_like(input)
    input_wide = input.astype(wide, copy=False)
    if _kernels.float_rows(input_wide, d):
        return narrow(_kernels.softmax_rows(input_wide), input.dtype)
    e = np.exp(_shifted(input_wide, d))
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
    if _kernels.float_rows(output, dim) and _rows_grad(grad, output):
        return _kernels.softmax_rows_backward(grad, output)
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


# log_softmax keeps the forward's exponentials and their row sums as hidden
# outputs, so its VJP without recording is ``g - e * (g.sum(dim) / se)``: no
# second ``exp`` (the most expensive pass of the backward). The memory trade:
# one more array of the input's size (in the computing dtype, float32 for
# float16) alive from the forward until backward frees the graph, as
# PyTorch's hand-written CPU kernel pays none (it computes exp again). The
# hidden outputs cost nothing in backward: the engine hands the VJP None for
# them (``hidden=``), not a zero-filled array of their size each time, which
# is what made this slower when first tried. With create_graph the VJP is
# log_softmax_backward of the output, whose own VJP is composed from ops, so
# higher orders differentiate through the output, never the hidden arrays.
def _log_softmax_forward(input, dim=None, dtype=None, *, _stacklevel=3):
    """The op behind ``log_softmax``: ``(output, exps, sums)``, ``exps`` the exponentials of
    the input minus its row maximum and ``sums`` their sums along ``dim`` (kept as size 1).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.activation import _log_softmax
    >>> _log_softmax(oxmera.tensor([0.0, 0.0]), 0).sums
    tensor([2.], dtype=float32)
    """
    if dtype is None and _kernels.float_rows(input, dim):
        return _kernels.log_softmax_rows(input)     # (a classifier's loss: as in softmax)
    input, wide = _softmax_input(input, dtype, "log_softmax")
    d = _softmax_dim(dim, input.ndim, "log_softmax", _stacklevel)
    if input.size == 0 or input.ndim == 0:
        # log_softmax of one value is 0; its VJP is zero and reads no hidden array
        out = np.empty_like(input) if input.size == 0 else np.zeros_like(input)
        rows = input.shape[:d] + (1,) + input.shape[d + 1:] if input.ndim else ()
        return out, np.empty(input.shape, wide), np.ones(rows, wide)
    input_wide = input.astype(wide, copy=False)
    if _kernels.float_rows(input_wide, d):
        out, exps, sums = _kernels.log_softmax_rows(input_wide)
        return narrow(out, input.dtype), exps, sums
    out = _shifted(input_wide, d)       # a fresh array, reused for out
    exps = np.exp(out)
    sums = np.add.reduce(exps, axis=d, keepdims=True)
    out -= np.log(sums)
    return narrow(out, input.dtype), exps, sums


_log_softmax = op("log_softmax", save=(), save_output=True, quiet=True,
                  outputs=("output", "exps", "sums"),
                  hidden=("exps", "sums"))(_log_softmax_forward)


@_log_softmax.vjp
def _(ctx, grads, input, dim=None, dtype=None, *, _stacklevel=3):
    grad = grads[0]     # the hidden exps' and sums' gradients are None
    out, exps, sums = ctx.output
    d = _softmax_dim(dim, out.ndim, "log_softmax")
    if out.ndim == 0:
        return zeros_like(grad)
    if not is_grad_enabled():
        # Without retain_graph the exps die with the graph right after this VJP:
        # the gradient is written over them (one full-size array less, and the
        # pass that fills it reads and writes the same memory), as by hand.
        return log_softmax_backward_exps(grad, exps, sums, d, reuse_exps=ctx._frees_saved)
    # create_graph: from the output, differentiable to any order
    return log_softmax_backward(grad, out, d)


def log_softmax(input, dim=None, dtype=None, *, _stacklevel=3):
    """Log of the softmax along ``dim``: ``x - logsumexp(x, dim)``, computed stably.

    Exact (no ``log`` of a rounded-to-zero probability) for logits of any
    magnitude: a logit 1e4 below the maximum gives -1e4, not -inf. ``dtype``
    casts the input first; ``dim=None`` picks PyTorch's deprecated implicit
    dim (as ``softmax``) and warns. One op with a fused VJP that reuses the
    forward's exponentials.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.log_softmax(oxmera.tensor([0.0, 1e4]), dim=0)
    tensor([-10000.,      0.], dtype=float32)
    """
    if dim is None:     # the warning points at the caller: one frame more than the op's
        return _log_softmax(input, dim, dtype, _stacklevel=_stacklevel + 1).output
    return _log_softmax(input, dim, dtype).output


_registry.add_tensor_attribute("log_softmax", log_softmax)


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
    out *= _row_sum(grad, dim, out.dtype)
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


@op(inputs=3, quiet=True)
def log_softmax_backward_exps(grad, exps, sums, dim, reuse_exps=False):
    """The VJP of log_softmax from the exponentials its forward kept:
    ``grad - exps * (grad.sum(dim) / sums)``, ``sums`` the sums of ``exps`` along ``dim``
    (kept as size 1), so ``exps / sums`` is the softmax.

    ``reuse_exps=True`` writes the result over ``exps`` when its dtype and
    shape allow: only for log_softmax's VJP, when the backward frees the
    exponentials right after it (``exps`` then reads the gradient).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.activation import log_softmax_backward_exps
    >>> log_softmax_backward_exps(oxmera.tensor([1.0, 0.0]), oxmera.tensor([3.0, 3.0]),
    ...                           oxmera.tensor([6.0]), 0)
    tensor([ 0.5, -0.5], dtype=float32)
    """
    dtype = grad.dtype if grad.dtype == exps.dtype == sums.dtype else np.result_type(
        grad, exps, sums)       # (np.result_type dispatches through Python: ~0.4 us)
    if (_kernels.float_rows(exps, dim) and _rows_grad(grad, exps) and sums.dtype == exps.dtype
            and sums.shape == exps.shape[:-1] + (1,)):
        if reuse_exps:
            exps.setflags(write=True)       # saved memory is locked read-only until freed
            return _kernels.log_softmax_rows_backward(grad, exps, sums, out=exps)
        return _kernels.log_softmax_rows_backward(grad, exps, sums)
    wide = accumulation_dtype(dtype)        # float16 in float32, as the forward
    scale = _row_sum(grad, dim, wide)       # a fresh (..., 1, ...) array
    np.divide(scale, sums, out=scale, casting="unsafe")
    if reuse_exps and exps.dtype == wide and exps.shape == np.broadcast_shapes(
            np.shape(grad), exps.shape, np.shape(sums)):
        exps.setflags(write=True)           # saved memory is locked read-only until freed
        out = np.multiply(exps, scale, out=exps)
    else:
        out = np.multiply(exps, scale, dtype=wide)
    np.subtract(grad, out, out=out, casting="unsafe")
    return narrow(out, dtype)


@log_softmax_backward_exps.vjp
def _(ctx, grad_of_grad, grad, exps, sums, dim, reuse_exps=False):
    needs = ctx.needs_input_grad
    # f = g - e * (S(g) / s), S the sum along dim (kept)
    weighted = (grad_of_grad * exps).sum(dim, keepdim=True)
    grad_grad = grad_of_grad - weighted / sums if needs[0] else None
    scale = grad.sum(dim, keepdim=True) / sums if needs[1] or needs[2] else None
    grad_exps = -grad_of_grad * scale if needs[1] else None
    grad_sums = weighted * scale / sums if needs[2] else None
    return grad_grad, grad_exps, grad_sums


def _row_sum(grad, dim, dtype):
    """``grad.sum(dim, keepdims=True)``; one slice times the length where ``grad`` is
    broadcast along ``dim`` (the seed of ``mean`` or ``sum``: a stride-0 view)."""
    if grad.ndim and grad.strides[dim] == 0:
        first = grad[(slice(None),) * dim + (slice(0, 1),)]
        return np.multiply(first, grad.shape[dim], dtype=dtype)
    return np.add.reduce(grad, axis=dim, keepdims=True, dtype=dtype)


# -- gelu --------------------------------------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_CUBIC = 0.044715
_GELU_APPROXIMATIONS = ("none", "tanh")


# gelu is one op, not the composition x * (erf(x / sqrt 2) + 1) / 2: that
# was six ops and as many VJPs, and erf (the one expensive pass: about four
# times tanh's cost on float32) ran again in the backward, through erf's VJP.
# The op keeps the Gaussian CDF its forward computed as a second output no
# caller sees (one more array of the input's size alive until backward, the
# memory paid for not evaluating erf twice); its VJP reads it only when it
# records nothing, and otherwise differentiates the composed derivative. The
# cdf is declared hidden: it is not differentiable and the engine hands the
# VJP None for it, not a zero array of its size each backward.
def _gelu_forward(input, approximate="none"):
    """The op behind ``nn.functional.gelu``: ``(x * cdf, cdf)``, ``cdf`` the Gaussian CDF
    at ``x`` (``approximate='none'``) or its tanh approximation.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.activation import _gelu
    >>> _gelu(oxmera.tensor([0.0, 1.0])).output
    tensor([0.    , 0.8413], dtype=float32)
    """
    if approximate == "none" and input.dtype == np.float32:
        return _kernels.gelu(input)     # the formula below in one compiled pass
    wide = accumulation_dtype(input.dtype)
    x = input.astype(wide, copy=False)
    if approximate == "tanh":
        cdf = x * x
        cdf *= _GELU_CUBIC
        cdf += 1
        cdf *= x
        cdf *= _SQRT_2_OVER_PI
        cdf = np.tanh(cdf)
    else:
        cdf = erf_values(x * _SQRT_HALF)
    cdf += 1
    cdf *= 0.5
    # the cdf stays in the wide dtype (float32 for float16): the backward's precision
    return narrow(x * cdf, input.dtype), np.asarray(cdf)


_gelu = op("gelu", save=("input",), save_output=True, float_only=True, quiet=True,
           outputs=("output", "cdf"), hidden=("cdf",))(_gelu_forward)


@_gelu.vjp
def _(ctx, grads, input, approximate="none"):
    grad = grads[0]     # grads[1], the hidden cdf's, is None (see above)
    if not is_grad_enabled():
        return gelu_backward(grad, input, ctx.output[1], approximate)
    # create_graph: the derivative composed from ops, differentiable to any order
    if approximate == "tanh":
        t = tanh((input + input * input * input * _GELU_CUBIC) * _SQRT_2_OVER_PI)
        slope = (1 - t * t) * (input * input * (3 * _GELU_CUBIC) + 1) * _SQRT_2_OVER_PI
        return grad * ((t + 1) * 0.5 + input * slope * 0.5)
    cdf = (erf(input * _SQRT_HALF) + 1) * 0.5
    pdf = exp(input * input * -0.5) * _INV_SQRT_2PI
    return grad * (cdf + input * pdf)


def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)``, or its tanh approximation.

    ``approximate='none'``: ``0.5 * x * (1 + erf(x / sqrt(2)))``;
    ``'tanh'``: ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))``.
    One op with a fused VJP (``nn.functional.gelu`` is this function).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.gelu(oxmera.tensor([0.0, 1.0]))
    tensor([0.    , 0.8413], dtype=float32)
    >>> F.gelu(oxmera.tensor([1.0]), approximate="tanh")
    tensor([0.8412], dtype=float32)
    """
    if approximate not in _GELU_APPROXIMATIONS:
        raise ValueError(f"gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")
    return _gelu(input, approximate).output


@op(inputs=3, quiet=True)
def gelu_backward(grad, input, cdf, approximate="none"):
    """The VJP of gelu given the CDF its forward kept: ``grad * (cdf + x * cdf'(x))``.

    ``cdf`` is the Gaussian CDF at ``input`` (``approximate='none'``: its
    derivative is the density ``exp(-x**2 / 2) / sqrt(2 pi)``) or the tanh
    approximation ``(1 + t) / 2`` (derivative ``2 cdf (1 - cdf) sqrt(2 / pi)
    (1 + 3 * 0.044715 x**2)``). All three are inputs: its own VJP treats
    ``cdf`` as independent of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.activation import gelu_backward
    >>> gelu_backward(oxmera.tensor([1.0]), oxmera.tensor([0.0]), oxmera.tensor([0.5]))
    tensor([0.5], dtype=float32)
    """
    dtype = np.result_type(grad, input, cdf)
    wide = accumulation_dtype(dtype)
    if not np.shape(grad) == np.shape(input) == np.shape(cdf):
        grad, input, cdf = np.broadcast_arrays(grad, input, cdf)   # the in-place steps below
    if approximate == "none" and all(np.result_type(a) == np.float32 for a in (grad, input, cdf)):
        # one compiled pass (in double) instead of the eight NumPy passes below
        return _kernels.gelu_backward(grad, input, cdf)
    x = np.asarray(input, wide)
    if approximate == "tanh":
        slope = np.multiply(x, x, dtype=wide)
        slope *= 3 * _GELU_CUBIC
        slope += 1
        slope *= (1 - cdf) * cdf
        slope *= 2 * _SQRT_2_OVER_PI
    else:
        slope = np.multiply(x, x, dtype=wide)
        slope *= -0.5
        slope = np.exp(slope)
        slope *= _INV_SQRT_2PI
    slope *= x
    slope += cdf
    slope *= grad
    return narrow(slope, dtype)


@gelu_backward.vjp
def _(ctx, grad_of_grad, grad, input, cdf, approximate="none"):
    needs = ctx.needs_input_grad
    x = input
    if approximate == "tanh":
        scale = (1 - cdf) * cdf * (2 * _SQRT_2_OVER_PI)
        cubic = x * x * (3 * _GELU_CUBIC) + 1
        d_grad = cdf + x * cubic * scale if needs[0] else None
        d_input = grad * scale * (x * x * (9 * _GELU_CUBIC) + 1) if needs[1] else None
        d_cdf = (grad * (x * cubic * ((1 - cdf * 2) * (2 * _SQRT_2_OVER_PI)) + 1)
                 if needs[2] else None)
    else:
        pdf = exp(x * x * -0.5) * _INV_SQRT_2PI
        d_grad = cdf + x * pdf if needs[0] else None
        d_input = grad * pdf * (1 - x * x) if needs[1] else None
        d_cdf = grad if needs[2] else None
    return tuple(None if d is None else grad_of_grad * d for d in (d_grad, d_input, d_cdf))


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
