"""conv: ``conv2d(x, w, padding=1).sum()``, x (32, 16, 32, 32), w (32, 16, 3, 3), float32.

No bias; both ``x`` and ``w`` require grad. The hand-written NumPy version is
im2col + one sgemm in the forward, two sgemm and col2im (nine strided adds)
in the backward, with the column matrix laid out (C*3*3, N*H*W) so the
copies into it are nine large block copies. Its output is an (N, O, H, W)
view of an (O, N, H, W) array: ``sum`` does not need it contiguous, so no
copy is made. PyTorch's oneDNN kernels are direct convolutions and much
faster than any im2col; there is no target for this workload.

The peers run their own convolution: MyGrad's ``nnet.conv_nd`` (a
``tensordot`` over a sliding-window view), JAX's ``lax.conv_general_dilated``
and HIPS autograd's ``autograd.scipy.signal.convolve`` (an ``einsum`` over a
strided view, not BLAS: by far the slowest, and what its users have).
"""
import numpy as np

from workloads import Workload, peer_builders, peer_ops, peer_step, require

N, C, H, W = 32, 16, 32, 32
OUT, K, PAD = 32, 3, 1


def make_data():
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((N, C, H, W), dtype=np.float32),
            "w": (rng.standard_normal((OUT, C, K, K)) / np.sqrt(C * K * K)).astype(np.float32)}


def build_numpy(data):
    x, w = data["x"].copy(), data["w"].copy()
    padded = np.zeros((N, C, H + 2 * PAD, W + 2 * PAD), np.float32)  # border stays 0
    inner = (slice(None), slice(None), slice(PAD, PAD + H), slice(PAD, PAD + W))
    w_mat = w.reshape(OUT, C * K * K)
    empty, zeros, ones = np.empty, np.zeros, np.ones

    def step():
        # forward: im2col, then one matrix product
        padded[inner] = x
        cols = empty((C, K, K, N, H, W), np.float32)
        for i in range(K):
            for j in range(K):
                cols[:, i, j] = padded[:, :, i:i + H, j:j + W].transpose(1, 0, 2, 3)
        cols = cols.reshape(C * K * K, N * H * W)
        out = w_mat @ cols                                  # (OUT, N*H*W)
        loss = out.reshape(OUT, N, H, W).transpose(1, 0, 2, 3).sum()
        # backward: the seed of sum, then the two products and col2im
        grad_out = ones(out.shape, np.float32)
        grad_w = (grad_out @ cols.T).reshape(w.shape)
        grad_cols = (w_mat.T @ grad_out).reshape(C, K, K, N, H, W)
        grad_padded = zeros(padded.shape, np.float32)
        for i in range(K):
            for j in range(K):
                grad_padded[:, :, i:i + H, j:j + W] += grad_cols[:, i, j].transpose(1, 0, 2, 3)
        return loss, grad_padded[inner], grad_w
    return step


def build_oxmera(data):
    import oxmera
    conv2d = require(oxmera, "nn.functional.conv2d")
    x, w = (oxmera.tensor(data[k], requires_grad=True) for k in ("x", "w"))

    def step():
        x.grad = w.grad = None
        loss = conv2d(x, w, padding=PAD).sum()
        loss.backward()
        return loss, x.grad, w.grad
    return step


def build_torch(data):
    import torch
    conv2d = torch.nn.functional.conv2d
    x, w = (torch.tensor(data[k], requires_grad=True) for k in ("x", "w"))

    def step():
        x.grad = w.grad = None
        loss = conv2d(x, w, padding=PAD).sum()
        loss.backward()
        return loss, x.grad, w.grad
    return step


def _build_peer(library, data):
    ops = peer_ops(library)

    def loss(x, w):
        return ops.np.sum(ops.conv2d(x, w, PAD))
    return peer_step(library, loss, [data["x"], data["w"]])


WORKLOAD = Workload(
    "conv", "x (32,16,32,32), 32 3x3 filters, padding 1, float32: conv2d(x, w).sum()",
    make_data, {"numpy": build_numpy, "oxmera": build_oxmera, "torch": build_torch,
                **peer_builders(_build_peer)},
    rtol=1e-4, atol=1e-5)
