"""Fixtures shared by every test: each test starts and ends in the default state.

Some tests change the default dtype or grad mode on purpose; one that leaked
either would make every later test in the process check something else, so
the autouse fixture resets both and fails the leaking test instead.
"""
import gc
import sys

import numpy as np
import pytest

import oxmera


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the long reliability runs (tests marked slow; thousands "
                          "of fuzzed programs, full-size soaks, 30 s thread stress)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long run, only with --runslow")


# Modules whose tests fork the test process itself (DataLoader workers started
# with the fork method). They run first, before any test starts a native
# thread pool: SciPy's FFT pool (ducc0, started by the scipy.signal tests)
# joins its threads in an atfork handler, and a CI run on 3.13 deadlocked
# there, in os.fork() inside test_iterable_dataset_sharding_is_the_users_job.
_FORKING_MODULES = ("test_data_workers.py",)


def pytest_collection_modifyitems(config, items):
    forking = [item for item in items if item.path.name in _FORKING_MODULES]
    if forking:
        rest = [item for item in items if item.path.name not in _FORKING_MODULES]
        items[:] = forking + rest


@pytest.fixture(autouse=True)
def _default_state():
    oxmera.set_default_dtype(oxmera.float32)
    oxmera.autograd.grad_mode._set(True)
    yield
    leaked_mode = not oxmera.is_grad_enabled()
    leaked_dtype = oxmera.get_default_dtype() != np.float32
    oxmera.autograd.grad_mode._set(True)
    oxmera.set_default_dtype(oxmera.float32)
    assert not leaked_mode, "the test left grad mode disabled"
    assert not leaked_dtype, "the test left the default dtype changed"


@pytest.fixture
def no_gc():
    """The collector off for the test (what is freed, reference counting freed)."""
    # pytest keeps the last failure's traceback in sys.last_* until the next
    # test's call phase; drop it now, so its garbage is collected here and not
    # mistaken for ours later.
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
