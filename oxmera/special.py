"""``oxmera.special``: special functions, as ``torch.special``.

A namespace: most names are ops defined elsewhere (``oxmera.ops.special``
for the SciPy-backed ones and the orthogonal polynomials,
``elementwise``/``pointwise``/``reduce``/``activation`` for the rest), under
PyTorch's ``torch.special`` name (``expit`` is ``sigmoid``, ``gammaln`` is
``lgamma``, ``psi`` is ``digamma``...); the few composed of those ops are
written here (``ndtr``, ``spherical_bessel_j0``, the third- and fourth-kind
and shifted Chebyshev polynomials, ``softmax``/``log_softmax`` with a
required ``dim``).

Functions NumPy lacks (gamma family, Bessel and Airy functions, ``erfinv``,
``erfcx``, ``ndtri``, ``log_ndtr``, ``zeta``, incomplete gammas) need SciPy, an
optional dependency: ``pip install oxmera[scipy]``; without it they raise
ImportError when called.
"""
import math

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.ops.activation import log_softmax as _log_softmax
from oxmera.ops.activation import softmax as _softmax
from oxmera.ops.elementwise import erf, exp2, expm1, log1p, round, trunc
from oxmera.ops.elementwise import sigmoid as expit
from oxmera.ops.pointwise import erfc, logit, sinc, xlog1py, xlogy
from oxmera.ops.reduce import logsumexp
from oxmera.ops.special import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1,
                                chebyshev_polynomial_t, chebyshev_polynomial_u, digamma, entr,
                                erfcx, erfinv, gammainc, gammaincc, hermite_polynomial_h,
                                hermite_polynomial_he, i0, i0e, i1, i1e, laguerre_polynomial_l,
                                legendre_polynomial_p, log_ndtr, modified_bessel_k0,
                                modified_bessel_k1, ndtri, polygamma, scaled_modified_bessel_k0,
                                scaled_modified_bessel_k1, zeta)
from oxmera.ops.special import lgamma as gammaln
from oxmera.ops.special import mvlgamma as multigammaln

__all__ = [
    "expit", "logit", "erf", "erfc", "erfcx", "erfinv", "gammaln", "digamma", "psi",
    "polygamma", "multigammaln", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr",
    "xlogy", "xlog1py", "entr", "sinc", "logsumexp", "softmax", "log_softmax", "zeta",
    "expm1", "exp2", "log1p", "round", "gammainc", "gammaincc", "bessel_j0", "bessel_j1",
    "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "airy_ai",
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


def chebyshev_polynomial_v(input, n):
    """The Chebyshev polynomial of the third kind ``V_n(input) = U_n(input) - U_n-1(input)``.

    ``n`` (a number or a tensor) is truncated to an integer; a negative
    degree gives 0. Differentiable in ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.chebyshev_polynomial_v(oxmera.tensor([-0.5, 0.5, 2.0]), 3)
    tensor([ 1., -1., 41.], dtype=float32)
    """
    return chebyshev_polynomial_u(input, n) - chebyshev_polynomial_u(input, _lower(n))


def chebyshev_polynomial_w(input, n):
    """The Chebyshev polynomial of the fourth kind ``W_n(input) = U_n(input) + U_n-1(input)``.

    ``n`` (a number or a tensor) is truncated to an integer; a negative
    degree gives 0. Differentiable in ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.chebyshev_polynomial_w(oxmera.tensor([-0.5, 0.5, 2.0]), 3)
    tensor([ 1., -1., 71.], dtype=float32)
    """
    return chebyshev_polynomial_u(input, n) + chebyshev_polynomial_u(input, _lower(n))


def _lower(n):
    # the degree below n, truncated as the polynomials truncate it (2.7 -> 1)
    return int(n) - 1 if isinstance(n, (int, float)) else trunc(n) - 1


def _shifted(polynomial, kind):
    name = f"shifted_{polynomial.__name__}"

    def shifted(input, n):
        return polynomial(input * 2 - 1, n)
    shifted.__name__ = shifted.__qualname__ = name
    shifted.__doc__ = (
        f"The shifted Chebyshev polynomial of the {kind} kind: "
        f"``{polynomial.__name__}(2 * input - 1, n)``, for ``input`` in [0, 1].\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> oxmera.special.{name}(oxmera.tensor([0.25, 1.0]), 2)\n"
        f"{polynomial(Tensor(np.array([-0.5, 1.0], np.float32)), 2)!r}\n")
    return shifted


shifted_chebyshev_polynomial_t = _shifted(chebyshev_polynomial_t, "first")
shifted_chebyshev_polynomial_u = _shifted(chebyshev_polynomial_u, "second")
shifted_chebyshev_polynomial_v = _shifted(chebyshev_polynomial_v, "third")
shifted_chebyshev_polynomial_w = _shifted(chebyshev_polynomial_w, "fourth")


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
