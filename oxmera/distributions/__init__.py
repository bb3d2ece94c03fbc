"""Probability distributions, as ``torch.distributions``: parameters are tensors,
``log_prob``/``entropy``/``cdf``/``rsample`` are built from oxmera ops (so they are
differentiable, to second order), samples are drawn from ``oxmera.random``'s default
generator (``oxmera.manual_seed`` makes them repeatable; the numbers are NumPy's,
not PyTorch's).

Not supported (yet): complex parameters; a tensor
``total_count`` in ``Multinomial`` (as in PyTorch); the KL pairs PyTorch lacks
too (e.g. ``Laplace`` to ``Beta``). Sampling
draws NumPy's numbers: a seed gives other values than PyTorch's.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions import Normal, kl_divergence
>>> p = Normal(oxmera.tensor(0.0, requires_grad=True), 1.0)
>>> p.log_prob(oxmera.tensor(0.5)).backward()
>>> p.loc.grad.item()
0.5
"""
from oxmera.distributions.bernoulli import Bernoulli
from oxmera.distributions.beta import Beta
from oxmera.distributions.binomial import Binomial
from oxmera.distributions.categorical import Categorical
from oxmera.distributions.cauchy import Cauchy
from oxmera.distributions.chi2 import Chi2
from oxmera.distributions.continuous_bernoulli import ContinuousBernoulli
from oxmera.distributions.constraint_registry import biject_to, transform_to
from oxmera.distributions.dirichlet import Dirichlet
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.exponential import Exponential
from oxmera.distributions.fishersnedecor import FisherSnedecor
from oxmera.distributions.gamma import Gamma
from oxmera.distributions.generalized_pareto import GeneralizedPareto
from oxmera.distributions.geometric import Geometric
from oxmera.distributions.gumbel import Gumbel
from oxmera.distributions.half_cauchy import HalfCauchy
from oxmera.distributions.half_normal import HalfNormal
from oxmera.distributions.independent import Independent
from oxmera.distributions.inverse_gamma import InverseGamma
from oxmera.distributions.kl import kl_divergence, register_kl
from oxmera.distributions.kumaraswamy import Kumaraswamy
from oxmera.distributions.lkj_cholesky import LKJCholesky
from oxmera.distributions.laplace import Laplace
from oxmera.distributions.log_normal import LogNormal
from oxmera.distributions.logistic_normal import LogisticNormal
from oxmera.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from oxmera.distributions.mixture_same_family import MixtureSameFamily
from oxmera.distributions.multinomial import Multinomial
from oxmera.distributions.multivariate_normal import MultivariateNormal
from oxmera.distributions.negative_binomial import NegativeBinomial
from oxmera.distributions.normal import Normal
from oxmera.distributions.one_hot_categorical import (OneHotCategorical,
                                                      OneHotCategoricalStraightThrough)
from oxmera.distributions.pareto import Pareto
from oxmera.distributions.poisson import Poisson
from oxmera.distributions.relaxed_bernoulli import RelaxedBernoulli
from oxmera.distributions.relaxed_categorical import RelaxedOneHotCategorical
from oxmera.distributions.studentT import StudentT
from oxmera.distributions.transformed_distribution import TransformedDistribution
from oxmera.distributions.uniform import Uniform
from oxmera.distributions.von_mises import VonMises
from oxmera.distributions.weibull import Weibull
from oxmera.distributions.wishart import Wishart
from oxmera.distributions import _kl_cross_family  # noqa: F401  (registers the cross pairs)
from oxmera.distributions import constraints, transforms
from oxmera.distributions.transforms import *  # noqa: F403  (PyTorch exports them here too)

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2",
           "ContinuousBernoulli", "Dirichlet", "Distribution", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy",
           "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
           "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
           "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform",
           "VonMises", "Weibull", "Wishart", "biject_to", "kl_divergence", "register_kl",
           "transform_to", "constraints", "transforms"]
__all__ += transforms.__all__


from oxmera import _exports  # noqa: E402
# Loaded on first use (oxmera's __getattr__), after oxmera's own tidying of dir().
_exports.tidy_loaded_modules()
