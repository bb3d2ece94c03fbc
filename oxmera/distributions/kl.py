"""``kl_divergence(p, q)`` and its registry of closed forms, ``register_kl``.

A pair is dispatched to the most specific registered pair of classes (by both
MROs); a pair with no closed form raises ``NotImplementedError`` as PyTorch does.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions import Normal, kl_divergence
>>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0)).item()
0.5
"""

import numpy as np

import oxmera
from oxmera.distributions.bernoulli import Bernoulli
from oxmera.distributions.beta import Beta
from oxmera.distributions.binomial import Binomial
from oxmera.distributions.categorical import Categorical
from oxmera.distributions.cauchy import Cauchy
from oxmera.distributions.continuous_bernoulli import ContinuousBernoulli
from oxmera.distributions.dirichlet import Dirichlet
from oxmera.distributions.exp_family import (ExponentialFamily, _bregman_gradients,
                                             _detached_unless_needed)
from oxmera.distributions.exponential import Exponential
from oxmera.distributions.gamma import Gamma
from oxmera.distributions.geometric import Geometric
from oxmera.distributions.half_normal import HalfNormal
from oxmera.distributions.gumbel import Gumbel, _EULER_GAMMA
from oxmera.distributions.independent import Independent
from oxmera.distributions.laplace import Laplace
from oxmera.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from oxmera.distributions.multivariate_normal import (MultivariateNormal, _batch_mahalanobis,
                                                      _half_log_det, _solve_lower)
from oxmera.distributions.normal import Normal
from oxmera.distributions.one_hot_categorical import OneHotCategorical
from oxmera.distributions.pareto import Pareto
from oxmera.distributions.poisson import Poisson
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.uniform import Uniform
from oxmera.distributions.utils import _sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}
_KL_MEMOIZE = {}


def register_kl(type_p, type_q):
    """Decorator: register ``fn(p, q)`` as the KL divergence of ``type_p`` from ``type_q``.

    Examples
    --------
    >>> from oxmera.distributions import Distribution, register_kl
    >>> class MyDist(Distribution):
    ...     pass
    >>> @register_kl(MyDist, MyDist)
    ... def _kl_mine(p, q):
    ...     return 0.0
    """
    if not isinstance(type_p, type) or not issubclass(type_p, object):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()
        return fun
    return decorator


def _dispatch_kl(type_p, type_q):
    matches = [(super_p, super_q) for super_p, super_q in _KL_REGISTRY
               if issubclass(type_p, super_p) and issubclass(type_q, super_q)]
    if not matches:
        return NotImplemented

    def rank(pair):
        return type_p.__mro__.index(pair[0]), type_q.__mro__.index(pair[1])
    return _KL_REGISTRY[min(matches, key=rank)]


def kl_divergence(p, q):
    """The Kullback-Leibler divergence ``KL(p || q)``, batched.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Bernoulli, kl_divergence
    >>> round(kl_divergence(Bernoulli(0.5), Bernoulli(0.5)).item(), 6)
    0.0
    """
    key = type(p), type(q)
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _dispatch_kl(*key)
        _KL_MEMOIZE[key] = fun
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


def _infinite_like(t):
    return oxmera.full_like(t, float("inf"))


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer, for two members of one family."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_natural = p._natural_params
    p_params, p_value, gradients = _bregman_gradients(p._log_normalizer, p_natural)
    q_params = q._natural_params
    result = q._log_normalizer(*q_params) - p_value
    for p_param, q_param, gradient in zip(p_params, q_params, gradients):
        result = result - _sum_rightmost((q_param - p_param) * gradient, len(q.event_shape))
    return _detached_unless_needed(result, tuple(p_natural) + tuple(q_params))


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - oxmera.log(var_ratio))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    softplus = oxmera.nn.functional.softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = oxmera.where(q.probs == 0, _infinite_like(t1), t1)
    t1 = oxmera.where(p.probs == 0, oxmera.zeros_like(t1), t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = oxmera.where(q.probs == 1, _infinite_like(t2), t2)
    t2 = oxmera.where(p.probs == 1, oxmera.zeros_like(t2), t2)
    return t1 + t2


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p() - (-q.probs).log1p())
    inf_idxs = p.total_count > q.total_count
    return oxmera.where(inf_idxs, _infinite_like(kl), kl)


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = oxmera.where(q.probs == 0, _infinite_like(t), t)
    t = oxmera.where(p.probs == 0, oxmera.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_params_p = p.concentration1 + p.concentration0
    sum_params_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_params_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_params_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * oxmera.digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * oxmera.digamma(p.concentration0)
    t5 = (sum_params_q - sum_params_p) * oxmera.digamma(sum_params_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p_concentration = p.concentration.sum(-1)
    sum_q_concentration = q.concentration.sum(-1)
    t1 = sum_p_concentration.lgamma() - sum_q_concentration.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = oxmera.digamma(p.concentration) - oxmera.digamma(sum_p_concentration).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * oxmera.log(p.rate / q.rate)
    t2 = oxmera.lgamma(q.concentration) - oxmera.lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * oxmera.digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _EULER_GAMMA
    t3 = oxmera.exp(ct2 + oxmera.lgamma(1 + ct1) - ct3)
    return t1 + t2 + t3 - (1 + _EULER_GAMMA)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * oxmera.exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = oxmera.logical_or(q.low > p.low, q.high < p.high)
    return oxmera.where(outside, _infinite_like(result), result)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + oxmera.log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - oxmera.log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - oxmera.log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    # p puts mass below q's support
    return oxmera.where(p.scale < q.scale, _infinite_like(result), result)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    half_term1 = (_half_log_det(q._unbroadcasted_scale_tril)
                  - _half_log_det(p._unbroadcasted_scale_tril))
    n = p.event_shape[0]
    shape = np.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    q_tril = q._unbroadcasted_scale_tril.expand(*(shape + (n, n)))
    p_tril = p._unbroadcasted_scale_tril.expand(*(shape + (n, n)))
    # tr(Sigma_q^{-1} Sigma_p) = ||L_q^{-1} L_p||_F^2
    term2 = _solve_lower(q_tril, p_tril).pow(2).sum([-2, -1])
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_via_full_covariance(p, q):
    """Both as full-covariance normals (O(n^3); exact)."""
    def full(d):
        if isinstance(d, MultivariateNormal):
            return d
        return MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix, validate_args=False)
    return _kl_multivariatenormal_multivariatenormal(full(p), full(q))


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    result = kl_divergence(p.base_dist, q.base_dist)
    return _sum_rightmost(result, p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


