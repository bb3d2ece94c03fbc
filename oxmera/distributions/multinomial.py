"""The multinomial distribution: counts of ``total_count`` categorical draws."""
import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.binomial import Binomial
from oxmera.distributions.categorical import Categorical
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _draw, _rng

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts per category of ``total_count`` draws with probabilities ``probs``/``logits``.

    ``total_count`` is one int for the whole batch (as in PyTorch); ``log_prob``
    does not need it.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Multinomial
    >>> d = Multinomial(2, probs=oxmera.tensor([0.5, 0.5]))
    >>> round(d.log_prob(oxmera.tensor([1.0, 1.0])).exp().item(), 4), d.mean.tolist()
    (0.5, [1.0, 1.0])
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        with oxmera.no_grad():
            probs = self.probs.detach().numpy().astype(np.float64)
            probs = probs / probs.sum(-1, keepdims=True)
            counts = _rng("Multinomial.sample()").multinomial(
                self.total_count, np.broadcast_to(probs, shape))
            return _draw(counts, self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits = self.logits
        shape = np.broadcast_shapes(tuple(logits.shape), tuple(value.shape))
        logits, value = logits.expand(*shape), value.expand(*shape)
        log_factorial_n = oxmera.lgamma(value.sum(-1) + 1)
        log_factorial_xs = oxmera.lgamma(value + 1).sum(-1)
        # 0 * -inf (a category of probability 0 never drawn) counts as 0
        min_real = float(np.finfo(logits.dtype).min)
        logits = oxmera.where(value == 0,
                              oxmera.zeros_like(logits), logits.clamp(min=min_real))
        log_powers = (logits * value).sum(-1)
        return log_factorial_n - log_factorial_xs + log_powers

    def entropy(self):
        n = oxmera.tensor(float(self.total_count), dtype=self.probs.dtype)
        term1 = n * self._categorical.entropy() - oxmera.lgamma(n + 1)
        # E[sum_i log(x_i!)], each count x_i Binomial(n, p_i)
        support = oxmera.arange(1, self.total_count + 1, dtype=self.probs.dtype)
        support = support.view(-1, *((1,) * self.probs.dim()))
        counts = Binomial(n, probs=self.probs, validate_args=False)
        binomial_probs = oxmera.exp(counts.log_prob(support))
        term2 = (binomial_probs * oxmera.lgamma(support + 1)).sum([0, -1])
        return term1 + term2
