"""``DistributedSampler``: each of ``num_replicas`` processes visits its own share
of a dataset, as in ``torch.utils.data.distributed``.

``num_replicas`` and ``rank`` left out are the default process group's
(``oxmera.distributed``); without an initialized one, leaving one out
raises the ValueError PyTorch raises. Passing them is what multi-process
programs launched by hand do, and what a single-process program does with
``num_replicas=1, rank=0``.
"""
import math
import numbers

from oxmera.random import Generator, numpy_generator
from oxmera.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The indices of one replica (``rank``) of ``num_replicas``, as PyTorch splits them.

    Every replica sees ``ceil(len(dataset) / num_replicas)`` indices: the
    (shuffled) order is padded by repeating its first indices so all
    replicas get the same number, or, with ``drop_last``, cut to a multiple
    of ``num_replicas``; replica ``rank`` takes every ``num_replicas``-th
    index from ``rank``. With ``shuffle`` every replica draws the same
    permutation, from ``seed + epoch``: call ``set_epoch`` before each
    epoch for a new order (the permutation is NumPy's PCG64, not PyTorch's).

    Parameters
    ----------
    dataset : Dataset
        The dataset (only its length is used).
    num_replicas : int, optional
        How many processes share the dataset (by default the default
        process group's size: see the module docstring).
    rank : int, optional
        This process's number, in ``[0, num_replicas)`` (by default its rank
        in the default process group).
    shuffle : bool, default True
        Shuffle the indices (the same permutation on every replica).
    seed : int, default 0
        The shuffle's seed; the same on every replica.
    drop_last : bool, default False
        Drop the tail that does not split evenly instead of padding.

    Examples
    --------
    >>> from oxmera.utils.data import DistributedSampler
    >>> [list(DistributedSampler(range(5), num_replicas=2, rank=r, shuffle=False))
    ...  for r in range(2)]
    [[0, 2, 4], [1, 3, 0]]
    >>> s = DistributedSampler(range(5), num_replicas=2, rank=0, seed=1)
    >>> s.set_epoch(3)
    >>> len(s), len(list(s))
    (3, 3)
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from oxmera import distributed
            if not distributed.is_initialized():
                raise ValueError("DistributedSampler: Default process group has not been "
                                 "initialized, please make sure to call init_process_group "
                                 "(or pass num_replicas and rank)")
            num_replicas = distributed.get_world_size() if num_replicas is None else num_replicas
            rank = distributed.get_rank() if rank is None else rank
        for name, value in (("num_replicas", num_replicas), ("rank", rank)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"DistributedSampler: {name} should be an int, got "
                                f"{type(value).__name__}")
        if num_replicas <= 0:
            raise ValueError(f"DistributedSampler: num_replicas should be positive, got "
                             f"{num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = int(num_replicas)
        self.rank = int(rank)
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            rng = numpy_generator(Generator().manual_seed(self.seed + self.epoch),
                                  "DistributedSampler")
            indices = rng.permutation(n).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise RuntimeError(f"DistributedSampler: the dataset now has {n} samples; the "
                               f"sampler was made for {self.total_size} indices in all")
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch, so a shuffling sampler draws that epoch's permutation.

        Parameters
        ----------
        epoch : int
            The epoch number (the same on every replica).
        """
        self.epoch = epoch
