"""``oxmera.linalg``: inv, det, solve, norm, vector_norm, matrix_norm, svdvals —
forward against NumPy (batched, broadcasting, every ``ord``), gradients
against closed forms (det's at singular matrices: the cofactor matrix),
dtypes and errors (singular matrices, shapes).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import oxmera
from oxmera.autograd import gradcheck

from ._helpers import leaf, unchanged

F32, F64 = oxmera.float32, oxmera.float64
INF = math.inf


def _matrices(shape, seed=0):
    """Random, well-conditioned square matrices."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 2 * shape[-1] * np.eye(shape[-1])


def test_the_namespace():
    for name in ("norm", "vector_norm", "matrix_norm", "inv", "det", "solve", "svdvals"):
        assert callable(getattr(oxmera.linalg, name)) and name in oxmera.linalg.__all__
    for name in ("inv", "solve", "vector_norm", "matrix_norm", "svdvals", "eigh", "lstsq"):
        assert name not in oxmera.__all__       # linalg only, as in PyTorch
    # PyTorch's top-level names: the same function, or (svd, qr, cholesky)
    # the legacy one with its own signature.
    assert oxmera.det is oxmera.linalg.det and oxmera.slogdet is oxmera.linalg.slogdet
    assert oxmera.svd is not oxmera.linalg.svd and oxmera.qr is not oxmera.linalg.qr


# -- inv ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 3, 3), (2, 1, 2, 2), (0, 2, 2), (0, 0)],
                         ids=str)
def test_inv_matches_numpy(shape):
    values = _matrices(shape)
    result = oxmera.linalg.inv(oxmera.tensor(values))
    assert result.dtype == F64 and result.shape == shape
    np.testing.assert_allclose(result.numpy(), np.linalg.inv(values), rtol=1e-12)
    np.testing.assert_allclose(oxmera.tensor(values).inverse().numpy(), np.linalg.inv(values))


def test_inv_dtypes():
    assert oxmera.linalg.inv(oxmera.eye(2)).dtype == F32
    result = oxmera.linalg.inv(oxmera.tensor([[2, 0], [0, 4]]))
    assert result.dtype == F32
    np.testing.assert_array_equal(result.numpy(), [[0.5, 0.0], [0.0, 0.25]])


def test_inv_gradient_closed_form():
    values = _matrices((3, 3))
    weights = np.arange(9.0).reshape(3, 3)
    x = leaf(values)
    (oxmera.linalg.inv(x) * oxmera.tensor(weights)).sum().backward()
    inverse = np.linalg.inv(values)
    np.testing.assert_allclose(x.grad.numpy(), -inverse.T @ weights @ inverse.T, rtol=1e-10)


@pytest.mark.parametrize("shape", [(2, 3), (3,), (2, 2, 3)], ids=str)
def test_inv_of_a_non_square_input_is_an_error(shape):
    x = leaf(np.ones(shape))
    with unchanged(x):
        with pytest.raises(RuntimeError, match=rf"linalg.inv.*square.*{shape}".replace(
                "(", r"\(").replace(")", r"\)")):
            oxmera.linalg.inv(x)


def test_inv_of_a_singular_matrix_is_an_error():
    x = leaf([[1.0, 2.0], [2.0, 4.0]])
    x.grad = oxmera.zeros(2, 2, dtype=F64)
    with unchanged(x):
        with pytest.raises(RuntimeError, match=r"linalg.inv.*\(2, 2\).*singular") as info:
            oxmera.linalg.inv(x)
    assert isinstance(info.value, ValueError)


# -- det ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (5, 5), (2, 3, 3), (0, 2, 2), (0, 0)],
                         ids=str)
def test_det_matches_numpy(shape):
    values = np.random.default_rng(1).standard_normal(shape)
    result = oxmera.linalg.det(oxmera.tensor(values))
    assert result.dtype == F64 and result.shape == shape[:-2]
    np.testing.assert_allclose(result.numpy(), np.linalg.det(values), rtol=1e-12)
    assert oxmera.linalg.det(oxmera.tensor(values, dtype=F32)).dtype == F32


def test_det_gradient_is_det_times_inverse_transpose():
    values = _matrices((2, 3, 3))
    x = leaf(values)
    oxmera.linalg.det(x).sum().backward()
    expected = np.linalg.det(values)[:, None, None] * np.swapaxes(np.linalg.inv(values), -1, -2)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10)


def _cofactors(values):
    n = values.shape[-1]
    out = np.empty_like(values)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(values, i, axis=-2), j, axis=-1)
            out[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


@pytest.mark.parametrize("values", [
    [[1.0, 2.0], [2.0, 4.0]],
    [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [1.5, 1.0, 5.0]],
    [[1.0, 2.0, -1.0], [2.0, 4.0, -2.0], [0.5, 1.0, -0.5]],
    np.vstack([np.eye(5)[:4] + 0.1, np.eye(5)[0] + 0.1]),
    [[0.0, 0.0], [0.0, 0.0]],
], ids=["2x2", "rank-2", "rank-1", "5x5-svd", "zero"])
def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix(values):
    values = np.array(values)
    x = leaf(values)
    result = oxmera.linalg.det(x)
    assert abs(result.item()) < 1e-12
    result.backward()
    assert np.isfinite(x.grad.numpy()).all()
    np.testing.assert_allclose(x.grad.numpy(), _cofactors(values), atol=1e-10)


def test_det_gradient_near_a_singular_matrix_keeps_its_digits():
    values = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-13]])
    x = leaf(values)
    oxmera.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), _cofactors(values), rtol=1e-9)


def test_det_of_a_non_square_input_is_an_error():
    with pytest.raises(RuntimeError, match=r"linalg.det.*square.*\(2, 3\)"):
        oxmera.linalg.det(oxmera.ones(2, 3))


def test_det_method():
    assert oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]).det().item() == pytest.approx(-2.0)


# -- solve -------------------------------------------------------------------------------------

@pytest.mark.parametrize("a_shape, b_shape", [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (2, 3, 4)),
    ((3, 3), (2, 3, 2)), ((2, 3, 3), (3, 1)), ((2, 3, 3), (3,)), ((2, 1, 3, 3), (4, 3, 2)),
    ((3, 3), (3, 0)), ((0, 2, 2), (0, 2)),
], ids=str)
def test_solve_matches_numpy(a_shape, b_shape):
    A = _matrices(a_shape)
    B = np.random.default_rng(2).standard_normal(b_shape)
    vector = len(b_shape) == 1 or (len(b_shape) == len(a_shape) - 1
                                   and b_shape == a_shape[:-1])
    expected = np.linalg.solve(A, B[..., None])[..., 0] if vector else np.linalg.solve(A, B)
    result = oxmera.linalg.solve(oxmera.tensor(A), oxmera.tensor(B))
    assert result.shape == expected.shape
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-10, atol=1e-12)


def test_solve_left_false():
    A, B = _matrices((3, 3)), np.random.default_rng(3).standard_normal((2, 3))
    result = oxmera.linalg.solve(oxmera.tensor(A), oxmera.tensor(B), left=False)
    np.testing.assert_allclose(result.numpy() @ A, B, atol=1e-12)
    b = B[0]
    result = oxmera.linalg.solve(oxmera.tensor(A), oxmera.tensor(b), left=False)
    np.testing.assert_allclose(result.numpy() @ A, b, atol=1e-12)


def test_solve_gradient_closed_form():
    A, B = _matrices((3, 3)), np.random.default_rng(4).standard_normal((3, 2))
    a, b = leaf(A), leaf(B)
    weights = np.arange(6.0).reshape(3, 2)
    (oxmera.linalg.solve(a, b) * oxmera.tensor(weights)).sum().backward()
    grad_b = np.linalg.solve(A.T, weights)
    np.testing.assert_allclose(b.grad.numpy(), grad_b, rtol=1e-10)
    np.testing.assert_allclose(a.grad.numpy(), -grad_b @ np.linalg.solve(A, B).T, rtol=1e-10)


def test_solve_dtypes():
    A = oxmera.tensor([[2.0, 0.0], [0.0, 4.0]])
    assert oxmera.linalg.solve(A, oxmera.tensor([1.0, 1.0])).dtype == F32
    assert oxmera.linalg.solve(A, oxmera.tensor([1.0, 1.0], dtype=F64)).dtype == F64
    assert oxmera.linalg.solve(oxmera.tensor([[2, 0], [0, 4]]), oxmera.tensor([2, 4])).dtype == F32


@pytest.mark.parametrize("a_shape, b_shape, message", [
    ((3, 3), (4,), "incompatible shapes"),
    ((3, 3), (4, 2), "incompatible shapes"),
    ((2, 3), (2,), "square"),
    ((2, 3, 3), (4, 3, 1), "batch dims.*broadcast"),
    ((3, 3), (), "incompatible shapes"),
], ids=str)
def test_solve_shape_errors_name_both_shapes(a_shape, b_shape, message):
    A, B = leaf(np.ones(a_shape)), leaf(np.ones(b_shape))
    with unchanged(A, B):
        with pytest.raises(RuntimeError, match=f"linalg.solve.*{message}") as info:
            oxmera.linalg.solve(A, B)
    text = str(info.value)
    assert str(a_shape) in text
    assert message == "square" or str(b_shape) in text


def test_solve_with_a_singular_matrix_is_an_error():
    A, B = leaf([[1.0, 2.0], [2.0, 4.0]]), leaf([1.0, 1.0])
    with unchanged(A, B):
        with pytest.raises(RuntimeError, match=r"linalg.solve.*\(2, 2\).*singular"):
            oxmera.linalg.solve(A, B)


@settings(max_examples=30, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, min_side=1,
                                            max_side=2),
       n=st.integers(1, 3), k=st.integers(1, 2), seed=st.integers(0, 2 ** 32 - 1))
def test_batched_solve_gradients_match_finite_differences(shapes, n, k, seed):
    rng = np.random.default_rng(seed)
    A = oxmera.from_numpy(rng.standard_normal(shapes.input_shapes[0] + (n, n))
                          + 2 * n * np.eye(n)).requires_grad_()
    B = oxmera.from_numpy(rng.standard_normal(shapes.input_shapes[1] + (n, k))).requires_grad_()
    X = oxmera.linalg.solve(A, B)
    # PyTorch's rule: B of A's shape minus the last dim is a batch of vectors.
    vector = B.ndim == A.ndim - 1 and B.shape == A.shape[:-1]
    product = (A.detach() @ X.detach().unsqueeze(-1)).squeeze(-1) if vector else A.detach() @ X
    np.testing.assert_allclose(product.detach().numpy(),
                               np.broadcast_to(B.detach().numpy(), X.shape), atol=1e-10)
    assert gradcheck(oxmera.linalg.solve, (A, B))


# -- norms -------------------------------------------------------------------------------------

@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, INF, -INF])
def test_linalg_norm_of_a_matrix_matches_numpy(ord):
    values = np.random.default_rng(5).standard_normal((3, 4))
    result = oxmera.linalg.norm(oxmera.tensor(values), ord)
    np.testing.assert_allclose(result.numpy(), np.linalg.norm(values, ord), rtol=1e-10)
    result = oxmera.linalg.norm(oxmera.tensor(values), ord, dim=(1, 0), keepdim=True)
    np.testing.assert_allclose(result.numpy(), np.linalg.norm(values.T, ord, keepdims=True),
                               rtol=1e-10)


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0.5, 0, INF, -INF, -1])
def test_linalg_norm_of_vectors_matches_numpy(ord):
    values = np.random.default_rng(6).standard_normal((3, 4))
    result = oxmera.linalg.norm(oxmera.tensor(values), ord, dim=1)
    np.testing.assert_allclose(result.numpy(), np.linalg.norm(values, ord, axis=1), rtol=1e-10)
    result = oxmera.linalg.norm(oxmera.tensor(values[0]), ord)
    np.testing.assert_allclose(result.numpy(), np.linalg.norm(values[0], ord), rtol=1e-10)
    result = oxmera.linalg.vector_norm(oxmera.tensor(values), 2 if ord is None else ord)
    np.testing.assert_allclose(result.numpy(), np.linalg.norm(values.ravel(), ord), rtol=1e-10)


def test_linalg_norm_without_ord_flattens_any_rank():
    values = np.random.default_rng(7).standard_normal((2, 3, 4))
    np.testing.assert_allclose(oxmera.linalg.norm(oxmera.tensor(values)).numpy(),
                               np.sqrt((values ** 2).sum()))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, INF, -INF])
def test_batched_matrix_norms(ord):
    values = np.random.default_rng(8).standard_normal((2, 3, 4))
    result = oxmera.linalg.matrix_norm(oxmera.tensor(values), ord)
    expected = [np.linalg.norm(m, ord) for m in values]
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-10)
    assert oxmera.linalg.matrix_norm(oxmera.tensor(values), ord, keepdim=True).shape == (2, 1, 1)


def test_svdvals_matches_numpy():
    values = np.random.default_rng(9).standard_normal((2, 3, 5))
    np.testing.assert_allclose(oxmera.linalg.svdvals(oxmera.tensor(values)).numpy(),
                               np.linalg.svd(values, compute_uv=False), rtol=1e-10)


def test_nuclear_norm_gradient_is_u_vh():
    values = np.random.default_rng(10).standard_normal((3, 3))
    x = leaf(values)
    oxmera.linalg.matrix_norm(x, "nuc").backward()
    U, _, Vh = np.linalg.svd(values)
    np.testing.assert_allclose(x.grad.numpy(), U @ Vh, rtol=1e-10)


def test_norm_dtype_argument():
    x = oxmera.tensor([[3.0, 4.0]])
    assert oxmera.linalg.norm(x, dtype=F64).dtype == F64
    assert oxmera.linalg.matrix_norm(x, 1, dtype=F64).dtype == F64


@pytest.mark.parametrize("call, message", [
    (lambda x: oxmera.linalg.norm(x, 1), r"1-D or 2-D.*\(2, 3, 4\)"),
    (lambda x: oxmera.linalg.norm(x, dim=(0, 1, 2)), "int or a pair"),
    (lambda x: oxmera.linalg.matrix_norm(x, 3), "unsupported ord 3"),
    (lambda x: oxmera.linalg.matrix_norm(x, "bad"), "unsupported ord 'bad'"),
    (lambda x: oxmera.linalg.matrix_norm(x, dim=(0, 0)), "different"),
    (lambda x: oxmera.linalg.matrix_norm(x[0, 0]), r"at least 2 dims.*\(4,\)"),
    (lambda x: oxmera.linalg.vector_norm(x, "fro"), "ord must be a number"),
], ids=["ord-3d", "dim-3", "ord-3", "ord-bad", "same-dims", "1d", "vector-fro"])
def test_norm_errors(call, message):
    x = leaf(np.ones((2, 3, 4)))
    with pytest.raises(RuntimeError, match=message):
        call(x)
