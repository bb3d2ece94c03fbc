"""Elementwise ops: forward values and dtypes against NumPy (with PyTorch's
promotion rules), operators, comparisons, special values, errors, and a
property test of broadcasting gradients.

First and second order gradients of every op are in ``test_gradients.py``
(cases in ``_cases.py``).
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import oxmera
from oxmera.autograd import gradcheck

from ._cases import BROADCAST_PAIRS, sample
from ._helpers import leaf, unchanged

F16, F32, F64 = oxmera.float16, oxmera.float32, oxmera.float64
I8, I32, I64, U8, BOOL = oxmera.int8, oxmera.int32, oxmera.int64, oxmera.uint8, oxmera.bool


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


#: name -> (oxmera function, NumPy reference, input domain, result kind):
#: "float" ops give the default float dtype for integer/bool input, "same"
#: ops keep the input's dtype.
UNARY = {
    "neg": (oxmera.neg, np.negative, "real", "same"),
    "abs": (oxmera.abs, np.abs, "real", "same"),
    "sign": (oxmera.sign, np.sign, "real", "same"),
    "relu": (oxmera.relu, lambda x: np.maximum(x, 0), "real", "same"),
    "exp": (oxmera.exp, np.exp, "real", "float"),
    "log": (oxmera.log, np.log, "positive", "float"),
    "sqrt": (oxmera.sqrt, np.sqrt, "positive", "float"),
    "sin": (oxmera.sin, np.sin, "real", "float"),
    "cos": (oxmera.cos, np.cos, "real", "float"),
    "tanh": (oxmera.tanh, np.tanh, "real", "float"),
    "sigmoid": (oxmera.sigmoid, _sigmoid, "real", "float"),
}

RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-12}


def _values(domain, shape, dtype, seed=0):
    """Values of ``domain`` as ``dtype`` (integers: small, in the domain too)."""
    rng = np.random.default_rng(seed)
    values = sample(domain, shape, rng)
    if np.dtype(dtype).kind in "iu":
        values = np.ceil(np.abs(values) * 2) * (np.sign(values) if domain == "real" else 1)
    return values.astype(dtype)


def _assert_matches(result, expected, dtype):
    assert isinstance(result, oxmera.Tensor)
    assert result.dtype == np.dtype(dtype), f"dtype {result.dtype}, expected {np.dtype(dtype)}"
    assert result.shape == np.shape(expected)
    got = result.detach().numpy()
    if np.dtype(dtype).kind == "f":
        np.testing.assert_allclose(got, expected, rtol=RTOL[np.dtype(dtype)], atol=1e-30)
    else:
        np.testing.assert_array_equal(got, expected)


# -- unary ops -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [F16, F32, F64, I32, I64], ids=str)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (0, 3)], ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_numpy(name, shape, dtype):
    fn, reference, domain, kind = UNARY[name]
    values = _values(domain, shape, dtype)
    expected_dtype = np.dtype(dtype) if kind == "same" or dtype.kind == "f" else F32
    expected = reference(values.astype(np.float64)).astype(expected_dtype)
    _assert_matches(fn(oxmera.tensor(values)), expected, expected_dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_method_and_non_contiguous_input(name):
    fn, reference, domain, _ = UNARY[name]
    values = _values(domain, (4, 3), np.float64).T
    x = oxmera.from_numpy(values)
    assert not x.numpy().flags.c_contiguous
    _assert_matches(getattr(x, name)(), reference(values), F64)
    _assert_matches(fn(x), reference(values), F64)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid"])
def test_float_ops_on_bool_give_default_float(name):
    fn = UNARY[name][0]
    assert fn(oxmera.tensor([True, False])).dtype == F32
    oxmera.set_default_dtype(F64)
    try:
        assert fn(oxmera.tensor([1, 2])).dtype == F64
    finally:
        oxmera.set_default_dtype(F32)


def test_exp_of_int_is_float32():
    result = oxmera.exp(oxmera.tensor([0, 1, 2]))
    _assert_matches(result, np.exp([0.0, 1.0, 2.0]).astype(np.float32), F32)


def test_sigmoid_is_stable_for_large_inputs():
    values = [-1e4, -50.0, 0.0, 50.0, 1e4]
    expected = [0.0, np.exp(-50.0) / (1 + np.exp(-50.0)), 0.5, 1 / (1 + np.exp(-50.0)), 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in (F16, F32, F64):
            out = oxmera.sigmoid(oxmera.tensor(values, dtype=dtype))
            assert out.dtype == dtype
            np.testing.assert_allclose(out.numpy(), np.array(expected, dtype),
                                       rtol=RTOL[np.dtype(dtype)], atol=0)


def test_sigmoid_gradient_does_not_vanish_to_nan_at_extremes():
    x = leaf([-800.0, 800.0])
    oxmera.sigmoid(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_log_and_sqrt_outside_domain_give_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = oxmera.tensor([-1.0, 0.0, 4.0])
        np.testing.assert_array_equal(oxmera.log(x).numpy(),
                                      np.array([np.nan, -np.inf, np.log(4.0)], np.float32))
        np.testing.assert_array_equal(oxmera.sqrt(x).numpy(), [np.nan, 0.0, 2.0])


@pytest.mark.parametrize("name", ["abs", "relu", "sign"])
def test_kinks_get_zero_gradient(name):
    # At 0 the subgradient PyTorch picks is 0 for abs (sign(0)), relu and sign.
    x = leaf([-2.0, 0.0, 3.0])
    getattr(oxmera, name)(x).sum().backward()
    expected = {"abs": [-1.0, 0.0, 1.0], "relu": [0.0, 0.0, 1.0], "sign": [0.0, 0.0, 0.0]}
    np.testing.assert_array_equal(x.grad.numpy(), expected[name])


def test_sign_of_bool_is_bool():
    _assert_matches(oxmera.sign(oxmera.tensor([True, False])), np.array([True, False]), BOOL)


@pytest.mark.parametrize("name", ["neg", "relu"])
def test_bool_input_is_rejected(name):
    with pytest.raises(TypeError, match=name):
        getattr(oxmera, name)(oxmera.tensor([True, False]))


# -- binary arithmetic ---------------------------------------------------------------------

#: name -> (oxmera function, NumPy reference, domain of the left and right operands)
BINARY = {
    "add": (oxmera.add, np.add, "real", "real"),
    "sub": (oxmera.sub, np.subtract, "real", "real"),
    "mul": (oxmera.mul, np.multiply, "real", "real"),
    "div": (oxmera.div, np.true_divide, "real", "real"),
    "true_divide": (oxmera.true_divide, np.true_divide, "real", "real"),
    "pow": (oxmera.pow, np.power, "positive", "real"),
}

OPERATORS = {
    "add": (lambda a, b: a + b),
    "sub": (lambda a, b: a - b),
    "mul": (lambda a, b: a * b),
    "div": (lambda a, b: a / b),
    "pow": (lambda a, b: a ** b),
    "matmul": (lambda a, b: a @ b),
}


@pytest.mark.parametrize("dtype", [F32, F64], ids=str)
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_numpy(name, shapes, dtype):
    fn, reference, left, right = BINARY[name]
    a = _values(left, shapes[0], dtype, seed=1)
    b = _values(right, shapes[1], dtype, seed=2)
    expected = reference(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
    _assert_matches(fn(oxmera.tensor(a), oxmera.tensor(b)), expected, dtype)
    _assert_matches(getattr(oxmera.tensor(a), "div" if name == "true_divide" else name)(
        oxmera.tensor(b)), expected, dtype)


@pytest.mark.parametrize("name", sorted(set(BINARY) - {"true_divide"}))
def test_operators_with_numbers_arrays_and_tensors_on_either_side(name):
    fn, reference, left, right = BINARY[name]
    operator = OPERATORS[name]
    a = _values(left, (2, 3), np.float64, seed=3)
    b = _values(right, (2, 3), np.float64, seed=4)
    left_number, right_number = float(a[0, 0]), float(b[0, 0])
    ta, tb = oxmera.tensor(a), oxmera.tensor(b)
    _assert_matches(operator(ta, tb), reference(a, b), F64)
    _assert_matches(operator(ta, b), reference(a, b), F64)
    _assert_matches(operator(a, tb), reference(a, b), F64)
    _assert_matches(operator(ta, right_number), reference(a, right_number), F64)
    _assert_matches(operator(left_number, tb), reference(left_number, b), F64)
    _assert_matches(fn(left_number, right_number),
                    np.asarray(reference(left_number, right_number), np.float32), F32)


def test_integer_operators_stay_integer():
    a = oxmera.tensor([[1, 2, 3], [4, 5, 6]])
    _assert_matches(a + 1, np.array([[2, 3, 4], [5, 6, 7]]), I64)
    _assert_matches(2 - a, 2 - a.numpy(), I64)
    _assert_matches(a * a, a.numpy() ** 2, I64)
    _assert_matches(a ** 2, a.numpy() ** 2, I64)
    _assert_matches(2 ** a, 2 ** a.numpy(), I64)
    _assert_matches(-a, -a.numpy(), I64)
    _assert_matches(abs(-a), a.numpy(), I64)


def _vec(dtype):
    return oxmera.tensor([1, 2, 3], dtype=dtype)


def _0d(dtype):
    return oxmera.tensor(2, dtype=dtype)


# (left, right, result dtype of add/sub/mul) as PyTorch gives them: the
# category (bool < int < float) is the highest among the operands, but within
# a category tensors with dims win over 0-d tensors, and those over numbers.
PROMOTIONS = [
    (lambda: _vec(I64), lambda: 1.5, F32),
    (lambda: 1.5, lambda: _vec(I64), F32),
    (lambda: _vec(I32), lambda: 2, I32),
    (lambda: _vec(I32), lambda: _0d(I64), I32),
    (lambda: _vec(I32), lambda: _vec(I64), I64),
    (lambda: _vec(U8), lambda: _vec(I8), oxmera.int16),
    (lambda: _vec(F32), lambda: _0d(F64), F32),
    (lambda: _0d(F64), lambda: _vec(F32), F32),
    (lambda: _vec(F32), lambda: _vec(F64), F64),
    (lambda: _vec(F16), lambda: _vec(F32), F32),
    (lambda: _vec(F16), lambda: 2.5, F16),
    (lambda: _vec(I64), lambda: _0d(F16), F16),
    (lambda: _vec(I64), lambda: _0d(F64), F64),
    (lambda: _vec(BOOL), lambda: 2, I64),
    (lambda: _vec(BOOL), lambda: 2.5, F32),
    (lambda: _vec(F64), lambda: 2.5, F64),
    (lambda: 2, lambda: _vec(F32), F32),
    (lambda: _0d(I64), lambda: 2.5, F32),
    (lambda: _0d(F64), lambda: 1, F64),
    (lambda: _0d(I32), lambda: _0d(I64), I64),
    (lambda: 2, lambda: 3, I64),
    (lambda: 2.0, lambda: 3, F32),
    (lambda: np.arange(3, dtype=np.float64), lambda: _vec(F32), F64),
]


@pytest.mark.parametrize("left, right, dtype", PROMOTIONS)
@pytest.mark.parametrize("name", ["add", "sub", "mul"])
def test_promotion_follows_pytorch(name, left, right, dtype):
    fn, reference = BINARY[name][:2]
    a, b = left(), right()
    expected = reference(np.asarray(a, np.float64), np.asarray(b, np.float64)).astype(dtype)
    _assert_matches(fn(a, b), expected, dtype)


@pytest.mark.parametrize("left, right, dtype", [
    (lambda: _vec(I64), lambda: _vec(I64), F32),
    (lambda: _vec(I64), lambda: 2, F32),
    (lambda: 1, lambda: _vec(I32), F32),
    (lambda: _vec(BOOL), lambda: _vec(BOOL), F32),
    (lambda: _vec(F64), lambda: 2, F64),
    (lambda: _vec(F16), lambda: 2, F16),
    (lambda: _vec(F32), lambda: _0d(F64), F32),
    (lambda: _vec(I64), lambda: _0d(F64), F64),
    (lambda: 1, lambda: 2, F32),
])
def test_division_promotes_integers_to_float(left, right, dtype):
    a, b = left(), right()
    expected = np.true_divide(np.asarray(a, np.float64), np.asarray(b, np.float64))
    _assert_matches(oxmera.div(a, b), expected.astype(dtype), dtype)
    if isinstance(a, oxmera.Tensor) or isinstance(b, oxmera.Tensor):
        _assert_matches(a / b, expected.astype(dtype), dtype)


def test_int_divided_by_int_is_float32():
    _assert_matches(oxmera.tensor([1, 2, 3]) / oxmera.tensor([2, 2, 2]),
                    np.array([0.5, 1.0, 1.5], np.float32), F32)


@pytest.mark.parametrize("left, right, dtype", [
    (lambda: _vec(I64), lambda: 2, I64),
    (lambda: _vec(I64), lambda: 0.5, F32),
    (lambda: 2, lambda: _vec(F32), F32),
    (lambda: 2.5, lambda: _vec(I64), F32),
    (lambda: _vec(I32), lambda: _0d(I64), I32),
    (lambda: _vec(F32), lambda: _vec(F64), F64),
])
def test_pow_promotion(left, right, dtype):
    a, b = left(), right()
    expected = np.power(np.asarray(a, np.float64), np.asarray(b, np.float64))
    _assert_matches(oxmera.pow(a, b), expected.astype(dtype), dtype)


def test_python_float_does_not_upcast_float32():
    x = oxmera.tensor([1.0, 2.0])
    for result in (x + 0.1, 0.1 + x, x * 1e-3, x / 3.0, 3.0 / x, x ** 2.0, 2.0 ** x, x - 0.5):
        assert result.dtype == F32


def test_numpy_float64_scalar_acts_like_a_python_float():
    # numpy.float64 subclasses float; NumPy 2 would let it upcast float32.
    x = oxmera.tensor([1.0, 2.0])
    for result in (x * np.float64(2.0), np.float64(2.0) + x, x ** np.float64(2.0),
                   oxmera.div(x, np.float64(4.0))):
        assert result.dtype == F32
    y = oxmera.tensor([1.0, 2.0], requires_grad=True)
    (y ** np.float64(2.0)).sum().backward()
    assert y.grad.dtype == F32
    np.testing.assert_array_equal(y.grad.numpy(), [2.0, 4.0])


def test_numpy_scalars_of_other_types_act_like_python_numbers():
    x = oxmera.tensor([1.0, 2.0])
    assert (x * np.float32(2.0)).dtype == F32
    assert (x * np.int64(2)).dtype == F32
    assert (oxmera.tensor([1, 2]) * np.int32(2)).dtype == I64


@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha(name):
    fn, reference = BINARY[name][:2]
    a = np.array([1.0, 2.0], np.float32)
    b = np.array([0.5, -1.5], np.float32)
    _assert_matches(fn(oxmera.tensor(a), oxmera.tensor(b), alpha=2), reference(a, 2 * b), F32)
    _assert_matches(fn(oxmera.tensor(a), oxmera.tensor(b), alpha=0.5), reference(a, 0.5 * b), F32)
    _assert_matches(fn(oxmera.tensor(a), 3.0, alpha=2), reference(a, 6.0), F32)
    _assert_matches(fn(oxmera.tensor(a), 3, alpha=0.5), reference(a, 1.5), F32)
    _assert_matches(fn(2.0, oxmera.tensor(b), alpha=-1), reference(2.0, -b), F32)
    ints = oxmera.tensor([1, 2])
    _assert_matches(fn(ints, oxmera.tensor([3, 4]), alpha=2), reference([1, 2], [6, 8]), I64)
    _assert_matches(fn(ints, 3, alpha=2), reference([1, 2], 6), I64)
    with pytest.raises(TypeError, match="alpha"):
        fn(ints, oxmera.tensor([3, 4]), alpha=0.5)


@pytest.mark.parametrize("name", ["add", "sub"])
def test_alpha_gradient(name):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    getattr(oxmera, name)(x, y, alpha=-2.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), [-2.5, -2.5] if name == "add" else [2.5, 2.5])


def test_sub_of_bools_is_rejected():
    with pytest.raises(TypeError, match="logical_xor"):
        oxmera.tensor([True]) - oxmera.tensor([False])


def test_division_by_zero_gives_inf_and_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = oxmera.tensor([1.0, -1.0, 0.0]) / 0.0
        np.testing.assert_array_equal(out.numpy(), [np.inf, -np.inf, np.nan])
        out = oxmera.tensor([1, 0]) / oxmera.tensor([0, 0])
        np.testing.assert_array_equal(out.numpy(), [np.inf, np.nan])


def test_pow_gradients_at_zero_base():
    # d/dx x**y at x=0 is 0 for y > 1 and for y == 0 (where x**(y-1) is inf),
    # and d/dy x**y at x=0 is taken as 0 (the limit for positive y).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = leaf([0.0, 0.0, 0.0])
        y = leaf([0.0, 2.0, 3.0])
        (x ** y).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])
        np.testing.assert_array_equal(y.grad.numpy(), [0.0, 0.0, 0.0])
        x = leaf([0.0, 1.0])
        (x ** 0).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_pow_with_number_base_has_exact_exponent_gradient():
    # The gradient with respect to the exponent of ``b ** y`` is
    # ``b ** y * log(b)``; with a Python number ``b`` the log must not be
    # taken in float32.
    y = leaf([0.5, 1.3, -2.0])
    (2.0 ** y).sum().backward()
    values = y.detach().numpy()
    np.testing.assert_allclose(y.grad.numpy(), 2.0 ** values * np.log(2.0), rtol=1e-14)
    z = leaf([0.5, 1.5])
    (0 ** z).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("base", [lambda: oxmera.arange(1, 4), lambda: np.arange(1, 4)],
                         ids=["int-tensor", "int-ndarray"])
def test_pow_with_integer_base_has_exact_exponent_gradient(base):
    y = leaf([0.5, 1.5, 2.5])
    out = base() ** y
    assert out.dtype == F64
    out.sum().backward()
    values = np.arange(1.0, 4.0) ** y.detach().numpy() * np.log(np.arange(1.0, 4.0))
    np.testing.assert_allclose(y.grad.numpy(), values, rtol=1e-14)


def test_pow_of_integers_to_negative_powers_is_an_error():
    with pytest.raises(ValueError, match="pow"):
        oxmera.tensor([1, 2]) ** -1


# -- comparisons ---------------------------------------------------------------------------

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
               "gt": np.greater, "ge": np.greater_equal}
COMPARISON_OPERATORS = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
                        "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
                        "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_match_numpy_and_give_bool(name):
    reference = COMPARISONS[name]
    fn, operator = getattr(oxmera, name), COMPARISON_OPERATORS[name]
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    b = np.array([2.0, 2.0, 2.0])
    for left, right in [(a, b), (a, 2.0), (a.astype(np.int64), 1.5), (a, b.astype(np.int32)),
                        (a.astype(np.float32), np.float64(2.0))]:
        expected = reference(left, right)
        tl = oxmera.tensor(left)
        tr = oxmera.tensor(right) if isinstance(right, np.ndarray) else right
        _assert_matches(fn(tl, tr), expected, BOOL)
        _assert_matches(operator(tl, tr), expected, BOOL)
        _assert_matches(getattr(tl, name)(tr), expected, BOOL)
    # reflected: a number on the left
    _assert_matches(operator(2.0, oxmera.tensor(a)), reference(2.0, a), BOOL)


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_comparisons_never_record(name):
    x, y = leaf([1.0, 2.0, 3.0]), leaf([2.0, 2.0, 2.0])
    for out in (getattr(oxmera, name)(x, y), COMPARISON_OPERATORS[name](x, y),
                getattr(oxmera, name)(x * 2, 1.0)):
        assert out.dtype == BOOL
        assert not out.requires_grad
        assert out.grad_fn is None


def test_comparison_with_unrelated_types_falls_back_to_python():
    x = oxmera.tensor([1.0])
    assert (x == None) is False  # noqa: E711 -- the operator is what is tested
    assert (x != "text") is True
    assert x is not None


# -- where -------------------------------------------------------------------------------------

def test_where_matches_numpy():
    condition = np.array([[True, False, True], [False, False, True]])
    a = np.arange(6.0).reshape(2, 3)
    b = -np.arange(3.0)
    out = oxmera.where(oxmera.tensor(condition), oxmera.tensor(a), oxmera.tensor(b))
    _assert_matches(out, np.where(condition, a, b), F64)
    _assert_matches(oxmera.where(oxmera.tensor(condition), oxmera.tensor(a), 0.0),
                    np.where(condition, a, 0.0), F64)
    _assert_matches(oxmera.where(condition[0], 7.0, oxmera.tensor(b)),
                    np.where(condition[0], 7.0, b), F64)


@pytest.mark.parametrize("input, other, dtype", [
    (lambda: _vec(I64), lambda: 1.5, F32),
    (lambda: _vec(F32), lambda: _vec(F64), F64),
    (lambda: _vec(F32), lambda: _0d(F64), F32),
    (lambda: _vec(I32), lambda: 5, I32),
    (lambda: 1, lambda: 2, I64),
    (lambda: 1.0, lambda: 2.0, F32),
])
def test_where_promotion(input, other, dtype):
    condition = oxmera.tensor([True, False, True])
    a, b = input(), other()
    expected = np.where(condition.numpy(), np.asarray(a, np.float64), np.asarray(b, np.float64))
    _assert_matches(oxmera.where(condition, a, b), expected.astype(dtype), dtype)


def test_where_gradient_goes_to_the_chosen_side():
    condition = oxmera.tensor([True, False, True])
    x, y = leaf([1.0, 2.0, 3.0]), leaf(5.0)
    oxmera.where(condition, x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), 1.0)


# -- gradients: dtype, and broadcasting as a property ------------------------------------------

@pytest.mark.parametrize("name, fn, inputs, expected", [
    ("where", lambda x, y: oxmera.where(oxmera.tensor([True, False]), x, y),
     ([1.0, 2.0], [3.0, 4.0]), ([np.inf, 0.0], [0.0, np.inf])),
    ("relu", oxmera.relu, ([-1.0, 2.0],), ([0.0, np.inf],)),
    ("sign", oxmera.sign, ([-1.0, 2.0],), ([0.0, 0.0],)),
    ("pow-0", lambda x: x ** 0, ([-1.0, 2.0],), ([0.0, 0.0],)),
    ("max", lambda x: x.max(0).values.expand(2), ([5.0, 2.0],), ([np.inf, 0.0],)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_infinite_incoming_gradient_gives_exact_zeros_where_flat(name, fn, inputs, expected):
    # Masking by multiplication would turn inf * 0 into nan; PyTorch selects.
    leaves = [leaf(v) for v in inputs]
    out = fn(*leaves)
    grads = oxmera.autograd.grad(out, leaves, grad_outputs=oxmera.full(out.shape, np.inf,
                                                                       dtype=F64))
    for g, e in zip(grads, expected):
        np.testing.assert_array_equal(g.numpy(), e)


def test_gradients_have_the_inputs_dtypes():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)                  # float32
    y = oxmera.tensor([3.0, 4.0], dtype=F64, requires_grad=True)
    z = oxmera.tensor(2.0, dtype=F16, requires_grad=True)
    (x * y + z).sum().backward()
    assert (x.grad.dtype, y.grad.dtype, z.grad.dtype) == (F32, F64, F16)
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(z.grad.numpy(), 2.0)


def test_int_tensor_times_float_leaf():
    x = leaf([1.0, 2.0])
    (oxmera.tensor([3, 4]) * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])


_BROADCAST_OPS = {
    "add": (oxmera.add, "real", "real"),
    "sub": (oxmera.sub, "real", "real"),
    "mul": (oxmera.mul, "real", "real"),
    "div": (oxmera.div, "real", "real"),
    "pow": (oxmera.pow, "positive", "real"),
    "where": (lambda a, b: oxmera.where(a > b, a, b), "distinct", "distinct"),
    "maximum": (oxmera.maximum, "distinct", "distinct"),
    "minimum": (oxmera.minimum, "distinct", "distinct"),
    "remainder": (oxmera.remainder, "real", "real"),
    "atan2": (oxmera.atan2, "real", "real"),
    "hypot": (oxmera.hypot, "real", "real"),
    "logaddexp": (oxmera.logaddexp, "real", "real"),
    "lerp": (lambda a, b: oxmera.lerp(a, b, 0.3), "real", "real"),
    "lerp-weight": (lambda a, w: oxmera.lerp(a, 2.0, w), "real", "real"),
    "clamp-min": (lambda a, b: oxmera.clamp(a, min=b), "distinct", "distinct"),
    "clamp-max": (lambda a, b: a.clamp(max=b), "distinct", "distinct"),
}


@settings(max_examples=80, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                            min_side=0, max_side=3),
       name=st.sampled_from(sorted(_BROADCAST_OPS)),
       seed=st.integers(0, 2 ** 32 - 1))
def test_broadcast_gradients_have_input_shapes_and_match_finite_differences(shapes, name, seed):
    fn, left, right = _BROADCAST_OPS[name]
    rng = np.random.default_rng(seed)
    a_shape, b_shape = shapes.input_shapes
    a = oxmera.from_numpy(sample(left, a_shape, rng)).requires_grad_()
    # Offset so that no element of b ties with one of a (a kink of where,
    # maximum, minimum and clamp).
    offset = 0.05 if right == "distinct" else 0.0
    b = oxmera.from_numpy(np.asarray(sample(right, b_shape, rng) + offset)).requires_grad_()
    out = fn(a, b)
    assert out.shape == shapes.result_shape
    weights = oxmera.from_numpy(rng.standard_normal(out.shape))
    ga, gb = oxmera.autograd.grad((out * weights).sum(), (a, b))
    assert ga.shape == a_shape and gb.shape == b_shape
    assert gradcheck(fn, (a, b))


# -- errors (SPEC §6) ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "pow", "where"])
def test_shape_mismatch_names_both_shapes_and_changes_nothing(name):
    x = leaf(np.ones((2, 3)))
    x.grad = oxmera.ones(2, 3, dtype=F64)
    base = leaf([1.0, 2.0, 3.0, 4.0])
    y = base * 2                                  # a non-leaf, with a graph
    if name == "where":
        def fn(a, b):
            return oxmera.where(oxmera.tensor(True), a, b)
    else:
        fn = getattr(oxmera, name)
    with unchanged(x, y, base):
        with pytest.raises(oxmera.OpError) as info:
            fn(x, y)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    message = str(info.value)
    assert "(2, 3)" in message and "(4,)" in message
    # the graph of y still works, and x's .grad is untouched by it
    y.sum().backward()
    np.testing.assert_array_equal(base.grad.numpy(), [2.0, 2.0, 2.0, 2.0])


def test_operator_shape_mismatch():
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        oxmera.ones(3) + oxmera.ones(2)


def test_unsupported_operand_is_a_type_error():
    x = leaf([1.0])
    with unchanged(x):
        with pytest.raises(TypeError):
            x + "text"
        with pytest.raises(TypeError):
            x * np.array(["a"])


def _outcome(fn):
    try:
        result = fn()
    except Exception as err:        # the same failure either way is the same outcome
        return ("raised", type(err))
    result = result[0] if isinstance(result, tuple) else result
    return ("ok", result.dtype, result.numpy().tobytes())     # bit for bit, nan included


_PROMOTING_BINARY = sorted(o.name for o in oxmera.ops._registry.list_ops()
                           if o.promotes and o.n_inputs == 2)


def _assert_cast_first(public, x, s, context):
    """``public`` of ``x`` and the 0-d ``s``, either way round, as of ``s`` cast first."""
    cast = s.to(x.dtype)
    with np.errstate(all="ignore"):
        assert _outcome(lambda: public(x, s)) == _outcome(lambda: public(x, cast)), context
        assert _outcome(lambda: public(s, x)) == _outcome(lambda: public(cast, x)), context


@pytest.mark.parametrize("name", _PROMOTING_BINARY)
def test_a_0d_operand_of_another_float_dtype_acts_as_cast_first(name):
    # The core passes such an operand to NumPy as a Python number (weakly
    # typed) instead of casting it in the op's prepare step: the outcome must
    # be the cast's, bit for bit, for every promoting op, in either position.
    public = next(o.public for o in oxmera.ops._registry.list_ops() if o.name == name)
    for dtype in (F16, F32, F64):
        x = oxmera.tensor([0.5, 1.5, 2.5, 1e4], dtype=dtype)
        for other in (F16, F32, F64):
            if other == dtype:
                continue
            for value in (0.1, 3.0, 0.5, 2.0, -1.0, 1e300 if other == F64 else 6e4):
                s = oxmera.tensor(value, dtype=other)
                _assert_cast_first(public, x, s, (dtype, other, value))


@pytest.mark.parametrize("name", _PROMOTING_BINARY)
def test_a_0d_integer_or_bool_operand_acts_as_cast_first(name):
    # The same for a 0-d integer or bool operand (``x * 2`` saves 2, which its
    # VJP gets as a 0-d int64 tensor), values exact in the float dtype passed
    # as numbers, the rest (beyond 2**11, 2**24, 2**53) left to the cast.
    public = next(o.public for o in oxmera.ops._registry.list_ops() if o.name == name)
    # A polynomial's second operand is its degree, and the recurrence takes
    # one step per degree (as PyTorch's does off [-1, 1]): 2**24 + 1 steps
    # would take minutes, so a degree stops at 2**11 + 1.
    largest = 2049 if "polynomial" in name else 16777217
    for dtype in (F16, F32, F64):
        x = oxmera.tensor([0.5, 1.5, 2.5, 100.0], dtype=dtype)
        for other, values in ((np.int64, (0, 2, -3, 2048, 2049, largest)),
                              (np.int32, (1, -7)), (np.uint8, (0, 255)),
                              (np.bool_, (True, False))):
            for value in values:
                s = oxmera.tensor(np.array(value, dtype=other))
                _assert_cast_first(public, x, s, (dtype, other, value))


@pytest.mark.parametrize("expression, slope", [
    (lambda x: x * 3, lambda x: np.full_like(x, 3)),
    (lambda x: x / 2, lambda x: np.full_like(x, 0.5)),
    # pow's VJP: pow_backward on the saved 0-d int64 exponent (no dtype step)
    (lambda x: x ** 2, lambda x: 2 * x),
    (lambda x: x ** 3, lambda x: 3 * x * x),
    # where's VJP: where(condition, grad, 0.0), its dtype without the walk
    (lambda x: oxmera.where(x > 1.0, x * 3, 0.0), lambda x: np.where(x > 1, 3.0, 0.0)),
], ids=["mul", "div", "square", "cube", "where"])
def test_a_number_operands_backward_takes_no_dtype_step(expression, slope):
    # ``x * 2``'s VJP multiplies by a 0-d int64 tensor: the core hands NumPy a
    # number instead of running the op's Python dtype step (the slow path),
    # and no op in these VJPs walks PyTorch's promotion rules (_promote).
    from oxmera.ops import _utils
    calls = []
    originals = {name: getattr(_utils, name) for name in ("result_type", "_promote")}

    def counting(name):
        def call(*operands):
            calls.append((name, operands))
            return originals[name](*operands)
        return call

    x = oxmera.tensor([0.5, 1.5], dtype=F32, requires_grad=True)
    for name in originals:
        setattr(_utils, name, counting(name))
    try:
        expression(x).sum().backward()
    finally:
        for name, original in originals.items():
            setattr(_utils, name, original)
    assert calls == []
    np.testing.assert_array_equal(x.grad.numpy(), slope(x.detach().numpy()))


_INTEGER_KEEPING = sorted(o.name for o in oxmera.ops._registry.list_ops()
                          if o.promotes and not o.float_only and o.n_inputs == 2)


@pytest.mark.parametrize("name", _INTEGER_KEEPING)
def test_one_integer_dtype_and_python_ints_skip_a_dtype_step_that_changes_nothing(name):
    # The core skips the dtype step for arrays of one integer dtype beside
    # Python ints and bools: the outcome must be the step's, bit for bit (or
    # the same error), with either operand first.
    opdef = next(o for o in oxmera.ops._registry.list_ops() if o.name == name)
    for dtype in (np.int64, np.int32, np.int8, np.uint8):
        for shape in ((), (3,)):
            a = np.arange(1, 4, dtype=dtype)[:1 if shape == () else 3].reshape(shape)
            for s in (0, 3, -2, 300, True, a):
                for pair in ((a, s), (s, a)):
                    with np.errstate(all="ignore"):
                        fast = _outcome(lambda: opdef.public(*[oxmera.tensor(v) if
                                                               isinstance(v, np.ndarray) else v
                                                               for v in pair]))
                        stepped = _outcome(lambda: oxmera.tensor(
                            opdef.forward(*opdef.prepare(list(pair)))))
                    if fast[0] == stepped[0] == "raised":
                        # (the public function may raise the error's oxmera subclass)
                        assert issubclass(fast[1], stepped[1]), (dtype, shape, s)
                    else:
                        assert fast == stepped, (dtype, shape, s, pair is (s, a))


_F16, _F32, _F64 = np.float16, np.float32, np.float64


@pytest.mark.parametrize("first, second, expected", [
    # result_type's shortcut (a float array beside a number or its own dtype)
    (np.zeros(2, _F32), 1.0, _F32), (np.zeros(2, _F32), 2, _F32),
    (np.zeros((), _F16), True, _F16), (np.zeros((), _F64), 1.5, _F64),
    (np.zeros(2, _F64), np.zeros((), _F64), _F64),
    # and the walk: complex numbers, integers, two float dtypes
    (np.zeros(2, _F32), 1j, np.complex64), (np.zeros(2, np.int64), 1.0, _F32),
    (np.zeros(2, _F32), np.zeros(2, _F64), _F64), (np.zeros(2, _F32), np.zeros((), _F64), _F32),
    (np.zeros(2, np.int32), 3, np.int32), (np.zeros((), np.int64), np.zeros(2, _F16), _F16),
])
def test_where_and_result_type_give_pytorchs_dtype(first, second, expected):
    from oxmera.ops._utils import result_type
    cond = oxmera.tensor(np.array([True, False]))
    for pair in ((first, second), (second, first)):
        assert result_type(*pair) == expected
        out = oxmera.where(cond, *[oxmera.tensor(v) if isinstance(v, np.ndarray) else v
                                   for v in pair])
        assert out.dtype == expected
