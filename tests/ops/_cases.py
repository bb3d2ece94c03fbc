"""The gradient-case table: every differentiable op's gradient tests, keyed by op name.

``GRADIENT_CASES[name]`` lists the :class:`Case` objects of the registered op
``name``. ``test_gradients.py`` runs gradcheck and gradgradcheck (float64,
finite differences) on each one, and ``test_registry.py`` fails when a
registered differentiable op has no entry, so an op cannot be added without a
gradient test. To test a new op, add its cases here; nothing else to edit.

A case holds a function of tensors and the specs of its inputs. Inputs are
built fresh for every test from a generator seeded by the case's id (the
checks perturb the inputs' memory in place): a :class:`Leaf` becomes a
float64 tensor that requires grad, laid out contiguously, transposed
(``from_numpy(array.T)``, so not C-contiguous) or strided (every other
column); anything else (Python numbers, arrays, index tuples) is passed
through as it is.
"""
import dataclasses
import zlib

import numpy as np

import oxmera
from oxmera.ops.conversion import _cast
from oxmera.ops.index import index_backward

__all__ = ["Leaf", "Case", "GRADIENT_CASES", "all_cases", "sample"]


# -- input specs ---------------------------------------------------------------

def sample(domain, shape, rng):
    """Random float64 values of ``shape`` from a named domain.

    ``real``: magnitudes in [0.25, 2] with random signs, so never near the
    kinks of abs, relu and sign, and safe as a divisor. ``positive``: [0.5, 2]
    (log, sqrt, a base of pow). ``distinct``: a shuffled grid with spacing
    well above the finite-difference step, so max/min have no ties.
    """
    if domain == "real":
        magnitude = rng.uniform(0.25, 2.0, shape)
        return np.asarray(np.where(rng.random(shape) < 0.5, -magnitude, magnitude))
    if domain == "positive":
        return np.asarray(rng.uniform(0.5, 2.0, shape))
    if domain == "distinct":
        n = int(np.prod(shape, dtype=np.int64))
        grid = np.linspace(-2.0, 2.0, n) if n > 1 else np.array([0.7] * n)
        return rng.permutation(grid).reshape(shape)
    raise ValueError(f"unknown domain {domain!r}")


@dataclasses.dataclass(frozen=True)
class Leaf:
    """A float64 leaf tensor to build for a case.

    ``layout`` is ``contiguous``, ``transposed`` (the transpose of a
    C-contiguous array, so its strides run backwards) or ``strided`` (every
    other element of a wider array along the last dim). ``values`` fixes the
    values (for ties, say) instead of sampling ``domain``.
    """

    shape: tuple
    domain: str = "real"
    layout: str = "contiguous"
    requires_grad: bool = True
    values: tuple = None

    def build(self, rng):
        shape = tuple(self.shape)
        if self.values is not None:
            array = np.array(self.values, dtype=np.float64).reshape(shape)
        elif self.layout == "transposed":
            array = sample(self.domain, shape[::-1], rng).T
        elif self.layout == "strided":
            wide = shape[:-1] + (2 * shape[-1],)
            array = sample(self.domain, wide, rng)[..., ::2]
        else:
            array = sample(self.domain, shape, rng)
        if self.layout != "contiguous" and array.ndim >= 1 and array.size > 1:
            assert not array.flags.c_contiguous, f"{self} is contiguous after all"
        tensor = oxmera.from_numpy(array)
        return tensor.requires_grad_() if self.requires_grad else tensor


def T(shape, domain="real"):
    """A transposed (non-contiguous) leaf of ``shape``."""
    return Leaf(shape, domain, "transposed")


def S(shape, domain="real"):
    """A strided (non-contiguous) leaf of ``shape``."""
    return Leaf(shape, domain, "strided")


def const(shape, domain="real"):
    """A float64 tensor input that does not require grad."""
    return Leaf(shape, domain, requires_grad=False)


@dataclasses.dataclass(frozen=True)
class Case:
    """One gradient test: ``fn(*inputs)`` checked to first (and second) order.

    ``second_order=False`` is for points where the first derivative is
    right but not differentiable (a tie in max), so finite differences of
    the gradient are meaningless there. ``eps``/``atol``/``rtol`` override
    gradcheck's defaults where the function rounds (a float32 cast).
    """

    id: str
    fn: object
    inputs: tuple
    second_order: bool = True
    eps: float = 1e-6
    atol: float = 1e-5
    rtol: float = 1e-3

    def build(self):
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return tuple(spec.build(rng) if isinstance(spec, Leaf) else spec for spec in self.inputs)

    @property
    def tolerances(self):
        return {"eps": self.eps, "atol": self.atol, "rtol": self.rtol}


# -- building the table ------------------------------------------------------------

GRADIENT_CASES = {}


def add_cases(name, *entries):
    """Register cases for op ``name``; each entry is ``(label, fn, inputs[, options])``."""
    cases = GRADIENT_CASES.setdefault(name, [])
    for entry in entries:
        label, fn, inputs, *options = entry
        case = Case(f"{name}:{label}", fn, tuple(inputs), **(options[0] if options else {}))
        if any(c.id == case.id for c in cases):
            raise ValueError(f"duplicate gradient case {case.id}")
        cases.append(case)


def all_cases():
    """Every case, with the name of the op it tests, in table order."""
    return [(name, case) for name, cases in GRADIENT_CASES.items() for case in cases]


def _shape_label(shape):
    return "x".join(map(str, shape)) if shape else "0d"


#: Shape pairs for binary elementwise ops: equal, broadcasting both ways,
#: lower rank, 0-d on either side, size 0.
BROADCAST_PAIRS = [
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((2, 3), (3,)),
    ((2, 1, 3), (4, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((), ()),
    ((0, 3), (3,)),
    ((1, 3), (0, 1)),
]

#: Shapes for unary ops: 0-d, vector, matrix, size 0, 3-d (``unary_cases``
#: adds a transposed and a strided, non-contiguous, matrix).
UNARY_SHAPES = [(), (5,), (3, 4), (0, 3), (2, 1, 3)]


def binary_cases(name, fn, left="real", right="real"):
    """Cases of a binary op: broadcasting pairs, Python numbers on either
    side, a non-contiguous operand, an operand without grad, an ndarray."""
    entries = [(f"{_shape_label(a)}-{_shape_label(b)}", fn, (Leaf(a, left), Leaf(b, right)))
               for a, b in BROADCAST_PAIRS]
    left_number = 1.5 if left == "positive" else -1.25
    right_number = 1.5 if right == "positive" else -1.25
    right_array = sample(right, (2, 3), np.random.default_rng(1))
    entries += [
        ("tensor-number", lambda x: fn(x, right_number), (Leaf((2, 3), left),)),
        ("number-tensor", lambda y: fn(left_number, y), (Leaf((2, 3), right),)),
        ("int-number", lambda x: fn(x, 2), (Leaf((3,), left),)),
        ("0d-number", lambda x: fn(x, right_number), (Leaf((), left),)),
        ("transposed", fn, (T((3, 4), left), Leaf((3, 4), right))),
        ("strided-transposed", fn, (S((4, 3), left), T((4, 3), right))),
        ("transposed-broadcast", fn, (T((4, 3), left), Leaf((3,), right))),
        ("no-grad-left", fn, (const((3, 1), left), Leaf((1, 4), right))),
        ("no-grad-right", fn, (Leaf((2, 3), left), const((3,), right))),
        ("ndarray-right", lambda x: fn(x, right_array), (Leaf((2, 3), left),)),
    ]
    add_cases(name, *entries)


def unary_cases(name, fn, domain="real"):
    """Cases of an elementwise unary op over UNARY_SHAPES and two layouts."""
    entries = [(_shape_label(s), fn, (Leaf(s, domain),)) for s in UNARY_SHAPES]
    entries += [("transposed", fn, (T((3, 4), domain),)),
                ("strided", fn, (S((2, 3), domain),))]
    add_cases(name, *entries)


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


# -- reductions --------------------------------------------------------------------------

def reduction_cases(name, fn):
    add_cases(
        name,
        ("all", lambda x: fn(x), (Leaf((3, 4)),)),
        ("dim0", lambda x: fn(x, 0), (Leaf((3, 4)),)),
        ("dim-neg", lambda x: fn(x, dim=-1), (Leaf((2, 3, 4)),)),
        ("dim-tuple", lambda x: fn(x, dim=(0, 2)), (Leaf((2, 3, 4)),)),
        ("dim-tuple-neg", lambda x: fn(x, (-1, 0), keepdim=True), (Leaf((2, 3, 4)),)),
        ("keepdim", lambda x: fn(x, 1, keepdim=True), (Leaf((3, 4)),)),
        ("axis", lambda x: fn(x, axis=1), (Leaf((3, 4)),)),
        ("0d", lambda x: fn(x), (Leaf(()),)),
        ("0d-dim", lambda x: fn(x, 0), (Leaf(()),)),
        ("size-0-kept-dim", lambda x: fn(x, 1), (Leaf((0, 3)),)),
        ("transposed", lambda x: fn(x, 0), (T((3, 4)),)),
        ("strided-all", lambda x: fn(x), (S((2, 3)),)),
        ("method", lambda x: getattr(x, name)(dim=1), (Leaf((2, 3)),)),
    )


reduction_cases("sum", oxmera.sum)
add_cases("sum",
          ("size-0-all", lambda x: x.sum(), (Leaf((0, 3)),)),
          ("size-0-reduced-dim", lambda x: x.sum(0), (Leaf((0, 3)),)),
          ("dtype", lambda x: x.sum(dtype=np.float64), (Leaf((2, 3)),)))
reduction_cases("mean", oxmera.mean)


def extreme_cases(name, fn):
    add_cases(
        name,
        ("all", lambda x: fn(x), (Leaf((3, 4), "distinct"),)),
        ("dim0", lambda x: fn(x, 0).values, (Leaf((3, 4), "distinct"),)),
        ("dim-neg", lambda x: fn(x, dim=-1).values, (Leaf((2, 3, 4), "distinct"),)),
        ("keepdim", lambda x: fn(x, 1, keepdim=True).values, (Leaf((3, 4), "distinct"),)),
        ("axis", lambda x: fn(x, axis=0).values, (Leaf((3, 4), "distinct"),)),
        ("named-tuple", lambda x: fn(x, 1), (Leaf((2, 3), "distinct"),)),
        ("0d", lambda x: fn(x), (Leaf(()),)),
        ("0d-dim", lambda x: fn(x, 0).values, (Leaf(()),)),
        ("size-0-kept-dim", lambda x: fn(x, 1).values, (Leaf((0, 3)),)),
        ("transposed", lambda x: fn(x, 1).values, (Leaf((3, 4), "distinct", "transposed"),)),
        ("method", lambda x: getattr(x, name)(), (Leaf((5,), "distinct"),)),
        # At a tie of two, central differences see half the slope on each
        # side, which is exactly the even split; the gradient is not smooth
        # there, so only the first order is checked.
        ("tie-all", lambda x: fn(x), (Leaf((3,), values=(3.0, 1.0, 3.0) if name == "max"
                                           else (1.0, 3.0, 1.0)),), {"second_order": False}),
        ("tie-dim", lambda x: fn(x, 1).values,
         (Leaf((2, 3), values=(2.0, 2.0, -1.0, 0.5, -1.0, 0.5) if name == "max"
               else (-1.0, -1.0, 2.0, 0.5, 1.0, 0.5)),),
         {"second_order": False}),
    )


extreme_cases("max", oxmera.max)
extreme_cases("min", oxmera.min)

add_cases("sum_to",
          ("leading", lambda x: oxmera.sum_to(x, (4,)), (Leaf((3, 4)),)),
          ("keep-1", lambda x: oxmera.sum_to(x, (1, 4)), (Leaf((3, 4)),)),
          ("both", lambda x: oxmera.sum_to(x, (3, 1)), (Leaf((2, 3, 4)),)),
          ("to-0d", lambda x: oxmera.sum_to(x, ()), (Leaf((3,)),)),
          ("same", lambda x: oxmera.sum_to(x, (2, 3)), (Leaf((2, 3)),)),
          ("0d", lambda x: oxmera.sum_to(x, ()), (Leaf(()),)),
          ("size-0", lambda x: oxmera.sum_to(x, (1, 3)), (Leaf((0, 3)),)),
          ("transposed", lambda x: oxmera.sum_to(x, (4,)), (T((3, 4)),)))


# -- linear algebra ------------------------------------------------------------------------

#: matmul operand shapes: every combination of ranks NumPy's rules allow.
MATMUL_SHAPES = [
    ((3,), (3,)),
    ((3,), (3, 2)),
    ((2, 3), (3,)),
    ((2, 3), (3, 4)),
    ((2, 2, 3), (2, 3, 4)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((2, 2, 3), (3,)),
    ((3,), (2, 3, 2)),
    ((1, 3), (2, 3, 2)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
]

add_cases("matmul", *[(f"{_shape_label(a)}-{_shape_label(b)}", oxmera.matmul,
                       (Leaf(a), Leaf(b))) for a, b in MATMUL_SHAPES])
add_cases("matmul",
          ("operator", lambda x, y: x @ y, (Leaf((2, 3)), Leaf((3, 2)))),
          ("transposed", oxmera.matmul, (T((3, 2)), T((2, 4)))),
          ("mT", lambda x, y: x @ y.mT, (Leaf((2, 3)), Leaf((4, 3)))),
          ("no-grad-right", oxmera.matmul, (Leaf((2, 3)), const((3, 2)))),
          ("ndarray-right", lambda x: x @ np.arange(6.0).reshape(3, 2), (Leaf((2, 3)),)),
          ("ndarray-left", lambda y: np.arange(6.0).reshape(2, 3) @ y, (Leaf((3, 2)),)),
          ("quadratic", lambda x: x @ x, (Leaf((3, 3)),)))


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


# -- conversion ------------------------------------------------------------------------------

add_cases("clone",
          ("2d", oxmera.clone, (Leaf((2, 3)),)),
          ("0d", lambda x: x.clone(), (Leaf(()),)),
          ("size-0", lambda x: x.clone(), (Leaf((0, 3)),)),
          ("transposed", lambda x: x.clone(), (T((3, 4)),)))
add_cases("contiguous",
          ("already", oxmera.contiguous, (Leaf((2, 3)),)),
          ("transposed", lambda x: x.contiguous(), (T((3, 4)),)),
          ("strided", lambda x: x.contiguous(), (S((2, 3)),)),
          ("0d", lambda x: x.contiguous(), (Leaf(()),)),
          ("size-0", lambda x: x.contiguous(), (T((0, 3)),)))
# A float32 round trip rounds at 1e-7 relative: a finite-difference step of
# 1e-2 keeps that far below the tolerance (the cast is linear, so the large
# step costs no accuracy).
_ROUNDING = {"eps": 1e-2, "atol": 1e-4, "rtol": 1e-3}
add_cases("to",
          ("float32", lambda x: x.to(oxmera.float32), (Leaf((2, 3)),), _ROUNDING),
          ("float16-method", lambda x: x.half(), (Leaf((3,)),),
           {"eps": 1e-1, "atol": 2e-2, "rtol": 1e-2}),
          ("round-trip", lambda x: x.float().double() * x, (Leaf((2, 3)),), _ROUNDING),
          ("cast-op", lambda x: _cast(x, np.float32), (T((3, 2)),), _ROUNDING),
          ("0d", lambda x: x.to(oxmera.float32), (Leaf(()),), _ROUNDING),
          ("size-0", lambda x: x.to(oxmera.float32), (Leaf((0, 3)),), _ROUNDING))


# -- composites: several ops in one graph (not tied to one op) ------------------------------

COMPOSITE_CASES = [
    Case("composite:mlp", lambda x, w, b: (x @ w + b).tanh().sum(dim=1).mean(),
         (Leaf((3, 4)), Leaf((4, 2)), Leaf((2,)))),
    Case("composite:softmax", lambda x: (x - x.max(dim=-1, keepdim=True).values).exp()
         / (x - x.max(dim=-1, keepdim=True).values).exp().sum(-1, keepdim=True),
         (Leaf((2, 4), "distinct"),)),
    Case("composite:views", lambda x: x.T.reshape(-1)[1:].unsqueeze(0).expand(2, -1) * x.sum(),
         (T((2, 3)),)),
]


# -- non-differentiable ops --------------------------------------------------------------------

#: name -> a call of each non-differentiable op on two leaves that require
#: grad; ``test_registry.py`` checks every such op is listed and never records.
NO_GRADIENT_CALLS = {
    "eq": lambda x, y: oxmera.eq(x, y),
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: oxmera.lt(x, y),
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x.gt(y),
    "ge": lambda x, y: oxmera.ge(x * 2, 1.0),
}
