"""Relaxed (concrete) Bernoulli distributions: reparameterizable stand-ins for a
Bernoulli, sharper as ``temperature`` falls."""
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._probs_logits import _one_of, _ProbsLogits
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.transforms import SigmoidTransform
from oxmera.distributions.utils import _draw, _rng, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_ProbsLogits, Distribution):
    """The logit of a relaxed Bernoulli: ``(logit(U) + logits) / temperature``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.relaxed_bernoulli import LogitRelaxedBernoulli
    >>> d = LogitRelaxedBernoulli(oxmera.tensor(0.5), probs=oxmera.tensor(0.3))
    >>> round(d.log_prob(oxmera.tensor(0.0)).item(), 4)
    -2.2538
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        name, value = _one_of(probs, logits)
        is_scalar = isinstance(value, numbers.Number)
        (value,) = broadcast_all(value)
        setattr(self, name, value)
        self._param = value
        super().__init__(() if is_scalar else tuple(value.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LogitRelaxedBernoulli, batch_shape, _instance, ("probs", "logits"))
        new.temperature = self.temperature
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(*shape))
        uniforms = clamp_probs(_draw(_rng("LogitRelaxedBernoulli.rsample()").random(shape),
                                     probs))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) \
            / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return oxmera.log(oxmera.as_tensor(self.temperature, dtype=logits.dtype)) + diff \
            - 2 * oxmera.nn.functional.softplus(diff)


class RelaxedBernoulli(TransformedDistribution):
    """A relaxed Bernoulli on ``(0, 1)``: ``sigmoid`` of a ``LogitRelaxedBernoulli``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import RelaxedBernoulli
    >>> d = RelaxedBernoulli(oxmera.tensor(0.5), probs=oxmera.tensor([0.3, 0.9]))
    >>> _ = oxmera.manual_seed(0); s = d.rsample((100,))
    >>> bool(oxmera.logical_and(s > 0, s < 1).all())
    True
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
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

