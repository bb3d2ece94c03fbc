"""Gradient cases of the index ops (see ``_case_table`` for the machinery)."""
import numpy as np

import oxmera
from oxmera.ops.index import index_backward

from ._case_table import (T,
                          Leaf, add_cases)

# -- indexing ----------------------------------------------------------------------------

_MASK = np.array([True, False, True])

add_cases("index",
          ("int", lambda x: x[1], (Leaf((3, 4)),)),
          ("negative-int", lambda x: x[-1, -2], (Leaf((3, 4)),)),
          ("slice", lambda x: x[1:, :3], (Leaf((3, 4)),)),
          ("negative-step", lambda x: x[::-1, 1::-2], (Leaf((3, 4)),)),
          ("none", lambda x: x[None, :, None], (Leaf((3, 4)),)),
          ("ellipsis", lambda x: x[..., 1], (Leaf((2, 3, 4)),)),
          ("empty-tuple-0d", lambda x: x[()], (Leaf(()),)),
          ("none-0d", lambda x: x[None], (Leaf(()),)),
          ("bool-mask", lambda x: x[oxmera.tensor(_MASK)], (Leaf((3, 4)),)),
          ("bool-mask-ndarray-dim1", lambda x: x[:, _MASK], (Leaf((2, 3)),)),
          ("bool-mask-all", lambda x: x[x > 0], (Leaf((3, 4)),)),
          ("bool-mask-none-true", lambda x: x[np.zeros(3, bool)], (Leaf((3, 2)),)),
          ("int-list-repeated", lambda x: x[[0, 0, 2, 0]], (Leaf((3, 2)),)),
          ("int-tensor", lambda x: x[oxmera.tensor([2, 0, 2])], (Leaf((3, 2)),)),
          ("int-array-2d", lambda x: x[np.array([[0, 1], [1, 1]])], (Leaf((3, 2)),)),
          ("two-int-arrays", lambda x: x[[0, 2, 2], [1, 0, 1]], (Leaf((3, 4)),)),
          ("slice-and-array", lambda x: x[1:, [3, 0, 3]], (Leaf((3, 4)),)),
          ("int-and-array", lambda x: x[1, [3, 3]], (Leaf((3, 4)),)),
          ("none-array-ellipsis", lambda x: x[None, [1, 0], ...], (Leaf((3, 4)),)),
          ("separated-arrays", lambda x: x[[0, 1], :, [1, 1]], (Leaf((2, 3, 4)),)),
          ("transposed", lambda x: x[1:, [0, 2]], (T((3, 4)),)),
          ("size-0-input", lambda x: x[:, 1], (Leaf((0, 3)),)),
          ("size-0-result", lambda x: x[1:1], (Leaf((3, 4)),)),
          ("chained", lambda x: x[1][::2], (Leaf((3, 4)),)))
add_cases("index_backward",
          ("basic", lambda g: index_backward(g, (3, 4), (1, slice(None))), (Leaf((4,)),)),
          ("repeated", lambda g: index_backward(g, (3,), [0, 0, 2]), (Leaf((3,)),)),
          ("tensor-index", lambda g: index_backward(g, (3, 2), oxmera.tensor([2, 2])),
           (Leaf((2, 2)),)),
          ("mask", lambda g: index_backward(g, (3, 2), (np.array([True, False, True]),)),
           (Leaf((2, 2)),)),
          ("0d", lambda g: index_backward(g, (), ()), (Leaf(()),)),
          ("size-0", lambda g: index_backward(g, (0, 3), (slice(None), [1, 1])),
           (Leaf((0, 2)),)),
          ("transposed", lambda g: index_backward(g, (4, 3), ([0, 0, 3],)), (T((3, 3)),)))
