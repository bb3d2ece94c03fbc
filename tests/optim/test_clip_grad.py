"""oxmera.nn.utils.clip_grad_norm_ / clip_grad_value_: closed forms, PyTorch, errors."""
import math
import warnings

import numpy as np
import pytest

import oxmera
from oxmera.nn.utils import clip_grad_norm_, clip_grad_value_

RNG = np.random.default_rng(3)


def _with_grads(*grads, dtype=np.float32):
    params = []
    for g in grads:
        p = oxmera.zeros(np.shape(g), dtype=dtype, requires_grad=True)
        if g is not None:
            p.grad = oxmera.tensor(np.asarray(g, dtype=dtype))
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3, math.inf])
def test_total_norm_and_scaling_closed_form(norm_type):
    g1, g2 = RNG.standard_normal((3, 4)), RNG.standard_normal(5)
    params = _with_grads(g1, g2, dtype=np.float64)
    flat = np.concatenate([g1.ravel(), g2])
    expected = np.max(np.abs(flat)) if norm_type == math.inf else \
        np.sum(np.abs(flat) ** norm_type) ** (1 / norm_type)
    total = clip_grad_norm_(params, max_norm=0.5, norm_type=norm_type)
    assert isinstance(total, oxmera.Tensor) and total.ndim == 0 and total.dtype == np.float64
    np.testing.assert_allclose(total.item(), expected, rtol=1e-12)
    coef = 0.5 / (expected + 1e-6)
    np.testing.assert_allclose(params[0].grad.numpy(), g1 * coef, rtol=1e-12)
    np.testing.assert_allclose(params[1].grad.numpy(), g2 * coef, rtol=1e-12)


def test_small_gradients_are_left_exactly_as_they_were():
    g = RNG.standard_normal(6).astype(np.float32)
    (p,) = _with_grads(g)
    total = clip_grad_norm_(p, max_norm=100.0)
    assert total.dtype == np.float32
    np.testing.assert_array_equal(p.grad.numpy(), g)


def test_parameters_without_gradient_are_skipped_and_no_gradients_give_zero():
    a, b = _with_grads([3.0, 4.0], None)
    assert clip_grad_norm_([a, b], 1.0).item() == pytest.approx(5.0)
    assert b.grad is None
    none = clip_grad_norm_([b], 1.0)
    assert none.item() == 0.0 and none.ndim == 0
    with pytest.warns(UserWarning, match="empty generator"):
        clip_grad_norm_((p for p in []), 1.0)


def test_the_gradient_is_written_in_place_without_recording():
    (p,) = _with_grads([30.0, 40.0])
    grad = p.grad
    version = grad._version
    clip_grad_norm_([p], 5.0)
    assert p.grad is grad and grad._version == version + 1 and grad.grad_fn is None
    np.testing.assert_allclose(grad.numpy(), [3.0, 4.0], rtol=1e-6)


def test_non_finite_norms():
    a, b = _with_grads([1.0, np.inf], [2.0])
    with pytest.raises(RuntimeError, match="non-finite.*error_if_nonfinite=False"):
        clip_grad_norm_([a, b], 1.0, error_if_nonfinite=True)
    assert a.grad.tolist() == [1.0, math.inf] and b.grad.tolist() == [2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # inf * 0 in the first gradient: no warning
        total = clip_grad_norm_([a, b], 1.0)
    assert math.isinf(total.item())
    assert b.grad.tolist() == [0.0]          # scaled by 1 / inf, like PyTorch


def test_clip_grad_value():
    a, b = _with_grads([-3.0, 0.25, 2.0], [[5.0, -0.5]])
    assert clip_grad_value_([a, b], 1) is None
    assert a.grad.tolist() == [-1.0, 0.25, 1.0]
    assert b.grad.tolist() == [[1.0, -0.5]]


def test_errors():
    with pytest.raises(TypeError, match="clip_grad_norm_\\(\\): expected Tensors, but parameter "
                                        "0 is a ndarray"):
        clip_grad_norm_([np.zeros(2)], 1.0)
    with pytest.raises(TypeError, match="clip_grad_value_"):
        clip_grad_value_([1.0], 1.0)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.1, 1e3])
def test_same_as_pytorch(norm_type, max_norm):
    torch = pytest.importorskip("torch")
    grads = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(7)
             .astype(np.float32)]
    ours = _with_grads(*grads)
    theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for t, g in zip(theirs, grads):
        t.grad = torch.from_numpy(g.copy())
    total_ours = clip_grad_norm_(ours, max_norm, norm_type)
    total_theirs = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    np.testing.assert_allclose(total_ours.item(), total_theirs.item(), rtol=1e-6)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=2e-6)
    ours = _with_grads(*grads)
    for t, g in zip(theirs, grads):
        t.grad = torch.from_numpy(g.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clip_grad_value_(ours, 0.3)
    torch.nn.utils.clip_grad_value_(theirs, 0.3)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o.grad.numpy(), t.grad.numpy())
