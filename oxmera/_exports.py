"""What ``dir()`` shows of oxmera's public modules: their ``__all__``, not their imports.

Modules import NumPy as ``np``, helpers from other modules and so on; those
are not part of the API, yet ``dir(oxmera.nn.functional)`` (and so tab
completion) listed them. Rather than renaming every import, each public
module gets a module-level ``__dir__`` (PEP 562) listing its ``__all__``, its
submodules and its dunders. :func:`tidy_loaded_modules` gives it to every
public module loaded when ``import oxmera`` ends; a public module imported
later on its own (``oxmera.demo``) calls :func:`tidy` at its end.
"""
import sys
import types


def _is_public(name):
    return name == "oxmera" or (name.startswith("oxmera.")
                                and not any(part.startswith("_") for part in name.split(".")))


def tidy(module):
    """Make ``dir(module)`` list its ``__all__``, public submodules and dunders only."""
    if not hasattr(module, "__all__") or "__dir__" in vars(module):
        return

    def __dir__():
        names = set(module.__all__)
        for key, value in vars(module).items():
            if key.startswith("__") and key.endswith("__"):
                names.add(key)
            elif (isinstance(value, types.ModuleType) and not key.startswith("_")
                  and value.__name__ == f"{module.__name__}.{key}"):
                names.add(key)
        return sorted(names)

    module.__dir__ = __dir__


def tidy_loaded_modules():
    """:func:`tidy` every public oxmera module imported so far."""
    for name, module in list(sys.modules.items()):
        if module is not None and _is_public(name):
            tidy(module)
