"""Gradient and PyTorch cases of in-place ops: ``t[index] = v`` (``index_put``) and
writes through views (``copy_slices``); see ``_case_table`` for the machinery."""
from oxmera.ops.inplace import index_put

from ._case_table import Leaf, S, T, add_cases, add_torch_cases


def _assigned(index):
    def fn(x, v):
        z = x * 1
        z[index] = v
        return z
    return fn


def _through_view(index, method, *args):
    def fn(x, y):
        z = x * 1
        getattr(z[index], method)(y, *args)
        return z
    return fn


def _lib_assigned(index):
    def fn(lib, x, v):
        z = x * 1
        z[index] = v
        return z
    return fn


def _lib_through_view(index, method):
    def fn(lib, x, y):
        z = x * 1
        getattr(z[index], method)(y)
        return z
    return fn


add_cases(
    "index_put",
    ("slice", _assigned(slice(1, None)), (Leaf((3, 4)), Leaf((4,)))),
    ("int-row", _assigned(1), (Leaf((3, 4)), Leaf((1, 4)))),
    ("bool-mask", lambda x, v: index_put(x, v, (x.detach() > 0,)), (Leaf((3, 4)), Leaf(()))),
    ("int-array", _assigned(([0, 2],)), (T((3, 4)), Leaf((2, 4)))),
    ("strided", _assigned((slice(None), 0)), (S((3, 4)), Leaf((3,)))),
    ("0d", _assigned(()), (Leaf(()), Leaf(()))),
    ("size-0", _assigned(slice(1, None)), (Leaf((0, 3)), Leaf((3,)))),
)
add_cases(
    "copy_slices",
    ("mul-slice", _through_view(slice(1, None), "mul_"), (Leaf((3, 4)), Leaf((4,)))),
    ("add-column", _through_view((slice(None), 1), "add_"), (T((3, 4)), Leaf((3,)))),
    ("div-strided", _through_view(0, "div_"), (S((2, 3)), Leaf((3,), "positive"))),
    ("0d", _through_view((), "mul_"), (Leaf(()), Leaf(()))),
    ("size-0", _through_view(slice(None), "mul_"), (Leaf((0, 3)), Leaf((3,)))),
    ("view-of-view", lambda x, y: _nested(x, y), (Leaf((3, 4)), Leaf((2,)))),
)


def _nested(x, y):
    z = x * 1
    z[1:].T[1:3, 0].mul_(y)
    return z


add_torch_cases(
    "index_put",
    ("slice", _lib_assigned(slice(1, None)), (Leaf((3, 4)), Leaf((4,)))),
    ("int-row", _lib_assigned(1), (Leaf((3, 4)), Leaf((4,)))),
)
add_torch_cases(
    "copy_slices",
    ("mul-slice", _lib_through_view(slice(1, None), "mul_"), (Leaf((3, 4)), Leaf((4,)))),
    ("add-column", _lib_through_view((slice(None), 1), "add_"), (Leaf((3, 4)), Leaf((3,)))),
)
