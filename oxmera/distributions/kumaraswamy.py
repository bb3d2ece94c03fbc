"""The Kumaraswamy distribution on the unit interval."""
import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.gumbel import _EULER_GAMMA
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import AffineTransform, PowerTransform
from oxmera.distributions.uniform import Uniform
from oxmera.distributions.utils import broadcast_all

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """``E[X^n]`` of Kumaraswamy(a, b): ``b * B(1 + n/a, b)``."""
    arg1 = 1 + n / a
    log_value = oxmera.lgamma(arg1) + oxmera.lgamma(b) - oxmera.lgamma(arg1 + b)
    return b * oxmera.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution: ``(1 - U^(1/b))^(1/a)`` for ``U`` uniform, with
    ``a = concentration1`` and ``b = concentration0``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Kumaraswamy
    >>> d = Kumaraswamy(oxmera.tensor(1.0), oxmera.tensor(1.0))
    >>> round(d.mean.item(), 4), round(d.log_prob(oxmera.tensor(0.3)).item(), 4)
    (0.5, 0.0)
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(oxmera.zeros_like(self.concentration0),
                            oxmera.ones_like(self.concentration0), validate_args=validate_args)
        super().__init__(base_dist, self._transforms(), validate_args=validate_args)

    def _transforms(self):
        return [PowerTransform(exponent=self.concentration0.reciprocal()),
                AffineTransform(loc=1.0, scale=-1.0),
                PowerTransform(exponent=self.concentration1.reciprocal())]

    def expand(self, batch_shape, _instance=None):
        new = self._expand_family(Kumaraswamy, batch_shape, _instance,
                                  ("concentration1", "concentration0"))
        new.transforms = new._transforms()
        return new

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # in log space for accuracy; undefined (NaN) unless both concentrations >= 1
        log_mode = (self.concentration0.reciprocal() * (-self.concentration0).log1p()
                    - (-self.concentration0 * self.concentration1).log1p())
        undefined = oxmera.logical_or(self.concentration0 < 1, self.concentration1 < 1)
        return oxmera.where(undefined, oxmera.full_like(log_mode, float("nan")), log_mode.exp())

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = oxmera.digamma(self.concentration0 + 1) + _EULER_GAMMA
        return t0 + t1 * h0 - oxmera.log(self.concentration1) - oxmera.log(self.concentration0)
