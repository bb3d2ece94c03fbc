"""``AdaptiveLogSoftmaxWithLoss``: the efficient softmax of Grave et al. (PyTorch's
``torch.nn.modules.adaptive``).

The classes are split at ``cutoffs``: a head classifies among the frequent
classes and one entry per tail cluster; each cluster's classes get a
low-rank projection (``in_features // div_value ** (i + 1)`` wide). The
module's forward, ``log_prob`` and ``predict`` follow PyTorch's, composed of
oxmera ops (gradients come from their VJPs); parameter names (``head``,
``tail.<i>.0``/``.1``) and initialization are PyTorch's.
"""
import collections

import numpy as np

from oxmera._core import autograd as _core
from oxmera.nn import functional as F
from oxmera.nn.modules.container import ModuleList, Sequential
from oxmera.nn.modules.linear import Linear
from oxmera.nn.modules.module import Module
from oxmera.ops.shape import cat

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax (Grave et al., 2016): frequent classes in a head, rare ones in
    low-rank tail clusters.

    Parameters
    ----------
    in_features : int
        Size of each input sample.
    n_classes : int
        Number of classes.
    cutoffs : sequence of int
        Increasing cluster boundaries, each in ``[1, n_classes - 1]``.
    div_value : float, default 4.0
        Each tail cluster's projection is ``div_value`` times narrower than the previous.
    head_bias : bool, default False
        Whether the head has a bias.

    ``forward(input, target)`` returns ``(output, loss)``: each sample's
    log-probability of its target (``(N,)``, or 0-d for unbatched input) and
    their negated mean. ``log_prob(input)`` gives every class's
    log-probability, ``predict(input)`` the most likely class.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> asm = nn.AdaptiveLogSoftmaxWithLoss(16, 10, cutoffs=[4, 7])
    >>> out = asm(oxmera.randn(3, 16), oxmera.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape
    (oxmera.Size([3]), oxmera.Size([]))
    >>> asm.log_prob(oxmera.randn(3, 16)).exp().sum(1)
    tensor([1., 1., 1.], dtype=float32, grad_fn=<SumBackward>)
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        factory = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self):
        """Redraw the head's and the tail projections' parameters."""
        self.head.reset_parameters()
        for projection, output in self.tail:
            projection.reset_parameters()
            output.reset_parameters()

    def forward(self, input_, target_):
        """``(output, loss)``: each target's log-probability and their negated mean."""
        target_dim = target_.dim()
        if target_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: input and target should have "
                                   f"the same size in the batch dimension, got input of shape "
                                   f"{tuple(input_.shape)} and target of shape "
                                   f"{tuple(target_.shape)}")
            if input_.dim() != 2:
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: 1D target tensor expects 2D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        elif target_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"AdaptiveLogSoftmaxWithLoss: 0D target tensor expects 1D "
                                   f"input tensors, but found inputs with size "
                                   f"{tuple(input_.shape)}")
        else:
            raise RuntimeError("AdaptiveLogSoftmaxWithLoss: 0D or 1D target tensor expected, "
                               "multi-target not supported")
        batched = target_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        labels = np.asarray(target.detach().numpy(), dtype=np.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{labels.min()}, {labels.max()}] were found. ")
        # The head's entry of each sample: its class in the shortlist, else its cluster's.
        cluster = np.searchsorted(np.array(self.cutoffs), labels, side="right")
        head_index = np.where(cluster == 0, labels, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, _core._wrap(head_index.reshape(-1, 1))).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.flatnonzero(cluster == i)
            if rows.size == 0:
                continue
            rows_t = _core._wrap(rows)
            relative = labels[rows] - self.cutoffs[i - 1]
            cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, rows_t)),
                                            dim=1)
            local = cluster_logprob.gather(1, _core._wrap(relative.reshape(-1, 1))).squeeze(1)
            output = output.index_add(0, rows_t, local)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            column = self.shortlist_size + i
            pieces.append(cluster_logprob + head_logprob[:, column:column + 1])
        return cat(pieces, 1)

    def log_prob(self, input):
        """Every class's log-probability: ``(N, n_classes)`` (or ``(n_classes,)``).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[2])
        >>> asm.log_prob(oxmera.randn(4)).shape
        oxmera.Size([6])
        """
        batched = input.dim() > 1
        input = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(input, self.head(input))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each sample (the head's when it is a shortlist class,
        as PyTorch's shortcut).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> asm = nn.AdaptiveLogSoftmaxWithLoss(4, 6, cutoffs=[2])
        >>> bool((asm.predict(oxmera.randn(5, 4)) < 6).all())
        True
        """
        batched = input.dim() > 1
        input = input if batched else input.unsqueeze(0)
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = (output >= self.shortlist_size).numpy()
        if outside.any():
            rows = _core._wrap(np.flatnonzero(outside))
            log_prob = self._get_full_log_prob(input.index_select(0, rows),
                                               head_output.index_select(0, rows))
            chosen = log_prob.argmax(dim=1).numpy()
            labels = output.numpy().copy()
            labels[outside] = chosen
            output = _core._wrap(labels)
        return output if batched else output.squeeze(0)
