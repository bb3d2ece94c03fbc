"""Data loading, as ``torch.utils.data``: datasets, samplers, ``DataLoader``
(in the main process or in worker processes), collation and
``random_split``.

The modules are PyTorch's: ``dataset``, ``sampler``, ``distributed``
(``DistributedSampler``) and ``dataloader``; each name is exported here too.
Random orders come from NumPy's PCG64 (an ``oxmera.Generator``, a
``numpy.random.Generator``, an int seed or oxmera's default generator), so
they are reproducible from the seed but differ from PyTorch's; lengths,
index sets, batches and errors are PyTorch's.
"""
from oxmera.utils.data._utils.collate import default_collate, default_convert
from oxmera.utils.data._utils.worker import get_worker_info
from oxmera.utils.data.dataloader import DataLoader
from oxmera.utils.data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,
                                       StackDataset, Subset, TensorDataset, random_split)
from oxmera.utils.data.distributed import DistributedSampler
from oxmera.utils.data.sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                                       SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
           "DataLoader", "get_worker_info", "default_collate", "default_convert"]
