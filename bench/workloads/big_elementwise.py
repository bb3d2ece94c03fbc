"""big_elementwise: ``(x*w + 1).exp().sum()`` on 4,000,000 float32 ``x, w``.

Memory-bound: per-op overhead is nothing here, what counts is how many
16 MB temporaries each library allocates, writes and reads. Values are
uniform in [-1, 1] so ``exp`` stays well inside float32.
"""
import numpy as np

from workloads import Workload, peer_builders, peer_numpy, peer_step

SIZE = 4_000_000
# The peers' ``+ 1`` as a float32 scalar: MyGrad turns a Python scalar into a
# 0-d int64/float64 array, which NumPy 2 (NEP 50) promotes float32 with, so
# ``x*w + 1`` would be float64 math there. Harmless for autograd and JAX.
ONE = np.float32(1.0)


def make_data():
    rng = np.random.default_rng(0)
    return {k: rng.uniform(-1.0, 1.0, SIZE).astype(np.float32) for k in ("x", "w")}


def build_numpy(data):
    x, w = data["x"].copy(), data["w"].copy()
    exp = np.exp

    def step():
        e = x * w
        e += 1.0
        exp(e, out=e)
        loss = e.sum()
        # backward: the seed of sum is ones (folded); d exp(u)/du = exp(u) = e
        return loss, e * w, e * x
    return step


def build_oxmera(data):
    import oxmera
    x, w = (oxmera.tensor(data[k], requires_grad=True) for k in ("x", "w"))

    def step():
        x.grad = w.grad = None
        loss = (x * w + 1).exp().sum()
        loss.backward()
        return loss, x.grad, w.grad
    return step


def build_torch(data):
    import torch
    x, w = (torch.tensor(data[k], requires_grad=True) for k in ("x", "w"))

    def step():
        x.grad = w.grad = None
        loss = (x * w + 1).exp().sum()
        loss.backward()
        return loss, x.grad, w.grad
    return step


def _build_peer(library, data):
    np_ = peer_numpy(library)

    def loss(x, w):
        return np_.sum(np_.exp(x * w + ONE))
    return peer_step(library, loss, [data["x"], data["w"]])


WORKLOAD = Workload(
    "big_elementwise", "4M float32: (x*w + 1).exp().sum()",
    make_data, {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
                **peer_builders(_build_peer)},
    rtol=1e-4, atol=1e-6)
