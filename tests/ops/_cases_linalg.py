"""Gradient cases of the linalg ops (see ``_case_table`` for the machinery)."""
import numpy as np

import oxmera

from ._case_table import (shape_label, T,
                          Leaf, add_cases, const)

# -- linear algebra ------------------------------------------------------------------------

#: matmul operand shapes: every combination of ranks NumPy's rules allow.
MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (2, 3, 4)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((2, 2, 3), (3,)),
    ((3,), (2, 3, 2)),
    ((1, 3), (2, 3, 2)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
]

add_cases("matmul", *[(f"{shape_label(a)}-{shape_label(b)}", oxmera.matmul,
                       (Leaf(a), Leaf(b))) for a, b in MATMUL_SHAPES])
add_cases("matmul",
          ("operator", lambda x, y: x @ y, (Leaf((2, 3)), Leaf((3, 2)))),
          ("transposed", oxmera.matmul, (T((3, 2)), T((2, 4)))),
          ("mT", lambda x, y: x @ y.mT, (Leaf((2, 3)), Leaf((4, 3)))),
          ("no-grad-right", oxmera.matmul, (Leaf((2, 3)), const((3, 2)))),
          ("ndarray-right", lambda x: x @ np.arange(6.0).reshape(3, 2), (Leaf((2, 3)),)),
          ("ndarray-left", lambda y: np.arange(6.0).reshape(2, 3) @ y, (Leaf((3, 2)),)),
          ("quadratic", lambda x: x @ x, (Leaf((3, 3)),)))
