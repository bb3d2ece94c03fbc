"""Graph lifetime (SPEC §3): freed by reference counting alone, at any size.

With the cyclic garbage collector disabled, dropping the output of a graph
must free every intermediate tensor, node and array at once: a reference
cycle anywhere (an output captured by its own node, a closure, a hook) would
keep them alive. The million-node chains run in a subprocess, so that a
crash (C stack overflow in a recursive dealloc) fails the test instead of
killing pytest.
"""
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import oxmera
from oxmera import autograd

# Where the oxmera under test was imported from (a source tree built in place,
# or site-packages), for the subprocesses.
OXMERA_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(oxmera.__file__)))
N_OPS = 1000


from _gc_garbage import cyclic_garbage  # noqa: E402  (tests/ is on sys.path)


OPS = {
    "mul": lambda t: t * 1.0001,
    "exp": lambda t: oxmera.exp(t * 0.001),            # VJP reads the output
    "tanh": oxmera.tanh,                                # VJP reads the output
    "sigmoid": lambda t: oxmera.sigmoid(t) + 0.5,       # VJP reads the output
    "sqrt": lambda t: oxmera.sqrt(t + 1.0),             # VJP reads the output
    "mixed": lambda t: (t * t.sin() + t.cos()) * 0.5 + t.reshape(2, 1).sum(1).relu() * 0.1,
}


def _build(op_fn, refs, node_refs):
    x = oxmera.tensor([0.5, 0.25], dtype=oxmera.float64, requires_grad=True)
    y = x
    for _ in range(N_OPS):
        y = op_fn(y)
        refs.append(weakref.ref(y))
        refs.append(weakref.ref(y.detach().numpy()))
        node_refs.append(weakref.ref(y.grad_fn))
    return x, y


def _alive(refs):
    return sum(r() is not None for r in refs)


@pytest.mark.parametrize("mode", ["no_backward", "backward", "retain_graph", "create_graph",
                                  "grad", "grad_create_graph"])
@pytest.mark.parametrize("name", OPS)
def test_dropping_the_output_frees_the_graph(no_gc, name, mode):
    refs, node_refs = [], []
    x, y = _build(OPS[name], refs, node_refs)
    # Intermediate tensors the VJPs do not read may already be gone; the
    # nodes are all held by the chain from y.
    assert _alive(node_refs) == len(node_refs) >= N_OPS
    refs += node_refs
    grads = []
    if mode == "backward":
        y.sum().backward()
    elif mode == "retain_graph":
        y.sum().backward(retain_graph=True)
    elif mode == "create_graph":
        y.sum().backward(create_graph=True)
        grads.append(x.grad)
    elif mode == "grad":
        grads.extend(autograd.grad(y.sum(), x))
    elif mode == "grad_create_graph":
        grads.extend(autograd.grad(y.sum(), x, create_graph=True))
    if mode != "no_backward":
        assert x.grad is not None or grads
    grad_refs = [weakref.ref(g) for g in grads if g is not None]
    grad_refs += [weakref.ref(g.grad_fn) for g in grads if g is not None and g.grad_fn]
    y = None
    if grads:
        # With create_graph the gradient is a graph over the forward's nodes;
        # it keeps them alive until it is dropped too.
        x.grad = None
        grads = None
    assert _alive(refs) == 0
    assert _alive(grad_refs) == 0
    assert x.is_leaf                  # the leaf itself is untouched
    assert cyclic_garbage() == []     # and nothing was left for the cycle collector


def test_hooks_and_retained_grads_make_no_cycles(no_gc):
    refs = []
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 1)
    z = (y * y).sum()
    z.register_hook(lambda g: g)
    refs += [weakref.ref(y), weakref.ref(y.grad_fn), weakref.ref(z), weakref.ref(z.grad_fn)]
    z.backward()
    y_grad = weakref.ref(y.grad)
    y = z = None
    assert _alive(refs) == 0 and y_grad() is None
    assert cyclic_garbage() == []


def test_graph_freed_after_failed_backward(no_gc):
    refs = []
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    y = x * 3
    y.register_hook(lambda g: 1 / 0)
    z = (y * y).sum()
    refs += [weakref.ref(y), weakref.ref(z), weakref.ref(z.grad_fn)]
    with pytest.raises(ZeroDivisionError) as info:
        z.backward()
    del info                          # a traceback holds frames, which hold locals
    y = z = None
    assert _alive(refs) == 0


@pytest.mark.parametrize("retain_graph", [False, True])
def test_backward_frees_saved_values_unless_retained(retain_graph):
    x = oxmera.tensor(np.ones(4), requires_grad=True)
    h = x * 2.0
    out = oxmera.exp(h)               # exp keeps its output array for the VJP
    loss = (out * h).sum()            # mul keeps both of its inputs
    refs = [weakref.ref(h), weakref.ref(out), weakref.ref(h.detach().numpy()),
            weakref.ref(out.detach().numpy())]
    h = out = None
    assert _alive(refs) == len(refs)  # only the graph holds them now
    loss.backward(retain_graph=retain_graph)
    # The graph itself is still referenced by loss; its saved values are
    # released by a backward without retain_graph.
    assert loss.grad_fn is not None
    assert _alive(refs) == (len(refs) if retain_graph else 0)


def test_cycle_detector_detects_cycles(no_gc):
    # The check the tests above rely on: a hook closing over its own tensor
    # is a cycle (tensor -> meta -> hooks -> closure -> tensor).
    x = oxmera.ones(2, requires_grad=True)
    box = [x]
    x.register_hook(lambda g, box=box: None)
    ref = weakref.ref(x)
    del x, box
    assert ref() is not None
    assert any(isinstance(o, oxmera.Tensor) for o in cyclic_garbage())
    assert ref() is None


def _run(script):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (OXMERA_ROOT, env.get("PYTHONPATH")) if p)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (
        f"subprocess exited with {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\n"
        f"stderr:\n{proc.stderr[-4000:]}")
    return proc.stdout


def test_million_op_chain_backward():
    out = _run("""
        import oxmera
        x = oxmera.tensor([1.0], dtype=oxmera.float64, requires_grad=True)
        y = x
        for _ in range(1_000_000):
            y = y * 1.0000001
        y.backward(oxmera.ones(1, dtype=oxmera.float64))
        print(repr(x.grad.item()))
        del y
        print("done")
    """)
    grad, done = out.split()
    assert done == "done"
    assert float(grad) == pytest.approx(1.0000001 ** 1_000_000, rel=1e-9)


def test_million_op_chain_deleted_without_backward():
    out = _run("""
        import gc, weakref
        import oxmera
        gc.disable()
        x = oxmera.tensor([1.0], dtype=oxmera.float64, requires_grad=True)
        y = x * 1.0000001
        first, first_node = weakref.ref(y), weakref.ref(y.grad_fn)
        for _ in range(1_000_000 - 1):
            y = y * 1.0000001
        last_node = weakref.ref(y.grad_fn)
        del y
        assert first() is None and first_node() is None and last_node() is None
        print("done")
    """)
    assert out.split() == ["done"]
