"""The von Mises distribution: a circular normal on ``[-pi, pi)``."""
import math

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._scalar_family import _ScalarFamily
from oxmera.distributions.utils import _draw, _rng

__all__ = ["VonMises"]


def _log_modified_bessel_i0(x):
    """``log I0(x)`` without overflow: ``log(i0e(x)) + x`` (x >= 0)."""
    return oxmera.log(oxmera.special.i0e(x)) + x


class VonMises(_ScalarFamily):
    """The von Mises distribution with mean direction ``loc`` and ``concentration``.

    Not reparameterizable (as in PyTorch); samples come from NumPy's von Mises
    sampler. ``mean`` is ``loc``; ``variance`` the circular variance
    ``1 - I1(k) / I0(k)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import VonMises
    >>> d = VonMises(oxmera.tensor(0.0), oxmera.tensor(1.0))
    >>> round(d.log_prob(oxmera.tensor(0.0)).item(), 4)
    -1.0738
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False
    _params = ("loc", "concentration")

    def __init__(self, loc, concentration, validate_args=None):
        super().__init__(loc, concentration, validate_args=validate_args)

    def log_prob(self, value):
        value = self._checked(value)
        return (self.concentration * oxmera.cos(value - self.loc) - math.log(2 * math.pi)
                - _log_modified_bessel_i0(self.concentration))

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oxmera.no_grad():
            values = _rng("VonMises.sample()").vonmises(self.loc.detach().numpy(),
                                                         self.concentration.detach().numpy(), shape)
            # into [-pi, pi) around loc, as PyTorch's sampler returns
            values = np.mod(values + np.pi, 2 * np.pi) - np.pi
            return _draw(values, self.loc)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 1 - oxmera.special.i1e(self.concentration) / oxmera.special.i0e(self.concentration)
