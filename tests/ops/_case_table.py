"""The gradient-case table: every differentiable op's gradient tests, keyed by op name.

``GRADIENT_CASES[name]`` lists the :class:`Case` objects of the registered op
``name``. ``test_gradients.py`` runs gradcheck and gradgradcheck (float64,
finite differences) on each one, and ``test_registry.py`` fails when a
registered differentiable op has no entry, so an op cannot be added without a
gradient test. The cases themselves live in one module per topic,
``tests/ops/_cases_<topic>.py``, which ``_cases.py`` imports (all of them,
found by name): to test a new op, add its cases to its topic's module (or a
new ``_cases_<topic>.py``); nothing else to edit.

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

__all__ = ["Leaf", "Case", "GRADIENT_CASES", "COMPOSITE_CASES", "NO_GRADIENT_CALLS", "TORCH_CASES",
           "TorchCase", "add_cases", "add_torch_cases", "all_cases", "sample"]


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
    values (for ties, say) instead of sampling ``domain``. ``complex=True``
    makes a complex128 leaf: real and imaginary parts each drawn from
    ``domain`` (``positive`` keeps the real part off the negative axis, the
    branch cut of log and sqrt).
    """

    shape: tuple
    domain: str = "real"
    layout: str = "contiguous"
    requires_grad: bool = True
    values: tuple = None
    complex: bool = False

    def build(self, rng):
        shape = tuple(self.shape)
        if self.values is not None:
            array = np.array(self.values, dtype=np.complex128 if self.complex else np.float64
                             ).reshape(shape)
        elif self.complex:
            real = Leaf(shape, self.domain, self.layout, False).build(rng).numpy()
            imag = sample(self.domain, shape, rng)
            array = np.asarray(real + 1j * imag)
            if self.layout != "contiguous":
                wide = np.empty(real.shape[::-1] if self.layout == "transposed" else
                                shape[:-1] + (2 * shape[-1],), np.complex128)
                view = wide.T if self.layout == "transposed" else wide[..., ::2]
                view[...] = array
                array = view
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


def C(shape, domain="real", layout="contiguous", requires_grad=True):
    """A complex128 leaf of ``shape`` (see :class:`Leaf`)."""
    return Leaf(shape, domain, layout, requires_grad, complex=True)


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


def shape_label(shape):
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
    entries = [(f"{shape_label(a)}-{shape_label(b)}", fn, (Leaf(a, left), Leaf(b, right)))
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
    entries = [(shape_label(s), fn, (Leaf(s, domain),)) for s in UNARY_SHAPES]
    entries += [("transposed", fn, (T((3, 4), domain),)),
                ("strided", fn, (S((2, 3), domain),))]
    add_cases(name, *entries)


#: Cases checking several ops in one graph (not tied to one op); each is
#: checked to first and second order like the per-op ones.
COMPOSITE_CASES = []

#: name -> a call of each non-differentiable op on two float leaves that
#: require grad; ``test_registry.py`` checks every such op is listed here and
#: never records.
NO_GRADIENT_CALLS = {}

#: name -> list of :class:`TorchCase`; ``test_torch.py`` compares forward
#: values and gradients against PyTorch where it is importable.
TORCH_CASES = {}


@dataclasses.dataclass(frozen=True)
class TorchCase:
    """One comparison against PyTorch: ``fn(oxmera, *inputs)`` vs ``fn(torch, *inputs)``.

    ``fn`` receives the library module first (``oxmera`` or ``torch``) and
    then the inputs built from ``inputs`` (float64 leaves as each library's
    tensors; anything else passed as it is), so one lambda serves both
    libraries when the names agree, e.g. ``lambda lib, x: lib.exp(x)``.
    ``grad=False`` compares forward values only (non-differentiable ops).
    """

    id: str
    fn: object
    inputs: tuple
    grad: bool = True
    atol: float = 1e-7
    rtol: float = 1e-6


def add_torch_cases(name, *entries):
    """Register PyTorch comparisons for op ``name``: ``(label, fn, inputs[, options])``."""
    cases = TORCH_CASES.setdefault(name, [])
    for entry in entries:
        label, fn, inputs, *options = entry
        case = TorchCase(f"{name}:{label}", fn, tuple(inputs), **(options[0] if options else {}))
        if any(c.id == case.id for c in cases):
            raise ValueError(f"duplicate torch case {case.id}")
        cases.append(case)
