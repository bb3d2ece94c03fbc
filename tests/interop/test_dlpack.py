"""DLPack: zero-copy exchange with NumPy (and PyTorch where installed); a tensor that requires
grad is not exported, as in PyTorch."""
import numpy as np
import pytest

import oxmera


def test_numpy_imports_a_tensor_without_copying():
    t = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.from_dlpack(t)
    assert a.shape == (2, 2) and a.dtype == np.float32
    assert np.shares_memory(a, t.numpy())
    a[0, 0] = 10.0
    assert t[0, 0].item() == 10.0


def test_from_dlpack_imports_an_array_without_copying():
    a = np.arange(6.0).reshape(2, 3)
    t = oxmera.from_dlpack(a)
    assert isinstance(t, oxmera.Tensor) and t.dtype == np.float64 and t.shape == (2, 3)
    assert t.is_leaf and not t.requires_grad
    a[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    t.numpy()[0, 0] = 42.0
    assert a[0, 0] == 42.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int16,
                                   np.int32, np.int64, np.uint8, np.bool_])
def test_round_trip_keeps_dtype_and_values(dtype):
    a = (np.arange(6) % 2).astype(dtype).reshape(3, 2)
    t = oxmera.from_dlpack(a)
    assert t.dtype == dtype
    back = np.from_dlpack(t)
    assert back.dtype == dtype and np.shares_memory(back, a)
    np.testing.assert_array_equal(back, a)


def test_non_contiguous_and_0d_and_empty():
    a = np.arange(12.0).reshape(3, 4)[:, ::2].T
    t = oxmera.from_dlpack(a)
    np.testing.assert_array_equal(t.numpy(), a)
    assert np.shares_memory(t.numpy(), a)
    view = oxmera.arange(12.0).reshape(3, 4).T
    np.testing.assert_array_equal(np.from_dlpack(view), view.numpy())
    assert oxmera.from_dlpack(np.array(3.5)).item() == 3.5
    assert oxmera.from_dlpack(np.zeros((0, 3))).shape == (0, 3)


def test_oxmera_to_oxmera_shares_memory():
    t = oxmera.tensor([1.0, 2.0])
    u = oxmera.from_dlpack(t)
    assert u is not t
    u.numpy()[1] = 7.0
    assert t.tolist() == [1.0, 7.0]


def test_dlpack_device_is_the_cpu():
    assert oxmera.ones(2).__dlpack_device__() == (1, 0)


def test_a_tensor_that_requires_grad_is_not_exported():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(BufferError, match="require gradient, use tensor.detach"):
        x.__dlpack__()
    with pytest.raises(BufferError, match="require gradient"):
        np.from_dlpack(x)
    with pytest.raises(BufferError, match="require gradient"):
        oxmera.from_dlpack(x)
    assert np.shares_memory(np.from_dlpack(x.detach()), x.detach().numpy())


def test_stream_must_be_none_on_the_cpu():
    t = oxmera.ones(2)
    t.__dlpack__(stream=None)
    t.__dlpack__(stream=-1)          # PyTorch's "no synchronization" value
    with pytest.raises(ValueError, match="stream should be None on cpu"):
        t.__dlpack__(stream=1)


def test_copy_argument():
    a = np.arange(3.0)
    t = oxmera.from_dlpack(a, copy=True)
    t.numpy()[0] = 9.0
    assert a[0] == 0.0
    t = oxmera.from_dlpack(a, copy=False)
    assert np.shares_memory(t.numpy(), a)


def test_a_bare_capsule_is_accepted_once():
    a = np.arange(3.0)
    capsule = a.__dlpack__()
    t = oxmera.from_dlpack(capsule)
    a[2] = 5.0
    assert t.tolist() == [0.0, 1.0, 5.0]


def test_read_only_memory_stays_read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = oxmera.from_dlpack(a)
    assert not t.numpy().flags.writeable


def test_errors():
    with pytest.raises(TypeError, match="from_dlpack: expected an object with __dlpack__"):
        oxmera.from_dlpack([1.0, 2.0])
    with pytest.raises(TypeError, match="unsupported dtype timedelta64"):
        oxmera.from_dlpack(np.ones(2, dtype="m8[s]"))
    with pytest.raises(ValueError, match="cpu"):
        oxmera.from_dlpack(np.ones(2), device="cuda")


def test_from_dlpack_is_exported_at_top_level():
    assert "from_dlpack" in oxmera.__all__
    assert oxmera.from_dlpack is oxmera.ops.interop.from_dlpack


# -- PyTorch -------------------------------------------------------------------------------------

def test_torch_round_trip_without_copying():
    torch = pytest.importorskip("torch")
    tt = torch.arange(6.0).reshape(2, 3)
    t = oxmera.from_dlpack(tt)
    assert t.dtype == np.float32 and t.shape == (2, 3)
    tt[0, 1] = 100.0                   # written through torch, seen by oxmera
    assert t[0, 1].item() == 100.0
    back = torch.from_dlpack(t)
    assert back.data_ptr() == tt.data_ptr()
    t.numpy()[1, 2] = -3.0             # written through oxmera, seen by torch
    assert tt[1, 2].item() == -3.0 and back[1, 2].item() == -3.0


def test_torch_imports_an_oxmera_tensor_without_copying():
    torch = pytest.importorskip("torch")
    t = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=oxmera.float64).T
    tt = torch.from_dlpack(t)
    assert tt.dtype == torch.float64 and tuple(tt.shape) == (2, 2)
    np.testing.assert_array_equal(tt.numpy(), t.numpy())
    tt[0, 1] = 50.0
    assert t[0, 1].item() == 50.0


def test_torch_refuses_an_oxmera_tensor_requiring_grad_and_vice_versa():
    torch = pytest.importorskip("torch")
    with pytest.raises(BufferError):
        torch.from_dlpack(oxmera.tensor([1.0], requires_grad=True))
    with pytest.raises(BufferError):
        oxmera.from_dlpack(torch.ones(2, requires_grad=True))
