"""Creating tensors: dtype rules (§2), values against NumPy, memory sharing,
``requires_grad``, the default dtype, seeded randomness, errors.

Creation functions are not ops (nothing to differentiate), so they have no
gradient cases.
"""
import numpy as np
import pytest

import oxmera

F16, F32, F64, I64 = oxmera.float16, oxmera.float32, oxmera.float64, oxmera.int64


def _check(result, expected, dtype):
    assert isinstance(result, oxmera.Tensor)
    assert result.dtype == np.dtype(dtype)
    assert result.shape == np.shape(expected)
    np.testing.assert_allclose(result.numpy().astype(np.float64),
                               np.asarray(expected, np.float64), rtol=1e-6)


@pytest.mark.parametrize("data, dtype", [
    ([1.0, 2.0], F32), ([1, 2.5], F32), ([1, 2], I64), (3, I64), (2.5, F32), (True, oxmera.bool),
    ([[True, False]], oxmera.bool), (np.zeros(2, np.float64), F64), (np.zeros(2, np.int32),
                                                                   oxmera.int32),
    (np.float64(1.0), F64), (np.float16(1.0), F16), ([], F32), ([[1.0], [2.0]], F32),
    ((1, 2), I64)], ids=str)
def test_tensor_dtype_rules(data, dtype):
    t = oxmera.tensor(data)
    _check(t, np.asarray(data), dtype)
    assert oxmera.as_tensor(data).dtype == dtype


def test_tensor_of_tensors():
    _check(oxmera.tensor([oxmera.tensor(1.0), oxmera.tensor(2.0)]), [1.0, 2.0], F32)


def test_tensor_copies_and_as_tensor_and_from_numpy_share():
    a = np.zeros(3)
    copied, shared, from_np = oxmera.tensor(a), oxmera.as_tensor(a), oxmera.from_numpy(a)
    a[0] = 5.0
    assert copied[0].item() == 0.0
    assert shared[0].item() == 5.0 and from_np[0].item() == 5.0
    # a Tensor is returned as is by as_tensor (when the dtype matches)
    t = oxmera.tensor([1.0])
    assert oxmera.as_tensor(t) is t
    assert oxmera.as_tensor(t, dtype=F64).dtype == F64
    # from_numpy keeps the dtype and the layout
    f = np.asfortranarray(np.ones((2, 3), np.float16))
    assert oxmera.from_numpy(f).dtype == F16
    assert np.shares_memory(oxmera.from_numpy(f).numpy(), f)


def test_tensor_with_dtype_converts():
    _check(oxmera.tensor([1, 2], dtype=F64), [1, 2], F64)
    _check(oxmera.tensor([1.7, -1.7], dtype=I64), [1, -1], I64)
    _check(oxmera.tensor([1.0], dtype=np.float16), [1.0], F16)


FILLED = [
    ("zeros", lambda: oxmera.zeros(2, 3), np.zeros((2, 3)), F32),
    ("zeros-tuple", lambda: oxmera.zeros((2, 3)), np.zeros((2, 3)), F32),
    ("zeros-list", lambda: oxmera.zeros([4]), np.zeros(4), F32),
    ("zeros-0d", lambda: oxmera.zeros(()), np.zeros(()), F32),
    ("zeros-empty-args", lambda: oxmera.zeros(), np.zeros(()), F32),
    ("zeros-size-0", lambda: oxmera.zeros(0, 3), np.zeros((0, 3)), F32),
    ("ones", lambda: oxmera.ones(3), np.ones(3), F32),
    ("ones-int", lambda: oxmera.ones(2, dtype=I64), np.ones(2), I64),
    ("full-float", lambda: oxmera.full((2,), 1.5), np.full(2, 1.5), F32),
    ("full-int", lambda: oxmera.full((2, 2), 7), np.full((2, 2), 7), I64),
    ("full-bool", lambda: oxmera.full((2,), True), np.full(2, True), oxmera.bool),
    ("full-int-size", lambda: oxmera.full(3, 2), np.full(3, 2), I64),
    ("full-dtype", lambda: oxmera.full([2], 1, dtype=F64), np.full(2, 1.0), F64),
    ("eye", lambda: oxmera.eye(3), np.eye(3), F32),
    ("eye-rect", lambda: oxmera.eye(2, 3), np.eye(2, 3), F32),
    ("eye-int", lambda: oxmera.eye(2, dtype=I64), np.eye(2), I64),
    ("arange", lambda: oxmera.arange(4), np.arange(4), I64),
    ("arange-start-end", lambda: oxmera.arange(2, 7, 2), np.arange(2, 7, 2), I64),
    ("arange-negative-step", lambda: oxmera.arange(5, 0, -2), np.arange(5, 0, -2), I64),
    ("arange-float", lambda: oxmera.arange(0, 1, 0.25), np.arange(0, 1, 0.25), F32),
    ("arange-float-end", lambda: oxmera.arange(3.0), np.arange(3.0), F32),
    ("arange-dtype", lambda: oxmera.arange(3, dtype=F64), np.arange(3.0), F64),
    ("arange-numpy-int", lambda: oxmera.arange(np.int64(3)), np.arange(3), I64),
    ("arange-empty", lambda: oxmera.arange(3, 3), np.arange(3, 3), I64),
    ("linspace", lambda: oxmera.linspace(0, 1, 5), np.linspace(0, 1, 5), F32),
    ("linspace-1", lambda: oxmera.linspace(2, 3, 1), np.linspace(2, 3, 1), F32),
    ("linspace-0", lambda: oxmera.linspace(2, 3, 0), np.linspace(2, 3, 0), F32),
    ("linspace-dtype", lambda: oxmera.linspace(0, 10, 3, dtype=F64), np.linspace(0, 10, 3), F64),
]


@pytest.mark.parametrize("name, make, expected, dtype", FILLED, ids=[f[0] for f in FILLED])
def test_filled_and_ranges_match_numpy(name, make, expected, dtype):
    _check(make(), expected, dtype)


@pytest.mark.parametrize("source", [oxmera.tensor([1, 2]), oxmera.ones(2, 3, dtype=F64),
                                    np.zeros((2,), np.float16)], ids=["int", "f64", "ndarray"])
def test_like_functions_keep_shape_and_dtype(source):
    shape, dtype = np.shape(source), np.asarray(source).dtype
    _check(oxmera.zeros_like(source), np.zeros(shape), dtype)
    _check(oxmera.ones_like(source), np.ones(shape), dtype)
    _check(oxmera.full_like(source, 3), np.full(shape, 3), dtype)
    empty = oxmera.empty_like(source)
    assert empty.shape == shape and empty.dtype == dtype
    assert oxmera.zeros_like(source, dtype=F64).dtype == F64


def test_empty():
    t = oxmera.empty(2, 3)
    assert t.shape == (2, 3) and t.dtype == F32
    assert oxmera.empty(2, dtype=I64).dtype == I64


def test_requires_grad_argument():
    for t in (oxmera.tensor([1.0], requires_grad=True), oxmera.zeros(2, requires_grad=True),
              oxmera.ones(2, requires_grad=True), oxmera.full((2,), 1.0, requires_grad=True),
              oxmera.eye(2, requires_grad=True), oxmera.arange(3.0, requires_grad=True),
              oxmera.linspace(0, 1, 3, requires_grad=True), oxmera.rand(2, requires_grad=True),
              oxmera.randn(2, requires_grad=True), oxmera.zeros_like(oxmera.ones(2),
                                                                     requires_grad=True)):
        assert t.requires_grad and t.is_leaf and t.grad_fn is None
    assert not oxmera.zeros(2).requires_grad


@pytest.mark.parametrize("make", [
    lambda: oxmera.tensor([1], requires_grad=True),
    lambda: oxmera.zeros(2, dtype=I64, requires_grad=True),
    lambda: oxmera.arange(3, requires_grad=True),
    lambda: oxmera.full((2,), True, requires_grad=True),
    lambda: oxmera.randint(0, 3, (2,), requires_grad=True),
], ids=["tensor", "zeros", "arange", "full-bool", "randint"])
def test_only_floating_tensors_may_require_grad(make):
    with pytest.raises(RuntimeError, match="floating point"):
        make()


def test_default_dtype_governs_python_floats():
    oxmera.set_default_dtype(F64)
    try:
        assert oxmera.get_default_dtype() == F64
        assert oxmera.tensor([1.0]).dtype == F64
        assert oxmera.zeros(2).dtype == F64
        assert oxmera.arange(0.0, 1.0, 0.5).dtype == F64
        assert oxmera.linspace(0, 1, 3).dtype == F64
        assert oxmera.rand(2).dtype == F64
        assert (oxmera.tensor([1, 2]) * 1.5).dtype == F64
        assert (oxmera.tensor([1, 2]) / 2).dtype == F64
        # a Python float still does not upcast a float32 tensor
        assert (oxmera.ones(2, dtype=F32) * 1.5).dtype == F32
        assert oxmera.tensor([1]).dtype == I64
    finally:
        oxmera.set_default_dtype(F32)
    assert oxmera.tensor([1.0]).dtype == F32


def test_default_dtype_must_be_floating():
    with pytest.raises(TypeError, match="floating"):
        oxmera.set_default_dtype(I64)
    assert oxmera.get_default_dtype() == F32


# -- random ------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: oxmera.rand(3, 2), lambda: oxmera.randn(4), lambda: oxmera.randint(0, 10, (5,)),
    lambda: oxmera.normal(0.0, 2.0, size=(3,))], ids=["rand", "randn", "randint", "normal"])
def test_manual_seed_makes_random_tensors_reproducible(make):
    oxmera.manual_seed(123)
    first = make().numpy()
    oxmera.manual_seed(123)
    np.testing.assert_array_equal(make().numpy(), first)


def test_random_ranges_and_dtypes():
    oxmera.manual_seed(0)
    u = oxmera.rand(1000)
    assert u.dtype == F32 and 0.0 <= u.numpy().min() and u.numpy().max() < 1.0
    assert oxmera.rand(2, dtype=F64).dtype == F64
    assert oxmera.randn(()).shape == ()
    r = oxmera.randint(2, 5, (1000,))
    assert r.dtype == I64 and set(np.unique(r.numpy())) == {2, 3, 4}
    assert oxmera.randint(5, (3,)).numpy().max() < 5
    assert oxmera.randint(0, 5, size=(4,)).shape == (4,)
    n = oxmera.normal(oxmera.tensor([0.0, 100.0]), 0.1)
    assert n.shape == (2,) and abs(n.numpy()[1] - 100) < 1


@pytest.mark.parametrize("make, error", [
    (lambda: oxmera.zeros(-1), RuntimeError),
    (lambda: oxmera.ones(2, -3), RuntimeError),
    (lambda: oxmera.zeros(2.5), TypeError),
    (lambda: oxmera.full((2.0,), 1), TypeError),
    (lambda: oxmera.arange(0, 1, 0), ValueError),
    (lambda: oxmera.linspace(0, 1, -1), ValueError),
    (lambda: oxmera.rand(2, dtype=I64), NotImplementedError),
    (lambda: oxmera.normal(0.0, -1.0, size=(2,)), RuntimeError),
    (lambda: oxmera.randint(5), TypeError),
    (lambda: oxmera.from_numpy([1.0]), TypeError),
    (lambda: oxmera.from_numpy(np.zeros(2, "M8[s]")), TypeError),
    (lambda: oxmera.tensor("abc"), TypeError),
    (lambda: oxmera.tensor([[1], [1, 2]]), TypeError),
    (lambda: oxmera.tensor([1.0], dtype=np.dtype("M8[s]")), TypeError),
], ids=["zeros-negative", "ones-negative", "zeros-float", "full-float-size", "arange-step-0",
        "linspace-negative", "rand-int", "normal-negative-std", "randint-no-size",
        "from_numpy-list", "from_numpy-datetime", "tensor-str", "tensor-ragged", "datetime-dtype"])
def test_bad_arguments(make, error):
    with pytest.raises(error):
        make()
