"""The compiled float32 LSTM gate kernels behind ``oxmera.ops.rnn``.

``lstm_gates`` and ``lstm_gates_backward`` run one C pass for float32 (B, H)
gates (``oxmera/_core/_kernels.h``) with their own sigmoid, tanh and exp;
these tests check that arithmetic against float64 (ulp bounds over every
float32 exponent, subnormal, infinite and nan inputs), that the kernels are
the path the ops take for the slices ``nn.LSTM`` passes, and that the ops
give the NumPy formula's values either way (the gradient cases in
``_cases_rnn.py`` run in float64, where the kernels do not apply).
"""
import numpy as np
import pytest

import oxmera
from oxmera._core import _kernels
from oxmera.ops.rnn import lstm_gates, lstm_gates_backward


def _ulps(got, exact):
    """|got - exact| in units of the float32 spacing at the exact value (subnormal spacing
    at the bottom)."""
    spacing = np.maximum(np.spacing(np.abs(exact.astype(np.float32))), 2.0 ** -149)
    return np.abs(got.astype(np.float64) - exact) / spacing


def _all_exponents(count=400_000, seed=0):
    bits = np.random.default_rng(seed).integers(0, 2 ** 32, count, dtype=np.uint64)
    x = bits.astype(np.uint32).view(np.float32)
    return x[np.isfinite(x)].reshape(-1, 1)


def _activations(i, f, g, o, cx):
    """(h, c) through the kernel, one column of the gates at a time."""
    return _kernels.lstm_gates(i, f, g, o, cx)


def test_sigmoid_within_3_ulp_over_all_exponents():
    x = _all_exponents()
    ones, zeros = np.full_like(x, 100.0), np.zeros_like(x)
    # g = 100 (tanh 1), f = -inf (sigmoid 0): c = sigmoid(x)
    _, c = _activations(x, np.full_like(x, -np.inf), ones, ones, zeros)
    with np.errstate(over="ignore"):
        exact = 1 / (1 + np.exp(-x.astype(np.float64)))
    assert _ulps(c, exact).max() <= 3


def test_tanh_within_2_ulp_over_all_exponents():
    x = _all_exponents(seed=1)
    big = np.full_like(x, 100.0)
    _, c = _activations(big, np.full_like(x, -np.inf), x, big, np.zeros_like(x))
    assert _ulps(c, np.tanh(x.astype(np.float64))).max() <= 2


def test_special_values():
    x = np.float32([[0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, -103.0, -105.0,
                     0.55, -0.55, 88.0, -88.0]])
    big, zero = np.full_like(x, 100.0), np.zeros_like(x)
    _, sig = _activations(x, np.full_like(x, -np.inf), big, big, zero)
    _, tanh = _activations(big, np.full_like(x, -np.inf), x, big, zero)
    with np.errstate(over="ignore"):
        exact_sig = 1 / (1 + np.exp(-x.astype(np.float64)))
    exact_tanh = np.tanh(x.astype(np.float64))
    for got, exact in ((sig, exact_sig), (tanh, exact_tanh)):
        assert np.isnan(got[0, 4])
        finite = ~np.isnan(x)
        assert _ulps(got[finite], exact[finite]).max() <= 3
    # the ends exactly: 0 and 1 at the infinities, the subnormal tail
    assert sig[0, [2, 3, 7, 8]].tolist() == [1.0, 0.0, np.float32(2.0 ** -149), 0.0]
    assert tanh[0, [2, 3]].tolist() == [1.0, -1.0]


def _gates(rows=6, hidden=5, seed=0):
    rng = np.random.default_rng(seed)
    gates = rng.standard_normal((rows, 4 * hidden), dtype=np.float32) * 3
    split = [gates[:, k * hidden:(k + 1) * hidden] for k in range(4)]
    cx, grad_h, grad_c = (rng.standard_normal((rows, hidden), dtype=np.float32)
                          for _ in range(3))
    return split, cx, grad_h, grad_c


def test_slices_of_one_gates_matrix_take_the_kernel():
    split, cx, grad_h, grad_c = _gates()
    assert _kernels.lstm_gates_takes(split, (cx,))
    assert _kernels.lstm_gates_takes(split, (cx, grad_h, grad_c))
    assert not _kernels.lstm_gates_takes([s.astype(np.float64) for s in split], (cx,))
    assert not _kernels.lstm_gates_takes(split, (cx.T.copy().T[:, ::2],))    # strided columns
    assert not _kernels.lstm_gates_takes(split[:3] + [split[3][:, :1]], (cx,))  # broadcast


def _formula(grad_h, grad_c, i, f, g, o, cx):
    """lstm_gates and its VJP by the NumPy formula in float64."""
    i, f, g, o, cx, grad_h, grad_c = (np.asarray(a, np.float64)
                                      for a in (i, f, g, o, cx, grad_h, grad_c))
    si, sf, tg, so = 1 / (1 + np.exp(-i)), 1 / (1 + np.exp(-f)), np.tanh(g), 1 / (1 + np.exp(-o))
    c = sf * cx + si * tg
    t = np.tanh(c)
    dc = grad_c + grad_h * so * (1 - t * t)
    grads = (dc * tg * si * (1 - si), dc * cx * sf * (1 - sf), dc * si * (1 - tg * tg),
             grad_h * t * so * (1 - so), dc * sf)
    return (so * t, c), grads


@pytest.mark.parametrize("rows, hidden", [(6, 5), (32, 256), (1, 1), (0, 4), (3, 0)])
def test_ops_on_the_kernel_path_match_the_formula(rows, hidden):
    split, cx, grad_h, grad_c = _gates(rows, hidden)
    (h, c), grads = _formula(grad_h, grad_c, *split, cx)
    out = lstm_gates(*map(oxmera.tensor, split), oxmera.tensor(cx))
    assert out.h.dtype == oxmera.float32
    np.testing.assert_allclose(out.h.numpy(), h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.c.numpy(), c, rtol=1e-5, atol=1e-6)
    got = lstm_gates_backward(*map(oxmera.tensor, (grad_h, grad_c, *split, cx)))
    for value, expected in zip(got, grads):
        assert tuple(value.shape) == (rows, hidden)
        np.testing.assert_allclose(value.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_views_of_one_gates_tensor_through_autograd():
    """What nn.LSTM does: split one gates tensor, the gates op, backward; against float64."""
    split, cx, grad_h, grad_c = _gates(4, 3, seed=2)
    gates = oxmera.tensor(np.concatenate(split, 1), requires_grad=True)
    cell = oxmera.tensor(cx, requires_grad=True)
    h, c = lstm_gates(*oxmera.split(gates, 3, -1), cell)
    oxmera.autograd.backward([h, c], [oxmera.tensor(grad_h), oxmera.tensor(grad_c)])
    _, grads = _formula(grad_h, grad_c, *split, cx)
    np.testing.assert_allclose(gates.grad.numpy(), np.concatenate(grads[:4], 1),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cell.grad.numpy(), grads[4], rtol=1e-4, atol=1e-5)


def test_second_order_on_float32_gates_matches_float64():
    """create_graph through the kernel path (the VJP op's VJP is composed of ops)."""
    split, cx, _, _ = _gates(3, 2, seed=3)

    def second(dtype):
        gates = oxmera.tensor(np.concatenate(split, 1).astype(dtype), requires_grad=True)
        h, c = lstm_gates(*oxmera.split(gates, 2, -1), oxmera.tensor(cx.astype(dtype)))
        (grad,) = oxmera.autograd.grad((h * h).sum() + c.sum(), gates, create_graph=True)
        (grad * grad).sum().backward()
        return gates.grad.numpy()

    np.testing.assert_allclose(second(np.float32), second(np.float64), rtol=1e-3, atol=1e-5)
