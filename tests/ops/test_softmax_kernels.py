"""The compiled row kernels behind float32 and float64 softmax and log_softmax
(last dim, C-contiguous).

exp is a formula of their own (float32's evaluated in double, rounded once):
checked against NumPy's float64 exp (rounded to float32 for float32), over a
dense sweep of shifts and the special values a masked attention row holds. The forward, the VJPs
(with a full, a per-row and a scalar broadcast gradient) and the ops that
pick the kernels are checked against the float64 formulas.
"""
import numpy as np
import pytest

import oxmera
from oxmera._core import _kernels


def _float32_ulps(got, expected):
    """Distance in float32 ulps (the bit patterns of same-signed floats are ordered)."""
    as_int = lambda a: a.view(np.int32).astype(np.int64)    # noqa: E731
    order = lambda i: np.where(i < 0, -(i & 0x7FFFFFFF), i)  # noqa: E731
    return np.abs(order(as_int(got)) - order(as_int(expected)))


def _log_softmax64(x):
    x = x.astype(np.float64)
    z = x - x.max(-1, keepdims=True)
    e = np.exp(z)
    s = e.sum(-1, keepdims=True)
    return z - np.log(s), e, s


def test_exponentials_are_within_one_ulp_of_the_rounded_float64_exp():
    # a row's maximum 0 and every shift down to where float32 exp underflows (and past it)
    shifts = np.concatenate([[0.0], np.linspace(-110, 0, 2_000_001)]).astype(np.float32)
    _, exps, _ = _kernels.log_softmax_rows(shifts[None])
    expected = np.exp(shifts.astype(np.float64)).astype(np.float32)
    ulps = _float32_ulps(exps[0], expected)
    assert ulps.max() <= 1, (ulps.max(), shifts[ulps.argmax()])
    assert np.count_nonzero(ulps) <= 1e-2 * shifts.size    # near-ties of the rounding only
    assert (exps[0][shifts < -104] == 0).all()


@pytest.mark.parametrize("scale", [1.0, 3.0, 30.0, 1e4])
@pytest.mark.parametrize("shape", [(7, 1000), (3, 2, 17), (5,), (4, 1), (64, 10), (1000, 15)])
def test_forward_matches_float64(scale, shape):
    x = (scale * np.random.default_rng(1).standard_normal(shape)).astype(np.float32)
    out, exps, sums = _kernels.log_softmax_rows(x)
    ref, ref_exps, ref_sums = _log_softmax64(x)
    assert out.dtype == exps.dtype == sums.dtype == np.float32
    assert sums.shape == shape[:-1] + (1,)
    # within two ulps (2.4e-7), or 1e-12 absolute near 0 (at the row's maximum: the
    # double sum of the exponentials is only that accurate, NumPy's float32 far less)
    np.testing.assert_allclose(out, ref, rtol=2.4e-7, atol=1e-12)
    assert _float32_ulps(exps, ref_exps.astype(np.float32)).max() <= 1
    np.testing.assert_allclose(sums, ref_sums, rtol=1.2e-7)
    soft = _kernels.softmax_rows(x)
    assert _float32_ulps(soft, (ref_exps / ref_sums).astype(np.float32)).max() <= 1


def test_special_values_follow_the_formula():
    inf, nan = np.inf, np.nan
    x = np.array([[0, -inf, 1, 2],           # masked entries: exponential 0
                  [nan, 0, 1, 2],            # nan anywhere: all nan
                  [0, 1, -nan, 2],           # (either sign: the maximum may skip it)
                  [-0.0, -0.0, -1, -inf],
                  [inf, 0, 1, 2],            # +inf: all nan (inf - inf)
                  [-inf, -inf, -inf, -inf],  # a fully masked row: all nan
                  [1e4, 0, -1e4, 3e38]], np.float32)
    with np.errstate(invalid="ignore"):
        ref, e, s = _log_softmax64(x)
        ref_soft = e / s
    out, _, _ = _kernels.log_softmax_rows(x)
    soft = _kernels.softmax_rows(x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_allclose(out, ref.astype(np.float32), rtol=2.4e-7)
    np.testing.assert_array_equal(np.isnan(soft), np.isnan(ref_soft))
    np.testing.assert_allclose(soft, ref_soft.astype(np.float32), rtol=2.4e-7)


def _grads(shape, rng):
    """A full gradient, one broadcast along the rows (one value a row), and a scalar seed."""
    full = rng.standard_normal(shape).astype(np.float32)
    per_row = np.broadcast_to(rng.standard_normal(shape[:-1] + (1,)).astype(np.float32), shape)
    seed = np.broadcast_to(np.float32(1 / 3), shape)
    return {"full": full, "per-row": per_row, "seed": seed,
            "transposed": np.asfortranarray(full)}


@pytest.mark.parametrize("kind", ["full", "per-row", "seed", "transposed"])
@pytest.mark.parametrize("shape", [(6, 257), (2, 3, 16)])
def test_backwards_match_float64(kind, shape):
    rng = np.random.default_rng(2)
    x = (3 * rng.standard_normal(shape)).astype(np.float32)
    g = _grads(shape, rng)[kind]
    g64 = g.astype(np.float64)
    _, exps, sums = _kernels.log_softmax_rows(x)
    soft64 = exps.astype(np.float64) / sums.astype(np.float64)
    expected = g64 - soft64 * g64.sum(-1, keepdims=True)
    got = _kernels.log_softmax_rows_backward(g, exps, sums)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    in_place = exps.copy()
    assert _kernels.log_softmax_rows_backward(g, in_place, sums, out=in_place) is in_place
    np.testing.assert_array_equal(in_place, got)

    y = _kernels.softmax_rows(x)
    y64 = y.astype(np.float64)
    expected = y64 * (g64 - (g64 * y64).sum(-1, keepdims=True))
    np.testing.assert_allclose(_kernels.softmax_rows_backward(g, y), expected,
                               rtol=1e-6, atol=1e-7)


def test_kernels_refuse_what_they_do_not_handle():
    with pytest.raises(TypeError):
        _kernels.log_softmax_rows(np.zeros((2, 3), np.float16))
    with pytest.raises(TypeError):
        _kernels.softmax_rows(np.zeros((2, 3), np.int64))
    with pytest.raises(TypeError, match="float64 gradients only"):
        _kernels.softmax_rows_backward(np.ones((2, 3), np.float32), np.ones((2, 3)))
    with pytest.raises(TypeError):
        _kernels.softmax_rows(np.zeros((3, 2), np.float32).T)       # not C-contiguous
    with pytest.raises(ValueError):
        _kernels.softmax_rows(np.zeros((2, 0), np.float32))
    e = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError):
        _kernels.log_softmax_rows_backward(e, e, np.ones((3, 1), np.float32))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("retain", [False, True])
def test_ops_through_the_kernels_match_float64(name, retain):
    rng = np.random.default_rng(4)
    data = (5 * rng.standard_normal((4, 3, 50))).astype(np.float32)
    weights = rng.standard_normal(data.shape)
    results = []
    for dtype in (oxmera.float32, oxmera.float64):
        x = oxmera.tensor(data, dtype=dtype, requires_grad=True)
        out = getattr(oxmera, name)(x, dim=-1)
        ((out * oxmera.tensor(weights, dtype=dtype)).sum() + out.mean()).backward(
            retain_graph=retain)
        results.append((out.detach().numpy(), x.grad.numpy()))
    (out32, grad32), (out64, grad64) = results
    assert out32.dtype == grad32.dtype == np.float32
    np.testing.assert_allclose(out32, out64, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(grad32, grad64, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_second_order_in_float32_matches_float64(name):
    data = (2 * np.random.default_rng(5).standard_normal((3, 40))).astype(np.float32)
    results = []
    for dtype in (oxmera.float32, oxmera.float64):
        x = oxmera.tensor(data, dtype=dtype, requires_grad=True)
        out = getattr(oxmera, name)(x, dim=1)
        (g,) = oxmera.autograd.grad((out * out).sum(), x, create_graph=True)
        (g * g).sum().backward()
        results.append((g.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-5)


# -- cross_entropy's VJP (class-index targets): the two kernels' steps in one pass -------------

def _composed_cross_entropy_backward(scale, target, exps, sums):
    """nll_loss's gradient written into zeros, then log_softmax's VJP kernel: the two
    steps the fused kernel replaces."""
    from oxmera.ops.loss import nll_class_indices_backward
    nll_grad = nll_class_indices_backward.__wrapped__(scale if scale.ndim else scale[()],
                                                      target, 1, exps.shape)
    return _kernels.log_softmax_rows_backward(nll_grad, exps, sums)


@pytest.mark.parametrize("shape", [(64, 10), (3, 1), (5, 17), (2, 40), (0, 3)])
@pytest.mark.parametrize("scale_kind", ["scalar", "rows", "zero", "negative-zero", "special"])
@pytest.mark.parametrize("reuse", [False, True])
def test_cross_entropy_backward_is_the_two_kernels_bit_for_bit(shape, scale_kind, reuse):
    rng = np.random.default_rng(3)
    x = (4 * rng.standard_normal(shape)).astype(np.float32)
    if x.size:
        x[0, 0] = -np.inf      # an exponential of 0 in the first row
    _, exps, sums = _kernels.log_softmax_rows(x) if x.size else (
        None, np.empty(shape, np.float32), np.ones((0, 1), np.float32))
    target = rng.integers(0, shape[1], shape[0]).astype(np.int64)
    scale = {"scalar": np.array(1 / 64, np.float32),
             "rows": rng.standard_normal(shape[0]).astype(np.float32),
             "zero": np.array(0.0, np.float32),
             "negative-zero": np.array(-0.0, np.float32),
             "special": np.array([np.inf, -np.inf, np.nan][:shape[0]] + [1.0] * (shape[0] - 3),
                                 np.float32)}[scale_kind]
    if scale.ndim and scale.shape[0] != shape[0]:
        scale = scale[:shape[0]]
    given = exps.copy()
    if not x.size:      # no rows (the log_softmax kernel takes none): nothing to compute
        got = _kernels.cross_entropy_rows_backward(scale, target, given, sums, reuse)
        assert got.shape == shape and (got is given) == reuse
        return
    expected = _composed_cross_entropy_backward(scale, target, exps, sums)
    got = _kernels.cross_entropy_rows_backward(scale, target, given, sums, reuse)
    assert (got is given) == reuse
    assert got.dtype == np.float32 and got.shape == shape
    assert got.tobytes() == expected.tobytes()       # bit for bit, signed zeros and nan included


def test_cross_entropy_backward_kernel_refuses_what_it_does_not_handle():
    _, exps, sums = _kernels.log_softmax_rows(np.zeros((2, 3), np.float32))
    scale, target = np.array(0.5, np.float32), np.array([0, 2])
    assert _kernels.cross_entropy_rows_takes(scale, target, exps, sums)
    for args in [(scale.astype(np.float64), target, exps, sums),
                 (scale, target.astype(np.int32), exps, sums),
                 (scale, target, exps.astype(np.float64), sums),
                 (scale, target[:1], exps, sums),
                 (np.ones(3, np.float32), target, exps, sums),
                 (scale, target, np.asfortranarray(np.zeros((2, 3), np.float32)), sums),
                 (0.5, target, exps, sums)]:
        assert not _kernels.cross_entropy_rows_takes(*args)
        with pytest.raises(TypeError, match="float32"):
            _kernels.cross_entropy_rows_backward(*args)
    before = exps.copy()
    with pytest.raises(IndexError, match="target 3 is out of bounds for 3 classes"):
        _kernels.cross_entropy_rows_backward(scale, np.array([3, 0]), exps, sums)
    assert exps.tobytes() == before.tobytes()       # nothing written into the inputs


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_gradient_through_the_kernel_matches_the_composed_loss(reduction):
    # The fused op's VJP (the kernel) against log_softmax + nll_loss as two recorded ops.
    rng = np.random.default_rng(5)
    x = (3 * rng.standard_normal((16, 7))).astype(np.float32)
    target = oxmera.tensor(rng.integers(0, 7, 16))
    weight = rng.standard_normal(16).astype(np.float32)
    grads = []
    for fused in (True, False):
        logits = oxmera.tensor(x, requires_grad=True)
        if fused:
            loss = oxmera.nn.functional.cross_entropy(logits, target, reduction=reduction)
        else:
            logp = oxmera.log_softmax(logits, 1)
            loss = oxmera.nn.functional.nll_loss(logp, target, reduction=reduction)
        (loss * oxmera.tensor(weight) if reduction == "none" else loss).sum().backward()
        grads.append(logits.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-8)


# -- float64 rows ------------------------------------------------------------------------

def _float64_ulps(got, expected):
    """Distance in float64 ulps of same-signed, non-nan values (their bit patterns are ordered)."""
    return np.abs(got.view(np.int64) - expected.view(np.int64))


def test_float64_exponentials_are_within_one_ulp_of_numpys_exp():
    # every shift from 0 down past where exp underflows (subnormal results included)
    shifts = np.concatenate([[0.0, -0.0, -1e-300, -5e-324, -np.inf],
                             -np.linspace(0, 760, 1_000_001), -np.geomspace(1e-18, 745, 100_001)])
    _, exps, sums = _kernels.log_softmax_rows(shifts[None])
    expected = np.exp(shifts)
    assert exps.dtype == sums.dtype == np.float64
    ulps = _float64_ulps(exps[0], expected)
    assert ulps.max() <= 1, (ulps.max(), shifts[ulps.argmax()])
    assert np.count_nonzero(ulps) <= 0.1 * shifts.size
    assert (exps[0][shifts <= -746] == 0).all()
    assert np.count_nonzero(exps[0][(shifts < -708.4) & (shifts > -744)]) > 0   # subnormals


@pytest.mark.parametrize("scale", [1.0, 30.0, 1e4])
@pytest.mark.parametrize("shape", [(7, 1000), (3, 2, 17), (5,), (4, 1), (64, 10)])
def test_float64_forward_and_backwards_match_the_formulas(scale, shape):
    rng = np.random.default_rng(6)
    x = scale * rng.standard_normal(shape)
    out, exps, sums = _kernels.log_softmax_rows(x)
    ref, ref_exps, ref_sums = _log_softmax64(x)
    assert out.dtype == exps.dtype == sums.dtype == np.float64
    np.testing.assert_allclose(out, ref, rtol=1e-14, atol=1e-14)
    assert _float64_ulps(exps, ref_exps).max() <= 1
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-14)
    soft = _kernels.softmax_rows(x)
    np.testing.assert_allclose(soft, ref_exps / ref_sums, rtol=1e-14, atol=1e-300)
    for kind, g in _grads(shape, rng).items():
        g = g.astype(np.float64)
        expected = g - (exps / sums) * g.sum(-1, keepdims=True)
        np.testing.assert_allclose(_kernels.log_softmax_rows_backward(g, exps, sums), expected,
                                   rtol=1e-12, atol=1e-13, err_msg=kind)
        expected = soft * (g - (g * soft).sum(-1, keepdims=True))
        np.testing.assert_allclose(_kernels.softmax_rows_backward(g, soft), expected,
                                   rtol=1e-12, atol=1e-13, err_msg=kind)
    in_place = exps.copy()
    g = rng.standard_normal(shape)
    assert _kernels.log_softmax_rows_backward(g, in_place, sums, out=in_place) is in_place
    np.testing.assert_array_equal(in_place, _kernels.log_softmax_rows_backward(g, exps, sums))


def test_float64_special_values_follow_the_formula():
    inf, nan = np.inf, np.nan
    x = np.array([[0, -inf, 1, 2], [nan, 0, 1, 2], [0, 1, -nan, 2], [-0.0, -0.0, -1, -inf],
                  [inf, 0, 1, 2], [-inf, -inf, -inf, -inf], [1e300, 0, -1e300, 1.7e308]])
    with np.errstate(invalid="ignore", over="ignore"):
        ref, e, s = _log_softmax64(x)
        ref_soft = e / s
    out, _, _ = _kernels.log_softmax_rows(x)
    soft = _kernels.softmax_rows(x)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    np.testing.assert_allclose(out, ref, rtol=1e-15)
    np.testing.assert_array_equal(np.isnan(soft), np.isnan(ref_soft))
    np.testing.assert_allclose(soft, ref_soft, rtol=1e-15)


def test_float64_ops_take_the_kernels_and_keep_their_gradients():
    # the ops reach the float64 kernels (a spy), and their values and first and
    # second-order gradients agree with float32's kernels and with gradcheck
    rng = np.random.default_rng(7)
    data = 4 * rng.standard_normal((5, 33))
    calls = []
    originals = {name: getattr(_kernels, name) for name in
                 ("log_softmax_rows", "softmax_rows", "log_softmax_rows_backward",
                  "softmax_rows_backward")}

    def spy(name):
        def call(*args, **kwargs):
            calls.append((name, args[0].dtype))
            return originals[name](*args, **kwargs)
        return call
    try:
        for name in originals:
            setattr(_kernels, name, spy(name))
        for fn in (oxmera.softmax, oxmera.log_softmax):
            x = oxmera.tensor(data, requires_grad=True)
            (fn(x, -1) * oxmera.tensor(rng.standard_normal(data.shape))).sum().backward()
    finally:
        for name, original in originals.items():
            setattr(_kernels, name, original)
    assert {name for name, dtype in calls if dtype == np.float64} == set(originals)
    for fn in (oxmera.softmax, oxmera.log_softmax):
        x = oxmera.tensor(data[:3, :6], requires_grad=True)
        assert oxmera.autograd.gradcheck(lambda t: fn(t, -1), (x,))
        assert oxmera.autograd.gradgradcheck(lambda t: fn(t, -1), (x,))
