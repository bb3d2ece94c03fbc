"""Public modules show their API, not their imports: ``dir(oxmera.nn.functional)`` has no ``np``."""
import importlib
import pkgutil
import types

import pytest

import oxmera

PUBLIC = sorted(m.name for m in pkgutil.walk_packages(oxmera.__path__, "oxmera.")
                if not any(part.startswith("_") for part in m.name.split(".")[1:])
                and m.name != "oxmera.demo")       # a script: no __all__


@pytest.mark.parametrize("name", ["oxmera"] + PUBLIC)
def test_dir_lists_the_api_only(name):
    module = importlib.import_module(name)
    assert hasattr(module, "__all__"), f"{name} has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    extra = [n for n in dir(module) if not n.startswith("_") and n not in module.__all__
             and not isinstance(getattr(module, n), types.ModuleType)]
    assert not extra, f"dir({name}) shows names outside __all__: {extra}"


def test_imports_stay_reachable():
    # Hidden from dir(), not removed: code that reached them keeps working.
    assert oxmera.nn.functional.np is importlib.import_module("numpy")
    assert "np" not in dir(oxmera.nn.functional)
