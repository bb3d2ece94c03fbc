"""The normal (Gaussian) distribution."""
import math
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Normal"]


class Normal(ExponentialFamily):
    """The normal distribution with mean ``loc`` and standard deviation ``scale``.

    Parameters
    ----------
    loc : float or Tensor
    scale : float or Tensor
        Positive.
    validate_args : bool, optional

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Normal
    >>> d = Normal(oxmera.tensor([0.0]), oxmera.tensor([1.0]))
    >>> round(d.log_prob(oxmera.tensor([0.0])).item(), 4)
    -0.9189
    >>> _ = oxmera.manual_seed(0); tuple(d.rsample((5,)).shape)
    (5, 1)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            batch_shape = ()
        else:
            batch_shape = tuple(self.loc.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Normal, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=()):
        with oxmera.no_grad():
            shape = self._extended_shape(sample_shape)
            return _draw(_rng("Normal.sample()").normal(self.loc.detach().numpy(),
                                                           self.scale.detach().numpy(), shape),
                         self.loc)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _draw(_rng("Normal.rsample()").standard_normal(shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = oxmera.log(self.scale)
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + oxmera.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * oxmera.erfinv(2 * value - 1) * math.sqrt(2)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * oxmera.log(-math.pi / y)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + oxmera.log(self.scale)
