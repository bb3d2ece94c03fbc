"""Loss modules: each holds its options (and class weights as buffers) and calls
the function of the same name in ``oxmera.nn.functional``.

``reduction`` is ``'mean'`` (default), ``'sum'`` or ``'none'``; PyTorch's
deprecated ``size_average``/``reduce`` are translated (with its warning).
Unlike PyTorch, a bad ``reduction`` is refused when the loss is built, not
at its first call.
"""
import math
import sys

from oxmera.nn import functional as F
from oxmera.nn.modules.distance import PairwiseDistance
from oxmera.nn.modules.module import Module
from oxmera.ops.loss import _check_reduction

__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
           "LinearCrossEntropyLoss",
           "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
           "CosineEmbeddingLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
           "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "MultiMarginLoss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"]


def _outside_this_file():
    """``stacklevel`` pointing at the first frame outside this file, for a warning
    raised by a function our caller calls (``_check_reduction``).

    Subclasses' ``__init__`` chains differ in length; the deprecation warning
    should point at the user's line whichever loss was built.
    """
    frame, level = sys._getframe(1), 2          # 1 would be the warning function itself
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
    return level


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction, size_average, reduce, type(self).__name__,
                                          stacklevel=_outside_this_file())


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean (or sum) absolute error ``|input - target|``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.L1Loss()(oxmera.tensor([1.0, 2.0]), oxmera.tensor([0.0, 4.0]))
    tensor(1.5, dtype=float32)
    """

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean (or sum) squared error ``(input - target) ** 2``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.MSELoss()
    >>> loss
    MSELoss()
    >>> loss(oxmera.tensor([1.0, 2.0]), oxmera.tensor([0.0, 4.0]))
    tensor(2.5, dtype=float32)
    """

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """A smooth L1 loss: quadratic near 0, linear beyond ``beta``.

    ``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``,
    with ``d = input - target``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.SmoothL1Loss()(oxmera.tensor([0.5, 3.0]), oxmera.tensor([0.0, 0.0]))
    tensor(1.3125, dtype=float32)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``.

    It is ``delta`` times :class:`SmoothL1Loss` with ``beta=delta`` (see
    ``oxmera.nn.functional.huber_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.HuberLoss(delta=2.0)(oxmera.tensor([1.0, 5.0]), oxmera.tensor([0.0, 0.0]))
    tensor(4.25, dtype=float32)
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        if not delta > 0:
            raise ValueError(f"HuberLoss: delta must be positive, got {delta}")
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class-index targets, given log-probabilities (class dim 1).

    ``weight`` (a buffer) rescales each class; targets equal to
    ``ignore_index`` contribute nothing; ``'mean'`` divides by the summed
    weights of the counted targets.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> logp = oxmera.tensor([[-0.1, -2.0], [-3.0, -0.2]])
    >>> nn.NLLLoss()(logp, oxmera.tensor([0, 1]))
    tensor(0.15, dtype=float32)
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between logits and class indices (or class probabilities).

    ``log_softmax`` over the class dim (dim 1, or 0 for a 1-D input)
    followed by :class:`NLLLoss`; ``weight``, ``ignore_index``,
    ``label_smoothing`` and ``reduction`` as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.CrossEntropyLoss()
    >>> logits = oxmera.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
    >>> out = loss(logits, oxmera.tensor([0, 2]))
    >>> out
    tensor(0.6691, dtype=float32, grad_fn=<CrossEntropyLossBackward>)
    >>> out.backward()
    >>> logits.grad.shape
    oxmera.Size([2, 3])
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"CrossEntropyLoss: label_smoothing must be between 0.0 and 1.0, "
                             f"got {label_smoothing}")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of the logits a learnable linear map makes of the input (PyTorch's
    ``LinearCrossEntropyLoss``): :func:`~oxmera.nn.functional.linear_cross_entropy`
    with the weight (and bias) of ``self.linear``.

    ``self.linear`` is a :class:`~oxmera.nn.Linear` from ``in_features`` to
    ``num_classes * prod(out_features)`` (flat storage, reshaped to
    ``(num_classes, *out_features, in_features)`` in forward, as PyTorch);
    ``weight``, ``reduction``, ``ignore_index`` (None: -100 for class
    indices) and ``label_smoothing`` as in cross entropy. ``options`` (the
    chunked path) must be None.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3))
    >>> loss(oxmera.randn(2, 5), oxmera.randint(0, 10, (2, 4, 3))).shape
    oxmera.Size([])
    >>> list(loss.state_dict())
    ['linear.weight']
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        if options is not None:
            raise NotImplementedError("LinearCrossEntropyLoss: the chunked path (options=...) "
                                      "is not supported by oxmera; pass options=None")
        super().__init__(weight, None, None, reduction)
        from oxmera.nn.modules.linear import Linear
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        linear_weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        linear_bias = (None if self.linear.bias is None
                       else self.linear.bias.reshape((self.num_classes, *self.out_features)))
        return F.linear_cross_entropy(input, linear_weight, target, linear_bias=linear_bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing, options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")


class BCELoss(_WeightedLoss):
    """Binary cross entropy between probabilities ``input`` and targets in [0, 1].

    The logs are clamped at -100, as in PyTorch; prefer
    :class:`BCEWithLogitsLoss` on logits.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.BCELoss()(oxmera.tensor([0.5, 0.5]), oxmera.tensor([1.0, 0.0]))
    tensor(0.6931, dtype=float32)
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of ``sigmoid(input)``, computed stably from the logits.

    ``weight`` weights each element, ``pos_weight`` the positive term of each
    class (last dim); both are buffers.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.BCEWithLogitsLoss()(oxmera.tensor([0.0, 0.0]), oxmera.tensor([1.0, 0.0]))
    tensor(0.6931, dtype=float32)
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of ``target`` from ``exp(input)`` (see
    ``oxmera.nn.functional.kl_div``); ``reduction`` may also be ``'batchmean'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
    >>> loss
    KLDivLoss()
    >>> loss(oxmera.tensor([[0.5, 0.5]]).log(), oxmera.tensor([[0.9, 0.1]]).log())
    tensor(0.3681, dtype=float32)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        batchmean = reduction == "batchmean" and size_average is None and reduce is None
        super().__init__(size_average, reduce, "mean" if batchmean else reduction)
        if batchmean:
            self.reduction = "batchmean"
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Negative log likelihood of a Poisson ``target`` with rate ``input`` (its log
    with ``log_input``), Stirling's term with ``full`` (see
    ``oxmera.nn.functional.poisson_nll_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.PoissonNLLLoss()(oxmera.tensor([0.0, 1.0]), oxmera.tensor([1.0, 2.0]))
    tensor(0.8591, dtype=float32)
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log likelihood of ``target`` under Gaussians of mean ``input`` and
    variance ``var`` (see ``oxmera.nn.functional.gaussian_nll_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.GaussianNLLLoss()
    >>> loss(oxmera.tensor([0.0, 1.0]), oxmera.tensor([1.0, 1.0]), oxmera.tensor([1.0, 4.0]))
    tensor(0.5966, dtype=float32)
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for -1 (see
    ``oxmera.nn.functional.cosine_embedding_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.CosineEmbeddingLoss(margin=0.5)
    >>> loss(oxmera.tensor([[1.0, 0.0]]), oxmera.tensor([[1.0, 1.0]]), oxmera.tensor([-1]))
    tensor(0.2071, dtype=float32)
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -target * (input1 - input2) + margin)`` (see
    ``oxmera.nn.functional.margin_ranking_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.MarginRankingLoss(margin=0.5)(oxmera.tensor([2.0, 0.0]), oxmera.tensor([1.0, 1.0]),
    ...                                  oxmera.tensor([1.0, 1.0]))
    tensor(0.75, dtype=float32)
    """

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``input`` for target 1, ``max(0, margin - input)`` for -1 (see
    ``oxmera.nn.functional.hinge_embedding_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.HingeEmbeddingLoss()(oxmera.tensor([0.3, 0.3]), oxmera.tensor([1.0, -1.0]))
    tensor(0.5, dtype=float32)
    """

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """The logistic loss ``log(1 + exp(-target * input))`` (see
    ``oxmera.nn.functional.soft_margin_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.SoftMarginLoss()(oxmera.tensor([0.0, 0.0]), oxmera.tensor([1.0, -1.0]))
    tensor(0.6931, dtype=float32)
    """

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Per-class binary cross entropy of logits, averaged over the classes (see
    ``oxmera.nn.functional.multilabel_soft_margin_loss``); ``weight`` a buffer.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.MultiLabelSoftMarginLoss(weight=oxmera.tensor([1.0, 3.0]))
    >>> loss(oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[1.0, 0.0]]))
    tensor(1.3863, dtype=float32)
    """

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss of class-index targets ended by -1 (see
    ``oxmera.nn.functional.multilabel_margin_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> x = oxmera.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> nn.MultiLabelMarginLoss()(x, oxmera.tensor([[3, 0, -1, 1]]))
    tensor(0.85, dtype=float32)
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss (``p`` 1 or 2, ``margin``, class ``weight`` a
    buffer; see ``oxmera.nn.functional.multi_margin_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> x = oxmera.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> nn.MultiMarginLoss(p=2)(x, oxmera.tensor([3]))
    tensor(0.1525, dtype=float32)
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"only p == 1 and p == 2 supported (MultiMarginLoss got p={p})")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be 1-D (one entry per class), got "
                             f"shape {tuple(weight.shape)}")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(0, d(a, p) - d(a, n) + margin)`` with the ``p``-norm distance (see
    ``oxmera.nn.functional.triplet_margin_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> a, pos, neg = oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[3.0, 4.0]]), oxmera.ones(1, 2)
    >>> nn.TripletMarginLoss(p=1, eps=0.0)(a, pos, neg)
    tensor(6., dtype=float32)
    """

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss with any ``distance_function`` (see
    ``oxmera.nn.functional.triplet_margin_with_distance_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1),
    ...                                         margin=2.0)
    >>> a, pos, neg = oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[1.0, 1.0]]), oxmera.ones(1, 2)
    >>> loss(a, pos, neg)
    tensor(2., dtype=float32)
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        # PyTorch's default is a PairwiseDistance submodule (so it shows in the repr)
        self.distance_function = (PairwiseDistance() if distance_function is None
                                  else distance_function)
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (see
    ``oxmera.nn.functional.ctc_loss``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> loss = nn.CTCLoss(blank=0, zero_infinity=True)
    >>> log_probs = oxmera.full((2, 1, 3), 1 / 3).log()
    >>> loss(log_probs, oxmera.tensor([[1, 1]]), [2], [2])    # needs 3 frames: infinite
    tensor(0., dtype=float32)
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
