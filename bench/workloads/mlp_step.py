"""mlp_step: one SGD training step of a float32 MLP, 784 -> 256 -> 128 -> 10.

Batch 64, ``relu`` between layers, ``cross_entropy`` on integer labels (mean
reduction), backward, then ``p -= lr * p.grad`` for every parameter under
``no_grad``. Layers are ``h @ W + b`` with ``W`` of shape (in, out) in every
library, so no library pays for a transpose the others do not. Each timed
step starts by dropping the previous gradients (``p.grad = None``), as
``zero_grad(set_to_none=True)`` does.
"""
import numpy as np

from workloads import Workload, peer_builders, peer_ops, peer_step, require

BATCH = 64
SIZES = (784, 256, 128, 10)
LR = 0.01


def make_data():
    rng = np.random.default_rng(0)
    data = {"x": rng.standard_normal((BATCH, SIZES[0]), dtype=np.float32),
            "labels": rng.integers(0, SIZES[-1], BATCH, dtype=np.int64)}
    for i, (fan_in, fan_out) in enumerate(zip(SIZES[:-1], SIZES[1:]), start=1):
        bound = 1.0 / np.sqrt(fan_in)        # PyTorch's nn.Linear initialization
        data[f"W{i}"] = rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32)
        data[f"b{i}"] = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    return data


PARAMS = ("W1", "b1", "W2", "b2", "W3", "b3")


def build_numpy(data):
    x, labels = data["x"], data["labels"]
    W1, b1, W2, b2, W3, b3 = params = [data[k].copy() for k in PARAMS]
    scratch = [np.empty_like(p) for p in params]     # for lr * grad, reused every step
    rows = np.arange(BATCH)
    maximum, multiply, exp, log = np.maximum, np.multiply, np.exp, np.log

    def step():
        # forward
        h1 = x @ W1
        h1 += b1
        r1 = maximum(h1, 0.0, out=h1)
        h2 = r1 @ W2
        h2 += b2
        r2 = maximum(h2, 0.0, out=h2)
        logits = r2 @ W3
        logits += b3
        logits -= logits.max(axis=1, keepdims=True)  # shifted logits, for a stable exp
        e = exp(logits)
        se = e.sum(axis=1, keepdims=True)
        loss = (log(se[:, 0]) - logits[rows, labels]).mean()
        # backward: d loss / d logits = (softmax - onehot) / batch
        g = e
        g /= se
        g[rows, labels] -= 1.0
        g *= 1.0 / BATCH
        gW3 = r2.T @ g
        gb3 = g.sum(axis=0)
        g2 = g @ W3.T
        g2 *= r2 > 0                                 # relu VJP
        gW2 = r1.T @ g2
        gb2 = g2.sum(axis=0)
        g1 = g2 @ W2.T
        g1 *= r1 > 0
        gW1 = x.T @ g1
        gb1 = g1.sum(axis=0)
        grads = (gW1, gb1, gW2, gb2, gW3, gb3)
        # SGD update
        for p, grad, tmp in zip(params, grads, scratch):
            multiply(grad, LR, out=tmp)
            p -= tmp
        return (loss, *grads)
    return step


def build_oxmera(data):
    import oxmera
    relu = require(oxmera, "nn.functional.relu")
    cross_entropy = require(oxmera, "nn.functional.cross_entropy")
    require(oxmera, "Tensor.sub_")
    no_grad = oxmera.no_grad
    x = oxmera.tensor(data["x"])
    labels = oxmera.tensor(data["labels"])
    W1, b1, W2, b2, W3, b3 = params = [oxmera.tensor(data[k], requires_grad=True)
                                       for k in PARAMS]

    def step():
        for p in params:
            p.grad = None
        h = relu(x @ W1 + b1)
        h = relu(h @ W2 + b2)
        loss = cross_entropy(h @ W3 + b3, labels)
        loss.backward()
        with no_grad():
            for p in params:
                p.sub_(p.grad, alpha=LR)
        return (loss, *[p.grad for p in params])
    return step


def build_torch(data):
    import torch
    relu = torch.nn.functional.relu
    cross_entropy = torch.nn.functional.cross_entropy
    no_grad = torch.no_grad
    x = torch.from_numpy(data["x"].copy())
    labels = torch.from_numpy(data["labels"].copy())
    W1, b1, W2, b2, W3, b3 = params = [torch.tensor(data[k], requires_grad=True)
                                       for k in PARAMS]

    def step():
        for p in params:
            p.grad = None
        h = relu(x @ W1 + b1)
        h = relu(h @ W2 + b2)
        loss = cross_entropy(h @ W3 + b3, labels)
        loss.backward()
        with no_grad():
            for p in params:
                p.sub_(p.grad, alpha=LR)
        return (loss, *[p.grad for p in params])
    return step


def _build_peer(library, data):
    ops = peer_ops(library)
    relu, cross_entropy = ops.relu, ops.cross_entropy
    x, labels = ops.constant(data["x"]), ops.constant(data["labels"])

    def loss(W1, b1, W2, b2, W3, b3):
        h = relu(x @ W1 + b1)
        h = relu(h @ W2 + b2)
        return cross_entropy(h @ W3 + b3, labels)

    def sgd(grads):
        return [LR * g for g in grads]
    return peer_step(library, loss, [data[k] for k in PARAMS], descent=sgd)


WORKLOAD = Workload(
    "mlp_step", "float32 MLP 784-256-128-10, batch 64, relu, cross_entropy, backward, SGD",
    make_data, {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
                **peer_builders(_build_peer)},
    rtol=1e-4, atol=1e-5)
