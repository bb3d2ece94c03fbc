"""More elementwise math: inverse hyperbolics, fmod, copysign, xlogy, logit, erfc,
sinc, fmax/fmin, the fused ``addcmul``/``addcdiv`` and the composites PyTorch
users reach for (``clamp_min``, ``frac``, ``deg2rad``, ``float_power``...).

Same rules as ``elementwise`` (broadcasting like NumPy, dtype promotion and
gradients at special points like PyTorch's), which holds the basic
arithmetic; the SciPy-backed special functions (gamma family, Bessel,
``erfinv``) live in ``oxmera.ops.special``. Composites built from existing
ops have no VJP of their own.
"""
import math

import numpy as np

from oxmera._core import _kernels
from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import result_type
from oxmera.ops.complex import cj, complex_sgn
from oxmera.ops.creation import zeros_like
from oxmera.ops.elementwise import (_TWO_OVER_SQRT_PI, _integer_division_check, add, clamp,
                                    cos, div, eq, exp, ge, gt, isnan, le, logical_and, logical_or,
                                    lt, mul, pow, rsqrt, sigmoid, sign, sin, sub, trunc, where)

__all__ = [
    "acosh", "arccosh", "asinh", "arcsinh", "atanh", "arctanh",
    "fmod", "copysign", "sgn", "frac", "xlogy", "logit", "erfc", "sinc",
    "deg2rad", "rad2deg", "heaviside", "logaddexp2", "float_power", "fmax", "fmin", "ldexp",
    "clamp_min", "clamp_max", "addcmul", "addcdiv",
]

_LN2 = math.log(2.0)

Tensor = _core.Tensor


# -- inverse hyperbolic functions ------------------------------------------------------------

@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def acosh(input):
    """Inverse hyperbolic cosine, elementwise (nan below 1); ``arccosh`` is the same.

    The gradient ``1 / sqrt(x**2 - 1)`` is inf at 1, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.acosh(oxmera.tensor([1.0, 2.0]))
    tensor([0.   , 1.317], dtype=float32)
    """
    return np.arccosh(input)


@acosh.vjp
def _(ctx, grad, input):
    if input.dtype.kind == "c":
        # 1 / sqrt(z^2 - 1) has the wrong sign left of the imaginary axis:
        # the derivative on acosh's principal branch is 1 / (sqrt(z - 1) sqrt(z + 1)).
        return grad * cj(rsqrt(input - 1) * rsqrt(input + 1))
    return grad * rsqrt(input * input - 1)


@op(complex_inputs=True, float_only=True, method=True)
def asinh(input):
    """Inverse hyperbolic sine, elementwise; ``arcsinh`` is the same.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.asinh(oxmera.tensor([0.0, 1.0]))
    tensor([0.    , 0.8814], dtype=float32)
    """
    return np.arcsinh(input)


@asinh.vjp
def _(ctx, grad, input):
    return grad * cj(rsqrt(input * input + 1))


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def atanh(input):
    """Inverse hyperbolic tangent, elementwise (+-inf at +-1, nan beyond); ``arctanh``
    is the same.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.atanh(oxmera.tensor([0.0, 0.5]))
    tensor([0.    , 0.5493], dtype=float32)
    """
    return np.arctanh(input)


@atanh.vjp
def _(ctx, grad, input):
    return grad / cj(1 - input * input)


arccosh, arcsinh, arctanh = acosh, asinh, atanh


# -- remainders, signs and parts ------------------------------------------------------------------

@op(inputs=2, promote=True, method=True, quiet=True)
def fmod(input, other):
    """Remainder of truncated division (C's ``fmod``): it has the sign of ``input``.

    Unlike :func:`oxmera.remainder` (Python's ``%``). Integer division by zero
    raises. The gradient is 1 for ``input`` and ``-trunc(input / other)`` for
    ``other``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fmod(oxmera.tensor([-3.0, 3.0]), 2)
    tensor([-1.,  1.], dtype=float32)
    """
    _integer_division_check(input, other, "fmod")
    return np.fmod(input, other)


@fmod.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    return (grad if needs[0] else None,
            -grad * div(input, other, rounding_mode="trunc") if needs[1] else None)


@op(inputs=2, save=("input",), save_output=True, promote=True, float_only=True, method=True)
def copysign(input, other):
    """The magnitude of ``input`` with the sign (bit) of ``other``, elementwise.

    Gradient: ``+-1`` for ``input`` (0 where ``input`` is 0), zero for
    ``other``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.copysign(oxmera.tensor([1.0, 2.0]), oxmera.tensor([-0.0, 3.0]))
    tensor([-1.,  2.], dtype=float32)
    """
    return np.copysign(input, other)


@copysign.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    # out / input is +-1, and 0 at input == 0 (sign(0) is 0): no division.
    return (grad * sign(input) * sign(ctx.output) if needs[0] else None,
            zeros_like(grad) if needs[1] else None)


def sgn(input):
    """The sign of each element: ``z / abs(z)`` (0 at 0) for complex tensors, for real
    tensors the same as :func:`oxmera.sign`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sgn(oxmera.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.], dtype=float32)
    >>> oxmera.sgn(oxmera.tensor([3 + 4j]))
    tensor([0.6+0.8j], dtype=complex64)
    """
    if isinstance(input, _core.Tensor) and input.dtype.kind == "c":
        return complex_sgn(input)
    return sign(input)


def frac(input):
    """The fractional part ``input - trunc(input)``, with the sign of ``input``.

    The gradient passes through unchanged, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.frac(oxmera.tensor([1.25, -2.5]))
    tensor([ 0.25, -0.5 ], dtype=float32)
    """
    return sub(input, trunc(input))


def _x_log(name, log_slope, ufunc, argument, pole, example):
    """``x * log(y)`` (or ``log1p``), exactly 0 where ``x`` is 0 and ``y`` is not nan."""
    def forward(input, other):
        result = input * ufunc(other)
        return np.where((np.asarray(input) == 0) & ~np.isnan(other), 0, result).astype(
            result.dtype, copy=False)
    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = __name__
    forward.__doc__ = (
        f"``input * {argument}``, elementwise, and 0 where ``input`` is 0 (unless ``other`` is "
        f"nan).\n\nThe gradient for ``other`` is ``input * d{argument}``; for ``input`` "
        f"``{argument}``, but 0 where ``input`` is 0 and the log is not finite, as in "
        f"PyTorch.\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> oxmera.special.{name}(oxmera.tensor([0.0, 2.0]), oxmera.tensor([{pole}, 3.0]))\n"
        f"tensor([0.    , {example}], dtype=float32)\n")
    public = op(name, inputs=2, promote=True, float_only=True, method=name == "xlogy",
                quiet=True)(forward)

    @public.vjp
    def _(ctx, grad, input, other):
        # PyTorch's rule for input: {name}(grad, other), but 0 where input is 0
        # and the log is -inf or nan there (other <= pole).
        needs = ctx.needs_input_grad
        return (where(logical_and(eq(input, 0), le(other, pole)), 0.0, public(grad, other))
                if needs[0] else None,
                grad * input * log_slope(other) if needs[1] else None)
    return public


def _dlog(other):
    return 1 / other


def _dlog1p(other):
    return 1 / (other + 1)


xlogy = _x_log("xlogy", _dlog, np.log, "log(other)", 0.0, "2.1972")
xlog1py = _x_log("xlog1py", _dlog1p, np.log1p, "log1p(other)", -1.0, "2.7726")


@op(float_only=True, method=True, quiet=True)
def logit(input, eps=None):
    """``log(p / (1 - p))``, elementwise; with ``eps``, ``p`` is first clamped to
    ``[eps, 1 - eps]``.

    Gradient as PyTorch's: ``1 / (p * (1 - p))``; nan outside ``[0, 1]``
    without ``eps``, 0 outside ``[eps, 1 - eps]`` with it.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.logit(oxmera.tensor([0.5, 0.75, 1.0]))
    tensor([0.    , 1.0986,    inf], dtype=float32)
    >>> oxmera.logit(oxmera.tensor([0.0, 1.0]), eps=1e-6)
    tensor([-13.8155,  13.8023], dtype=float32)
    """
    if eps is not None:
        input = np.clip(input, eps, 1 - eps)
    return np.log(input / (1 - input))


@logit.vjp
def _(ctx, grad, input, eps=None):
    value = grad / (input * (1 - input))
    if eps is None:
        return where(logical_or(lt(input, 0), gt(input, 1)), math.nan, value)
    return where(logical_or(lt(input, eps), gt(input, 1 - eps)), 0.0, value)


@op(float_only=True, method=True)
def erfc(input):
    """The complementary error function ``1 - erf(x)``, accurate where it is tiny.

    Computed in float64 (the C library's ``erfc``, within one ulp) and rounded
    to the input's dtype.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.erfc(oxmera.tensor([0.0, 1.0, 10.0], dtype=oxmera.float64))
    tensor([1.0000e+00, 1.5730e-01, 2.0885e-45], dtype=float64)
    """
    return _kernels.erfc(np.asarray(input, np.float64)).astype(input.dtype, copy=False)


@erfc.vjp
def _(ctx, grad, input):
    return grad * exp(-(input * input)) * -_TWO_OVER_SQRT_PI


@op(complex_inputs=True, float_only=True, method=True)
def sinc(input):
    """The normalized sinc ``sin(pi x) / (pi x)``, 1 at 0.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sinc(oxmera.tensor([0.0, 0.5, -1.5]))
    tensor([ 1.    ,  0.6366, -0.2122], dtype=float32)
    """
    return np.sinc(input)


@sinc.vjp
def _(ctx, grad, input):
    # (cos(pi x) pi x - sin(pi x)) / (pi x^2), and 0 at 0 (its limit), as PyTorch.
    origin = eq(input, 0)
    x = where(origin, 1.0, input)
    angle = x * math.pi
    slope = (cos(angle) * angle - sin(angle)) / (angle * x)
    return where(origin, 0.0, grad * cj(slope))


def deg2rad(input):
    """Degrees to radians, elementwise (integers give the default float dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.deg2rad(oxmera.tensor([180.0, 90.0]))
    tensor([3.1416, 1.5708], dtype=float32)
    """
    return mul(input, math.pi / 180.0)


def rad2deg(input):
    """Radians to degrees, elementwise (integers give the default float dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.rad2deg(oxmera.tensor([3.14159265, 1.0]))
    tensor([180.    ,  57.2958], dtype=float32)
    """
    return mul(input, 180.0 / math.pi)


@op(inputs=2, differentiable=False, promote=True, method=True)
def heaviside(input, values):
    """The Heaviside step: 0 where ``input < 0``, ``values`` where it is 0, 1 above.

    Not differentiable (PyTorch has no derivative for it either).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.heaviside(oxmera.tensor([-1.0, 0.0, 2.0]), oxmera.tensor(0.5))
    tensor([0. , 0.5, 1. ], dtype=float32)
    """
    dtype = np.result_type(input, values)
    if dtype == np.bool_:
        return np.where(input, True, values)    # NumPy has no bool loop: True above 0
    return np.heaviside(input, values).astype(dtype, copy=False)


@op(inputs=2, promote=True, float_only=True, method=True)
def logaddexp2(input, other):
    """``log2(2**input + 2**other)``, elementwise, stable for any magnitude.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.logaddexp2(oxmera.tensor([1.0, 1e4]), oxmera.tensor([1.0, 1e4]))
    tensor([2.0000e+00, 1.0001e+04], dtype=float32)
    """
    return np.logaddexp2(input, other)


@logaddexp2.vjp
def _(ctx, grad, input, other):
    # 2**x / (2**x + 2**y) as a sigmoid of the scaled difference: never overflows.
    needs = ctx.needs_input_grad
    return (grad * sigmoid((input - other) * _LN2) if needs[0] else None,
            grad * sigmoid((other - input) * _LN2) if needs[1] else None)


def _as_float64(value, dtype=np.float64):
    if isinstance(value, Tensor):
        return value.to(dtype)
    if isinstance(value, np.ndarray):
        return Tensor(value.astype(dtype))
    return complex(value) if dtype == np.complex128 else float(value)


def _is_complex_value(value):
    return isinstance(value, complex) or getattr(value, "dtype", np.dtype(bool)).kind == "c"


def float_power(input, exponent):
    """``input ** exponent`` computed in double precision: the result is float64
    (complex128 when either is complex).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.float_power(oxmera.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=float64)
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(f"float_power(): expected a Tensor as input or exponent, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    # complex128 when either is complex, as PyTorch.
    dtype = (np.complex128 if _is_complex_value(input) or _is_complex_value(exponent)
             else np.float64)
    return pow(_as_float64(input, dtype), _as_float64(exponent, dtype))


def _nan_max_vjp(ctx, grad, input, other, wins):
    # PyTorch's rule: ``input`` gets the whole gradient where it wins or ties
    # or ``other`` is nan, ``other`` gets it elsewhere (a tie is not split,
    # unlike maximum).
    needs = ctx.needs_input_grad
    picked = logical_or(wins(input, other), isnan(other))
    return (where(picked, grad, 0.0) if needs[0] else None,
            where(picked, 0.0, grad) if needs[1] else None)


@op(inputs=2, promote=True, method=True)
def fmax(input, other):
    """The larger of ``input`` and ``other``, elementwise, ignoring nan (NumPy's ``fmax``).

    A nan loses to a number; nan only where both are. On a tie ``input``
    gets the whole gradient, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fmax(oxmera.tensor([1.0, float("nan")]), oxmera.tensor([3.0, 2.0]))
    tensor([3., 2.], dtype=float32)
    """
    return np.fmax(input, other)


@fmax.vjp
def _(ctx, grad, input, other):
    return _nan_max_vjp(ctx, grad, input, other, ge)


@op(inputs=2, promote=True, method=True)
def fmin(input, other):
    """The smaller of ``input`` and ``other``, elementwise, ignoring nan (NumPy's ``fmin``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fmin(oxmera.tensor([1.0, float("nan")]), oxmera.tensor([3.0, 2.0]))
    tensor([1., 2.], dtype=float32)
    """
    return np.fmin(input, other)


@fmin.vjp
def _(ctx, grad, input, other):
    return _nan_max_vjp(ctx, grad, input, other, le)


def ldexp(input, other):
    """``input * 2 ** other``, elementwise (as PyTorch: float even for integers).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ldexp(oxmera.tensor([1.0, 3.0]), oxmera.tensor([2, -1]))
    tensor([4. , 1.5], dtype=float32)
    """
    return mul(input, pow(2.0, other))


def clamp_min(input, min):
    """``clamp(input, min=min)``: limit the values from below.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.clamp_min(oxmera.tensor([-1.0, 2.0]), 0.5)
    tensor([0.5, 2. ], dtype=float32)
    """
    return clamp(input, min=min)


def clamp_max(input, max):
    """``clamp(input, max=max)``: limit the values from above.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.clamp_max(oxmera.tensor([-1.0, 2.0]), 0.5)
    tensor([-1. ,  0.5], dtype=float32)
    """
    return clamp(input, max=max)


# -- fused multiply-adds ----------------------------------------------------------------

def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2``, elementwise with broadcasting.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.addcmul(oxmera.ones(2), oxmera.tensor([1.0, 2.0]), oxmera.tensor([3.0, 4.0]),
    ...                value=0.5)
    tensor([2.5, 5. ], dtype=float32)
    """
    product = mul(tensor1, tensor2)
    return add(input, product if value == 1 else mul(product, value))


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``, elementwise with broadcasting.

    As in PyTorch, integer ``tensor1`` and ``tensor2`` are refused (the
    division used to be an integer division).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.addcdiv(oxmera.ones(2), oxmera.tensor([1.0, 2.0]), oxmera.tensor([4.0, 4.0]),
    ...                value=2)
    tensor([1.5, 2. ], dtype=float32)
    """
    if result_type(_data(tensor1), _data(tensor2)).kind in "biu":
        raise RuntimeError(
            f"addcdiv(): integer division with addcdiv is not supported (tensor1 and tensor2 "
            f"have dtypes {_dtype_name(tensor1)} and {_dtype_name(tensor2)}); use "
            f"input + value * (tensor1 / tensor2) for a true division")
    quotient = div(tensor1, tensor2)
    return add(input, quotient if value == 1 else mul(quotient, value))


def _data(value):
    return value._data if isinstance(value, Tensor) else value


def _dtype_name(value):
    return str(np.asarray(_data(value)).dtype)


for _name, _function in (("arccosh", acosh), ("arcsinh", asinh), ("arctanh", atanh),
                         ("sgn", sgn), ("frac", frac), ("deg2rad", deg2rad),
                         ("rad2deg", rad2deg), ("float_power", float_power), ("ldexp", ldexp),
                         ("clamp_min", clamp_min), ("clamp_max", clamp_max),
                         ("addcmul", addcmul), ("addcdiv", addcdiv)):
    _registry.add_tensor_attribute(_name, _function)
