"""Indexing ``t[...]``: ints, slices (negative steps too), None, Ellipsis, bool
masks, integer arrays/tensors/lists and their combinations, against NumPy;
views versus copies; repeated indices accumulating in backward; errors.

Finite-difference gradient checks are the ``index`` and ``index_backward``
entries of ``_cases.py``.
"""
import numpy as np
import pytest

import oxmera
from oxmera.ops.index import index_backward

from ._helpers import leaf, unchanged

F32, F64, I64 = oxmera.float32, oxmera.float64, oxmera.int64

A = np.arange(24.0).reshape(2, 3, 4)

#: (id, index as given to the tensor, the same index for NumPy)
INDICES = [
    ("int", 1, 1),
    ("negative-int", -1, -1),
    ("numpy-int", np.int64(1), 1),
    ("ints", (1, 2, 3), (1, 2, 3)),
    ("ints-partial", (0, -1), (0, -1)),
    ("slice", slice(None, 1), slice(None, 1)),
    ("slices", (slice(None), slice(1, 3), slice(None, None, 2)),
     (slice(None), slice(1, 3), slice(None, None, 2))),
    ("negative-step", (slice(None, None, -1), slice(2, None, -2)),
     (slice(None, None, -1), slice(2, None, -2))),
    ("empty-slice", slice(1, 1), slice(1, 1)),
    ("none", None, None),
    ("none-middle", (0, None, slice(None), None), (0, None, slice(None), None)),
    ("ellipsis", (Ellipsis, 2), (Ellipsis, 2)),
    ("ellipsis-middle", (1, Ellipsis, 0), (1, Ellipsis, 0)),
    ("ellipsis-only", Ellipsis, Ellipsis),
    ("empty-tuple", (), ()),
    ("bool-tensor", "mask0", np.array([True, False])),
    ("bool-tensor-2d", "mask01", A[:, :, 0] > 5),
    ("bool-tensor-full", "maskall", A > 10),
    ("bool-array-dim1", (slice(None), np.array([True, False, True])),
     (slice(None), np.array([True, False, True]))),
    ("bool-list", [True, False], np.array([True, False])),
    ("int-list", [1, 0, 1], np.array([1, 0, 1])),
    ("int-tensor", "int_tensor", np.array([1, 1, 0])),
    ("int-array-2d", (slice(None), np.array([[0, 2], [1, 1]])),
     (slice(None), np.array([[0, 2], [1, 1]]))),
    ("0d-int-tensor", "int_0d", np.array(1)),
    ("two-arrays", ([0, 1, 1], [2, 0, 2]), (np.array([0, 1, 1]), np.array([2, 0, 2]))),
    ("arrays-broadcast", (np.array([[0], [1]]), slice(None), np.array([0, 3])),
     (np.array([[0], [1]]), slice(None), np.array([0, 3]))),
    ("int-and-array", (1, [2, 0]), (1, np.array([2, 0]))),
    ("array-slice-none", ([1, 0], slice(1, None), None), (np.array([1, 0]), slice(1, None), None)),
    ("ellipsis-array", (Ellipsis, [3, 3, 0]), (Ellipsis, np.array([3, 3, 0]))),
    ("separated-arrays", ([0, 1], slice(None), [1, 3]),
     (np.array([0, 1]), slice(None), np.array([1, 3]))),
    ("mask-and-int", (np.array([False, True]), 2), (np.array([False, True]), 2)),
]


def _resolve(index):
    """Build the tensor-valued indices named in INDICES."""
    named = {"mask0": oxmera.tensor([True, False]),
             "mask01": oxmera.tensor(A[:, :, 0] > 5),
             "maskall": oxmera.tensor(A > 10),
             "int_tensor": oxmera.tensor([1, 1, 0]),
             "int_0d": oxmera.tensor(1)}
    return named[index] if isinstance(index, str) else index


@pytest.mark.parametrize("name, index, np_index", INDICES, ids=[i[0] for i in INDICES])
def test_indexing_matches_numpy(name, index, np_index):
    for values in (A, A.astype(np.int64), A.transpose(2, 1, 0).copy().transpose(2, 1, 0)):
        x = oxmera.from_numpy(values)
        result = x[_resolve(index)]
        expected = values[np_index]
        assert isinstance(result, oxmera.Tensor)
        assert result.shape == np.shape(expected) and result.dtype == values.dtype
        np.testing.assert_array_equal(result.numpy(), expected)


@pytest.mark.parametrize("name, index, np_index", INDICES, ids=[i[0] for i in INDICES])
def test_indexing_gradient_scatters_back(name, index, np_index):
    x = leaf(A)
    out = x[_resolve(index)]
    rng = np.random.default_rng(0)
    weights = rng.standard_normal(out.shape)
    (out * oxmera.from_numpy(weights)).sum().backward()
    expected = np.zeros_like(A)
    np.add.at(expected, np_index, weights)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert x.grad.shape == x.shape and x.grad.dtype == F64


def test_repeated_indices_accumulate():
    x = leaf(np.arange(5.0))
    x[[0, 0, 1]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 1.0, 0.0, 0.0, 0.0])
    x.grad = None
    x[oxmera.tensor([4, 4, 4, 0])].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 0.0, 0.0, 3.0])
    y = leaf(np.zeros((2, 2)))
    (y[[0, 0, 1], [1, 1, 1]] * oxmera.tensor([1.0, 2.0, 3.0], dtype=F64)).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 3.0], [0.0, 3.0]])


def test_index_of_0d_tensor():
    x = leaf(3.0)
    assert x[()].shape == () and x[()].item() == 3.0
    assert x[None].shape == (1,)
    assert x[...].shape == ()
    (x[None][0] * 2).backward()
    assert x.grad.item() == 2.0


def test_index_with_python_bools():
    x = leaf([1.0, 2.0])
    assert x[True].shape == (1, 2) and x[False].shape == (0, 2)
    x[True].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_mask_from_comparison():
    x = leaf([[-1.0, 2.0], [3.0, -4.0]])
    positive = x[x > 0]
    np.testing.assert_array_equal(positive.detach().numpy(), [2.0, 3.0])
    positive.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0], [1.0, 0.0]])


def test_basic_indexing_gives_views_and_advanced_indexing_copies():
    x = oxmera.from_numpy(np.arange(12.0).reshape(3, 4))
    for basic in (x[1], x[:, 1:3], x[::-1], x[None, ..., 0]):
        assert np.shares_memory(basic.numpy(), x.numpy())
        before = x._version
        basic._bump_version()
        assert x._version == before + 1
    for advanced in (x[[0, 1]], x[x > 3], x[:, [1, 1]]):
        assert not np.shares_memory(advanced.numpy(), x.numpy())
        before = x._version
        advanced._bump_version()
        assert x._version == before


def test_indexing_records_only_when_needed():
    x = oxmera.tensor([1.0, 2.0, 3.0])
    assert x[1:].grad_fn is None and not x[1:].requires_grad
    y = leaf([1.0, 2.0, 3.0])
    assert y[1:].grad_fn.name == "IndexBackward"
    with oxmera.no_grad():
        assert y[[0, 1]].grad_fn is None


def test_index_backward_forward():
    out = index_backward(oxmera.ones(3), (2,), oxmera.tensor([0, 0, 1]))
    np.testing.assert_array_equal(out.numpy(), [2.0, 1.0])
    out = index_backward(oxmera.tensor([[1.0, 2.0]]), (3, 2), (slice(1, 2),))
    np.testing.assert_array_equal(out.numpy(), [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]])


# -- errors (SPEC §6) ---------------------------------------------------------------------------

@pytest.mark.parametrize("index", [
    3, -4, (0, 5), [0, 3], (slice(None), [4]), "tensor-out-of-range", (0, 0, 0),
    "mask-wrong-shape", "float-tensor", (0, None, 0, 0)],
    ids=["int", "negative-int", "second-int", "list", "array-dim1", "tensor", "too-many",
         "mask-shape", "float-index", "too-many-with-none"])
def test_bad_index_is_an_index_error_and_changes_nothing(index):
    resolved = {"tensor-out-of-range": oxmera.tensor([0, 7]),
                "mask-wrong-shape": oxmera.tensor([True, False]),
                "float-tensor": oxmera.tensor([0.0, 1.0])}.get(index, index) \
        if isinstance(index, str) else index
    x = leaf(np.ones((3, 4)))
    x.grad = oxmera.zeros(3, 4, dtype=F64)
    y = x * 2
    for t in (x, y):
        with unchanged(x, y):
            with pytest.raises(IndexError):
                t[resolved]


def test_index_error_names_the_shape():
    with pytest.raises(IndexError, match=r"\(3, 4\)"):
        oxmera.zeros(3, 4)[5]
