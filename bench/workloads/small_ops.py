"""small_ops: per-op overhead on 16-element float64 tensors.

``a = x*y + z; b = tanh(a); c = b*b - a; c.sum().backward()`` with x, y, z
requiring grad: six recorded ops, each on arrays so small that the time is
all per-op overhead (dispatch, tensor and node creation, the backward loop).
"""
import numpy as np

from workloads import Workload, peer_builders, peer_numpy, peer_step, require

SIZE = 16


def make_data():
    rng = np.random.default_rng(0)
    return {name: rng.uniform(-1.0, 1.0, SIZE) for name in ("x", "y", "z")}


def build_numpy(data):
    # Out-of-place on purpose: on 16 elements NumPy's in-place/out= path costs
    # more than allocating (measured, NumPy 2.4: ``a += z`` ~0.9 us, ``a + z`` ~0.3 us).
    x, y, z = (data[k].copy() for k in ("x", "y", "z"))
    tanh = np.tanh

    def step():
        a = x * y + z
        b = tanh(a)
        bb = b * b
        loss = (bb - a).sum()
        # Backward. The seed d loss/dc is ones (folded). c = b*b - a gives
        # dc/db = 2b and dc/da = -1 directly; b = tanh(a) gives db/da = 1 - b*b.
        ga = (1.0 - bb) * (b + b) - 1.0
        return loss, ga * y, ga * x, ga
    return step


def build_oxmera(data):
    import oxmera
    tanh = require(oxmera, "tanh")
    x, y, z = (oxmera.tensor(data[k], requires_grad=True) for k in ("x", "y", "z"))

    def step():
        x.grad = y.grad = z.grad = None
        a = x * y + z
        b = tanh(a)
        c = b * b - a
        loss = c.sum()
        loss.backward()
        return loss, x.grad, y.grad, z.grad
    return step


def build_torch(data):
    import torch
    tanh = torch.tanh
    x, y, z = (torch.tensor(data[k], requires_grad=True) for k in ("x", "y", "z"))

    def step():
        x.grad = y.grad = z.grad = None
        a = x * y + z
        b = tanh(a)
        c = b * b - a
        loss = c.sum()
        loss.backward()
        return loss, x.grad, y.grad, z.grad
    return step


def _build_peer(library, data):
    np_ = peer_numpy(library)

    def loss(x, y, z):
        a = x * y + z
        b = np_.tanh(a)
        return np_.sum(b * b - a)
    return peer_step(library, loss, [data[k] for k in ("x", "y", "z")])


WORKLOAD = Workload(
    "small_ops", "16 float64: a=x*y+z; b=tanh(a); c=b*b-a; c.sum().backward()",
    make_data, {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
                **peer_builders(_build_peer)},
    rtol=1e-12, atol=1e-14)
