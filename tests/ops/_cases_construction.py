"""Gradient cases and PyTorch comparisons of ``oxmera.ops.construction`` (see
``_case_table``).

Everything there is composed, so the gradient cases are filed under an op
each function records (``diagonal_backward`` for ``diag_embed``, ``cat``
for the stacks, ``index`` for splits and combinations, ...) and the PyTorch
comparisons under the functions' own names.
"""
import oxmera

from ._case_table import S, T, Leaf, add_cases, add_torch_cases, const

add_cases("diagonal_backward",
          ("diag_embed", lambda x: oxmera.diag_embed(x), (Leaf((2, 3)),)),
          ("diag_embed-offset-dims", lambda x: x.diag_embed(-1, 0, 2), (T((3, 2)),)),
          ("diag-1d", lambda x: oxmera.diag(x, 1), (Leaf((3,)),)),
          ("diagflat", lambda x: x.diagflat(-2), (S((2, 2)),)),
          ("diagflat-0d", lambda x: oxmera.diagflat(x), (Leaf(()),)),
          ("diag_embed-size-0", lambda x: oxmera.diag_embed(x), (Leaf((0, 2)),)))
add_cases("diagonal",
          ("diag-2d", lambda x: x.diag(-1), (T((3, 4)),)),
          ("trace", lambda x: x.trace(), (Leaf((3, 3)),)),
          ("trace-size-0", lambda x: oxmera.trace(x), (Leaf((0, 2)),)))
add_cases("expand",
          ("meshgrid-ij", lambda a, b: oxmera.meshgrid(a, b, indexing="ij"),
           (Leaf((3,)), Leaf((2,)))),
          ("meshgrid-xy", lambda a, b, c: oxmera.meshgrid([a, b, c], indexing="xy"),
           (Leaf((3,)), Leaf(()), S((2,)))),
          ("meshgrid-size-0", lambda a, b: oxmera.meshgrid(a, b), (Leaf((0,)), Leaf((2,)))))
add_cases("stack",
          ("cartesian_prod", lambda a, b: oxmera.cartesian_prod(a, b), (Leaf((3,)), S((2,)))),
          ("cross", lambda a, b: oxmera.cross(a, b, dim=0), (T((3, 2)), Leaf((3, 2)))),
          ("cross-broadcast", lambda a, b: a.cross(b), (Leaf((2, 3)), Leaf((3,)))),
          ("linalg.cross", lambda a, b: oxmera.linalg.cross(a, b), (Leaf((4, 3)), const((3,)))))
add_cases("index",
          ("combinations", lambda x: oxmera.combinations(x), (Leaf((4,)),)),
          ("combinations-replacement", lambda x: oxmera.combinations(x, 3, with_replacement=True),
           (S((3,)),)),
          ("combinations-empty", lambda x: oxmera.combinations(x, 3), (Leaf((2,)),)),
          ("tensor_split-sections", lambda x: x.tensor_split(3, dim=1), (T((2, 7)),)),
          ("tensor_split-indices", lambda x: oxmera.tensor_split(x, [1, 4, 9]), (Leaf((5, 2)),)),
          ("hsplit", lambda x: x.hsplit([1]), (Leaf((2, 3)),)),
          ("vsplit", lambda x: oxmera.vsplit(x, 2), (Leaf((4, 2)),)),
          ("dsplit", lambda x: x.dsplit(2), (Leaf((1, 2, 4)),)),
          ("tensor_split-size-0", lambda x: x.tensor_split(2), (Leaf((0, 3)),)))
add_cases("cat",
          ("block_diag", lambda a, b, c: oxmera.block_diag(a, b, c),
           (Leaf(()), T((2, 3)), Leaf((2,)))),
          ("block_diag-size-0", lambda a, b: oxmera.block_diag(a, b), (Leaf((0, 2)), Leaf((2,)))),
          ("hstack", lambda a, b: oxmera.hstack([a, b]), (Leaf((2, 1)), T((2, 3)))),
          ("hstack-0d", lambda a, b: oxmera.hstack((a, b)), (Leaf(()), Leaf((2,)))),
          ("vstack", lambda a, b: oxmera.vstack([a, b]), (Leaf((3,)), Leaf((2, 3)))),
          ("row_stack", lambda a, b: oxmera.row_stack([a, b]), (Leaf(()), Leaf((1, 1)))),
          ("dstack", lambda a, b: oxmera.dstack([a, b]), (S((2, 2)), Leaf((2, 2, 1)))),
          ("column_stack", lambda a, b: oxmera.column_stack([a, b]), (Leaf((3,)), Leaf((3, 2)))),
          ("column_stack-size-0", lambda a, b: oxmera.column_stack([a, b]),
           (Leaf((0,)), Leaf((0, 2)))))
add_cases("norm",
          ("cdist", lambda a, b: oxmera.cdist(a, b), (Leaf((3, 2)), T((4, 2)))),
          ("cdist-batched-p1", lambda a, b: oxmera.cdist(a, b, p=1.0), (Leaf((2, 3, 2)),
                                                                         Leaf((1, 2, 2)))),
          ("cdist-p3", lambda a, b: oxmera.cdist(a, b, p=3), (Leaf((2, 2)), Leaf((3, 2)))),
          ("cdist-size-0", lambda a, b: oxmera.cdist(a, b), (Leaf((0, 2)), Leaf((3, 2)))))
add_cases("mul",
          ("kron", lambda a, b: oxmera.kron(a, b), (Leaf((2, 3)), T((2, 2)))),
          ("kron-mixed-rank", lambda a, b: a.kron(b), (Leaf((2,)), Leaf((2, 1, 3)))),
          ("kron-0d", lambda a, b: oxmera.kron(a, b), (Leaf(()), Leaf((0, 2)))))
add_cases("index_select",
          ("repeat_interleave", lambda x: x.repeat_interleave(2), (Leaf((2, 2)),)),
          ("repeat_interleave-tensor",
           lambda x: oxmera.repeat_interleave(x, oxmera.tensor([2, 0, 1]), dim=1),
           (T((2, 3)),)),
          ("repeat_interleave-0d", lambda x: x.repeat_interleave(3, dim=0), (Leaf(()),)),
          ("repeat_interleave-size-0", lambda x: x.repeat_interleave(2, 1), (Leaf((0, 2)),)))
add_cases("flip",
          ("rot90", lambda x: x.rot90(), (T((2, 3)),)),
          ("rot90-k3-dims", lambda x: oxmera.rot90(x, -1, [2, 0]), (Leaf((2, 3, 2)),)),
          ("rot90-k2", lambda x: oxmera.rot90(x, 2), (Leaf((0, 2)),)),
          ("flipud", lambda x: x.flipud(), (Leaf((3,)),)),
          ("fliplr", lambda x: oxmera.fliplr(x), (S((2, 3)),)))
add_cases("reshape",
          ("atleast_1d", lambda x: oxmera.atleast_1d(x), (Leaf(()),)),
          ("atleast_2d", lambda a, b: oxmera.atleast_2d(a, b), (Leaf((3,)), Leaf(()))),
          ("atleast_3d", lambda a, b: oxmera.atleast_3d([a, b]), (T((2, 3)), Leaf((0,)))))

# -- PyTorch comparisons -------------------------------------------------------------------

add_torch_cases("diag",
                ("1d", lambda lib, x: lib.diag(x), (Leaf((3,)),)),
                ("1d-offset", lambda lib, x: x.diag(-2), (Leaf((2,)),)),
                ("2d", lambda lib, x: lib.diag(x, 1), (Leaf((3, 4)),)),
                ("2d-far", lambda lib, x: x.diag(5), (Leaf((2, 2)),)))
add_torch_cases("diag_embed",
                ("default", lambda lib, x: lib.diag_embed(x), (Leaf((2, 3)),)),
                ("offset-dims", lambda lib, x: x.diag_embed(1, 0, 2), (Leaf((2, 3)),)),
                ("negative-dims", lambda lib, x: lib.diag_embed(x, -1, -1, -3), (Leaf((2, 3)),)),
                ("size-0", lambda lib, x: lib.diag_embed(x, 2), (Leaf((2, 0)),)))
add_torch_cases("diagflat",
                ("2d", lambda lib, x: lib.diagflat(x), (Leaf((2, 2)),)),
                ("offset", lambda lib, x: x.diagflat(1), (Leaf((3,)),)),
                ("0d", lambda lib, x: lib.diagflat(x), (Leaf(()),)))
add_torch_cases("trace",
                ("square", lambda lib, x: lib.trace(x), (Leaf((3, 3)),)),
                ("wide", lambda lib, x: x.trace(), (Leaf((2, 4)),)),
                ("int", lambda lib, x: (x * 10).long().trace(), (Leaf((3, 2)),), {"grad": False}))
add_torch_cases("tril_indices",
                ("square", lambda lib: lib.tril_indices(3, 3), (), {"grad": False}),
                ("offset", lambda lib: lib.tril_indices(3, 5, 1), (), {"grad": False}),
                ("negative-offset", lambda lib: lib.tril_indices(4, 2, -1), (), {"grad": False}),
                ("int32", lambda lib: lib.tril_indices(2, 2, dtype=lib.int32), (),
                 {"grad": False}),
                ("empty", lambda lib: lib.tril_indices(0, 3), (), {"grad": False}))
add_torch_cases("triu_indices",
                ("square", lambda lib: lib.triu_indices(3, 3), (), {"grad": False}),
                ("offset", lambda lib: lib.triu_indices(4, 3, -1), (), {"grad": False}),
                ("far", lambda lib: lib.triu_indices(2, 3, 5), (), {"grad": False}))
add_torch_cases("meshgrid",
                ("ij", lambda lib, a, b: lib.meshgrid(a, b, indexing="ij"),
                 (Leaf((3,)), Leaf((2,)))),
                ("xy-list", lambda lib, a, b, c: lib.meshgrid([a, b, c], indexing="xy"),
                 (Leaf((3,)), Leaf((2,)), Leaf((4,)))),
                ("0d", lambda lib, a, b: lib.meshgrid(a, b, indexing="xy"),
                 (Leaf(()), Leaf((2,)))),
                ("one", lambda lib, a: lib.meshgrid(a, indexing="xy"), (Leaf((3,)),)))
add_torch_cases("cartesian_prod",
                ("two", lambda lib, a, b: lib.cartesian_prod(a, b), (Leaf((3,)), Leaf((2,)))),
                ("three", lambda lib, a, b, c: lib.cartesian_prod(a, b, c),
                 (Leaf((2,)), Leaf((2,)), Leaf((3,)))),
                ("one", lambda lib, a: lib.cartesian_prod(a), (Leaf((3,)),)))
add_torch_cases("combinations",
                ("pairs", lambda lib, x: lib.combinations(x), (Leaf((4,)),)),
                ("triples-replacement", lambda lib, x: lib.combinations(x, 3, True),
                 (Leaf((3,)),)),
                ("r-too-large", lambda lib, x: lib.combinations(x, r=3), (Leaf((2,)),)),
                ("r-0", lambda lib, x: lib.combinations(x, r=0), (Leaf((2,)),)),
                ("int", lambda lib, x: lib.combinations((x * 10).long(), 2), (Leaf((3,)),),
                 {"grad": False}))
add_torch_cases("block_diag",
                ("mixed", lambda lib, a, b, c: lib.block_diag(a, b, c),
                 (Leaf(()), Leaf((2, 3)), Leaf((2,)))),
                ("promote", lambda lib, a: lib.block_diag(a, lib.tensor([[1, 2]])),
                 (Leaf((1, 1)),)),
                ("empty-block", lambda lib, a, b: lib.block_diag(a, b),
                 (Leaf((0, 2)), Leaf((2, 1)))),
                ("none", lambda lib: lib.block_diag(), (), {"grad": False}))
add_torch_cases("cdist",
                ("p2", lambda lib, a, b: lib.cdist(a, b), (Leaf((3, 2)), Leaf((4, 2)))),
                ("p1-batched", lambda lib, a, b: lib.cdist(a, b, p=1.0),
                 (Leaf((2, 3, 2)), Leaf((1, 2, 2)))),
                ("p-inf", lambda lib, a, b: lib.cdist(a, b, p=float("inf")),
                 (Leaf((2, 3)), Leaf((2, 3)))),
                ("p0", lambda lib, a, b: lib.cdist(a, b, p=0), (Leaf((2, 3)), Leaf((2, 3)))),
                ("p3-compute-mode", lambda lib, a, b: lib.cdist(
                    a, b, 3.0, "donot_use_mm_for_euclid_dist"), (Leaf((2, 2)), Leaf((3, 2)))),
                ("zero-distance", lambda lib, a: lib.cdist(a, a), (Leaf((3, 2)),)))
add_torch_cases("cross",
                ("dim", lambda lib, a, b: lib.cross(a, b, dim=0), (Leaf((3, 2)), Leaf((3, 2)))),
                ("method-dim-1", lambda lib, a, b: a.cross(b, dim=-1),
                 (Leaf((2, 3)), Leaf((2, 3)))),
                ("linalg", lambda lib, a, b: lib.linalg.cross(a, b),
                 (Leaf((4, 3)), Leaf((1, 3)))))
add_torch_cases("kron",
                ("2d", lambda lib, a, b: lib.kron(a, b), (Leaf((2, 3)), Leaf((2, 2)))),
                ("mixed-rank", lambda lib, a, b: a.kron(b), (Leaf((2,)), Leaf((2, 1, 3)))),
                ("0d", lambda lib, a, b: lib.kron(a, b), (Leaf(()), Leaf((2,)))))
add_torch_cases("repeat_interleave",
                ("int-flat", lambda lib, x: x.repeat_interleave(2), (Leaf((2, 2)),)),
                ("tensor-dim", lambda lib, x: lib.repeat_interleave(
                    x, lib.tensor([2, 0, 1]), dim=1), (Leaf((2, 3)),)),
                ("one-count-tensor", lambda lib, x: x.repeat_interleave(
                    lib.tensor([2]), dim=0, output_size=4), (Leaf((2, 3)),)),
                ("counts-only", lambda lib: lib.repeat_interleave(lib.tensor([2, 0, 3])), (),
                 {"grad": False}),
                ("0d", lambda lib, x: x.repeat_interleave(3), (Leaf(()),)))
add_torch_cases("rot90",
                ("k1", lambda lib, x: x.rot90(), (Leaf((2, 3)),)),
                ("k2", lambda lib, x: lib.rot90(x, 2), (Leaf((2, 3)),)),
                ("k-1-dims", lambda lib, x: lib.rot90(x, -1, [2, 0]), (Leaf((2, 3, 2)),)),
                ("k4", lambda lib, x: x.rot90(4, [1, 0]), (Leaf((2, 3)),)),
                ("k5-reversed-dims", lambda lib, x: x.rot90(5, [1, 0]), (Leaf((2, 3)),)))
add_torch_cases("flipud",
                ("1d", lambda lib, x: x.flipud(), (Leaf((3,)),)),
                ("2d", lambda lib, x: lib.flipud(x), (Leaf((3, 2)),)))
add_torch_cases("fliplr",
                ("2d", lambda lib, x: lib.fliplr(x), (Leaf((3, 2)),)),
                ("3d", lambda lib, x: x.fliplr(), (Leaf((2, 3, 2)),)))
add_torch_cases("atleast_1d",
                ("0d", lambda lib, x: lib.atleast_1d(x), (Leaf(()),)),
                ("several", lambda lib, a, b: lib.atleast_1d(a, b), (Leaf(()), Leaf((2, 2)))),
                ("list", lambda lib, a, b: lib.atleast_1d([a, b]), (Leaf((3,)), Leaf(()))))
add_torch_cases("atleast_2d",
                ("0d", lambda lib, x: lib.atleast_2d(x), (Leaf(()),)),
                ("several", lambda lib, a, b: lib.atleast_2d(a, b), (Leaf((3,)), Leaf((2, 2)))))
add_torch_cases("atleast_3d",
                ("0d", lambda lib, x: lib.atleast_3d(x), (Leaf(()),)),
                ("1d", lambda lib, x: lib.atleast_3d(x), (Leaf((3,)),)),
                ("several", lambda lib, a, b, c: lib.atleast_3d((a, b, c)),
                 (Leaf((2, 3)), Leaf((2, 1, 2, 1)), Leaf(()))))
add_torch_cases("hstack",
                ("1d", lambda lib, a, b: lib.hstack([a, b]), (Leaf((2,)), Leaf((3,)))),
                ("0d", lambda lib, a, b: lib.hstack((a, b)), (Leaf(()), Leaf((2,)))),
                ("2d", lambda lib, a, b: lib.hstack([a, b]), (Leaf((2, 1)), Leaf((2, 3)))))
add_torch_cases("vstack",
                ("1d-2d", lambda lib, a, b: lib.vstack([a, b]), (Leaf((3,)), Leaf((2, 3)))),
                ("0d", lambda lib, a, b: lib.vstack([a, b]), (Leaf(()), Leaf(()))))
add_torch_cases("row_stack",
                ("1d", lambda lib, a, b: lib.row_stack([a, b]), (Leaf((3,)), Leaf((3,)))),)
add_torch_cases("dstack",
                ("1d", lambda lib, a, b: lib.dstack([a, b]), (Leaf((2,)), Leaf((2,)))),
                ("2d-3d", lambda lib, a, b: lib.dstack([a, b]), (Leaf((2, 2)),
                                                                  Leaf((2, 2, 3)))))
add_torch_cases("column_stack",
                ("mixed", lambda lib, a, b, c: lib.column_stack([a, b, c]),
                 (Leaf((3,)), Leaf((3, 2)), Leaf((3, 1)))),
                ("0d", lambda lib, a, b: lib.column_stack([a, b]), (Leaf(()), Leaf(()))))
add_torch_cases("tensor_split",
                ("sections", lambda lib, x: x.tensor_split(3, dim=1), (Leaf((2, 7)),)),
                ("more-sections-than-size", lambda lib, x: lib.tensor_split(x, 4),
                 (Leaf((2, 3)),)),
                ("indices", lambda lib, x: lib.tensor_split(x, [1, 4, 9]), (Leaf((5, 2)),)),
                ("descending-negative-indices",
                 lambda lib, x: lib.tensor_split(x, [3, 1, -1]), (Leaf((5,)),)),
                ("tensor-sections", lambda lib, x: x.tensor_split(lib.tensor(2)),
                 (Leaf((5,)),)),
                ("tensor-indices", lambda lib, x: x.tensor_split(lib.tensor([2, 3]), -1),
                 (Leaf((2, 5)),)))
add_torch_cases("hsplit",
                ("1d", lambda lib, x: lib.hsplit(x, 2), (Leaf((4,)),)),
                ("2d-indices", lambda lib, x: x.hsplit([1, 2]), (Leaf((2, 3)),)))
add_torch_cases("vsplit",
                ("sections", lambda lib, x: lib.vsplit(x, 2), (Leaf((4, 2)),)),
                ("indices", lambda lib, x: x.vsplit([3]), (Leaf((4, 2)),)))
add_torch_cases("dsplit",
                ("sections", lambda lib, x: lib.dsplit(x, 2), (Leaf((1, 2, 4)),)),
                ("indices", lambda lib, x: x.dsplit([1, 3]), (Leaf((1, 2, 4)),)))
