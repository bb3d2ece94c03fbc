"""``oxmera.nn.utils.parametrize``: a tensor of a module computed from others, as in PyTorch.

``register_parametrization(module, "weight", P)`` keeps the original tensor
in ``module.parametrizations.weight.original`` and makes ``module.weight``
a property returning ``P(original)``, recomputed at each access (or once
per ``cached()`` block). Assigning ``module.weight = value`` stores
``P.right_inverse(value)`` into the original. The module's class is swapped
for a subclass ``Parametrized<Name>`` holding the property, and state-dict
keys are PyTorch's (``parametrizations.weight.original``, or
``original0``, ``original1``... when ``right_inverse`` returns several
tensors), so PyTorch checkpoints of parametrized modules load.
"""
import contextlib
import copy

from oxmera._core import autograd as _core
from oxmera.autograd import no_grad
from oxmera.nn.modules.container import ModuleDict, ModuleList
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

Tensor = _core.Tensor

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Within the block, each parametrized tensor is computed once and reused.

    Useful when a parametrized weight is read several times per forward
    (e.g. in a recurrent loop). Blocks nest; the cache is emptied when the
    outermost one exits.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> from oxmera.nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Double())
    >>> with parametrize.cached():
    ...     layer.weight is layer.weight
    True
    >>> layer.weight is layer.weight
    False
    """
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_values(target, value):
    """Make ``target`` hold ``value`` (same object kept: optimizers hold it)."""
    if isinstance(value, Tensor) and value.requires_grad:
        value = value.detach()
    target.data = value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its ``original``.

    Made by :func:`register_parametrization`; reach it as
    ``module.parametrizations[name]``.

    Examples
    --------
    >>> from oxmera import nn
    >>> from oxmera.nn.utils import parametrize
    >>> layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", nn.Identity())
    >>> type(layer.parametrizations.weight).__name__
    'ParametrizationList'
    """

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = tuple(original.shape), original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, tuple, list)):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            if new is not original:
                with no_grad():
                    _set_values(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(value).__name__}.")
                value = value.detach()
                if isinstance(original, Parameter):
                    value = Parameter(value, original.requires_grad)
                value.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", value)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of "
                                 f"the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original_dtype}\n"
                                 f"parametrized dtype: {z.dtype}")
            if tuple(z.shape) != original_shape:
                raise ValueError(f"Registering a parametrization may not change the shape of "
                                 f"the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {original_shape}\n"
                                 f"parametrized shape: {tuple(z.shape)}")

    def right_inverse(self, value):
        """Store ``value`` by calling each parametrization's ``right_inverse`` in reverse."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       f"implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_values(self.original, value)
            else:
                if not isinstance(value, (tuple, list)) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of "
                                     f"{self.ntensors} tensors. Got {type(value).__name__}")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError(f"`right_inverse` must return a sequence of tensors. "
                                         f"Got element {i} of type {type(tensor).__name__}")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                         f"{tensor.dtype} while `original{i}` has dtype "
                                         f"{original_i.dtype}")
                    _set_values(original_i, tensor)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for i in range(1, len(self)):
            x = self[i](x)
        return x


def _getstate_error(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See: https://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _default_deepcopy(self, memo):
    # __getstate__ refuses pickling, which copy.deepcopy would use: copy the dict
    # instead (the replica shares the parametrized class, which holds no state).
    replica = memo.get(id(self))
    if replica is not None:
        return replica
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    return replica


def _inject_new_class(module):
    cls = module.__class__
    namespace = {"__getstate__": _getstate_error}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            tensor = _cache.get(key)
            if tensor is None:
                tensor = parametrization()
                _cache[key] = tensor
            return tensor
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has a parametrization (on ``tensor_name``, if given).

    Examples
    --------
    >>> from oxmera import nn
    >>> from oxmera.nn.utils import parametrize
    >>> layer = nn.Linear(2, 2)
    >>> parametrize.is_parametrized(layer)
    False
    >>> _ = parametrize.register_parametrization(layer, "weight", nn.Identity())
    >>> parametrize.is_parametrized(layer, "weight"), parametrize.is_parametrized(layer, "bias")
    (True, False)
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def type_before_parametrizations(module):
    """The class of ``module`` before any parametrization was registered.

    Examples
    --------
    >>> from oxmera import nn
    >>> from oxmera.nn.utils import parametrize
    >>> layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", nn.Identity())
    >>> type(layer).__name__, parametrize.type_before_parametrizations(layer).__name__
    ('ParametrizedLinear', 'Linear')
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` be ``parametrization(original)``; returns ``module``.

    ``tensor_name`` names a parameter or buffer (or a tensor parametrized
    already: the new parametrization is applied after the others). If
    ``parametrization`` has ``right_inverse``, the original is
    ``right_inverse(current value)`` (it may return several tensors, stored
    as ``original0``, ``original1``...); assigning to the attribute goes
    through it too. Unless ``unsafe``, the result must keep the tensor's
    shape and dtype (a ValueError otherwise).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> from oxmera.nn.utils import parametrize
    >>> class Symmetric(nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).transpose(0, 1)
    >>> layer = parametrize.register_parametrization(nn.Linear(3, 3), "weight", Symmetric())
    >>> bool((layer.weight == layer.weight.T).all())
    True
    >>> list(layer.state_dict())
    ['bias', 'parametrizations.weight.original']
    """
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization(): the parametrization must be an "
                        f"nn.Module, got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(f"Registering a parametrization may not change the dtype of "
                                 f"the tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.dtype: {y.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if tuple(x.shape) != tuple(y.shape):
                raise ValueError(f"Registering a parametrization may not change the shape of "
                                 f"the tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.shape: {tuple(y.shape)}\n"
                                 f"parametrization(module.{tensor_name}).shape: "
                                 f"{tuple(x.shape)}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a "
                                         f"tensor. Got: {type(z).__name__}")
                    if z.dtype != y.dtype or tuple(z.shape) != tuple(y.shape):
                        raise ValueError(f"The tensor returned by parametrization."
                                         f"right_inverse must have the same dtype and shape "
                                         f"as module.{tensor_name}, unless the `unsafe` flag "
                                         f"is enabled.\nmodule.{tensor_name}: "
                                         f"{y.dtype} {tuple(y.shape)}\nreturned: {z.dtype} "
                                         f"{tuple(z.shape)}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations of ``module.<tensor_name>``; returns ``module``.

    With ``leave_parametrized=True`` the tensor keeps its current
    (parametrized) value, else it goes back to the original. The Parameter
    object of the original stays the one the module holds (optimizers
    keep working) when there was a single original.

    Examples
    --------
    >>> from oxmera import nn
    >>> from oxmera.nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> layer = nn.Linear(2, 2)
    >>> before = layer.weight.detach().clone()
    >>> _ = parametrize.register_parametrization(layer, "weight", Double())
    >>> layer = parametrize.remove_parametrizations(layer, "weight")
    >>> type(layer).__name__, bool((layer.weight == 2 * before).all())
    ('Linear', True)
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _set_values(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            t = getattr(module, tensor_name).detach()
        first = parametrizations.original0
        if isinstance(first, Parameter):
            original = Parameter(t, first.requires_grad)
        else:
            original = t
            original.requires_grad_(first.requires_grad)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
