"""The reliability suites' switch between CI size and full size.

``--runslow`` (declared in tests/conftest.py, where pytest looks for command
line options) runs the tests marked ``slow`` and makes the scaled tests
(fuzzing, soaks, thread stress) run at full size; without it, slow tests are
skipped and the others run at CI size.
"""
import pytest


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="a long run: pass --runslow")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


@pytest.fixture
def runslow(request):
    """True when the full-size runs were asked for."""
    return bool(request.config.getoption("--runslow"))
