"""Gradient cases and PyTorch comparisons of the index ops (see ``_case_table``).

``masked_fill`` and ``take_along_dim`` are composed (from ``where``, and
from ``expand`` and ``gather``): their gradient cases are filed under the
op they record, their PyTorch comparisons under their own names. Scatter
cases avoid repeated indices: which write lands is unspecified there, so
the derivative with respect to ``src`` is not defined.
"""
import numpy as np

import oxmera
from oxmera.ops.index import index_backward

from ._case_table import (NO_GRADIENT_CALLS, S, T, Leaf, add_cases, add_torch_cases,
                          const)

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

# -- index_select, gather, scatter, scatter_add ------------------------------------------------


def _ix(values, dtype=np.int64):
    """An index tensor (int64 unless told)."""
    return oxmera.tensor(np.array(values, dtype=dtype))


add_cases("index_select",
          ("dim0", lambda x: x.index_select(0, _ix([2, 0])), (Leaf((3, 4)),)),
          ("dim1-repeated", lambda x: oxmera.index_select(x, 1, _ix([3, 0, 3, 3])),
           (Leaf((2, 4)),)),
          ("negative-dim-int32", lambda x: x.index_select(-1, _ix([1, 1], np.int32)),
           (Leaf((2, 3, 2)),)),
          ("0d-index", lambda x: x.index_select(1, _ix(2)), (Leaf((2, 3)),)),
          ("0d-input", lambda x: x.index_select(0, _ix([0])), (Leaf(()),)),
          ("empty-index", lambda x: x.index_select(0, _ix([])), (Leaf((3, 2)),)),
          ("size-0-input", lambda x: x.index_select(1, _ix([0, 0])), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.index_select(1, _ix([2, 0, 2])), (T((3, 4)),)),
          ("strided", lambda x: x.index_select(0, _ix([1, 1, 0])), (S((2, 3)),)))
add_cases("gather",
          ("dim1", lambda x: x.gather(1, _ix([[0, 0, 2], [1, 2, 2]])), (Leaf((2, 3)),)),
          ("dim0-smaller", lambda x: oxmera.gather(x, 0, _ix([[1, 0]])), (Leaf((3, 4)),)),
          ("3d-int32", lambda x: x.gather(2, _ix([[[3], [0]], [[1], [1]]], np.int32)),
           (Leaf((2, 3, 4)),)),
          ("larger-along-dim", lambda x: x.gather(-1, _ix([[0, 1, 0, 1, 1]])), (Leaf((2, 2)),)),
          ("0d-input", lambda x: x.gather(0, _ix([0, 0])), (Leaf(()),)),
          ("0d-index", lambda x: x.gather(0, _ix(1)), (Leaf((3,)),)),
          ("size-0-index", lambda x: x.gather(1, _ix(np.zeros((0, 2)))), (Leaf((2, 3)),)),
          ("size-0-input", lambda x: x.gather(0, _ix(np.zeros((0, 3)))), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.gather(0, _ix([[2, 0, 1, 1]])), (T((3, 4)),)),
          ("take_along_dim", lambda x: oxmera.take_along_dim(x, _ix([[0], [2]]), 1),
           (Leaf((2, 3)),)),
          ("take_along_dim-broadcast", lambda x: x.take_along_dim(_ix([[[0, 1]]]), dim=2),
           (Leaf((2, 3, 4)),)),
          ("take_along_dim-flat", lambda x: x.take_along_dim(_ix([5, 0, 5])), (S((2, 3)),)))
add_cases("scatter",
          ("src", lambda x, s: x.scatter(1, _ix([[2, 0], [1, 2]]), s),
           (Leaf((2, 3)), Leaf((2, 2)))),
          ("src-larger", lambda x, s: oxmera.scatter(x, 0, _ix([[1, 0, 2]]), s),
           (Leaf((3, 3)), Leaf((2, 4)))),
          ("value", lambda x: x.scatter(0, _ix([[1, 1, 0]]), value=2.5), (Leaf((2, 3)),)),
          ("number-src", lambda x: x.scatter(1, _ix([[0], [2]]), -1.5), (Leaf((2, 3)),)),
          ("src-only", lambda x, s: x.scatter(1, _ix([[1], [0]]), s),
           (const((2, 3)), Leaf((2, 1)))),
          ("0d", lambda x, s: x.scatter(0, _ix(0), s), (Leaf(()), Leaf(()))),
          ("1d-0d-index-int32", lambda x, s: x.scatter(0, _ix(2, np.int32), s),
           (Leaf((3,)), Leaf((1,)))),
          ("size-0", lambda x, s: x.scatter(1, _ix(np.zeros((0, 1))), s),
           (Leaf((0, 3)), Leaf((0, 1)))),
          ("transposed", lambda x, s: x.scatter(0, _ix([[2, 0, 1, 1]]), s),
           (T((3, 4)), S((1, 4)))))
add_cases("scatter_add",
          ("repeated", lambda x, s: x.scatter_add(1, _ix([[2, 2], [0, 2]]), s),
           (Leaf((2, 3)), Leaf((2, 2)))),
          ("src-larger", lambda x, s: oxmera.scatter_add(x, 0, _ix([[1, 1, 2]]), s),
           (Leaf((3, 3)), Leaf((2, 4)))),
          ("src-only", lambda x, s: x.scatter_add(0, _ix([0, 0, 1]), s),
           (const((2,)), Leaf((3,)))),
          ("input-only", lambda x, s: x.scatter_add(0, _ix([0, 0, 1]), s),
           (Leaf((2,)), const((3,)))),
          ("0d", lambda x, s: x.scatter_add(0, _ix([0, 0]), s), (Leaf(()), Leaf((2,)))),
          ("size-0", lambda x, s: x.scatter_add(0, _ix(np.zeros((0, 3))), s),
           (Leaf((2, 3)), Leaf((0, 3)))),
          ("transposed", lambda x, s: x.scatter_add(1, _ix([[0, 0], [1, 1], [2, 0]]), s),
           (T((3, 4)), T((3, 2)))))
add_cases("where",
          ("masked_fill", lambda x: x.masked_fill(oxmera.tensor([True, False, True]), 0.5),
           (Leaf((2, 3)),)),
          ("masked_fill-tensor-value",
           lambda x, v: oxmera.masked_fill(x, oxmera.tensor([[True], [False]]), v),
           (Leaf((2, 3)), Leaf(()))),
          ("masked_fill-mask-broadcasts-input",
           lambda x, v: x.masked_fill(oxmera.tensor([[True, False, True], [False] * 3]), v),
           (Leaf((3,)), Leaf(()))),
          ("masked_fill-0d", lambda x: x.masked_fill(oxmera.tensor(True), 1.0), (Leaf(()),)),
          ("masked_fill-size-0", lambda x: x.masked_fill(oxmera.tensor([True] * 3), 1.0),
           (Leaf((0, 3)),)),
          ("masked_fill-transposed", lambda x: x.masked_fill(x > 0, 0.0), (T((3, 4)),)))

# nonzero: int64 results, never recorded
NO_GRADIENT_CALLS["nonzero"] = lambda x, y: oxmera.nonzero(x - y)

# -- PyTorch comparisons -----------------------------------------------------------------------


def _torch_ix(lib, values):
    return lib.tensor(np.array(values, dtype=np.int64))


add_torch_cases("index",
                ("int-slice", lambda lib, x: x[1, 1:], (Leaf((3, 4)),)),
                ("negative-none-ellipsis", lambda lib, x: x[None, ..., -1], (Leaf((2, 3, 4)),)),
                ("bool-mask", lambda lib, x: x[lib.tensor([True, False, True])], (Leaf((3, 2)),)),
                ("int-tensor-repeated", lambda lib, x: x[_torch_ix(lib, [2, 0, 2])],
                 (Leaf((3, 2)),)),
                ("two-int-tensors", lambda lib, x: x[_torch_ix(lib, [0, 2, 2]),
                                                     _torch_ix(lib, [1, 0, 1])], (Leaf((3, 4)),)),
                ("slice-and-tensor", lambda lib, x: x[1:, _torch_ix(lib, [3, 0, 3])],
                 (Leaf((3, 4)),)),
                ("0d", lambda lib, x: x[None], (Leaf(()),)),
                ("size-0", lambda lib, x: x[:, 1], (Leaf((0, 3)),)))
add_torch_cases("index_select",
                ("dim1-repeated", lambda lib, x: x.index_select(1, _torch_ix(lib, [3, 0, 3])),
                 (Leaf((2, 4)),)),
                ("0d-index", lambda lib, x: lib.index_select(x, 0, _torch_ix(lib, 1)),
                 (Leaf((3, 2)),)),
                ("0d-input", lambda lib, x: x.index_select(0, _torch_ix(lib, [0])), (Leaf(()),)),
                ("empty", lambda lib, x: x.index_select(0, _torch_ix(lib, [])), (Leaf((3, 2)),)))
add_torch_cases("gather",
                ("dim1", lambda lib, x: x.gather(1, _torch_ix(lib, [[0, 0, 2], [1, 2, 2]])),
                 (Leaf((2, 3)),)),
                ("smaller", lambda lib, x: lib.gather(x, 0, _torch_ix(lib, [[1, 0]])),
                 (Leaf((3, 4)),)),
                ("0d-input", lambda lib, x: x.gather(0, _torch_ix(lib, [0, 0])), (Leaf(()),)))
add_torch_cases("take_along_dim",
                ("dim", lambda lib, x: lib.take_along_dim(x, _torch_ix(lib, [[0], [2]]), 1),
                 (Leaf((2, 3)),)),
                ("broadcast", lambda lib, x: x.take_along_dim(_torch_ix(lib, [[[0, 1]]]), dim=2),
                 (Leaf((2, 3, 4)),)),
                ("flat", lambda lib, x: lib.take_along_dim(x, _torch_ix(lib, [5, 0, 5])),
                 (Leaf((2, 3)),)))
add_torch_cases("scatter",
                ("src", lambda lib, x, s: x.scatter(1, _torch_ix(lib, [[2, 0], [1, 2]]), s),
                 (Leaf((2, 3)), Leaf((2, 2)))),
                ("value", lambda lib, x: lib.scatter(x, 0, _torch_ix(lib, [[1, 1, 0]]), value=2.5),
                 (Leaf((2, 3)),)),
                ("number", lambda lib, x: x.scatter(1, _torch_ix(lib, [[0], [2]]), -1.5),
                 (Leaf((2, 3)),)),
                # forward only: PyTorch's ScatterBackward returns a 0-d gradient for a
                # 1-element src here, and its engine then rejects it
                ("0d-index", lambda lib, x, s: x.scatter(0, _torch_ix(lib, 0), s),
                 (Leaf((3,)), Leaf((1,))), {"grad": False}))
add_torch_cases("scatter_add",
                ("repeated", lambda lib, x, s: x.scatter_add(1, _torch_ix(lib, [[2, 2], [0, 2]]),
                                                             s), (Leaf((2, 3)), Leaf((2, 2)))),
                ("1d", lambda lib, x, s: lib.scatter_add(x, 0, _torch_ix(lib, [0, 0, 1]), s),
                 (Leaf((2,)), Leaf((3,)))),
                ("0d", lambda lib, x, s: x.scatter_add(0, _torch_ix(lib, [0, 0]), s),
                 (Leaf(()), Leaf((2,)))))
add_torch_cases("masked_fill",
                ("number", lambda lib, x: x.masked_fill(lib.tensor([True, False, True]), 0.5),
                 (Leaf((2, 3)),)),
                # reshape: test_torch builds 0-d leaves as shape (1,) (ascontiguousarray)
                ("tensor-value", lambda lib, x, v: lib.masked_fill(
                    x, lib.tensor([[True], [False]]), v.reshape(())), (Leaf((2, 3)), Leaf(()))),
                ("mask-broadcasts-input", lambda lib, x: x.masked_fill(
                    lib.tensor([[True, False, True], [False] * 3]), 2.0), (Leaf((3,)),)),
                ("int", lambda lib, x: (x > 0).long().masked_fill(lib.tensor([True, False]), 2.7),
                 (Leaf((2,)),), {"grad": False}))
add_torch_cases("nonzero",
                ("2d", lambda lib, x: (x > 0).nonzero(), (Leaf((3, 4)),), {"grad": False}),
                ("as-tuple", lambda lib, x: lib.nonzero(x > 0, as_tuple=True), (Leaf((3, 4)),),
                 {"grad": False}),
                ("0d", lambda lib, x: lib.nonzero(x), (Leaf(()),), {"grad": False}),
                ("0d-as-tuple", lambda lib, x: x.nonzero(as_tuple=True), (Leaf(()),),
                 {"grad": False}))
