"""Build the compiled core of oxmera.

One directive set for every Cython module. Environment switches:

- ``OXMERA_DEBUG=1`` turns on bounds, wraparound and initialization checks
  (and keeps assertions), for the debug test run.
- ``OXMERA_NO_ANOMALY=1`` compiles anomaly mode out (to measure that it
  costs nothing when off: ``bench/feature_cost.py``); ``OXMERA_NO_SAVED_LOCKS=1``
  compiles out the read-only saved arrays (mutation safety), to measure them;
  ``OXMERA_NO_PROFILER=1`` compiles out the profiler's tests (oxmera.profiler).
- ``OXMERA_ANNOTATE=1`` writes the ``cython -a`` HTML report next to each
  ``.pyx`` file, to find Python object traffic on the hot paths.
"""
import os
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("OXMERA_DEBUG", "") == "1"
ANNOTATE = os.environ.get("OXMERA_ANNOTATE", "") == "1"
NO_ANOMALY = os.environ.get("OXMERA_NO_ANOMALY", "") == "1"
NO_SAVED_LOCKS = os.environ.get("OXMERA_NO_SAVED_LOCKS", "") == "1"
NO_PROFILER = os.environ.get("OXMERA_NO_PROFILER", "") == "1"

directives = {
    "language_level": 3,
    "embedsignature": True,
    "binding": True,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
}

extensions = [
    Extension(
        "oxmera._core.autograd",
        ["oxmera/_core/autograd.pyx"],
        depends=["oxmera/_core/_ufunc_table.h"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
        + ([("OXMERA_NO_ANOMALY", "1")] if NO_ANOMALY else [])
        + ([("OXMERA_NO_SAVED_LOCKS", "1")] if NO_SAVED_LOCKS else [])
        + ([("OXMERA_NO_PROFILER", "1")] if NO_PROFILER else []),
        extra_compile_args=["-O0", "-g"] if DEBUG else [],
    ),
    # Elementwise C kernels (erf): -fno-trapping-math lets GCC and Clang turn
    # their branch-free selects into vector blends (no one reads the
    # floating-point exception flags they would set; MSVC has no such flag);
    # -fno-math-errno lets them vectorize sqrt (Adam's step), which otherwise
    # calls libm to set errno for a negative argument (no one reads errno).
    Extension(
        "oxmera._core._kernels",
        ["oxmera/_core/_kernels.pyx"],
        depends=["oxmera/_core/_kernels.h", "oxmera/_core/_conv_kernels.h",
                 "oxmera/_core/_ufunc_table.h"],
        include_dirs=[numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=(["-O0", "-g"] if DEBUG
                            else [] if sys.platform == "win32"
                            else ["-fno-trapping-math", "-fno-math-errno"]),
    ),
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=directives,
        annotate=ANNOTATE,
        # Debug and release builds must not share cached C files.
        force=DEBUG or NO_ANOMALY or NO_SAVED_LOCKS or NO_PROFILER,
    )
)
