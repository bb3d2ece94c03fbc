"""The log-normal distribution: ``exp`` of a normal."""
import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.normal import Normal
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """``exp(X)`` for ``X ~ Normal(loc, scale)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import LogNormal
    >>> d = LogNormal(oxmera.tensor(0.0), oxmera.tensor(1.0))
    >>> round(d.mean.item(), 4), round(d.log_prob(oxmera.tensor(1.0)).item(), 4)
    (1.6487, -0.9189)
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return oxmera.expm1(scale_sq) * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
