"""oxmera.autograd.graph: saved-tensor hooks, node attributes, multi-grad hooks."""
import gc
import threading
import tracemalloc
import weakref
import zlib

import numpy as np
import pytest

import oxmera
from oxmera.autograd import graph


def _zlib_pack(t):
    array = t.numpy(force=True)
    return zlib.compress(np.ascontiguousarray(array).tobytes()), array.shape, array.dtype


def _zlib_unpack(packed):
    data, shape, dtype = packed
    return oxmera.from_numpy(np.frombuffer(zlib.decompress(data), dtype=dtype)
                             .reshape(shape).copy())


def _mlp_step(weights, x):
    h = x
    for w in weights:
        h = oxmera.nn.functional.relu(h @ w - 1.0)
    return (h * h).sum()


def _offload_run(hooks):
    rng = np.random.default_rng(0)
    weights = [oxmera.tensor(rng.standard_normal((64, 64)) * 0.2, dtype=oxmera.float32,
                             requires_grad=True) for _ in range(8)]
    x = oxmera.tensor(rng.standard_normal((4096, 64)), dtype=oxmera.float32)
    gc.collect()
    tracemalloc.start()
    try:
        if hooks:
            with graph.saved_tensors_hooks(_zlib_pack, _zlib_unpack):
                loss = _mlp_step(weights, x)
        else:
            loss = _mlp_step(weights, x)
        loss.backward()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return [w.grad.numpy() for w in weights], float(loss.item()), peak


def test_offloading_activations_to_compressed_bytes_gives_the_same_gradients_in_less_memory():
    plain_grads, plain_loss, plain_peak = _offload_run(False)
    packed_grads, packed_loss, packed_peak = _offload_run(True)
    assert packed_loss == plain_loss
    for a, b in zip(plain_grads, packed_grads):
        np.testing.assert_array_equal(a, b)
    # Most activations are relu zeros: compressed, they take far less room.
    assert packed_peak < 0.8 * plain_peak, (packed_peak, plain_peak)


def test_hooks_see_every_saved_tensor_and_nest():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    outer, inner = [], []
    with graph.saved_tensors_hooks(lambda t: outer.append(1) or t, lambda t: t):
        a = x * x                   # saves both inputs
        with graph.saved_tensors_hooks(lambda t: inner.append(1) or t, lambda t: t):
            b = a.exp()             # saves its output
        c = a + 1                   # saves nothing
    assert (len(outer), len(inner)) == (2, 1)
    (b.sum() + c.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1, 2]) * (np.exp([1, 4]) + 1),
                               rtol=1e-6)


def test_identity_hooks_match_torch_second_order():
    torch = pytest.importorskip("torch")
    values = [0.5, -1.0, 2.0]
    x = oxmera.tensor(values, dtype=oxmera.float64, requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (x.sin() * x).tanh().sum()
    g, = oxmera.autograd.grad(y, x, create_graph=True)
    gg, = oxmera.autograd.grad(g.sum(), x)
    tx = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        ty = (tx.sin() * tx).tanh().sum()
    tg, = torch.autograd.grad(ty, tx, create_graph=True)
    tgg, = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-12)


def test_unpack_must_return_a_tensor_and_a_freed_graph_still_raises():
    x = oxmera.tensor([1.0], requires_grad=True)
    with graph.saved_tensors_hooks(lambda t: t, lambda t: "nope"):
        y = (x * x).sum()
    with pytest.raises(TypeError, match="unpack hook"):
        y.backward()
    with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_packed_memory_is_not_locked_and_mutation_is_not_checked_as_in_torch():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    with graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (a * a).sum()
    with oxmera.no_grad():
        a.mul_(10)                  # the packed copies are unaffected
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_allow_mutation_on_saved_tensors():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = (a * a).sum()
    with oxmera.no_grad():
        a.mul_(10)
    with pytest.raises(RuntimeError, match="inplace"):
        y.backward()
    with graph.allow_mutation_on_saved_tensors():
        a = x * 1
        y = (a * a).sum()
        with oxmera.no_grad():
            a.mul_(10)
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_save_on_cpu_and_disable():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    with graph.save_on_cpu(pin_memory=True):
        y = (x.exp() * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1, 2]) * (1 + np.array([1, 2])),
                               rtol=1e-6)
    with graph.disable_saved_tensors_hooks("hooks are off here"):
        with pytest.raises(RuntimeError, match="hooks are off here"):
            with graph.save_on_cpu():
                pass
    with graph.save_on_cpu():       # enabled again after it
        pass


def test_hooks_are_per_thread():
    packed = []
    x = oxmera.tensor([1.0], requires_grad=True)
    other = []

    def work():
        other.append((x * x).grad_fn._raw_saved_self)

    with graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert packed == [] and len(other) == 1


def test_a_cycle_through_a_packed_value_is_collected():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    holder = []

    class Box:
        pass

    def pack(t):
        box = Box()
        box.t = t
        holder.append(box)
        return box

    with graph.saved_tensors_hooks(pack, lambda box: box.t):
        y = (x * 2).exp()
    holder[-1].output = y           # packed value -> y -> node -> packed value
    ref = weakref.ref(y.grad_fn)
    del y, holder[:]
    gc.collect()
    assert ref() is None


def test_saved_attributes_match_torch_names():
    torch = pytest.importorskip("torch")
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    w = oxmera.tensor([3.0, 4.0], requires_grad=True)
    m = x * w
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    tw = torch.tensor([3.0, 4.0], requires_grad=True)
    tm = tx * tw
    assert m.grad_fn._saved_self is x and m.grad_fn._saved_other is w
    assert tm.grad_fn._saved_self is tx
    e = m.exp()
    np.testing.assert_allclose(e.grad_fn._saved_result.numpy(), e.detach().numpy())
    assert not hasattr(m.grad_fn, "_saved_result")
    assert not hasattr((x + w).grad_fn, "_saved_self")
    assert not hasattr(m.grad_fn, "_saved_nothing")
    s = m.sum(dim=0, keepdim=True)
    assert s.grad_fn._saved_dim == 0 and s.grad_fn._saved_keepdim is True
    m.sum().backward()
    with pytest.raises(RuntimeError, match="freed"):
        m.grad_fn._saved_self


def test_raw_saved_tensor_hooks_pack_now_and_unpack_in_backward():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    calls = []
    y.grad_fn._raw_saved_other.register_hooks(
        lambda t: calls.append("pack") or t.detach().clone(),
        lambda t: calls.append("unpack") or t)
    assert calls == ["pack"]
    with pytest.raises(RuntimeError, match="once"):
        y.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t)
    y.sum().backward()
    assert calls == ["pack", "unpack"]
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_node_api():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    node = y.grad_fn
    assert isinstance(node, graph.Node)
    assert node.name() == "SumBackward"
    mul, nr = node.next_functions[0]
    assert mul.name() == "MulBackward" and nr == 0
    leaf = mul.next_functions[0][0]
    assert isinstance(leaf, graph.Node) and leaf.variable is x
    node.metadata["tag"] = 1
    assert y.grad_fn.metadata == {"tag": 1}
    order = []
    node.register_prehook(lambda go: order.append("pre"))
    node.register_hook(lambda gi, go: order.append("post"))
    y.backward()
    assert order == ["pre", "post"]


def test_metadata_holding_its_node_is_collected():
    x = oxmera.tensor([1.0], requires_grad=True)
    y = x * 2
    ref = weakref.ref(y.grad_fn)
    y.grad_fn.metadata["self"] = y
    del y
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook_like_torch(mode):
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (oxmera, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0, 6.0], requires_grad=True)
        seen = []
        if lib is oxmera:
            handle = graph.register_multi_grad_hook((a, b, c), seen.append, mode=mode)
        else:
            handle = torch.autograd.graph.register_multi_grad_hook((a, b, c), seen.append,
                                                                   mode=mode)
        (a * b).sum().backward()    # c takes no part
        (a * 2).sum().backward()
        handle.remove()
        (a * b).sum().backward()
        results[lib.__name__] = [
            [None if g is None else np.asarray(g.detach().numpy()).tolist() for g in s]
            if isinstance(s, list) else np.asarray(s.detach().numpy()).tolist()
            for s in seen]
    if mode == "all":
        assert results["oxmera"] == results["torch"]
    else:                           # which gradient comes first is an engine detail
        assert len(results["oxmera"]) == len(results["torch"]) == 2


def test_register_multi_grad_hook_checks():
    a = oxmera.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="mode"):
        graph.register_multi_grad_hook((a,), print, mode="some")
    with pytest.raises(RuntimeError, match="does not require grad"):
        graph.register_multi_grad_hook((oxmera.ones(1),), print)


def test_increment_version_makes_backward_raise():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    y = (a * a).sum()
    graph.increment_version(a)
    assert a._version == 1
    with pytest.raises(RuntimeError, match="inplace"):
        y.backward()
    graph.increment_version([x, a])
    assert a._version == 2


def test_custom_function_saved_tensors_go_through_the_hooks():
    class MulExp(oxmera.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = (x * y).exp()
            ctx.save_for_backward(x, y, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            x, y, out = ctx.saved_tensors
            return grad * out * y, grad * out * x

    x = oxmera.tensor([0.5, 1.0], requires_grad=True)
    y = oxmera.tensor([2.0, -1.0], requires_grad=True)
    calls = []
    with graph.saved_tensors_hooks(_zlib_pack, lambda p: calls.append(1) or _zlib_unpack(p)):
        out = MulExp.apply(x, y)
    out.sum().backward()
    assert len(calls) == 3
    e = np.exp(np.array([0.5, 1.0]) * np.array([2.0, -1.0]))
    np.testing.assert_allclose(x.grad.numpy(), e * [2.0, -1.0], rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), e * [0.5, 1.0], rtol=1e-6)
