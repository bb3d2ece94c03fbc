"""softmax_rows: ``log_softmax(X, dim=-1).mean()`` for a (256, 1000) float32 ``X``.

A row-wise reduction op with a fused forward and VJP in every library;
PyTorch's compiled kernel beats plain NumPy here.
"""
import numpy as np

from workloads import Workload, peer_builders, peer_ops, peer_step, require

SHAPE = (256, 1000)


def make_data():
    rng = np.random.default_rng(0)
    return {"X": (3.0 * rng.standard_normal(SHAPE)).astype(np.float32)}


def build_numpy(data):
    X = data["X"].copy()
    exp, log = np.exp, np.log
    count = X.size
    columns = X.shape[-1]

    def step():
        z = X - X.max(axis=1, keepdims=True)
        e = exp(z)
        se = e.sum(axis=1, keepdims=True)
        z -= log(se)                    # z is now log_softmax(X)
        loss = z.mean()
        # backward: the seed of mean is 1/count everywhere (folded), so the
        # log_softmax VJP g - softmax * g.sum(-1) is 1/count - softmax * columns/count.
        e *= (-columns / count) / se    # softmax = e / se, scaled in one pass
        e += 1.0 / count
        return loss, e
    return step


def build_oxmera(data):
    import oxmera
    log_softmax = require(oxmera, "nn.functional.log_softmax")
    X = oxmera.tensor(data["X"], requires_grad=True)

    def step():
        X.grad = None
        loss = log_softmax(X, dim=-1).mean()
        loss.backward()
        return loss, X.grad
    return step


def build_torch(data):
    import torch
    log_softmax = torch.nn.functional.log_softmax
    X = torch.tensor(data["X"], requires_grad=True)

    def step():
        X.grad = None
        loss = log_softmax(X, dim=-1).mean()
        loss.backward()
        return loss, X.grad
    return step


def _build_peer(library, data):
    ops = peer_ops(library)

    def loss(X):
        return ops.np.mean(ops.log_softmax(X))
    return peer_step(library, loss, [data["X"]])


WORKLOAD = Workload(
    "softmax_rows", "(256, 1000) float32: log_softmax(X, dim=-1).mean()",
    make_data, {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
                **peer_builders(_build_peer)},
    rtol=1e-4, atol=1e-5)
