"""Gradient cases and PyTorch comparisons of the shape ops (see ``_case_table``).

Ops composed from primitives (flatten, unflatten, movedim, tile, chunk) are
checked under the primitive they record (``reshape``, ``permute``,
``repeat``, ``split``), with their own name in the case id; their PyTorch
comparisons are filed under their own names.
"""

import oxmera
from oxmera.ops.shape import diagonal_backward

from ._case_table import S, T, Leaf, add_cases, add_torch_cases, const

# -- shape -------------------------------------------------------------------------------

add_cases("reshape",
          ("2d", lambda x: x.reshape(3, 2), (Leaf((2, 3)),)),
          ("tuple", lambda x: oxmera.reshape(x, (6,)), (Leaf((2, 3)),)),
          ("infer", lambda x: x.reshape(-1, 2), (Leaf((2, 3, 2)),)),
          ("transposed-copies", lambda x: x.reshape(-1), (T((3, 4)),)),
          ("0d-to-1", lambda x: x.reshape(1, 1), (Leaf(()),)),
          ("to-0d", lambda x: x.reshape(()), (Leaf((1,)),)),
          ("size-0", lambda x: x.reshape(-1, 1, 3), (Leaf((0, 3)),)),
          ("size-0-no-infer", lambda x: x.reshape(3, 0), (Leaf((0, 3)),)))
add_cases("view",
          ("2d", lambda x: x.view(3, 2), (Leaf((2, 3)),)),
          ("infer", lambda x: x.view(-1), (Leaf((2, 3)),)),
          ("0d", lambda x: x.view(1), (Leaf(()),)),
          ("size-0", lambda x: x.view(0, 3, 1), (Leaf((0, 3)),)),
          ("transposed-same-shape", lambda x: x.view(3, 4), (T((3, 4)),)),
          ("of-view", lambda x: x.view(6).view(3, 2), (Leaf((2, 3)),)))
add_cases("transpose",
          ("2d", lambda x: x.transpose(0, 1), (Leaf((2, 3)),)),
          ("negative", lambda x: oxmera.transpose(x, -1, 0), (Leaf((2, 3, 4)),)),
          ("swapaxes", lambda x: oxmera.swapaxes(x, 1, 2), (Leaf((2, 3, 4)),)),
          ("mT", lambda x: x.mT, (Leaf((2, 3, 4)),)),
          ("transposed", lambda x: x.transpose(1, 0), (T((3, 4)),)),
          ("size-0", lambda x: x.transpose(0, 1), (Leaf((0, 3)),)),
          ("same-dim", lambda x: x.transpose(1, 1), (Leaf((2, 3)),)),
          ("0d", lambda x: x.transpose(0, -1), (Leaf(()),)))
add_cases("permute",
          ("3d", lambda x: x.permute(2, 0, 1), (Leaf((2, 3, 4)),)),
          ("tuple-negative", lambda x: oxmera.permute(x, (-1, 0, -2)), (Leaf((2, 3, 4)),)),
          ("T", lambda x: x.T, (Leaf((2, 3)),)),
          ("T-3d", lambda x: x.T, (Leaf((2, 3, 4)),)),
          ("T-0d", lambda x: x.T, (Leaf(()),)),
          ("0d", lambda x: x.permute(), (Leaf(()),)),
          ("size-0", lambda x: x.permute(1, 2, 0), (Leaf((0, 2, 3)),)),
          ("transposed", lambda x: x.permute(1, 0), (T((3, 4)),)))
add_cases("squeeze",
          ("all", lambda x: x.squeeze(), (Leaf((1, 3, 1)),)),
          ("dim", lambda x: x.squeeze(0), (Leaf((1, 3, 1)),)),
          ("dim-negative", lambda x: x.squeeze(-1), (Leaf((1, 3, 1)),)),
          ("dim-tuple", lambda x: oxmera.squeeze(x, (0, 2)), (Leaf((1, 3, 1)),)),
          ("dim-not-1", lambda x: x.squeeze(1), (Leaf((1, 3, 1)),)),
          ("nothing", lambda x: x.squeeze(), (Leaf((2, 3)),)),
          ("0d", lambda x: x.squeeze(0), (Leaf(()),)),
          ("size-0", lambda x: x.squeeze(), (Leaf((0, 1, 3)),)),
          ("transposed", lambda x: x.squeeze(1), (T((3, 1, 2)),)))
add_cases("unsqueeze",
          ("front", lambda x: x.unsqueeze(0), (Leaf((2, 3)),)),
          ("back", lambda x: x.unsqueeze(2), (Leaf((2, 3)),)),
          ("negative", lambda x: oxmera.unsqueeze(x, -1), (Leaf((2, 3)),)),
          ("negative-front", lambda x: x.unsqueeze(-3), (Leaf((2, 3)),)),
          ("0d", lambda x: x.unsqueeze(0), (Leaf(()),)),
          ("size-0", lambda x: x.unsqueeze(1), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.unsqueeze(1), (T((3, 4)),)))
add_cases("expand",
          ("dim-1", lambda x: x.expand(3, 4), (Leaf((3, 1)),)),
          ("keep", lambda x: x.expand(-1, 4), (Leaf((3, 1)),)),
          ("new-leading", lambda x: x.expand(2, 3, -1), (Leaf((1, 4)),)),
          ("tuple", lambda x: oxmera.expand(x, (2, 2, 3)), (Leaf((3,)),)),
          ("0d", lambda x: x.expand(2, 3), (Leaf(()),)),
          ("to-size-0", lambda x: x.expand(0, 3), (Leaf((1, 3)),)),
          ("size-0", lambda x: x.expand(2, 0, 3), (Leaf((0, 1)),)),
          ("same", lambda x: x.expand(2, 3), (Leaf((2, 3)),)),
          ("transposed", lambda x: x.expand(2, 3, 4), (T((3, 4)),)))
add_cases("broadcast_to",
          ("leading", lambda x: oxmera.broadcast_to(x, (2, 3)), (Leaf((3,)),)),
          ("dim-1", lambda x: x.broadcast_to((3, 4)), (Leaf((1, 4)),)),
          ("0d", lambda x: x.broadcast_to((2, 2)), (Leaf(()),)),
          ("size-0", lambda x: x.broadcast_to((2, 0, 3)), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.broadcast_to((2, 3, 4)), (T((3, 4)),)))
add_cases("cat",
          ("dim0", lambda x, y: oxmera.cat([x, y]), (Leaf((2, 3)), Leaf((1, 3)))),
          ("dim-1", lambda x, y: oxmera.cat([x, y], dim=-1), (Leaf((2, 3)), Leaf((2, 2)))),
          ("three", lambda x, y, z: oxmera.cat((x, y, z), 1),
           (Leaf((2, 1)), Leaf((2, 3)), Leaf((2, 2)))),
          ("no-grad-middle", lambda x, y, z: oxmera.cat([x, y, z]),
           (Leaf((1, 3)), const((2, 3)), Leaf((2, 3)))),
          ("size-0-piece", lambda x, y: oxmera.cat([x, y]), (Leaf((0, 3)), Leaf((2, 3)))),
          ("1d", lambda x, y: oxmera.concatenate([x, y]), (Leaf((3,)), Leaf((2,)))),
          ("transposed", lambda x, y: oxmera.cat([x, y], 1), (T((3, 2)), Leaf((3, 4)))),
          ("same-tensor", lambda x: oxmera.cat([x, x * 2]), (Leaf((2, 2)),)))
add_cases("stack",
          ("dim0", lambda x, y: oxmera.stack([x, y]), (Leaf((2, 3)), Leaf((2, 3)))),
          ("dim-1", lambda x, y: oxmera.stack([x, y], dim=-1), (Leaf((2, 3)), Leaf((2, 3)))),
          ("middle", lambda x, y, z: oxmera.stack((x, y, z), 1),
           (Leaf((2, 3)), Leaf((2, 3)), Leaf((2, 3)))),
          ("no-grad-first", lambda x, y: oxmera.stack([x, y]), (const((3,)), Leaf((3,)))),
          ("0d", lambda x, y: oxmera.stack([x, y]), (Leaf(()), Leaf(()))),
          ("size-0", lambda x, y: oxmera.stack([x, y], 1), (Leaf((0, 3)), Leaf((0, 3)))),
          ("transposed", lambda x, y: oxmera.stack([x, y]), (T((3, 4)), Leaf((3, 4)))))
add_cases("reshape",
          ("flatten", lambda x: x.flatten(), (Leaf((2, 3, 4)),)),
          ("flatten-middle", lambda x: oxmera.flatten(x, 1, 2), (Leaf((2, 3, 4, 2)),)),
          ("flatten-0d", lambda x: x.flatten(), (Leaf(()),)),
          ("flatten-size-0", lambda x: x.flatten(0, 1), (Leaf((2, 0, 3)),)),
          ("flatten-transposed", lambda x: x.flatten(), (T((3, 4)),)),
          ("unflatten", lambda x: x.unflatten(1, (3, 4)), (Leaf((2, 12)),)),
          ("unflatten-infer", lambda x: oxmera.unflatten(x, -1, (-1, 2)), (Leaf((3, 6)),)),
          ("unflatten-strided", lambda x: x.unflatten(0, (2, 2)), (S((4, 3)),)))
add_cases("permute",
          ("movedim", lambda x: x.movedim(0, -1), (Leaf((2, 3, 4)),)),
          ("movedim-tuple", lambda x: oxmera.movedim(x, (0, 1), (2, 0)), (Leaf((2, 3, 4)),)),
          ("moveaxis", lambda x: oxmera.moveaxis(x, 2, 0), (T((4, 3, 2)),)),
          ("movedim-0d", lambda x: x.movedim(0, 0), (Leaf(()),)))
add_cases("repeat",
          ("2d", lambda x: x.repeat(2, 3), (Leaf((2, 3)),)),
          ("new-dims", lambda x: x.repeat(2, 1, 2), (Leaf((2, 3)),)),
          ("ones", lambda x: x.repeat(1, 1), (Leaf((2, 3)),)),
          ("zero-repeats", lambda x: x.repeat(0, 2), (Leaf((2, 3)),)),
          ("0d", lambda x: x.repeat(2, 3), (Leaf(()),)),
          ("0d-no-sizes", lambda x: oxmera.repeat(x, ()), (Leaf(()),)),
          ("size-0", lambda x: x.repeat(2, 1), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.repeat(1, 2), (T((3, 4)),)),
          ("tile", lambda x: oxmera.tile(x, (2,)), (Leaf((2, 3)),)),
          ("tile-method-strided", lambda x: x.tile(2, 1, 1), (S((3, 2)),)))
add_cases("flip",
          ("dim0", lambda x: x.flip(0), (Leaf((3, 4)),)),
          ("two-dims", lambda x: oxmera.flip(x, (0, -1)), (Leaf((2, 3, 4)),)),
          ("no-dims", lambda x: oxmera.flip(x, ()), (Leaf((2, 3)),)),
          ("0d", lambda x: x.flip(0), (Leaf(()),)),
          ("size-0", lambda x: x.flip(1), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.flip(1), (T((3, 4)),)),
          ("strided", lambda x: x.flip(0, 1), (S((2, 3)),)))
add_cases("roll",
          ("1d", lambda x: x.roll(2), (Leaf((5,)),)),
          ("flattened", lambda x: x.roll(-4), (Leaf((2, 3)),)),
          ("dim", lambda x: x.roll(1, 1), (Leaf((2, 3)),)),
          ("dims", lambda x: oxmera.roll(x, (1, -2), (0, 2)), (Leaf((2, 3, 4)),)),
          ("same-dim-twice", lambda x: x.roll((1, 2), (0, 0)), (Leaf((3, 2)),)),
          ("0d", lambda x: x.roll(1), (Leaf(()),)),
          ("size-0", lambda x: x.roll(1, 0), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.roll(1, 0), (T((3, 4)),)))
add_cases("split",
          ("int", lambda x: x.split(2), (Leaf((5, 2)),)),
          ("sizes-dim1", lambda x: oxmera.split(x, [1, 0, 3], dim=1), (Leaf((2, 4)),)),
          ("one-piece-used", lambda x: x.split(2)[1] * 2, (Leaf((5,)),)),
          ("two-of-three-used", lambda x: (lambda p: p[0] * p[2])(x.split(1, -1)),
           (Leaf((2, 3)),)),
          ("single-piece", lambda x: x.split(4), (Leaf((3, 2)),)),
          ("size-0", lambda x: x.split(2, 1), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.split([1, 3], 0), (T((4, 3)),)),
          ("chunk", lambda x: x.chunk(3), (Leaf((5, 2)),)),
          ("chunk-last-used", lambda x: oxmera.chunk(x, 2, dim=1)[-1], (S((2, 3)),)),
          ("chunk-size-0", lambda x: x.chunk(2), (Leaf((0, 2)),)))
add_cases("unbind",
          ("dim0", lambda x: x.unbind(), (Leaf((3, 2)),)),
          ("dim1", lambda x: oxmera.unbind(x, 1), (Leaf((2, 3, 2)),)),
          ("one-used", lambda x: x.unbind(-1)[1] * 3, (Leaf((2, 3)),)),
          ("1d-to-0d", lambda x: x.unbind(), (Leaf((3,)),)),
          ("single", lambda x: x.unbind(), (Leaf((1, 2)),)),
          ("size-0", lambda x: x.unbind(1), (Leaf((0, 2)),)),
          ("transposed", lambda x: x.unbind(1), (T((3, 4)),)))
add_cases("diagonal",
          ("main", lambda x: x.diagonal(), (Leaf((3, 3)),)),
          ("offset", lambda x: x.diagonal(1), (Leaf((3, 4)),)),
          ("negative-offset", lambda x: oxmera.diagonal(x, -1), (Leaf((4, 3)),)),
          ("dims-swapped", lambda x: x.diagonal(1, dim1=1, dim2=0), (Leaf((3, 4)),)),
          ("3d", lambda x: x.diagonal(0, 2, 0), (Leaf((3, 2, 4)),)),
          ("beyond", lambda x: x.diagonal(5), (Leaf((2, 3)),)),
          ("size-0", lambda x: x.diagonal(), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.diagonal(-1), (T((3, 4)),)),
          ("strided", lambda x: x.diagonal(), (S((3, 3)),)))
add_cases("diagonal_backward",
          ("2d", lambda g: diagonal_backward(g, (3, 4), 1, 0, 1), (Leaf((3,)),)),
          ("3d", lambda g: diagonal_backward(g, (3, 2, 4), 0, 2, 0), (Leaf((2, 3)),)),
          ("size-0", lambda g: diagonal_backward(g, (0, 3), 0, 0, 1), (Leaf((0,)),)),
          ("transposed", lambda g: diagonal_backward(g, (3, 2, 2), 0, 1, 2), (T((3, 2)),)))
for _name in ("tril", "triu"):
    add_cases(_name,
              ("square", lambda x, f=_name: getattr(x, f)(), (Leaf((3, 3)),)),
              ("wide-offset", lambda x, f=_name: getattr(oxmera, f)(x, 1), (Leaf((2, 4)),)),
              ("tall-negative", lambda x, f=_name: getattr(x, f)(diagonal=-1), (Leaf((4, 2)),)),
              ("batched", lambda x, f=_name: getattr(x, f)(), (Leaf((2, 3, 3)),)),
              ("size-0", lambda x, f=_name: getattr(x, f)(), (Leaf((0, 3)),)),
              ("transposed", lambda x, f=_name: getattr(x, f)(), (T((3, 4)),)))

# -- PyTorch comparisons -----------------------------------------------------------------------

add_torch_cases("reshape",
                ("2d", lambda lib, x: x.reshape(3, 2), (Leaf((2, 3)),)),
                ("infer", lambda lib, x: lib.reshape(x, (-1, 2)), (Leaf((2, 3, 2)),)),
                ("0d", lambda lib, x: x.reshape(1, 1), (Leaf(()),)),
                ("size-0", lambda lib, x: x.reshape(-1, 1, 3), (Leaf((0, 3)),)))
add_torch_cases("view",
                ("2d", lambda lib, x: x.view(3, 2), (Leaf((2, 3)),)),
                ("infer", lambda lib, x: x.view(-1), (Leaf((2, 3)),)))
add_torch_cases("flatten",
                ("all", lambda lib, x: x.flatten(), (Leaf((2, 3, 4)),)),
                ("middle", lambda lib, x: lib.flatten(x, 1, 2), (Leaf((2, 3, 4, 2)),)),
                ("0d", lambda lib, x: x.flatten(), (Leaf(()),)),
                ("size-0", lambda lib, x: x.flatten(0, 1), (Leaf((2, 0, 3)),)))
add_torch_cases("unflatten",
                ("sizes", lambda lib, x: x.unflatten(1, (3, 4)), (Leaf((2, 12)),)),
                ("infer", lambda lib, x: lib.unflatten(x, -1, (-1, 2)), (Leaf((3, 6)),)))
add_torch_cases("transpose",
                ("2d", lambda lib, x: x.transpose(0, 1), (Leaf((2, 3)),)),
                ("negative", lambda lib, x: lib.transpose(x, -1, 0), (Leaf((2, 3, 4)),)),
                ("swapaxes", lambda lib, x: lib.swapaxes(x, 1, 2), (Leaf((2, 3, 4)),)),
                ("mT", lambda lib, x: x.mT, (Leaf((2, 3, 4)),)),
                ("0d", lambda lib, x: x.transpose(0, -1), (Leaf(()),)))
add_torch_cases("permute",
                ("3d", lambda lib, x: x.permute(2, 0, 1), (Leaf((2, 3, 4)),)),
                ("tuple", lambda lib, x: lib.permute(x, (-1, 0, -2)), (Leaf((2, 3, 4)),)),
                ("T", lambda lib, x: x.T, (Leaf((2, 3)),)),
                ("size-0", lambda lib, x: x.permute(1, 0), (Leaf((0, 3)),)))
add_torch_cases("movedim",
                ("int", lambda lib, x: x.movedim(0, -1), (Leaf((2, 3, 4)),)),
                ("tuple", lambda lib, x: lib.movedim(x, (0, 1), (2, 0)), (Leaf((2, 3, 4)),)),
                ("0d", lambda lib, x: x.movedim(0, 0), (Leaf(()),)))
add_torch_cases("moveaxis",
                ("int", lambda lib, x: lib.moveaxis(x, 2, 0), (Leaf((2, 3, 4)),)))
add_torch_cases("squeeze",
                ("all", lambda lib, x: x.squeeze(), (Leaf((1, 3, 1)),)),
                ("dim", lambda lib, x: x.squeeze(-1), (Leaf((1, 3, 1)),)),
                ("dim-tuple", lambda lib, x: lib.squeeze(x, (0, 2)), (Leaf((1, 3, 1)),)),
                ("dim-not-1", lambda lib, x: x.squeeze(1), (Leaf((1, 3, 1)),)),
                ("0d", lambda lib, x: x.squeeze(0), (Leaf(()),)))
add_torch_cases("unsqueeze",
                ("front", lambda lib, x: x.unsqueeze(0), (Leaf((2, 3)),)),
                ("negative", lambda lib, x: lib.unsqueeze(x, -1), (Leaf((2, 3)),)),
                ("0d", lambda lib, x: x.unsqueeze(0), (Leaf(()),)))
add_torch_cases("expand",
                ("dim-1", lambda lib, x: x.expand(3, 4), (Leaf((3, 1)),)),
                ("keep-new-leading", lambda lib, x: x.expand(2, -1, 4), (Leaf((3, 1)),)),
                ("0d", lambda lib, x: x.expand(2, 3), (Leaf(()),)),
                ("to-size-0", lambda lib, x: x.expand(0, 3), (Leaf((1, 3)),)))
add_torch_cases("broadcast_to",
                ("leading", lambda lib, x: lib.broadcast_to(x, (2, 3)), (Leaf((3,)),)),
                ("0d", lambda lib, x: x.broadcast_to((2, 2)), (Leaf(()),)))
add_torch_cases("repeat",
                ("2d", lambda lib, x: x.repeat(2, 3), (Leaf((2, 3)),)),
                ("new-dims", lambda lib, x: x.repeat(2, 1, 2), (Leaf((2, 3)),)),
                ("0d", lambda lib, x: x.repeat(2, 3), (Leaf(()),)),
                ("zero", lambda lib, x: x.repeat(0, 2), (Leaf((2, 3)),)))
add_torch_cases("tile",
                ("short-dims", lambda lib, x: lib.tile(x, (2,)), (Leaf((2, 3)),)),
                ("long-dims", lambda lib, x: x.tile(2, 1, 2), (Leaf((2, 3)),)),
                ("0d", lambda lib, x: lib.tile(x, (3,)), (Leaf(()),)))
add_torch_cases("flip",
                ("dims", lambda lib, x: lib.flip(x, (0, -1)), (Leaf((2, 3, 4)),)),
                ("method", lambda lib, x: x.flip(1), (Leaf((2, 3)),)),
                ("0d", lambda lib, x: x.flip(0), (Leaf(()),)))
add_torch_cases("roll",
                ("flattened", lambda lib, x: x.roll(-4), (Leaf((2, 3)),)),
                ("dims", lambda lib, x: lib.roll(x, (1, -2), (0, 2)), (Leaf((2, 3, 4)),)),
                ("same-dim-twice", lambda lib, x: x.roll((1, 2), (0, 0)), (Leaf((3, 2)),)),
                ("0d", lambda lib, x: x.roll(1), (Leaf(()),)))
add_torch_cases("cat",
                ("dim0", lambda lib, x, y: lib.cat([x, y]), (Leaf((2, 3)), Leaf((1, 3)))),
                ("dim-1", lambda lib, x, y: lib.cat((x, y), dim=-1), (Leaf((2, 3)), Leaf((2, 2)))),
                ("size-0-piece", lambda lib, x, y: lib.cat([x, y]), (Leaf((0, 3)), Leaf((2, 3)))),
                ("no-grad", lambda lib, x, y: lib.cat([x, y]), (const((1, 3)), Leaf((2, 3)))),
                ("concatenate", lambda lib, x, y: lib.concatenate([x, y], 1),
                 (Leaf((2, 1)), Leaf((2, 2)))))
add_torch_cases("stack",
                ("dim0", lambda lib, x, y: lib.stack([x, y]), (Leaf((2, 3)), Leaf((2, 3)))),
                ("dim-1", lambda lib, x, y: lib.stack([x, y], dim=-1),
                 (Leaf((2, 3)), Leaf((2, 3)))),
                ("0d", lambda lib, x, y: lib.stack([x, y]), (Leaf(()), Leaf(()))))
add_torch_cases("split",
                ("int", lambda lib, x: x.split(2), (Leaf((5, 2)),)),
                ("sizes", lambda lib, x: lib.split(x, [1, 0, 3], dim=1), (Leaf((2, 4)),)),
                ("one-used", lambda lib, x: x.split(2)[1], (Leaf((5,)),)),
                ("size-0", lambda lib, x: x.split(2, 1), (Leaf((0, 3)),)))
add_torch_cases("chunk",
                ("uneven", lambda lib, x: x.chunk(3), (Leaf((5, 2)),)),
                ("fewer", lambda lib, x: lib.chunk(x, 4), (Leaf((6,)),)),
                ("dim1", lambda lib, x: x.chunk(2, dim=1), (Leaf((2, 3)),)),
                ("size-0", lambda lib, x: x.chunk(3), (Leaf((0, 2)),)))
add_torch_cases("unbind",
                ("dim0", lambda lib, x: x.unbind(), (Leaf((3, 2)),)),
                ("dim1-one-used", lambda lib, x: lib.unbind(x, 1)[2], (Leaf((2, 3, 2)),)),
                ("size-0", lambda lib, x: x.unbind(1), (Leaf((0, 2)),)))
add_torch_cases("diagonal",
                ("main", lambda lib, x: x.diagonal(), (Leaf((3, 3)),)),
                ("offset-dims", lambda lib, x: lib.diagonal(x, 1, 2, 0), (Leaf((3, 2, 4)),)),
                ("negative", lambda lib, x: x.diagonal(-1, -1, 1), (Leaf((2, 3, 4)),)),
                ("beyond", lambda lib, x: x.diagonal(5), (Leaf((2, 3)),)))


def _torch_diagonal_backward(lib, g, shape, offset, dim1, dim2):
    if lib is oxmera:
        return diagonal_backward(g, shape, offset, dim1, dim2)
    return lib.ops.aten.diagonal_backward(g, list(shape), offset, dim1, dim2)


add_torch_cases("diagonal_backward",
                ("2d", lambda lib, g: _torch_diagonal_backward(lib, g, (3, 4), 1, 0, 1),
                 (Leaf((3,)),)),
                ("3d", lambda lib, g: _torch_diagonal_backward(lib, g, (3, 2, 4), 0, 2, 0),
                 (Leaf((2, 3)),)))
for _name in ("tril", "triu"):
    add_torch_cases(_name,
                    ("square", lambda lib, x, f=_name: getattr(x, f)(), (Leaf((3, 3)),)),
                    ("offset", lambda lib, x, f=_name: getattr(lib, f)(x, 1), (Leaf((2, 4)),)),
                    ("negative-batched", lambda lib, x, f=_name: getattr(x, f)(-1),
                     (Leaf((2, 3, 3)),)))
