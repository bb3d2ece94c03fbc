"""The Tensor methods NumPy code calls: NumPy's forms where PyTorch has none, PyTorch's
meaning where both have the name (see docs/differentiating_numpy.rst for the list)."""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck


def leaf(shape):
    values = np.random.default_rng(0).standard_normal(shape)
    return oxmera.tensor(values, requires_grad=True)


@pytest.mark.parametrize("call, numpy_call", [
    (lambda t: t.transpose(), lambda a: a.transpose()),
    (lambda t: t.transpose((2, 0, 1)), lambda a: a.transpose((2, 0, 1))),
    (lambda t: t.transpose(1, 2, 0), lambda a: a.transpose(1, 2, 0)),
    (lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),       # PyTorch's swap
    (lambda t: t.transpose(dim0=2, dim1=1), lambda a: a.swapaxes(2, 1)),
    (lambda t: t.ravel(), lambda a: a.ravel()),
    (lambda t: t.astype(np.float32), lambda a: a.astype(np.float32)),
    (lambda t: t.clip(-0.5, 0.5), lambda a: a.clip(-0.5, 0.5)),
    (lambda t: t.cumsum(axis=1), lambda a: a.cumsum(axis=1)),
    (lambda t: t.sum(axis=(0, 2)), lambda a: a.sum(axis=(0, 2))),
    (lambda t: t.any(axis=0), lambda a: a.any(axis=0)),
    (lambda t: (t > 0).all(axis=2), lambda a: (a > 0).all(axis=2)),
    (lambda t: t.max(axis=1).values, lambda a: a.max(axis=1)),
])
def test_methods_match_numpy(call, numpy_call):
    t = leaf((2, 3, 4))
    result = call(t)
    expected = numpy_call(t.detach().numpy())
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result.detach().numpy(), expected, rtol=1e-6)
    if result.dtype == np.float64 and result.requires_grad:
        assert gradcheck(call, (t,)) and gradgradcheck(call, (t,))


def test_astype_copies_unless_told_not_to():
    t = leaf((3,))
    assert t.astype(t.dtype) is not t
    assert t.astype(t.dtype, copy=False) is t
    with pytest.raises(TypeError, match="order"):
        t.astype(np.float32, order="F")


def test_transpose_errors():
    t = leaf((2, 3, 4))
    with pytest.raises(ValueError, match="axes don't match"):
        t.transpose(1, 0, 2, 3)
    with pytest.raises(TypeError, match="not a mix"):
        t.transpose(0, dim1=1)
    assert oxmera.tensor(1.0).transpose().shape == ()


def test_two_dims_are_pytorchs_swap():
    torch = pytest.importorskip("torch")
    values = np.arange(24.0).reshape(2, 3, 4)
    ours = oxmera.tensor(values).transpose(2, 0)
    np.testing.assert_array_equal(ours.numpy(), torch.tensor(values).transpose(2, 0).numpy())
