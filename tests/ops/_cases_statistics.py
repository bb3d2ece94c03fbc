"""Gradient cases and PyTorch comparisons of ``oxmera.ops.statistics`` (see
``_case_table``): order statistics, running extremes, logcumsumexp, and the
composites (nansum, nanmean, var_mean, std_mean, aminmax, quantile, diff).

Values are distinct where an op picks elements (a tie moves the pick under
the finite differences' perturbation); ties are compared with PyTorch.
"""
import math

import oxmera

from ._case_table import (COMPOSITE_CASES, NO_GRADIENT_CALLS, Case, Leaf, S, T, add_cases,
                          add_torch_cases)
from ._cases_sorting import picking_cases

NAN, INF = math.nan, math.inf

# -- gradient cases of the registered ops ------------------------------------------------------

for _name in ("median", "nanmedian"):
    _fn = getattr(oxmera, _name)
    picking_cases(_name, lambda x, d, fn=_fn: fn(x, d))
    add_cases(
        _name,
        ("all", lambda x, fn=_fn: fn(x), (Leaf((3, 4), "distinct"),)),
        ("all-even-count", lambda x, fn=_fn: fn(x), (Leaf((2, 3), "distinct"),)),
        ("all-0d", lambda x, fn=_fn: fn(x), (Leaf(()),)),
        ("all-transposed", lambda x, n=_name: getattr(x, n)(), (T((3, 3), "distinct"),)),
        ("keepdim", lambda x, fn=_fn: fn(x, 1, keepdim=True).values, (Leaf((3, 4), "distinct"),)),
        # Over all elements, equal elements share the gradient (a kink: first order).
        ("all-tie", lambda x, fn=_fn: fn(x), (Leaf((4,), values=(1.0, 2.0, 2.0, 3.0)),),
         {"second_order": False}),
    )

picking_cases("mode", lambda x, d: oxmera.mode(x, d))
add_cases("mode", ("keepdim", lambda x: x.mode(keepdim=True).values, (Leaf((3, 4), "distinct"),)))

picking_cases("kthvalue", lambda x, d: oxmera.kthvalue(x, 1, d))
add_cases(
    "kthvalue",
    ("k2-keepdim", lambda x: x.kthvalue(2, 1, keepdim=True).values, (Leaf((3, 4), "distinct"),)),
    ("k-last", lambda x: oxmera.kthvalue(x, 3, dim=0).values, (Leaf((3, 4), "distinct"),)),
)

for _name in ("cummax", "cummin"):
    _fn = getattr(oxmera, _name)
    picking_cases(_name, lambda x, d, fn=_fn: fn(x, d))
    add_cases(_name, ("size-0-dim", lambda x, fn=_fn: fn(x, 0).values, (Leaf((0, 3)),)),
              ("method", lambda x, n=_name: getattr(x, n)(dim=1).values,
               (Leaf((2, 5), "distinct"),)))

add_cases(
    "logcumsumexp",
    ("dim0", lambda x: oxmera.logcumsumexp(x, 0), (Leaf((3, 4)),)),
    ("dim-neg", lambda x: x.logcumsumexp(-1), (Leaf((2, 3, 4)),)),
    ("0d", lambda x: x.logcumsumexp(0), (Leaf(()),)),
    ("size-0", lambda x: x.logcumsumexp(0), (Leaf((0, 3)),)),
    ("size-0-other-dim", lambda x: x.logcumsumexp(1), (Leaf((0, 3)),)),
    ("transposed", lambda x: x.logcumsumexp(1), (T((3, 4)),)),
    ("strided", lambda x: x.logcumsumexp(0), (S((3, 2)),)),
    ("magnitude-1e3", lambda x: x.logcumsumexp(1),
     (Leaf((2, 3), values=(1e3, 1e3 + 1.0, -1e3, -1e3, -1e3 + 0.5, 1e3)),)),
)

# -- composites --------------------------------------------------------------------------------

COMPOSITE_CASES.extend([
    Case("nansum:dim", lambda x: oxmera.nansum(x, 1), (Leaf((3, 4)),)),
    Case("nansum:with-nan", lambda x: x.nansum(),
         (Leaf((2, 3), values=(1.0, NAN, -2.0, 0.5, NAN, 1.5)),)),
    Case("nanmean:with-nan-dim", lambda x: x.nanmean(dim=1, keepdim=True),
         (Leaf((2, 3), values=(1.0, NAN, -2.0, 0.5, 0.25, 1.5)),)),
    Case("nanmean:transposed", lambda x: oxmera.nanmean(x, 0), (T((3, 4)),)),
    Case("var_mean:dim", lambda x: oxmera.var_mean(x, 1), (Leaf((3, 4)),)),
    Case("std_mean:correction-keepdim", lambda x: oxmera.std_mean(x, (0, 1), correction=0,
                                                                  keepdim=True),
         (Leaf((2, 3, 2)),)),
    Case("aminmax:dim", lambda x: oxmera.aminmax(x, dim=1), (Leaf((3, 4), "distinct"),)),
    Case("aminmax:all", lambda x: x.aminmax(), (S((2, 3), "distinct"),)),
    Case("diff:n2-prepend-append", lambda x, p, a: oxmera.diff(x, 2, 0, p, a),
         (Leaf((4, 3)), Leaf((1, 3)), Leaf((2, 3)))),
    Case("diff:method-transposed", lambda x: x.diff(dim=1), (T((3, 4)),)),
    Case("quantile:linear-q-tensor", lambda x, q: oxmera.quantile(x, q, dim=1),
         (Leaf((3, 5), "distinct"), Leaf((2,), values=(0.3, 0.85)))),
    Case("quantile:all-keepdim", lambda x: x.quantile(0.4, keepdim=True),
         (Leaf((3, 4), "distinct"),)),
    Case("quantile:midpoint", lambda x: x.quantile(0.3, 0, interpolation="midpoint"),
         (T((5, 2), "distinct"),)),
    Case("quantile:nearest", lambda x: x.quantile(0.3, 1, interpolation="nearest"),
         (Leaf((2, 5), "distinct"),)),
    Case("quantile:lower-higher", lambda x: x.quantile(0.3, 1, interpolation="lower")
         + x.quantile(0.3, 1, interpolation="higher"), (Leaf((2, 5), "distinct"),)),
    Case("nanquantile:with-nan", lambda x, q: x.nanquantile(q, dim=1),
         (Leaf((2, 4), values=(1.0, NAN, -2.0, 0.5, 0.25, 1.5, -0.75, 2.0)),
          Leaf((), values=(0.4,)))),
])

NO_GRADIENT_CALLS.update({
    "count_nonzero": lambda x, y: oxmera.count_nonzero(x - y, dim=0),
})

# -- PyTorch comparisons -----------------------------------------------------------------------

_WITH_NAN = (2.0, NAN, 1.0, 4.0, NAN, -1.0)
_TIES = (3.0, 1.0, 3.0, 2.0, 1.0, 3.0)

add_torch_cases(
    "nansum",
    ("all", lambda lib, x: lib.nansum(x), (Leaf((2, 3), values=_WITH_NAN),)),
    ("dim-keepdim", lambda lib, x: x.nansum(1, keepdim=True), (Leaf((2, 3), values=_WITH_NAN),)),
    ("dim-tuple", lambda lib, x: x.nansum((0, 2)), (Leaf((2, 3, 4)),)),
    ("int", lambda lib: lib.nansum(lib.tensor([[1, 2], [3, 4]]), 0), (), {"grad": False}),
)
add_torch_cases(
    "nanmean",
    ("all", lambda lib, x: lib.nanmean(x), (Leaf((2, 3), values=_WITH_NAN),)),
    ("dim", lambda lib, x: x.nanmean(dim=1), (Leaf((2, 3), values=_WITH_NAN),)),
    # A slice of only NaN: NaN in both; the gradient there is 0 here and NaN
    # in PyTorch (test_statistics.py checks ours).
    ("all-nan-row", lambda lib, x: x.nanmean(1), (Leaf((2, 2), values=(NAN, NAN, 1.0, 2.0)),),
     {"grad": False}),
)
for _name in ("var_mean", "std_mean"):
    add_torch_cases(
        _name,
        ("all", lambda lib, x, n=_name: getattr(lib, n)(x), (Leaf((3, 4)),)),
        ("dim", lambda lib, x, n=_name: getattr(lib, n)(x, 1), (Leaf((3, 4)),)),
        ("correction-keepdim", lambda lib, x, n=_name: getattr(lib, n)(
            x, (0, 2), correction=0, keepdim=True), (Leaf((2, 3, 4)),)),
        ("unbiased-positional", lambda lib, x, n=_name: getattr(lib, n)(x, 0, False, True),
         (Leaf((3, 4)),)),
        ("unbiased-only", lambda lib, x, n=_name: getattr(lib, n)(x, False), (Leaf((3, 4)),)),
        ("keepdim-all", lambda lib, x, n=_name: getattr(lib, n)(x, keepdim=True),
         (Leaf((3, 4)),)),
    )
add_torch_cases(
    "aminmax",
    ("all", lambda lib, x: lib.aminmax(x), (Leaf((3, 4), "distinct"),)),
    ("dim-keepdim", lambda lib, x: x.aminmax(dim=0, keepdim=True), (Leaf((3, 4), "distinct"),)),
    ("all-keepdim", lambda lib, x: lib.aminmax(x, keepdim=True), (Leaf((3, 4), "distinct"),)),
    ("ties", lambda lib, x: x.aminmax(), (Leaf((6,), values=_TIES),)),
    ("0d", lambda lib, x: x.aminmax(), (Leaf(()),)),
)
add_torch_cases(
    "count_nonzero",
    ("all", lambda lib: lib.count_nonzero(lib.tensor([[0.0, 1.0], [2.0, 0.0]])), (),
     {"grad": False}),
    ("dim", lambda lib: lib.tensor([[0, 1, 3], [2, 0, 0]]).count_nonzero(dim=1), (),
     {"grad": False}),
    ("dim-tuple", lambda lib: lib.count_nonzero(lib.tensor([[[0, 1], [2, 0]]]), dim=(0, 2)), (),
     {"grad": False}),
    ("0d", lambda lib: lib.count_nonzero(lib.tensor(3.0)), (), {"grad": False}),
)
for _name in ("median", "nanmedian"):
    add_torch_cases(
        _name,
        ("all-odd", lambda lib, x, n=_name: getattr(lib, n)(x), (Leaf((3, 5), "distinct"),)),
        ("all-even-lower", lambda lib, x, n=_name: getattr(x, n)(), (Leaf((2, 4), "distinct"),)),
        ("all-ties-share", lambda lib, x, n=_name: getattr(x, n)(),
         (Leaf((4,), values=(1.0, 2.0, 2.0, 3.0)),)),
        ("dim", lambda lib, x, n=_name: getattr(lib, n)(x, 1), (Leaf((3, 4), "distinct"),)),
        ("dim0-keepdim", lambda lib, x, n=_name: getattr(x, n)(0, keepdim=True),
         (Leaf((5, 3), "distinct"),)),
        ("nan-all", lambda lib, x, n=_name: getattr(x, n)(), (Leaf((6,), values=_WITH_NAN),)),
        ("nan-dim", lambda lib, x, n=_name: getattr(x, n)(1), (Leaf((2, 3), values=_WITH_NAN),)),
        ("all-nan-row", lambda lib, x, n=_name: getattr(x, n)(1),
         (Leaf((2, 2), values=(NAN, NAN, 1.0, 2.0)),)),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(0), (Leaf(()),)),
        ("size-0-other-dim", lambda lib, x, n=_name: getattr(x, n)(0), (Leaf((2, 0)),)),
        ("int", lambda lib, n=_name: getattr(lib, n)(lib.tensor([[4, 1, 3], [2, 9, 7]]), 1), (),
         {"grad": False}),
    )
add_torch_cases(
    "mode",
    ("distinct", lambda lib, x: lib.mode(x), (Leaf((3, 4), "distinct"),)),
    ("repeats", lambda lib, x: x.mode(), (Leaf((2, 5), values=(1.0, 2.0, 2.0, 1.0, 3.0,
                                                               5.0, 2.0, 5.0, 2.0, 5.0)),)),
    ("dim0-keepdim", lambda lib, x: x.mode(0, keepdim=True),
     (Leaf((4, 2), values=(1.0, 3.0, 2.0, 3.0, 1.0, 0.0, 2.0, 0.0)),)),
    ("0d", lambda lib, x: x.mode(), (Leaf(()),)),
    ("int", lambda lib: lib.mode(lib.tensor([[4, 4, 3, 3, 3], [0, 1, 1, 0, 2]])), (),
     {"grad": False}),
)
add_torch_cases(
    "kthvalue",
    ("k1", lambda lib, x: lib.kthvalue(x, 1), (Leaf((3, 4), "distinct"),)),
    ("k3-dim0-keepdim", lambda lib, x: x.kthvalue(3, 0, keepdim=True), (Leaf((4, 3), "distinct"),)),
    # One NaN: which of several NaN PyTorch's selection names is unspecified.
    ("nan-largest", lambda lib, x: x.kthvalue(6),
     (Leaf((6,), values=(2.0, NAN, 1.0, 4.0, 0.5, -1.0)),)),
    ("0d", lambda lib, x: x.kthvalue(1), (Leaf(()),)),
)
for _name in ("quantile", "nanquantile"):
    add_torch_cases(
        _name,
        ("scalar-all", lambda lib, x, n=_name: getattr(lib, n)(x, 0.3), (Leaf((3, 4)),)),
        ("tensor-q-dim", lambda lib, x, q, n=_name: getattr(lib, n)(x, q, dim=1),
         (Leaf((3, 5)), Leaf((3,), values=(0.0, 0.45, 1.0)))),
        ("tensor-q-keepdim", lambda lib, x, q, n=_name: getattr(x, n)(q, 0, keepdim=True),
         (Leaf((4, 3)), Leaf((2,), values=(0.25, 0.6)))),
        ("all-keepdim", lambda lib, x, n=_name: getattr(x, n)(0.5, keepdim=True),
         (Leaf((2, 3)),)),
        ("0d-q", lambda lib, x, q, n=_name: getattr(x, n)(q, dim=-1),
         (Leaf((2, 3)), Leaf((), values=(0.7,)))),
        ("nan", lambda lib, x, n=_name: getattr(x, n)(0.5, dim=1),
         (Leaf((3, 4), values=(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, NAN, NAN, NAN, NAN, NAN)),)),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(0.2), (Leaf(()),)),
        ("0d-dim", lambda lib, x, n=_name: getattr(x, n)(0.2, 0), (Leaf(()),)),
    )
    for _mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        add_torch_cases(
            _name,
            (f"{_mode}", lambda lib, x, q, n=_name, m=_mode: getattr(lib, n)(
                x, q, dim=1, interpolation=m),
             (Leaf((2, 7)), Leaf((5,), values=(0.0, 0.25, 0.5, 0.9, 1.0)))),
        )
for _name in ("cummax", "cummin"):
    add_torch_cases(
        _name,
        ("dim0", lambda lib, x, n=_name: getattr(lib, n)(x, 0), (Leaf((4, 3), "distinct"),)),
        ("dim-last", lambda lib, x, n=_name: getattr(x, n)(-1), (Leaf((2, 3, 4), "distinct"),)),
        ("ties-take-the-later-index", lambda lib, x, n=_name: getattr(x, n)(0),
         (Leaf((6,), values=_TIES),)),
        ("nan", lambda lib, x, n=_name: getattr(x, n)(0),
         (Leaf((7,), values=(1.0, 3.0, 3.0, NAN, 2.0, NAN, 5.0)),)),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(0), (Leaf(()),)),
        ("size-0", lambda lib, x, n=_name: getattr(x, n)(0), (Leaf((0, 3)),)),
        ("int", lambda lib, n=_name: getattr(lib, n)(lib.tensor([[2, 5, 1], [0, -1, 3]]), 1),
         (), {"grad": False}),
    )
add_torch_cases(
    "logcumsumexp",
    ("dim0", lambda lib, x: lib.logcumsumexp(x, 0), (Leaf((3, 4)),)),
    ("dim-neg", lambda lib, x: x.logcumsumexp(-1), (Leaf((2, 3, 4)),)),
    ("magnitude-1e4", lambda lib, x: x.logcumsumexp(1),
     (Leaf((2, 3), values=(1e4, 1e4 + 1.0, -1e4, -1e4, -1e4 + 0.5, 1e4)),)),
    ("minus-inf", lambda lib, x: x.logcumsumexp(0), (Leaf((3,), values=(-INF, 0.0, -INF)),)),
    ("0d", lambda lib, x: x.logcumsumexp(0), (Leaf(()),)),
    ("size-0", lambda lib, x: x.logcumsumexp(0), (Leaf((0, 3)),)),
)
add_torch_cases(
    "diff",
    ("default", lambda lib, x: lib.diff(x), (Leaf((3, 4)),)),
    ("n2-dim0", lambda lib, x: x.diff(n=2, dim=0), (Leaf((4, 3)),)),
    ("prepend-append", lambda lib, x, p, a: lib.diff(x, 1, -1, p, a),
     (Leaf((2, 3)), Leaf((2, 1)), Leaf((2, 2)))),
    ("n-past-length", lambda lib, x: x.diff(n=5), (Leaf((2, 3)),)),
    ("n0", lambda lib, x: x.diff(n=0), (Leaf((2, 3)),)),
    ("bool", lambda lib: lib.diff(lib.tensor([True, False, False, True])), (), {"grad": False}),
    ("int", lambda lib: lib.tensor([[1, 4, 9], [3, 5, 9]]).diff(dim=0,
                                                                 append=lib.tensor([[0, 0, 0]])),
     (), {"grad": False}),
)
