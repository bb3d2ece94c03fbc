"""``oxmera.nn.init``: each initializer's distribution (moments and bounds from
many samples), gains and fans against PyTorch's formulas (and PyTorch itself where
installed), in-place semantics (same tensor, version bumped, allowed on leaves that
require grad, nothing recorded), seeding, and errors.
"""
import math
import statistics
import warnings

import numpy as np
import pytest

import oxmera
from oxmera import nn
from oxmera.nn import init

try:
    import torch
except ImportError:        # the suite runs without torch; those comparisons skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("name, param, expected", [
    ("linear", None, 1), ("conv2d", None, 1), ("conv_transpose3d", None, 1), ("sigmoid", None, 1),
    ("tanh", None, 5 / 3), ("relu", None, math.sqrt(2)), ("selu", None, 0.75),
    ("leaky_relu", None, math.sqrt(2 / (1 + 0.01 ** 2))),
    ("leaky_relu", 0.2, math.sqrt(2 / 1.04)), ("leaky_relu", 0, math.sqrt(2)),
])
def test_calculate_gain(name, param, expected):
    assert init.calculate_gain(name, param) == pytest.approx(expected, rel=1e-15)
    if torch is not None:
        assert init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param), rel=1e-15)


def test_calculate_gain_errors():
    with pytest.raises(ValueError, match="unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape, fans", [((3, 5), (5, 3)), ((16, 3, 5, 5), (75, 400)),
                                         ((4, 2, 7), (14, 28)), ((2, 0), (0, 2))])
def test_fan_in_and_fan_out(shape, fans):
    assert init._calculate_fan_in_and_fan_out(oxmera.empty(*shape)) == fans
    if torch is not None:
        assert fans == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))


def test_fan_needs_two_dims():
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(oxmera.empty(3))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(oxmera.empty(3))


N = 200_000


def test_uniform_and_normal_moments():
    oxmera.manual_seed(0)
    u = _np(init.uniform_(oxmera.empty(N), -1.0, 3.0))
    assert u.min() >= -1 and u.max() < 3
    assert u.mean() == pytest.approx(1.0, abs=0.01)
    assert u.var() == pytest.approx(16 / 12, rel=0.01)
    default = _np(init.uniform_(oxmera.empty(N)))
    assert default.min() >= 0 and default.max() < 1
    n = _np(init.normal_(oxmera.empty(N, dtype=oxmera.float64), mean=-2.0, std=0.5))
    assert n.mean() == pytest.approx(-2.0, abs=0.005)
    assert n.std() == pytest.approx(0.5, rel=0.01)


@pytest.mark.parametrize("mean, std, a, b", [(0.0, 1.0, -2.0, 2.0), (0.0, 0.02, -0.04, 0.04),
                                             (1.0, 1.0, 3.0, 5.0), (0.0, 1.0, 0.0, 0.1)])
def test_trunc_normal_bounds_and_moments(mean, std, a, b):
    oxmera.manual_seed(1)
    n = 20_000 if a >= mean + std else N
    values = _np(init.trunc_normal_(oxmera.empty(n, dtype=oxmera.float64), mean, std, a, b))
    assert values.min() >= a and values.max() <= b
    # the moments of the truncated normal
    dist = statistics.NormalDist()
    alpha, beta = (a - mean) / std, (b - mean) / std
    z = dist.cdf(beta) - dist.cdf(alpha)
    pdf_a, pdf_b = dist.pdf(alpha), dist.pdf(beta)
    expected_mean = mean + (pdf_a - pdf_b) / z * std
    expected_var = std ** 2 * (1 + (alpha * pdf_a - beta * pdf_b) / z - ((pdf_a - pdf_b) / z) ** 2)
    assert values.mean() == pytest.approx(expected_mean, abs=0.02 * math.sqrt(expected_var) + 1e-12)
    assert values.var() == pytest.approx(expected_var, rel=0.05)


def test_constant_ones_zeros_eye():
    t = oxmera.empty(2, 3)
    assert init.constant_(t, 0.25) is t and (_np(t) == 0.25).all()
    assert (_np(init.ones_(t)) == 1).all() and not _np(init.zeros_(t)).any()
    np.testing.assert_array_equal(_np(init.eye_(oxmera.empty(3, 2))), np.eye(3, 2))
    with pytest.raises(ValueError, match="2 dimensions"):
        init.eye_(oxmera.empty(2, 2, 2))
    ints = oxmera.zeros(3, dtype=oxmera.int64)
    init.constant_(ints, 2)
    assert ints.tolist() == [2, 2, 2]


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2, 2), (5, 5)])
def test_orthogonal(shape):
    oxmera.manual_seed(2)
    w = _np(init.orthogonal_(oxmera.empty(*shape, dtype=oxmera.float64), gain=2.0))
    m = w.reshape(shape[0], -1)
    small = min(m.shape)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4.0 * np.eye(small), atol=1e-12)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(oxmera.empty(3))


@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_xavier(gain):
    oxmera.manual_seed(3)
    shape = (300, 200, 3)                           # fan_in 600, fan_out 900
    std = gain * math.sqrt(2 / 1500)
    u = _np(init.xavier_uniform_(oxmera.empty(*shape), gain=gain))
    assert np.abs(u).max() <= math.sqrt(3) * std
    assert u.std() == pytest.approx(std, rel=0.01)
    n = _np(init.xavier_normal_(oxmera.empty(*shape), gain=gain))
    assert n.mean() == pytest.approx(0, abs=0.01 * std)
    assert n.std() == pytest.approx(std, rel=0.01)


@pytest.mark.parametrize("a, mode, nonlinearity", [
    (0, "fan_in", "leaky_relu"), (math.sqrt(5), "fan_in", "leaky_relu"),
    (0, "fan_out", "relu"), (0.1, "Fan_Out", "leaky_relu"), (0, "fan_in", "tanh"),
])
def test_kaiming(a, mode, nonlinearity):
    oxmera.manual_seed(4)
    shape = (400, 100, 3)                            # fan_in 300, fan_out 1200
    fan = 300 if mode.lower() == "fan_in" else 1200
    std = init.calculate_gain(nonlinearity, a) / math.sqrt(fan)
    u = _np(init.kaiming_uniform_(oxmera.empty(*shape), a=a, mode=mode,
                                  nonlinearity=nonlinearity))
    assert np.abs(u).max() <= math.sqrt(3) * std
    assert u.std() == pytest.approx(std, rel=0.01)
    n = _np(init.kaiming_normal_(oxmera.empty(*shape), a=a, mode=mode,
                                 nonlinearity=nonlinearity))
    assert n.std() == pytest.approx(std, rel=0.01)


def test_kaiming_errors_and_empty_tensors():
    with pytest.raises(ValueError, match="not supported"):
        init.kaiming_uniform_(oxmera.empty(2, 2), mode="fan_avg")
    with pytest.warns(UserWarning, match="zero-element"):
        t = oxmera.empty(0, 3)
        assert init.kaiming_normal_(t) is t


def test_initializers_work_in_place_on_parameters_and_record_nothing():
    p = nn.Parameter(oxmera.zeros(20, 10))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.trunc_normal_, init.orthogonal_, init.ones_, init.eye_):
        version = p._version
        assert fn(p) is p
        assert p._version > version and p.is_leaf and p.grad_fn is None and p.requires_grad
    view = oxmera.zeros(4, 4)
    init.ones_(view[1])
    assert _np(view)[1].tolist() == [1, 1, 1, 1] and _np(view).sum() == 4
    assert oxmera.is_grad_enabled()


def test_dtypes_are_kept():
    for dtype in (oxmera.float16, oxmera.float32, oxmera.float64):
        t = oxmera.empty(10, 10, dtype=dtype)
        assert init.kaiming_uniform_(t).dtype == dtype and np.isfinite(_np(t)).all()


def test_initializers_reject_non_float_tensors_and_non_tensors():
    with pytest.raises(TypeError, match="floating point"):
        init.normal_(oxmera.zeros(3, dtype=oxmera.int64))
    with pytest.raises(TypeError, match="Tensor"):
        init.uniform_(np.zeros(3))
    with pytest.raises(ValueError, match="a <= b"):
        init.uniform_(oxmera.empty(3), 1.0, 0.0)
    with pytest.raises(ValueError, match="std"):
        init.normal_(oxmera.empty(3), std=-1.0)
    with pytest.raises(ValueError, match="a < b"):
        init.trunc_normal_(oxmera.empty(3), a=1.0, b=1.0)


def test_seeding_and_explicit_generators():
    oxmera.manual_seed(7)
    a = _np(init.normal_(oxmera.empty(5))).copy()
    oxmera.manual_seed(7)
    b = _np(init.normal_(oxmera.empty(5))).copy()
    np.testing.assert_array_equal(a, b)
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    np.testing.assert_array_equal(_np(init.uniform_(oxmera.empty(5), generator=g1)),
                                  _np(init.uniform_(oxmera.empty(5), generator=g2)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        init.xavier_normal_(oxmera.empty(3, 3), generator=np.random.default_rng(0))
