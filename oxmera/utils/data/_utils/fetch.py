"""Fetchers: turn one index (or one batch of indices) into one sample (or one
collated batch), in the main process or in a worker (as
``torch.utils.data._utils.fetch``)."""
import numpy as np

from oxmera.utils.data._utils.collate import default_collate


class _BaseDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    """Pulls samples from the dataset's iterator; a batch's "indices" only count them."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _MapDatasetFetcher(_BaseDatasetFetcher):
    """``dataset[i]`` for each index (``dataset.__getitems__(indices)`` when it has one)."""

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if self.collate_fn is default_collate:
            batch = _tensor_dataset_batch(self.dataset, possibly_batched_index)
            if batch is not None:
                return batch
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            data = getitems(possibly_batched_index)
        else:
            data = [self.dataset[i] for i in possibly_batched_index]
        return self.collate_fn(data)


def _tensor_dataset_batch(dataset, indices):
    """The default-collated batch of a TensorDataset (under Subsets), made by indexing
    each tensor once with the batch's indices instead of stacking sample by sample;
    None for any other dataset."""
    from oxmera.utils.data.dataset import Subset, TensorDataset

    indices = list(indices)
    while type(dataset) is Subset:
        try:
            indices = [dataset.indices[i] for i in indices]
        except (IndexError, TypeError):
            return None
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset or not dataset.tensors:
        return None
    rows = np.asarray(indices, dtype=np.int64)
    return [t[rows] for t in dataset.tensors]


def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
    """The fetcher for a dataset of kind "map" or "iterable"."""
    fetcher = _MapDatasetFetcher if kind == "map" else _IterableDatasetFetcher
    return fetcher(dataset, auto_collation, collate_fn, drop_last)
