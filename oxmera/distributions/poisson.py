"""The Poisson distribution."""
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution with mean ``rate``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Poisson
    >>> d = Poisson(oxmera.tensor(2.0))
    >>> round(d.log_prob(oxmera.tensor(1.0)).exp().item(), 4)
    0.2707
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else tuple(self.rate.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Poisson, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oxmera.no_grad():
            return _draw(_rng("Poisson.sample()").poisson(self.rate.detach().numpy(), shape),
                         self.rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return oxmera.xlogy(value, rate) - rate - oxmera.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (oxmera.log(self.rate),)

    def _log_normalizer(self, x):
        return oxmera.exp(x)
