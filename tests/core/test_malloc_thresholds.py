"""glibc's malloc thresholds, raised when oxmera is imported.

A training step frees arrays of a few MiB that the next step allocates again.
At glibc's starting thresholds those pages go back to the kernel and are
faulted in again every step; ``import oxmera`` raises the thresholds as freeing
one 32 MiB block would (``oxmera._core._kernels.raise_malloc_thresholds``), and
``OXMERA_MALLOC_THRESHOLDS=0`` leaves them alone. Each case runs in a fresh
interpreter: the thresholds are process state that any earlier large free
changes.
"""
import os
import platform
import subprocess
import sys
import textwrap

import pytest

import oxmera

OXMERA_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(oxmera.__file__)))

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc",
                                reason="the thresholds are glibc's")

# Four 1 MiB arrays made and freed ten times, as a step's gradients are: the
# minor page faults the last nine rounds took (the first round faults anyway).
STEPS = textwrap.dedent("""
    import resource, sys
    sys.path.insert(0, {root!r})
    if {import_oxmera}:
        import oxmera
    import numpy as np

    def step():
        arrays = [np.ones(1 << 18, np.float32) for _ in range(4)]
        return sum(float(a[0]) for a in arrays)

    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(9):
        step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def faults(import_oxmera, setting=None):
    env = dict(os.environ)
    env.pop("OXMERA_MALLOC_THRESHOLDS", None)
    if setting is not None:
        env["OXMERA_MALLOC_THRESHOLDS"] = setting
    code = STEPS.format(root=OXMERA_ROOT, import_oxmera=import_oxmera)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


PAGES_A_ROUND = 4 * (1 << 20) // 4096


def test_a_step_of_mib_arrays_reuses_its_pages_after_import():
    baseline = faults(import_oxmera=False)
    if baseline < 9 * PAGES_A_ROUND // 2:
        pytest.skip(f"this malloc keeps the pages without help ({baseline} faults)")
    assert faults(import_oxmera=True) < PAGES_A_ROUND // 4


def test_setting_it_to_zero_leaves_malloc_alone():
    baseline = faults(import_oxmera=False)
    if baseline < 9 * PAGES_A_ROUND // 2:
        pytest.skip(f"this malloc keeps the pages without help ({baseline} faults)")
    assert faults(import_oxmera=True, setting="0") >= 9 * PAGES_A_ROUND // 2


def test_the_call_reports_what_it_did():
    from oxmera._core import _kernels
    assert _kernels.raise_malloc_thresholds() is True     # glibc: done (again, harmless)
