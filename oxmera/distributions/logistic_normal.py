"""The logistic-normal distribution on the simplex."""
from oxmera.distributions import constraints
from oxmera.distributions.normal import Normal
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """A normal vector ``X`` (``loc``, ``scale``; last dim ``n``) mapped onto the simplex of
    ``n + 1`` entries by stick breaking.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import LogisticNormal
    >>> d = LogisticNormal(oxmera.zeros(2), oxmera.ones(2))
    >>> tuple(d.event_shape), tuple(d.sample((4,)).shape)
    ((3,), (4, 3))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand((1,))
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
