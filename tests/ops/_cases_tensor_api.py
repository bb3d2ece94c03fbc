"""Gradient cases and PyTorch comparisons of ``oxmera.ops.tensor_api`` (see ``_case_table``).

``unfold`` and ``unfold_backward`` are the primitives; ``narrow``,
``select``, ``t``, ``adjoint``, ``swapdims``, ``ravel`` and the ``*_as``
methods record slicing, indexing, transpose, reshape and expand, so their
gradients are checked as composite cases and their values and gradients
against PyTorch under their own names. ``view(dtype)`` is not
differentiable (as in PyTorch).
"""
import oxmera
from oxmera.ops.tensor_api import unfold_backward

from ._case_table import (COMPOSITE_CASES, NO_GRADIENT_CALLS, S, T, Case, Leaf, add_cases,
                          add_torch_cases)

# -- unfold: overlapping windows, gaps, every layout ----------------------------------------

add_cases("unfold",
          ("overlap", lambda x: x.unfold(0, 3, 2), (Leaf((7,)),)),
          ("step-1", lambda x: x.unfold(0, 2, 1), (Leaf((5,)),)),
          ("gaps", lambda x: x.unfold(0, 2, 3), (Leaf((8,)),)),
          ("whole", lambda x: x.unfold(0, 4, 1), (Leaf((4,)),)),
          ("more-offsets-than-windows", lambda x: x.unfold(1, 4, 1), (Leaf((2, 5)),)),
          ("middle-dim", lambda x: x.unfold(1, 2, 1), (Leaf((2, 4, 3)),)),
          ("negative-dim", lambda x: x.unfold(-1, 3, 1), (Leaf((2, 5)),)),
          ("size-0-window", lambda x: x.unfold(0, 0, 1), (Leaf((3,)),)),
          ("size-0-input", lambda x: x.unfold(1, 2, 1), (Leaf((0, 4)),)),
          ("0d", lambda x: x.unfold(0, 1, 1), (Leaf(()),)),
          ("transposed", lambda x: x.unfold(0, 2, 1), (T((4, 3)),)),
          ("strided", lambda x: x.unfold(1, 2, 2), (S((3, 5)),)),
          ("twice", lambda x: x.unfold(0, 2, 1).unfold(1, 2, 1), (Leaf((4, 5)),)),
          ("then-arithmetic", lambda x: (x.unfold(0, 3, 1) ** 2).sum(-1), (Leaf((6,)),)))
add_cases("unfold_backward",
          ("overlap", lambda g: unfold_backward(g, (7,), 0, 3, 2), (Leaf((3, 3)),)),
          ("gaps", lambda g: unfold_backward(g, (8,), 0, 2, 3), (Leaf((3, 2)),)),
          ("middle-dim", lambda g: unfold_backward(g, (2, 4, 3), 1, 2, 1), (Leaf((2, 3, 3, 2)),)),
          ("0d", lambda g: unfold_backward(g, (), 0, 1, 1), (Leaf((1,)),)),
          ("size-0", lambda g: unfold_backward(g, (0, 4), 1, 2, 1), (Leaf((0, 3, 2)),)),
          ("transposed", lambda g: unfold_backward(g, (4,), 0, 2, 1), (T((3, 2)),)))

add_torch_cases("unfold",
                ("overlap", lambda lib, x: x.unfold(0, 3, 2), (Leaf((7,)),)),
                ("gaps", lambda lib, x: x.unfold(0, 2, 3), (Leaf((8,)),)),
                ("middle-dim", lambda lib, x: x.unfold(1, 2, 1), (Leaf((2, 4, 3)),)),
                ("more-offsets-than-windows", lambda lib, x: x.unfold(1, 4, 1), (Leaf((2, 5)),)),
                ("size-0-window", lambda lib, x: x.unfold(0, 0, 1), (Leaf((3,)),)),
                ("0d", lambda lib, x: x.unfold(0, 1, 1), (Leaf(()),)))


def _unfold_backward(lib, grad, shape, dim, size, step):
    if lib is oxmera:
        return unfold_backward(grad, shape, dim, size, step)
    return lib.ops.aten.unfold_backward(grad, list(shape), dim, size, step)


add_torch_cases("unfold_backward",
                ("overlap", lambda lib, g: _unfold_backward(lib, g, (7,), 0, 3, 2),
                 (Leaf((3, 3)),)),
                ("middle-dim", lambda lib, g: _unfold_backward(lib, g, (2, 4, 3), 1, 2, 1),
                 (Leaf((2, 3, 3, 2)),)))

# -- view(dtype): not differentiable ----------------------------------------------------------

NO_GRADIENT_CALLS.update({
    "view_dtype": lambda x, y: x.view(oxmera.int64),
})
add_torch_cases("view_dtype",
                ("same-size", lambda lib, x: x.view(lib.int64), (Leaf((2, 3)),), {"grad": False}),
                ("smaller", lambda lib, x: x.view(lib.int32), (Leaf((2, 3)),), {"grad": False}),
                ("larger", lambda lib, x: x.to(lib.float32).view(lib.float64),
                 (Leaf((3, 4)),), {"grad": False}))

# -- composites: checked to second order, and against PyTorch ---------------------------------

COMPOSITE_CASES.extend([
    Case("composite:narrow",
         lambda x: x.narrow(1, 1, 2) * oxmera.narrow(x, 0, -1, 1).narrow(1, 0, 2),
         (Leaf((3, 4)),)),
    Case("composite:select", lambda x: x.select(1, -1) * oxmera.select(x, 0, 1).sum(),
         (T((3, 4)),)),
    Case("composite:t-adjoint-swapdims", lambda x, v: x.t() @ v.t() + x.adjoint().sum()
         + oxmera.swapdims(x, 0, 1).sum(), (Leaf((3, 2)), Leaf((3,)))),
    Case("composite:ravel-view_as-reshape_as-expand_as",
         lambda x, y: x.ravel().view_as(y) * y.reshape_as(x).ravel().reshape_as(y)
         + x[:1].expand_as(x).reshape_as(y), (Leaf((2, 3)), Leaf((3, 2)))),
])

add_torch_cases("narrow",
                ("dim-1", lambda lib, x: x.narrow(1, 1, 2), (Leaf((3, 4)),)),
                ("negative-start", lambda lib, x: lib.narrow(x, 0, -2, 2), (Leaf((3, 4)),)),
                ("empty", lambda lib, x: x.narrow(0, 3, 0), (Leaf((3, 4)),)))
add_torch_cases("select",
                ("dim-1", lambda lib, x: x.select(1, 2), (Leaf((3, 4)),)),
                ("negative", lambda lib, x: lib.select(x, -1, -1), (Leaf((2, 3, 4)),)))
add_torch_cases("t",
                ("2d", lambda lib, x: x.t(), (Leaf((2, 3)),)),
                ("1d", lambda lib, x: lib.t(x), (Leaf((3,)),)),
                ("0d", lambda lib, x: x.t(), (Leaf(()),)))
add_torch_cases("adjoint",
                ("3d", lambda lib, x: x.adjoint(), (Leaf((2, 3, 4)),)),
                ("function", lambda lib, x: lib.adjoint(x), (Leaf((3, 2)),)))
add_torch_cases("swapdims",
                ("3d", lambda lib, x: lib.swapdims(x, 0, 2), (Leaf((2, 3, 4)),)),
                ("method", lambda lib, x: x.swapdims(-1, 0), (Leaf((2, 3)),)))
add_torch_cases("ravel",
                ("2d", lambda lib, x: x.ravel(), (Leaf((2, 3)),)),
                ("0d", lambda lib, x: lib.ravel(x), (Leaf(()),)))
add_torch_cases("view_as",
                ("2d", lambda lib, x, y: x.view_as(y), (Leaf((2, 3)), Leaf((3, 2)))))
add_torch_cases("reshape_as",
                ("2d", lambda lib, x, y: x.t().reshape_as(y), (Leaf((2, 3)), Leaf((6,)))))
add_torch_cases("expand_as",
                ("2d", lambda lib, x, y: x.expand_as(y), (Leaf((3, 1)), Leaf((2, 3, 4)))))
add_torch_cases("type_as",
                ("float32", lambda lib, x, y: x.type_as(y.to(lib.float32)),
                 (Leaf((2, 3)), Leaf((1,))), {"atol": 1e-6, "rtol": 1e-6}),
                ("int", lambda lib, x, y: (x * 4).type_as(y.long()),
                 (Leaf((2, 3)), Leaf((1,))), {"grad": False}))
