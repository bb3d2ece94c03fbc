"""oxmera.utils.checkpoint: gradients equal to the plain run's, dropout recomputed with
the same mask, lower peak memory (tracemalloc), PyTorch's argument rules."""
import gc
import tracemalloc
import warnings

import numpy as np
import pytest

import oxmera
from oxmera import nn
from oxmera.autograd import gradcheck, gradgradcheck
from oxmera.utils.checkpoint import checkpoint, checkpoint_sequential


def _block(seed=0, dropout=0.0):
    oxmera.manual_seed(seed)
    layers = [nn.Linear(5, 5, dtype=oxmera.float64), nn.Tanh()]
    if dropout:
        layers.append(nn.Dropout(dropout))
    layers.append(nn.Linear(5, 5, dtype=oxmera.float64))
    return nn.Sequential(*layers)


def _grads(model, x):
    return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("dropout", [0.0, 0.5])
def test_gradients_equal_plain_run(use_reentrant, dropout):
    x_data = np.random.default_rng(1).standard_normal((3, 5))
    model = _block(dropout=dropout)
    x = oxmera.tensor(x_data, requires_grad=True)
    oxmera.manual_seed(7)
    plain = model(x)
    (plain * plain).sum().backward()
    expected = _grads(model, x)
    model.zero_grad()
    x = oxmera.tensor(x_data, requires_grad=True)
    oxmera.manual_seed(7)
    out = checkpoint(model, x, use_reentrant=use_reentrant)
    # Random draws between forward and backward must not change the recomputed mask.
    oxmera.rand(100)
    np.testing.assert_array_equal(out.detach().numpy(), plain.detach().numpy())
    (out * out).sum().backward()
    for got, want in zip(_grads(model, x), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_rng_state_after_backward_is_the_callers():
    model = _block(dropout=0.5)
    x = oxmera.randn(3, 5, dtype=oxmera.float64, requires_grad=True)
    out = checkpoint(model, x, use_reentrant=False)
    state = oxmera.get_rng_state()
    out.sum().backward()
    assert np.array_equal(oxmera.get_rng_state().numpy(), state.numpy())


def test_without_preserving_rng_the_mask_differs():
    model = _block(dropout=0.5)
    x = oxmera.ones(4, 5, dtype=oxmera.float64, requires_grad=True)
    oxmera.manual_seed(3)
    plain = model(x)
    plain.sum().backward()
    expected = x.grad.numpy().copy()
    x.grad = None
    oxmera.manual_seed(3)
    checkpoint(model, x, use_reentrant=False, preserve_rng_state=False).sum().backward()
    assert not np.allclose(x.grad.numpy(), expected)


def test_parameters_get_gradients_when_input_needs_none():
    model = _block()
    x = oxmera.randn(2, 5, dtype=oxmera.float64)
    checkpoint(model, x, use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_reentrant_without_grad_inputs_warns_and_gives_no_gradient_as_torch():
    model = _block()
    x = oxmera.randn(2, 5, dtype=oxmera.float64)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(model, x, use_reentrant=True)
    assert not out.requires_grad


def test_argument_rules_as_torch():
    x = oxmera.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(lambda t: t * 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda t, scale: t * scale, x, use_reentrant=True, scale=2.0)
    assert checkpoint(lambda t, scale: t * scale, x, use_reentrant=False,
                      scale=2.0).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="determinism_check"):
        checkpoint(lambda t: t, x, use_reentrant=False, determinism_check="x")


def test_autograd_grad_and_second_order():
    model = _block()
    x = oxmera.randn(2, 5, dtype=oxmera.float64, requires_grad=True)

    def f(inp):
        return checkpoint(model, inp, use_reentrant=False)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
    (gx,) = oxmera.autograd.grad(f(x).sum(), [x])
    (gx_plain,) = oxmera.autograd.grad(model(x).sum(), [x])
    np.testing.assert_allclose(gx.numpy(), gx_plain.numpy(), rtol=1e-12)


def test_several_outputs_non_tensor_values_and_closure_parameters():
    weight = nn.Parameter(oxmera.tensor([2.0, 3.0], dtype=oxmera.float64))
    x = oxmera.tensor([1.0, 4.0], dtype=oxmera.float64, requires_grad=True)

    def f(a, label):
        return (a * weight).sum(), label, a.exp()

    total, label, e = checkpoint(f, x, "tag", use_reentrant=False)
    assert label == "tag"
    (total + e.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0 + np.e, 3.0 + np.exp(4.0)])
    np.testing.assert_allclose(weight.grad.numpy(), [1.0, 4.0])


def test_no_grad_mode_just_runs():
    model = _block()
    with oxmera.no_grad():
        out = checkpoint(model, oxmera.randn(2, 5, dtype=oxmera.float64), use_reentrant=False)
    assert not out.requires_grad


def test_checkpoint_sequential_matches_plain_run():
    oxmera.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(4, 4, dtype=oxmera.float64) for _ in range(7)])
    x = oxmera.randn(3, 4, dtype=oxmera.float64, requires_grad=True)
    model(x).pow(2).sum().backward()
    expected = _grads(model, x)
    model.zero_grad()
    x.grad = None
    out = checkpoint_sequential(model, 3, x, use_reentrant=False)
    out.pow(2).sum().backward()
    for got, want in zip(_grads(model, x), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="segments"):
        checkpoint_sequential(model, 0, x, use_reentrant=False)


def _peak_bytes(run):
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpointing_lowers_peak_memory_of_a_deep_stack():
    oxmera.manual_seed(0)
    # Many rows, few features: the activations (what checkpointing saves) outweigh
    # the parameters and their gradients (which it cannot save).
    depth, width = 24, 32
    model = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.Tanh())
                            for _ in range(depth)])
    x = oxmera.randn(2048, width, requires_grad=True)

    def plain():
        model(x).sum().backward()

    def checkpointed():
        checkpoint_sequential(model, 6, x, use_reentrant=False).sum().backward()

    plain_peak = _peak_bytes(plain)
    checkpointed_peak = _peak_bytes(checkpointed)
    # Plain: every layer's activations (24 layers x ~2 arrays of 256 KiB) live until
    # backward. Checkpointed: 6 segment outputs plus one segment's intermediates.
    assert checkpointed_peak < 0.6 * plain_peak, (checkpointed_peak, plain_peak)


def test_matches_torch_gradients():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint
    rng = np.random.default_rng(0)
    w1, w2, x_data = rng.standard_normal((4, 4)), rng.standard_normal((4, 4)), \
        rng.standard_normal((3, 4))
    results = []
    for lib, ckpt in ((torch, torch_checkpoint), (oxmera, checkpoint)):
        a = lib.tensor(w1, requires_grad=True)
        b = lib.tensor(w2, requires_grad=True)
        x = lib.tensor(x_data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = ckpt(lambda t: (t @ a).tanh() @ b, x, use_reentrant=False)
        out.pow(3).sum().backward()
        results.append([g.detach().numpy() for g in (a.grad, b.grad, x.grad)])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_keyword_tensors_that_are_not_leaves_get_gradients():
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    w = oxmera.tensor([3.0, 4.0], dtype=oxmera.float64, requires_grad=True)
    scale = w * 2                                   # not a leaf: must be passed in
    out = checkpoint(lambda t, scale: (t * scale).exp(), x, use_reentrant=False, scale=scale)
    out.sum().backward()
    expected = np.exp(np.array([6.0, 16.0]))
    # d/dx exp(x * s) = s exp(x s), s = 2w;  d/dw = 2 x exp(x s)
    np.testing.assert_allclose(x.grad.numpy(), np.array([6.0, 8.0]) * expected)
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.array([1.0, 2.0]) * expected)
