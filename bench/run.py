#!/usr/bin/env python
"""Benchmark oxmera against hand-written NumPy forward+backward code, PyTorch and peers.

Usage::

    python bench/run.py                                   # every workload, every library
    python bench/run.py --workloads small_ops,deep_chain --libs oxmera,numpy
    python bench/run.py --repeats 15 --json out.json --markdown bench/RESULTS.md

The libraries are NumPy (hand-written VJPs, the reference), oxmera, PyTorch
and three peer autograd libraries: MyGrad, HIPS autograd and JAX. Every one
but NumPy is optional: one that does not import is skipped, and the reason
printed. JAX runs **eagerly** (``jax.value_and_grad``, no
``jax.jit``): the comparison is between eager Python autograd engines, each
op dispatched as the Python code reaches it.

What one run does, in one process:

1. Pins every library to one thread: the BLAS/OpenMP environment variables
   are set to 1 before NumPy is imported (the script re-executes itself if
   something imported NumPy first), threadpoolctl limits the pools too when
   it is installed, PyTorch gets ``torch.set_num_threads(1)``, and JAX's XLA
   CPU backend gets ``XLA_FLAGS`` and ``PJRT_NPROC=1`` before JAX is imported
   (``bench/_threads.py``).
2. For each workload (see ``bench/workloads``), checks every library's
   forward value and gradients against the hand-written NumPy version and
   refuses to time a library that disagrees, lacks an op the workload needs,
   or raises (it prints why).
3. Calibrates how many calls make one sample (at least ``--min-time``
   seconds), warms up, then takes ``--repeats`` samples per library in
   interleaved rounds: round r times every library once, in an order that
   rotates each round, so machine drift hits every library alike.
4. Reports per library the median time per call and the ratio to NumPy,
   taken as the median over rounds of (library sample / NumPy sample of the
   same round); prints a table, writes JSON, and optionally Markdown.
5. Runs deep_chain with 200,000 steps once per library in a child process
   that imports only that library, and reports its time and peak RSS
   (``ru_maxrss`` of the child).

NumPy is always run: it is the reference for the gradient check and the
denominator of every ratio. Nothing here is run by the test suite.
"""
import os
import sys

# -- one thread for every library, before NumPy is imported ------------------

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _threads import (  # noqa: E402
    THREAD_VARIABLES,
    XLA_THREAD_FLAGS,
    XLA_THREAD_VARIABLES,
    pin_threads_in_environment,
    pin_xla_threads,
)

if __name__ == "__main__":
    pin_threads_in_environment()

import argparse  # noqa: E402
import gc  # noqa: E402
import hashlib  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

import numpy as np  # noqa: E402

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(BENCH_DIR)
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)
if REPO_DIR not in sys.path:
    sys.path.insert(1, REPO_DIR)        # benchmark the oxmera of this checkout

from workloads import PEERS, WORKLOAD_MODULES, Unavailable, load_workloads  # noqa: E402
from workloads import deep_chain as deep_chain_module  # noqa: E402

LIBRARIES = ("oxmera", "numpy", "torch", "mygrad", "autograd", "jax")
# The order of the report's columns and lines, and how it names each library.
REPORT_ORDER = ("numpy", "oxmera", "torch", "mygrad", "autograd", "jax")
DISPLAY_NAMES = {"numpy": "NumPy", "oxmera": "oxmera", "torch": "PyTorch", "mygrad": "MyGrad",
                 "autograd": "HIPS autograd", "jax": "JAX"}
LONG_CHAIN = "deep_chain_200k"
ALL_WORKLOADS = (*WORKLOAD_MODULES, LONG_CHAIN)

# Issue 13's targets: (workload, what is measured, target, PyTorch as the issue measured it).
TARGETS = (
    ("small_ops", "ratio", 2.5, "10.0×"),
    ("deep_chain", "ratio", 2.5, "11.5×"),
    (LONG_CHAIN, "peak_rss_mb", 180.0, "835 MB"),
    ("mlp_step", "ratio", 1.05, "1.10×"),
    ("big_elementwise", "ratio", 1.02, "1.32×"),
    ("matmul", "ratio", 1.02, "0.95×"),
    ("softmax_rows", "ratio", 0.95, "0.78×"),
    ("digits_cnn", "ratio", 1.0, "—"),
)

NOTES_BEGIN = "<!-- notes: kept when this file is regenerated -->"
NOTES_END = "<!-- end of notes -->"


def log(message=""):
    print(message, file=sys.stderr, flush=True)


# -- libraries ----------------------------------------------------------------

def import_library(name):
    """Import a library and pin it to one thread; returns (module, None) or (None, why)."""
    if name == "jax":
        pin_xla_threads()                # XLA reads it when JAX creates its CPU client
    for attempt in range(2):
        try:
            module = importlib.import_module(name)
            break
        except ModuleNotFoundError as error:
            if error.name != name:       # a missing piece inside the package: retry below
                if attempt == 0:
                    _retry_after_failed_import(name, error)
                    continue
            return None, f"import failed: {type(error).__name__}: {error}"
        except Exception as error:       # a broken or half-swapped build: try once more
            if attempt == 0:
                _retry_after_failed_import(name, error)
                continue
            return None, f"import failed: {type(error).__name__}: {error}"
    if name == "torch":
        module.set_num_threads(1)
        try:
            module.set_num_interop_threads(1)
        except RuntimeError:             # already set, or parallel work already ran
            pass
    return module, None


def _retry_after_failed_import(name, error):
    """Forget the half-imported package and wait: its build may be being replaced."""
    log(f"{name}: import failed ({type(error).__name__}: {error}); retrying in 30 s")
    for module_name in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module_name]
    time.sleep(30)


def limit_thread_pools():
    """threadpoolctl's view of the native thread pools (limited to 1), if installed."""
    try:
        import threadpoolctl
    except ImportError:
        return None, "threadpoolctl not installed; thread variables set to 1 before import"
    controller = threadpoolctl.threadpool_limits(1)
    info = [{k: pool.get(k) for k in ("internal_api", "num_threads", "version")}
            for pool in threadpoolctl.threadpool_info()]
    return controller, info


def to_array(value):
    """A library's output (array, tensor, scalar) as a NumPy array, for the check."""
    if value is None:
        raise ValueError("a gradient is None")
    if hasattr(value, "detach"):         # torch.Tensor and oxmera.Tensor
        value = value.detach()
    return np.asarray(value)


# -- checking -----------------------------------------------------------------

def compare(outputs, reference, workload):
    """Check a library's (value, grads...) against NumPy's; returns (ok, worst error, why)."""
    if len(outputs) != len(reference):
        return False, None, f"{len(outputs)} outputs, NumPy has {len(reference)}"
    worst = 0.0
    for index, (got, want) in enumerate(zip(outputs, reference)):
        what = "the value" if index == 0 else f"gradient {index} of {len(reference) - 1}"
        got = to_array(got)
        if got.shape != want.shape:
            return False, None, f"{what} has shape {got.shape}, NumPy's has {want.shape}"
        if got.dtype != want.dtype:
            return False, None, f"{what} has dtype {got.dtype}, NumPy's has {want.dtype}"
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        if want.size:
            error = float(np.max(np.abs(got.astype(np.float64) - want)))
            relative = error / scale if scale else error
            worst = max(worst, relative)
            if not np.allclose(got, want, rtol=workload.rtol, atol=workload.atol * scale,
                               equal_nan=True):
                return False, worst, (f"{what} differs from NumPy's: max abs error {error:.3g} "
                                      f"({relative:.3g} of its largest value; tolerance "
                                      f"rtol={workload.rtol:g}, atol={workload.atol:g} of it)")
    return True, worst, None


# -- timing -------------------------------------------------------------------

def time_sample(step, number):
    """Seconds per call of ``step`` over ``number`` calls: (wall clock, process CPU time).

    The results are dropped inside the loop, so freeing each call's graph is timed.
    """
    wall, cpu = time.perf_counter, time.process_time
    start_wall, start_cpu = wall(), cpu()
    for _ in range(number):
        step()
    return (wall() - start_wall) / number, (cpu() - start_cpu) / number


def calibrate(step, min_time):
    """How many calls make a sample of at least ``min_time`` seconds (also warms up)."""
    number = 1
    while True:
        total = time_sample(step, number)[0] * number
        if total >= min_time:
            return number
        number = max(number + 1, math.ceil(number * min_time / max(total, 1e-9) * 1.1))


def run_workload(workload, libraries, args):
    """Check, then time, one workload on every library; returns its JSON entry."""
    log(f"== {workload.name}: {workload.description}")
    entry = {"name": workload.name, "description": workload.description, "libs": {}}
    gc.collect()
    data = workload.make_data()
    try:
        reference = [to_array(v) for v in workload.builders["numpy"](data)()]
    except Exception as error:
        why = f"NumPy reference failed: {type(error).__name__}: {error}"
        log("   " + why)
        entry["error"] = why
        return entry

    steps = {}
    for name, module in libraries.items():
        result = entry["libs"][name] = {}
        if module is None:
            result.update(status="unavailable", reason=args.unavailable[name])
            continue
        if name not in workload.builders:
            result.update(status="skipped", reason="no implementation for this library")
            continue
        try:
            outputs = workload.builders[name](data)()
        except Unavailable as error:
            result.update(status="skipped", reason=str(error))
            log(f"   {name}: skipped, {error}")
            continue
        except Exception as error:
            why = f"{type(error).__name__}: {error}"
            result.update(status="error", reason=why)
            log(f"   {name}: NOT TIMED, it raised {why}")
            if args.verbose:
                traceback.print_exc()
            continue
        ok, worst, why = compare(outputs, reference, workload)
        result["max_relative_error"] = worst
        if not ok:
            result.update(status="mismatch", reason=why)
            log(f"   {name}: NOT TIMED, {why}")
            continue
        del outputs
        steps[name] = workload.builders[name](data)     # fresh state for the timed runs
        result["status"] = "ok"
    if "numpy" not in steps:
        entry["error"] = "NumPy did not run"
        return entry

    numbers = {}
    for name, step in steps.items():
        numbers[name] = calibrate(step, args.min_time)
        time_sample(step, numbers[name])                # warm-up sample
    names = list(steps)
    samples = {name: [] for name in names}
    for round_index in range(args.repeats):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(time_sample(steps[name], numbers[name]))
    chosen = 1 if args.clock == "cpu" else 0
    for name in names:
        times = [sample[chosen] for sample in samples[name]]
        ratios = [s[chosen] / b[chosen] for s, b in zip(samples[name], samples["numpy"])]
        entry["libs"][name].update(
            median_s=statistics.median(times), min_s=min(times),
            calls_per_sample=numbers[name],
            ratio_to_numpy=statistics.median(ratios),
            ratio_range=[min(ratios), max(ratios)],
            samples_wall_s=[sample[0] for sample in samples[name]],
            samples_cpu_s=[sample[1] for sample in samples[name]],
            median_wall_s=statistics.median(sample[0] for sample in samples[name]),
            median_cpu_s=statistics.median(sample[1] for sample in samples[name]))
    line = ", ".join(f"{name} {format_time(entry['libs'][name]['median_s'])}" for name in names)
    log(f"   {line}")
    steps.clear()
    return entry


# -- the long chain in child processes ----------------------------------------

def memory_mb():
    """(current RSS, peak RSS) of this process in MB, from /proc/self/status.

    ``VmHWM`` is the peak of this process's own address space. ``ru_maxrss``
    is not used for the child: Linux carries the parent's high-water mark
    over ``fork``/``exec`` into it (a child of a 750 MB parent reports at
    least 750 MB), so it would measure the runner, not the workload.
    """
    values = {}
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    key, amount, _unit = line.split()
                    values[key[:-1]] = int(amount) / 1024.0      # kB
    except OSError:
        pass
    if "VmHWM" not in values:                       # not Linux: the best there is
        import resource
        values["VmHWM"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return values.get("VmRSS"), values["VmHWM"]


def child_main(library, steps):
    """Run deep_chain once with ``steps`` steps in this (child) process; print JSON."""
    module, why = import_library(library) if library != "numpy" else (np, None)
    if module is None:
        print(json.dumps({"status": "unavailable", "reason": why}))
        return
    workload = deep_chain_module.make_workload(steps)
    data = workload.make_data()
    try:
        step = workload.builders[library](data)
    except Unavailable as error:
        print(json.dumps({"status": "skipped", "reason": str(error)}))
        return
    before, _ = memory_mb()
    start, start_cpu = time.perf_counter(), time.process_time()
    outputs = step()
    values = [to_array(v).tolist() for v in outputs]
    del outputs                                        # freeing the graph is part of the cost
    elapsed, elapsed_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    _, peak = memory_mb()
    print(json.dumps({"status": "ok", "time_wall_s": elapsed, "time_cpu_s": elapsed_cpu,
                      "peak_rss_mb": peak, "rss_before_mb": before, "outputs": values}))


def run_long_chain(libraries, args):
    """deep_chain with 200,000 steps, once per library, each in its own child process."""
    steps = deep_chain_module.STEPS_LONG
    log(f"== {LONG_CHAIN}: deep_chain with {steps:,} steps, one child process per library")
    entry = {"name": LONG_CHAIN, "steps": steps, "libs": {}}
    reference = None
    for name in ["numpy", *[n for n in libraries if n != "numpy"]]:
        if libraries[name] is None:
            entry["libs"][name] = {"status": "unavailable", "reason": args.unavailable[name]}
            continue
        command = [sys.executable, os.path.abspath(__file__), "--child", name,
                   "--child-steps", str(steps)]
        gc.collect()
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
            lines = done.stdout.strip().splitlines()
            result = json.loads(lines[-1]) if done.returncode == 0 and lines else {
                "status": "error",
                "reason": f"child exited with {done.returncode}: {done.stderr.strip()[-500:]}"}
        except subprocess.TimeoutExpired:
            result = {"status": "error", "reason": f"timed out after {args.timeout} s"}
        outputs = result.pop("outputs", None)
        if result["status"] == "ok":
            result["time_s"] = result[f"time_{args.clock}_s"]
            if name == "numpy":
                reference = outputs
            elif reference is not None:
                ok = all(np.allclose(np.asarray(g), np.asarray(r), rtol=1e-9, atol=0)
                         for g, r in zip(outputs, reference))
                if not ok:
                    why = f"outputs {outputs} differ from NumPy's {reference}"
                    if subnormals_flushed(outputs, reference):
                        why += (" only where NumPy's are subnormal and these are 0: this "
                                "library flushes subnormals to zero (JAX on CPU does, by "
                                "design)")
                    result = {"status": "mismatch", "reason": why}
        entry["libs"][name] = result
        if result["status"] == "ok":
            log(f"   {name}: {result['time_s']:.2f} s, peak RSS {result['peak_rss_mb']:.0f} MB "
                f"({result['rss_before_mb']:.0f} MB before building the graph)")
        else:
            log(f"   {name}: {result['status']}, {result.get('reason')}")
    return entry


def subnormals_flushed(outputs, reference):
    """Whether ``outputs`` differ from ``reference`` only by subnormals turned into zeros.

    Explains a mismatch, excuses none: the 200,000-step gradient underflows to
    a subnormal in NumPy, and a library that flushes subnormals gives 0.
    """
    for got, want in zip(outputs, reference):
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            return False
        differ = ~np.isclose(got, want, rtol=1e-9, atol=0)
        subnormal = (want != 0) & (np.abs(want) < np.finfo(np.float64).tiny)
        if not np.all(subnormal[differ] & (got[differ] == 0)):
            return False
    return True


# -- the machine and versions -------------------------------------------------

def git_revision():
    def git(*words):
        return subprocess.run(["git", "-C", REPO_DIR, *words], capture_output=True,
                              text=True, timeout=30).stdout.strip()
    try:
        sha = git("rev-parse", "--short=12", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "oxmera"))
    except (OSError, subprocess.SubprocessError):
        return None
    return sha + (" (oxmera/ has uncommitted changes)" if dirty else "") if sha else None


def core_build(oxmera_module):
    """Which compiled core was measured: its file's short hash and modification time."""
    try:
        path = oxmera_module._core.autograd.__file__
        with open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()[:12]
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(path)))
    except (AttributeError, OSError):
        return None
    return f"{os.path.basename(path)} sha256 {digest}, built {stamp}"


def machine_info():
    model = None
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = None
    return {"cpu": model or platform.processor() or platform.machine(),
            "logical_cpus": os.cpu_count(), "usable_cpus": usable,
            "platform": platform.platform(), "load_average_at_start": os.getloadavg()}


def blas_name():
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:                    # the layout of show_config differs by version
        return None


def library_version(name, module=None):
    """A library's version: its module's ``__version__``, else its installed distribution's."""
    version = getattr(module, "__version__", None)
    if version is None:
        # (imported here: importlib.metadata brings email, zipfile, csv ...,
        # 1.5 MB the deep_chain_200k child would count in its peak RSS)
        import importlib.metadata
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return version


def versions(libraries):
    """Python's, NumPy's and BLAS's versions, and every library's asked for.

    oxmera's and PyTorch's keys are always there (None when not run); a peer's
    only when it was asked for (None when it did not import). JAX's entry has
    jaxlib's version beside it: jaxlib is the compiled half.
    """
    info = {"python": platform.python_version(), "numpy": np.__version__, "blas": blas_name()}
    oxmera_module = libraries.get("oxmera")
    info["oxmera"] = getattr(oxmera_module, "__version__", None) if oxmera_module else None
    info["oxmera_git"] = git_revision()
    info["oxmera_core"] = core_build(oxmera_module) if oxmera_module else None
    for name in ("torch", *PEERS):
        if name == "torch" or name in libraries:
            module = libraries.get(name)
            info[name] = library_version(name, module) if module else None
    if libraries.get("jax"):
        info["jaxlib"] = library_version("jaxlib")
    return info


# -- reports ------------------------------------------------------------------

def format_time(seconds):
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_ratio(ratio):
    return "—" if ratio is None else f"{ratio:.2f}×"


def lib_cell(entry, name, key):
    result = entry["libs"].get(name)
    if not result:
        return None
    if result.get("status") != "ok":
        return result.get("status", "—")
    return result.get(key)


def main_table(report):
    """Rows of the median-time table: workload, per-library medians, ratios to NumPy."""
    libraries = [n for n in REPORT_ORDER if n in report["libraries"]]
    others = [n for n in libraries if n != "numpy"]
    header = ["workload", *[f"{n} median" for n in libraries],
              *[f"{n} / numpy (min–max)" for n in others]]
    rows = []
    for entry in report["workloads"]:
        if entry["name"] == LONG_CHAIN:
            continue
        row = [entry["name"]]
        for name in libraries:
            value = lib_cell(entry, name, "median_s")
            row.append(format_time(value) if isinstance(value, float) else (value or "—"))
        for name in others:
            value = lib_cell(entry, name, "ratio_to_numpy")
            spread = lib_cell(entry, name, "ratio_range")
            if isinstance(value, float):
                row.append(f"{format_ratio(value)} ({spread[0]:.2f}–{spread[1]:.2f})")
            else:
                row.append("—")
        rows.append(row)
    return header, rows


def long_chain_table(report):
    header = ["library", "time", "peak RSS", "RSS before the graph", "status"]
    rows = []
    for entry in report["workloads"]:
        if entry["name"] != LONG_CHAIN:
            continue
        for name, result in entry["libs"].items():
            if result.get("status") == "ok":
                rows.append([name, f"{result['time_s']:.2f} s", f"{result['peak_rss_mb']:.0f} MB",
                             f"{result['rss_before_mb']:.0f} MB", "ok"])
            else:
                rows.append([name, "—", "—", "—",
                             f"{result.get('status')}: {result.get('reason')}"])
    return header, rows


def measured(report, workload, kind, library):
    for entry in report["workloads"]:
        if entry["name"] == workload:
            result = entry["libs"].get(library, {})
            if result.get("status") != "ok":
                return None
            return result.get("ratio_to_numpy" if kind == "ratio" else "peak_rss_mb")
    return None


def targets_table(report):
    """Issue 13's targets for oxmera; PyTorch's and every peer's that ran measured beside it."""
    peers = [n for n in PEERS if n in report["libraries"]]
    header = ["workload", "target", "oxmera measured", "PyTorch measured",
              *[f"{DISPLAY_NAMES[n]} measured" for n in peers], "met?", "PyTorch (issue 13)"]
    rows = []
    for workload, kind, target, issue_torch in TARGETS:
        name = "deep_chain 200k peak RSS" if kind == "peak_rss_mb" else workload
        ran = any(e["name"] == workload for e in report["workloads"])

        def show(value):
            if value is None:
                return "—"
            return f"{value:.0f} MB" if kind == "peak_rss_mb" else format_ratio(value)
        ours = measured(report, workload, kind, "oxmera")
        theirs = measured(report, workload, kind, "torch")
        if ours is None:
            if not ran:
                verdict = "not run"
            elif "oxmera" not in report["libraries"]:
                verdict = "oxmera not run"
            else:
                verdict = "not measured (see above)"
        elif ours <= target:
            verdict = "met"
        else:
            gap = ours / target - 1
            verdict = f"**missed** by {gap:.1%}" if gap < 0.1 else f"**missed** by {gap:.0%}"
        target_text = f"≤ {target:.0f} MB" if kind == "peak_rss_mb" else f"≤ {target:.2f}×"
        rows.append([name, target_text, show(ours), show(theirs),
                     *[show(measured(report, workload, kind, n)) for n in peers],
                     verdict, issue_torch])
    return header, rows


def not_timed(report):
    """One line per (workload, library) not timed, and one per library not importable."""
    lines, unavailable = [], {}
    for entry in report["workloads"]:
        if entry.get("error"):
            lines.append(f"{entry['name']}: {entry['error']}")
        for name, result in entry["libs"].items():
            status = result.get("status")
            if status == "unavailable":
                unavailable[name] = result.get("reason")
            elif status not in ("ok", None):
                lines.append(f"{entry['name']} / {name}: {status}, {result.get('reason')}")
    return [f"{name} (every workload): {why}" for name, why in unavailable.items()] + lines


def text_table(header, rows):
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def print_report(report):
    header, rows = main_table(report)
    if rows:
        print()
        print(text_table(header, rows))
    if any(e["name"] == LONG_CHAIN for e in report["workloads"]):
        print()
        print(f"{LONG_CHAIN} (one run per library, each in a child process)")
        print(text_table(*long_chain_table(report)))
    print()
    print("targets (ratios to hand-written NumPy, this run)")
    print(text_table(*targets_table(report)))
    missing = not_timed(report)
    if missing:
        print()
        print("not timed:")
        for line in missing:
            print("  " + line)


def peer_versions(version):
    """``", MyGrad 2.5.0, ..."``: the version of every peer the run asked for."""
    text = ""
    for name in PEERS:
        if name in version:
            text += f", {DISPLAY_NAMES[name]} {version[name] or 'not installed'}"
            if name == "jax" and version.get("jaxlib"):
                text += f" (jaxlib {version['jaxlib']})"
    return text


def write_markdown(report, path):
    notes = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            old = handle.read()
        if NOTES_BEGIN in old and NOTES_END in old:
            notes = old[old.index(NOTES_BEGIN) + len(NOTES_BEGIN):old.index(NOTES_END)].strip()
    machine, version, settings = report["machine"], report["versions"], report["settings"]
    cpus = f"{machine['logical_cpus']} logical CPUs ({machine['usable_cpus']} usable)"
    load = ", ".join(f"{x:.2f}" for x in machine["load_average_at_start"])
    parts = [
        "# oxmera benchmark results",
        "",
        f"Generated by `{settings['command']}` on {report['date']}. Times are "
        f"{'process CPU' if settings['clock'] == 'cpu' else 'wall-clock'} seconds per call "
        "(forward + backward with every gradient materialized, plus the SGD update for "
        "mlp_step), the median of "
        f"{settings['repeats']} samples per library taken in interleaved rounds after a "
        "warm-up; a ratio is the median over rounds of (library / hand-written NumPy in "
        "the same round). Every library's value and gradients were checked against NumPy's "
        "before it was timed; the ratio columns give, in parentheses, the smallest and "
        "largest per-round ratio. The workloads and the NumPy code are in "
        "`bench/workloads/`; `python bench/overhead.py` breaks one small op's cost down.",
        "",
    ]
    peers = [DISPLAY_NAMES[n] for n in PEERS if n in report["libraries"]]
    if peers:
        text = (f"The peer autograd libraries ({', '.join(peers)}) run the same math as their "
                "users write it (`bench/workloads/__init__.py`: `peer_ops`, `peer_step`).")
        if "jax" in report["libraries"]:
            text += (" JAX runs eagerly, `jax.value_and_grad` without `jax.jit`, with float64 "
                     "enabled: the comparison is between eager Python autograd engines.")
        parts += [text, ""]
    parts += [
        "## Machine and versions",
        "",
        f"- CPU: {machine['cpu']}, {cpus}; {machine['platform']}",
        f"- load average when the run started: {load} (the machine is shared: expect noise)",
        f"- threads: one for every library ({settings['threads']})",
        f"- Python {version['python']}, NumPy {version['numpy']} (BLAS: {version['blas']}), "
        f"PyTorch {version['torch'] or 'not installed'}" + peer_versions(version),
        f"- oxmera {version['oxmera']}, git {version['oxmera_git']}; "
        f"core {version['oxmera_core']}",
        "",
        "## Median time per call",
        "",
        markdown_table(*main_table(report)),
        "",
    ]
    if any(e["name"] == LONG_CHAIN for e in report["workloads"]):
        parts += [f"## deep_chain with {deep_chain_module.STEPS_LONG:,} steps",
                  "",
                  "One run per library, each in a child process that imports only that "
                  "library; the time includes freeing the graph; peak RSS is the child's "
                  "high-water mark (`VmHWM`: the whole process, interpreter and imports "
                  "included; `ru_maxrss` would include the runner's own, inherited).",
                  "",
                  markdown_table(*long_chain_table(report)),
                  ""]
    parts += ["## Targets (issue 13)", "", markdown_table(*targets_table(report)), ""]
    missing = not_timed(report)
    if missing:
        parts += ["## Not timed", ""] + [f"- {line}" for line in missing] + [""]
    parts += ["## Notes", "", NOTES_BEGIN, "", notes or "(none yet)", "", NOTES_END, ""]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(parts))


# -- command line -------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Time oxmera against hand-written NumPy, PyTorch, MyGrad, HIPS autograd "
        "and eager JAX (forward + backward).")
    parser.add_argument("--workloads", default=",".join(ALL_WORKLOADS),
                        help="comma-separated, from: " + ", ".join(ALL_WORKLOADS)
                        + " (default: all)")
    parser.add_argument("--libs", default=",".join(LIBRARIES),
                        help="comma-separated, from: " + ", ".join(LIBRARIES) + " (default: "
                        "all; numpy always runs, it is the reference; the others are skipped, "
                        "saying why, when they do not import)")
    parser.add_argument("--repeats", type=int, default=11,
                        help="samples per library per workload (default 11; the median is "
                        "reported; use at least 7)")
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="seconds one sample lasts at least (default 0.1)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="what the tables report: this process's CPU time (default; on "
                        "a shared machine it leaves out the time other processes held the "
                        "CPU, and every library runs on one thread) or wall-clock time; "
                        "the JSON has both")
    parser.add_argument("--json", default=os.path.join(BENCH_DIR, "results.json"),
                        help="where to write the JSON results (default bench/results.json; "
                        "'' for nowhere)")
    parser.add_argument("--markdown", default=None,
                        help="also write a Markdown report here (e.g. bench/RESULTS.md)")
    parser.add_argument("--timeout", type=float, default=900,
                        help="seconds a deep_chain_200k child may take (default 900)")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--from-json", metavar="PATH",
                        help="run nothing: print (and with --markdown write) the report of "
                        "an earlier run's JSON")
    parser.add_argument("--verbose", action="store_true",
                        help="print tracebacks of libraries that raise")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-steps", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    args.libs = [n.strip() for n in args.libs.split(",") if n.strip()]
    for name in args.workloads:
        if name not in ALL_WORKLOADS:
            parser.error(f"unknown workload {name!r}; choose from {', '.join(ALL_WORKLOADS)}")
    for name in args.libs:
        if name not in LIBRARIES:
            parser.error(f"unknown library {name!r}; choose from {', '.join(LIBRARIES)}")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def thread_settings(libraries):
    """How every library was held to one thread, for the report."""
    text = ", ".join(f"{v}=1" for v in THREAD_VARIABLES[:3]) + ", torch.set_num_threads(1)"
    if libraries.get("jax"):
        text += f", XLA_FLAGS={' '.join(XLA_THREAD_FLAGS)}, " + ", ".join(
            f"{k}={v}" for k, v in XLA_THREAD_VARIABLES.items())
    return text


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        child_main(args.child, args.child_steps)
        return 0
    if args.list:
        for workload in load_workloads(list(WORKLOAD_MODULES)):
            print(f"{workload.name:16} {workload.description}")
        print(f"{LONG_CHAIN:16} deep_chain with {deep_chain_module.STEPS_LONG:,} steps "
              "in a child process per library: time and peak RSS")
        return 0
    if args.from_json:
        with open(args.from_json, encoding="utf-8") as handle:
            report = json.load(handle)
        print_report(report)
        if args.markdown:
            write_markdown(report, args.markdown)
            log(f"wrote {args.markdown}")
        return 0
    if args.repeats < 7:
        log(f"note: --repeats {args.repeats} is fewer than the 7 the results should rest on")

    libraries, args.unavailable = {"numpy": np}, {}
    for name in args.libs:
        if name != "numpy":
            libraries[name], why = import_library(name)
            if why:
                args.unavailable[name] = why
                log(f"{name}: not timed, {why}")
    _pools, pool_info = limit_thread_pools()
    machine = machine_info()
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "machine": machine,
        "versions": versions(libraries),
        "libraries": list(libraries),
        "settings": {"command": "python bench/run.py " + " ".join(argv or sys.argv[1:]),
                     "repeats": args.repeats, "min_time_s": args.min_time,
                     "clock": args.clock,
                     "threads": thread_settings(libraries),
                     "thread_pools": pool_info},
        "workloads": [],
    }
    log(f"{machine['cpu']}, {machine['usable_cpus']} usable CPUs, load "
        f"{', '.join(f'{x:.2f}' for x in machine['load_average_at_start'])}")
    # The collector stays on at its default thresholds over everything imported,
    # as in a user's program (no gc.freeze()): every library here pays for the
    # objects of all the imported ones, torch's included, which only makes the
    # ratios of the autograd libraries worse (hand-written NumPy allocates no
    # collector-tracked objects). bench/gc_chain.py measures the deep chain in
    # fresh processes that import one library only.
    gc.collect()
    start = time.perf_counter()
    chosen = [w for w in args.workloads if w != LONG_CHAIN]
    for workload in load_workloads(chosen):
        report["workloads"].append(run_workload(workload, libraries, args))
    if LONG_CHAIN in args.workloads:
        report["workloads"].append(run_long_chain(libraries, args))
    report["elapsed_s"] = time.perf_counter() - start
    report["machine"]["load_average_at_end"] = os.getloadavg()
    log(f"done in {report['elapsed_s']:.0f} s")

    print_report(report)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1)
        log(f"wrote {args.json}")
    if args.markdown:
        write_markdown(report, args.markdown)
        log(f"wrote {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
