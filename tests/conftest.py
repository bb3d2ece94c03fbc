"""Fixtures shared by every test: each test starts and ends in the default state.

Some tests change the default dtype or grad mode on purpose; one that leaked
either would make every later test in the process check something else, so
the autouse fixture resets both and fails the leaking test instead.
"""
import numpy as np
import pytest

import oxmera


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False,
                     help="also run the long reliability runs (tests marked slow; thousands "
                          "of fuzzed programs, full-size soaks, 30 s thread stress)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long run, only with --runslow")


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
