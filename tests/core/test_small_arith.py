"""NumPy's arithmetic on small float arrays as C loops (``_arith.h``, ``_small_arith``).

Ops whose forward is NumPy's ``add``, ``subtract``, ``multiply``,
``true_divide`` or ``negative`` (and the engine's sum of two gradients) run a
C loop instead of the ufunc when the operands are small float32/float64
arrays of one shape (C-contiguous, or one value broadcast) or such an array
and a Python number. The results must be NumPy's bits, and whatever NumPy
would report (a warning, an error under ``np.errstate``) must still be
reported: the loop gives up and NumPy runs when a floating-point flag is
raised.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import oxmera
from oxmera._core.autograd import _small_arith_for_tests as small

BINARY = ("add", "subtract", "multiply", "true_divide")
UFUNCS = BINARY + ("negative",)
DTYPES = (np.float64, np.float32)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.dtype, a.shape, a.view(np.uint8).tobytes()


def _numpy(name, *operands):
    with np.errstate(all="ignore"):
        return getattr(np, name)(*operands)


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.uniform(-3.0, 3.0, shape) + 0.5, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (16,), (3, 5), (2, 3, 4), (0,), (4096,)])
@pytest.mark.parametrize("name", UFUNCS)
def test_the_loops_give_numpys_bits(name, shape, dtype):
    a, b = _values(dtype, shape, 1), _values(dtype, shape, 2)
    operands = (a,) if name == "negative" else (a, b)
    out = small(name, *operands)
    assert out is not None, "the loop did not run"
    assert type(out) is np.ndarray and out.flags.c_contiguous and out.flags.writeable
    assert _bits(out) == _bits(np.asarray(_numpy(name, *operands)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("number", [0.1, -2.5, 3, -7, 16777216, 1e-3])
def test_a_python_number_is_rounded_as_numpy_rounds_it(name, number, dtype):
    a = _values(dtype, (2, 8))
    for operands in ((a, number), (number, a)):
        out = small(name, *operands)
        assert out is not None
        assert _bits(out) == _bits(_numpy(name, *operands))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
def test_one_value_broadcast_is_read_as_a_number(name, dtype):
    # A sum's gradient: a 0-d 1 expanded to the input's shape (strides 0).
    a = _values(dtype, (4, 6))
    u = np.broadcast_to(np.asarray(1.75, dtype), (4, 6))
    cases = [(u,)] if name == "negative" else [(a, u), (u, a), (u, u)]
    for operands in cases:
        out = small(name, *operands)
        assert out is not None
        assert out.flags.c_contiguous and out.strides != u.strides
        assert _bits(out) == _bits(_numpy(name, *operands))


@pytest.mark.parametrize("name", BINARY)
def test_special_values_give_numpys_bits_or_numpys_call(name):
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, 1e308,
                         -1e308, 2.2250738585072014e-308], np.float64)
    a = np.repeat(specials, len(specials))
    b = np.tile(specials, len(specials))
    for dtype in DTYPES:
        with np.errstate(all="ignore"):
            x, y = a.astype(dtype), b.astype(dtype)
        out = small(name, x, y)
        # Some pair raises a flag (inf - inf, 1/0, overflow, underflow): NumPy's call.
        assert out is None
        for i in range(len(x)):
            one = small(name, x[i:i + 1], y[i:i + 1])
            expected = _numpy(name, x[i:i + 1], y[i:i + 1])
            if one is not None:
                assert _bits(one) == _bits(expected), (name, x[i], y[i])
    # NaN and signed zeros raise no flag: the loop runs and keeps their bits.
    x = np.array([np.nan, -0.0, 0.0, -np.nan, 1.0])
    y = np.array([1.0, -0.0, -0.0, 2.0, np.nan])
    out = small(name, x, y)
    if name != "true_divide":       # (-0.0 / -0.0 is invalid)
        assert out is not None and _bits(out) == _bits(_numpy(name, x, y))


@pytest.mark.parametrize("operands", [
    pytest.param(lambda: (np.ones(4097), np.ones(4097)), id="past-the-size"),
    pytest.param(lambda: (np.ones((3, 4)).T, np.ones((4, 3))), id="fortran-order"),
    pytest.param(lambda: (np.ones(8)[::2], np.ones(4)), id="strided"),
    pytest.param(lambda: (np.ones(4), np.ones(5)), id="other-shapes"),
    pytest.param(lambda: (np.ones((1, 4)), np.ones(4)), id="broadcasting"),
    pytest.param(lambda: (np.ones(4), np.ones(4, np.float32)), id="two-dtypes"),
    pytest.param(lambda: (np.ones(4, np.float16), np.ones(4, np.float16)), id="float16"),
    pytest.param(lambda: (np.ones(4, np.int64), np.ones(4, np.int64)), id="integers"),
    pytest.param(lambda: (np.ones(4, np.complex128), np.ones(4, np.complex128)), id="complex"),
    pytest.param(lambda: (np.ones(4, ">f8"), np.ones(4, ">f8")), id="byte-swapped"),
    pytest.param(lambda: (np.frombuffer(b"\0" * 33, np.float64, 4, 1), np.ones(4)),
                 id="unaligned"),
    pytest.param(lambda: (np.ones(4).view(np.ma.MaskedArray), np.ones(4)), id="subclass"),
    pytest.param(lambda: (np.ones(4), np.float64(2.0)), id="numpy-scalar"),
    pytest.param(lambda: (np.ones(4), True), id="bool"),
    pytest.param(lambda: (np.ones(4), 16777217), id="int-past-2**24"),
    pytest.param(lambda: (np.ones(4), 2 ** 70), id="huge-int"),
    pytest.param(lambda: (np.ones(4, np.float32), 1e300), id="number-overflows-float32"),
    pytest.param(lambda: (np.ones(4, np.float32), 1e-300), id="number-underflows-float32"),
    pytest.param(lambda: (2.0, 3.0), id="two-numbers"),
    pytest.param(lambda: ([1.0, 2.0], np.ones(2)), id="list"),
])
def test_everything_else_is_left_to_numpy(operands):
    assert small("add", *operands()) is None


def test_a_raised_flag_leaves_the_call_to_numpy():
    big = np.full(4, 1e308)
    assert small("multiply", big, big) is None                  # overflow
    assert small("true_divide", np.ones(4), np.zeros(4)) is None  # division by zero
    assert small("subtract", np.full(4, np.inf), np.full(4, np.inf)) is None  # invalid
    assert small("multiply", np.full(4, 1e-200), np.full(4, 1e-200)) is None  # underflow
    assert small("multiply", np.full(4, 2.0), np.full(4, 3.0)) is not None


def test_an_unknown_ufunc_is_refused():
    with pytest.raises(ValueError, match="no loop for 'sin'"):
        small("sin", np.ones(2))


# -- through the ops: values, warnings and errors as NumPy's ----------------------------

def test_an_overflow_warns_as_numpy_warns():
    x = oxmera.tensor([1e308, 1.0], dtype=oxmera.float64)
    with pytest.warns(RuntimeWarning, match="overflow encountered in multiply"):
        y = x * 10
    assert y.numpy()[0] == np.inf and y.numpy()[1] == 10.0
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        x * 10
    with np.errstate(under="raise"), pytest.raises(FloatingPointError, match="underflow"):
        oxmera.tensor([1e-200], dtype=oxmera.float64) * 1e-200
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = oxmera.tensor([1.0, -1.0]) / 0      # div is quiet, as PyTorch
        assert list(z.numpy()) == [np.inf, -np.inf]
        assert (oxmera.tensor([2.0]) * 3).item() == 6.0     # no flag: no warning


@pytest.mark.parametrize("dtype", DTYPES)
def test_an_mlp_like_step_has_numpys_gradients(dtype):
    rng = np.random.default_rng(3)
    xs = [rng.uniform(-1, 1, 16).astype(dtype) for _ in range(3)]
    x, y, z = (oxmera.tensor(v, requires_grad=True) for v in xs)
    a = x * y + z
    b = oxmera.tanh(a)
    loss = (b * b - a).sum()
    loss.backward()
    xn, yn, zn = xs
    an = xn * yn + zn
    bn = np.tanh(an)
    ga = (bn * 2) * (1 - bn * bn) - 1
    np.testing.assert_allclose(z.grad.numpy(), ga, rtol=1e-5 if dtype == np.float32 else 1e-12)
    np.testing.assert_allclose(x.grad.numpy(), ga * yn, rtol=1e-5 if dtype == np.float32 else 1e-12)


_floats64 = st.floats(allow_nan=True, allow_infinity=True, width=64)
_floats32 = st.floats(allow_nan=True, allow_infinity=True, width=32)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), name=st.sampled_from(UFUNCS), dtype=st.sampled_from(DTYPES),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
def test_the_ops_give_numpys_bits_for_any_values(data, name, dtype, shape):
    elements = _floats64 if dtype == np.float64 else _floats32
    a = data.draw(hnp.arrays(dtype, shape, elements=elements))
    b = data.draw(hnp.arrays(dtype, shape, elements=elements))
    operands = (a,) if name == "negative" else (a, b)
    expected = _numpy(name, *operands)
    out = small(name, *operands)
    if out is not None:
        assert _bits(out) == _bits(expected)
    op = {"add": oxmera.add, "subtract": oxmera.sub, "multiply": oxmera.mul,
          "true_divide": oxmera.div, "negative": oxmera.neg}[name]
    with np.errstate(all="ignore"):
        got = op(*(oxmera.tensor(v) for v in operands)).numpy()
    assert _bits(got) == _bits(expected)
