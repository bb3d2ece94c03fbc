"""``oxmera.scipy``: the SciPy functions NumPy code differentiates.

As ``autograd.scipy`` and ``jax.scipy``: SciPy's names, argument names and
conventions (``axis``, ``loc``/``scale``, ``lower=``...), taking and returning
oxmera Tensors, differentiable. Calling SciPy itself on a tensor that requires
grad fails (SciPy turns it into an array, which would silently drop the
graph); call the twin here instead:

- :mod:`oxmera.scipy.special`: ``logsumexp``, ``gammaln``, ``betaln``,
  ``erfinv``, ``expit``, ``xlogy``, ``iv``, ``softmax``...
- :mod:`oxmera.scipy.stats`: ``norm``, ``multivariate_normal``, ``t``,
  ``gamma``, ``beta``, ``dirichlet``, ``poisson``, ``binom``, ``expon``,
  ``laplace``, ``cauchy``, ``logistic`` with ``logpdf``/``pdf``/``cdf``/...
- :mod:`oxmera.scipy.linalg`: ``solve_triangular``, ``cho_factor``/
  ``cho_solve``, ``lu_factor``/``lu_solve``, ``expm``, ``sqrtm``, ``logm``,
  ``block_diag``.
- :mod:`oxmera.scipy.signal`: ``convolve``, ``correlate``.
- :mod:`oxmera.scipy.integrate`: ``odeint``, ``solve_ivp``.

Values come from SciPy where oxmera has no NumPy formula (an optional
dependency, imported at the first call: ``pip install oxmera[scipy]``);
gradients are VJPs written with oxmera ops, so second derivatives work too.
Most names map onto ops oxmera already has (``gammaln`` is
:func:`oxmera.lgamma`); the rest are composed of them.

Examples
--------
>>> import oxmera
>>> import oxmera.scipy.special
>>> x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
>>> oxmera.scipy.special.logsumexp(x).backward()
>>> x.grad
tensor([0.2689, 0.7311], dtype=float64)
"""
from oxmera import _exports
from oxmera.scipy import integrate, linalg, signal, special, stats

__all__ = ["special", "stats", "linalg", "signal", "integrate"]

# oxmera.scipy is imported on its own, after oxmera's own tidying: dir() of
# its modules lists their __all__, not their imports
_exports.tidy_loaded_modules()
