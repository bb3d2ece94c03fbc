"""``oxmera.numpy.random``: ``numpy.random``'s draws as tensors, from oxmera's generator.

The draws come from ``oxmera.default_generator`` (so ``oxmera.manual_seed``
and ``onp.random.seed`` make them repeatable) through NumPy's own
``numpy.random.Generator`` methods; the legacy names map to them
(``rand`` -> ``random``, ``randn`` -> ``standard_normal``, ``randint`` ->
``integers``). Results are leaf tensors. Distribution parameters may be
tensors that do not require grad; one that does raises ``TypeError`` (no
gradient rule: write ``mu + sigma * onp.random.randn(n)`` to
reparameterize).
"""
import numpy as np

from oxmera import random as _random
from oxmera.numpy import _wrap

#: numpy.random's legacy functions -> the numpy.random.Generator method that draws them.
_LEGACY = {"rand": "random", "randn": "standard_normal", "random_sample": "random",
           "ranf": "random", "sample": "random", "randint": "integers"}

#: numpy.random.Generator methods offered under their own names.
_METHODS = ("random", "standard_normal", "normal", "uniform", "integers", "choice",
            "permutation", "exponential", "standard_exponential", "gamma", "standard_gamma",
            "beta", "binomial", "poisson", "multinomial", "multivariate_normal", "dirichlet",
            "laplace", "logistic", "lognormal", "standard_t", "standard_cauchy", "chisquare",
            "geometric", "gumbel", "rayleigh", "weibull", "vonmises", "pareto", "power",
            "negative_binomial", "hypergeometric", "triangular", "wald", "f")

__all__ = ["seed", "default_rng", *sorted({*_LEGACY, *_METHODS})]


def _draw(name, method):
    where = f"oxmera.numpy.random.{name}"

    def draw(*args, **kwargs):
        if _wrap.needs_gradient(args, kwargs):
            raise _wrap.no_gradient_error(
                f"random.{name}", "draws are not reparameterized; write e.g. "
                "loc + scale * oxmera.numpy.random.standard_normal(size)")
        if name in ("rand", "randn"):
            args = (args,) if args else ()        # the sizes are separate arguments
        generator = _random.numpy_generator(None, where)
        result = getattr(generator, method)(*_wrap.values(args), **_wrap.values(kwargs))
        return _wrap.as_tensors(np.asarray(result))     # a single draw too: a 0-d tensor
    draw.__name__ = draw.__qualname__ = name
    draw.__module__ = __name__
    call = f"onp.random.{name}({_EXAMPLE_ARGS.get(name, '')})"
    draw.__doc__ = (f"``numpy.random.{name}`` as a tensor, drawn with "
                    f"``numpy.random.Generator.{method}`` from oxmera's default generator.\n\n"
                    f"Examples\n--------\n>>> import oxmera.numpy as onp\n"
                    f">>> onp.random.seed(0)\n>>> a = {call}\n"
                    f">>> onp.random.seed(0)\n>>> b = {call}\n"
                    f">>> isinstance(a, oxmera.Tensor) and bool((a == b).all())\nTrue\n")
    return draw


_EXAMPLE_ARGS = {"rand": "2", "randn": "2", "random_sample": "2", "ranf": "2", "sample": "2",
                 "randint": "0, 5, 3", "integers": "0, 5, 3", "random": "2",
                 "standard_normal": "2", "normal": "1.0, 2.0, 3", "uniform": "0.0, 1.0, 3",
                 "choice": "5, 2", "permutation": "4", "exponential": "1.0, 3",
                 "standard_exponential": "3", "gamma": "2.0, 1.0, 3", "standard_gamma": "2.0, 3",
                 "beta": "2.0, 3.0, 3", "binomial": "5, 0.5, 3", "poisson": "2.0, 3",
                 "multinomial": "5, [0.5, 0.5]", "multivariate_normal": "[0.0, 0.0], "
                 "[[1.0, 0.0], [0.0, 1.0]]", "dirichlet": "[1.0, 2.0]",
                 "laplace": "0.0, 1.0, 3", "logistic": "0.0, 1.0, 3",
                 "lognormal": "0.0, 1.0, 3", "standard_t": "3.0, 3", "standard_cauchy": "3",
                 "chisquare": "2.0, 3", "geometric": "0.5, 3", "gumbel": "0.0, 1.0, 3",
                 "rayleigh": "1.0, 3", "weibull": "2.0, 3", "vonmises": "0.0, 1.0, 3",
                 "pareto": "2.0, 3", "power": "2.0, 3", "negative_binomial": "3, 0.5, 3",
                 "hypergeometric": "5, 5, 3, 3", "triangular": "0.0, 0.5, 1.0, 3",
                 "wald": "1.0, 1.0, 3", "f": "2.0, 3.0, 3"}


def seed(seed=None):
    """``numpy.random.seed``: seed oxmera's default generator (``oxmera.manual_seed``).

    Without a seed, a fresh one from the operating system (``oxmera.seed()``).

    Examples
    --------
    >>> import oxmera.numpy as onp
    >>> onp.random.seed(3)
    >>> a = onp.random.randn(2)
    >>> onp.random.seed(3)
    >>> bool((onp.random.randn(2) == a).all())
    True
    """
    import oxmera
    if seed is None:
        oxmera.seed()
    else:
        oxmera.manual_seed(int(seed))


class _TensorGenerator:
    """A ``numpy.random.Generator`` whose draws are tensors (what :func:`default_rng` returns)."""

    def __init__(self, generator):
        self._generator = generator

    def __getattr__(self, name):
        method = getattr(self._generator, name)
        if not callable(method):
            return method

        def draw(*args, **kwargs):
            if _wrap.needs_gradient(args, kwargs):
                raise _wrap.no_gradient_error(f"random.Generator.{name}")
            result = method(*_wrap.values(args), **_wrap.values(kwargs))
            return _wrap.as_tensors(np.asarray(result) if np.isscalar(result) else result)
        return draw

    def __repr__(self):
        return f"<oxmera.numpy.random generator over {self._generator!r}>"


def default_rng(seed=None):
    """``numpy.random.default_rng``: an independent generator whose draws are tensors.

    Examples
    --------
    >>> import oxmera.numpy as onp
    >>> rng = onp.random.default_rng(0)
    >>> x = rng.standard_normal(3)
    >>> x.dtype, tuple(x.shape)
    (dtype('float64'), (3,))
    >>> bool((x == onp.random.default_rng(0).standard_normal(3)).all())
    True
    """
    return _TensorGenerator(np.random.default_rng(seed))


globals().update({name: _draw(name, _LEGACY.get(name, name)) for name in __all__[2:]})
