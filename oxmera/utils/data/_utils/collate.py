"""Collation: ``default_collate`` and ``default_convert``, as in
``torch.utils.data._utils.collate`` (re-exported by ``oxmera.utils.data``)."""
import collections.abc
import copy

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.ops.creation import as_tensor, from_numpy, tensor
from oxmera.ops.shape import stack

__all__ = ["default_collate", "default_convert"]


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

