"""matmul: every rank combination against ``np.matmul``, dtypes, gradient
shapes, errors. (Finite-difference checks of all of these shapes, to second
order, are the ``matmul`` entries of ``_cases.py``.)
"""
import numpy as np
import pytest

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
