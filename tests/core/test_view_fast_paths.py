"""The shape ops' fast paths (issue 13) keep the semantics of the slow ones.

expand's broadcast view, the shape and dim parsing are in C; transpose,
permute, squeeze and unsqueeze call the ndarray methods; a full sum or mean
is one np.add.reduce and its VJP one expand. These tests pin what must not
have moved: outputs are views sharing their base's version counter, in-place
writes through them rebase the graph, the errors are the same, and the
reductions give the general path's values, dtypes and gradients.
"""
import warnings

import numpy as np
import pytest

import oxmera
from oxmera._core import autograd as core

# Each: a view-making call on a (2, 1, 3) float64 tensor.
VIEWS = {
    "expand": lambda t: t.expand(2, 4, 3),
    "expand_lead": lambda t: t.expand(5, 2, 1, 3),
    "broadcast_to": lambda t: oxmera.broadcast_to(t, (2, 4, 3)),
    "reshape": lambda t: t.reshape(6),
    "reshape_tuple": lambda t: t.reshape((3, 2)),
    "view": lambda t: t.view(-1),
    "view_size": lambda t: t.view(oxmera.Size([3, 2])),
    "transpose": lambda t: t.transpose(0, 2),
    "permute": lambda t: t.permute(2, 0, 1),
    "T": lambda t: t.T,
    "mT": lambda t: t.mT,
    "squeeze": lambda t: t.squeeze(),
    "squeeze_dim": lambda t: t.squeeze(1),
    "squeeze_kept": lambda t: t.squeeze(0),
    "squeeze_dims": lambda t: t.squeeze((0, 1)),
    "unsqueeze": lambda t: t.unsqueeze(-1),
    "unsqueeze_front": lambda t: t.unsqueeze(0),
}


def _base():
    return oxmera.tensor(np.arange(6.0).reshape(2, 1, 3))


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version_counter(name):
    base = _base()
    out = VIEWS[name](base)
    assert np.shares_memory(out._data, base._data)
    assert out._view_of is not None
    before = out._version
    base.add_(1.0)
    assert out._version == base._version == before + 1
    # The view sees the write (it is the same memory).
    np.testing.assert_array_equal(out.numpy(), VIEWS[name](oxmera.tensor(base.numpy())).numpy())


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_match_numpy_layout(name):
    # Same shape, values and strides as the NumPy functions the ops used before.
    array = np.arange(6.0).reshape(2, 1, 3)
    expected = {
        "expand": lambda a: np.broadcast_to(a, (2, 4, 3)),
        "expand_lead": lambda a: np.broadcast_to(a, (5, 2, 1, 3)),
        "broadcast_to": lambda a: np.broadcast_to(a, (2, 4, 3)),
        "reshape": lambda a: np.reshape(a, 6),
        "reshape_tuple": lambda a: np.reshape(a, (3, 2)),
        "view": lambda a: np.reshape(a, -1),
        "view_size": lambda a: np.reshape(a, (3, 2)),
        "transpose": lambda a: np.swapaxes(a, 0, 2),
        "permute": lambda a: np.transpose(a, (2, 0, 1)),
        "T": lambda a: np.transpose(a),
        "mT": lambda a: np.swapaxes(a, -2, -1),
        "squeeze": lambda a: np.squeeze(a),
        "squeeze_dim": lambda a: np.squeeze(a, 1),
        "squeeze_kept": lambda a: a[...],
        "squeeze_dims": lambda a: np.squeeze(a, 1),
        "unsqueeze": lambda a: np.expand_dims(a, -1),
        "unsqueeze_front": lambda a: np.expand_dims(a, 0),
    }[name](array)
    out = VIEWS[name](oxmera.tensor(array))._data
    # (The stride of a dimension of size 1 is never used: NumPy's choices vary.)
    assert out.shape == expected.shape
    assert [s for s, n in zip(out.strides, out.shape) if n != 1] == \
        [s for s, n in zip(expected.strides, expected.shape) if n != 1]
    np.testing.assert_array_equal(out, expected)
    if name.startswith(("expand", "broadcast")):
        assert not out.flags.writeable


def test_inplace_on_views_rebases_the_graph():
    torch = pytest.importorskip("torch")
    for name in ("reshape", "view", "transpose", "permute", "T", "squeeze", "unsqueeze",
                 "squeeze_dim"):
        x = oxmera.tensor(np.linspace(-1, 1, 6).reshape(2, 1, 3), requires_grad=True)
        y = x * 1.0
        VIEWS[name](y).mul_(3.0)
        (y * y).sum().backward()
        tx = torch.tensor(np.linspace(-1, 1, 6).reshape(2, 1, 3), requires_grad=True)
        ty = tx * 1.0
        VIEWS[name](ty).mul_(3.0)
        (ty * ty).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, err_msg=name)


def test_writing_into_an_expanded_view_still_raises():
    e = oxmera.ones(2).expand(3, 2)
    with pytest.raises(RuntimeError, match="read-only"):
        e.add_(1.0)


# (call, error type, message): the messages the Python implementations gave.
ERRORS = [
    (lambda: oxmera.ones(1).expand(-2), oxmera.OpError,
     "expand(): all elements of broadcast shape must be non-negative (input shapes: (1,))"),
    (lambda: oxmera.ones(1).expand(2, -2), oxmera.OpError,
     "expand(): all elements of broadcast shape must be non-negative (input shapes: (1,))"),
    (lambda: oxmera.ones(3).expand(2, -2), oxmera.OpError,
     "expand(): the expanded size of the tensor (-2) must match the existing size (3) at "
     "non-singleton dimension 1. Target sizes: (2, -2). Tensor sizes: (3,)"),
    (lambda: oxmera.ones(2, 3).expand(3), oxmera.OpError,
     "expand(): the number of sizes provided (1) must be greater or equal to the number of "
     "dimensions in the tensor (2). Target sizes: (3,). Tensor sizes: (2, 3)"),
    (lambda: oxmera.ones(2, 3).expand(2, 4), oxmera.OpError,
     "expand(): the expanded size of the tensor (4) must match the existing size (3) at "
     "non-singleton dimension 1. Target sizes: (2, 4). Tensor sizes: (2, 3)"),
    (lambda: oxmera.ones(3).expand(-1, -1), oxmera.OpError,
     "expand(): -1 is not allowed in a leading, non-existing dimension 0. Target sizes: "
     "(-1, -1). Tensor sizes: (3,)"),
    (lambda: oxmera.broadcast_to(oxmera.ones(3), (2, 4)), oxmera.OpError,
     "broadcast_to(): the expanded size of the tensor (4) must match the existing size (3) "
     "at non-singleton dimension 1. Target sizes: (2, 4). Tensor sizes: (3,)"),
    (lambda: oxmera.ones(3).expand(2.5), TypeError, "expand(): shape must be ints, got (2.5,)"),
    (lambda: oxmera.ones(3).expand([2, "a"]), TypeError,
     "expand(): shape must be ints, got [2, 'a']"),
    (lambda: oxmera.ones(3).reshape((3.0,)), TypeError,
     "reshape(): shape must be ints, got (3.0,)"),
    (lambda: oxmera.ones(3).reshape(None), TypeError, "reshape(): shape must be ints, got (None,)"),
    (lambda: oxmera.ones(6).reshape(-2, 3), oxmera.OpError,
     "reshape(): invalid shape dimension -2 in (-2, 3)"),
    (lambda: oxmera.ones(6).reshape(2, -1, -1), oxmera.OpError,
     "reshape(): only one dimension can be inferred, got shape (2, -1, -1)"),
    (lambda: oxmera.ones(6).reshape(0, -1), oxmera.OpError,
     "reshape(): shape (0, -1) is invalid for input of shape (6,) (6 elements)"),
    (lambda: oxmera.ones(6).reshape(2 ** 62, 2 ** 62, 6), oxmera.OpError,
     "reshape(): shape (4611686018427387904, 4611686018427387904, 6) is invalid for input of "
     "shape (6,) (6 elements)"),
    (lambda: oxmera.ones(6).view(4, -1), oxmera.OpError,
     "view(): shape (4, -1) is invalid for input of shape (6,) (6 elements)"),
    (lambda: oxmera.ones(2, 3).T.view(-1), oxmera.OpError,
     "view(): view size is not compatible with input tensor's size and stride (shape (3, 2), "
     "strides (4, 12)); use .reshape(...) instead"),
    (lambda: oxmera.ones(2, 3).transpose(0, 2), IndexError,
     "transpose(): Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: oxmera.ones(2, 3).transpose(0, 1.0), TypeError,
     "transpose(): dim must be an int, got float"),
    (lambda: oxmera.ones(2, 3).permute(0, 0), oxmera.OpError,
     "permute(): repeated dim in (0, 0)"),
    (lambda: oxmera.ones(2, 3).permute(0, 2), IndexError,
     "permute(): Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: oxmera.ones(2, 3).permute(0), oxmera.OpError,
     "permute(): number of dims 1 doesn't match the input's 2 dimensions"),
    (lambda: oxmera.ones(2, 3).unsqueeze(3), IndexError,
     "unsqueeze(): Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    (lambda: oxmera.ones(1, 3).squeeze((0, -2)), oxmera.OpError,
     "squeeze(): dim 0 appears multiple times in the list of dims (0, -2)"),
    (lambda: oxmera.ones(1, 3).squeeze(2), IndexError,
     "squeeze(): Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: oxmera.ones(3).mT, oxmera.OpError,
     "mT: tensor of shape (3,) has fewer than 2 dimensions"),
    (lambda: oxmera.ones(3).sum(0, axis=0), TypeError, "sum(): pass dim or axis, not both"),
    (lambda: oxmera.ones(3).sum(1), IndexError,
     "sum(): Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda: oxmera.ones(3, dtype=oxmera.int64).mean(), RuntimeError,
     "mean(): could not infer output dtype. Input dtype must be floating point, got int64"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_are_unchanged(index):
    call, kind, message = ERRORS[index]
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == message


def test_shape_arguments():
    # Varargs, one tuple, one list, an oxmera.Size, NumPy integers: a plain tuple of ints.
    for sizes, expected in (((2, 3), (2, 3)), (((2, 3),), (2, 3)), (([2, 3],), (2, 3)),
                            ((oxmera.Size([2, 3]),), (2, 3)), ((np.int64(2), np.int32(3)), (2, 3)),
                            (((True, 3),), (1, 3))):
        shape = core.shape_arg(sizes, "reshape")
        assert type(shape) is tuple and all(type(s) is int for s in shape)
        assert shape == expected
    assert core.shape_arg((), "reshape") == ()
    assert core.expanded_shape(np.zeros((1, 3)), (4, -1), "expand") == (4, 3)
    assert core.expanded_shape(np.zeros(()), ((2, 2),), "expand") == (2, 2)
    assert core.normalize_each_dim([-1, 0], 2, "permute") == (1, 0)
    assert core.reshape_shape(np.zeros((2, 3)), ([3, -1],), "reshape") == (3, -1)
    assert core.reshape_shape(np.zeros(0), (0, 5), "reshape") == (0, 5)


def test_broadcast_view():
    a = np.arange(3.0)
    v = core.broadcast_view(a, (2, 3))
    assert v.strides == (0, 8) and not v.flags.writeable and v.base is a
    np.testing.assert_array_equal(v, np.broadcast_to(a, (2, 3)))
    # A view of a view points at the array owning the memory, as NumPy's views do.
    w = core.broadcast_view(a[::2], (4, 2))
    assert w.base is a and w.strides == (0, 16)
    np.testing.assert_array_equal(w, [[0.0, 2.0]] * 4)
    # Size-0 and 0-d inputs.
    assert core.broadcast_view(np.zeros((0, 1)), (3, 0, 5)).shape == (3, 0, 5)
    assert core.broadcast_view(np.float64(2.0), (2,)).tolist() == [2.0, 2.0]
    for bad in ((2, 4), (3,)[:0], (2, -1)):
        with pytest.raises(ValueError):
            core.broadcast_view(np.zeros((2, 3)), bad)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128",
                                   "int32", "uint8", "bool"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0, 3)])
def test_full_sum_and_mean_match_the_general_path(dtype, shape):
    rng = np.random.default_rng(0)
    array = (rng.standard_normal(shape) * 4).astype(dtype)
    for data in (array, array.T):
        x = oxmera.tensor(data)
        every = tuple(range(data.ndim))
        fast, general = x.sum(), x.sum(every)
        assert fast.dtype == general.dtype and fast.shape == ()
        np.testing.assert_array_equal(fast.numpy(), general.numpy())
        if np.dtype(dtype).kind in "fc":
            with warnings.catch_warnings():
                warnings.simplefilter("error")      # an empty mean is nan, quietly
                fast, general = x.mean(), x.mean(every)
            assert fast.dtype == general.dtype and fast.shape == ()
            np.testing.assert_array_equal(fast.numpy(), general.numpy())


def test_full_sum_and_mean_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        data = rng.standard_normal((7, 5)).astype(dtype)
        for name in ("sum", "mean"):
            for kwargs in ({}, {"keepdim": True}, {"dtype": "float64"}):
                x = oxmera.tensor(data, requires_grad=True)
                tx = torch.tensor(data, requires_grad=True)
                tkw = dict(kwargs)
                if "dtype" in tkw:
                    tkw["dtype"] = torch.float64
                    kwargs = {"dtype": oxmera.float64}
                if "keepdim" in kwargs:
                    out, tout = getattr(x, name)(None, **kwargs), getattr(tx, name)(None, **tkw)
                else:
                    out, tout = getattr(x, name)(**kwargs), getattr(tx, name)(**tkw)
                assert tuple(out.shape) == tuple(tout.shape)
                np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(),
                                           rtol=1e-6)
                (out * 3.0).sum().backward()
                (tout * 3.0).sum().backward()
                assert x.grad.dtype == x.dtype and tuple(x.grad.shape) == data.shape
                np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_full_sum_and_mean_second_order():
    # The VJP (one expand) is recorded under create_graph: gradgradcheck holds.
    for name in ("sum", "mean"):
        x = oxmera.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        assert oxmera.autograd.gradcheck(lambda t, n=name: getattr(t * t, n)(), (x,))
        assert oxmera.autograd.gradgradcheck(lambda t, n=name: getattr(t * t, n)(), (x,))
        (g,) = oxmera.autograd.grad(getattr(x * x, name)(), (x,), create_graph=True)
        assert g.requires_grad


def test_square_by_mul_gradients():
    # x * x: the VJP computes one product for both inputs; the engine adds them.
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    for data in (rng.standard_normal(5), rng.standard_normal(5) + 1j * rng.standard_normal(5)):
        x = oxmera.tensor(data, requires_grad=True)
        tx = torch.tensor(data, requires_grad=True)
        seen = []
        x.register_hook(lambda g: seen.append(g.numpy().copy()))
        y, ty = x * x, tx * tx
        y.backward(oxmera.tensor(np.full_like(data, 0.5)))
        ty.backward(torch.tensor(np.full_like(data, 0.5)))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
        assert len(seen) == 1           # the hook sees the total, once
        np.testing.assert_allclose(seen[0], tx.grad.numpy(), rtol=1e-12)
    x = oxmera.tensor(np.linspace(-1, 1, 4), requires_grad=True)
    assert oxmera.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    (g,) = oxmera.autograd.grad((x * x).sum(), (x,), create_graph=True)
    (gg,) = oxmera.autograd.grad(g.sum(), (x,))
    np.testing.assert_allclose(gg.numpy(), np.full(4, 2.0))


@pytest.mark.parametrize("sizes", [(2 ** 70,), (2 ** 40, 2 ** 40), (1,) * 70, (-3,)])
def test_sizes_numpy_cannot_make_give_numpys_error(sizes):
    # Past PyTorch's checks, NumPy's own error, as when np.broadcast_to made the view.
    array = np.ones(1) if len(sizes) < 70 else np.ones(())
    with pytest.raises(ValueError) as numpy_error:
        np.broadcast_to(array, sizes)
    with pytest.raises(oxmera.OpError) as info:
        oxmera.tensor(array).expand(*sizes)
    assert str(info.value) == f"expand(): {numpy_error.value} (input shapes: {array.shape})"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_mean_over_dims_warns_of_nothing(dtype):
    # Non-empty means divide without np.errstate; empty ones are nan, quietly.
    torch = pytest.importorskip("torch")
    data = np.arange(24.0).reshape(2, 3, 4).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dim in (0, -1, (0, 2)):
            for keepdim in (False, True):
                out = oxmera.tensor(data).mean(dim, keepdim=keepdim)
                expected = torch.tensor(data).mean(dim, keepdim=keepdim).numpy()
                assert out.dtype == expected.dtype
                np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3)
        empty = oxmera.tensor(np.zeros((0, 3), dtype)).mean(0)
        assert empty.dtype == np.dtype(dtype) and np.isnan(empty.numpy()).all()


def test_narrow_only_narrows():
    from oxmera.ops._utils import narrow
    array = np.ones(3, np.float32)
    assert narrow(array, np.float32) is array           # same dtype: the array itself
    assert narrow(np.float64(2.0), np.float64).shape == ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # past float16's range: inf, quietly
        assert np.isinf(narrow(np.float32(1e5), np.float16))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_sum_to_leading_and_inner_dims(dtype):
    # Leading dims only (a bias's gradient) take the no-reshape path; the sums,
    # shapes and dtypes are the general path's (float16 summed in float32).
    rng = np.random.default_rng(3)
    for have, shape in [((4, 3), (3,)), ((4, 3), (1, 3)), ((4, 3), (4, 1)), ((2, 4, 3), (4, 1)),
                        ((2, 4, 3), (1,)), ((2, 4, 3), ()), ((5,), ()), ((3,), (3,)),
                        ((0, 3), (3,)), ((2, 0), (1,))]:
        data = rng.standard_normal(have).astype(dtype)
        out = oxmera.sum_to(oxmera.tensor(data), shape).numpy()
        lead = data.ndim - len(shape)
        expected = data.astype(np.float32) if dtype == "float16" else data
        expected = expected.sum(axis=tuple(range(lead)))
        for i, size in enumerate(shape):
            if size == 1 and expected.shape[i] != 1:
                expected = expected.sum(axis=i, keepdims=True)
        assert out.shape == shape and out.dtype == np.dtype(dtype)
        np.testing.assert_allclose(out, np.asarray(expected).astype(dtype),
                                   rtol=1e-2 if dtype == "float16" else 1e-6)
