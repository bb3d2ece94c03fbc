"""Loss modules: each holds its options (and class weights as buffers) and calls
the function of the same name in ``oxmera.nn.functional``.

``reduction`` is ``'mean'`` (default), ``'sum'`` or ``'none'``; PyTorch's
deprecated ``size_average``/``reduce`` are translated (with its warning).
Unlike PyTorch, a bad ``reduction`` is refused when the loss is built, not
at its first call.
"""
import sys

from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module
from oxmera.ops.loss import _check_reduction

__all__ = ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
           "BCELoss", "BCEWithLogitsLoss"]


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

    It is ``delta`` times :class:`SmoothL1Loss` with ``beta=delta``.

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
        return F.smooth_l1_loss(input, target, reduction=self.reduction,
                                beta=self.delta) * self.delta


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
    tensor(0.6691, dtype=float32, grad_fn=<DivBackward>)
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
