"""The cyclic garbage of oxmera, which the memory tests check is empty.

Imported by tests/core/test_memory.py and tests/reliability/test_gc_graph.py
(tests/ is on sys.path, as for ``ops._cases``); their collector-off fixture,
``no_gc``, is in conftest.py.
"""
import gc
import types

import numpy as np

import oxmera


def _ours(obj):
    if isinstance(obj, (oxmera.Tensor, oxmera.GradFn, oxmera.AutogradMeta, np.ndarray)):
        return True
    module = getattr(obj, "__module__", None) if isinstance(obj, types.FunctionType) \
        else type(obj).__module__
    return isinstance(module, str) and module.startswith("oxmera")


def cyclic_garbage():
    """Objects of oxmera (or arrays, or oxmera's functions) only the cycle collector could free."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return [obj for obj in gc.garbage if _ours(obj)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
