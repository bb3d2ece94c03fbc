"""The negative binomial distribution."""
import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._probs_logits import _one_of, _ProbsLogits
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_ProbsLogits, Distribution):
    """Successes before ``total_count`` failures of Bernoulli(``probs``) trials.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import NegativeBinomial
    >>> d = NegativeBinomial(oxmera.tensor(2.0), probs=oxmera.tensor(0.5))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(0.0)).exp().item(), 4)
    (2.0, 0.25)
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        name, value = _one_of(probs, logits)
        total_count, value = broadcast_all(total_count, value)
        self.total_count = total_count.to(value.dtype)
        setattr(self, name, value)
        self._param = value
        super().__init__(tuple(value.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(NegativeBinomial, batch_shape, _instance,
                             ("total_count", "probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def mean(self):
        return self.total_count * oxmera.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / oxmera.sigmoid(-self.logits)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oxmera.no_grad():
            # a Poisson whose rate is Gamma(total_count, rate=exp(-logits))
            rng = _rng("NegativeBinomial.sample()")
            rates = rng.gamma(self.total_count.detach().numpy(), self.logits.exp().detach().numpy(),
                              shape)
            return _draw(rng.poisson(rates), self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logsigmoid = oxmera.nn.functional.logsigmoid
        log_unnormalized = (self.total_count * logsigmoid(-self.logits)
                            + value * logsigmoid(self.logits))
        log_normalization = (-oxmera.lgamma(self.total_count + value) + oxmera.lgamma(1.0 + value)
                             + oxmera.lgamma(self.total_count))
        # total_count = value = 0: the probability is 1 (lgamma(0) is infinite)
        both_zero = (self.total_count + value) == 0
        log_normalization = oxmera.where(both_zero, oxmera.zeros_like(log_normalization),
                                         log_normalization)
        return log_unnormalized - log_normalization
