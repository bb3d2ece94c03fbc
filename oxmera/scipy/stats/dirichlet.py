"""``oxmera.scipy.stats.dirichlet``: the Dirichlet distribution, as ``scipy.stats.dirichlet``.

``x`` holds the ``K`` components along its first axis (``(K,)`` one point,
``(K, N)`` N points; ``K - 1`` components are completed with ``1 - sum``),
``alpha`` is a ``(K,)`` vector of positive concentrations. As SciPy, a point
off the simplex (a component outside ``[0, 1]``, a sum not 1) raises
ValueError. Differentiable in ``x`` and ``alpha`` to any order.
"""
import oxmera
from oxmera.scipy import special
from oxmera.scipy._inputs import as_tensor
from oxmera.scipy.stats._families import squeeze_scipy

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    """The log density of the Dirichlet distribution at ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.stats
    >>> import oxmera
    >>> from oxmera.scipy.stats import dirichlet
    >>> x, alpha = [0.2, 0.3, 0.5], [1.5, 2.0, 3.0]
    >>> expected = scipy.stats.dirichlet.logpdf(x, alpha)
    >>> bool(np.allclose(dirichlet.logpdf(x, alpha).numpy(), expected))
    True
    >>> a = oxmera.tensor(alpha, dtype=oxmera.float64, requires_grad=True)
    >>> dirichlet.logpdf(x, a).backward()
    >>> a.grad
    tensor([0.147 , 0.1662, 0.177 ], dtype=float64)
    """
    name = "dirichlet.logpdf"
    x, alpha = as_tensor(x, name, "x"), as_tensor(alpha, name, "alpha")
    if alpha.ndim != 1:
        raise ValueError(f"{name}(): alpha must be a vector, got shape {tuple(alpha.shape)}")
    if bool(oxmera.any(oxmera.le(alpha.detach(), 0))):
        raise ValueError(f"{name}(): all parameters in alpha must be greater than 0")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(f"{name}(): x's first axis must have {k} (or {k - 1}) components, "
                         f"got shape {tuple(x.shape)}")
    if x.shape[0] == k - 1:
        x = oxmera.cat([x, (1 - x.sum(0)).unsqueeze(0)], 0)
    values = x.detach().numpy()
    if (values < 0).any() or (values > 1).any():
        raise ValueError(f"{name}(): each entry of x must be in [0, 1]")
    if abs(values.sum(0) - 1.0).max(initial=0.0) > 10e-10:
        raise ValueError(f"{name}(): the components of x must sum to 1 along the first axis")
    concentration = alpha.reshape((k,) + (1,) * (x.ndim - 1))
    normalizer = special.gammaln(alpha).sum() - special.gammaln(alpha.sum())
    out = special.xlogy(concentration - 1, x).sum(0) - normalizer
    return squeeze_scipy(out)


def pdf(x, alpha):
    """The density of the Dirichlet distribution at ``x``: ``exp(logpdf)``.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.stats
    >>> from oxmera.scipy.stats import dirichlet
    >>> x, alpha = [[0.2, 0.4], [0.8, 0.6]], [1.5, 2.0]
    >>> bool(np.allclose(dirichlet.pdf(x, alpha).numpy(), scipy.stats.dirichlet.pdf(x, alpha)))
    True
    """
    return oxmera.exp(logpdf(x, alpha))
