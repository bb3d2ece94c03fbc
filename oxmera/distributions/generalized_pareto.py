"""The generalized Pareto distribution."""
import math

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._scalar_family import _ScalarFamily
from oxmera.distributions.utils import _draw, _rng

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(_ScalarFamily):
    """The generalized Pareto distribution with ``loc``, ``scale`` and shape
    ``concentration`` (``xi``): exponential at ``xi = 0``, heavy-tailed for ``xi > 0``,
    bounded above by ``loc - scale / xi`` for ``xi < 0``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import GeneralizedPareto
    >>> d = GeneralizedPareto(oxmera.tensor(0.0), oxmera.tensor(1.0), oxmera.tensor(0.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(1.0)).item(), 4)
    (1.0, -1.0)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True
    _params = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args=None):
        super().__init__(loc, scale, concentration, validate_args=validate_args)

    def _safe_concentration(self):
        """``xi`` with its zeros replaced by 1 (the xi = 0 branch is taken separately, and
        its stand-in must not make the other branch's NaN gradients).

        The xi = 0 branches below are Taylor series in ``xi`` to second order rather than
        their limits, so first and second derivatives in ``concentration`` are right at
        ``concentration = 0`` too (PyTorch's limits give them as 0).
        """
        is_zero = oxmera.isclose(self.concentration, oxmera.zeros_like(self.concentration))
        return is_zero, oxmera.where(is_zero, oxmera.ones_like(self.concentration),
                                     self.concentration)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _draw(_rng("GeneralizedPareto.rsample()").random(shape), self.loc)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        is_zero, xi = self._safe_concentration()
        y = 1 / xi + oxmera.ones_like(z)
        nonzero = oxmera.where(y == 0, y, y * oxmera.log1p(xi * z))
        xi0 = self.concentration
        series = z + xi0 * (z - z ** 2 / 2) + xi0 ** 2 * (z ** 3 / 3 - z ** 2 / 2)
        return -self.scale.log() - oxmera.where(is_zero, series, nonzero)

    def log_survival_function(self, value):
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        is_zero, xi = self._safe_concentration()
        xi0 = self.concentration
        series = -(z - xi0 * z ** 2 / 2 + xi0 ** 2 * z ** 3 / 3)
        return oxmera.where(is_zero, series, -oxmera.log1p(xi * z) / xi)

    def log_cdf(self, value):
        """``log(cdf(value))``."""
        return oxmera.log1p(-oxmera.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return oxmera.exp(self.log_cdf(value))

    def icdf(self, value):
        is_zero, xi = self._safe_concentration()
        log_u = oxmera.log1p(-value)
        nonzero = self.loc + self.scale / xi * oxmera.expm1(-xi * log_u)
        xi0 = self.concentration
        series = self.loc + self.scale * (-log_u + xi0 * log_u ** 2 / 2 - xi0 ** 2 * log_u ** 3 / 6)
        return oxmera.where(is_zero, series, nonzero)

    @property
    def mean(self):
        valid = self.concentration < 1
        xi = oxmera.where(valid, self.concentration, oxmera.full_like(self.concentration, 0.5))
        result = self.loc + self.scale / (1 - xi)
        return oxmera.where(valid, result, oxmera.full_like(result, math.nan))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        xi = oxmera.where(valid, self.concentration, oxmera.full_like(self.concentration, 0.25))
        result = self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi))
        return oxmera.where(valid, result, oxmera.full_like(result, math.nan))

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (oxmera.log(self.scale) + self.concentration + 1).expand(*self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        bounded = lower - self.scale / self.concentration
        upper = oxmera.where(self.concentration < 0, bounded, oxmera.full_like(bounded, math.inf))
        return constraints.interval(lower, upper)
