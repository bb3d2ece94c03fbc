"""The exponential distribution."""
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution with rate ``rate`` (mean ``1 / rate``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Exponential
    >>> d = Exponential(oxmera.tensor(2.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(1.0)).item(), 4)
    (0.5, -1.3069)
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else tuple(self.rate.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return oxmera.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _draw(_rng("Exponential.rsample()").standard_exponential(shape), self.rate)
        return eps / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return oxmera.log(self.rate) - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - oxmera.exp(-self.rate * value)

    def icdf(self, value):
        return -oxmera.log1p(-value) / self.rate

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -oxmera.log(-x)

    @property
    def _mean_carrier_measure(self):
        return 0

    def entropy(self):
        return 1.0 - oxmera.log(self.rate)
