"""oxmera.utils.data: datasets, collation, the loader's batching and seeded shuffling,
random_split (PyTorch's behaviour where it has the same thing)."""
import collections
import warnings

import numpy as np
import pytest

import oxmera
from oxmera.utils.data import (ConcatDataset, DataLoader, Dataset, Subset, TensorDataset,
                               default_collate, default_convert, random_split)

X = oxmera.arange(20.0).reshape(10, 2)
Y = oxmera.arange(10)


class _Plain(Dataset):
    """The same samples as TensorDataset(X, Y), through the generic path."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return X[i], Y[i]


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, oxmera.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    else:
        assert a == b


# -- datasets -------------------------------------------------------------------------------

def test_tensor_dataset():
    ds = TensorDataset(X, Y)
    assert len(ds) == 10 and ds.tensors == (X, Y)
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3
    assert len(TensorDataset()) == 0
    with pytest.raises(ValueError, match="size mismatch.*\\[10, 3\\]"):
        TensorDataset(X, oxmera.zeros(3))
    with pytest.raises(TypeError, match="argument 1 is a ndarray"):
        TensorDataset(X, np.zeros(10))
    with pytest.raises(ValueError, match="tensor 0 is 0-d"):
        TensorDataset(oxmera.tensor(1.0))


def test_subset_concat_and_base():
    sub = Subset(TensorDataset(X, Y), [4, 1])
    assert len(sub) == 2 and sub[0][1].item() == 4 and sub[-1][1].item() == 1
    both = ConcatDataset([[0, 1, 2], Subset([10, 11, 12], [2])])
    assert len(both) == 4 and [both[i] for i in range(4)] == [0, 1, 2, 12]
    assert both[-4] == 0 and both.cumulative_sizes == [3, 4]
    with pytest.raises(IndexError, match="index 4 is out of range for 4 samples"):
        both[4]
    with pytest.raises(IndexError, match="index -5"):
        both[-5]
    with pytest.raises(ValueError, match="empty"):
        ConcatDataset([])
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    assert len(TensorDataset(X) + TensorDataset(X)) == 20


# -- collation ------------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")


def test_default_collate_values_and_dtypes():
    batch = default_collate([(oxmera.tensor([1.0, 2.0]), 1, 0.5, True, "a", np.float32(2)),
                             (oxmera.tensor([3.0, 4.0]), 2, 1.5, False, "b", np.float32(3))])
    assert isinstance(batch, list) and len(batch) == 6      # tuples become lists (PyTorch)
    t, i, f, b, s, n = batch
    assert t.dtype == np.float32 and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert i.dtype == np.int64 and i.tolist() == [1, 2]
    assert f.dtype == np.float64 and f.tolist() == [0.5, 1.5]
    assert b.dtype == np.bool_ and b.tolist() == [True, False]
    assert s == ("a", "b")          # the field's values as zip gives them, as in PyTorch
    assert n.dtype == np.float32 and n.tolist() == [2.0, 3.0]


def test_default_collate_containers():
    arrays = default_collate([np.zeros((2, 3), np.int16), np.ones((2, 3), np.int16)])
    assert arrays.shape == (2, 2, 3) and arrays.dtype == np.int16
    dicts = default_collate([{"a": 1, "b": {"c": 1.0}}, {"a": 2, "b": {"c": 2.0}}])
    assert dicts["a"].tolist() == [1, 2] and dicts["b"]["c"].tolist() == [1.0, 2.0]
    ordered = default_collate([collections.OrderedDict(z=1, a=2)] * 2)
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["z", "a"]
    points = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(points) is Point and points.x.tolist() == [1, 3]
    nested = default_collate([[1, (2, 3)], [4, (5, 6)]])
    assert nested[0].tolist() == [1, 4] and nested[1][1].tolist() == [3, 6]


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="found object"):
        default_collate([object(), object()])
    with pytest.raises(TypeError, match="dtype object"):
        default_collate([np.array([None]), np.array([None])])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="empty"):
        default_collate([])
    with pytest.raises(TypeError, match="list of samples"):
        default_collate("ab")
    with pytest.raises(RuntimeError, match="stack"):
        default_collate([oxmera.zeros(2), oxmera.zeros(3)])


def test_default_convert():
    out = default_convert([np.arange(3), (np.float64(2.0), "s"), Point(np.ones(1), 1)])
    assert out[0].dtype == np.int64 and out[1][0].dtype == np.float64 and out[1][1] == "s"
    assert isinstance(out[1], list) and type(out[2]) is Point and out[2].y == 1
    assert default_convert(np.array(["a"])).dtype.kind == "U"


def test_default_collate_like_pytorch():
    pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    samples = [{"x": np.arange(3.0) + i, "n": i, "f": i / 2, "t": (i, "s")} for i in range(3)]
    ours, theirs = default_collate(samples), torch_collate(samples)
    assert list(ours) == list(theirs)
    for key in ("x", "n", "f"):
        assert str(ours[key].dtype) == str(theirs[key].dtype).replace("torch.", "")
        np.testing.assert_array_equal(ours[key].numpy(), theirs[key].numpy())
    assert type(ours["t"]) is type(theirs["t"]) is list
    assert ours["t"][1] == theirs["t"][1]


# -- the loader -----------------------------------------------------------------------------

def test_batches_in_order_and_lengths():
    loader = DataLoader(TensorDataset(X, Y), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [y.tolist() for _, y in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype == np.float32
    dropped = DataLoader(TensorDataset(X, Y), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and len(list(dropped)) == 2
    assert len(DataLoader(list(range(7)))) == 7


def test_tensor_dataset_fast_path_gives_the_default_collate_batches():
    for ds_fast, ds_slow in [(TensorDataset(X, Y), _Plain()),
                             (Subset(TensorDataset(X, Y), [9, 3, 4, 0, 1]),
                              Subset(_Plain(), [9, 3, 4, 0, 1]))]:
        fast = list(DataLoader(ds_fast, batch_size=3))
        slow = list(DataLoader(ds_slow, batch_size=3))
        _same(fast, slow)


def test_batch_size_none_and_custom_collate():
    samples = list(DataLoader([np.array([1, 2]), np.array([3, 4])], batch_size=None))
    assert [s.tolist() for s in samples] == [[1, 2], [3, 4]]
    assert isinstance(samples[0], oxmera.Tensor)
    calls = []
    loader = DataLoader(TensorDataset(X, Y), batch_size=5,
                        collate_fn=lambda batch: calls.append(len(batch)) or len(batch))
    assert list(loader) == [5, 5] and calls == [5, 5]


def _epoch_orders(loader, epochs=3):
    return [[i for _, y in loader for i in y.tolist()] for _ in range(epochs)]


def test_shuffling_visits_every_sample_once_per_epoch():
    orders = _epoch_orders(DataLoader(TensorDataset(X, Y), batch_size=3, shuffle=True,
                                      generator=1))
    for order in orders:
        assert sorted(order) == list(range(10))
    assert orders[0] != list(range(10))
    assert orders[0] != orders[1]          # a new order every epoch


def test_shuffling_is_deterministic_for_a_seed():
    make = lambda g: DataLoader(TensorDataset(X, Y), batch_size=4, shuffle=True,  # noqa: E731
                                generator=g)
    assert _epoch_orders(make(123)) == _epoch_orders(make(123))
    assert _epoch_orders(make(123)) != _epoch_orders(make(124))
    assert _epoch_orders(make(np.random.default_rng(5))) == \
        _epoch_orders(make(np.random.default_rng(5)))
    rng = np.random.default_rng(5)
    shared = [make(rng), make(rng)]              # one generator: its stream is shared
    assert _epoch_orders(shared[0], 1) != _epoch_orders(shared[1], 1)


def test_shuffling_follows_manual_seed_without_a_generator():
    loader = DataLoader(TensorDataset(X, Y), batch_size=4, shuffle=True)
    oxmera.manual_seed(7)
    first = _epoch_orders(loader)
    oxmera.manual_seed(7)
    assert _epoch_orders(loader) == first
    assert first[0] != first[1]


def test_drop_last_with_shuffle():
    loader = DataLoader(TensorDataset(X, Y), batch_size=3, shuffle=True, drop_last=True,
                        generator=0)
    batches = list(loader)
    assert [len(y) for _, y in batches] == [3, 3, 3]
    assert len(set(i for _, y in batches for i in y.tolist())) == 9


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(batch_size=0), ValueError, "positive integer value or None, but got batch_size=0"),
    (dict(batch_size=True), ValueError, "batch_size=True"),
    (dict(batch_size=2.0), ValueError, "batch_size=2.0"),
    (dict(batch_size=None, drop_last=True), ValueError, "mutually exclusive"),
    (dict(generator="seed"), TypeError, "DataLoader: generator must be.*got str"),
    (dict(generator=True), TypeError, "got bool"),
])
def test_loader_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        DataLoader(TensorDataset(X, Y), **kwargs)


def test_an_empty_dataset_gives_no_batches():
    loader = DataLoader(TensorDataset(oxmera.zeros(0, 3)), batch_size=2)
    assert len(loader) == 0 and list(loader) == []
    # Shuffling an empty dataset is an error in PyTorch too (RandomSampler's num_samples).
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        DataLoader(TensorDataset(oxmera.zeros(0, 3)), batch_size=2, shuffle=True)


# -- random_split ---------------------------------------------------------------------------

def test_random_split_lengths_cover_the_dataset_without_overlap():
    parts = random_split(TensorDataset(X, Y), [5, 3, 2], generator=0)
    assert [len(p) for p in parts] == [5, 3, 2]
    seen = [p[i][1].item() for p in parts for i in range(len(p))]
    assert sorted(seen) == list(range(10))
    assert all(isinstance(p, Subset) for p in parts)


def test_random_split_fractions_distribute_the_remainder_like_pytorch():
    assert [len(p) for p in random_split(range(10), [0.33, 0.33, 0.34], generator=0)] == \
        [4, 3, 3]
    assert [len(p) for p in random_split(range(7), [0.5, 0.5], generator=0)] == [4, 3]
    with pytest.warns(UserWarning, match="index 1 is 0"):
        random_split(range(2), [0.9, 0.1], generator=0)


def test_random_split_fractions_like_pytorch():
    torch = pytest.importorskip("torch")
    for n, fractions in [(10, [0.33, 0.33, 0.34]), (7, [0.5, 0.5]), (101, [0.8, 0.1, 0.1])]:
        ours = [len(p) for p in random_split(range(n), fractions, generator=0)]
        theirs = [len(p) for p in torch.utils.data.random_split(range(n), fractions)]
        assert ours == theirs


def test_random_split_is_deterministic():
    a = [list(p) for p in random_split(range(20), [10, 10], generator=3)]
    b = [list(p) for p in random_split(range(20), [10, 10], generator=np.random.default_rng(3))]
    assert a == b
    oxmera.manual_seed(1)
    c = [list(p) for p in random_split(range(20), [10, 10])]
    oxmera.manual_seed(1)
    assert c == [list(p) for p in random_split(range(20), [10, 10])]


@pytest.mark.parametrize("lengths, match", [
    ([5, 4], "sum of input lengths \\(9\\) does not equal the length of the input dataset "
             "\\(10\\)"),
    ([11, -1], "non-negative"),
    ([0.5, 0.4], "fractions summing to 1; got 0.5 at index 0"),
    ([1.5, -0.5], "fraction at index 0"),
])
def test_random_split_errors(lengths, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=match):
            random_split(range(10), lengths, generator=0)
