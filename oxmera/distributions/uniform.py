"""The continuous uniform distribution on ``[low, high)``."""
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """Uniform on the half-open interval ``[low, high)``.

    Parameters
    ----------
    low, high : float or Tensor
        ``low < high``.
    validate_args : bool, optional

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Uniform
    >>> d = Uniform(oxmera.tensor([0.0]), oxmera.tensor([4.0]))
    >>> d.log_prob(oxmera.tensor([1.0])).exp().item(), d.mean.item()
    (0.25, 2.0)
    """


    @property
    def arg_constraints(self):
        # each bound checked against the other: low < high
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        if isinstance(low, numbers.Number) and isinstance(high, numbers.Number):
            batch_shape = ()
        else:
            batch_shape = tuple(self.low.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Uniform, batch_shape, _instance, ("low", "high"))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return oxmera.full_like(self.high, float("nan"))

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        rand = _draw(_rng("Uniform.rsample()").random(shape), self.low)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).to(self.low.dtype)
        ub = self.high.gt(value).to(self.low.dtype)
        return oxmera.log(lb * ub) - oxmera.log(self.high - self.low)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return oxmera.log(self.high - self.low)
