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
from oxmera.distributions._structured_transforms import (  # noqa: F401  (re-exported)
    CatTransform, CorrCholeskyTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
    ReshapeTransform, SoftmaxTransform, StackTransform, StickBreakingTransform)
from oxmera.distributions._transform import Transform, _ParameterFreeTransform
from oxmera.distributions.utils import _sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
           "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
           "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
           "identity_transform"]


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


class ExpTransform(_ParameterFreeTransform):
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


class SigmoidTransform(_ParameterFreeTransform):
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

    def _call(self, x):
        info = np.finfo(x.dtype)
        return oxmera.sigmoid(x).clamp(min=float(info.tiny), max=1.0 - float(info.eps))

    def _inverse(self, y):
        info = np.finfo(y.dtype)
        y = y.clamp(min=float(info.tiny), max=1.0 - float(info.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -oxmera.nn.functional.softplus(-x) - oxmera.nn.functional.softplus(x)


class SoftplusTransform(_ParameterFreeTransform):
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

    def _call(self, x):
        return oxmera.nn.functional.softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -oxmera.nn.functional.softplus(-x)


class TanhTransform(_ParameterFreeTransform):
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

    def _call(self, x):
        return oxmera.tanh(x)

    def _inverse(self, y):
        return oxmera.atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)): stable for large |x|
        return 2.0 * (math.log(2.0) - x - oxmera.nn.functional.softplus(-2.0 * x))


class AbsTransform(_ParameterFreeTransform):
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
