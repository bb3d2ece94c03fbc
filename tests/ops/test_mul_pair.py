"""mul's VJP in one pass: ``mul_pair`` and its kernel.

When both factors of a large product need a gradient, mul's VJP computes
``grad * other`` and ``grad * input`` as one op, ``mul_pair``, whose float
kernel reads ``grad`` once (``_kernels.mul_pair``). These tests hold it to
NumPy's bits, to the two products' behaviour where the kernel does not apply,
and to the unit hand-on of ``mul`` (``(x * w).sum()``: no product at all).
Its gradients, to second order, are in the case table (``_cases_elementwise``).
"""
import tracemalloc

import numpy as np
import pytest

import oxmera
from oxmera._core import _kernels
from oxmera._core import autograd as core
from oxmera.ops import elementwise

# The smallest gradient mul's VJP takes the pair for, in elements of float32.
BIG = elementwise._PAIR_MIN_BYTES // 4


def _np(t):
    return t.detach().numpy()


def _special(dtype, n, seed):
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(n).astype(dtype)
    info = np.finfo(dtype)
    extremes = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, info.max, -info.max,
                         info.tiny, info.smallest_subnormal, 1.0, -1.0], dtype)
    where = rng.random(n) < 0.3             # every pair of extremes meets somewhere at n=1001
    values[where] = rng.choice(extremes, int(where.sum()))
    return values


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 64, 1001])
def test_the_kernel_gives_numpys_products(dtype, n):
    factor, a, b = (_special(dtype, n, seed) for seed in (1, 2, 3))
    with np.errstate(all="ignore"):
        expected = (np.multiply(factor, a), np.multiply(factor, b))
    got = _kernels.mul_pair(factor, a, b)
    for e, g in zip(expected, got):
        assert g.dtype == dtype and g.shape == (n,) and g.flags.c_contiguous
        np.testing.assert_array_equal(g, e, strict=True)
        finite = ~np.isnan(e)
        assert np.array_equal(g[finite].view(np.uint8), e[finite].view(np.uint8))   # -0.0 too
    for array in (factor, a, b):
        assert array.flags.writeable        # inputs untouched, and written nowhere


def test_the_kernel_takes_a_factor_shared_with_an_operand():
    x = np.linspace(-2.0, 2.0, 9).reshape(3, 3)
    first, second = _kernels.mul_pair(x, x, x.copy())
    np.testing.assert_array_equal(first, x * x)
    np.testing.assert_array_equal(second, x * x)


@pytest.mark.parametrize("args, error, words", [
    ((np.ones(3, np.float32), np.ones(3), np.ones(3, np.float32)), TypeError, "one dtype"),
    ((np.ones(3), np.ones(4), np.ones(3)), ValueError, "one shape"),
    ((np.ones(3), np.ones(3), np.ones((3, 2))[:, 0]), ValueError, "C-contiguous"),
    ((np.ones(3, np.int64),) * 3, TypeError, "float32 or float64"),
    (([1.0], np.ones(1), np.ones(1)), TypeError, "ndarrays"),
])
def test_the_kernel_refuses_what_it_does_not_take(args, error, words):
    with pytest.raises(error, match=words):
        _kernels.mul_pair(*args)


def test_the_op_falls_back_to_numpy_for_other_layouts_and_dtypes():
    f = oxmera.tensor(np.arange(12.0).reshape(3, 4))
    ints = oxmera.tensor(np.arange(4))
    first, second = elementwise.mul_pair(f.T, f.T, ints[:3])
    np.testing.assert_array_equal(_np(first), _np(f).T * _np(f).T)
    np.testing.assert_array_equal(_np(second), _np(f).T * np.arange(3))
    assert second.dtype == oxmera.float64
    # PyTorch's promotion: a float32 factor times an int64 tensor is float32.
    half = elementwise.mul_pair(oxmera.ones(3), ints[:3], 2.0)
    assert half.first.dtype == oxmera.float32 and half.second.dtype == oxmera.float32


def _pair_used(monkeypatch):
    calls = []
    kernel = _kernels.mul_pair

    class Spy:
        def __getattr__(self, name):
            return getattr(_kernels, name)

        @staticmethod
        def mul_pair(*args):
            calls.append(args[0].shape)
            return kernel(*args)
    monkeypatch.setattr(elementwise, "_kernels", Spy())
    return calls


@pytest.mark.parametrize("replay", [False, True], ids=["python", "replayed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_products_gradients_are_one_pass_with_numpys_bits(monkeypatch, replay, dtype):
    calls = _pair_used(monkeypatch)
    previous = core.set_vjp_replay(replay)
    core.forget_vjp_replays(oxmera.mul.op)
    try:
        rng = np.random.default_rng(0)
        n = BIG if dtype == np.float32 else BIG // 2
        x, w = (oxmera.tensor(rng.uniform(-1, 1, n).astype(dtype), requires_grad=True)
                for _ in range(2))
        for _ in range(3):                  # (traced, then replayed)
            x.grad = w.grad = None
            y = (x * w).exp()
            y.sum().backward()
            e = _np(y)
            np.testing.assert_array_equal(_np(x.grad), e * _np(w), strict=True)
            np.testing.assert_array_equal(_np(w.grad), e * _np(x), strict=True)
            assert not np.shares_memory(_np(x.grad), _np(w.grad))
        assert calls == [(n,)] * 3
        if replay:
            assert core.vjp_replays(oxmera.mul.op) == [(True, ("mul_pair",))]
    finally:
        core.set_vjp_replay(previous)


def test_small_products_and_other_signatures_stay_two_products(monkeypatch):
    calls = _pair_used(monkeypatch)
    x = oxmera.tensor(np.linspace(-1, 1, BIG - 1, dtype=np.float32), requires_grad=True)
    w = oxmera.tensor(np.linspace(1, 2, BIG - 1, dtype=np.float32), requires_grad=True)
    (x * w).exp().sum().backward()                        # one element short of the pair
    big = oxmera.tensor(np.linspace(-1, 1, BIG, dtype=np.float32), requires_grad=True)
    (big * w[0]).exp().sum().backward()                   # a broadcast factor
    (big * big.detach()).exp().sum().backward()           # one factor needs no gradient
    (big * big.double()).exp().sum().backward()           # two dtypes
    assert calls == []
    np.testing.assert_allclose(_np(x.grad), np.exp(_np(x) * _np(w)) * _np(w), rtol=1e-6)


@pytest.mark.parametrize("replay", [False, True], ids=["python", "replayed"])
def test_the_broadcast_one_hands_both_factors_on(replay):
    # (x2 * w2).sum(): mul's gradients are w2 and x2 themselves, read-only
    # views for the engine, which the doubling VJPs then read. Computed, the
    # pair would hold two more arrays at the peak.
    previous = core.set_vjp_replay(replay)
    core.forget_vjp_replays(oxmera.mul.op)
    try:
        rng = np.random.default_rng(1)
        x, w = (oxmera.tensor(rng.uniform(-1, 1, BIG).astype(np.float32), requires_grad=True)
                for _ in range(2))
        size = BIG * 4
        for k in range(3):
            x.grad = w.grad = None
            x2, w2 = x * 2, w * 2
            loss = (x2 * w2).sum()
            tracemalloc.start()
            loss.backward()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            np.testing.assert_array_equal(_np(x.grad), _np(w2) * 2)
            np.testing.assert_array_equal(_np(w.grad), _np(x2) * 2)
            for g in (x.grad, w.grad):
                assert _np(g).flags.writeable
                assert not any(np.shares_memory(_np(g), _np(t)) for t in (x, w, x2, w2))
            if k or not replay:             # (a trace computes every product)
                assert peak < 2.5 * size, f"backward's peak {peak / size:.2f} arrays: computed"
    finally:
        core.set_vjp_replay(previous)


def test_create_graph_records_the_pair(monkeypatch):
    calls = _pair_used(monkeypatch)
    rng = np.random.default_rng(2)
    x, w = (oxmera.tensor(rng.uniform(-1, 1, BIG).astype(np.float32), requires_grad=True)
            for _ in range(2))
    g = oxmera.tensor(rng.uniform(-1, 1, BIG).astype(np.float32))
    gx, gw = oxmera.autograd.grad(x * w, [x, w], g, create_graph=True)
    assert calls == [(BIG,)] and gx.requires_grad and gw.requires_grad
    assert gx.grad_fn.name() == "MulPairBackward"
    (ggx,) = oxmera.autograd.grad((gx * gw).sum(), x)
    # d/dx sum(g*w * g*x) = g*w * g
    np.testing.assert_allclose(_np(ggx), _np(g) * _np(w) * _np(g), rtol=1e-6)
