"""No lock is held while code of the user's can run: a backward run from inside one completes.

The commit of ``.grad`` at the end of a backward used to hold a global,
non-reentrant lock while it dropped tensors, so a ``__del__`` or a weakref
callback that ran a backward there hung the thread forever. Each case runs
in a subprocess with a timeout, so a hang is a failed test, not a hung suite.
"""
import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import gc, sys, weakref, threading
import numpy as np
import oxmera
from oxmera._core import autograd as core

z = oxmera.tensor([3.0], dtype=oxmera.float64, requires_grad=True)
runs = []

def inner_backward():
    # what a finalizer might do: a whole backward of its own
    with oxmera.enable_grad():
        (z * 2).sum().backward()
    runs.append(1)

def check(expected_runs, x, expected_x_grad):
    assert len(runs) == expected_runs, runs
    assert z.grad is not None and z.grad.item() == 2.0 * expected_runs, z.grad
    np.testing.assert_array_equal(x.grad.detach().numpy(), expected_x_grad)
    print("ok")
"""


def _run(body):
    code = PRELUDE + textwrap.dedent(body)
    try:
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("the backward run from inside another one hung")
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), (
        f"exit {result.returncode}\n{result.stdout}\n{result.stderr}")


def test_a_finalizer_of_a_handed_over_gradient_runs_a_backward():
    _run("""
    class Finalized(oxmera.Tensor):
        def __del__(self):
            inner_backward()

    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    x.register_hook(lambda g: Finalized(g.numpy()))   # the commit drops this one
    (x * 3).sum().backward()
    gc.collect()
    check(1, x, [3.0, 3.0])
    """)


def test_a_weakref_callback_on_a_gradient_runs_a_backward():
    # The trigger: a hook that keeps a weakref with a callback.
    _run("""
    refs = []
    def hook(g):
        refs.append(weakref.ref(g, lambda ref: inner_backward()))
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    y = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    x.register_hook(hook)
    (x * y).sum().backward()
    gc.collect()
    check(1, x, [1.0, 2.0])
    """)


def test_a_hook_runs_a_backward():
    _run("""
    def hook(g):
        inner_backward()
        return g * 2
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    x.register_hook(hook)
    (x * 3).sum().backward()
    check(1, x, [6.0, 6.0])
    """)


def test_a_replaced_grad_runs_a_backward_as_it_goes():
    # create_graph accumulates out of place: the old .grad is dropped by the commit.
    _run("""
    class Finalized(oxmera.Tensor):
        def __del__(self):
            inner_backward()

    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    x.grad = Finalized(np.array([10.0, 10.0]))
    (x * x).sum().backward(create_graph=True)
    gc.collect()
    check(1, x, [12.0, 14.0])
    x.grad = None                 # (the create_graph gradient refers back to x)
    """)


def test_a_grad_of_a_subclass_runs_no_code_of_its_type_during_accumulation():
    _run("""
    calls = []
    class Watched(oxmera.Tensor):
        def __array__(self, *a, **k):
            calls.append("__array__")
            return super().__array__(*a, **k)
        def __array_ufunc__(self, *a, **k):
            calls.append("__array_ufunc__")
            return NotImplemented
        def __add__(self, other):
            calls.append("__add__")
            return NotImplemented
        def __iadd__(self, other):
            calls.append("__iadd__")
            return NotImplemented

    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    x.grad = Watched(np.array([10.0, 10.0]))
    (x * 3).sum().backward()
    assert calls == [], calls
    np.testing.assert_array_equal(x.grad.numpy(), [13.0, 13.0])
    print("ok")
    """)


def test_a_finalizer_the_collector_runs_under_the_lock_defers_its_commit():
    # Collections at every allocation: some run while the commit holds its
    # lock (the out-of-place add into a read-only .grad allocates there), and
    # the backward of a finalizer run then leaves its gradients to the commit
    # under way instead of waiting on its own thread.
    _run("""
    left = [40]
    class Cycle:
        def __init__(self):
            self.me = self
        def __del__(self):
            if left[0] > 0:
                left[0] -= 1
                inner_backward()
                Cycle()                      # more garbage for the next collection

    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    for step in range(20):
        frozen = np.full(2, 1.0)
        frozen.flags.writeable = False       # in-place accumulation impossible: out of place
        x.grad = oxmera.from_numpy(frozen)
        Cycle()
        gc.set_threshold(1, 1, 1)
        try:
            (x * 3).sum().backward()
        finally:
            gc.set_threshold(700, 10, 10)
        np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0])
    gc.collect()
    assert z.grad.item() == 2.0 * len(runs), (z.grad, len(runs))
    assert len(runs) == 40 - left[0]
    print("deferred", core._deferred_commits(), file=sys.stderr)
    print("ok")
    """)


def test_backward_in_threads_while_finalizers_run_backwards():
    # The lock is still a lock: threads sharing leaves add every contribution.
    _run("""
    class Finalized(oxmera.Tensor):
        def __del__(self):
            inner_backward()

    w = oxmera.tensor(np.zeros(1000), dtype=oxmera.float64, requires_grad=True)
    w.register_hook(lambda g: Finalized(g.numpy()))
    def work():
        for _ in range(50):
            (w * 1.0).sum().backward()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    gc.collect()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(1000, 200.0))
    assert len(runs) == 200 and z.grad.item() == 400.0
    print("ok")
    """)
