"""The Weibull distribution."""
import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.exponential import Exponential
from oxmera.distributions.gumbel import _EULER_GAMMA
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import AffineTransform, PowerTransform
from oxmera.distributions.utils import broadcast_all

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """The Weibull distribution with ``scale`` and shape ``concentration``:
    ``scale * E ** (1 / concentration)`` for ``E ~ Exponential(1)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Weibull
    >>> d = Weibull(oxmera.tensor(2.0), oxmera.tensor(1.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(2.0)).item(), 4)
    (2.0, -1.6931)
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(oxmera.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_family(Weibull, batch_shape, _instance,
                                  ("scale", "concentration", "concentration_reciprocal"))
        new.transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                          AffineTransform(loc=0, scale=new.scale)]
        return new

    @property
    def mean(self):
        return self.scale * oxmera.exp(oxmera.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        return (self.scale * ((self.concentration - 1) / self.concentration)
                ** self.concentration_reciprocal)

    @property
    def variance(self):
        return self.scale.pow(2) * (
            oxmera.exp(oxmera.lgamma(1 + 2 * self.concentration_reciprocal))
            - oxmera.exp(2 * oxmera.lgamma(1 + self.concentration_reciprocal)))

    def entropy(self):
        return (_EULER_GAMMA * (1 - self.concentration_reciprocal)
                + oxmera.log(self.scale * self.concentration_reciprocal) + 1)
