"""DataLoader's PyTorch arguments in the main process: samplers, batch samplers,
iterable datasets, argument errors (the same types as torch's, compared where
it is installed), lengths and batch shapes."""
import multiprocessing
import warnings

import numpy as np
import pytest

import oxmera
from oxmera.utils.data import (BatchSampler, DataLoader, IterableDataset, RandomSampler,
                               SequentialSampler, TensorDataset, default_collate,
                               default_convert)

X = oxmera.arange(20.0).reshape(10, 2)
Y = oxmera.arange(10)


class _Stream(IterableDataset):
    def __init__(self, n, length=None):
        self.n = n
        self.length = length

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n if self.length is None else self.length


def _labels(loader):
    return [y.tolist() for _, y in loader]


def test_every_pytorch_argument_is_accepted():
    loader = DataLoader(TensorDataset(X, Y), batch_size=4, shuffle=False, sampler=None,
                        batch_sampler=None, num_workers=0, collate_fn=None, pin_memory=True,
                        drop_last=False, timeout=0, worker_init_fn=None,
                        multiprocessing_context=None, generator=oxmera.Generator(),
                        prefetch_factor=None, persistent_workers=False,
                        pin_memory_device="", in_order=True)
    assert _labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert loader.collate_fn is default_collate and loader.pin_memory is True
    assert isinstance(loader.sampler, SequentialSampler)
    assert isinstance(loader.batch_sampler, BatchSampler)
    assert DataLoader([1], batch_size=None).collate_fn is default_convert


def test_sampler_and_batch_sampler():
    order = [9, 0, 8, 1, 7]
    assert _labels(DataLoader(TensorDataset(X, Y), batch_size=2, sampler=order)) == \
        [[9, 0], [8, 1], [7]]
    batches = [[3, 4, 5], [0], [9, 9]]
    loader = DataLoader(TensorDataset(X, Y), batch_sampler=batches)
    assert _labels(loader) == batches and len(loader) == 3
    assert loader.batch_size is None and loader.drop_last is False
    unbatched = DataLoader(TensorDataset(X, Y), batch_size=None, sampler=[2, 5])
    assert [y.item() for _, y in unbatched] == [2, 5]


def test_shuffle_uses_a_random_sampler_with_the_loaders_generator():
    g = oxmera.Generator().manual_seed(4)
    loader = DataLoader(TensorDataset(X, Y), batch_size=3, shuffle=True, generator=g)
    assert isinstance(loader.sampler, RandomSampler) and loader.generator is g
    first = [i for y in _labels(loader) for i in y]
    g.manual_seed(4)
    assert [i for y in _labels(loader) for i in y] == first
    assert sorted(first) == list(range(10))


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(sampler=[0, 1], shuffle=True), ValueError,
     "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), ValueError,
     "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
     "drop_last"),
    (dict(batch_sampler=[[0]], shuffle=True), ValueError, "mutually exclusive"),
    (dict(batch_sampler=[[0]], sampler=[0]), ValueError, "mutually exclusive"),
    (dict(batch_sampler=[[0]], drop_last=True), ValueError, "mutually exclusive"),
    (dict(num_workers=-1), ValueError, "num_workers option should be a non-negative"),
    (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
    (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified"),
    (dict(num_workers=1, prefetch_factor=-1), ValueError, "prefetch_factor option should be "
                                                         "non-negative"),
    (dict(persistent_workers=True), ValueError, "persistent_workers option needs "
                                                "num_workers > 0"),
    (dict(multiprocessing_context="fork"), ValueError, "multiprocessing_context can only be "
                                                       "used with multi-process loading"),
    (dict(num_workers=1, multiprocessing_context="nope"), ValueError,
     "should specify a valid start method"),
    (dict(num_workers=1, multiprocessing_context=3), TypeError,
     "should be a valid context object or a string"),
])
def test_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        DataLoader(TensorDataset(X, Y), **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(shuffle=True), "expected unspecified shuffle option, but got shuffle=True"),
    (dict(sampler=[0]), "expected unspecified sampler option"),
    (dict(batch_sampler=[[0]]), "expected unspecified batch_sampler option"),
])
def test_iterable_dataset_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DataLoader(_Stream(3), **kwargs)


def test_argument_errors_like_pytorch():
    torch = pytest.importorskip("torch")
    cases = [dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
             dict(batch_sampler=[[0]], drop_last=True), dict(num_workers=-1),
             dict(timeout=-1), dict(prefetch_factor=2), dict(persistent_workers=True),
             dict(multiprocessing_context="fork"),
             dict(num_workers=1, multiprocessing_context="nope"),
             dict(num_workers=1, multiprocessing_context=3),
             dict(batch_size=None, drop_last=True), dict(batch_size=0)]
    for kwargs in cases:
        with pytest.raises(Exception) as theirs:
            torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.arange(10)),
                                        **kwargs)
        with pytest.raises(Exception) as ours:
            DataLoader(TensorDataset(Y), **kwargs)
        assert ours.type is theirs.type, (kwargs, ours.value, theirs.value)


def test_attributes_cannot_be_changed_after_init():
    loader = DataLoader(TensorDataset(X, Y))
    for name in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset",
                 "persistent_workers"):
        with pytest.raises(ValueError, match=f"{name} attribute should not be set after"):
            setattr(loader, name, None)
    loader.num_workers = 0          # the others can be, as in PyTorch


def test_iterable_dataset_in_the_main_process():
    assert [b.tolist() for b in DataLoader(_Stream(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5],
                                                                          [6]]
    assert [b.tolist() for b in DataLoader(_Stream(7), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    assert [int(b) for b in DataLoader(_Stream(3), batch_size=None)] == [0, 1, 2]
    assert len(DataLoader(_Stream(7), batch_size=3)) == 3
    assert len(DataLoader(_Stream(7), batch_size=3, drop_last=True)) == 2
    # A dataset that yields more than its __len__ said: PyTorch's warning.
    loader = DataLoader(_Stream(5, length=2), batch_size=None)
    assert len(loader) == 2
    with pytest.warns(UserWarning, match="was reported to be 2.*[345] samples have been fetched"):
        list(loader)


def test_batches_like_pytorch():
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data
    data = [{"x": np.full(3, i, dtype=np.float32), "y": i} for i in range(7)]
    for kwargs in [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                   dict(batch_size=None), dict(batch_sampler=[[1, 2], [6, 0, 3]]),
                   dict(batch_size=2, sampler=[6, 5, 4])]:
        ours, theirs = list(DataLoader(data, **kwargs)), list(tdata.DataLoader(data, **kwargs))
        assert len(ours) == len(theirs) == len(DataLoader(data, **kwargs))
        for a, b in zip(ours, theirs):
            assert tuple(a["x"].shape) == tuple(b["x"].shape)
            np.testing.assert_array_equal(a["x"].numpy(), b["x"].numpy())
            ay, by = a["y"], b["y"]
            if isinstance(by, int):
                assert ay == by and type(ay) is int
            else:
                assert str(ay.dtype) == str(by.dtype).replace("torch.", "")
                np.testing.assert_array_equal(ay.numpy(), by.numpy())


def test_multiprocessing_context_choices():
    loader = DataLoader(TensorDataset(Y), num_workers=1, multiprocessing_context="spawn")
    assert loader.multiprocessing_context.get_start_method() == "spawn"
    context = multiprocessing.get_context("spawn")
    assert DataLoader(TensorDataset(Y), num_workers=1,
                      multiprocessing_context=context).multiprocessing_context is context


def test_too_many_workers_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DataLoader(TensorDataset(Y), num_workers=10_000)
    assert any("worker processes in total" in str(w.message) for w in caught)


def test_signatures_like_pytorch():
    torch = pytest.importorskip("torch")
    import inspect

    def params(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
    for name in oxmera.utils.data.__all__:
        theirs = getattr(torch.utils.data, name)
        if name == "random_split":          # PyTorch's default is its default generator
            assert [p[:2] for p in params(theirs)] == \
                [p[:2] for p in params(oxmera.utils.data.random_split)]
            continue
        assert params(getattr(oxmera.utils.data, name)) == params(theirs), name
