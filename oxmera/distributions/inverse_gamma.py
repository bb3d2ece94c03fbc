"""The inverse-gamma distribution: ``1 / X`` for ``X ~ Gamma``."""
import math

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.gamma import Gamma
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """``1 / X`` for ``X ~ Gamma(concentration, rate)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import InverseGamma
    >>> d = InverseGamma(oxmera.tensor(3.0), oxmera.tensor(2.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(1.0)).item(), 4)
    (1.0, -0.6137)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        minus_one = oxmera.tensor(-1.0, dtype=base_dist.rate.dtype)
        super().__init__(base_dist, PowerTransform(minus_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return oxmera.where(self.concentration > 1, result, oxmera.full_like(result, math.inf))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return oxmera.where(self.concentration > 2, result, oxmera.full_like(result, math.inf))

    def entropy(self):
        return (self.concentration + self.rate.log() + self.concentration.lgamma()
                - (1 + self.concentration) * self.concentration.digamma())
