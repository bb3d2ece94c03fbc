"""Backward from several threads at once (SPEC §3, §4).

Each thread builds and differentiates its own graph; the graphs share leaf
parameters, whose ``.grad`` must receive every contribution exactly once.
Contributions are small integers in float64, so the expected sums are exact.
"""
import sys
import threading

import numpy as np
import pytest

import oxmera
from oxmera import autograd

N_THREADS = 8
N_ITERATIONS = 200


@pytest.fixture
def fast_switching():
    # Switch threads as often as possible, to interleave the engines.
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def _run_threads(target):
    errors = []
    barrier = threading.Barrier(N_THREADS)

    def run(k):
        try:
            barrier.wait()
            target(k)
        except BaseException as e:          # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []


@pytest.mark.parametrize("create_graph", [False, True], ids=["plain", "create_graph"])
def test_concurrent_backward_into_a_shared_leaf(fast_switching, create_graph):
    # With create_graph the accumulation into .grad runs Python code (the add
    # op), so threads really do switch in the middle of it.
    w = oxmera.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    b = oxmera.tensor(np.zeros(3), requires_grad=True)

    def work(k):
        for i in range(N_ITERATIONS):
            # inp requires grad so that, with create_graph, w's gradient
            # (inp^T @ ones) is itself recorded.
            inp = oxmera.tensor(np.full((4, 2), float(k + 1)), requires_grad=create_graph)
            out = inp @ w + b                      # (4, 3); broadcasting into b
            (out * 1.0).sum().backward(create_graph=create_graph, inputs=[w, b])

    _run_threads(work)
    if create_graph:
        assert w.grad.requires_grad
    # d/dw sum(inp @ w) = inp^T @ ones: each entry 4 * (k + 1) per iteration.
    per_thread = N_ITERATIONS * 4 * np.arange(1, N_THREADS + 1)
    np.testing.assert_array_equal(w.grad.detach().numpy(), np.full((2, 3), per_thread.sum()))
    np.testing.assert_array_equal(b.grad.detach().numpy(),
                                  np.full(3, N_THREADS * N_ITERATIONS * 4.0))


def test_concurrent_backward_with_hooks_retain_grad_and_grad(fast_switching):
    w = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    calls = []
    lock = threading.Lock()

    def count(g):
        with lock:
            calls.append(1)

    w.register_hook(count)
    results = [None] * N_THREADS

    def work(k):
        total = 0.0
        for i in range(N_ITERATIONS):
            h = w * float(k + 1)
            h.retain_grad()
            (h * h).sum().backward()
            assert h.grad.tolist() == [2.0 * (k + 1), 4.0 * (k + 1)]
            (g,) = autograd.grad((w * w).sum(), w)      # touches no .grad
            total += g.sum().item()
        results[k] = total

    _run_threads(work)
    # The hook runs for the backward and for grad() (as in PyTorch), once each.
    assert len(calls) == 2 * N_THREADS * N_ITERATIONS
    assert results == [N_ITERATIONS * 6.0] * N_THREADS
    # d/dw sum((c w)^2) = 2 c^2 w
    c2 = sum((k + 1) ** 2 for k in range(N_THREADS))
    assert w.grad.tolist() == [N_ITERATIONS * 2 * c2 * 1.0, N_ITERATIONS * 2 * c2 * 2.0]


def test_thread_started_inside_no_grad_records():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def work():
        y = (x * 3).sum()
        seen.append((oxmera.is_grad_enabled(), y.requires_grad))
        y.backward()

    with oxmera.no_grad():
        t = threading.Thread(target=work)
        t.start()
        t.join(10)
        assert not (x * 3).requires_grad
    assert seen == [(True, True)]
    assert x.grad.tolist() == [3.0, 3.0]


def test_no_grad_in_one_thread_does_not_affect_others(fast_switching):
    x = oxmera.tensor([1.0], requires_grad=True)
    recorded = [[] for _ in range(N_THREADS)]

    def work(k):
        for i in range(50):
            if k % 2:
                with oxmera.no_grad():
                    recorded[k].append((x * 2).requires_grad)
            else:
                recorded[k].append((x * 2).requires_grad)

    _run_threads(work)
    for k in range(N_THREADS):
        assert recorded[k] == [not k % 2] * 50


def test_threads_differentiating_one_shared_graph_at_once():
    # Nodes hold their task during a backward; a node another thread's
    # backward holds at the moment must still be found (the fallback dict).
    import threading as _threading

    import numpy as _np

    import oxmera as _ox
    x = _ox.tensor(_np.linspace(0.1, 1.0, 8), requires_grad=True)
    h = x
    for _ in range(200):
        h = (h * 1.001).sin() + 0.01
    out = h.sum()
    (expected,) = _ox.autograd.grad(out, x, retain_graph=True)
    errors = []

    def work():
        try:
            for _ in range(20):
                (g,) = _ox.autograd.grad(out, x, retain_graph=True)
                _np.testing.assert_allclose(g.numpy(), expected.numpy(), rtol=0, atol=0)
        except Exception as err:   # noqa: BLE001 - reported below
            errors.append(err)
    threads = [_threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
