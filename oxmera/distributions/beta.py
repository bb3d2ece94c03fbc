"""The beta distribution: a two-category Dirichlet."""
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.dirichlet import Dirichlet
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """The beta distribution with ``concentration1`` (alpha) and ``concentration0`` (beta).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Beta
    >>> d = Beta(oxmera.tensor(2.0), oxmera.tensor(2.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(0.5)).item(), 4)
    (0.5, 0.4055)
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        numbers_given = (isinstance(concentration1, numbers.Number)
                         and isinstance(concentration0, numbers.Number))
        if numbers_given:
            concentration1_0 = oxmera.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            concentration1_0 = oxmera.stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(concentration1_0, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        new._dirichlet = self._dirichlet.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        heads_tails = oxmera.stack([value, 1.0 - value], -1)
        return self._dirichlet.log_prob(heads_tails)

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return oxmera.lgamma(x) + oxmera.lgamma(y) - oxmera.lgamma(x + y)

    @property
    def _mean_carrier_measure(self):
        # with theta = (a, b) the carrier is -log x - log(1 - x) (PyTorch leaves this
        # undefined): its mean is -(digamma(a) + digamma(b) - 2 digamma(a + b))
        a, b = self.concentration1, self.concentration0
        return -(oxmera.digamma(a) + oxmera.digamma(b) - 2 * oxmera.digamma(a + b))

    def entropy(self):
        return self._dirichlet.entropy()
