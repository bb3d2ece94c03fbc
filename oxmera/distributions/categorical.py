"""The categorical distribution over ``{0, ..., K-1}``."""
import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions._probs_logits import _one_of, _ProbsLogits
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _rng

__all__ = ["Categorical"]


def _sample_categories(probs, sample_shape, where):
    """Category indices (int64) of shape ``sample_shape + probs.shape[:-1]``: one uniform
    per draw, located in the cumulative probabilities (rows need not be normalized)."""
    probs = np.asarray(probs, dtype=np.float64)
    cumulative = np.cumsum(probs, axis=-1)
    total = cumulative[..., -1:]
    shape = tuple(sample_shape) + probs.shape[:-1]
    u = _rng(where).random(shape)[..., None] * total
    # the count of cumulative sums <= u: the drawn index (categories of zero mass skipped)
    index = (np.broadcast_to(cumulative, shape + probs.shape[-1:]) <= u).sum(-1)
    return np.minimum(index, probs.shape[-1] - 1).astype(np.int64)


class Categorical(_ProbsLogits, Distribution):
    """The categorical distribution with class probabilities ``probs`` (normalized over
    the last dim) or unnormalized log-probabilities ``logits``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Categorical
    >>> d = Categorical(probs=oxmera.tensor([1.0, 3.0]))
    >>> d.probs.tolist(), round(d.log_prob(oxmera.tensor(1)).exp().item(), 4)
    ([0.25, 0.75], 0.75)
    >>> _ = oxmera.manual_seed(0); d.sample((3,)).dtype
    dtype('int64')
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _is_binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = _one_of(probs, logits)
        if value.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if name == "probs":
            self.probs = value / value.sum(-1, keepdim=True)
        else:
            self.logits = value - value.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if name == "probs" else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = tuple(batch_shape)
        param_shape = batch_shape + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(*param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(*param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return oxmera.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return oxmera.full(tuple(self._extended_shape()), float("nan"), dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        with oxmera.no_grad():
            probs = self.probs.detach().numpy()
            return oxmera.tensor(_sample_categories(probs, sample_shape, "Categorical.sample()"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(value.shape), tuple(self.logits.shape[:-1]) + (1,))
        value = value.expand(*shape)
        log_pmf = self.logits.expand(*(shape[:-1] + (self._num_events,)))
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = float(np.finfo(self.logits.dtype).min)
        logits = oxmera.clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = oxmera.arange(self._num_events, dtype=oxmera.int64)
        values = values.view(-1, *((1,) * len(self._batch_shape)))
        if expand:
            values = values.expand(self._num_events, *self._batch_shape)
        return values
