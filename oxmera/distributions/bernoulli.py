"""The Bernoulli distribution."""
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._probs_logits import _one_of, _ProbsLogits
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(_ProbsLogits, ExponentialFamily):
    """The Bernoulli distribution: 1 with probability ``probs`` (or ``sigmoid(logits)``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Bernoulli
    >>> d = Bernoulli(probs=oxmera.tensor([0.25]))
    >>> round(d.log_prob(oxmera.tensor([1.0])).exp().item(), 4), tuple(d.enumerate_support().shape)
    (0.25, (2, 1))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = _one_of(probs, logits)
        is_scalar = isinstance(value, numbers.Number)
        (value,) = broadcast_all(value)
        setattr(self, name, value)
        self._param = value
        super().__init__(() if is_scalar else tuple(value.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return oxmera.where(self.probs == 0.5, oxmera.full_like(mode, float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oxmera.no_grad():
            probs = self.probs.detach().numpy()
            return _draw(_rng("Bernoulli.sample()").random(shape) < probs, self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # -binary_cross_entropy_with_logits; softplus (smooth, stable) rather than
        # max(l, 0) + log1p(exp(-|l|)), whose pieces have kinks at l = 0
        return logits * value - oxmera.nn.functional.softplus(logits)

    @property
    def _natural_params(self):
        return (oxmera.logit(self.probs),)

    def _log_normalizer(self, x):
        return oxmera.log1p(oxmera.exp(x))

    @property
    def _mean_carrier_measure(self):
        return 0

    def entropy(self):
        logits, probs = broadcast_all(self.logits, self.probs)
        return oxmera.nn.functional.softplus(logits) - logits * probs

    def enumerate_support(self, expand=True):
        values = oxmera.arange(2, dtype=self._param.dtype)
        values = values.view(-1, *((1,) * len(self._batch_shape)))
        if expand:
            values = values.expand(2, *self._batch_shape)
        return values
