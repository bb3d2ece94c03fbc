"""The compiled kernels (oxmera/_core/_kernels.pyx) behind erf, erfc, gelu and layer_norm.

float32 erf is a vectorized formula of its own (not libm's): it is checked
over a sample of every float32 bit pattern, and densely where its two pieces
meet, against ``math.erf`` rounded, and against SciPy when installed.
"""
import math

import numpy as np
import pytest

import oxmera
from oxmera.ops import elementwise
from oxmera._core import _kernels

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _float32_ulps(got, expected):
    """Distance in float32 ulps (the bit patterns of same-signed floats are ordered)."""
    as_int = lambda a: a.view(np.int32).astype(np.int64)    # noqa: E731
    order = lambda i: np.where(i < 0, -(i & 0x7FFFFFFF), i)  # noqa: E731
    return np.abs(order(as_int(got)) - order(as_int(expected)))


def _float32_sample():
    bits = np.arange(0, 2 ** 32, 4099, dtype=np.uint64).astype(np.uint32)
    every = bits.view(np.float32)
    every = every[np.isfinite(every)]
    # where the pieces meet (1) and the clamp (4), where erf(x) reaches 1 in
    # float32 (3.84), and the bulk of a network's activations
    near = [np.linspace(b - 1e-3, b + 1e-3, 4001, dtype=np.float32) for b in (1.0, 3.84, 4.0)]
    return np.concatenate([every, *near, np.linspace(-6, 6, 200001, dtype=np.float32)])


def test_float32_erf_is_within_one_ulp_of_the_rounded_float64_value():
    x = _float32_sample()
    expected = _erf(x.astype(np.float64)).astype(np.float32)
    got = _kernels.erf(x)
    assert got.dtype == np.float32
    ulps = _float32_ulps(got, expected)
    assert ulps.max() <= 1, (ulps.max(), x[ulps.argmax()])
    # off by one only at near-ties of the rounding: rare
    assert np.count_nonzero(ulps) <= 1e-3 * x.size


def test_float32_erf_agrees_with_scipy():
    special = pytest.importorskip("scipy.special")
    x = _float32_sample()
    expected = special.erf(x.astype(np.float64)).astype(np.float32)
    assert _float32_ulps(_kernels.erf(x), expected).max() <= 1


def test_float64_erf_and_erfc_are_within_an_ulp_of_math():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(50000) * 4, np.geomspace(1e-310, 30, 3000),
                        -np.geomspace(1e-300, 30, 3000), [5e-324, 1e308]])
    for kernel, reference in ((_kernels.erf, _erf), (_kernels.erfc, _erfc)):
        expected = reference(x)
        got = kernel(x)
        assert got.dtype == np.float64
        assert np.all(np.abs(got - expected) <= np.spacing(np.abs(expected))), kernel


def test_float64_erf_agrees_with_scipy():
    special = pytest.importorskip("scipy.special")
    x = np.random.default_rng(4).standard_normal(20000) * 3
    expected = special.erf(x)
    # SciPy's own float64 erf is up to a few ulps off the true value
    assert np.all(np.abs(_kernels.erf(x) - expected) <= 4 * np.spacing(np.abs(expected)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_special_values(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, np.finfo(dtype).max,
                  -np.finfo(dtype).max, 6.0, 100.0], dtype)
    got = _kernels.erf(x)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got[[0, 2, 3, 7, 8, 9, 10]], [0, 1, -1, 1, -1, 1, 1])
    assert np.signbit(got[1]) and got[1] == 0
    assert np.isnan(got[4])
    # erf(x) ~ 2x / sqrt(pi) for tiny x: the smallest subnormal stays nonzero, with its sign
    assert got[5] > 0 and got[6] == -got[5]
    assert np.signbit(_kernels.erfc(np.array([np.inf]))[0]) is np.False_
    np.testing.assert_array_equal(_kernels.erfc(np.array([-np.inf, np.inf, 0.0, 30.0])),
                                  [2.0, 0.0, 1.0, 0.0])
    assert np.isnan(_kernels.erfc(np.array([np.nan]))[0])


def test_kernels_take_any_layout_and_leave_the_input_alone():
    base = np.linspace(-3, 3, 60, dtype=np.float32).reshape(6, 10)
    base.flags.writeable = False                     # saved arrays are read-only
    strided = base[::2, ::-3]
    got = _kernels.erf(strided)
    assert got.shape == strided.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, _kernels.erf(strided.copy()))
    assert _kernels.erf(np.array(0.5)).shape == ()     # 0-d
    assert _kernels.erf(np.zeros((0, 3), np.float32)).shape == (0, 3)
    assert _kernels.erfc(np.zeros(0)).shape == (0,)
    with pytest.raises(TypeError, match="float32 or float64"):
        _kernels.erf(np.zeros(3, np.float16))
    with pytest.raises(TypeError, match="float64"):
        _kernels.erfc(np.zeros(3, np.float32))


def test_erf_and_erfc_of_other_dtypes_go_through_float64():
    swapped = np.linspace(-3, 3, 101).astype(">f4")     # a non-native byte order
    expected = _erf(swapped.astype(np.float64)).astype(np.float32)
    got = oxmera.erf(oxmera.tensor(swapped)).numpy()
    assert got.dtype == swapped.dtype
    np.testing.assert_array_equal(got, expected)
    x = np.linspace(-5, 10, 301).astype(np.float32)
    np.testing.assert_array_equal(oxmera.erfc(oxmera.tensor(x)).numpy(),
                                  _erfc(x.astype(np.float64)).astype(np.float32))


def test_gelu_uses_the_float32_erf():
    x = np.linspace(-6, 6, 10001, dtype=np.float32)
    # the float32 formula x * (erf(x / sqrt 2) + 1) / 2, with erf rounded from float64
    cdf = _erf((x * np.float32(math.sqrt(0.5))).astype(np.float64)).astype(np.float32)
    expected = x * ((cdf + np.float32(1)) * np.float32(0.5))
    got = oxmera.nn.functional.gelu(oxmera.tensor(x)).numpy()
    # erf within one ulp (6e-8 near +-1), times |x| / 2 <= 3
    np.testing.assert_allclose(got, expected, rtol=2.5e-7, atol=2e-7)


def test_gelu_kernel_is_the_float32_formula_in_one_pass():
    from oxmera.ops.elementwise import erf_values
    x = np.concatenate([np.linspace(-12, 12, 30001),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38]]).astype(np.float32)
    out, cdf = _kernels.gelu(x[::-1])                   # a negative stride: copied
    x = x[::-1]
    expected_cdf = (erf_values(x * np.float32(math.sqrt(0.5))) + np.float32(1)) * np.float32(0.5)
    np.testing.assert_array_equal(cdf, expected_cdf)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out, x * expected_cdf)     # -inf * 0: nan, as NumPy's
    with pytest.raises(TypeError, match="float32"):
        _kernels.gelu(np.ones(2))


def _gelu_slope(x):
    """d/dx of x * Phi(x), in float64."""
    return (_erf(x / math.sqrt(2)) + 1) / 2 + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def test_gelu_backward_kernel_matches_the_float64_formula():
    rng = np.random.default_rng(5)
    x = np.concatenate([np.linspace(-40, 40, 20001), rng.standard_normal(20000) * 3,
                        [0.0, -0.0, 1e-30, -1e-30, 3e38, -3e38]]).astype(np.float32)
    grad = rng.standard_normal(x.size).astype(np.float32)
    cdf = ((_erf(x.astype(np.float64) / math.sqrt(2)) + 1) / 2).astype(np.float32)
    got = _kernels.gelu_backward(grad, x, cdf)
    assert got.dtype == np.float32
    wide = x.astype(np.float64)
    # from the float32 cdf the kernel is given (it rounds once, at the end)
    expected = grad * (cdf + wide * np.exp(-wide * wide / 2) / math.sqrt(2 * math.pi))
    np.testing.assert_allclose(got, expected.astype(np.float32), rtol=2e-7, atol=1e-38)
    np.testing.assert_allclose(got, grad * _gelu_slope(wide), rtol=1e-6, atol=1e-7)


def test_gelu_backward_kernel_special_values_are_the_formulas():
    x = np.array([np.inf, -np.inf, np.nan, 0.0], np.float32)
    cdf = np.array([1.0, 0.0, np.nan, 0.5], np.float32)
    got = _kernels.gelu_backward(np.ones(4, np.float32), x, cdf)
    with np.errstate(invalid="ignore"):
        expected = cdf + x * np.exp(-x * x / 2) / np.float32(math.sqrt(2 * math.pi))
    np.testing.assert_array_equal(got, expected)          # inf * 0: nan, as in PyTorch
    with pytest.raises(TypeError, match="float32"):
        _kernels.gelu_backward(np.ones(2), np.ones(2, np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="one shape"):
        _kernels.gelu_backward(*(np.ones(n, np.float32) for n in (2, 2, 3)))


def test_gelu_gradient_through_the_kernel_on_strided_and_broadcast_grads():
    x = oxmera.tensor(np.linspace(-5, 5, 48, dtype=np.float32).reshape(6, 8)[:, ::2],
                      requires_grad=True)
    out = oxmera.nn.functional.gelu(x)
    out.backward(oxmera.ones(1, 4).expand(6, 4))        # a stride-0 gradient
    wide = x.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(x.grad.numpy(), _gelu_slope(wide), rtol=1e-6, atol=1e-7)


# -- layer_norm ------------------------------------------------------------------------------

def _layer_norm_float64(x, weight, bias, dims, eps=1e-5):
    axes = tuple(range(x.ndim - dims, x.ndim))
    mean = x.mean(axes, keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axes, keepdims=True) + eps)
    return (x - mean) * rstd * weight + bias, mean, rstd


@pytest.mark.parametrize("shape, dims", [((4, 6, 16), 1), ((3, 5, 8), 2), ((7, 9), 1)])
def test_layer_norm_float32_forward_and_backward_match_float64(shape, dims):
    rng = np.random.default_rng(6)
    normalized = shape[len(shape) - dims:]
    x = (rng.standard_normal(shape) * 3 + 2).astype(np.float32)
    w, b = (rng.standard_normal(normalized).astype(np.float32) for _ in range(2))
    g = rng.standard_normal(shape).astype(np.float32)
    xt, wt, bt = (oxmera.tensor(a, requires_grad=True) for a in (x, w, b))
    out = oxmera.nn.functional.layer_norm(xt, normalized, wt, bt)
    out.backward(oxmera.tensor(g))
    expected, _, _ = _layer_norm_float64(*(a.astype(np.float64) for a in (x, w, b)), dims)
    assert out.dtype == oxmera.float32
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-5, atol=1e-5)
    # the gradients against float64 ones: the composed path, recorded (create_graph)
    x64, w64, b64 = (oxmera.tensor(a.astype(np.float64), requires_grad=True) for a in (x, w, b))
    out64 = oxmera.nn.functional.layer_norm(x64, normalized, w64, b64)
    grads = oxmera.autograd.grad(out64, (x64, w64, b64), oxmera.tensor(g.astype(np.float64)),
                                 create_graph=True)
    for got, want in zip((xt.grad, wt.grad, bt.grad), grads):
        assert got.dtype == oxmera.float32
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_layer_norm_kernel_keeps_the_statistics_shape_and_skips_broadcast_parameters():
    from oxmera.ops.normalization import _layer_norm
    x = oxmera.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    result = _layer_norm(x, None, None, 2, 1e-5)
    assert result.mean.shape == (2, 1, 1) and result.rstd.shape == (2, 1, 1)
    np.testing.assert_allclose(result.mean.numpy().ravel(), [5.5, 17.5])
    # a 0-d weight (the op broadcasts it; the kernel takes the normalized shape only)
    weighted = _layer_norm(x, oxmera.tensor(2.0), None, 2, 1e-5).output
    np.testing.assert_allclose(weighted.numpy(), 2 * result.output.numpy(), rtol=1e-6)


def test_layer_norm_kernels_refuse_what_they_cannot_take():
    x = np.ones((2, 4), np.float32)
    with pytest.raises(TypeError, match="float32"):
        _kernels.layer_norm(x.astype(np.float64), None, None, 4, 1e-5)
    with pytest.raises(ValueError, match="rows of 3"):
        _kernels.layer_norm(x, None, None, 3, 1e-5)
    with pytest.raises(ValueError, match="weight"):
        _kernels.layer_norm(x, np.ones(3, np.float32), None, 4, 1e-5)
    with pytest.raises(ValueError, match="grad"):
        _kernels.layer_norm_backward(np.ones((3, 4), np.float32), x, None,
                                     np.zeros(2, np.float32), np.ones(2, np.float32), 4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [1, 7, 1000, 70000])
@pytest.mark.parametrize("alpha", [0.37, -1.5, 3, 1e-3])
def test_scaled_update_rounds_as_multiply_then_add(dtype, size, alpha):
    # An optimizer's p.sub_(g, alpha=lr): one pass, the bits of NumPy's two steps.
    rng = np.random.default_rng(size)
    base = rng.standard_normal(size).astype(dtype)
    value = rng.standard_normal(size).astype(dtype)
    for subtract, ufunc in ((True, np.subtract), (False, np.add)):
        target = base.copy()
        _kernels.scaled_update(target, value, alpha, subtract)
        np.testing.assert_array_equal(target, ufunc(base, np.multiply(value, alpha, dtype=dtype)))
    t = oxmera.tensor(base.copy())
    t.sub_(oxmera.tensor(value), alpha=alpha)
    np.testing.assert_array_equal(t.numpy(), base - np.multiply(value, alpha, dtype=dtype))


def test_scaled_update_refuses_what_it_cannot_do():
    # It returns False and writes nothing; its callers then take NumPy's path
    # (with NumPy's errors). True when it wrote.
    a = np.zeros(4, np.float32)
    ones = np.ones(4, np.float32)
    assert _kernels.scaled_update(a, np.zeros(4), 1.0, True) is False       # two dtypes
    assert _kernels.scaled_update(a, np.zeros(5, np.float32), 1.0, True) is False
    assert _kernels.scaled_update(a, a, 1.0, True) is False                  # overlap
    assert _kernels.scaled_update(a[1:], a[:-1], 1.0, True) is False
    for alpha in (True, np.float32(1.0), np.array(1.0), 1j, "1"):            # not int/float
        assert _kernels.scaled_update(a, ones, alpha, True) is False
    assert _kernels.scaled_update(a.astype(">f4"), ones.astype(">f4"), 1.0, True) is False
    assert _kernels.scaled_update(np.zeros(4, np.int32), np.ones(4, np.int32), 1, True) is False
    read_only = np.zeros(4, np.float32)
    read_only.flags.writeable = False
    assert _kernels.scaled_update(read_only, ones, 1.0, True) is False
    assert not read_only.any()
    transposed = np.zeros((4, 4), np.float32).T
    assert _kernels.scaled_update(transposed, np.ones((4, 4), np.float32), 1.0, True) is False
    assert not a.any() and not transposed.any()
    assert _kernels.scaled_update(a, ones, 2, False) is True
    np.testing.assert_array_equal(a, [2, 2, 2, 2])


def _float_pair_by_attributes(a, b):
    # float_pair's definition, in NumPy's words
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
            and a.dtype in (np.float32, np.float64) and a.dtype.isnative
            and a.shape == b.shape and a.flags.c_contiguous and b.flags.c_contiguous)


def _pair_candidates():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    arrays = [base, base.astype(np.float32), base.astype(np.float16), base.astype(np.int64),
              base.astype(">f8"), base.T, base[:, ::2], base[:2], base.reshape(6, 4),
              base.reshape(24), np.zeros((0, 6)), np.zeros(()), base.view(np.matrix),
              [[1.0] * 6] * 4, 3.0, None]
    return arrays


def test_float_pair_reads_what_the_attributes_say():
    candidates = _pair_candidates()
    for a in candidates:
        for b in candidates:
            assert _kernels.float_pair(a, b) == _float_pair_by_attributes(a, b), (a, b)


def test_contiguous_overlap_is_shares_memory_for_contiguous_arrays():
    buffer = np.zeros(64, np.float32)
    pieces = [buffer[0:8], buffer[4:12], buffer[8:16], buffer[16:16], buffer[15:16],
              buffer[0:64], buffer[12:20].reshape(2, 4), np.zeros(8, np.float32)]
    for a in pieces:
        for b in pieces:
            assert _kernels.contiguous_overlap(a, b) == np.shares_memory(a, b), (a, b)
    with pytest.raises(ValueError, match="C-contiguous"):
        _kernels.contiguous_overlap(buffer[::2], buffer)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_is_pytorchs_select(dtype):
    x = np.array([-0.0, 0.0, np.nan, -np.nan, -1.0, 2.0, -np.inf, np.inf,
                  np.finfo(dtype).smallest_subnormal, -np.finfo(dtype).smallest_subnormal], dtype)
    expected = np.array([-0.0, 0.0, np.nan, -np.nan, 0.0, 2.0, 0.0, np.inf,
                         np.finfo(dtype).smallest_subnormal, 0.0], dtype)
    got = _kernels.relu(x)
    assert got.dtype == dtype and got.flags.c_contiguous
    assert np.array_equal(got.view(np.uint8), expected.view(np.uint8))     # -0.0, nan bits
    # the vector loop and its tail, and the op on every layout and dtype
    rng = np.random.default_rng(0)
    long = rng.standard_normal((3, 1001)).astype(dtype)
    np.testing.assert_array_equal(_kernels.relu(long), np.where(long < 0, 0, long))
    for t in (long, long[:, ::2], long.T, long[::-1], long[:1, :1].reshape(())):
        got = oxmera.relu(oxmera.from_numpy(t)).numpy()
        np.testing.assert_array_equal(got, np.where(t < 0, 0, t).astype(dtype), strict=True)
    assert np.signbit(oxmera.relu(oxmera.tensor(x[::2])).numpy()[0])    # (strided: -0.0 too)
    assert _kernels.relu(x.astype(np.float16)) is None      # (the op takes NumPy's path)
    assert _kernels.relu(long[:, ::2]) is None


def test_relu_keeps_a_dense_layout_in_one_pass():
    # A channels-last batch seen as NCHW (a convolution's output): dense memory
    # in another axis order, which the kernel walks as it lies.
    rng = np.random.default_rng(1)
    nhwc = rng.standard_normal((4, 5, 6, 3)).astype(np.float32)
    nchw = nhwc.transpose(0, 3, 1, 2)
    assert not nchw.flags.c_contiguous and _kernels.float_dense(nchw)
    got = _kernels.relu(nchw)
    assert got.strides == nchw.strides
    np.testing.assert_array_equal(got, np.maximum(nchw, 0))
    for dense in (nhwc, nhwc.T, np.asfortranarray(nhwc), nhwc[1:3], np.zeros((0, 3), np.float32),
                  np.ones(()), nhwc[1:2].transpose(3, 1, 0, 2)):
        assert _kernels.float_dense(dense), dense.strides
        got = _kernels.relu(dense)
        np.testing.assert_array_equal(got, np.maximum(dense, 0), strict=True)
        assert got.strides == dense.strides
    for gappy in (nhwc[:, ::2], nhwc[..., :2], nhwc[::-1], nhwc[:, :1], nhwc[..., 0],
                  np.broadcast_to(nhwc[0], (2, 5, 6, 3)), nhwc.astype(">f4"),
                  nhwc.astype(np.float16), nhwc.tolist()):
        assert not _kernels.float_dense(gappy) and _kernels.relu(gappy) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_kernel_is_within_a_few_ulps_of_the_exact_value(dtype):
    # float32 within one ulp of the float64 value rounded; float64 within four
    # ulps of the value in exact arithmetic (mpmath, on a sample)
    x = np.concatenate([np.linspace(-120, 120, 400_001), [1e-30, -1e-30, 745.0, -745.0, -800.0,
                                                          np.finfo(dtype).smallest_subnormal]])
    x = x.astype(dtype)
    got = _kernels.sigmoid(x)
    assert got.dtype == dtype
    if dtype == np.float32:
        with np.errstate(over="ignore"):
            expected = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
        ulps = np.abs(got.view(np.int32).astype(np.int64) - expected.view(np.int32))
        assert ulps.max() <= 1, x[ulps.argmax()]
    else:
        mpmath = pytest.importorskip("mpmath")
        sample = x[::97]
        expected = np.array([float(1 / (1 + mpmath.exp(-mpmath.mpf(float(v))))) for v in sample])
        ulps = np.abs(got[::97].view(np.int64) - expected.view(np.int64))
        assert ulps.max() <= 4, sample[ulps.argmax()]
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    np.testing.assert_array_equal(_kernels.sigmoid(special), np.array([0.5, 0.5, 1, 0, np.nan]))


def test_sigmoid_kernel_keeps_a_dense_layout_and_the_op_takes_every_one():
    rng = np.random.default_rng(2)
    nhwc = rng.standard_normal((4, 5, 6, 3))
    for dense in (nhwc, nhwc.transpose(0, 3, 1, 2), nhwc.T, np.zeros((0, 3)), np.ones(())):
        got = _kernels.sigmoid(dense)
        np.testing.assert_allclose(got, 1 / (1 + np.exp(-dense)), rtol=1e-15)
        assert got.strides == dense.strides
    for gappy in (nhwc[:, ::2], nhwc[..., 0], nhwc.astype(np.float16), nhwc.astype(">f8"),
                  nhwc.tolist()):
        assert _kernels.sigmoid(gappy) is None
    # the op: strided floats through the kernel on a copy, others by the formula
    for t in (nhwc[:, ::2], nhwc[..., 0], nhwc.astype(np.float16), nhwc.astype(np.float32)[::-1]):
        got = oxmera.sigmoid(oxmera.from_numpy(np.ascontiguousarray(t) if t.dtype.byteorder == ">"
                                               else t)).numpy()
        assert got.dtype == t.dtype
        expected = 1 / (1 + np.exp(-t.astype(np.float64)))
        np.testing.assert_allclose(got, expected, rtol={2: 2e-3, 4: 1e-6, 8: 1e-15}[t.itemsize])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_backward_selects_the_gradient_where_the_output_is_positive(dtype):
    grad = np.array([1.0, np.inf, np.nan, -2.0, 3.0, np.inf, 5.0], dtype)
    output = np.array([0.0, 0.0, 0.0, 1.0, np.nan, 2.0, -0.0], dtype)
    expected = np.where(output <= 0, 0, grad).astype(dtype)     # (a nan output passes grad)
    np.testing.assert_array_equal(_kernels.relu_backward(grad, output), expected)
    from oxmera.ops.elementwise import relu_backward
    np.testing.assert_array_equal(relu_backward(oxmera.tensor(grad), oxmera.tensor(output)).numpy(),
                                  expected)
    # a long random run (the vector loop and its tail), and a strided input (NumPy's path)
    rng = np.random.default_rng(0)
    g, y = rng.standard_normal((2, 1001)).astype(dtype)
    np.testing.assert_array_equal(_kernels.relu_backward(g, y), np.where(y > 0, g, 0))
    got = relu_backward(oxmera.tensor(g)[::2], oxmera.tensor(y)[::2]).numpy()
    np.testing.assert_array_equal(got, np.where(y[::2] > 0, g[::2], 0))
    # NumPy's path (strided) agrees with the kernel on the special values
    got = relu_backward(oxmera.tensor(np.repeat(grad, 2))[::2],
                        oxmera.tensor(np.repeat(output, 2))[::2]).numpy()
    np.testing.assert_array_equal(got, expected)
    with pytest.raises(TypeError, match="one dtype"):
        _kernels.relu_backward(g, y.astype(np.float16))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, formula", [
    ("tanh_backward", lambda g, y: g * (1 - y * y)),
    ("sigmoid_backward", lambda g, y: g * y * (1 - y)),
])
def test_activation_vjp_kernels_round_as_numpy_does(name, formula, dtype):
    # One pass, each operation rounded in NumPy's order: the same bits as the
    # three ufuncs, special values included; NumPy's path for other layouts.
    special = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-30, 3e38], dtype)
    g, y = np.meshgrid(special, special)
    g, y = g.ravel().copy(), y.ravel().copy()
    kernel = getattr(_kernels, name)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(kernel(g, y), formula(g, y), strict=True)
        rng = np.random.default_rng(3)
        g, y = rng.standard_normal((2, 1003)).astype(dtype)
        got = kernel(g, y)
        assert got.tobytes() == formula(g, y).tobytes()
        op = getattr(elementwise, name)
        np.testing.assert_array_equal(op(oxmera.tensor(g), oxmera.tensor(y)).numpy(),
                                      formula(g, y), strict=True)
        strided = op(oxmera.tensor(g)[::2], oxmera.tensor(y)[::2]).numpy()
        np.testing.assert_array_equal(strided, formula(g[::2], y[::2]), strict=True)
    with pytest.raises(TypeError, match="one dtype"):
        kernel(g, y.astype(np.float16))
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel(g[::2], y[::2])


@pytest.mark.parametrize("targets, ignore_index, expected", [
    ([0, 2, 1], -100, True),
    ([0, 3, 1], -100, False),           # past the last class
    ([0, -1, 1], -100, False),          # negative
    ([0, 2, 1], 1, False),              # one target is ignored
    ([0, 2, 2], 1, True),               # ignore_index in range, none equal to it
    ([0, 2, 1], np.int64(2), False),    # a NumPy integer ignore_index
    ([], 0, True),
    ([[0, 1], [2, 0]], -100, True),     # (N, d1) targets
])
def test_class_targets_valid_matches_numpy(targets, ignore_index, expected):
    index = np.array(targets, dtype=np.int64)
    assert _kernels.class_targets_valid(index, 3, ignore_index) is expected
    reference = bool(((index >= 0) & (index < 3) & (index != ignore_index)).all())
    assert reference is expected
    strided = np.repeat(index.reshape(-1), 2)[::2]      # not contiguous: copied, same answer
    assert _kernels.class_targets_valid(strided, 3, ignore_index) is expected


def test_class_targets_valid_leaves_other_dtypes_to_numpy():
    assert _kernels.class_targets_valid(np.array([0, 1], np.int32), 3, -100) is None
    assert _kernels.class_targets_valid(np.array([0, 1], ">i8"), 3, -100) is None
    assert _kernels.class_targets_valid([0, 1], 3, -100) is None
    assert _kernels.class_targets_valid(np.array([0, 1]), 3, 1.5) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_take_targets_is_numpys_fancy_index(dtype):
    rng = np.random.default_rng(2)
    values = rng.standard_normal((33, 7)).astype(dtype)
    values[3, 2] = np.nan
    target = rng.integers(0, 7, 33)
    target[3] = 2
    got = _kernels.take_targets(values, target)
    expected = values[np.arange(33), target]
    assert got.dtype == dtype and got.tobytes() == expected.tobytes()
    strided = np.repeat(target, 2)[::2]                 # a non-contiguous target is read too
    assert _kernels.take_targets(values, strided).tobytes() == expected.tobytes()
    assert _kernels.take_targets(values[:0], target[:0]).shape == (0,)


def test_take_targets_leaves_the_rest_to_numpy():
    values, target = np.zeros((3, 4), np.float32), np.array([0, 1, 3])
    assert _kernels.take_targets(values, np.array([0, 4, 1])) is None      # out of range
    assert _kernels.take_targets(values, np.array([0, -1, 1])) is None     # negative
    assert _kernels.take_targets(values.astype(np.float16), target) is None
    assert _kernels.take_targets(np.asfortranarray(np.zeros((3, 4))), target) is None
    assert _kernels.take_targets(values, target.astype(np.int32)) is None
    assert _kernels.take_targets(values, target[:2]) is None
    assert _kernels.take_targets(values.tolist(), target) is None


def _unaligned(values, dtype):
    """``values`` in an array of ``dtype`` one byte off its buffer's alignment."""
    values = np.asarray(values, dtype)
    array = np.ndarray(values.shape, dtype, buffer=bytearray(values.nbytes + 1), offset=1)
    array[...] = values
    assert not array.flags.aligned
    return array


@pytest.mark.parametrize("name, fn", [
    ("gelu", lambda t: oxmera.nn.functional.gelu(t)),
    ("log_softmax", lambda t: oxmera.nn.functional.log_softmax(t, -1)),
    ("softmax", lambda t: oxmera.nn.functional.softmax(t, -1)),
    ("relu", lambda t: oxmera.nn.functional.relu(t)),
    ("erf", lambda t: oxmera.erf(t)),
    ("layer_norm", lambda t: oxmera.nn.functional.layer_norm(t, (3,))),
])
def test_kernels_take_unaligned_memory_a_user_shares(name, fn):
    # from_numpy shares memory as it is; the kernels read an aligned copy of an
    # unaligned input (they refused one with a TypeError when first given pointers)
    values = np.arange(6.0).reshape(2, 3) - 2.5
    results = []
    for array in (_unaligned(values, np.float32), values.astype(np.float32)):
        t = oxmera.from_numpy(array).requires_grad_()
        out = fn(t)
        (out * oxmera.arange(6.0).reshape(2, 3)).sum().backward()
        results.append((out.detach().numpy().tobytes(), t.grad.numpy().tobytes()))
    assert results[0] == results[1]


def test_updates_and_losses_take_unaligned_memory():
    param = oxmera.from_numpy(_unaligned([1.0, 2.0, 3.0], np.float32))
    with oxmera.no_grad():
        param.sub_(oxmera.ones(3), alpha=0.5)            # the one-pass kernel's guard refuses it
    assert param.numpy().tolist() == [0.5, 1.5, 2.5]
    target = oxmera.from_numpy(_unaligned([0, 2], np.int64))
    logits = oxmera.tensor([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], requires_grad=True)
    oxmera.nn.functional.cross_entropy(logits, target).backward()
    aligned = oxmera.tensor([[1.0, 2.0, 3.0], [0.5, 0.0, -1.0]], requires_grad=True)
    oxmera.nn.functional.cross_entropy(aligned, oxmera.tensor([0, 2])).backward()
    assert logits.grad.numpy().tobytes() == aligned.grad.numpy().tobytes()
    assert _kernels.take_targets(np.zeros((2, 3), np.float32), target.numpy()) is None
    assert _kernels.class_targets_valid(target.numpy(), 3, -100) is None


def test_float_rows_takes_only_what_the_row_kernels_take():
    x = np.ones((3, 4), np.float32)
    for array, dim in ((x, -1), (x, 1), (x, np.int64(1)), (x, np.int8(-1)),
                       (np.ones(4, np.float32), 0), (_unaligned(np.ones((2, 3)), np.float32), 1),
                       (x.astype(np.float64), 1), (_unaligned(np.ones((2, 3)), np.float64), -1)):
        assert _kernels.float_rows(array, dim) is True, (array, dim)
    for array, dim in ((x, 0), (x, 2), (x, -2), (x, None), (x, True), (x, 1.0), (x, "1"),
                       (x, np.array([1])), (x.astype(np.float16), 1), (x.astype(">f4"), 1),
                       (x.astype(">f8"), 1), (x.astype(np.complex64), 1), (x.T, 1),
                       (np.ones((3, 0), np.float32), 1),
                       (np.ones((), np.float32), -1), (x.tolist(), 1),
                       (oxmera.tensor(x), 1), (x, 10**30)):
        assert _kernels.float_rows(array, dim) is False, (array, dim)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_rows_fast_path_gives_the_general_paths_bits(name):
    # Without dtype= the forward takes the one-test path; with it (the same
    # dtype) the general one, which reaches the same kernel: equal bits,
    # values and gradients, to second order.
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((5, 7)) * 30).astype(np.float32)
    fn = getattr(oxmera, name)
    results = []
    for kwargs in ({}, {"dtype": oxmera.float32}):
        x = oxmera.tensor(data, requires_grad=True)
        out = fn(x, -1, **kwargs)
        (g,) = oxmera.autograd.grad((out * out).sum(), x, create_graph=True)
        (gg,) = oxmera.autograd.grad(g.sum(), x)
        results.append([t.detach().numpy().tobytes() for t in (out, g, gg)])
    assert results[0] == results[1]
