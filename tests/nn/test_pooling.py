"""The pooling functions and layers (``oxmera/ops/pooling.py``, ``nn/modules/pooling.py``).

Against direct loop references (no torch needed) and, where torch is
installed, against PyTorch in float64: values, indices, gradients (also at
ties and NaN), error types, the layers' attributes and reprs. The gradient
cases (gradcheck and gradgradcheck) are in ``tests/ops/_cases_pooling.py``
and ``tests/nn/_gradient_cases.py``.
"""
import itertools
import math

import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn


def _np(t):
    return t.detach().numpy()


# -- loop references ----------------------------------------------------------------------------

def _windows(spatial, kernel, stride, padding, dilation, ceil_mode):
    """Each output cell's window taps per dim (PyTorch's output size rule)."""
    per_dim = []
    for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        size = (math.ceil(span / s) if ceil_mode else span // s) + 1
        if ceil_mode and (size - 1) * s >= n + p:
            size -= 1
        per_dim.append([[o * s - p + i * d for i in range(k)] for o in range(size)])
    return per_dim


def max_pool_loop(x, kernel, stride, padding, dilation=1, ceil_mode=False):
    """Max pooling of ``x`` (N, C, *spatial) by loops: values and flat indices (first maximum)."""
    nd = x.ndim - 2
    spatial = x.shape[2:]
    per = _windows(spatial, *(tuple(v) if isinstance(v, tuple) else (v,) * nd
                              for v in (kernel, stride, padding, dilation)), ceil_mode)
    out_size = tuple(len(w) for w in per)
    values = np.empty(x.shape[:2] + out_size)
    indices = np.empty(x.shape[:2] + out_size, np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for cell in itertools.product(*(range(o) for o in out_size)):
            best, where = -np.inf, None
            for taps in itertools.product(*(per[d][cell[d]] for d in range(nd))):
                if all(0 <= t < size for t, size in zip(taps, spatial)):
                    value = x[(n, c) + taps]
                    if where is None or value > best:
                        best, where = value, taps
            values[(n, c) + cell] = best
            indices[(n, c) + cell] = np.ravel_multi_index(where, spatial)
    return values, indices


def adaptive_loop(x, out_size, reduce):
    """Adaptive pooling of ``x`` (N, C, *spatial) by loops, PyTorch's windows."""
    nd = x.ndim - 2
    spatial = x.shape[2:]
    result = np.empty(x.shape[:2] + tuple(out_size))
    for cell in itertools.product(*(range(o) for o in out_size)):
        box = tuple(slice(i * n // o, -(-(i + 1) * n // o))
                    for i, n, o in zip(cell, spatial, out_size))
        result[(Ellipsis,) + cell] = reduce(x[(Ellipsis,) + box], tuple(range(2, 2 + nd)))
    return result


LOOP_CONFIGS = [
    # (input shape, kernel, stride, padding, dilation, ceil_mode)
    ((2, 2, 7), 3, 2, 1, 1, False),
    ((1, 2, 8), 2, 3, 1, 2, True),
    ((1, 2, 4, 5, 3), 2, 1, 0, 1, False),
    ((2, 1, 5, 4, 6), (3, 2, 2), (2, 1, 3), (1, 0, 1), (1, 2, 1), True),
]


@pytest.mark.parametrize("config", LOOP_CONFIGS, ids=str)
def test_max_pool_matches_the_loop_reference(config):
    shape, kernel, stride, padding, dilation, ceil_mode = config
    x = np.random.default_rng(0).standard_normal(shape)
    pool = F.max_pool1d if len(shape) == 3 else F.max_pool3d
    values, indices = pool(oxmera.tensor(x), kernel, stride, padding, dilation, ceil_mode,
                           return_indices=True)
    expected_values, expected_indices = max_pool_loop(x, kernel, stride, padding, dilation,
                                                      ceil_mode)
    np.testing.assert_array_equal(_np(values), expected_values)
    np.testing.assert_array_equal(_np(indices), expected_indices)


@pytest.mark.parametrize("shape, out_size", [((2, 3, 7), (3,)), ((1, 2, 5, 3), (3, 4)),
                                             ((1, 1, 4, 5, 3), (3, 2, 2))], ids=str)
def test_adaptive_pools_match_the_loop_reference(shape, out_size):
    x = np.random.default_rng(1).standard_normal(shape)
    nd = len(out_size)
    adaptive_max = getattr(F, f"adaptive_max_pool{nd}d")
    adaptive_avg = getattr(F, f"adaptive_avg_pool{nd}d")
    np.testing.assert_array_equal(_np(adaptive_max(oxmera.tensor(x), out_size)),
                                  adaptive_loop(x, out_size, np.max))
    np.testing.assert_allclose(_np(adaptive_avg(oxmera.tensor(x), out_size)),
                               adaptive_loop(x, out_size, np.mean), atol=1e-12)


def test_avg_pool3d_is_the_window_mean_with_pytorch_divisors():
    x = np.random.default_rng(2).standard_normal((1, 2, 3, 4, 5))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)))
    ours = _np(F.avg_pool3d(oxmera.tensor(x), 3, 2, 1))
    expected = np.empty(ours.shape)
    for cell in itertools.product(*(range(o) for o in ours.shape[2:])):
        box = tuple(slice(2 * i, 2 * i + 3) for i in cell)
        expected[(Ellipsis,) + cell] = padded[(Ellipsis,) + box].mean(axis=(2, 3, 4))
    np.testing.assert_allclose(ours, expected, atol=1e-12)
    excluded = _np(F.avg_pool3d(oxmera.tensor(x), 3, 2, 1, count_include_pad=False))
    counts = _np(F.avg_pool3d(oxmera.ones(1, 1, 3, 4, 5, dtype=oxmera.float64), 3, 2, 1,
                              divisor_override=1))
    np.testing.assert_allclose(excluded, ours * 27 / counts, atol=1e-12)


def test_unpool_inverts_pool_at_the_maxima():
    x = oxmera.tensor(np.random.default_rng(3).permutation(24).reshape(1, 2, 12) + 1.0)
    values, indices = F.max_pool1d(x, 3, return_indices=True)
    restored = _np(F.max_unpool1d(values, indices, 3))
    kept = restored != 0
    np.testing.assert_array_equal(restored[kept], _np(x)[kept])
    assert kept.sum(axis=-1).tolist() == [[4, 4]]
    windows = _np(x).reshape(1, 2, 4, 3)
    np.testing.assert_array_equal(restored.reshape(1, 2, 4, 3).max(axis=-1), windows.max(axis=-1))


def test_max_ties_send_the_gradient_to_the_first_maximum():
    x = oxmera.ones(1, 1, 2, 2, 2, dtype=oxmera.float64, requires_grad=True)
    F.max_pool3d(x, 2).sum().backward()
    assert _np(x.grad).ravel().tolist() == [1.0] + [0.0] * 7
    y = oxmera.tensor([[[1.0, 3.0, 3.0, 2.0]]], dtype=oxmera.float64, requires_grad=True)
    F.adaptive_max_pool1d(y, 1).sum().backward()
    assert _np(y.grad).ravel().tolist() == [0.0, 1.0, 0.0, 0.0]


def test_padding_never_wins_even_against_minus_infinity():
    x = oxmera.tensor([[[-np.inf, -np.inf, 1.0]]])
    values, indices = F.max_pool1d(x, 3, 2, 1, return_indices=True)
    assert _np(values).tolist() == [[[-np.inf, 1.0]]]
    assert _np(indices).tolist() == [[[0, 2]]]


def test_empty_dilated_window_is_refused():
    with pytest.raises(RuntimeError, match="holds no element"):
        F.max_pool1d(oxmera.ones(1, 1, 2), 2, stride=1, padding=1, dilation=3)


def test_errors_name_the_function_and_record_nothing():
    x = oxmera.ones(1, 2, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"max_pool3d\(\).*\(1, 2, 4\)"):
        F.max_pool3d(x, 2)
    with pytest.raises(RuntimeError, match=r"avg_pool1d\(\): padding"):
        F.avg_pool1d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool1d\(\)"):
        F.adaptive_avg_pool1d(x, -1)
    with pytest.raises(NotImplementedError, match="adaptive_max_pool1d"):
        F.adaptive_max_pool1d(oxmera.ones(1, 2, 4, dtype=oxmera.int64), 2)
    with pytest.raises(ZeroDivisionError):
        F.lp_pool1d(x, 0, 2)
    assert x.grad is None and x._version == 0


def test_integer_input_of_fixed_window_pools_becomes_float():
    # As max_pool2d / avg_pool2d (PyTorch keeps the integer dtype, or refuses).
    x = oxmera.arange(8).reshape(1, 1, 8)
    assert F.max_pool1d(x, 2).dtype == oxmera.float32
    assert F.avg_pool1d(x, 2).tolist() == [[[0.5, 2.5, 4.5, 6.5]]]


def test_float32_stays_float32():
    x = oxmera.randn(1, 2, 4, 4, 4)
    for out in (F.max_pool3d(x, 2), F.avg_pool3d(x, 2), F.adaptive_max_pool3d(x, 3),
                F.adaptive_avg_pool3d(x, 3), F.lp_pool3d(x, 2, 2),
                F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2)):
        assert out.dtype == oxmera.float32


def test_layers_have_no_state_and_call_their_function():
    x = oxmera.randn(2, 3, 6, dtype=oxmera.float64)
    pool = nn.MaxPool1d(2, return_indices=True)
    values, indices = pool(x)
    np.testing.assert_array_equal(_np(nn.MaxUnpool1d(2)(values, indices, x.shape)),
                                  _np(F.max_unpool1d(values, indices, 2, output_size=(6,))))
    assert pool.state_dict() == {} and list(pool.parameters()) == []
    assert nn.AdaptiveMaxPool1d(4, return_indices=True)(x)[1].dtype == oxmera.int64


# -- against PyTorch -------------------------------------------------------------------------------

def _both(torch, array, requires_grad=True):
    return (oxmera.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


def _compare(torch, fn, array, atol=1e-12):
    """``fn(lib, x)`` in both libraries: values (and indices), the gradient of a weighted sum."""
    results = []
    for lib, x in zip((oxmera, torch), _both(torch, array)):
        out = fn(lib, x)
        outputs = list(out) if isinstance(out, tuple) else [out]
        weights = np.random.default_rng(5).uniform(0.5, 1.5, tuple(outputs[0].shape))
        w = oxmera.tensor(weights) if lib is oxmera else torch.tensor(weights)
        (outputs[0] * w).sum().backward()
        results.append(([o.detach().numpy() for o in outputs], x.grad.numpy()))
    (ours, our_grad), (theirs, their_grad) = results
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, atol=atol, equal_nan=True)
    np.testing.assert_allclose(our_grad, their_grad, atol=atol)


def _random_geometry(rng, nd):
    kernel = tuple(int(v) for v in rng.integers(1, 4, nd))
    return dict(kernel=kernel, stride=tuple(int(v) for v in rng.integers(1, 4, nd)),
                padding=tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel),
                dilation=tuple(int(v) for v in rng.integers(1, 3, nd)),
                ceil_mode=bool(rng.integers(2)), count_include_pad=bool(rng.integers(2)),
                shape=(2, 2)[int(rng.integers(2)):] + tuple(int(v) for v in rng.integers(3, 7, nd)),
                ties=bool(rng.integers(2)), out_size=tuple(int(v) for v in rng.integers(1, 7, nd)))


GEOMETRIES = [(nd, seed) for nd in (1, 2, 3) for seed in range(12)]


@pytest.mark.parametrize("nd, seed", GEOMETRIES)
def test_pools_match_torch_on_random_geometries(nd, seed):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(100 * nd + seed)
    g = _random_geometry(rng, nd)
    x = rng.standard_normal(g["shape"])
    if g["ties"]:
        x = np.round(x)         # many ties: the gradient goes to each window's first maximum
    k, s, p, d, ceil = g["kernel"], g["stride"], g["padding"], g["dilation"], g["ceil_mode"]
    max_name, avg_name = f"max_pool{nd}d", f"avg_pool{nd}d"

    def max_pool(lib, t):
        return getattr(lib.nn.functional, max_name)(t, k, s, p, d, ceil, return_indices=True)

    try:
        torch_max = max_pool(torch, torch.tensor(x))
    except RuntimeError:
        torch_max = None
    if torch_max is not None and not (torch_max[0] == -math.inf).any():
        _compare(torch, max_pool, x)
    else:
        # PyTorch refuses too, or pools a window of padding only, which we refuse
        with pytest.raises(RuntimeError):
            max_pool(oxmera, oxmera.tensor(x))

    def avg_pool(lib, t):
        return getattr(lib.nn.functional, avg_name)(t, k, s, p, ceil, g["count_include_pad"])

    _compare(torch, avg_pool, x)
    if nd == 3:
        divisor = int(rng.integers(1, 9))
        _compare(torch, lambda lib, t: lib.nn.functional.avg_pool3d(
            t, k, s, p, ceil, divisor_override=divisor), x)
    out_size = g["out_size"]
    _compare(torch, lambda lib, t: getattr(lib.nn.functional, f"adaptive_max_pool{nd}d")(
        t, out_size, True), x)
    _compare(torch, lambda lib, t: getattr(lib.nn.functional, f"adaptive_avg_pool{nd}d")(
        t, out_size), x)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nan_wins_its_window_as_in_torch(nd):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(nd).standard_normal((1, 2) + (4,) * nd)
    x.reshape(-1)[[1, 5, 6, 7]] = np.nan
    for name, args in ((f"max_pool{nd}d", (3, 1, 1)), (f"adaptive_max_pool{nd}d", (3,))):
        ours = getattr(F, name)(oxmera.tensor(x), *args, return_indices=True)
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), *args, return_indices=True)
        np.testing.assert_array_equal(_np(ours[0]), theirs[0].numpy())
        np.testing.assert_array_equal(_np(ours[1]), theirs[1].numpy())


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("norm_type", [1, 2, 3.0, math.inf, -math.inf])
def test_lp_pool_matches_torch(nd, norm_type):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(7).uniform(0.5, 2.0, (2, 2) + (5,) * nd)
    name = f"lp_pool{nd}d"
    _compare(torch, lambda lib, t: getattr(lib.nn.functional, name)(t, norm_type, 2), x)
    _compare(torch, lambda lib, t: getattr(lib.nn.functional, name)(t, norm_type, 3, 2, True), x)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_matches_torch(nd):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(8).permutation(2 * 2 * 5 ** nd).reshape((2, 2) + (5,) * nd) + 1.0
    pool, unpool = f"max_pool{nd}d", f"max_unpool{nd}d"
    _, indices = getattr(F, pool)(oxmera.tensor(x), 3, 2, 1, return_indices=True)
    values = _np(getattr(F, pool)(oxmera.tensor(x), 3, 2, 1))
    for output_size in (None, (5,) * nd, (2, 2) + (6,) * nd):
        def fn(lib, v, output_size=output_size):
            idx = indices if lib is oxmera else torch.from_numpy(indices.numpy())
            return getattr(lib.nn.functional, unpool)(v, idx, 3, 2, 1, output_size=output_size)
        _compare(torch, fn, values)
    # unbatched, through the layers
    ours = getattr(nn, f"MaxUnpool{nd}d")(3, 2, 1)(oxmera.tensor(values[0]), indices[0])
    theirs = getattr(torch.nn, f"MaxUnpool{nd}d")(3, 2, 1)(
        torch.tensor(values[0]), torch.from_numpy(indices[0].numpy()))
    np.testing.assert_array_equal(_np(ours), theirs.numpy())


def test_max_unpool_repeated_index_keeps_the_last_value_and_gathers_the_gradient():
    torch = pytest.importorskip("torch")
    indices = np.array([[[0, 0, 1]]])

    def fn(lib, v):
        idx = oxmera.tensor(indices) if lib is oxmera else torch.from_numpy(indices)
        return lib.nn.functional.max_unpool1d(v, idx, 2)

    _compare(torch, fn, np.array([[[1.0, 2.0, 3.0]]]))


def _error_type(fn):
    try:
        fn()
    except Exception as error:     # noqa: BLE001 - the type is what is compared
        return type(error)
    return None


ERROR_CALLS = {
    "max_pool1d-4d": lambda lib, x: lib.nn.functional.max_pool1d(x.reshape(1, 2, 3, 4), 2),
    "max_pool1d-empty-length": lambda lib, x: lib.nn.functional.max_pool1d(x[..., :0], 1),
    "max_pool1d-kernel-0": lambda lib, x: lib.nn.functional.max_pool1d(x, 0),
    "max_pool1d-stride-0": lambda lib, x: lib.nn.functional.max_pool1d(x, 2, 0),
    "max_pool1d-padding-over-half": lambda lib, x: lib.nn.functional.max_pool1d(x, 3, 1, 2),
    "max_pool1d-negative-padding": lambda lib, x: lib.nn.functional.max_pool1d(x, 2, 1, -1),
    "max_pool1d-kernel-pair": lambda lib, x: lib.nn.functional.max_pool1d(x, (2, 2)),
    "max_pool1d-too-large": lambda lib, x: lib.nn.functional.max_pool1d(x, 13),
    "max_pool1d-float-kernel": lambda lib, x: lib.nn.functional.max_pool1d(x, 2.0),
    "max_pool3d-3d": lambda lib, x: lib.nn.functional.max_pool3d(x, 2),
    "max_pool3d-dilation-0": lambda lib, x: lib.nn.functional.max_pool3d(
        x.reshape(1, 2, 2, 3), 1, dilation=0),
    "avg_pool1d-kernel-pair": lambda lib, x: lib.nn.functional.avg_pool1d(x, (2, 2)),
    "avg_pool1d-1d": lambda lib, x: lib.nn.functional.avg_pool1d(x[0, 0], 2),
    "avg_pool3d-divisor-0": lambda lib, x: lib.nn.functional.avg_pool3d(
        x.reshape(1, 2, 2, 3), 1, divisor_override=0),
    "avg_pool3d-divisor-float": lambda lib, x: lib.nn.functional.avg_pool3d(
        x.reshape(1, 2, 2, 3), 1, divisor_override=1.5),
    "avg_pool3d-too-large": lambda lib, x: lib.nn.functional.avg_pool3d(
        x.reshape(1, 2, 2, 3), 3),
    "adaptive_max_pool1d-empty": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(
        x[..., :0], 2),
    "adaptive_max_pool1d-pair": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, (2, 2)),
    "adaptive_max_pool2d-2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x[0], 2),
    "adaptive_max_pool1d-long": lambda lib, x: lib.nn.functional.adaptive_max_pool1d(
        x.long(), 2),
    "adaptive_avg_pool2d-negative": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(
        x, -1),
    "adaptive_avg_pool3d-pair": lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(
        x.reshape(1, 2, 2, 3), (2, 2)),
    "max_unpool1d-bad-index": lambda lib, x: lib.nn.functional.max_unpool1d(
        x[..., :2], (x[..., :2] * 0 + 9).long(), 2),
    "max_unpool1d-int32-index": lambda lib, x: lib.nn.functional.max_unpool1d(
        x[..., :2], (x[..., :2] * 0).int(), 2),
    "max_unpool1d-index-shape": lambda lib, x: lib.nn.functional.max_unpool1d(
        x[..., :2], (x[..., :1] * 0).long(), 2),
    "max_unpool1d-output-size": lambda lib, x: lib.nn.functional.max_unpool1d(
        x[..., :2], (x[..., :2] * 0).long(), 2, output_size=(9,)),
    "max_unpool1d-output-size-length": lambda lib, x: lib.nn.functional.max_unpool1d(
        x[..., :2], (x[..., :2] * 0).long(), 2, output_size=(1, 4)),
    "lp_pool1d-norm-0": lambda lib, x: lib.nn.functional.lp_pool1d(x, 0, 2),
}


@pytest.mark.parametrize("name", sorted(ERROR_CALLS))
def test_errors_have_torch_types(name):
    torch = pytest.importorskip("torch")
    array = np.random.default_rng(0).standard_normal((1, 2, 6))
    theirs = _error_type(lambda: ERROR_CALLS[name](torch, torch.tensor(array)))
    ours = _error_type(lambda: ERROR_CALLS[name](oxmera, oxmera.tensor(array)))
    assert theirs is not None, f"torch accepts {name}"
    assert ours is not None and issubclass(ours, theirs), (ours, theirs)


LAYERS = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1, "dilation": 2, "return_indices": True,
                        "ceil_mode": True}, (2, 3, 9)),
    ("MaxPool2d", ((2, 3),), {"dilation": (1, 2)}, (2, 8, 9)),
    ("MaxPool3d", (2,), {"stride": 1, "padding": 1, "return_indices": True}, (1, 2, 3, 4, 3)),
    ("AvgPool1d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}, (2, 3, 8)),
    ("AvgPool2d", (3, 2, 1), {"divisor_override": 4}, (2, 5, 6)),
    ("AvgPool3d", ((1, 3, 2),), {"padding": (0, 1, 1), "ceil_mode": True}, (2, 2, 3, 5, 4)),
    ("AdaptiveMaxPool1d", (4, True), {}, (2, 3, 7)),
    ("AdaptiveMaxPool2d", ((3, None),), {}, (2, 2, 5, 4)),
    ("AdaptiveMaxPool3d", (2,), {"return_indices": True}, (2, 3, 5, 4)),
    ("AdaptiveAvgPool1d", (3,), {}, (3, 7)),
    ("AdaptiveAvgPool2d", ((None, 2),), {}, (2, 5, 5)),
    ("AdaptiveAvgPool3d", ((2, 3, 1),), {}, (1, 2, 4, 5, 3)),
    ("LPPool1d", (2, 3), {"stride": 2, "ceil_mode": True}, (2, 3, 8)),
    ("LPPool2d", (1.5, (2, 3)), {}, (2, 4, 6)),
    ("LPPool3d", (3, 2), {}, (1, 2, 4, 4, 4)),
    ("MaxUnpool1d", (3, 2, 1), {}, None),
    ("MaxUnpool2d", ((2, 3),), {}, None),
    ("MaxUnpool3d", (2,), {"padding": 1}, None),
]


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=[layer[0] for layer in LAYERS])
def test_layers_match_torch(name, args, kwargs, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    for attribute in ("kernel_size", "stride", "padding", "dilation", "ceil_mode",
                      "return_indices", "count_include_pad", "divisor_override", "output_size",
                      "norm_type"):
        assert getattr(ours, attribute, None) == getattr(theirs, attribute, None), attribute
    assert ours.state_dict() == {}
    if shape is None:
        return
    x = np.random.default_rng(9).uniform(0.5, 2.0, shape)
    _compare(torch, lambda lib, t: (ours if lib is oxmera else theirs)(t), x)


# -- fractional max pooling ------------------------------------------------------------------------

@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fractional_max_pool_matches_torch_given_the_samples(nd, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(nd)
    shape = (2, 3) + tuple(int(v) for v in rng.integers(7, 12, nd))
    x = rng.standard_normal(shape).astype(dtype)
    samples = rng.random((2, 3, nd)).astype(dtype)
    kernel = tuple(int(v) for v in rng.integers(1, 4, nd))
    largest = tuple(n - k + (1 if nd == 2 else 0) for n, k in zip(shape[2:], kernel))
    for output in ((3,) * nd, largest, (1,) * nd):
        name = f"fractional_max_pool{nd}d"
        ours = getattr(F, name)(oxmera.tensor(x), kernel, output, return_indices=True,
                                _random_samples=oxmera.tensor(samples))
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), kernel, output,
                                                    return_indices=True,
                                                    _random_samples=torch.tensor(samples))
        np.testing.assert_array_equal(_np(ours[1]), theirs[1].numpy())
        np.testing.assert_array_equal(_np(ours[0]), theirs[0].numpy())
    if dtype == "float64":
        def fn(lib, t):
            u = oxmera.tensor(samples[:1]) if lib is oxmera else torch.tensor(samples[:1])
            return getattr(lib.nn.functional, f"fractional_max_pool{nd}d")(
                t, 2, output_ratio=(0.5,) * nd, return_indices=True, _random_samples=u)
        _compare(torch, fn, np.round(x[0] * 2))        # unbatched, with ties


def test_fractional_max_pool_draws_its_samples_from_the_default_generator():
    x = oxmera.randn(2, 3, 9, 8)
    oxmera.manual_seed(4)
    first = F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.75), return_indices=True)
    oxmera.manual_seed(4)
    again = F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.75), return_indices=True)
    assert first[0].shape == (2, 3, 4, 6)
    np.testing.assert_array_equal(_np(first[1]), _np(again[1]))
    # each value is the input at its index
    picked = np.take_along_axis(_np(x).reshape(2, 3, -1), _np(first[1]).reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(picked.reshape(first[0].shape), _np(first[0]))


def test_fractional_max_pool_layers():
    torch = pytest.importorskip("torch")
    samples = np.random.default_rng(0).random((1, 2, 3))
    ours = nn.FractionalMaxPool3d(2, output_size=(2, 3, 2), return_indices=True,
                                  _random_samples=oxmera.tensor(samples))
    theirs = torch.nn.FractionalMaxPool3d(2, output_size=(2, 3, 2), return_indices=True,
                                          _random_samples=torch.tensor(samples))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]
    for attribute in ("kernel_size", "output_size", "output_ratio", "return_indices"):
        assert getattr(ours, attribute) == getattr(theirs, attribute)
    x = np.random.default_rng(1).standard_normal((1, 2, 4, 5, 4))
    _compare(torch, lambda lib, t: (ours if lib is oxmera else theirs)(t), x)
    assert nn.FractionalMaxPool2d(2, output_ratio=0.5).output_ratio == (0.5, 0.5)
    assert nn.FractionalMaxPool2d(2, output_size=3).state_dict() == {}
    for kwargs in ({}, {"output_size": 2, "output_ratio": 0.5}, {"output_ratio": 1.5}):
        with pytest.raises(ValueError):
            nn.FractionalMaxPool2d(2, **kwargs)
        with pytest.raises(ValueError):
            torch.nn.FractionalMaxPool2d(2, **kwargs)


FRACTIONAL_ERRORS = {
    "kernel-too-large": lambda lib, x, u: lib.nn.functional.fractional_max_pool2d(
        x, 3, (7, 5), _random_samples=u),
    "no-size": lambda lib, x, u: lib.nn.functional.fractional_max_pool2d(x, 2),
    "samples-last-dim": lambda lib, x, u: lib.nn.functional.fractional_max_pool2d(
        x, 2, 3, _random_samples=u[..., :1]),
    "samples-batch": lambda lib, x, u: lib.nn.functional.fractional_max_pool2d(
        x, 2, 3, _random_samples=u[:1]),
    "samples-dtype": lambda lib, x, u: lib.nn.functional.fractional_max_pool2d(
        x, 2, 3, _random_samples=u.float()),
    "empty-channels": lambda lib, x, u: lib.nn.functional.fractional_max_pool2d(
        x[:, :0], 2, 3, _random_samples=u[:, :0]),
    "3d-too-large": lambda lib, x, u: lib.nn.functional.fractional_max_pool3d(
        x, 2, (2, 3, 9)),
}


@pytest.mark.parametrize("name", sorted(FRACTIONAL_ERRORS))
def test_fractional_errors_have_torch_types(name):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 9))
    u = np.random.default_rng(1).random((2, 3, 2))
    theirs = _error_type(lambda: FRACTIONAL_ERRORS[name](torch, torch.tensor(x),
                                                         torch.tensor(u)))
    ours = _error_type(lambda: FRACTIONAL_ERRORS[name](oxmera, oxmera.tensor(x),
                                                       oxmera.tensor(u)))
    assert theirs is not None, f"torch accepts {name}"
    assert ours is not None and issubclass(ours, theirs), (ours, theirs)
