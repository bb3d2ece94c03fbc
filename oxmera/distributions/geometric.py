"""The geometric distribution: failures before the first success."""
import numbers

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._probs_logits import _one_of, _ProbsLogits
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["Geometric"]


class Geometric(_ProbsLogits, Distribution):
    """The number of failures before the first success of Bernoulli(``probs``) trials.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Geometric
    >>> d = Geometric(probs=oxmera.tensor(0.25))
    >>> d.mean.item(), round(d.log_prob(oxmera.tensor(1.0)).exp().item(), 4)
    (3.0, 0.1875)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = _one_of(probs, logits)
        is_scalar = isinstance(value, numbers.Number)
        (value,) = broadcast_all(value)
        setattr(self, name, value)
        self._param = value
        super().__init__(() if is_scalar else tuple(value.shape), validate_args=validate_args)
        # beyond unit_interval, as PyTorch: p = 0 never succeeds
        if name == "probs" and self._validate_args and not bool((value > 0).all()):
            invalid = oxmera.masked_select(value.detach(), value.detach() <= 0)
            raise ValueError(f"Expected parameter probs ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                             f"constraint {constraints.unit_interval!r}, but found invalid "
                             f"values:\n{invalid}")

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Geometric, batch_shape, _instance, ("probs", "logits"))
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return oxmera.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with oxmera.no_grad():
            # NumPy counts trials (>= 1); PyTorch counts failures (>= 0)
            trials = _rng("Geometric.sample()").geometric(self.probs.detach().numpy(), shape)
            return _draw(np.asarray(trials) - 1, self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # p = 1 and value = 0: 0 * log(0) counts as 0
        failures = oxmera.where(oxmera.logical_and(probs == 1, value == 0),
                                oxmera.zeros_like(probs), value * oxmera.log1p(-probs))
        return failures + oxmera.log(probs)

    def entropy(self):
        softplus = oxmera.nn.functional.softplus
        return (softplus(self.logits) - self.logits * self.probs) / self.probs
