"""``oxmera.special``: special functions, as ``torch.special``.

A namespace only: each name is an op defined elsewhere (``oxmera.ops.special``
for the SciPy-backed ones, ``elementwise``/``pointwise``/``reduce``/``activation``
for the rest), under PyTorch's ``torch.special`` name (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``...).

Functions NumPy lacks (gamma family, Bessel, ``erfinv``, ``erfcx``, ``ndtri``,
``log_ndtr``, ``zeta``, incomplete gammas) need SciPy, an optional dependency:
``pip install oxmera[scipy]``; without it they raise ImportError when called.

Not supported yet: ``airy_ai`` and the orthogonal polynomials
(``chebyshev_polynomial_*``, ``shifted_chebyshev_polynomial_*``,
``hermite_polynomial_*``, ``laguerre_polynomial_l``, ``legendre_polynomial_p``).
"""
import math

from oxmera.ops.activation import log_softmax as _log_softmax
from oxmera.ops.activation import softmax as _softmax
from oxmera.ops.elementwise import erf, exp2, expm1, log1p, round
from oxmera.ops.elementwise import sigmoid as expit
from oxmera.ops.pointwise import erfc, logit, sinc, xlog1py, xlogy
from oxmera.ops.reduce import logsumexp
from oxmera.ops.special import (bessel_j0, bessel_j1, bessel_y0, bessel_y1, digamma, entr, erfcx,
                                erfinv, gammainc, gammaincc, i0, i0e, i1, i1e, log_ndtr,
                                modified_bessel_k0, modified_bessel_k1, ndtri, polygamma,
                                scaled_modified_bessel_k0, scaled_modified_bessel_k1, zeta)
from oxmera.ops.special import lgamma as gammaln
from oxmera.ops.special import mvlgamma as multigammaln

__all__ = [
    "expit", "logit", "erf", "erfc", "erfcx", "erfinv", "gammaln", "digamma", "psi",
    "polygamma", "multigammaln", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr",
    "xlogy", "xlog1py", "entr", "sinc", "logsumexp", "softmax", "log_softmax", "zeta",
    "expm1", "exp2", "log1p", "round", "gammainc", "gammaincc", "bessel_j0", "bessel_j1",
    "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
]

psi = digamma
modified_bessel_i0 = i0
modified_bessel_i1 = i1

_SQRT_HALF = 0.5 ** 0.5


def ndtr(input):
    """The standard normal CDF ``(1 + erf(x / sqrt(2))) / 2``, accurate in both tails
    (computed as ``erfc(-x / sqrt(2)) / 2``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.ndtr(oxmera.tensor([0.0, 1.96]))
    tensor([0.5  , 0.975], dtype=float32)
    """
    return erfc(input * -_SQRT_HALF) * 0.5


def spherical_bessel_j0(input):
    """The spherical Bessel function of the first kind, order 0: ``sin(x) / x``, 1 at 0.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.spherical_bessel_j0(oxmera.tensor([0.0, 1.0]))
    tensor([1.    , 0.8415], dtype=float32)
    """
    return sinc(input * (1 / math.pi))


def softmax(input, dim, *, dtype=None):
    """Softmax along ``dim`` (``dim`` is required here, as in ``torch.special``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.softmax(oxmera.tensor([0.0, 0.0]), 0)
    tensor([0.5, 0.5], dtype=float32)
    """
    return _softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax along ``dim`` (``dim`` is required here, as in ``torch.special``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.log_softmax(oxmera.tensor([0.0, 0.0]), 0)
    tensor([-0.6931, -0.6931], dtype=float32)
    """
    return _log_softmax(input, dim, dtype)
