"""Constraints: what values a distribution's parameters and samples may take.

Each constraint has ``check(value)``, a boolean tensor of the batch shape (the
event dimensions, ``event_dim`` of them, are reduced), ``is_discrete`` and
``event_dim``. The registry that maps a constraint to a bijection
(``biject_to``/``transform_to``) is not implemented.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions import constraints
>>> constraints.positive.check(oxmera.tensor([1.0, -1.0])).tolist()
[True, False]
>>> constraints.simplex.check(oxmera.tensor([0.25, 0.75])).item()
True
"""
import numpy as np

import oxmera

__all__ = ["Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky",
           "dependent", "dependent_property", "greater_than", "greater_than_eq",
           "half_open_interval", "independent", "integer_interval", "interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative",
           "nonnegative_integer", "one_hot", "positive", "positive_definite", "positive_integer",
           "positive_semidefinite", "real", "real_vector", "simplex", "square", "stack",
           "symmetric", "unit_interval"]


def _format(bound):
    """A bound as PyTorch formats it in a repr: a 0-d tensor as its number."""
    if isinstance(bound, oxmera.Tensor) and bound.dim() == 0:
        return bound.item()
    return bound


def _all_of(*conditions):
    """Elementwise AND of boolean tensors (or Python bools), broadcast."""
    result = conditions[0]
    for condition in conditions[1:]:
        result = oxmera.logical_and(result, condition)
    return result


class Constraint:
    """The base class: a region of values, checked by ``check(value)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.constraints import real
    >>> real.check(oxmera.tensor(float("nan"))).item()
    False
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        """A boolean tensor: which values satisfy the constraint."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (not checkable).

    Examples
    --------
    >>> from oxmera.distributions import constraints
    >>> constraints.dependent(is_discrete=False, event_dim=0).event_dim
    0
    """

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete = is_discrete
        self._event_dim = event_dim
        super().__init__()

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        if is_discrete is NotImplemented:
            is_discrete = self._is_discrete
        if event_dim is NotImplemented:
            event_dim = self._event_dim
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, x):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """Whether ``constraint`` is a dependent placeholder (skipped by validation).

    Examples
    --------
    >>> from oxmera.distributions import constraints
    >>> constraints.is_dependent(constraints.dependent), constraints.is_dependent(constraints.real)
    (True, False)
    """
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property whose support depends on the instance (``Uniform.support``).

    Examples
    --------
    >>> from oxmera.distributions import Uniform
    >>> Uniform(0.0, 2.0).support.upper_bound.item()
    2.0
    """

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        self._is_discrete = is_discrete
        self._event_dim = event_dim

    def __call__(self, fn):
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """A constraint whose ``reinterpreted_batch_ndims`` rightmost dims become event dims.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import constraints
    >>> constraints.independent(constraints.positive, 1).check(oxmera.tensor([1.0, -1.0])).item()
    False
    """

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        for _ in range(self.reinterpreted_batch_ndims):
            result = result.all(-1)
        return result

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return oxmera.logical_or(value == 0, value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        is_boolean = oxmera.logical_or(value == 0, value == 1)
        is_normalized = value.sum(-1) == 1
        return oxmera.logical_and(is_boolean.all(-1), is_normalized)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return _all_of(value % 1 == 0, self.lower_bound <= value, value <= self.upper_bound)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)}, "
                f"upper_bound={_format(self.upper_bound)})")


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return _all_of(value % 1 == 0, value >= self.lower_bound)

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)})"


class _Multinomial(Constraint):
    """Nonnegative counts summing to at most ``upper_bound`` (PyTorch checks ``<=``, not
    ``==``, and so does this).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import constraints
    >>> constraints.multinomial(3).check(oxmera.tensor([[1.0, 2.0], [3.0, 1.0]])).tolist()
    [True, False]
    """

    is_discrete = True
    event_dim = 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, x):
        return _all_of((x >= 0).all(-1), x.sum(-1) <= self.upper_bound)


class MixtureSameFamilyConstraint(Constraint):
    """The support of a ``MixtureSameFamily``: the component support, checked with the
    component dimension put back.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import constraints
    >>> c = constraints.MixtureSameFamilyConstraint(constraints.positive)
    >>> c.check(oxmera.tensor([1.0, -1.0])).tolist()
    [True, False]
    """

    def __init__(self, base_constraint):
        if not isinstance(base_constraint, Constraint):
            raise AssertionError(f"base_constraint must be a Constraint, got "
                                 f"{type(base_constraint).__name__}")
        self.base_constraint = base_constraint
        super().__init__()

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim

    def check(self, value):
        if value.dim() < self.event_dim:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.dim()}")
        result = self.base_constraint.check(value.unsqueeze(-1 - self.event_dim))
        keep = value.dim() - self.event_dim
        return result.reshape(*result.shape[:keep], -1).all(-1)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_constraint!r})"


class _Real(Constraint):
    def check(self, value):
        return value == value  # false only for NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound
        super().__init__()

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)})"


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return self.lower_bound <= value


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"{self.__class__.__name__[1:]}(upper_bound={_format(self.upper_bound)})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        super().__init__()

    def check(self, value):
        return _all_of(self.lower_bound <= value, value <= self.upper_bound)

    def __repr__(self):
        return (f"{self.__class__.__name__[1:]}(lower_bound={_format(self.lower_bound)}, "
                f"upper_bound={_format(self.upper_bound)})")


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return _all_of(self.lower_bound <= value, value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return _all_of((value >= 0).all(-1), (value.sum(-1) - 1).abs() < 1e-6)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        square = value.shape[-1] == value.shape[-2]
        return oxmera.full(tuple(value.shape[:-2]), square, dtype=oxmera.bool)


class _Symmetric(_Square):
    def check(self, value):
        if value.shape[-1] != value.shape[-2]:
            return super().check(value)
        return oxmera.isclose(value, value.mT, atol=1e-6).all(-1).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower_triangular = (value.tril() == value).reshape(*value.shape[:-2], -1).all(-1)
        positive_diagonal = (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)
        return _all_of(lower_triangular, positive_diagonal)


class _CorrCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        eps = float(np.finfo(value.dtype).eps) * value.shape[-1] * 10
        row_norm = oxmera.linalg.norm(value.detach(), dim=-1)
        unit_row_norm = ((row_norm - 1.0).abs() <= eps).all(-1)
        return _all_of(_LowerCholesky().check(value), unit_row_norm)


def _positive_definite(matrices, semi):
    """Per matrix of a batch: symmetric with positive (``semi``: nonnegative) eigenvalues."""
    array = matrices.detach().numpy()
    symmetric = np.isclose(array, np.swapaxes(array, -1, -2), atol=1e-6).all(axis=(-1, -2))
    eigenvalues = np.linalg.eigvalsh(array) if array.size else np.zeros(array.shape[:-1])
    definite = (eigenvalues >= 0) if semi else (eigenvalues > 0)
    return oxmera.tensor(symmetric & definite.all(-1))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        if value.shape[-1] != value.shape[-2]:
            return _Square.check(self, value)
        return _positive_definite(value, semi=True)


class _PositiveDefinite(_Symmetric):
    def check(self, value):
        if value.shape[-1] != value.shape[-2]:
            return _Square.check(self, value)
        return _positive_definite(value, semi=False)


class _Cat(Constraint):
    """Pieces of ``dim`` (of ``lengths``) each satisfying its own constraint.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import constraints
    >>> c = constraints.cat([constraints.real, constraints.positive], dim=0, lengths=[1, 1])
    >>> c.check(oxmera.tensor([-1.0, 1.0])).tolist()
    [True, True]
    """

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        pieces = []
        start = 0
        for constraint, length in zip(self.cseq, self.lengths):
            pieces.append(constraint.check(value.narrow(self.dim, start, length)))
            start += length
        return oxmera.cat(pieces, self.dim)


class _Stack(Constraint):
    """Slices of ``dim`` each satisfying its own constraint.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import constraints
    >>> c = constraints.stack([constraints.real, constraints.positive], dim=0)
    >>> c.check(oxmera.tensor([-1.0, -1.0])).tolist()
    [True, False]
    """

    def __init__(self, cseq, dim=0):
        self.cseq = list(cseq)
        self.dim = dim
        super().__init__()

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    def check(self, value):
        slices = [value.select(self.dim, i) for i in range(value.shape[self.dim])]
        return oxmera.stack([c.check(v) for c, v in zip(self.cseq, slices)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
multinomial = _Multinomial
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
positive_semidefinite = _PositiveSemidefinite()
positive_definite = _PositiveDefinite()
cat = _Cat
stack = _Stack
