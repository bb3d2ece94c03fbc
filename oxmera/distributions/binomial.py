"""The binomial distribution."""

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._probs_logits import _one_of, _ProbsLogits
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Binomial"]


class Binomial(_ProbsLogits, Distribution):
    """The number of successes in ``total_count`` Bernoulli(``probs``) trials.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Binomial
    >>> d = Binomial(4, probs=oxmera.tensor(0.5))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(2.0)).exp().item(), 4)
    (2.0, 0.375)
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        name, value = _one_of(probs, logits)
        total_count, value = broadcast_all(total_count, value)
        self.total_count = total_count.to(value.dtype)
        setattr(self, name, value)
        self._param = value
        super().__init__(tuple(value.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Binomial, batch_shape, _instance, ("total_count", "probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oxmera.no_grad():
            counts = self.total_count.detach().numpy().astype(np.int64)
            probs = self.probs.detach().numpy()
            return _draw(_rng("Binomial.sample()").binomial(counts, probs, shape), self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = oxmera.lgamma(self.total_count + 1)
        log_factorial_k = oxmera.lgamma(value + 1)
        log_factorial_nmk = oxmera.lgamma(self.total_count - value + 1)
        # k*logits - n*log1p(exp(logits)); softplus stays finite for large |logits|
        normalize_term = (self.total_count * oxmera.nn.functional.softplus(self.logits)
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max().item())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(oxmera.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max().item())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = oxmera.arange(1 + total_count, dtype=self._param.dtype)
        values = values.view(-1, *((1,) * len(self._batch_shape)))
        if expand:
            values = values.expand(1 + total_count, *self._batch_shape)
        return values


