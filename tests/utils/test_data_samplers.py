"""oxmera.utils.data's samplers, DistributedSampler and the datasets beyond the
map-style ones: lengths, index sets, fixed orders and errors as PyTorch's
(compared with torch where it is installed); random orders reproducible from
the seed or generator."""
import numpy as np
import pytest

import oxmera
from oxmera.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                               DistributedSampler, IterableDataset, RandomSampler, Sampler,
                               SequentialSampler, StackDataset, Subset, SubsetRandomSampler,
                               TensorDataset, WeightedRandomSampler)
from oxmera.utils.data.distributed import DistributedSampler as FromDistributed
from oxmera.utils.data.sampler import RandomSampler as FromSampler


def test_the_modules_programs_import_from():
    from oxmera.utils.data import dataloader, dataset, distributed, sampler
    from oxmera.utils.data.dataloader import DataLoader as Loader
    assert Loader is DataLoader and FromSampler is RandomSampler
    assert FromDistributed is DistributedSampler
    assert dataset.TensorDataset is TensorDataset and sampler.BatchSampler is BatchSampler
    assert distributed.__all__ == ["DistributedSampler"]
    assert dataloader.default_collate is oxmera.utils.data.default_collate
    assert set(oxmera.utils.data.__all__) >= {"IterableDataset", "get_worker_info",
                                              "WeightedRandomSampler", "StackDataset"}


# -- fixed orders and lengths ---------------------------------------------------------------

def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3] and len(SequentialSampler("ab")) == 2
    batches = BatchSampler(SequentialSampler(range(7)), 3, False)
    assert list(batches) == [[0, 1, 2], [3, 4, 5], [6]] and len(batches) == 3
    dropped = BatchSampler(range(7), 3, True)
    assert list(dropped) == [[0, 1, 2], [3, 4, 5]] and len(dropped) == 2
    assert list(BatchSampler(range(6), 3, True)) == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("make, error, match", [
    (lambda: BatchSampler(range(3), 0, False), ValueError,
     "batch_size should be a positive integer value, but got batch_size=0"),
    (lambda: BatchSampler(range(3), True, False), ValueError, "batch_size=True"),
    (lambda: BatchSampler(range(3), 2, 1), ValueError,
     "drop_last should be a boolean value, but got drop_last=1"),
    (lambda: RandomSampler(range(3), replacement=1), TypeError,
     "replacement should be a boolean value, but got replacement=1"),
    (lambda: RandomSampler(range(3), num_samples=0), ValueError,
     "num_samples should be a positive integer value, but got num_samples=0"),
    (lambda: RandomSampler(range(0)), ValueError, "num_samples=0"),
    (lambda: WeightedRandomSampler([1.0], 0), ValueError, "num_samples=0"),
    (lambda: WeightedRandomSampler([1.0], 2, replacement=None), TypeError, "replacement=None"),
    (lambda: WeightedRandomSampler([[1.0, 2.0]], 2), ValueError,
     "weights should be a 1d sequence but given weights have shape \\(1, 2\\)"),
    (lambda: RandomSampler(range(3), generator="x"), TypeError, "generator must be"),
])
def test_sampler_argument_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("weights, n, replacement, match", [
    ([1.0, 0.0], 3, False, "cannot sample n_sample > prob_dist.size\\(-1\\) samples without"),
    ([0.0, 0.0], 1, True, "sum of probabilities <= 0"),
    ([-1.0, 1.0], 1, True, "probability entry < 0"),
    ([float("nan"), 1.0], 1, True, "inf, nan"),
    ([], 1, True, "empty"),
])
def test_weighted_sampler_errors_when_drawing(weights, n, replacement, match):
    sampler = WeightedRandomSampler(weights, n, replacement=replacement, generator=0)
    with pytest.raises(RuntimeError, match=match):
        list(sampler)


def test_sampler_errors_like_pytorch():
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data
    cases = [lambda m: m.BatchSampler(range(3), 0, False),
             lambda m: m.BatchSampler(range(3), 2, 1),
             lambda m: m.RandomSampler(range(3), replacement=1),
             lambda m: m.RandomSampler(range(0)),
             lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2),
             lambda m: list(m.WeightedRandomSampler([1.0, 0.0], 3, replacement=False)),
             lambda m: list(m.WeightedRandomSampler([0.0, 0.0], 1)),
             lambda m: list(m.WeightedRandomSampler([-1.0, 1.0], 1)),
             lambda m: m.DistributedSampler(range(4), num_replicas=2, rank=2),
             lambda m: m.DistributedSampler(range(4), num_replicas=2),
             lambda m: m.StackDataset([1], [1, 2]),
             lambda m: m.StackDataset([1], x=[1]),
             lambda m: m.StackDataset()]
    for case in cases:
        with pytest.raises(Exception) as theirs:
            case(tdata)
        with pytest.raises(Exception) as ours:
            case(oxmera.utils.data)
        assert ours.type is theirs.type, (ours.value, theirs.value)


# -- random samplers ------------------------------------------------------------------------

def _epochs(sampler, n=3):
    return [list(sampler) for _ in range(n)]


def test_random_sampler_permutations_and_lengths():
    s = RandomSampler(range(10), generator=1)
    orders = _epochs(s)
    assert all(sorted(o) == list(range(10)) for o in orders) and orders[0] != orders[1]
    assert len(s) == 10
    long = list(RandomSampler(range(4), num_samples=10, generator=0))
    # As PyTorch: whole permutations, then the start of another one.
    assert len(long) == 10 and sorted(long[:4]) == sorted(long[4:8]) == [0, 1, 2, 3]
    assert len(set(long[8:])) == 2
    short = list(RandomSampler(range(10), num_samples=3, generator=0))
    assert len(short) == 3 and len(set(short)) == 3
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=0))
    assert len(drawn) == 50 and set(drawn) == {0, 1, 2}


def test_random_sampler_follows_its_dataset_length():
    data = [1, 2, 3]
    s = RandomSampler(data, generator=0)
    data.append(4)
    assert len(s) == 4 and sorted(s) == [0, 1, 2, 3]


@pytest.mark.parametrize("make", [
    lambda g: RandomSampler(range(20), generator=g),
    lambda g: RandomSampler(range(5), replacement=True, num_samples=12, generator=g),
    lambda g: SubsetRandomSampler([3, 9, 4, 1, 7], generator=g),
    lambda g: WeightedRandomSampler([0.1, 0.5, 2.0, 1.0], 9, generator=g),
    lambda g: WeightedRandomSampler([0.1, 0.5, 2.0, 1.0], 4, replacement=False, generator=g),
])
def test_random_samplers_are_reproducible(make):
    assert _epochs(make(7)) == _epochs(make(7))
    assert _epochs(make(oxmera.Generator().manual_seed(7))) == \
        _epochs(make(oxmera.Generator().manual_seed(7)))
    assert _epochs(make(np.random.default_rng(7))) == _epochs(make(np.random.default_rng(7)))
    assert _epochs(make(7), 5) != _epochs(make(8), 5)
    oxmera.manual_seed(3)
    first = _epochs(make(None))
    oxmera.manual_seed(3)
    assert _epochs(make(None)) == first


def test_a_shared_generator_advances():
    g = oxmera.Generator().manual_seed(0)
    a = list(RandomSampler(range(30), generator=g))
    b = list(RandomSampler(range(30), generator=g))
    assert a != b and sorted(a) == sorted(b)
    g.manual_seed(0)
    assert list(RandomSampler(range(30), generator=g)) == a


def test_subset_and_weighted_samplers():
    s = SubsetRandomSampler([7, 3, 5], generator=0)
    assert len(s) == 3 and sorted(s) == [3, 5, 7]
    w = WeightedRandomSampler(oxmera.tensor([0.0, 1.0, 3.0]), 4000, generator=0)
    counts = np.bincount(list(w), minlength=3)
    assert counts[0] == 0 and abs(counts[2] / counts[1] - 3) < 0.4
    assert w.weights.dtype == np.float64 and len(w) == 4000
    # Without replacement: every index once, the zero-weight ones last (as PyTorch).
    order = list(WeightedRandomSampler([0.0, 2.0, 1.0, 0.0, 5.0], 5, replacement=False,
                                       generator=0))
    assert sorted(order) == [0, 1, 2, 3, 4] and set(order[3:]) == {0, 3}


def test_random_samplers_like_pytorch():
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data
    for args, kwargs in [((range(10),), {}), ((range(4),), dict(num_samples=10)),
                         ((range(10),), dict(num_samples=3)),
                         ((range(3),), dict(replacement=True, num_samples=7))]:
        ours = list(RandomSampler(*args, generator=0, **kwargs))
        theirs = list(tdata.RandomSampler(*args, **kwargs))
        assert len(ours) == len(theirs) == len(RandomSampler(*args, **kwargs))
        n = len(args[0])
        if not kwargs.get("replacement"):        # each n-long run is distinct (a permutation)
            for start in range(0, len(ours), n):
                assert len(set(ours[start:start + n])) == len(set(theirs[start:start + n]))
            if len(ours) >= n:
                assert sorted(ours[:n]) == sorted(theirs[:n]) == list(range(n))
    assert sorted(SubsetRandomSampler([4, 8, 1])) == sorted(tdata.SubsetRandomSampler([4, 8, 1]))
    ours = list(WeightedRandomSampler([0.0, 2.0, 1.0, 0.0], 4, replacement=False))
    theirs = list(tdata.WeightedRandomSampler([0.0, 2.0, 1.0, 0.0], 4, replacement=False))
    assert set(ours[:2]) == set(theirs[:2]) == {1, 2}


def test_a_custom_sampler():
    class Evens(Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    loader = DataLoader(list(range(10)), batch_size=2, sampler=Evens(10))
    assert [b.tolist() for b in loader] == [[0, 2], [4, 6], [8]] and len(loader) == 3
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(Sampler())


# -- DistributedSampler ---------------------------------------------------------------------

@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (9, 3, True),
                                                    (2, 4, False), (5, 2, False), (3, 4, True)])
def test_distributed_sampler_splits_like_pytorch(n, replicas, drop_last):
    parts = [list(DistributedSampler(range(n), num_replicas=replicas, rank=r, shuffle=False,
                                     drop_last=drop_last)) for r in range(replicas)]
    assert len({len(p) for p in parts}) == 1
    assert len(DistributedSampler(range(n), replicas, 0, drop_last=drop_last)) == len(parts[0])
    covered = {i for p in parts for i in p}
    assert covered == set(range(n)) if not drop_last else covered <= set(range(n))
    torch = pytest.importorskip("torch")
    theirs = [list(torch.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=r,
                                                       shuffle=False, drop_last=drop_last))
              for r in range(replicas)]
    assert parts == theirs


def test_distributed_sampler_shuffles_the_same_on_every_replica():
    def shards(epoch, seed=0):
        out = []
        for rank in range(3):
            s = DistributedSampler(range(11), num_replicas=3, rank=rank, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    first = shards(0)
    assert first == shards(0)                     # every process computes the same split
    assert sorted(i for p in first for i in p)[:11] != []
    assert set(i for p in first for i in p) == set(range(11))
    assert all(len(p) == 4 for p in first)
    assert shards(1) != first and shards(0, seed=5) != first
    one = DistributedSampler(range(11), num_replicas=3, rank=0)
    assert list(one) == list(one)                 # same epoch, same order


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(), ValueError, "process group has not been initialized.*pass num_replicas and rank"),
    (dict(num_replicas=2), ValueError, "pass num_replicas and rank"),
    (dict(num_replicas=2, rank=2), ValueError,
     "Invalid rank 2, rank should be in the interval \\[0, 1\\]"),
    (dict(num_replicas=2, rank=-1), ValueError, "Invalid rank -1"),
    (dict(num_replicas=0, rank=0), ValueError, "num_replicas should be positive"),
    (dict(num_replicas=2.0, rank=0), TypeError, "num_replicas should be an int"),
])
def test_distributed_sampler_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        DistributedSampler(range(4), **kwargs)


def test_distributed_sampler_in_a_loader():
    ds = TensorDataset(oxmera.arange(10))
    seen = []
    for rank in range(2):
        s = DistributedSampler(ds, num_replicas=2, rank=rank, seed=3)
        s.set_epoch(1)
        seen += [i for (b,) in DataLoader(ds, batch_size=2, sampler=s) for i in b.tolist()]
    assert sorted(seen) == list(range(10))


# -- iterable and stacked datasets ----------------------------------------------------------

class _Stream(IterableDataset):
    def __init__(self, values, length=True):
        self.values = list(values)
        self.length = length

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        if not self.length:
            raise TypeError("no length")
        return len(self.values)


def test_iterable_and_chain_datasets():
    chain = _Stream([1, 2]) + _Stream([3])
    assert isinstance(chain, ChainDataset) and list(chain) == [1, 2, 3] and len(chain) == 3
    with pytest.raises(TypeError, match="ChainDataset only supports IterableDataset, got list"):
        list(ChainDataset([_Stream([1]), [2]]))
    with pytest.raises(TypeError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([_Stream([1])])
    with pytest.raises(NotImplementedError, match="__iter__"):
        iter(IterableDataset())


def test_stack_dataset():
    a, b = TensorDataset(oxmera.arange(4)), ["w", "x", "y", "z"]
    tup = StackDataset(a, b)
    assert len(tup) == 4 and tup[1][1] == "x" and tup[1][0][0].item() == 1
    named = StackDataset(n=a, s=b)
    assert named[2]["s"] == "y"
    assert named.__getitems__([0, 3])[1]["s"] == "z"
    assert [s for _, s in tup.__getitems__([3, 0])] == ["z", "w"]
    batch = next(iter(DataLoader(named, batch_size=3)))
    assert batch["s"] == ["w", "x", "y"] and batch["n"][0].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="size mismatch.*\\[4, 3\\]"):
        StackDataset(a, [1, 2, 3])
    with pytest.raises(ValueError, match="both types"):
        StackDataset(a, s=b)
    with pytest.raises(ValueError, match="at least one dataset"):
        StackDataset()


def test_getitems_is_used_for_batches():
    calls = []

    class Batched(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            raise AssertionError("the loader should call __getitems__")

        def __getitems__(self, indices):
            calls.append(list(indices))
            return [i * 10 for i in indices]

    loader = DataLoader(Subset(Batched(), [4, 3, 2, 1, 0]), batch_size=2)
    assert [b.tolist() for b in loader] == [[40, 30], [20, 10], [0]]
    assert calls == [[4, 3], [2, 1], [0]]


def test_the_base_classes_are_generic_as_in_pytorch():
    class Pairs(Dataset[tuple]):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return i, -i

    class Backwards(Sampler[int]):
        def __iter__(self):
            return iter([2, 1, 0])

    class Ones(IterableDataset[int]):
        def __iter__(self):
            return iter([1, 1])

    loader: DataLoader[tuple] = DataLoader(Pairs(), batch_size=3, sampler=Backwards())
    assert [b.tolist() for b in next(iter(loader))] == [[2, 1, 0], [-2, -1, 0]]
    assert list(Ones()) == [1, 1] and Subset[int] is not None and ConcatDataset[int] is not None


def test_random_split_takes_an_oxmera_generator():
    from oxmera.utils.data import random_split
    split = lambda: [list(p) for p in random_split(range(12), [0.5, 0.5],  # noqa: E731
                                                   generator=oxmera.Generator().manual_seed(2))]
    assert split() == split() and sorted(split()[0] + split()[1]) == list(range(12))
