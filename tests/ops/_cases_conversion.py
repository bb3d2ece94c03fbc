"""Gradient cases of the conversion ops (see ``_case_table`` for the machinery)."""
import numpy as np

import oxmera
from oxmera.ops.conversion import _cast

from ._case_table import (add_torch_cases, S, T,
                          Leaf, add_cases)

# -- conversion ------------------------------------------------------------------------------

add_cases("clone",
          ("2d", oxmera.clone, (Leaf((2, 3)),)),
          ("0d", lambda x: x.clone(), (Leaf(()),)),
          ("size-0", lambda x: x.clone(), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.clone(), (T((3, 4)),)))
add_cases("contiguous",
          ("already", oxmera.contiguous, (Leaf((2, 3)),)),
          ("transposed", lambda x: x.contiguous(), (T((3, 4)),)),
          ("strided", lambda x: x.contiguous(), (S((2, 3)),)),
          ("0d", lambda x: x.contiguous(), (Leaf(()),)),
          ("size-0", lambda x: x.contiguous(), (T((0, 3)),)))
# A float32 round trip rounds at 1e-7 relative: a finite-difference step of
# 1e-2 keeps that far below the tolerance (the cast is linear, so the large
# step costs no accuracy).
_ROUNDING = {"eps": 1e-2, "atol": 1e-4, "rtol": 1e-3}
add_cases("to",
          ("float32", lambda x: x.to(oxmera.float32), (Leaf((2, 3)),), _ROUNDING),
          ("float16-method", lambda x: x.half(), (Leaf((3,)),),
           {"eps": 1e-1, "atol": 2e-2, "rtol": 1e-2}),
          ("round-trip", lambda x: x.float().double() * x, (Leaf((2, 3)),), _ROUNDING),
          ("cast-op", lambda x: _cast(x, np.float32), (T((3, 2)),), _ROUNDING),
          ("0d", lambda x: x.to(oxmera.float32), (Leaf(()),), _ROUNDING),
          ("size-0", lambda x: x.to(oxmera.float32), (Leaf((0, 3)),), _ROUNDING))


add_torch_cases("clone", ("2x3", lambda lib, x: x.clone() * 2, (Leaf((2, 3)),)))
add_torch_cases("contiguous", ("transposed", lambda lib, x: x.T.contiguous(), (Leaf((2, 3)),)))
add_torch_cases("to",
                ("float32", lambda lib, x: x.to(lib.float32), (Leaf((2, 3)),),
                 {"atol": 1e-6, "rtol": 1e-6}),
                ("int64", lambda lib, x: x.to(lib.int64), (Leaf((4,)),), {"grad": False}))
