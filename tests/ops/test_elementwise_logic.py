"""Closeness, classification and logic ops: values against NumPy, dtypes (always
bool), broadcasting, methods, that they never record, and errors (SPEC §6).

The six comparisons (eq ... ge) are tested in ``test_elementwise.py``.
"""
import numpy as np
import pytest

import oxmera

from ._helpers import leaf, unchanged

F16, F32, F64 = oxmera.float16, oxmera.float32, oxmera.float64
I32, I64, U8, BOOL = oxmera.int32, oxmera.int64, oxmera.uint8, oxmera.bool


def _assert_bool(result, expected):
    assert isinstance(result, oxmera.Tensor)
    assert result.dtype == BOOL
    assert not result.requires_grad and result.grad_fn is None
    np.testing.assert_array_equal(result.numpy(), expected)


# -- isclose / allclose ---------------------------------------------------------------------

_A = np.array([1.0, 1.0, 100.0, np.inf, np.inf, np.nan, 0.0, -1e-9])
_B = np.array([1.0 + 1e-6, 1.1, 100.001, np.inf, -np.inf, np.nan, 1e-9, 1e-9])


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("rtol, atol, equal_nan", [
    (1e-05, 1e-08, False), (1e-05, 1e-08, True), (0.0, 0.0, False), (0.2, 0.0, False),
    (0.0, 1e-2, True)])
def test_isclose_matches_numpy(rtol, atol, equal_nan, dtype):
    a, b = _A.astype(dtype), _B.astype(dtype)
    expected = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    ta, tb = oxmera.tensor(a), oxmera.tensor(b)
    _assert_bool(oxmera.isclose(ta, tb, rtol, atol, equal_nan), expected)
    _assert_bool(ta.isclose(tb, rtol=rtol, atol=atol, equal_nan=equal_nan), expected)


def test_isclose_defaults_are_pytorchs():
    a = oxmera.tensor([1.0, 1.0, 0.0, np.nan], dtype=F64)
    b = oxmera.tensor([1.0 + 0.9e-5, 1.0 + 1.2e-5, 0.9e-8, np.nan], dtype=F64)
    _assert_bool(oxmera.isclose(a, b), [True, False, True, False])


def test_isclose_broadcasts_and_takes_numbers_and_other_dtypes():
    a = np.array([[1.0, 2.0, 3.0], [1.5, 2.5, 3.5]])
    _assert_bool(oxmera.isclose(oxmera.tensor(a), oxmera.tensor([1.0, 2.5, 3.5])),
                 np.isclose(a, [1.0, 2.5, 3.5]))
    _assert_bool(oxmera.isclose(oxmera.tensor(a), 2.0), np.isclose(a, 2.0))
    _assert_bool(oxmera.isclose(2.0, oxmera.tensor(a)), np.isclose(2.0, a))
    _assert_bool(oxmera.isclose(oxmera.tensor([1, 2, 3]), oxmera.tensor([1, 3, 3])),
                 [True, False, True])
    # unsigned integers: |3 - 5| is 2, not a wrapped-around 254
    _assert_bool(oxmera.isclose(oxmera.tensor([3, 5], dtype=U8), oxmera.tensor([5, 3], dtype=U8),
                                atol=2), [True, True])
    _assert_bool(oxmera.isclose(oxmera.tensor([True, False]), oxmera.tensor([True, True])),
                 [True, False])
    _assert_bool(oxmera.isclose(oxmera.tensor([1.0], dtype=F32), oxmera.tensor([1.0], dtype=F64)),
                 [True])


@pytest.mark.parametrize("rtol, atol", [(-1e-5, 1e-8), (1e-5, -1.0)])
def test_isclose_rejects_negative_tolerances(rtol, atol):
    x = leaf([1.0])
    with unchanged(x):
        with pytest.raises(ValueError, match=r"isclose.*non-negative"):
            oxmera.isclose(x, x, rtol=rtol, atol=atol)


def test_isclose_shape_mismatch_names_the_shapes():
    with pytest.raises(RuntimeError, match=r"isclose.*\(2,\).*\(3,\)"):
        oxmera.isclose(oxmera.ones(2), oxmera.ones(3))


def test_allclose_is_a_python_bool():
    a = oxmera.tensor([1.0, 2.0])
    for result, expected in [
            (oxmera.allclose(a, oxmera.tensor([1.0, 2.0 + 1e-7])), True),
            (oxmera.allclose(a, oxmera.tensor([1.0, 2.1])), False),
            (a.allclose(oxmera.tensor([1.0, 2.1]), atol=0.2), True),
            (oxmera.allclose(a, oxmera.tensor([[1.0, 2.0], [1.0, 2.0]])), True),
            (oxmera.allclose(oxmera.tensor([np.nan]), oxmera.tensor([np.nan])), False),
            (oxmera.allclose(oxmera.tensor([np.nan]), oxmera.tensor([np.nan]), equal_nan=True),
             True),
            (oxmera.allclose(oxmera.zeros(0), oxmera.zeros(0)), True)]:
        assert type(result) is bool and result is expected


def test_allclose_on_tensors_that_require_grad():
    x = leaf([1.0, 2.0])
    assert oxmera.allclose(x * 2, x + x) is True


# -- isnan / isinf / isfinite -----------------------------------------------------------------

_SPECIAL = np.array([0.0, -1.5, np.nan, np.inf, -np.inf, 3e38])   # 3e38: finite in float32
CLASSIFIERS = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=str)
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_classifiers_match_numpy(name, dtype):
    values = _SPECIAL.astype(dtype) if dtype != F16 else _SPECIAL[:5].astype(dtype)
    expected = CLASSIFIERS[name](values)
    x = oxmera.tensor(values)
    _assert_bool(getattr(oxmera, name)(x), expected)
    _assert_bool(getattr(x, name)(), expected)
    t = oxmera.from_numpy(np.stack([values, values]).T)       # non-contiguous
    _assert_bool(getattr(oxmera, name)(t), np.stack([expected, expected]).T)


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
@pytest.mark.parametrize("dtype", [I32, I64, U8, BOOL], ids=str)
def test_classifiers_on_integers_and_bools(name, dtype):
    x = oxmera.tensor([[1, 0, 1]], dtype=dtype)
    _assert_bool(getattr(oxmera, name)(x), np.full((1, 3), name == "isfinite"))


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_classifiers_of_0d_and_empty(name):
    _assert_bool(getattr(oxmera, name)(oxmera.tensor(np.nan)), CLASSIFIERS[name](np.nan))
    _assert_bool(getattr(oxmera, name)(oxmera.zeros(0, 2)), np.zeros((0, 2), bool))


# -- logical ops ------------------------------------------------------------------------------

LOGICAL = {"logical_and": np.logical_and, "logical_or": np.logical_or,
           "logical_xor": np.logical_xor}


@pytest.mark.parametrize("name", sorted(LOGICAL))
def test_logical_binary_ops_match_numpy(name):
    reference = LOGICAL[name]
    a = np.array([[0.0, 1.0, -2.0, np.nan], [0.0, 0.0, 3.0, 0.5]])
    b = np.array([0, 1, 0, 2])
    ta, tb = oxmera.tensor(a), oxmera.tensor(b)
    _assert_bool(getattr(oxmera, name)(ta, tb), reference(a, b))
    _assert_bool(getattr(ta, name)(tb), reference(a, b))
    _assert_bool(getattr(oxmera, name)(ta, True), reference(a, True))
    _assert_bool(getattr(oxmera, name)(0, tb), reference(0, b))
    _assert_bool(getattr(oxmera, name)(oxmera.tensor([True, False]), np.array([True, True])),
                 reference([True, False], [True, True]))
    _assert_bool(getattr(oxmera, name)(oxmera.zeros(0, 4), tb), np.zeros((0, 4), bool))


def test_logical_not_matches_numpy():
    values = np.array([0.0, -0.0, 1.0, np.nan, -3.0])
    _assert_bool(oxmera.logical_not(oxmera.tensor(values)), np.logical_not(values))
    _assert_bool(oxmera.tensor([0, 2]).logical_not(), [True, False])
    _assert_bool(oxmera.logical_not(oxmera.tensor(True)), False)


@pytest.mark.parametrize("name", sorted(LOGICAL))
def test_logical_shape_mismatch_names_the_op_and_shapes(name):
    x = leaf([1.0, 0.0])
    with unchanged(x):
        with pytest.raises(RuntimeError, match=rf"{name}.*\(2,\).*\(3,\)"):
            getattr(oxmera, name)(x, oxmera.ones(3))


@pytest.mark.parametrize("name", [*sorted(LOGICAL), "logical_not", "isclose", *CLASSIFIERS])
def test_never_records_even_when_grad_is_recorded(name):
    x = leaf([1.0, 0.0, 2.0])
    fn = getattr(oxmera, name)
    with oxmera.enable_grad():
        out = fn(x * x) if name in ("logical_not", *CLASSIFIERS) else fn(x * x, x)
    assert out.dtype == BOOL and out.grad_fn is None and not out.requires_grad
