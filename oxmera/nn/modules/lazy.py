"""Lazy layers: the input size is read from the first input (PyTorch's ``LazyModuleMixin``).

``LazyLinear``, ``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``,
``LazyBatchNorm1d/2d/3d`` and ``LazyInstanceNorm1d/2d/3d`` hold
:class:`~oxmera.nn.UninitializedParameter` placeholders until their first
forward (or a ``load_state_dict`` that gives the shapes); then a forward
pre-hook materializes them, runs the layer's ``reset_parameters`` (the same
random draws as constructing the ordinary layer at that moment) and turns the
module into its ordinary class (``cls_to_become``: a ``LazyLinear`` becomes a
``Linear``). The layers themselves live in ``linear``, ``conv`` and
``normalization``; this module only defers them.
"""
import weakref

import numpy as np

from oxmera.nn.modules._utils import factory_dtype
from oxmera.nn.modules.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                                    ConvTranspose3d)
from oxmera.nn.modules.linear import Linear
from oxmera.nn.modules.normalization import (BatchNorm1d, BatchNorm2d, BatchNorm3d,
                                             InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)
from oxmera.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from oxmera.ops import creation as _creation

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


def _infer_parameters(module, args, kwargs=None):
    """The forward pre-hook: materialize from the first input, then stop being lazy."""
    module.initialize_parameters(*args, **(kwargs or {}))
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    module._load_hook.remove()
    del module._initialize_hook
    del module._load_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyModuleMixin:
    """Mixed in before a layer class: its parameters are materialized from the first input.

    A subclass defines ``initialize_parameters(*inputs)`` (materialize each
    placeholder, set the inferred sizes, call ``reset_parameters``) and may set
    ``cls_to_become``. A state dict with the real shapes also materializes
    the placeholders (a pre-hook of ``load_state_dict``). Create the optimizer
    after the first forward: before it the parameters have no shape.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.LazyLinear(3)
    >>> layer
    LazyLinear(in_features=0, out_features=3, bias=True)
    >>> layer.has_uninitialized_params()
    True
    >>> layer(oxmera.ones(2, 5)).shape
    oxmera.Size([2, 3])
    >>> layer
    Linear(in_features=5, out_features=3, bias=True)
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The hooks hold the module weakly: no reference cycle module -> hook -> module.
        ref = weakref.ref(self)

        def lazy_load_hook(*hook_args):
            module = ref()
            if module is not None:
                module._lazy_load_hook(*hook_args)
        self._load_hook = self._register_load_state_dict_pre_hook(lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        # A checkpoint's shapes materialize the placeholders, so its values can be copied.
        for name, value in [*self._parameters.items(), *self._buffers.items()]:
            key = prefix + name
            if key in state_dict and value is not None and is_lazy(value):
                given = state_dict[key]
                if not is_lazy(given):
                    value.materialize(tuple(given.shape))

    def initialize_parameters(self, *args, **kwargs):
        """Materialize the placeholders from the inputs (defined by each lazy layer)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer is still a placeholder."""
        return any(is_lazy(value) for value in [*self._parameters.values(),
                                                *self._buffers.values()])


# -- Linear ------------------------------------------------------------------------------

class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`~oxmera.nn.Linear` whose ``in_features`` is the first input's last size.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.LazyLinear(4)
    >>> layer(oxmera.ones(3, 7)).shape, tuple(layer.weight.shape)
    (oxmera.Size([3, 4]), (4, 7))
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        dtype = factory_dtype(device, dtype, "LazyLinear")
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        """Draw the parameters once they are materialized (before: nothing to draw)."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """Materialize ``weight`` ``(out_features, input.shape[-1])`` and ``bias``."""
        if self.has_uninitialized_params():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()


# -- convolutions ---------------------------------------------------------------------------

class _LazyConvXdMixin(LazyModuleMixin):
    """What the lazy convolutions share: ``in_channels`` from the input's channel dim."""

    _spatial_dims = None

    def _lazy_init(self, out_channels, bias, dtype):
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        """Draw the parameters once they are materialized (before: nothing to draw)."""
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._spatial_dims + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D "
                               f"(batched) input to {type(self).__name__}, but got input of "
                               f"size: {tuple(input.shape)}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]

    def initialize_parameters(self, input, *args, **kwargs):
        """Materialize ``weight`` (with the input's channels) and ``bias``."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(base, spatial_dims):
    class LazyConv(_LazyConvXdMixin, base):
        cls_to_become = base
        _spatial_dims = spatial_dims

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                     groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
            dtype = factory_dtype(device, dtype, f"Lazy{base.__name__}")
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, dtype=dtype)
            self._lazy_init(out_channels, bias, dtype)

    return _named(LazyConv, base, "convolution", "the input's channel dimension")


def _lazy_conv_transpose(base, spatial_dims):
    class LazyConvTranspose(_LazyConvXdMixin, base):
        cls_to_become = base
        _spatial_dims = spatial_dims

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            dtype = factory_dtype(device, dtype, f"Lazy{base.__name__}")
            super().__init__(0, 0, kernel_size, stride=stride, padding=padding,
                             output_padding=output_padding, groups=groups, bias=False,
                             dilation=dilation, padding_mode=padding_mode, dtype=dtype)
            self._lazy_init(out_channels, bias, dtype)

    return _named(LazyConvTranspose, base, "transposed convolution",
                  "the input's channel dimension")


def _named(cls, base, what, source):
    name = f"Lazy{base.__name__}"
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = __name__
    n = cls._spatial_dims
    cls.__doc__ = f"""A :class:`~oxmera.nn.{base.__name__}` ({what}) whose ``in_channels`` is read
    from {source} at the first forward; it then becomes a ``{base.__name__}``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.{name}(4, 3)
    >>> layer(oxmera.ones(2, 5{", 8" * n})).shape[:2]
    oxmera.Size([2, 4])
    >>> type(layer).__name__, layer.in_channels
    ('{base.__name__}', 5)
    """
    return cls


LazyConv1d = _lazy_conv(Conv1d, 1)
LazyConv2d = _lazy_conv(Conv2d, 2)
LazyConv3d = _lazy_conv(Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose(ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose(ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose(ConvTranspose3d, 3)


# -- normalization ------------------------------------------------------------------------

class _LazyNormBase(LazyModuleMixin):
    """What the lazy batch and instance norms share: ``num_features`` is ``input.shape[1]``
    (PyTorch's ``_LazyNormBase``)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        dtype = factory_dtype(device, dtype, type(self).__name__)
        # affine and running statistics off: their tensors are made by materialize
        super().__init__(0, eps, momentum, False, False, dtype=dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=np.int64)

    def reset_parameters(self):
        """Reset once materialized (before: nothing to reset)."""
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """Materialize the affine parameters and running statistics, ``input.shape[1]``
        features each."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base, example_shape):
    class LazyNorm(_LazyNormBase, base):
        cls_to_become = base

    name = f"Lazy{base.__name__}"
    LazyNorm.__name__ = LazyNorm.__qualname__ = name
    LazyNorm.__module__ = __name__
    LazyNorm.__doc__ = f"""A :class:`~oxmera.nn.{base.__name__}` whose ``num_features`` is
    ``input.shape[1]`` of the first input; it then becomes a ``{base.__name__}``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.{name}()
    >>> layer(oxmera.randn{example_shape}).shape[1], layer.num_features
    (3, 3)
    """
    return LazyNorm


LazyBatchNorm1d = _lazy_norm(BatchNorm1d, "(4, 3)")
LazyBatchNorm2d = _lazy_norm(BatchNorm2d, "(4, 3, 2, 2)")
LazyBatchNorm3d = _lazy_norm(BatchNorm3d, "(4, 3, 2, 2, 2)")
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, "(4, 3, 5)")
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, "(4, 3, 5, 5)")
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, "(4, 3, 2, 2, 2)")
