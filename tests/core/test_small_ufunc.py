"""NumPy's own loops on small float arrays, without the ufunc's dispatch (``_small_ufunc``).

Ops whose forward is a NumPy ufunc (``numpy=`` in ``oxmera.extend.op``: add,
multiply, tanh, sin ...), and the engine's sum of two gradients, call the
loop NumPy would pick when the operands are small float32/float64 arrays of
one shape (C-contiguous, or one value broadcast) or such an array and a
Python number. The results must be NumPy's bits, and whatever NumPy would
report (a warning, an error under ``np.errstate``) must still be reported:
the result is dropped and NumPy's call runs when a floating-point flag is
raised.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import oxmera
from oxmera._core.autograd import _small_ufunc_for_tests
from oxmera.ops import _registry

BINARY = ("add", "subtract", "multiply", "divide", "power", "maximum")
UNARY = ("negative", "tanh", "sin", "cos", "exp", "log", "sqrt", "absolute")
UFUNCS = BINARY + UNARY
# Every op whose forward is a ufunc, by its ufunc's name: NumPy's, but exp's,
# which is NumPy's with oxmera's float32 loop (oxmera._core._kernels.exp; the
# direct loop call takes it as it takes NumPy's).
OP_UFUNC = {opdef.numpy_forward.__name__: opdef.numpy_forward for opdef in _registry.list_ops()
            if isinstance(opdef.numpy_forward, np.ufunc)}


def small(name, *operands):
    return _small_ufunc_for_tests(getattr(np, name), *operands)


def _operands(name, a, b):
    return (a,) if getattr(np, name).nin == 1 else (a, b)
DTYPES = (np.float64, np.float32)


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.dtype, a.shape, a.view(np.uint8).tobytes()


def _numpy(name, *operands):
    with np.errstate(all="ignore"):
        return getattr(np, name)(*operands)


def _check(name, *operands):
    # Operands the loop takes: its bits are NumPy's, or it gave up because the
    # loop raised a flag, which NumPy reports (raises, under errstate "raise").
    out = small(name, *operands)
    if out is None:
        with np.errstate(all="raise"), pytest.raises(FloatingPointError):
            getattr(np, name)(*operands)
    else:
        assert _bits(out) == _bits(_numpy(name, *operands)), (name, operands)
    return out


def _values(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    return np.asarray(rng.uniform(0.25, 3.0, shape), dtype)     # (log and sqrt: positive)


def test_every_ufunc_forward_is_tested():
    assert set(OP_UFUNC) <= set(UFUNCS), set(OP_UFUNC) - set(UFUNCS)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (1,), (16,), (3, 5), (2, 3, 4), (0,), (4096,)])
@pytest.mark.parametrize("name", UFUNCS)
def test_the_loops_give_numpys_bits(name, shape, dtype):
    a, b = _values(dtype, shape, 1), _values(dtype, shape, 2)
    operands = _operands(name, a, b)
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
        out = _check(name, *operands)
        assert out is not None or name == "power"   # ((-2.5) ** x: invalid)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", UFUNCS)
def test_one_value_broadcast_is_read_as_a_number(name, dtype):
    # A sum's gradient: a 0-d 1 expanded to the input's shape (strides 0).
    a = _values(dtype, (4, 6))
    u = np.broadcast_to(np.asarray(1.75, dtype), (4, 6))
    cases = [(u,)] if getattr(np, name).nin == 1 else [(a, u), (u, a), (u, u)]
    for operands in cases:
        out = small(name, *operands)
        assert out is not None
        assert out.flags.c_contiguous and out.strides != u.strides
        assert _bits(out) == _bits(_numpy(name, *operands))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BINARY)
def test_a_0d_array_of_the_dtype_is_read_as_one_value(name, dtype):
    # A Python number in a VJP is a 0-d tensor (x * 0.999's gradient).
    a = _values(dtype, (3, 4))
    s = np.asarray(0.75, dtype)
    for operands in ((a, s), (s, a)):
        out = _check(name, *operands)
        assert out is not None and out.shape == (3, 4)
    # Another dtype promotes (NumPy's business).
    other = np.float32 if dtype == np.float64 else np.float64
    assert small(name, a, np.asarray(0.75, other)) is None


@pytest.mark.parametrize("name", UFUNCS)
def test_special_values_give_numpys_bits_or_numpys_call(name):
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 5e-324, 1e308,
                         -1e308, 2.2250738585072014e-308], np.float64)
    a = np.repeat(specials, len(specials))
    b = np.tile(specials, len(specials))
    for dtype in DTYPES:
        with np.errstate(all="ignore"):
            x, y = a.astype(dtype), b.astype(dtype)
        # Each pair alone: the loop's bits, or (a flag raised) NumPy's call.
        for i in range(len(x)):
            _check(name, *_operands(name, x[i:i + 1], y[i:i + 1]))
        # All at once (SIMD blocks mixed with the scalar tail).
        _check(name, *_operands(name, x, y))
    # NaN and signed zeros raise no flag in the arithmetic: the loop runs.
    x = np.array([np.nan, -0.0, 0.0, -np.nan, 1.0])
    y = np.array([1.0, -0.0, -0.0, 2.0, np.nan])
    if name in ("add", "subtract", "multiply", "negative", "absolute"):
        out = small(name, *_operands(name, x, y))
        assert out is not None and _bits(out) == _bits(_numpy(name, *_operands(name, x, y)))


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
    assert small("divide", np.ones(4), np.zeros(4)) is None  # division by zero
    assert small("subtract", np.full(4, np.inf), np.full(4, np.inf)) is None  # invalid
    assert small("multiply", np.full(4, 1e-200), np.full(4, 1e-200)) is None  # underflow
    assert small("multiply", np.full(4, 2.0), np.full(4, 3.0)) is not None
    assert small("log", np.zeros(4)) is None                           # log(0): divide
    assert small("sqrt", np.full(4, -1.0)) is None                     # invalid


def test_ufuncs_without_such_a_loop_are_left_to_numpy():
    assert small("logical_and", np.ones(4), np.ones(4)) is None     # (bool loops only)
    assert small("divmod", np.ones(4), np.ones(4)) is None          # two outputs
    assert _small_ufunc_for_tests(np.add.reduce, np.ones(4)) is None   # not a ufunc


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
    operands = _operands(name, a, b)
    _check(name, *operands)
    with np.errstate(all="ignore"):
        expected = OP_UFUNC.get(name, getattr(np, name))(*operands)
    op = {"add": oxmera.add, "subtract": oxmera.sub, "multiply": oxmera.mul,
          "divide": oxmera.div, "negative": oxmera.neg, "power": oxmera.pow,
          "maximum": oxmera.maximum, "absolute": oxmera.abs}.get(name) or getattr(oxmera, name)
    with np.errstate(all="ignore"):
        got = op(*(oxmera.tensor(v) for v in operands)).numpy()
    if name != "maximum":   # (maximum is no ufunc op; NaN's payload may differ)
        assert _bits(got) == _bits(expected)


# -- a sum of all elements by NumPy's add loop (add_reduce_all) ------------------------

from oxmera._core.autograd import add_reduce_all  # noqa: E402


def _reduced(x):
    with np.errstate(all="ignore"):
        return np.asarray(np.add.reduce(x, None))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 257, 1000,
                               4096])
def test_a_full_sum_gives_numpys_bits(n, dtype):
    # Pairwise summation: blocks of 8 and of 128 elements, then halves.
    x = np.random.default_rng(n).standard_normal(n).astype(dtype) * dtype(1e3)
    got = add_reduce_all(x)
    assert type(got) is np.ndarray and got.shape == ()
    assert _bits(got) == _bits(_reduced(x))
    assert _bits(add_reduce_all(x.reshape(1, n))) == _bits(_reduced(x))


def test_a_sum_of_negative_zeros_is_positive_zero_as_in_numpy():
    # NumPy starts the sum at add's identity (+0.0): a sign the loop must not change.
    assert _bits(add_reduce_all(np.array([-0.0, -0.0]))) == _bits(_reduced(np.array([-0.0, -0.0])))
    assert str(add_reduce_all(np.array([-0.0]))) == "0.0"


@pytest.mark.parametrize("x", [
    pytest.param(lambda: np.zeros(0), id="empty"),
    pytest.param(lambda: np.ones(4097), id="past-the-size"),
    pytest.param(lambda: np.ones((3, 4)).T, id="fortran-order"),
    pytest.param(lambda: np.broadcast_to(np.ones(()), (4,)), id="broadcast"),
    pytest.param(lambda: np.arange(5), id="integers"),
    pytest.param(lambda: np.ones(3, np.float16), id="float16"),
    pytest.param(lambda: np.full(4, 1e308), id="overflow"),
    pytest.param(lambda: [1.0, 2.0], id="list"),
])
def test_a_sum_the_loop_does_not_take_is_numpys(x):
    x = x()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = add_reduce_all(x)
    expected = _reduced(np.asarray(x))
    assert _bits(np.asarray(got)) == _bits(expected)
    if np.isinf(expected).any():
        assert any("overflow" in str(w.message) for w in caught)   # NumPy's own warning


@settings(max_examples=200, deadline=None)
@given(dtype=st.sampled_from(DTYPES), data=st.data(),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=12))
def test_full_sums_give_numpys_bits_for_any_values(dtype, data, shape):
    elements = _floats64 if dtype == np.float64 else _floats32
    x = data.draw(hnp.arrays(dtype, shape, elements=elements))
    t = oxmera.tensor(x)
    with np.errstate(all="ignore"):     # (inf - inf: NumPy's call, which warns)
        assert _bits(np.asarray(add_reduce_all(x))) == _bits(_reduced(x))
        assert _bits(t.sum().numpy()) == _bits(_reduced(x))
        assert _bits(t.mean().numpy()) == _bits(np.asarray(np.mean(x)))
