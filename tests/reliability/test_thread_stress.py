"""Thread stress: several threads training at once, checked against a sequential run.

Each of the threads loops until a deadline (a few seconds in CI, 30 s with
``--runslow``), alternating two kinds of work:

- training its own small MLP (float64) with SGD: forward, backward, the
  update under ``no_grad``, a clipping hook on a weight, every third step a
  ``retain_graph`` backward run twice, every fifth step the gradients
  taken with ``autograd.grad`` instead;
- sending gradients into one model shared by every thread, whose weights
  hold small integers (so every sum is exact, in any order): a plain
  backward, a ``retain_graph`` backward run twice, an ``autograd.grad``
  call (which must not touch ``.grad``), a forward under ``no_grad`` (which
  must not record) followed by a backward to the bias only, with a hook on
  an intermediate that doubles its gradient, a permanent counting hook on
  the shared weight, and a no-op hook each thread adds and removes around
  its own backward.

Afterwards the same work (each thread's number of iterations, in thread
order) is replayed in the main thread, and everything must match exactly:
every private model's weights bit for bit, the shared model's ``.grad`` and
the hook's call count. A lost or doubled gradient, a grad mode leaking from
one thread into another or a crash fails the test.
"""
import sys
import threading
import time

import numpy as np
import pytest

import oxmera
from oxmera import autograd
from oxmera.nn import functional as F

N_THREADS = 6
SECONDS = (3.0, 30.0)          # (CI, --runslow)
LR = 0.05


# -- a private model per thread ----------------------------------------------------------

class Private:
    """A thread's own MLP 5 -> 8 -> 3, its data, and its training step."""

    def __init__(self, k):
        rng = np.random.default_rng(100 + k)
        self.params = [oxmera.tensor(rng.standard_normal(shape) * 0.5, dtype=oxmera.float64,
                                     requires_grad=True)
                       for shape in ((5, 8), (8,), (8, 3), (3,))]
        self.x = oxmera.tensor(rng.standard_normal((6, 5)), dtype=oxmera.float64)
        self.y = oxmera.tensor(rng.standard_normal((6, 3)), dtype=oxmera.float64)
        self.clip = self.params[2].register_hook(lambda g: g.clamp(-0.5, 0.5))
        self.steps = 0

    def loss(self):
        w1, b1, w2, b2 = self.params
        return F.mse_loss(F.relu(self.x @ w1 + b1) @ w2 + b2, self.y)

    def step(self):
        i = self.steps
        loss = self.loss()
        assert loss.requires_grad, "grad mode leaked in from another thread"
        if i % 5 == 4:
            grads = autograd.grad(loss, self.params)
        else:
            loss.backward(retain_graph=i % 3 == 0)
            if i % 3 == 0:
                loss.backward()               # through the retained graph: grads double
            grads = [p.grad * (0.5 if i % 3 == 0 else 1.0) for p in self.params]
        with oxmera.no_grad():
            for p, g in zip(self.params, grads):
                p.sub_(g, alpha=LR)
                p.grad = None
            assert not (self.params[0] * 2).requires_grad
        self.steps += 1


# -- one model shared by every thread ------------------------------------------------------

class Shared:
    """Integer-valued weights; thread ``k`` sends exact integer gradients into them."""

    def __init__(self):
        rng = np.random.default_rng(7)
        self.w = oxmera.tensor(rng.integers(-3, 4, (3, 2)).astype(np.float64), requires_grad=True)
        self.b = oxmera.tensor(rng.integers(-3, 4, 2).astype(np.float64), requires_grad=True)
        self.hook_calls = 0
        self.lock = threading.Lock()
        self.w.register_hook(self._count)

    def _count(self, grad):
        with self.lock:
            self.hook_calls += 1

    @staticmethod
    def data(k):
        rng = np.random.default_rng(200 + k)
        x = oxmera.tensor(rng.integers(-2, 3, (4, 3)).astype(np.float64))
        m = oxmera.tensor(rng.integers(-2, 3, (4, 2)).astype(np.float64))
        return x, m

    def loss(self, x, m):
        h = x @ self.w + self.b
        if h.requires_grad:                   # not under no_grad
            h.register_hook(lambda g: g * 2.0)
        return (h * m).sum() + (self.w * self.w).sum()

    def iteration(self, k, i, data):
        x, m = data
        kind = i % 4
        if kind == 0:
            self.loss(x, m).backward()
        elif kind == 1:
            loss = self.loss(x, m)
            loss.backward(retain_graph=True)
            loss.backward()
        elif kind == 2:
            gw, gb = autograd.grad(self.loss(x, m), [self.w, self.b])
            # d/dw: 2 x^T m + 2 w; d/db: 2 * column sums of m (all exact integers).
            want_w = 2 * x.numpy().T @ m.numpy() + 2 * self.w.detach().numpy()
            np.testing.assert_array_equal(gw.numpy(), want_w)
            np.testing.assert_array_equal(gb.numpy(), 2 * m.numpy().sum(axis=0))
        else:
            with oxmera.no_grad():
                assert not self.loss(x, m).requires_grad
            noop = self.w.register_hook(lambda g: None)
            self.loss(x, m).backward(inputs=[self.b])
            noop.remove()


def _run_threaded(seconds):
    shared = Shared()
    privates = [Private(k) for k in range(N_THREADS)]
    counts = [0] * N_THREADS
    errors = []
    barrier = threading.Barrier(N_THREADS)
    deadline = [None]

    def work(k):
        try:
            data = Shared.data(k)
            barrier.wait()
            i = 0
            while time.monotonic() < deadline[0]:
                privates[k].step()
                shared.iteration(k, i, data)
                i += 1
            counts[k] = i
        except BaseException as err:          # reported by the main thread
            errors.append((k, err))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)               # switch often: interleave the engines
    try:
        deadline[0] = time.monotonic() + seconds
        threads = [threading.Thread(target=work, args=(k,)) for k in range(N_THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(seconds + 120)
    finally:
        sys.setswitchinterval(old)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0][1]
    return shared, privates, counts


def _run_sequential(counts):
    shared = Shared()
    privates = [Private(k) for k in range(N_THREADS)]
    for k, n in enumerate(counts):
        data = Shared.data(k)
        for i in range(n):
            privates[k].step()
            shared.iteration(k, i, data)
    return shared, privates


def test_threads_train_private_and_shared_models(runslow):
    seconds = SECONDS[runslow]
    threaded, threaded_privates, counts = _run_threaded(seconds)
    assert min(counts) > 0, counts
    print(f"\nthread stress: {N_THREADS} threads, {seconds:.0f} s, iterations per thread "
          f"{counts} (total {sum(counts)})")
    sequential, sequential_privates = _run_sequential(counts)
    for k, (a, b) in enumerate(zip(threaded_privates, sequential_privates)):
        assert a.steps == b.steps == counts[k]
        for p, q in zip(a.params, b.params):
            np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(),
                                          err_msg=f"thread {k}'s model")
    np.testing.assert_array_equal(threaded.w.grad.numpy(), sequential.w.grad.numpy())
    np.testing.assert_array_equal(threaded.b.grad.numpy(), sequential.b.grad.numpy())
    assert threaded.hook_calls == sequential.hook_calls
    # The weights never changed, so the totals have a closed form too.
    w = threaded.w.detach().numpy()
    want_w = np.zeros_like(w)
    want_b = np.zeros(2)
    for k, n in enumerate(counts):
        x, m = (t.numpy() for t in Shared.data(k))
        per_w, per_b = 2 * x.T @ m + 2 * w, 2 * m.sum(axis=0)
        plain, twice, bias_only = (len(range(kind, n, 4)) for kind in (0, 1, 3))
        want_w += (plain + 2 * twice) * per_w
        want_b += (plain + 2 * twice + bias_only) * per_b
    np.testing.assert_array_equal(threaded.w.grad.numpy(), want_w)
    np.testing.assert_array_equal(threaded.b.grad.numpy(), want_b)


@pytest.mark.parametrize("n_threads", [2, 8])
def test_concurrent_first_use(n_threads):
    """Many threads making their first oxmera calls at once (lazy set-up paths)."""
    errors = []
    barrier = threading.Barrier(n_threads)
    results = [None] * n_threads

    def work(k):
        try:
            barrier.wait()
            x = oxmera.tensor([float(k), 1.0], dtype=oxmera.float64, requires_grad=True)
            y = (x.exp() * x).sum() + oxmera.stack([x, x]).logsumexp(0).sum()
            (g,) = autograd.grad(y, x, create_graph=True)
            (h,) = autograd.grad(g.sum(), x)
            results[k] = h.numpy()
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    for k in range(n_threads):
        x = oxmera.tensor([float(k), 1.0], dtype=oxmera.float64, requires_grad=True)
        y = (x.exp() * x).sum() + oxmera.stack([x, x]).logsumexp(0).sum()
        (g,) = autograd.grad(y, x, create_graph=True)
        (h,) = autograd.grad(g.sum(), x)
        np.testing.assert_array_equal(results[k], h.numpy())
