"""Pin BLAS/OpenMP (and JAX's XLA) to one thread before NumPy is imported (no NumPy import here).

Imported first by the benchmark scripts: the thread pools of OpenBLAS, MKL
and OpenMP read these variables once, when the library loads; XLA reads its
own when JAX creates its CPU client (``pin_xla_threads``, called by
``bench/run.py`` before it imports JAX).
"""
import os
import sys

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def pin_threads_in_environment():
    """Set the thread variables to 1; re-exec the script if NumPy was loaded before."""
    changed = False
    for name in THREAD_VARIABLES:
        if os.environ.get(name) != "1":
            os.environ[name] = "1"
            changed = True
    if changed and "numpy" in sys.modules and not os.environ.get("OXMERA_BENCH_REEXEC"):
        os.environ["OXMERA_BENCH_REEXEC"] = "1"
        os.execv(sys.executable, [sys.executable, *sys.argv])


# XLA's CPU client (JAX) reads these when it is created, at JAX's first use.
XLA_THREAD_FLAGS = ("--xla_cpu_multi_thread_eigen=false", "intra_op_parallelism_threads=1")
XLA_THREAD_VARIABLES = {"PJRT_NPROC": "1"}


def pin_xla_threads():
    """Give JAX's XLA CPU backend one compute thread; call before JAX is imported.

    ``XLA_FLAGS`` gets the two flags long recommended for this, replacing any
    value the environment gave them and keeping its other flags. On jaxlib
    0.10 they alone no longer keep a large dot on one thread (measured: a
    2048x2048 float32 matmul still spread over three), so ``PJRT_NPROC=1`` is
    set too: XLA's PJRT CPU client sizes its compute pool from it (from the
    CPU count without it).
    """
    ours = {flag.split("=")[0]: flag for flag in XLA_THREAD_FLAGS}
    kept = [flag for flag in os.environ.get("XLA_FLAGS", "").split()
            if flag.split("=")[0] not in ours]
    os.environ["XLA_FLAGS"] = " ".join([*kept, *ours.values()])
    os.environ.update(XLA_THREAD_VARIABLES)
