"""The half-Cauchy distribution: ``|X|`` for a centred Cauchy ``X``."""
import math

import oxmera
from oxmera.distributions.cauchy import Cauchy
from oxmera.distributions.half_normal import _Folded

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    """``|X|`` for ``X ~ Cauchy(0, scale)``; its mean and variance are infinite.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import HalfCauchy
    >>> d = HalfCauchy(oxmera.tensor(1.0))
    >>> round(d.cdf(oxmera.tensor(1.0)).item(), 4)
    0.5
    """

    _base = Cauchy

    @property
    def mean(self):
        return oxmera.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return oxmera.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype)
