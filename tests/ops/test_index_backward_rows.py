"""index_backward's fast path for one integer index on dim 0 (an embedding's backward)
against np.add.at, the general path it replaces there."""
import numpy as np
import pytest

import oxmera
from oxmera.ops.index import index_backward


@pytest.mark.parametrize("shape, index_shape, dtype", [
    ((65, 16), (8, 12), np.float32), ((7,), (20,), np.float64),
    ((5, 3, 2), (4, 3), np.complex128), ((9, 4), (30,), np.float16)])
def test_rows_add_up_as_np_add_at(shape, index_shape, dtype):
    rng = np.random.default_rng(8)
    index = rng.integers(-shape[0], shape[0], index_shape)      # negative ones too
    grad = (rng.standard_normal(index_shape + shape[1:]) * 10).astype(dtype)
    expected = np.zeros(shape, dtype)
    np.add.at(expected, index, grad)
    got = index_backward(oxmera.tensor(grad), shape, oxmera.tensor(index)).numpy()
    assert got.dtype == dtype
    tolerance = 1e-2 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)


def test_rows_of_a_broadcast_grad_and_out_of_range_indices():
    index = oxmera.tensor([0, 2, 0, -1])
    got = index_backward(oxmera.ones(4, 3).expand(4, 3)[:, :1].expand(4, 3), (3, 3), index)
    np.testing.assert_array_equal(got.numpy(), [[2] * 3, [0] * 3, [2] * 3])
    for bad in ([0, -4], [0, 3]):
        with pytest.raises(IndexError, match="out of bounds"):
            index_backward(oxmera.ones(2), (3,), oxmera.tensor(bad))


def test_embedding_gradient_counts_repeated_rows():
    weight = oxmera.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    oxmera.nn.functional.embedding(oxmera.tensor([[1, 3], [1, 1]]), weight).sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy(), [[0] * 3, [3] * 3, [0] * 3, [1] * 3])
