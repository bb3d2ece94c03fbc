"""Print options: how ``repr(tensor)`` shows values (``set_printoptions``).

The options and their profiles are PyTorch's (``torch.set_printoptions``);
the values are laid out by NumPy's ``array2string`` with them. The compiled
core writes the rest of the repr (``tensor(``, ``dtype=``, ``grad_fn=``) and
calls :func:`format_values` for the values, installed when this module is
imported. The options are global to the process, as in PyTorch.
"""
import math
import operator
import sys

import numpy as np

from oxmera._core import autograd as _core

__all__ = ["set_printoptions", "get_printoptions"]

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

_options = {**_PROFILES["default"], "sci_mode": None}


def _count(name, value):
    # A count of digits, items or columns: an int >= 0 (threshold may be inf).
    if name == "threshold" and isinstance(value, float) and value == math.inf:
        return value
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"set_printoptions(): {name} must be an int, got "
                        f"{type(value).__name__} {value!r}") from None
    if value < 0:
        raise ValueError(f"set_printoptions(): {name} must be non-negative, got {value}")
    return value


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print (PyTorch's ``torch.set_printoptions``).

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point for floating values (default 4).
    threshold : int, optional
        Tensors with more elements than this are summarized with ``...``
        (default 1000; ``math.inf`` never summarizes).
    edgeitems : int, optional
        Items shown at each end of each dimension when summarizing (default 3).
    linewidth : int, optional
        Characters per line before wrapping (default 80).
    profile : {"default", "short", "full"}, optional
        Set the four options above at once: ``"short"`` is precision 2 and 2
        edge items, ``"full"`` never summarizes. Options given alongside a
        profile override it.
    sci_mode : bool or None
        True always uses scientific notation, False never does, None (the
        default) chooses per tensor. As in PyTorch, every call sets it: a call
        without ``sci_mode`` turns it back to None.

    Unlike PyTorch, which ignores an unknown profile, an unknown profile is a
    ``ValueError``; nothing is changed by a call that raises.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.set_printoptions(precision=2)
    >>> oxmera.tensor([1.12345])
    tensor([1.12], dtype=float32)
    >>> oxmera.set_printoptions(threshold=5)
    >>> oxmera.arange(10)
    tensor([0, 1, 2, ..., 7, 8, 9], dtype=int64)
    >>> oxmera.set_printoptions(profile="default")
    >>> oxmera.tensor([1.12345])
    tensor([1.1235], dtype=float32)
    """
    new = dict(_options)
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions(): unknown profile {profile!r}; expected one "
                             f"of {sorted(_PROFILES)}")
        new.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            new[name] = _count(name, value)
    if sci_mode is not None and not isinstance(sci_mode, (bool, np.bool_)):
        raise TypeError(f"set_printoptions(): sci_mode must be True, False or None, got "
                        f"{sci_mode!r}")
    new["sci_mode"] = None if sci_mode is None else bool(sci_mode)
    _options.update(new)


def get_printoptions():
    """The current print options, as a dict that ``set_printoptions(**...)`` accepts.

    Examples
    --------
    >>> import oxmera
    >>> options = oxmera.get_printoptions()
    >>> options["precision"], options["threshold"], options["sci_mode"]
    (4, 1000, None)
    >>> oxmera.set_printoptions(**options)
    """
    return dict(_options)


def format_values(array, prefix):
    """The values of ``array`` as ``repr(tensor)`` shows them, under the print options.

    ``prefix`` is what precedes them on the first line (``"tensor("``):
    continuation lines are indented to align under it.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera._printing import format_values
    >>> format_values(np.array([1.0, 2.25]), "tensor(")
    '[1.  , 2.25]'
    """
    options = _options
    precision = options["precision"]
    threshold = options["threshold"]
    formatter = None
    if options["sci_mode"] and array.dtype.kind == "f":
        formatter = {"float_kind": lambda x: np.format_float_scientific(
            x, precision=precision, unique=False)}
    return np.array2string(
        array, max_line_width=options["linewidth"], precision=precision,
        suppress_small=options["sci_mode"] is False, separator=", ", prefix=prefix,
        formatter=formatter, edgeitems=options["edgeitems"],
        # NumPy wants a finite threshold; "never summarize" is the largest one.
        threshold=sys.maxsize if threshold == math.inf else threshold)


_core.set_values_formatter(format_values)
