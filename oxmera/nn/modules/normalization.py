"""Normalization layers: ``LayerNorm``, ``BatchNorm1d``, ``BatchNorm2d``.

The arithmetic (and the in-place update of the running statistics) is
``oxmera.nn.functional.layer_norm``/``batch_norm``; these modules hold the
affine parameters (ones and zeros at start, as in PyTorch), the running
statistics buffers and the train/eval choice between batch and running
statistics.
"""
import numbers

import numpy as np

from oxmera._core import autograd as _core
from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn.modules._utils import empty, factory_dtype
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter
from oxmera.ops import creation as _creation

__all__ = ["LayerNorm", "BatchNorm1d", "BatchNorm2d"]


class LayerNorm(Module):
    """Normalize over the trailing ``normalized_shape`` dims, then scale and shift.

    ``(x - mean) / sqrt(var + eps) * weight + bias`` with the biased variance
    over the last ``len(normalized_shape)`` dims; ``weight`` (ones) and
    ``bias`` (zeros) have shape ``normalized_shape`` and exist when
    ``elementwise_affine`` (``bias`` also needs ``bias=True``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> norm = nn.LayerNorm(4)
    >>> norm
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> out = norm(oxmera.tensor([[1.0, 2.0, 3.0, 4.0]]))
    >>> round(out.mean().item(), 6), round(out.var(correction=0).item(), 3)
    (0.0, 1.0)
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "LayerNorm")
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype))
            if bias:
                self.bias = Parameter(empty(self.normalized_shape, dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Set ``weight`` to ones and ``bias`` to zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _BatchNorm(Module):
    """What ``BatchNorm1d`` and ``BatchNorm2d`` share (PyTorch's ``_BatchNorm``)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        dtype = factory_dtype(device, dtype, type(self).__name__)
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty((num_features,), dtype))
            if bias:
                self.bias = Parameter(empty((num_features,), dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _core._wrap(np.array(0, np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Running mean to zeros, running variance to ones, batch count to 0."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Reset the running statistics, ``weight`` to ones and ``bias`` to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        count = self.training and self.track_running_stats and self.num_batches_tracked is not None
        if count and self.momentum is None:
            # A cumulative moving average: the mean of every batch so far.
            factor = 1.0 / float(self.num_batches_tracked.item() + 1)
        # Training normalizes with the batch statistics; evaluation with the
        # running ones, or with the batch's when no running ones are kept.
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        out = F.batch_norm(input, self.running_mean if keep else None,
                           self.running_var if keep else None, self.weight, self.bias,
                           use_batch, factor, self.eps)
        # Counted after the call (PyTorch counts before): a batch F.batch_norm
        # refuses leaves every buffer as it was.
        if count:
            self.num_batches_tracked.add_(1)
        return out

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization over ``(N, C)`` or ``(N, C, L)`` input, per channel ``C``.

    Training normalizes with the batch's mean and biased variance and
    updates the buffers ``running_mean``/``running_var`` (unbiased variance)
    with ``momentum`` (``None``: a cumulative average) and counts
    ``num_batches_tracked``; evaluation normalizes with the running
    statistics. ``affine`` adds ``weight`` (ones) and, unless the keyword
    ``bias=False``, ``bias`` (zeros);
    ``track_running_stats=False`` keeps no buffers and always uses batch
    statistics.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> bn = nn.BatchNorm1d(2)
    >>> bn
    BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    >>> out = bn(oxmera.tensor([[1.0, 2.0], [3.0, 6.0]]))
    >>> bn.running_mean, bn.num_batches_tracked
    (tensor([0.2, 0.4], dtype=float32), tensor(1, dtype=int64))
    >>> bn.eval()(oxmera.tensor([[0.2, 0.4]]))
    tensor([[0., 0.]], dtype=float32, grad_fn=<AddBackward>)
    """

    def _check_input_dim(self, input):
        if input.ndim not in (2, 3):
            raise ValueError(f"BatchNorm1d: expected 2D or 3D input (got {input.ndim}D input "
                             f"of shape {tuple(input.shape)})")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over ``(N, C, H, W)`` input, per channel ``C``.

    As :class:`BatchNorm1d`, with the statistics over ``N``, ``H`` and ``W``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> bn = nn.BatchNorm2d(3, affine=False)
    >>> out = bn(oxmera.randn(4, 3, 5, 5))
    >>> out.shape, round(out.mean().item(), 5)
    (oxmera.Size([4, 3, 5, 5]), 0.0)
    """

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"BatchNorm2d: expected 4D input (got {input.ndim}D input of shape "
                             f"{tuple(input.shape)})")
