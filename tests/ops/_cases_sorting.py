"""Gradient cases and PyTorch comparisons of the sorting and searching ops
(``oxmera.ops.sorting``; see ``_case_table``).

Values are distinct where an op picks elements: at a tie the order (and so
the picked element) changes under the finite differences' perturbation.
"""
import math

import oxmera

from ._case_table import (COMPOSITE_CASES, NO_GRADIENT_CALLS, Case, Leaf, S, T, add_cases,
                          add_torch_cases)

NAN = math.nan


def recorded_nothing(*outputs):
    """For results that are neither bool nor int64 (histc's floats, histogram's
    pair): check here that none of them records, and give the registry test
    the bool tensor it expects."""
    for out in outputs:
        assert isinstance(out, oxmera.Tensor)
        assert not out.requires_grad and out.grad_fn is None
    return outputs[0] == outputs[0]


# -- gradient cases ----------------------------------------------------------------------------

def picking_cases(name, fn):
    """Cases of an op picking elements along a dim: ``fn(x, dim)`` -> (values, indices)."""
    add_cases(
        name,
        ("dim-last", lambda x: fn(x, -1), (Leaf((3, 4), "distinct"),)),
        ("dim0", lambda x: fn(x, 0).values, (Leaf((3, 4), "distinct"),)),
        ("3d-middle", lambda x: fn(x, 1).values, (Leaf((2, 3, 4), "distinct"),)),
        ("vector", lambda x: fn(x, 0).values, (Leaf((5,), "distinct"),)),
        ("0d", lambda x: fn(x, 0).values, (Leaf(()),)),
        ("size-0-other-dim", lambda x: fn(x, 1).values, (Leaf((0, 3)),)),
        ("transposed", lambda x: fn(x, 1).values, (T((3, 4), "distinct"),)),
        ("strided", lambda x: fn(x, 0).values, (S((3, 2), "distinct"),)),
    )


picking_cases("sort", lambda x, d: oxmera.sort(x, d))
add_cases(
    "sort",
    ("descending", lambda x: x.sort(1, descending=True).values, (Leaf((3, 4), "distinct"),)),
    ("stable", lambda x: oxmera.sort(x, stable=True, dim=0).values, (Leaf((4, 2), "distinct"),)),
    ("size-0-dim", lambda x: x.sort(0).values, (Leaf((0, 3)),)),
    ("method-default", lambda x: x.sort()[0], (Leaf((2, 5), "distinct"),)),
)

picking_cases("topk", lambda x, d: oxmera.topk(x, 1, d))
add_cases(
    "topk",
    ("k2-smallest", lambda x: x.topk(2, largest=False).values, (Leaf((3, 4), "distinct"),)),
    ("k-all", lambda x: x.topk(4, dim=1).values, (Leaf((2, 4), "distinct"),)),
    ("k0", lambda x: x.topk(0).values, (Leaf((2, 4), "distinct"),)),
    ("size-0-dim", lambda x: x.topk(0, dim=0).values, (Leaf((0, 3)),)),
)

COMPOSITE_CASES.extend([
    Case("msort:matrix", lambda x: oxmera.msort(x), (Leaf((4, 3), "distinct"),)),
    Case("msort:method-transposed", lambda x: x.msort(), (T((3, 2), "distinct"),)),
])

# -- non-differentiable ops: never recorded ----------------------------------------------------

NO_GRADIENT_CALLS.update({
    "argsort": lambda x, y: oxmera.argsort(x - y, descending=True),
    "unique": lambda x, y: (x * y).unique(return_counts=True)[1],
    "unique_consecutive": lambda x, y: oxmera.unique_consecutive(y, return_inverse=True)[1],
    "searchsorted": lambda x, y: oxmera.searchsorted(x, y),
    "bucketize": lambda x, y: oxmera.bucketize(y, x, right=True),
    "histc": lambda x, y: recorded_nothing(oxmera.histc(x, 4)),
    "histogram": lambda x, y: recorded_nothing(*oxmera.histogram(x, 3, weight=y)),
    "bincount": lambda x, y: recorded_nothing(oxmera.bincount(oxmera.tensor([0, 2, 2]),
                                                              weights=x)),
})

# -- PyTorch comparisons -----------------------------------------------------------------------

_WITH_NAN = (2.0, NAN, 1.0, NAN, 2.0, -1.0)
_TIES = (3.0, 1.0, 3.0, 2.0, 1.0, 3.0)

add_torch_cases(
    "sort",
    ("dim-last", lambda lib, x: lib.sort(x), (Leaf((3, 4), "distinct"),)),
    ("dim0-descending", lambda lib, x: x.sort(0, descending=True), (Leaf((3, 4), "distinct"),)),
    ("3d", lambda lib, x: lib.sort(x, dim=1), (Leaf((2, 3, 4), "distinct"),)),
    # Stable ties, ascending and descending (the gradient follows the order).
    ("stable-ties", lambda lib, x: lib.sort(x, stable=True), (Leaf((6,), values=_TIES),)),
    ("stable-ties-descending", lambda lib, x: lib.sort(x, descending=True, stable=True),
     (Leaf((6,), values=_TIES),)),
    # NaN is the largest: last ascending, first descending.
    ("nan", lambda lib, x: lib.sort(x, stable=True), (Leaf((6,), values=_WITH_NAN),)),
    ("nan-descending", lambda lib, x: x.sort(descending=True, stable=True),
     (Leaf((6,), values=_WITH_NAN),)),
    ("0d", lambda lib, x: x.sort(), (Leaf(()),)),
    ("size-0", lambda lib, x: x.sort(0), (Leaf((0, 3)),)),
    ("int", lambda lib: lib.sort(lib.tensor([[3, 1, 2], [0, 0, -1]]), stable=True), (),
     {"grad": False}),
    ("bool", lambda lib: lib.sort(lib.tensor([True, False, True]), stable=True), (),
     {"grad": False}),
)
add_torch_cases(
    "argsort",
    ("dim-last", lambda lib, x: lib.argsort(x), (Leaf((3, 4), "distinct"),), {"grad": False}),
    ("descending-stable", lambda lib, x: lib.argsort(x, dim=0, descending=True, stable=True),
     (Leaf((3, 2), values=_TIES),), {"grad": False}),
    ("nan-stable", lambda lib, x: x.argsort(stable=True), (Leaf((6,), values=_WITH_NAN),),
     {"grad": False}),
    ("0d", lambda lib, x: x.argsort(), (Leaf(()),), {"grad": False}),
)
add_torch_cases(
    "msort",
    ("matrix", lambda lib, x: lib.msort(x), (Leaf((4, 3), "distinct"),)),
    ("method", lambda lib, x: x.msort(), (Leaf((5,), "distinct"),)),
)
add_torch_cases(
    "topk",
    ("k2", lambda lib, x: lib.topk(x, 2), (Leaf((3, 5), "distinct"),)),
    ("smallest-dim0", lambda lib, x: x.topk(2, dim=0, largest=False), (Leaf((4, 3), "distinct"),)),
    ("k-all", lambda lib, x: x.topk(4, 1, True, True), (Leaf((2, 4), "distinct"),)),
    ("k0", lambda lib, x: x.topk(0), (Leaf((2, 4), "distinct"),)),
    ("nan-largest", lambda lib, x: x.topk(2), (Leaf((6,), values=_WITH_NAN),)),
    ("nan-smallest", lambda lib, x: x.topk(2, largest=False), (Leaf((6,), values=_WITH_NAN),)),
    ("0d", lambda lib, x: x.topk(1), (Leaf(()),)),
    ("int", lambda lib: lib.topk(lib.tensor([4, 9, 1, 7]), 3), (), {"grad": False}),
)
add_torch_cases(
    "unique",
    ("flat", lambda lib: lib.unique(lib.tensor([3, 1, 2, 1, 3])), (), {"grad": False}),
    ("inverse-counts", lambda lib: lib.tensor([[3, 1], [2, 1], [3, 3]]).unique(
        return_inverse=True, return_counts=True), (), {"grad": False}),
    ("sorted-false", lambda lib: lib.unique(lib.tensor([3, 1, 2, 1]), sorted=False), (),
     {"grad": False}),
    ("float-nan-distinct", lambda lib, x: lib.unique(x, return_counts=True),
     (Leaf((6,), values=_WITH_NAN),), {"grad": False}),
    ("dim0", lambda lib: lib.unique(lib.tensor([[1, 2], [1, 2], [0, 1]]), dim=0,
                                    return_inverse=True, return_counts=True), (), {"grad": False}),
    ("dim1", lambda lib: lib.unique(lib.tensor([[1, 0, 1], [2, 5, 2]]), dim=1,
                                    return_inverse=True), (), {"grad": False}),
    ("bool", lambda lib: lib.unique(lib.tensor([True, False, True]), return_counts=True), (),
     {"grad": False}),
    ("empty", lambda lib: lib.unique(lib.tensor([], dtype=lib.int64), return_inverse=True,
                                     return_counts=True), (), {"grad": False}),
    ("0d", lambda lib: lib.unique(lib.tensor(4), return_inverse=True), (), {"grad": False}),
)
add_torch_cases(
    "unique_consecutive",
    ("flat", lambda lib: lib.unique_consecutive(lib.tensor([1, 1, 2, 2, 3, 1])), (),
     {"grad": False}),
    ("inverse-counts", lambda lib: lib.tensor([[1, 1], [2, 2], [2, 1]]).unique_consecutive(
        return_inverse=True, return_counts=True), (), {"grad": False}),
    ("dim0", lambda lib: lib.unique_consecutive(lib.tensor([[1, 2], [1, 2], [0, 1], [1, 2]]),
                                                dim=0, return_inverse=True, return_counts=True),
     (), {"grad": False}),
    ("dim1", lambda lib: lib.unique_consecutive(lib.tensor([[1, 1, 0], [2, 2, 2]]), dim=1,
                                                return_counts=True), (), {"grad": False}),
    ("float", lambda lib, x: lib.unique_consecutive(x.round(), return_counts=True),
     (Leaf((8,)),), {"grad": False}),
    ("empty", lambda lib: lib.unique_consecutive(lib.tensor([], dtype=lib.int64),
                                                 return_inverse=True, return_counts=True), (),
     {"grad": False}),
)
add_torch_cases(
    "searchsorted",
    ("1d", lambda lib: lib.searchsorted(lib.tensor([1, 3, 5, 7]), lib.tensor([[3, 6], [9, 0]])),
     (), {"grad": False}),
    ("right", lambda lib: lib.searchsorted(lib.tensor([1, 3, 3, 7]), lib.tensor([3, 6]),
                                           right=True), (), {"grad": False}),
    ("side-right-int32", lambda lib: lib.searchsorted(lib.tensor([1, 3, 3, 7]),
                                                      lib.tensor([3, 6]), side="right",
                                                      out_int32=True), (), {"grad": False}),
    ("rows", lambda lib: lib.searchsorted(lib.tensor([[1, 3, 5, 7], [2, 4, 6, 8]]),
                                          lib.tensor([[3, 6, 9], [1, 4, 8]])), (),
     {"grad": False}),
    ("scalar", lambda lib: lib.searchsorted(lib.tensor([1.0, 3.0]), 2.0), (), {"grad": False}),
    ("sorter", lambda lib: lib.searchsorted(lib.tensor([5, 1, 3]), lib.tensor([2, 4, 6]),
                                            sorter=lib.tensor([1, 2, 0])), (), {"grad": False}),
    ("float", lambda lib, s, x: lib.searchsorted(s.sort().values, x), (Leaf((6,)), Leaf((2, 3))),
     {"grad": False}),
)
add_torch_cases(
    "bucketize",
    ("left", lambda lib: lib.bucketize(lib.tensor([[0.5, 1.0], [2.5, 4.0]]),
                                       lib.tensor([1.0, 2.0, 3.0])), (), {"grad": False}),
    ("right-int32", lambda lib: lib.bucketize(lib.tensor([0.5, 1.0, 2.0, 4.0]),
                                              lib.tensor([1.0, 2.0, 3.0]), right=True,
                                              out_int32=True), (), {"grad": False}),
)
add_torch_cases(
    "histc",
    ("range", lambda lib, x: lib.histc(x, bins=5, min=-1, max=1), (Leaf((30,)),),
     {"grad": False}),
    ("data-range", lambda lib, x: x.histc(7), (Leaf((4, 5)),), {"grad": False}),
    ("constant", lambda lib: lib.histc(lib.tensor([2.0, 2.0]), bins=4), (), {"grad": False}),
    ("outside-and-top-edge", lambda lib: lib.histc(lib.tensor([1.0, 2.0, 100.0, -3.0, 4.0]),
                                                   bins=4, min=0, max=4), (), {"grad": False}),
    ("float32", lambda lib: lib.histc(lib.tensor([0.1, 0.7, 0.3, 0.9, 0.5]), bins=3), (),
     {"grad": False}),
)
add_torch_cases(
    "histogram",
    ("bins-int", lambda lib, x: lib.histogram(x, 5), (Leaf((30,)),), {"grad": False}),
    ("range-weight-density", lambda lib, x, w: lib.histogram(x, 4, range=(-1.0, 1.0),
                                                             weight=w.abs(), density=True),
     (Leaf((3, 5)), Leaf((3, 5))), {"grad": False}),
    ("edges", lambda lib, x: x.histogram(lib.tensor([-2.0, -0.5, 0.0, 1.5, 2.0],
                                                    dtype=lib.float64)),
     (Leaf((20,)),), {"grad": False}),
    ("edges-density", lambda lib, x: lib.histogram(x, lib.tensor([-2.0, 0.0, 1.0],
                                                                 dtype=lib.float64),
                                                   density=True), (Leaf((20,)),),
     {"grad": False}),
    ("constant", lambda lib: lib.histogram(lib.tensor([2.0, 2.0]), bins=4), (),
     {"grad": False}),
    ("top-edge", lambda lib: lib.histogram(lib.tensor([0.0, 1.0, 3.0]), bins=3), (),
     {"grad": False}),
    # float32 edges from -2.5 to 2.5: the middle one is 5.96e-08, not 0, so 0
    # falls in the bin below it (PyTorch's linspace, a fused multiply-add).
    ("float32-inner-edge", lambda lib: lib.histogram(lib.tensor([0.0, 1.0, -2.5, 2.5, -0.5]),
                                                     6), (), {"grad": False, "atol": 0,
                                                              "rtol": 0}),
)
add_torch_cases(
    "bincount",
    ("counts", lambda lib: lib.bincount(lib.tensor([0, 1, 1, 3])), (), {"grad": False}),
    ("minlength", lambda lib: lib.tensor([1]).bincount(minlength=4), (), {"grad": False}),
    ("empty", lambda lib: lib.bincount(lib.tensor([], dtype=lib.int64)), (), {"grad": False}),
    ("weights-float64", lambda lib, w: lib.bincount(lib.tensor([0, 2, 2, 4, 0]), w),
     (Leaf((5,), requires_grad=False),), {"grad": False}),
    ("weights-float32", lambda lib: lib.bincount(lib.tensor([0, 1, 1]),
                                                 weights=lib.tensor([0.5, 1.0, 2.0])), (),
     {"grad": False}),
    ("weights-int", lambda lib: lib.bincount(lib.tensor([0, 1, 1]),
                                             weights=lib.tensor([1, 2, 3])), (), {"grad": False}),
)
