"""Copies and conversions: clone, contiguous, to / type / float / double / ...

Finite-difference gradient checks are the ``clone``, ``contiguous`` and
``to`` entries of ``_cases.py``.
"""
import numpy as np
import pytest

import oxmera
from oxmera.ops.conversion import _cast

from ._helpers import leaf, unchanged

F16, F32, F64, I64 = oxmera.float16, oxmera.float32, oxmera.float64, oxmera.int64


def test_clone_copies_and_keeps_the_graph():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    for y in (x.clone(), oxmera.clone(x), x.copy()):
        assert not np.shares_memory(x.detach().numpy(), y.detach().numpy())
        assert y.dtype == F64 and y.grad_fn.name == "CloneBackward"
        np.testing.assert_array_equal(y.detach().numpy(), x.detach().numpy())
        (y * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 2), 9.0))


def test_clone_of_a_view_is_independent():
    x = oxmera.from_numpy(np.arange(6.0).reshape(2, 3))
    y = x.T.clone()
    before = x._version
    y._bump_version()
    assert x._version == before
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0).reshape(2, 3).T)


@pytest.mark.parametrize("make", [
    lambda: oxmera.from_numpy(np.arange(6.0).reshape(3, 2).T),
    lambda: oxmera.from_numpy(np.arange(12.0).reshape(2, 6)[:, ::2]),
    lambda: oxmera.from_numpy(np.arange(6.0).reshape(2, 3)),
    lambda: oxmera.tensor(1.5),
], ids=["transposed", "strided", "contiguous", "0d"])
def test_contiguous(make):
    x = make()
    values = x.numpy().copy()
    y = x.contiguous()
    assert y.numpy().flags.c_contiguous
    np.testing.assert_array_equal(y.numpy(), values)
    # a copy only when the input is not contiguous already
    assert np.shares_memory(x.numpy(), y.numpy()) == x.numpy().flags.c_contiguous


def test_contiguous_gradient():
    x = oxmera.from_numpy(np.arange(6.0).reshape(3, 2).T).requires_grad_()
    y = x.contiguous()
    assert y.grad_fn.name == "ContiguousBackward"
    (y * oxmera.from_numpy(np.arange(6.0).reshape(2, 3))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(2, 3))


# -- to and the dtype methods --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F16, F32, F64, I64, oxmera.int32, oxmera.int16, oxmera.int8,
                                   oxmera.uint8, oxmera.bool], ids=str)
@pytest.mark.parametrize("source", [F32, F64, I64, oxmera.bool], ids=str)
def test_to_matches_numpy_astype(source, dtype):
    values = np.array([[-2.5, 0.0, 1.75], [3.0, 0.5, 7.25]]).astype(source)
    result = oxmera.tensor(values).to(dtype)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result.numpy(), values.astype(dtype))


@pytest.mark.parametrize("method, dtype", [
    ("float", F32), ("double", F64), ("half", F16), ("long", I64), ("int", oxmera.int32),
    ("short", oxmera.int16), ("bool", oxmera.bool), ("byte", oxmera.uint8),
    ("char", oxmera.int8)])
def test_dtype_methods(method, dtype):
    x = oxmera.tensor([0.0, 1.5, -2.0])
    result = getattr(x, method)()
    assert result.dtype == dtype
    np.testing.assert_array_equal(result.numpy(), x.numpy().astype(dtype))
    assert x.type(dtype).dtype == dtype


def test_to_the_same_dtype_returns_the_tensor_itself():
    x = leaf([1.0, 2.0])
    assert x.to(F64) is x
    assert x.to(np.float64) is x
    assert x.to("cpu") is x
    assert x.double() is x
    copy = x.to(F64, copy=True)
    assert copy is not x and not np.shares_memory(copy.detach().numpy(), x.detach().numpy())
    assert copy.requires_grad


def test_to_accepts_device_and_tensor_arguments():
    x = oxmera.tensor([1.0, 2.0])
    assert x.to("cpu", F64).dtype == F64
    assert x.to("cpu", dtype=F16).dtype == F16
    assert x.to(oxmera.zeros(1, dtype=F64)).dtype == F64
    assert oxmera.to(x, F64).dtype == F64
    assert x.to(device="cpu") is x
    assert x.to("cpu:0", F64, copy=True).dtype == F64


def test_to_another_device_is_an_error():
    x = oxmera.tensor([1.0])
    with pytest.raises(RuntimeError, match="CPU"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match="CPU"):
        x.to(device="cuda:1", dtype=F64)
    with pytest.raises(TypeError, match="unexpected argument"):
        x.to(F64, F32)


def test_type_without_argument_names_the_legacy_type():
    # PyTorch's spelling, which ported code compares against (see ops/tensor_types.py).
    assert oxmera.tensor([1.0]).type() == "torch.FloatTensor"
    assert oxmera.tensor([1]).type() == "torch.LongTensor"


def test_float_cast_is_differentiable_and_casts_the_gradient_back():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)        # float32
    y = x.to(F64)
    assert y.dtype == F64 and y.grad_fn.name == "ToBackward"
    (y * y).sum().backward()
    assert x.grad.dtype == F32
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    z = leaf([0.5, 1.5])
    (z.half() * 2).sum().backward()
    assert z.grad.dtype == F64
    np.testing.assert_array_equal(z.grad.numpy(), [2.0, 2.0])


@pytest.mark.parametrize("dtype", [I64, oxmera.int32, oxmera.bool, oxmera.uint8], ids=str)
def test_cast_to_integer_or_bool_cuts_the_graph(dtype):
    x = leaf([1.5, -0.5])
    y = x.to(dtype)
    assert y.dtype == dtype
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_to_unsupported_dtype_is_a_type_error():
    x = leaf([1.0])
    with unchanged(x):
        with pytest.raises(TypeError, match="datetime64"):
            x.to(np.dtype("M8[s]"))
        with pytest.raises(TypeError):
            _cast(x, np.dtype("U1"))
