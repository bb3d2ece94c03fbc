"""Samplers: what order a ``DataLoader`` visits a map-style dataset in, as in
``torch.utils.data.sampler``.

A sampler is an iterable of indices (``BatchSampler``: of lists of indices)
with, usually, a ``__len__``. The random ones take ``generator=``: an
``oxmera.Generator`` or a ``numpy.random.Generator`` (used as given: its
state advances, so each epoch differs), an int seed (a NumPy generator made
once, when the sampler is: the same seed gives the same sequence of
epochs), or None: each epoch draws a seed from oxmera's default generator,
so ``oxmera.manual_seed`` makes it reproducible. The orders come from
NumPy's PCG64, so they differ from PyTorch's for the same seed; lengths,
index sets and errors are PyTorch's.
"""
import numbers
from typing import Generic, TypeVar

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.utils.data._utils import draw_from, keep_generator

T_co = TypeVar("T_co", covariant=True)

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define ``__iter__`` (and ``__len__``).

    Generic in the index type, as in PyTorch (``Sampler[int]``).

    Examples
    --------
    >>> from oxmera.utils.data import DataLoader, Sampler
    >>> class Reversed(Sampler):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         return iter(range(self.n - 1, -1, -1))
    ...     def __len__(self):
    ...         return self.n
    >>> [b.tolist() for b in DataLoader([10, 11, 12], batch_size=2, sampler=Reversed(3))]
    [[12, 11], [10]]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")


class SequentialSampler(Sampler):
    """The indices ``0, 1, ..., len(data_source) - 1`` in order.

    Parameters
    ----------
    data_source : Dataset
        The dataset (only its length is used).

    Examples
    --------
    >>> from oxmera.utils.data import SequentialSampler
    >>> list(SequentialSampler("abc"))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _check_bool(where, name, value, error=TypeError):
    if not isinstance(value, bool):
        raise error(f"{where}: {name} should be a boolean value, but got {name}={value!r}")


def _check_positive_int(where, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"{where}: {name} should be a positive integer value, but got "
                         f"{name}={value!r}")
    return int(value)


class RandomSampler(Sampler):
    """Random indices into ``data_source``: a permutation, or draws with replacement.

    Parameters
    ----------
    data_source : Dataset
        The dataset (only its length is used, at each epoch).
    replacement : bool, default False
        Draw ``num_samples`` indices independently (with replacement);
        otherwise permutations, as many as ``num_samples`` needs (the last
        one cut short).
    num_samples : int, optional
        Indices per epoch (default ``len(data_source)``).
    generator : oxmera.Generator, numpy.random.Generator, int or None
        Randomness (see the module docstring).

    Examples
    --------
    >>> from oxmera.utils.data import RandomSampler
    >>> sorted(RandomSampler(range(5), generator=0))
    [0, 1, 2, 3, 4]
    >>> s = RandomSampler(range(5), replacement=True, num_samples=8, generator=0)
    >>> len(list(s)), len(s)
    (8, 8)
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        _check_bool("RandomSampler", "replacement", replacement)
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        self._generator = keep_generator(generator, "RandomSampler")
        _check_positive_int("RandomSampler", "num_samples", self.num_samples)

    @property
    def num_samples(self):
        """Indices per epoch: ``num_samples`` if given, else the dataset's length now."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        count = self.num_samples
        rng = draw_from(self._generator)
        if self.replacement:
            yield from rng.integers(0, n, size=count, dtype=np.int64).tolist()
            return
        for _ in range(count // n):
            yield from rng.permutation(n).tolist()
        yield from rng.permutation(n)[:count % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a new one at every epoch).

    Parameters
    ----------
    indices : sequence
        The indices to visit.
    generator : oxmera.Generator, numpy.random.Generator, int or None
        Randomness (see the module docstring).

    Examples
    --------
    >>> from oxmera.utils.data import SubsetRandomSampler
    >>> sorted(SubsetRandomSampler([7, 3, 5], generator=0))
    [3, 5, 7]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator
        self._generator = keep_generator(generator, "SubsetRandomSampler")

    def __iter__(self):
        for i in draw_from(self._generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Indices ``0..len(weights)-1`` drawn with probabilities proportional to ``weights``.

    Parameters
    ----------
    weights : sequence of float or Tensor
        Non-negative weights, one per index (need not sum to 1).
    num_samples : int
        Indices per epoch.
    replacement : bool, default True
        Draw with replacement; without, each index comes at most once (so
        ``num_samples`` cannot exceed ``len(weights)``; zero weights come
        last, once the others are drawn, as in PyTorch).
    generator : oxmera.Generator, numpy.random.Generator, int or None
        Randomness (see the module docstring).

    Examples
    --------
    >>> from oxmera.utils.data import WeightedRandomSampler
    >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 4, generator=0))
    [1, 1, 1, 1]
    >>> sorted(WeightedRandomSampler([1.0, 2.0, 3.0], 3, replacement=False, generator=0))
    [0, 1, 2]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        self.num_samples = _check_positive_int("WeightedRandomSampler", "num_samples",
                                               num_samples)
        _check_bool("WeightedRandomSampler", "replacement", replacement)
        values = weights._data if isinstance(weights, Tensor) else weights
        self._weights = np.array(values, dtype=np.float64)
        if self._weights.ndim != 1:
            raise ValueError(f"WeightedRandomSampler: weights should be a 1d sequence but given "
                             f"weights have shape {tuple(self._weights.shape)}")
        self.replacement = replacement
        self.generator = generator
        self._generator = keep_generator(generator, "WeightedRandomSampler")

    @property
    def weights(self):
        """The weights, a float64 tensor."""
        from oxmera.ops.creation import tensor
        return tensor(self._weights)

    def _checked_weights(self):
        # Checked when drawing, as PyTorch's multinomial does.
        w = self._weights
        where = "WeightedRandomSampler (multinomial)"
        if w.size == 0:
            raise RuntimeError(f"{where}: cannot sample from an empty set of weights")
        if not np.all(np.isfinite(w)):
            raise RuntimeError(f"{where}: probability tensor contains either inf, nan or "
                               f"element < 0: {w.tolist()}")
        if np.any(w < 0):
            raise RuntimeError(f"{where}: invalid multinomial distribution (encountering "
                               f"probability entry < 0): {w.tolist()}")
        if not w.sum() > 0:
            raise RuntimeError(f"{where}: invalid multinomial distribution (sum of "
                               f"probabilities <= 0)")
        if not self.replacement and self.num_samples > w.size:
            raise RuntimeError(f"{where}: cannot sample n_sample > prob_dist.size(-1) samples "
                               f"without replacement: num_samples={self.num_samples}, "
                               f"{w.size} weights")
        return w

    def __iter__(self):
        w = self._checked_weights()
        rng = draw_from(self._generator)
        if self.replacement:
            drawn = rng.choice(w.size, size=self.num_samples, p=w / w.sum())
        else:
            # Weighted sampling without replacement (exponential keys over the weights):
            # as PyTorch's multinomial, zero weights come after all the others.
            with np.errstate(divide="ignore"):
                keys = rng.exponential(size=w.size) / w
            drawn = np.argsort(keys, kind="stable")[:self.num_samples]
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Group another sampler's indices into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler or iterable
        The indices to group.
    batch_size : int
        Indices per batch.
    drop_last : bool
        Drop the last batch if it is smaller than ``batch_size``.

    Examples
    --------
    >>> from oxmera.utils.data import BatchSampler, SequentialSampler
    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> len(BatchSampler(range(5), batch_size=2, drop_last=True))
    2
    """

    def __init__(self, sampler, batch_size, drop_last):
        self.batch_size = _check_positive_int("BatchSampler", "batch_size", batch_size)
        _check_bool("BatchSampler", "drop_last", drop_last, ValueError)
        self.sampler = sampler
        self.drop_last = drop_last

    def __iter__(self):
        size = self.batch_size
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
