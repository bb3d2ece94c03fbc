"""The shared "exactly one of probs or logits" parameterization of the discrete
families; the other one is a lazy property.

Examples
--------
>>> import oxmera
>>> from oxmera.distributions import Bernoulli
>>> round(Bernoulli(logits=oxmera.tensor(0.0)).probs.item(), 2)
0.5
"""
from oxmera.distributions.utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = []


def _one_of(probs, logits):
    """The given parameter as ("probs" or "logits", value); the ValueError PyTorch raises
    unless exactly one is given (its message names neither the class nor the values)."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


class _ProbsLogits:
    """Mixin: ``probs``/``logits`` where one is given and the other derived on use.
    ``_is_binary`` picks sigmoid (Bernoulli-like) or softmax (Categorical-like)."""

    _is_binary = True

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._is_binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._is_binary)

    @property
    def param_shape(self):
        return self._param.shape
