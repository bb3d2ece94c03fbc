"""The Laplace (double exponential) distribution."""
import math

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._scalar_family import _ScalarFamily
from oxmera.distributions.utils import _draw, _rng

__all__ = ["Laplace"]


class Laplace(_ScalarFamily):
    """The Laplace distribution with location ``loc`` and scale ``scale``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Laplace
    >>> d = Laplace(oxmera.tensor(0.0), oxmera.tensor(1.0))
    >>> round(d.log_prob(oxmera.tensor(1.0)).item(), 4), d.variance.item()
    (-1.6931, 2.0)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        # uniform on the open interval (-1, 1): log1p(-|u|) stays finite
        low = float(np.nextafter(np.array(-1.0, dtype=self.loc.dtype), 0))
        u = _draw(_rng("Laplace.rsample()").uniform(low, 1.0, shape), self.loc)
        return self.loc - self.scale * u.sign() * oxmera.log1p(-u.abs())

    def log_prob(self, value):
        value = self._checked(value)
        return -oxmera.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        value = self._checked(value)
        z = (value - self.loc) / self.scale
        return 0.5 - 0.5 * z.sign() * oxmera.expm1(-z.abs())

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * oxmera.log1p(-2 * term.abs())

    def entropy(self):
        return 1 + oxmera.log(2 * self.scale)
