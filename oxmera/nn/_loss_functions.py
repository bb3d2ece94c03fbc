"""The rest of ``torch.nn.functional``'s losses: divergences and likelihoods (kl_div,
poisson_nll_loss, gaussian_nll_loss, huber_loss), margin and embedding losses
(cosine_embedding_loss, margin_ranking_loss, hinge_embedding_loss,
soft_margin_loss, multilabel_soft_margin_loss, multilabel_margin_loss,
multi_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)
and the connectionist temporal classification loss (ctc_loss).

Each is composed from recorded ops, exactly as PyTorch's ATen or Python
definition writes it, so gradients to any order come from the ops' VJPs.
Integer targets and the masks built from them are NumPy constants. A
float16 input is computed in float32 and the result rounded once, as
PyTorch's kernels accumulate.

``ctc_loss`` runs the forward (alpha) recursion of Graves et al. (2006) in
log space, one vectorized step per time frame over the batch and the
extended label sequence, with ``logsumexp``. Its gradient is the true
derivative of the loss in ``log_probs``. PyTorch's own backward adds
``exp(log_probs)`` to it (for frames within the input length), which
assumes ``log_probs`` comes from ``log_softmax``: through ``log_softmax``
the two gradients are equal, and that is how they are compared in the tests.
A target label equal to ``blank`` is a label, as in PyTorch (equal losses);
there PyTorch's gradient is not its loss's derivative (it disagrees with
finite differences), ours is.
"""
import math
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.nn._function_utils import as_input
from oxmera.nn._more_functions import pairwise_distance
from oxmera.ops import creation as _creation
from oxmera.ops._utils import accumulation_dtype
from oxmera.ops.activation import softplus
from oxmera.ops.elementwise import clamp, exp, log, maximum, minimum, sqrt, where
from oxmera.ops.pointwise import xlogy
from oxmera.ops.loss import _check_reduction, _reduce
from oxmera.ops.reduce import logsumexp
from oxmera.ops.reduce import sum as _sum
from oxmera.ops.shape import cat, stack

__all__ = ["kl_div", "poisson_nll_loss", "gaussian_nll_loss", "huber_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
           "multi_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "ctc_loss"]

OpError = _core.OpError
Tensor = _core.Tensor


# -- shared pieces ------------------------------------------------------------------------------

def _float(value, opname, what="input"):
    value = as_input(value, opname, what)
    if value.dtype.kind != "f":
        raise TypeError(f"{opname}(): expected a floating point {what}, got dtype {value.dtype}")
    return value


def _wide(*tensors):
    """The tensors (None passes) in the first one's accumulation dtype (float32 for
    float16), and the dtype to round the result back to."""
    dtype = tensors[0].dtype
    wide = accumulation_dtype(dtype)
    if wide == dtype:
        return tensors, dtype
    return tuple(t.to(wide) if isinstance(t, Tensor) and t.dtype.kind == "f"
                 and t.dtype.itemsize < wide.itemsize else t for t in tensors), dtype


def _broadcast(opname, *named):
    """The broadcast shape of ``(name, tensor)`` pairs, or PyTorch's RuntimeError naming them."""
    try:
        return np.broadcast_shapes(*(tuple(t.shape) for _, t in named))
    except ValueError:
        shapes = ", ".join(f"{name} of shape {tuple(t.shape)}" for name, t in named)
        raise RuntimeError(f"{opname}(): {shapes} do not broadcast") from None


def _finish(loss, reduction, dtype):
    return _reduce(loss, reduction).to(dtype)


def _softplus(x):
    # log(1 + exp(x)) exactly, for any x (the infinite threshold: no linear shortcut).
    return softplus(x, 1, math.inf)


def _constant(array):
    # a copy: contiguous (broadcast views are not) and 0-d kept 0-d
    return _core._wrap(np.array(array))


# -- divergences and likelihoods ----------------------------------------------------------------

def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """The Kullback-Leibler divergence ``target * (log(target) - input)``, ``input``
    holding log-probabilities.

    With ``log_target=True`` the target holds log-probabilities too:
    ``exp(target) * (target - input)``. A zero target contributes 0 (``xlogy``).
    ``reduction='batchmean'`` divides the sum by the batch size (dim 0), the
    divergence's definition; ``'mean'`` (the default, kept for PyTorch's
    compatibility) divides by the number of elements.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> logq = oxmera.tensor([[0.5, 0.5], [0.9, 0.1]]).log()
    >>> p = oxmera.tensor([[0.5, 0.5], [0.5, 0.5]])
    >>> F.kl_div(logq, p, reduction="batchmean")
    tensor(0.2554, dtype=float32)
    """
    opname = "kl_div"
    if size_average is None and reduce is None and reduction == "mean":
        # PyTorch's warning, word for word: programs that filter it still do
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    if size_average is None and reduce is None and reduction == "batchmean":
        batchmean, reduction = True, "sum"
    else:
        batchmean = False
        reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input, target = _float(input, opname), _float(target, opname, "target")
    _broadcast(opname, ("input", input), ("target", target))
    (input, target), dtype = _wide(input, target)
    if log_target:
        loss = exp(target) * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    out = _reduce(loss, reduction)
    if batchmean and input.ndim != 0:
        out = out / input.shape[0]
    return out.to(dtype)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Negative log likelihood of a Poisson-distributed ``target`` with rate ``input``.

    ``exp(input) - target * input`` when ``log_input`` (the input is the log of
    the rate), else ``input - target * log(input + eps)``. ``full`` adds
    Stirling's approximation of ``log(target!)``,
    ``target * log(target) - target + 0.5 * log(2 * pi * target)``, where
    ``target > 1`` (0 elsewhere).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.poisson_nll_loss(oxmera.tensor([0.0, 1.0]), oxmera.tensor([1.0, 2.0]),
    ...                    reduction="none")
    tensor([1.    , 0.7183], dtype=float32)
    """
    opname = "poisson_nll_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input, target = _float(input, opname), _float(target, opname, "target")
    _broadcast(opname, ("input", input), ("target", target))
    (input, target), dtype = _wide(input, target)
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        above = target.detach() > 1
        # The term on a safe target where it is masked: log(0) there would give
        # the masked entries a nan gradient (0 * inf).
        safe = where(above, target, 2.0)
        stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
        loss = loss + where(above, stirling, 0.0)
    return _finish(loss, reduction, dtype)


def _gaussian_var(input, var, opname):
    """``var`` checked and shaped to broadcast against ``input``, as PyTorch's rules."""
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return _creation.full(tuple(input.shape), float(var), dtype=input.dtype)
    var = _float(var, opname, "var")
    if bool((var.detach() < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape == input.shape:
        return var
    if tuple(input.shape[:-1]) == tuple(var.shape):
        # homoscedastic: one variance per sample, over the last dim
        return var.unsqueeze(-1)
    if var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        # one dim of size 1 where the input has more: broadcast along it
        return var
    raise ValueError(f"var is of incorrect size: {opname}() takes a var of the input's shape "
                     f"{tuple(input.shape)}, or that shape without its last dim or with one "
                     f"dim of size 1; got {tuple(var.shape)}")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log likelihood of ``target`` under Gaussians of mean ``input`` and
    variance ``var``: ``0.5 * (log(var) + (input - target) ** 2 / var)``.

    ``var`` has the input's shape, or that shape without the last dim (one
    variance per sample), or with one dim of size 1, or is a float; it must
    not be negative. It is clamped to at least ``eps`` for the value only,
    the gradient passing through the clamp unchanged (PyTorch clamps in
    place under ``no_grad``). ``full`` adds ``0.5 * log(2 * pi)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.gaussian_nll_loss(oxmera.tensor([0.0, 1.0]), oxmera.tensor([1.0, 1.0]),
    ...                     oxmera.tensor([1.0, 4.0]), reduction="none")
    tensor([0.5   , 0.6931], dtype=float32)
    """
    opname = "gaussian_nll_loss"
    input, target = _float(input, opname), _float(target, opname, "target")
    var = _gaussian_var(input, var, opname)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid: {opname}() takes reduction 'none', "
                         f"'mean' or 'sum'")
    _broadcast(opname, ("input", input), ("target", target), ("var", var))
    (input, target, var), dtype = _wide(input, target, var)
    held = var.detach()
    var = var + (clamp(held, min=eps) - held)
    loss = 0.5 * (log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _finish(loss, reduction, dtype)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``,
    with ``d = input - target``.

    With ``weight`` (the input's shape) each loss is weighted, and ``'mean'``
    is the mean of the weighted losses, as PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.huber_loss(oxmera.tensor([1.0, 5.0]), oxmera.tensor([0.0, 0.0]), delta=2.0)
    tensor(4.25, dtype=float32)
    """
    opname = "huber_loss"
    reduction = _check_reduction(reduction, None, None, opname)
    if not delta > 0:
        raise RuntimeError(f"{opname}(): delta must be positive, got {delta}")
    input, target = _float(input, opname), _float(target, opname, "target")
    _broadcast(opname, ("input", input), ("target", target))
    if target.shape != input.shape:
        warnings.warn(f"{opname}(): using a target size {tuple(target.shape)} that is "
                      f"different to the input size {tuple(input.shape)}. This will likely "
                      f"lead to incorrect results due to broadcasting. Please ensure they have "
                      f"the same size.", UserWarning, stacklevel=2)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ValueError(f"{opname}(): weights and input must have the same size: weight of "
                         f"shape {tuple(weight.shape)}, input of shape {tuple(input.shape)}")
    (input, target, weight), dtype = _wide(input, target, weight)
    d = input - target
    distance = d.abs()
    loss = where(distance < delta, 0.5 * d * d, delta * (distance - 0.5 * delta))
    if weight is not None:
        loss = loss * weight
    return _finish(loss, reduction, dtype)


# -- margin and embedding losses -----------------------------------------------------------------

_COSINE_EPSILON = 1e-12   # ATen's, added to each squared magnitude


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)``
    where ``target == -1`` (0 for any other target).

    ``input1``/``input2`` are ``(N, D)`` with a ``(N,)`` target, or ``(D,)``
    with a 0-d target. The cosine is PyTorch's: the dot product over
    ``sqrt((|x1|^2 + 1e-12) * (|x2|^2 + 1e-12))`` (not ``cosine_similarity``,
    which clamps each norm at ``eps``: they differ for near-zero vectors).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x1 = oxmera.tensor([[1.0, 0.0], [1.0, 0.0]])
    >>> x2 = oxmera.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> F.cosine_embedding_loss(x1, x2, oxmera.tensor([1, -1]), reduction="none")
    tensor([1.    , 0.7071], dtype=float32)
    """
    opname = "cosine_embedding_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input1, input2 = _float(input1, opname, "input1"), _float(input2, opname, "input2")
    target = as_input(target, opname, "target")
    if target.ndim > 1:
        raise RuntimeError(f"{opname}(): 0D or 1D target tensor expected, multi-target not "
                           f"supported; got target of shape {tuple(target.shape)}")
    expected = target.ndim + 1
    if input1.ndim != expected or input2.ndim != expected:
        raise RuntimeError(f"{opname}(): {target.ndim}D target tensor expects {expected}D input "
                           f"tensors, but found inputs with sizes {tuple(input1.shape)} and "
                           f"{tuple(input2.shape)}")
    shape = _broadcast(opname, ("input1", input1), ("input2", input2))
    try:
        np.broadcast_shapes(shape[:-1], tuple(target.shape))
    except ValueError:
        raise RuntimeError(f"{opname}(): target of shape {tuple(target.shape)} does not match "
                           f"the inputs' batch shape {shape[:-1]}") from None
    (input1, input2), dtype = _wide(input1, input2)
    dim = input1.ndim - 1
    dot = _sum(input1 * input2, dim)
    squares = (_sum(input1 * input1, dim) + _COSINE_EPSILON) * (
        _sum(input2 * input2, dim) + _COSINE_EPSILON)
    cos = dot / sqrt(squares)
    labels = target.detach().numpy()
    loss = (where(_constant(labels == 1), 1 - cos, 0.0)
            + where(_constant(labels == -1), clamp(cos - margin, min=0), 0.0))
    return _finish(loss, reduction, dtype)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``: ``target`` 1 asks for
    ``input1`` ranked above ``input2`` by ``margin``, -1 the other way.

    The three tensors must have the same number of dims (then they broadcast).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.margin_ranking_loss(oxmera.tensor([2.0, 0.0]), oxmera.tensor([1.0, 1.0]),
    ...                       oxmera.tensor([1.0, 1.0]), margin=0.5, reduction="none")
    tensor([0. , 1.5], dtype=float32)
    """
    opname = "margin_ranking_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input1, input2 = _float(input1, opname, "input1"), _float(input2, opname, "input2")
    target = as_input(target, opname, "target")
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"{opname} : All input tensors should have same dimension but got "
                           f"sizes: input1: {tuple(input1.shape)}, input2: "
                           f"{tuple(input2.shape)}, target: {tuple(target.shape)}")
    _broadcast(opname, ("input1", input1), ("input2", input2), ("target", target))
    (input1, input2, target), dtype = _wide(input1, input2, target)
    loss = clamp(-target * (input1 - input2) + margin, min=0)
    return _finish(loss, reduction, dtype)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``
    (for another target value, the sum of both, as PyTorch's).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.hinge_embedding_loss(oxmera.tensor([0.3, 0.3]), oxmera.tensor([1.0, -1.0]),
    ...                        reduction="none")
    tensor([0.3, 0.7], dtype=float32)
    """
    opname = "hinge_embedding_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input = _float(input, opname)
    target = as_input(target, opname, "target")
    shape = _broadcast(opname, ("input", input), ("target", target))
    (input,), dtype = _wide(input)
    labels = np.broadcast_to(target.detach().numpy(), shape)
    input = input.expand(shape)
    loss = (where(_constant(labels != 1), clamp(margin - input, min=0), 0.0)
            + where(_constant(labels != -1), input, 0.0))
    return _finish(loss, reduction, dtype)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The logistic loss ``log(1 + exp(-target * input))`` of targets 1 or -1
    (computed without overflow for any magnitude).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.soft_margin_loss(oxmera.tensor([0.0, 100.0]), oxmera.tensor([1.0, -1.0]),
    ...                    reduction="none")
    tensor([  0.6931, 100.    ], dtype=float32)
    """
    opname = "soft_margin_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input, target = _float(input, opname), as_input(target, opname, "target")
    _broadcast(opname, ("input", input), ("target", target))
    (input, target), dtype = _wide(input, target)
    return _finish(_softplus(-target * input), reduction, dtype)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """Binary cross entropy of ``sigmoid(input)`` for each class (last dim), averaged
    over the classes: one loss per sample.

    ``target`` holds 0 or 1 per class; ``weight`` (broadcast to the input)
    weights each class's term.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.multilabel_soft_margin_loss(oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[1.0, 0.0]]))
    tensor(0.6931, dtype=float32)
    """
    opname = "multilabel_soft_margin_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input, target = _float(input, opname), as_input(target, opname, "target")
    named = [("input", input), ("target", target)]
    if weight is not None:
        named.append(("weight", weight))
    _broadcast(opname, *named)
    (input, target, weight), dtype = _wide(input, target, weight)
    # -(y * logsigmoid(x) + (1 - y) * logsigmoid(-x)), logsigmoid(x) = -softplus(-x)
    loss = target * _softplus(-input) + (1 - target) * _softplus(input)
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = _sum(loss, class_dim) / (input.shape[class_dim] if input.ndim else 1)
    return _finish(loss, reduction, dtype)


def _class_input(input, opname):
    input = _float(input, opname)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{opname}(): expected a (C,) or (N, C) input, got shape "
                           f"{tuple(input.shape)}")
    return input


def _class_target(target, opname):
    """A class-index target as an int64 array (it is never differentiated)."""
    target = as_input(target, opname, "target")
    if target.dtype.kind not in "iu":
        raise RuntimeError(f"{opname}(): expected an integer (int64) target, got dtype "
                           f"{target.dtype}")
    return target.detach().numpy().astype(np.int64)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """A multi-class multi-label hinge loss: for each sample, the sum of
    ``max(0, 1 - (x[j] - x[i]))`` over its target classes ``j`` and the
    classes ``i`` that are not targets, divided by the number of classes.

    ``target`` (int64, the input's shape, ``(C,)`` or ``(N, C)``) lists each
    sample's target classes, ended by the first -1.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> F.multilabel_margin_loss(x, oxmera.tensor([[3, 0, -1, 1]]))
    tensor(0.85, dtype=float32)
    """
    opname = "multilabel_margin_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    input = _class_input(input, opname)
    target = _class_target(target, opname)
    if target.shape != tuple(input.shape):
        raise RuntimeError(f"{opname}(): inconsistent target size: {target.shape} for "
                           f"input of size: {tuple(input.shape)}")
    unbatched = input.ndim == 1
    labels = target.reshape((-1, input.shape[-1]))
    classes = labels.shape[1]
    # positions before each row's first -1 hold its targets
    listed = np.cumprod(labels != -1, axis=1).astype(bool)
    bad = listed & ((labels < 0) | (labels >= classes))
    if bad.any():
        raise RuntimeError(f"{opname}(): target {labels[bad][0]} is out of range for "
                           f"{classes} classes (input of shape {tuple(input.shape)})")
    (input,), dtype = _wide(input)
    x = input.reshape(labels.shape)
    safe = np.where(listed, labels, 0)
    is_target = np.zeros(labels.shape, bool)
    rows = np.broadcast_to(np.arange(labels.shape[0])[:, None], safe.shape)
    is_target[rows[listed], safe[listed]] = True
    picked = x.gather(1, _constant(safe))                      # x[target_j], (N, C)
    hinge = clamp(1 - picked.unsqueeze(2) + x.unsqueeze(1), min=0)   # (N, j, i)
    counted = listed[:, :, None] & ~is_target[:, None, :]
    loss = _sum(where(_constant(counted), hinge, 0.0), (1, 2)) / classes
    if unbatched:
        loss = loss.reshape(())
    return _finish(loss, reduction, dtype)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """A multi-class hinge loss: for each sample, the sum over the classes ``i``
    other than its target ``y`` of ``max(0, margin - x[y] + x[i]) ** p``
    (times ``weight[y]``), divided by the number of classes.

    ``input`` is ``(C,)`` or ``(N, C)``, ``target`` holds class indices, ``()``
    or ``(N,)``; ``p`` is 1 or 2.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> F.multi_margin_loss(x, oxmera.tensor([3]))
    tensor(0.325, dtype=float32)
    """
    opname = "multi_margin_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    if p not in (1, 2):
        raise ValueError(f"only p == 1 and p == 2 supported ({opname}() got p={p})")
    input = _class_input(input, opname)
    target = _class_target(target, opname)
    unbatched = input.ndim == 1
    batch = () if unbatched else tuple(input.shape[:1])
    if tuple(target.shape) != batch and not (unbatched and tuple(target.shape) == (1,)):
        raise RuntimeError(f"{opname}: target tensor should be 1-D with size equal to the "
                           f"number of input samples (batch size). Expected target size "
                           f"{list(batch)}, but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    classes = input.shape[-1]
    if weight is not None and tuple(weight.shape) != (classes,):
        raise RuntimeError(f"{opname}(): inconsistent weight size, expected {classes} but got "
                           f"{list(weight.shape)}")
    labels = target.reshape(-1)
    if ((labels < 0) | (labels >= classes)).any():
        raise RuntimeError(f"{opname}(): target out of range: {labels.tolist()} for {classes} "
                           f"classes")
    (input, weight), dtype = _wide(input, weight)
    x = input.reshape((-1, classes))
    picked = x.gather(1, _constant(labels[:, None]))           # x[y], (N, 1)
    hinge = clamp(margin - picked + x, min=0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * weight[_constant(labels)].unsqueeze(1)
    others = np.arange(classes)[None, :] != labels[:, None]
    loss = _sum(where(_constant(others), hinge, 0.0), 1) / classes
    if unbatched:
        loss = loss.reshape(())
    return _finish(loss, reduction, dtype)


def _check_triplet_dims(anchor, positive, negative):
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {anchor.ndim}D, "
                           f"positive {positive.ndim}D, and negative {negative.ndim}D inputs")


def _triplet(distance, anchor, positive, negative, margin, swap, reduction, dtype):
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return _finish(clamp(margin + d_pos - d_neg, min=0), reduction, dtype)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the ``p``-norm
    ``pairwise_distance`` (over the last dim, ``eps`` added to the difference).

    ``swap=True`` uses the smaller of ``d(a, n)`` and ``d(p, n)`` (Balntas et
    al., 2016). The three inputs have the same number of dims, ``(N, D)`` or
    ``(D,)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> a, pos, neg = oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[3.0, 4.0]]), oxmera.ones(1, 2)
    >>> F.triplet_margin_loss(a, pos, neg, eps=0.0)
    tensor(4.5858, dtype=float32)
    """
    opname = "triplet_margin_loss"
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=3)
    anchor, positive, negative = (_float(t, opname, what) for t, what in
                                  ((anchor, "anchor"), (positive, "positive"),
                                   (negative, "negative")))
    _check_triplet_dims(anchor, positive, negative)
    (anchor, positive, negative), dtype = _wide(anchor, positive, negative)

    def distance(x1, x2):
        return pairwise_distance(x1, x2, p, eps)
    return _triplet(distance, anchor, positive, negative, margin, swap, reduction, dtype)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(0, d(a, p) - d(a, n) + margin)`` with any ``distance_function``
    (``pairwise_distance`` by default) of two tensors, returning one distance
    per sample.

    ``margin`` must be positive; ``swap`` as in ``triplet_margin_loss``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> a, pos, neg = oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[3.0, 4.0]]), oxmera.ones(1, 2)
    >>> cosine = lambda x, y: 1 - F.cosine_similarity(x, y)
    >>> F.triplet_margin_with_distance_loss(a, pos, neg, distance_function=cosine)
    tensor(1., dtype=float32)
    """
    opname = "triplet_margin_with_distance_loss"
    reduction = _check_reduction(reduction, None, None, opname)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    anchor, positive, negative = (as_input(t, opname, what) for t, what in
                                  ((anchor, "anchor"), (positive, "positive"),
                                   (negative, "negative")))
    _check_triplet_dims(anchor, positive, negative)
    distance = pairwise_distance if distance_function is None else distance_function
    if anchor.dtype.kind == "f":
        (anchor, positive, negative), dtype = _wide(anchor, positive, negative)
    else:
        dtype = anchor.dtype
    return _triplet(distance, anchor, positive, negative, margin, swap, reduction, dtype)


# -- connectionist temporal classification ------------------------------------------------------

# The log-probability of an impossible state. Finite, not -inf: a logsumexp
# over states that are all impossible is then finite too, and its gradient
# (a softmax of its arguments) a number times the zero that reaches it, where
# with -inf it would be exp(-inf - -inf), nan. Added to it, any finite log
# probability of a path leaves it below -1e29, far under any real one.
_IMPOSSIBLE = -1e30


def _ctc_lengths(value, batch, opname, what):
    """``input_lengths``/``target_lengths`` (ints, a sequence, or an integer tensor) as
    an int64 array of shape ``(batch,)``."""
    if isinstance(value, Tensor):
        if value.dtype.kind not in "iu":
            raise RuntimeError(f"{opname}(): {what} must be integral, got dtype {value.dtype}")
        array = value.detach().numpy()
    else:
        array = np.asarray(value)
        if array.dtype.kind not in "iu":
            raise RuntimeError(f"{opname}(): {what} must be integral, got {value!r}")
    array = array.astype(np.int64).reshape(-1)
    if array.shape != (batch,):
        raise RuntimeError(f"{opname}(): {what} must be of size batch_size ({batch}), got "
                           f"{array.size} lengths")
    return array


def _ctc_labels(targets, target_lengths, batch, classes, unbatched, opname):
    """Each sample's target labels, from padded ``(N, S)`` or concatenated targets."""
    if targets.dtype.kind not in "iuf":
        raise RuntimeError(f"{opname}(): targets must hold class indices, got dtype "
                           f"{targets.dtype}")
    array = targets.detach().numpy()
    if unbatched:
        if array.ndim != 1:
            raise RuntimeError(f"{opname}(): unbatched (T, C) log_probs take 1-D targets, got "
                               f"shape {array.shape}")
        array = array[None]
    if array.ndim == 2:
        if array.shape[0] != batch:
            raise RuntimeError(f"{opname}(): padded targets of shape {array.shape} must have "
                               f"one row per sample, {batch}")
        longest = int(target_lengths.max(initial=0))
        if array.shape[1] < longest:
            raise RuntimeError(f"{opname}(): expected targets to have size at least {longest} "
                               f"at dimension 1 (the longest target length), but got size "
                               f"{array.shape[1]}")
        labels = [array[b, :n] for b, n in enumerate(target_lengths)]
    elif array.ndim == 1:
        total = int(target_lengths.sum())
        if array.shape[0] != total:
            raise RuntimeError(f"{opname}(): concatenated 1-D targets must have the summed "
                               f"target lengths {total} entries, got {array.shape[0]}")
        labels = np.split(array, np.cumsum(target_lengths)[:-1])
    else:
        raise RuntimeError(f"{opname}(): targets must be (N, S) padded or 1-D concatenated, "
                           f"got shape {array.shape}")
    labels = [np.asarray(row).astype(np.int64) for row in labels]
    for row in labels:
        if row.size and (row.min() < 0 or row.max() >= classes):
            raise RuntimeError(f"{opname}(): target value {row[(row < 0) | (row >= classes)][0]}"
                               f" is out of range for {classes} classes")
    return labels


def _ctc_extended(labels, blank):
    """The extended label sequences (a blank between labels and at both ends) padded
    with blanks to ``(N, 2L + 1)``, and the masks of the recursion: where a state
    exists, where a path may skip from ``s - 2``, and the two final states."""
    batch = len(labels)
    longest = max((row.size for row in labels), default=0)
    states = 2 * longest + 1
    extended = np.full((batch, states), blank, np.int64)
    exists = np.zeros((batch, states), bool)
    final = np.zeros((batch, states), bool)
    for b, row in enumerate(labels):
        extended[b, 1:2 * row.size:2] = row
        exists[b, :2 * row.size + 1] = True
        final[b, 2 * row.size] = True
        if row.size:
            final[b, 2 * row.size - 1] = True
    # PyTorch's rule: from s - 2 into a label state (odd s, past the first)
    # whose label differs from the one before it.
    skip = np.zeros((batch, states), bool)
    skip[:, 3::2] = extended[:, 3::2] != extended[:, 1:-2:2]
    skip &= exists
    return extended, exists, skip, final


def _ctc_feasible(labels, input_lengths):
    """Whether each target fits its input: its length plus one blank between each
    pair of repeated labels may not exceed the input length."""
    need = np.array([row.size + int((row[1:] == row[:-1]).sum()) for row in labels], np.int64)
    return need <= input_lengths


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The connectionist temporal classification loss: the negative log of the total
    probability of every alignment of the target to the input.

    ``log_probs`` is ``(T, N, C)`` (or ``(T, C)`` unbatched) log-probabilities,
    normally from ``log_softmax``; ``targets`` is ``(N, S)`` padded or the 1-D
    concatenation of the targets, holding class indices; ``input_lengths`` and
    ``target_lengths`` give each sample's lengths (ints, sequences or
    integer tensors). ``blank`` is the blank class. A target that cannot fit
    its input has an infinite loss, or 0 (with a zero gradient) with
    ``zero_infinity=True``. ``'mean'`` divides each loss by its target
    length (at least 1), then takes the mean over the batch.

    The gradient in ``log_probs`` is the loss's own; PyTorch's adds
    ``exp(log_probs)`` within each input length, which vanishes through
    ``log_softmax`` (where the two agree).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> log_probs = oxmera.full((2, 1, 2), 0.5).log()     # T=2, N=1, C=2 (0 is the blank)
    >>> F.ctc_loss(log_probs, oxmera.tensor([[1]]), [2], [1], reduction="sum")  # 3 paths of 4
    tensor(0.2877, dtype=float32)
    """
    opname = "ctc_loss"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction: {opname}() takes "
                         f"'none', 'mean' or 'sum'")
    log_probs = _float(log_probs, opname, "log_probs")
    targets = as_input(targets, opname, "targets")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"{opname}(): log_probs must be (T, N, C) or unbatched (T, C), got "
                           f"shape {tuple(log_probs.shape)}")
    unbatched = log_probs.ndim == 2
    steps, classes = log_probs.shape[0], log_probs.shape[-1]
    batch = 1 if unbatched else log_probs.shape[1]
    if not 0 <= blank < classes:
        raise RuntimeError(f"{opname}(): blank must be in label range: blank={blank}, "
                           f"{classes} classes")
    input_lengths = _ctc_lengths(input_lengths, batch, opname, "input_lengths")
    target_lengths = _ctc_lengths(target_lengths, batch, opname, "target_lengths")
    for what, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if (lengths < 0).any():
            raise RuntimeError(f"{opname}(): expected {what} to have value at least 0, but got "
                               f"value {lengths.min()}")
    if (input_lengths > steps).any():
        raise RuntimeError(f"{opname}(): expected input_lengths to have value at most {steps} "
                           f"(the log_probs' length), but got value {input_lengths.max()}")
    labels = _ctc_labels(targets, target_lengths, batch, classes, unbatched, opname)

    (lp,), dtype = _wide(log_probs)
    if unbatched:
        lp = lp.unsqueeze(1)
    extended, exists, skip, final = _ctc_extended(labels, blank)
    states = extended.shape[1]
    last = int(input_lengths.max(initial=0))
    neg = _creation.full((batch, states), _IMPOSSIBLE, dtype=lp.dtype)
    if last:
        # emit[t, b, s] = lp[t, b, extended[b, s]], impossible ones held finite
        index = np.broadcast_to(extended, (last, batch, states))
        emit = lp[:last].gather(2, _constant(index))
        emit = maximum(emit, _creation.full((), _IMPOSSIBLE, dtype=lp.dtype))
        alpha = where(_constant(exists & (np.arange(states) < 2)), emit[0], neg)
        exists_c, skip_c = _constant(exists), _constant(skip)
        for t in range(1, last):
            one_back = cat([neg[:, :1], alpha[:, :-1]], 1)
            two_back = where(skip_c, cat([neg[:, :2], alpha[:, :-2]], 1), neg)
            step = logsumexp(stack([alpha, one_back, two_back], 2), 2) + emit[t]
            step = where(exists_c, step, neg)
            # a sample whose input has ended keeps its alpha
            alpha = where(_constant((t < input_lengths)[:, None]), step, alpha)
        nll = -logsumexp(where(_constant(final), alpha, neg), 1)
    else:
        nll = _sum(lp[:0], (0, 2))      # no frame anywhere: zeros, still on the graph
    # An input of length 0 has no frame: only the empty target fits it (loss 0).
    empty = input_lengths == 0
    nll = where(_constant(empty), 0.0, nll)
    infinite = ~_ctc_feasible(labels, input_lengths) | (nll.detach().numpy() > -_IMPOSSIBLE / 10)
    nll = where(_constant(infinite), 0.0 if zero_infinity else math.inf, nll)
    if reduction == "mean":
        loss = (nll / _constant(np.maximum(target_lengths, 1).astype(nll.dtype))).mean()
    elif reduction == "sum":
        loss = nll.sum()
    else:
        loss = nll.reshape(()) if unbatched else nll
    return loss.to(dtype)
