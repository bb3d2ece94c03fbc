"""Random programs for the fuzzer: the op table, a hypothesis strategy, an evaluator.

A :class:`Program` is plain data: a seed, the leaves (shape, layout, dtype)
and a list of steps ``(op, inputs, params)``, where ``inputs`` index the
values computed so far (leaves first, then one value per step) and ``params``
holds only literals. Its ``repr`` is valid Python, so a failure hypothesis
shrinks can be pasted into an ``@example`` and kept as a regression test.

Every entry of :data:`OPS` knows three things:

- ``prepare(g)``: pick inputs among the values so far (``g.pick``) and draw
  the parameters, or return None when the op does not apply to what is
  there. Programs are drawn while being evaluated in float64 NumPy, so an op
  only applies where it is smooth with room to spare: never within
  :data:`MARGIN` of a kink, a tie or a jump, inside its domain, with every
  value bounded by :data:`BOUND`. Finite differences are meaningful there.
- ``ref(xs, p)``: the NumPy evaluation, on float64 arrays.
- ``ox(env, xs, p)``: the same step with oxmera, on Tensors. Several
  spellings of one op (function, method, operator, ``nn.functional``,
  ``axis=``) are drawn as a ``form`` parameter.

Constants (``("real", shape, seed)`` specs in params) are rebuilt from their
seed by both evaluations; index arrays and masks are literals in params.
"""
import dataclasses
import math
import warnings

import numpy as np
from hypothesis import strategies as st

import oxmera
import oxmera.nn.functional as F

MARGIN = 1e-3          # distance kept from kinks, ties and jumps
BOUND = 30.0           # no intermediate value exceeds this in magnitude
MAX_SIZE = 48          # elements of an intermediate value

OPS = {}


@dataclasses.dataclass(frozen=True)
class FuzzOp:
    name: str
    group: str
    prepare: object
    ref: object
    ox: object


def fuzz_op(name, group, ref, ox):
    def register(prepare):
        if name in OPS:
            raise ValueError(f"fuzz op {name} defined twice")
        OPS[name] = FuzzOp(name, group, prepare, ref, ox)
        return prepare
    return register


@dataclasses.dataclass
class Program:
    """One random program; ``repr`` gives the Python to rebuild it."""

    seed: int
    leaves: tuple      # ((shape, layout, dtype name), ...)
    steps: tuple       # ((op name, input indices, params dict), ...)


# -- values -------------------------------------------------------------------------

def sample_real(shape, rng):
    """Magnitudes in [0.25, 2] with random signs (as tests/ops/_case_table does)."""
    magnitude = rng.uniform(0.25, 2.0, shape)
    return np.asarray(np.where(rng.random(shape) < 0.5, -magnitude, magnitude))


def const_value(spec):
    """The float64 (or bool) array a constant spec ``(domain, shape, seed)`` stands for."""
    domain, shape, seed = spec
    rng = np.random.default_rng([seed, 7])
    if domain == "real":
        return sample_real(shape, rng)
    if domain == "positive":
        return rng.uniform(0.5, 2.0, shape)
    if domain == "unit":
        return rng.uniform(0.05, 0.95, shape)
    if domain == "mask":
        return rng.random(shape) < 0.5
    raise ValueError(domain)


def leaf_array(program, k, dtype):
    """Leaf ``k`` of ``program``: its values in ``dtype``, in the layout it asks for."""
    shape, layout, _ = program.leaves[k]
    rng = np.random.default_rng([program.seed, k])
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        array = sample_real(shape[::-1], rng).astype(dtype).T
    elif layout == "strided" and len(shape) >= 1:
        array = sample_real(shape[:-1] + (2 * shape[-1],), rng).astype(dtype)[..., ::2]
    else:
        array = sample_real(shape, rng).astype(dtype)
    return array


def is_const(value):
    return (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], str)
            and value[0] in ("real", "positive", "unit", "mask"))


class Env:
    """How oxmera steps build their constants: as tensors of the program's float dtype."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def tensor(self, spec):
        value = const_value(spec)
        if value.dtype == np.bool_:
            return oxmera.tensor(value)
        return oxmera.tensor(value, dtype=self.dtype)

    def array(self, spec):
        value = const_value(spec)
        return value if value.dtype == np.bool_ else value.astype(self.dtype)


def torch_result_type(participants):
    """PyTorch's promotion among float tensors: dimensioned ones decide over 0-d ones."""
    dims = [np.dtype(d) for d, ndim in participants if ndim]
    pool = dims or [np.dtype(d) for d, _ in participants]
    return max(pool, key=lambda d: d.itemsize)


# -- drawing --------------------------------------------------------------------------

class Gen:
    """What ``prepare`` draws from: hypothesis choices and the values computed so far."""

    def __init__(self, draw, pool, dtypes=None, const_dtype=np.float64):
        self.draw = draw
        self.pool = pool
        self.dtypes = dtypes           # the dtype each value will have in oxmera
        self.const_dtype = np.dtype(const_dtype)   # float64 programs stay float64

    def pick(self, pred=None, like=None):
        """Index of a value satisfying ``pred``, most recent first (shrinks to a chain);
        with ``like``, only values of the same dtype as value ``like``."""
        candidates = [i for i in range(len(self.pool) - 1, -1, -1)
                      if (pred is None or pred(self.pool[i]))
                      and (like is None or self.dtypes[i] == self.dtypes[like])]
        if not candidates:
            return None
        return self.draw(st.sampled_from(candidates))

    def choice(self, options):
        return self.draw(st.sampled_from(list(options)))

    def integer(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def boolean(self):
        return self.draw(st.booleans())

    def const(self, shape, domain="real"):
        return (domain, tuple(int(s) for s in shape), self.draw(st.integers(0, 255)))

    def dim(self, ndim):
        """A dim of an ``ndim``-d tensor, negative or not (0 or -1 for a 0-d one)."""
        n = max(ndim, 1)
        return self.integer(-n, n - 1)

    def dims(self, ndim, allow_none=True):
        """None, an int or a tuple of distinct dims."""
        kinds = ["int", "tuple"] + (["none"] if allow_none else [])
        kind = self.choice(kinds) if ndim else self.choice(["int"] + kinds[2:])
        if kind == "none":
            return None
        if kind == "int":
            return self.dim(ndim)
        picked = self.draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim,
                                    unique=True))
        return tuple(d - ndim if self.boolean() else d for d in picked)

    def partner_shape(self, shape):
        """A shape broadcasting with ``shape``: leading dims dropped, some dims set to 1."""
        drop = self.integer(0, len(shape))
        out = list(shape[drop:])
        for k in range(len(out)):
            if self.integer(0, 2) == 0:
                out[k] = 1
        return tuple(out)


def axes_of(dim, ndim):
    """``dim`` (None, int, tuple) as a tuple of non-negative axes; () for a 0-d input."""
    if ndim == 0:
        return ()
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        return (dim % ndim,)
    return tuple(sorted(d % ndim for d in dim))


def reduced_count(shape, axes):
    return int(np.prod([shape[a] for a in axes], dtype=np.int64)) if axes else 1


def broadcasts(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def far_from_integers(x, shift=0.0):
    return bool(np.all(np.abs((x - shift) - np.round(x - shift)) > MARGIN))


# -- elementwise unary ---------------------------------------------------------------

def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x, beta, threshold):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(np.minimum(beta * x, threshold)))
                    / beta)


def _gelu(x, approximate):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _not_near(x, points):
    return all(bool(np.all(np.abs(x - p) > MARGIN)) for p in points)


# name: (reference, domain predicate or None, forms)
UNARY = {
    "neg": (np.negative, None, ("fn", "method", "op")),
    "exp": (np.exp, lambda x: np.all(x < 3.0), ("fn", "method")),
    "exp2": (np.exp2, lambda x: np.all(x < 4.0), ("fn", "method")),
    "expm1": (np.expm1, lambda x: np.all(x < 3.0), ("fn", "method")),
    "log": (np.log, lambda x: np.all(x > 0.2), ("fn", "method")),
    "log2": (np.log2, lambda x: np.all(x > 0.2), ("fn", "method")),
    "log10": (np.log10, lambda x: np.all(x > 0.2), ("fn", "method")),
    "log1p": (np.log1p, lambda x: np.all(x > -0.8), ("fn", "method")),
    "sqrt": (np.sqrt, lambda x: np.all(x > 0.2), ("fn", "method")),
    "rsqrt": (lambda x: 1 / np.sqrt(x), lambda x: np.all(x > 0.2), ("fn", "method")),
    "sin": (np.sin, None, ("fn", "method")),
    "cos": (np.cos, None, ("fn", "method")),
    "tan": (np.tan, lambda x: np.all(np.abs(x) < 1.2), ("fn", "method")),
    "asin": (np.arcsin, lambda x: np.all(np.abs(x) < 0.9), ("fn", "method", "arcsin")),
    "acos": (np.arccos, lambda x: np.all(np.abs(x) < 0.9), ("fn", "method", "arccos")),
    "atan": (np.arctan, None, ("fn", "method", "arctan")),
    "sinh": (np.sinh, lambda x: np.all(np.abs(x) < 3.0), ("fn", "method")),
    "cosh": (np.cosh, lambda x: np.all(np.abs(x) < 3.0), ("fn", "method")),
    "tanh": (np.tanh, None, ("fn", "method", "F")),
    "sigmoid": (_sigmoid, None, ("fn", "method", "F")),
    "erf": (_erf, None, ("fn", "method")),
    "square": (np.square, None, ("fn", "method")),
    "reciprocal": (np.reciprocal, lambda x: np.all(np.abs(x) > 0.2), ("fn", "method")),
    "relu": (lambda x: np.maximum(x, 0), lambda x: _not_near(x, [0]), ("fn", "method", "F")),
    "abs": (np.abs, lambda x: _not_near(x, [0]), ("fn", "method", "op")),
    "sign": (np.sign, lambda x: _not_near(x, [0]), ("fn", "method")),
    "floor": (np.floor, far_from_integers, ("fn", "method")),
    "ceil": (np.ceil, far_from_integers, ("fn", "method")),
    "trunc": (np.trunc, far_from_integers, ("fn", "method")),
    "round": (np.round, lambda x: far_from_integers(x, 0.5), ("fn", "method")),
    "nan_to_num": (lambda x: x, None, ("fn", "method")),
    "silu": (lambda x: x * _sigmoid(x), None, ("F",)),
}

_OPERATOR_UNARY = {"neg": lambda x: -x, "abs": abs}


def _unary(name, ref, domain, forms):
    def ox(env, xs, p):
        (x,) = xs
        form = p["form"]
        if form == "fn":
            return getattr(oxmera, name)(x)
        if form == "method":
            return getattr(x, name)()
        if form == "F":
            return getattr(F, name)(x)
        if form == "op":
            return _OPERATOR_UNARY[name](x)
        return getattr(oxmera, form)(x)         # an alias (arcsin, ...)

    @fuzz_op(name, "unary", lambda xs, p: ref(xs[0]), ox)
    def prepare(g):
        i = g.pick(lambda v: domain is None or domain(v))
        if i is None:
            return None
        return (i,), {"form": g.choice(forms)}


for _name, (_ref, _domain, _forms) in UNARY.items():
    _unary(_name, _ref, _domain, _forms)


@fuzz_op("clamp", "unary",
         lambda xs, p: np.clip(xs[0], p["min"] if p["min"] is not None else -np.inf,
                               p["max"] if p["max"] is not None else np.inf),
         lambda env, xs, p: (
             getattr(oxmera, p["form"])(xs[0], min=p["min"], max=p["max"]) if p["form"] != "method"
             else xs[0].clamp(min=p["min"], max=p["max"])))
def _clamp(g):
    i = g.pick()
    x = g.pool[i]
    lo = g.choice([None, -1.5, -0.5, 0.0, 0.25])
    hi = g.choice([None, 1.5, 0.5, 1.0]) if lo is not None else g.choice([1.5, 0.5, 1.0])
    bounds = [b for b in (lo, hi) if b is not None]
    if not _not_near(x, bounds):
        return None
    return (i,), {"min": lo, "max": hi, "form": g.choice(["clamp", "clip", "method"])}


@fuzz_op("softplus", "unary",
         lambda xs, p: _softplus(xs[0], p["beta"], p["threshold"]),
         lambda env, xs, p: F.softplus(xs[0], beta=p["beta"], threshold=p["threshold"]))
def _softplus_prepare(g):
    beta, threshold = g.choice([1, 2, 0.5]), g.choice([20, 2, 1])
    i = g.pick(lambda v: _not_near(beta * v, [threshold]))
    return None if i is None else ((i,), {"beta": beta, "threshold": threshold})


@fuzz_op("gelu", "unary", lambda xs, p: _gelu(xs[0], p["approximate"]),
         lambda env, xs, p: F.gelu(xs[0], approximate=p["approximate"]))
def _gelu_prepare(g):
    return (g.pick(),), {"approximate": g.choice(["none", "tanh"])}


@fuzz_op("elu", "unary",
         lambda xs, p: np.where(xs[0] > 0, xs[0], p["alpha"] * np.expm1(np.minimum(xs[0], 0))),
         lambda env, xs, p: F.elu(xs[0], alpha=p["alpha"]))
def _elu(g):
    i = g.pick(lambda v: _not_near(v, [0]))
    return None if i is None else ((i,), {"alpha": g.choice([1.0, 0.5])})


@fuzz_op("leaky_relu", "unary",
         lambda xs, p: np.where(xs[0] > 0, xs[0], p["slope"] * xs[0]),
         lambda env, xs, p: F.leaky_relu(xs[0], p["slope"]))
def _leaky_relu(g):
    i = g.pick(lambda v: _not_near(v, [0]))
    return None if i is None else ((i,), {"slope": g.choice([0.01, 0.2])})


# -- arithmetic with Python numbers -----------------------------------------------------

_SCALAR_OPS = {
    "+": (np.add, lambda a, b: a + b),
    "-": (np.subtract, lambda a, b: a - b),
    "*": (np.multiply, lambda a, b: a * b),
    "/": (np.divide, lambda a, b: a / b),
    "**": (np.power, lambda a, b: a ** b),
}


def _scalar_ref(xs, p):
    ufunc = _SCALAR_OPS[p["op"]][0]
    return ufunc(xs[0], p["c"]) if p["side"] == "right" else ufunc(p["c"], xs[0])


def _scalar_ox(env, xs, p):
    fn = _SCALAR_OPS[p["op"]][1]
    return fn(xs[0], p["c"]) if p["side"] == "right" else fn(p["c"], xs[0])


@fuzz_op("scalar", "unary", _scalar_ref, _scalar_ox)
def _scalar(g):
    op, side = g.choice(_SCALAR_OPS), g.choice(["right", "left"])
    if op == "**" and side == "right":
        c = g.choice([2, 3, -1, 0.5, 1.5, -0.5, 2.0])
        if float(c).is_integer():
            pred = (lambda v: np.all(np.abs(v) > 0.2)) if c < 0 else None
        else:
            pred = lambda v: np.all(v > 0.2)         # noqa: E731
    elif op == "**":
        c = g.choice([2.0, 0.5, 1.5])
        pred = lambda v: np.all(v < 4)                # noqa: E731
    elif op == "/" and side == "left":
        c = g.choice([1.0, -2.0, 3])
        pred = lambda v: np.all(np.abs(v) > 0.2)      # noqa: E731
    else:
        c = g.choice([2, -1.5, 0.5, 3.0])
        pred = None
    i = g.pick(pred)
    return None if i is None else ((i,), {"op": op, "side": side, "c": c})


# -- elementwise binary ------------------------------------------------------------------

def _ok_divisor(a, b):
    return np.all(np.abs(b) > 0.2)


def _ok_remainder(a, b):
    if not np.all(np.abs(b) > 0.2):
        return False
    return far_from_integers(a / b)


BINARY = {
    # name: (reference, domain of (a, b) or None, operator or None)
    "add": (np.add, None, "+"),
    "sub": (np.subtract, None, "-"),
    "mul": (np.multiply, None, "*"),
    "div": (np.divide, _ok_divisor, "/"),
    "true_divide": (np.divide, _ok_divisor, None),
    "pow": (np.power, lambda a, b: np.all(a > 0.2) and np.all(np.abs(b) < 3), "**"),
    "atan2": (np.arctan2, lambda a, b: np.all(a * a + b * b > 0.04), None),
    "maximum": (np.maximum, lambda a, b: np.all(np.abs(a - b) > MARGIN), None),
    "minimum": (np.minimum, lambda a, b: np.all(np.abs(a - b) > MARGIN), None),
    "hypot": (np.hypot, lambda a, b: np.all(a * a + b * b > 0.04), None),
    "logaddexp": (np.logaddexp, None, None),
    "remainder": (np.remainder, _ok_remainder, "%"),
    "floor_divide": (np.floor_divide, _ok_remainder, "//"),
}

_OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
              "/": lambda a, b: a / b, "**": lambda a, b: a ** b, "%": lambda a, b: a % b,
              "//": lambda a, b: a // b}


def _binary_operands(xs, p, env):
    """The two operands, in order; the constant one built for oxmera when env is given."""
    if "c" not in p:
        return xs[0], xs[1]
    if env is None:
        c = const_value(p["c"])
    else:
        c = env.array(p["c"]) if p["kind"] == "array" else env.tensor(p["c"])
    return (xs[0], c) if p["side"] == "right" else (c, xs[0])


def _binary(name, ref, domain, operator):
    def ref_fn(xs, p):
        a, b = _binary_operands(xs, p, None)
        if "alpha" in p:
            return a + p["alpha"] * b if name == "add" else a - p["alpha"] * b
        return ref(a, b)

    def ox(env, xs, p):
        a, b = _binary_operands(xs, p, env)
        form = p["form"]
        if "alpha" in p:
            return getattr(oxmera, name)(a, b, alpha=p["alpha"])
        if form == "op":
            return _OPERATORS[operator](a, b)
        if form == "method":
            return getattr(a, name)(b)
        return getattr(oxmera, name)(a, b)

    @fuzz_op(name, "binary", ref_fn, ox)
    def prepare(g):
        i = g.pick()
        x = g.pool[i]
        kind = g.choice(["node", "tensor", "array"] if operator else ["node", "tensor"])
        if kind == "node":
            j = g.pick(lambda v: broadcasts(v.shape, x.shape))
            inputs = (i, j) if g.boolean() else (j, i)
            a, b = g.pool[inputs[0]], g.pool[inputs[1]]
            p = {}
        else:
            side = g.choice(["right", "left"])
            spec = g.const(g.partner_shape(x.shape),
                           "positive" if name == "pow" and side == "left" else "real")
            inputs = (i,)
            p = {"c": spec, "kind": kind, "side": side}
            a, b = (x, const_value(spec)) if side == "right" else (const_value(spec), x)
        if domain is not None and not domain(a, b):
            return None
        forms = ["fn"]
        if kind != "array" or p["side"] == "right":
            forms.append("method")
        if operator:
            forms.append("op")
        if kind == "array":
            # An ndarray on the left of a function call is fine; as `self` of a
            # method it would be NumPy's method.
            forms = ["op", "fn"] if p["side"] == "left" else forms
        p["form"] = g.choice(forms)
        if name in ("add", "sub") and p["form"] == "fn" and g.integer(0, 3) == 0:
            p["alpha"] = g.choice([2, -0.5])
        return inputs, p


for _name, (_ref, _domain, _operator) in BINARY.items():
    _binary(_name, _ref, _domain, _operator)


@fuzz_op("lerp", "binary",
         lambda xs, p: xs[0] + (p["w"] if "w" in p else xs[2]) * (xs[1] - xs[0]),
         lambda env, xs, p: (oxmera.lerp(xs[0], xs[1], p["w"] if "w" in p else xs[2])
                             if p["form"] == "fn" else
                             xs[0].lerp(xs[1], p["w"] if "w" in p else xs[2])))
def _lerp(g):
    i = g.pick()
    shape = g.pool[i].shape
    j = g.pick(lambda v: broadcasts(v.shape, shape))
    p = {"form": g.choice(["fn", "method"])}
    inputs = (i, j)
    if g.boolean():
        p["w"] = g.choice([0.25, 0.5, 1.5])
    else:
        both = np.broadcast_shapes(shape, g.pool[j].shape)
        k = g.pick(lambda v: broadcasts(v.shape, both))
        inputs = (i, j, k)
    return inputs, p


def _where_operands(xs, p, env):
    """(condition, input, other): other a constant when p has "c", the condition a
    constant mask when p has "mask", else ``xs[-1] > 0``."""
    a = xs[0]
    if "c" in p:
        b = const_value(p["c"]) if env is None else env.tensor(p["c"])
    else:
        b = xs[1]
    if "mask" in p:
        cond = const_value(p["mask"]) if env is None else env.tensor(p["mask"])
    else:
        cond = xs[-1] > 0
    return cond, a, b


@fuzz_op("where", "binary",
         lambda xs, p: np.where(*_where_operands(xs, p, None)),
         lambda env, xs, p: oxmera.where(*_where_operands(xs, p, env)))
def _where(g):
    i = g.pick()
    shape = g.pool[i].shape
    p = {}
    inputs = (i,)
    if g.boolean():
        j = g.pick(lambda v: broadcasts(v.shape, shape))
        inputs = (i, j)
        shape = np.broadcast_shapes(shape, g.pool[j].shape)
    else:
        p["c"] = g.const(g.partner_shape(shape))
    if g.boolean():
        p["mask"] = g.const(g.partner_shape(shape), "mask")
    else:
        k = g.pick(lambda v: broadcasts(v.shape, shape) and _not_near(v, [0]))
        if k is None:
            return None
        inputs = inputs + (k,)
    return inputs, p


@fuzz_op("masked_fill", "index",
         lambda xs, p: np.where(const_value(p["mask"]), p["value"], xs[0]),
         lambda env, xs, p: (oxmera.masked_fill(xs[0], env.tensor(p["mask"]), p["value"])
                             if p["form"] == "fn" else
                             xs[0].masked_fill(env.tensor(p["mask"]), p["value"])))
def _masked_fill(g):
    i = g.pick()
    shape = g.pool[i].shape
    return (i,), {"mask": g.const(g.partner_shape(shape), "mask"),
                  "value": g.choice([0.0, 1.5, -0.5]), "form": g.choice(["fn", "method"])}


# -- reductions ------------------------------------------------------------------------------

def _reduce_call(fname, x, p, **extra):
    """Call reduction ``fname`` with ``dim`` as p says: omitted, keyword, positional or axis=."""
    form, dim = p["form"], p["dim"]
    kwargs = dict(extra)
    if p.get("keepdim"):
        kwargs["keepdim"] = True
    fn = getattr(oxmera, fname) if form != "method" else getattr(x, fname)
    args = (x,) if form != "method" else ()
    if dim is None and not p.get("pass_none"):
        return fn(*args, **kwargs)
    if form == "axis":
        return fn(*args, axis=dim, **kwargs)
    return fn(*args, dim, **kwargs)


def _reduction(name, ref, pred=None, tuples=True, allow_none=True):
    """A reduction whose output is ``ref(x, axes, keepdim)``."""
    def ref_fn(xs, p):
        x = xs[0]
        axes = axes_of(p["dim"], x.ndim)
        return np.asarray(ref(x, axes, bool(p.get("keepdim")), p))

    @fuzz_op(name, "reduce", ref_fn, lambda env, xs, p: _reduce_call(name, xs[0], p))
    def prepare(g):
        i = g.pick()
        x = g.pool[i]
        dim = g.dims(x.ndim, allow_none) if tuples else (
            g.dim(x.ndim) if not allow_none or g.boolean() else None)
        p = {"dim": dim, "keepdim": g.boolean(), "form": g.choice(["fn", "method", "axis"])}
        if dim is None:
            p["form"] = g.choice(["fn", "method"])
            p["pass_none"] = g.boolean()
        if pred is not None and not pred(x, axes_of(dim, x.ndim)):
            return None
        return (i,), p


def _np_reduce(fn):
    return lambda x, axes, keepdim, p: fn(x, axis=axes, keepdims=keepdim)


_reduction("sum", _np_reduce(np.sum))
_reduction("mean", _np_reduce(np.mean))
_reduction("prod", _np_reduce(np.prod), tuples=False)


def _top_gap(x, axes):
    """Whether the two largest values along ``axes`` are MARGIN apart, everywhere."""
    if x.size == 0:
        return False
    moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0))) if axes else x[..., None]
    flat = moved.reshape(moved.shape[:moved.ndim - max(len(axes), 1)] + (-1,))
    if flat.shape[-1] < 2:
        return True
    top = np.sort(flat, axis=-1)
    return bool(np.all(top[..., -1] - top[..., -2] > MARGIN))


def _bottom_gap(x, axes):
    return _top_gap(-x, axes)


def _amax_like(name, ref, gap):
    def ref_fn(xs, p):
        x = xs[0]
        axes = axes_of(p["dim"], x.ndim)
        return np.asarray(ref(x, axis=axes, keepdims=bool(p["keepdim"])))

    def ox(env, xs, p):
        x = xs[0]
        kwargs = {"keepdim": True} if p["keepdim"] else {}
        if p["dim"] is None:
            return getattr(oxmera, name)(x, **kwargs)
        if p["form"] == "method":
            return getattr(x, name)(p["dim"], **kwargs)
        return getattr(oxmera, name)(x, dim=p["dim"], **kwargs)

    @fuzz_op(name, "reduce", ref_fn, ox)
    def prepare(g):
        i = g.pick(lambda v: v.size > 0)
        if i is None:
            return None
        x = g.pool[i]
        dim = g.dims(x.ndim)
        if not gap(x, axes_of(dim, x.ndim)):
            return None
        return (i,), {"dim": dim, "keepdim": g.boolean(), "form": g.choice(["fn", "method"])}


_amax_like("amax", np.amax, _top_gap)
_amax_like("amin", np.amin, _bottom_gap)


def _max_dim_ref(xs, p):
    x = xs[0]
    fn = np.max if p["which"] == "max" else np.min
    if p["dim"] is None:
        return np.asarray(fn(x))
    if x.ndim == 0:
        return x.copy()
    out = fn(x, axis=p["dim"], keepdims=p["keepdim"])
    if p["part"] == "gather":
        arg = (np.argmax if p["which"] == "max" else np.argmin)(x, axis=p["dim"], keepdims=True)
        out = np.take_along_axis(x, arg, p["dim"]) * 2.0
        if not p["keepdim"]:
            out = np.squeeze(out, p["dim"])
    return out


def _max_dim_ox(env, xs, p):
    x = xs[0]
    fn = getattr(oxmera, p["which"])
    if p["dim"] is None:
        return fn(x) if p["form"] == "fn" else getattr(x, p["which"])()
    result = fn(x, p["dim"], keepdim=p["keepdim"]) if p["form"] == "fn" else \
        getattr(x, p["which"])(dim=p["dim"], keepdim=p["keepdim"])
    values, indices = result
    assert result.values is values and result.indices is indices
    if p["part"] == "values":
        return values
    # The indices pick the same values again: a diamond through take_along_dim.
    if x.ndim == 0:
        return values
    idx = indices if p["keepdim"] else indices.unsqueeze(p["dim"])
    picked = oxmera.take_along_dim(x, idx, p["dim"])
    picked = picked if p["keepdim"] else picked.squeeze(p["dim"])
    return picked + values


@fuzz_op("max_min", "reduce", _max_dim_ref, _max_dim_ox)
def _max_dim(g):
    i = g.pick(lambda v: v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    which = g.choice(["max", "min"])
    dim = g.dim(x.ndim) if g.integer(0, 3) else None
    gap = _top_gap if which == "max" else _bottom_gap
    if not gap(x, axes_of(dim, x.ndim)):
        return None
    return (i,), {"which": which, "dim": dim, "keepdim": g.boolean(),
                  "part": g.choice(["values", "gather"]), "form": g.choice(["fn", "method"])}


def _argmax_ref(xs, p):
    x, y = xs[0], xs[-1]
    fn = np.argmax if p["which"] == "argmax" else np.argmin
    idx = fn(x, axis=p["dim"], keepdims=True)
    return np.take_along_axis(y, idx, p["dim"])


def _argmax_ox(env, xs, p):
    x, y = xs[0], xs[-1]
    idx = getattr(oxmera, p["which"])(x, dim=p["dim"], keepdim=True)
    assert idx.dtype == np.int64 and not idx.requires_grad
    return oxmera.gather(y, p["dim"], idx)


@fuzz_op("argmax_gather", "index", _argmax_ref, _argmax_ox)
def _argmax(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    which = g.choice(["argmax", "argmin"])
    dim = g.dim(x.ndim)
    if not (_top_gap if which == "argmax" else _bottom_gap)(x, axes_of(dim, x.ndim)):
        return None
    j = g.pick(lambda v: v.shape == x.shape)
    return ((i,) if i == j else (i, j)), {"which": which, "dim": dim}


def _var_ref(x, axes, keepdim, p):
    out = np.var(x, axis=axes, ddof=p["correction"], keepdims=keepdim)
    return np.sqrt(out) if p["std"] else out


def _var_ox(env, xs, p):
    x = xs[0]
    fn = getattr(oxmera, "std" if p["std"] else "var")
    kwargs = {"keepdim": p["keepdim"]}
    if p["spelling"] == "unbiased":
        kwargs["unbiased"] = bool(p["correction"])
    elif p["spelling"] == "correction":
        kwargs["correction"] = p["correction"]
    if p["dim"] is not None:
        kwargs["dim"] = p["dim"]
    return fn(x, **kwargs)


@fuzz_op("var_std", "reduce",
         lambda xs, p: np.asarray(_var_ref(xs[0], axes_of(p["dim"], xs[0].ndim), p["keepdim"], p)),
         _var_ox)
def _var(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size >= 2)
    if i is None:
        return None
    x = g.pool[i]
    dim = g.dims(x.ndim)
    axes = axes_of(dim, x.ndim)
    spelling = g.choice(["default", "unbiased", "correction"])
    correction = 1 if spelling == "default" else g.choice([0, 1])
    if reduced_count(x.shape, axes) <= correction:
        return None
    std = g.boolean()
    if std and not np.all(np.var(x, axis=axes, ddof=correction) > 0.01):
        return None
    return (i,), {"dim": dim, "keepdim": g.boolean(), "correction": correction,
                  "spelling": spelling, "std": std}


def _logsumexp(x, axes, keepdim, p):
    if not axes:
        return x.copy()
    m = np.max(x, axis=axes, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axes)


@fuzz_op("logsumexp", "reduce",
         lambda xs, p: _logsumexp(xs[0], axes_of(p["dim"], xs[0].ndim), p["keepdim"], p),
         lambda env, xs, p: (oxmera.logsumexp(xs[0], p["dim"], keepdim=p["keepdim"])
                             if p["form"] == "fn" else
                             xs[0].logsumexp(dim=p["dim"], keepdim=p["keepdim"])))
def _logsumexp_prepare(g):
    i = g.pick()
    x = g.pool[i]
    return (i,), {"dim": g.dims(x.ndim, allow_none=False), "keepdim": g.boolean(),
                  "form": g.choice(["fn", "method"])}


def _norm_ref(xs, p):
    x = xs[0]
    axes = axes_of(p["dim"], x.ndim)
    order = p["p"]
    if order == 1:
        out = np.sum(np.abs(x), axis=axes, keepdims=p["keepdim"])
    elif order == 3:
        out = np.sum(np.abs(x) ** 3, axis=axes, keepdims=p["keepdim"]) ** (1 / 3)
    else:
        out = np.sqrt(np.sum(x * x, axis=axes, keepdims=p["keepdim"]))
    return np.asarray(out)


def _norm_ox(env, xs, p):
    x, order = xs[0], p["p"]
    kwargs = {"keepdim": p["keepdim"]} if p["keepdim"] else {}
    if p["form"] == "norm":
        return oxmera.norm(x, order, p["dim"], **kwargs)
    if p["form"] == "method":
        return x.norm(order, dim=p["dim"], **kwargs)
    return oxmera.linalg.vector_norm(x, ord=2 if order == "fro" else order, dim=p["dim"],
                                     **kwargs)


@fuzz_op("norm", "reduce", _norm_ref, _norm_ox)
def _norm(g):
    i = g.pick()
    x = g.pool[i]
    order = g.choice([2, "fro", 1, 3])
    dim = g.dims(x.ndim)
    if order == "fro" and not (dim is None or (isinstance(dim, tuple) and len(dim) <= 2)):
        return None
    axes = axes_of(dim, x.ndim)
    if order in (1, 3) and not _not_near(x, [0]):
        return None
    if not np.all(np.sqrt(np.sum(x * x, axis=axes)) > 0.2):
        return None
    return (i,), {"p": order, "dim": dim, "keepdim": g.boolean(),
                  "form": g.choice(["norm", "method", "vector_norm"])}


def _cumulative(name, ref):
    def ref_fn(xs, p):
        x = xs[0]
        return ref(x, axis=p["dim"] % x.ndim) if x.ndim else x.copy()

    def ox(env, xs, p):
        if p["form"] == "method":
            return getattr(xs[0], name)(p["dim"])
        if p["form"] == "axis":
            return getattr(oxmera, name)(xs[0], axis=p["dim"])
        return getattr(oxmera, name)(xs[0], dim=p["dim"])

    @fuzz_op(name, "reduce", ref_fn, ox)
    def prepare(g):
        i = g.pick()
        return (i,), {"dim": g.dim(g.pool[i].ndim), "form": g.choice(["fn", "method", "axis"])}


_cumulative("cumsum", np.cumsum)
_cumulative("cumprod", np.cumprod)


def _softmax_ref(xs, p):
    x = xs[0]
    if x.ndim == 0:
        return np.zeros(()) if p["log"] else np.ones(())
    axis = p["dim"] % x.ndim
    shifted = x - np.max(x, axis=axis, keepdims=True) if x.size else x
    logs = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return logs if p["log"] else np.exp(logs)


def _softmax_ox(env, xs, p):
    name = "log_softmax" if p["log"] else "softmax"
    x, form = xs[0], p["form"]
    if form == "F":
        return getattr(F, name)(x, dim=p["dim"])
    if form == "method":
        return getattr(x, name)(p["dim"])
    return getattr(oxmera, name)(x, p["dim"])


@fuzz_op("softmax", "reduce", _softmax_ref, _softmax_ox)
def _softmax(g):
    i = g.pick()
    return (i,), {"dim": g.dim(g.pool[i].ndim), "log": g.boolean(),
                  "form": g.choice(["fn", "method", "F"])}


# -- shape and views ----------------------------------------------------------------------

def _factor(g, n, ndim):
    """A random shape of ``ndim`` dims with ``n`` elements (n > 0)."""
    dims = [1] * ndim
    if ndim == 0:
        return () if n == 1 else None
    rest = n
    p = 2
    factors = []
    while rest > 1:
        while rest % p == 0:
            factors.append(p)
            rest //= p
        p += 1
    for f in factors:
        dims[g.integer(0, ndim - 1)] *= f
    return tuple(dims)


@fuzz_op("reshape", "shape",
         lambda xs, p: xs[0].reshape(p["shape"]),
         lambda env, xs, p: (
             oxmera.reshape(xs[0], p["shape"]) if p["form"] == "fn" else
             xs[0].reshape(*p["shape"]) if p["form"] == "method" else
             xs[0].contiguous().view(p["shape"]) if p["form"] == "view" else
             oxmera.view(xs[0].contiguous(), *p["shape"])))
def _reshape(g):
    i = g.pick(lambda v: v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    shape = _factor(g, x.size, g.integer(0, 4))
    if shape is None:
        return None
    if shape and g.boolean():
        k = g.integer(0, len(shape) - 1)
        shape = shape[:k] + (-1,) + shape[k + 1:]
    return (i,), {"shape": shape, "form": g.choice(["fn", "method", "view", "view_fn"])}


def _flatten_ref(xs, p):
    x = xs[0]
    if x.ndim == 0:
        return x.reshape(1)
    s, e = p["start"] % x.ndim, p["end"] % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:]) if x.size else \
        x.reshape(x.shape[:s] + (int(np.prod(x.shape[s:e + 1])),) + x.shape[e + 1:])


@fuzz_op("flatten", "shape", _flatten_ref,
         lambda env, xs, p: (oxmera.flatten(xs[0], p["start"], p["end"]) if p["form"] == "fn"
                             else xs[0].flatten(start_dim=p["start"], end_dim=p["end"])))
def _flatten(g):
    i = g.pick()
    x = g.pool[i]
    n = max(x.ndim, 1)
    s = g.integer(0, n - 1)
    e = g.integer(s, n - 1)
    return (i,), {"start": s - n if g.boolean() else s, "end": e - n if g.boolean() else e,
                  "form": g.choice(["fn", "method"])}


@fuzz_op("unflatten", "shape",
         lambda xs, p: xs[0].reshape(xs[0].shape[:p["dim"] % xs[0].ndim] + tuple(p["sizes"])
                                     + xs[0].shape[p["dim"] % xs[0].ndim + 1:]),
         lambda env, xs, p: (oxmera.unflatten(xs[0], p["dim"], p["sizes"]) if p["form"] == "fn"
                             else xs[0].unflatten(p["dim"], p["sizes"])))
def _unflatten(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    dim = g.dim(x.ndim)
    sizes = _factor(g, x.shape[dim], g.integer(1, 3))
    if g.boolean():
        sizes = (-1,) + sizes[1:]
    return (i,), {"dim": dim, "sizes": sizes, "form": g.choice(["fn", "method"])}


def _transpose_ox(env, xs, p):
    x, form = xs[0], p["form"]
    d0, d1 = p["dims"]
    if form == "fn":
        return oxmera.transpose(x, d0, d1)
    if form == "swapaxes":
        return oxmera.swapaxes(x, d0, d1)
    if form == "T":
        return x.T
    if form == "mT":
        return x.mT
    return x.transpose(d0, d1)


@fuzz_op("transpose", "shape", lambda xs, p: np.swapaxes(xs[0], *p["dims"]), _transpose_ox)
def _transpose(g):
    i = g.pick(lambda v: v.ndim >= 1)
    if i is None:
        return None
    x = g.pool[i]
    forms = ["fn", "method", "swapaxes"]
    if x.ndim == 2:
        forms.append("T")
    if x.ndim >= 2:
        forms.append("mT")
    form = g.choice(forms)
    if form in ("T", "mT"):
        dims = (-2, -1)
    else:
        dims = (g.dim(x.ndim), g.dim(x.ndim))
    return (i,), {"dims": dims, "form": form}


@fuzz_op("permute", "shape", lambda xs, p: np.transpose(xs[0], p["perm"]),
         lambda env, xs, p: (oxmera.permute(xs[0], p["perm"]) if p["form"] == "fn"
                             else xs[0].permute(*p["perm"])))
def _permute(g):
    i = g.pick()
    n = g.pool[i].ndim
    perm = tuple(g.draw(st.permutations(range(n))))
    return (i,), {"perm": perm, "form": g.choice(["fn", "method"])}


@fuzz_op("movedim", "shape", lambda xs, p: np.moveaxis(xs[0], p["src"], p["dst"]),
         lambda env, xs, p: getattr(oxmera, p["form"])(xs[0], p["src"], p["dst"]))
def _movedim(g):
    i = g.pick(lambda v: v.ndim >= 1)
    if i is None:
        return None
    n = g.pool[i].ndim
    if g.boolean():
        src, dst = g.dim(n), g.dim(n)
    else:
        k = g.integer(1, n)
        src = tuple(g.draw(st.permutations(range(n))))[:k]
        dst = tuple(g.draw(st.permutations(range(n))))[:k]
    return (i,), {"src": src, "dst": dst, "form": g.choice(["movedim", "moveaxis"])}


def _squeeze_ref(xs, p):
    x, dim = xs[0], p["dim"]
    if x.ndim == 0:
        return x.copy()
    if dim is None:
        return np.squeeze(x)
    axes = axes_of(dim, x.ndim)
    return np.squeeze(x, tuple(a for a in axes if x.shape[a] == 1))


@fuzz_op("squeeze", "shape", _squeeze_ref,
         lambda env, xs, p: (oxmera.squeeze(xs[0], p["dim"]) if p["form"] == "fn" else
                             xs[0].squeeze() if p["dim"] is None else xs[0].squeeze(p["dim"])))
def _squeeze(g):
    i = g.pick()
    x = g.pool[i]
    dim = g.dims(x.ndim)
    return (i,), {"dim": dim, "form": g.choice(["fn", "method"])}


@fuzz_op("unsqueeze", "shape", lambda xs, p: np.expand_dims(xs[0], p["dim"]),
         lambda env, xs, p: (oxmera.unsqueeze(xs[0], p["dim"]) if p["form"] == "fn"
                             else xs[0].unsqueeze(p["dim"])))
def _unsqueeze(g):
    i = g.pick()
    n = g.pool[i].ndim
    return (i,), {"dim": g.integer(-n - 1, n), "form": g.choice(["fn", "method"])}


def _expand_shape(shape, sizes):
    lead = len(sizes) - len(shape)
    return tuple(s if s != -1 else shape[k - lead] for k, s in enumerate(sizes))


def _expand_ox(env, xs, p):
    x, form = xs[0], p["form"]
    if form == "method":
        return x.expand(*p["sizes"])
    if form == "tuple":
        return x.expand(p["sizes"])
    if form == "fn":
        return oxmera.expand(x, *p["sizes"])
    shape = _expand_shape(x.shape, p["sizes"])
    return oxmera.broadcast_to(x, shape) if form == "broadcast_to" else x.broadcast_to(shape)


@fuzz_op("expand", "shape",
         lambda xs, p: np.broadcast_to(xs[0], _expand_shape(xs[0].shape, p["sizes"])).copy(),
         _expand_ox)
def _expand(g):
    i = g.pick()
    x = g.pool[i]
    lead = tuple(g.integer(1, 3) for _ in range(g.integer(0, 2)))
    own = tuple(g.integer(1, 3) if s == 1 and g.boolean() else -1 if g.boolean() else s
                for s in x.shape)
    sizes = lead + own
    return (i,), {"sizes": sizes,
                  "form": g.choice(["method", "tuple", "fn", "broadcast_to", "broadcast_method"])}


@fuzz_op("repeat", "shape",
         lambda xs, p: (np.tile(xs[0], p["sizes"])),
         lambda env, xs, p: (xs[0].repeat(*p["sizes"]) if p["form"] == "repeat" else
                             oxmera.tile(xs[0], p["sizes"]) if p["form"] == "tile" else
                             xs[0].tile(p["sizes"])))
def _repeat(g):
    i = g.pick()
    x = g.pool[i]
    form = g.choice(["repeat", "tile", "tile_method"])
    n = g.integer(max(x.ndim, 1) if form == "repeat" else 0, x.ndim + 1)
    return (i,), {"sizes": tuple(g.integer(1, 2) for _ in range(n)), "form": form}


@fuzz_op("flip", "shape", lambda xs, p: np.flip(xs[0], axes_of(p["dims"], xs[0].ndim)),
         lambda env, xs, p: (oxmera.flip(xs[0], p["dims"]) if p["form"] == "fn"
                             else xs[0].flip(p["dims"])))
def _flip(g):
    i = g.pick(lambda v: v.ndim >= 1)
    if i is None:
        return None
    dims = g.dims(g.pool[i].ndim, allow_none=False)
    return (i,), {"dims": dims if isinstance(dims, tuple) else (dims,),
                  "form": g.choice(["fn", "method"])}


def _roll_ref(xs, p):
    x = xs[0]
    if p["dims"] is None:
        return np.roll(x, p["shifts"])
    return np.roll(x, p["shifts"], p["dims"])


@fuzz_op("roll", "shape", _roll_ref,
         lambda env, xs, p: (oxmera.roll(xs[0], p["shifts"], p["dims"]) if p["form"] == "fn"
                             else xs[0].roll(p["shifts"], p["dims"])))
def _roll(g):
    i = g.pick(lambda v: v.ndim >= 1)
    if i is None:
        return None
    n = g.pool[i].ndim
    kind = g.choice(["flat", "int", "tuple"])
    if kind == "flat":
        return (i,), {"shifts": g.integer(-4, 4), "dims": None, "form": g.choice(["fn", "method"])}
    if kind == "int":
        return (i,), {"shifts": g.integer(-4, 4), "dims": g.dim(n),
                      "form": g.choice(["fn", "method"])}
    dims = tuple(g.draw(st.permutations(range(n))))[:g.integer(1, n)]
    return (i,), {"shifts": tuple(g.integer(-3, 3) for _ in dims), "dims": dims,
                  "form": g.choice(["fn", "method"])}


@fuzz_op("diagonal", "shape",
         lambda xs, p: np.diagonal(xs[0], p["offset"], p["dim1"], p["dim2"]).copy(),
         lambda env, xs, p: (oxmera.diagonal(xs[0], p["offset"], p["dim1"], p["dim2"])
                             if p["form"] == "fn" else
                             xs[0].diagonal(offset=p["offset"], dim1=p["dim1"], dim2=p["dim2"])))
def _diagonal(g):
    i = g.pick(lambda v: v.ndim >= 2)
    if i is None:
        return None
    x = g.pool[i]
    d1 = g.dim(x.ndim)
    d2 = g.choice([d for d in range(-x.ndim, x.ndim) if d % x.ndim != d1 % x.ndim])
    offset = g.integer(-x.shape[d1] + 1, x.shape[d2] - 1) if x.size else 0
    return (i,), {"offset": offset, "dim1": d1, "dim2": d2, "form": g.choice(["fn", "method"])}


@fuzz_op("tril_triu", "shape",
         lambda xs, p: getattr(np, p["which"])(xs[0], p["k"]),
         lambda env, xs, p: (getattr(oxmera, p["which"])(xs[0], p["k"]) if p["form"] == "fn"
                             else getattr(xs[0], p["which"])(diagonal=p["k"])))
def _tril(g):
    i = g.pick(lambda v: v.ndim >= 2)
    if i is None:
        return None
    return (i,), {"which": g.choice(["tril", "triu"]), "k": g.integer(-2, 2),
                  "form": g.choice(["fn", "method"])}


@fuzz_op("clone", "shape", lambda xs, p: xs[0].copy(),
         lambda env, xs, p: getattr(oxmera, p["form"])(xs[0]) if p["form"] != "method"
         else xs[0].clone())
def _clone(g):
    return (g.pick(),), {"form": g.choice(["clone", "contiguous", "method"])}


def _cat_ref(xs, p):
    if p["stack"]:
        return np.stack(xs, axis=p["dim"])
    return np.concatenate(xs, axis=p["dim"])


@fuzz_op("cat", "shape", _cat_ref,
         lambda env, xs, p: (oxmera.stack(list(xs), dim=p["dim"]) if p["stack"] else
                             getattr(oxmera, p["form"])(list(xs), p["dim"])))
def _cat(g):
    i = g.pick(lambda v: v.ndim >= 1)
    stack = i is None or g.boolean()
    if stack:
        i = g.pick()
        x = g.pool[i]
        others = [g.pick(lambda v: v.shape == x.shape) for _ in range(g.integer(1, 2))]
        return (i, *others), {"stack": True, "dim": g.integer(-x.ndim - 1, x.ndim),
                              "form": "stack"}
    x = g.pool[i]
    dim = g.dim(x.ndim)
    axis = dim % x.ndim

    def fits(v):
        return v.ndim == x.ndim and all(a == b for k, (a, b) in enumerate(zip(v.shape, x.shape))
                                        if k != axis)
    others = [g.pick(fits) for _ in range(g.integer(1, 2))]
    return (i, *others), {"stack": False, "dim": dim, "form": g.choice(["cat", "concatenate"])}


def _split_ref(xs, p):
    x = xs[0]
    axis = p["dim"] % x.ndim
    size = x.shape[axis]
    if p["how"] == "unbind":
        return np.take(x, p["piece"], axis=axis)
    if p["how"] == "chunk":
        step = -(-size // p["arg"])
        bounds = list(range(0, size, step)) + [size]
    elif isinstance(p["arg"], int):
        bounds = list(range(0, size, p["arg"])) + [size]
    else:
        bounds = list(np.cumsum((0,) + tuple(p["arg"])))
    start, stop = bounds[p["piece"]], bounds[p["piece"] + 1]
    return np.take(x, np.arange(start, stop), axis=axis)


def _split_ox(env, xs, p):
    x = xs[0]
    if p["how"] == "unbind":
        pieces = oxmera.unbind(x, p["dim"]) if p["form"] == "fn" else x.unbind(p["dim"])
    elif p["how"] == "chunk":
        pieces = oxmera.chunk(x, p["arg"], p["dim"]) if p["form"] == "fn" else \
            x.chunk(p["arg"], dim=p["dim"])
    else:
        arg = p["arg"] if isinstance(p["arg"], int) else list(p["arg"])
        pieces = oxmera.split(x, arg, p["dim"]) if p["form"] == "fn" else \
            x.split(arg, dim=p["dim"])
    assert isinstance(pieces, tuple)
    return pieces[p["piece"]]


@fuzz_op("split", "shape", _split_ref, _split_ox)
def _split(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    dim = g.dim(x.ndim)
    size = x.shape[dim]
    how = g.choice(["split", "sections", "chunk", "unbind"])
    if how == "unbind":
        arg, n = None, size
    elif how == "chunk":
        arg = g.integer(1, 3)
        step = -(-size // arg)
        n = len(range(0, size, step))
    elif how == "split":
        arg = g.integer(1, 3)
        n = len(range(0, size, arg))
    else:
        cuts = sorted(g.integer(0, size) for _ in range(g.integer(0, 2)))
        bounds = [0] + cuts + [size]
        arg = tuple(b - a for a, b in zip(bounds, bounds[1:]))
        n = len(arg)
        how = "split"
    return (i,), {"how": how, "arg": arg, "dim": dim, "piece": g.integer(0, n - 1),
                  "form": g.choice(["fn", "method"])}


# -- indexing -------------------------------------------------------------------------------

def _basic_index(g, shape):
    """A tuple of ints, slices, None and at most one Ellipsis for ``shape``."""
    parts = []
    k = 0
    n_dims = g.integer(0, len(shape))
    while k < n_dims:
        kind = g.choice(["int", "slice", "slice", "none"])
        if kind == "none":
            parts.append(None)
            continue
        size = shape[k]
        if kind == "int" and size > 0:
            parts.append(g.integer(-size, size - 1))
        else:
            step = g.choice([1, 1, 2, -1])
            start = g.choice([None, 0, 1, -1])
            stop = g.choice([None, 2, -1, 3])
            parts.append(slice(start, stop, step))
        k += 1
    if g.integer(0, 3) == 0:
        # Anywhere when it stands for no dim; else last, where it cannot shift the others.
        covered = sum(part is not None for part in parts)
        parts.insert(g.integer(0, len(parts)) if covered == len(shape) else len(parts), Ellipsis)
    return tuple(parts)


def _advanced_index(g, shape):
    """An index with one integer array (repeats allowed), or a bool mask, or two arrays."""
    kind = g.choice(["ints", "ints", "mask", "pair"])
    if kind == "mask":
        k = g.integer(1, len(shape))
        mask = np.asarray(const_value(("mask", shape[:k], g.integer(0, 255))))
        return ("mask", mask.tolist(), k)
    if kind == "pair" and len(shape) >= 2:
        n = g.integer(1, 3)
        first = tuple(g.integer(-shape[0], shape[0] - 1) for _ in range(n))
        second = tuple(g.integer(-shape[1], shape[1] - 1) for _ in range(n))
        return ("pair", first, second)
    dim = g.integer(0, len(shape) - 1)
    size = shape[dim]
    n = g.integer(1, 4)
    values = tuple(g.integer(-size, size - 1) for _ in range(n))
    return ("ints", dim, values)


def _build_advanced(spec, as_tensor):
    kind = spec[0]
    wrap = (lambda a: oxmera.tensor(a)) if as_tensor else (lambda a: a)
    if kind == "mask":
        return wrap(np.array(spec[1], dtype=bool))
    if kind == "pair":
        return (wrap(np.array(spec[1], dtype=np.int64)), wrap(np.array(spec[2], dtype=np.int64)))
    _, dim, values = spec
    return (slice(None),) * dim + (wrap(np.array(values, dtype=np.int64)),)


def _index_ref(xs, p):
    x = xs[0]
    if "advanced" in p:
        return np.asarray(x[_build_advanced(p["advanced"], False)]).copy()
    return np.asarray(x[p["index"]]).copy()


def _index_ox(env, xs, p):
    x = xs[0]
    if "advanced" in p:
        index = _build_advanced(p["advanced"], p["form"] == "tensor")
        if p["form"] == "list":
            index = index.tolist() if isinstance(index, np.ndarray) else tuple(
                i.tolist() if isinstance(i, np.ndarray) else i for i in index)
        return x[index]
    return x[p["index"]]


@fuzz_op("getitem", "index", _index_ref, _index_ox)
def _getitem(g):
    i = g.pick()
    x = g.pool[i]
    if x.ndim and x.size and g.boolean():
        return (i,), {"advanced": _advanced_index(g, x.shape),
                      "form": g.choice(["tensor", "array", "list"])}
    return (i,), {"index": _basic_index(g, x.shape)}


def _index_array(g, size, n, unique=False):
    if unique:
        return tuple(int(v) for v in g.draw(st.permutations(range(size)))[:n])
    return tuple(g.integer(0, size - 1) for _ in range(n))


@fuzz_op("index_select", "index",
         lambda xs, p: np.take(xs[0], np.array(p["idx"], dtype=np.int64), axis=p["dim"]),
         lambda env, xs, p: (oxmera.index_select(xs[0], p["dim"], oxmera.tensor(p["idx"]))
                             if p["form"] == "fn" else
                             xs[0].index_select(p["dim"], oxmera.tensor(p["idx"]))))
def _index_select(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    dim = g.dim(x.ndim)
    return (i,), {"dim": dim, "idx": _index_array(g, x.shape[dim], g.integer(1, 4)),
                  "form": g.choice(["fn", "method"])}


def _index_tensor(g, shape, dim, unique=False):
    """An index array for gather/scatter: ``shape`` except a size along ``dim``."""
    dim = dim % len(shape)
    size = shape[dim]
    k = g.integer(1, size) if unique else g.integer(1, 3)
    ishape = tuple(k if d == dim else g.integer(1, s) for d, s in enumerate(shape))
    seed = g.integer(0, 255)
    rng = np.random.default_rng(seed)
    if unique:
        moved = [rng.permutation(size)[:k] for _ in range(int(np.prod(ishape)) // k)]
        idx = np.moveaxis(np.array(moved).reshape(tuple(np.delete(ishape, dim)) + (k,)), -1, dim)
    else:
        idx = rng.integers(0, size, ishape)
    return idx.tolist()


def _gather_ref(xs, p):
    x, idx = xs[0], np.array(p["idx"])
    if p["form"] == "flat":
        return np.take(x.reshape(-1), idx)
    if p["form"] == "take":
        return np.take_along_axis(x, idx, p["dim"])
    # gather's output has the index's shape: no broadcasting off the dim.
    dim = p["dim"] % x.ndim
    x = x[tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(idx.shape))]
    return np.take_along_axis(x, idx, dim)


@fuzz_op("gather", "index", _gather_ref,
         lambda env, xs, p: (
             oxmera.gather(xs[0], p["dim"], oxmera.tensor(p["idx"])) if p["form"] == "gather" else
             oxmera.take_along_dim(xs[0], oxmera.tensor(p["idx"]), p["dim"])
             if p["form"] == "take" else
             oxmera.take_along_dim(xs[0], oxmera.tensor(p["idx"]))))
def _gather(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    form = g.choice(["gather", "take", "flat"])
    if form == "flat":
        return (i,), {"dim": None, "idx": _index_array(g, x.size, g.integer(1, 4)), "form": form}
    dim = g.dim(x.ndim)
    if form == "take":
        # take_along_dim broadcasts the index against the input off the dim:
        # its sizes there are 1 or the input's.
        axis = dim % x.ndim
        ishape = tuple(g.integer(1, 3) if d == axis else g.choice([1, n])
                       for d, n in enumerate(x.shape))
        idx = np.random.default_rng(g.integer(0, 255)).integers(0, x.shape[axis], ishape)
    else:
        idx = np.array(_index_tensor(g, x.shape, dim))
    return (i,), {"dim": dim, "idx": idx.tolist(), "form": form}


def _scatter_ref(xs, p):
    x = xs[0].copy()
    src = xs[-1] if p["src"] == "node" else None
    idx = np.array(p["idx"])
    dim = p["dim"] % x.ndim
    for pos in np.ndindex(idx.shape):
        target = list(pos)
        target[dim] = idx[pos]
        value = src[pos] if src is not None else p["value"]
        if p["add"]:
            x[tuple(target)] += value
        else:
            x[tuple(target)] = value
    return x


def _scatter_ox(env, xs, p):
    x = xs[0]
    idx = oxmera.tensor(p["idx"])
    if p["add"]:
        return oxmera.scatter_add(x, p["dim"], idx, xs[-1]) if p["form"] == "fn" else \
            x.scatter_add(p["dim"], idx, xs[-1])
    if p["src"] == "node":
        return oxmera.scatter(x, p["dim"], idx, xs[-1]) if p["form"] == "fn" else \
            x.scatter(p["dim"], idx, xs[-1])
    return oxmera.scatter(x, p["dim"], idx, value=p["value"])


@fuzz_op("scatter", "index", _scatter_ref, _scatter_ox)
def _scatter(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    add = g.boolean()
    dim = g.dim(x.ndim)
    idx = _index_tensor(g, x.shape, dim, unique=not add)
    ishape = np.array(idx).shape
    use_value = not add and g.boolean()
    p = {"dim": dim, "idx": idx, "add": add, "src": "value" if use_value else "node",
         "form": g.choice(["fn", "method"])}
    if use_value:
        p["value"] = g.choice([0.0, -1.5, 2.0])
        return (i,), p
    j = g.pick(lambda v: v.ndim == x.ndim and all(a >= b for a, b in zip(v.shape, ishape)),
               like=i)
    return (i, j), p


# -- in place, on a fresh clone --------------------------------------------------------------

_INPLACE = {
    "add_": lambda a, b, p: a + p.get("alpha", 1) * b,
    "sub_": lambda a, b, p: a - p.get("alpha", 1) * b,
    "mul_": lambda a, b, p: a * b,
    "div_": lambda a, b, p: a / b,
    "copy_": lambda a, b, p: np.broadcast_to(b, a.shape) + 0 * a,
    "pow_": lambda a, b, p: a ** p["exponent"],
    "clamp_": lambda a, b, p: np.clip(a, p["lo"], p["hi"]),
    "zero_": lambda a, b, p: np.zeros_like(a),
    "fill_": lambda a, b, p: np.full_like(a, p["fill"]),
    "+=": lambda a, b, p: a + b,
    "*=": lambda a, b, p: a * b,
    "-=": lambda a, b, p: a - b,
    "/=": lambda a, b, p: a / b,
}


def _inplace_operand(xs, p, env):
    if "c_node" in p:
        return xs[1]
    if "c" in p:
        return const_value(p["c"]) if env is None else env.tensor(p["c"])
    return None


def _inplace_ref(xs, p):
    out = xs[0].copy()
    target = out[p["index"]] if "index" in p else out
    operand = _inplace_operand(xs, p, None)
    if "scalar" in p:
        operand = p["scalar"]
    new = _INPLACE[p["op"]](target, operand, p)
    if "index" in p:
        out[p["index"]] = new
    else:
        out[...] = new
    return out


def _inplace_ox(env, xs, p):
    out = xs[0].clone()
    target = out[p["index"]] if "index" in p else out
    operand = p["scalar"] if "scalar" in p else _inplace_operand(xs, p, env)
    op = p["op"]
    before = target._version
    if op == "+=":
        target += operand
    elif op == "*=":
        target *= operand
    elif op == "-=":
        target -= operand
    elif op == "/=":
        target /= operand
    elif op in ("add_", "sub_"):
        kwargs = {"alpha": p["alpha"]} if "alpha" in p else {}
        assert getattr(target, op)(operand, **kwargs) is target
    elif op == "pow_":
        target.pow_(p["exponent"])
    elif op == "clamp_":
        target.clamp_(p["lo"], p["hi"])
    elif op == "zero_":
        target.zero_()
    elif op == "fill_":
        target.fill_(p["fill"])
    else:
        assert getattr(target, op)(operand) is target
    assert target._version > before and out._version > 0
    return out


@fuzz_op("inplace", "inplace", _inplace_ref, _inplace_ox)
def _inplace_prepare(g):
    i = g.pick()
    x = g.pool[i]
    p = {"op": g.choice(_INPLACE)}
    if x.ndim and g.boolean():
        p["index"] = _basic_index(g, x.shape)
    target = x[p["index"]] if "index" in p else x
    op = p["op"]
    inputs = (i,)
    operand = None
    if op in ("add_", "sub_", "mul_", "div_", "copy_", "+=", "*=", "-=", "/="):
        kind = g.choice(["node", "const"] + (["scalar"] if op != "copy_" else []))
        if kind == "node":
            j = g.pick(lambda v: broadcasts(v.shape, target.shape)
                       and np.broadcast_shapes(v.shape, target.shape) == target.shape)
            if j is None:
                return None
            inputs, operand, p["c_node"] = (i, j), g.pool[j], True
        elif kind == "const":
            p["c"] = g.const(g.partner_shape(target.shape))
            operand = const_value(p["c"])
        else:
            p["scalar"] = operand = g.choice([2.0, -0.5, 3])
        if op in ("div_", "/=") and not np.all(np.abs(operand) > 0.2):
            return None
        if op in ("add_", "sub_") and g.boolean():
            p["alpha"] = g.choice([2, -0.5])
    elif op == "pow_":
        p["exponent"] = g.choice([2, 3, 2.0])
    elif op == "clamp_":
        p["lo"], p["hi"] = g.choice([(-0.5, 0.5), (0.0, 1.5), (-1.0, 1.0)])
        if not _not_near(target, [p["lo"], p["hi"]]):
            return None
    elif op == "fill_":
        p["fill"] = g.choice([0.5, -2.0])
    return inputs, p


@fuzz_op("setitem", "inplace",
         lambda xs, p: _setitem_ref(xs, p),
         lambda env, xs, p: _setitem_ox(env, xs, p))
def _setitem(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    p = {}
    if g.boolean():
        p["index"] = _basic_index(g, x.shape)
        target_shape = np.asarray(x[p["index"]]).shape
    else:
        dim = g.integer(0, x.ndim - 1)
        values = _index_array(g, x.shape[dim], g.integer(1, x.shape[dim]), unique=True)
        p["advanced"] = ("ints", dim, values)
        target_shape = np.asarray(x[_build_advanced(p["advanced"], False)]).shape
    if g.boolean():
        p["value"] = g.choice([0.0, 1.5])
        return (i,), p
    j = g.pick(lambda v: broadcasts(v.shape, target_shape)
               and np.broadcast_shapes(v.shape, target_shape) == target_shape)
    if j is None:
        return None
    return (i, j), p


def _setitem_ref(xs, p):
    out = xs[0].copy()
    index = p["index"] if "index" in p else _build_advanced(p["advanced"], False)
    out[index] = p["value"] if "value" in p else xs[1]
    return out


def _setitem_ox(env, xs, p):
    out = xs[0].clone()
    index = p["index"] if "index" in p else _build_advanced(p["advanced"], True)
    out[index] = p["value"] if "value" in p else xs[1]
    return out


# -- views taken before an in-place write to their base --------------------------------------

def _np_basic(c, index):
    """``c[index]`` as a view even when every part is an int (NumPy would copy a scalar)."""
    return c[index] if Ellipsis in index else c[index + (Ellipsis,)]


def _np_view(c, view):
    kind = view[0]
    if kind == "index":
        return _np_basic(c, view[1])
    if kind == "transpose":
        return np.swapaxes(c, 0, -1)
    if kind == "flat":
        return c.reshape(-1)
    if kind == "unsqueeze":
        return np.expand_dims(c, 0)
    return np.diagonal(c)


def _ox_view(c, view):
    kind = view[0]
    if kind == "index":
        return c[view[1]]
    if kind == "transpose":
        return c.transpose(0, -1)
    if kind == "flat":
        return c.view(-1)
    if kind == "unsqueeze":
        return c.unsqueeze(0)
    return c.diagonal()


def _stale_view_ref(xs, p):
    c = xs[0].copy()
    view = _np_view(c, p["view"])
    target = c if p["writer"] is None else _np_basic(c, p["writer"])
    operand = xs[1] if len(xs) > 1 else p.get("c")
    if p["op"] == "mul_":
        target *= operand
    elif p["op"] == "add_":
        target += operand
    else:
        target[...] = 0.0
    return np.array(view)


def _stale_view_ox(env, xs, p):
    c = xs[0].clone().contiguous()      # clone keeps strides; the reference is C-ordered
    view = _ox_view(c, p["view"])
    target = c if p["writer"] is None else c[p["writer"]]
    operand = xs[1] if len(xs) > 1 else p.get("c")
    if p["op"] == "mul_":
        target.mul_(operand)
    elif p["op"] == "add_":
        target.add_(operand)
    else:
        target.zero_()
    return view            # made before the write: its history must follow it


@fuzz_op("view_then_write", "inplace", _stale_view_ref, _stale_view_ox)
def _stale_view(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    kinds = ["index", "transpose", "flat", "unsqueeze"] + (["diagonal"] if x.ndim >= 2 else [])
    kind = g.choice(kinds)
    view = ("index", _basic_index(g, x.shape)) if kind == "index" else (kind,)
    writer = _basic_index(g, x.shape) if g.boolean() else None
    target_shape = _np_basic(x, writer).shape if writer is not None else x.shape
    p = {"view": view, "writer": writer, "op": g.choice(["mul_", "add_", "zero_"])}
    if p["op"] == "zero_":
        return (i,), p
    if g.boolean():
        p["c"] = g.choice([2.0, -0.5])
        return (i,), p
    j = g.pick(lambda v: broadcasts(v.shape, target_shape)
               and np.broadcast_shapes(v.shape, target_shape) == target_shape, like=i)
    return None if j is None else ((i, j), p)


# -- a side graph saving the memory, then a write through another sharer ----------------------

def _sharer(c, how):
    """Another tensor over ``c``'s memory."""
    if how == "detach":
        return c.detach()
    if how == "data":
        return c.data
    if how == "from_numpy":
        return oxmera.from_numpy(c.detach().numpy())      # no version counter in common
    return c[...]                                         # a view (requires grad when c does)


def _shared_write_ox(env, xs, p):
    """``x * k``, written in place into a clone of ``x`` whose memory a side graph saved
    through a sharer: while that graph lives the write must reach it (its backward raises),
    and once it died NumPy may write to the memory again."""
    c = xs[0].clone()
    weight = oxmera.ones(c.shape, dtype=c.dtype, requires_grad=True)
    side = (_sharer(c, p["sharer"]) * weight).sum()      # mul saves the sharer for weight
    if p["side"] == "dead":
        del side
        side = None
        array = c.detach().numpy()
        array[...] = array.copy()     # raises if the dead graph left the memory locked
    c.mul_(p["k"])
    if side is not None:
        try:
            side.backward()
        except RuntimeError as err:
            if "modified by an inplace operation" not in str(err):
                raise
        else:
            raise AssertionError(f"the side graph's backward (through {p['sharer']}) did not "
                                 f"see the in-place write")
    return c


@fuzz_op("shared_write", "inplace", lambda xs, p: xs[0] * p["k"], _shared_write_ox)
def _shared_write(g):
    return (g.pick(),), {"sharer": g.choice(["detach", "data", "from_numpy", "view"]),
                         "side": g.choice(["alive", "dead"]), "k": g.choice([2.0, -0.5])}


# -- linear algebra ------------------------------------------------------------------------

def _matmul_shape(a, b):
    try:
        return np.matmul(np.zeros(a), np.zeros(b)).shape
    except ValueError:
        return None


def _matmul_ox(env, xs, p):
    a = xs[0]
    if p.get("gram"):
        a, b = (a, a.mT) if p["gram"] == "right" else (a.mT, a)
    else:
        b = xs[1] if "c" not in p else env.tensor(p["c"])
    form = p["form"]
    if form == "op":
        return a @ b
    if form == "method":
        return a.matmul(b)
    return getattr(oxmera, form)(a, b)


def _matmul_ref(xs, p):
    a = xs[0]
    if p.get("gram"):
        at = np.swapaxes(a, -1, -2)
        a, b = (a, at) if p["gram"] == "right" else (at, a)
    else:
        b = xs[1] if "c" not in p else const_value(p["c"])
    if p["form"] == "outer":
        return np.outer(a, b)
    return np.asarray(np.matmul(a, b))


@fuzz_op("matmul", "linalg", _matmul_ref, _matmul_ox)
def _matmul(g):
    i = g.pick(lambda v: v.ndim >= 1)
    if i is None:
        return None
    a = g.pool[i]
    kind = g.choice(["node", "const", "gram"])
    p = {}
    if kind == "gram":
        if a.ndim < 2:
            return None
        p["gram"] = g.choice(["right", "left"])
        inputs = (i,)
        ashape = a.shape if p["gram"] == "right" else a.shape[:-2] + a.shape[:-3:-1]
        bshape = ashape[:-2] + ashape[:-3:-1]
    elif kind == "node":
        j = g.pick(lambda v: v.ndim >= 1 and _matmul_shape(a.shape, v.shape) is not None)
        if j is None:
            return None
        inputs, ashape, bshape = (i, j), a.shape, g.pool[j].shape
    else:
        k = a.shape[-1]
        bshape = g.choice([(k,), (k, g.integer(1, 3)), (g.integer(1, 2), k, g.integer(1, 3))])
        if _matmul_shape(a.shape, bshape) is None:
            return None
        p["c"] = g.const(bshape)
        inputs, ashape = (i,), a.shape
    forms = ["op", "matmul", "method"]
    if len(ashape) == 2 and len(bshape) == 2:
        forms.append("mm")
    if len(ashape) == 3 and len(bshape) == 3 and ashape[0] == bshape[0]:
        forms.append("bmm")
    if len(ashape) == 1 and len(bshape) == 1:
        forms += ["dot", "outer"]
    p["form"] = g.choice(forms)
    if p["form"] == "outer" and "gram" in p:
        return None
    return inputs, p


def _einsum_ref(xs, p):
    return np.asarray(np.einsum(p["eq"], *xs))


@fuzz_op("einsum", "linalg", _einsum_ref,
         lambda env, xs, p: (oxmera.einsum(p["eq"], *xs) if p["form"] == "args"
                             else oxmera.einsum(p["eq"], list(xs))))
def _einsum(g):
    i = g.pick()
    x = g.pool[i]
    letters = "abcd"[:x.ndim]
    kind = g.choice(["one", "pair", "contract"])
    if kind == "contract" and x.ndim >= 1:
        j = g.pick(lambda v: v.ndim >= 1 and v.shape[0] == x.shape[-1])
        if j is None:
            return None
        y = g.pool[j]
        other = "pqrs"[:y.ndim - 1]
        eq = f"{letters},{letters[-1]}{other}->{letters[:-1]}{other}"
        return (i, j), {"eq": eq, "form": g.choice(["args", "list"])}
    keep = [c for c in letters if g.boolean()]
    out = "".join(g.draw(st.permutations(keep))) if keep else ""
    if kind == "pair":
        j = g.pick(lambda v: v.shape == x.shape)
        return (i, j), {"eq": f"{letters},{letters}->{out}", "form": g.choice(["args", "list"])}
    if g.boolean() and x.ndim >= 1:
        eq = f"...{letters[-1]}->..." if g.boolean() else f"{letters}->{out}"
    else:
        eq = f"{letters}->{out}"
    return (i,), {"eq": eq, "form": g.choice(["args", "list"])}


@fuzz_op("tensordot", "linalg",
         lambda xs, p: np.asarray(np.tensordot(xs[0], xs[1], p["dims"])),
         lambda env, xs, p: oxmera.tensordot(xs[0], xs[1], dims=p["dims"]))
def _tensordot(g):
    i = g.pick(lambda v: v.ndim >= 1)
    if i is None:
        return None
    a = g.pool[i]
    k = g.integer(0, min(a.ndim, 2))
    j = g.pick(lambda v: v.ndim >= k and v.shape[:k] == a.shape[a.ndim - k:])
    if j is None:
        return None
    return (i, j), {"dims": k}


def _linalg_ref(xs, p):
    a = xs[0]
    if p["which"] == "det":
        return np.asarray(np.linalg.det(a))
    if p["which"] == "inv":
        return np.linalg.inv(a)
    b = xs[1]
    if b.shape == a.shape[:-1]:         # a (batch of) vector(s), PyTorch's rule
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _square_ok(x):
    if x.ndim < 2 or x.shape[-1] != x.shape[-2] or x.size == 0 or x.shape[-1] > 3:
        return False
    if not np.all(np.abs(np.linalg.det(x)) > 0.1):
        return False
    return bool(np.all(np.linalg.cond(x) < 30))


@fuzz_op("linalg", "linalg",
         lambda xs, p: _linalg_ref(xs, p),
         lambda env, xs, p: (getattr(oxmera.linalg, p["which"])(*xs)))
def _linalg(g):
    i = g.pick(_square_ok)
    if i is None:
        return None
    a = g.pool[i]
    which = g.choice(["det", "inv", "solve"])
    if which != "solve":
        return (i,), {"which": which}
    n = a.shape[-1]
    j = g.pick(lambda v: (v.shape == a.shape[:-1] or (v.ndim == a.ndim and v.shape[-2] == n
                                                      and v.shape[:-2] == a.shape[:-2])))
    if j is None:
        return None
    return (i, j), {"which": which}


@fuzz_op("linear", "nn",
         lambda xs, p: (xs[0] @ (xs[1] if "w" not in p else const_value(p["w"])).T
                        + (const_value(p["b"]) if "b" in p else 0)),
         lambda env, xs, p: F.linear(xs[0], xs[1] if "w" not in p else env.tensor(p["w"]),
                                     env.tensor(p["b"]) if "b" in p else None))
def _linear(g):
    i = g.pick(lambda v: v.ndim >= 1)
    if i is None:
        return None
    n_in = g.pool[i].shape[-1]
    p = {}
    j = g.pick(lambda v: v.ndim == 2 and v.shape[1] == n_in) if g.boolean() else None
    if j is None:
        n_out = g.integer(1, 3)
        p["w"] = g.const((n_out, n_in))
        inputs = (i,)
    else:
        n_out = g.pool[j].shape[0]
        inputs = (i, j)
    if g.boolean():
        p["b"] = g.const((n_out,))
    return inputs, p


# -- nn.functional ------------------------------------------------------------------------------

def _layer_norm_ref(xs, p):
    x = xs[0]
    axes = tuple(range(x.ndim - p["k"], x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + 1e-5)
    if "w" in p:
        out = out * const_value(p["w"]) + const_value(p["b"])
    return out


@fuzz_op("layer_norm", "nn", _layer_norm_ref,
         lambda env, xs, p: F.layer_norm(
             xs[0], xs[0].shape[xs[0].ndim - p["k"]:],
             env.tensor(p["w"]) if "w" in p else None, env.tensor(p["b"]) if "b" in p else None))
def _layer_norm(g):
    def ok(v):
        return v.ndim >= 1 and v.shape[-1] >= 2
    i = g.pick(ok)
    if i is None:
        return None
    x = g.pool[i]
    k = g.integer(1, x.ndim)
    axes = tuple(range(x.ndim - k, x.ndim))
    if not np.all(x.var(axis=axes) > 0.05):
        return None
    p = {"k": k}
    if g.boolean():
        p["w"], p["b"] = g.const(x.shape[x.ndim - k:]), g.const(x.shape[x.ndim - k:])
    return (i,), p


def _batch_norm_ref(xs, p):
    x = xs[0]
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if p["training"]:
        axes = (0,) + tuple(range(2, x.ndim))
        mean, var = x.mean(axis=axes).reshape(shape), x.var(axis=axes).reshape(shape)
    else:
        mean = const_value(p["mean"]).reshape(shape)
        var = const_value(p["var"]).reshape(shape)
    out = (x - mean) / np.sqrt(var + 1e-5)
    if "w" in p:
        out = out * const_value(p["w"]).reshape(shape) + const_value(p["b"]).reshape(shape)
    return out


@fuzz_op("batch_norm", "nn", _batch_norm_ref,
         lambda env, xs, p: F.batch_norm(
             xs[0], env.tensor(p["mean"]), env.tensor(p["var"]),
             env.tensor(p["w"]) if "w" in p else None, env.tensor(p["b"]) if "b" in p else None,
             training=p["training"]))
def _batch_norm(g):
    i = g.pick(lambda v: v.ndim >= 2 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    c = x.shape[1]
    p = {"training": g.boolean(), "mean": g.const((c,)), "var": g.const((c,), "positive")}
    if p["training"]:
        axes = (0,) + tuple(range(2, x.ndim))
        if reduced_count(x.shape, axes) < 2 or not np.all(x.var(axis=axes) > 0.05):
            return None
    if g.boolean():
        p["w"], p["b"] = g.const((c,)), g.const((c,))
    return (i,), p


def _cross_entropy_ref(xs, p):
    x = xs[0]
    cdim = 0 if x.ndim == 1 else 1
    logp = _softmax_ref([x], {"dim": cdim, "log": True})
    n_classes = x.shape[cdim]
    if "probs" in p:
        target = const_value(p["probs"])
    else:
        labels = np.array(p["labels"])
        target = np.moveaxis(np.eye(n_classes)[labels], -1, cdim)
    eps = p["smoothing"]
    target = target * (1 - eps) + eps / n_classes
    losses = -np.sum(target * logp, axis=cdim)
    if "labels" in p and p["ignore"] is not None:
        keep = np.array(p["labels"]) != p["ignore"]
        losses = losses * keep
        count = keep.sum()
    else:
        count = losses.size
    if p["reduction"] == "sum":
        return np.asarray(losses.sum())
    if p["reduction"] == "mean":
        return np.asarray(losses.sum() / count)
    return losses


@fuzz_op("cross_entropy", "nn", _cross_entropy_ref,
         lambda env, xs, p: F.cross_entropy(
             xs[0], env.tensor(p["probs"]) if "probs" in p else oxmera.tensor(p["labels"]),
             reduction=p["reduction"], label_smoothing=p["smoothing"],
             **({"ignore_index": p["ignore"]} if p.get("ignore") is not None else {})))
def _cross_entropy(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0 and (v.ndim == 1 or v.shape[1] >= 1))
    if i is None:
        return None
    x = g.pool[i]
    cdim = 0 if x.ndim == 1 else 1
    n_classes = x.shape[cdim]
    p = {"reduction": g.choice(["mean", "sum", "none"]), "smoothing": g.choice([0.0, 0.1])}
    tshape = x.shape[:cdim] + x.shape[cdim + 1:]
    if g.boolean():
        probs = g.const(x.shape, "unit")
        p["probs"] = probs
        # normalized along the class dim by the reference? PyTorch takes them as given.
    else:
        n = int(np.prod(tshape, dtype=np.int64))
        rng = np.random.default_rng(g.integer(0, 255))
        p["labels"] = rng.integers(0, n_classes, tshape).tolist() if tshape else \
            int(rng.integers(0, n_classes))
        p["ignore"] = None
        if n > 1 and g.integer(0, 2) == 0:
            p["ignore"] = int(np.ravel(p["labels"])[0])
            if np.all(np.array(p["labels"]) == p["ignore"]) and p["reduction"] == "mean":
                return None
    return (i,), p


@fuzz_op("regression_loss", "nn",
         lambda xs, p: _regression_ref(xs, p),
         lambda env, xs, p: getattr(F, p["which"])(
             xs[0], xs[1] if "c" not in p else env.tensor(p["c"]), reduction=p["reduction"],
             **({"beta": p["beta"]} if "beta" in p else {})))
def _regression(g):
    i = g.pick()
    x = g.pool[i]
    which = g.choice(["mse_loss", "l1_loss", "smooth_l1_loss", "bce_logits"])
    if which == "bce_logits":
        which = "binary_cross_entropy_with_logits"
        p = {"c": g.const(x.shape, "unit")}
        inputs = (i,)
    elif g.boolean():
        j = g.pick(lambda v: v.shape == x.shape)
        inputs, p = (i, j), {}
    else:
        p = {"c": g.const(x.shape)}
        inputs = (i,)
    p["which"] = which
    p["reduction"] = g.choice(["mean", "sum", "none"])
    if which == "smooth_l1_loss":
        p["beta"] = g.choice([1.0, 0.5])
    target = g.pool[inputs[1]] if len(inputs) > 1 else const_value(p["c"])
    diff = np.abs(x - target)
    if which == "l1_loss" and not _not_near(diff, [0]):
        return None
    if which == "smooth_l1_loss" and not _not_near(diff, [0, p["beta"]]):
        return None
    if len(inputs) > 1 and inputs[0] == inputs[1]:
        return None
    return inputs, p


def _regression_ref(xs, p):
    x = xs[0]
    t = xs[1] if "c" not in p else const_value(p["c"])
    if p["which"] == "mse_loss":
        loss = (x - t) ** 2
    elif p["which"] == "l1_loss":
        loss = np.abs(x - t)
    elif p["which"] == "smooth_l1_loss":
        d, beta = np.abs(x - t), p["beta"]
        loss = np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    else:
        loss = np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))
    if p["reduction"] == "mean":
        return np.asarray(loss.mean())
    if p["reduction"] == "sum":
        return np.asarray(loss.sum())
    return loss


_PAD_NUMPY = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


def _pad_ref(xs, p):
    x = xs[0]
    pads = p["pad"]
    widths = [(0, 0)] * x.ndim
    for k in range(len(pads) // 2):
        widths[x.ndim - 1 - k] = (pads[2 * k], pads[2 * k + 1])
    crop = tuple(slice(max(-a, 0), x.shape[d] - max(-b, 0)) for d, (a, b) in enumerate(widths))
    x = x[crop]
    widths = [(max(a, 0), max(b, 0)) for a, b in widths]
    mode = _PAD_NUMPY[p["mode"]]
    if mode == "constant":
        return np.pad(x, widths, constant_values=p["value"] or 0.0)
    return np.pad(x, widths, mode=mode)


@fuzz_op("pad", "nn", _pad_ref,
         lambda env, xs, p: F.pad(xs[0], p["pad"], mode=p["mode"],
                                  **({"value": p["value"]} if p["value"] is not None else {})))
def _pad(g):
    i = g.pick(lambda v: v.ndim >= 1 and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    mode = g.choice(["constant", "constant", "reflect", "replicate", "circular"])
    k = g.integer(1, min(x.ndim, 2 if mode == "constant" else 1))
    if mode != "constant" and x.ndim not in (2, 3):
        return None
    pads = []
    for d in range(k):
        size = x.shape[x.ndim - 1 - d]
        if mode == "constant":
            pads += [g.integer(-1 if size > 1 else 0, 2), g.integer(0, 2)]
        elif mode == "reflect":
            pads += [g.integer(0, size - 1), g.integer(0, size - 1)]
        elif mode == "circular":
            pads += [g.integer(0, size), g.integer(0, size)]
        else:
            pads += [g.integer(0, 2), g.integer(0, 2)]
    return (i,), {"pad": tuple(pads), "mode": mode,
                  "value": g.choice([None, 1.5]) if mode == "constant" else None}


def _conv_ref(x, w, b, stride, padding, dilation, groups):
    """Direct convolution over the trailing spatial dims, unbatched ``x`` (C, *spatial)."""
    spatial = x.ndim - 1
    x = np.pad(x, [(0, 0)] + [(padding, padding)] * spatial)
    out_c, in_per_group = w.shape[:2]
    kernel = w.shape[2:]
    out_sizes = [(x.shape[1 + d] - dilation * (kernel[d] - 1) - 1) // stride + 1
                 for d in range(spatial)]
    out = np.zeros([out_c] + out_sizes)
    per_group = out_c // groups
    for o in range(out_c):
        grp = o // per_group
        for pos in np.ndindex(*out_sizes):
            total = 0.0
            for c in range(in_per_group):
                for kpos in np.ndindex(*kernel):
                    src = tuple(pos[d] * stride + kpos[d] * dilation for d in range(spatial))
                    total += x[(grp * in_per_group + c,) + src] * w[(o, c) + kpos]
            out[(o,) + pos] = total + (b[o] if b is not None else 0.0)
    return out


def _conv_ox_ref(xs, p):
    x = xs[0]
    w = const_value(p["w"]) if "w" in p else xs[1]
    b = const_value(p["b"]) if "b" in p else None
    batched = x.ndim == p["spatial"] + 2
    items = x if batched else x[None]
    out = np.stack([_conv_ref(item, w, b, p["stride"], p["padding"], p["dilation"], p["groups"])
                    for item in items])
    return out if batched else out[0]


@fuzz_op("conv", "nn", _conv_ox_ref,
         lambda env, xs, p: getattr(F, f"conv{p['spatial']}d")(
             xs[0], env.tensor(p["w"]) if "w" in p else xs[1],
             env.tensor(p["b"]) if "b" in p else None,
             stride=p["stride"], padding=p["padding"], dilation=p["dilation"],
             groups=p["groups"]))
def _conv(g):
    spatial = g.choice([1, 2])
    i = g.pick(lambda v: v.ndim in (spatial + 1, spatial + 2) and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    channels = x.shape[-spatial - 1]
    groups = g.choice([g_ for g_ in (1, 2, 3) if channels % g_ == 0])
    out_c = groups * g.integer(1, 2)
    stride, padding, dilation = g.integer(1, 2), g.integer(0, 1), g.integer(1, 2)
    kernel = tuple(g.integer(1, 2) for _ in range(spatial))
    sizes = x.shape[x.ndim - spatial:]
    if any(s + 2 * padding - dilation * (k - 1) - 1 < 0 for s, k in zip(sizes, kernel)):
        return None
    p = {"spatial": spatial, "stride": stride, "padding": padding, "dilation": dilation,
         "groups": groups}
    wshape = (out_c, channels // groups) + kernel
    j = g.pick(lambda v: v.shape == wshape) if g.integer(0, 2) == 0 else None
    inputs = (i,) if j is None else (i, j)
    if j is None:
        p["w"] = g.const(wshape)
    if g.boolean():
        p["b"] = g.const((out_c,))
    return inputs, p


def _pool_windows(x, kernel, stride, padding, dilation, ceil_mode, fill):
    """For unbatched (C, H, W): each output position's window values (padding -> fill)."""
    c, h, w = x.shape
    padded = np.full((c, h + 2 * padding, w + 2 * padding), fill)
    padded[:, padding:padding + h, padding:padding + w] = x
    real = np.zeros(padded.shape[1:], bool)
    real[padding:padding + h, padding:padding + w] = True
    sizes = []
    for n in (h, w):
        span = n + 2 * padding - dilation * (kernel - 1) - 1
        out = (-(-span // stride) if ceil_mode else span // stride) + 1
        if ceil_mode and (out - 1) * stride >= n + padding:
            out -= 1
        sizes.append(out)
    windows = {}
    for oi in range(sizes[0]):
        for oj in range(sizes[1]):
            rows = [oi * stride + k * dilation for k in range(kernel)]
            cols = [oj * stride + k * dilation for k in range(kernel)]
            rows_in = [r for r in rows if r < padded.shape[1]]
            cols_in = [q for q in cols if q < padded.shape[2]]
            block = padded[:, rows_in][:, :, cols_in]
            mask = real[np.ix_(rows_in, cols_in)]
            windows[oi, oj] = (block, mask, len(rows_in) * len(cols_in))
    return sizes, windows


def _pool_ref(xs, p):
    x = xs[0]
    batched = x.ndim == 4
    items = x if batched else x[None]
    outs = []
    for item in items:
        sizes, windows = _pool_windows(item, p["kernel"], p["stride"], p["padding"],
                                       p.get("dilation", 1), p["ceil_mode"],
                                       -np.inf if p["max"] else 0.0)
        out = np.zeros((item.shape[0],) + tuple(sizes))
        for (oi, oj), (block, mask, count) in windows.items():
            if p["max"]:
                out[:, oi, oj] = block.reshape(block.shape[0], -1).max(axis=1)
            else:
                # PyTorch divides by the window clipped to the padded input.
                total = block.reshape(block.shape[0], -1).sum(axis=1)
                divisor = count if p["count_include_pad"] else mask.sum()
                out[:, oi, oj] = total / divisor
        outs.append(out)
    return np.stack(outs) if batched else outs[0]


@fuzz_op("pool", "nn", _pool_ref,
         lambda env, xs, p: (
             F.max_pool2d(xs[0], p["kernel"], p["stride"], p["padding"], p["dilation"],
                          ceil_mode=p["ceil_mode"]) if p["max"] else
             F.avg_pool2d(xs[0], p["kernel"], p["stride"], p["padding"], ceil_mode=p["ceil_mode"],
                          count_include_pad=p["count_include_pad"])))
def _pool(g):
    i = g.pick(lambda v: v.ndim in (3, 4) and v.size > 0)
    if i is None:
        return None
    x = g.pool[i]
    kernel = g.integer(1, 2)
    p = {"max": g.boolean(), "kernel": kernel, "stride": g.integer(1, 2),
         "padding": g.integer(0, kernel // 2), "ceil_mode": g.boolean()}
    if p["max"]:
        p["dilation"] = g.integer(1, 2)
    else:
        p["count_include_pad"] = g.boolean()
    h, w = x.shape[-2:]
    for n in (h, w):
        if n + 2 * p["padding"] - p.get("dilation", 1) * (kernel - 1) - 1 < 0:
            return None
    if p["max"]:
        items = x if x.ndim == 4 else x[None]
        for item in items:
            _, windows = _pool_windows(item, kernel, p["stride"], p["padding"], p["dilation"],
                                       p["ceil_mode"], -np.inf)
            for block, mask, _ in windows.values():
                if not mask.any():
                    return None
                flat = np.sort(block.reshape(block.shape[0], -1), axis=1)
                if flat.shape[1] > 1 and np.any(flat[:, -1] - flat[:, -2] <= MARGIN):
                    return None
    return (i,), p


@fuzz_op("embedding", "nn",
         lambda xs, p: xs[0][np.array(p["idx"], dtype=np.int64)],
         lambda env, xs, p: F.embedding(oxmera.tensor(p["idx"]), xs[0]))
def _embedding(g):
    i = g.pick(lambda v: v.ndim == 2 and v.size > 0)
    if i is None:
        return None
    n = g.pool[i].shape[0]
    shape = g.choice([(2,), (3,), (2, 2)])
    rng = np.random.default_rng(g.integer(0, 255))
    return (i,), {"idx": rng.integers(0, n, shape).tolist()}


# -- autograd machinery inside programs ------------------------------------------------------

class Cube(oxmera.autograd.Function):
    """x ** 3 as a custom Function whose backward is written with oxmera ops
    (so it is differentiable again: gradgradcheck goes through it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x


@fuzz_op("function", "autograd", lambda xs, p: xs[0] ** 3, lambda env, xs, p: Cube.apply(xs[0]))
def _function(g):
    i = g.pick(lambda v: np.all(np.abs(v) < 3))
    return None if i is None else ((i,), {})


def _hooked(env, xs, p):
    """The input through a multiplication whose output has hooks that change nothing."""
    out = xs[0] * 1.0
    if out.requires_grad:
        if p["kind"] == "replace":
            out.register_hook(lambda grad: grad * 1.0)     # hands back a new tensor
        elif p["kind"] == "observe":
            out.register_hook(lambda grad: None)
        else:
            handle = out.register_hook(lambda grad: grad * 0.0)
            handle.remove()                               # removed: must never run
        out.retain_grad()
    return out


@fuzz_op("hook", "autograd", lambda xs, p: xs[0].copy(), _hooked)
def _hook(g):
    return (g.pick(),), {"kind": g.choice(["replace", "observe", "removed"])}


def _cast_ox(env, xs, p):
    x, dtype = xs[0], getattr(oxmera, p["dtype"])
    if p["form"] == "to":
        return x.to(dtype)
    if p["form"] == "to_kw":
        return x.to(dtype=dtype)
    if p["form"] == "fn":
        return oxmera.to(x, dtype)
    return x.double() if p["dtype"] == "float64" else x.float()


@fuzz_op("cast", "conversion", lambda xs, p: xs[0].copy(), _cast_ox)
def _cast(g):
    dtypes = ["float64"] if g.const_dtype == np.float64 else ["float32", "float64"]
    return (g.pick(),), {"dtype": g.choice(dtypes), "form": g.choice(["to", "to_kw", "fn",
                                                                      "method"])}


# -- the strategy -----------------------------------------------------------------------------

SHAPE_SIZES = st.integers(1, 3)


def acceptable(value):
    return (isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size <= MAX_SIZE
            and bool(np.all(np.isfinite(value))) and bool(np.all(np.abs(value) <= BOUND)))


def _draw_steps(draw, g, names, pool, dtypes, const_dtype, steps, n_steps):
    """Append up to ``n_steps`` steps that apply to the values so far (and their values)."""
    failures = 0
    while len(steps) < n_steps and failures < 3 * n_steps:
        name = draw(st.sampled_from(names))
        prepared = OPS[name].prepare(g)
        if prepared is None:
            failures += 1
            continue
        inputs, params = prepared
        if None in inputs:              # no value fits the op's second input
            failures += 1
            continue
        try:
            value = np.asarray(OPS[name].ref([pool[k] for k in inputs], params),
                               dtype=np.float64)
        except (ValueError, IndexError):
            # NumPy refuses too (a reduction of an empty array without identity, ...).
            failures += 1
            continue
        if not acceptable(value):
            failures += 1
            continue
        steps.append((name, tuple(inputs), params))
        pool.append(value)
        dtypes.append(expected_dtype(name, step_participants(
            name, [(dtypes[k], pool[k].ndim) for k in inputs], params, const_dtype), params))


@st.composite
def programs(draw, min_steps=3, max_steps=30, dtypes=("float64",), max_leaf_size=12,
             ops=None, allow_empty=False):
    """A random :class:`Program` of ``min_steps`` to ``max_steps`` steps.

    Leaves have 0 to 3 dims of size 1 to 3 (0 too with ``allow_empty``) and
    together at most ``max_leaf_size`` elements; later leaves often broadcast
    with the first. ``dtypes`` lists the leaf dtypes to draw from.
    """
    seed = draw(st.integers(0, 2 ** 16))
    # Hypothesis favours the first of a list; shuffle by the seed so that each
    # program favours another op.
    names = [str(n) for n in
             np.random.default_rng(seed).permutation(sorted(OPS) if ops is None else ops)]
    sizes = st.integers(0 if allow_empty else 1, 3)
    first = tuple(draw(st.lists(sizes, min_size=0, max_size=3)))
    leaves = [first]
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.booleans()):
            g = Gen(draw, [])
            leaves.append(g.partner_shape(first))
        else:
            leaves.append(tuple(draw(st.lists(sizes, min_size=0, max_size=3))))
    total = 0
    kept = []
    for shape in leaves:
        n = int(np.prod(shape, dtype=np.int64))
        if total + n <= max_leaf_size or not kept:
            kept.append(shape)
            total += n
    leaf_specs = tuple(
        (shape, draw(st.sampled_from(["contiguous", "contiguous", "transposed", "strided"])),
         draw(st.sampled_from(list(dtypes))))
        for shape in kept)
    program = Program(seed, leaf_specs, ())
    pool = [leaf_array(program, k, np.float64) for k in range(len(leaf_specs))]
    dtypes = [np.dtype(d) for _, _, d in leaf_specs]
    const_dtype = np.dtype(np.float64) if all(d == np.float64 for d in dtypes) else \
        np.dtype(np.float32)
    steps = []
    n_steps = draw(st.integers(min_steps, max_steps))
    g = Gen(draw, pool, dtypes, const_dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        # NumPy's warnings about empty slices, in the table's checks and references.
        warnings.simplefilter("ignore", RuntimeWarning)
        _draw_steps(draw, g, names, pool, dtypes, const_dtype, steps, n_steps)
    program.steps = tuple(steps)
    return program


def reference_values(program):
    """Every value of ``program`` (leaves, then one per step) evaluated with NumPy in float64."""
    pool = [leaf_array(program, k, np.float64) for k in range(len(program.leaves))]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, inputs, params in program.steps:
            pool.append(np.asarray(OPS[name].ref([pool[k] for k in inputs], params),
                                   dtype=np.float64))
    return pool


def make_leaves(program, requires_grad):
    out = []
    for k, (_, _, dtype) in enumerate(program.leaves):
        t = oxmera.from_numpy(leaf_array(program, k, np.dtype(dtype)))
        out.append(t.requires_grad_() if requires_grad else t)
    return out


def run(program, leaves, env, check=None):
    """Evaluate ``program`` with oxmera on ``leaves``; ``check(k, step, xs, out)`` per step."""
    pool = list(leaves)
    for k, (name, inputs, params) in enumerate(program.steps):
        xs = [pool[i] for i in inputs]
        try:
            out = OPS[name].ox(env, xs, params)
        except Exception as err:
            raise AssertionError(f"step {k} ({name}, inputs {inputs}, params {params}) raised "
                                 f"{type(err).__name__}: {err}") from err
        if check is not None:
            check(k, (name, inputs, params), xs, out)
        pool.append(out)
    return pool


def sinks(program, limit=3):
    """Values no later step reads (the last one first): what a loss should depend on."""
    used = {i for _, inputs, _ in program.steps for i in inputs}
    n = len(program.leaves) + len(program.steps)
    out = [k for k in range(n - 1, -1, -1) if k not in used and k >= len(program.leaves)]
    return out[:limit] or [n - 1]


#: name -> which inputs' dtypes the result depends on, for steps that read other
#: inputs only for their values (a condition, an argmax).
DTYPE_INPUTS = {
    "where": lambda items, p: items if "mask" in p else items[:-1],
    "argmax_gather": lambda items, p: items[-1:],
}


def step_participants(name, items, params, const_dtype):
    """(dtype, ndim) of the float tensors step ``name`` combines: of its inputs
    (``items``, a (dtype, ndim) pair each) and of its constants."""
    parts = list(items)
    if name in DTYPE_INPUTS:
        parts = list(DTYPE_INPUTS[name](parts, params))
    for value in params.values():
        if is_const(value) and value[0] != "mask":
            parts.append((np.dtype(const_dtype), len(value[1])))
    return parts


#: Groups whose result dtype is not the elementwise rule (torch_result_type):
#: writes keep the destination's dtype; contractions promote plainly (PyTorch
#: refuses mixed dtypes there; oxmera promotes, as NumPy does).
DESTINATION_DTYPE = {"inplace", "scatter"}
PLAIN_PROMOTION = {"linalg", "nn"}


def expected_dtype(name, participants, params=None):
    """The dtype step ``name`` should give for its ``participants``."""
    op = OPS[name]
    if name == "cast":
        return np.dtype(params["dtype"])
    if op.group in DESTINATION_DTYPE or name in DESTINATION_DTYPE:
        return np.dtype(participants[0][0])
    if op.group in PLAIN_PROMOTION:
        return max((np.dtype(d) for d, _ in participants), key=lambda d: d.itemsize)
    return torch_result_type(participants)
