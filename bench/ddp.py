#!/usr/bin/env python
"""DistributedDataParallel: step time on 1 and 2 processes, and how much communication hides.

Usage::

    python bench/ddp.py [--steps 30] [--ranks 1 2]

Two workloads, each rank with its own batch of the same size (weak scaling:
with free communication and a core per rank, the step time would not change
with the number of ranks):

- ``mlp``: 784-512-512-10 with ReLU, float32, 64 samples per rank
  (about 670k parameters, 2.7 MB of gradients in 3 buckets);
- ``conv``: conv 3->16 and 16->32 (3x3, padding 1), each with ReLU and a 2x2
  max-pool, then a linear layer to 10, float32, 16 images of 3x32x32 per rank.

A step is ``zero_grad``, forward, MSE/cross-entropy loss, backward (the
gradients averaged by DDP) and an SGD update. For each job the script starts
``python -m oxmera.distributed.run -n N bench/ddp.py --worker``; rank 0
reports the median step time over ``--steps`` steps after 5 warm-up steps,
and, from the reducer, the median time backward still waited for the
all-reduces after its last gradient (``exposed``). ``all-reduce alone`` is
the median time of the same bucketed all-reduces run back to back with
nothing else; the hidden fraction is ``1 - exposed / all-reduce alone``
(clamped to [0, 1]), the share of the communication backward covered
(``exposed`` also holds any wait for a slower rank to reach its last
gradient, so the fraction is a lower bound). BLAS
is pinned to one thread per rank. The machine this was written on has two
cores shared with other work: expect noise, and 2 ranks there compete for
the cores with the MPI progress. Not run by the test suite.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS"):
    os.environ[_name] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def build(workload):
    from oxmera import nn
    if workload == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        shape = (64, 784)
    else:
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
        shape = (16, 3, 32, 32)
    return model, shape


def worker(steps):
    import numpy as np

    import oxmera
    import oxmera.distributed as dist
    from oxmera.nn import functional as F
    from oxmera.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank = dist.get_rank()
    report = {}
    for workload in ("mlp", "conv"):
        oxmera.manual_seed(0)
        model, shape = build(workload)
        ddp = DDP(model)
        optimizer = oxmera.optim.SGD(ddp.parameters(), lr=0.01)
        rng = np.random.default_rng(rank)
        x = oxmera.from_numpy(rng.normal(size=shape).astype(np.float32))
        target = oxmera.from_numpy(rng.integers(0, 10, size=shape[0]))
        times, waits = [], []
        for step in range(steps + 5):
            dist.barrier()
            began = time.perf_counter()
            optimizer.zero_grad()
            F.cross_entropy(ddp(x), target).backward()
            optimizer.step()
            if step >= 5:
                times.append(time.perf_counter() - began)
                waits.append(ddp.reducer.last_wait_seconds)
        # The same all-reduces with nothing to overlap them.
        buckets = ddp.reducer.buckets
        alone = []
        for step in range(steps):
            dist.barrier()
            began = time.perf_counter()
            works = [dist.all_reduce(oxmera.from_numpy(b.buffer), async_op=True)
                     for b in buckets]
            for work in works:
                work.wait()
            alone.append(time.perf_counter() - began)
        report[workload] = {
            "step": statistics.median(times), "exposed": statistics.median(waits),
            "alone": statistics.median(alone), "buckets": len(buckets),
            "gradient_bytes": int(sum(b.buffer.nbytes for b in buckets))}
    if rank == 0:
        print("RESULT " + json.dumps(report), flush=True)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.steps)
        return
    results = {}
    for n in args.ranks:
        out = subprocess.run([sys.executable, "-m", "oxmera.distributed.run", "-n", str(n),
                              os.path.abspath(__file__), "--worker", "--steps",
                              str(args.steps)], capture_output=True, text=True,
                             cwd=os.path.dirname(HERE), timeout=1800)
        line = [x for x in out.stdout.splitlines() if x.startswith("RESULT ")]
        if out.returncode != 0 or not line:
            sys.exit(f"the job of {n} ranks failed:\n{out.stdout}\n{out.stderr}")
        results[n] = json.loads(line[0][len("RESULT "):])
    print("| workload | ranks | step (median) | all-reduce alone | exposed after backward "
          "| hidden | buckets |")
    print("|---|---|---|---|---|---|---|")
    for workload in ("mlp", "conv"):
        for n, report in results.items():
            r = report[workload]
            # One rank has nothing to communicate: its "all-reduce" is a local no-op.
            hidden = "n/a"
            if n > 1 and r["alone"] > 0:
                hidden = f"{min(max(1.0 - r['exposed'] / r['alone'], 0.0), 1.0):.0%}"
            print(f"| {workload} | {n} | {r['step'] * 1e3:.2f} ms | {r['alone'] * 1e3:.3f} ms "
                  f"| {r['exposed'] * 1e3:.3f} ms | {hidden} | {r['buckets']} "
                  f"({r['gradient_bytes'] / 1e6:.1f} MB) |")


if __name__ == "__main__":
    main()
