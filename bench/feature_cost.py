"""What optional safety features cost on the small-ops benchmark.

Builds the compiled core three times from this checkout, into temporary
copies: as shipped, with anomaly mode compiled out (``OXMERA_NO_ANOMALY=1``)
with the read-only saved arrays compiled out (``OXMERA_NO_SAVED_LOCKS=1``) and
with the profiler's tests compiled out (``OXMERA_NO_PROFILER=1``).
Then times the ``small_ops`` workload (bench/workloads/small_ops.py) in one
child process per build, rounds interleaved so machine drift hits all builds
alike, and prints each build's median and its ratio to the shipped one.

Targets: anomaly mode off costs < 3% (issue 4); read-only saved arrays cost
< 5% (issue 8); the profiler, when no profile is active, < 1% (issue 17).

Usage: ``python bench/feature_cost.py [--rounds 9] [--keep DIR] [--builds "no profiler"]``
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILDS = {
    "shipped": {},
    "no anomaly": {"OXMERA_NO_ANOMALY": "1"},
    "no saved locks": {"OXMERA_NO_SAVED_LOCKS": "1"},
    "no profiler": {"OXMERA_NO_PROFILER": "1"},
}

# One sample: the per-step time of small_ops, best of a few batches.
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
from workloads import small_ops
import oxmera
assert oxmera.__file__.startswith(sys.argv[2]), oxmera.__file__
step = small_ops.build_oxmera(small_ops.make_data())
for _ in range(2000):
    step()
best = float("inf")
for _ in range(5):
    start = time.process_time()
    for _ in range(4000):
        step()
    best = min(best, (time.process_time() - start) / 4000)
print(json.dumps(best))
"""


def build(name, env_extra, root):
    target = os.path.join(root, name.replace(" ", "_"))
    shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(
        ".git", "build", "*.so", "*.c", "*.html", "__pycache__", "docs", "tests", ".tox"))
    env = dict(os.environ, **env_extra)
    subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=target, env=env,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return target


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--keep", help="build into this directory and keep it")
    parser.add_argument("--builds", help="comma-separated builds to compare with the shipped "
                        f"one (default: all of {', '.join(list(BUILDS)[1:])})")
    args = parser.parse_args()
    if args.builds:
        wanted = {"shipped", *(b.strip() for b in args.builds.split(","))}
        unknown = wanted - set(BUILDS)
        if unknown:
            parser.error(f"unknown builds {sorted(unknown)}; choose from {list(BUILDS)[1:]}")
        for name in list(BUILDS):
            if name not in wanted:
                del BUILDS[name]
    root = args.keep or tempfile.mkdtemp(prefix="oxmera-feature-cost-")
    os.makedirs(root, exist_ok=True)
    try:
        paths = {}
        for name, env in BUILDS.items():
            print(f"building: {name} ...", flush=True)
            paths[name] = build(name, env, root)
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1")
        samples = {name: [] for name in BUILDS}
        for r in range(args.rounds):
            order = list(BUILDS)[r % len(BUILDS):] + list(BUILDS)[:r % len(BUILDS)]
            for name in order:
                out = subprocess.run([sys.executable, "-c", CHILD,
                                      os.path.join(REPO, "bench"), paths[name]],
                                     env=env, check=True, capture_output=True, text=True)
                samples[name].append(json.loads(out.stdout))
        base = statistics.median(samples["shipped"])
        print(f"\nsmall_ops per step, median of {args.rounds} interleaved rounds")
        print(f"{'build':16s} {'median':>10s} {'vs shipped':>11s}")
        for name in BUILDS:
            median = statistics.median(samples[name])
            print(f"{name:16s} {median * 1e6:8.2f} us {median / base:10.3f}x")
        for name, target, label in (("no anomaly", 0.03, "anomaly mode off"),
                                    ("no saved locks", 0.05, "read-only saved arrays"),
                                    ("no profiler", 0.01, "the profiler when off")):
            if name not in samples:
                continue
            cost = base / statistics.median(samples[name]) - 1
            print(f"cost of {label}: {cost * 100:+.1f}% (target < {target * 100:.0f}%)")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
