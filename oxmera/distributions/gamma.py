"""The gamma distribution, and the reparameterized standard-gamma draw that ``Beta``,
``Dirichlet``, ``StudentT`` and ``Chi2``-style uses build on."""
import numbers

import numpy as np

import oxmera
from oxmera.autograd import Function
from oxmera.distributions import constraints
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Gamma"]


def _gamma_special(where):
    from oxmera.ops.special import scipy_special
    return scipy_special(where)


def _implicit_derivative(alpha, x, special):
    """``g = dx/dalpha`` of a Gamma(alpha, 1) draw ``x`` at its fixed quantile
    ``u = P(alpha, x)``: ``g = -(dP/dalpha) / p(x; alpha)`` (implicit reparameterization),
    ``dP/dalpha`` (no closed form) a central difference of SciPy's regularized
    incomplete gamma function; float64 arrays, and ``dP/dalpha`` and ``log p`` returned
    too for the second derivatives."""
    step = 1e-5 * np.maximum(alpha, 1e-3)
    dP_dalpha = (special.gammainc(alpha + step, x) - special.gammainc(alpha - step, x)) / (2 * step)
    log_density = (alpha - 1) * np.log(x) - x - special.gammaln(alpha)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        g = -dP_dalpha * np.exp(-log_density)
    return g, log_density


def _finite(values):
    # where the density underflows (a draw far in a tail) the quotient is 0/0 or x/0:
    # no usable derivative there, and 0 keeps the rest of the batch's gradients finite
    return np.nan_to_num(values, nan=0.0, posinf=0.0, neginf=0.0)


class _StandardGammaDerivative(Function):
    """``dx/dalpha`` (see ``_implicit_derivative``) as a function of ``(alpha, x)``,
    differentiable once more (so ``rsample`` has second derivatives): with
    ``dlog p/dalpha = log x - digamma(alpha)`` and ``dlog p/dx = (alpha - 1)/x - 1``,

    * ``dg/dx = -(log x - digamma(alpha)) - g * ((alpha - 1)/x - 1)`` (exact),
    * ``dg/dalpha = -P_aa / p - g * (log x - digamma(alpha))``, ``P_aa`` a second
      central difference of the incomplete gamma function.

    Third derivatives are not available (the backward's coefficients are constants).
    """

    @staticmethod
    def forward(ctx, alpha, x):
        special = _gamma_special("Gamma.rsample()")
        a = alpha.detach().numpy().astype(np.float64)
        v = x.detach().numpy().astype(np.float64)
        g, log_density = _implicit_derivative(a, v, special)
        ctx.save_for_backward(alpha, x)
        ctx.arrays = a, v, g, log_density
        return oxmera.tensor(_finite(g), dtype=alpha.dtype)

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        a, v, g, log_density = ctx.arrays
        special = _gamma_special("Gamma.rsample()")
        dlogp_dalpha = np.log(v) - special.digamma(a)
        dg_dx = -dlogp_dalpha - g * ((a - 1) / v - 1)
        step = 1e-4 * np.maximum(a, 1e-2)
        P_aa = (special.gammainc(a + step, v) - 2 * special.gammainc(a, v)
                + special.gammainc(a - step, v)) / step ** 2
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            dg_dalpha = -P_aa * np.exp(-log_density) - g * dlogp_dalpha
        return (grad * oxmera.tensor(_finite(dg_dalpha), dtype=alpha.dtype),
                grad * oxmera.tensor(_finite(dg_dx), dtype=alpha.dtype))


class _StandardGamma(Function):
    """A Gamma(alpha, 1) draw (NumPy's), reparameterized implicitly: its gradient is
    ``grad * dx/dalpha`` with ``dx/dalpha`` itself differentiable in ``alpha`` and in the
    draw (which depends on ``alpha`` through this node), as PyTorch's
    ``_standard_gamma``/``_standard_gamma_grad`` pair."""

    @staticmethod
    def forward(ctx, alpha, where):
        values = _rng(where).standard_gamma(alpha.detach().numpy())
        values = np.maximum(values, np.finfo(alpha.dtype).tiny)
        x = _draw(values, alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * _StandardGammaDerivative.apply(alpha, x), None


def _standard_gamma(concentration, where):
    """A Gamma(concentration, 1) draw of ``concentration``'s shape, reparameterized (first
    and second derivatives in ``concentration``)."""
    return _StandardGamma.apply(concentration, where)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    ``rsample`` is differentiable in both parameters: exactly (every order) in
    ``rate``; in ``concentration`` by implicit reparameterization, to second order
    (derivatives of the regularized incomplete gamma function in ``concentration``
    by finite differences, so about 1e-7 relative accuracy; needs SciPy).

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
