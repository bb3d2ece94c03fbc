"""deep_chain: a 1-element tensor through N steps of ``x = sin(x) * 0.999 + 0.001``.

Three recorded ops per step, so 20,000 steps make a 60,000-node graph: this
measures the per-node cost of recording and of the backward loop, and (with
200,000 steps, run by the runner in a child process) the memory a long graph
holds. The tensor is float64, shape (1,); backward starts from ``x.sum()``
(one more op) so no library needs an explicit gradient argument.
"""
import numpy as np

from workloads import Workload, peer_builders, peer_numpy, peer_step, require

STEPS = 20_000
STEPS_LONG = 200_000


def make_data(steps=STEPS):
    return {"x0": np.array([1.0]), "steps": steps}


def build_numpy(data):
    # The same expression as the autograd versions, out of place: on one
    # element NumPy's in-place ``x *= 0.999`` costs twice ``x * 0.999``.
    x0, steps = data["x0"].copy(), data["steps"]
    sin, cos = np.sin, np.cos

    def step():
        saved = []                  # the input of each sin, as an autograd tape keeps it
        save = saved.append
        x = x0
        for _ in range(steps):
            save(x)
            x = sin(x) * 0.999 + 0.001
        loss = x.sum()
        grad = np.ones_like(x)      # seed of sum
        for xi in reversed(saved):  # d/dx (sin(x)*0.999 + 0.001) = cos(x)*0.999
            grad = grad * (cos(xi) * 0.999)
        return loss, grad
    return step


def build_oxmera(data):
    import oxmera
    sin = require(oxmera, "sin")
    x0 = oxmera.tensor(data["x0"], requires_grad=True)
    steps = data["steps"]

    def step():
        x0.grad = None
        x = x0
        for _ in range(steps):
            x = sin(x) * 0.999 + 0.001
        loss = x.sum()
        loss.backward()
        return loss, x0.grad
    return step


def build_torch(data):
    import torch
    sin = torch.sin
    x0 = torch.tensor(data["x0"], requires_grad=True)
    steps = data["steps"]

    def step():
        x0.grad = None
        x = x0
        for _ in range(steps):
            x = sin(x) * 0.999 + 0.001
        loss = x.sum()
        loss.backward()
        return loss, x0.grad
    return step


def _build_peer(library, data):
    np_ = peer_numpy(library)
    sin, sum_ = np_.sin, np_.sum
    steps = data["steps"]

    def loss(x):
        for _ in range(steps):
            x = sin(x) * 0.999 + 0.001
        return sum_(x)
    return peer_step(library, loss, [data["x0"]])


BUILDERS = {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
            **peer_builders(_build_peer)}


def make_workload(steps):
    """The deep_chain workload with ``steps`` steps (the child process uses 200,000)."""
    name = "deep_chain" if steps == STEPS else f"deep_chain_{steps // 1000}k"
    return Workload(name, f"(1,) float64: {steps:,} x = sin(x)*0.999 + 0.001, backward",
                    lambda: make_data(steps), BUILDERS, rtol=1e-9, atol=0.0)


WORKLOAD = make_workload(STEPS)
