"""The losses of ``oxmera.nn.functional``: values against NumPy closed forms,
reductions, PyTorch's weighting and ignore_index semantics, label smoothing,
probability targets, stability for logits of magnitude 1e4, errors.

Gradients to second order: ``_gradient_cases.py`` (composed losses) and
``tests/ops/_cases_nn.py`` (binary_cross_entropy); PyTorch comparisons there
too.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
import oxmera.nn.functional as F
from ops._helpers import leaf, unchanged

F32, F64 = oxmera.float32, oxmera.float64
RNG = np.random.default_rng(11)
X = RNG.standard_normal((4, 5))
Y = RNG.standard_normal((4, 5))


def _np(t):
    return t.detach().numpy()


def _reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": np.asarray}[reduction](loss)


def _log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


ELEMENTWISE = {
    "mse_loss": (F.mse_loss, lambda d: d * d),
    "l1_loss": (F.l1_loss, np.abs),
    "smooth_l1_loss": (F.smooth_l1_loss,
                       lambda d: np.where(np.abs(d) < 1, 0.5 * d * d, np.abs(d) - 0.5)),
}

ALL_LOSSES = {
    "mse_loss": lambda **kw: F.mse_loss(oxmera.tensor(X), oxmera.tensor(Y), **kw),
    "l1_loss": lambda **kw: F.l1_loss(oxmera.tensor(X), oxmera.tensor(Y), **kw),
    "smooth_l1_loss": lambda **kw: F.smooth_l1_loss(oxmera.tensor(X), oxmera.tensor(Y), **kw),
    "nll_loss": lambda **kw: F.nll_loss(oxmera.tensor(X), oxmera.tensor([0, 1, 4, 2]), **kw),
    "cross_entropy": lambda **kw: F.cross_entropy(oxmera.tensor(X), oxmera.tensor([0, 1, 4, 2]),
                                                  **kw),
    "binary_cross_entropy": lambda **kw: F.binary_cross_entropy(
        oxmera.tensor(_sigmoid(X)), oxmera.tensor(_sigmoid(Y)), **kw),
    "binary_cross_entropy_with_logits": lambda **kw: F.binary_cross_entropy_with_logits(
        oxmera.tensor(X), oxmera.tensor(_sigmoid(Y)), **kw),
}


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_losses_match_numpy(name, reduction):
    fn, reference = ELEMENTWISE[name]
    out = fn(oxmera.tensor(X), oxmera.tensor(Y), reduction=reduction)
    np.testing.assert_allclose(_np(out), _reduce(reference(X - Y), reduction), rtol=1e-12)
    out32 = fn(oxmera.tensor(X, dtype=F32), oxmera.tensor(Y, dtype=F32), reduction=reduction)
    assert out32.dtype == F32


def test_smooth_l1_beta():
    d = X - Y
    out = F.smooth_l1_loss(oxmera.tensor(X), oxmera.tensor(Y), reduction="none", beta=0.5)
    np.testing.assert_allclose(_np(out), np.where(np.abs(d) < 0.5, d * d, np.abs(d) - 0.25),
                               rtol=1e-12)
    out = F.smooth_l1_loss(oxmera.tensor(X), oxmera.tensor(Y), beta=0.0)
    np.testing.assert_allclose(_np(out), np.abs(d).mean(), rtol=1e-12)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_weighted_mean_divides_by_the_weights(name):
    fn, reference = ELEMENTWISE[name]
    w = RNG.uniform(0.5, 2.0, X.shape)
    out = fn(oxmera.tensor(X), oxmera.tensor(Y), weight=oxmera.tensor(w))
    np.testing.assert_allclose(_np(out), (reference(X - Y) * w).sum() / w.sum(), rtol=1e-12)
    with pytest.raises(ValueError, match=rf"{name}.*weight.*\(5,\)"):
        fn(oxmera.tensor(X), oxmera.tensor(Y), weight=oxmera.ones(5))


def test_elementwise_losses_warn_when_target_broadcasts():
    with pytest.warns(UserWarning, match=r"mse_loss.*\(5,\).*\(4, 5\)") as record:
        out = F.mse_loss(oxmera.tensor(X), oxmera.tensor(Y[0]))
    assert record[0].filename == __file__
    np.testing.assert_allclose(_np(out), ((X - Y[0]) ** 2).mean(), rtol=1e-12)
    x = leaf(X)
    with unchanged(x):
        with pytest.raises(ValueError, match=r"l1_loss.*\(3,\).*\(4, 5\)"):
            F.l1_loss(x, oxmera.ones(3))


@pytest.mark.parametrize("name", sorted(ALL_LOSSES))
def test_bad_reduction_names_it(name):
    with pytest.raises(ValueError, match=f"{name}.*'average'"):
        ALL_LOSSES[name](reduction="average")


@pytest.mark.parametrize("name", sorted(ALL_LOSSES))
def test_legacy_size_average_and_reduce(name):
    with pytest.warns(UserWarning, match="deprecated.*'sum'"):
        total = ALL_LOSSES[name](size_average=False)
    np.testing.assert_allclose(_np(total), _np(ALL_LOSSES[name](reduction="sum")))
    with pytest.warns(UserWarning, match="'none'"):
        each = ALL_LOSSES[name](reduce=False)
    np.testing.assert_allclose(_np(each), _np(ALL_LOSSES[name](reduction="none")))


@pytest.mark.parametrize("name", sorted(ALL_LOSSES))
def test_reductions_agree(name):
    each = _np(ALL_LOSSES[name](reduction="none"))
    np.testing.assert_allclose(_np(ALL_LOSSES[name](reduction="sum")), each.sum(), rtol=1e-12)
    if name not in ("nll_loss", "cross_entropy"):   # those divide by the targets' weights
        np.testing.assert_allclose(_np(ALL_LOSSES[name]()), each.mean(), rtol=1e-12)


# -- nll_loss and cross_entropy -----------------------------------------------------------------

TARGET = np.array([0, 1, 4, 2])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5, 3.0])


def _nll_reference(logp, target, weight=None, ignore_index=-100, reduction="mean"):
    """PyTorch's documented nll_loss, over (N, C, d...) as a loop."""
    logp = np.moveaxis(logp, 1, -1).reshape(-1, logp.shape[1]) if logp.ndim > 1 else logp[None]
    target = np.asarray(target).reshape(-1)
    weight = np.ones(logp.shape[1]) if weight is None else weight
    losses, weights = [], []
    for row, t in zip(logp, target):
        w = 0.0 if t == ignore_index else weight[t]
        losses.append(0.0 if t == ignore_index else -w * row[t])
        weights.append(w)
    if reduction == "mean":
        return np.sum(losses) / np.sum(weights)
    return np.sum(losses) if reduction == "sum" else np.array(losses)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss_matches_the_definition(reduction, weighted, ignore_index):
    weight = WEIGHT if weighted else None
    out = F.nll_loss(oxmera.tensor(X), oxmera.tensor(TARGET),
                     None if weight is None else oxmera.tensor(weight),
                     ignore_index=ignore_index, reduction=reduction)
    np.testing.assert_allclose(_np(out), _nll_reference(X, TARGET, weight, ignore_index,
                                                        reduction), rtol=1e-12)


def test_nll_loss_spatial_and_unbatched():
    x = RNG.standard_normal((2, 5, 3, 2))
    target = RNG.integers(0, 5, (2, 3, 2))
    out = F.nll_loss(oxmera.tensor(x), oxmera.tensor(target), oxmera.tensor(WEIGHT))
    np.testing.assert_allclose(_np(out), _nll_reference(x, target, WEIGHT), rtol=1e-12)
    out = F.nll_loss(oxmera.tensor(x), oxmera.tensor(target), reduction="none")
    assert out.shape == (2, 3, 2)
    out = F.nll_loss(oxmera.tensor(X[0]), oxmera.tensor(3))
    assert out.shape == () and out.item() == -X[0, 3]


def test_nll_loss_all_ignored_or_empty_mean_is_nan():
    assert np.isnan(F.nll_loss(oxmera.tensor(X), oxmera.tensor([7, 7, 7, 7]),
                               ignore_index=7).item())
    assert np.isnan(F.cross_entropy(oxmera.zeros(0, 3), oxmera.zeros(0, dtype=oxmera.int64))
                    .item())
    assert F.cross_entropy(oxmera.zeros(0, 3), oxmera.zeros(0, dtype=oxmera.int64),
                           reduction="sum").item() == 0


def test_nll_loss_ignores_minus_inf_outside_the_targets():
    # log-probabilities of masked classes: only the targets' entries are read,
    # and the others get a zero gradient (not nan).
    logp = leaf([[-np.inf, -0.5, -1.0], [-0.2, -np.inf, -np.inf]])
    out = F.nll_loss(logp, oxmera.tensor([1, 0]))
    assert out.item() == pytest.approx(0.35)
    out.backward()
    np.testing.assert_array_equal(_np(logp.grad), [[0, -0.5, 0], [-0.5, 0, 0]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_matches_closed_form(reduction, smoothing):
    logp = _log_softmax(X, 1)
    ignore = 4
    valid = TARGET != ignore
    nll = np.where(valid, -WEIGHT[TARGET] * logp[np.arange(4), TARGET], 0)
    smooth = np.where(valid, -(logp * WEIGHT).sum(1), 0)
    per_sample = (1 - smoothing) * nll + smoothing / 5 * smooth
    if reduction == "mean":
        expected = per_sample.sum() / WEIGHT[TARGET][valid].sum()
    else:
        expected = _reduce(per_sample, reduction)
    out = F.cross_entropy(oxmera.tensor(X), oxmera.tensor(TARGET), oxmera.tensor(WEIGHT),
                          ignore_index=ignore, reduction=reduction, label_smoothing=smoothing)
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12)


def test_cross_entropy_is_log_softmax_then_nll():
    x = RNG.standard_normal((3, 5, 4))
    target = RNG.integers(0, 5, (3, 4))
    a = F.cross_entropy(oxmera.tensor(x), oxmera.tensor(target), reduction="none")
    b = F.nll_loss(F.log_softmax(oxmera.tensor(x), 1), oxmera.tensor(target), reduction="none")
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.4])
def test_cross_entropy_with_probabilities(reduction, smoothing):
    p = np.exp(_log_softmax(Y, 1))
    target = p * (1 - smoothing) + smoothing / 5
    per_sample = -(_log_softmax(X, 1) * WEIGHT * target).sum(1)
    out = F.cross_entropy(oxmera.tensor(X), oxmera.tensor(p), oxmera.tensor(WEIGHT),
                          reduction=reduction, label_smoothing=smoothing)
    # 'mean' divides by the number of samples, whatever the weights
    np.testing.assert_allclose(_np(out), _reduce(per_sample, reduction), rtol=1e-12)


def test_cross_entropy_with_one_hot_probabilities_equals_indices():
    onehot = np.eye(5)[TARGET]
    a = F.cross_entropy(oxmera.tensor(X), oxmera.tensor(onehot), label_smoothing=0.1)
    b = F.cross_entropy(oxmera.tensor(X), oxmera.tensor(TARGET), label_smoothing=0.1)
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-12)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_cross_entropy_is_stable_for_logits_of_magnitude_1e4(dtype):
    x = leaf([[1e4, -1e4, 0.0], [-1e4, -1e4, 1e4], [1e4, 1e4, -1e4]], dtype=dtype)
    target = oxmera.tensor([1, 2, 2])
    out = F.cross_entropy(x, target, reduction="none", label_smoothing=0.1)
    assert out.dtype == dtype
    expected = 0.9 * np.array([2e4, 0.0, 2e4 + np.log(2)]) + 0.1 / 3 * np.array(
        [3e4, 4e4, 2e4 + 3 * np.log(2)])
    np.testing.assert_allclose(_np(out), expected, rtol=1e-6)
    out.sum().backward()
    g = _np(x.grad)
    assert np.isfinite(g).all()
    np.testing.assert_allclose(g.sum(1), 0, atol=1e-6)
    # softmax(x) - the smoothed target distribution, row by row
    third = 0.1 / 3
    np.testing.assert_allclose(g, [[1 - third, -0.9 - third, -third],
                                   [-third, -third, 0.1 - third],
                                   [0.5 - third, 0.5 - third, -0.9 - third]], atol=1e-6)
    probabilities = F.cross_entropy(x, F.softmax(x.detach() * -1, 1))
    assert np.isfinite(probabilities.item())


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 4), classes=st.integers(1, 5), spatial=st.lists(st.integers(1, 3),
                                                                        max_size=2),
       smoothing=st.sampled_from([0.0, 0.3]), data=st.data())
def test_cross_entropy_property(n, classes, spatial, smoothing, data):
    rng = np.random.default_rng(n * 10 + classes)
    x = rng.standard_normal((n, classes, *spatial)) * 10
    target = rng.integers(0, classes, (n, *spatial))
    weight = rng.uniform(0.5, 2.0, classes)
    logp = np.moveaxis(_log_softmax(x, 1), 1, -1)
    picked = np.take_along_axis(logp, target[..., None], -1)[..., 0]
    per = (1 - smoothing) * -weight[target] * picked + smoothing / classes * -(logp * weight).sum(
        -1)
    out = F.cross_entropy(oxmera.tensor(x), oxmera.tensor(target), oxmera.tensor(weight),
                          reduction="sum", label_smoothing=smoothing)
    np.testing.assert_allclose(_np(out), per.sum(), rtol=1e-10, atol=1e-12)


def test_class_target_errors_name_function_and_shapes():
    x = leaf(X)
    with unchanged(x):
        with pytest.raises(ValueError, match=r"cross_entropy.*\(3,\).*\(4, 5\).*\(4,\)"):
            F.cross_entropy(x, oxmera.tensor([0, 1, 2]))
        with pytest.raises(TypeError, match=r"cross_entropy.*float32.*\(4,\)"):
            F.cross_entropy(x, oxmera.tensor([0.0, 1.0, 2.0, 3.0]))
        with pytest.raises(TypeError, match=r"cross_entropy.*probabilities.*int64"):
            F.cross_entropy(x, oxmera.zeros(4, 5, dtype=oxmera.int64))
        with pytest.raises(IndexError, match="cross_entropy.*target 5.*5 classes"):
            F.cross_entropy(x, oxmera.tensor([0, 1, 5, 2]))
        with pytest.raises(IndexError, match="nll_loss.*target -1"):
            F.nll_loss(x, oxmera.tensor([0, -1, 2, 2]))
        with pytest.raises(ValueError, match=r"nll_loss.*weight.*\(4,\).*\(5,\)"):
            F.nll_loss(x, oxmera.tensor(TARGET), oxmera.ones(4, dtype=F64))
        with pytest.raises(ValueError, match=r"nll_loss.*\(4, 2\).*\(4, 5\)"):
            F.nll_loss(x, oxmera.zeros(4, 2, dtype=oxmera.int64))
        with pytest.raises(ValueError, match="cross_entropy.*label_smoothing.*1.5"):
            F.cross_entropy(x, oxmera.tensor(TARGET), label_smoothing=1.5)
        with pytest.raises(ValueError, match="cross_entropy.*ignore_index"):
            F.cross_entropy(x, oxmera.tensor(Y), ignore_index=0)
        with pytest.raises(ValueError, match=r"cross_entropy.*\(\)"):
            F.cross_entropy(leaf(1.0), oxmera.tensor(0))


# -- binary cross entropy ------------------------------------------------------------------------

def test_binary_cross_entropy_matches_numpy():
    p, y = _sigmoid(X), _sigmoid(Y)
    w = RNG.uniform(0.5, 2.0, 5)
    expected = -w * (y * np.log(p) + (1 - y) * np.log(1 - p))
    out = F.binary_cross_entropy(oxmera.tensor(p), oxmera.tensor(y), oxmera.tensor(w),
                                 reduction="none")
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12)
    out = F.binary_cross_entropy(oxmera.tensor(p), oxmera.tensor(y), oxmera.tensor(w))
    np.testing.assert_allclose(_np(out), expected.mean(), rtol=1e-12)
    out = F.binary_cross_entropy(oxmera.tensor(p, dtype=F32), oxmera.tensor(y, dtype=F32))
    assert out.dtype == F32


def test_binary_cross_entropy_clamps_its_logs_like_pytorch():
    p = leaf([0.0, 1.0, 0.0, 1.0])
    y = oxmera.tensor([1.0, 0.0, 0.0, 1.0], dtype=F64)
    out = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_array_equal(_np(out), [100.0, 100.0, 0.0, 0.0])
    out.sum().backward()
    # (x - y) / max(x (1 - x), 1e-12)
    np.testing.assert_array_equal(_np(p.grad), [-1e12, 1e12, 0.0, 0.0])


def test_binary_cross_entropy_errors():
    p = leaf([0.5, 0.2])
    with unchanged(p):
        with pytest.raises(ValueError, match=r"binary_cross_entropy.*\(3,\).*\(2,\)"):
            F.binary_cross_entropy(p, oxmera.ones(3, dtype=F64))
        with pytest.raises(ValueError, match="binary_cross_entropy.*between 0 and 1"):
            F.binary_cross_entropy(p * 3, oxmera.ones(2, dtype=F64))
        with pytest.raises(ValueError, match=r"binary_cross_entropy.*weight.*\(3,\)"):
            F.binary_cross_entropy(p, oxmera.ones(2, dtype=F64), oxmera.ones(3, dtype=F64))


def test_binary_cross_entropy_with_logits_matches_numpy():
    y = _sigmoid(Y)
    w, pos = RNG.uniform(0.5, 2.0, (4, 1)), RNG.uniform(0.5, 2.0, 5)
    p = _sigmoid(X)
    expected = -w * (pos * y * np.log(p) + (1 - y) * np.log(1 - p))
    out = F.binary_cross_entropy_with_logits(oxmera.tensor(X), oxmera.tensor(y),
                                             oxmera.tensor(w), reduction="none",
                                             pos_weight=oxmera.tensor(pos))
    np.testing.assert_allclose(_np(out), expected, rtol=1e-10)
    plain = F.binary_cross_entropy_with_logits(oxmera.tensor(X), oxmera.tensor(y))
    reference = F.binary_cross_entropy(oxmera.tensor(p), oxmera.tensor(y))
    np.testing.assert_allclose(_np(plain), _np(reference), rtol=1e-10)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_binary_cross_entropy_with_logits_is_stable(dtype):
    x = leaf([-1e4, -100.0, 100.0, 1e4], dtype=dtype)
    y = oxmera.tensor([1.0, 1.0, 0.0, 0.0], dtype=dtype)
    out = F.binary_cross_entropy_with_logits(x, y, reduction="none",
                                             pos_weight=oxmera.tensor([2.0], dtype=dtype))
    np.testing.assert_allclose(_np(out), [2e4, 200.0, 100.0, 1e4], rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [-2.0, -2.0, 1.0, 1.0], rtol=1e-6)


def test_binary_cross_entropy_with_logits_errors():
    x = leaf(X)
    with unchanged(x):
        with pytest.raises(ValueError, match=r"binary_cross_entropy_with_logits.*\(5,\).*\(4, 5\)"):
            F.binary_cross_entropy_with_logits(x, oxmera.ones(5, dtype=F64))
        with pytest.raises(ValueError, match=r"with_logits.*pos_weight.*\(3,\)"):
            F.binary_cross_entropy_with_logits(x, oxmera.tensor(Y),
                                               pos_weight=oxmera.ones(3, dtype=F64))


def test_losses_record_nothing_on_failure_and_warn_nothing_on_success():
    x = leaf(X)
    with unchanged(x):
        for name in ALL_LOSSES:
            with pytest.raises(ValueError):
                ALL_LOSSES[name](reduction="bad")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in ALL_LOSSES.values():
            fn()
