#!/usr/bin/env python
"""LSTM forward+backward in oxmera against PyTorch in the same run.

Usage::

    python bench/lstm.py [--repeats 11] [--warmup 2]

The workload (issue 15): ``nn.LSTM(256, 256, num_layers=2)`` on a float32
input of 64 steps and batch 32, ``output.sum() + h_n.sum() + c_n.sum()``
backward to the input and every parameter. Both libraries get the same
weights and input (checked to give the same output first).

Every library is pinned to one BLAS thread (the environment variables are
set before NumPy and torch are imported; threadpoolctl limits the pools too
when it is importable, and torch.set_num_threads(1)). After a warm-up, each
round times each library once, in alternating order, so machine drift (the
machine is shared) hits both alike; the report is the median over rounds,
and the ratio is the median over rounds of oxmera / torch. The issue's aim:
at or below torch's time. Without torch, oxmera's time alone is reported.
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

    return lstm, run


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

    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=11, help="rounds timed (at least 5)")
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    repeats = max(args.repeats, 5)

    x_array = np.random.default_rng(0).standard_normal((STEPS, BATCH, INPUT), dtype=np.float32)
    lstm, ox_run = make_oxmera(x_array)
    variants = {"oxmera": ox_run}
    if torch is not None:
        variants["torch"] = make_torch(x_array, lstm.state_dict())
        # Same numbers before any timing.
        np.testing.assert_allclose(ox_run().detach().numpy(),
                                   variants["torch"]().detach().numpy(), rtol=1e-4, atol=1e-5)

    times = {name: [] for name in variants}
    ratios = []
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
            if torch is not None:
                ratios.append(sample["oxmera"] / sample["torch"])

    print(f"LSTM({INPUT}, {HIDDEN}, num_layers={LAYERS}) float32, seq {STEPS}, batch {BATCH}, "
          f"forward+backward; median of {repeats} rounds, one BLAS thread")
    for name in names:
        print(f"  {name:<8} {statistics.median(times[name]) * 1e3:8.2f} ms")
    if torch is None:
        print("torch is not installed: no ratio")
        return 0
    ratio = statistics.median(ratios)
    print(f"ratio oxmera / torch: {ratio:.2f} (aim: at or below 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
