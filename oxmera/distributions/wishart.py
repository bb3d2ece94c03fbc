"""The Wishart distribution over positive-definite matrices."""
import math
import numbers
import warnings

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.chi2 import Chi2
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.exp_family import ExponentialFamily
from oxmera.distributions.multivariate_normal import _cholesky
from oxmera.distributions.utils import _draw, _rng, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: ``sum_{i<p} digamma(x - i/2)``."""
    return sum(oxmera.digamma(x - i / 2) for i in range(p))


def _logdet_positive_definite(matrix):
    return 2 * _cholesky(matrix).diagonal(dim1=-2, dim2=-1).log().sum(-1)


class Wishart(ExponentialFamily):
    """The Wishart distribution with ``df`` degrees of freedom and scale matrix given as
    exactly one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``.

    ``rsample`` uses the Bartlett decomposition (chi-squared diagonal, normal
    lower triangle), reparameterized through ``Chi2`` (``Gamma``). Unlike
    PyTorch it does not redraw the rare singular samples of ``p - 1 < df < p``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Wishart
    >>> d = Wishart(oxmera.tensor(3.0), covariance_matrix=oxmera.eye(2))
    >>> d.mean.tolist(), round(d.log_prob(oxmera.eye(2)).item(), 4)
    ([[3.0, 0.0], [0.0, 3.0]], -3.531)
    """

    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = oxmera.tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = np.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape))
            self.df = df.expand(*batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        matrix_shape = batch_shape + event_shape
        if scale_tril is not None:
            self.scale_tril = param.expand(*matrix_shape)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(*matrix_shape)
            self._unbroadcasted_scale_tril = _cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(*matrix_shape)
            self._unbroadcasted_scale_tril = _cholesky(oxmera.linalg.inv(precision_matrix))
        if bool((self.df < p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = tuple(batch_shape)
        matrix_shape = batch_shape + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(*matrix_shape)
        new.df = self.df.expand(*batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*matrix_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    def _df_matrix(self):
        return self.df.reshape(*self._batch_shape, 1, 1)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(*self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return oxmera.matmul(tril, tril.mT).expand(*self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return oxmera.linalg.inv(self.covariance_matrix)

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = oxmera.where(factor <= 0, oxmera.full_like(factor, float("nan")), factor)
        return factor.reshape(*self._batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self):
        cov = self.covariance_matrix
        diagonal = cov.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (cov.pow(2) + diagonal.unsqueeze(-1) * diagonal.unsqueeze(-2))

    def rsample(self, sample_shape=()):
        p = self._event_shape[-1]
        sample_shape = tuple(sample_shape)
        # Bartlett: A lower triangular, A_ii^2 ~ Chi2(df - i), A_ij ~ N(0, 1) below
        chi2_df = self.df.unsqueeze(-1) - oxmera.arange(p, dtype=self.df.dtype)
        chi2 = Chi2(chi2_df, validate_args=False).rsample(sample_shape)
        eps = float(np.finfo(self.df.dtype).eps)
        diagonal = oxmera.diag_embed(chi2.sqrt().clamp(min=eps))
        shape = sample_shape + tuple(self._batch_shape) + (p, p)
        normals = _draw(_rng("Wishart.rsample()").standard_normal(shape), self.df)
        lower = normals.tril(-1) + diagonal
        chol = oxmera.matmul(self._unbroadcasted_scale_tril, lower)
        return oxmera.matmul(chol, chol.mT)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        half_log_det_scale = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = oxmera.linalg.solve(self.covariance_matrix, value).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_log_det_scale) - oxmera.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * _logdet_positive_definite(value) - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        half_log_det_scale = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det_scale) + oxmera.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-_logdet_positive_definite(-2 * x) + _LOG_2 * p)
                + oxmera.mvlgamma(y + (p + 1) / 2, p=p))
