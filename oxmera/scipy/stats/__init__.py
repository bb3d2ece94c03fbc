"""``oxmera.scipy.stats``: ``scipy.stats``' distributions over oxmera tensors, differentiable.

Each distribution is a module with SciPy's functions and parameter names,
as in ``jax.scipy.stats``: ``norm.logpdf(x, loc=0, scale=1)``,
``t.cdf(x, df, loc, scale)``, ``gamma.logpdf(x, a, loc, scale)``,
``poisson.logpmf(k, mu, loc=0)``, ``multivariate_normal.logpdf(x, mean, cov)``,
``dirichlet.logpdf(x, alpha)``... Frozen distributions (``norm(0, 1)``),
sampling (``rvs``) and fitting are not here: use :mod:`oxmera.distributions`
for sampling.

Every function is composed of oxmera ops, so it is differentiable in the
data and the parameters, to any order, except the CDFs whose derivative in a
shape parameter needs a function oxmera lacks: ``t.cdf``/``sf`` in ``df``,
``gamma.cdf``/``sf`` in ``a``, ``beta.cdf``/``sf`` in ``a`` and ``b``,
``poisson.cdf``/``sf`` in nothing but ``mu``, ``binom.cdf``/``sf`` in ``n``;
asking for those gradients raises NotImplementedError. The gradient of
``t.cdf`` at exactly ``x == loc`` is nan.

Examples
--------
>>> import oxmera
>>> from oxmera.scipy.stats import norm
>>> mu = oxmera.tensor(0.5, dtype=oxmera.float64, requires_grad=True)
>>> norm.logpdf([0.0, 1.0, 2.0], loc=mu).sum().backward()
>>> mu.grad
tensor(1.5, dtype=float64)
"""
from oxmera.scipy.stats import (beta, binom, cauchy, dirichlet, expon, gamma, laplace, logistic,
                                multivariate_normal, norm, poisson, t)

__all__ = ["norm", "multivariate_normal", "t", "gamma", "beta", "dirichlet", "poisson", "binom",
           "expon", "laplace", "cauchy", "logistic"]
