#!/usr/bin/env python
"""DataLoader with worker processes against the main process alone.

Usage::

    python bench/dataloader.py [--samples 400] [--batch 16] [--repeats 5]

A map-style dataset whose ``__getitem__`` costs 1 ms, two ways:

- ``sleep``: ``time.sleep(0.001)``, like reading a file or a network store
  (the process waits; other processes run);
- ``busy``: 1 ms of CPU time spent in Python, like decoding or augmenting
  (measured with ``time.thread_time``, so a busy machine stretches its wall
  time; it needs a free core per worker to go faster).

Each sample is a float32 tensor of 64 values and an int label, collated by
``default_collate``. One epoch is ``for batch in loader: pass`` over
``--samples`` samples in batches of ``--batch``; with workers it includes
starting and stopping them (the default, ``persistent_workers=False``), so
the workers' cost is counted. The configurations are timed in rotating
order in each round (the machine may be shared: drift hits all of them
alike) and the report is the median wall time per epoch and the speedup
over ``num_workers=0``. Not run by the test suite.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import oxmera  # noqa: E402
from oxmera.utils.data import DataLoader, Dataset  # noqa: E402

COST = 0.001


class OneMillisecond(Dataset):
    """``n`` samples, each costing 1 ms to make (sleeping or computing)."""

    def __init__(self, n, busy):
        self.n = n
        self.busy = busy

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.busy:
            end = time.thread_time() + COST      # 1 ms of this thread's CPU time
            while time.thread_time() < end:
                pass
        else:
            time.sleep(COST)
        return oxmera.full((64,), float(i)), i


def _epoch(loader):
    start = time.perf_counter()
    count = 0
    for x, y in loader:
        count += len(y)
    elapsed = time.perf_counter() - start
    assert count == len(loader.dataset)
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    print(f"{args.samples} samples of 1 ms each, batches of {args.batch}, median of "
          f"{args.repeats} epochs; {len(os.sched_getaffinity(0))} usable CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for kind in ("sleep", "busy"):
        dataset = OneMillisecond(args.samples, busy=kind == "busy")
        loaders = {w: DataLoader(dataset, batch_size=args.batch, num_workers=w)
                   for w in (0, 1, 2)}
        for loader in loaders.values():            # warm-up (imports, first fork)
            _epoch(loader)
        times = {w: [] for w in loaders}
        order = list(loaders)
        for r in range(args.repeats):
            for w in order[r % len(order):] + order[:r % len(order)]:
                times[w].append(_epoch(loaders[w]))
        base = statistics.median(times[0])
        for w, samples in times.items():
            median = statistics.median(samples)
            print(f"  {kind:5s} num_workers={w}: {median * 1e3:7.1f} ms per epoch "
                  f"(min {min(samples) * 1e3:.1f}, max {max(samples) * 1e3:.1f}), "
                  f"{base / median:.2f}x num_workers=0")


if __name__ == "__main__":
    main()
