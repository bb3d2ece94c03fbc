"""The legacy ``nn.utils.weight_norm`` / ``remove_weight_norm`` (a forward pre-hook),
kept because older PyTorch programs and checkpoints use it (``weight_g``/``weight_v``).
New code: ``oxmera.nn.utils.parametrizations.weight_norm``."""
import warnings

from oxmera.autograd import no_grad
from oxmera.nn.parameter import Parameter
from oxmera.nn.utils.parametrizations import _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook recomputing ``module.<name>`` from ``<name>_g`` and ``<name>_v``.

    Examples
    --------
    >>> from oxmera.nn.utils.weight_norm import WeightNorm
    >>> hook = WeightNorm("weight", 0)
    >>> hook.name, hook.dim
    ('weight', 0)
    """

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        # Without history: a graph kept on the attribute would hold g and v read-only
        # (oxmera locks what a graph saved) until the next forward; the pre-hook
        # recomputes it with history before each forward.
        with no_grad():
            setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Legacy weight normalization: parameters ``<name>_g`` and ``<name>_v``, and
    ``module.<name>`` recomputed before each forward. Deprecated in PyTorch (a
    FutureWarning, as there) for ``nn.utils.parametrizations.weight_norm``.

    Examples
    --------
    >>> import warnings
    >>> from oxmera import nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     layer = nn.utils.weight_norm(nn.Linear(3, 2))
    >>> list(layer.state_dict())
    ['bias', 'weight_g', 'weight_v']
    """
    warnings.warn("`oxmera.nn.utils.weight_norm` is deprecated in favor of "
                  "`oxmera.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                  stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo :func:`weight_norm`: ``module.<name>`` is a plain parameter again.

    Examples
    --------
    >>> import warnings
    >>> from oxmera import nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     layer = nn.utils.weight_norm(nn.Linear(3, 2))
    >>> list(nn.utils.remove_weight_norm(layer).state_dict())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            module._forward_pre_hooks_with_kwargs.pop(key, None)
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
