"""Gradient and PyTorch cases of complex tensors: the complex ops (``real``, ``imag``,
``conj_physical``, ``angle``, ``sgn``, ``complex``, ``view_as_real``,
``view_as_complex``) and complex inputs to the ops that take them (the complex
flag of each case set below); see ``_case_table`` for the machinery.

gradcheck checks complex inputs and outputs through the real Jacobian, so
these cases test both Wirtinger derivatives, to second order.
"""
import oxmera

from ._case_table import UNARY_SHAPES, C, Leaf, S, T, add_cases, add_torch_cases, shape_label


def complex_unary_cases(name, fn, domain="real", torch_fn=None):
    """``fn`` on complex leaves of every unary shape and two layouts, and a PyTorch
    comparison (``torch_fn(lib, x)``, default ``fn``'s name called on ``lib``)."""
    entries = [(f"complex-{shape_label(s)}", fn, (C(s, domain),)) for s in UNARY_SHAPES]
    entries += [("complex-transposed", fn, (C((3, 4), domain, "transposed"),)),
                ("complex-strided", fn, (C((2, 3), domain, "strided"),))]
    add_cases(name, *entries)
    if torch_fn is not None:
        add_torch_cases(name, ("complex", torch_fn, (C((3, 4), domain),)),
                        ("complex-strided", torch_fn, (C((2, 3), domain, "strided"),)))


def complex_binary_cases(name, fn, torch_fn, left="real", right="real"):
    """``fn`` on complex/complex, complex/real and real/complex leaves (broadcasting,
    0-d, size 0, non-contiguous), complex Python numbers, and PyTorch comparisons."""
    entries = [
        ("complex-3x4-3x4", fn, (C((3, 4), left), C((3, 4), right))),
        ("complex-3x1-1x4", fn, (C((3, 1), left), C((1, 4), right))),
        ("complex-0d-2x3", fn, (C((), left), C((2, 3), right))),
        ("complex-0x3-3", fn, (C((0, 3), left), C((3,), right))),
        ("complex-real", fn, (C((2, 3), left), Leaf((2, 3), right))),
        ("real-complex", fn, (Leaf((2, 3), left), C((2, 3), right))),
        ("complex-transposed-strided", fn, (C((3, 4), left, "transposed"),
                                            C((3, 4), right, "strided"))),
        ("complex-number", lambda x: fn(x, 1.5 - 0.5j), (C((2, 3), left),)),
        ("real-tensor-complex-number", lambda x: fn(x, 0.5 + 1.25j), (Leaf((2, 3), left),)),
    ]
    add_cases(name, *entries)
    add_torch_cases(
        name,
        ("complex", torch_fn, (C((3, 4), left), C((3, 4), right))),
        ("complex-real", torch_fn, (C((3, 1), left), Leaf((1, 4), right))),
        ("real-complex", torch_fn, (Leaf((2, 3), left), C((2, 3), right))),
        ("complex-number", lambda lib, x: torch_fn(lib, x, 1.5 - 0.5j), (C((2, 3), left),)),
    )


# -- the complex ops ----------------------------------------------------------------------

complex_unary_cases("real", lambda x: x.real, torch_fn=lambda lib, x: x.real * 1)
complex_unary_cases("imag", lambda x: x.imag, torch_fn=lambda lib, x: x.imag * 1)
complex_unary_cases("conj_physical", oxmera.conj_physical,
                    torch_fn=lambda lib, x: lib.conj_physical(x))
complex_unary_cases("angle", oxmera.angle, torch_fn=lambda lib, x: lib.angle(x))
complex_unary_cases("sgn", oxmera.sgn, torch_fn=lambda lib, x: lib.sgn(x))
complex_unary_cases("view_as_real", oxmera.view_as_real,
                    torch_fn=lambda lib, x: lib.view_as_real(x) * 1)
add_cases("real", ("real-input", lambda x: oxmera.real(x * 1j), (Leaf((2, 3)),)))
add_cases("angle", ("real-input", oxmera.angle, (Leaf((2, 3)),)))
add_torch_cases("angle", ("real-input", lambda lib, x: lib.angle(x), (Leaf((2, 3)),)))
add_cases("conj_physical", ("real-input", oxmera.conj_physical, (Leaf((2, 3)),)))

add_cases("view_as_complex",
          *[(shape_label(s), oxmera.view_as_complex, (Leaf(s),))
            for s in [(2,), (3, 2), (0, 2), (2, 3, 2)]],
          ("transposed-batch", lambda x: oxmera.view_as_complex(x.transpose(0, 1)),
           (Leaf((3, 4, 2)),)))
add_torch_cases("view_as_complex",
                ("3x2", lambda lib, x: lib.view_as_complex(x) * 1, (Leaf((3, 2)),)))

_PAIRS = [((3, 4), (3, 4)), ((), ()), ((3, 1), (4,)), ((0, 2), (2,))]
add_cases("complex",
          *[(f"{shape_label(a)}-{shape_label(b)}", oxmera.complex, (Leaf(a), Leaf(b)))
            for a, b in _PAIRS],
          ("transposed-strided", oxmera.complex, (T((3, 4)), S((3, 4)))),
          ("polar", oxmera.polar, (Leaf((2, 3), "positive"), Leaf((2, 3)))))
add_torch_cases("complex",
                ("3x4", lambda lib, a, b: lib.complex(a, b), (Leaf((3, 4)), Leaf((3, 4)))),
                ("polar", lambda lib, a, b: lib.polar(a, b),
                 (Leaf((3, 4), "positive"), Leaf((3, 4)))))

# -- complex inputs to the ops that take them -----------------------------------------

for _name, _fn, _domain in [
        ("exp", oxmera.exp, "real"), ("log", oxmera.log, "positive"),
        ("sqrt", oxmera.sqrt, "positive"), ("rsqrt", oxmera.rsqrt, "positive"),
        ("sin", oxmera.sin, "real"), ("cos", oxmera.cos, "real"), ("tan", oxmera.tan, "real"),
        ("sinh", oxmera.sinh, "real"), ("cosh", oxmera.cosh, "real"),
        ("tanh", oxmera.tanh, "real"), ("sigmoid", oxmera.sigmoid, "real"),
        ("reciprocal", oxmera.reciprocal, "real"), ("neg", oxmera.neg, "real"),
        ("expm1", oxmera.expm1, "real"), ("log1p", oxmera.log1p, "positive"),
        ("log2", oxmera.log2, "positive"), ("log10", oxmera.log10, "positive"),
        ("exp2", oxmera.exp2, "real"), ("asin", oxmera.asin, "real"),
        ("acos", oxmera.acos, "real"), ("atan", oxmera.atan, "real"),
        ("abs", oxmera.abs, "real")]:
    complex_unary_cases(_name, _fn, _domain,
                        torch_fn=(lambda name: lambda lib, x: getattr(lib, name)(x))(_name))

complex_binary_cases("mul", oxmera.mul, lambda lib, a, b: lib.mul(a, b))
complex_binary_cases("add", oxmera.add, lambda lib, a, b: lib.add(a, b))
complex_binary_cases("sub", oxmera.sub, lambda lib, a, b: lib.sub(a, b))
complex_binary_cases("div", oxmera.div, lambda lib, a, b: lib.div(a, b))
complex_binary_cases("pow", oxmera.pow, lambda lib, a, b: lib.pow(a, b), "positive", "real")

add_cases("lerp", ("complex", oxmera.lerp, (C((2, 3)), C((2, 3)), C((2, 3)))))
add_torch_cases("lerp", ("complex", lambda lib, a, b, w: lib.lerp(a, b, w),
                         (C((2, 3)), C((2, 3)), C((2, 3)))))

for _name, _fn, _torch_fn in [
        ("sum", lambda x: x.sum(1), lambda lib, x: x.sum(1)),
        ("mean", lambda x: x.mean(0), lambda lib, x: x.mean(0)),
        ("prod", lambda x: x.prod(1), lambda lib, x: x.prod(1)),
        ("cumsum", lambda x: x.cumsum(1), lambda lib, x: x.cumsum(1)),
        ("cumprod", lambda x: x.cumprod(1), lambda lib, x: x.cumprod(1)),
        ("norm", lambda x: x.norm(), lambda lib, x: x.norm()),
]:
    add_cases(_name, ("complex", _fn, (C((3, 4)),)),
              ("complex-transposed", _fn, (C((3, 4), layout="transposed"),)))
    add_torch_cases(_name, ("complex", _torch_fn, (C((3, 4)),)))

_MATRIX_OPS = [
    ("matmul", lambda a, b: a @ b, lambda lib, a, b: a @ b, ((2, 3), (3, 4))),
    ("matmul", lambda a, b: oxmera.dot(a, b), lambda lib, a, b: lib.dot(a, b), ((3,), (3,))),
    ("matmul", lambda a, b: oxmera.vdot(a, b), lambda lib, a, b: lib.vdot(a, b), ((3,), (3,))),
    ("einsum", lambda a, b: oxmera.einsum("ij,kj->ik", a, b),
     lambda lib, a, b: lib.einsum("ij,kj->ik", a, b), ((2, 3), (4, 3))),
    ("linalg_solve", oxmera.linalg.solve, lambda lib, a, b: lib.linalg.solve(a, b),
     ((3, 3), (3, 2))),
]
for _k, (_name, _fn, _torch_fn, (_a, _b)) in enumerate(_MATRIX_OPS):
    add_cases(_name, (f"complex-{_k}", _fn, (C(_a), C(_b))))
    if _fn is not _MATRIX_OPS[2][1]:     # vdot wants one dtype (as PyTorch's)
        add_cases(_name, (f"complex-real-{_k}", _fn, (C(_a), Leaf(_b))))
    add_torch_cases(_name, (f"complex-{_k}", _torch_fn, (C(_a), C(_b))))
for _name, _fn, _torch_fn in [
        ("linalg_inv", oxmera.linalg.inv, lambda lib, a: lib.linalg.inv(a)),
        ("linalg_det", oxmera.linalg.det, lambda lib, a: lib.linalg.det(a))]:
    add_cases(_name, ("complex", _fn, (C((3, 3)),)),
              ("complex-batch-transposed", _fn, (C((2, 3, 3), layout="transposed"),)))
    add_torch_cases(_name, ("complex", _torch_fn, (C((3, 3)),)))

add_cases("pow", ("complex-square", oxmera.square, (C((3, 4)),)),
          ("complex-number-exponent", lambda x: x ** 2.5, (C((3, 4), "positive"),)))
add_torch_cases("pow", ("complex-square", lambda lib, x: lib.square(x), (C((3, 4)),)))

# -- eig: losses through abs(V) only (a phase-free function of the eigenvectors) ----------


def _eig_phase_free(lib, A):
    L, V = lib.linalg.eig(A)
    return L, V.abs()


add_cases("linalg_eig",
          ("real", lambda A: _eig_phase_free(oxmera, A), (Leaf((4, 4)),)),
          ("complex", lambda A: _eig_phase_free(oxmera, A), (C((3, 3)),)),
          ("batch-transposed", lambda A: _eig_phase_free(oxmera, A), (T((2, 3, 3)),)),
          ("complex-strided", lambda A: _eig_phase_free(oxmera, A),
           (C((3, 3), layout="strided"),)),
          ("size0", lambda A: _eig_phase_free(oxmera, A), (Leaf((0, 0)),)),
          ("eigvals", oxmera.linalg.eigvals, (Leaf((3, 3)),)),
          ("eigvals-complex", oxmera.linalg.eigvals, (C((3, 3)),)))
add_torch_cases("linalg_eig",
                ("real", _eig_phase_free, (Leaf((4, 4)),)),
                ("complex", _eig_phase_free, (C((3, 3)),)),
                ("eigvals", lambda lib, A: lib.linalg.eigvals(A), (Leaf((3, 3)),)))

# -- pointwise ops with complex forms ------------------------------------------------------

for _name, _fn in [("acosh", oxmera.acosh), ("asinh", oxmera.asinh), ("atanh", oxmera.atanh),
                   ("sinc", oxmera.sinc)]:
    add_cases(_name, ("complex", lambda x, f=_fn: f(x * 0.5), (C((2, 3)),)),
              ("complex-strided", lambda x, f=_fn: f(x * 0.5), (C((2, 3), layout="strided"),)))
    add_torch_cases(_name, ("complex", lambda lib, x, n=_name: getattr(lib, n)(x * 0.5),
                            (C((2, 3)),)))
add_cases("pow", ("complex-float_power", oxmera.float_power, (C((2, 3), "positive"), Leaf((3,)))))
add_torch_cases("pow", ("complex-float_power", lambda lib, a, b: lib.float_power(a, b),
                        (C((2, 3), "positive"), Leaf((3,)))))
add_cases("mul", ("complex-vecdot", oxmera.linalg.vecdot, (C((2, 3)), C((3,)))))
add_torch_cases("mul", ("complex-vecdot", lambda lib, a, b: lib.linalg.vecdot(a, b),
                           (C((2, 3)), C((3,)))))

# -- var and std: real results of complex inputs ------------------------------------------

for _name in ("var", "std"):
    add_cases(_name, ("complex-dim", lambda x, n=_name: getattr(x, n)(1), (C((3, 4)),)),
              ("complex-all-transposed", lambda x, n=_name: getattr(x, n)(),
               (C((3, 4), layout="transposed"),)))
    add_torch_cases(_name, ("complex", lambda lib, x, n=_name: getattr(x, n)(0, correction=0),
                            (C((3, 4)),)))
