"""Gradient cases of the elementwise ops (see ``_case_table`` for the machinery)."""
import numpy as np

import oxmera

from ._case_table import (BROADCAST_PAIRS, NO_GRADIENT_CALLS, C, S, T, Leaf, add_cases,
                          add_torch_cases, binary_cases, const, shape_label, unary_cases)

# -- elementwise -----------------------------------------------------------------------

binary_cases("add", oxmera.add)
add_cases("add",
          ("operator", lambda x, y: x + y, (Leaf((3, 1)), Leaf((4,)))),
          ("roperator", lambda y: 2.5 + y, (Leaf((2, 2)),)),
          ("alpha", lambda x, y: oxmera.add(x, y, alpha=-2.5), (Leaf((3, 1)), Leaf((1, 4)))),
          ("same-tensor", lambda x: x + x, (Leaf((2, 3)),)))
binary_cases("sub", oxmera.sub)
add_cases("sub",
          ("operator", lambda x, y: x - y, (Leaf((2, 3)), Leaf((3,)))),
          ("roperator", lambda y: 2.5 - y, (Leaf((2, 2)),)),
          ("alpha", lambda x, y: oxmera.sub(x, y, alpha=3), (Leaf((3, 1)), Leaf((1, 4)))))
binary_cases("mul", oxmera.mul)
add_cases("mul",
          ("operator", lambda x, y: x * y, (Leaf((3, 1)), Leaf((1, 4)))),
          ("roperator", lambda y: 3 * y, (Leaf((2, 2)),)),
          ("square", lambda x: x * x, (Leaf((2, 3)),)))
binary_cases("div", oxmera.div)
add_cases("div",
          ("operator", lambda x, y: x / y, (Leaf((3, 1)), Leaf((1, 4)))),
          ("roperator", lambda y: 2.0 / y, (Leaf((2, 2)),)),
          ("true_divide", oxmera.true_divide, (Leaf((2, 3)), Leaf((3,)))),
          ("self", lambda x: x / x, (Leaf((2, 3)),)))
binary_cases("pow", oxmera.pow, left="positive")
add_cases("pow",
          ("operator", lambda x, y: x ** y, (Leaf((3, 1), "positive"), Leaf((1, 4)))),
          ("roperator", lambda y: 2.0 ** y, (Leaf((2, 2)),)),
          ("rint", lambda y: 3 ** y, (Leaf((2, 2)),)),
          ("square-negative-base", lambda x: x ** 2, (Leaf((2, 3)),)),
          ("cube-negative-base", lambda x: x ** 3, (Leaf((2, 3)),)),
          ("negative-int-exponent", lambda x: x ** -2, (Leaf((2, 3)),)),
          ("zero-exponent", lambda x: x ** 0, (Leaf((2, 3)),)),
          ("half", lambda x: x ** 0.5, (T((3, 2), "positive"),)),
          ("0d-exponent", oxmera.pow, (Leaf((2, 3), "positive"), Leaf(()))))
unary_cases("neg", oxmera.neg)
add_cases("neg", ("operator", lambda x: -x, (Leaf((2, 3)),)))
unary_cases("exp", oxmera.exp)
unary_cases("log", oxmera.log, "positive")
unary_cases("sqrt", oxmera.sqrt, "positive")
unary_cases("sin", oxmera.sin)
unary_cases("cos", oxmera.cos)
unary_cases("tanh", oxmera.tanh)
unary_cases("sigmoid", oxmera.sigmoid)
add_cases("sigmoid", ("both-branches", oxmera.sigmoid,
                      (Leaf((6,), values=(-30.0, -4.0, -0.5, 0.5, 4.0, 30.0)),)))
unary_cases("relu", oxmera.relu)
unary_cases("abs", oxmera.abs)
add_cases("abs", ("operator", lambda x: abs(x), (Leaf((2, 3)),)))
unary_cases("sign", oxmera.sign)

_CONDITION = np.array([[True, False, True, True], [False, False, True, False],
                       [True, True, False, True]])
add_cases("where",
          ("3x4-3x4", lambda x, y: oxmera.where(oxmera.tensor(_CONDITION), x, y),
           (Leaf((3, 4)), Leaf((3, 4)))),
          ("broadcast", lambda x, y: oxmera.where(oxmera.tensor(_CONDITION[:, :1]), x, y),
           (Leaf((1, 4)), Leaf((3, 4)))),
          ("condition-broadcast", lambda x, y: oxmera.where(oxmera.tensor(_CONDITION[0]), x, y),
           (Leaf((3, 1)), Leaf(()))),
          ("number", lambda x: oxmera.where(oxmera.tensor(_CONDITION), x, 0.0),
           (T((3, 4)),)),
          ("number-first", lambda y: oxmera.where(oxmera.tensor(_CONDITION), 1.5, y),
           (Leaf((4,)),)),
          ("0d", lambda x, y: oxmera.where(oxmera.tensor(True), x, y), (Leaf(()), Leaf(()))),
          ("size-0", lambda x, y: oxmera.where(oxmera.zeros(0, 3) > 0, x, y),
           (Leaf((0, 3)), Leaf((3,)))),
          ("from-comparison", lambda x, y: oxmera.where(x > y, x, y),
           (Leaf((3, 4)), Leaf((4,)))))


binary_cases("floor_divide", oxmera.floor_divide)
add_cases("floor_divide",
          ("operator", lambda x, y: x // y, (Leaf((3, 1)), Leaf((4,)))),
          ("roperator", lambda y: 2.5 // y, (Leaf((2, 2)),)))
binary_cases("remainder", oxmera.remainder)
add_cases("remainder",
          ("operator", lambda x, y: x % y, (Leaf((3, 1)), Leaf((4,)))),
          ("roperator", lambda y: 2.5 % y, (Leaf((2, 2)),)),
          ("method", lambda x, y: x.remainder(y), (T((3, 2)), Leaf((2,)))))
add_cases("pow",
          ("square", oxmera.square, (T((3, 4)),)),
          ("square-0d", oxmera.square, (Leaf(()),)),
          ("square-method", lambda x: x.square(), (Leaf((0, 3)),)))
unary_cases("reciprocal", oxmera.reciprocal)
unary_cases("rsqrt", oxmera.rsqrt, "positive")
unary_cases("exp2", oxmera.exp2)
unary_cases("expm1", oxmera.expm1)
add_cases("expm1", ("near-0", oxmera.expm1, (Leaf((4,), values=(1e-9, -1e-12, 0.0, 3e-5)),)))
unary_cases("log2", oxmera.log2, "positive")
unary_cases("log10", oxmera.log10, "positive")
unary_cases("log1p", oxmera.log1p, "positive")
add_cases("log1p", ("near-0", oxmera.log1p, (Leaf((4,), values=(1e-9, -1e-12, 0.0, -0.5)),)))
# tan, asin and acos get their inputs scaled into the smooth part of their
# domain: |x| <= 1 for tan (far from its poles), |x| <= 0.8 for asin and acos.
unary_cases("tan", lambda x: oxmera.tan(x * 0.5))
unary_cases("asin", lambda x: oxmera.asin(x * 0.4))
add_cases("asin", ("arcsin-method", lambda x: x.arcsin(),
                   (Leaf((2, 3), values=(-0.9, -0.3, 0.0, 0.2, 0.5, 0.95)),)))
unary_cases("acos", lambda x: oxmera.acos(x * 0.4))
add_cases("acos", ("arccos", lambda x: oxmera.arccos(x * 0.4), (Leaf((2, 3)),)))
unary_cases("atan", oxmera.atan)
add_cases("atan", ("arctan-method", lambda x: x.arctan(), (Leaf((2, 3)),)))
unary_cases("sinh", oxmera.sinh)
unary_cases("cosh", oxmera.cosh)
unary_cases("erf", oxmera.erf)
add_cases("erf", ("tails", oxmera.erf, (Leaf((6,), values=(-5.0, -2.0, -0.9, 1.0, 3.0, 6.5)),)))

binary_cases("atan2", oxmera.atan2)
add_cases("atan2",
          ("arctan2-method", lambda y, x: y.arctan2(x), (Leaf((2, 3)), T((2, 3)))),
          ("quadrants", oxmera.atan2, (Leaf((4,), values=(1.0, 1.0, -1.0, -1.0)),
                                       Leaf((4,), values=(1.0, -1.0, 1.0, -1.0)))))
binary_cases("hypot", oxmera.hypot)
binary_cases("logaddexp", oxmera.logaddexp)
add_cases("logaddexp", ("large", oxmera.logaddexp,
                        (Leaf((4,), values=(1e4, -1e4, 1e4, 3.0)),
                         Leaf((4,), values=(1e4 + 0.5, -1e4, -1e4, -2.0)))))

# maximum and minimum: random operands never tie; the ties get cases of their
# own, first order only (the gradient jumps there, so it has no derivative).
_TIES = {"second_order": False}
for _name in ("maximum", "minimum"):
    _fn = getattr(oxmera, _name)
    binary_cases(_name, _fn)
    add_cases(_name,
              ("method", lambda x, y, _name=_name: getattr(x, _name)(y), (T((3, 2)), Leaf((2,)))),
              ("ties", _fn, (Leaf((4,), values=(1.0, 2.0, -1.0, 0.5)),
                             Leaf((4,), values=(1.0, 1.0, -1.0, 0.75))), _TIES),
              ("ties-broadcast", _fn, (Leaf((2, 2), values=(0.5, 0.5, 1.0, -2.0)),
                                       Leaf((2,), values=(0.5, 1.0))), _TIES),
              ("same-tensor", lambda x, _fn=_fn: _fn(x, x), (Leaf((2, 3)),), _TIES))

# clamp: the bounds are +-1 (numbers) or random tensors; "real" inputs are
# never within the finite-difference step of either.
add_cases(
    "clamp",
    *[(f"numbers-{shape_label(s)}", lambda x: oxmera.clamp(x, -1.0, 1.0), (Leaf(s),))
      for s in ((), (5,), (3, 4), (0, 3))],
    ("min-only", lambda x: oxmera.clamp(x, min=-0.5), (T((3, 4)),)),
    ("max-only", lambda x: oxmera.clamp(x, max=0.5), (S((2, 3)),)),
    ("int-bounds", lambda x: oxmera.clamp(x, -1, 1), (Leaf((2, 3)),)),
    ("tensors", oxmera.clamp, (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
    ("tensors-broadcast", oxmera.clamp, (Leaf((3, 1)), Leaf((4,)), Leaf((3, 4)))),
    ("tensors-0d", oxmera.clamp, (Leaf(()), Leaf(()), Leaf(()))),
    ("tensors-size-0", oxmera.clamp, (Leaf((0, 3)), Leaf((3,)), Leaf((1, 3)))),
    ("tensors-non-contiguous", oxmera.clamp, (T((3, 4)), S((3, 4)), Leaf((4,)))),
    ("tensor-min", lambda x, lo: oxmera.clamp(x, min=lo), (Leaf((2, 3)), Leaf((3,)))),
    ("tensor-max", lambda x, hi: oxmera.clamp(x, max=hi), (Leaf((2, 3)), T((2, 3)))),
    ("tensor-and-number", lambda x, lo: oxmera.clamp(x, lo, 1.0), (Leaf((2, 3)), Leaf(()))),
    ("min-above-max", oxmera.clamp,
     (Leaf((4,), values=(-2.0, 0.0, 1.0, 3.0)), Leaf((4,), values=(1.0, 1.0, 1.0, 1.0)),
      Leaf((4,), values=(-1.0, -1.0, -1.0, -1.0)))),
    ("no-grad-bounds", oxmera.clamp, (Leaf((3, 4)), const((4,)), const((3, 1)))),
    ("clip-method", lambda x: x.clip(-0.5, 0.5), (Leaf((2, 3)),)),
    ("method", lambda x, hi: x.clamp(max=hi), (Leaf((2, 3)), Leaf((2, 1)))),
)

add_cases(
    "lerp",
    *[(f"number-weight-{shape_label(a)}-{shape_label(b)}",
       lambda x, y: oxmera.lerp(x, y, 0.3), (Leaf(a), Leaf(b))) for a, b in BROADCAST_PAIRS],
    ("weight-above-half", lambda x, y: oxmera.lerp(x, y, 0.8), (Leaf((2, 3)), T((2, 3)))),
    ("tensor-weight", oxmera.lerp, (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4), "positive"))),
    ("tensor-weight-broadcast", oxmera.lerp, (Leaf((3, 1)), Leaf((4,)), Leaf((3, 4)))),
    ("tensor-weight-0d", oxmera.lerp, (Leaf(()), Leaf(()), Leaf(()))),
    ("tensor-weight-size-0", oxmera.lerp, (Leaf((0, 3)), Leaf((3,)), Leaf(()))),
    ("tensor-weight-non-contiguous", oxmera.lerp, (T((3, 4)), S((3, 4)), T((3, 4)))),
    ("weight-only", lambda w: oxmera.lerp(oxmera.zeros(3, dtype=oxmera.float64),
                                          oxmera.ones(3, dtype=oxmera.float64), w),
     (Leaf((3,)),)),
    ("method", lambda x, y, w: x.lerp(y, w), (Leaf((2, 3)), const((2, 3)), Leaf((3,)))),
)

# The rounding ops: piecewise constant, so a zero gradient (finite
# differences agree away from the jumps, which random inputs never hit).
for _name in ("floor", "ceil", "trunc", "round"):
    unary_cases(_name, getattr(oxmera, _name))
add_cases("round",
          ("decimals", lambda x: oxmera.round(x, decimals=2), (Leaf((2, 3)),)),
          ("method-negative-decimals", lambda x: (x * 100).round(decimals=-1), (T((3, 2)),)))
unary_cases("nan_to_num", oxmera.nan_to_num)
add_cases("nan_to_num",
          ("special-values", lambda x: oxmera.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0),
           (Leaf((5,), values=(np.nan, np.inf, -np.inf, 0.5, -1.5)),)),
          ("method", lambda x: x.nan_to_num(), (Leaf((2, 3)),)))


# -- non-differentiable ops --------------------------------------------------------------------

NO_GRADIENT_CALLS.update({
    "eq": lambda x, y: oxmera.eq(x, y),
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: oxmera.lt(x, y),
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x.gt(y),
    "ge": lambda x, y: oxmera.ge(x * 2, 1.0),
    "isclose": lambda x, y: oxmera.isclose(x, y * 0.5, rtol=0.1),
    "isnan": lambda x, y: oxmera.isnan(x / (y - 2)),
    "isinf": lambda x, y: x.isinf(),
    "isfinite": lambda x, y: oxmera.isfinite(x * y),
    "logical_and": lambda x, y: oxmera.logical_and(x - 1, y),
    "logical_or": lambda x, y: x.logical_or(y - 2),
    "logical_xor": lambda x, y: oxmera.logical_xor(x - 1, y - 2),
    "logical_not": lambda x, y: oxmera.logical_not(x - 2),
})


# -- comparisons against PyTorch ------------------------------------------------------------

def _binary_torch_cases(name, fn, left="real", right="real", numbers=True,
                        number_left_grad=True, **options):
    """Broadcasting, 0-d and size-0 pairs, and a number on either side.

    ``numbers=False``: PyTorch takes no Python number here, so the number
    becomes a 0-d float64 tensor on both sides. ``number_left_grad=False``:
    PyTorch has no derivative with a number on the left (forward only).
    """
    def number(lib, value):
        return value if numbers else lib.tensor(value, dtype=lib.float64)
    left_number = 1.5 if left == "positive" else -1.25
    right_number = 1.5 if right == "positive" else -1.25
    add_torch_cases(
        name,
        ("broadcast", fn, (Leaf((3, 1), left), Leaf((1, 4), right)), options),
        ("0d-vector", fn, (Leaf((), left), Leaf((3,), right)), options),
        ("size-0", fn, (Leaf((0, 3), left), Leaf((3,), right)), options),
        ("tensor-number", lambda lib, x: fn(lib, x, number(lib, right_number)),
         (Leaf((2, 3), left),), options),
        ("number-tensor", lambda lib, y: fn(lib, number(lib, left_number), y),
         (Leaf((2, 3), right),), options if number_left_grad else {**options, "grad": False}))


def _unary_torch_cases(name, fn, domain="real", **options):
    add_torch_cases(name,
                    ("3x4", fn, (Leaf((3, 4), domain),), options),
                    ("0d", fn, (Leaf((), domain),), options))


def _ints(values):
    return np.array(values, dtype=np.int64)


for _name in ("add", "sub", "mul", "div", "true_divide"):
    _binary_torch_cases(_name, lambda lib, x, y, _name=_name: getattr(lib, _name)(x, y))
for _name in ("atan2", "hypot", "logaddexp", "maximum", "minimum"):
    _binary_torch_cases(_name, lambda lib, x, y, _name=_name: getattr(lib, _name)(x, y),
                        numbers=False)
_binary_torch_cases("pow", lambda lib, x, y: lib.pow(x, y), left="positive")
_binary_torch_cases("remainder", lambda lib, x, y: lib.remainder(x, y), number_left_grad=False)
# PyTorch has no derivative for floor_divide (it raises in backward): forward only.
_binary_torch_cases("floor_divide", lambda lib, x, y: lib.floor_divide(x, y), grad=False)
add_torch_cases(
    "add",
    ("alpha", lambda lib, x, y: lib.add(x, y, alpha=-2.5), (Leaf((2, 3)), Leaf((3,)))),
    ("operators", lambda lib, x, y: 2.0 + x + y, (Leaf((2, 3)), Leaf((3,)))))
add_torch_cases("sub", ("operators", lambda lib, x, y: 1 - x - y, (Leaf((2, 3)), Leaf((3,)))))
add_torch_cases("mul", ("ints", lambda lib: lib.tensor(_ints([1, -2])) * 3, (), {"grad": False}))
add_torch_cases("div", ("ints", lambda lib: lib.tensor(_ints([1, -3])) / lib.tensor(_ints([2, 2])),
                        (), {"grad": False}))
add_torch_cases(
    "pow",
    ("rpow", lambda lib, y: 2.0 ** y, (Leaf((2, 3)),)),
    ("negative-base-int-exponent", lambda lib, x: x ** 3, (Leaf((2, 3)),)),
    ("special-bases", lambda lib, x, y: x ** y,
     (Leaf((6,), values=(0.0, 0.0, 0.0, -2.0, -2.0, 2.0)),
      Leaf((6,), values=(-1.0, 0.0, 2.0, 2.0, 0.5, 0.5)))),
    ("zero-number-base", lambda lib, y: 0.0 ** y, (Leaf((3,), values=(-1.0, 0.0, 2.0)),)),
    ("negative-number-base", lambda lib, y: (-2.0) ** y, (Leaf((3,), values=(-1.0, 0.0, 2.0)),)),
    ("square", lambda lib, x: lib.square(x), (Leaf((2, 3)),)),
    ("square-int", lambda lib: lib.square(lib.tensor(_ints([-3, 4]))), (), {"grad": False}))
add_torch_cases("square", ("method", lambda lib, x: x.square(), (Leaf((2, 3)),)),
                ("bool", lambda lib: lib.square(lib.tensor(np.array([True, False]))), (),
                 {"grad": False}))
add_torch_cases(
    "floor_divide",
    ("ints", lambda lib: lib.tensor(_ints([7, -7, 7, -7])) // lib.tensor(_ints([2, 2, -2, -2])),
     (), {"grad": False}),
    ("special-values", lambda lib, x: lib.floor_divide(x, lib.tensor(
        np.array([0.0, 0.0, 0.0, np.inf, -np.inf, 2.0]))),
     (Leaf((6,), values=(5.0, -5.0, 0.0, -5.0, 5.0, np.inf)),), {"grad": False}))
add_torch_cases(
    "remainder",
    ("ints", lambda lib: lib.tensor(_ints([7, -7, 7, -7])) % lib.tensor(_ints([3, 3, -3, -3])),
     (), {"grad": False}),
    ("special-values", lambda lib, x: lib.remainder(x, lib.tensor(
        np.array([0.0, np.inf, -np.inf, np.inf, 2.0]))),
     (Leaf((5,), values=(5.0, 5.0, 5.0, -5.0, -7.5)),)),
    ("operator", lambda lib, x, y: x % y, (Leaf((2, 3)), Leaf((3,)))))

for _name, _domain in (("neg", "real"), ("abs", "real"), ("sign", "real"), ("relu", "real"),
                       ("exp", "real"), ("log", "positive"), ("sqrt", "positive"),
                       ("sin", "real"), ("cos", "real"), ("tanh", "real"),
                       ("sigmoid", "real"), ("reciprocal", "real"), ("rsqrt", "positive"),
                       ("exp2", "real"), ("expm1", "real"), ("log2", "positive"),
                       ("log10", "positive"), ("log1p", "positive"), ("atan", "real"),
                       ("sinh", "real"), ("cosh", "real"), ("erf", "real"),
                       ("floor", "real"), ("ceil", "real"), ("round", "real"),
                       ("trunc", "real"), ("nan_to_num", "real")):
    _unary_torch_cases(_name, lambda lib, x, _name=_name: getattr(lib, _name)(x), _domain)
for _name in ("tan", "asin", "acos"):
    _unary_torch_cases(_name, lambda lib, x, _name=_name: getattr(lib, _name)(x * 0.4))

add_torch_cases(
    "sigmoid",
    ("tails", lambda lib, x: lib.sigmoid(x),
     (Leaf((6,), values=(-800.0, -40.0, -1.0, 1.0, 40.0, 800.0)),), {"atol": 0, "rtol": 1e-12}))
add_torch_cases(
    "abs",
    ("kinks", lambda lib, x: lib.abs(x) + lib.relu(x) + lib.sign(x),
     (Leaf((3,), values=(-1.0, 0.0, 2.0)),)))
add_torch_cases(
    "expm1",
    ("near-0", lambda lib, x: lib.expm1(x), (Leaf((4,), values=(1e-10, -1e-15, 0.0, 1e-5)),),
     {"atol": 0, "rtol": 1e-15}))
add_torch_cases(
    "log1p",
    ("near-0", lambda lib, x: lib.log1p(x), (Leaf((4,), values=(1e-10, -1e-15, 0.0, 1e-5)),),
     {"atol": 0, "rtol": 1e-15}))
add_torch_cases(
    "erf",
    ("range", lambda lib, x: lib.erf(x),
     (Leaf((9,), values=(-7.0, -3.0, -1.1, -0.3, 1e-8, 0.84375, 1.25, 2.9, 5.5)),),
     {"atol": 0, "rtol": 1e-15}),
    ("float32", lambda lib, x: lib.erf(x.to(lib.float32)), (Leaf((3, 4)),),
     {"atol": 0, "rtol": 1e-6}))
add_torch_cases(
    "asin",
    ("edges", lambda lib, x, y: (lib.asin(x), lib.acos(y)),
     (Leaf((3,), values=(-1.0, 0.3, 1.0)), Leaf((3,), values=(-1.0, 0.3, 1.0)))),
    ("aliases", lambda lib, x: (lib.arcsin(x), x.arccos(), lib.arctan(x), x.arctan2(x + 1)),
     (Leaf((2, 3), values=(0.1, -0.2, 0.3, 0.4, -0.5, 0.6)),)))
add_torch_cases(
    "atan2",
    ("origin-and-quadrants", lambda lib, y, x: lib.atan2(y, x),
     (Leaf((5,), values=(0.0, 1.0, 1.0, -1.0, -1.0)),
      Leaf((5,), values=(0.0, 1.0, -1.0, 1.0, -1.0)))),
    ("arctan2-method", lambda lib, y, x: y.arctan2(x), (Leaf((2, 3)), Leaf((3,)))))
add_torch_cases(
    "hypot",
    ("origin-and-large", lambda lib, x, y: lib.hypot(x, y),
     (Leaf((3,), values=(0.0, 3e200, 3.0)), Leaf((3,), values=(0.0, 4e200, -4.0)))))
add_torch_cases(
    "logaddexp",
    ("large", lambda lib, x, y: lib.logaddexp(x, y),
     (Leaf((4,), values=(1e4, -1e4, 1e4, -np.inf)), Leaf((4,), values=(1e4, -1e4, -1e4, 0.0)))),
    ("float32", lambda lib, x, y: lib.logaddexp(x.to(lib.float32), y.to(lib.float32)),
     (Leaf((4,), values=(1e4, -1e4, 1e4, 0.0)), Leaf((4,), values=(1e4, -1e4, -1e4, 0.0))),
     {"rtol": 1e-6}))
for _name in ("maximum", "minimum"):
    add_torch_cases(
        _name,
        ("ties-and-nan", lambda lib, x, y, _name=_name: getattr(lib, _name)(x, y),
         (Leaf((5,), values=(1.0, 2.0, np.nan, 1.0, -3.0)),
          Leaf((5,), values=(1.0, 1.0, 1.0, np.nan, -3.0)))),
        ("method", lambda lib, x, y, _name=_name: getattr(x, _name)(y), (Leaf((2, 3)), Leaf((3,)))),
        ("bool", lambda lib, _name=_name: getattr(lib, _name)(
            lib.tensor(np.array([True, False])), lib.tensor(np.array([False, False]))),
         (), {"grad": False}))
add_torch_cases(
    "clamp",
    ("numbers", lambda lib, x: lib.clamp(x, -1.0, 1.0), (Leaf((3, 4)),)),
    ("at-bounds", lambda lib, x: lib.clamp(x, -1.0, 1.0) + lib.clamp(x, min=0.5)
     + lib.clamp(x, max=-1.0) + lib.clamp(x, 1.0, -1.0),
     (Leaf((5,), values=(-2.0, -1.0, 0.5, 1.0, 2.0)),)),
    ("tensors", lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
     (Leaf((5,), values=(0.0, 1.0, 2.0, 3.0, 4.0)), Leaf((5,), values=(1.0, 1.0, 1.0, 3.5, 3.5)),
      Leaf((5,), values=(3.0, 3.0, 3.0, 3.0, 3.0)))),
    ("tensor-min", lambda lib, x, lo: lib.clamp(x, min=lo),
     (Leaf((4,), values=(0.0, 1.0, 2.0, np.nan)), Leaf((4,), values=(1.0, 1.0, 1.0, 1.0)))),
    ("tensor-max-broadcast", lambda lib, x, hi: lib.clamp(x, max=hi), (Leaf((2, 3)), Leaf((3,)))),
    ("clip-method", lambda lib, x: x.clip(min=-0.5) + lib.clip(x, max=0.5), (Leaf((2, 3)),)),
    ("int", lambda lib: lib.clamp(lib.tensor(_ints([1, 5, 9])), 2, 6), (), {"grad": False}),
    ("int-float-bound", lambda lib: lib.clamp(lib.tensor(_ints([1, 5, 9])), min=2.5), (),
     {"grad": False}))
add_torch_cases(
    "lerp",
    ("number-weights", lambda lib, x, y: lib.lerp(x, y, 0.3) + lib.lerp(x, y, 1.0)
     + lib.lerp(x, y, -0.75), (Leaf((3, 1)), Leaf((1, 4)))),
    ("tensor-weight", lambda lib, x, y, w: lib.lerp(x, y, w),
     (Leaf((2, 3)), Leaf((3,)), Leaf((2, 1)))),
    ("method", lambda lib, x, y, w: x.lerp(y, w),
     (Leaf((4,)), Leaf((4,)), Leaf((4,), values=(0.0, 0.49, 0.5, 1.0)))))
add_torch_cases(
    "round",
    ("decimals", lambda lib, x: lib.round(x * 10, decimals=2) + lib.round(x * 1000, decimals=-2),
     (Leaf((3, 4)),)),
    ("halves", lambda lib, x: lib.round(x) + lib.floor(x) + lib.ceil(x) + lib.trunc(x),
     (Leaf((6,), values=(-2.5, -1.5, -0.5, 0.5, 1.5, 2.5)),)),
    ("method", lambda lib, x: x.round(decimals=1), (Leaf((2, 3)),)))
add_torch_cases(
    "nan_to_num",
    ("special-values", lambda lib, x: lib.nan_to_num(x) + lib.nan_to_num(x, 1.0, 2.0, -3.0),
     (Leaf((5,), values=(np.nan, np.inf, -np.inf, 0.5, -1.5)),)),
    ("float32", lambda lib, x: x.to(lib.float32).nan_to_num(),
     (Leaf((3,), values=(np.nan, np.inf, -np.inf)),)))

_CONDITION_TORCH = np.array([[True, False, True, True], [False, False, True, False],
                             [True, True, False, True]])
add_torch_cases(
    "where",
    ("broadcast", lambda lib, x, y: lib.where(lib.tensor(_CONDITION_TORCH[:, :1]), x, y),
     (Leaf((1, 4)), Leaf((3, 4)))),
    ("numbers", lambda lib, x: lib.where(lib.tensor(_CONDITION_TORCH), x, 0.0)
     + lib.where(lib.tensor(_CONDITION_TORCH), 1.5, x), (Leaf((4,)),)),
    ("method", lambda lib, x, y: x.where(x > y, y), (Leaf((3, 4)), Leaf((4,)))))

# Comparison and logic: forward only (bool results).
_NO_GRAD = {"grad": False}
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"):
    add_torch_cases(
        _name,
        ("ties", lambda lib, x, y, _name=_name: getattr(lib, _name)(x, y),
         (Leaf((4,), values=(0.0, 1.0, 2.0, -1.0)), Leaf((4,), values=(0.0, 2.0, 1.0, 0.0))),
         _NO_GRAD),
        ("method-broadcast", lambda lib, x, y, _name=_name: getattr(x, _name)(y),
         (Leaf((2, 3), values=(0.0, 1.0, 2.0, 1.0, -1.0, 1.0)),
          Leaf((3,), values=(1.0, 0.0, 2.0))), _NO_GRAD))
add_torch_cases(
    "logical_not",
    ("values", lambda lib, x: (lib.logical_not(x), x.logical_not()),
     (Leaf((4,), values=(0.0, 1.0, np.nan, -2.0)),), _NO_GRAD))
for _name in ("isnan", "isinf", "isfinite"):
    add_torch_cases(
        _name,
        ("special-values", lambda lib, x, _name=_name: getattr(lib, _name)(x),
         (Leaf((5,), values=(0.0, np.nan, np.inf, -np.inf, -1.0)),), _NO_GRAD),
        ("ints", lambda lib, _name=_name: getattr(lib.tensor(_ints([1, 2])), _name)(), (),
         _NO_GRAD))
add_torch_cases(
    "isclose",
    ("tolerances", lambda lib, x, y: lib.isclose(x, y, rtol=1e-3, atol=1e-2),
     (Leaf((5,), values=(1.0, 1.0, 100.0, np.inf, np.nan)),
      Leaf((5,), values=(1.005, 1.02, 100.05, np.inf, np.nan))), _NO_GRAD),
    ("equal-nan", lambda lib, x, y: x.isclose(y, equal_nan=True),
     (Leaf((3,), values=(np.nan, np.inf, 1.0)), Leaf((3,), values=(np.nan, -np.inf, 1.0))),
     _NO_GRAD),
    # Complex values are compared as complex numbers (conjugates differ).
    ("complex", lambda lib: lib.isclose(lib.tensor([1 + 1j, 2 + 0j, 1j]),
                                        lib.tensor([1 - 1j, 2 + 1e-9j, 1j])), (), _NO_GRAD),
    ("allclose", lambda lib, x, y: lib.tensor(
        [lib.allclose(x, y), lib.allclose(x, x + 1e-9), x.allclose(y, atol=1.0)]),
     (Leaf((2, 3)), Leaf((3,))), _NO_GRAD))


# -- the fused VJPs of tanh and sigmoid, as ops of their own ------------------------------------

for _name in ("tanh_backward", "sigmoid_backward"):
    _fn = getattr(oxmera.ops.elementwise, _name)
    add_cases(_name,
              ("3x4", _fn, (Leaf((3, 4)), Leaf((3, 4), "positive"))),
              ("broadcast", _fn, (Leaf((2, 3)), Leaf((3,), "positive"))),
              ("0d", _fn, (Leaf(()), Leaf((), "positive"))),
              ("size-0", _fn, (Leaf((0, 3)), Leaf((0, 3)))),
              ("transposed", _fn, (T((3, 4)), S((3, 4)))),
              ("grad-only", _fn, (Leaf((2, 3)), const((2, 3), "positive"))))
    add_torch_cases(_name, ("3x4", lambda lib, g, o, _name=_name: (
        getattr(oxmera.ops.elementwise, _name)(g, o) if lib is oxmera
        else getattr(lib.ops.aten, _name)(g, o)), (Leaf((3, 4)), Leaf((3, 4), "positive"))))

# relu keeps nan and -0.0 (PyTorch's select, not NumPy's maximum), contiguous
# (the kernel) or not (NumPy's where)
add_torch_cases("relu", ("special-values", lambda lib, x: (lib.relu(x), lib.relu(x[::2])),
                         (Leaf((6,), values=(-0.0, 0.0, np.nan, -1.0, np.inf, -np.inf)),)))

# mul's VJP when both factors need a gradient: both products in one op (and,
# for float arrays of one shape, one pass)
_mul_pair = oxmera.ops.elementwise.mul_pair
add_cases("mul_pair",
          ("3x4", _mul_pair, (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
          ("broadcast", _mul_pair, (Leaf((2, 3)), Leaf((3,)), Leaf((2, 1)))),
          ("0d", _mul_pair, (Leaf(()), Leaf(()), Leaf(()))),
          ("size-0", _mul_pair, (Leaf((0, 3)), Leaf((0, 3)), Leaf((0, 3)))),
          ("non-contiguous", _mul_pair, (T((3, 4)), S((3, 4)), Leaf((3, 4)))),
          ("one-shared", lambda f, a: _mul_pair(f, a, a), (Leaf((2, 3)), Leaf((2, 3)))),
          ("factor-only", _mul_pair, (Leaf((2, 3)), const((2, 3)), const((2, 3)))),
          ("second-output", lambda f, a, b: _mul_pair(f, a, b).second,
           (Leaf((2, 3)), Leaf((2, 3)), Leaf((2, 3)))),
          ("complex", _mul_pair, (C((2, 3)), C((2, 3)), C((2, 3)))),
          ("numbers", lambda f: _mul_pair(f, 2.5, [1.0, -2.0, 3.0]), (Leaf((2, 3)),)))
add_torch_cases("mul_pair", ("3x4", lambda lib, f, a, b: (
    tuple(_mul_pair(f, a, b)) if lib is oxmera else (f * a, f * b)),
    (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4)))))

# pow's VJP for a constant exponent, as an op of its own (the exponent gets
# no gradient: a number, a 0-d or a broadcast constant tensor)
_pow_backward = oxmera.ops.elementwise.pow_backward
add_cases("pow_backward",
          ("square", lambda g, x: _pow_backward(g, x, 2), (Leaf((3, 4)), Leaf((3, 4)))),
          ("cube-transposed", lambda g, x: _pow_backward(g, x, 3), (T((3, 4)), S((3, 4)))),
          ("negative", lambda g, x: _pow_backward(g, x, -2),
           (Leaf((2, 3)), Leaf((2, 3), "positive"))),
          ("half", lambda g, x: _pow_backward(g, x, 0.5), (Leaf((2, 3)), Leaf((2, 3), "positive"))),
          ("zero", lambda g, x: _pow_backward(g, x, 0), (Leaf((2, 3)), Leaf((2, 3)))),
          ("one", lambda g, x: _pow_backward(g, x, 1), (Leaf((2, 3)), Leaf((2, 3)))),
          ("0d-exponent", lambda g, x: _pow_backward(g, x, oxmera.tensor(3)),
           (Leaf((2, 3)), Leaf((2, 3)))),
          ("broadcast", lambda g, x: _pow_backward(g, x, 2), (Leaf((2, 3)), Leaf((3,)))),
          ("exponents", lambda g, x: _pow_backward(g, x, oxmera.tensor([0.0, 1.0, 2.0, 3.0],
                                                                      dtype=oxmera.float64)),
           (Leaf((2, 4)), Leaf((4,), "positive"))),
          ("0d", lambda g, x: _pow_backward(g, x, 2), (Leaf(()), Leaf(()))),
          ("size-0", lambda g, x: _pow_backward(g, x, 2), (Leaf((0, 3)), Leaf((0, 3)))))
# (against PyTorch's gradient of x ** e, taken with create_graph: its value
# and, differentiated again, its gradients in grad and x)
add_torch_cases("pow_backward", *[
    (f"exponent-{e}", lambda lib, g, x, e=e: (
        _pow_backward(g, x, e) if lib is oxmera
        else lib.autograd.grad(x ** e, x, g, create_graph=True)[0]),
     (Leaf((3, 4)), Leaf((3, 4), "positive")))
    for e in (2, 3, 1, -1.5, 0.5)])

add_cases("relu_backward",
          ("3x4", oxmera.ops.elementwise.relu_backward, (Leaf((3, 4)), const((3, 4)))),
          ("broadcast", oxmera.ops.elementwise.relu_backward, (Leaf((2, 3)), const((3,)))),
          ("0d", oxmera.ops.elementwise.relu_backward, (Leaf(()), const(()))),
          ("size-0", oxmera.ops.elementwise.relu_backward, (Leaf((0, 3)), const((0, 3)))),
          ("transposed", oxmera.ops.elementwise.relu_backward, (T((3, 4)), const((3, 4)))),
          ("output-too", lambda g, o: oxmera.ops.elementwise.relu_backward(g, o) * o,
           (Leaf((2, 3)), Leaf((2, 3)))))
add_torch_cases("relu_backward", ("3x4", lambda lib, g, o: (
    oxmera.ops.elementwise.relu_backward(g, o) if lib is oxmera
    else lib.ops.aten.threshold_backward(g, o, 0)), (Leaf((3, 4)), Leaf((3, 4)))))
