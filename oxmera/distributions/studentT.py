"""Student's t distribution."""
import math


import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._scalar_family import _ScalarFamily
from oxmera.distributions.gamma import _standard_gamma
from oxmera.distributions.utils import _draw, _rng

__all__ = ["StudentT"]


class StudentT(_ScalarFamily):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``.

    ``rsample`` is ``loc + scale * Z / sqrt(G / df)`` with ``G`` a Gamma(df/2, 1/2)
    draw (reparameterized as ``Gamma`` is, see there).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import StudentT
    >>> d = StudentT(oxmera.tensor(3.0))
    >>> round(d.log_prob(oxmera.tensor(0.0)).item(), 4), d.variance.item()
    (-1.0009, 3.0)
    """

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _params = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        super().__init__(df, loc, scale, validate_args=validate_args)

    @property
    def mean(self):
        nan = oxmera.full_like(self.loc, float("nan"))
        return oxmera.where(self.df > 1, self.loc, nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        finite = self.scale.pow(2) * df / (df - 2)
        infinite = oxmera.full_like(finite, float("inf"))
        nan = oxmera.full_like(finite, float("nan"))
        return oxmera.where(df > 2, finite, oxmera.where(df > 1, infinite, nan))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        z = _draw(_rng("StudentT.rsample()").standard_normal(shape), self.loc)
        chi2 = 2 * _standard_gamma(self.df.expand(*shape) / 2, "StudentT.rsample()")
        return self.loc + self.scale * z * oxmera.rsqrt(chi2 / self.df)

    def log_prob(self, value):
        value = self._checked(value)
        y = (value - self.loc) / self.scale
        normalizer = (oxmera.log(self.scale) + 0.5 * oxmera.log(self.df) + 0.5 * math.log(math.pi)
                      + oxmera.lgamma(0.5 * self.df) - oxmera.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * oxmera.log1p(y ** 2 / self.df) - normalizer

    def entropy(self):
        half_df = 0.5 * self.df
        half_df_plus_half = half_df + 0.5
        lbeta = (oxmera.lgamma(half_df) + math.lgamma(0.5) - oxmera.lgamma(half_df_plus_half))
        return (oxmera.log(self.scale)
                + half_df_plus_half * (oxmera.digamma(half_df_plus_half) - oxmera.digamma(half_df))
                + 0.5 * oxmera.log(self.df) + lbeta)


