"""Indexing ``t[...]``: ints, slices (negative steps too), None, Ellipsis, bool
masks, integer arrays/tensors/lists and their combinations, against NumPy;
views versus copies; repeated indices accumulating in backward; errors.
The index ops (index_select, gather, scatter, scatter_add, take_along_dim,
masked_fill, nonzero) against NumPy closed forms, their gradients against
np.add.at references, errors, and hypothesis properties.

Finite-difference gradient checks are the entries of ``_cases_index.py``.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# -- index ops against NumPy ---------------------------------------------------------------------

def _ix(values, dtype=np.int64):
    return oxmera.tensor(np.array(values, dtype=dtype))


def _gather_reference(a, dim, index):
    # out[i][j][k] = a[i][index[i][j][k]][k] (dim=1), written out with loops
    out = np.empty(index.shape, a.dtype)
    for pos in np.ndindex(*index.shape):
        source = list(pos)
        source[dim] = index[pos]
        out[pos] = a[tuple(source)]
    return out


def _scatter_reference(a, dim, index, src, add):
    out = a.copy()
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        value = src[pos] if isinstance(src, np.ndarray) else src
        if add:
            out[tuple(target)] += value
        else:
            out[tuple(target)] = value
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=str)
@pytest.mark.parametrize("index_dtype", [np.int64, np.int32], ids=str)
def test_index_select_matches_numpy_take(dtype, index_dtype):
    a = (A % 3).astype(dtype)
    for dim in (0, 1, 2, -1):
        index = np.array([1, 0, 1, 1], index_dtype) % a.shape[dim]
        for x in (oxmera.tensor(a), oxmera.from_numpy(a.transpose(2, 1, 0).copy().T)):
            out = x.index_select(dim, oxmera.tensor(index))
            assert out.dtype == dtype
            np.testing.assert_array_equal(out.numpy(), np.take(a, index, axis=dim))
    # a 0-d index keeps the dimension (size 1), as in PyTorch
    assert oxmera.tensor(a).index_select(1, _ix(2)).shape == (2, 1, 4)
    assert oxmera.index_select(oxmera.tensor(5.0), 0, _ix([0])).shape == ()


@pytest.mark.parametrize("dim", [0, 1, 2, -2])
def test_gather_matches_a_loop(dim):
    rng = np.random.default_rng(0)
    shape = [2, 2, 3]
    shape[dim] = 5
    index = rng.integers(0, A.shape[dim], shape)
    index = index[tuple(slice(0, min(n, A.shape[k]) if k != dim % 3 else None)
                        for k, n in enumerate(shape))]
    for dtype in (np.float64, np.int64):
        a = A.astype(dtype)
        out = oxmera.tensor(a).gather(dim, oxmera.tensor(index))
        np.testing.assert_array_equal(out.numpy(), _gather_reference(a, dim % 3, index))
        assert out.dtype == dtype and out.shape == index.shape


@pytest.mark.parametrize("add", [False, True], ids=["scatter", "scatter_add"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_matches_a_loop(add, dim):
    rng = np.random.default_rng(1)
    index = np.stack([rng.permutation(A.shape[dim % 3])[:2] for _ in range(6)])
    index = np.moveaxis(index.reshape(2, 3, 2), -1, dim % 3)
    index = index[tuple(slice(0, 2) for _ in range(3))]
    if add:
        index[0, 0, 0] = index[1, 1, 1] = index.flat[-1]     # repeats add up
    src = rng.standard_normal((3, 3, 3))
    x = oxmera.from_numpy(A.T.copy().T)                       # non-contiguous input
    op = oxmera.scatter_add if add else oxmera.scatter
    out = op(x, dim, oxmera.tensor(index), oxmera.tensor(src))
    np.testing.assert_allclose(out.numpy(), _scatter_reference(A, dim % 3, index,
                                                               src[:2, :2, :2], add))
    assert out.shape == A.shape and out.numpy().flags.c_contiguous
    np.testing.assert_array_equal(x.numpy(), A)                # out of place


def test_scatter_with_a_value_casts_it_to_the_input_dtype():
    x = oxmera.zeros(2, 3, dtype=I64)
    out = x.scatter(1, _ix([[0], [2]]), 2.7)
    np.testing.assert_array_equal(out.numpy(), [[2, 0, 0], [0, 0, 2]])
    assert out.dtype == I64
    out = oxmera.scatter(oxmera.zeros(3), 0, _ix([1]), value=5)
    np.testing.assert_array_equal(out.numpy(), [0.0, 5.0, 0.0])
    assert out.dtype == F32


def test_take_along_dim_matches_numpy():
    a = np.random.default_rng(2).standard_normal((3, 4))
    order = np.argsort(a, axis=1)
    x = oxmera.tensor(a)
    np.testing.assert_array_equal(oxmera.take_along_dim(x, oxmera.tensor(order), 1).numpy(),
                                  np.take_along_axis(a, order, 1))
    np.testing.assert_array_equal(x.take_along_dim(_ix([11, 0])).numpy(), a.reshape(-1)[[11, 0]])
    # the other dims broadcast, both ways
    b = np.arange(6.0).reshape(2, 1, 3)
    index = np.array([[[0], [2]]])                      # (1, 2, 1)
    got = oxmera.take_along_dim(oxmera.tensor(b), oxmera.tensor(index), dim=2)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(
        np.broadcast_to(b, (2, 2, 3)), np.broadcast_to(index, (2, 2, 1)), 2))


def test_masked_fill():
    x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    mask = oxmera.tensor([True, False])
    np.testing.assert_array_equal(x.masked_fill(mask, -1.0).numpy(), [[-1.0, 2.0], [-1.0, 4.0]])
    np.testing.assert_array_equal(oxmera.masked_fill(x, mask, oxmera.tensor(7.0, dtype=F64))
                                  .numpy(), [[7.0, 2.0], [7.0, 4.0]])
    assert x.masked_fill(mask, oxmera.tensor(7.0, dtype=F64)).dtype == F32   # input's dtype
    ints = oxmera.tensor([1, 2, 3])
    out = ints.masked_fill(oxmera.tensor([False, True, True]), 2.7)
    assert out.dtype == I64 and out.tolist() == [1, 2, 2]
    # the mask may broadcast the input, as PyTorch's out-of-place masked_fill does
    wide = oxmera.tensor([1.0, 2.0]).masked_fill(oxmera.tensor([[True], [False]]), 0.0)
    np.testing.assert_array_equal(wide.numpy(), [[0.0, 0.0], [1.0, 2.0]])


def test_masked_fill_gradients():
    x = leaf([1.0, 2.0, 3.0])
    v = leaf(5.0)
    mask = oxmera.tensor([True, False, True])
    (x.masked_fill(mask, v) * oxmera.tensor([1.0, 2.0, 3.0], dtype=F64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 0.0])
    assert v.grad.item() == 4.0


def test_nonzero():
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    out = oxmera.tensor(a).nonzero()
    assert out.dtype == I64 and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), np.argwhere(a))
    parts = oxmera.nonzero(oxmera.tensor(a), as_tuple=True)
    assert isinstance(parts, tuple) and len(parts) == 2
    for p, e in zip(parts, np.nonzero(a)):
        assert p.dtype == I64
        np.testing.assert_array_equal(p.numpy(), e)
    assert oxmera.tensor(3.0).nonzero().shape == (1, 0)
    assert oxmera.tensor(0.0).nonzero().shape == (0, 0)
    assert [p.tolist() for p in oxmera.tensor(3.0).nonzero(as_tuple=True)] == [[0]]
    assert oxmera.zeros(0, 3).nonzero().shape == (0, 2)
    x = leaf([0.0, 1.0])
    assert x.nonzero().grad_fn is None


# -- gradients: repeated indices accumulate ------------------------------------------------------

def test_index_select_and_gather_accumulate_repeated_indices():
    x = leaf(np.zeros((3, 2)))
    x.index_select(0, _ix([2, 2, 0, 2])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]])
    y = leaf(np.zeros((2, 3)))
    y.gather(1, _ix([[1, 1, 1, 1], [0, 2, 2, 0]])).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0.0, 4.0, 0.0], [2.0, 0.0, 2.0]])


def test_scatter_gradients():
    x = leaf(np.ones((2, 3)))
    src = leaf(np.ones((2, 2)))
    index = _ix([[2, 0], [1, 2]])
    weights = oxmera.from_numpy(_arange_f(2, 3))
    (x.scatter(1, index, src) * weights).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 1.0, 0.0], [3.0, 0.0, 0.0]])
    np.testing.assert_array_equal(src.grad.numpy(), [[2.0, 0.0], [4.0, 5.0]])


def _arange_f(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)


def test_gather_and_scatter_add_are_differentiable_to_second_order():
    x = leaf(_arange_f(2, 3))
    index = _ix([[0, 0], [2, 1]])
    (g,) = oxmera.autograd.grad((x.gather(1, index) ** 2).sum(), [x], create_graph=True)
    np.testing.assert_array_equal(g.detach().numpy(), [[0.0, 0.0, 0.0], [0.0, 8.0, 10.0]])
    g.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[4.0, 0.0, 0.0], [0.0, 2.0, 2.0]])


# -- errors (SPEC §6) ---------------------------------------------------------------------------

def _error_inputs():
    x = leaf(_arange_f(3, 4))
    x.grad = oxmera.ones(3, 4, dtype=F64)
    return x, x * 1.0


OP_ERRORS = [
    ("index_select-float", lambda x: x.index_select(0, oxmera.tensor([0.0])), IndexError,
     "index_select.*int64 or int32.*float32"),
    ("index_select-int16", lambda x: x.index_select(0, _ix([0], np.int16)), IndexError,
     "index_select.*int16"),
    ("index_select-2d", lambda x: x.index_select(0, _ix([[0]])), IndexError,
     r"index_select.*vector.*\(1, 1\)"),
    ("index_select-range", lambda x: x.index_select(1, _ix([0, 4])), IndexError,
     "index_select.*index 4.*dimension 1.*size 4"),
    ("index_select-negative", lambda x: x.index_select(0, _ix([-1])), IndexError,
     "index_select.*index -1.*size 3"),
    ("index_select-dim", lambda x: x.index_select(2, _ix([0])), IndexError,
     "index_select.*range"),
    ("gather-bool", lambda x: x.gather(0, oxmera.tensor([[True]])), IndexError, "gather.*bool"),
    ("gather-rank", lambda x: x.gather(0, _ix([0])), RuntimeError,
     r"gather.*dimensions.*\(3, 4\).*\(1,\)"),
    ("gather-larger", lambda x: x.gather(0, _ix(np.zeros((1, 5)))), RuntimeError,
     r"gather.*\(1, 5\).*\(3, 4\)"),
    ("gather-range", lambda x: x.gather(1, _ix([[0, 9]])), IndexError,
     "gather.*index 9.*dimension 1.*size 4"),
    ("scatter-dtype", lambda x: x.scatter(0, _ix([[0]]), oxmera.ones(1, 1)), TypeError,
     "scatter.*float32.*float64"),
    ("scatter-src-smaller", lambda x: x.scatter(0, _ix([[0, 1]]), oxmera.ones(1, 1, dtype=F64)),
     RuntimeError, "scatter.*src"),
    ("scatter-range", lambda x: x.scatter(1, _ix([[4]]), 1.0), IndexError,
     "scatter.*index 4.*size 4"),
    ("scatter-src-and-value", lambda x: oxmera.scatter(x, 0, _ix([[0]]), 1.0, value=2.0),
     TypeError, "scatter.*exactly one"),
    ("scatter-neither", lambda x: x.scatter(0, _ix([[0]])), TypeError, "scatter.*exactly one"),
    ("scatter_add-number", lambda x: x.scatter_add(0, _ix([[0]]), 1.0), TypeError,
     "scatter_add.*tensor"),
    ("scatter_add-rank", lambda x: x.scatter_add(0, _ix([[0]]), oxmera.ones(1, dtype=F64)),
     RuntimeError, "scatter_add.*dimensions"),
    ("take_along_dim-rank", lambda x: oxmera.take_along_dim(x, _ix([0]), 1), RuntimeError,
     "take_along_dim.*same number of dimensions"),
    ("take_along_dim-broadcast", lambda x: x.take_along_dim(_ix(np.zeros((2, 1))), 1),
     RuntimeError, "take_along_dim.*broadcast"),
    ("take_along_dim-range", lambda x: x.take_along_dim(_ix([12])), IndexError,
     "gather.*index 12.*size 12"),
    ("take_along_dim-float", lambda x: x.take_along_dim(oxmera.tensor([0.0])), IndexError,
     "take_along_dim.*indices.*float32"),
    ("masked_fill-int-mask", lambda x: x.masked_fill(_ix([1, 0, 0, 1]), 0.0), TypeError,
     "masked_fill.*bool.*int64"),
    ("masked_fill-value-shape", lambda x: x.masked_fill(x > 0, oxmera.ones(2)), RuntimeError,
     r"masked_fill.*0-d.*\(2,\)"),
    ("masked_fill-value-type", lambda x: x.masked_fill(x > 0, [1.0]), TypeError,
     "masked_fill.*list"),
    ("masked_fill-broadcast", lambda x: x.masked_fill(oxmera.tensor([True, False]), 0.0),
     RuntimeError, r"masked_fill.*\(2,\).*\(3, 4\)"),
]


@pytest.mark.parametrize("call, error, pattern", [e[1:] for e in OP_ERRORS],
                         ids=[e[0] for e in OP_ERRORS])
def test_index_op_errors_change_nothing(call, error, pattern):
    x, y = _error_inputs()
    for t in (x, y):
        with unchanged(x, y):
            with pytest.raises(error, match=pattern):
                call(t)


def test_scatter_errors_leave_src_unchanged():
    x = leaf(np.zeros((2, 2)))
    src = leaf(np.ones((2, 2)))
    src.grad = oxmera.zeros(2, 2, dtype=F64)
    with unchanged(x, src):
        with pytest.raises(IndexError, match="scatter.*index 2"):
            x.scatter(0, _ix([[0, 2]]), src)
    with unchanged(x, src):
        with pytest.raises(IndexError, match="scatter_add.*index -1"):
            x.scatter_add(1, _ix([[0, -1]]), src)


# -- properties over random shapes ---------------------------------------------------------------

@st.composite
def _gather_problem(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    dim = draw(st.integers(0, ndim - 1))
    index_shape = tuple(draw(st.integers(0, 5)) if k == dim else draw(st.integers(0, n))
                        for k, n in enumerate(shape))
    seed = draw(st.integers(0, 2 ** 16))
    return shape, dim, index_shape, seed


@settings(max_examples=50, deadline=None)
@given(_gather_problem())
def test_gather_and_scatter_add_are_adjoint(problem):
    # <gather(x, index), g> == <x, scatter_add(0, index, g)>: the gradient of
    # gather is scatter_add, and repeated indices accumulate.
    shape, dim, index_shape, seed = problem
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    index = rng.integers(0, shape[dim], index_shape)
    g = rng.standard_normal(index_shape)
    gathered = oxmera.tensor(a).gather(dim, oxmera.tensor(index)).numpy()
    np.testing.assert_array_equal(gathered, _gather_reference(a, dim, index))
    scattered = oxmera.zeros(*shape, dtype=F64).scatter_add(dim, oxmera.tensor(index),
                                                            oxmera.tensor(g)).numpy()
    np.testing.assert_allclose(scattered, _scatter_reference(np.zeros(shape), dim, index, g,
                                                             add=True), atol=1e-12)
    np.testing.assert_allclose((gathered * g).sum(), (a * scattered).sum(), atol=1e-10)
    x = leaf(a)
    (x.gather(dim, oxmera.tensor(index)) * oxmera.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), scattered, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple), data=st.data())
def test_index_select_gradient_matches_add_at(shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    n = data.draw(st.integers(0, 6))
    index = np.array(data.draw(st.lists(st.integers(0, max(shape[dim] - 1, 0)), min_size=n,
                                        max_size=n)) if shape[dim] else [], np.int64)
    rng = np.random.default_rng(n)
    a = rng.standard_normal(shape)
    x = leaf(a)
    out = x.index_select(dim, oxmera.tensor(index))
    np.testing.assert_array_equal(out.detach().numpy(), np.take(a, index, axis=dim))
    weights = rng.standard_normal(out.shape)
    (out * oxmera.tensor(weights)).sum().backward()
    expected = np.zeros_like(a)
    np.add.at(expected, (slice(None),) * dim + (index,), weights)
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-12)
