"""matmul, mm, bmm, dot, outer, tensordot: every rank combination against
NumPy, dtypes, gradient shapes, errors. (Finite-difference checks to second
order are the entries of ``_cases_linalg.py``.) einsum is tested in
``test_linalg_einsum.py``, inv/det/solve/norms in ``test_linalg_namespace.py``.
"""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck

from ._cases import Leaf
from ._cases_linalg import MATMUL_SHAPES
from ._helpers import leaf, unchanged

F32, F64, I64 = oxmera.float32, oxmera.float64, oxmera.int64


def _ids(shapes):
    return [f"{a}@{b}" for a, b in shapes]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=_ids(MATMUL_SHAPES))
def test_matmul_matches_numpy(shapes):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    expected = np.matmul(a, b)
    for result in (oxmera.matmul(oxmera.tensor(a), oxmera.tensor(b)),
                   oxmera.tensor(a) @ oxmera.tensor(b), oxmera.tensor(a).matmul(oxmera.tensor(b)),
                   a @ oxmera.tensor(b), oxmera.tensor(a) @ b):
        assert isinstance(result, oxmera.Tensor)
        assert result.dtype == F64 and result.shape == expected.shape
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=_ids(MATMUL_SHAPES))
def test_matmul_gradients_have_operand_shapes(shapes):
    rng = np.random.default_rng(1)
    a, b = leaf(rng.standard_normal(shapes[0])), leaf(rng.standard_normal(shapes[1]))
    out = a @ b
    weights = oxmera.from_numpy(rng.standard_normal(out.shape))
    (out * weights).sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape
    # d(sum(W * (A @ B)))/dA = W @ B^T and d/dB = A^T @ W, with vectors made
    # a row (left) or a column (right) and broadcast batch dims summed.
    a2 = a.detach().numpy() if a.ndim > 1 else a.detach().numpy()[None, :]
    b2 = b.detach().numpy() if b.ndim > 1 else b.detach().numpy()[:, None]
    w = weights.numpy()
    if b.ndim == 1:
        w = np.expand_dims(w, -1)
    if a.ndim == 1:
        w = np.expand_dims(w, -2)
    grad_a = np.matmul(w, np.swapaxes(b2, -1, -2))
    grad_b = np.matmul(np.swapaxes(a2, -1, -2), w)
    grad_a = _sum_to(grad_a, a2.shape).reshape(a.shape)
    grad_b = _sum_to(grad_b, b2.shape).reshape(b.shape)
    np.testing.assert_allclose(a.grad.numpy(), grad_a, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), grad_b, rtol=1e-10, atol=1e-12)


def _sum_to(array, shape):
    lead = array.ndim - len(shape)
    array = array.sum(axis=tuple(range(lead))) if lead else array
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and array.shape[i] != 1)
    return array.sum(axis=axes, keepdims=True) if axes else array


@pytest.mark.parametrize("left, right, dtype", [
    (F32, F32, F32), (F32, F64, F64), (I64, I64, I64), (I64, F32, F32), (F64, I64, F64)],
    ids=str)
def test_matmul_dtypes(left, right, dtype):
    a = np.arange(6).reshape(2, 3).astype(left)
    b = np.arange(3).astype(right)
    result = oxmera.tensor(a) @ oxmera.tensor(b)
    assert result.dtype == dtype
    np.testing.assert_allclose(result.numpy(), a.astype(np.float64) @ b.astype(np.float64))


def test_matmul_with_one_operand_not_requiring_grad():
    a, b = leaf(np.ones((2, 3))), oxmera.ones(3, 4, dtype=F64)
    (a @ b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 4.0))
    assert b.grad is None


def test_matmul_of_a_float32_leaf_and_float64_constant():
    a = oxmera.tensor([[1.0, 2.0]], requires_grad=True)
    out = a @ oxmera.tensor([[3.0], [4.0]], dtype=F64)
    assert out.dtype == F64
    out.sum().backward()
    assert a.grad.dtype == F32
    np.testing.assert_array_equal(a.grad.numpy(), [[3.0, 4.0]])


def test_matmul_non_contiguous_gradcheck():
    inputs = (Leaf((3, 2), layout="transposed").build(np.random.default_rng(0)),
              Leaf((2, 4), layout="strided").build(np.random.default_rng(1)))
    assert not inputs[0].numpy(force=True).flags.c_contiguous
    assert gradcheck(oxmera.matmul, inputs)
    assert gradgradcheck(oxmera.matmul, inputs)


# -- errors (SPEC §6) ---------------------------------------------------------------------------

@pytest.mark.parametrize("shapes", [((2, 3), (4, 2)), ((3,), (4,)), ((2, 3), (2,)),
                                    ((5,), (2, 4, 3)), ((2, 2, 3), (3, 3, 2))], ids=str)
def test_matmul_shape_mismatch_names_both_shapes(shapes):
    a = leaf(np.ones(shapes[0]))
    a.grad = oxmera.ones(*shapes[0], dtype=F64)
    b = leaf(np.ones(shapes[1])) * 1.0        # a non-leaf operand
    with unchanged(a, b):
        with pytest.raises(oxmera.OpError) as info:
            a @ b
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    assert "matmul" in str(info.value)
    assert str(shapes[0]) in str(info.value) and str(shapes[1]) in str(info.value)


@pytest.mark.parametrize("shapes", [((), (3,)), ((3,), ()), ((), ())], ids=str)
def test_matmul_of_0d_is_an_error(shapes):
    with pytest.raises(RuntimeError, match="matmul.*at least 1 dimension"):
        oxmera.matmul(oxmera.ones(*shapes[0]), oxmera.ones(*shapes[1]))


# -- mm, bmm, dot, outer ---------------------------------------------------------------------

def test_mm_bmm_dot_outer_match_numpy():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    for result in (oxmera.mm(oxmera.tensor(a), oxmera.tensor(b)),
                   oxmera.tensor(a).mm(oxmera.tensor(b))):
        np.testing.assert_allclose(result.numpy(), a @ b, rtol=1e-12)
    a, b = rng.standard_normal((5, 2, 3)), rng.standard_normal((5, 3, 4))
    for result in (oxmera.bmm(oxmera.tensor(a), oxmera.tensor(b)),
                   oxmera.tensor(a).bmm(oxmera.tensor(b))):
        np.testing.assert_allclose(result.numpy(), a @ b, rtol=1e-12)
    u, v = rng.standard_normal(4), rng.standard_normal(4)
    for result in (oxmera.dot(oxmera.tensor(u), oxmera.tensor(v)),
                   oxmera.tensor(u).dot(oxmera.tensor(v))):
        assert result.shape == ()
        np.testing.assert_allclose(result.item(), u @ v, rtol=1e-12)
    w = rng.standard_normal(3)
    for result in (oxmera.outer(oxmera.tensor(u), oxmera.tensor(w)),
                   oxmera.tensor(u).outer(oxmera.tensor(w))):
        np.testing.assert_allclose(result.numpy(), np.outer(u, w), rtol=1e-12)


def test_mm_family_of_empty_operands():
    assert oxmera.mm(oxmera.zeros(0, 3), oxmera.zeros(3, 2)).shape == (0, 2)
    np.testing.assert_array_equal(oxmera.mm(oxmera.zeros(2, 0), oxmera.zeros(0, 3)).numpy(),
                                  np.zeros((2, 3)))
    assert oxmera.dot(oxmera.zeros(0), oxmera.zeros(0)).item() == 0.0
    assert oxmera.outer(oxmera.zeros(0), oxmera.zeros(3)).shape == (0, 3)
    assert oxmera.bmm(oxmera.zeros(0, 2, 3), oxmera.zeros(0, 3, 1)).shape == (0, 2, 1)


def test_mm_family_dtypes():
    a = oxmera.tensor([[1, 2], [3, 4]])
    assert oxmera.mm(a, a).dtype == I64
    assert oxmera.outer(oxmera.tensor([1, 2]), oxmera.tensor([1.5])).dtype == F32
    assert oxmera.dot(oxmera.tensor([1.0, 2.0]), oxmera.tensor([1.0, 2.0], dtype=F64)).dtype == F64


def test_outer_gradient():
    u, v = leaf([1.0, 2.0]), leaf([3.0, 4.0, 5.0])
    oxmera.outer(u, v).sum().backward()
    np.testing.assert_array_equal(u.grad.numpy(), [12.0, 12.0])
    np.testing.assert_array_equal(v.grad.numpy(), [3.0, 3.0, 3.0])


@pytest.mark.parametrize("call, shapes, message", [
    (oxmera.mm, ((2, 3), (4, 2)), "cannot be multiplied"),
    (oxmera.mm, ((2, 3, 4), (4, 2)), "2-D"),
    (oxmera.mm, ((3,), (3, 2)), "2-D"),
    (oxmera.bmm, ((2, 3), (3, 2)), "3-D"),
    (oxmera.bmm, ((2, 2, 3), (3, 3, 2)), "batch sizes"),
    (oxmera.bmm, ((2, 2, 3), (2, 4, 2)), "cannot be multiplied"),
    (oxmera.dot, ((3,), (4,)), "different lengths"),
    (oxmera.dot, ((1, 3), (3,)), "1-D"),
    (oxmera.dot, ((), ()), "1-D"),
    (oxmera.outer, ((2, 1), (3,)), "1-D"),
    (oxmera.matmul, ((2, 3), (4, 2)), "cannot be multiplied"),
    (oxmera.matmul, ((), (3,)), "at least 1 dimension"),
    (oxmera.matmul, ((2, 2, 3), (3, 3, 2)), "batch dimensions.*do not broadcast"),
], ids=["mm-inner", "mm-3d", "mm-1d", "bmm-2d", "bmm-batch", "bmm-inner", "dot-lengths",
        "dot-2d", "dot-0d", "outer-2d", "matmul-inner", "matmul-0d", "matmul-batch"])
def test_mm_family_errors_name_the_op_and_both_shapes(call, shapes, message):
    a = leaf(np.ones(shapes[0]))
    a.grad = oxmera.ones(*shapes[0], dtype=F64)
    b = leaf(np.ones(shapes[1])) * 1.0
    with unchanged(a, b):
        with pytest.raises(RuntimeError, match=message) as info:
            call(a, b)
    assert isinstance(info.value, ValueError)
    text = str(info.value)
    assert text.startswith(call.__name__ + "()")
    assert str(shapes[0]) in text and str(shapes[1]) in text


# -- tensordot -------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes, dims", [
    (((2, 3, 4), (3, 4, 5)), 2),
    (((2, 3, 4), (4, 5)), 1),
    (((2, 3), (4,)), 0),
    (((2, 3, 4), (4, 3, 2)), ([1, 2], [1, 0])),
    (((2, 3), (3, 2)), ([0], [1])),
    (((2, 3), (3, 2)), (1, 0)),
    (((), (3,)), 0),
    (((0, 3), (3, 2)), 1),
    (((2, 0), (0, 3)), 1),
], ids=str)
def test_tensordot_matches_numpy(shapes, dims):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    axes = dims if isinstance(dims, int) else tuple(np.atleast_1d(d).tolist() for d in dims)
    expected = np.tensordot(a, b, axes)
    result = oxmera.tensordot(oxmera.tensor(a), oxmera.tensor(b), dims)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_tensordot_gradients_have_operand_shapes():
    a, b = leaf(np.ones((2, 3, 4))), leaf(np.ones((4, 3, 5)))
    oxmera.tensordot(a, b, ([1, 2], [1, 0])).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3, 4), 5.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.full((4, 3, 5), 2.0))


@pytest.mark.parametrize("dims, message", [
    (3, "cannot contract 3 dims"),
    (-1, "cannot contract -1"),
    (([0], [0, 1]), "same number of dims"),
    (([0], [0]), "same size"),
    (([0, 0], [0, 1]), "contracted twice"),
    (([0, 1, 2],), "pair of dim lists"),
], ids=str)
def test_tensordot_errors_name_the_shapes(dims, message):
    a, b = leaf(np.ones((2, 3))), leaf(np.ones((3, 3)))
    with unchanged(a, b):
        with pytest.raises(RuntimeError, match=message) as info:
            oxmera.tensordot(a, b, dims)
    assert "tensordot" in str(info.value)
    if "pair" not in message:
        assert "(2, 3)" in str(info.value) or "[" in str(info.value)


def test_tensordot_rejects_an_out_of_range_dim():
    with pytest.raises(IndexError, match="tensordot.*range"):
        oxmera.tensordot(oxmera.ones(2, 3), oxmera.ones(3, 2), ([2], [0]))


# -- hypothesis: batched matmul broadcasting ---------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, min_side=0,
                                            max_side=3),
       n=st.integers(0, 3), k=st.integers(0, 3), m=st.integers(0, 3),
       seed=st.integers(0, 2 ** 32 - 1))
def test_batched_matmul_gradients_have_operand_shapes(shapes, n, k, m, seed):
    rng = np.random.default_rng(seed)
    a_shape = shapes.input_shapes[0] + (n, k)
    b_shape = shapes.input_shapes[1] + (k, m)
    a, b = leaf(rng.standard_normal(a_shape)), leaf(rng.standard_normal(b_shape))
    out = a @ b
    expected = np.matmul(a.detach().numpy(), b.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    weights = rng.standard_normal(out.shape)
    (out * oxmera.from_numpy(weights)).sum().backward()
    assert a.grad.shape == a_shape and b.grad.shape == b_shape
    grad_a = _sum_to(np.matmul(weights, np.swapaxes(b.detach().numpy(), -1, -2)), a_shape)
    np.testing.assert_allclose(a.grad.numpy(), grad_a.reshape(a_shape), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, shapes, words", [
    ("matmul_nt", ((2, 3), (4, 2)), "(2, 3) and (4, 2) cannot be multiplied"),
    ("matmul_tn", ((2, 3), (4, 2)), "(2, 3) and (4, 2) cannot be multiplied"),
    ("matmul_nt", ((3,), (4, 3)), "at least 2 dimensions"),
    ("matmul_tn", ((3, 2), (3,)), "at least 2 dimensions"),
    ("matmul_nt", ((2, 3, 4), (5, 6, 4)), "batch dimensions do not broadcast"),
])
def test_transposed_products_refuse_shapes_that_do_not_fit(fn, shapes, words):
    # matmul's VJP calls these with fitting shapes; called directly they say what is wrong
    from oxmera.ops import linalg
    a, b = (oxmera.ones(*s, requires_grad=True) for s in shapes)
    with pytest.raises(oxmera.OpError, match=re.escape(words)):
        getattr(linalg, fn)(a, b)
    assert a.grad is None and b.grad is None and a.grad_fn is None
