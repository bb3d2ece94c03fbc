"""The model ops with fused VJPs (issue 13): linear, gelu, layer_norm, log_softmax and
cross_entropy.

Their gradients are checked to second order in ``tests/ops/_cases_model_ops.py``
(and against PyTorch there); this file checks what is particular to them:
the backward without recording (which reads what the forward kept) and the
backward with ``create_graph=True`` (which recomputes it with ops) give the
same first derivatives, the hidden outputs are never returned, and the
PyTorch errors for bad arguments.
"""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F


def _grads(fn, *arrays, create_graph):
    leaves = [oxmera.tensor(a, requires_grad=True) for a in arrays]
    out = fn(*leaves)
    weights = oxmera.tensor(np.random.default_rng(3).standard_normal(tuple(out.shape)))
    grads = oxmera.autograd.grad((out * weights).sum(), leaves, create_graph=create_graph)
    return out, [g.detach().numpy() for g in grads]


FUNCTIONS = {
    "log_softmax": (lambda x: F.log_softmax(x, dim=-1), [(3, 5)]),
    "log_softmax-dim0": (lambda x: F.log_softmax(x, dim=0), [(3, 5)]),
    "gelu": (F.gelu, [(4, 6)]),
    "gelu-tanh": (lambda x: F.gelu(x, approximate="tanh"), [(4, 6)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (6,), w, b), [(2, 4, 6), (6,), (6,)]),
    "linear": (F.linear, [(2, 4, 6), (3, 6), (3,)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, oxmera.tensor([4, 0, 2]), reduction="none"),
                      [(3, 5)]),
    "cross_entropy-spatial": (lambda x: F.cross_entropy(x, oxmera.tensor([[1, 0], [2, 2]])),
                              [(2, 3, 2)]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_backward_with_and_without_create_graph_agree(name):
    fn, shapes = FUNCTIONS[name]
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    out, plain = _grads(fn, *arrays, create_graph=False)
    _, recorded = _grads(fn, *arrays, create_graph=True)
    assert isinstance(out, oxmera.Tensor)         # the hidden outputs stay hidden
    for a, b in zip(plain, recorded):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["log_softmax", "gelu", "layer_norm", "cross_entropy"])
def test_one_node_per_call(name):
    fn, shapes = FUNCTIONS[name]
    leaves = [oxmera.randn(*s, dtype=oxmera.float64, requires_grad=True) for s in shapes]
    out = fn(*leaves)
    expected = {"log_softmax": "LogSoftmaxBackward", "gelu": "GeluBackward",
                "layer_norm": "LayerNormBackward",
                "cross_entropy": "CrossEntropyLossBackward"}[name]
    assert out.grad_fn.name() == expected
    assert all(fn_ is None or fn_[0] is None or fn_[0].name() == "AccumulateGrad"
               for fn_ in out.grad_fn.next_functions)


@pytest.mark.parametrize("dtype", [oxmera.float32, oxmera.float64])
def test_cross_entropy_backward_twice_with_retain_graph(dtype):
    # Without retain_graph the VJP writes its result over the exponentials the
    # forward kept; with it, they must survive for the second backward.
    x = oxmera.randn(6, 4, dtype=dtype, requires_grad=True)
    loss = F.cross_entropy(x, oxmera.tensor([0, 3, 1, 1, 2, 0]))
    loss.backward(retain_graph=True)
    first = x.grad.clone()
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * first.numpy())


def test_log_softmax_backward_of_a_broadcast_gradient():
    # mean's seed is broadcast along the dim: summed as one slice times the length
    from oxmera.ops.activation import log_softmax_backward
    out = F.log_softmax(oxmera.tensor([[1.0, 2.0, 3.0], [0.0, -1e4, 5.0]], dtype=oxmera.float64), 1)
    seed = oxmera.tensor([[0.25], [0.5]], dtype=oxmera.float64).expand(2, 3)
    expected = seed.numpy() - np.exp(out.numpy()) * seed.numpy().sum(1, keepdims=True)
    np.testing.assert_allclose(log_softmax_backward(seed, out, 1).numpy(), expected, rtol=1e-14)


def test_gelu_bad_approximate():
    with pytest.raises(ValueError, match="gelu.*approximate"):
        F.gelu(oxmera.ones(2), approximate="erf")


def test_layer_norm_needs_a_normalized_dim():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match="normalized_shape"):
        torch.nn.functional.layer_norm(torch.ones(2, 3), ())
    x = oxmera.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="layer_norm.*at least 1-dimensional"):
        F.layer_norm(x, ())


def test_relu_backward_of_an_infinite_gradient_is_zero_where_flat():
    from oxmera.ops.elementwise import relu_backward
    out = relu_backward(oxmera.tensor([np.inf, np.inf, np.nan, 1.0]),
                        oxmera.tensor([0.0, 2.0, 0.0, -0.0]))
    np.testing.assert_array_equal(out.numpy(), [0.0, np.inf, 0.0, 0.0])


def test_linear_batched_matches_one_matrix_product():
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    out = F.linear(oxmera.tensor(x), oxmera.tensor(w), oxmera.tensor(b))
    np.testing.assert_allclose(out.numpy(), x @ w.T + b, rtol=1e-12)
