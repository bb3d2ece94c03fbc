"""The Gumbel (type-I extreme value) distribution."""
import math

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._scalar_family import _ScalarFamily
from oxmera.distributions.utils import _draw, _rng

__all__ = ["Gumbel"]

_EULER_GAMMA = 0.57721566490153286060


class Gumbel(_ScalarFamily):
    """The Gumbel distribution with location ``loc`` and scale ``scale``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Gumbel
    >>> d = Gumbel(oxmera.tensor(0.0), oxmera.tensor(1.0))
    >>> round(d.mean.item(), 4), round(d.log_prob(oxmera.tensor(0.0)).item(), 4)
    (0.5772, -1.0)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # uniform on (tiny, 1 - eps) as PyTorch clamps it: both logs stay finite
        info = np.finfo(self.loc.dtype)
        u = _draw(_rng("Gumbel.rsample()").uniform(float(info.tiny), 1 - float(info.eps), shape),
                  self.loc)
        return self.loc - self.scale * oxmera.log(-oxmera.log(u))

    def log_prob(self, value):
        value = self._checked(value)
        z = (value - self.loc) / self.scale
        return -(z + oxmera.exp(-z)) - oxmera.log(self.scale)

    def cdf(self, value):
        value = self._checked(value)
        return oxmera.exp(-oxmera.exp(-(value - self.loc) / self.scale))

    def icdf(self, value):
        return self.loc - self.scale * oxmera.log(-oxmera.log(value))

    def entropy(self):
        return oxmera.log(self.scale) + (1 + _EULER_GAMMA)
