"""The deep chain with the cyclic collector on, as users run it.

Each measurement runs in a fresh process that imports only oxmera (or only
NumPy) and leaves the collector at its default thresholds: no gc.freeze(), no
gc.disable(). ``y = y.sin()`` on a 16-element float64 tensor requiring grad,
``steps`` times, then ``y.sum().backward()``; the NumPy version does the same
math by hand (keeping every sin input, as a tape does). Also reports the
collector-tracked objects each recorded op leaves (gc.get_objects growth) and
the peak RSS of the child.

    python bench/gc_chain.py [--steps 20000 200000] [--repeats 5] [--baseline DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# The oxmera next to this file (a source tree built in place), whatever the cwd.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import gc, json, resource, sys, time
lib, steps = sys.argv[1], int(sys.argv[2])
import numpy as np
if lib == "oxmera":
    import oxmera
    x0 = oxmera.tensor(np.linspace(0.1, 1.6, 16), requires_grad=True)
    def run():
        y = x0
        for _ in range(steps):
            y = y.sin()
        y.sum().backward()
        return x0.grad
    def count():
        y = x0
        before = len(gc.get_objects())
        for _ in range(1000):
            y = y.sin()
        after = len(gc.get_objects())
        del y
        return (after - before) / 1000
else:
    x0 = np.linspace(0.1, 1.6, 16)
    def run():
        saved = []
        y = x0
        for _ in range(steps):
            saved.append(y)
            y = np.sin(y)
        g = np.ones_like(y)
        for s in reversed(saved):
            g = g * np.cos(s)
        return g
    def count():
        return 0.0
per_op = count()
t0, c0 = time.perf_counter(), time.process_time()
run()
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"wall": wall, "cpu": cpu, "rss_mb": rss, "tracked_per_op": per_op}))
"""


def one(lib, steps, root=ROOT):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run([sys.executable, "-c", CHILD, lib, str(steps)],
                         capture_output=True, text=True, check=True, env=env, cwd=root)
    return json.loads(out.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, nargs="+", default=[20_000, 200_000])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--baseline", metavar="DIR",
                   help="also time the oxmera importable from DIR (another build), "
                        "interleaved, reported as 'baseline'")
    a = p.parse_args()
    for steps in a.steps:
        runs = {"numpy": [], "oxmera": []}
        if a.baseline:
            runs["baseline"] = []
        for _ in range(a.repeats):       # interleaved, so drift hits all alike
            for lib in runs:
                if lib == "baseline":
                    runs[lib].append(one("oxmera", steps, a.baseline))
                else:
                    runs[lib].append(one(lib, steps))
        med = {lib: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
               for lib, rs in runs.items()}
        ratios = [o["cpu"] / n["cpu"] for o, n in zip(runs["oxmera"], runs["numpy"])]
        print(f"{steps} steps: oxmera cpu {med['oxmera']['cpu']:.3f} s "
              f"(wall {med['oxmera']['wall']:.3f}), numpy cpu {med['numpy']['cpu']:.3f} s, "
              f"ratio {statistics.median(ratios):.2f}x "
              f"[{min(ratios):.2f}-{max(ratios):.2f}]; "
              f"peak RSS oxmera {med['oxmera']['rss_mb']:.0f} MB, "
              f"numpy {med['numpy']['rss_mb']:.0f} MB; "
              f"tracked objects per op {med['oxmera']['tracked_per_op']:.2f}")
        if a.baseline:
            b = med["baseline"]
            ratios = [o["cpu"] / n["cpu"] for o, n in zip(runs["baseline"], runs["numpy"])]
            print(f"    baseline: cpu {b['cpu']:.3f} s, ratio {statistics.median(ratios):.2f}x, "
                  f"peak RSS {b['rss_mb']:.0f} MB, tracked objects per op "
                  f"{b['tracked_per_op']:.2f}")


if __name__ == "__main__":
    main()
