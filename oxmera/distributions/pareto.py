"""The Pareto (type I) distribution."""
from oxmera.distributions import constraints
from oxmera.distributions.exponential import Exponential
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import AffineTransform, ExpTransform
from oxmera.distributions.utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """The Pareto distribution with minimum ``scale`` and tail index ``alpha``:
    ``scale * exp(E)`` for ``E ~ Exponential(alpha)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Pareto
    >>> d = Pareto(oxmera.tensor(1.0), oxmera.tensor(3.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(2.0)).item(), 4)
    (1.5, -1.674)
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_family(Pareto, batch_shape, _instance, ("scale", "alpha"))
        new.transforms = [ExpTransform(), AffineTransform(loc=0, scale=new.scale)]
        return new

    @property
    def mean(self):
        alpha = self.alpha.clamp(min=1)  # infinite for alpha <= 1
        return alpha * self.scale / (alpha - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        alpha = self.alpha.clamp(min=2)  # infinite for alpha <= 2
        return self.scale.pow(2) * alpha / ((alpha - 1).pow(2) * (alpha - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
