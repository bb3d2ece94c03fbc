"""Normalization layers: ``LayerNorm``, ``BatchNorm1d/2d/3d``, ``InstanceNorm1d/2d/3d``,
``GroupNorm``, ``RMSNorm``, ``LocalResponseNorm``.

The arithmetic (and the in-place update of the running statistics) is
``oxmera.nn.functional.layer_norm``/``batch_norm``; these modules hold the
affine parameters (ones and zeros at start, as in PyTorch), the running
statistics buffers and the train/eval choice between batch and running
statistics.
"""
import numbers
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn.modules._utils import empty, factory_dtype
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter
from oxmera.ops import creation as _creation

__all__ = ["LayerNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d",
           "InstanceNorm2d",
           "InstanceNorm3d", "GroupNorm", "RMSNorm", "LocalResponseNorm"]


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


class BatchNorm3d(_BatchNorm):
    """Batch normalization over ``(N, C, D, H, W)`` input, per channel ``C``.

    As :class:`BatchNorm1d`, with the statistics over ``N``, ``D``, ``H`` and ``W``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.BatchNorm3d(2)(oxmera.randn(3, 2, 2, 2, 2)).shape
    oxmera.Size([3, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"BatchNorm3d: expected 5D input (got {input.ndim}D input of shape "
                             f"{tuple(input.shape)})")


class _InstanceNorm(_BatchNorm):
    """What ``InstanceNorm1d/2d/3d`` share (PyTorch's ``_InstanceNorm``): no affine
    parameters and no running statistics unless asked; an unbatched input is accepted."""

    _unbatched_ndim = None      # dims of an unbatched input: 2, 3 or 4

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def forward(self, input):
        name, unbatched = type(self).__name__, self._unbatched_ndim
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(f"{name}: expected {unbatched}D or {unbatched + 1}D input (got "
                             f"{input.ndim}D input of shape {tuple(input.shape)})")
        feature_dim = input.ndim - unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"{name}: expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"{name}: input's size at dim={feature_dim} does not match "
                          f"num_features. You can silence this warning by not passing in "
                          f"num_features, which is not used because affine=False",
                          UserWarning, stacklevel=2)
        batched = input if input.ndim == unbatched + 1 else input.unsqueeze(0)
        out = F.instance_norm(batched, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              0.0 if self.momentum is None else self.momentum, self.eps)
        return out if input.ndim == unbatched + 1 else out.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of ``(N, C, L)`` or ``(C, L)`` input: each channel of each
    sample over its positions.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.InstanceNorm1d(3)
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """

    _unbatched_ndim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.InstanceNorm2d(3, affine=True)(oxmera.randn(2, 3, 4, 4)).shape
    oxmera.Size([2, 3, 4, 4])
    """

    _unbatched_ndim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.InstanceNorm3d(2)(oxmera.randn(2, 2, 2, 2)).shape
    oxmera.Size([2, 2, 2, 2])
    """

    _unbatched_ndim = 4


class GroupNorm(Module):
    """Group normalization: ``num_channels`` split into ``num_groups`` groups, each
    normalized over its channels and positions, then a per-channel affine map.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    >>> nn.GroupNorm(2, 4)(oxmera.randn(3, 4, 5)).shape
    oxmera.Size([3, 4, 5])
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, bias=True, device=None,
                 dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        dtype = factory_dtype(device, dtype, "GroupNorm")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                      eps, affine)
        if affine:
            self.weight = Parameter(empty((num_channels,), dtype))
            if bias:
                self.bias = Parameter(empty((num_channels,), dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """``weight`` to ones, ``bias`` to zeros."""
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the last dims (``normalized_shape``), times a
    learned ``weight`` (ones) when ``elementwise_affine``; ``eps=None`` is the dtype's
    machine epsilon.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    >>> nn.RMSNorm(4)(oxmera.randn(2, 4)).shape
    oxmera.Size([2, 4])
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "RMSNorm")
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        """``weight`` to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Local response normalization across channels (see ``F.local_response_norm``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
