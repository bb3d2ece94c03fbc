"""float16 reductions accumulate in float32, as PyTorch's CPU kernels do (issue 12).

float16's largest finite value is 65504: a float16 running sum, a count or a
divisor passes it long before the result does. So every reduction and every
VJP that sums or divides by a count computes in float32 and rounds the result
to float16 once: sum, mean (and its gradient), prod, cumsum, cumprod,
var/std, every vector norm, logsumexp, softmax/log_softmax (and their
backward ops), layer_norm/batch_norm statistics, the mean of every loss,
einsum, avg_pool2d, a convolution's weight gradient, the tie count of
max/amax, and the engine's sum over broadcast dims (``sum_to``). Results keep
the float16 dtype.

Expected values are computed in float64 and rounded to float16; where
PyTorch itself overflows (logsumexp, log_softmax, nll_loss/cross_entropy
means over more than 65504 targets, prod) oxmera gives the float64 answer.
"""
import math

import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F

F16 = oxmera.float16
N = 70_000          # more elements than float16 can count (65504)


def half(values, requires_grad=False):
    return oxmera.tensor(np.asarray(values, dtype=np.float16), requires_grad=requires_grad)


def assert_half(t, expected, rtol=2e-3):
    """``t`` is float16 and within float16 rounding of ``expected`` (float64 values)."""
    assert t.dtype == np.float16
    np.testing.assert_allclose(t.detach().numpy().astype(np.float64), expected, rtol=rtol)


# -- the two cases ------------------------------------------------------------------

def test_mean_of_70000_float16_ones_has_gradient_1_over_70000():
    x = oxmera.ones(N, dtype=F16, requires_grad=True)
    out = x.mean()
    out.backward()
    assert out.dtype == np.float16 and out.item() == 1.0
    assert x.grad.dtype == np.float16
    assert np.all(x.grad.numpy() == np.float16(1 / N))
    assert x.grad.numpy()[0] != 0


def test_mean_over_a_dim_longer_than_65504():
    x = oxmera.ones(2, N, dtype=F16, requires_grad=True)
    x.mean(dim=1).sum().backward()
    assert np.all(x.grad.numpy() == np.float16(1 / N))
    y = oxmera.ones(N, 2, dtype=F16, requires_grad=True)
    y.mean(dim=0, keepdim=True).sum().backward()
    assert np.all(y.grad.numpy() == np.float16(1 / N))


_NORMS = {
    "norm": lambda x, p: oxmera.norm(x, p),
    "method": lambda x, p: x.norm(p),
    "linalg.norm": lambda x, p: oxmera.linalg.norm(x, None if p == 2 else p),
    "vector_norm": lambda x, p: oxmera.linalg.vector_norm(x, p),
}


def _vector_norm64(x, p):
    x = np.abs(np.asarray(x, dtype=np.float64))
    if p == math.inf:
        return x.max()
    return (x ** p).sum() ** (1 / p)


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, -1, math.inf])
@pytest.mark.parametrize("name", sorted(_NORMS))
def test_norm_of_300_400_in_float16(name, p):
    x = half([300.0, 400.0], requires_grad=True)
    out = _NORMS[name](x, p)
    expected = _vector_norm64([300.0, 400.0], p)
    assert_half(out, expected)
    if p == 2:
        assert out.item() == 500.0
    out.backward()
    # d||x||_p / dx = sign(x) |x|^(p-1) / ||x||^(p-1): finite, the float64 value.
    values = np.array([300.0, 400.0])
    if p == math.inf:
        grad = np.array([0.0, 1.0])
    else:
        grad = values ** (p - 1) / float(np.float16(expected)) ** (p - 1)
    assert_half(x.grad, grad, rtol=5e-3)


def test_norm_of_many_elements_and_over_a_dim():
    assert_half(oxmera.ones(N, dtype=F16).norm(), math.sqrt(N))
    x = half([[300.0, 400.0], [600.0, 800.0]])
    assert_half(x.norm(dim=1), [500.0, 1000.0])
    assert_half(oxmera.linalg.norm(x, dim=0), [math.hypot(300, 600), math.hypot(400, 800)])
    assert_half(oxmera.linalg.matrix_norm(x), math.sqrt(300 ** 2 + 400 ** 2 + 600 ** 2
                                                        + 800 ** 2))


# -- sums, products and scans ------------------------------------------------------------

_CANCELLING = [60000.0, 60000.0, -60000.0]      # partial sum 120000 > 65504, total 60000


@pytest.mark.parametrize("layout", ["vector", "column", "row-of-2d", "strided"])
def test_sum_whose_partial_sums_pass_65504(layout):
    data = np.array(_CANCELLING, dtype=np.float16)
    if layout == "vector":
        x, dim = oxmera.tensor(data), 0
    elif layout == "column":
        x, dim = oxmera.tensor(data.reshape(3, 1)), 0
    elif layout == "row-of-2d":
        x, dim = oxmera.tensor(np.stack([data, data])), 1
    else:
        x, dim = oxmera.from_numpy(np.repeat(data, 2)[::2]), 0
    assert_half(x.sum(dim), 60000.0 * np.ones(x.sum(dim).shape))
    # Two rows of them sum to 120000: float16 inf, as in PyTorch.
    assert_half(x.sum(), math.inf if layout == "row-of-2d" else 60000.0)


def test_sum_of_more_than_65504_is_still_inf():
    # The result itself does not fit: float16 inf, as in PyTorch.
    assert oxmera.ones(N, dtype=F16).sum().item() == math.inf


def test_prod_accumulates_in_float32():
    assert_half(half([1000.0, 1000.0, 0.001]).prod(), 1000.0, rtol=1e-3)
    x = half([1000.0, 1000.0, 0.001, 0.001], requires_grad=True)
    x.prod().backward()
    # The products of the others: 1e-3, 1e-3, 1000, 1000 (partial products pass 65504).
    assert_half(x.grad, [1e-3, 1e-3, 1000.0, 1000.0], rtol=2e-3)


def test_cumsum_and_cumprod_accumulate_in_float32():
    out = oxmera.ones(3000, dtype=F16).cumsum(0)
    assert out.dtype == np.float16 and out[-1].item() == 3000.0
    assert_half(half(_CANCELLING).cumsum(0), [60000.0, math.inf, 60000.0])
    assert_half(half([1000.0, 1000.0, 0.001]).cumprod(0), [1000.0, math.inf, 1000.0],
                rtol=1e-3)
    x = half([1000.0, 1000.0, 0.001], requires_grad=True)
    x.cumprod(0).sum().backward()
    # 1 + x1 + x1 x2, x0 + x0 x2, x0 x1
    assert_half(x.grad, [1002.0, 1001.0, math.inf])


def test_var_and_std_of_large_deviations():
    # The squared deviations (250 ** 2 each) sum past 65504.
    x = half([0.0, 500.0], requires_grad=True)
    out = x.std()
    assert_half(out, math.sqrt(125000.0))
    out.backward()
    assert_half(x.grad, [-1 / math.sqrt(2), 1 / math.sqrt(2)])
    y = half(np.arange(N) % 2, requires_grad=True)
    y.var().backward()
    assert_half(y.grad[:2], [-1 / (N - 1), 1 / (N - 1)], rtol=5e-3)


def test_logsumexp_of_70000_zeros():
    x = oxmera.zeros(N, dtype=F16, requires_grad=True)
    out = x.logsumexp(0)
    assert_half(out, math.log(N))
    out.backward()
    assert np.all(x.grad.numpy() == np.float16(1 / N))


def test_max_and_amax_share_a_tie_of_70000():
    for reduce in (lambda t: t.amax(), lambda t: t.max(), lambda t: t.max(0).values):
        x = oxmera.ones(N, dtype=F16, requires_grad=True)
        reduce(x).backward()
        assert np.all(x.grad.numpy() == np.float16(1 / N))


# -- softmax, normalization, losses ------------------------------------------------------

def test_softmax_and_log_softmax_of_70000_equal_logits():
    x = oxmera.zeros(N, dtype=F16, requires_grad=True)
    p = oxmera.softmax(x, 0)
    assert p.dtype == np.float16 and np.all(p.detach().numpy() == np.float16(1 / N))
    p[0].backward()
    # p0 (1 - p0), and -p0 p1 = -2e-10, below float16's smallest subnormal.
    assert_half(x.grad[:1], [1 / N - 1 / N ** 2], rtol=5e-3)
    assert x.grad[1].item() == 0
    y = oxmera.zeros(N, dtype=F16, requires_grad=True)
    logp = oxmera.log_softmax(y, 0)
    assert_half(logp[:3], [-math.log(N)] * 3)
    logp[0].backward()
    assert_half(y.grad[:2], [1 - 1 / N, -1 / N], rtol=5e-3)


def test_softmax_backward_sums_in_float32():
    # sum(grad * out) over the row: 3 * 30000 * (1/3) passes 65504 in float16.
    x = oxmera.zeros(3, dtype=F16, requires_grad=True)
    oxmera.softmax(x, 0).backward(half([60000.0, 60000.0, -60000.0]))
    third = 1 / 3
    total = 60000.0 * third
    assert_half(x.grad, [third * (60000 - total), third * (60000 - total),
                         third * (-60000 - total)])


def test_layer_norm_and_batch_norm_statistics_in_float32():
    # Deviations of 500: squared 250000, inf in float16.
    x = half([[0.0, 1000.0]], requires_grad=True)
    out = F.layer_norm(x, (2,))
    assert_half(out, [[-1.0, 1.0]])
    out[0, 1].backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    b = half([[0.0], [1000.0]])
    running_mean, running_var = oxmera.zeros(1, dtype=F16), oxmera.ones(1, dtype=F16)
    out = F.batch_norm(b, running_mean, running_var, training=True)
    assert_half(out, [[-1.0], [1.0]])
    assert running_mean.dtype == np.float16
    assert_half(running_mean, [50.0])
    out = F.batch_norm(b, half([500.0]), half([250000.0 / 4]), training=False)
    assert_half(out, [[-2.0], [2.0]], rtol=1e-2)


def test_layer_norm_over_70000_has_the_mean_gradient():
    x = half(np.arange(N) % 2, requires_grad=True)
    F.layer_norm(x, (N,))[0].backward()
    # d out_0 / d x_j for j != 0 is -(1 + out_0 out_j) / (N sigma), sigma = 1/2, out = -+1:
    # -4 / N where x_j == x_0, 0 where it differs.
    grad = x.grad.numpy().astype(np.float64)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad[2::2], -4 / N, rtol=5e-3)
    np.testing.assert_allclose(grad[1::2], 0.0, atol=1e-7)


_TARGET = np.zeros(N)

_LOSSES = {
    "mse_loss": (lambda x: F.mse_loss(x, oxmera.zeros_like(x)), 0.5, 0.25, 1.0 / N),
    "l1_loss": (lambda x: F.l1_loss(x, oxmera.zeros_like(x)), 0.5, 0.5, 1.0 / N),
    "smooth_l1_loss": (lambda x: F.smooth_l1_loss(x, oxmera.zeros_like(x)), 0.5, 0.125,
                       0.5 / N),
    "binary_cross_entropy": (lambda x: F.binary_cross_entropy(x, oxmera.zeros_like(x)), 0.5,
                             math.log(2), 2.0 / N),
    "bce_with_logits": (lambda x: F.binary_cross_entropy_with_logits(x, oxmera.zeros_like(x)),
                        0.0, math.log(2), 0.5 / N),
    "mse_loss-weight": (lambda x: F.mse_loss(x, oxmera.zeros_like(x),
                                             weight=oxmera.ones_like(x)), 0.5, 0.25, 1.0 / N),
}


@pytest.mark.parametrize("name", sorted(_LOSSES))
def test_mean_losses_over_70000_elements(name):
    loss_fn, value, expected_loss, expected_grad = _LOSSES[name]
    x = oxmera.full((N,), value, dtype=F16, requires_grad=True)
    loss = loss_fn(x)
    assert_half(loss, expected_loss)
    loss.backward()
    assert x.grad.dtype == np.float16
    assert_half(x.grad[:3], [expected_grad] * 3, rtol=5e-3)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy"])
def test_class_index_losses_over_70000_targets(name, weighted):
    # The mean divides by the target count (or summed weights): inf in float16.
    logits = oxmera.zeros(N, 2, dtype=F16, requires_grad=True)
    target = oxmera.zeros(N, dtype=oxmera.int64)
    weight = oxmera.ones(2, dtype=F16) if weighted else None
    if name == "nll_loss":
        loss = F.nll_loss(logits - 1.0, target, weight)
        expected, grad = 1.0, [-1 / N, 0.0]
    else:
        loss = F.cross_entropy(logits, target, weight, label_smoothing=0.1)
        # (softmax - smoothed target) / N, the target 0.95 / 0.05
        expected, grad = math.log(2), [-0.45 / N, 0.45 / N]
    assert_half(loss, expected)
    loss.backward()
    assert_half(logits.grad[0], grad, rtol=5e-3)


def test_cross_entropy_with_probabilities_over_70000_rows():
    logits = oxmera.zeros(N, 2, dtype=F16, requires_grad=True)
    loss = F.cross_entropy(logits, oxmera.full((N, 2), 0.5, dtype=F16))
    assert_half(loss, math.log(2))


# -- einsum, pooling, convolution, broadcasting ------------------------------------------

@pytest.mark.parametrize("equation, operands", [
    ("i,i->", (_CANCELLING, [1.0, 1.0, 1.0])),
    ("i->", (_CANCELLING,)),
    ("ij,jk->ik", ([_CANCELLING], [[1.0], [1.0], [1.0]])),
    ("bij,jk->bik", ([[_CANCELLING]], [[1.0], [1.0], [1.0]])),
])
def test_einsum_accumulates_in_float32(equation, operands):
    out = oxmera.einsum(equation, *(half(o) for o in operands))
    assert_half(out, np.full(out.shape, 60000.0))


def test_avg_pool2d_sums_in_float32():
    x = half(np.array(_CANCELLING).reshape(1, 1, 1, 3), requires_grad=True)
    out = F.avg_pool2d(x, (1, 3))
    assert_half(out, [[[[20000.0]]]])
    out.sum().backward()
    assert_half(x.grad, np.full((1, 1, 1, 3), 1 / 3))


def test_conv_weight_gradient_sums_the_batch_in_float32():
    x = half(np.array(_CANCELLING).reshape(3, 1, 1))
    w = half([[[1.0]]], requires_grad=True)
    F.conv1d(x, w).sum().backward()
    assert_half(w.grad, [[[60000.0]]])


def test_broadcast_gradient_is_summed_in_float32():
    # The engine's sum_to: 70000 gradients of 1e-3 into one bias.
    b = oxmera.zeros(1, dtype=F16, requires_grad=True)
    (b + oxmera.zeros(N, 1, dtype=F16)).backward(oxmera.full((N, 1), 1e-3, dtype=F16))
    assert_half(b.grad, [N * float(np.float16(1e-3))])


def test_embedding_max_norm_measures_float16_rows_in_float32():
    weight = half([[300.0, 400.0], [3.0, 4.0]])
    F.embedding(oxmera.tensor([0, 1]), weight, max_norm=50.0)
    # Row 0 (norm 500) is scaled to norm 50; row 1 (norm 5) is left alone.
    assert_half(weight, [[30.0, 40.0], [3.0, 4.0]])


# -- against PyTorch, where PyTorch accumulates in float32 -----------------------------------

_TORCH_CALLS = {
    "mean": (lambda lib, x: x.mean(), np.ones(N)),
    "norm": (lambda lib, x: x.norm(), [300.0, 400.0]),
    "vector_norm-3": (lambda lib, x: lib.linalg.vector_norm(x, 3), [30.0, 40.0]),
    "cumsum": (lambda lib, x: x.cumsum(0)[-1], np.ones(3000)),
    "softmax": (lambda lib, x: lib.softmax(x, 0)[0], np.zeros(N)),
    "layer_norm": (lambda lib, x: lib.nn.functional.layer_norm(x, (N,))[0], np.arange(N) % 2),
    "mse_loss": (lambda lib, x: lib.nn.functional.mse_loss(x, lib.zeros_like(x)),
                 np.full(N, 0.5)),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x.reshape(1, 1, 1, 3), (1, 3)),
                   _CANCELLING),
    "einsum": (lambda lib, x: lib.einsum("i->", x), _CANCELLING),
}


@pytest.mark.parametrize("name", sorted(_TORCH_CALLS))
def test_float16_values_and_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    call, data = _TORCH_CALLS[name]
    data = np.asarray(data, dtype=np.float16)
    t = torch.tensor(data, requires_grad=True)
    x = oxmera.tensor(data, requires_grad=True)
    expected, out = call(torch, t), call(oxmera, x)
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=2e-3)
    expected.sum().backward()
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy().astype(np.float64),
                               t.grad.numpy().astype(np.float64), rtol=5e-3, atol=1e-7)
