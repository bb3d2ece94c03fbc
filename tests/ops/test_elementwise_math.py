"""The elementwise math ops beyond the four operations: forward values and dtypes
against NumPy / ``math`` closed forms, special values, stability, the gradients
PyTorch defines at ties, bounds and edges, and errors (SPEC §6).

First and second order gradients on random inputs are in ``test_gradients.py``
(cases in ``_cases_elementwise.py``); comparisons with PyTorch itself in
``test_torch.py``.
"""
import math
import warnings

import numpy as np
import pytest

import oxmera

from ._helpers import leaf, unchanged

F16, F32, F64 = oxmera.float16, oxmera.float32, oxmera.float64
I32, I64, U8, BOOL = oxmera.int32, oxmera.int64, oxmera.uint8, oxmera.bool

RTOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-12}


def _math(fn):
    """A ``math`` function applied elementwise, in float64."""
    return lambda x: np.vectorize(fn, otypes=[np.float64])(x)


def _values(domain, shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    low, high = {"real": (-2.0, 2.0), "positive": (0.5, 3.0), "unit": (-0.95, 0.95),
                 "tan": (-1.3, 1.3)}[domain]
    values = rng.uniform(low, high, shape)
    if np.dtype(dtype).kind in "iu":
        values = np.round(values)
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


# -- unary ops ------------------------------------------------------------------------------------

#: name -> (oxmera function, reference on float64, domain, result kind): "float"
#: ops give the default float dtype for integer input, "same" keep the dtype.
UNARY = {
    "reciprocal": (oxmera.reciprocal, lambda x: 1 / x, "positive", "float"),
    "rsqrt": (oxmera.rsqrt, lambda x: 1 / np.sqrt(x), "positive", "float"),
    "exp2": (oxmera.exp2, lambda x: 2.0 ** x, "real", "float"),
    "expm1": (oxmera.expm1, _math(math.expm1), "real", "float"),
    "log2": (oxmera.log2, _math(math.log2), "positive", "float"),
    "log10": (oxmera.log10, _math(math.log10), "positive", "float"),
    "log1p": (oxmera.log1p, _math(math.log1p), "positive", "float"),
    "tan": (oxmera.tan, _math(math.tan), "tan", "float"),
    "asin": (oxmera.asin, _math(math.asin), "unit", "float"),
    "acos": (oxmera.acos, _math(math.acos), "unit", "float"),
    "atan": (oxmera.atan, _math(math.atan), "real", "float"),
    "sinh": (oxmera.sinh, _math(math.sinh), "real", "float"),
    "cosh": (oxmera.cosh, _math(math.cosh), "real", "float"),
    "erf": (oxmera.erf, _math(math.erf), "real", "float"),
    "floor": (oxmera.floor, _math(math.floor), "real", "same"),
    "ceil": (oxmera.ceil, _math(math.ceil), "real", "same"),
    "trunc": (oxmera.trunc, _math(math.trunc), "real", "same"),
    "round": (oxmera.round, np.rint, "real", "same"),
    "nan_to_num": (oxmera.nan_to_num, lambda x: x, "real", "same"),
}

ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2",
           "clip": "clamp"}


@pytest.mark.parametrize("dtype", [F16, F32, F64, I32, I64], ids=str)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (0, 3)], ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_closed_form(name, shape, dtype):
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


@pytest.mark.parametrize("alias, name", sorted(ALIASES.items()))
def test_aliases_are_the_same_op(alias, name):
    assert getattr(oxmera, alias) is getattr(oxmera, name)
    assert getattr(oxmera.Tensor, alias) is getattr(oxmera.Tensor, name)


@pytest.mark.parametrize("name", sorted(n for n, v in UNARY.items() if v[3] == "float"))
def test_float_ops_on_bool_give_default_float(name):
    fn = UNARY[name][0]
    assert fn(oxmera.tensor([True, False])).dtype == F32
    oxmera.set_default_dtype(F64)
    try:
        assert fn(oxmera.tensor([1, 2])).dtype == F64
    finally:
        oxmera.set_default_dtype(F32)


def test_square_is_pow_2_and_keeps_integers():
    x = leaf([-1.5, 2.0])
    out = oxmera.square(x)
    assert out.grad_fn.name == "PowBackward"
    np.testing.assert_array_equal(out.detach().numpy(), [2.25, 4.0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-3.0, 4.0])
    _assert_matches(oxmera.tensor([-3, 4]).square(), np.array([9, 16]), I64)
    _assert_matches(oxmera.square(oxmera.tensor([True, False])), np.array([1, 0]), I64)
    _assert_matches(oxmera.square(oxmera.tensor([3], dtype=U8)), np.array([9]), U8)


@pytest.mark.parametrize("name, values, expected", [
    ("reciprocal", [0.0, -0.0, np.inf], [np.inf, -np.inf, 0.0]),
    ("rsqrt", [0.0, -1.0, np.inf], [np.inf, np.nan, 0.0]),
    ("log2", [0.0, -1.0, np.inf], [-np.inf, np.nan, np.inf]),
    ("log10", [0.0, -1.0, np.inf], [-np.inf, np.nan, np.inf]),
    ("log1p", [-1.0, -2.0, np.inf], [-np.inf, np.nan, np.inf]),
    ("asin", [1.5, -1.0, np.nan], [np.nan, -np.pi / 2, np.nan]),
    ("acos", [1.5, -1.0, 1.0], [np.nan, np.pi, 0.0]),
    ("atan", [np.inf, -np.inf, 0.0], [np.pi / 2, -np.pi / 2, 0.0]),
    ("sinh", [1000.0, -1000.0, 0.0], [np.inf, -np.inf, 0.0]),
    ("cosh", [1000.0, -1000.0, 0.0], [np.inf, np.inf, 1.0]),
    ("exp2", [2000.0, -2000.0, -np.inf], [np.inf, 0.0, 0.0]),
    ("expm1", [1000.0, -np.inf, 0.0], [np.inf, -1.0, 0.0]),
    ("erf", [np.inf, -np.inf, np.nan], [1.0, -1.0, np.nan]),
])
def test_special_values_without_warnings(name, values, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = getattr(oxmera, name)(oxmera.tensor(values, dtype=F64))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-15, atol=0)


# -- accuracy and stability -----------------------------------------------------------------------

def test_erf_is_within_one_ulp_of_math_erf():
    rng = np.random.default_rng(7)
    # Dense around the boundaries of its pieces (0.84375, 1.25, 1/0.35, 6),
    # wide random values, and tiny ones down to subnormals.
    x = np.concatenate([
        np.linspace(-7.0, 7.0, 20001), rng.standard_normal(20000) * 3,
        np.geomspace(1e-310, 1.0, 2000), -np.geomspace(1e-300, 1e-3, 500),
        *[np.linspace(b - 1e-3, b + 1e-3, 2001) for b in (0.84375, 1.25, 1 / 0.35, 6.0)],
        [0.0, -0.0, 5e-324, np.nextafter(0.84375, 0), np.nextafter(1.25, 0)]])
    expected = _math(math.erf)(x)
    got = oxmera.erf(oxmera.tensor(x)).numpy()
    ulps = np.abs(got - expected) / np.spacing(np.abs(expected))
    assert ulps.max() <= 1.0, (ulps.max(), x[ulps.argmax()])
    normal = np.abs(expected) >= np.finfo(np.float64).tiny    # subnormals have fewer digits
    assert np.max(np.abs(got - expected)[normal] / np.abs(expected[normal])) <= 1e-15
    assert np.signbit(oxmera.erf(oxmera.tensor(-0.0, dtype=F64)).numpy())


def test_erf_in_float16_is_the_rounded_float64_value():
    x = np.linspace(-4, 4, 1001).astype(F16)
    expected = _math(math.erf)(x.astype(np.float64)).astype(F16)
    _assert_matches(oxmera.erf(oxmera.tensor(x)), expected, F16)
    np.testing.assert_array_equal(oxmera.erf(oxmera.tensor(x)).numpy(), expected)


def test_erf_gradient_is_the_gaussian():
    x = leaf([-3.0, -0.5, 0.0, 1.0, 7.0])
    oxmera.erf(x).sum().backward()
    values = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 / np.sqrt(np.pi) * np.exp(-values ** 2),
                               rtol=1e-15)


@pytest.mark.parametrize("name, reference, naive", [
    ("expm1", math.expm1, lambda x: np.exp(x) - 1),
    ("log1p", math.log1p, lambda x: np.log(1 + x)),
])
def test_expm1_and_log1p_are_accurate_near_zero(name, reference, naive):
    values = np.array([1e-300, 1e-15, -1e-12, 3e-10, 1e-5, -1e-3])
    out = getattr(oxmera, name)(oxmera.tensor(values)).numpy()
    expected = _math(reference)(values)
    np.testing.assert_allclose(out, expected, rtol=2e-16, atol=0)
    # what the ops are for: the naive formula loses most digits here
    assert np.max(np.abs(naive(values[1:4]) - expected[1:4]) / np.abs(expected[1:4])) > 1e-8
    x = leaf(values)
    getattr(oxmera, name)(x).sum().backward()
    slope = np.exp(values) if name == "expm1" else 1 / (1 + values)
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-15)


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=str)
def test_logaddexp_is_stable_for_large_magnitudes(dtype):
    a = np.array([1e4, -1e4, 1e4, -1e4, -np.inf, 0.0])
    b = np.array([1e4, -1e4, -1e4, 1e4 - 2.0, 0.0, 0.0])
    if dtype == F16:
        a, b = a / 10, b / 10     # float16 tops out at 65504
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x, y = leaf(a, dtype=dtype), leaf(b, dtype=dtype)
        out = oxmera.logaddexp(x, y)
        out.sum().backward()
    expected = np.logaddexp(a, b)
    assert out.dtype == dtype
    np.testing.assert_allclose(out.detach().numpy(), expected.astype(dtype),
                               rtol=RTOL[np.dtype(dtype)])
    weight = 0.5 * (1 + np.tanh((a - b) / 2))      # 1 / (1 + exp(b - a)), stably
    np.testing.assert_allclose(x.grad.numpy(), weight.astype(dtype), rtol=RTOL[np.dtype(dtype)],
                               atol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), (1 - weight).astype(dtype),
                               rtol=RTOL[np.dtype(dtype)], atol=1e-6)


def test_hypot_does_not_overflow_or_underflow():
    x, y = leaf([3e200, 3e-200, 3.0]), leaf([4e200, 4e-200, -4.0])
    out = oxmera.hypot(x, y)
    np.testing.assert_allclose(out.detach().numpy(), [5e200, 5e-200, 5.0], rtol=1e-15)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.6, 0.6, 0.6], rtol=1e-15)
    np.testing.assert_allclose(y.grad.numpy(), [0.8, 0.8, -0.8], rtol=1e-15)


def test_hypot_gradient_at_the_origin_is_nan_like_pytorch():
    x, y = leaf([0.0]), leaf([0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        oxmera.hypot(x, y).sum().backward()
    assert np.isnan(x.grad.numpy()).all() and np.isnan(y.grad.numpy()).all()


def test_atan2_matches_numpy_and_has_zero_gradient_at_the_origin():
    y = leaf([0.0, 1.0, 1.0, -1.0, -1.0, 0.0])
    x = leaf([0.0, 1.0, -1.0, 1.0, -1.0, -2.0])
    out = oxmera.atan2(y, x)
    np.testing.assert_array_equal(out.detach().numpy(), np.arctan2(y.detach().numpy(),
                                                                   x.detach().numpy()))
    out.sum().backward()
    squared = np.array([1.0, 2.0, 2.0, 2.0, 2.0, 4.0])
    np.testing.assert_allclose(y.grad.numpy(), [0.0, *(x.detach().numpy()[1:] / squared[1:])])
    np.testing.assert_allclose(x.grad.numpy(), [0.0, *(-y.detach().numpy()[1:] / squared[1:])])
    _assert_matches(oxmera.atan2(oxmera.tensor([1, -1]), 1), np.arctan2([1.0, -1.0], 1.0), F32)


# -- floor division and remainder -----------------------------------------------------------------

_DIVIDENDS = [7, -7, 7, -7, 6, 0, -1]
_DIVISORS = [2, 2, -2, -2, 3, 5, 4]


@pytest.mark.parametrize("dtype", [I32, I64, F32, F64], ids=str)
def test_floor_divide_and_remainder_follow_python(dtype):
    a, b = np.array(_DIVIDENDS, dtype), np.array(_DIVISORS, dtype)
    if dtype.kind == "f":
        a = a + np.array(0.5, dtype)
    quotient = np.array([x // y for x, y in zip(a.tolist(), b.tolist())], dtype)
    remainder = np.array([x % y for x, y in zip(a.tolist(), b.tolist())], dtype)
    ta, tb = oxmera.tensor(a), oxmera.tensor(b)
    for q in (oxmera.floor_divide(ta, tb), ta // tb, ta.floor_divide(tb)):
        _assert_matches(q, quotient, dtype)
    for r in (oxmera.remainder(ta, tb), ta % tb, ta.remainder(tb)):
        _assert_matches(r, remainder, dtype)
    # the remainder has the sign of the divisor, and x == y * (x // y) + x % y
    assert np.all((remainder == 0) | (np.sign(remainder) == np.sign(b)))
    np.testing.assert_allclose(b * quotient + remainder, a)


def test_floor_divide_and_remainder_with_numbers_and_arrays_on_either_side():
    t = oxmera.tensor([7.5, -7.5])
    array = np.array([2.0, -2.0])
    _assert_matches(t // 2, np.array([3.0, -4.0]), F32)
    _assert_matches(10 // t, np.array([1.0, -2.0]), F32)
    _assert_matches(t % array, np.array([1.5, -1.5]), F64)     # an array keeps its dtype
    _assert_matches(array % t, np.array([2.0, -2.0]), F64)
    _assert_matches(t % 2, np.array([1.5, 0.5]), F32)
    _assert_matches(7 % oxmera.tensor([3, -3]), np.array([1, -2]), I64)
    _assert_matches(oxmera.tensor([7]) // 2.5, np.array([2.0]), F32)
    _assert_matches(oxmera.remainder(oxmera.tensor([7], dtype=U8), 3), np.array([1]), U8)


def test_float_floor_division_by_zero_gives_inf_and_nan_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = oxmera.tensor([5.0, -5.0, 0.0])
        np.testing.assert_array_equal((x // 0.0).numpy(), [np.inf, -np.inf, np.nan])
        np.testing.assert_array_equal((x % 0.0).numpy(), [np.nan, np.nan, np.nan])


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_integer_division_by_zero_raises_and_changes_nothing(name):
    x = oxmera.tensor([5, 3])
    with unchanged(x):
        with pytest.raises(RuntimeError, match=rf"{name}.*division by zero.*\(2,\)"):
            getattr(oxmera, name)(x, oxmera.tensor([1, 0]))
        with pytest.raises(RuntimeError, match=name):
            getattr(oxmera, name)(x, 0)


@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_bool_division_is_rejected(name):
    with pytest.raises(TypeError, match=rf"{name}.*bool"):
        getattr(oxmera, name)(oxmera.tensor([True]), oxmera.tensor([True]))


def test_floor_divide_has_zero_gradient_but_records():
    x, y = leaf([7.5, -7.5]), leaf([2.0, 2.0])
    out = x // y
    assert out.requires_grad and out.grad_fn.name == "FloorDivideBackward"
    grads = oxmera.autograd.grad(out, (x, y), grad_outputs=oxmera.full((2,), np.inf, dtype=F64))
    for g in grads:
        np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])


def test_remainder_gradients():
    x, y = leaf([5.0, -5.0, 5.0]), leaf([3.0, 3.0, -3.0])
    (x % y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(y.grad.numpy(), [-1.0, 2.0, 2.0])     # -floor(x / y)


# -- pow at the edges of its domain (PyTorch's values) --------------------------------------------

def test_pow_gradients_at_zero_and_negative_bases_match_pytorch():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = leaf([0.0, 0.0, 0.0, -2.0, -2.0, 2.0])
        y = leaf([-1.0, 0.0, 2.0, 2.0, 0.5, 0.5])
        (x ** y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-np.inf, 0.0, 0.0, -4.0, np.nan,
                                                0.5 * 2.0 ** -0.5])
    np.testing.assert_allclose(y.grad.numpy(), [-np.inf, 0.0, 0.0, np.nan, np.nan,
                                                2.0 ** 0.5 * np.log(2.0)])


@pytest.mark.parametrize("base, expected", [
    (0.0, [-np.inf, 0.0, 0.0]),
    (-2.0, [np.nan, np.nan, np.nan]),
    (2.0, [0.5 * np.log(2.0), np.log(2.0), 4 * np.log(2.0)]),
])
def test_pow_of_a_number_base_exponent_gradient_matches_pytorch(base, expected):
    y = leaf([-1.0, 0.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (base ** y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), expected, rtol=1e-15)


def test_pow_zero_tensor_exponent_gives_exact_zero_under_infinite_gradient():
    x, y = leaf([0.0, 2.0, np.inf, 3.0]), leaf([0.0, 0.0, 0.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (gx,) = oxmera.autograd.grad(x ** y, (x,), grad_outputs=oxmera.full((4,), np.inf,
                                                                             dtype=F64))
    np.testing.assert_array_equal(gx.numpy(), [0.0, 0.0, 0.0, np.inf])


# -- maximum and minimum --------------------------------------------------------------------------

@pytest.mark.parametrize("name, reference", [("maximum", np.maximum), ("minimum", np.minimum)])
def test_maximum_minimum_match_numpy_and_propagate_nan(name, reference):
    fn = getattr(oxmera, name)
    a = np.array([[1.0, np.nan, 3.0], [-1.0, 2.0, 0.0]])
    b = np.array([2.0, 1.0, np.nan])
    _assert_matches(fn(oxmera.tensor(a), oxmera.tensor(b)), reference(a, b), F64)
    _assert_matches(getattr(oxmera.tensor(a), name)(1.5), reference(a, 1.5), F64)
    _assert_matches(fn(oxmera.tensor([1, 5]), oxmera.tensor([3, 2], dtype=I32)),
                    reference([1, 5], [3, 2]), I64)
    _assert_matches(fn(oxmera.tensor([1, 5]), 2.5), reference([1.0, 5.0], 2.5), F32)
    _assert_matches(fn(oxmera.tensor([True, False]), oxmera.tensor([False, False])),
                    reference([True, False], [False, False]), BOOL)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_ties_split_the_gradient_and_nan_passes_it_to_both(name):
    x = leaf([1.0, 2.0, -1.0, np.nan, 1.0])
    y = leaf([1.0, 1.0, 3.0, 1.0, np.nan])
    getattr(oxmera, name)(x, y).sum().backward()
    x_wins = [0.5, 1.0, 0.0, 1.0, 1.0] if name == "maximum" else [0.5, 0.0, 1.0, 1.0, 1.0]
    y_wins = [0.5, 0.0, 1.0, 1.0, 1.0] if name == "maximum" else [0.5, 1.0, 0.0, 1.0, 1.0]
    np.testing.assert_array_equal(x.grad.numpy(), x_wins)
    np.testing.assert_array_equal(y.grad.numpy(), y_wins)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_tie_with_itself_gives_the_whole_gradient(name):
    x = leaf([1.0, -2.0])
    getattr(oxmera, name)(x, x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


# -- clamp / clip ---------------------------------------------------------------------------------

def test_clamp_matches_numpy_clip():
    a = np.array([[-2.0, -0.5, 0.0], [0.5, 1.0, 3.0]])
    t = oxmera.tensor(a)
    _assert_matches(oxmera.clamp(t, -1.0, 1.0), np.clip(a, -1.0, 1.0), F64)
    _assert_matches(oxmera.clamp(t, min=0.0), np.maximum(a, 0.0), F64)
    _assert_matches(t.clamp(max=0.0), np.minimum(a, 0.0), F64)
    _assert_matches(t.clip(-0.5, 0.5), np.clip(a, -0.5, 0.5), F64)
    lo, hi = np.array([-1.0, 0.0, 0.5]), np.array([[0.0], [2.0]])
    _assert_matches(oxmera.clamp(t, oxmera.tensor(lo), oxmera.tensor(hi)),
                    np.minimum(np.maximum(a, lo), hi), F64)
    _assert_matches(oxmera.clamp(t, min=oxmera.tensor(lo)), np.maximum(a, lo), F64)
    _assert_matches(oxmera.clamp(t, min=oxmera.tensor(lo), max=1.0),
                    np.minimum(np.maximum(a, lo), 1.0), F64)
    # a bound may broadcast the result beyond the input's shape, as in PyTorch
    _assert_matches(oxmera.clamp(oxmera.tensor(0.25, dtype=F64), max=oxmera.tensor(lo)),
                    np.minimum(0.25, lo), F64)


def test_clamp_with_min_above_max_gives_max():
    _assert_matches(oxmera.clamp(oxmera.tensor([-2.0, 0.0, 2.0]), 1.0, -1.0),
                    np.array([-1.0, -1.0, -1.0]), F32)


def test_clamp_dtypes():
    ints = oxmera.tensor([1, 5, 9])
    _assert_matches(oxmera.clamp(ints, 2, 6), np.array([2, 5, 6]), I64)
    _assert_matches(oxmera.clamp(ints, min=2.5), np.array([2.5, 5.0, 9.0]), F32)
    _assert_matches(oxmera.clamp(oxmera.tensor([1, 9], dtype=I32), max=oxmera.tensor(4)),
                    np.array([1, 4]), I32)
    _assert_matches(oxmera.clamp(oxmera.tensor([1.0, 9.0]), max=4.0), np.array([1.0, 4.0]), F32)
    _assert_matches(oxmera.clamp(oxmera.tensor([np.nan, 1.0]), 0.0, 0.5),
                    np.array([np.nan, 0.5]), F32)


def test_clamp_gradient_includes_the_bounds_like_pytorch():
    x = leaf([-2.0, -1.0, 0.5, 1.0, 2.0, np.nan])
    oxmera.clamp(x, -1.0, 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    x = leaf([-2.0, 0.5, 2.0])
    oxmera.clamp(x, 1.0, -1.0).sum().backward()     # min > max: flat everywhere
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


def test_clamp_gradient_with_tensor_bounds_like_pytorch():
    x = leaf([0.0, 1.0, 2.0, 3.0, 4.0])
    lo = leaf([1.0, 1.0, 1.0, 3.5, 3.5])
    hi = leaf([3.0, 3.0, 3.0, 3.0, 3.0])
    oxmera.clamp(x, lo, hi).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 0.0, 0.0])
    np.testing.assert_array_equal(lo.grad.numpy(), [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(hi.grad.numpy(), [0.0, 0.0, 0.0, 1.0, 1.0])
    x, lo = leaf([0.0, 1.0, 2.0]), leaf([1.0, 1.0, 1.0])
    oxmera.clamp(x, min=lo).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(lo.grad.numpy(), [1.0, 0.0, 0.0])
    x, hi = leaf([0.0, 1.0, 2.0]), leaf([[1.0], [1.0]])
    oxmera.clamp(x, max=hi).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 0.0])
    np.testing.assert_array_equal(hi.grad.numpy(), [[1.0], [1.0]])


def test_clamp_without_bounds_is_an_error_that_changes_nothing():
    x = leaf([1.0, 2.0])
    with unchanged(x):
        with pytest.raises(RuntimeError, match=r"clamp.*min.*max") as info:
            oxmera.clamp(x)
    assert isinstance(info.value, ValueError)
    with pytest.raises(RuntimeError, match="clamp"):
        x.clip(None, None)


def test_clamp_bound_of_the_wrong_shape_names_the_shapes():
    x = leaf(np.ones((2, 3)))
    with unchanged(x):
        with pytest.raises(RuntimeError, match=r"clamp.*\(2, 3\).*\(4,\)"):
            oxmera.clamp(x, min=oxmera.zeros(4, dtype=F64))


# -- lerp -----------------------------------------------------------------------------------------

def test_lerp_matches_the_formula_and_is_exact_at_both_ends():
    start = np.array([0.1, -3.0, 1e10, 7.0])
    end = np.array([0.3, 5.0, -1.0, 7.0])
    for weight in (0.0, 0.3, 0.5, 0.7, 1.0, -0.5, 2.0):
        # PyTorch's two-sided formula: from the nearer end
        expected = (start + weight * (end - start) if abs(weight) < 0.5
                    else end - (end - start) * (1 - weight))
        _assert_matches(oxmera.lerp(oxmera.tensor(start), oxmera.tensor(end), weight),
                        expected, F64)
        np.testing.assert_allclose(expected, start + weight * (end - start), atol=1e-6)
    np.testing.assert_array_equal(oxmera.lerp(oxmera.tensor(start), oxmera.tensor(end), 1.0)
                                  .numpy(), end)
    np.testing.assert_array_equal(oxmera.lerp(oxmera.tensor(start), oxmera.tensor(end), 0.0)
                                  .numpy(), start)
    weights = np.array([[0.0], [0.25], [1.0]])
    _assert_matches(oxmera.tensor(start).lerp(oxmera.tensor(end), oxmera.tensor(weights)),
                    start + weights * (end - start), F64)
    _assert_matches(oxmera.lerp(oxmera.tensor([0, 10]), oxmera.tensor([10, 20]), 0.5),
                    np.array([5.0, 15.0]), F32)
    _assert_matches(oxmera.lerp(oxmera.tensor([0.0, 10.0]), 20.0, 0.25),
                    np.array([5.0, 12.5]), F32)


def test_lerp_gradients():
    x, y, w = leaf([1.0, 2.0]), leaf([3.0, 5.0]), leaf([0.25, 0.75])
    oxmera.lerp(x, y, w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.75, 0.25])
    np.testing.assert_array_equal(y.grad.numpy(), [0.25, 0.75])
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 3.0])


# -- rounding and nan_to_num ----------------------------------------------------------------------

@pytest.mark.parametrize("name, reference", [
    ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc), ("round", np.round)])
def test_rounding_matches_numpy_on_halves_and_specials(name, reference):
    values = np.array([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 2.7, -2.7, np.inf, np.nan])
    for dtype in (F16, F32, F64):
        _assert_matches(getattr(oxmera, name)(oxmera.tensor(values, dtype=dtype)),
                        reference(values).astype(dtype), dtype)
    assert np.signbit(getattr(oxmera, name)(oxmera.tensor(-0.0, dtype=F64)).numpy())


@pytest.mark.parametrize("decimals", [-3, -1, 1, 2, 4])
def test_round_with_decimals(decimals):
    values = np.array([1234.5678, -0.125, 0.135, 2.5e-3, 98765.4321])
    _assert_matches(oxmera.round(oxmera.tensor(values), decimals=decimals),
                    np.round(values, decimals), F64)
    _assert_matches(oxmera.tensor(values).round(decimals=decimals), np.round(values, decimals),
                    F64)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "nan_to_num"])
@pytest.mark.parametrize("dtype", [I32, I64, U8], ids=str)
def test_rounding_integers_is_a_copy(name, dtype):
    x = oxmera.tensor([1, 2, 3], dtype=dtype)
    out = getattr(oxmera, name)(x)
    _assert_matches(out, np.array([1, 2, 3]), dtype)
    assert not np.shares_memory(out.numpy(), x.numpy())


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_rounding_bool_is_rejected(name):
    with pytest.raises(TypeError, match=rf"{name}.*bool"):
        getattr(oxmera, name)(oxmera.tensor([True, False]))


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_rounding_has_zero_gradient_but_records(name):
    x = leaf([-1.5, 0.4, 2.6])
    out = getattr(oxmera, name)(x)
    assert out.requires_grad and out.grad_fn is not None
    (g,) = oxmera.autograd.grad(out, (x,), grad_outputs=oxmera.full((3,), np.inf, dtype=F64))
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("dtype", [F16, F32, F64], ids=str)
def test_nan_to_num_defaults_are_the_dtype_limits(dtype):
    x = oxmera.tensor([np.nan, np.inf, -np.inf, 1.5], dtype=dtype)
    big = np.finfo(dtype).max
    _assert_matches(oxmera.nan_to_num(x), np.array([0.0, big, -big, 1.5], dtype), dtype)
    _assert_matches(x.nan_to_num(nan=-1.0, posinf=7.0, neginf=-7.0),
                    np.array([-1.0, 7.0, -7.0, 1.5], dtype), dtype)


def test_nan_to_num_gradient_is_blocked_where_replaced():
    x = leaf([np.nan, np.inf, -np.inf, 0.5, -1.5])
    oxmera.nan_to_num(x, posinf=3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0, 1.0, 1.0])


# -- errors (SPEC §6) -----------------------------------------------------------------------------

BINARY = ["floor_divide", "remainder", "atan2", "hypot", "logaddexp", "maximum", "minimum"]


@pytest.mark.parametrize("name", [*BINARY, "lerp"])
def test_shape_mismatch_names_the_op_and_both_shapes_and_changes_nothing(name):
    x = leaf(np.ones((2, 3)))
    x.grad = oxmera.ones(2, 3, dtype=F64)
    base = leaf([1.0, 2.0, 3.0, 4.0])
    y = base * 2
    fn = getattr(oxmera, name)
    with unchanged(x, y, base):
        with pytest.raises(oxmera.OpError) as info:
            fn(x, y, 0.5) if name == "lerp" else fn(x, y)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    message = str(info.value)
    assert name in message and "(2, 3)" in message and "(4,)" in message
    y.sum().backward()
    np.testing.assert_array_equal(base.grad.numpy(), [2.0, 2.0, 2.0, 2.0])


@pytest.mark.parametrize("name", [*BINARY, "clamp"])
def test_unsupported_operand_is_a_type_error(name):
    x = leaf([1.0])
    with unchanged(x):
        with pytest.raises(TypeError):
            getattr(oxmera, name)(x, "text")
