"""oxmera's ``exp`` ufunc (``oxmera._core._kernels.exp``): NumPy's ``exp`` with its own
float32 loop, evaluated in double and rounded once.

The float32 loop is checked over a sample of every float32 bit pattern and
densely where its result leaves the normal range (subnormals from -87.3, 0
below -104, inf above 88.72), against float64 ``exp`` rounded; its special
values and floating-point flags (NumPy warns from them) in every path NumPy
may call it by (contiguous, in place, strided, one element); and the rest of
the ufunc against ``np.exp``: dtype rules, arguments, every other loop's bits.
"""
import warnings

import numpy as np
import pytest

import oxmera
from oxmera._core import _kernels

FLT_MAX_LOG = np.float32(88.72283172607422)      # the largest float32 whose exp is finite


def _float32_ulps(got, expected):
    as_int = lambda a: a.view(np.int32).astype(np.int64)    # noqa: E731
    order = lambda i: np.where(i < 0, -(i & 0x7FFFFFFF), i)  # noqa: E731
    return np.abs(order(as_int(got)) - order(as_int(expected)))


def _rounded_exp(x):
    with np.errstate(over="ignore", under="ignore"):
        return np.exp(x.astype(np.float64)).astype(np.float32)


def _sample():
    bits = np.arange(0, 2 ** 32, 1021, dtype=np.uint64).astype(np.uint32)
    every = bits.view(np.float32)
    every = every[np.isfinite(every)]
    edges = [np.float32(-104), np.float32(-103.28), np.float32(-87.34), FLT_MAX_LOG]
    near = [np.nextafter(e, np.float32(-np.inf)) + np.arange(-2000, 2000, dtype=np.float32)
            * np.spacing(e) for e in edges]
    return np.concatenate([every, *near, np.linspace(-20, 20, 400001, dtype=np.float32)])


def test_float32_exp_is_within_one_ulp_of_the_rounded_float64_value():
    x = _sample()
    got = _kernels.exp(x)
    expected = _rounded_exp(x)
    assert got.dtype == np.float32
    assert _float32_ulps(got, expected).max() <= 1
    # and almost always exactly it (NumPy's own float32 loop differs from it
    # on about 9 % of all inputs here, by up to 3 ulps)
    assert np.mean(got != expected) < 1e-3


def _paths(x):
    """Every way NumPy hands the float32 loop an array: contiguous apart, in
    place, strided, one element at a time."""
    yield "contiguous", _kernels.exp(x)
    inplace = x.copy()
    _kernels.exp(inplace, out=inplace)
    yield "in place", inplace
    wide = np.zeros(2 * x.size, np.float32)
    wide[::2] = x
    yield "strided", _kernels.exp(wide[::2])
    yield "reversed", _kernels.exp(x[::-1])[::-1]
    yield "one by one", np.array([_kernels.exp(v) for v in x], np.float32)


SPECIAL = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, -200.0, 100.0,
                    FLT_MAX_LOG, np.nextafter(FLT_MAX_LOG, np.float32(np.inf)), -104.0,
                    np.float32(-3.4e38), np.float32(3.4e38)], np.float32)


def test_special_values_in_every_path():
    expected = _rounded_exp(SPECIAL)
    for name, got in _paths(np.tile(SPECIAL, 3)):      # long enough for the vector loop
        got = got.reshape(3, -1)
        for row in got:
            np.testing.assert_array_equal(row, expected, err_msg=name)
            assert np.isnan(row[:2]).all(), name
            assert row[2] == np.inf and row[3] == 0 and row[9] == np.inf, name
            assert np.isfinite(row[10]) and row[11] == np.inf, name
            assert row[12] == 0 and row[13] == 0 and row[14] == np.inf, name


@pytest.mark.parametrize("values", [
    [np.nan, -np.nan], [np.inf], [-np.inf], [-200.0, -104.0 - 1e-3], [100.0, 3e38],
    [0.0, 1.0, -50.0, 88.0], [np.nextafter(FLT_MAX_LOG, np.float32(np.inf))]],
    ids=["nan", "inf", "-inf", "zero results", "inf results", "normal", "first inf"])
def test_no_floating_point_flag_but_for_subnormal_results(values):
    # The loop chooses 0, inf and nan results rather than computing them, so
    # it raises no invalid or overflow flag NumPy would warn about.
    x = np.array(values * 20, np.float32)
    with np.errstate(all="raise"):
        for name, got in _paths(x):
            assert got.shape == x.shape, name


def test_subnormal_results_raise_underflow_as_numpys_loop():
    x = np.full(20, -100.0, np.float32)
    with np.errstate(under="raise"):
        with pytest.raises(FloatingPointError, match="underflow"):
            _kernels.exp(x)
        with pytest.raises(FloatingPointError, match="underflow"):
            np.exp(x)


def test_overflow_warns_not_as_numpy():
    # (NumPy's float32 loop raises overflow for a finite input whose exp is
    # inf; this one chooses the inf: no warning. oxmera's exp never warns.)
    x = np.full(20, 100.0, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.all(_kernels.exp(x) == np.inf)
    with pytest.warns(RuntimeWarning, match="overflow"):
        np.exp(x)


@pytest.mark.parametrize("value", [
    np.arange(5, dtype=np.int8), np.arange(5, dtype=np.int16), np.arange(5),
    np.array([True, False]), np.linspace(-3, 3, 7, dtype=np.float16),
    np.linspace(-30, 30, 70), np.linspace(-3, 3, 7).astype(np.longdouble),
    np.array([1 + 2j, -3j], np.complex64), np.array([1 + 2j, -3j]), 2, 2.5, 1 + 1j, [1.0, 2.0],
    np.linspace(-3, 3, 7, dtype=np.float32).astype(">f4")],
    ids=lambda v: str(getattr(v, "dtype", type(v).__name__)))
def test_every_other_loop_and_rule_is_numpys(value):
    got, expected = _kernels.exp(value), np.exp(value)
    assert type(got) is type(expected)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    if np.asarray(got).dtype == np.float32:            # (a big-endian float32 input)
        np.testing.assert_array_equal(got, _rounded_exp(np.asarray(value, np.float32)))
    else:
        np.testing.assert_array_equal(got, expected)


def test_object_arrays_are_numpys_too():
    # the object loop calls each element's exp method, as np.exp's does
    class Value:
        def exp(self):
            return "exp called"
    assert list(_kernels.exp(np.array([Value()], dtype=object))) == ["exp called"]
    for ufunc in (np.exp, _kernels.exp):
        with pytest.raises(TypeError, match="exp method"):
            ufunc(np.array([1.5], dtype=object))


def test_the_ufunc_takes_numpys_arguments():
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    out = np.full((3, 4), 7.0, np.float32)
    assert _kernels.exp(x, out=out) is out
    np.testing.assert_array_equal(out, _kernels.exp(x))
    out[...] = 7.0
    _kernels.exp(x, out=out, where=x > 0)
    np.testing.assert_array_equal(out, np.where(x > 0, _kernels.exp(x), 7.0))
    assert _kernels.exp(x, dtype=np.float64).dtype == np.float64
    assert _kernels.exp.nin == 1 and _kernels.exp.__name__ == "exp"
    assert _kernels.exp.types == np.exp.types
    with pytest.raises(TypeError, match="exp"):
        _kernels.exp(np.array(["a"]))


@pytest.mark.parametrize("size", [1, 16, 5000, 100_000])
def test_oxmera_exp_is_the_loop_at_every_size_and_its_gradient_the_output(size):
    # small arrays go through the core's direct loop call, large ones through
    # the ufunc: the same loop, the same bits
    x = np.random.default_rng(size).uniform(-90, 60, size).astype(np.float32)
    t = oxmera.tensor(x, requires_grad=True)
    y = oxmera.exp(t)
    np.testing.assert_array_equal(y.detach().numpy(), _kernels.exp(x))
    (y * 2).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), 2 * _kernels.exp(x))
    np.testing.assert_array_equal(oxmera.tensor(x).exp().numpy(), _kernels.exp(x))
    np.testing.assert_array_equal(oxmera.tensor(x).exp_().numpy(), _kernels.exp(x))
