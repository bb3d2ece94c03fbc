"""What a tensor may hold: base-class ndarrays only.

An ndarray subclass changes what NumPy's functions compute (``np.matrix``
keeps two dimensions through reductions and indexing, ``*`` is its matrix
product; a ``MaskedArray`` skips masked entries in exp and sum), so every op
would silently compute something else. Tensors hold base-class ndarrays
(``np.asarray`` semantics: a view sharing the memory, so an ``np.memmap``
still shares its file), and a ``MaskedArray`` is refused with a TypeError
that says what to pass instead, since dropping its mask changes the data.
"""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera._core import autograd as core

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


class Tagged(np.ndarray):
    """A user's subclass: tensors must hold its memory as a plain ndarray."""

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", "user")


def _matrix():
    return np.matrix([[1.0, 2.0], [3.0, 4.0]])


MAKERS = {
    "tensor": lambda a: oxmera.tensor(a),
    "as_tensor": lambda a: oxmera.as_tensor(a),
    "from_numpy": lambda a: oxmera.from_numpy(a),
    "Tensor": lambda a: oxmera.Tensor(a),
    "Parameter": lambda a: oxmera.nn.Parameter(a),
    "data setter": lambda a: _set_data(a),
    "_wrap": lambda a: core._wrap(a),
}


def _set_data(a):
    t = oxmera.zeros(1)
    t.data = a
    return t


@pytest.mark.parametrize("make", sorted(MAKERS))
def test_a_matrix_is_held_as_a_plain_array(make):
    t = MAKERS[make](_matrix())
    assert type(t.detach().numpy()) is np.ndarray
    assert t.sum(0).shape == (2,)           # np.matrix would keep (1, 2)
    assert t[0].shape == (2,)
    np.testing.assert_array_equal((t * t).detach().numpy(), [[1.0, 4.0], [9.0, 16.0]])


@pytest.mark.parametrize("make", sorted(MAKERS))
def test_a_masked_array_is_refused_saying_what_to_pass(make):
    masked = np.ma.MaskedArray([1.0, 2.0], mask=[False, True])
    with pytest.raises(TypeError, match=r"MaskedArray.*\.filled\(.*\.data"):
        MAKERS[make](masked)


@pytest.mark.parametrize("call", [
    lambda m: F.softmax(m, 0), lambda m: oxmera.sigmoid(m), lambda m: oxmera.ones(2) + m,
    lambda m: oxmera.add(m, oxmera.ones(2)), lambda m: oxmera.cat([oxmera.ones(2), m]),
    lambda m: oxmera.where(oxmera.ones(2) > 0, m, 0.0),
], ids=["softmax", "sigmoid", "add", "add-first", "cat", "where"])
def test_a_masked_array_given_to_an_op_is_refused(call):
    # (``masked + tensor`` is NumPy's masked arithmetic, not an oxmera op: it
    # reads the tensor as an array and returns a MaskedArray, as with any array.)
    masked = np.ma.MaskedArray([1.0, 2.0], mask=[False, True])
    with pytest.raises(TypeError, match="MaskedArray"):
        call(masked)


def test_ops_on_subclass_operands_compute_plain_numpy():
    x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=oxmera.float64, requires_grad=True)
    y = x * _matrix()                       # elementwise, not np.matrix's product
    np.testing.assert_array_equal(y.detach().numpy(), [[1.0, 4.0], [9.0, 16.0]])
    assert type(y.detach().numpy()) is np.ndarray
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_a_user_subclass_shares_its_memory_as_a_plain_array():
    base = np.arange(3.0)
    tagged = base.view(Tagged)
    t = oxmera.from_numpy(tagged)
    assert type(t.numpy()) is np.ndarray
    tagged[0] = 9.0
    assert t[0].item() == 9.0


def test_a_memmap_keeps_sharing_its_file(tmp_path):
    path = tmp_path / "weights.bin"
    mapped = np.memmap(path, dtype=np.float32, mode="w+", shape=(4,))
    t = oxmera.from_numpy(mapped)
    assert type(t.numpy()) is np.ndarray
    t.numpy()[:] = [1.0, 2.0, 3.0, 4.0]     # through the tensor, into the file
    mapped.flush()
    np.testing.assert_array_equal(np.fromfile(path, dtype=np.float32), [1.0, 2.0, 3.0, 4.0])
    mapped[0] = 7.0
    assert t[0].item() == 7.0


def test_a_pickled_subclass_array_loads_as_a_plain_one():
    import pickle
    t = oxmera.from_numpy(_matrix())
    loaded = pickle.loads(pickle.dumps(t))
    assert type(loaded.numpy()) is np.ndarray and loaded.sum(0).shape == (2,)


def test_storage_of_an_unsupported_dtype_is_refused():
    with pytest.raises(TypeError, match="unsupported dtype"):
        core._wrap(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="unsupported dtype"):
        oxmera.from_numpy(np.zeros(2, dtype=[("a", "f8")]))


@pytest.mark.parametrize("make", [
    lambda: oxmera.zeros(2, dtype="M8[s]"), lambda: oxmera.ones(2, dtype="m8[s]"),
    lambda: oxmera.empty(2, dtype="M8[s]"), lambda: oxmera.full((2,), 1.0, dtype="m8[s]"),
    lambda: oxmera.arange(3, dtype="M8[s]"), lambda: oxmera.eye(2, dtype="m8[s]"),
    lambda: oxmera.zeros(2, dtype="U3"),
], ids=["zeros", "ones", "empty", "full", "arange", "eye", "str"])
def test_creation_refuses_dtypes_tensors_cannot_hold(make):
    # (complex64/complex128 are tensors' dtypes now; dates and strings are not.)
    with pytest.raises(TypeError, match="unsupported dtype"):
        make()
