"""Complex numbers: their parts, conjugation, polar form and the real/complex views.

Gradients follow PyTorch's convention (docs: "Complex numbers" in the autograd
mechanics): for a real loss ``L`` the gradient of a complex ``z`` is the
conjugate Wirtinger derivative times two, ``dL/dRe(z) + 1j * dL/dIm(z)``, so a
VJP of a holomorphic ``f`` is ``grad * conj(f'(z))``. :func:`cj` is the one
helper every VJP uses for that conjugate: it costs one dtype check on real
tensors, where conjugation is the identity.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import complex_of

__all__ = ["real", "imag", "conj", "conj_physical", "resolve_conj", "resolve_neg", "is_conj",
           "is_neg", "angle", "polar", "complex", "view_as_real", "view_as_complex"]


def cj(t):
    """``conj(t)`` for a complex tensor or number, ``t`` itself otherwise (no op recorded)."""
    if isinstance(t, _core.Tensor):
        return conj_physical(t) if t.dtype.kind == "c" else t
    return t.conjugate() if isinstance(t, (complex, np.complexfloating)) else t


def _check_complex(input, opname):
    if input.dtype.kind != "c":
        raise RuntimeError(f"{opname}(): expected a complex tensor, got dtype {input.dtype}")


@op(save=(), view=True)
def real(input):
    """The real part: a view of a complex tensor, the tensor itself for a real one.

    Also the ``Tensor.real`` property.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.real(oxmera.tensor([1 + 2j, 3j]))
    tensor([1., 0.], dtype=float32)
    """
    return input.real


@real.vjp
def _(ctx, grad, input):
    # A real gradient; the engine makes it complex (imaginary part 0).
    return grad


@op(save=(), view=True)
def imag(input):
    """The imaginary part of a complex tensor, as a view (``RuntimeError`` for real ones,
    as PyTorch). Also the ``Tensor.imag`` property.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1 + 2j, -3j]).imag
    tensor([ 2., -3.], dtype=float32)
    """
    if input.dtype.kind != "c":
        raise RuntimeError(f"imag is not implemented for tensors with non-complex dtypes "
                           f"(got {input.dtype})")
    return input.imag


@imag.vjp
def _(ctx, grad, input):
    return grad * 1j


@op(save=(), method=True)
def conj_physical(input):
    """The complex conjugate, elementwise (a copy; a real tensor is copied unchanged).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.conj_physical(oxmera.tensor([1 + 2j]))
    tensor([1.-2.j], dtype=complex64)
    """
    return np.conjugate(input) if input.dtype.kind == "c" else input.copy()


@conj_physical.vjp
def _(ctx, grad, input):
    return conj_physical(grad)


def conj(input):
    """The complex conjugate; a real tensor is returned as it is (as PyTorch's).

    PyTorch's ``conj`` is a lazy view with a conjugate bit; oxmera conjugates
    at once (``is_conj`` is always False, ``resolve_conj`` returns its input).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1 + 2j, 3 - 1j]).conj()
    tensor([1.-2.j, 3.+1.j], dtype=complex64)
    >>> x = oxmera.ones(2)
    >>> x.conj() is x
    True
    """
    if not isinstance(input, _core.Tensor):
        raise TypeError(f"conj(): argument 'input' must be Tensor, not {type(input).__name__}")
    return conj_physical(input) if input.dtype.kind == "c" else input


def resolve_conj(input):
    """``input`` itself: oxmera never has lazily conjugated tensors (``is_conj`` is False).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1j])
    >>> oxmera.resolve_conj(x) is x
    True
    """
    return input


def resolve_neg(input):
    """``input`` itself: oxmera never has lazily negated tensors (``is_neg`` is False).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1j])
    >>> oxmera.resolve_neg(x) is x
    True
    """
    return input


def is_conj(input):
    """False: oxmera conjugates eagerly, so no tensor carries PyTorch's conjugate bit.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1j]).conj().is_conj()
    False
    """
    return False


def is_neg(input):
    """False: no tensor carries PyTorch's lazy negation bit.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.is_neg(oxmera.tensor([1j]))
    False
    """
    return False


@op(complex_inputs=True, float_only=True, method=True)
def angle(input):
    """The argument (phase) of each element, in radians; a real one's is 0 or pi.

    The gradient at 0 is 0, as in PyTorch; through a real input it is 0.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.angle(oxmera.tensor([1j, -1.0 + 0j]))
    tensor([1.5708, 3.1416], dtype=float32)
    >>> oxmera.angle(oxmera.tensor([-2.0, 3.0]))
    tensor([3.1416, 0.    ], dtype=float32)
    """
    if input.dtype.kind == "c":
        return np.angle(input)
    out = np.where(input < 0, np.pi, 0.0).astype(input.dtype)
    out[np.isnan(input)] = np.nan
    return out


@angle.vjp
def _(ctx, grad, input):
    from oxmera.ops.elementwise import where
    if input.dtype.kind != "c":
        return grad * 0
    # d angle = Im(dz / z): the gradient is grad * i z / |z|^2 (0 at z = 0).
    squared = input.real * input.real + input.imag * input.imag
    zero = squared == 0
    return where(zero, 0.0, grad * input * 1j / where(zero, 1.0, squared))


@op("sgn", save_output=True)
def complex_sgn(input):
    """``z / abs(z)`` for complex elements, 0 at 0 (``oxmera.sgn`` of a complex tensor).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sgn(oxmera.tensor([3 + 4j, 0j]))
    tensor([0.6+0.8j, 0. +0.j ], dtype=complex64)
    """
    _check_complex(input, "sgn")
    magnitude = np.abs(input)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(magnitude == 0, 0, input / np.where(magnitude == 0, 1, magnitude)
                        ).astype(input.dtype)


@complex_sgn.vjp
def _(ctx, grad, input):
    from oxmera.ops.elementwise import where
    # d sgn = (dz - s Re(conj(s) dz)) / |z|: the gradient is
    # (grad - s Re(grad conj(s))) / |z| (PyTorch's sgn_backward), 0 at 0.
    s = ctx.output
    magnitude = input.abs()
    zero = magnitude == 0
    return where(zero, 0.0, (grad - s * real(grad * conj(s))) / where(zero, 1.0, magnitude))


def _check_pair(a, b, opname):
    for name, t in (("abs" if opname == "polar" else "real", a),
                    ("angle" if opname == "polar" else "imag", b)):
        if not isinstance(t, _core.Tensor):
            raise TypeError(f"{opname}(): argument '{name}' must be Tensor, not "
                            f"{type(t).__name__}")
        if t.dtype.kind != "f":
            raise RuntimeError(f"{opname}(): expected both inputs to be floating point "
                               f"(float16, float32 or float64), got {a.dtype} and {b.dtype}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{opname}(): expected both inputs to have the same dtype, got "
                           f"{a.dtype} and {b.dtype}")


@op("complex", inputs=2, save=())
def _complex(real, imag):
    """The recorded op behind :func:`complex` and :func:`polar` (checks done there).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.complex import _complex
    >>> _complex(oxmera.tensor([1.0]), oxmera.tensor([2.0]))
    tensor([1.+2.j], dtype=complex64)
    """
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape), complex_of(real.dtype))
    out.real = real
    out.imag = imag
    return out


@_complex.vjp
def _(ctx, grad, real_part, imag_part):
    needs = ctx.needs_input_grad
    return (real(grad) if needs[0] else None, imag(grad) if needs[1] else None)


def complex(real, imag):
    """``real + 1j * imag`` as a complex tensor: float32 parts give complex64, float64
    complex128 (both parts of one floating dtype, as PyTorch requires).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.complex(oxmera.tensor([1.0, 2.0]), oxmera.tensor([3.0, -1.0]))
    tensor([1.+3.j, 2.-1.j], dtype=complex64)
    """
    _check_pair(real, imag, "complex")
    return _complex(real, imag)


def polar(abs, angle):
    """``abs * (cos(angle) + 1j * sin(angle))``, differentiable in both.

    Examples
    --------
    >>> import math
    >>> import oxmera
    >>> z = oxmera.polar(oxmera.tensor([2.0], dtype=oxmera.float64),
    ...                  oxmera.tensor([math.pi / 2], dtype=oxmera.float64))
    >>> bool(z.real.abs() < 1e-15), z.imag
    (True, tensor([2.], dtype=float64))
    """
    _check_pair(abs, angle, "polar")
    return _complex(abs * angle.cos(), abs * angle.sin())


@op(save=(), view=True)
def view_as_real(input):
    """A complex tensor as a real view of shape ``(*input.shape, 2)`` (real, imaginary).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.view_as_real(oxmera.tensor([1 + 2j, 3 - 4j]))
    tensor([[ 1.,  2.],
            [ 3., -4.]], dtype=float32)
    """
    if input.dtype.kind != "c":
        raise RuntimeError(f"view_as_real is only supported for complex tensors, got dtype "
                           f"{input.dtype}")
    # A length-1 last axis reinterpreted as two reals: a view whatever the strides.
    return input[..., None].view(input.real.dtype)


@view_as_real.vjp
def _(ctx, grad, input):
    return view_as_complex(grad.contiguous())


@op(save=(), view=True)
def view_as_complex(input):
    """A real tensor whose last dimension is 2 (real, imaginary) as a complex view.

    The last dimension must have stride 1 (``RuntimeError`` otherwise; call
    ``contiguous()`` first), as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.view_as_complex(oxmera.tensor([[1.0, 2.0], [3.0, -4.0]]))
    tensor([1.+2.j, 3.-4.j], dtype=complex64)
    """
    if input.dtype.kind != "f" or input.dtype == np.float16:
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {input.dtype}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError(f"view_as_complex: Tensor must have a last dimension of size 2, got "
                           f"shape {input.shape}")
    if input.size == 0:
        # No element to share: strides do not matter (NumPy's may be 0 here).
        return np.empty(input.shape[:-1], complex_of(input.dtype))
    if input.strides[-1] != input.itemsize:
        raise RuntimeError("view_as_complex: Tensor must have a last dimension with stride 1")
    if any(s % (2 * input.itemsize) for s, n in zip(input.strides[:-1], input.shape) if n > 1):
        raise RuntimeError("view_as_complex: Tensor must have a stride divisible by 2 for all "
                           "but last dimension")
    return input.view(complex_of(input.dtype))[..., 0]


@view_as_complex.vjp
def _(ctx, grad, input):
    return view_as_real(grad)


def _real_property(self):
    return real(self)


def _imag_property(self):
    return imag(self)


_real_property.__doc__ = real.__doc__
_imag_property.__doc__ = imag.__doc__

for _name, _value in (("real", property(_real_property)), ("imag", property(_imag_property)),
                      ("conj", conj), ("resolve_conj", resolve_conj),
                      ("resolve_neg", resolve_neg), ("is_conj", is_conj), ("is_neg", is_neg)):
    _registry.add_tensor_attribute(_name, _value)
