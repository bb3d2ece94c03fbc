"""Pin BLAS/OpenMP to one thread before NumPy is imported (no NumPy import here).

Imported first by the benchmark scripts: the thread pools of OpenBLAS, MKL
and OpenMP read these variables once, when the library loads.
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
