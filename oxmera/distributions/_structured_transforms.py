"""Transforms of vectors and matrices (event dimension 1 or 2: softmax, stick breaking,
Cholesky factors, correlation Cholesky factors, reshapes) and the combinators that
apply transforms to slices (``CatTransform``, ``StackTransform``). Public through
``oxmera.distributions.transforms``.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions.transforms import StickBreakingTransform
>>> tuple(StickBreakingTransform()(oxmera.zeros(4, 2)).shape)
(4, 3)
"""
import math

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._transform import Transform, _ParameterFreeTransform
from oxmera.distributions.utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "CorrCholeskyTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
           "StackTransform", "StickBreakingTransform"]


class SoftmaxTransform(_ParameterFreeTransform):
    """``y = softmax(x)`` over the last dim (not bijective: ``inv`` is ``log`` up to a shift).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import SoftmaxTransform
    >>> SoftmaxTransform()(oxmera.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(_ParameterFreeTransform):
    """Unconstrained vectors of length ``n`` onto the simplex of ``n + 1`` entries, by
    stick breaking (bijective; used by ``biject_to(constraints.simplex)``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import StickBreakingTransform
    >>> y = StickBreakingTransform()(oxmera.tensor([0.0, 0.0]))
    >>> [round(v, 4) for v in y.tolist()]
    [0.3333, 0.3333, 0.3333]
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    @staticmethod
    def _offset_log(n, like):
        """``log(n - k)`` for k = 0..n-1: centres the breaks so x = 0 is the uniform point."""
        return oxmera.log(oxmera.arange(n, 0, -1, dtype=like.dtype))

    def _call(self, x):
        z = oxmera.sigmoid(x - self._offset_log(x.shape[-1], x))
        z_cumprod = (1 - z).cumprod(-1)
        ones = oxmera.ones(*x.shape[:-1], 1, dtype=x.dtype)
        return oxmera.cat([z, ones], -1) * oxmera.cat([ones, z_cumprod], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=float(np.finfo(y.dtype).tiny))
        return y_crop.log() - remaining.log() + self._offset_log(y_crop.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._offset_log(x.shape[-1], x)
        return (-x + oxmera.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class LowerCholeskyTransform(_ParameterFreeTransform):
    """Unconstrained square matrices onto lower-triangular ones with a positive diagonal
    (the strict lower triangle kept, the diagonal exponentiated).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import LowerCholeskyTransform
    >>> LowerCholeskyTransform()(oxmera.tensor([[0.0, 5.0], [2.0, 0.0]])).tolist()
    [[1.0, 0.0], [2.0, 1.0]]
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + oxmera.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + oxmera.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(_ParameterFreeTransform):
    """Unconstrained square matrices onto positive-definite ones: ``L @ L.mT`` with
    ``L`` from ``LowerCholeskyTransform``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import PositiveDefiniteTransform
    >>> PositiveDefiniteTransform()(oxmera.zeros(2, 2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return oxmera.matmul(lower, lower.mT)

    def _inverse(self, y):
        from oxmera.distributions.multivariate_normal import _cholesky
        return LowerCholeskyTransform().inv(_cholesky(y))


class CatTransform(Transform):
    """``tseq[i]`` applied to the i-th piece (``lengths[i]`` long) of dimension ``dim``,
    as ``oxmera.cat`` joins them.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import CatTransform, ExpTransform, identity_transform
    >>> t = CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[1, 1])
    >>> t(oxmera.tensor([0.0, 0.0])).tolist()
    [1.0, 0.0]
    """

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _pieces(self, z, what):
        if z.shape[self.dim] != self.length:
            raise AssertionError(f"{what}.size({self.dim}) = {z.shape[self.dim]} must equal "
                                 f"length {self.length}")
        start = 0
        for length in self.lengths:
            yield z.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        return oxmera.cat([t(piece) for t, piece in zip(self.transforms, self._pieces(x, "x"))],
                          self.dim)

    def _inverse(self, y):
        return oxmera.cat([t.inv(piece) for t, piece in
                           zip(self.transforms, self._pieces(y, "y"))], self.dim)

    def log_abs_det_jacobian(self, x, y):
        dim = self.dim if self.dim >= 0 else self.dim + x.dim()
        terms = []
        for t, x_piece, y_piece in zip(self.transforms, self._pieces(x, "x"),
                                       self._pieces(y, "y")):
            term = t.log_abs_det_jacobian(x_piece, y_piece)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        if dim < x.dim() - self.event_dim:  # the cat dim is a batch dim
            return oxmera.cat(terms, dim)
        result = terms[0]
        for term in terms[1:]:
            result = result + term
        return result

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` applied to the i-th slice of dimension ``dim``, as ``oxmera.stack``
    joins them.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import ExpTransform, StackTransform
    >>> t = StackTransform([ExpTransform(), ExpTransform().inv], dim=0)
    >>> t(oxmera.tensor([0.0, 1.0])).tolist()
    [1.0, 0.0]
    """

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, z, what):
        if z.shape[self.dim] != len(self.transforms):
            raise AssertionError(f"{what}.size({self.dim}) = {z.shape[self.dim]} must equal "
                                 f"len(transforms) {len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        return oxmera.stack([t(s) for t, s in zip(self.transforms, self._slices(x, "x"))],
                            self.dim)

    def _inverse(self, y):
        return oxmera.stack([t.inv(s) for t, s in zip(self.transforms, self._slices(y, "y"))],
                            self.dim)

    def log_abs_det_jacobian(self, x, y):
        return oxmera.stack([t.log_abs_det_jacobian(xs, ys) for t, xs, ys in
                             zip(self.transforms, self._slices(x, "x"), self._slices(y, "y"))],
                            self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` dims to ``out_shape`` (unit Jacobian).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import ReshapeTransform
    >>> tuple(ReshapeTransform((4,), (2, 2))(oxmera.zeros(3, 4)).shape)
    (3, 2, 2)
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = tuple(in_shape)
        self.out_shape = tuple(out_shape)
        if int(np.prod(self.in_shape)) != int(np.prod(self.out_shape)):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(*(batch_shape + self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(*(batch_shape + self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return oxmera.zeros(batch_shape, dtype=x.dtype)

    def forward_shape(self, shape):
        cut = len(shape) - len(self.in_shape)
        if cut < 0 or tuple(shape[cut:]) != self.in_shape:
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got "
                             f"{self.in_shape}")
        return tuple(shape[:cut]) + self.out_shape

    def inverse_shape(self, shape):
        cut = len(shape) - len(self.out_shape)
        if cut < 0 or tuple(shape[cut:]) != self.out_shape:
            raise ValueError(f"Shape mismatch: expected {tuple(shape[cut:])} but got "
                             f"{self.out_shape}")
        return tuple(shape[:cut]) + self.in_shape


class CorrCholeskyTransform(_ParameterFreeTransform):
    """Unconstrained vectors of length ``D (D - 1) / 2`` onto Cholesky factors of ``D x D``
    correlation matrices: ``tanh`` onto ``(-1, 1)``, then stick breaking along each row
    so every row has unit norm (used by ``biject_to(constraints.corr_cholesky)``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import CorrCholeskyTransform
    >>> L = CorrCholeskyTransform()(oxmera.zeros(3))
    >>> L.tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = float(np.finfo(x.dtype).eps)
        r = vec_to_tril_matrix(oxmera.tanh(x).clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # row i: y_ij = r_ij * prod_{k<j} sqrt(1 - r_ik^2), the diagonal what is left
        remaining = (1 - r ** 2).sqrt().cumprod(-1)
        ones = oxmera.ones(*r.shape[:-1], 1, dtype=x.dtype)
        shifted = oxmera.cat([ones, remaining[..., :-1]], -1)
        return (r + oxmera.eye(r.shape[-1], dtype=x.dtype)) * shifted

    def _inverse(self, y):
        remaining = 1 - (y * y).cumsum(-1)
        ones = oxmera.ones(*y.shape[:-1], 1, dtype=y.dtype)
        shifted = oxmera.cat([ones, remaining[..., :-1]], -1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(shifted, diag=-1).sqrt()
        return (oxmera.log1p(t) - oxmera.log1p(-t)) / 2

    def log_abs_det_jacobian(self, x, y):
        remaining = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(remaining, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + oxmera.nn.functional.softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattend lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)
