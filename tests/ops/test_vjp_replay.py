"""Replayed VJPs (``replay=True`` ops): the traced op calls give the VJP's bits.

In a backward that records nothing, the VJP of a ``replay`` op runs once per
signature with a tracer watching and is rerun from the trace afterwards
(``oxmera/_core/autograd.pyx``, "Replayed VJPs"). These tests rerun every
gradient case of the table with replay off, then on (traced, then replayed)
and compare the gradients bit for bit, and check what the tracer refuses.
"""
import subprocess
import sys
import threading

import numpy as np
import pytest

import oxmera
from oxmera._core import autograd as core
from oxmera.ops import _registry

from ._cases import all_cases

REPLAYED = [opdef for opdef in _registry.list_ops() if opdef.replay]
CASES = all_cases()


def _forget_all():
    for opdef in REPLAYED:
        core.forget_vjp_replays(opdef)


@pytest.fixture(autouse=True)
def _replay_on():
    previous = core.set_vjp_replay(True)
    yield
    core.set_vjp_replay(previous)


def _outputs(result):
    return (result,) if isinstance(result, oxmera.Tensor) else tuple(result)


def _gradients(case, weighted, dtype=None):
    # The case's gradients from one backward (a weighted sum of its outputs,
    # or their plain sum, whose seed is the broadcast 1 _unit_product skips).
    inputs = case.build()
    if dtype is not None:
        inputs = tuple(t.detach().to(dtype).requires_grad_(t.requires_grad)
                       if isinstance(t, oxmera.Tensor) and t.dtype == np.float64 else t
                       for t in inputs)
    leaves = [t for t in inputs if isinstance(t, oxmera.Tensor) and t.requires_grad]
    outputs = [o for o in _outputs(case.fn(*inputs)) if o.requires_grad]
    if not outputs:
        return []
    rng = np.random.default_rng(7)
    total = None
    for o in outputs:
        if o.dtype.kind == "c":
            o = oxmera.view_as_real(o)
        term = (o * oxmera.tensor(rng.uniform(0.5, 1.5, o.shape), dtype=o.dtype)).sum() \
            if weighted else o.sum()
        total = term if total is None else total + term
    total.backward()
    return [None if t.grad is None else t.grad.numpy().copy() for t in leaves]


def _assert_same(expected, got):
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        if e is None:
            assert g is None
            continue
        assert g is not None and g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e, strict=True)


@pytest.mark.parametrize("weighted", [False, True], ids=["sum", "weighted"])
@pytest.mark.parametrize("name, case", CASES, ids=[case.id for _, case in CASES])
def test_replayed_gradients_equal_the_vjps(name, case, weighted):
    core.set_vjp_replay(False)
    expected = _gradients(case, weighted)
    core.set_vjp_replay(True)
    _forget_all()
    _assert_same(expected, _gradients(case, weighted))        # traced
    _assert_same(expected, _gradients(case, weighted))        # replayed
    # Every case sums its outputs, so ``sum``'s VJP at least went through the
    # tracer: the comparison above is not of two Python runs.
    assert core.vjp_replays(oxmera.sum.op)


FLOAT32_CASES = [(name, case) for name, case in CASES
                 if any(opdef.name == name for opdef in REPLAYED)]


@pytest.mark.parametrize("name, case", FLOAT32_CASES, ids=[case.id for _, case in FLOAT32_CASES])
def test_replayed_gradients_equal_the_vjps_in_float32(name, case):
    core.set_vjp_replay(False)
    try:
        expected = _gradients(case, True, np.float32)
    except (RuntimeError, TypeError, ValueError):
        pytest.skip("the case is for float64 only")
    core.set_vjp_replay(True)
    _forget_all()
    _assert_same(expected, _gradients(case, True, np.float32))
    _assert_same(expected, _gradients(case, True, np.float32))


def test_the_hot_ops_are_replayed():
    names = {opdef.name for opdef in REPLAYED}
    assert {"add", "sub", "mul", "neg", "sin", "cos", "tanh", "sum"} <= names
    x = oxmera.tensor(np.linspace(0.1, 1.0, 8), requires_grad=True)
    core.forget_vjp_replays(oxmera.sin.op)
    for _ in range(2):
        x.sin().sum().backward()
    assert core.vjp_replays(oxmera.sin.op) == [(True, ("cos", "mul"))]


def test_the_ops_of_an_mlp_step_are_replayed():
    # The ops of a training step trace, and the tracer accepts each (the loss,
    # whose no-record VJP is compiled kernels on the arrays, is not declared).
    from oxmera.nn import functional as F
    from oxmera.ops import blas, elementwise, linalg
    ops = [linalg.matmul.op, elementwise.add.op, elementwise.relu.op, blas.linear.op,
           elementwise.tanh.op, oxmera.mean.op]
    for opdef in ops:
        core.forget_vjp_replays(opdef)
    rng = np.random.default_rng(1)
    w1 = oxmera.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    b1 = oxmera.tensor(rng.standard_normal(5), requires_grad=True)
    w2 = oxmera.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    x = oxmera.tensor(rng.standard_normal((6, 4)))
    labels = oxmera.tensor([0, 1, 2, 0, 1, 2])
    for _ in range(2):
        h = F.relu(x @ w1 + b1)
        loss = F.cross_entropy(F.linear(h, w2).tanh(), labels) + h.mean()
        loss.backward()
    for opdef in ops:
        assert core.vjp_replays(opdef) and all(ok for ok, _ in core.vjp_replays(opdef)), opdef


def test_parameters_are_replayed_under_one_trace():
    # A model's weights are nn.Parameters: their VJPs match the trace made of
    # them (they once filled the op's table with traces that never matched,
    # so every later backward ran the VJP as Python).
    from oxmera import nn
    from oxmera.ops import blas
    core.forget_vjp_replays(blas.linear.op)
    oxmera.manual_seed(0)
    layer = nn.Linear(5, 3)
    x = oxmera.randn(4, 5)
    grads = []
    for replay in (False, True, True, True):
        core.set_vjp_replay(replay)
        layer.zero_grad()
        (layer(x) * oxmera.arange(3.0)).sum().backward()
        grads.append((layer.weight.grad.numpy().copy(), layer.bias.grad.numpy().copy()))
    assert core.vjp_replays(blas.linear.op) == [(True, ("matmul_tn", "sum"))]
    for traced_or_replayed in grads[1:]:
        _assert_same(grads[0], traced_or_replayed)


def test_a_tensor_subclass_of_ones_own_is_not_traced():
    # A user's subclass may change what the VJP's ops do: its calls run the
    # VJP as Python, and take no slot of the op's table.
    class Mine(oxmera.Tensor):
        pass

    core.forget_vjp_replays(oxmera.sin.op)
    x = Mine(oxmera.tensor([0.5, 1.0], dtype=oxmera.float64)).requires_grad_()
    for _ in range(12):
        x.grad = None
        x.sin().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0]))
    assert core.vjp_replays(oxmera.sin.op) == []


# -- the tracer's rules, on ops made here (internal, replay, not registered) ----------------

def _op(vjp, save_output=False, name="replay_probe"):
    def forward(x):
        return np.sin(x)
    forward.__module__ = "oxmera.tests_replay"     # an oxmera op: its VJP may be replayed
    opdef = _registry.OpDef(name, forward, 1, ("input",), True, None, save_output, None, False,
                            None, replay=True)
    opdef.vjp = vjp
    return opdef


def _grad_of(opdef, values, seed=None):
    x = oxmera.tensor(values, dtype=oxmera.float64, requires_grad=True)
    y = core.apply_op(opdef, (x,), None)
    y.backward(oxmera.ones_like(y) if seed is None else oxmera.tensor(seed, dtype=oxmera.float64))
    return x.grad.numpy().copy()


def test_a_value_read_refuses_the_trace():
    def vjp(ctx, grad, input):
        if (grad.sum() > 0).item():
            return grad * 2
        return grad * 3
    opdef = _op(vjp)
    np.testing.assert_array_equal(_grad_of(opdef, [1.0, 2.0], [1.0, 1.0]), [2.0, 2.0])
    np.testing.assert_array_equal(_grad_of(opdef, [1.0, 2.0], [-1.0, -1.0]), [-3.0, -3.0])
    assert core.vjp_replays(opdef) == [(False, ())]


@pytest.mark.parametrize("read", ["bool", "tolist", "numpy", "array", "index"])
def test_every_value_read_refuses(read):
    def vjp(ctx, grad, input):
        if read == "bool":
            bool(grad.sum() > 0)
        elif read == "tolist":
            grad.tolist()
        elif read == "numpy":
            grad.numpy()
        elif read == "array":
            np.asarray(grad)
        else:
            [1, 2][oxmera.tensor(0)]
        return grad * 2
    opdef = _op(vjp)
    _grad_of(opdef, [1.0, 2.0])
    assert core.vjp_replays(opdef) == [(False, ())]


def test_a_tensor_made_outside_an_op_refuses():
    def vjp(ctx, grad, input):
        return grad * oxmera.from_numpy(np.full(input.shape, 5.0))
    opdef = _op(vjp)
    for _ in range(2):
        np.testing.assert_array_equal(_grad_of(opdef, [1.0, 2.0]), [5.0, 5.0])
    assert core.vjp_replays(opdef) == [(False, ())]


def test_no_grad_inside_refuses():
    def vjp(ctx, grad, input):
        with oxmera.no_grad():
            return grad * 4
    opdef = _op(vjp)
    for _ in range(2):
        np.testing.assert_array_equal(_grad_of(opdef, [1.0]), [4.0])
    assert core.vjp_replays(opdef) == [(False, ())]


def test_a_result_that_is_no_traced_tensor_refuses():
    kept = oxmera.tensor([7.0, 7.0])

    def vjp(ctx, grad, input):
        return kept
    opdef = _op(vjp)
    for _ in range(2):
        np.testing.assert_array_equal(_grad_of(opdef, [1.0, 2.0]), [7.0, 7.0])
    assert core.vjp_replays(opdef) == [(False, ())]


_KEYWORD_TENSOR = """
import numpy as np, oxmera
from oxmera._core import autograd as core
from oxmera.ops import _registry

def forward(x):
    return np.sin(x)
forward.__module__ = "oxmera.tests_replay"
opdef = _registry.OpDef("probe", forward, 1, ("input",), True, None, False, None, False, None,
                        replay=True)
opdef.vjp = lambda ctx, grad, input: oxmera.mul(grad, other=input)
for values in ([1.0, 2.0], [3.0, -1.0], [0.5, 4.0]):
    x = oxmera.tensor(values, dtype=oxmera.float64, requires_grad=True)
    core.apply_op(opdef, (x,), None).sum().backward()
    assert np.array_equal(x.grad.numpy(), values), x.grad
assert core.vjp_replays(opdef) == [(False, ())], core.vjp_replays(opdef)
print("ok")
"""


def test_a_tensor_given_by_keyword_refuses():
    # A replay passes a forward the positional arguments it noted: a tensor
    # input given by keyword is not one of them (replaying it read past the
    # argument tuple). In a child process: a regression would crash.
    done = subprocess.run([sys.executable, "-c", _KEYWORD_TENSOR], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_shape_branches_get_a_trace_per_shape():
    def vjp(ctx, grad, input):
        return grad * 2 if input.shape[0] > 2 else grad * 3
    opdef = _op(vjp)
    for _ in range(2):
        np.testing.assert_array_equal(_grad_of(opdef, [1.0, 2.0, 3.0]), [2.0] * 3)
        np.testing.assert_array_equal(_grad_of(opdef, [1.0, 2.0]), [3.0] * 2)
    assert sorted(core.vjp_replays(opdef)) == [(True, ("mul",)), (True, ("mul",))]


def test_the_output_is_a_slot_of_the_trace():
    def vjp(ctx, grad, input):
        return grad * ctx.output
    opdef = _op(vjp, save_output=True)
    for values in ([0.5, 1.0], [2.0, -1.0], [0.25, 3.0]):
        np.testing.assert_array_equal(_grad_of(opdef, values), np.sin(values))
    assert core.vjp_replays(opdef) == [(True, ("mul",))]


def test_input_shapes_read_from_ctx_are_in_the_signature():
    x = oxmera.tensor(np.ones((2, 3)), requires_grad=True)
    y = oxmera.tensor(np.ones((4, 5)), requires_grad=True)
    core.forget_vjp_replays(oxmera.sum.op)
    for _ in range(2):
        for t in (x, y):
            t.grad = None
            (t.sum() * 2).backward()
            np.testing.assert_array_equal(t.grad.numpy(), np.full(t.shape, 2.0))
    assert len(core.vjp_replays(oxmera.sum.op)) == 2


def test_needs_and_identity_are_in_the_signature():
    core.forget_vjp_replays(oxmera.mul.op)
    a = oxmera.tensor([1.0, 2.0], requires_grad=True)
    b = oxmera.tensor([3.0, 4.0], requires_grad=True)
    c = oxmera.tensor([5.0, 6.0])
    for _ in range(2):
        a.grad = b.grad = None
        (a * b).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
        np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0])
        a.grad = None
        (a * c).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), [5.0, 6.0])
        a.grad = None
        (a * a).sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), [2.0, 4.0])
    assert len(core.vjp_replays(oxmera.mul.op)) == 3


def test_other_arguments_are_in_the_signature():
    x = oxmera.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    core.forget_vjp_replays(oxmera.sum.op)
    for _ in range(2):
        for dim, keep in ((0, False), (1, False), (1, True), (1.0, False)):
            x.grad = None
            try:
                s = x.sum(dim, keep)
            except TypeError:
                continue            # a float dim is refused by the forward
            (s * oxmera.arange(1.0, s.numel() + 1).reshape(s.shape)).sum().backward()
            w = np.arange(1.0, s.numel() + 1).reshape(s.shape)
            expected = np.broadcast_to(w if keep else np.expand_dims(w, dim), x.shape)
            np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_past_the_limit_the_vjp_runs_as_python():
    core.forget_vjp_replays(oxmera.sin.op)
    for n in range(1, 13):
        x = oxmera.tensor(np.linspace(0.1, 1.0, n), requires_grad=True)
        x.sin().sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.cos(np.linspace(0.1, 1.0, n)), rtol=0,
                                   atol=0)
    assert len(core.vjp_replays(oxmera.sin.op)) == 8


def test_create_graph_and_hooks_run_the_vjp_itself():
    x = oxmera.tensor([0.3, 0.7], dtype=oxmera.float64, requires_grad=True)
    (g,) = oxmera.autograd.grad(x.sin().sum(), x, create_graph=True)
    (gg,) = oxmera.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), -np.sin([0.3, 0.7]))
    y = x.sin()
    seen = []
    y.grad_fn.register_hook(lambda grads_in, grads_out: seen.append(grads_in[0].numpy().copy()))
    y.sum().backward()
    np.testing.assert_array_equal(seen[0], np.cos([0.3, 0.7]))


def test_large_temporaries_are_reused_without_touching_saved_values():
    # cos(x) in sin's VJP dies at the product: its memory takes the product.
    values = np.linspace(-3.0, 3.0, 100_000)
    x = oxmera.tensor(values, requires_grad=True)
    core.forget_vjp_replays(oxmera.sin.op)
    for _ in range(3):
        x.grad = None
        y = x.sin()
        seed = oxmera.tensor(np.full(values.shape, 2.0))
        y.backward(seed)
        np.testing.assert_array_equal(x.grad.numpy(), seed.numpy() * np.cos(values))
        np.testing.assert_array_equal(seed.numpy(), 2.0)
        np.testing.assert_array_equal(x.detach().numpy(), values)


def test_threads_trace_and_replay_their_own_vjps():
    errors = []

    def work(k):
        try:
            for i in range(50):
                x = oxmera.tensor(np.linspace(0.1, 1.0, 3 + (i + k) % 4), requires_grad=True)
                (x.sin() * x.cos()).tanh().sum().backward()
                v = x.detach().numpy()
                t = np.sin(v) * np.cos(v)
                expected = (1 - np.tanh(t) ** 2) * (np.cos(v) ** 2 - np.sin(v) ** 2)
                np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
        except BaseException as err:       # noqa: BLE001 (reported by the main thread)
            errors.append(err)
    for opdef in (oxmera.sin.op, oxmera.cos.op, oxmera.tanh.op, oxmera.mul.op):
        core.forget_vjp_replays(opdef)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_replay_can_be_turned_off():
    assert core.set_vjp_replay(False) is True
    core.forget_vjp_replays(oxmera.cos.op)
    x = oxmera.tensor([0.5], requires_grad=True)
    x.cos().sum().backward()
    assert core.vjp_replays(oxmera.cos.op) == []
    assert core.set_vjp_replay(True) is False


def test_a_replaced_vjp_is_traced_again(monkeypatch):
    # OpDef.vjp is public: a replay of the traces of the VJP it replaced would
    # run the old function (regression: a spy on op.vjp saw nothing).
    x = oxmera.tensor([0.25, 0.5], dtype=oxmera.float64, requires_grad=True)
    core.forget_vjp_replays(oxmera.sin.op)
    for _ in range(2):
        x.grad = None
        x.sin().sum().backward()
    assert core.vjp_replays(oxmera.sin.op)[0][0]       # replayed from the second on
    original = oxmera.sin.op.vjp
    calls = []

    def doubled(ctx, grad, input):
        calls.append(1)
        return original(ctx, grad, input) * 2
    monkeypatch.setattr(oxmera.sin.op, "vjp", doubled)
    for expected_calls in (1, 1):      # traced, then replayed: its own trace
        x.grad = None
        x.sin().sum().backward()
        assert len(calls) == expected_calls
        np.testing.assert_array_equal(x.grad.numpy(), 2 * np.cos([0.25, 0.5]))
    monkeypatch.undo()
    x.grad = None
    x.sin().sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.cos([0.25, 0.5]))
    assert len(calls) == 1


def test_a_node_with_a_python_number_input_is_replayed():
    # The VJP of x * 0.999 gets the number as a 0-d Tensor that _vjp_args
    # makes anew for each call: the trace must see the one the VJP got
    # (regression: every such signature was refused, so x * c ran as Python).
    core.forget_vjp_replays(oxmera.mul.op)
    core.forget_vjp_replays(oxmera.add.op)
    grads = []
    for c in (0.999, 0.5, 0.999):
        x = oxmera.tensor([0.25, -1.5], dtype=oxmera.float64, requires_grad=True)
        (x * c + 0.001).sum().backward()
        grads.append(x.grad.numpy().copy())
    assert core.vjp_replays(oxmera.mul.op) == [(True, ("mul",))]
    assert core.vjp_replays(oxmera.add.op)[0][0]
    # The number is an input of the replay, not a constant of the trace.
    np.testing.assert_array_equal(grads[1], [0.5, 0.5])
    np.testing.assert_array_equal(grads[0], [0.999, 0.999])
    np.testing.assert_array_equal(grads[2], [0.999, 0.999])
