"""Gradient cases and PyTorch comparisons of ``oxmera.ops.scatter`` (see ``_case_table``).

``scatter_reduce`` is the one primitive; the other functions are composed,
so their gradient cases are filed under the op they record last
(``scatter_add`` for ``index_add``, ``index`` for ``take``, ``index_put``
for ``masked_scatter``, ...), their PyTorch comparisons under their own
names. Values are sampled (distinct with probability one), so ``amax`` and
``amin`` meet no ties unless a case sets them, and ``prod`` no zeros unless
a case sets them.
"""
import numpy as np

import oxmera

from ._case_table import S, T, Leaf, add_cases, add_torch_cases, const


def _ix(values, lib=oxmera):
    """An int64 index tensor of ``lib``."""
    return lib.tensor(np.array(values, dtype=np.int64))


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_INDEX = [[0, 1, 2, 0], [1, 1, 0, 2]]


def _scatter_reduce_entries():
    entries = []
    for reduce in _REDUCTIONS:
        for include_self in (True, False):
            label = f"{reduce}-{'self' if include_self else 'noself'}"

            def fn(x, s, reduce=reduce, include_self=include_self):
                return oxmera.scatter_reduce(x, 0, _ix(_INDEX), s, reduce,
                                             include_self=include_self)
            entries.append((label, fn, (Leaf((3, 4)), Leaf((2, 4)))))
    entries += [
        ("prod-zeros", lambda x, s: x.scatter_reduce(0, _ix([0, 0, 1, 1, 2]), s, "prod"),
         # a zero in one product, two in another
         (Leaf((3,), values=(1.5, -0.5, 0.0)), Leaf((5,), values=(0.0, 2.0, 0.0, 0.75, 1.25))),
         {"second_order": False}),
        ("amax-ties", lambda x, s: x.scatter_reduce(0, _ix([0, 0, 1]), s, "amax"),
         # a tie is a kink: the gradient is right there, its derivative is not defined
         (Leaf((2,), values=(1.0, -1.0)), Leaf((3,), values=(1.0, 0.5, -1.0))),
         {"second_order": False}),
        ("src-larger", lambda x, s: x.scatter_reduce(1, _ix([[0, 0], [1, 1]]), s, "mean"),
         (Leaf((2, 2)), Leaf((3, 3)))),
        ("0d", lambda x, s: x.scatter_reduce(0, _ix(0), s, "prod"), (Leaf(()), Leaf(()))),
        ("size-0", lambda x, s: x.scatter_reduce(0, _ix(np.zeros((0, 3))), s, "amin"),
         (Leaf((2, 3)), Leaf((0, 3)))),
        ("transposed", lambda x, s: x.scatter_reduce(1, _ix([[0, 0], [1, 2], [2, 2]]), s,
                                                     "prod", include_self=False),
         (T((3, 3)), S((3, 2)))),
        ("src-only", lambda x, s: x.scatter_reduce(0, _ix([1, 1]), s, "amin"),
         (const((2,)), Leaf((2,)))),
        ("legacy-multiply", lambda x, s: x.scatter(0, _ix([2, 2, 0]), s, reduce="multiply"),
         (Leaf((3,)), Leaf((3,)))),
        ("legacy-multiply-value", lambda x: x.scatter(1, _ix([[1], [1]]), 1.5,
                                                      reduce="multiply"), (Leaf((2, 2)),)),
    ]
    return entries


add_cases("scatter_reduce", *_scatter_reduce_entries())
add_cases("scatter_add",
          ("index_add", lambda x, s: x.index_add(1, _ix([2, 0, 2]), s), (Leaf((2, 3)),
                                                                          Leaf((2, 3)))),
          ("index_add-alpha", lambda x, s: oxmera.index_add(x, 0, _ix([1, 1]), s, alpha=-2.5),
           (T((3, 2)), Leaf((2, 2)))),
          ("index_add-0d", lambda x, s: x.index_add(0, _ix([0, 0]), s), (Leaf(()), Leaf((2,)))),
          ("scatter-reduce-add", lambda x, s: x.scatter(0, _ix([0, 0, 1]), s, reduce="add"),
           (Leaf((2,)), Leaf((3,)))))
add_cases("scatter",
          ("index_copy", lambda x, s: x.index_copy(0, _ix([2, 0]), s), (Leaf((3, 2)),
                                                                         S((2, 2)))),
          ("index_copy-0d", lambda x, s: oxmera.index_copy(x, 0, _ix([0]), s),
           (Leaf(()), Leaf(()))))
add_cases("where",
          ("index_fill", lambda x: x.index_fill(1, _ix([0, 2]), 0.5), (Leaf((2, 3)),)),
          ("index_fill-tensor-value", lambda x, v: oxmera.index_fill(x, 0, _ix([1]), v),
           (Leaf((2, 3)), Leaf(()))))
add_cases("index_put",
          ("index_put", lambda x, v: x.index_put((_ix([0, 1]), _ix([2, 2])), v),
           (Leaf((2, 3)), Leaf((2,)))),
          ("masked_scatter", lambda x, s: x.masked_scatter(
              oxmera.tensor([[True, False, True], [False, True, False]]), s),
           (T((2, 3)), Leaf((5,)))),
          ("put", lambda x, s: x.put(_ix([3, -1, 0]), s), (Leaf((2, 3)), Leaf((3,)))))
add_cases("add",
          ("index_put-accumulate",
           lambda x, v: oxmera.index_put(x, (_ix([0, 0, 1]),), v, accumulate=True),
           (Leaf((2, 3)), Leaf((3,)))),
          ("put-accumulate", lambda x, s: x.put(_ix([1, 1]), s, accumulate=True),
           (Leaf((2,)), Leaf((2,)))))
add_cases("index",
          ("take", lambda x: x.take(_ix([[5, 0], [-1, 5]])), (T((2, 3)),)),
          ("masked_select", lambda x: oxmera.masked_select(x, oxmera.tensor([True, False, True])),
           (Leaf((2, 3)),)),
          ("masked_select-broadcast-input",
           lambda x: x.masked_select(oxmera.tensor([[True], [False]])), (Leaf((3,)),)))

# -- PyTorch comparisons -------------------------------------------------------------------


def _torch_scatter_reduce_entries():
    entries = []
    for reduce in _REDUCTIONS:
        for include_self in (True, False):
            def fn(lib, x, s, reduce=reduce, include_self=include_self):
                return lib.scatter_reduce(x, 0, _ix(_INDEX, lib), s, reduce,
                                          include_self=include_self)
            entries.append((f"{reduce}-{'self' if include_self else 'noself'}", fn,
                            (Leaf((3, 4)), Leaf((2, 4)))))
    entries += [
        ("prod-zeros", lambda lib, x, s: x.scatter_reduce(0, _ix([0, 0, 1, 1, 2], lib), s,
                                                          "prod"),
         (Leaf((3,), values=(1.5, -0.5, 0.0)), Leaf((5,), values=(0.0, 2.0, 0.0, 0.75, 1.25)))),
        ("amax-ties", lambda lib, x, s: x.scatter_reduce(0, _ix([0, 0, 1], lib), s, "amax"),
         (Leaf((2,), values=(1.0, -1.0)), Leaf((3,), values=(1.0, 0.5, -1.0)))),
        ("int-mean-floors", lambda lib, x: lib.scatter_reduce(
            (x * 10).long(), 0, _ix([0, 0, 1], lib), (x * 7).long(), "mean"), (Leaf((3,)),),
         {"grad": False}),
        ("int-amax-noself", lambda lib, x: (x * 10).long().scatter_reduce(
            0, _ix([1, 1, 1], lib), (x * 3).long(), "amax", include_self=False), (Leaf((3,)),),
         {"grad": False}),
        ("0d", lambda lib, x, s: x.scatter_reduce(0, _ix(0, lib), s, "sum"),
         (Leaf(()), Leaf(()))),
    ]
    return entries


add_torch_cases("scatter_reduce", *_torch_scatter_reduce_entries())
add_torch_cases("scatter",
                ("reduce-add", lambda lib, x, s: x.scatter(0, _ix([[1, 0, 1]], lib), s,
                                                           reduce="add"),
                 (Leaf((2, 3)), Leaf((1, 3))), {"grad": False}),
                ("reduce-add-value", lambda lib, x: x.scatter(1, _ix([[0, 0], [2, 1]], lib), 1.5,
                                                              reduce="add"),
                 (Leaf((2, 3)),), {"grad": False}),
                ("reduce-multiply-int", lambda lib, x: (x * 10).long().scatter(
                    1, _ix([[0, 0], [2, 1]], lib), 2, reduce="multiply"), (Leaf((2, 3)),),
                 {"grad": False}),
                ("reduce-multiply-value", lambda lib, x: lib.scatter(
                    x, 1, _ix([[1], [0]], lib), 2.5, reduce="multiply"), (Leaf((2, 3)),),
                 {"grad": False}))
add_torch_cases("index_add",
                ("dim1", lambda lib, x, s: x.index_add(1, _ix([2, 0, 2], lib), s),
                 (Leaf((2, 3)), Leaf((2, 3)))),
                ("alpha", lambda lib, x, s: lib.index_add(x, 0, _ix([1, 1], lib), s, alpha=-2.5),
                 (Leaf((3, 2)), Leaf((2, 2)))),
                ("0d", lambda lib, x, s: x.index_add(0, _ix([0], lib), s),
                 (Leaf(()), Leaf(()))),
                ("int", lambda lib, x: (x * 10).long().index_add(
                    0, _ix([0, 0], lib), (x * 5).long(), alpha=3), (Leaf((2,)),),
                 {"grad": False}))
add_torch_cases("index_copy",
                ("dim0", lambda lib, x, s: x.index_copy(0, _ix([2, 0], lib), s),
                 (Leaf((3, 2)), Leaf((2, 2)))),
                ("negative-dim", lambda lib, x, s: lib.index_copy(x, -1, _ix([1], lib), s),
                 (Leaf((2, 3)), Leaf((2, 1)))))
add_torch_cases("index_fill",
                ("number", lambda lib, x: x.index_fill(1, _ix([0, 2], lib), 0.5),
                 (Leaf((2, 3)),)),
                ("tensor-value", lambda lib, x, v: lib.index_fill(x, 0, _ix([1], lib),
                                                                  v.reshape(())),
                 (Leaf((2, 3)), Leaf(()))),
                ("0d", lambda lib, x: x.index_fill(0, _ix([0], lib), -1.0), (Leaf(()),)))
add_torch_cases("index_put",
                ("pairs", lambda lib, x, v: x.index_put((_ix([0, 1], lib), _ix([2, 2], lib)), v),
                 (Leaf((2, 3)), Leaf((2,)))),
                ("accumulate", lambda lib, x, v: lib.index_put(x, (_ix([0, 0, 1], lib),), v,
                                                               accumulate=True),
                 (Leaf((2, 3)), Leaf((3, 3)))),
                ("broadcast-value", lambda lib, x, v: x.index_put((_ix([1, 0], lib),), v),
                 (Leaf((2, 3)), Leaf((3,)))),
                ("bool", lambda lib, x, v: x.index_put((lib.tensor([True, False, True]),), v,
                                                       accumulate=True),
                 (Leaf((3, 2)), Leaf((2,)))))
add_torch_cases("take",
                ("2d-index", lambda lib, x: x.take(_ix([[5, 0], [-1, 5]], lib)), (Leaf((2, 3)),)),
                ("0d", lambda lib, x: lib.take(x, _ix(0, lib)), (Leaf(()),)),
                ("empty", lambda lib, x: lib.take(x, _ix([], lib)), (Leaf((2, 3)),)))
add_torch_cases("put",
                ("write", lambda lib, x, s: x.put(_ix([3, -1, 0], lib), s),
                 (Leaf((2, 3)), Leaf((3,)))),
                ("accumulate", lambda lib, x, s: x.put(_ix([[1, 1]], lib), s, accumulate=True),
                 (Leaf((2,)), Leaf((2,)))))
add_torch_cases("masked_select",
                ("2d", lambda lib, x: x.masked_select(x > 0), (Leaf((3, 4)),)),
                ("broadcast-mask", lambda lib, x: lib.masked_select(
                    x, lib.tensor([True, False, True])), (Leaf((2, 3)),)),
                ("broadcast-input", lambda lib, x: x.masked_select(
                    lib.tensor([[True], [False]])), (Leaf((3,)),)),
                ("0d", lambda lib, x: x.masked_select(lib.tensor(True)), (Leaf(()),)))
add_torch_cases("masked_scatter",
                ("2d", lambda lib, x, s: x.masked_scatter(
                    lib.tensor([[True, False, True], [False, True, False]]), s),
                 (Leaf((2, 3)), Leaf((5,)))),
                ("broadcast-mask", lambda lib, x, s: lib.masked_scatter(
                    x, lib.tensor([False, True]), s), (Leaf((3, 2)), Leaf((2, 3)))))
