"""The multivariate normal distribution, and the Cholesky pieces it needs.

``oxmera.linalg.cholesky`` is used when it exists; otherwise ``_cholesky`` below
composes the factorization from differentiable ops, column by column (fine
for the small event sizes distributions use; O(n) ops per matrix batch).
Triangular solves use ``oxmera.linalg.solve_triangular`` when it exists, else
``oxmera.linalg.solve`` (a general solve: exact and differentiable, only not
exploiting the triangle).
"""
import math

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _batch_mv, _draw, _rng, lazy_property

__all__ = ["MultivariateNormal"]


def _cholesky(matrix):
    """The lower Cholesky factor of symmetric positive-definite ``matrix`` (batched),
    differentiable to any order."""
    library = getattr(oxmera.linalg, "cholesky", None)
    if library is not None:
        return library(matrix)
    n = matrix.shape[-1]
    columns = []
    for j in range(n):
        remainder = matrix[..., :, j]
        if columns:
            previous = oxmera.stack(columns, -1)                 # (..., n, j)
            remainder = remainder - _batch_mv(previous, previous[..., j, :])
        pivot = remainder[..., j:j + 1].sqrt()
        below = oxmera.tensor(np.arange(n) >= j)
        columns.append(oxmera.where(below, remainder / pivot, oxmera.zeros((), dtype=matrix.dtype)))
    return oxmera.stack(columns, -1)


def _solve_lower(tril, rhs):
    """``tril^{-1} rhs`` for lower-triangular ``tril`` (matrices, broadcast batches)."""
    solve_triangular = getattr(oxmera.linalg, "solve_triangular", None)
    if solve_triangular is not None:
        return solve_triangular(tril, rhs, upper=False)
    return oxmera.linalg.solve(tril, rhs)


def _triangular_solve_vector(tril, vector):
    """``tril^{-1} vector`` over broadcast batch dims."""
    shape = np.broadcast_shapes(tuple(tril.shape[:-2]), tuple(vector.shape[:-1]))
    n = tril.shape[-1]
    tril = tril.expand(*shape, n, n)
    vector = vector.expand(*shape, n)
    return _solve_lower(tril, vector.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(scale_tril, diff):
    """``diff^T (L L^T)^{-1} diff`` for each batch entry."""
    return _triangular_solve_vector(scale_tril, diff).pow(2).sum(-1)


def _half_log_det(scale_tril):
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


class MultivariateNormal(Distribution):
    """The multivariate normal with mean ``loc`` and exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (lower Cholesky
    factor of the covariance).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import MultivariateNormal
    >>> d = MultivariateNormal(oxmera.zeros(2), covariance_matrix=oxmera.eye(2))
    >>> round(d.log_prob(oxmera.zeros(2)).item(), 4), tuple(d.event_shape)
    (-1.8379, (2,))
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given_count = sum(m is not None for m in (covariance_matrix, precision_matrix, scale_tril))
        if given_count != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril "
                             "may be specified.")
        given = next(m for m in (scale_tril, covariance_matrix, precision_matrix) if m is not None)
        name = ("scale_tril" if scale_tril is not None else
                "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        if given.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        batch_shape = np.broadcast_shapes(tuple(given.shape[:-2]), tuple(loc.shape[:-1]))
        event = tuple(given.shape[-2:])
        setattr(self, name, given.expand(*(batch_shape + event)))
        self.loc = loc.expand(*(batch_shape + (loc.shape[-1],)))
        super().__init__(batch_shape, tuple(self.loc.shape[-1:]), validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = _cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _cholesky(oxmera.linalg.inv(precision_matrix))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = tuple(batch_shape)
        loc_shape = batch_shape + tuple(self.event_shape)
        cov_shape = batch_shape + tuple(self.event_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(*loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(*cov_shape))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

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
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            *(tuple(self._batch_shape) + tuple(self._event_shape)))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = _draw(_rng("MultivariateNormal.rsample()").standard_normal(shape), self.loc)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) - half_log_det

    def entropy(self):
        half_log_det = _half_log_det(self._unbroadcasted_scale_tril)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return h
        return h.expand(*self._batch_shape)
