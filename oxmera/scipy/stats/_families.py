"""The distributions of ``oxmera.scipy.stats``, composed of oxmera ops.

Every function here is a formula of oxmera ops (``lgamma``, ``ndtr``,
``xlogy``, ``gammainc``, ``betainc``, ``cholesky``...), so it is
differentiable in the data and in every parameter whose formula is, to any
order. The exceptions are the CDFs whose derivative in a shape parameter
needs a function oxmera lacks (``t.cdf`` in ``df``, ``gamma.cdf`` in ``a``,
``beta.cdf`` in ``a``/``b``, ``binom.cdf`` in ``n``): asking for that
gradient raises NotImplementedError.

SciPy's conventions: the continuous families are location-scale families,
``f(x; shapes, loc, scale) = f((x - loc) / scale; shapes) / scale``; a
parameter outside its domain (``scale <= 0``, ``df <= 0``, ``p > 1``...)
gives nan, not an error; a point outside the support gives ``pdf = 0``,
``logpdf = -inf``, and ``cdf`` 0 or 1.

Each public distribution module (``oxmera.scipy.stats.norm``...) is a few
lines that take its functions from a :class:`Family` here.
"""
import inspect
import math

import oxmera
from oxmera.scipy import special
from oxmera.scipy._inputs import as_tensor

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
_LOG_2 = math.log(2.0)


def _where(condition, value, otherwise):
    return oxmera.where(condition, value, otherwise)


def _log_expit(x):
    # log(1 / (1 + exp(-x))) = -(max(-x, 0) + log1p(exp(-|x|))), exact in both tails
    return -(oxmera.clamp(-x, min=0) + oxmera.log1p(oxmera.exp(-oxmera.abs(x))))


def _log_1m(p):
    return oxmera.log1p(-p)


class Family:
    """A distribution's standard functions and SciPy's parameter names.

    ``standard`` maps a method (``logpdf``, ``cdf``, ``sf``, ``logcdf``,
    ``logsf``, ``ppf``) to a function of the standardized point (``z`` for
    continuous families, ``k - loc`` for discrete ones) and the shape
    parameters; ``valid`` says which shape parameters are in the domain.
    """

    def __init__(self, name, shapes, standard, valid=None, discrete=False, description="",
                 safe=None):
        self.name, self.shapes, self.standard = name, tuple(shapes), standard
        self.valid, self.discrete, self.description = valid, discrete, description
        # in-domain stand-ins for invalid parameters: the formula then never
        # sees them (no inf - inf warnings, no nan leaking into gradients)
        self.safe = tuple(safe) if safe is not None else (1.0,) * len(self.shapes)

    def signature(self, method):
        first = "q" if method == "ppf" else "k" if self.discrete else "x"
        parameters = [inspect.Parameter(first, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        parameters += [inspect.Parameter(s, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                       for s in self.shapes]
        parameters.append(inspect.Parameter("loc", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                            default=0))
        if not self.discrete:
            parameters.append(inspect.Parameter("scale", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                default=1))
        return inspect.Signature(parameters)

    def function(self, method, module, example_args):
        """SciPy's ``<family>.<method>``, with its signature, docstring and example."""
        signature = self.signature(method)
        qualified = f"{self.name}.{method}"
        family = self

        def public(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = {n: as_tensor(v, qualified, n) for n, v in bound.arguments.items()}
            return family._evaluate(method, values)
        public.__name__ = public.__qualname__ = method
        public.__module__ = module
        public.__signature__ = signature
        public.__doc__ = self._doc(method, example_args)
        return public

    def _evaluate(self, method, values):
        names = list(values)
        point, shapes = values[names[0]], [values[s] for s in self.shapes]
        loc = values["loc"]
        scale = None if self.discrete else values["scale"]
        base = "logpdf" if method == "pdf" else "logpmf" if method == "pmf" else method
        valid = None if self.discrete else oxmera.gt(scale, 0)
        if self.valid is not None:
            shape_valid = self.valid(*shapes)
            valid = shape_valid if valid is None else oxmera.logical_and(valid, shape_valid)
        if valid is not None:
            shapes = [_where(valid, s, stand_in) for s, stand_in in zip(shapes, self.safe)]
            if scale is not None:
                scale = _where(valid, scale, 1.0)
        if method == "ppf":
            out = loc + scale * self.standard["ppf"](point, *shapes)
        else:
            z = point - loc if self.discrete else (point - loc) / scale
            out = self.standard[base](z, *shapes)
            if base == "logpdf":
                out = out - oxmera.log(scale)
            if method in ("pdf", "pmf"):
                out = oxmera.exp(out)
        if valid is not None:
            out = _where(valid, out, math.nan)
        return out

    def _doc(self, method, example_args):
        what = {
            "logpdf": "The log of the probability density", "pdf": "The probability density",
            "logpmf": "The log of the probability mass", "pmf": "The probability mass",
            "cdf": "The cumulative distribution function",
            "logcdf": "The log of the cumulative distribution function",
            "sf": "The survival function ``1 - cdf``, accurate in the upper tail",
            "logsf": "The log of the survival function",
            "ppf": "The percent point function (the inverse of ``cdf``)",
        }[method]
        first = "q" if method == "ppf" else "k" if self.discrete else "x"
        points = "[0.25, 0.75]" if method == "ppf" else "[1.0, 2.0]" if self.discrete \
            else "[0.5, 1.5]" if self.name not in ("beta",) else "[0.25, 0.5]"
        return (
            f"{what} of the {self.description} distribution, as "
            f"``scipy.stats.{self.name}.{method}``.\n\n"
            f"Every argument broadcasts; numbers, lists and arrays become float64 tensors. "
            f"Parameters outside their domain give nan.\n\n"
            f"Examples\n--------\n>>> import numpy as np\n>>> import scipy.stats\n"
            f">>> from oxmera.scipy.stats import {self.name}\n"
            f">>> {first} = {points}\n"
            f">>> ours = {self.name}.{method}({first}, {example_args})\n"
            f">>> bool(np.allclose(ours.numpy(), "
            f"scipy.stats.{self.name}.{method}({first}, {example_args})))\n"
            f"True\n")


# -- continuous location-scale families -------------------------------------------------------

def _norm_logpdf(z):
    return z * z * -0.5 - _LOG_SQRT_2PI


norm = Family("norm", (), {
    "logpdf": _norm_logpdf,
    "cdf": special.ndtr,
    "logcdf": special.log_ndtr,
    "sf": lambda z: special.ndtr(-z),
    "logsf": lambda z: special.log_ndtr(-z),
    "ppf": special.ndtri,
}, description="normal")


def _nonnegative(z):
    # z where z >= 0, else 0 (no inf/nan on the branch where() discards, whose
    # zero gradient would otherwise turn into nan)
    return _where(oxmera.ge(z, 0), z, 0.0)


expon = Family("expon", (), {
    "logpdf": lambda z: _where(oxmera.ge(z, 0), -_nonnegative(z), -math.inf),
    "cdf": lambda z: -oxmera.expm1(-_nonnegative(z)),
    "logcdf": lambda z: _where(oxmera.gt(z, 0),
                               oxmera.log(-oxmera.expm1(-_where(oxmera.gt(z, 0), z, 1.0))),
                               -math.inf),
    "sf": lambda z: oxmera.exp(-_nonnegative(z)),
    "logsf": lambda z: -_nonnegative(z),
    "ppf": lambda q: -oxmera.log1p(-q),
}, description="exponential")


def _laplace_lower(z):
    # 0.5 exp(-|z|): the tail mass beyond |z|
    return oxmera.exp(-oxmera.abs(z)) * 0.5


laplace = Family("laplace", (), {
    "logpdf": lambda z: -oxmera.abs(z) - _LOG_2,
    "cdf": lambda z: _where(oxmera.lt(z, 0), _laplace_lower(z), 1 - _laplace_lower(z)),
    "sf": lambda z: _where(oxmera.gt(z, 0), _laplace_lower(z), 1 - _laplace_lower(z)),
    "logcdf": lambda z: _where(oxmera.lt(z, 0), -oxmera.abs(z) - _LOG_2,
                               oxmera.log1p(-_laplace_lower(z))),
    "logsf": lambda z: _where(oxmera.gt(z, 0), -oxmera.abs(z) - _LOG_2,
                              oxmera.log1p(-_laplace_lower(z))),
    # log(2q) below the median, -log(2(1 - q)) above: smooth through 1/2 (a
    # sign(q - 1/2) factor would give a zero gradient there)
    "ppf": lambda q: _where(oxmera.lt(q, 0.5), oxmera.log(_where(oxmera.lt(q, 0.5), q, 0.5) * 2),
                            -oxmera.log((1 - _where(oxmera.lt(q, 0.5), 0.5, q)) * 2)),
}, description="Laplace (double exponential)")

cauchy = Family("cauchy", (), {
    "logpdf": lambda z: -oxmera.log1p(z * z) - math.log(math.pi),
    "cdf": lambda z: 0.5 + oxmera.atan(z) / math.pi,
    "sf": lambda z: 0.5 - oxmera.atan(z) / math.pi,
    "logcdf": lambda z: oxmera.log(0.5 + oxmera.atan(z) / math.pi),
    "logsf": lambda z: oxmera.log(0.5 - oxmera.atan(z) / math.pi),
    "ppf": lambda q: oxmera.tan((q - 0.5) * math.pi),
}, description="Cauchy")

logistic = Family("logistic", (), {
    "logpdf": lambda z: _log_expit(z) + _log_expit(-z),
    "cdf": oxmera.sigmoid,
    "sf": lambda z: oxmera.sigmoid(-z),
    "logcdf": _log_expit,
    "logsf": lambda z: _log_expit(-z),
    "ppf": oxmera.logit,
}, description="logistic")


def _t_logpdf(z, df):
    half = (df + 1) * 0.5
    return (special.gammaln(half) - special.gammaln(df * 0.5) - 0.5 * oxmera.log(df * math.pi)
            - half * oxmera.log1p(z * z / df))


def _t_tail(z, df):
    # P(T > |z|) = I_{df / (df + z^2)}(df / 2, 1 / 2) / 2. Its gradient in z is
    # nan at exactly z = 0 (the incomplete beta's density is infinite at 1).
    return special.betainc(df * 0.5, 0.5, df / (df + z * z)) * 0.5


def _t_cdf(z, df):
    tail = _t_tail(z, df)
    return _where(oxmera.lt(z, 0), tail, 1 - tail)


def _t_sf(z, df):
    tail = _t_tail(z, df)
    return _where(oxmera.gt(z, 0), tail, 1 - tail)


t = Family("t", ("df",), {
    "logpdf": _t_logpdf,
    "cdf": _t_cdf, "sf": _t_sf,
    "logcdf": lambda z, df: oxmera.log(_t_cdf(z, df)),
    "logsf": lambda z, df: oxmera.log(_t_sf(z, df)),
}, valid=lambda df: oxmera.gt(df, 0), description="Student's t")


def _inside(z, low, high=None):
    above = oxmera.ge(z, low)
    return above if high is None else oxmera.logical_and(above, oxmera.le(z, high))


def _gamma_logpdf(z, a):
    safe = _where(_inside(z, 0), z, 1.0)
    value = special.xlogy(a - 1, safe) - safe - special.gammaln(a)
    return _where(_inside(z, 0), value, -math.inf)


gamma = Family("gamma", ("a",), {
    "logpdf": _gamma_logpdf,
    "cdf": lambda z, a: special.gammainc(a, _nonnegative(z)),
    "sf": lambda z, a: special.gammaincc(a, _nonnegative(z)),
    "logcdf": lambda z, a: oxmera.log(special.gammainc(a, _nonnegative(z))),
    "logsf": lambda z, a: oxmera.log(special.gammaincc(a, _nonnegative(z))),
}, valid=lambda a: oxmera.gt(a, 0), description="gamma")


def _unit(z):
    return oxmera.clamp(z, 0.0, 1.0)


def _beta_logpdf(z, a, b):
    inside = _inside(z, 0, 1)
    safe = _where(inside, z, 0.5)
    value = special.xlogy(a - 1, safe) + special.xlog1py(b - 1, -safe) - special.betaln(a, b)
    return _where(inside, value, -math.inf)


def _beta_cdf(z, a, b):
    return special.betainc(a, b, _unit(z))


def _beta_sf(z, a, b):
    return special.betainc(b, a, 1 - _unit(z))


beta = Family("beta", ("a", "b"), {
    "logpdf": _beta_logpdf,
    "cdf": _beta_cdf, "sf": _beta_sf,
    "logcdf": lambda z, a, b: oxmera.log(_beta_cdf(z, a, b)),
    "logsf": lambda z, a, b: oxmera.log(_beta_sf(z, a, b)),
}, valid=lambda a, b: oxmera.logical_and(oxmera.gt(a, 0), oxmera.gt(b, 0)),
    description="beta")


# -- discrete families ----------------------------------------------------------------------

def _is_count(k, high=None):
    # a non-negative integer (at most high): elsewhere the mass is 0
    whole = oxmera.logical_and(oxmera.eq(k, oxmera.floor(k)), oxmera.ge(k, 0))
    return whole if high is None else oxmera.logical_and(whole, oxmera.le(k, high))


def _poisson_logpmf(k, mu):
    count = _is_count(k)
    safe = _where(count, k, 0.0)
    value = special.xlogy(safe, mu) - mu - special.gammaln(safe + 1)
    return _where(count, value, -math.inf)


def _poisson_cdf(k, mu):
    # P(K <= k) = Q(floor(k) + 1, mu); 0 below 0
    below = oxmera.lt(k, 0)
    top = oxmera.floor(_where(below, 0.0, k))
    return _where(below, 0.0, special.gammaincc(top + 1, mu))


def _poisson_sf(k, mu):
    below = oxmera.lt(k, 0)
    top = oxmera.floor(_where(below, 0.0, k))
    return _where(below, 1.0, special.gammainc(top + 1, mu))


poisson = Family("poisson", ("mu",), {
    "logpmf": _poisson_logpmf,
    "cdf": _poisson_cdf, "sf": _poisson_sf,
    "logcdf": lambda k, mu: oxmera.log(_poisson_cdf(k, mu)),
    "logsf": lambda k, mu: oxmera.log(_poisson_sf(k, mu)),
}, valid=lambda mu: oxmera.ge(mu, 0), discrete=True, description="Poisson")


def _binom_logpmf(k, n, p):
    count = _is_count(k, n)
    safe = _where(count, k, 0.0)
    value = (special.gammaln(n + 1) - special.gammaln(safe + 1) - special.gammaln(n - safe + 1)
             + special.xlogy(safe, p) + special.xlog1py(n - safe, -p))
    return _where(count, value, -math.inf)


def _binom_cdf(k, n, p, upper=False):
    # P(K <= j) = I_{1-p}(n - j, j + 1) for 0 <= j < n, with j = floor(k)
    j = oxmera.floor(k)
    inner = oxmera.logical_and(oxmera.ge(j, 0), oxmera.lt(j, n))
    safe = _where(inner, j, 0.0)
    safe_n = _where(inner, n, 1.0)
    value = (special.betainc(safe + 1, safe_n - safe, p) if upper
             else special.betainc(safe_n - safe, safe + 1, 1 - p))
    low, high = (1.0, 0.0) if upper else (0.0, 1.0)
    return _where(inner, value, _where(oxmera.lt(j, 0), low, high))


binom = Family("binom", ("n", "p"), {
    "logpmf": _binom_logpmf,
    "cdf": _binom_cdf, "sf": lambda k, n, p: _binom_cdf(k, n, p, upper=True),
    "logcdf": lambda k, n, p: oxmera.log(_binom_cdf(k, n, p)),
    "logsf": lambda k, n, p: oxmera.log(_binom_cdf(k, n, p, upper=True)),
}, valid=lambda n, p: oxmera.logical_and(_is_count(n), _inside(p, 0, 1)), discrete=True,
    description="binomial", safe=(1.0, 0.5))


def functions(family, module, methods, example_args):
    """The public functions of ``family``'s module: ``{method: function}``."""
    return {m: family.function(m, module, example_args) for m in methods}


def squeeze_scipy(out):
    """SciPy's multivariate results drop every axis of length 1 (``np.squeeze``)."""
    kept = [n for n in out.shape if n != 1]
    return out.reshape(tuple(kept)) if len(kept) != out.ndim else out


__all__ = ["Family", "functions", "squeeze_scipy", "norm", "expon", "laplace", "cauchy",
           "logistic", "t", "gamma", "beta", "poisson", "binom"]
