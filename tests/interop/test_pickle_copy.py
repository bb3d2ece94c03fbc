"""pickle, copy.copy and copy.deepcopy of tensors: values, dtype, requires_grad; deepcopy keeps
.grad, refuses non-leaves (as PyTorch does) and respects its memo."""
import copy
import pickle

import numpy as np
import pytest

import oxmera

DTYPES = [oxmera.float16, oxmera.float32, oxmera.float64, oxmera.int8, oxmera.int16,
          oxmera.int32, oxmera.int64, oxmera.uint8, oxmera.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(dtype, protocol):
    t = oxmera.tensor(np.arange(6).reshape(2, 3) % 3, dtype=dtype)
    u = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert type(u) is oxmera.Tensor and u.dtype == dtype and u.shape == (2, 3)
    np.testing.assert_array_equal(u.numpy(), t.numpy())
    assert not u.requires_grad and not np.shares_memory(u.numpy(), t.numpy())


@pytest.mark.parametrize("shape", [(), (0, 3), (4,)])
def test_pickle_0d_and_empty(shape):
    t = oxmera.zeros(*shape) + 1.5
    u = pickle.loads(pickle.dumps(t))
    assert u.shape == shape and u.dtype == np.float32
    np.testing.assert_array_equal(u.numpy(), t.numpy())


def test_pickle_keeps_requires_grad_not_grad_nor_graph():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    u = pickle.loads(pickle.dumps(x))
    assert u.requires_grad and u.is_leaf and u.grad is None
    # a non-leaf becomes a leaf that requires grad (PyTorch does the same)
    y = pickle.loads(pickle.dumps(x * 3))
    assert y.requires_grad and y.is_leaf and y.grad_fn is None
    assert y.tolist() == [3.0, 6.0]


def test_pickle_of_a_non_contiguous_view():
    t = oxmera.arange(12.0).reshape(3, 4).T[::2]
    u = pickle.loads(pickle.dumps(t))
    np.testing.assert_array_equal(u.numpy(), t.numpy())


def test_pickle_inside_a_structure_keeps_identity():
    t = oxmera.tensor([1.0])
    a, b = pickle.loads(pickle.dumps([t, t]))
    assert a is b


def test_unpickled_tensor_is_usable():
    x = pickle.loads(pickle.dumps(oxmera.tensor([1.0, 2.0], requires_grad=True)))
    (x ** 2).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    x.numpy(force=True)[0] = 5.0      # writable memory of its own


# -- copy.copy -------------------------------------------------------------------------------------

def test_copy_shares_memory_and_keeps_requires_grad():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    x.grad = oxmera.tensor([0.5, 0.5])
    c = copy.copy(x)
    assert c is not x and type(c) is oxmera.Tensor
    assert c.requires_grad and c.is_leaf and c.grad is None     # as in PyTorch
    assert np.shares_memory(c.detach().numpy(), x.detach().numpy())
    t = oxmera.tensor([1.0, 2.0])
    c = copy.copy(t)
    c.numpy()[0] = 9.0
    assert t.tolist() == [9.0, 2.0]


def test_copy_shares_the_version_counter():
    t = oxmera.tensor([1.0, 2.0])
    c = copy.copy(t)
    before = t._version
    c.add_(1.0)
    assert t._version == before + 1


def test_copy_of_a_non_leaf_is_a_leaf():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    c = copy.copy(x * 2)
    assert c.is_leaf and c.requires_grad and c.tolist() == [2.0, 4.0]


# -- copy.deepcopy ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_deepcopy_copies_values_and_dtype(dtype):
    t = oxmera.tensor(np.arange(6).reshape(2, 3) % 3, dtype=dtype)
    d = copy.deepcopy(t)
    assert d.dtype == dtype and not np.shares_memory(d.numpy(), t.numpy())
    np.testing.assert_array_equal(d.numpy(), t.numpy())
    assert not d.requires_grad


def test_deepcopy_keeps_requires_grad_and_a_copy_of_grad():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    d = copy.deepcopy(x)
    assert d.requires_grad and d.is_leaf
    assert d.grad is not None and d.grad is not x.grad
    assert d.grad.tolist() == [2.0, 4.0]
    assert not np.shares_memory(d.grad.numpy(), x.grad.numpy())
    # the copy is independent: its backward does not touch the original
    (d * 3).sum().backward()
    assert d.grad.tolist() == [5.0, 7.0] and x.grad.tolist() == [2.0, 4.0]


def test_deepcopy_keeps_grad_of_a_tensor_not_requiring_grad():
    t = oxmera.tensor([1.0, 2.0])
    t.grad = oxmera.tensor([3.0, 4.0])
    d = copy.deepcopy(t)
    assert not d.requires_grad and d.grad.tolist() == [3.0, 4.0]


def test_deepcopy_of_a_non_leaf_raises_like_torch():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user "
                                           r"\(graph leaves\) support the deepcopy protocol"):
        copy.deepcopy(x * 2)
    with pytest.raises(RuntimeError, match="deepcopy"):
        copy.deepcopy({"w": x, "y": x + 1})


def test_deepcopy_memo_maps_one_tensor_to_one_copy():
    t = oxmera.tensor([1.0, 2.0], requires_grad=True)
    a, b, nested = copy.deepcopy([t, t, {"again": t}])
    assert a is b and nested["again"] is a and a is not t


def test_deepcopy_keeps_views_of_one_memory_sharing_it():
    base = oxmera.arange(6.0).reshape(2, 3)
    row = base[1]
    flipped = base.T[::-1]
    b, r, f = copy.deepcopy([base, row, flipped])
    assert not np.shares_memory(b.numpy(), base.numpy())
    r.numpy()[0] = 100.0
    assert b[1, 0].item() == 100.0                 # still a view of the new base
    f.numpy()[0, 0] = -7.0                          # base.T[::-1][0, 0] is base[0, 2]
    assert b[0, 2].item() == -7.0
    assert base.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    np.testing.assert_array_equal(f.numpy(), b.numpy().T[::-1])
    # and they count writes together, like the originals
    before = b._version
    r.add_(1.0)
    assert b._version == before + 1


def test_deepcopy_of_a_view_alone_and_of_a_detached_alias():
    base = oxmera.arange(6.0)
    v = copy.deepcopy(base[2:4])
    assert v.tolist() == [2.0, 3.0]
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    a, b = copy.deepcopy([x, x.detach()])
    b.numpy()[0] = 5.0
    assert a.detach().tolist() == [5.0, 2.0] and x.detach().tolist() == [1.0, 2.0]


def test_deepcopy_of_read_only_memory_stays_read_only():
    a = np.arange(4.0)
    a.flags.writeable = False
    d = copy.deepcopy(oxmera.from_numpy(a))
    assert d.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_deepcopy_0d_and_empty():
    assert copy.deepcopy(oxmera.tensor(2.5)).item() == 2.5
    assert copy.deepcopy(oxmera.zeros(0, 2)).shape == (0, 2)
