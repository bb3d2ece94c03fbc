"""The backward engine (SPEC §3): backward, autograd.backward, autograd.grad.

Values are float64 with small integers, so expected gradients are exact.
"""
import numpy as np
import pytest

import oxmera
from oxmera import autograd

from ._helpers import test_op

F64 = oxmera.float64


def leaf(values):
    return oxmera.tensor(values, dtype=F64, requires_grad=True)


def const(values):
    return oxmera.tensor(values, dtype=F64)


# -- Tensor.backward ----------------------------------------------------------------

def test_scalar_backward():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    assert x.grad.dtype == np.float64 and not x.grad.requires_grad


def test_backward_with_gradient():
    x = leaf([1.0, 2.0])
    y = x * const([3.0, 5.0])
    y.backward(const([10.0, 100.0]))
    assert x.grad.tolist() == [30.0, 500.0]
    x.grad = None
    y = x * const([3.0, 5.0])
    y.backward(np.array([1.0, 2.0]))          # array_like gradients are accepted
    assert x.grad.tolist() == [3.0, 10.0]


def test_gradient_dtype_is_cast_to_output_dtype():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)         # float32
    (x * 2).backward(np.array([1.0, 1.0], dtype=np.float64))
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [2.0, 2.0]


def test_backward_on_a_leaf():
    x = leaf(3.0)
    x.backward()
    assert x.grad.item() == 1.0


def test_gradients_accumulate_across_calls():
    x = leaf([1.0, 2.0])
    for k in range(1, 4):
        (x * x).sum().backward()
        assert x.grad.tolist() == [2.0 * k, 4.0 * k]


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [6.0, 24.0]


def test_broadcasting_is_summed_back():
    a = leaf([[1.0], [2.0]])          # (2, 1)
    b = leaf([1.0, 2.0, 3.0])         # (3,)
    s = leaf(2.0)                     # ()
    ((a * b) * s).sum().backward()
    assert a.grad.shape == (2, 1) and a.grad.tolist() == [[12.0], [12.0]]
    assert b.grad.shape == (3,) and b.grad.tolist() == [6.0, 6.0, 6.0]
    assert s.grad.shape == () and s.grad.item() == 18.0


def test_broadcast_against_python_scalar_and_array():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    (x * np.array([1.0, 10.0]) + 5.0).sum().backward()
    assert x.grad.tolist() == [[1.0, 10.0], [1.0, 10.0]]


def test_diamond():
    # x feeds two branches that meet again: both contributions arrive, once each.
    x = leaf([2.0])
    a = x * 3
    b = x * x
    (a * b).sum().backward()          # d/dx 3x^3 = 9x^2
    assert x.grad.tolist() == [36.0]


def test_deep_diamonds():
    x = leaf(1.0)
    y = x
    for _ in range(20):
        y = y + y                     # y = 2^20 x
    y.backward()
    assert x.grad.item() == 2.0 ** 20


def test_leaf_used_twice_in_one_op():
    x = leaf([3.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [6.0]


def test_multi_output_op_with_one_output_used():
    x = leaf([[1.0, 5.0], [7.0, 2.0]])
    x.max(dim=1).values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_constant_inputs_get_no_gradient():
    x = leaf([1.0, 2.0])
    c = const([3.0, 4.0])
    (x * c).sum().backward()
    assert c.grad is None and not c.requires_grad


def test_backward_without_requires_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        const([1.0]).sum().backward()


# -- retain_grad and hooks -----------------------------------------------------------

def test_retain_grad_on_non_leaf():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    z = y * y
    z.retain_grad()
    z.sum().backward()
    assert z.grad.tolist() == [1.0, 1.0]
    assert y.grad.tolist() == [4.0, 8.0]
    assert x.grad.tolist() == [8.0, 16.0]
    y2 = x * 2
    y2.retain_grad()
    (y2 * y2).sum().backward()
    assert y.grad.tolist() == [4.0, 8.0]          # y's grad is not touched by y2's graph
    assert y2.grad.tolist() == [4.0, 8.0]


def test_retained_grad_accumulates_with_retain_graph():
    x = leaf([1.0])
    y = x * 2
    y.retain_grad()
    out = (y * 3).sum()
    out.backward(retain_graph=True)
    out.backward()
    assert y.grad.tolist() == [6.0]


def test_leaf_hook_sees_total_gradient_once():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    (x * 3 + x * x).sum().backward()
    assert seen == [[5.0, 7.0]]
    assert x.grad.tolist() == [5.0, 7.0]


def test_leaf_hook_replaces_gradient():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: g + 1)           # hooks chain in registration order
    (x * 2).sum().backward()
    assert x.grad.tolist() == [21.0, 21.0]


def test_non_leaf_hook_replaces_gradient_flowing_on():
    x = leaf([1.0, 2.0])
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    y.register_hook(lambda g: g * 10)
    (y * y).sum().backward()
    assert seen == [[4.0, 8.0]]
    assert x.grad.tolist() == [80.0, 160.0]


def test_removed_hook_is_not_called():
    x = leaf([1.0])
    y = x * 2
    calls = []
    hx = x.register_hook(lambda g: calls.append("x") or g * 100)
    hy = y.register_hook(lambda g: calls.append("y") or g * 100)
    hx.remove()
    hy.remove()
    y.sum().backward()
    assert calls == []
    assert x.grad.tolist() == [2.0]


def test_hook_returning_wrong_shape_or_dtype_raises():
    x = leaf([1.0, 2.0])
    h = x.register_hook(lambda g: const([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"shape \(3,\).*shape \(2,\)"):
        (x * 2).sum().backward()
    h.remove()
    x.register_hook(lambda g: g.float())
    with pytest.raises(RuntimeError, match="dtype float32.*dtype float64"):
        (x * 2).sum().backward()
    assert x.grad is None


def test_leaf_that_stopped_requiring_grad_gets_nothing():
    x = leaf([1.0, 2.0])
    x.grad = const([5.0, 5.0])
    calls = []
    x.register_hook(calls.append)
    y = (x * 2).sum()
    x.requires_grad_(False)
    y.backward()
    assert x.grad.tolist() == [5.0, 5.0] and calls == []


# -- backward(inputs=...) ---------------------------------------------------------------

def test_backward_inputs_accumulates_only_into_those():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    b = leaf([5.0, 6.0])
    (x * w + b).sum().backward(inputs=[w])
    assert w.grad.tolist() == [1.0, 2.0]
    assert x.grad is None and b.grad is None
    (x * w + b).sum().backward(inputs=w)          # a single tensor works too
    assert w.grad.tolist() == [2.0, 4.0]
    autograd.backward((x * w + b).sum(), inputs=[x, b])
    assert x.grad.tolist() == [3.0, 4.0] and b.grad.tolist() == [1.0, 1.0]
    assert w.grad.tolist() == [2.0, 4.0]


def test_backward_inputs_non_leaf():
    x = leaf([1.0, 2.0])
    y = x * 2
    (y * y).sum().backward(inputs=[y])
    assert y.grad.tolist() == [4.0, 8.0]
    assert x.grad is None


def test_backward_inputs_retained_or_repeated_counts_once():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward(inputs=[y])
    assert y.grad.tolist() == [4.0, 8.0]
    y2 = x * 2
    (y2 * y2).sum().backward(inputs=[y2, y2, x, x])
    assert y2.grad.tolist() == [4.0, 8.0]
    assert x.grad.tolist() == [8.0, 16.0]


def test_backward_inputs_empty_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="cannot be empty"):
        (x * 2).sum().backward(inputs=[])


# -- autograd.backward: several roots -----------------------------------------------------

def test_multiple_roots():
    x = leaf([1.0, 2.0])
    autograd.backward([(x * x).sum(), (x * 3).sum()])
    assert x.grad.tolist() == [5.0, 7.0]
    x.grad = None
    autograd.backward([x * x, x * 3], [const([1.0, 1.0]), const([10.0, 10.0])])
    assert x.grad.tolist() == [32.0, 34.0]


def test_multiple_roots_sharing_a_subgraph():
    x = leaf([1.0, 2.0])
    h = x * x
    autograd.backward([h.sum(), (h * 2).sum()])
    assert x.grad.tolist() == [6.0, 12.0]


def test_root_listed_twice():
    x = leaf([2.0])
    y = (x * x).sum()
    autograd.backward([y, y])
    assert x.grad.tolist() == [8.0]


def test_autograd_backward_grad_count_mismatch():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="2 gradients for 1 outputs"):
        autograd.backward([x * 2], [const([1.0]), const([1.0])])
    assert x.grad is None


# -- autograd.grad -----------------------------------------------------------------------

def test_grad_returns_and_leaves_dot_grad_untouched():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    x.grad = const([100.0, 100.0])
    gx, gw = autograd.grad((x * w).sum(), [x, w])
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad.tolist() == [100.0, 100.0]
    assert w.grad is None


def test_grad_single_input_and_grad_outputs():
    x = leaf([1.0, 2.0])
    (g,) = autograd.grad(x * x, x, grad_outputs=const([1.0, 10.0]))
    assert g.tolist() == [2.0, 40.0]
    g1, = autograd.grad([x * x, x * 3], [x], grad_outputs=[const([1.0, 1.0]), const([2.0, 2.0])])
    assert g1.tolist() == [8.0, 10.0]


def test_grad_non_leaf_input():
    x = leaf([1.0, 2.0])
    y = x * 2
    (gy,) = autograd.grad((y * y).sum(), y)
    assert gy.tolist() == [4.0, 8.0]
    assert x.grad is None


def test_grad_repeated_input():
    x = leaf([1.0, 2.0])
    g1, g2 = autograd.grad((x * x).sum(), [x, x])
    assert g1.tolist() == g2.tolist() == [2.0, 4.0]


def test_grad_allow_unused():
    x = leaf([1.0])
    u = leaf([1.0])
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        autograd.grad((x * 2).sum(), [x, u])
    gx, gu = autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gx.tolist() == [2.0] and gu is None
    gx, gu = autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    assert gu.tolist() == [0.0]


def test_grad_does_not_run_leaf_hooks_on_unrelated_leaves():
    x = leaf([1.0])
    w = leaf([2.0])
    calls = []
    w.register_hook(lambda g: calls.append(g))
    autograd.grad((x * w).sum(), x)
    assert calls == [] and w.grad is None


def test_grad_frees_graph_unless_retained():
    x = leaf([1.0])
    y = (x * x).sum()
    autograd.grad(y, x, retain_graph=True)
    autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        autograd.grad(y, x)


def test_grad_create_graph_result_is_differentiable():
    x = leaf([3.0])
    (g,) = autograd.grad((x * x * x).sum(), x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    assert g.tolist() == [27.0]
    (gg,) = autograd.grad(g.sum(), x)
    assert gg.tolist() == [18.0]


def test_backward_create_graph_gives_differentiable_grad():
    x = leaf([3.0])
    (x * x * x).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.tolist() == [27.0]
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [18.0]


def test_grad_inputs_must_require_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.grad((x * 2).sum(), const([1.0]))
    with pytest.raises(RuntimeError, match="cannot be empty"):
        autograd.grad((x * 2).sum(), [])


# -- higher order -------------------------------------------------------------------------

def test_third_derivative_closed_form():
    values = np.array([-2.0, -0.5, 0.0, 0.7, 1.3, 3.0])
    x = leaf(values)
    f = x ** 3 * oxmera.sin(x)
    (d1,) = autograd.grad(f.sum(), x, create_graph=True)
    (d2,) = autograd.grad(d1.sum(), x, create_graph=True)
    (d3,) = autograd.grad(d2.sum(), x)
    v = values
    expected = (6 * np.sin(v) + 18 * v * np.cos(v) - 9 * v ** 2 * np.sin(v)
                - v ** 3 * np.cos(v))
    np.testing.assert_allclose(d1.detach().numpy(), 3 * v ** 2 * np.sin(v) + v ** 3 * np.cos(v),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d3.numpy(), expected, rtol=1e-12, atol=1e-12)
    assert d3.dtype == np.float64


def test_higher_order_through_output_reusing_ops():
    # exp, tanh, sigmoid and sqrt read their output in the VJP; their second
    # derivative must still be right.
    v = np.array([0.3, 0.9, 1.7])
    cases = {
        oxmera.exp: np.exp(v),
        oxmera.tanh: -2 * np.tanh(v) * (1 - np.tanh(v) ** 2),
        oxmera.sigmoid: (lambda s: s * (1 - s) * (1 - 2 * s))(1 / (1 + np.exp(-v))),
        oxmera.sqrt: -0.25 * v ** -1.5,
    }
    for fn, expected in cases.items():
        x = leaf(v)
        (d1,) = autograd.grad(fn(x).sum(), x, create_graph=True)
        (d2,) = autograd.grad(d1.sum(), x)
        np.testing.assert_allclose(d2.numpy(), expected, rtol=1e-12, err_msg=fn.__name__)


# -- the leaf-gradient buffer rule ----------------------------------------------------------

def _arrays(*tensors):
    return [t.detach().numpy() for t in tensors]


def _assert_disjoint(grads, others):
    """No grad shares memory with another grad or with any of ``others``.

    ``others`` may share memory among themselves (two hooks may stash the same
    gradient); that is not the engine's business.
    """
    grad_arrays = _arrays(*grads)
    other_arrays = _arrays(*others)
    for i, a in enumerate(grad_arrays):
        for j, b in enumerate(grad_arrays[i + 1:] + other_arrays):
            assert not np.shares_memory(a, b), f"grad {i} shares memory with item {j}"


def _sum_pair(create_graph):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x + y).sum().backward(create_graph=create_graph)
    return [x, y], [], [x.grad, y.grad]


def _given_tensor(create_graph):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = const([1.0, 1.0])
    (x + y).backward(g, create_graph=create_graph)
    return [x, y], [g], [x.grad, y.grad]


def _given_tensor_requiring_grad(create_graph):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = leaf([1.0, 1.0])
    (x + y).backward(g, create_graph=create_graph)
    return [x, y], [g], [x.grad, y.grad]


def _given_array(create_graph):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = np.ones(2)
    (x + y).backward(g, create_graph=create_graph)
    return [x, y], [oxmera.from_numpy(g)], [x.grad, y.grad]


def _leaf_as_root(create_graph):
    x = leaf([1.0, 2.0])
    g = const([1.0, 1.0])
    x.backward(g, create_graph=create_graph)
    return [x], [g], [x.grad]


def _hook_stashes(create_graph):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    stash = []
    x.register_hook(stash.append)
    y.register_hook(lambda g: stash.append(g.detach()))
    (x + y).sum().backward(create_graph=create_graph)
    return [x, y], stash, [x.grad, y.grad]


def _hook_returns_kept_tensor(create_graph):
    x = leaf([1.0, 2.0])
    kept = const([7.0, 7.0])

    def once(g):                      # one-shot, so the second backward below is plain
        handle.remove()
        return kept
    handle = x.register_hook(once)
    (x * 2).sum().backward(create_graph=create_graph)
    return [x], [kept], [x.grad]


def _retained_pass_through(create_graph):
    x = leaf([1.0, 2.0])
    y = x.clone()
    y.retain_grad()
    seen = []
    y.register_hook(seen.append)
    g = const([1.0, 1.0])
    y.backward(g, create_graph=create_graph)
    return [x, y], [g] + seen, [x.grad, y.grad]


def _inputs_subset(create_graph):
    x, y, z = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([5.0, 6.0])
    g = const([1.0, 1.0])
    (x + y + z).backward(g, inputs=[x, z], create_graph=create_graph)
    return [x, z], [g], [x.grad, z.grad]


def _multiple_roots(create_graph):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = const([1.0, 1.0])
    autograd.backward([x, y], [g, g], create_graph=create_graph)
    return [x, y], [g], [x.grad, y.grad]


BUFFER_CASES = [_sum_pair, _given_tensor, _given_tensor_requiring_grad, _given_array,
                _leaf_as_root, _hook_stashes, _hook_returns_kept_tensor,
                _retained_pass_through, _inputs_subset, _multiple_roots]


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
@pytest.mark.parametrize("case", BUFFER_CASES, ids=lambda f: f.__name__.strip("_"))
def test_grad_buffers_are_never_shared(case, create_graph):
    """No .grad shares memory with another .grad or with anything the user can see.

    The engine may keep ("steal") its own gradient buffer as ``.grad`` only
    when its reference counts prove nothing else holds it; this walks the ways
    a gradient reaches more than one place (an add sends one tensor to two
    inputs, a user's ``gradient`` passes straight through, a hook stashes it,
    retain_grad) and checks every pair. A second backward then adds in place,
    and must change exactly the .grad it is for.
    """
    owners, user_visible, grads = case(create_graph)
    _assert_disjoint(grads, user_visible)
    before_user = [a.copy() for a in _arrays(*user_visible)]
    before = [a.copy() for a in _arrays(*grads)]
    if create_graph:
        # Drop the history, keep the buffers: the plain backward below adds in place.
        for t in owners:
            t.grad = t.grad.detach()
    # A second, plain backward into each owner alone adds exactly 1 per element.
    for t in owners:
        (t * 1.0).sum().backward(inputs=[t])
    for t, b in zip(owners, before):
        np.testing.assert_array_equal(t.grad.numpy(), b + 1.0)
    for a, b in zip(_arrays(*user_visible), before_user):
        np.testing.assert_array_equal(a, b)
    _assert_disjoint([t.grad for t in owners], user_visible)


_KEEP = []          # what the _test_fresh_grad VJP keeps of the gradient it makes
_KEEP_MODE = [None]


def _fresh_grad_forward(x):
    return x * 1.0


def _fresh_grad_vjp(ctx, grad, x):
    array = grad.detach().numpy() * 1.0          # fresh, owns its memory
    tensor = oxmera.from_numpy(array)
    mode = _KEEP_MODE[0]
    if mode == "tensor":
        _KEEP.append(tensor)
    elif mode == "array":
        _KEEP.append(oxmera.from_numpy(array))
    elif mode == "view":
        _KEEP.append(oxmera.from_numpy(array[:]))
    elif mode == "detached":
        _KEEP.append(tensor.detach())
    return tensor


def _fresh_grad_op():
    """x * 1 whose VJP returns a brand-new array: the case the steal rule keeps."""
    return test_op("_test_fresh_grad", _fresh_grad_forward, _fresh_grad_vjp)


@pytest.mark.parametrize("mode", [None, "tensor", "array", "view", "detached", "hook"])
def test_steal_rule_boundaries(mode):
    # The engine keeps its buffer only when the reference counts of the
    # gradient tensor and its array show nobody else holds them.
    fresh_grad = _fresh_grad_op()
    _KEEP.clear()
    _KEEP_MODE[0] = mode
    try:
        x = leaf([1.0, 2.0])
        if mode == "hook":
            x.register_hook(_KEEP.append)
        fresh_grad(x).backward(const([3.0, 4.0]))
    finally:
        _KEEP_MODE[0] = None
    assert x.grad.tolist() == [3.0, 4.0]
    kept = list(_KEEP)
    _KEEP.clear()
    assert len(kept) == (0 if mode is None else 1)
    for k in kept:
        assert not np.shares_memory(k.numpy(), x.grad.numpy())
    before = [k.tolist() for k in kept]
    fresh_grad(x).backward(const([1.0, 1.0]))        # accumulates in place into x.grad
    assert x.grad.tolist() == [4.0, 5.0]
    assert [k.tolist() for k in kept] == before
    _KEEP.clear()


def test_second_backward_accumulates_in_place():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x + y).sum().backward()
    gx, gy = x.grad, y.grad
    (x * y).sum().backward()
    assert x.grad is gx and y.grad is gy          # accumulated into the same buffers
    assert gx.tolist() == [4.0, 5.0] and gy.tolist() == [2.0, 3.0]


def test_accumulation_never_writes_into_a_grad_with_history():
    x = leaf([1.0, 2.0])
    w = leaf([5.0, 5.0])
    h = w * 1.0
    x.grad = h
    (x * 2).sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]
    assert h.tolist() == [5.0, 5.0]          # part of a graph: never changed in place


def test_create_graph_grad_accumulates_as_new_node():
    x = leaf([2.0])
    (x * x).sum().backward(create_graph=True)
    first = x.grad
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad is not first and first.tolist() == [4.0]
    assert x.grad.tolist() == [16.0] and x.grad.requires_grad
    (d,) = autograd.grad(x.grad.sum(), x)          # d/dx (2x + 3x^2) = 2 + 6x
    assert d.tolist() == [14.0]


def test_0d_gradients_summed_from_two_paths_stay_arrays():
    # NumPy adds two 0-d arrays into a scalar; the engine must keep an array
    # (a scalar would then act as a Python float of the default dtype).
    import oxmera as _ox
    x = _ox.tensor(np.array(0.5), requires_grad=True)
    (g,) = _ox.autograd.grad(x * x, x)
    assert type(g.numpy()) is np.ndarray and g.dtype == np.float64
    assert _ox.stack([g]).dtype == np.float64
    y = x * x
    y.backward()
    y = x * x
    y.backward()
    assert type(x.grad.numpy()) is np.ndarray and x.grad.item() == 2.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape, bias_shape", [((1000, 7), (7,)), ((3, 4, 5), (4, 5)),
                                               ((0, 3), (3,)), ((6,), ()), ((2, 1), (1,))])
def test_a_bias_gradient_is_sum_to_bit_for_bit_with_or_without_recording(dtype, shape,
                                                                          bias_shape):
    # Without recording the engine sums a gradient's one extra leading dim in C
    # (NumPy's add.reduce, as sum_to runs it); with create_graph it records sum_to.
    rng = np.random.default_rng(0)
    upstream = rng.standard_normal(shape).astype(dtype)
    expected = oxmera.sum_to(oxmera.tensor(upstream), bias_shape).numpy()
    for create_graph in (False, True):
        bias = oxmera.zeros(bias_shape, dtype=dtype, requires_grad=True)
        weight = oxmera.tensor(upstream, requires_grad=True)
        (oxmera.zeros(shape, dtype=dtype) + bias).mul(weight).sum().backward(
            create_graph=create_graph)
        assert bias.grad.dtype == dtype and bias.grad.shape == bias_shape
        assert bias.grad.detach().numpy().tobytes() == expected.tobytes()
        assert (bias.grad.grad_fn is not None) == create_graph    # d bias.grad / d weight


def test_nodes_of_alternating_shapes_and_dtypes_keep_their_own_output_info():
    # Recording remembers the (shape, dtype) pairs of the last two distinct
    # outputs; a step alternating three shapes and two dtypes must still give
    # each node its own (the engine fits every gradient to it).
    x = oxmera.tensor(np.arange(1.0, 5.0), requires_grad=True)             # (4,) float64
    w = oxmera.tensor(np.ones((2, 4), np.float32), requires_grad=True)      # (2, 4) float32
    total = None
    for k in range(3):
        s = (x * (k + 1)).sum()                         # (4,) f64, then () f64
        h = (w * s.float()).sum(1)                      # (2, 4) f32, (2,) f32
        term = h.double().sum() + s                     # (2,) f64, () f64
        total = term if total is None else total + term
    total.backward()
    # d/dx: sum_k (k+1) * (1 + 8) ; d/dw: sum_k s_k with s_k = (k+1) * 10
    np.testing.assert_array_equal(x.grad.numpy(), np.full(4, 6.0 * 9))
    assert x.grad.dtype == np.float64 and x.grad.shape == (4,)
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 4), 60.0, np.float32))
    assert w.grad.dtype == np.float32 and w.grad.shape == (2, 4)


def test_a_gradient_a_hook_kept_is_not_adopted_as_the_grad():
    # An unshared plain gradient becomes .grad itself; one a hook kept is
    # shared, so .grad gets its own memory.
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g))
    (x * 3).sum().backward()
    assert x.grad is not seen[0]
    with oxmera.no_grad():
        x.grad.add_(1.0)
    assert seen[0].tolist() == [3.0, 3.0] and x.grad.tolist() == [4.0, 4.0]
    y = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    (y * 3).sum().backward()
    g = y.grad
    (y * 3).sum().backward()            # accumulates into the same .grad, in place
    assert y.grad is g and g.tolist() == [6.0, 6.0]


# -- what a backward holds while it runs ---------------------------------------------

def _nodes(root):
    seen, stack, out = set(), [root], []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen or not hasattr(fn, "_claimed"):
            continue
        seen.add(id(fn))
        out.append(fn)
        stack.extend(f for f, _ in fn.next_functions)
    return out


def _chain(x, steps):
    for _ in range(steps):
        x = oxmera.sin(x) * 0.5 + 0.25
    return x


def test_a_backward_gives_back_every_claim():
    x = leaf([0.5, 1.0])
    y = _chain(x, 5)
    y.sum().backward(retain_graph=True)
    assert not any(n._claimed() for n in _nodes(y.grad_fn))


def test_a_failed_backward_gives_back_every_claim():
    # A node's claim is given back when it runs; an error stops the backward
    # before the deeper nodes run, and their claims must not outlive it.
    x = leaf([0.5, 1.0])
    y = _chain(x, 5)
    mid = _chain(x, 2)
    z = (y + mid).sum()

    def fail(grad):
        raise ValueError("stop here")

    mid.register_hook(fail)
    with pytest.raises(ValueError, match="stop here"):
        z.backward(retain_graph=True)
    nodes = _nodes(z.grad_fn)
    assert len(nodes) > 10 and not any(n._claimed() for n in nodes)


def test_a_backward_with_inputs_gives_back_the_claims_of_nodes_it_skips():
    x, w = leaf([0.5, 1.0]), leaf([2.0, 3.0])
    z = (_chain(x, 3) * _chain(w, 3)).sum()
    (gx,) = autograd.grad(z, (x,), retain_graph=True)      # the w branch never runs
    assert not any(n._claimed() for n in _nodes(z.grad_fn))
    z.backward()
    assert x.grad.tolist() == gx.tolist()


def test_a_deep_backward_holds_little_per_node():
    # A node reached by one edge gets its task (32 bytes) only when its
    # gradient arrives, and gives it back when it runs; no list of the nodes
    # claimed; the search's stack is as deep as the graph is wide, not as
    # long. So a chain's backward adds nothing a node to the graph's memory
    # at its peak (was 64 bytes a node: a task each, a list and a stack).
    import tracemalloc
    x = leaf([0.5])
    loss = _chain(x, 20_000).sum()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        loss.backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (peak - before) / 60_001 < 4


def test_nodes_reached_by_several_edges_wait_for_all():
    # Nodes reached once run when their one edge delivers; those reached
    # twice or more (here every h) must wait for all their edges.
    x = leaf([0.5, 1.5])
    h = x
    for _ in range(50):
        h = oxmera.sin(h) * h + h
    h.sum().backward()
    v, d = x.detach().numpy().copy(), np.ones(2)
    values = [v]
    for _ in range(50):
        values.append(np.sin(values[-1]) * values[-1] + values[-1])
    for u in reversed(values[:-1]):
        d = d * (np.cos(u) * u + np.sin(u) + 1)
    np.testing.assert_allclose(x.grad.numpy(), d, rtol=1e-10)
