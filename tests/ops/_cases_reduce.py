"""Gradient cases and PyTorch comparisons of the reduce ops (see ``_case_table``)."""
import math

import numpy as np

import oxmera
from oxmera.ops.reduce import linear_scan

from ._case_table import (NO_GRADIENT_CALLS, S, T, Leaf, add_cases, add_torch_cases)

INF = math.inf

# -- reductions over dims --------------------------------------------------------------------

def reduction_cases(name, fn, domain="real"):
    add_cases(
        name,
        ("all", lambda x: fn(x), (Leaf((3, 4), domain),)),
        ("dim0", lambda x: fn(x, 0), (Leaf((3, 4), domain),)),
        ("dim-neg", lambda x: fn(x, dim=-1), (Leaf((2, 3, 4), domain),)),
        ("dim-tuple", lambda x: fn(x, dim=(0, 2)), (Leaf((2, 3, 4), domain),)),
        ("dim-tuple-neg", lambda x: fn(x, (-1, 0), keepdim=True), (Leaf((2, 3, 4), domain),)),
        ("dim-empty-tuple-is-all", lambda x: fn(x, ()), (Leaf((2, 3), domain),)),
        ("keepdim", lambda x: fn(x, 1, keepdim=True), (Leaf((3, 4), domain),)),
        ("axis", lambda x: fn(x, axis=1), (Leaf((3, 4), domain),)),
        ("0d", lambda x: fn(x), (Leaf((), domain),)),
        ("0d-dim", lambda x: fn(x, 0), (Leaf((), domain),)),
        ("size-0-kept-dim", lambda x: fn(x, 1), (Leaf((0, 3), domain),)),
        ("transposed", lambda x: fn(x, 0), (Leaf((3, 4), domain, "transposed"),)),
        ("strided-all", lambda x: fn(x), (Leaf((2, 3), domain, "strided"),)),
        ("method", lambda x: getattr(x, name)(dim=1), (Leaf((2, 3), domain),)),
    )


reduction_cases("sum", oxmera.sum)
add_cases("sum",
          ("size-0-all", lambda x: x.sum(), (Leaf((0, 3)),)),
          ("size-0-reduced-dim", lambda x: x.sum(0), (Leaf((0, 3)),)),
          ("dtype", lambda x: x.sum(dtype=np.float64), (Leaf((2, 3)),)))
reduction_cases("mean", oxmera.mean)

reduction_cases("prod", oxmera.prod)
add_cases(
    "prod",
    ("size-0-reduced-dim", lambda x: x.prod(0), (Leaf((0, 3)),)),
    ("size-0-all", lambda x: x.prod(), (Leaf((0, 3)),)),
    # Zeros: exactly one, two in one slice, three; the gradient is a
    # product of the other elements, never a division by the input.
    ("one-zero", lambda x: x.prod(), (Leaf((2, 3), values=(1.5, 0.0, -2.0, 0.5, 1.25, -0.75)),)),
    ("one-zero-dim", lambda x: x.prod(1),
     (Leaf((2, 3), values=(1.5, 0.0, -2.0, 0.5, 1.25, -0.75)),)),
    ("two-zeros", lambda x: x.prod(1), (Leaf((2, 3), values=(0.0, 1.5, 0.0, 0.5, 0.0, -0.75)),)),
    ("three-zeros", lambda x: x.prod(), (Leaf((2, 2), values=(0.0, 0.0, 1.5, 0.0)),)),
    ("zeros-dim-tuple", lambda x: x.prod((0, 2)),
     (Leaf((2, 2, 2), values=(0.0, 1.5, 2.0, 0.0, -1.0, 0.5, 0.75, 1.25)),)),
    ("zeros-transposed", lambda x: x.T.prod(0), (Leaf((3, 2), values=(0.0, 1.0, 2.0, 0.0, 3.0,
                                                                       -1.0)),)),
    ("dtype", lambda x: x.prod(1, dtype=np.float64), (Leaf((2, 3)),)),
)


def extreme_cases(name, fn, with_indices):
    pick = (lambda r: r.values) if with_indices else (lambda r: r)
    add_cases(
        name,
        ("all", lambda x: fn(x), (Leaf((3, 4), "distinct"),)),
        ("dim0", lambda x: pick(fn(x, 0)), (Leaf((3, 4), "distinct"),)),
        ("dim-neg", lambda x: pick(fn(x, dim=-1)), (Leaf((2, 3, 4), "distinct"),)),
        ("keepdim", lambda x: pick(fn(x, 1, keepdim=True)), (Leaf((3, 4), "distinct"),)),
        ("axis", lambda x: pick(fn(x, axis=0)), (Leaf((3, 4), "distinct"),)),
        ("0d", lambda x: fn(x), (Leaf(()),)),
        ("0d-dim", lambda x: pick(fn(x, 0)), (Leaf(()),)),
        ("size-0-kept-dim", lambda x: pick(fn(x, 1)), (Leaf((0, 3)),)),
        ("transposed", lambda x: pick(fn(x, 1)), (Leaf((3, 4), "distinct", "transposed"),)),
        ("method", lambda x: getattr(x, name)(), (Leaf((5,), "distinct"),)),
        # At a tie of two, central differences see half the slope on each
        # side, which is exactly the even split; the gradient is not smooth
        # there, so only the first order is checked.
        ("tie-all", lambda x: fn(x), (Leaf((3,), values=(3.0, 1.0, 3.0) if "max" in name
                                           else (1.0, 3.0, 1.0)),), {"second_order": False}),
        ("tie-dim", lambda x: pick(fn(x, 1)),
         (Leaf((2, 3), values=(2.0, 2.0, -1.0, 0.5, -1.0, 0.5) if "max" in name
               else (-1.0, -1.0, 2.0, 0.5, 1.0, 0.5)),),
         {"second_order": False}),
    )
    if with_indices:
        add_cases(name, ("named-tuple", lambda x: fn(x, 1), (Leaf((2, 3), "distinct"),)))
    else:
        add_cases(
            name,
            ("dim-tuple", lambda x: fn(x, (0, 2)), (Leaf((2, 3, 4), "distinct"),)),
            ("dim-tuple-keepdim", lambda x: fn(x, (-1, 0), keepdim=True),
             (Leaf((2, 3, 4), "distinct"),)),
            ("strided", lambda x: fn(x, 0), (Leaf((2, 3), "distinct", "strided"),)),
        )


extreme_cases("max", oxmera.max, True)
extreme_cases("min", oxmera.min, True)
extreme_cases("amax", oxmera.amax, False)
extreme_cases("amin", oxmera.amin, False)


def moment_cases(name, fn):
    add_cases(
        name,
        ("all", lambda x: fn(x), (Leaf((3, 4)),)),
        ("dim0", lambda x: fn(x, 0), (Leaf((3, 4)),)),
        ("dim-neg-keepdim", lambda x: fn(x, -1, keepdim=True), (Leaf((2, 3, 4)),)),
        ("dim-tuple", lambda x: fn(x, dim=(0, 2)), (Leaf((2, 3, 4)),)),
        ("axis", lambda x: fn(x, axis=1), (Leaf((3, 4)),)),
        ("correction-0", lambda x: fn(x, 1, correction=0), (Leaf((3, 4)),)),
        ("correction-2", lambda x: fn(x, 1, correction=2), (Leaf((3, 4)),)),
        ("unbiased-false", lambda x: fn(x, 0, False), (Leaf((3, 4)),)),
        ("unbiased-positional", lambda x: fn(x, True), (Leaf((3, 4)),)),
        ("0d", lambda x: fn(x, correction=0), (Leaf(()),)),
        ("size-0-kept-dim", lambda x: fn(x, 1), (Leaf((0, 3)),)),
        ("transposed", lambda x: fn(x, 0), (T((3, 4)),)),
        ("strided", lambda x: fn(x), (S((2, 3)),)),
        ("method", lambda x: getattr(x, name)(dim=1), (Leaf((2, 3)),)),
    )


moment_cases("var", oxmera.var)
moment_cases("std", oxmera.std)

reduction_cases("logsumexp", oxmera.logsumexp)
add_cases(
    "logsumexp",
    ("magnitude-1e4", lambda x: x.logsumexp(1),
     (Leaf((2, 3), values=(1e4, 1e4 + 1.0, -1e4, -1e4, -1e4 + 0.5, -1e4 - 2.0)),)),
    ("size-0-reduced-dim", lambda x: x.logsumexp(0).exp(), (Leaf((0, 3)),)),
)


def norm_cases():
    add_cases(
        "norm",
        ("2-all", lambda x: oxmera.norm(x), (Leaf((3, 4)),)),
        ("2-dim", lambda x: x.norm(dim=1), (Leaf((3, 4)),)),
        ("fro-dim-tuple", lambda x: x.norm("fro", dim=(0, 1)), (Leaf((2, 3)),)),
        ("1", lambda x: x.norm(1, dim=0), (Leaf((3, 4)),)),
        ("inf", lambda x: x.norm(INF, dim=1), (Leaf((3, 4)),)),
        ("-inf", lambda x: x.norm(-INF), (Leaf((3, 4)),)),
        ("3-keepdim", lambda x: x.norm(3, dim=-1, keepdim=True), (Leaf((2, 3, 4)),)),
        ("1.5", lambda x: x.norm(1.5), (Leaf((5,)),)),
        ("0.5", lambda x: x.norm(0.5, 1), (Leaf((2, 3)),)),
        ("-1", lambda x: x.norm(-1, 1), (Leaf((2, 3)),)),
        ("0", lambda x: x.norm(0) + x.sum(), (Leaf((2, 3)),)),
        ("0d", lambda x: x.norm(), (Leaf(()),)),
        ("0d-p3", lambda x: x.norm(3), (Leaf(()),)),
        ("size-0-kept-dim", lambda x: x.norm(dim=1), (Leaf((0, 3)),)),
        ("size-0-all", lambda x: x.norm(), (Leaf((0, 3)),)),
        ("transposed", lambda x: x.norm(dim=0), (T((3, 4)),)),
        ("strided-p1", lambda x: x.norm(1), (S((2, 3)),)),
        ("dtype", lambda x: x.float().norm(dtype=oxmera.float64), (Leaf((2, 3)),),
         {"atol": 1e-4, "eps": 1e-3}),
        ("linalg-vector-norm", lambda x: oxmera.linalg.vector_norm(x, 3, dim=(0, 1)),
         (Leaf((2, 3)),)),
        ("linalg-norm-dim", lambda x: oxmera.linalg.norm(x, dim=1), (Leaf((2, 3)),)),
        ("linalg-matrix-fro", lambda x: oxmera.linalg.matrix_norm(x), (Leaf((2, 3, 4)),)),
        # Ties in the inf-norm share the gradient (first order only: a kink).
        ("inf-tie", lambda x: x.norm(INF), (Leaf((3,), values=(3.0, -3.0, 1.0)),),
         {"second_order": False}),
    )


norm_cases()

# -- scans ---------------------------------------------------------------------------------------

def scan_cases(name, fn):
    add_cases(
        name,
        ("dim0", lambda x: fn(x, 0), (Leaf((3, 4)),)),
        ("dim1", lambda x: fn(x, 1), (Leaf((3, 4)),)),
        ("dim-neg", lambda x: fn(x, dim=-1), (Leaf((2, 3, 4)),)),
        ("flattened", lambda x: fn(x), (Leaf((2, 3)),)),
        ("axis", lambda x: fn(x, axis=0), (Leaf((3, 2)),)),
        ("0d", lambda x: fn(x, 0), (Leaf(()),)),
        ("size-0", lambda x: fn(x, 0), (Leaf((0, 3)),)),
        ("size-0-other-dim", lambda x: fn(x, 1), (Leaf((0, 3)),)),
        ("length-1", lambda x: fn(x, 1), (Leaf((3, 1)),)),
        ("transposed", lambda x: fn(x, 1), (T((3, 4)),)),
        ("strided", lambda x: fn(x, 0), (S((3, 2)),)),
        ("method", lambda x: getattr(x, name)(1), (Leaf((2, 3)),)),
        ("dtype", lambda x: fn(x.float(), 1, dtype=oxmera.float64), (Leaf((2, 3)),),
         {"atol": 1e-4, "eps": 1e-3}),
    )


scan_cases("cumsum", oxmera.cumsum)
scan_cases("cumprod", oxmera.cumprod)
add_cases(
    "cumprod",
    # Zeros anywhere: first, last, one, several; exact to second order.
    ("one-zero", lambda x: x.cumprod(0), (Leaf((4,), values=(1.5, 0.0, -2.0, 0.75)),)),
    ("zero-first", lambda x: x.cumprod(0), (Leaf((3,), values=(0.0, 1.5, -2.0)),)),
    ("zero-last", lambda x: x.cumprod(0), (Leaf((3,), values=(1.5, -2.0, 0.0)),)),
    ("two-zeros", lambda x: x.cumprod(1),
     (Leaf((2, 4), values=(0.0, 1.5, 0.0, 2.0, 1.25, 0.0, -0.5, 0.0)),)),
    ("all-zeros", lambda x: x.cumprod(0), (Leaf((3,), values=(0.0, 0.0, 0.0)),)),
    ("zeros-flattened", lambda x: x.cumprod(), (Leaf((2, 2), values=(1.5, 0.0, 2.0, -1.0)),)),
)

add_cases(
    "linear_scan",
    ("forward", lambda x, c: linear_scan(x, c, 0), (Leaf((4,)), Leaf((4,)))),
    ("reverse", lambda x, c: linear_scan(x, c, 1, reverse=True), (Leaf((2, 4)), Leaf((2, 4)))),
    ("dim-neg", lambda x, c: linear_scan(x, c, -1), (Leaf((2, 3)), Leaf((2, 3)))),
    ("broadcast-coefficient", lambda x, c: linear_scan(x, c, 0), (Leaf((3, 2)), Leaf((3, 1)))),
    ("zero-coefficients", lambda x, c: linear_scan(x, c, 0, reverse=True),
     (Leaf((3,)), Leaf((3,), values=(0.0, 0.0, 1.5)))),
    ("0d", lambda x, c: linear_scan(x, c, 0), (Leaf(()), Leaf(()))),
    ("size-0", lambda x, c: linear_scan(x, c, 0), (Leaf((0, 2)), Leaf((0, 2)))),
    ("transposed", lambda x, c: linear_scan(x, c, 1), (T((3, 4)), S((3, 4)))),
)

add_cases("sum_to",
          ("leading", lambda x: oxmera.sum_to(x, (4,)), (Leaf((3, 4)),)),
          ("keep-1", lambda x: oxmera.sum_to(x, (1, 4)), (Leaf((3, 4)),)),
          ("both", lambda x: oxmera.sum_to(x, (3, 1)), (Leaf((2, 3, 4)),)),
          ("to-0d", lambda x: oxmera.sum_to(x, ()), (Leaf((3,)),)),
          ("same", lambda x: oxmera.sum_to(x, (2, 3)), (Leaf((2, 3)),)),
          ("0d", lambda x: oxmera.sum_to(x, ()), (Leaf(()),)),
          ("size-0", lambda x: oxmera.sum_to(x, (1, 3)), (Leaf((0, 3)),)),
          ("transposed", lambda x: oxmera.sum_to(x, (4,)), (T((3, 4)),)))

# -- non-differentiable reductions ---------------------------------------------------------------

NO_GRADIENT_CALLS.update({
    "argmax": lambda x, y: oxmera.argmax(x),
    "argmin": lambda x, y: x.argmin(dim=0),
    "all": lambda x, y: oxmera.all(x),
    "any": lambda x, y: (x - y).any(dim=0),
})

# -- PyTorch comparisons -------------------------------------------------------------------------

_TIES = (2.0, 2.0, -1.0, 0.5, -1.0, 0.5)

add_torch_cases(
    "sum",
    ("all", lambda lib, x: lib.sum(x), (Leaf((3, 4)),)),
    ("dim", lambda lib, x: x.sum(1), (Leaf((3, 4)),)),
    ("dim-tuple-keepdim", lambda lib, x: x.sum(dim=(0, 2), keepdim=True), (Leaf((2, 3, 4)),)),
    ("empty-tuple", lambda lib, x: x.sum(dim=()), (Leaf((2, 3)),)),
    ("0d", lambda lib, x: x.sum(0), (Leaf(()),)),
    ("size-0", lambda lib, x: x.sum(0), (Leaf((0, 3)),)),
)
add_torch_cases(
    "mean",
    ("all", lambda lib, x: lib.mean(x), (Leaf((3, 4)),)),
    ("dim-keepdim", lambda lib, x: x.mean(-1, keepdim=True), (Leaf((2, 3, 4)),)),
    ("dim-tuple", lambda lib, x: x.mean((0, 1)), (Leaf((2, 3, 4)),)),
    ("size-0", lambda lib, x: x.mean(0), (Leaf((0, 3)),)),
)
add_torch_cases(
    "prod",
    ("all", lambda lib, x: lib.prod(x), (Leaf((3, 4)),)),
    ("dim", lambda lib, x: x.prod(1), (Leaf((3, 4)),)),
    ("keepdim", lambda lib, x: x.prod(0, keepdim=True), (Leaf((3, 4)),)),
    ("one-zero", lambda lib, x: x.prod(1), (Leaf((2, 3), values=(1.5, 0.0, -2.0, 0.5, 1.25,
                                                                   -0.75)),)),
    ("two-zeros", lambda lib, x: x.prod(), (Leaf((2, 3), values=(0.0, 1.5, 0.0, 0.5, 1.0,
                                                                   -0.75)),)),
    ("0d", lambda lib, x: x.prod(), (Leaf(()),)),
    ("int", lambda lib: lib.tensor([[1, 2], [3, 4]]).prod(1), (), {"grad": False}),
)
for _name in ("max", "min"):
    add_torch_cases(
        _name,
        ("all", lambda lib, x, n=_name: getattr(lib, n)(x), (Leaf((3, 4), "distinct"),)),
        ("dim", lambda lib, x, n=_name: getattr(x, n)(1), (Leaf((3, 4), "distinct"),)),
        ("dim-keepdim", lambda lib, x, n=_name: getattr(lib, n)(x, 0, keepdim=True),
         (Leaf((3, 4), "distinct"),)),
        # Without dim PyTorch too shares the gradient of a tie evenly.
        ("tie-all", lambda lib, x, n=_name: getattr(x, n)(), (Leaf((2, 3), values=_TIES),)),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(0), (Leaf(()),)),
    )
for _name in ("amax", "amin"):
    add_torch_cases(
        _name,
        ("all", lambda lib, x, n=_name: getattr(lib, n)(x), (Leaf((3, 4), "distinct"),)),
        ("dim-tuple", lambda lib, x, n=_name: getattr(x, n)((0, 2)),
         (Leaf((2, 3, 4), "distinct"),)),
        ("keepdim", lambda lib, x, n=_name: getattr(lib, n)(x, 1, keepdim=True),
         (Leaf((3, 4), "distinct"),)),
        ("tie-dim", lambda lib, x, n=_name: getattr(x, n)(1), (Leaf((2, 3), values=_TIES),)),
        ("tie-all", lambda lib, x, n=_name: getattr(x, n)(), (Leaf((2, 3), values=_TIES),)),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(), (Leaf(()),)),
    )
for _name in ("argmax", "argmin"):
    add_torch_cases(
        _name,
        ("flat", lambda lib, x, n=_name: getattr(lib, n)(x), (Leaf((3, 4)),), {"grad": False}),
        ("flat-keepdim", lambda lib, x, n=_name: getattr(x, n)(keepdim=True), (Leaf((3, 4)),),
         {"grad": False}),
        ("dim", lambda lib, x, n=_name: getattr(x, n)(dim=1), (Leaf((3, 4)),), {"grad": False}),
        ("dim-keepdim", lambda lib, x, n=_name: getattr(lib, n)(x, 0, keepdim=True),
         (Leaf((3, 4)),), {"grad": False}),
        ("tie-first", lambda lib, x, n=_name: getattr(x, n)(1), (Leaf((2, 3), values=_TIES),),
         {"grad": False}),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(), (Leaf(()),), {"grad": False}),
    )
for _name in ("var", "std"):
    add_torch_cases(
        _name,
        ("all", lambda lib, x, n=_name: getattr(lib, n)(x), (Leaf((3, 4)),)),
        ("dim", lambda lib, x, n=_name: getattr(x, n)(1), (Leaf((3, 4)),)),
        ("dim-tuple-keepdim", lambda lib, x, n=_name: getattr(x, n)((0, 2), keepdim=True),
         (Leaf((2, 3, 4)),)),
        ("correction-0", lambda lib, x, n=_name: getattr(lib, n)(x, 0, correction=0),
         (Leaf((3, 4)),)),
        ("correction-2", lambda lib, x, n=_name: getattr(x, n)(dim=1, correction=2),
         (Leaf((3, 5)),)),
        ("unbiased-positional", lambda lib, x, n=_name: getattr(x, n)(1, False, True),
         (Leaf((3, 4)),)),
        ("constant", lambda lib, x, n=_name: getattr(x, n)(1),
         (Leaf((2, 3), values=(1.5,) * 6),)),
    )
add_torch_cases(
    "logsumexp",
    ("dim", lambda lib, x: lib.logsumexp(x, 1), (Leaf((3, 4)),)),
    ("dim-tuple-keepdim", lambda lib, x: x.logsumexp((0, 2), keepdim=True), (Leaf((2, 3, 4)),)),
    ("magnitude-1e4", lambda lib, x: x.logsumexp(1),
     (Leaf((2, 3), values=(1e4, 1e4 + 1.0, -1e4, -1e4, -1e4 + 0.5, -1e4 - 2.0)),)),
    # A row of -inf gives -inf, and (as in PyTorch) a nan gradient.
    ("minus-inf-row", lambda lib, x: x.logsumexp(1),
     (Leaf((2, 3), values=(-INF, -INF, -INF, 1.0, -INF, 2.0)),)),
    ("plus-inf", lambda lib, x: x.logsumexp(1), (Leaf((1, 3), values=(INF, 1.0, 2.0)),)),
    ("0d", lambda lib, x: x.logsumexp(0), (Leaf(()),)),
    ("size-0", lambda lib, x: x.logsumexp(0), (Leaf((0, 3)),)),
)
add_torch_cases(
    "norm",
    ("2", lambda lib, x: lib.norm(x), (Leaf((3, 4)),)),
    ("2-dim-keepdim", lambda lib, x: x.norm(dim=1, keepdim=True), (Leaf((3, 4)),)),
    ("fro-dim-tuple", lambda lib, x: x.norm("fro", dim=(0, 2)), (Leaf((2, 3, 4)),)),
    ("1", lambda lib, x: x.norm(1, dim=0), (Leaf((3, 4)),)),
    ("inf", lambda lib, x: x.norm(INF, dim=1), (Leaf((3, 4)),)),
    ("-inf", lambda lib, x: x.norm(-INF), (Leaf((3, 4)),)),
    ("3", lambda lib, x: x.norm(3), (Leaf((3, 4)),)),
    ("0.5", lambda lib, x: x.norm(0.5, 1), (Leaf((3, 4)),)),
    ("0", lambda lib, x: x.norm(0) + x.sum(),
     (Leaf((2, 3), values=(0.0, 1.0, 0.0, 2.0, 3.0, 0.0)),)),
    ("inf-tie", lambda lib, x: x.norm(INF), (Leaf((3,), values=(3.0, -3.0, 1.0)),)),
    # At a zero vector the gradient is 0 (PyTorch's subgradient).
    ("zero-vector", lambda lib, x: x.norm(), (Leaf((3,), values=(0.0, 0.0, 0.0)),)),
    ("zero-vector-p3", lambda lib, x: x.norm(3), (Leaf((3,), values=(0.0, 0.0, 0.0)),)),
    ("zero-entries-p1.5", lambda lib, x: x.norm(1.5), (Leaf((3,), values=(0.0, 1.0, 2.0)),)),
    ("nuc", lambda lib, x: x.norm("nuc"), (Leaf((3, 4)),)),
    ("linalg-vector-norm", lambda lib, x: lib.linalg.vector_norm(x, 3, dim=(0, 1)),
     (Leaf((2, 3)),)),
    ("size-0", lambda lib, x: x.norm(dim=0), (Leaf((0, 3)),)),
    ("0d", lambda lib, x: x.norm(), (Leaf(()),)),
)
for _name in ("cumsum", "cumprod"):
    add_torch_cases(
        _name,
        ("dim0", lambda lib, x, n=_name: getattr(lib, n)(x, 0), (Leaf((3, 4)),)),
        ("dim-neg", lambda lib, x, n=_name: getattr(x, n)(dim=-1), (Leaf((2, 3, 4)),)),
        ("zeros", lambda lib, x, n=_name: getattr(x, n)(1),
         (Leaf((2, 4), values=(0.0, 1.5, 0.0, 2.0, 1.25, 0.0, -0.5, 0.75)),)),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(0), (Leaf(()),)),
        ("size-0", lambda lib, x, n=_name: getattr(x, n)(0), (Leaf((0, 3)),)),
        ("int", lambda lib, n=_name: getattr(lib.tensor([[1, 2], [3, 4]]), n)(1), (),
         {"grad": False}),
    )
for _name in ("all", "any"):
    add_torch_cases(
        _name,
        ("all-dims", lambda lib, x, n=_name: getattr(lib, n)(x > 0), (Leaf((3, 4)),),
         {"grad": False}),
        ("dim", lambda lib, x, n=_name: getattr(x > 0, n)(dim=1), (Leaf((3, 4)),),
         {"grad": False}),
        ("keepdim", lambda lib, x, n=_name: getattr(lib, n)(x > 0, 0, keepdim=True),
         (Leaf((3, 4)),), {"grad": False}),
        ("float", lambda lib, x, n=_name: getattr(x, n)(),
         (Leaf((2, 2), values=(0.0, 1.0, 2.0, -1.0)),), {"grad": False}),
        ("uint8", lambda lib, n=_name: getattr(lib.tensor([[1, 0], [2, 3]], dtype=lib.uint8),
                                               n)(1), (), {"grad": False}),
        ("0d", lambda lib, x, n=_name: getattr(x, n)(), (Leaf(()),), {"grad": False}),
        ("size-0", lambda lib, x, n=_name: getattr(x > 0, n)(0), (Leaf((0, 3)),),
         {"grad": False}),
    )


def _torch_linear_scan(lib, x, c, dim, reverse=False):
    """The recurrence written out with torch ops (torch has no such op)."""
    x, c = lib.broadcast_tensors(x, c)
    x, c = x.movedim(dim, 0), c.movedim(dim, 0)
    rows = [None] * x.shape[0]
    order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    previous = None
    for j in order:
        rows[j] = x[j] if previous is None else x[j] + c[j] * previous
        previous = rows[j]
    return lib.stack(rows).movedim(0, dim)


def _scan(lib, x, c, dim, reverse=False):
    if lib is oxmera:
        return linear_scan(x, c, dim, reverse=reverse)
    return _torch_linear_scan(lib, x, c, dim, reverse)


add_torch_cases(
    "linear_scan",
    ("forward", lambda lib, x, c: _scan(lib, x, c, 1), (Leaf((2, 4)), Leaf((2, 4)))),
    ("reverse", lambda lib, x, c: _scan(lib, x, c, 0, True), (Leaf((4, 2)), Leaf((4, 1)))),
)
