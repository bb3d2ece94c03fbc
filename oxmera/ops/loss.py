"""Loss ops with a fused VJP (binary_cross_entropy), and the reduction every loss shares.

``binary_cross_entropy`` is fused for a numerical reason: PyTorch clamps
its logs at -100 (so a probability of exactly 0 or 1 gives a finite loss)
and its input gradient ``(x - y) / max(x * (1 - x), 1e-12)``. Composed
from ``log`` and a clamp, the gradient at ``x = 0`` would be ``0 / 0``
(nan) where PyTorch's is finite.

The other losses compose exactly and stably from ops (``cross_entropy``
from the fused ``log_softmax``) and are defined in
:mod:`oxmera.nn.functional`.
"""
import warnings

import numpy as np

from oxmera._core import _kernels
from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops._utils import accumulation_dtype, narrow, widened
from oxmera.ops import activation as _activation
from oxmera.ops.elementwise import log, log1p, lt, where

__all__ = ["binary_cross_entropy"]

OpError = _core.OpError
Tensor = _core.Tensor

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce):
    # PyTorch's _Reduction.legacy_get_string: None means True for both.
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_reduction(reduction, size_average, reduce, opname, warn=True, stacklevel=3):
    """The reduction to apply: ``reduction``, or the one PyTorch's legacy flags name.

    A value other than 'none', 'mean', 'sum' is a ``ValueError`` naming it.
    ``stacklevel`` is the deprecation warning's, counted from this function.
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
        if warn:
            warnings.warn(f"{opname}(): size_average and reduce are deprecated, please use "
                          f"reduction='{reduction}' instead.", UserWarning, stacklevel=stacklevel)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{opname}(): reduction={reduction!r} is not a valid value; use "
                         f"'none', 'mean' or 'sum'")
    return reduction


def _reduce(loss, reduction):
    """Apply a checked ``reduction`` to an elementwise loss tensor."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _sum_over(loss, total):
    """``loss.sum() / total``: the mean of a weighted loss, ``total`` a number
    (a count) or the tensor of weights whose sum it is.

    Summed and divided in float32 for a float16 loss (as PyTorch's kernels
    accumulate): in float16 the sum of 70000 weights of 1 is inf, and so the
    mean would be 0 where it is 1.
    """
    def mean(wide):
        return wide.sum() / (total.to(wide.dtype).sum() if isinstance(total, Tensor) else total)
    return widened(loss, mean)


def _clamp_log(value):
    """``max(value, -100)``: PyTorch's clamp of a log, so log(0) gives -100, not -inf."""
    return where(lt(value, -100.0), -100.0, value)


_EPSILON = 1e-12    # PyTorch's floor for x * (1 - x) in the gradient


@op(inputs=3, promote=True, quiet=True)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy between probabilities ``input`` and ``target``.

    ``-weight * (y * log(x) + (1 - y) * log(1 - x))``, with each log clamped
    to at least -100 as in PyTorch; ``weight`` broadcasts to the input's
    shape. The gradient in ``input`` is ``(x - y) / max(x * (1 - x), 1e-12)``
    (times the weight), also as in PyTorch. ``target`` gets PyTorch's
    gradient ``log(1 - x) - log(x)`` (unclamped: +inf at ``x = 0``, -inf at
    ``x = 1``); ``weight`` gets one too (PyTorch has none).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.binary_cross_entropy(oxmera.tensor([0.5, 1.0]), oxmera.tensor([1.0, 0.0]),
    ...                        reduction="none")
    tensor([  0.6931, 100.    ], dtype=float32)
    """
    reduction = _check_reduction(reduction, size_average, reduce, "binary_cross_entropy",
                                 stacklevel=3)     # this forward, then the op's caller
    if np.shape(target) != np.shape(input):
        raise OpError(f"binary_cross_entropy(): target of shape {np.shape(target)} must have "
                      f"the input's shape {np.shape(input)}")
    if weight is not None:
        try:
            shape = np.broadcast_shapes(np.shape(input), np.shape(weight))
        except ValueError:
            shape = None
        if shape != np.shape(input):
            raise OpError(f"binary_cross_entropy(): weight of shape {np.shape(weight)} does not "
                          f"broadcast to the input's shape {np.shape(input)}")
    if np.any((input < 0) | (input > 1)):
        raise OpError(f"binary_cross_entropy(): all elements of input (shape "
                      f"{np.shape(input)}) should be between 0 and 1")
    log_x = np.maximum(np.log(input), -100)
    log_1mx = np.maximum(np.log1p(-input), -100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return np.asarray(loss)
    # Summed in float32 for float16, as every reduction.
    total = np.add.reduce(loss, axis=None, dtype=accumulation_dtype(loss.dtype))
    if reduction == "mean":
        total = total / loss.size if loss.size else np.nan
    return narrow(total, loss.dtype)


@binary_cross_entropy.vjp
def _(ctx, grad, input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    needs = ctx.needs_input_grad
    reduction = _check_reduction(reduction, size_average, reduce, "binary_cross_entropy",
                                 warn=False)
    # (the input's shape from the input itself: the VJP always reads it, and
    # ctx.input_shape(0) is there only when the input needs a gradient)
    shape = input.shape
    if reduction != "none":
        grad = grad.expand(shape)
    weighted = grad if weight is None else grad * weight
    grad_input = grad_target = grad_weight = None
    if needs[0]:
        variance = input * (1 - input)
        grad_input = weighted * (input - target) / where(lt(variance, _EPSILON), _EPSILON,
                                                         variance)
    if needs[1]:
        # PyTorch's binary_cross_entropy_target_backward: -logit(x), from the
        # unclamped logs (the clamp is the forward's, for a finite loss), so
        # +inf at x = 0 and -inf at x = 1, not +-100.
        grad_target = weighted * (log1p(-input) - log(input))
    if needs[2]:
        log_x, log_1mx = _clamp_log(log(input)), _clamp_log(log1p(-input))
        grad_weight = -grad * (target * log_x + (1 - target) * log_1mx)
    grads = grad_input, grad_target, grad_weight
    if reduction == "mean":
        # Divided last, as PyTorch does, and in float32 for float16 (where a
        # count past 65504 is inf).
        count = max(int(np.prod(shape)), 1)
        grads = tuple(None if g is None else widened(g, lambda wide: wide / count)
                      for g in grads)
    return grads


# -- the negative log likelihood of class indices ------------------------------------------
#
# nll_loss and cross_entropy with class-index targets, no class weights and
# no target ignored (every classifier's training step) are one op each way,
# named as PyTorch's (its node prints as NllLossBackward):
# composed, picking the targets took a where, two sums, a neg and a divide,
# five nodes whose dispatch cost more than the arithmetic on a batch of
# logits. Weighted or ignoring losses stay composed in nn.functional.

def _target_index(target, class_dim):
    """Where the targets sit in an input with ``class_dim``: an index for ``input[...]``
    ((N, C) and (C,) inputs, a fancy index: four times faster than NumPy's
    take/put_along_axis on a batch of logits) or, for (N, C, d1, ...), the
    targets with a unit class dim for take/put_along_axis (None then)."""
    target = np.asarray(target)
    if target.ndim == 0:
        return (target,)
    if target.ndim == 1 and class_dim == 1:
        return (np.arange(target.shape[0]), target)
    return None


def _pick(input, target, class_dim):
    picked = _kernels.take_targets(input, target) if class_dim == 1 else None
    if picked is not None:      # (N, C) float rows, int64 targets: one compiled loop
        return picked
    index = _target_index(target, class_dim)
    if index is not None:
        return input[index]
    along = np.expand_dims(np.asarray(target, dtype=np.intp), class_dim)
    return np.squeeze(np.take_along_axis(input, along, class_dim), class_dim)


def _place(out, target, class_dim, values):
    """``out`` with ``values`` (of the target's shape, or broadcast to it) at the targets."""
    index = _target_index(target, class_dim)
    if index is not None:
        out[index] = values
    else:
        values = np.broadcast_to(values, np.shape(target))
        np.put_along_axis(out, np.expand_dims(np.asarray(target, dtype=np.intp), class_dim),
                          np.expand_dims(values, class_dim), class_dim)
    return out


@op("nll_loss", inputs=2, save=("target",))
def nll_class_indices(input, target, class_dim, reduction):
    """``-input`` at each target class along ``class_dim``, reduced ('mean', 'sum' or
    'none'): the negative log likelihood of class-index targets, all counted, without
    class weights (the caller checked the targets' range and shape).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.loss import nll_class_indices
    >>> logp = oxmera.tensor([[-1.0, -2.0], [-3.0, -4.0]])
    >>> nll_class_indices(logp, oxmera.tensor([1, 0]), 1, "mean")
    tensor(2.5, dtype=float32)
    """
    loss = np.negative(_pick(input, target, class_dim))
    if reduction == "none":
        return loss
    # Summed (and divided) in float32 for float16, as PyTorch's kernel accumulates.
    total = np.add.reduce(loss, axis=None, dtype=accumulation_dtype(loss.dtype))
    if reduction == "mean":
        total = total / loss.size if loss.size else np.nan
    return narrow(total, loss.dtype)


@nll_class_indices.vjp
def _(ctx, grad, input, target, class_dim, reduction):
    return _nll_input_grad(grad, target, class_dim, reduction, ctx.input_shape(0)), None


def _nll_input_grad(grad, target, class_dim, reduction, shape):
    """nll_class_indices' gradient of its input of ``shape``, differentiable in ``grad``."""
    if reduction == "mean":
        count = target.numel()
        grad = widened(grad, lambda wide: wide / count) if count else grad * np.nan
    if reduction != "none":
        grad = grad.expand(tuple(target.shape))
    return nll_class_indices_backward(grad, target, class_dim, shape)


@op("nll_loss_backward", inputs=2, save=("target",))
def nll_class_indices_backward(grad, target, class_dim, shape):
    """The VJP of :func:`nll_class_indices` without its reduction: zeros of ``shape``
    with ``-grad`` at each target class along ``class_dim``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.loss import nll_class_indices_backward
    >>> nll_class_indices_backward(oxmera.tensor([1.0, 2.0]), oxmera.tensor([1, 0]), 1, (2, 2))
    tensor([[ 0., -1.],
            [-2.,  0.]], dtype=float32)
    """
    dtype = grad.dtype if isinstance(grad, np.ndarray) else np.result_type(grad)
    return _place(np.zeros(shape, dtype), target, class_dim, np.negative(grad))


@nll_class_indices_backward.vjp
def _(ctx, grad_of_grad, grad, target, class_dim, shape):
    # Linear in grad: its gradient picks grad_of_grad's target entries, negated.
    return nll_class_indices(grad_of_grad, target, class_dim, "none"), None


# cross_entropy with class-index targets, every one counted, no class weights
# and no label smoothing (every classifier's training step) is one op, as
# ATen's cross_entropy_loss names it: log_softmax and nll_loss composed ran
# two nodes whose backward made four op calls (a widened division, an
# expand, nll_loss_backward, log_softmax's fused VJP), each costing more in
# dispatch than its arithmetic on a batch of logits. The forward keeps what
# log_softmax's does (the exponentials and their row sums, see
# oxmera.ops.activation) and the logits (PyTorch keeps the log-probabilities:
# the same size), not the log-probabilities. Without recording, the VJP is
# nll_loss's gradient written into zeros and log_softmax's fused VJP over it,
# in NumPy (the same arithmetic as the two nodes, so the same bits); with
# create_graph it is the two ops' VJPs composed from the logits (log_softmax
# computed again, once), differentiable to any order.
def _cross_entropy_forward(input, target, class_dim, reduction):
    """``(loss, exps, sums)``: nll_loss of log_softmax(input) along ``class_dim``, and
    the exponentials and row sums log_softmax's VJP reads.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.loss import cross_entropy_class_indices
    >>> logits = oxmera.tensor([[0.0, 0.0], [0.0, 0.0]])
    >>> cross_entropy_class_indices(logits, oxmera.tensor([1, 0]), 1, "mean").output
    tensor(0.6931, dtype=float32)
    """
    logp, exps, sums = _activation._log_softmax_forward(input, class_dim)
    return nll_class_indices.__wrapped__(logp, target, class_dim, reduction), exps, sums


cross_entropy_class_indices = op(
    "cross_entropy_loss", inputs=2, save=("input", "target"), save_output=True, quiet=True,
    outputs=("output", "exps", "sums"), hidden=("exps", "sums"))(_cross_entropy_forward)


@cross_entropy_class_indices.vjp
def _(ctx, grads, input, target, class_dim, reduction):
    grad = grads[0]     # the hidden exps' and sums' gradients are None
    if _core.is_grad_enabled():
        logp = _activation.log_softmax(input, class_dim)
        nll_grad = _nll_input_grad(grad, target, class_dim, reduction, tuple(logp.shape))
        return _activation.log_softmax_backward(nll_grad, logp, class_dim), None
    _, exps, sums = ctx.output
    exps = exps._data
    g = grad._data
    if reduction == "mean":
        count = target._data.size
        g = narrow(np.divide(g, count, dtype=accumulation_dtype(g.dtype)), g.dtype) if count \
            else g * np.nan
    reuse = ctx._frees_saved
    if class_dim == 1 and _kernels.cross_entropy_rows_takes(g, target._data, exps, sums._data):
        # float32 (N, C) logits, int64 targets (every classifier's step): both
        # steps below in one compiled pass, the same arithmetic (oxmera/_core/_kernels.h)
        if reuse:
            exps.setflags(write=True)       # saved memory is locked read-only until freed
        return _kernels.cross_entropy_rows_backward(g, target._data, exps, sums._data,
                                                    reuse), None
    nll_grad = nll_class_indices_backward.__wrapped__(g, target._data, class_dim, exps.shape)
    return _activation.log_softmax_backward_exps.__wrapped__(
        nll_grad, exps, sums._data, class_dim, reuse_exps=reuse), None
