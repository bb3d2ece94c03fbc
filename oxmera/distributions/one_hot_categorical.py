"""The one-hot categorical distribution: a ``Categorical`` whose draws are one-hot vectors."""
import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.categorical import Categorical
from oxmera.distributions.distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """One-hot vectors with the class probabilities of ``Categorical(probs, logits)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import OneHotCategorical
    >>> d = OneHotCategorical(probs=oxmera.tensor([0.25, 0.75]))
    >>> round(d.log_prob(oxmera.tensor([0.0, 1.0])).exp().item(), 4), tuple(d.event_shape)
    (0.75, (2,))
    """

    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return oxmera.nn.functional.one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return oxmera.nn.functional.one_hot(indices, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        indices = value.max(-1)[1]
        return self._categorical.log_prob(indices)

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = oxmera.eye(n, dtype=self._param.dtype)
        values = values.view(n, *((1,) * len(self.batch_shape)), n)
        if expand:
            values = values.expand(n, *self.batch_shape, n)
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A ``OneHotCategorical`` whose ``rsample`` passes gradients straight through: the
    one-hot draw in value, the gradient of ``probs`` (Bengio et al., 2013).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import OneHotCategoricalStraightThrough
    >>> logits = oxmera.tensor([0.0, 1.0], requires_grad=True)
    >>> d = OneHotCategoricalStraightThrough(logits=logits)
    >>> _ = oxmera.manual_seed(0); s = d.rsample()
    >>> sorted(s.tolist()), s.requires_grad
    ([0.0, 1.0], True)
    """

    has_rsample = True

    def rsample(self, sample_shape=()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs  # cached by lazy_property
        return samples + (probs - probs.detach())
