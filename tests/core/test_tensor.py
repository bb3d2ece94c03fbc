"""The compiled Tensor: what it is (an extension type) and its attributes (SPEC §2)."""
import importlib.machinery
import weakref

import numpy as np
import pytest

import oxmera
from oxmera._core import autograd as core

Py_TPFLAGS_HEAPTYPE = 1 << 9
Py_TPFLAGS_IMMUTABLETYPE = 1 << 8


# -- the core is compiled ---------------------------------------------------------

def test_core_module_is_a_compiled_extension():
    path = core.__file__
    assert any(path.endswith(suffix) for suffix in importlib.machinery.EXTENSION_SUFFIXES), path
    assert isinstance(core.__loader__, importlib.machinery.ExtensionFileLoader)
    assert oxmera.autograd.Tensor is oxmera.Tensor is core.Tensor
    # The engine's own routines are compiled functions too.
    for fn in (core.run_backward, core.apply_op, core.Tensor.backward):
        assert type(fn).__name__ == "cython_function_or_method"


@pytest.mark.parametrize("name", ["Tensor", "AutogradMeta", "GradFn"])
def test_core_classes_are_extension_types(name):
    cls = getattr(core, name)
    assert getattr(oxmera, name) is cls
    assert cls.__module__ == "oxmera._core.autograd"
    assert type(cls) is type
    assert not hasattr(cls, "__code__")
    # Classes defined by a class statement are heap types; static C types are not.
    assert not cls.__flags__ & Py_TPFLAGS_HEAPTYPE
    assert cls.__flags__ & Py_TPFLAGS_IMMUTABLETYPE
    # A Python class's __init__ would be a Python function; a C type's is a
    # slot wrapper (the ops package adds Python methods to Tensor, not __init__).
    init = vars(cls).get("__init__")
    assert init is None or type(init).__name__ == "wrapper_descriptor"


def test_tensor_instances_have_no_dict_but_support_weakrefs():
    t = oxmera.ones(2, requires_grad=True)
    y = t * 2
    assert not hasattr(t, "__dict__")
    with pytest.raises(AttributeError):
        t.some_new_attribute = 1
    assert weakref.ref(t)() is t
    assert weakref.ref(y.grad_fn)() is y.grad_fn


def test_meta_and_node_classes_are_final_tensor_is_not():
    for cls in (core.AutogradMeta, core.GradFn):
        with pytest.raises(TypeError):
            type("Sub", (cls,), {})

    class Parameter(oxmera.Tensor):
        pass

    p = Parameter([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()
    assert p.grad.tolist() == [2.0, 4.0]


def test_no_grad_tensor_carries_no_meta():
    # The no-grad fast path: no AutogradMeta at all until one is needed.
    t = oxmera.ones(3)
    assert not t.requires_grad and t.is_leaf and t.grad is None and t.grad_fn is None
    t.requires_grad_()
    t.requires_grad_(False)
    assert not t.requires_grad


# -- description -------------------------------------------------------------------

def test_shape_dtype_ndim_size_numel():
    t = oxmera.zeros(2, 3, 4)
    # A tuple subclass (oxmera.Size, as PyTorch's torch.Size), tested in test_tensor_api.py.
    assert t.shape == (2, 3, 4) and isinstance(t.shape, tuple) and type(t.shape) is oxmera.Size
    assert t.dtype == np.float32 and t.dtype == oxmera.float32
    assert t.ndim == 3 and t.dim() == 3
    assert t.numel() == 24
    assert t.size() == (2, 3, 4) and type(t.size()) is oxmera.Size
    assert t.size(1) == 3 and t.size(-1) == 4
    with pytest.raises(IndexError, match="size"):
        t.size(3)
    with pytest.raises(IndexError):
        t.size(-4)
    with pytest.raises(TypeError):
        t.size(1.5)
    # A 0-d tensor has no dimension to ask for (this used to crash the
    # interpreter: the release build indexes tuples without bounds checks).
    for dim in (0, -1):
        with pytest.raises(IndexError, match="no dimensions"):
            oxmera.tensor(1.0).size(dim)
    assert oxmera.tensor(1.0).size() == ()


def test_item_tolist_float_int():
    assert oxmera.tensor(2.5).item() == 2.5
    assert isinstance(oxmera.tensor(3).item(), int)
    assert oxmera.tensor([[7.0]]).item() == 7.0
    assert oxmera.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert oxmera.tensor(1.5).tolist() == 1.5
    assert float(oxmera.tensor(2.5)) == 2.5 and int(oxmera.tensor(4)) == 4
    with pytest.raises(RuntimeError, match="2 elements"):
        oxmera.ones(2).item()


def test_numpy_shares_memory_and_refuses_when_requires_grad():
    t = oxmera.tensor([1.0, 2.0])
    a = t.numpy()
    assert isinstance(a, np.ndarray)
    a[0] = 5.0
    assert t.tolist() == [5.0, 2.0]
    g = oxmera.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="detach"):
        g.numpy()
    assert np.shares_memory(g.numpy(force=True), g.detach().numpy())
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(g)


def test_array_protocol():
    t = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 2)
    assert np.shares_memory(a, t.numpy())
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert not np.shares_memory(np.array(t, copy=True), t.numpy())
    np.testing.assert_array_equal(np.asarray(oxmera.tensor([1, 2])), [1, 2])


def test_len_and_iter():
    t = oxmera.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, oxmera.Tensor) for r in rows)
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    with pytest.raises(TypeError):
        len(oxmera.tensor(1.0))
    with pytest.raises(TypeError):
        iter(oxmera.tensor(1.0))


def test_iteration_is_differentiable():
    x = oxmera.tensor([1.0, 2.0, 3.0], dtype=oxmera.float64, requires_grad=True)
    total = None
    for i, xi in enumerate(x):
        total = xi * (i + 1) if total is None else total + xi * (i + 1)
    total.backward()
    assert x.grad.tolist() == [1.0, 2.0, 3.0]


def test_repr():
    r = repr(oxmera.tensor([1.5, 2.0]))
    assert r.startswith("tensor(") and "1.5" in r and "dtype=float32" in r
    assert "requires_grad" not in r and "grad_fn" not in r
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    assert "requires_grad=True" in repr(x)
    y = x * 3
    ry = repr(y)
    assert "grad_fn=<MulBackward>" in ry and "3." in ry and "6." in ry
    assert "dtype=int64" in repr(oxmera.tensor([1, 2]))
    assert str(y) == ry


def test_bool():
    assert bool(oxmera.tensor([1.0])) is True
    assert bool(oxmera.tensor(0.0)) is False
    assert bool(oxmera.tensor([[3]])) is True
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(oxmera.tensor([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(oxmera.zeros(0))


# -- dtype rules --------------------------------------------------------------------

def test_python_numbers_dtypes():
    assert oxmera.tensor(1.5).dtype == np.float32
    assert oxmera.tensor([1.0, 2.0]).dtype == np.float32
    assert oxmera.tensor([1, 2.5]).dtype == np.float32
    assert oxmera.tensor(3).dtype == np.int64
    assert oxmera.tensor([[1, 2]]).dtype == np.int64
    assert oxmera.tensor(True).dtype == np.bool_
    assert oxmera.tensor([1.0], dtype=oxmera.float16).dtype == np.float16
    assert oxmera.tensor([1], dtype=np.int8).dtype == np.int8


def test_default_dtype():
    assert oxmera.get_default_dtype() == np.float32
    oxmera.set_default_dtype(oxmera.float64)
    try:
        assert oxmera.get_default_dtype() == np.float64
        assert oxmera.tensor(1.5).dtype == np.float64
        assert oxmera.tensor([1.0, 2.0]).dtype == np.float64
        assert oxmera.tensor(1).dtype == np.int64            # ints are not affected
        assert oxmera.tensor(np.ones(2, np.float32)).dtype == np.float32
    finally:
        oxmera.set_default_dtype(oxmera.float32)
    assert oxmera.tensor(1.5).dtype == np.float32
    with pytest.raises(TypeError, match="floating"):
        oxmera.set_default_dtype(oxmera.int32)
    assert oxmera.get_default_dtype() == np.float32


@pytest.mark.parametrize("scalar", [2.0, 2, True, np.float64(2.0), np.float32(2.0),
                                    np.int64(2), np.float16(2.0)],
                         ids=lambda v: type(v).__name__)
def test_scalars_do_not_upcast_a_float32_tensor(scalar):
    # Python numbers and NumPy scalars alike (numpy.float64 is a float subclass,
    # which once let it through unconverted, giving float64).
    x = oxmera.tensor([1.0, 2.0])
    assert (x * scalar).dtype == np.float32
    assert (scalar * x).dtype == np.float32
    assert (x + scalar).dtype == np.float32
    w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    (w * scalar).sum().backward()
    assert w.grad.dtype == np.float32 and w.grad.tolist() == [float(scalar)] * 2


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int16,
                                   np.int32, np.int64, np.uint8, np.bool_])
def test_numpy_arrays_keep_their_dtype(dtype):
    a = np.ones(3, dtype=dtype)
    assert oxmera.tensor(a).dtype == dtype
    assert oxmera.as_tensor(a).dtype == dtype
    assert oxmera.from_numpy(a).dtype == dtype


def test_tensor_copies_from_numpy_and_as_tensor_share():
    a = np.arange(4.0)
    copied = oxmera.tensor(a)
    shared = oxmera.from_numpy(a)
    also_shared = oxmera.as_tensor(a)
    assert not np.shares_memory(copied.numpy(), a)
    assert np.shares_memory(shared.numpy(), a)
    assert np.shares_memory(also_shared.numpy(), a)
    a[0] = 100.0
    assert copied[0].item() == 0.0
    assert shared[0].item() == 100.0 and also_shared[0].item() == 100.0
    t = oxmera.tensor([1.0, 2.0])
    assert oxmera.as_tensor(t) is t
    assert not np.shares_memory(oxmera.tensor(t).numpy(), t.numpy())
    with pytest.raises(TypeError):
        oxmera.from_numpy([1.0, 2.0])


# -- autograd attributes --------------------------------------------------------------

def test_requires_grad_setter_on_leaves_only():
    x = oxmera.tensor([1.0, 2.0])
    x.requires_grad = True
    assert x.requires_grad and x.is_leaf
    assert x.requires_grad_(False) is x and not x.requires_grad
    x.requires_grad_()
    y = x * 2
    assert y.requires_grad and not y.is_leaf
    y.requires_grad = True                   # already true: allowed, nothing changes
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    assert y.requires_grad and y.grad_fn is not None


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_])
def test_only_floating_tensors_may_require_grad(dtype):
    name = np.dtype(dtype).name
    with pytest.raises(RuntimeError, match=name):
        oxmera.tensor(np.zeros(2, dtype=dtype), requires_grad=True)
    t = oxmera.tensor(np.zeros(2, dtype=dtype))
    with pytest.raises(RuntimeError, match=f"floating point.*{name}"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match=name):
        t.requires_grad_()
    assert not t.requires_grad


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_floating_tensors_may_require_grad(dtype):
    assert oxmera.ones(2, dtype=dtype, requires_grad=True).requires_grad


def test_grad_is_settable():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    assert x.grad is None
    g = oxmera.tensor([0.5, 0.5])
    x.grad = g
    assert x.grad is g
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.5, 2.5]
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError, match="size"):
        x.grad = oxmera.ones(3)
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]
    with pytest.raises(RuntimeError, match="dtype"):
        x.grad = oxmera.ones(2, dtype=oxmera.float64)
    assert x.grad is None


def test_grad_fn_name_and_next_functions():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    c = oxmera.tensor([3.0, 4.0])
    y = x * c
    node = y.grad_fn
    assert isinstance(node, oxmera.GradFn)
    assert node.name == "MulBackward" and node.name() == "MulBackward"
    (acc, nr), (none, _) = node.next_functions
    assert acc.name == "AccumulateGrad" and acc.variable is x and nr == 0
    assert none is None
    z = y * x
    assert z.grad_fn.name == "MulBackward"
    assert z.grad_fn.next_functions[0][0] is node
    assert z.grad_fn.next_functions[1][0].variable is x
    assert (x + c).grad_fn.name == "AddBackward"
    assert x.grad_fn is None and c.grad_fn is None


def test_is_leaf():
    x = oxmera.tensor([1.0], requires_grad=True)
    assert x.is_leaf
    assert oxmera.tensor([1.0]).is_leaf
    assert not (x * 2).is_leaf
    with oxmera.no_grad():
        assert (x * 2).is_leaf
    assert (oxmera.tensor([1.0]) * 2).is_leaf


def test_detach_shares_memory_and_version():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    assert np.shares_memory(d.numpy(), y.numpy(force=True))
    assert d._version == y._version == 0
    d._bump_version()
    assert y._version == 1           # one counter per block of memory
    assert y.grad_fn is not None     # y itself is untouched


def test_detach_in_place():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    assert y.tolist() == [2.0, 4.0]


def test_retain_grad():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    assert not y.retains_grad
    y.retain_grad()
    y.retain_grad()                   # twice is once
    assert y.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0]
    assert x.grad.tolist() == [18.0, 36.0]
    x.retain_grad()                   # a no-op on a leaf
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        oxmera.ones(2).retain_grad()


def test_non_leaf_grad_access_warns():
    x = oxmera.tensor([1.0], requires_grad=True)
    y = x * 2
    with pytest.warns(UserWarning, match="retain_grad"):
        assert y.grad is None


def test_register_hook_returns_removable_handle():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()))
    assert callable(handle.remove)
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]]
    handle.remove()
    handle.remove()                   # a second remove does nothing
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]]
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        oxmera.ones(2).register_hook(lambda g: g)
    with pytest.raises(TypeError):
        x.register_hook(5)


def test_version_counter():
    x = oxmera.tensor([1.0, 2.0, 3.0, 4.0])
    assert x._version == 0
    x._bump_version()
    x._bump_version()
    assert x._version == 2
    v = x.reshape(2, 2)               # a view shares its base's counter
    v._bump_version()
    assert x._version == 3 and v._version == 3
    assert oxmera.tensor(x)._version == 0      # a copy starts fresh
