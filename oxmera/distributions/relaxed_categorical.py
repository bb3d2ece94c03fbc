"""Relaxed one-hot categorical distributions (Gumbel-softmax / concrete)."""
import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.categorical import Categorical
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import ExpTransform
from oxmera.distributions.utils import _draw, _rng, broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a relaxed one-hot categorical: ``log_softmax((logits + G) / temperature)``
    with ``G`` standard Gumbel noise.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.relaxed_categorical import ExpRelaxedCategorical
    >>> d = ExpRelaxedCategorical(oxmera.tensor(1.0), probs=oxmera.tensor([0.2, 0.8]))
    >>> _ = oxmera.manual_seed(0); round(d.rsample().exp().sum().item(), 4)
    1.0
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        uniforms = clamp_probs(_draw(_rng("ExpRelaxedCategorical.rsample()").random(shape),
                                     self.logits))
        gumbels = -((-(uniforms.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        temperature = oxmera.as_tensor(self.temperature, dtype=logits.dtype)
        log_scale = oxmera.lgamma(oxmera.full_like(temperature, float(k))) \
            + (k - 1) * temperature.log()
        score = logits - value * temperature
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """A relaxed one-hot categorical on the simplex: ``exp`` of an
    ``ExpRelaxedCategorical`` (the Gumbel-softmax distribution).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import RelaxedOneHotCategorical
    >>> d = RelaxedOneHotCategorical(oxmera.tensor(0.5), probs=oxmera.tensor([0.2, 0.8]))
    >>> _ = oxmera.manual_seed(0); round(d.rsample().sum().item(), 4)
    1.0
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
