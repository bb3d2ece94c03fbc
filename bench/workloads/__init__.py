"""The benchmark workloads: one module each, the same math written once per library.

A workload module defines a :class:`Workload` named ``WORKLOAD``. For every
library it supports it has a *builder*: a function that takes the workload's
NumPy input data (``make_data()``, seeded, so every library starts from the
same numbers), sets up that library's state (leaf tensors, parameters) and
returns a ``step`` callable. One call of ``step()`` is one timed iteration: the
forward pass, the backward pass with every gradient materialized, and (for
``mlp_step``) the optimizer update. ``step()`` returns ``(value, grad, ...)``
so that the runner can check every library against NumPy before timing it.

The NumPy builders are hand-written forward and backward code (the manual
VJPs): the practical limit that oxmera's targets are ratios to. They reuse
buffers the way a careful person would (in-place ufuncs on temporaries the
forward made, ``out=``), fold the seed gradient of the final ``sum``/``mean``
(it is a constant) into the first VJP, and otherwise do the same math as the
autograd libraries: every VJP an autograd engine would run is run.

A builder raises :class:`Unavailable` when the library lacks something the
workload needs (an oxmera op that has not landed yet); the runner skips that
library for that workload and says why.

This package owns nothing of oxmera; ``bench/run.py`` is the runner.
"""
import importlib

__all__ = ["Workload", "Unavailable", "require", "WORKLOAD_MODULES", "load_workloads"]


class Unavailable(Exception):
    """A library cannot run a workload (a missing op, a missing package)."""


def require(obj, path):
    """Return ``obj.a.b`` for ``path="a.b"``, or raise Unavailable naming what is missing.

    ``obj`` is a module (``oxmera``); ``path`` is dotted, e.g.
    ``"nn.functional.cross_entropy"`` or ``"Tensor.sub_"``.
    """
    current = obj
    for part in path.split("."):
        try:
            current = getattr(current, part)
        except AttributeError:
            raise Unavailable(f"{obj.__name__}.{path} is not defined (yet)") from None
    return current


class Workload:
    """One benchmark: its inputs, tolerances and a builder per library.

    Parameters
    ----------
    name : str
        The name used on the command line and in the tables.
    description : str
        One line saying what is computed.
    make_data : callable
        ``make_data() -> dict`` of NumPy arrays (seeded).
    builders : dict
        ``{"numpy": build, "oxmera": build, "torch": build}``; each
        ``build(data) -> step``.
    rtol, atol : float
        Gradient-check tolerances against NumPy's outputs; ``atol`` is relative
        to the largest magnitude in each reference array.
    """

    def __init__(self, name, description, make_data, builders, rtol, atol):
        self.name = name
        self.description = description
        self.make_data = make_data
        self.builders = builders
        self.rtol = rtol
        self.atol = atol

    def __repr__(self):
        return f"Workload({self.name!r})"


# Default order of the runner's table (the order of issue 5).
WORKLOAD_MODULES = {
    "small_ops": "small_ops",
    "deep_chain": "deep_chain",
    "mlp_step": "mlp_step",
    "big_elementwise": "big_elementwise",
    "matmul": "matmul",
    "softmax_rows": "softmax_rows",
    "conv": "conv2d",
    "digits_cnn": "digits_cnn",
}


def load_workloads(names):
    """The Workload objects for ``names`` (keys of WORKLOAD_MODULES), in that order."""
    result = []
    for name in names:
        module = importlib.import_module(f"{__name__}.{WORKLOAD_MODULES[name]}")
        result.append(module.WORKLOAD)
    return result
