"""The Cauchy (Lorentz) distribution."""
import math

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._scalar_family import _ScalarFamily
from oxmera.distributions.utils import _draw, _rng

__all__ = ["Cauchy"]


class Cauchy(_ScalarFamily):
    """The Cauchy distribution with median ``loc`` and half width ``scale``.

    Its mean and variance do not exist: ``mean`` is NaN, ``variance`` infinite.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Cauchy
    >>> d = Cauchy(oxmera.tensor(0.0), oxmera.tensor(1.0))
    >>> round(d.cdf(oxmera.tensor(1.0)).item(), 4)
    0.75
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    @property
    def mean(self):
        return oxmera.full(tuple(self._extended_shape()), float("nan"), dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return oxmera.full(tuple(self._extended_shape()), float("inf"), dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _draw(_rng("Cauchy.rsample()").standard_cauchy(shape), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        value = self._checked(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - oxmera.log(self.scale) - oxmera.log1p(z ** 2)

    def cdf(self, value):
        value = self._checked(value)
        return oxmera.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return oxmera.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + oxmera.log(self.scale)
