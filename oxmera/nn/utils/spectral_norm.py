"""The legacy ``nn.utils.spectral_norm`` / ``remove_spectral_norm`` (a forward
pre-hook, parameters ``weight_orig`` and buffers ``weight_u``/``weight_v``), kept for
older PyTorch programs and checkpoints. New code:
``oxmera.nn.utils.parametrizations.spectral_norm``."""
from oxmera.autograd import no_grad
from oxmera.nn import functional as F
from oxmera.nn.parameter import Parameter

__all__ = ["SpectralNorm", "remove_spectral_norm", "spectral_norm"]


class SpectralNorm:
    """The forward pre-hook dividing ``<name>_orig`` by its estimated largest singular value.

    Examples
    --------
    >>> from oxmera.nn.utils.spectral_norm import SpectralNorm
    >>> SpectralNorm("weight", n_power_iterations=2).n_power_iterations
    2
    """

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                # In place (PyTorch's out=): the buffers stay the same objects.
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(weight_mat.T @ u, dim=0, eps=self.eps))
                    u.copy_(F.normalize(weight_mat @ v, dim=0, eps=self.eps))
            u = u.clone()
            v = v.clone()
        sigma = (u * (weight_mat @ v)).sum()
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module,
                                                       do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        import oxmera
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(oxmera.empty(h, dtype=weight.dtype).normal_(0, 1), dim=0,
                            eps=fn.eps)
            v = F.normalize(oxmera.empty(w, dtype=weight.dtype).normal_(0, 1), dim=0,
                            eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Legacy spectral normalization: ``module.<name>`` is recomputed before each forward
    as ``<name>_orig / sigma`` (sigma by power iteration, updated in training mode).

    ``dim`` is the output dimension (default 1 for transposed convolutions,
    else 0). State-dict keys are PyTorch's (``weight_orig``, ``weight_u``,
    ``weight_v``). Returns ``module``.

    Examples
    --------
    >>> from oxmera import nn
    >>> layer = nn.utils.spectral_norm(nn.Linear(3, 2))
    >>> list(layer.state_dict())
    ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo :func:`spectral_norm`: ``module.<name>`` is a plain parameter again, holding
    the normalized value.

    Examples
    --------
    >>> from oxmera import nn
    >>> layer = nn.utils.spectral_norm(nn.Linear(3, 2))
    >>> list(nn.utils.remove_spectral_norm(layer).state_dict())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            module._forward_pre_hooks_with_kwargs.pop(key, None)
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
