"""The continuous Bernoulli distribution on ``[0, 1]`` (Loaiza-Ganem & Cunningham,
2019): density proportional to ``p^x (1 - p)^(1 - x)``.

Near ``p = 1/2`` the normalizer's closed form is 0/0; there (``lims``) the
values come from Taylor expansions about 1/2, as in PyTorch.
"""
import math
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import (_draw, _rng, broadcast_all, clamp_probs, lazy_property,
                                        logits_to_probs, probs_to_logits)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli with shape parameter ``probs`` (or ``logits``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import ContinuousBernoulli
    >>> d = ContinuousBernoulli(probs=oxmera.tensor(0.5))
    >>> round(d.mean.item(), 4), round(d.log_prob(oxmera.tensor(0.2)).item(), 4)
    (0.5, 0.0)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (probs,) = broadcast_all(probs)
            # checked before the clamp below, which would hide invalid values
            if validate_args is not None and not bool(constraints.unit_interval.check(probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(probs)
            self._param = self.probs
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
            self._param = self.logits
        self._lims = lims
        super().__init__(() if is_scalar else tuple(self._param.shape),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.shape

    def _stable(self):
        """Where ``probs`` is outside ``lims`` (the closed forms are accurate)."""
        return oxmera.logical_or(self.probs <= self._lims[0], self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs`` where stable, a stable stand-in elsewhere (so no branch makes NaNs,
        whose gradients would leak through ``where``)."""
        return oxmera.where(self._stable(), self.probs,
                            oxmera.full_like(self.probs, self._lims[0]))

    def _cont_bern_log_norm(self):
        cut = self._cut_probs()
        below_half = oxmera.where(cut <= 0.5, cut, oxmera.zeros_like(cut))
        above_half = oxmera.where(cut >= 0.5, cut, oxmera.ones_like(cut))
        log_norm = (oxmera.log(oxmera.abs(oxmera.log1p(-cut) - oxmera.log(cut)))
                    - oxmera.where(cut <= 0.5, oxmera.log1p(-2.0 * below_half),
                                   oxmera.log(2.0 * above_half - 1.0)))
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return oxmera.where(self._stable(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (oxmera.log1p(-cut) - oxmera.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return oxmera.where(self._stable(), mus, taylor)

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                     + 1.0 / (oxmera.log1p(-cut) - oxmera.log(cut)).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return oxmera.where(self._stable(), variances, taylor)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = _draw(_rng("ContinuousBernoulli.rsample()").random(shape), self.probs)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return logits * value - oxmera.nn.functional.softplus(logits) + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = oxmera.where(self._stable(), cdfs, value)
        return oxmera.where(value <= 0.0, oxmera.zeros_like(value),
                            oxmera.where(value >= 1.0, oxmera.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inverse = ((oxmera.log1p(-cut + value * (2.0 * cut - 1.0)) - oxmera.log1p(-cut))
                   / (oxmera.log(cut) - oxmera.log1p(-cut)))
        return oxmera.where(self._stable(), inverse, value)

    def entropy(self):
        log_probs0 = oxmera.log1p(-self.probs)
        log_probs1 = oxmera.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """``log((exp(x) - 1) / x)``, by its Taylor series near ``x = 0``."""
        stable = oxmera.logical_or(x <= self._lims[0] - 0.5, x > self._lims[1] - 0.5)
        cut_x = oxmera.where(stable, x, oxmera.full_like(x, self._lims[0] - 0.5))
        closed = oxmera.log(oxmera.abs(oxmera.expm1(cut_x))) - oxmera.log(oxmera.abs(cut_x))
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return oxmera.where(stable, closed, taylor)


