"""Hidden outputs (``op(..., hidden=...)``): kept for the VJP, never differentiated.

The engine hands a multi-output op's VJP None as the gradient of a hidden
output (no zero array of its size in each backward), while an undeclared
floating output that got no gradient still reaches the VJP as zeros; hidden
outputs never require grad, on the forward's outputs and on ``ctx.output``
under ``create_graph``. The ops that use it (gelu, layer_norm, log_softmax)
are checked to see None too.
"""
import numpy as np
import pytest

import oxmera
from oxmera import autograd
from oxmera.extend import op
from oxmera.ops import _registry


def _define(name, **declaration):
    """A two-output op ``(2x, x^2)`` recording what its VJP received (once per name)."""
    existing = _registry.REGISTRY.get(name)
    if existing is not None:
        return existing.public

    def forward(x):
        return 2 * x, x * x
    forward.__name__ = name
    public = op(name=name, save_output=True, outputs=("double", "square"),
                **declaration)(forward)

    @public.vjp
    def _(ctx, grads, x):
        # Plain values only: a Tensor kept here would keep its graph (and the
        # memory it locked) alive after the test.
        public.seen.append(([None if g is None else (type(g), g.tolist()) for g in grads],
                            [o.requires_grad for o in ctx.output]))
        grad = grads[0] * 2
        if grads[1] is not None:
            grad = grad + grads[1] * 2 * x
        return grad
    public.seen = []
    return public


def _hidden_op():
    return _define("hidden_square_example", hidden=("square",))


def _plain_op():
    return _define("plain_square_example")


def test_hidden_output_gradient_is_none():
    fn = _hidden_op()
    fn.seen.clear()
    x = oxmera.tensor([1.0, 3.0], requires_grad=True)
    out = fn(x)
    assert out.double.requires_grad and out.double.grad_fn is not None
    assert not out.square.requires_grad and out.square.grad_fn is None
    out.double.sum().backward()
    (grads, _), = fn.seen
    assert grads[1] is None
    assert grads[0] == (oxmera.Tensor, [1.0, 1.0])
    assert x.grad.tolist() == [2.0, 2.0]


def test_undeclared_unused_output_gradient_is_zeros():
    fn = _plain_op()
    fn.seen.clear()
    x = oxmera.tensor([1.0, 3.0], requires_grad=True)
    out = fn(x)
    assert out.square.requires_grad
    out.double.sum().backward()
    (grads, _), = fn.seen
    assert grads[1] == (oxmera.Tensor, [0.0, 0.0])
    assert x.grad.tolist() == [2.0, 2.0]
    # and a used one arrives as it was sent
    fn.seen.clear()
    x.grad = None
    fn(x).square.sum().backward()
    assert fn.seen[0][0][1] == (oxmera.Tensor, [1.0, 1.0]) and x.grad.tolist() == [2.0, 6.0]


def test_hidden_output_cannot_be_differentiated():
    x = oxmera.tensor([1.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        _hidden_op()(x).square.sum().backward()


def test_hidden_output_under_create_graph():
    fn = _hidden_op()
    fn.seen.clear()
    x = oxmera.tensor([1.0, 3.0], requires_grad=True)
    (g,) = autograd.grad(fn(x).double.sum(), x, create_graph=True)
    (grads, output_requires_grad), = fn.seen
    assert grads[1] is None
    # ctx.output rebuilt while recording: the public output is in the graph, the hidden one not
    assert output_requires_grad == [True, False]
    assert g.tolist() == [2.0, 2.0]


def test_hidden_names_are_checked():
    def forward(x):
        return x, x
    with pytest.raises(ValueError, match="hidden names.*not outputs"):
        op(name="hidden_bad_name_example", outputs=("a", "b"), hidden=("c",))(forward)
    with pytest.raises(ValueError, match="hidden names.*not outputs"):
        op(name="hidden_no_outputs_example", hidden=("a",))(forward)
    with pytest.raises(ValueError, match="leaving one differentiable"):
        op(name="hidden_all_example", outputs=("a", "b"), hidden=("a", "b"))(forward)
    assert "hidden_bad_name_example" not in _registry.REGISTRY
    assert "hidden_all_example" not in _registry.REGISTRY


def test_function_outputs_unchanged():
    # a custom Function's unused output still reaches backward as zeros
    seen = []

    class Two(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append(gb)
            return ga * 2 + gb * 3

    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    a, b = Two.apply(x)
    assert b.requires_grad
    a.sum().backward()
    assert seen[0].tolist() == [0.0, 0.0] and x.grad.tolist() == [2.0, 2.0]


def _gelu(x):
    from oxmera.ops.activation import _gelu
    return _gelu(x)


def _layer_norm(x):
    from oxmera.ops.normalization import _layer_norm
    return _layer_norm(x)


def _log_softmax(x):
    from oxmera.ops.activation import _log_softmax
    return _log_softmax(x, 1)


@pytest.mark.parametrize("fn, hidden", [(_gelu, ("cdf",)), (_layer_norm, ("mean", "rstd")),
                                        (_log_softmax, ("exps", "sums"))],
                         ids=["gelu", "layer_norm", "log_softmax"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_model_ops_hidden_outputs_get_none(fn, hidden, create_graph):
    x = oxmera.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    result = fn(x)
    assert not any(getattr(result, name).requires_grad for name in hidden)
    seen = []
    result.output.grad_fn.register_prehook(lambda grads: seen.append(grads))
    autograd.grad((result.output * result.output).sum(), x, create_graph=create_graph)
    (grads,) = seen
    seen.clear()        # no cycle through the hook keeps the graph (and its locks) alive
    assert grads[0] is not None and all(g is None for g in grads[1:])


# -- ctx._frees_saved: a VJP may write over a hidden output the backward frees next ----------

def _frees_saved_probe():
    existing = _registry.REGISTRY.get("frees_saved_probe_example")
    if existing is not None:
        return existing.public

    def forward(x):
        return x * 1.0
    forward.__name__ = "frees_saved_probe_example"
    public = op(name="frees_saved_probe_example", save_output=True)(forward)

    @public.vjp
    def _(ctx, grad, x):
        public.seen.append(ctx._frees_saved)
        return grad
    public.seen = []
    return public


def test_frees_saved_only_without_retain_graph_or_hooks():
    fn = _frees_saved_probe()
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    fn.seen.clear()
    fn(x).sum().backward()
    y = fn(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    autograd.grad(fn(x).sum(), x, create_graph=True)
    with autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = fn(x).sum()
    z.backward()
    assert fn.seen == [True, False, True, False, False]
    assert not y.grad_fn.next_functions[0][0]._frees_saved      # released: never again


def _log_softmax_grad(x, **backward):
    weights = oxmera.arange(float(x.numel()), dtype=x.dtype).reshape(tuple(x.shape))
    y = (oxmera.log_softmax(x, 1) * weights).sum()
    y.backward(**backward)
    return y


@pytest.mark.parametrize("dtype", [oxmera.float64, oxmera.float32, oxmera.float16])
def test_log_softmax_reusing_its_exps_gives_the_same_gradient(dtype):
    rng = np.random.default_rng(0)
    x = oxmera.tensor(rng.standard_normal((3, 5)), dtype=dtype, requires_grad=True)
    y = _log_softmax_grad(x, retain_graph=True)        # kept: the exps are not written over
    kept = x.grad.clone()
    x.grad = None
    y.backward()                                       # the graph's last backward reuses them
    np.testing.assert_array_equal(x.grad.numpy(), kept.numpy())
    assert x.grad.numpy().flags.writeable
    x.grad = None
    with autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        _log_softmax_grad(x)                           # packed: never written over
    np.testing.assert_array_equal(x.grad.numpy(), kept.numpy())


def test_log_softmax_writes_its_gradient_over_the_exps():
    from oxmera.ops.activation import _log_softmax
    x = oxmera.tensor([[1.0, 2.0, 4.0]], dtype=oxmera.float64, requires_grad=True)
    result = _log_softmax(x, 1)
    exps = result.exps.numpy()
    before = exps.copy()
    (result.output * oxmera.tensor([[1.0, 0.0, 0.0]], dtype=oxmera.float64)).sum().backward()
    # the hidden array is the VJP's: it now holds the gradient (one array less in backward)
    np.testing.assert_array_equal(exps, x.grad.numpy())
    assert not np.array_equal(exps, before)
