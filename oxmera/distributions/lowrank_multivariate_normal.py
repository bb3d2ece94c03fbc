"""The multivariate normal with a low-rank plus diagonal covariance."""
import math

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.multivariate_normal import _batch_mahalanobis, _cholesky
from oxmera.distributions.utils import _batch_mv, _draw, _rng, lazy_property

__all__ = ["LowRankMultivariateNormal"]


class LowRankMultivariateNormal(Distribution):
    """The normal with covariance ``cov_factor @ cov_factor.mT + diag(cov_diag)``.

    ``log_prob`` and ``entropy`` use the Woodbury identity and the determinant
    lemma through the ``rank x rank`` capacitance matrix, so they cost
    ``O(n rank^2)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import LowRankMultivariateNormal
    >>> d = LowRankMultivariateNormal(oxmera.zeros(2), oxmera.zeros(2, 1), oxmera.ones(2))
    >>> round(d.log_prob(oxmera.zeros(2)).item(), 4)
    -1.8379
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        batch_shape = np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]),
                                          tuple(cov_diag.shape[:-1]))
        rank = cov_factor.shape[-1]
        self.loc = loc.expand(*(batch_shape + event_shape))
        self.cov_factor = cov_factor.expand(*(batch_shape + event_shape + (rank,)))
        self.cov_diag = cov_diag.expand(*(batch_shape + event_shape))
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = self._capacitance_cholesky(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    @staticmethod
    def _capacitance_cholesky(W, D):
        """Cholesky factor of ``I + W^T D^{-1} W``."""
        m = W.shape[-1]
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        capacitance = oxmera.matmul(Wt_Dinv, W) + oxmera.eye(m, dtype=W.dtype)
        return _cholesky(capacitance)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        event = tuple(self.event_shape)
        new.loc = self.loc.expand(*(batch_shape + event))
        new.cov_diag = self.cov_diag.expand(*(batch_shape + event))
        new.cov_factor = self.cov_factor.expand(*(batch_shape + tuple(self.cov_factor.shape[-2:])))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        variance = self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
        return variance.expand(*(tuple(self._batch_shape) + tuple(self._event_shape)))

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        cov = oxmera.matmul(W, W.mT) + oxmera.diag_embed(self._unbroadcasted_cov_diag)
        return cov.expand(*(tuple(self._batch_shape) + tuple(self._event_shape) * 2))

    @lazy_property
    def scale_tril(self):
        return _cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        return oxmera.linalg.inv(self.covariance_matrix)

    def rsample(self, sample_shape=()):
        shape = tuple(self._extended_shape(sample_shape))
        rank = self._unbroadcasted_cov_factor.shape[-1]
        rng = _rng("LowRankMultivariateNormal.rsample()")
        eps_W = _draw(rng.standard_normal(shape[:-1] + (rank,)), self.loc)
        eps_D = _draw(rng.standard_normal(shape), self.loc)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_W)
                + self._unbroadcasted_cov_diag.sqrt() * eps_D)

    def _log_det(self):
        """``log det(W W^T + D)`` by the matrix determinant lemma."""
        return (2 * self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                + self._unbroadcasted_cov_diag.log().sum(-1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv = W.mT / D.unsqueeze(-2)
        # Woodbury: diff^T D^{-1} diff - |C^{-1/2} W^T D^{-1} diff|^2
        mahalanobis = ((diff.pow(2) / D).sum(-1)
                       - _batch_mahalanobis(self._capacitance_tril, _batch_mv(Wt_Dinv, diff)))
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis + self._log_det())

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        if len(self._batch_shape) == 0:
            return h
        return h.expand(*self._batch_shape)
