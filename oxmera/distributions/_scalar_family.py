"""The shared skeleton of the scalar two-parameter families (loc/scale and friends):
broadcast the parameters, set the batch shape, expand them.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions import Laplace
>>> tuple(Laplace(oxmera.zeros(2), 1.0).batch_shape)
(2,)
"""
import numbers

from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import broadcast_all

__all__ = []


class _ScalarFamily(Distribution):
    """A distribution whose parameters (``_params``, in order) broadcast together to the
    batch shape and whose events are scalars."""

    _params = ()

    def __init__(self, *values, validate_args=None):
        tensors = broadcast_all(*values)
        for name, tensor in zip(self._params, tensors):
            setattr(self, name, tensor)
        if all(isinstance(v, numbers.Number) for v in values):
            batch_shape = ()
        else:
            batch_shape = tuple(tensors[0].shape)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(type(self), batch_shape, _instance, self._params)

    def _checked(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return value
