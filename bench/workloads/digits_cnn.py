"""digits_cnn: one training step of the demo's digits CNN (``oxmera.demo.DigitsNet``).

Batch 128 of (1, 8, 8) float32 images: conv 1->16 3x3 (padding 1), relu,
max-pool 2x2, conv 16->32 3x3 (padding 1), relu, flatten, linear 512->64,
relu, linear 64->10, ``cross_entropy`` on integer labels (mean), backward,
then an Adam step (PyTorch's defaults, lr 1e-3) — what the demo's training
loop does per batch. The images are seeded uniform values, not the digits
themselves: the time does not depend on the values.

The hand-written NumPy version is what a careful person writes: im2col and one
sgemm per convolution with the activations kept channel-first, ``(C, N, H, W)``,
so that every im2col copy and the pooling are plain strided blocks; col2im as
nine strided adds; max-pool by argmax over each window; the seed of the mean
folded into the softmax's gradient; Adam in place on preallocated moments.
The autograd libraries run ``F.conv2d``, ``F.max_pool2d``, ``F.linear`` and
``optim.Adam`` as the demo's layers do. The peers (MyGrad, HIPS autograd,
JAX) have no ``Linear`` layer or optimizer in the package itself: they run
``h @ W.T + b`` and PyTorch's Adam written on their arrays
(``_adam_descent``), with their own conv2d and max-pool
(``workloads.peer_ops``).
"""
import math

import numpy as np

from workloads import Workload, peer_builders, peer_ops, peer_step, require

BATCH, CLASSES, LR = 128, 10, 1e-3
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8
PARAMS = ("conv1_w", "conv1_b", "conv2_w", "conv2_b", "fc1_w", "fc1_b", "fc2_w", "fc2_b")
SHAPES = {"conv1_w": (16, 1, 3, 3), "conv1_b": (16,), "conv2_w": (32, 16, 3, 3),
          "conv2_b": (32,), "fc1_w": (64, 512), "fc1_b": (64,), "fc2_w": (10, 64),
          "fc2_b": (10,)}
FAN_IN = {"conv1": 9, "conv2": 144, "fc1": 512, "fc2": 64}


def make_data():
    rng = np.random.default_rng(0)
    data = {"x": rng.random((BATCH, 1, 8, 8), dtype=np.float32),
            "labels": rng.integers(0, CLASSES, BATCH, dtype=np.int64)}
    for name in PARAMS:
        bound = 1.0 / np.sqrt(FAN_IN[name.split("_")[0]])     # PyTorch's default init
        data[name] = rng.uniform(-bound, bound, SHAPES[name]).astype(np.float32)
    return data


def _im2col(padded, size):
    """(C, N, size+2, size+2) zero-padded -> the (C*9, N*size*size) column matrix."""
    channels, n = padded.shape[:2]
    cols = np.empty((channels, 3, 3, n, size, size), np.float32)
    for i in range(3):
        for j in range(3):
            cols[:, i, j] = padded[:, :, i:i + size, j:j + size]
    return cols.reshape(channels * 9, n * size * size)


def _col2im(grad_cols, channels, n, size):
    """The adjoint of _im2col: the (C, N, size, size) gradient of the unpadded input."""
    grad_cols = grad_cols.reshape(channels, 3, 3, n, size, size)
    padded = np.zeros((channels, n, size + 2, size + 2), np.float32)
    for i in range(3):
        for j in range(3):
            padded[:, :, i:i + size, j:j + size] += grad_cols[:, i, j]
    return padded[:, :, 1:-1, 1:-1]


def build_numpy(data):
    params = {k: data[k].copy() for k in PARAMS}
    moments = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    scratch = {k: np.empty_like(v) for k, v in params.items()}
    step_count = [0]
    x = data["x"].transpose(1, 0, 2, 3)                    # channel-first (1, N, 8, 8)
    labels = data["labels"]
    rows = np.arange(BATCH)
    pad1 = np.zeros((1, BATCH, 10, 10), np.float32)        # the borders stay 0
    pad2 = np.zeros((16, BATCH, 6, 6), np.float32)
    w1, b1, w2, b2 = (params[k] for k in ("conv1_w", "conv1_b", "conv2_w", "conv2_b"))
    fw1, fb1, fw2, fb2 = (params[k] for k in ("fc1_w", "fc1_b", "fc2_w", "fc2_b"))

    def step():
        # forward
        pad1[:, :, 1:-1, 1:-1] = x
        cols1 = _im2col(pad1, 8)                           # (9, N*64)
        a1 = w1.reshape(16, 9) @ cols1                     # (16, N*64)
        a1 += b1[:, None]
        np.maximum(a1, 0, out=a1)                          # relu, in place
        windows = (a1.reshape(16, BATCH, 4, 2, 4, 2).transpose(0, 1, 2, 4, 3, 5)
                   .reshape(16, BATCH, 4, 4, 4))
        arg = windows.argmax(axis=-1)                      # max-pool 2x2
        p1 = np.take_along_axis(windows, arg[..., None], -1)[..., 0]    # (16, N, 4, 4)
        pad2[:, :, 1:-1, 1:-1] = p1
        cols2 = _im2col(pad2, 4)                           # (144, N*16)
        a2 = w2.reshape(32, 144) @ cols2                   # (32, N*16)
        a2 += b2[:, None]
        np.maximum(a2, 0, out=a2)
        flat = a2.reshape(32, BATCH, 16).transpose(1, 0, 2).reshape(BATCH, 512)
        h = flat @ fw1.T
        h += fb1
        np.maximum(h, 0, out=h)
        logits = h @ fw2.T
        logits += fb2
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        se = e.sum(axis=1, keepdims=True)
        loss = (np.log(se[:, 0]) - logits[rows, labels]).mean()
        # backward: softmax - onehot, divided by the batch (the seed of the mean)
        g = e
        g /= se
        g[rows, labels] -= 1.0
        g *= 1.0 / BATCH
        grads = {"fc2_w": g.T @ h, "fc2_b": g.sum(axis=0)}
        gh = g @ fw2
        gh *= h > 0
        grads["fc1_w"] = gh.T @ flat
        grads["fc1_b"] = gh.sum(axis=0)
        ga2 = (gh @ fw1).reshape(BATCH, 32, 16).transpose(1, 0, 2).reshape(32, BATCH * 16)
        ga2 *= a2 > 0
        grads["conv2_w"] = (ga2 @ cols2.T).reshape(w2.shape)
        grads["conv2_b"] = ga2.sum(axis=1)
        gp1 = _col2im(w2.reshape(32, 144).T @ ga2, 16, BATCH, 4)       # (16, N, 4, 4)
        gwin = np.zeros((16, BATCH, 4, 4, 4), np.float32)
        np.put_along_axis(gwin, arg[..., None], gp1[..., None], -1)
        ga1 = (gwin.reshape(16, BATCH, 4, 4, 2, 2).transpose(0, 1, 2, 4, 3, 5)
               .reshape(16, BATCH * 64))
        ga1 *= a1 > 0
        grads["conv1_w"] = (ga1 @ cols1.T).reshape(w1.shape)
        grads["conv1_b"] = ga1.sum(axis=1)
        # Adam (PyTorch's update, in place)
        step_count[0] += 1
        t = step_count[0]
        step_size = LR / (1 - BETA1 ** t)
        root_correction = np.sqrt(1 - BETA2 ** t)
        for name, p in params.items():
            grad, (m, v), tmp = grads[name], moments[name], scratch[name]
            m *= BETA1
            m += (1 - BETA1) * grad
            v *= BETA2
            np.multiply(grad, grad, out=tmp)
            tmp *= 1 - BETA2
            v += tmp
            np.sqrt(v, out=tmp)
            tmp /= root_correction
            tmp += EPS
            np.divide(m, tmp, out=tmp)
            tmp *= step_size
            p -= tmp
        return (loss, *(grads[k] for k in PARAMS))
    return step


def _build_library(lib, data):
    F = lib.nn.functional
    x, labels = lib.tensor(data["x"]), lib.tensor(data["labels"])
    params = {k: lib.tensor(data[k], requires_grad=True) for k in PARAMS}
    optimizer = lib.optim.Adam(list(params.values()), lr=LR)
    p = params

    def step():
        optimizer.zero_grad(set_to_none=True)
        h = F.relu(F.conv2d(x, p["conv1_w"], p["conv1_b"], padding=1))
        h = F.max_pool2d(h, 2)
        h = F.relu(F.conv2d(h, p["conv2_w"], p["conv2_b"], padding=1))
        h = F.relu(F.linear(h.flatten(1), p["fc1_w"], p["fc1_b"]))
        loss = F.cross_entropy(F.linear(h, p["fc2_w"], p["fc2_b"]), labels)
        loss.backward()
        # the returned gradients are copies: the optimizer does not touch them,
        # but the next step's zero_grad drops them
        grads = [p[k].grad for k in PARAMS]
        optimizer.step()
        return (loss, *grads)
    return step


def build_oxmera(data):
    import oxmera
    for name in ("nn.functional.conv2d", "nn.functional.max_pool2d", "nn.functional.linear",
                 "optim.Adam"):
        require(oxmera, name)
    return _build_library(oxmera, data)


def build_torch(data):
    import torch
    return _build_library(torch, data)


def _adam_descent(count):
    """PyTorch's Adam (LR, BETA1, BETA2, EPS) as ``descent(grads) -> amounts`` for ``peer_step``.

    None of the peers ships a one-step optimizer (MyGrad's live in the separate
    MyNN package, HIPS's ``autograd.misc.optimizers.adam`` runs a whole loop,
    JAX's is Optax), so their users write this. The arithmetic is on the
    gradients' own array type (NumPy or JAX) and keeps their dtype: the
    moments start as the scalar 0, the bias corrections are Python floats.

    Parameters
    ----------
    count : int
        How many parameters (gradients per call).
    """
    moments = [(0.0, 0.0)] * count
    calls = 0

    def descent(grads):
        nonlocal calls
        calls += 1
        step_size = LR / (1 - BETA1 ** calls)
        root_correction = math.sqrt(1 - BETA2 ** calls)
        amounts = []
        for index, grad in enumerate(grads):
            m, v = moments[index]
            m = BETA1 * m + (1 - BETA1) * grad
            v = BETA2 * v + (1 - BETA2) * (grad * grad)
            moments[index] = (m, v)
            amounts.append(step_size * m / (v ** 0.5 / root_correction + EPS))
        return amounts
    return descent


def _build_peer(library, data):
    ops = peer_ops(library)
    relu, conv2d = ops.relu, ops.conv2d
    x, labels = ops.constant(data["x"]), ops.constant(data["labels"])

    def loss(conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b):
        h = relu(conv2d(x, conv1_w, 1) + conv1_b[:, None, None])
        h = ops.max_pool2d(h, 2)
        h = relu(conv2d(h, conv2_w, 1) + conv2_b[:, None, None])
        h = relu(h.reshape(BATCH, -1) @ fc1_w.T + fc1_b)
        return ops.cross_entropy(h @ fc2_w.T + fc2_b, labels)
    adam = _adam_descent(len(PARAMS))
    return peer_step(library, loss, [data[k] for k in PARAMS], descent=adam)


WORKLOAD = Workload(
    "digits_cnn", "the demo's digits CNN, batch 128 of 1x8x8, float32: forward, backward, Adam",
    make_data, {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
                **peer_builders(_build_peer)},
    rtol=1e-4, atol=1e-5)
