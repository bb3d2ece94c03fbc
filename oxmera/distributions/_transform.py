"""The ``Transform`` base class and the inverse of a transform; the transforms
themselves are in ``oxmera.distributions.transforms`` (elementwise ones and the
combinators) and ``_structured_transforms`` (vector and matrix ones).

Examples
--------
>>> import oxmera
>>> from oxmera.distributions.transforms import ExpTransform
>>> t = ExpTransform()
>>> t.inv.inv is t
True
"""
import weakref

from oxmera.distributions import constraints

__all__ = ["Transform"]


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
            # a weak reference: the inverse holds the transform strongly, not both ways
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


class _ParameterFreeTransform(Transform):
    """A transform without parameters: its instances are all equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


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
