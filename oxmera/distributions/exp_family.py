"""``ExponentialFamily``: distributions of the form
``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``, whose entropy and
same-family KL divergence follow from the log normalizer ``F`` by
differentiation (Bregman divergences; Nielsen & Nock, "Entropies and
cross-entropies of exponential families").
"""
import oxmera
from oxmera.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


def _bregman_gradients(log_normalizer, natural_params):
    """``F(theta)`` and ``dF/dtheta`` for each natural parameter, the gradients recorded so
    the results stay differentiable in the distribution's parameters (PyTorch detaches
    them instead)."""
    params = [p if p.requires_grad else p.detach().requires_grad_() for p in natural_params]
    with oxmera.enable_grad():
        value = log_normalizer(*params)
        gradients = oxmera.autograd.grad(value.sum(), params, create_graph=True)
    return params, value, gradients


def _detached_unless_needed(result, natural_params):
    """``result`` cut from the graph the differentiation built when no parameter of the
    distribution(s) required grad, so it does not require grad either."""
    if any(isinstance(p, oxmera.Tensor) and p.requires_grad for p in natural_params):
        return result
    return result.detach()


class ExponentialFamily(Distribution):
    """The base class of exponential-family distributions.

    A subclass defines ``_natural_params`` (a tuple of tensors ``theta``),
    ``_log_normalizer(*theta)`` and ``_mean_carrier_measure`` (``E[k(x)]``);
    ``entropy`` is then ``F(theta) - <theta, grad F(theta)> - E[k(x)]``, and
    ``kl_divergence`` between two members of the same family the Bregman
    divergence of ``F``. The families here also have closed forms, which win.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import ExponentialFamily, Normal
    >>> d = Normal(oxmera.tensor(0.0), oxmera.tensor(2.0))
    >>> isinstance(d, ExponentialFamily)
    True
    >>> round(ExponentialFamily.entropy(d).item(), 4), round(d.entropy().item(), 4)
    (2.1121, 2.1121)
    """

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        natural_params = self._natural_params
        params, value, gradients = _bregman_gradients(self._log_normalizer, natural_params)
        result = value - self._mean_carrier_measure
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(*self._batch_shape, -1).sum(-1)
        return _detached_unless_needed(result, natural_params)
