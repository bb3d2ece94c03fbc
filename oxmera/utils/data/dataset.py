"""Data loading: ``Dataset``, ``TensorDataset``, ``Subset``, ``ConcatDataset``,
``DataLoader``, ``random_split``, ``default_collate`` and ``default_convert``,
as in ``torch.utils.data`` (single process; no samplers or workers).

Randomness (``DataLoader(shuffle=True)``, ``random_split``) comes from the
``generator`` argument: a ``numpy.random.Generator`` (used as given, so its
state advances), an int seed (a fresh ``numpy.random.default_rng(seed)``:
the same seed gives the same orders), or None, which draws a seed from
oxmera's global generator (the one ``oxmera.manual_seed`` seeds) — a
shuffling loader draws a new one at each epoch, as PyTorch's does. The
orders are NumPy's permutations, so they differ from PyTorch's for the
same seed.

A ``TensorDataset`` (or a ``Subset`` of one) with the default collate
function is batched by indexing its tensors with the batch's indices,
instead of stacking one sample at a time: the same batches, one op per
tensor.
"""
import bisect
import collections.abc
import copy
import math
import operator
import warnings
from itertools import accumulate

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.ops.creation import as_tensor, from_numpy, randint, tensor
from oxmera.ops.shape import stack

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader", "random_split",
           "default_collate", "default_convert"]


# -- generators -----------------------------------------------------------------------------

def _numpy_generator(generator, name):
    """The NumPy generator behind ``generator`` (see the module docstring)."""
    if generator is None:
        seed = int(randint(0, 2 ** 62, (1,))._data[0])
        return np.random.default_rng(seed)
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    raise TypeError(f"{name}: generator must be a numpy.random.Generator, an int seed or None, "
                    f"got {type(generator).__name__}")


# -- datasets -------------------------------------------------------------------------------

class Dataset:
    """Base class of map-style datasets: ``dataset[i]`` is the i-th sample.

    Subclasses implement ``__getitem__`` and, for ``DataLoader``,
    ``__len__``; ``a + b`` concatenates two datasets.

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


class Subset(Dataset):
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

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
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
    generator : numpy.random.Generator, int or None
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
    permutation = _numpy_generator(generator, "random_split()").permutation(n).tolist()
    return [Subset(dataset, permutation[end - length:end])
            for end, length in zip(accumulate(lengths), lengths)]


# -- collation ------------------------------------------------------------------------------

def _is_numeric_array(value):
    return value.dtype.kind in "biufc"


def default_convert(data):
    """Turn NumPy arrays (also inside dicts, lists and tuples) into tensors.

    The ``collate_fn`` of a ``DataLoader`` with ``batch_size=None``.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera.utils.data import default_convert
    >>> default_convert({'x': np.array([1.0, 2.0]), 'name': 'a'})
    {'x': tensor([1., 2.], dtype=float64), 'name': 'a'}
    """
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return as_tensor(data) if _is_numeric_array(data) else data
    if isinstance(data, np.generic):
        return as_tensor(data) if _is_numeric_array(np.asarray(data)) else data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(value)
                                       for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _rebuild_mapping(mapping, items):
    """``items`` in a mapping of ``mapping``'s type (a copy of it, for mutable ones)."""
    if isinstance(mapping, collections.abc.MutableMapping):
        clone = copy.copy(mapping)
        clone.update(items)
        return clone
    try:
        return type(mapping)(items)
    except TypeError:
        return items


def default_collate(batch):
    """Merge a list of samples into a batch, as PyTorch's ``default_collate``.

    Tensors are stacked along a new first dimension; NumPy arrays and
    NumPy scalars become stacked tensors; Python floats a float64 tensor,
    ints an int64 tensor, bools a bool tensor; strings and bytes stay as
    given (a list, or a tuple for a field of tuple samples, as in PyTorch).
    Dicts are collated per key, named tuples per field, and other sequences
    per position (tuples become lists, as in PyTorch).

    Parameters
    ----------
    batch : list
        The samples, all of the same structure.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.utils.data import default_collate
    >>> default_collate([(oxmera.tensor([1.0, 2.0]), 0), (oxmera.tensor([3.0, 4.0]), 1)])
    [tensor([[1., 2.],
            [3., 4.]], dtype=float32), tensor([0, 1], dtype=int64)]
    >>> default_collate([{'x': 1.5, 'id': 'a'}, {'x': 2.5, 'id': 'b'}])
    {'x': tensor([1.5, 2.5], dtype=float64), 'id': ['a', 'b']}
    """
    if not isinstance(batch, collections.abc.Sequence) or isinstance(batch, (str, bytes)):
        raise TypeError(f"default_collate: expected a list of samples, got "
                        f"{type(batch).__name__}")
    if len(batch) == 0:
        raise ValueError("default_collate: the batch is empty")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and not isinstance(elem, (np.str_, np.bytes_)):
        arrays = [np.asarray(b) for b in batch]
        if not _is_numeric_array(arrays[0]):
            raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, "
                            f"numbers, dicts or lists; found an array of dtype "
                            f"{arrays[0].dtype}")
        shapes = {a.shape for a in arrays}
        if len(shapes) != 1:
            raise RuntimeError(f"default_collate: stack expects each array to be equal size, "
                               f"but got shapes {sorted(shapes)}")
        return from_numpy(np.stack(arrays))
    if isinstance(elem, bool):
        return tensor(list(batch), dtype=np.bool_)
    if isinstance(elem, float):
        return tensor(list(batch), dtype=np.float64)
    if isinstance(elem, int):
        return tensor(list(batch), dtype=np.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: default_collate([d[key] for d in batch])
                                       for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("default_collate: each element in list of batch should be of "
                               "equal size")
        collated = [default_collate(samples) for samples in zip(*batch)]
        if isinstance(elem, (tuple, list)):
            return collated         # a list for tuples too, as PyTorch does
        try:
            return type(elem)(collated)
        except TypeError:
            return collated
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")


# -- the loader -----------------------------------------------------------------------------

def _tensor_dataset_rows(dataset, indices):
    """``indices`` mapped down to a TensorDataset under Subsets, or None if there is none."""
    while isinstance(dataset, Subset):
        try:
            indices = [dataset.indices[i] for i in indices]
        except (IndexError, TypeError):
            return None, None
        dataset = dataset.dataset
    if type(dataset) is TensorDataset:
        return dataset, indices
    return None, None


class DataLoader:
    """Iterate over a dataset in batches, optionally shuffled.

    Parameters
    ----------
    dataset : Dataset
        A map-style dataset (``__getitem__`` and ``__len__``); a list works.
    batch_size : int or None, default 1
        Samples per batch; None yields the samples one by one, unbatched
        (through ``default_convert`` unless ``collate_fn`` is given).
    shuffle : bool, default False
        Visit the samples in a new random order at every epoch.
    drop_last : bool, default False
        Drop the last batch when it is smaller than ``batch_size``.
    collate_fn : callable, optional
        Merges a list of samples into a batch (default ``default_collate``).
    generator : numpy.random.Generator, int or None
        Randomness of the shuffling (see the module docstring): with an
        int seed the sequence of epoch orders is the same each time a
        loader is made; with None it follows ``oxmera.manual_seed``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(oxmera.arange(10.0).reshape(5, 2), oxmera.arange(5))
    >>> loader = DataLoader(ds, batch_size=2)
    >>> len(loader)
    3
    >>> [y.tolist() for _, y in loader]
    [[0, 1], [2, 3], [4]]
    >>> shuffled = DataLoader(ds, batch_size=2, shuffle=True, drop_last=True, generator=0)
    >>> [len(y) for _, y in shuffled]     # 2 batches of 2 of the 5 samples, in a random order
    [2, 2]
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None,
                 generator=None):
        if batch_size is not None:
            if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                    or batch_size <= 0:
                raise ValueError(f"DataLoader: batch_size should be a positive integer value "
                                 f"or None, but got batch_size={batch_size!r}")
            batch_size = int(batch_size)
        elif drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is "
                             "mutually exclusive with drop_last")
        # An int seed starts one NumPy generator: each epoch continues its stream.
        self._rng = None if generator is None else _numpy_generator(generator, "DataLoader")
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.collate_fn = collate_fn
        self.generator = generator

    def __len__(self):
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return range(n)
        rng = self._rng if self._rng is not None else _numpy_generator(None, "DataLoader")
        return rng.permutation(n).tolist()

    def __iter__(self):
        order = self._order()
        if self.batch_size is None:
            convert = default_convert if self.collate_fn is None else self.collate_fn
            for index in order:
                yield convert(self.dataset[index])
            return
        size = self.batch_size
        for start in range(0, len(order), size):
            indices = order[start:start + size]
            if len(indices) < size and self.drop_last:
                return
            yield self._fetch(list(indices))

    def _fetch(self, indices):
        if self.collate_fn is None:
            base, rows = _tensor_dataset_rows(self.dataset, indices)
            if base is not None:
                rows = np.asarray(rows, dtype=np.int64)
                return [t[rows] for t in base.tensors]
            return default_collate([self.dataset[i] for i in indices])
        return self.collate_fn([self.dataset[i] for i in indices])
