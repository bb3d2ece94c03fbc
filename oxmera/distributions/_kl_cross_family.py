"""The closed-form KL divergences between different families, registered with
``register_kl`` on import (``oxmera.distributions`` imports this module).

A pair whose supports do not nest (``KL(Normal || Exponential)``: mass where the
second density is 0) is infinite. Same-family pairs are in ``kl``.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions import Exponential, Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Exponential(1.0)).item()
inf
"""
import math

import oxmera
from oxmera.distributions.bernoulli import Bernoulli
from oxmera.distributions.beta import Beta
from oxmera.distributions.binomial import Binomial
from oxmera.distributions.continuous_bernoulli import ContinuousBernoulli
from oxmera.distributions.exponential import Exponential
from oxmera.distributions.gamma import Gamma
from oxmera.distributions.gumbel import _EULER_GAMMA, Gumbel
from oxmera.distributions.kl import _infinite_like, register_kl
from oxmera.distributions.laplace import Laplace
from oxmera.distributions.normal import Normal
from oxmera.distributions.pareto import Pareto
from oxmera.distributions.poisson import Poisson
from oxmera.distributions.uniform import Uniform

__all__ = []


def _x_log_x(t):
    return oxmera.xlogy(t, t)  # 0 at t = 0


def _infinite_where(condition, result):
    return oxmera.where(condition, _infinite_like(result), result)


# -- pairs with no overlap of supports: infinite ------------------------------------------

def _register_infinite(p_type, q_types, parameter):
    def infinite(p, q):
        return _infinite_like(getattr(p, parameter))
    infinite.__name__ = f"_kl_{p_type.__name__.lower()}_infinity"
    for q_type in q_types:
        register_kl(p_type, q_type)(infinite)


_register_infinite(Beta, [Pareto], "concentration1")
_register_infinite(ContinuousBernoulli, [Pareto], "probs")
_register_infinite(Exponential, [Beta, ContinuousBernoulli, Pareto, Uniform], "rate")
_register_infinite(Gamma, [Beta, ContinuousBernoulli, Pareto, Uniform], "concentration")
_register_infinite(Gumbel, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform],
                   "loc")
_register_infinite(Laplace, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform],
                   "loc")
_register_infinite(Normal, [Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform],
                   "loc")
_register_infinite(Pareto, [Beta, ContinuousBernoulli, Uniform], "scale")
_register_infinite(Poisson, [Bernoulli, Binomial], "rate")


# -- p discrete ----------------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


# -- p = Beta ------------------------------------------------------------------------------

def _beta_mean(p):
    return p.concentration1 / (p.concentration1 + p.concentration0)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - oxmera.log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * _beta_mean(p)


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    expected_log = (p.concentration1.digamma()
                    - (p.concentration1 + p.concentration0).digamma())
    return (-p.entropy() + q.concentration.lgamma() - q.concentration * q.rate.log()
            - (q.concentration - 1) * expected_log + q.rate * _beta_mean(p))


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean = _beta_mean(p)
    var_normal = q.scale.pow(2)
    second_moment = mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)
    cross = 0.5 * second_moment - q.loc * mean + 0.5 * q.loc.pow(2)
    return -p.entropy() + 0.5 * (var_normal * 2 * math.pi).log() + cross / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _infinite_where(oxmera.logical_or(q.low > 0.0, q.high < 1.0), result)


# -- p = ContinuousBernoulli ---------------------------------------------------------------

@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - oxmera.log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + oxmera.log(q.scale)
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # as PyTorch: infinite unless [0, 1] lies strictly inside (low, high)
    return _infinite_where(oxmera.logical_or(q.low >= 0.0, q.high <= 1.0), result)


# -- p = Exponential -----------------------------------------------------------------------

@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * oxmera.log(ratio) + ratio + q.concentration.lgamma()
            + q.concentration * _EULER_GAMMA - (1 + _EULER_GAMMA))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate = p.rate * q.scale
    loc_scale = q.loc / q.scale
    return (scale_rate.log() - 1 - loc_scale
            + oxmera.exp(loc_scale) * scale_rate / (scale_rate + 1) + scale_rate.reciprocal())


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sq = p.rate.pow(2)
    cross = rate_sq.reciprocal() - q.loc / p.rate + 0.5 * q.loc.pow(2)
    return 0.5 * oxmera.log(rate_sq * var_normal * 2 * math.pi) - 1 + cross / var_normal


# -- p = Gamma -----------------------------------------------------------------------------

@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    rate_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = rate_scale.log() + p.concentration / rate_scale
    t3 = oxmera.exp(loc_scale) * (1 + rate_scale.reciprocal()).pow(-p.concentration) - loc_scale
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sq = p.rate.pow(2)
    t1 = (0.5 * oxmera.log(rate_sq * var_normal * 2 * math.pi) - p.concentration
          - p.concentration.lgamma())
    cross = (0.5 * (p.concentration.pow(2) + p.concentration) / rate_sq
             - q.loc * p.concentration / p.rate + 0.5 * q.loc.pow(2))
    return t1 + (p.concentration - 1) * p.concentration.digamma() + cross / var_normal


# -- p = Gumbel, Laplace -------------------------------------------------------------------

@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER_GAMMA - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER_GAMMA + 1)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * oxmera.log(2 * ratio / math.pi)
    cross = 0.5 * p.loc.pow(2) - p.loc * q.loc + 0.5 * q.loc.pow(2)
    return -t1 + ratio + cross / var_normal - 1


# -- p = Normal ----------------------------------------------------------------------------

@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_scale = q.loc / q.scale
    t3 = oxmera.exp(-mean_scale + 0.5 * var_ratio + loc_scale)
    return (-0.5 * var_ratio.log() + mean_scale - loc_scale + t3
            - 0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    standardized = loc_diff / p.scale
    t2 = math.sqrt(2 / math.pi) * p.scale * oxmera.exp(-0.5 * standardized.pow(2))
    t3 = loc_diff * oxmera.erf(math.sqrt(0.5) * standardized)
    return (-oxmera.log(p.scale / q.scale) + (t2 + t3) / q.scale
            - 0.5 * (1 + math.log(0.5 * math.pi)))


# -- p = Pareto (infinite where p's mean or variance is) -----------------------------------

@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate = p.scale * q.rate
    result = ((p.alpha / scale_rate).log() - p.alpha.reciprocal()
              + p.alpha * scale_rate / (p.alpha - 1) - 1)
    return _infinite_where(p.alpha <= 1, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    result = (p.alpha.log() - common + q.concentration.lgamma() - q.concentration * q.rate.log()
              + (1 - q.concentration) * common + q.rate * p.alpha * p.scale / (p.alpha - 1) - 1)
    return _infinite_where(p.alpha <= 1, result)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1
    return _infinite_where(p.alpha <= 2, result)


# -- p = Uniform ---------------------------------------------------------------------------

@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = (q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width) / width
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    result = t3 + t4 - oxmera.log(width) - t2
    return _infinite_where(oxmera.logical_or(p.high > 1.0, p.low < 0.0), result)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = -p.entropy() - p.mean * q.logits - oxmera.log1p(-q.probs) - q._cont_bern_log_norm()
    # as PyTorch: finite only for (low, high) strictly inside [0, 1]
    return _infinite_where(oxmera.logical_or(p.high >= 1.0, p.low <= 0.0), result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _infinite_where(p.low < 0.0, result)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    result = -width.log() + t2 + t3 + t4
    return _infinite_where(p.low < 0.0, result)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common = q.scale / (p.high - p.low)
    high = (p.high - q.loc) / q.scale
    low = (p.low - q.loc) / q.scale
    return (common.log() + 0.5 * (high + low)
            - common * (oxmera.exp(-high) - oxmera.exp(-low)))


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    result = t2 * (q.alpha + 1) - t1
    return _infinite_where(p.low < q.scale, result)
