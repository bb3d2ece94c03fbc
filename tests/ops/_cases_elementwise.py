"""Gradient cases of the elementwise ops (see ``_case_table`` for the machinery)."""
import numpy as np

import oxmera

from ._case_table import (NO_GRADIENT_CALLS, T,
                          Leaf, add_cases, binary_cases, unary_cases)

# -- elementwise -----------------------------------------------------------------------

binary_cases("add", oxmera.add)
add_cases("add",
          ("operator", lambda x, y: x + y, (Leaf((3, 1)), Leaf((4,)))),
          ("roperator", lambda y: 2.5 + y, (Leaf((2, 2)),)),
          ("alpha", lambda x, y: oxmera.add(x, y, alpha=-2.5), (Leaf((3, 1)), Leaf((1, 4)))),
          ("same-tensor", lambda x: x + x, (Leaf((2, 3)),)))
binary_cases("sub", oxmera.sub)
add_cases("sub",
          ("operator", lambda x, y: x - y, (Leaf((2, 3)), Leaf((3,)))),
          ("roperator", lambda y: 2.5 - y, (Leaf((2, 2)),)),
          ("alpha", lambda x, y: oxmera.sub(x, y, alpha=3), (Leaf((3, 1)), Leaf((1, 4)))))
binary_cases("mul", oxmera.mul)
add_cases("mul",
          ("operator", lambda x, y: x * y, (Leaf((3, 1)), Leaf((1, 4)))),
          ("roperator", lambda y: 3 * y, (Leaf((2, 2)),)),
          ("square", lambda x: x * x, (Leaf((2, 3)),)))
binary_cases("div", oxmera.div)
add_cases("div",
          ("operator", lambda x, y: x / y, (Leaf((3, 1)), Leaf((1, 4)))),
          ("roperator", lambda y: 2.0 / y, (Leaf((2, 2)),)),
          ("true_divide", oxmera.true_divide, (Leaf((2, 3)), Leaf((3,)))),
          ("self", lambda x: x / x, (Leaf((2, 3)),)))
binary_cases("pow", oxmera.pow, left="positive")
add_cases("pow",
          ("operator", lambda x, y: x ** y, (Leaf((3, 1), "positive"), Leaf((1, 4)))),
          ("roperator", lambda y: 2.0 ** y, (Leaf((2, 2)),)),
          ("rint", lambda y: 3 ** y, (Leaf((2, 2)),)),
          ("square-negative-base", lambda x: x ** 2, (Leaf((2, 3)),)),
          ("cube-negative-base", lambda x: x ** 3, (Leaf((2, 3)),)),
          ("negative-int-exponent", lambda x: x ** -2, (Leaf((2, 3)),)),
          ("zero-exponent", lambda x: x ** 0, (Leaf((2, 3)),)),
          ("half", lambda x: x ** 0.5, (T((3, 2), "positive"),)),
          ("0d-exponent", oxmera.pow, (Leaf((2, 3), "positive"), Leaf(()))))
unary_cases("neg", oxmera.neg)
add_cases("neg", ("operator", lambda x: -x, (Leaf((2, 3)),)))
unary_cases("exp", oxmera.exp)
unary_cases("log", oxmera.log, "positive")
unary_cases("sqrt", oxmera.sqrt, "positive")
unary_cases("sin", oxmera.sin)
unary_cases("cos", oxmera.cos)
unary_cases("tanh", oxmera.tanh)
unary_cases("sigmoid", oxmera.sigmoid)
add_cases("sigmoid", ("both-branches", oxmera.sigmoid,
                      (Leaf((6,), values=(-30.0, -4.0, -0.5, 0.5, 4.0, 30.0)),)))
unary_cases("relu", oxmera.relu)
unary_cases("abs", oxmera.abs)
add_cases("abs", ("operator", lambda x: abs(x), (Leaf((2, 3)),)))
unary_cases("sign", oxmera.sign)

_CONDITION = np.array([[True, False, True, True], [False, False, True, False],
                       [True, True, False, True]])
add_cases("where",
          ("3x4-3x4", lambda x, y: oxmera.where(oxmera.tensor(_CONDITION), x, y),
           (Leaf((3, 4)), Leaf((3, 4)))),
          ("broadcast", lambda x, y: oxmera.where(oxmera.tensor(_CONDITION[:, :1]), x, y),
           (Leaf((1, 4)), Leaf((3, 4)))),
          ("condition-broadcast", lambda x, y: oxmera.where(oxmera.tensor(_CONDITION[0]), x, y),
           (Leaf((3, 1)), Leaf(()))),
          ("number", lambda x: oxmera.where(oxmera.tensor(_CONDITION), x, 0.0),
           (T((3, 4)),)),
          ("number-first", lambda y: oxmera.where(oxmera.tensor(_CONDITION), 1.5, y),
           (Leaf((4,)),)),
          ("0d", lambda x, y: oxmera.where(oxmera.tensor(True), x, y), (Leaf(()), Leaf(()))),
          ("size-0", lambda x, y: oxmera.where(oxmera.zeros(0, 3) > 0, x, y),
           (Leaf((0, 3)), Leaf((3,)))),
          ("from-comparison", lambda x, y: oxmera.where(x > y, x, y),
           (Leaf((3, 4)), Leaf((4,)))))


# -- non-differentiable ops --------------------------------------------------------------------

NO_GRADIENT_CALLS.update({
    "eq": lambda x, y: oxmera.eq(x, y),
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: oxmera.lt(x, y),
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x.gt(y),
    "ge": lambda x, y: oxmera.ge(x * 2, 1.0),
})
