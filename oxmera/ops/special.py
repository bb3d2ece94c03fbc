"""Special functions NumPy lacks: the gamma family, Bessel and Airy functions,
``erfinv``, the normal distribution's inverse and log, Hurwitz's zeta, incomplete
gammas, and the orthogonal polynomials (these by recurrence, without SciPy).

Their forwards call SciPy's ``scipy.special``, an optional dependency
imported at the first call (``pip install oxmera[scipy]``); without it the
call raises ImportError saying so, and nothing else in oxmera needs SciPy.
Each VJP is written with oxmera ops (``digamma' = polygamma(1, x)``,
``i0' = i1``...), so gradients of any order work.

The public namespace is ``oxmera.special`` (as ``torch.special``); the
functions PyTorch also has at top level (``lgamma``, ``digamma``,
``polygamma``, ``erfinv``, ``mvlgamma``, ``i0``) are in this module's
``__all__``. Elementwise math NumPy has is in ``elementwise``/``pointwise``.
"""
import importlib
import math

import numpy as np

from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops.creation import zeros_like
from oxmera.ops.elementwise import abs as _abs
from oxmera.ops.elementwise import eq, exp, log, lt, sign, trunc, where
from oxmera.ops.elementwise import pow as _pow
from oxmera.ops.reduce import sum as _sum
from oxmera.ops.shape import stack

__all__ = ["erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0"]

_SQRT_PI_OVER_2 = math.sqrt(math.pi) / 2
_SQRT_2PI = math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def scipy_module(submodule, opname):
    """``scipy.<submodule>``, imported now, or the ImportError that says how to get it.

    The one place oxmera imports SciPy (``oxmera.special`` and ``oxmera.scipy``
    call it at their functions' first call), so oxmera itself never needs it.
    """
    try:
        return importlib.import_module(f"scipy.{submodule}")
    except ImportError:
        raise ImportError(f"{opname}() needs SciPy, an optional dependency of oxmera: "
                          f"pip install oxmera[scipy]") from None


def scipy_special(opname):
    """``scipy.special``, imported now, or the ImportError that says how to get it."""
    return scipy_module("special", opname)


def _unary(name, scipy_name, doc, example, *, method=True, save_output=False, save_input=True):
    """A float op whose forward is ``scipy.special.<scipy_name>`` (result in the input's dtype)."""
    def forward(input):
        function = getattr(scipy_special(name), scipy_name)
        return function(input).astype(input.dtype, copy=False)
    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = __name__
    forward.__doc__ = f"{doc}\n\nExamples\n--------\n>>> import oxmera\n{example}\n"
    return op(name, float_only=True, method=method, quiet=True,
              save=None if save_input else (), save_output=save_output)(forward)


# -- error function and the normal distribution ---------------------------------------

erfinv = _unary(
    "erfinv", "erfinv",
    "The inverse of the error function on ``[-1, 1]`` (+-inf at +-1, nan beyond).\n\n"
    "Gradient ``sqrt(pi) / 2 * exp(erfinv(x) ** 2)``. Needs SciPy.",
    ">>> oxmera.erfinv(oxmera.tensor([0.0, 0.5]))\ntensor([0.    , 0.4769], dtype=float32)",
    save_output=True, save_input=False)


@erfinv.vjp
def _(ctx, grad, input):
    out = ctx.output
    return grad * exp(out * out) * _SQRT_PI_OVER_2


erfcx = _unary(
    "erfcx", "erfcx",
    "The scaled complementary error function ``exp(x**2) * erfc(x)``. Needs SciPy.",
    ">>> oxmera.special.erfcx(oxmera.tensor([0.0, 30.0]))\n"
    "tensor([1.    , 0.0188], dtype=float32)",
    method=False, save_output=True)


@erfcx.vjp
def _(ctx, grad, input):
    return grad * (2 * input * ctx.output - _TWO_OVER_SQRT_PI)


ndtri = _unary(
    "ndtri", "ndtri",
    "The inverse of the standard normal CDF (the quantile function). Needs SciPy.",
    ">>> oxmera.special.ndtri(oxmera.tensor([0.5, 0.975]))\n"
    "tensor([0.  , 1.96], dtype=float32)",
    method=False, save_output=True, save_input=False)


@ndtri.vjp
def _(ctx, grad, input):
    out = ctx.output
    return grad * exp(out * out * 0.5) * _SQRT_2PI


log_ndtr = _unary(
    "log_ndtr", "log_ndtr",
    "The log of the standard normal CDF, accurate far into the lower tail. Needs SciPy.",
    ">>> oxmera.special.log_ndtr(oxmera.tensor([0.0, -20.0]))\n"
    "tensor([  -0.6931, -203.9172], dtype=float32)",
    method=False, save_output=True)


@log_ndtr.vjp
def _(ctx, grad, input):
    # pdf / cdf, as exp(log pdf - log cdf): finite where both underflow.
    return grad * exp(input * input * -0.5 - ctx.output) / _SQRT_2PI


# -- the gamma family ---------------------------------------------------------------

lgamma = _unary(
    "lgamma", "gammaln",
    "The log of the absolute value of the gamma function (inf at 0 and the negative "
    "integers).\n\nGradient ``digamma(x)``. Needs SciPy.",
    ">>> oxmera.lgamma(oxmera.tensor([1.0, 0.5, 10.0]))\n"
    "tensor([ 0.    ,  0.5724, 12.8018], dtype=float32)")


@lgamma.vjp
def _(ctx, grad, input):
    return grad * digamma(input)


def _psi(input, n, name):
    special = scipy_special(name)
    if n == 0:
        out = special.psi(input)
        # PyTorch: digamma(0) is -inf (SciPy agrees); at the negative integers nan.
        return out.astype(input.dtype, copy=False)
    return special.polygamma(n, input).astype(input.dtype, copy=False)


@op(float_only=True, method=True, quiet=True)
def digamma(input):
    """The logarithmic derivative of the gamma function, ``psi``.

    ``-inf`` at 0, nan at the negative integers, as in PyTorch. Gradient
    ``polygamma(1, x)``. Needs SciPy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.digamma(oxmera.tensor([1.0, 0.5]))
    tensor([-0.5772, -1.9635], dtype=float32)
    """
    return _psi(input, 0, "digamma")


@digamma.vjp
def _(ctx, grad, input):
    return grad * polygamma(1, input)


@op("polygamma", float_only=True, quiet=True)
def _polygamma(input, n):
    """The recorded op behind ``polygamma`` (its tensor argument first).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.special import _polygamma
    >>> _polygamma(oxmera.tensor([1.0]), 1)
    tensor([1.6449], dtype=float32)
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n; n must be a "
                           f"non-negative integer, got {n!r}")
    return _psi(input, int(n), "polygamma")


@_polygamma.vjp
def _(ctx, grad, input, n):
    return grad * _polygamma(input, n + 1)


def polygamma(n, input):
    """The ``n``-th derivative of :func:`oxmera.digamma` (``n = 0`` is digamma itself).

    Gradient ``polygamma(n + 1, x)``. Needs SciPy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.polygamma(1, oxmera.tensor([1.0, 2.0]))
    tensor([1.6449, 0.6449], dtype=float32)
    >>> oxmera.tensor([1.0]).polygamma(2)
    tensor([-2.4041], dtype=float32)
    """
    return _polygamma(input, n)


def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension ``p``, elementwise.

    ``sum(lgamma(x - j / 2) for j in range(p)) + p (p - 1) / 4 log(pi)``,
    defined for elements above ``(p - 1) / 2`` (below, the log-gamma of a
    pole or of a negative number, as PyTorch 2.13 gives too).
    ``multigammaln`` in ``oxmera.special``. Needs SciPy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.mvlgamma(oxmera.tensor([2.5, 3.0]), 2)
    tensor([0.857 , 1.5502], dtype=float32)
    """
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or p < 1:
        raise RuntimeError(f"mvlgamma(): p has to be greater than or equal to 1, got {p!r}")
    terms = stack([lgamma(input - j / 2) for j in range(p)])
    return _sum(terms, 0) + p * (p - 1) / 4 * math.log(math.pi)


# -- Bessel functions -----------------------------------------------------------------

i0 = _unary(
    "i0", "i0",
    "The modified Bessel function of the first kind, order 0. Gradient ``i1(x)``. "
    "Needs SciPy.",
    ">>> oxmera.i0(oxmera.tensor([0.0, 1.0]))\ntensor([1.    , 1.2661], dtype=float32)")


@i0.vjp
def _(ctx, grad, input):
    return grad * i1(input)


i0e = _unary(
    "i0e", "i0e",
    "The exponentially scaled ``i0``: ``exp(-|x|) * i0(x)``. Needs SciPy.",
    ">>> oxmera.special.i0e(oxmera.tensor([0.0, 1.0]))\n"
    "tensor([1.    , 0.4658], dtype=float32)",
    method=False, save_output=True)


@i0e.vjp
def _(ctx, grad, input):
    return grad * (i1e(input) - sign(input) * ctx.output)


def _safe_ratio(numerator_of, input, at_zero):
    # numerator_of(x) / x, with its limit ``at_zero`` at 0 and no 0 / 0 on
    # the path the next derivative takes.
    origin = eq(input, 0)
    x = where(origin, 1.0, input)
    return where(origin, at_zero, numerator_of(x) / x)


i1 = _unary(
    "i1", "i1",
    "The modified Bessel function of the first kind, order 1. Needs SciPy.",
    ">>> oxmera.special.i1(oxmera.tensor([0.0, 1.0]))\ntensor([0.    , 0.5652], dtype=float32)",
    method=False, save_output=True)


@i1.vjp
def _(ctx, grad, input):
    # i1' = i0 - i1 / x, 1/2 at 0.
    return grad * (i0(input) - _safe_ratio(i1, input, 0.5))


i1e = _unary(
    "i1e", "i1e",
    "The exponentially scaled ``i1``: ``exp(-|x|) * i1(x)``. Needs SciPy.",
    ">>> oxmera.special.i1e(oxmera.tensor([0.0, 1.0]))\n"
    "tensor([0.    , 0.2079], dtype=float32)",
    method=False, save_output=True)


@i1e.vjp
def _(ctx, grad, input):
    # i1e' = i0e - i1e (sign(x) + 1 / x), 1/2 at 0.
    return grad * (i0e(input) - sign(input) * ctx.output - _safe_ratio(i1e, input, 0.5))


bessel_j0 = _unary(
    "bessel_j0", "j0",
    "The Bessel function of the first kind, order 0. Gradient ``-bessel_j1(x)`` (PyTorch "
    "has none). Needs SciPy.",
    ">>> oxmera.special.bessel_j0(oxmera.tensor([0.0, 1.0]))\n"
    "tensor([1.    , 0.7652], dtype=float32)",
    method=False)


@bessel_j0.vjp
def _(ctx, grad, input):
    return -grad * bessel_j1(input)


bessel_j1 = _unary(
    "bessel_j1", "j1",
    "The Bessel function of the first kind, order 1. Gradient ``j0(x) - j1(x) / x`` (PyTorch "
    "has none). Needs SciPy.",
    ">>> oxmera.special.bessel_j1(oxmera.tensor([0.0, 1.0]))\n"
    "tensor([0.    , 0.4401], dtype=float32)",
    method=False)


@bessel_j1.vjp
def _(ctx, grad, input):
    return grad * (bessel_j0(input) - _safe_ratio(bessel_j1, input, 0.5))


bessel_y0 = _unary(
    "bessel_y0", "y0",
    "The Bessel function of the second kind, order 0 (for ``x > 0``; ``-inf`` at 0, nan "
    "below). Gradient ``-bessel_y1(x)`` (PyTorch has none). Needs SciPy.",
    ">>> oxmera.special.bessel_y0(oxmera.tensor([1.0, 2.0]))\n"
    "tensor([0.0883, 0.5104], dtype=float32)",
    method=False)


@bessel_y0.vjp
def _(ctx, grad, input):
    return -grad * bessel_y1(input)


bessel_y1 = _unary(
    "bessel_y1", "y1",
    "The Bessel function of the second kind, order 1 (for ``x > 0``). Gradient "
    "``y0(x) - y1(x) / x`` (PyTorch has none). Needs SciPy.",
    ">>> oxmera.special.bessel_y1(oxmera.tensor([1.0, 2.0]))\n"
    "tensor([-0.7812, -0.107 ], dtype=float32)",
    method=False)


@bessel_y1.vjp
def _(ctx, grad, input):
    return grad * (bessel_y0(input) - bessel_y1(input) / input)


modified_bessel_k0 = _unary(
    "modified_bessel_k0", "k0",
    "The modified Bessel function of the second kind, order 0 (for ``x > 0``). Gradient "
    "``-k1(x)`` (PyTorch has none). Needs SciPy.",
    ">>> oxmera.special.modified_bessel_k0(oxmera.tensor([1.0, 2.0]))\n"
    "tensor([0.421 , 0.1139], dtype=float32)",
    method=False)


@modified_bessel_k0.vjp
def _(ctx, grad, input):
    return -grad * modified_bessel_k1(input)


modified_bessel_k1 = _unary(
    "modified_bessel_k1", "k1",
    "The modified Bessel function of the second kind, order 1 (for ``x > 0``). Gradient "
    "``-k0(x) - k1(x) / x`` (PyTorch has none). Needs SciPy.",
    ">>> oxmera.special.modified_bessel_k1(oxmera.tensor([1.0, 2.0]))\n"
    "tensor([0.6019, 0.1399], dtype=float32)",
    method=False)


@modified_bessel_k1.vjp
def _(ctx, grad, input):
    return -grad * (modified_bessel_k0(input) + modified_bessel_k1(input) / input)


scaled_modified_bessel_k0 = _unary(
    "scaled_modified_bessel_k0", "k0e",
    "The exponentially scaled ``modified_bessel_k0``: ``exp(x) * k0(x)``. Gradient "
    "``k0e(x) - k1e(x)`` (PyTorch has none). Needs SciPy.",
    ">>> oxmera.special.scaled_modified_bessel_k0(oxmera.tensor([1.0, 2.0]))\n"
    "tensor([1.1445, 0.8416], dtype=float32)",
    method=False)


@scaled_modified_bessel_k0.vjp
def _(ctx, grad, input):
    return grad * (scaled_modified_bessel_k0(input) - scaled_modified_bessel_k1(input))


scaled_modified_bessel_k1 = _unary(
    "scaled_modified_bessel_k1", "k1e",
    "The exponentially scaled ``modified_bessel_k1``: ``exp(x) * k1(x)``. Gradient "
    "``k1e(x) (1 - 1 / x) - k0e(x)`` (PyTorch has none). Needs SciPy.",
    ">>> oxmera.special.scaled_modified_bessel_k1(oxmera.tensor([1.0, 2.0]))\n"
    "tensor([1.6362, 1.0335], dtype=float32)",
    method=False, save_output=True)


@scaled_modified_bessel_k1.vjp
def _(ctx, grad, input):
    out = ctx.output
    return grad * (out - out / input - scaled_modified_bessel_k0(input))


def _airy(name, index, doc, example):
    def forward(input):
        return scipy_special(name).airy(input)[index].astype(input.dtype, copy=False)
    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = __name__
    forward.__doc__ = f"{doc}\n\nExamples\n--------\n>>> import oxmera\n{example}\n"
    return op(name, float_only=True, quiet=True)(forward)


airy_ai = _airy(
    "airy_ai", 0,
    "The Airy function ``Ai(x)``. Gradient ``Ai'(x)`` (PyTorch has none). Needs SciPy.",
    ">>> oxmera.special.airy_ai(oxmera.tensor([0.0, 1.0]))\n"
    "tensor([0.355 , 0.1353], dtype=float32)")
airy_ai_derivative = _airy(
    "airy_ai_derivative", 1,
    "The derivative ``Ai'(x)`` of the Airy function: ``airy_ai``'s VJP (its own gradient "
    "is ``x Ai(x)``, Airy's equation). Needs SciPy.",
    ">>> from oxmera.ops.special import airy_ai_derivative\n"
    ">>> airy_ai_derivative(oxmera.tensor([0.0, 1.0]))\n"
    "tensor([-0.2588, -0.1591], dtype=float32)")


@airy_ai.vjp
def _(ctx, grad, input):
    return grad * airy_ai_derivative(input)


@airy_ai_derivative.vjp
def _(ctx, grad, input):
    return grad * input * airy_ai(input)


# -- entropy, zeta and incomplete gammas ---------------------------------------------------

@op(float_only=True)
def entr(input):
    """``-x * log(x)`` elementwise: 0 at 0, ``-inf`` for negative ``x``.

    Gradient ``-(1 + log(x))``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.entr(oxmera.tensor([0.0, 0.5, -1.0]))
    tensor([0.    , 0.3466,   -inf], dtype=float32)
    """
    out = np.where(input > 0, -input * np.log(np.where(input > 0, input, 1)), 0)
    out = np.where(input < 0, -np.inf, out)
    return np.where(np.isnan(input), input, out).astype(input.dtype, copy=False)


@entr.vjp
def _(ctx, grad, input):
    return grad * -(log(input) + 1)


@op(inputs=2, promote=True, float_only=True, quiet=True)
def zeta(input, other):
    """Hurwitz's zeta function ``sum over k >= 0 of (k + other) ** -input``.

    Differentiable in ``other`` (``-input * zeta(input + 1, other)``); like
    PyTorch, not in ``input`` (its gradient raises). Needs SciPy.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.special.zeta(oxmera.tensor([2.0, 4.0]), 1.0)
    tensor([1.6449, 1.0823], dtype=float32)
    """
    return scipy_special("zeta").zeta(input, other).astype(np.result_type(input, other),
                                                           copy=False)


@zeta.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    if needs[0]:
        raise NotImplementedError("the derivative of zeta with respect to input (its first "
                                  "argument) is not implemented, as in PyTorch")
    return None, grad * -input * zeta(input + 1, other)


def _incomplete_gamma(name, sign_of_slope, example):
    def forward(input, other):
        function = getattr(scipy_special(name), name)
        return function(input, other).astype(np.result_type(input, other), copy=False)
    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = __name__
    which = "lower" if name == "gammainc" else "upper"
    forward.__doc__ = (
        f"The regularized {which} incomplete gamma function of ``input`` (``a``) at "
        f"``other`` (``x``).\n\nDifferentiable in ``other``; like PyTorch, not in ``input`` "
        f"(its gradient raises). Needs SciPy.\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> oxmera.special.{name}(oxmera.tensor([1.0, 2.0]), oxmera.tensor([1.0, 1.0]))\n"
        f"{example}\n")
    public = op(name, inputs=2, promote=True, float_only=True, quiet=True)(forward)

    @public.vjp
    def _(ctx, grad, input, other):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError(f"the derivative of {name} with respect to input (a) is "
                                      f"not implemented, as in PyTorch")
        # d/dx P(a, x) = x**(a-1) exp(-x) / Gamma(a), in logs to stay finite.
        density = exp((input - 1) * log(other) - other - lgamma(input))
        return None, grad * density * sign_of_slope
    return public


gammainc = _incomplete_gamma("gammainc", 1.0, "tensor([0.6321, 0.2642], dtype=float32)")
gammaincc = _incomplete_gamma("gammaincc", -1.0, "tensor([0.3679, 0.7358], dtype=float32)")


def _polygamma_method(self, n):
    """``polygamma(n, self)``: PyTorch's ``Tensor.polygamma``."""
    return _polygamma(self, n)


_registry.add_tensor_attribute("polygamma", _polygamma_method)
_registry.add_tensor_attribute("mvlgamma", mvlgamma)


# -- orthogonal polynomials -------------------------------------------------------------------
#
# Evaluated by their three-term recurrences, for a degree ``n`` that is a
# number or a tensor (broadcast with ``x``; truncated to an integer, and 0
# for a negative degree, as in PyTorch). Differentiable in ``x`` (PyTorch's
# are not), through identities between the families; the degree gets no
# gradient.

def _degree(n):
    """The degree as integers (an array broadcastable with x, or an int)."""
    if isinstance(n, (int, float, np.integer, np.floating)):
        return int(n)
    return np.trunc(n).astype(np.int64)


def _recurrence(name, first, step):
    """A forward: ``P_0 = 1``, ``P_1 = first(x)``, ``P_k+1 = step(k, x, P_k, P_k-1)``."""
    def forward(input, n):
        degree = _degree(n)
        x = np.asarray(input, np.result_type(input, n))   # a number x takes n's float dtype
        shape = np.broadcast_shapes(x.shape, np.shape(degree))
        top = int(np.max(degree, initial=-1))
        out = np.zeros(shape, dtype=x.dtype)
        previous, current = np.zeros_like(x), np.ones_like(x)
        for k in range(top + 1):
            if k == 1:
                previous, current = current, first(x)
            elif k > 1:
                previous, current = current, step(k - 1, x, current, previous)
            out = np.where(degree == k, current, out)
        return out.astype(x.dtype, copy=False)
    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = __name__
    return forward


def _polynomial(name, first, step, doc, example):
    forward = _recurrence(name, first, step)
    forward.__doc__ = (f"{doc}\n\nDifferentiable in ``input``; ``n`` (a number or a tensor) "
                       f"is truncated to an integer and gets no gradient; a negative degree "
                       f"gives 0.\n\nExamples\n--------\n>>> import oxmera\n"
                       f">>> oxmera.special.{name}(oxmera.tensor([-0.5, 0.5, 2.0]), 3)\n"
                       f"{example}\n")
    return op(name, inputs=2, promote=True, float_only=True,
              quiet=True)(forward)


chebyshev_polynomial_t = _polynomial(
    "chebyshev_polynomial_t", lambda x: x,
    lambda k, x, p, q: 2 * x * p - q,
    "The Chebyshev polynomial of the first kind ``T_n(input)``.",
    "tensor([ 1., -1., 26.], dtype=float32)")
chebyshev_polynomial_u = _polynomial(
    "chebyshev_polynomial_u", lambda x: 2 * x,
    lambda k, x, p, q: 2 * x * p - q,
    "The Chebyshev polynomial of the second kind ``U_n(input)``.",
    "tensor([ 1., -1., 56.], dtype=float32)")
hermite_polynomial_h = _polynomial(
    "hermite_polynomial_h", lambda x: 2 * x,
    lambda k, x, p, q: 2 * x * p - 2 * k * q,
    "The physicists' Hermite polynomial ``H_n(input)``.",
    "tensor([ 5., -5., 40.], dtype=float32)")
hermite_polynomial_he = _polynomial(
    "hermite_polynomial_he", lambda x: x,
    lambda k, x, p, q: x * p - k * q,
    "The probabilists' Hermite polynomial ``He_n(input)``.",
    "tensor([ 1.375, -1.375,  2.   ], dtype=float32)")
laguerre_polynomial_l = _polynomial(
    "laguerre_polynomial_l", lambda x: 1 - x,
    lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1),
    "The Laguerre polynomial ``L_n(input)``.",
    "tensor([ 2.8958, -0.1458, -0.3333], dtype=float32)")
legendre_polynomial_p = _polynomial(
    "legendre_polynomial_p", lambda x: x,
    lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1),
    "The Legendre polynomial ``P_n(input)``.",
    "tensor([ 0.4375, -0.4375, 17.    ], dtype=float32)")


def _degree_tensor(n):
    # the truncated degree, for the VJPs' arithmetic (a number stays a number)
    if isinstance(n, (int, float, np.integer, np.floating)):
        return int(n)
    return trunc(n)


def _at(points, x, limit, value):
    """``value(x)`` away from ``points``, ``limit(x)`` at them (where ``value``
    divides by zero); ``value`` sees a harmless x there."""
    singular = points(x)
    safe = where(singular, 0.5, x)
    return where(singular, limit(x), value(safe))


def _nonnegative(k, slope):
    # a negative degree is the zero polynomial: its slope is 0 (the limits'
    # formulas do not know that)
    if isinstance(k, int):
        return slope if k >= 0 else zeros_like(slope)
    return where(lt(k, 0), 0.0, slope)


def _at_plus_minus_one(x):
    return eq(_abs(x), 1)


@chebyshev_polynomial_t.vjp
def _(ctx, grad, input, n):
    k = _degree_tensor(n)
    return grad * k * chebyshev_polynomial_u(input, k - 1), None


@chebyshev_polynomial_u.vjp
def _(ctx, grad, input, n):
    # U_n' = ((n + 1) T_n+1 - x U_n) / (x^2 - 1); at x = +-1, (+-1)^(n+1) n (n+1) (n+2) / 3
    k = _degree_tensor(n)
    slope = _at(_at_plus_minus_one, input,
                lambda x: _pow(x, k + 1) * (k * (k + 1) * (k + 2) / 3),
                lambda x: ((k + 1) * chebyshev_polynomial_t(x, k + 1)
                           - x * chebyshev_polynomial_u(x, k)) / (x * x - 1))
    return grad * _nonnegative(k, slope), None


@hermite_polynomial_h.vjp
def _(ctx, grad, input, n):
    k = _degree_tensor(n)
    return grad * (2 * k) * hermite_polynomial_h(input, k - 1), None


@hermite_polynomial_he.vjp
def _(ctx, grad, input, n):
    k = _degree_tensor(n)
    return grad * k * hermite_polynomial_he(input, k - 1), None


@laguerre_polynomial_l.vjp
def _(ctx, grad, input, n):
    # L_n' = n (L_n - L_n-1) / x; -n at 0
    k = _degree_tensor(n)
    slope = _at(lambda x: eq(x, 0), input, lambda x: zeros_like(x) - k,
                lambda x: k * (laguerre_polynomial_l(x, k) - laguerre_polynomial_l(x, k - 1)) / x)
    return grad * _nonnegative(k, slope), None


@legendre_polynomial_p.vjp
def _(ctx, grad, input, n):
    # P_n' = n (x P_n - P_n-1) / (x^2 - 1); at x = +-1, (+-1)^(n-1) n (n+1) / 2
    k = _degree_tensor(n)
    slope = _at(_at_plus_minus_one, input,
                lambda x: _pow(x, k - 1) * (k * (k + 1) / 2),
                lambda x: k * (x * legendre_polynomial_p(x, k)
                               - legendre_polynomial_p(x, k - 1)) / (x * x - 1))
    return grad * _nonnegative(k, slope), None
