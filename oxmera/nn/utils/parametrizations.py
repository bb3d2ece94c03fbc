"""``oxmera.nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` as
parametrizations (``oxmera.nn.utils.parametrize``), PyTorch's current forms.

State-dict keys are PyTorch's: ``parametrizations.weight.original0`` (the
magnitude ``g``) and ``original1`` (the direction ``v``) for weight norm;
``parametrizations.weight.original`` and the power-iteration vectors
``parametrizations.weight.0._u``/``_v`` for spectral norm.
"""
from oxmera._core import autograd as _core
from oxmera.autograd import no_grad
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module
from oxmera.nn.utils import parametrize

__all__ = ["spectral_norm", "weight_norm"]

Tensor = _core.Tensor


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dimension but ``dim``, kept for broadcasting;
    ``dim=-1`` is the norm of the whole tensor (PyTorch's ``norm_except_dim``)."""
    if dim == -1:
        return (v * v).sum().sqrt()
    dims = tuple(d for d in range(v.ndim) if d != dim)
    if not dims:
        return v.abs()
    return (v * v).sum(dim=dims, keepdim=True).sqrt()


def _weight_norm(v, g, dim):
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norms over all dims but ``dim``).

    ``g`` (``original0``) and ``v`` (``original1``) become the parameters;
    ``dim=None`` takes one norm of the whole tensor. A state dict of the
    legacy form (``weight_g``/``weight_v``) also loads. Returns ``module``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
    >>> [name for name, _ in layer.named_parameters()]  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    >>> tuple(layer.parametrizations.weight.original0.shape)
    (2, 1)
    """
    if dim is not None and not -1 <= dim < getattr(module, name).ndim:
        raise IndexError(f"weight_norm(): dim {dim} is out of range for '{name}' of shape "
                         f"{tuple(getattr(module, name).shape)}")
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


def _normalize_into(target, value, eps):
    # PyTorch writes with out=: the buffer object stays the same.
    target.copy_(F.normalize(value, dim=0, eps=eps))


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            import oxmera
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = oxmera.empty(h, dtype=weight.dtype).normal_(0, 1)
            v = oxmera.empty(w, dtype=weight.dtype).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                _normalize_into(self._u, weight_mat @ self._v, self.eps)
                _normalize_into(self._v, weight_mat.T @ self._u, self.eps)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = (u * (weight_mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration.

    Each forward in training mode runs ``n_power_iterations`` steps,
    updating the buffers ``_u`` and ``_v``; in eval mode they are used as
    they are. ``dim`` is the output dimension (default 1 for transposed
    convolutions, else 0). Returns ``module``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 4))
    >>> s = oxmera.linalg.svdvals(layer.weight)
    >>> round(s[0].item(), 2)
    1.0
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
