"""The half-normal distribution: ``|X|`` for a centred normal ``X``."""
import math

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.normal import Normal
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import AbsTransform

__all__ = ["HalfNormal"]


class _Folded(TransformedDistribution):
    """``|X|`` for ``X`` symmetric about 0 (``_base(scale)``): the density doubled on
    ``[0, inf)``; shared by ``HalfNormal`` and ``HalfCauchy``."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = self._base(0.0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return TransformedDistribution.expand(self, batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return oxmera.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return oxmera.where(value >= 0, log_prob, oxmera.full_like(log_prob, -math.inf))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """``|X|`` for ``X ~ Normal(0, scale)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import HalfNormal
    >>> d = HalfNormal(oxmera.tensor(1.0))
    >>> round(d.mean.item(), 4), round(d.log_prob(oxmera.tensor(0.0)).item(), 4)
    (0.7979, -0.2258)
    """

    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
