"""The Fisher-Snedecor (F) distribution."""
import numbers

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.gamma import Gamma
from oxmera.distributions.utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F distribution with ``df1`` and ``df2`` degrees of freedom: the ratio of two
    scaled chi-squared draws (``rsample`` through ``Gamma``'s).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import FisherSnedecor
    >>> d = FisherSnedecor(oxmera.tensor(4.0), oxmera.tensor(6.0))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(1.0)).item(), 4)
    (1.5, -0.8802)
    """

    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)
        if isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number):
            batch_shape = ()
        else:
            batch_shape = tuple(self.df1.shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return new

    @staticmethod
    def _nan_where(condition, value):
        return oxmera.where(condition, oxmera.full_like(value, float("nan")), value)

    @property
    def mean(self):
        return self._nan_where(self.df2 <= 2, self.df2 / (self.df2 - 2))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return self._nan_where(self.df1 <= 2, mode)

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        variance = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return self._nan_where(df2 <= 4, variance)

    def rsample(self, sample_shape=()):
        # X1 ~ Gamma(df1/2, rate=df1), X2 ~ Gamma(df2/2, rate=df2): X1 / X2 ~ F(df1, df2)
        tiny = float(np.finfo(self.df1.dtype).tiny)
        x1 = self._gamma1.rsample(sample_shape)
        x2 = self._gamma2.rsample(sample_shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1 = self.df1 * 0.5
        ct2 = self.df2 * 0.5
        ct3 = self.df1 / self.df2
        t1 = oxmera.lgamma(ct1 + ct2) - oxmera.lgamma(ct1) - oxmera.lgamma(ct2)
        t2 = ct1 * oxmera.log(ct3) + (ct1 - 1) * oxmera.log(value)
        t3 = (ct1 + ct2) * oxmera.log1p(ct3 * value)
        return t1 + t2 - t3
