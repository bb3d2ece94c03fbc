"""Bijections for ``TransformedDistribution``: ``y = T(x)`` with ``inv`` and
``log_abs_det_jacobian(x, y)``, all built from oxmera ops (differentiable).

Implemented: ``ExpTransform``, ``AffineTransform``, ``SigmoidTransform``,
``TanhTransform``, ``SoftmaxTransform``, ``ComposeTransform``,
``PowerTransform``, ``AbsTransform``, ``IndependentTransform``,
``SoftplusTransform``, ``StickBreakingTransform``, ``CatTransform``,
``StackTransform``, ``ReshapeTransform``, ``LowerCholeskyTransform``,
``PositiveDefiniteTransform``, ``CumulativeDistributionTransform``,
``CorrCholeskyTransform``. With ``cache_size=1`` the last ``(x, y)`` pair is
reused, as PyTorch does.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions.transforms import AffineTransform, ExpTransform, ComposeTransform
>>> t = ComposeTransform([AffineTransform(1.0, 2.0), ExpTransform()])
>>> y = t(oxmera.tensor(0.0)); round(y.item(), 4), round(t.inv(y).item(), 4)
(2.7183, 0.0)
"""
import math
import numbers

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


class Transform:
    """The base class of invertible transforms with a computable log-det-Jacobian.

    Subclasses define ``_call(x)``, ``_inverse(y)``, ``log_abs_det_jacobian(x, y)``,
    ``domain``, ``codomain`` and ``bijective``/``sign`` where they apply.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import ExpTransform
    >>> ExpTransform().inv(oxmera.tensor(1.0)).item()
    0.0
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (``inv(T)(y) = T^{-1}(y)``)."""
        inverse = self._inv() if self._inv is not None else None
        if inverse is None:
            inverse = _InverseTransform(self)
            import weakref
            self._inv = weakref.ref(inverse)
        return inverse

    @property
    def sign(self):
        """The sign of the Jacobian determinant, for monotone univariate transforms."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """``log |dy/dx|`` (summed over the event dims)."""
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform, holding a strong reference to it."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def inv(self):
        return self._inv

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"_InverseTransform({self._inv!r})"


class ComposeTransform(Transform):
    """The transforms in ``parts`` applied in order (the first one first).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import ComposeTransform, ExpTransform
    >>> t = ComposeTransform([ExpTransform(), ExpTransform()])
    >>> round(t(oxmera.tensor(0.0)).item(), 4)
    2.7183
    """

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # widen the event dim to cover every part's
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim -= part.codomain.event_dim
            event_dim += part.domain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim -= part.domain.event_dim
            event_dim += part.codomain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        return ComposeTransform([p.inv for p in reversed(self.parts)])

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return oxmera.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, x_in, y_out in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(x_in, y_out),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        result = terms[0]
        for term in terms[1:]:
            result = result + term
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` extra event dims (its
    log-det-Jacobian summed over them).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import ExpTransform, IndependentTransform
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> x = oxmera.tensor([1.0, 2.0]); t.log_abs_det_jacobian(x, t(x)).item()
    3.0
    """

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    @property
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        return self.base_transform(x)

    def _inverse(self, y):
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")


class ExpTransform(Transform):
    """``y = exp(x)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import ExpTransform
    >>> ExpTransform().log_abs_det_jacobian(oxmera.tensor(2.0), None).item()
    2.0
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return oxmera.exp(x)

    def _inverse(self, y):
        return oxmera.log(y)

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on positive ``x``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import PowerTransform
    >>> PowerTransform(2.0)(oxmera.tensor(3.0)).item()
    9.0
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.exponent = exponent

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        if isinstance(self.exponent, oxmera.Tensor):
            return self.exponent.sign()
        return 1 if self.exponent > 0 else -1 if self.exponent < 0 else 0

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return bool(oxmera.as_tensor(self.exponent).eq(oxmera.as_tensor(other.exponent)).all())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return tuple(np.broadcast_shapes(tuple(shape), tuple(getattr(self.exponent, "shape", ()))))

    inverse_shape = forward_shape


class SigmoidTransform(Transform):
    """``y = sigmoid(x)`` onto the open unit interval.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import SigmoidTransform
    >>> SigmoidTransform().inv(oxmera.tensor(0.5)).item()
    0.0
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        info = np.finfo(x.dtype)
        return oxmera.sigmoid(x).clamp(min=float(info.tiny), max=1.0 - float(info.eps))

    def _inverse(self, y):
        info = np.finfo(y.dtype)
        y = y.clamp(min=float(info.tiny), max=1.0 - float(info.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -oxmera.nn.functional.softplus(-x) - oxmera.nn.functional.softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import SoftplusTransform
    >>> round(SoftplusTransform()(oxmera.tensor(0.0)).item(), 4)
    0.6931
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return oxmera.nn.functional.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -oxmera.nn.functional.softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)`` onto ``(-1, 1)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import TanhTransform
    >>> TanhTransform().inv(oxmera.tensor(0.0)).item()
    0.0
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return oxmera.tanh(x)

    def _inverse(self, y):
        return oxmera.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)): stable for large |x|
        return 2.0 * (math.log(2.0) - x - oxmera.nn.functional.softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not injective: ``inv`` returns the positive root).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import AbsTransform
    >>> AbsTransform()(oxmera.tensor(-2.0)).item()
    2.0
    """

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x`` (``event_dim`` rightmost dims form one event).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.transforms import AffineTransform
    >>> t = AffineTransform(1.0, 2.0)
    >>> x = oxmera.tensor(3.0)
    >>> t(x).item(), round(t.log_abs_det_jacobian(x, t(x)).item(), 4)
    (7.0, 0.6931)
    """

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @property
    def codomain(self):
        return self.domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False

        def same(a, b):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                return a == b
            return bool((oxmera.as_tensor(a) == oxmera.as_tensor(b)).all())
        return same(self.loc, other.loc) and same(self.scale, other.scale)

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = oxmera.full_like(x, math.log(abs(scale)))
        else:
            result = oxmera.abs(scale).log()
        if self.event_dim:
            result_size = tuple(result.shape[:result.dim() - self.event_dim]) + (-1,)
            result = result.reshape(*result_size).sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(*shape)

    def forward_shape(self, shape):
        return tuple(np.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                         tuple(getattr(self.scale, "shape", ()))))

    inverse_shape = forward_shape


class SoftmaxTransform(Transform):
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

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(Transform):
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

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

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


class LowerCholeskyTransform(Transform):
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

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + oxmera.diag_embed(x.diagonal(dim1=-2, dim2=-1).exp())

    def _inverse(self, y):
        return y.tril(-1) + oxmera.diag_embed(y.diagonal(dim1=-2, dim2=-1).log())


class PositiveDefiniteTransform(Transform):
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

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

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


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: a univariate distribution's support onto ``[0, 1]``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Normal
    >>> from oxmera.distributions.transforms import CumulativeDistributionTransform
    >>> t = CumulativeDistributionTransform(Normal(0.0, 1.0))
    >>> t(oxmera.tensor(0.0)).item()
    0.5
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


class CorrCholeskyTransform(Transform):
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

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

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
