"""Gradient cases of the reduce ops (see ``_case_table`` for the machinery)."""
import numpy as np

import oxmera

from ._case_table import (S, T,
                          Leaf, add_cases)

# -- reductions --------------------------------------------------------------------------

def reduction_cases(name, fn):
    add_cases(
        name,
        ("all", lambda x: fn(x), (Leaf((3, 4)),)),
        ("dim0", lambda x: fn(x, 0), (Leaf((3, 4)),)),
        ("dim-neg", lambda x: fn(x, dim=-1), (Leaf((2, 3, 4)),)),
        ("dim-tuple", lambda x: fn(x, dim=(0, 2)), (Leaf((2, 3, 4)),)),
        ("dim-tuple-neg", lambda x: fn(x, (-1, 0), keepdim=True), (Leaf((2, 3, 4)),)),
        ("keepdim", lambda x: fn(x, 1, keepdim=True), (Leaf((3, 4)),)),
        ("axis", lambda x: fn(x, axis=1), (Leaf((3, 4)),)),
        ("0d", lambda x: fn(x), (Leaf(()),)),
        ("0d-dim", lambda x: fn(x, 0), (Leaf(()),)),
        ("size-0-kept-dim", lambda x: fn(x, 1), (Leaf((0, 3)),)),
        ("transposed", lambda x: fn(x, 0), (T((3, 4)),)),
        ("strided-all", lambda x: fn(x), (S((2, 3)),)),
        ("method", lambda x: getattr(x, name)(dim=1), (Leaf((2, 3)),)),
    )


reduction_cases("sum", oxmera.sum)
add_cases("sum",
          ("size-0-all", lambda x: x.sum(), (Leaf((0, 3)),)),
          ("size-0-reduced-dim", lambda x: x.sum(0), (Leaf((0, 3)),)),
          ("dtype", lambda x: x.sum(dtype=np.float64), (Leaf((2, 3)),)))
reduction_cases("mean", oxmera.mean)


def extreme_cases(name, fn):
    add_cases(
        name,
        ("all", lambda x: fn(x), (Leaf((3, 4), "distinct"),)),
        ("dim0", lambda x: fn(x, 0).values, (Leaf((3, 4), "distinct"),)),
        ("dim-neg", lambda x: fn(x, dim=-1).values, (Leaf((2, 3, 4), "distinct"),)),
        ("keepdim", lambda x: fn(x, 1, keepdim=True).values, (Leaf((3, 4), "distinct"),)),
        ("axis", lambda x: fn(x, axis=0).values, (Leaf((3, 4), "distinct"),)),
        ("named-tuple", lambda x: fn(x, 1), (Leaf((2, 3), "distinct"),)),
        ("0d", lambda x: fn(x), (Leaf(()),)),
        ("0d-dim", lambda x: fn(x, 0).values, (Leaf(()),)),
        ("size-0-kept-dim", lambda x: fn(x, 1).values, (Leaf((0, 3)),)),
        ("transposed", lambda x: fn(x, 1).values, (Leaf((3, 4), "distinct", "transposed"),)),
        ("method", lambda x: getattr(x, name)(), (Leaf((5,), "distinct"),)),
        # At a tie of two, central differences see half the slope on each
        # side, which is exactly the even split; the gradient is not smooth
        # there, so only the first order is checked.
        ("tie-all", lambda x: fn(x), (Leaf((3,), values=(3.0, 1.0, 3.0) if name == "max"
                                           else (1.0, 3.0, 1.0)),), {"second_order": False}),
        ("tie-dim", lambda x: fn(x, 1).values,
         (Leaf((2, 3), values=(2.0, 2.0, -1.0, 0.5, -1.0, 0.5) if name == "max"
               else (-1.0, -1.0, 2.0, 0.5, 1.0, 0.5)),),
         {"second_order": False}),
    )


extreme_cases("max", oxmera.max)
extreme_cases("min", oxmera.min)

add_cases("sum_to",
          ("leading", lambda x: oxmera.sum_to(x, (4,)), (Leaf((3, 4)),)),
          ("keep-1", lambda x: oxmera.sum_to(x, (1, 4)), (Leaf((3, 4)),)),
          ("both", lambda x: oxmera.sum_to(x, (3, 1)), (Leaf((2, 3, 4)),)),
          ("to-0d", lambda x: oxmera.sum_to(x, ()), (Leaf((3,)),)),
          ("same", lambda x: oxmera.sum_to(x, (2, 3)), (Leaf((2, 3)),)),
          ("0d", lambda x: oxmera.sum_to(x, ()), (Leaf(()),)),
          ("size-0", lambda x: oxmera.sum_to(x, (1, 3)), (Leaf((0, 3)),)),
          ("transposed", lambda x: oxmera.sum_to(x, (4,)), (T((3, 4)),)))
