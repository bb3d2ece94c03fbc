#!/usr/bin/env python
"""LSTM forward+backward in oxmera against PyTorch and plain NumPy in the same run.

Usage::

    python bench/lstm.py [--repeats 11] [--warmup 2]

The workload (issue 15): ``nn.LSTM(256, 256, num_layers=2)`` on a float32
input of 64 steps and batch 32, ``output.sum() + h_n.sum() + c_n.sum()``
backward to the input and every parameter. Every variant gets the same
weights and input (checked to give the same output and input gradient
first):

- ``oxmera``: ``nn.LSTM`` with autograd;
- ``torch``: ``torch.nn.LSTM`` (when torch is installed);
- ``numpy``: the same computation written by hand in NumPy, no autograd
  (the projection of all steps at once, per step one product and the gates,
  backpropagation through time with the same products): what oxmera's
  design costs without any op bookkeeping, on the same BLAS.

Every library is pinned to one BLAS thread (the environment variables are
set before NumPy and torch are imported; threadpoolctl limits the pools too
when it is importable, and torch.set_num_threads(1)). After a warm-up, each
round times each library once, in alternating order, so machine drift (the
machine is shared) hits both alike; the report is the median over rounds,
and the ratios are medians over rounds of oxmera / torch and oxmera / numpy.
The issue's aim: at or below torch's time.
Not run by the test suite.
"""
import os
import sys

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import oxmera  # noqa: E402
from oxmera import nn  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

STEPS, BATCH, INPUT, HIDDEN, LAYERS = 64, 32, 256, 256, 2


def thread_limit():
    try:
        import threadpoolctl
    except ImportError:
        return contextlib.nullcontext()
    return threadpoolctl.threadpool_limits(1)


def make_oxmera(x_array):
    oxmera.manual_seed(0)
    lstm = nn.LSTM(INPUT, HIDDEN, num_layers=LAYERS)
    x = oxmera.tensor(x_array, requires_grad=True)

    def run():
        x.grad = None
        lstm.zero_grad()
        out, (h, c) = lstm(x)
        (out.sum() + h.sum() + c.sum()).backward()
        return out

    run.x = x
    return lstm, run


def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def make_numpy(x_array, state_dict):
    """The LSTM forward and backward by hand; returns (output, input gradient, parameter grads)."""
    weights = [tuple(state_dict[f"{name}_l{k}"].numpy()
                     for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
               for k in range(LAYERS)]
    H = HIDDEN

    def run():
        layer_input, tapes = x_array, []
        for w_ih, w_hh, b_ih, b_hh in weights:
            xp = (layer_input.reshape(STEPS * BATCH, -1) @ w_ih.T + (b_ih + b_hh)).reshape(
                STEPS, BATCH, -1)
            h = np.zeros((BATCH, H), np.float32)
            c = np.zeros((BATCH, H), np.float32)
            tape, outputs = [], []
            for t in range(STEPS):
                gates = xp[t] + h @ w_hh.T
                i, f = _sigmoid(gates[:, :H]), _sigmoid(gates[:, H:2 * H])
                g, o = np.tanh(gates[:, 2 * H:3 * H]), _sigmoid(gates[:, 3 * H:])
                c_prev, h_prev = c, h
                c = f * c + i * g
                tanh_c = np.tanh(c)
                h = o * tanh_c
                tape.append((i, f, g, o, c_prev, tanh_c, h_prev))
                outputs.append(h)
            tapes.append((layer_input, tape))
            layer_input = np.stack(outputs)
        output = layer_input
        grad_out = np.ones_like(output)          # d(out.sum())/d(out)
        param_grads = []
        for (w_ih, w_hh, _, _), (layer_in, tape) in zip(reversed(weights), reversed(tapes)):
            grad_h = np.ones((BATCH, H), np.float32)   # h_n.sum()
            grad_c = np.ones((BATCH, H), np.float32)   # c_n.sum()
            grad_gates = np.empty((STEPS, BATCH, 4 * H), np.float32)
            grad_w_hh = np.zeros_like(w_hh)
            for t in range(STEPS - 1, -1, -1):
                i, f, g, o, c_prev, tanh_c, h_prev = tape[t]
                grad_h = grad_h + grad_out[t]
                dc = grad_c + grad_h * o * (1 - tanh_c * tanh_c)
                gg = grad_gates[t]
                gg[:, :H] = dc * g * i * (1 - i)
                gg[:, H:2 * H] = dc * c_prev * f * (1 - f)
                gg[:, 2 * H:3 * H] = dc * i * (1 - g * g)
                gg[:, 3 * H:] = grad_h * tanh_c * o * (1 - o)
                grad_w_hh += gg.T @ h_prev
                grad_h = gg @ w_hh
                grad_c = dc * f
            flat = grad_gates.reshape(STEPS * BATCH, -1)
            param_grads.append((flat.T @ layer_in.reshape(STEPS * BATCH, -1), grad_w_hh,
                                flat.sum(0)))
            grad_out = (flat @ w_ih).reshape(STEPS, BATCH, -1)
        return output, grad_out, param_grads[::-1]

    return run


def make_torch(x_array, state_dict):
    torch.set_num_threads(1)
    lstm = torch.nn.LSTM(INPUT, HIDDEN, num_layers=LAYERS)
    lstm.load_state_dict({k: torch.tensor(v.numpy().copy()) for k, v in state_dict.items()})
    x = torch.tensor(x_array, requires_grad=True)

    def run():
        x.grad = None
        lstm.zero_grad()
        out, (h, c) = lstm(x)
        (out.sum() + h.sum() + c.sum()).backward()
        return out

    run.x = x
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=11, help="rounds timed (at least 5)")
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    repeats = max(args.repeats, 5)

    x_array = np.random.default_rng(0).standard_normal((STEPS, BATCH, INPUT), dtype=np.float32)
    lstm, ox_run = make_oxmera(x_array)
    variants = {"oxmera": ox_run, "numpy": make_numpy(x_array, lstm.state_dict())}
    # Same numbers before any timing: outputs and the input's gradient.
    out = ox_run().detach().numpy()
    np_out, np_grad, np_param_grads = variants["numpy"]()
    np.testing.assert_allclose(out, np_out, rtol=1e-4, atol=1e-5)
    lstm_input_grad = ox_run.x.grad.numpy()
    np.testing.assert_allclose(lstm_input_grad, np_grad, rtol=1e-3, atol=1e-4)
    for k, (grad_w_ih, grad_w_hh, grad_bias) in enumerate(np_param_grads):
        for name, expected in (("weight_ih", grad_w_ih), ("weight_hh", grad_w_hh),
                               ("bias_ih", grad_bias)):
            np.testing.assert_allclose(getattr(lstm, f"{name}_l{k}").grad.numpy(), expected,
                                       rtol=1e-3, atol=1e-3)
    if torch is not None:
        variants["torch"] = make_torch(x_array, lstm.state_dict())
        np.testing.assert_allclose(out, variants["torch"]().detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        x_grad = variants["torch"].x.grad.numpy()
        np.testing.assert_allclose(lstm_input_grad, x_grad, rtol=1e-3, atol=1e-4)

    times = {name: [] for name in variants}
    ratios = {name: [] for name in variants if name != "oxmera"}
    names = list(variants)
    with thread_limit():
        for _ in range(args.warmup):
            for fn in variants.values():
                fn()
        for r in range(repeats):
            sample = {}
            for name in names[r % len(names):] + names[:r % len(names)]:
                start = time.perf_counter()
                variants[name]()
                sample[name] = time.perf_counter() - start
            for name, seconds in sample.items():
                times[name].append(seconds)
            for name in ratios:
                ratios[name].append(sample["oxmera"] / sample[name])

    print(f"LSTM({INPUT}, {HIDDEN}, num_layers={LAYERS}) float32, seq {STEPS}, batch {BATCH}, "
          f"forward+backward; median of {repeats} rounds, one BLAS thread")
    for name in names:
        print(f"  {name:<8} {statistics.median(times[name]) * 1e3:8.2f} ms")
    print(f"ratio oxmera / numpy: {statistics.median(ratios['numpy']):.2f} "
          f"(the cost of autograd over the same products by hand)")
    if torch is None:
        print("torch is not installed: no ratio to torch")
        return 0
    print(f"ratio oxmera / torch: {statistics.median(ratios['torch']):.2f} (aim: at or below 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
