"""The gamma distribution, and the reparameterized standard-gamma draw that ``Beta``,
``Dirichlet``, ``StudentT`` and ``Chi2``-style uses build on."""
import numbers

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Gamma"]


def _standard_gamma_derivative(alpha, x):
    """``dx/dalpha`` of a Gamma(alpha, 1) draw ``x`` by implicit reparameterization.

    Holding the draw's quantile ``u = P(alpha, x)`` fixed, ``dx/dalpha =
    -(dP/dalpha) / p(x; alpha)``; ``dP/dalpha`` (no closed form) is a central
    difference of SciPy's regularized incomplete gamma function, in float64.
    """
    from oxmera.ops.special import scipy_special
    special = scipy_special("Gamma.rsample()")
    alpha = np.asarray(alpha, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    step = 1e-5 * np.maximum(alpha, 1e-3)
    dP_dalpha = (special.gammainc(alpha + step, x) - special.gammainc(alpha - step, x)) / (2 * step)
    log_density = (alpha - 1) * np.log(x) - x - special.gammaln(alpha)
    with np.errstate(over="ignore", invalid="ignore"):
        derivative = -dP_dalpha * np.exp(-log_density)
    return np.nan_to_num(derivative, nan=0.0, posinf=0.0, neginf=0.0)


def _standard_gamma(concentration, where):
    """A Gamma(concentration, 1) draw of ``concentration``'s shape, reparameterized.

    The value is NumPy's draw (clamped to the dtype's smallest normal number, as
    PyTorch does); while recording, it is joined to ``concentration`` with the
    implicit-reparameterization derivative as ``x + (c - c.detach()) * dx/dc``, so the
    first derivative is exact and the second treats ``dx/dc`` as a constant.
    """
    values = _rng(where).standard_gamma(concentration.detach().numpy())
    values = np.maximum(values, np.finfo(concentration.dtype).tiny)
    x = _draw(values, concentration)
    if concentration.requires_grad and oxmera.is_grad_enabled():
        derivative = _draw(_standard_gamma_derivative(concentration.detach().numpy(), values),
                           concentration)
        x = x + (concentration - concentration.detach()) * derivative
    return x


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    ``rsample`` is differentiable in both parameters: exactly (every order) in
    ``rate``; in ``concentration`` by implicit reparameterization (first order;
    the second derivative misses the draw's own curvature in ``concentration``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Gamma
    >>> d = Gamma(oxmera.tensor(2.0), oxmera.tensor(1.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(1.0)).item(), 4)
    (2.0, -1.0)
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, numbers.Number) and isinstance(rate, numbers.Number):
            batch_shape = ()
        else:
            batch_shape = tuple(self.rate.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        value = _standard_gamma(self.concentration.expand(*shape), "Gamma.rsample()") / self.rate
        return value.clamp(min=float(np.finfo(value.dtype).tiny))

    def log_prob(self, value):
        if not isinstance(value, oxmera.Tensor):
            value = oxmera.tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (oxmera.xlogy(self.concentration, self.rate)
                + oxmera.xlogy(self.concentration - 1, value)
                - self.rate * value - oxmera.lgamma(self.concentration))

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return oxmera.lgamma(x + 1) + (x + 1) * oxmera.log(-y.reciprocal())

    @property
    def _mean_carrier_measure(self):
        return 0

    def entropy(self):
        return (self.concentration - oxmera.log(self.rate) + oxmera.lgamma(self.concentration)
                + (1.0 - self.concentration) * oxmera.digamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return oxmera.special.gammainc(self.concentration, self.rate * value)
