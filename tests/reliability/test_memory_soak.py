"""Memory soak: long training runs and big graphs must not grow the process.

Each soak runs in a fresh Python process (so pytest's own allocations do not
blur the figures, and a crash fails the test instead of killing pytest):

- 10,000 SGD steps of an MLP (small in CI; the 784-256-128-10 benchmark
  model with ``--runslow``), resident set size (RSS) sampled every 1,000
  steps: after the first sample (warm-up) it grows by less than 2 %;
- the same training under ``tracemalloc``, filtered to allocations made
  while oxmera's code is on the stack: once warm, no growth between
  snapshots (a leak of one small object per step would show as tens of
  kilobytes);
- a deep-graph soak: rounds of a 10,000-node graph built and dropped (with
  and without backward), 30 rounds in CI and 1,000 with ``--runslow``: RSS
  returns to its baseline.

The figures are printed (run pytest with ``-s`` to see them).
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import oxmera

OXMERA_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(oxmera.__file__)))
OXMERA_PACKAGE = os.path.dirname(os.path.abspath(oxmera.__file__))

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"),
                                reason="RSS is read from /proc/self/statm (Linux)")

COMMON = """
    import gc, json, os, sys, time
    import numpy as np
    import oxmera
    import oxmera.nn.functional as F

    PAGE = os.sysconf("SC_PAGE_SIZE")

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * PAGE

    def mlp(sizes, batch, seed=0):
        rng = np.random.default_rng(seed)
        x = oxmera.tensor(rng.standard_normal((batch, sizes[0]), dtype=np.float32))
        labels = oxmera.tensor(rng.integers(0, sizes[-1], batch))
        params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            bound = 1.0 / np.sqrt(fan_in)
            params.append(oxmera.tensor(rng.uniform(-bound, bound, (fan_in, fan_out))
                                        .astype(np.float32), requires_grad=True))
            params.append(oxmera.tensor(rng.uniform(-bound, bound, fan_out).astype(np.float32),
                                        requires_grad=True))

        def step():
            for p in params:
                p.grad = None
            h = x
            for k in range(0, len(params) - 2, 2):
                h = F.relu(h @ params[k] + params[k + 1])
            loss = F.cross_entropy(h @ params[-2] + params[-1], labels)
            loss.backward()
            with oxmera.no_grad():
                for p in params:
                    p.sub_(p.grad, alpha=0.01)
            return loss
        return step
"""


def _run(script, timeout=1800):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (OXMERA_ROOT, env.get("PYTHONPATH")) if p)
    code = textwrap.dedent(COMMON) + textwrap.dedent(script)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, (
        f"subprocess exited with {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\n"
        f"stderr:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _mib(n):
    return f"{n / 2 ** 20:.1f} MiB"


@pytest.mark.parametrize("size", ["small", pytest.param("benchmark", marks=pytest.mark.slow)])
def test_mlp_training_rss_is_flat(size):
    sizes, batch = ((64, 32, 16, 4), 16) if size == "small" else ((784, 256, 128, 10), 64)
    result = _run(f"""
        step = mlp({sizes!r}, {batch})
        samples = []
        start = time.perf_counter()
        for i in range(1, 10_001):
            step()
            if i % 1000 == 0:
                samples.append(rss())
        print(json.dumps({{"samples": samples, "seconds": time.perf_counter() - start}}))
    """)
    samples = result["samples"]
    warm = samples[0]
    growth = (max(samples[1:]) - warm) / warm
    print(f"\nMLP {sizes} batch {batch}: 10,000 steps in {result['seconds']:.1f} s; RSS every "
          f"1,000 steps: {', '.join(_mib(s) for s in samples)}; growth after warm-up "
          f"{100 * growth:+.2f} %")
    assert growth < 0.02, samples


def test_mlp_training_allocates_nothing_that_stays():
    result = _run(f"""
        import tracemalloc
        step = mlp((64, 32, 16, 4), 16)
        for _ in range(300):                       # warm-up: caches, freelists, interned objects
            step()
        gc.collect()
        tracemalloc.start(10)
        # Allocations with oxmera's Python code on the stack, or made by this
        # script's lines: the compiled core (the engine, the tensors) is called
        # from them and has no frames of its own.
        ours = [tracemalloc.Filter(True, {OXMERA_PACKAGE + os.sep + "*"!r}, all_frames=True),
                tracemalloc.Filter(True, "<string>", all_frames=True),
                tracemalloc.Filter(False, tracemalloc.__file__, all_frames=True)]
        # NumPy keeps a few dozen bytes per array made read-only, in a table that
        # grows ever more slowly (a plain NumPy loop shows it too): not oxmera's.
        utils = {os.path.join(OXMERA_PACKAGE, "ops", "_utils.py")!r}
        with open(utils) as f:
            for lineno, line in enumerate(f, 1):
                if "flags.writeable = False" in line:
                    ours.append(tracemalloc.Filter(False, utils, lineno))
        snapshots = [None] * 6
        for phase in range(6):
            for _ in range(300):
                step()
            gc.collect()
            snapshots[phase] = tracemalloc.take_snapshot().filter_traces(ours)
        tracemalloc.stop()
        sizes = [sum(t.size for t in s.traces) for s in snapshots]
        top = [chr(10).join([str(s)] + s.traceback.format())
               for s in snapshots[-1].compare_to(snapshots[0], "traceback")[:5]]
        print(json.dumps({{"sizes": sizes, "top": top}}))
    """)
    sizes = result["sizes"]
    print(f"\ntracemalloc, oxmera's allocations still alive after each 300 steps: "
          f"{', '.join(f'{s} B' for s in sizes)}")
    # After the warm-up nothing of oxmera's stays: a leak of a single small
    # object per step would add more than 300 * 32 bytes in every phase.
    # NumPy's own caches (seen on CPython 3.10: a few KB once, under
    # cross_entropy's frames) may still fill once after the warm-up, so the
    # test asks for a steady state: the last three phases within 1 KiB of each
    # other, and the whole growth bounded.
    growth = max(sizes[1:]) - sizes[0]
    tail = max(sizes[-3:]) - min(sizes[-3:])
    print(f"growth over the last 1,500 steps: {growth} B; over the last 900: {tail} B")
    assert tail < 1024 and growth < 16384, "\n".join(result["top"])


@pytest.mark.parametrize("rounds", [30, pytest.param(1000, marks=pytest.mark.slow)])
def test_deep_graph_soak_returns_to_baseline(rounds):
    result = _run(f"""
        def live():
            from oxmera._core.autograd import _sealed_objects
            return sum(isinstance(o, (oxmera.Tensor, oxmera.GradFn))
                       for o in gc.get_objects() + _sealed_objects())

        x = oxmera.tensor(np.linspace(0.5, 1.5, 8), requires_grad=True, dtype=oxmera.float64)
        c = oxmera.tensor(np.full(8, 0.999), dtype=oxmera.float64)
        gc.collect()
        before, objects_before = rss(), live()
        during, after, objects = [], [], []
        start = time.perf_counter()
        for r in range({rounds}):
            y = x
            for k in range(2000):                  # 10,000 nodes: mul, add, exp, index
                y = y * c
                y = y + x * 1e-4
                y = (y * 1e-3).exp() * y if k % 2 else y[::1]
            during.append(rss())
            if r % 2:
                y.sum().backward()
                x.grad = None
            del y
            after.append(rss())
            if r % 10 == 0 or r == {rounds} - 1:
                objects.append(live())              # freed by reference counting alone
        print(json.dumps({{"before": before, "during": during, "after": after,
                          "objects_before": objects_before, "objects": objects,
                          "seconds": time.perf_counter() - start}}))
    """)
    after = result["after"]
    baseline = after[min(4, len(after) - 1)]
    final = after[-1]
    peak = max(after[5:]) if len(after) > 5 else final
    print(f"\ndeep graph: {rounds} rounds of 10,000 nodes in {result['seconds']:.1f} s; RSS "
          f"{_mib(result['before'])} before, {_mib(result['during'][0])} holding the first "
          f"graph; after each round dropped: {_mib(baseline)} after round 5, "
          f"{_mib(final)} at the end ({100 * (final - baseline) / baseline:+.2f} %), at most "
          f"{_mib(peak)}; live tensors and nodes {result['objects_before']} before, "
          f"{sorted(set(result['objects']))} after rounds")
    # Every round frees its whole graph: as many tensors and nodes as before.
    assert set(result["objects"]) == {result["objects_before"]}, result["objects"]
    assert final <= baseline * 1.02, after
    assert peak <= baseline * 1.05, after
