"""Every case table, filled: imports each ``_cases_<topic>.py`` beside it.

The machinery (specs, :class:`Case`, the tables) is in ``_case_table``; each
topic module registers its ops' cases into those tables when imported. The
topic modules are found by name, so a new one needs no edit here.
"""
import importlib
import pathlib

from ._case_table import *  # noqa: F401,F403
from ._case_table import (BROADCAST_PAIRS, COMPOSITE_CASES, GRADIENT_CASES, NO_GRADIENT_CALLS,
                          TORCH_CASES, Case, Leaf, TorchCase, all_cases, sample)

TOPICS = sorted(p.stem for p in pathlib.Path(__file__).parent.glob("_cases_*.py"))
for _topic in TOPICS:
    importlib.import_module(f"{__package__}.{_topic}")

__all__ = ["BROADCAST_PAIRS", "COMPOSITE_CASES", "GRADIENT_CASES", "NO_GRADIENT_CALLS",
           "TORCH_CASES", "Case", "Leaf", "TorchCase", "all_cases", "sample", "TOPICS"]
