"""The ``Distribution`` base class: shapes, argument validation, the shared methods.

A distribution has a ``batch_shape`` (independent, not identically distributed
copies) and an ``event_shape`` (the shape of one draw). ``sample`` never
records; ``rsample`` (where ``has_rsample``) is a differentiable function of the
parameters (the reparameterization trick). Subclasses define the rest.
"""
import inspect
import warnings

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.utils import _extended_shape, lazy_property

__all__ = ["Distribution"]


def _format_value(value):
    """A tensor as PyTorch's f-strings show it: a 0-d one as its number."""
    return value.item() if value.dim() == 0 else value


class Distribution:
    """The base class of probability distributions (``torch.distributions.Distribution``).

    Parameters
    ----------
    batch_shape : tuple of int
    event_shape : tuple of int
    validate_args : bool, optional
        Check the parameters (here) and the values given to ``log_prob`` and
        friends against their constraints. Default: ``Distribution``'s default,
        True unless changed by ``set_default_validate_args``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Normal
    >>> d = Normal(oxmera.zeros(3), 1.0)
    >>> tuple(d.batch_shape), tuple(d.event_shape), tuple(d.sample((2,)).shape)
    ((3,), (), (2, 3))
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument validation on or off for distributions created from now on.

        Examples
        --------
        >>> from oxmera.distributions import Distribution
        >>> Distribution.set_default_validate_args(False)
        >>> Distribution.set_default_validate_args(True)
        """
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape = oxmera.Size(tuple(batch_shape))
        self._event_shape = oxmera.Size(tuple(event_shape))
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              f"`arg_constraints = {{}}` or initialize the distribution with "
                              f"`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                # (getattr_static: on the class, a lazy_property presents itself as a
                # plain property)
                is_lazy = isinstance(inspect.getattr_static(type(self), param, None),
                                     lazy_property)
                if param not in self.__dict__ and is_lazy:
                    continue  # the parameterization not given: checked through the given one
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(
                        f"Expected parameter {param} "
                        f"({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} "
                        f"to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{_format_value(value)}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        """A new distribution with its batch dimensions expanded to ``batch_shape``.

        The parameters are expanded views (no copy). Subclasses implement it.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.distributions import Normal
        >>> tuple(Normal(0.0, 1.0).expand((2, 3)).batch_shape)
        (2, 3)
        """
        raise NotImplementedError

    @property
    def batch_shape(self):
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self):
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self):
        """A dict from parameter names to the constraints they satisfy."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the samples satisfy."""
        raise NotImplementedError

    @property
    def mean(self):
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def mode(self):
        """The mode of the distribution."""
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        """The variance of the distribution."""
        raise NotImplementedError

    @property
    def stddev(self):
        """The standard deviation: the square root of the variance."""
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        """A sample of shape ``sample_shape + batch_shape + event_shape``; never recorded."""
        with oxmera.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        """``sample((n,))`` (deprecated in PyTorch too)."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample((n,))

    def log_prob(self, value):
        """The log of the probability density/mass at ``value``."""
        raise NotImplementedError

    def cdf(self, value):
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value):
        """The inverse cumulative distribution function at ``value``."""
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        """Every value of a discrete distribution's support, along a new leading dim."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, of shape ``batch_shape``."""
        raise NotImplementedError

    def perplexity(self):
        """``exp(entropy)``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.distributions import Categorical
        >>> round(Categorical(probs=oxmera.ones(4)).perplexity().item(), 4)
        4.0
        """
        return oxmera.exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        return oxmera.Size(_extended_shape(sample_shape, self._batch_shape, self._event_shape))

    def _validate_sample(self, value):
        if not isinstance(value, oxmera.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        value_shape = oxmera.Size(tuple(value.shape))
        event_dim_start = len(value_shape) - len(self._event_shape)
        if tuple(value_shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value_shape!r} vs {self._event_shape!r}.")
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(value_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{value_shape!r} vs {oxmera.Size(expected_shape)!r}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          f"validation. Please initialize the distribution with "
                          f"`validate_args=False` to turn off validation.", stacklevel=2)
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError(
                "Expected value argument "
                f"({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) "
                f"of the distribution {self!r}, "
                f"but found invalid values:\n{_format_value(value)}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, cls, batch_shape, _instance, names):
        """The shared body of ``expand``: a new ``cls`` whose tensors ``names`` (those set on
        this instance) are expanded to ``batch_shape`` (+ their event dims)."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = oxmera.Size(tuple(batch_shape))
        for name in names:
            if name in self.__dict__:
                value = self.__dict__[name]
                event = tuple(value.shape[len(self._batch_shape):])
                setattr(new, name, value.expand(*(tuple(batch_shape) + event)))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        # as PyTorch: a one-element parameter by value (a 0-d one as a number), a larger
        # one by its size
        parts = []
        for name in self.arg_constraints:
            if name in self.__dict__:
                value = self.__dict__[name]
                if value.numel() != 1:
                    value = repr(value.shape)
                elif value.dim() == 0:
                    value = value.item()
                parts.append(f"{name}: {value}")
        return self.__class__.__name__ + "(" + ", ".join(parts) + ")"
