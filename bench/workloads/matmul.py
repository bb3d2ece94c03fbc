"""matmul: ``(A @ B).sum()`` with 512x512 float32 ``A, B``.

Three BLAS sgemm calls (one forward, two in backward) dominate; this checks
that nothing around them (copies of transposes, the seed gradient) costs.
The hand-written backward multiplies the ones seed like the engines do,
rather than replacing ``ones @ B.T`` by row sums, which would be other math.
"""
import numpy as np

from workloads import Workload, peer_builders, peer_numpy, peer_step

SIZE = 512


def make_data():
    rng = np.random.default_rng(0)
    return {k: rng.standard_normal((SIZE, SIZE), dtype=np.float32) for k in ("A", "B")}


def build_numpy(data):
    A, B = data["A"].copy(), data["B"].copy()
    ones = np.ones

    def step():
        C = A @ B
        loss = C.sum()
        G = ones(C.shape, C.dtype)      # seed of sum
        return loss, G @ B.T, A.T @ G   # transposes are views: BLAS reads them as given
    return step


def build_oxmera(data):
    import oxmera
    A, B = (oxmera.tensor(data[k], requires_grad=True) for k in ("A", "B"))

    def step():
        A.grad = B.grad = None
        loss = (A @ B).sum()
        loss.backward()
        return loss, A.grad, B.grad
    return step


def build_torch(data):
    import torch
    A, B = (torch.tensor(data[k], requires_grad=True) for k in ("A", "B"))

    def step():
        A.grad = B.grad = None
        loss = (A @ B).sum()
        loss.backward()
        return loss, A.grad, B.grad
    return step


def _build_peer(library, data):
    sum_ = peer_numpy(library).sum

    def loss(A, B):
        return sum_(A @ B)
    return peer_step(library, loss, [data["A"], data["B"]])


WORKLOAD = Workload(
    "matmul", "512x512 float32: (A @ B).sum()",
    make_data, {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
                **peer_builders(_build_peer)},
    rtol=1e-4, atol=1e-5)
