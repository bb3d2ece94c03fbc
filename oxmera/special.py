"""``oxmera.special``: special functions, as ``torch.special``.

A namespace only: each name is an op defined elsewhere (``oxmera.ops.special``
for the SciPy-backed ones, ``elementwise``/``pointwise``/``reduce``/``activation``
for the rest), under PyTorch's ``torch.special`` name (``expit`` is
``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma``...).

Functions NumPy lacks (gamma family, Bessel, ``erfinv``, ``erfcx``, ``ndtri``,
``log_ndtr``, ``zeta``, incomplete gammas) need SciPy, an optional dependency:
``pip install oxmera[scipy]``; without it they raise ImportError when called.

Not supported yet: ``airy_ai``, ``bessel_y0``/``y1``, ``modified_bessel_*``,
``scaled_modified_bessel_*``, ``spherical_bessel_j0``, the orthogonal
polynomials (``chebyshev_*``, ``hermite_*``, ``laguerre_*``, ``legendre_*``)
and ``log1p``'s siblings on complex numbers.
"""
from oxmera.ops.activation import log_softmax as _log_softmax
from oxmera.ops.activation import softmax as _softmax
from oxmera.ops.elementwise import erf, exp2, expm1, log1p, round
from oxmera.ops.elementwise import sigmoid as expit
from oxmera.ops.pointwise import erfc, logit, sinc, xlog1py, xlogy
from oxmera.ops.reduce import logsumexp
from oxmera.ops.special import (bessel_j0, bessel_j1, digamma, entr, erfcx, erfinv, gammainc,
                                gammaincc, i0, i0e, i1, i1e, log_ndtr, ndtri, polygamma, zeta)
from oxmera.ops.special import lgamma as gammaln
from oxmera.ops.special import mvlgamma as multigammaln

__all__ = [
    "expit", "logit", "erf", "erfc", "erfcx", "erfinv", "gammaln", "digamma", "psi",
    "polygamma", "multigammaln", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr",
    "xlogy", "xlog1py", "entr", "sinc", "logsumexp", "softmax", "log_softmax", "zeta",
    "expm1", "exp2", "log1p", "round", "gammainc", "gammaincc", "bessel_j0", "bessel_j1",
]

psi = digamma

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
