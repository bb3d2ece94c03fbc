"""The Dirichlet distribution over the probability simplex."""
import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.gamma import _standard_gamma

__all__ = ["Dirichlet"]


def _dirichlet_rsample(concentration, where):
    """Normalized standard-gamma draws, clamped into the open simplex as PyTorch does."""
    gammas = _standard_gamma(concentration, where)
    x = gammas / gammas.sum(-1, keepdim=True)
    info = np.finfo(concentration.dtype)
    return x.clamp(min=float(info.tiny), max=1 - float(info.eps))


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution with concentration ``concentration`` (last dim: the event).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Dirichlet
    >>> d = Dirichlet(oxmera.tensor([1.0, 1.0, 2.0]))
    >>> d.mean.tolist(), round(d.log_prob(oxmera.tensor([0.25, 0.25, 0.5])).item(), 4)
    ([0.25, 0.25, 0.5], 1.0986)
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        return _dirichlet_rsample(self.concentration.expand(*shape), "Dirichlet.rsample()")

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((oxmera.log(value) * (self.concentration - 1.0)).sum(-1)
                + oxmera.lgamma(self.concentration.sum(-1))
                - oxmera.lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        concentration_minus_one = (self.concentration - 1).clamp(min=0.0)
        mode = concentration_minus_one / concentration_minus_one.sum(-1, keepdim=True)
        # where every concentration is <= 1 the density is largest at a vertex: PyTorch
        # returns the one-hot vertex of the largest concentration
        all_small = (self.concentration < 1).all(-1, keepdim=True)
        vertex = oxmera.nn.functional.one_hot(self.concentration.argmax(-1),
                                              self.concentration.shape[-1]).to(mode.dtype)
        return oxmera.where(all_small, vertex, mode)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - oxmera.lgamma(x.sum(-1))

    @property
    def _mean_carrier_measure(self):
        # with theta = concentration the carrier is -sum(log x); E[log x_i] is
        # digamma(a_i) - digamma(a_0) (PyTorch leaves this undefined)
        total = self.concentration.sum(-1, keepdim=True)
        return -(oxmera.digamma(self.concentration) - oxmera.digamma(total)).sum(-1)

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (oxmera.lgamma(self.concentration).sum(-1) - oxmera.lgamma(a0)
                - (k - a0) * oxmera.digamma(a0)
                - ((self.concentration - 1.0) * oxmera.digamma(self.concentration)).sum(-1))
