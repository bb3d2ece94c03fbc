"""``oxmera.scipy.stats.multivariate_normal``: the multivariate normal distribution.

As ``scipy.stats.multivariate_normal.logpdf``/``pdf``: ``x`` holds points
along its last axis (``(d,)`` one point, ``(..., d)`` several; for ``d = 1``
a vector is several points), ``mean`` is a ``(d,)`` vector (default 0) and
``cov`` a ``(d, d)`` matrix, a ``(d,)`` diagonal or a number (times the
identity). The result drops every axis of length 1, as SciPy's does.

Computed through the Cholesky factor of ``cov`` (:func:`oxmera.linalg.cholesky`
and :func:`oxmera.linalg.solve_triangular`), so it is differentiable in
``x``, ``mean`` and ``cov`` to any order (the gradient in ``cov`` is the
symmetric one). A covariance that is not positive definite raises
``oxmera.linalg.LinAlgError``; ``allow_singular=True`` (SciPy's
pseudo-determinant density) is not supported.
"""
import math

import oxmera
from oxmera.scipy._inputs import as_tensor
from oxmera.scipy.stats._families import squeeze_scipy

__all__ = ["logpdf", "pdf"]


def _covariance(cov, d):
    if cov.ndim == 0:
        return oxmera.eye(d, dtype=cov.dtype) * cov
    if cov.ndim == 1:
        return oxmera.diag_embed(cov)
    return cov


def logpdf(x, mean=None, cov=1, allow_singular=False):
    """The log density of the multivariate normal distribution at ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.stats
    >>> import oxmera
    >>> from oxmera.scipy.stats import multivariate_normal
    >>> x, mean, cov = [[0.5, 1.0], [1.5, -1.0]], [0.0, 1.0], [[2.0, 0.3], [0.3, 1.0]]
    >>> ours = multivariate_normal.logpdf(x, mean, cov)
    >>> bool(np.allclose(ours.numpy(), scipy.stats.multivariate_normal.logpdf(x, mean, cov)))
    True
    >>> m = oxmera.tensor(mean, dtype=oxmera.float64, requires_grad=True)
    >>> multivariate_normal.logpdf(x, m, cov).sum().backward()
    >>> m.grad
    tensor([ 1.3613, -2.4084], dtype=float64)
    """
    name = "multivariate_normal.logpdf"
    if allow_singular:
        raise NotImplementedError(f"{name}(): allow_singular=True (the pseudo-determinant "
                                  f"density of a singular covariance) is not supported")
    x = as_tensor(x, name, "x")
    cov = as_tensor(cov, name, "cov")
    mean = as_tensor(0.0 if mean is None else mean, name, "mean")
    if cov.ndim > 2 or mean.ndim > 1:
        raise ValueError(f"{name}(): cov must have at most 2 dimensions and mean 1, got cov of "
                         f"shape {tuple(cov.shape)} and mean of shape {tuple(mean.shape)}")
    d = cov.shape[0] if cov.ndim >= 1 else mean.shape[0] if mean.ndim == 1 else 1
    if cov.ndim == 2 and cov.shape != (d, d) or mean.ndim == 1 and mean.shape[0] != d:
        raise ValueError(f"{name}(): mean of shape {tuple(mean.shape)} and cov of shape "
                         f"{tuple(cov.shape)} do not describe one dimension")
    if d == 1 and (x.ndim == 0 or x.shape[-1] != 1):
        x = x.unsqueeze(-1)          # SciPy: for d = 1, each entry is a point
    if x.shape[-1] != d:
        raise ValueError(f"{name}(): x's last axis has length {x.shape[-1]}, the distribution's "
                         f"dimension is {d}")
    factor = oxmera.linalg.cholesky(_covariance(cov, d))
    centred = (x - mean).unsqueeze(-1)
    factor = factor.expand(tuple(centred.shape[:-2]) + (d, d))
    whitened = oxmera.linalg.solve_triangular(factor, centred, upper=False).squeeze(-1)
    log_det = oxmera.log(oxmera.diagonal(factor, 0, -2, -1)).sum(-1) * 2
    out = ((whitened * whitened).sum(-1) + log_det + d * math.log(2 * math.pi)) * -0.5
    return squeeze_scipy(out)


def pdf(x, mean=None, cov=1, allow_singular=False):
    """The density of the multivariate normal distribution at ``x``: ``exp(logpdf)``.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.stats
    >>> from oxmera.scipy.stats import multivariate_normal
    >>> ours = multivariate_normal.pdf([0.5, 1.0], [0.0, 1.0], 2.0)
    >>> bool(np.allclose(ours.numpy(), scipy.stats.multivariate_normal.pdf([0.5, 1.0],
    ...                                                                    [0.0, 1.0], 2.0)))
    True
    """
    return oxmera.exp(logpdf(x, mean, cov, allow_singular))
