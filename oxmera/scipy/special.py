"""``oxmera.scipy.special``: ``scipy.special``'s names over oxmera tensors, differentiable.

Most functions are oxmera ops under SciPy's name and argument names
(``gammaln`` is :func:`oxmera.lgamma`, ``expit`` is :func:`oxmera.sigmoid`,
``i0``... are :mod:`oxmera.special`'s); the rest are composed of them
(``betaln``, ``logsumexp`` with ``b=``, ``softmax`` over several axes...).
Three are ops of their own, as oxmera had no op for them: ``iv``, ``ive``
(differentiable in ``z``) and ``betainc`` (differentiable in ``x``), with
SciPy's values and VJPs written with oxmera ops.

Inputs may be Tensors, numbers, lists or arrays; what is not a Tensor
becomes float64, as SciPy computes. Values of the special functions come
from SciPy (an optional dependency: ``pip install oxmera[scipy]``).

A derivative SciPy's function has but that needs a special function oxmera
lacks (in the order ``v`` of ``iv``, in ``a`` of ``gammainc``, in ``a`` and
``b`` of ``betainc``) raises NotImplementedError when asked for, never a
wrong or silently missing gradient.
"""
import inspect
import math

import numpy as np

import oxmera
from oxmera._core.autograd import Tensor
from oxmera.extend import op
from oxmera.ops import special as _special
from oxmera.ops.creation import from_numpy
from oxmera.ops.special import scipy_special
from oxmera.scipy._inputs import as_tensor, as_tensors, axis_dims

__all__ = [
    "logsumexp", "softmax", "log_softmax", "gammaln", "gamma", "digamma", "psi", "polygamma",
    "multigammaln", "beta", "betaln", "betainc", "erf", "erfc", "erfcx", "erfinv", "erfcinv",
    "expit", "logit", "log_expit", "xlogy", "xlog1py", "entr", "rel_entr", "i0", "i0e", "i1",
    "i1e", "iv", "ive", "gammainc", "gammaincc", "ndtr", "ndtri", "log_ndtr", "zeta", "expm1",
    "log1p",
]


#: The parameter names of the functions of several arguments (SciPy's);
#: the others take one, ``x``.
_PARAMETERS = {"betaln": ("a", "b"), "beta": ("a", "b"), "xlogy": ("x", "y"),
               "xlog1py": ("x", "y"), "rel_entr": ("x", "y"), "gammainc": ("a", "x"),
               "gammaincc": ("a", "x"), "iv": ("v", "z"), "ive": ("v", "z"),
               "betainc": ("a", "b", "x")}


def _elementwise(name, function, doc, example):
    """SciPy's ``name``: ``function`` (an oxmera op or composite) on tensor-converted inputs."""
    signature = inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY)
                                   for p in _PARAMETERS.get(name, ("x",))])

    def public(*args):
        try:
            signature.bind(*args)
        except TypeError as error:
            raise TypeError(f"{name}(): {error}") from None
        return function(*as_tensors(name, *args))
    public.__name__ = public.__qualname__ = name
    public.__module__ = __name__
    public.__signature__ = signature
    public.__doc__ = (f"{doc}\n\nAs ``scipy.special.{name}``; inputs that are not Tensors "
                      f"become float64.\n\nExamples\n--------\n>>> import oxmera\n"
                      f">>> from oxmera.scipy import special\n{example}\n")
    return public


# -- the gamma and beta families -------------------------------------------------------------

def _sign_of_gamma(x):
    # The sign of Gamma(x): piecewise constant, so it needs (and gets) no gradient.
    values = x.detach().numpy()
    return from_numpy(scipy_special("gamma").gammasgn(values).astype(values.dtype))


def _betaln(a, b):
    return _special.lgamma(a) + _special.lgamma(b) - _special.lgamma(a + b)


def _gamma(x):
    return _sign_of_gamma(x) * oxmera.exp(_special.lgamma(x))


def _beta(a, b):
    return (_sign_of_gamma(a) * _sign_of_gamma(b) * _sign_of_gamma(a + b)
            * oxmera.exp(_betaln(a, b)))


gammaln = _elementwise(
    "gammaln", _special.lgamma,
    "The log of the absolute value of the gamma function. Gradient ``digamma(x)``.",
    ">>> special.gammaln([1.0, 0.5, 10.0])\ntensor([ 0.    ,  0.5724, 12.8018], dtype=float64)")
gamma = _elementwise(
    "gamma", _gamma,
    "The gamma function, as ``sign * exp(gammaln(x))`` (the sign from SciPy's ``gammasgn``).",
    ">>> special.gamma([4.0, -0.5])\ntensor([ 6.    , -3.5449], dtype=float64)")
digamma = _elementwise(
    "digamma", _special.digamma,
    "The logarithmic derivative of the gamma function. Gradient ``polygamma(1, x)``.",
    ">>> special.digamma([1.0, 0.5])\ntensor([-0.5772, -1.9635], dtype=float64)")
psi = digamma
betaln = _elementwise(
    "betaln", _betaln,
    "The log of the absolute value of the beta function, "
    "``gammaln(a) + gammaln(b) - gammaln(a + b)``; differentiable in both.",
    ">>> special.betaln([2.0, 0.5], [3.0, 1.5])\ntensor([-2.4849,  0.4516], dtype=float64)")
beta = _elementwise(
    "beta", _beta,
    "The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``; differentiable in both.",
    ">>> special.beta([2.0, -0.5], [3.0, 1.5])\ntensor([ 0.0833, -3.1416], dtype=float64)")


def polygamma(n, x):
    """The ``n``-th derivative of ``digamma`` (``n = 0`` is digamma itself).

    As ``scipy.special.polygamma``: ``n`` is a non-negative integer or an
    array of them (broadcast with ``x``); differentiable in ``x``
    (``polygamma(n + 1, x)``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import special
    >>> special.polygamma(1, [1.0, 2.0])
    tensor([1.6449, 0.6449], dtype=float64)
    >>> special.polygamma([0, 1], 1.0)
    tensor([-0.5772,  1.6449], dtype=float64)
    """
    x = as_tensor(x, "polygamma", "x")
    order = np.asarray(n.detach().numpy() if isinstance(n, Tensor) else n)
    if order.dtype.kind not in "biuf" or np.any(order != np.trunc(order)) or np.any(order < 0):
        raise ValueError(f"polygamma(): n must be non-negative integers, got {n!r}")
    if order.ndim == 0:
        return _special.polygamma(int(order), x)
    # one op call per distinct order, each kept where n has it
    orders = from_numpy(order.astype(np.float64))
    result = None
    for k in np.unique(order):
        term = oxmera.where(oxmera.eq(orders, float(k)),
                                      _special.polygamma(int(k), x), 0.0)
        result = term if result is None else result + term
    return result


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension ``d``.

    As ``scipy.special.multigammaln``: ValueError unless every element of
    ``a`` exceeds ``(d - 1) / 2``. Differentiable in ``a``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import special
    >>> special.multigammaln([2.5, 3.0], 2)
    tensor([0.857 , 1.5502], dtype=float64)
    """
    a = as_tensor(a, "multigammaln", "a")
    if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or d < 1:
        raise ValueError(f"multigammaln(): d must be a positive integer, got {d!r}")
    if bool(oxmera.any(oxmera.le(a.detach(), 0.5 * (d - 1)))):
        raise ValueError(f"multigammaln(): condition a > 0.5 * (d - 1) = {0.5 * (d - 1)} not met "
                         f"by every element of a")
    return _special.mvlgamma(a, d)


# -- error functions and the normal distribution ------------------------------------------------

_SQRT_HALF = math.sqrt(0.5)


def _erfcinv(y):
    # erfc(x) = 2 ndtr(-x sqrt 2): accurate for the small y where 1 - y rounds
    return _special.ndtri(y * 0.5) * -_SQRT_HALF


def _ndtr(x):
    return oxmera.special.erfc(x * -_SQRT_HALF) * 0.5


erf = _elementwise("erf", oxmera.erf, "The error function.",
                   ">>> special.erf([0.0, 0.5])\ntensor([0.    , 0.5205], dtype=float64)")
erfc = _elementwise("erfc", oxmera.erfc, "The complementary error function ``1 - erf``.",
                    ">>> special.erfc([0.0, 0.5])\ntensor([1.    , 0.4795], dtype=float64)")
erfcx = _elementwise("erfcx", _special.erfcx,
                     "The scaled complementary error function ``exp(x**2) erfc(x)``.",
                     ">>> special.erfcx([0.0, 30.0])\ntensor([1.    , 0.0188], dtype=float64)")
erfinv = _elementwise("erfinv", _special.erfinv, "The inverse of ``erf`` on ``[-1, 1]``.",
                      ">>> special.erfinv([0.0, 0.5])\ntensor([0.    , 0.4769], dtype=float64)")
erfcinv = _elementwise(
    "erfcinv", _erfcinv,
    "The inverse of ``erfc`` on ``[0, 2]``, as ``-ndtri(y / 2) / sqrt(2)`` (accurate near 0).",
    ">>> special.erfcinv([1.0, 0.05])\ntensor([-0.    ,  1.3859], dtype=float64)")
ndtr = _elementwise("ndtr", _ndtr, "The standard normal CDF, accurate in both tails.",
                    ">>> special.ndtr([0.0, 1.96])\ntensor([0.5  , 0.975], dtype=float64)")
ndtri = _elementwise("ndtri", _special.ndtri, "The inverse of ``ndtr`` (the normal quantile).",
                     ">>> special.ndtri([0.5, 0.975])\ntensor([0.  , 1.96], dtype=float64)")
log_ndtr = _elementwise(
    "log_ndtr", _special.log_ndtr, "The log of ``ndtr``, accurate far into the lower tail.",
    ">>> special.log_ndtr([0.0, -20.0])\ntensor([  -0.6931, -203.9172], dtype=float64)")


# -- logistic, logs and entropies -----------------------------------------------------------

def _log_expit(x):
    return -oxmera.nn.functional.softplus(-x)


def _rel_entr(x, y):
    # x log(x / y) for x, y > 0; 0 at x = 0 <= y; inf elsewhere (SciPy's cases)
    both = oxmera.logical_and(oxmera.gt(x, 0), oxmera.gt(y, 0))
    safe_x, safe_y = oxmera.where(both, x, 1.0), oxmera.where(both, y, 1.0)
    at_zero = oxmera.logical_and(oxmera.eq(x, 0), oxmera.ge(y, 0))
    value = oxmera.where(both, safe_x * oxmera.log(safe_x / safe_y), math.inf)
    return oxmera.where(at_zero, 0.0, value)


expit = _elementwise("expit", oxmera.sigmoid, "The logistic sigmoid ``1 / (1 + exp(-x))``.",
                     ">>> special.expit([0.0, 1.0])\ntensor([0.5   , 0.7311], dtype=float64)")
logit = _elementwise("logit", oxmera.logit, "The inverse of ``expit``: ``log(p / (1 - p))``.",
                     ">>> special.logit([0.5, 0.9])\ntensor([0.    , 2.1972], dtype=float64)")
log_expit = _elementwise(
    "log_expit", _log_expit, "``log(expit(x))``, as ``-softplus(-x)`` (no underflow).",
    ">>> special.log_expit([0.0, -50.0])\ntensor([ -0.6931, -50.    ], dtype=float64)")
xlogy = _elementwise("xlogy", oxmera.xlogy, "``x * log(y)``, 0 where ``x == 0``.",
                     ">>> special.xlogy([0.0, 2.0], [0.0, 3.0])\n"
                     "tensor([0.    , 2.1972], dtype=float64)")
xlog1py = _elementwise("xlog1py", oxmera.special.xlog1py, "``x * log1p(y)``, 0 where ``x == 0``.",
                       ">>> special.xlog1py([0.0, 2.0], [-1.0, 3.0])\n"
                       "tensor([0.    , 2.7726], dtype=float64)")
entr = _elementwise("entr", _special.entr, "``-x log(x)``: 0 at 0, ``-inf`` below.",
                    ">>> special.entr([0.0, 0.5])\ntensor([0.    , 0.3466], dtype=float64)")
rel_entr = _elementwise(
    "rel_entr", _rel_entr,
    "``x log(x / y)`` for positive ``x`` and ``y``, 0 at ``x == 0 <= y``, inf otherwise.",
    ">>> special.rel_entr([0.0, 1.0], [1.0, 2.0])\ntensor([ 0.    , -0.6931], dtype=float64)")
expm1 = _elementwise("expm1", oxmera.expm1, "``exp(x) - 1``, accurate near 0.",
                     ">>> special.expm1([0.0, 1.0])\ntensor([0.    , 1.7183], dtype=float64)")
log1p = _elementwise("log1p", oxmera.log1p, "``log(1 + x)``, accurate near 0.",
                     ">>> special.log1p([0.0, 1.0])\ntensor([0.    , 0.6931], dtype=float64)")


def zeta(x, q=None):
    """Riemann's zeta function, or Hurwitz's with ``q``: ``sum over k >= 0 of (k + q) ** -x``.

    As ``scipy.special.zeta``. Differentiable in ``q``; not in ``x`` (its
    gradient raises NotImplementedError, as oxmera.special.zeta's).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import special
    >>> special.zeta([2.0, 4.0])
    tensor([1.6449, 1.0823], dtype=float64)
    >>> special.zeta(2.0, [1.0, 2.0])
    tensor([1.6449, 0.6449], dtype=float64)
    """
    x, q = as_tensors("zeta", x, 1.0 if q is None else q)
    return _special.zeta(x, q)


gammainc = _elementwise(
    "gammainc", _special.gammainc,
    "The regularized lower incomplete gamma function ``P(a, x)``; differentiable in ``x`` "
    "(in ``a`` its gradient raises NotImplementedError).",
    ">>> special.gammainc([1.0, 2.0], [1.0, 1.0])\ntensor([0.6321, 0.2642], dtype=float64)")
gammaincc = _elementwise(
    "gammaincc", _special.gammaincc,
    "The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``; "
    "differentiable in ``x`` (in ``a`` its gradient raises NotImplementedError).",
    ">>> special.gammaincc([1.0, 2.0], [1.0, 1.0])\ntensor([0.3679, 0.7358], dtype=float64)")


# -- Bessel functions ------------------------------------------------------------------------

i0 = _elementwise("i0", _special.i0, "The modified Bessel function of the first kind, order 0.",
                  ">>> special.i0([0.0, 1.0])\ntensor([1.    , 1.2661], dtype=float64)")
i0e = _elementwise("i0e", _special.i0e, "The exponentially scaled ``i0``: ``exp(-|x|) i0(x)``.",
                   ">>> special.i0e([0.0, 1.0])\ntensor([1.    , 0.4658], dtype=float64)")
i1 = _elementwise("i1", _special.i1, "The modified Bessel function of the first kind, order 1.",
                  ">>> special.i1([0.0, 1.0])\ntensor([0.    , 0.5652], dtype=float64)")
i1e = _elementwise("i1e", _special.i1e, "The exponentially scaled ``i1``: ``exp(-|x|) i1(x)``.",
                   ">>> special.i1e([0.0, 1.0])\ntensor([0.    , 0.2079], dtype=float64)")


def _bessel_i(name, scipy_name):
    def forward(v, z):
        function = getattr(scipy_special(scipy_name), scipy_name)
        return function(v, z).astype(np.result_type(v, z), copy=False)
    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = __name__
    forward.__doc__ = (f"The recorded op behind ``oxmera.scipy.special.{scipy_name}``.\n\n"
                       f"Examples\n--------\n>>> import oxmera\n"
                       f">>> from oxmera.scipy.special import _{scipy_name}\n"
                       f">>> _{scipy_name}(oxmera.tensor(0.0), oxmera.tensor([0.0]))\n"
                       f"tensor([1.], dtype=float32)\n")
    return op(name, inputs=2, promote=True, float_only=True, quiet=True)(forward)


def _no_order_gradient(ctx, name):
    if ctx.needs_input_grad[0]:
        raise NotImplementedError(f"the derivative of {name} with respect to the order v is "
                                  f"not implemented (it needs a derivative of Bessel functions "
                                  f"in their order)")


_iv = _bessel_i("iv", "iv")
_ive = _bessel_i("ive", "ive")


@_iv.vjp
def _(ctx, grad, v, z):
    _no_order_gradient(ctx, "iv")
    # I_v'(z) = (I_v-1(z) + I_v+1(z)) / 2
    return None, grad * (_iv(v - 1, z) + _iv(v + 1, z)) * 0.5


@_ive.vjp
def _(ctx, grad, v, z):
    _no_order_gradient(ctx, "ive")
    # ive = exp(-|z|) iv: the scaled recurrence, minus sign(z) ive
    return None, grad * ((_ive(v - 1, z) + _ive(v + 1, z)) * 0.5
                         - oxmera.sign(z) * _ive(v, z))


iv = _elementwise(
    "iv", _iv,
    "The modified Bessel function of the first kind of real order ``v``, ``I_v(z)``. "
    "Differentiable in ``z`` (``(I_v-1 + I_v+1) / 2``), not in ``v`` (NotImplementedError).",
    ">>> special.iv(2.5, [1.0, 3.0])\ntensor([0.0571, 1.5153], dtype=float64)")
ive = _elementwise(
    "ive", _ive,
    "The exponentially scaled ``iv``: ``exp(-|z|) I_v(z)``; differentiable in ``z``.",
    ">>> special.ive(2.5, [1.0, 3.0])\ntensor([0.021 , 0.0754], dtype=float64)")


@op("betainc", inputs=3, promote=True, float_only=True, quiet=True)
def _betainc(a, b, x):
    """The recorded op behind ``oxmera.scipy.special.betainc``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy.special import _betainc
    >>> _betainc(oxmera.tensor(1.0), 1.0, oxmera.tensor([0.25]))
    tensor([0.25], dtype=float32)
    """
    return scipy_special("betainc").betainc(a, b, x).astype(np.result_type(a, b, x), copy=False)


@_betainc.vjp
def _(ctx, grad, a, b, x):
    if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
        raise NotImplementedError("the derivative of betainc with respect to a or b is not "
                                  "implemented; it is differentiable in x")
    # d/dx I_x(a, b) = x**(a-1) (1-x)**(b-1) / B(a, b), in logs
    density = oxmera.exp(oxmera.xlogy(a - 1, x)
                                   + oxmera.special.xlog1py(b - 1, -x) - _betaln(a, b))
    return None, None, grad * density


betainc = _elementwise(
    "betainc", _betainc,
    "The regularized incomplete beta function ``I_x(a, b)``. Differentiable in ``x``; "
    "in ``a`` and ``b`` its gradient raises NotImplementedError.",
    ">>> special.betainc(2.0, 3.0, [0.2, 0.5])\ntensor([0.1808, 0.6875], dtype=float64)")


# -- log-sum-exp and softmax -----------------------------------------------------------------

def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(b * exp(a)))`` over ``axis``, without overflow.

    As ``scipy.special.logsumexp``: ``b`` scales each term (broadcast with
    ``a``; it may be negative); with ``return_sign=True`` the result is
    ``(log|s|, sign(s))`` of the sum ``s``, otherwise a negative sum gives
    nan. ``axis`` None reduces every axis. Differentiable in ``a`` and ``b``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import special
    >>> special.logsumexp([[1.0, 2.0], [3.0, 4.0]], axis=1)
    tensor([2.3133, 4.3133], dtype=float64)
    >>> special.logsumexp([1.0, 2.0], b=[1.0, -2.0], return_sign=True)
    (tensor(2.4899, dtype=float64), tensor(-1., dtype=float64))
    """
    a, b = as_tensors("logsumexp", a, b)
    dims = axis_dims(axis)
    if b is None and not return_sign:
        return oxmera.logsumexp(a, dims, keepdims)
    if b is not None:
        a = oxmera.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape))
    # the shift is a constant: any finite value gives the same result
    shift = oxmera.amax(a.detach(), dims, True)
    shift = oxmera.where(oxmera.isfinite(shift), shift, 0.0)
    terms = oxmera.exp(a - shift)
    total = oxmera.sum(terms if b is None else terms * b, dims, True)
    out = oxmera.log(oxmera.abs(total)) + shift
    sign = oxmera.sign(total)
    if not keepdims:
        reduced = tuple(range(a.ndim)) if dims == () else dims
        out, sign = oxmera.squeeze(out, reduced), oxmera.squeeze(sign, reduced)
    if return_sign:
        return out, sign
    return oxmera.where(oxmera.lt(sign, 0), math.nan, out)


def softmax(x, axis=None):
    """``exp(x) / sum(exp(x))`` over ``axis`` (None: every axis), as ``scipy.special.softmax``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import special
    >>> special.softmax([1.0, 2.0, 3.0])
    tensor([0.09  , 0.2447, 0.6652], dtype=float64)
    """
    return oxmera.exp(log_softmax(x, axis))


def log_softmax(x, axis=None):
    """``x - logsumexp(x)`` over ``axis`` (None: every axis), as ``scipy.special.log_softmax``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import special
    >>> special.log_softmax([1.0, 2.0])
    tensor([-1.3133, -0.3133], dtype=float64)
    """
    x = as_tensor(x, "log_softmax", "x")
    if isinstance(axis, (int, np.integer)) and x.ndim > 0:
        return oxmera.log_softmax(x, int(axis))
    return x - oxmera.logsumexp(x, axis_dims(axis), True)
