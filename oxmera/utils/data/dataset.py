"""Datasets: ``Dataset``, ``IterableDataset``, ``TensorDataset``, ``StackDataset``,
``ConcatDataset``, ``ChainDataset``, ``Subset`` and ``random_split``, as in
``torch.utils.data.dataset``.

Randomness (``random_split``) comes from the ``generator`` argument: an
``oxmera.Generator`` or a ``numpy.random.Generator`` (used as given, so its
state advances), an int seed (a fresh ``numpy.random.default_rng(seed)``:
the same seed gives the same split), or None, which draws a seed from
oxmera's default generator (the one ``oxmera.manual_seed`` seeds). The
orders are NumPy's permutations, so they differ from PyTorch's for the same
seed.
"""
import bisect
import math
import operator
import warnings
from itertools import accumulate
from typing import Generic, TypeVar

from oxmera._core.autograd import Tensor
from oxmera.utils.data._utils import draw_from, keep_generator

T_co = TypeVar("T_co", covariant=True)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


# -- datasets -------------------------------------------------------------------------------

class Dataset(Generic[T_co]):
    """Base class of map-style datasets: ``dataset[i]`` is the i-th sample.

    Subclasses implement ``__getitem__`` and, for ``DataLoader``,
    ``__len__``; ``a + b`` concatenates two datasets. As in PyTorch it is
    generic in the sample's type: ``class Pairs(Dataset[tuple])`` works.

    Examples
    --------
    >>> from oxmera.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self):
    ...         return 4
    ...     def __getitem__(self, i):
    ...         return i * i
    >>> ds = Squares()
    >>> [ds[i] for i in range(len(ds))]
    [0, 1, 4, 9]
    >>> len(ds + ds)
    8
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} does not implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """Base class of iterable-style datasets: ``iter(dataset)`` yields the samples.

    For data read as a stream. A ``DataLoader`` with workers gives each
    worker a copy of the dataset: ``__iter__`` shards the stream itself with
    ``get_worker_info()`` (as in PyTorch), or each worker yields it all.
    ``a + b`` chains two iterable datasets.

    Examples
    --------
    >>> from oxmera.utils.data import IterableDataset, get_worker_info
    >>> class Range(IterableDataset):
    ...     def __init__(self, n):
    ...         self.n = n
    ...     def __iter__(self):
    ...         info = get_worker_info()
    ...         if info is None:                       # the main process: everything
    ...             return iter(range(self.n))
    ...         return iter(range(info.id, self.n, info.num_workers))
    >>> list(Range(3) + Range(2))
    [0, 1, 2, 0, 1]
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """A dataset of tensors indexed together along their first dimension.

    Parameters
    ----------
    *tensors : Tensor
        Tensors with the same first dimension; sample ``i`` is the tuple
        ``(t[i] for t in tensors)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.utils.data import TensorDataset
    >>> ds = TensorDataset(oxmera.arange(6).reshape(3, 2), oxmera.tensor([0, 1, 0]))
    >>> len(ds)
    3
    >>> ds[1]
    (tensor([2, 3], dtype=int64), tensor(1, dtype=int64))
    """

    def __init__(self, *tensors):
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset: expected Tensors, but argument {i} is a "
                                f"{type(t).__name__}")
            if t.ndim == 0:
                raise ValueError(f"TensorDataset: tensor {i} is 0-d; every tensor needs a "
                                 f"first dimension to index")
        if tensors and any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError(f"TensorDataset: size mismatch between tensors: first dimensions "
                             f"{[t.shape[0] for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0] if self.tensors else 0


class StackDataset(Dataset[T_co]):
    """Several datasets of the same length side by side: sample ``i`` is the tuple
    (or dict) of their ``i``-th samples.

    Parameters
    ----------
    *args : Dataset
        Datasets whose samples form a tuple.
    **kwargs : Dataset
        Datasets whose samples form a dict, by keyword (not with ``args``).

    Examples
    --------
    >>> from oxmera.utils.data import StackDataset
    >>> StackDataset([1, 2], ["a", "b"])[1]
    (2, 'b')
    >>> StackDataset(x=[1, 2], y=["a", "b"])[0]
    {'x': 1, 'y': 'a'}
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: supported either tuple- (via args) or dict- (via "
                             "kwargs) like input/output, but both types are given")
        if not args and not kwargs:
            raise ValueError("StackDataset: at least one dataset should be passed")
        datasets = list(args or kwargs.values())
        lengths = [len(d) for d in datasets]
        if any(n != lengths[0] for n in lengths):
            raise ValueError(f"StackDataset: size mismatch between datasets: lengths {lengths}")
        self._length = lengths[0]
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        named = isinstance(self.datasets, dict)
        columns = {}
        for key, d in (self.datasets.items() if named else enumerate(self.datasets)):
            columns[key] = _getitems(d, indices)
        if named:
            return [{k: columns[k][j] for k in columns} for j in range(len(indices))]
        return [tuple(columns[k][j] for k in columns) for j in range(len(indices))]

    def __len__(self):
        return self._length


def _getitems(dataset, indices):
    """``dataset``'s samples at ``indices``, through its ``__getitems__`` if it has one."""
    getitems = getattr(dataset, "__getitems__", None)
    if not callable(getitems):
        return [dataset[i] for i in indices]
    items = getitems(indices)
    if len(items) != len(indices):
        raise ValueError(f"{type(dataset).__name__}.__getitems__: expected {len(indices)} "
                         f"samples, got {len(items)}")
    return items


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order.

    Parameters
    ----------
    dataset : Dataset
        The whole dataset.
    indices : sequence of int
        Indices into it.

    Examples
    --------
    >>> from oxmera.utils.data import Subset
    >>> sub = Subset([10, 11, 12, 13], [3, 0])
    >>> len(sub), sub[0], sub[1]
    (2, 13, 10)
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __getitems__(self, indices):
        return _getitems(self.dataset, [self.indices[i] for i in indices])

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """Several datasets one after the other.

    Parameters
    ----------
    datasets : iterable of Dataset
        Datasets with ``__len__``.

    Examples
    --------
    >>> from oxmera.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3, 4, 5]])
    >>> len(ds), ds[2], ds[-1]
    (5, 3, 5)
    """

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset (chain them with "
                                "ChainDataset)")
        self.cumulative_sizes = list(accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        index = operator.index(index)
        if index < 0:
            if -index > len(self):
                raise IndexError(f"ConcatDataset: index {index} is out of range for "
                                 f"{len(self)} samples")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        if which == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {index} is out of range for "
                             f"{len(self)} samples")
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other, chained as they are iterated.

    Parameters
    ----------
    datasets : iterable of IterableDataset
        The datasets to chain.

    Examples
    --------
    >>> from oxmera.utils.data import ChainDataset, IterableDataset
    >>> class Letters(IterableDataset):
    ...     def __init__(self, text):
    ...         self.text = text
    ...     def __iter__(self):
    ...         return iter(self.text)
    ...     def __len__(self):
    ...         return len(self.text)
    >>> chain = ChainDataset([Letters("ab"), Letters("cde")])
    >>> list(chain), len(chain)
    (['a', 'b', 'c', 'd', 'e'], 5)
    """

    def __init__(self, datasets):
        self.datasets = datasets

    def _checked(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got "
                                f"{type(d).__name__}")
            yield d

    def __iter__(self):
        for d in self._checked():
            yield from d

    def __len__(self):
        return sum(len(d) for d in self._checked())


def random_split(dataset, lengths, generator=None):
    """Split a dataset into non-overlapping random subsets.

    Parameters
    ----------
    dataset : Dataset
        The dataset to split (needs ``__len__``).
    lengths : sequence of int or of float
        The subsets' lengths, summing to ``len(dataset)``; or fractions
        summing to 1, each subset getting ``floor(fraction * len)`` samples
        and the remainder going one each to the first subsets.
    generator : oxmera.Generator, numpy.random.Generator, int or None
        Randomness of the split (see the module docstring).

    Returns
    -------
    list of Subset

    Examples
    --------
    >>> from oxmera.utils.data import random_split
    >>> train, val = random_split(range(10), [0.8, 0.2], generator=0)
    >>> len(train), len(val)
    (8, 2)
    >>> sorted(list(train) + list(val)) == list(range(10))
    True
    """
    n = len(dataset)
    lengths = list(lengths)
    total = sum(lengths)
    if lengths and math.isclose(total, 1) and total <= 1 and any(
            isinstance(x, float) for x in lengths):
        sizes = []
        for i, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"random_split(): fraction at index {i} is not between 0 "
                                 f"and 1: {fraction}")
            sizes.append(int(math.floor(n * fraction)))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0:
                warnings.warn(f"random_split(): length of split at index {i} is 0; this "
                              f"might result in an empty dataset", stacklevel=2)
        lengths = sizes
    for i, length in enumerate(lengths):
        if isinstance(length, float) or operator.index(length) < 0:
            raise ValueError(f"random_split(): lengths must be non-negative ints or fractions "
                             f"summing to 1; got {lengths[i]!r} at index {i}")
    if sum(lengths) != n:
        raise ValueError(f"random_split(): sum of input lengths ({sum(lengths)}) does not equal "
                         f"the length of the input dataset ({n})")
    rng = draw_from(keep_generator(generator, "random_split()"))
    permutation = rng.permutation(n).tolist()
    return [Subset(dataset, permutation[end - length:end])
            for end, length in zip(accumulate(lengths), lengths)]
