"""Elementwise ops: arithmetic, unary math, rounding, comparisons and logic.

Binary ops broadcast like NumPy and promote dtypes like PyTorch; their VJPs
return gradients of the broadcast shape and leave the summing back to each
input's shape to the engine. Gradients at kinks, ties and special values
follow PyTorch's (each op's docstring says which). Reductions, activations
and in-place ops live in their own modules.
"""
import cmath
import math

import numpy as np

from oxmera._core import _kernels
from oxmera._core.autograd import OpError
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._utils import ordered_only, real_only, result_type
from oxmera.ops.complex import cj, complex_sgn
from oxmera.ops.creation import zeros_like
from oxmera.ops.index import nonzero

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

__all__ = [
    "add", "sub", "mul", "div", "divide", "true_divide", "floor_divide", "remainder", "pow", "neg",
    "reciprocal", "square",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
    "sin", "cos", "tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan",
    "sinh", "cosh", "tanh", "sigmoid", "erf", "relu", "abs", "sign",
    "atan2", "arctan2", "maximum", "minimum", "clamp", "clip", "lerp", "hypot", "logaddexp",
    "floor", "ceil", "round", "trunc", "nan_to_num",
    "eq", "ne", "lt", "le", "gt", "ge", "where",
    "isclose", "allclose", "isnan", "isinf", "isfinite",
    "logical_and", "logical_or", "logical_xor", "logical_not",
]


# -- arithmetic --------------------------------------------------------------

def _scaled(other, alpha, opname):
    """``other * alpha`` for add/sub, keeping ``other``'s dtype as PyTorch does.

    A Python number stays a Python number, so it is still weakly typed when
    it meets the tensor (``np.result_type(2.0)`` would make it a float64
    array and upcast a float32 tensor).
    """
    if alpha == 1:
        return other
    if isinstance(other, (bool, int, float)):
        return other * alpha
    if other.dtype.kind != "f" and isinstance(alpha, float):
        raise TypeError(f"{opname}(): for integer or bool tensors, alpha must not be a "
                        f"floating point number, got alpha={alpha} for dtype {other.dtype}")
    return np.multiply(other, alpha, dtype=other.dtype)


@op(inputs=2, save=(), promote=True, method=True, operators=("__add__", "__radd__"),
    complex_inputs=True, numpy=np.add, replay=True)
def add(input, other, *, alpha=1):
    """Add ``other`` (times ``alpha``) to ``input``, elementwise with broadcasting.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.add(oxmera.tensor([1.0, 2.0]), 1.5)
    tensor([2.5, 3.5], dtype=float32)
    """
    return np.add(input, _scaled(other, alpha, "add"))


@add.vjp
def _(ctx, grad, input, other, *, alpha=1):
    needs = ctx.needs_input_grad
    return (grad if needs[0] else None,
            (grad if alpha == 1 else grad * alpha) if needs[1] else None)


@op(inputs=2, save=(), promote=True, method=True, operators=("__sub__", "__rsub__"),
    numpy=np.subtract, complex_inputs=True, replay=True)
def sub(input, other, *, alpha=1):
    """Subtract ``other`` (times ``alpha``) from ``input``, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sub(oxmera.tensor([1.0, 2.0]), oxmera.tensor([0.5, 0.5]))
    tensor([0.5, 1.5], dtype=float32)
    """
    if getattr(input, "dtype", None) == np.bool_ and getattr(other, "dtype", None) == np.bool_:
        raise TypeError("sub(): subtraction of two bool tensors is not supported; use logical_xor")
    return np.subtract(input, _scaled(other, alpha, "sub"))


@sub.vjp
def _(ctx, grad, input, other, *, alpha=1):
    needs = ctx.needs_input_grad
    return (grad if needs[0] else None,
            (-grad if alpha == 1 else grad * -alpha) if needs[1] else None)


@op(complex_inputs=True, inputs=2, promote=True, method=True, operators=("__mul__", "__rmul__"),
    numpy=np.multiply, save={"input": ("other",), "other": ("input",)}, unit=1, replay=True)
def mul(input, other):
    """Multiply elementwise, with broadcasting.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.mul(oxmera.tensor([1.0, 2.0]), oxmera.tensor([3.0, 4.0]))
    tensor([3., 8.], dtype=float32)
    """
    return np.multiply(input, other)


@mul.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    complex_result = grad.dtype.kind == "c"     # (a real result has real inputs: no conjugate)
    if input is other and input is not None:
        # A square (x * x): both gradients are the same product, computed
        # once; the engine adds the two, as it adds any two uses of a tensor.
        g = grad * (cj(input) if complex_result else input)
        return g, g
    if complex_result:
        return (grad * cj(other) if needs[0] else None,
                grad * cj(input) if needs[1] else None)
    if (needs[0] and needs[1] and grad.nbytes >= _PAIR_MIN_BYTES
            and grad.shape == input.shape == other.shape
            and grad.dtype == input.dtype == other.dtype):
        grad_input, grad_other = mul_pair(grad, other, input)
        return grad_input, grad_other
    return (grad * other if needs[0] else None,
            grad * input if needs[1] else None)


# mul's VJP computes both products in one pass (mul_pair) for gradients of
# this many bytes or more: memory traffic is what one pass saves (reading
# ``grad`` once), and arrays that sit in a core's cache gain nothing from it
# (measured on bench/'s machine, 1 MiB of L2 a core: parity at 1 MiB arrays,
# 3-4 % less time at 2 MiB, 4 % of big_elementwise's whole step at 16 MiB),
# while the pair op's Python forward costs ~2.5 us more than two products.
_PAIR_MIN_BYTES = 2 << 20


@op(inputs=3, outputs=("first", "second"), promote=True, complex_inputs=True, unit=1,
    save={"factor": ("a", "b"), "a": ("factor",), "b": ("factor",)})
def mul_pair(factor, a, b):
    """Two products of one factor, ``(factor * a, factor * b)``, with broadcasting.

    mul's VJP when both of its inputs need a gradient: for float32 or float64
    arrays of one shape the two products are one pass that reads ``factor``
    once (the same bits as two products). A factor that is the broadcast 1
    (``loss.sum()``'s gradient) makes ``a`` and ``b`` the results, as
    ``mul``'s ``unit`` does for one product.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.elementwise import mul_pair
    >>> mul_pair(oxmera.tensor([2.0, 3.0]), oxmera.tensor([1.0, 2.0]), oxmera.tensor([4.0, 5.0]))
    mul_pair(first=tensor([2., 6.], dtype=float32), second=tensor([ 8., 15.], dtype=float32))
    """
    if _kernels.float_pair(factor, a) and _kernels.float_pair(factor, b):
        return _kernels.mul_pair(factor, a, b)
    return np.multiply(factor, a), np.multiply(factor, b)


@mul_pair.vjp
def _(ctx, grads, factor, a, b):
    grad_first, grad_second = grads
    needs = ctx.needs_input_grad
    return (grad_first * cj(a) + grad_second * cj(b) if needs[0] else None,
            grad_first * cj(factor) if needs[1] else None,
            grad_second * cj(factor) if needs[2] else None)


@op("div", complex_inputs=True, inputs=2, promote=True, float_only=True,
    operators=("__truediv__", "__rtruediv__"), quiet=True, numpy=np.true_divide,
    save={"input": ("other",), "other": ("input", "other")}, replay=True)
def _true_divide(input, other):
    """True division, the recorded op behind ``div`` without a rounding mode.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.elementwise import _true_divide
    >>> _true_divide(oxmera.tensor([1.0, 3.0]), 2)
    tensor([0.5, 1.5], dtype=float32)
    """
    return np.true_divide(input, other)


def div(input, other, *, rounding_mode=None):
    """Divide elementwise, with broadcasting.

    ``rounding_mode=None`` (default): true division; integers give the
    default float dtype. ``"trunc"``: the quotient rounded toward zero (C's
    integer division); ``"floor"``: rounded down (Python's ``//``, as
    :func:`oxmera.floor_divide`). With a rounding mode integers stay integers (a
    division by zero raises) and the gradient is zero, as in PyTorch.
    ``divide`` is the same function.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.div(oxmera.tensor([1.0, 3.0]), 2)
    tensor([0.5, 1.5], dtype=float32)
    >>> oxmera.div(oxmera.tensor([-7, 7]), 2, rounding_mode="trunc")
    tensor([-3,  3], dtype=int64)
    >>> oxmera.tensor([-7.0, 7.0]).div(2, rounding_mode="floor")
    tensor([-4.,  3.], dtype=float32)
    """
    if rounding_mode is None:
        return _true_divide(input, other)
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        if result_type(input, other).kind == "f":
            # torch divides, then truncates (not floor-corrects): the same
            # rounding of the quotient as its kernel.
            return trunc(_true_divide(input, other))
        # Integers: floor division is one too low where the exact quotient
        # is negative and not whole.
        quotient = floor_divide(input, other)
        behind = logical_and(ne(remainder(input, other), 0),
                             ne(lt(input, 0), lt(other, 0)))
        return where(behind, quotient + 1, quotient)
    raise OpError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found {rounding_mode!r}")


divide = div


@_true_divide.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    if grad.dtype.kind == "c":
        other = cj(other)
        grad_input = grad / other
        return (grad_input if needs[0] else None,
                -grad_input * cj(input) / other if needs[1] else None)
    grad_input = grad / other if needs[0] or needs[1] else None
    return (grad_input if needs[0] else None,
            -grad_input * input / other if needs[1] else None)


def true_divide(input, other):
    """Alias of :func:`div`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.true_divide(oxmera.tensor([3.0]), 2.0)
    tensor([1.5], dtype=float32)
    """
    return _true_divide(input, other)


def _integer_division_check(input, other, opname):
    # NumPy gives 0 (and a warning) for an integer division by zero; PyTorch
    # raises, and so do we (a ValueError, which the core reports with the op's
    # name and the shapes, as a RuntimeError too).
    if np.result_type(input, other).kind == "b":
        raise TypeError(f"{opname}(): not implemented for bool tensors")
    if np.asarray(other).dtype.kind in "iu" and np.asarray(input).dtype.kind in "iu":
        if not np.all(other):
            raise ValueError("integer division by zero")


@op(inputs=2, save=(), promote=True, method=True,
    operators=("__floordiv__", "__rfloordiv__"), quiet=True)
def floor_divide(input, other):
    """Divide and round down (toward minus infinity), elementwise, like Python's ``//``.

    Integers stay integers (an integer division by zero raises); floats give
    ``inf`` or ``nan`` where ``other`` is 0. The result is piecewise constant,
    so its gradient is zero (PyTorch raises in backward instead; here a float
    result still requires grad and backpropagates zeros).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.floor_divide(oxmera.tensor([7, -7]), 2)
    tensor([ 3, -4], dtype=int64)
    >>> oxmera.tensor([7.5, -7.5]) // 2
    tensor([ 3., -4.], dtype=float32)
    """
    _integer_division_check(input, other, "floor_divide")
    return np.floor_divide(input, other)


@floor_divide.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    return (zeros_like(grad) if needs[0] else None,
            zeros_like(grad) if needs[1] else None)


@op(inputs=2, promote=True, method=True, operators=("__mod__", "__rmod__"), quiet=True)
def remainder(input, other):
    """Remainder of floor division, elementwise: it has the sign of ``other``.

    ``remainder(x, y) == x - y * floor_divide(x, y)``, like Python's ``%``
    and ``torch.remainder``. The gradient is 1 with respect to ``input`` and
    ``-floor_divide(input, other)`` with respect to ``other``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.remainder(oxmera.tensor([5, -5]), 3)
    tensor([2, 1], dtype=int64)
    >>> oxmera.tensor([5.0, -5.0]) % -3
    tensor([-1., -2.], dtype=float32)
    """
    _integer_division_check(input, other, "remainder")
    return np.remainder(input, other)


@remainder.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    return (grad if needs[0] else None,
            -grad * floor_divide(input, other) if needs[1] else None)


@op(inputs=2, promote=True, method=True, operators=("__pow__", "__rpow__"),
    complex_inputs=True, quiet=True,
    numpy=np.power, replay=True)
def pow(input, exponent):
    """Raise ``input`` to ``exponent`` elementwise.

    Gradients follow PyTorch: with respect to ``input`` it is
    ``exponent * input ** (exponent - 1)``, and exactly 0 where the exponent
    is 0 (also at ``input == 0``); with respect to a tensor exponent it is
    ``out * log(input)``: 0 where ``input == 0`` and ``exponent >= 0`` (the
    limit), ``-inf`` where ``input == 0`` and ``exponent < 0``, ``nan`` for a
    negative base.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.pow(oxmera.tensor([2.0, 3.0]), 2)
    tensor([4., 9.], dtype=float32)
    """
    return np.power(input, exponent)


@pow.vjp
def _(ctx, grad, input, exponent):
    needs = ctx.needs_input_grad
    grad_input = grad_exponent = None
    if grad.dtype.kind == "c":
        # Complex: grad times the conjugated derivatives (no special cases at 0).
        if needs[0]:
            grad_input = grad * cj(exponent * input ** (exponent - 1))
        if needs[1]:
            log_input = (cmath.log(input) if isinstance(input, (int, float, complex))
                         else log(input))
            grad_exponent = grad * cj(input ** exponent * log_input)
        return grad_input, grad_exponent
    if needs[0]:
        if isinstance(exponent, (int, float)):
            grad_input = (zeros_like(grad) if exponent == 0
                          else grad * exponent * input ** (exponent - 1))
        elif not needs[1] and exponent.ndim == 0 and grad.dtype == input.dtype:
            # ``x ** 2`` and its kind (a constant number exponent, here as a
            # 0-d tensor): one op instead of seven (decided by dtypes and
            # shapes, so a replayed VJP stays right for every exponent).
            grad_input = pow_backward(grad, input, exponent)
        else:
            grad_input = _pow_slope(grad, input, exponent)
    if needs[1]:
        if isinstance(input, (int, float)):
            # A number base makes log(base) a constant: take it in double
            # precision (as a tensor it would be float32, the default dtype).
            if input == 0:
                # 0 ** y is flat for y >= 0; for y < 0 its slope is
                # inf * log(0) = -inf, so the gradient is grad * -inf, written
                # -grad / 0 (the same values, nan where grad is 0, but division
                # is the op that does not warn about it).
                grad_exponent = where(ge(exponent, 0), 0.0, -grad / 0.0)
            else:
                log_input = math.log(input) if input > 0 else math.nan
                grad_exponent = grad * input ** exponent * log_input
        else:
            flat = logical_and(eq(input, 0), ge(exponent, 0))
            safe = where(flat, 1.0, input)
            if safe.dtype != grad.dtype:
                # An integer base: take its log in the dtype the forward used
                # (the output's), not in the default float dtype.
                safe = safe.to(grad.dtype)
            grad_exponent = where(flat, 0.0, grad) * input ** exponent * log(safe)
    return grad_input, grad_exponent


@op(save=(), method=True, operators=("__neg__",), numpy=np.negative, replay=True)
def neg(input):
    """Negate elementwise.

    Examples
    --------
    >>> import oxmera
    >>> -oxmera.tensor([1.0, -2.0])
    tensor([-1.,  2.], dtype=float32)
    """
    if input.dtype == np.bool_:
        raise TypeError("neg(): negation of a bool tensor is not supported; use logical_not")
    return np.negative(input)


@neg.vjp
def _(ctx, grad, input):
    return -grad


@op(complex_inputs=True, save=(), save_output=True, float_only=True, method=True, quiet=True)
def reciprocal(input):
    """``1 / x``, elementwise (integers give the default float dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.reciprocal(oxmera.tensor([2.0, -4.0]))
    tensor([ 0.5 , -0.25], dtype=float32)
    """
    return np.reciprocal(input)


@reciprocal.vjp
def _(ctx, grad, input):
    out = ctx.output
    if grad.dtype.kind == "c":
        return -grad * cj(out * out)
    return -grad * out * out


def square(input):
    """``x * x``, elementwise: ``pow(input, 2)``, as in PyTorch (bool gives int64).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.square(oxmera.tensor([-1.5, 2.0]))
    tensor([2.25, 4.  ], dtype=float32)
    """
    return pow(input, 2)


# -- unary math ----------------------------------------------------------------

@op(save=(), save_output=True, float_only=True, method=True, quiet=True,
    complex_inputs=True, numpy=_kernels.exp, replay=True)
def exp(input):
    """Exponential, elementwise.

    float32 is computed in double and rounded once, within one ulp of the
    exact value (NumPy's own float32 loop: within 3, and no faster); other
    dtypes are NumPy's ``exp``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.exp(oxmera.tensor([0.0]))
    tensor([1.], dtype=float32)
    """
    return _kernels.exp(input)


@exp.vjp
def _(ctx, grad, input):
    return grad * cj(ctx.output)


@op(complex_inputs=True, save=(), save_output=True, float_only=True, method=True, quiet=True)
def exp2(input):
    """``2 ** x``, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.exp2(oxmera.tensor([3.0, -1.0]))
    tensor([8. , 0.5], dtype=float32)
    """
    return np.exp2(input)


@exp2.vjp
def _(ctx, grad, input):
    return grad * cj(ctx.output) * _LN2


@op(complex_inputs=True, save=(), save_output=True, float_only=True, method=True, quiet=True)
def expm1(input):
    """``exp(x) - 1``, elementwise, accurate for ``x`` near 0.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.expm1(oxmera.tensor([1e-10], dtype=oxmera.float64))
    tensor([1.e-10], dtype=float64)
    """
    return np.expm1(input)


@expm1.vjp
def _(ctx, grad, input):
    return grad * cj(ctx.output + 1)


@op(complex_inputs=True, float_only=True, method=True, quiet=True, numpy=np.log, replay=True)
def log(input):
    """Natural logarithm, elementwise (``-inf`` at 0, ``nan`` below).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.log(oxmera.tensor([1.0]))
    tensor([0.], dtype=float32)
    """
    return np.log(input)


@log.vjp
def _(ctx, grad, input):
    return grad / cj(input)


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def log2(input):
    """Base-2 logarithm, elementwise (``-inf`` at 0, ``nan`` below).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.log2(oxmera.tensor([8.0, 0.5]))
    tensor([ 3., -1.], dtype=float32)
    """
    return np.log2(input)


@log2.vjp
def _(ctx, grad, input):
    return grad / cj(input * _LN2)


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def log10(input):
    """Base-10 logarithm, elementwise (``-inf`` at 0, ``nan`` below).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.log10(oxmera.tensor([100.0, 0.1]))
    tensor([ 2., -1.], dtype=float32)
    """
    return np.log10(input)


@log10.vjp
def _(ctx, grad, input):
    return grad / cj(input * _LN10)


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def log1p(input):
    """``log(1 + x)``, elementwise, accurate for ``x`` near 0.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.log1p(oxmera.tensor([1e-10], dtype=oxmera.float64))
    tensor([1.e-10], dtype=float64)
    """
    return np.log1p(input)


@log1p.vjp
def _(ctx, grad, input):
    return grad / cj(input + 1)


@op(save=(), save_output=True, float_only=True, method=True, quiet=True,
    complex_inputs=True, numpy=np.sqrt, replay=True)
def sqrt(input):
    """Square root, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sqrt(oxmera.tensor([4.0]))
    tensor([2.], dtype=float32)
    """
    return np.sqrt(input)


@sqrt.vjp
def _(ctx, grad, input):
    return grad / cj(ctx.output * 2)


@op(complex_inputs=True, save=(), save_output=True, float_only=True, method=True, quiet=True,
    replay=True)
def rsqrt(input):
    """``1 / sqrt(x)``, elementwise (``inf`` at 0, ``nan`` below).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.rsqrt(oxmera.tensor([4.0, 0.25]))
    tensor([0.5, 2. ], dtype=float32)
    """
    return np.reciprocal(np.sqrt(input))


@rsqrt.vjp
def _(ctx, grad, input):
    out = ctx.output
    return grad * cj(out * out * out) * -0.5


@op(complex_inputs=True, float_only=True, method=True, numpy=np.sin, replay=True)
def sin(input):
    """Sine, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sin(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """
    return np.sin(input)


@sin.vjp
def _(ctx, grad, input):
    return grad * cj(cos(input))


@op(complex_inputs=True, float_only=True, method=True, numpy=np.cos, replay=True)
def cos(input):
    """Cosine, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cos(oxmera.tensor([0.0]))
    tensor([1.], dtype=float32)
    """
    return np.cos(input)


@cos.vjp
def _(ctx, grad, input):
    return -grad * cj(sin(input))


@op(complex_inputs=True, save=(), save_output=True, float_only=True, method=True)
def tan(input):
    """Tangent, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tan(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """
    return np.tan(input)


@tan.vjp
def _(ctx, grad, input):
    out = ctx.output
    return grad * cj(out * out + 1)


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def asin(input):
    """Inverse sine, elementwise (``nan`` outside [-1, 1]); ``arcsin`` is the same op.

    The gradient ``1 / sqrt(1 - x**2)`` is ``inf`` at -1 and 1.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.asin(oxmera.tensor([0.0, 1.0]))
    tensor([0.    , 1.5708], dtype=float32)
    """
    return np.arcsin(input)


@asin.vjp
def _(ctx, grad, input):
    return grad * cj(rsqrt(1 - input * input))


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def acos(input):
    """Inverse cosine, elementwise (``nan`` outside [-1, 1]); ``arccos`` is the same op.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.acos(oxmera.tensor([1.0, 0.0]))
    tensor([0.    , 1.5708], dtype=float32)
    """
    return np.arccos(input)


@acos.vjp
def _(ctx, grad, input):
    return -grad * cj(rsqrt(1 - input * input))


@op(complex_inputs=True, float_only=True, method=True)
def atan(input):
    """Inverse tangent, elementwise; ``arctan`` is the same op.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.atan(oxmera.tensor([0.0, 1.0]))
    tensor([0.    , 0.7854], dtype=float32)
    """
    return np.arctan(input)


@atan.vjp
def _(ctx, grad, input):
    return grad / cj(input * input + 1)


arcsin = asin
arccos = acos
arctan = atan


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def sinh(input):
    """Hyperbolic sine, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sinh(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """
    return np.sinh(input)


@sinh.vjp
def _(ctx, grad, input):
    return grad * cj(cosh(input))


@op(complex_inputs=True, float_only=True, method=True, quiet=True)
def cosh(input):
    """Hyperbolic cosine, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.cosh(oxmera.tensor([0.0]))
    tensor([1.], dtype=float32)
    """
    return np.cosh(input)


@cosh.vjp
def _(ctx, grad, input):
    return grad * cj(sinh(input))


@op(complex_inputs=True, save=(), save_output=True, float_only=True, method=True, numpy=np.tanh,
    replay=True)
def tanh(input):
    """Hyperbolic tangent, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tanh(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """
    return np.tanh(input)


@tanh.vjp
def _(ctx, grad, input):
    if grad.dtype.kind == "c":
        out = ctx.output
        return grad * cj(1 - out * out)
    return tanh_backward(grad, ctx.output)


# tanh and sigmoid are common activations: their VJPs are one op each rather
# than three (the speed reason for a fused VJP: a third of the dispatches),
# and like every op they have VJPs of their own, so higher orders still work.

@op(inputs=2, save=("grad", "output"))
def tanh_backward(grad, output):
    """The VJP of tanh from its output: ``grad * (1 - output**2)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.elementwise import tanh_backward
    >>> tanh_backward(oxmera.tensor([1.0, 2.0]), oxmera.tensor([0.5, 0.0]))
    tensor([0.75, 2.  ], dtype=float32)
    """
    if _kernels.float_pair(grad, output):
        return _kernels.tanh_backward(grad, output)     # the same roundings, one pass
    return grad * (1 - output * output)


@tanh_backward.vjp
def _(ctx, grad_of_grad, grad, output):
    needs = ctx.needs_input_grad
    return (tanh_backward(grad_of_grad, output) if needs[0] else None,
            -2 * grad_of_grad * grad * output if needs[1] else None)


@op(complex_inputs=True, save=(), save_output=True, float_only=True, method=True, replay=True)
def sigmoid(input):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, elementwise, stable for large ``|x|``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sigmoid(oxmera.tensor([0.0]))
    tensor([0.5], dtype=float32)
    """
    if input.dtype.kind == "c":
        # No stable form for complex z (the real one compares x with 0).
        return 1 / (1 + np.exp(-input))
    return stable_sigmoid(input)


def stable_sigmoid(x):
    """Sigmoid of an array as ``exp(min(x, 0)) / (1 + exp(-|x|))`` (the recurrent gates share it).

    Only exp of non-positive numbers, so nothing overflows, and either
    branch's exact form without np.where (whose float select made it four
    times slower; sigmoid is the LSTM and GRU gates' hot spot). float32 and
    float64 go through a compiled kernel (one exp an element, not two, in one
    pass); strided ones (a gate's slice of the fused projection) through it
    on a dense copy.
    """
    out = _kernels.sigmoid(x)
    if out is not None:
        return out
    x = np.asarray(x)                   # (a gate op may get a Python number)
    if x.dtype.char in "fd" and x.dtype.isnative:
        return _kernels.sigmoid(np.copy(x, order="K"))
    denominator = np.exp(-np.abs(x))
    denominator += 1
    return np.asarray(np.exp(np.minimum(x, 0)) / denominator, dtype=x.dtype)


@sigmoid.vjp
def _(ctx, grad, input):
    if grad.dtype.kind == "c":
        out = ctx.output
        return grad * cj(out * (1 - out))
    return sigmoid_backward(grad, ctx.output)


@op(inputs=2, save=("grad", "output"))
def sigmoid_backward(grad, output):
    """The VJP of sigmoid from its output: ``grad * output * (1 - output)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.elementwise import sigmoid_backward
    >>> sigmoid_backward(oxmera.tensor([1.0, 2.0]), oxmera.tensor([0.5, 0.25]))
    tensor([0.25 , 0.375], dtype=float32)
    """
    if _kernels.float_pair(grad, output):
        return _kernels.sigmoid_backward(grad, output)  # the same roundings, one pass
    return grad * output * (1 - output)


@sigmoid_backward.vjp
def _(ctx, grad_of_grad, grad, output):
    needs = ctx.needs_input_grad
    return (sigmoid_backward(grad_of_grad, output) if needs[0] else None,
            grad_of_grad * grad * (1 - 2 * output) if needs[1] else None)


# The error function. NumPy has none and SciPy is not a dependency: a compiled
# kernel (oxmera/_core/_kernels.h) computes it, libm's erf for float64 and a
# vectorized double-precision formula for float32 (about 10 times faster than
# SciPy's loop: gelu evaluates it on every activation of a transformer).


@op(float_only=True, method=True)
def erf(input):
    """The error function ``2 / sqrt(pi) * integral from 0 to x of exp(-t**2) dt``.

    float64 within one ulp (the C library's ``erf``); float32 within one ulp
    of the float64 value rounded (almost always equal to it); float16 is that
    float64 value rounded.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.erf(oxmera.tensor([0.0, 1.0, -3.0]))
    tensor([ 0.    ,  0.8427, -1.    ], dtype=float32)
    """
    return erf_values(input)


def erf_values(input):
    """erf of a floating NumPy array, in its dtype (``erf``'s forward; also ``gelu``'s)."""
    if input.dtype == np.float32 or input.dtype == np.float64:
        return _kernels.erf(input)
    # float16 (and non-native byte orders): through float64, rounded once
    return _kernels.erf(np.asarray(input, np.float64)).astype(input.dtype, copy=False)


@erf.vjp
def _(ctx, grad, input):
    return grad * exp(-(input * input)) * _TWO_OVER_SQRT_PI


@op(save=(), save_output=True, method=True, replay=True)
def relu(input):
    """Rectified linear unit ``max(x, 0)``, elementwise.

    nan stays nan and -0.0 stays -0.0, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.relu(oxmera.tensor([-1.0, 2.0]))
    tensor([0., 2.], dtype=float32)
    """
    out = _kernels.relu(input)          # (a select: ~5x NumPy's maximum(x, 0))
    if out is not None:
        return out
    if input.dtype == np.bool_:
        raise TypeError("relu(): not implemented for bool tensors")
    if input.dtype.kind == "c":        # (inline: relu is a hot path)
        ordered_only(input, "relu")
    if input.dtype.char in "fd" and input.dtype.isnative:
        # Strided floats (every other element, say): the kernel on a dense
        # copy, in its layout (np.where's select is 7x slower)
        return _kernels.relu(np.copy(input, order="K"))
    # (where x < 0, not maximum: PyTorch's -0.0 and nan, as the kernel's)
    return np.where(input < 0, np.zeros((), input.dtype), input)


@relu.vjp
def _(ctx, grad, input):
    return relu_backward(grad, ctx.output)


# One op instead of two (a comparison and a where): relu is in every MLP.
@op(inputs=2, save=("output",), quiet=True)
def relu_backward(grad, output):
    """The VJP of relu from its output: 0 where ``output <= 0``, else ``grad``.

    Selects rather than multiplies by the mask: an infinite incoming gradient
    times 0 would be nan where relu is flat. A nan output passes ``grad`` on,
    as PyTorch's ``threshold_backward`` does.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.elementwise import relu_backward
    >>> relu_backward(oxmera.tensor([5.0, 5.0]), oxmera.tensor([0.0, 2.0]))
    tensor([0., 5.], dtype=float32)
    """
    if _kernels.float_pair(grad, output):
        return _kernels.relu_backward(grad, output)     # the select, in one pass
    # A product with the mask is five times faster than np.where; it differs
    # only where grad is inf or nan (times 0 gives nan), so it is checked and,
    # in that rare case, redone by selection.
    keep = ~(output <= 0)
    out = np.multiply(grad, keep)
    if not np.isfinite(out).all():
        out = np.where(keep, grad, 0)
    return out.astype(grad.dtype, copy=False)


@relu_backward.vjp
def _(ctx, grad_of_grad, grad, output):
    # piecewise constant in the output: no gradient for it
    return relu_backward(grad_of_grad, output) if ctx.needs_input_grad[0] else None, None


@op(method=True, operators=("__abs__",), numpy=np.abs, replay=True)
def abs(input):
    """Absolute value, elementwise (gradient ``sign(x)``, 0 at 0).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.abs(oxmera.tensor([-1.5, 2.0]))
    tensor([1.5, 2. ], dtype=float32)
    """
    return np.abs(input)


@abs.vjp
def _(ctx, grad, input):
    if input.dtype.kind == "c":
        return grad * complex_sgn(input)
    return grad * sign(input)


@op(save=(), method=True)
def sign(input):
    """Sign (-1, 0 or 1), elementwise; its gradient is zero.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sign(oxmera.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.], dtype=float32)
    """
    if input.dtype == np.bool_:
        # NumPy has no bool loop for sign; a bool is its own sign (PyTorch).
        return input.copy()
    if input.dtype.kind == "c":
        raise RuntimeError("Unlike NumPy, sign is not intended to support complex numbers. "
                           "Please use sgn instead.")
    return np.sign(input)


@sign.vjp
def _(ctx, grad, input):
    return zeros_like(grad)     # not grad * 0, which is nan where grad is inf


# -- binary math --------------------------------------------------------------------

@op(inputs=2, promote=True, float_only=True, method=True)
def atan2(input, other):
    """Angle of the point ``(other, input)``, in ``[-pi, pi]``, elementwise.

    ``arctan2`` is the same op. The gradient is ``(other, -input) / (input**2
    + other**2)``, taken as 0 at the origin (as PyTorch does).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.atan2(oxmera.tensor([1.0, 1.0]), oxmera.tensor([1.0, -1.0]))
    tensor([0.7854, 2.3562], dtype=float32)
    """
    return np.arctan2(input, other)


@atan2.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    squared = input * input + other * other
    origin = eq(squared, 0)
    scale = where(origin, 0.0, grad / where(origin, 1.0, squared))
    return (scale * other if needs[0] else None,
            -scale * input if needs[1] else None)


arctan2 = atan2


def _extreme_vjp(ctx, grad, input, other, loses):
    # The input that loses gets 0; a tie splits the gradient evenly (the two
    # halves add up to the gradient once). Where either is nan neither
    # compares as losing, so both get the whole gradient, as in PyTorch.
    needs = ctx.needs_input_grad
    tie = eq(input, other)
    half = grad * 0.5
    return (where(loses(input, other), 0.0, where(tie, half, grad)) if needs[0] else None,
            where(loses(other, input), 0.0, where(tie, half, grad)) if needs[1] else None)


@op(complex_inputs=True, inputs=2, promote=True, method=True, replay=True)
def maximum(input, other):
    """The larger of ``input`` and ``other``, elementwise (nan if either is nan).

    Where they tie, each gets half the gradient.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.maximum(oxmera.tensor([1.0, 5.0]), oxmera.tensor([3.0, 2.0]))
    tensor([3., 5.], dtype=float32)
    """
    ordered_only(input, "maximum")
    ordered_only(other, "maximum")
    return np.maximum(input, other)


@maximum.vjp
def _(ctx, grad, input, other):
    return _extreme_vjp(ctx, grad, input, other, lt)


@op(complex_inputs=True, inputs=2, promote=True, method=True, replay=True)
def minimum(input, other):
    """The smaller of ``input`` and ``other``, elementwise (nan if either is nan).

    Where they tie, each gets half the gradient.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.minimum(oxmera.tensor([1.0, 5.0]), oxmera.tensor([3.0, 2.0]))
    tensor([1., 2.], dtype=float32)
    """
    ordered_only(input, "minimum")
    ordered_only(other, "minimum")
    return np.minimum(input, other)


@minimum.vjp
def _(ctx, grad, input, other):
    return _extreme_vjp(ctx, grad, input, other, gt)


# clamp is its own primitive rather than minimum(maximum(...)): at a bound
# PyTorch gives the input the whole gradient, where maximum would split it.
@op(complex_inputs=True, inputs=3, promote=True, method=True, replay=True)
def clamp(input, min=None, max=None):
    """Limit ``input`` to ``[min, max]``, elementwise; ``clip`` is the same op.

    ``min`` and ``max`` are numbers or tensors (broadcasting), either may be
    None, not both. Where ``min > max`` the result is ``max``. Gradients
    follow PyTorch: ``input`` gets the gradient where ``min <= input <= max``
    (bounds included), ``min`` where ``input < min`` (and ``min < max``),
    ``max`` where ``input > max`` (or ``max < min``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.clamp(oxmera.tensor([-2.0, 0.5, 3.0]), min=-1.0, max=1.0)
    tensor([-1. ,  0.5,  1. ], dtype=float32)
    >>> oxmera.tensor([1, 5, 9]).clip(max=oxmera.tensor([4, 4, 10]))
    tensor([1, 4, 9], dtype=int64)
    """
    ordered_only(input, "clamp")
    if min is None and max is None:
        raise ValueError("at least one of 'min' or 'max' must not be None")
    out = input
    if min is not None:
        out = np.maximum(out, min)
    if max is not None:
        out = np.minimum(out, max)
    return out


@clamp.vjp
def _(ctx, grad, input, min=None, max=None):
    needs = ctx.needs_input_grad
    grad_input = grad_min = grad_max = None
    if min is not None and max is not None:
        if needs[0]:
            grad_input = where(logical_and(ge(input, min), le(input, max)), grad, 0.0)
        if needs[1]:
            grad_min = where(logical_and(lt(input, min), lt(min, max)), grad, 0.0)
        if needs[2]:
            grad_max = where(logical_or(gt(input, max), lt(max, min)), grad, 0.0)
    elif min is not None:
        if needs[0]:
            grad_input = where(ge(input, min), grad, 0.0)
        if needs[1]:
            grad_min = where(lt(input, min), grad, 0.0)
    else:
        if needs[0]:
            grad_input = where(le(input, max), grad, 0.0)
        if needs[2]:
            grad_max = where(gt(input, max), grad, 0.0)
    return grad_input, grad_min, grad_max


clip = clamp


# lerp is a primitive (not input + weight * (end - input)): one node instead
# of three, and PyTorch's two-sided formula, exact at both ends (weight 1
# gives ``end`` exactly).
@op(complex_inputs=True, inputs=3, promote=True, float_only=True, method=True)
def lerp(input, end, weight):
    """Linear interpolation ``input + weight * (end - input)``, elementwise.

    ``weight`` is a number or a tensor; all three broadcast and are
    differentiable.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.lerp(oxmera.tensor([0.0, 1.0]), oxmera.tensor([10.0, 3.0]), 0.25)
    tensor([2.5, 1.5], dtype=float32)
    """
    difference = np.subtract(end, input)
    near_start = np.abs(weight) < 0.5
    if isinstance(weight, (int, float)):
        if near_start:
            return input + weight * difference
        return end - difference * (1 - weight)
    return np.where(near_start, input + weight * difference, end - difference * (1 - weight))


@lerp.vjp
def _(ctx, grad, input, end, weight):
    needs = ctx.needs_input_grad
    if grad.dtype.kind == "c":
        return (grad * cj(1 - weight) if needs[0] else None,
                grad * cj(weight) if needs[1] else None,
                grad * cj(end - input) if needs[2] else None)
    return (grad * (1 - weight) if needs[0] else None,
            grad * weight if needs[1] else None,
            grad * (end - input) if needs[2] else None)


# hypot and logaddexp are primitives for stability: NumPy's forwards neither
# overflow nor underflow where the composed formulas would.
@op(inputs=2, save_output=True, promote=True, float_only=True, method=True)
def hypot(input, other):
    """``sqrt(input**2 + other**2)``, elementwise, without overflow.

    The gradient ``(input, other) / out`` is nan at the origin, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.hypot(oxmera.tensor([3.0, 3e30]), oxmera.tensor([4.0, 4e30]))
    tensor([5.e+00, 5.e+30], dtype=float32)
    """
    return np.hypot(input, other)


@hypot.vjp
def _(ctx, grad, input, other):
    # The product first, then the division: at the origin that is 0 / 0
    # (nan, as in PyTorch) rather than 0 * inf, which NumPy warns about.
    needs = ctx.needs_input_grad
    out = ctx.output
    return (grad * input / out if needs[0] else None,
            grad * other / out if needs[1] else None)


@op(inputs=2, promote=True, float_only=True, method=True)
def logaddexp(input, other):
    """``log(exp(input) + exp(other))``, elementwise, stable for any magnitude.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.logaddexp(oxmera.tensor([1e4, 0.0]), oxmera.tensor([1e4, 0.0]))
    tensor([1.0001e+04, 6.9315e-01], dtype=float32)
    """
    return np.logaddexp(input, other)


@logaddexp.vjp
def _(ctx, grad, input, other):
    # exp(input - out) written as a sigmoid of the difference: never overflows.
    needs = ctx.needs_input_grad
    return (grad * sigmoid(input - other) if needs[0] else None,
            grad * sigmoid(other - input) if needs[1] else None)


# -- rounding and cleaning up ------------------------------------------------------------
#
# The rounding ops are piecewise constant: their gradient is zero, but, as in
# PyTorch, a float result of an input that requires grad still requires grad
# (so a graph through them runs, and gives zeros). Integer inputs are returned
# unchanged (a copy), bool inputs are rejected, as PyTorch does.

def _rounding(name, ufunc):
    def forward(input):
        if input.dtype == np.bool_:
            raise TypeError(f"{name}(): not implemented for bool tensors")
        ordered_only(input, name)
        if input.dtype.kind != "f":
            return input.copy()
        return ufunc(input)
    forward.__name__ = name
    forward.__qualname__ = name
    forward.__module__ = __name__
    values = np.array([-1.5, -0.5, 0.5, 1.7])
    forward.__doc__ = (
        f"``{ufunc.__name__}`` of each element (integers unchanged); its gradient is zero.\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> oxmera.{name}(oxmera.tensor({values.tolist()}))\n"
        f"tensor({np.array2string(ufunc(values).astype(np.float32), separator=', ')}, "
        f"dtype=float32)\n")
    public = op(name, save=(), method=True)(forward)
    public.vjp(_zero_vjp)
    return public


def _zero_vjp(ctx, grad, *args, **kwargs):
    return zeros_like(grad)     # not grad * 0, which is nan where grad is inf


floor = _rounding("floor", np.floor)
ceil = _rounding("ceil", np.ceil)
trunc = _rounding("trunc", np.trunc)


@op(save=(), method=True, quiet=True)
def round(input, *, decimals=0):
    """Round to ``decimals`` decimal places, halves to even, elementwise.

    Like ``torch.round``: ``decimals`` may be negative (round to tens,
    hundreds...). Integer tensors are returned unchanged for ``decimals >=
    0``; the gradient is zero.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.round(oxmera.tensor([0.5, 1.5, 2.567]))
    tensor([0., 2., 3.], dtype=float32)
    >>> oxmera.tensor([2.567, 1234.5]).round(decimals=2)
    tensor([   2.57, 1234.5 ], dtype=float32)
    """
    if input.dtype == np.bool_:
        raise TypeError("round(): not implemented for bool tensors")
    if input.dtype.kind != "f" and decimals >= 0:
        return input.copy()
    return np.round(input, decimals)


round.vjp(_zero_vjp)


@op(method=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace nan, +inf and -inf by finite numbers, elementwise.

    By default nan becomes 0 and the infinities the largest and smallest
    numbers of the dtype. The gradient passes through finite elements and is
    zero where an element was replaced.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([float("nan"), float("inf"), -1.5])
    >>> oxmera.nan_to_num(x, posinf=9.0)
    tensor([ 0. ,  9. , -1.5], dtype=float32)
    """
    return np.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


@nan_to_num.vjp
def _(ctx, grad, input, nan=0.0, posinf=None, neginf=None):
    return where(isfinite(input), grad, 0.0)


# -- comparisons (bool results, never recorded) -----------------------------------

def _compare(name, ufunc, dunder, reflected=None):
    def forward(input, other):
        if name not in ("eq", "ne"):
            ordered_only(input, name)
            ordered_only(other, name)
        return ufunc(input, other)
    forward.__name__ = name
    forward.__doc__ = (
        f"Elementwise ``{name}`` comparison with broadcasting; a bool tensor, no gradient.\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> oxmera.{name}(oxmera.tensor([1.0, 2.0]), 1.5)\n"
        f"tensor({np.array2string(ufunc(np.array([1.0, 2.0]), 1.5), separator=', ')}, "
        f"dtype=bool)\n")
    forward.__module__ = __name__
    public = op(name, inputs=2, differentiable=False, promote=True, method=True,
                complex_inputs=True)(forward)
    _registry.add_tensor_attribute(dunder, _comparison_operator(public, dunder))
    return public


def _comparison_operator(public, dunder):
    # ``t == "text"`` or ``t == None`` is not a tensor comparison: let Python
    # fall back (False for ==), as it does for other unrelated types.
    def operator(self, other):
        if other is None or isinstance(other, (str, bytes, dict, set)):
            return NotImplemented
        return public(self, other)
    operator.__name__ = dunder
    return operator


eq = _compare("eq", np.equal, "__eq__")
ne = _compare("ne", np.not_equal, "__ne__")
lt = _compare("lt", np.less, "__lt__")
le = _compare("le", np.less_equal, "__le__")
gt = _compare("gt", np.greater, "__gt__")
ge = _compare("ge", np.greater_equal, "__ge__")


@op("where", inputs=3, save=("condition",), promote=False, method=False, replay=True)
def _where_op(condition, input, other):
    """The recorded op behind :func:`where` (its three-argument form).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.elementwise import _where_op
    >>> _where_op(oxmera.tensor([True, False]), oxmera.tensor([1.0, 2.0]), 0.0)
    tensor([1., 0.], dtype=float32)
    """
    if np.asarray(condition).dtype != np.bool_:
        # As PyTorch: a float or int condition is almost always a mistake
        # (NumPy would take it as "nonzero").
        raise TypeError(f"where(): expected condition to be a bool tensor, got dtype "
                        f"{np.asarray(condition).dtype}; compare first (e.g. x > 0)")
    dtype = result_type(input, other)
    return np.where(condition, input, other).astype(dtype, copy=False)


@_where_op.vjp
def _(ctx, grad, condition, input, other):
    needs = ctx.needs_input_grad
    # A literal 0, not grad * 0: the side not picked gets exactly 0 even where
    # the incoming gradient is inf or nan.
    return (None,
            where(condition, grad, 0.0) if needs[1] else None,
            where(condition, 0.0, grad) if needs[2] else None)


def where(condition, input=None, other=None):
    """Pick ``input`` where ``condition`` holds, else ``other`` (broadcasting).

    With ``condition`` alone, the indices where it is nonzero, one int64
    tensor per dim: ``nonzero(condition, as_tuple=True)``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> c = oxmera.tensor([True, False])
    >>> oxmera.where(c, oxmera.tensor([1.0, 2.0]), 0.0)
    tensor([1., 0.], dtype=float32)
    >>> oxmera.where(oxmera.tensor([[0.0, 1.0], [2.0, 0.0]]) > 0)
    (tensor([0, 1], dtype=int64), tensor([1, 0], dtype=int64))
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        missing = "input" if input is None else "other"
        raise TypeError(f"where(): missing the {missing} argument: give both input and other, "
                        f"or only the condition (for the indices where it holds)")
    return _where_op(condition, input, other)


def _where_method(self, condition, other):
    """``where(condition, self, other)``: PyTorch's ``Tensor.where``."""
    return where(condition, self, other)


def _pow_slope(grad, input, exponent):
    """``grad * exponent * input ** (exponent - 1)``, exactly 0 where ``exponent == 0``."""
    # x ** 0 is constant: its slope is exactly 0, also at x == 0 or x == inf
    # (where x ** -1 would make it 0 * inf) and under an infinite incoming
    # gradient. So both factors are selected (not multiplied by 0) there, and
    # the base replaced by 1: nothing infinite is computed, in this derivative
    # or the next.
    flat = eq(exponent, 0)
    base = where(flat, 1.0, input)
    return where(flat, 0.0, grad) * exponent * base ** (exponent - 1)


@op(inputs=3, save=("grad", "input", "exponent"), quiet=True, replay=True)
def pow_backward(grad, input, exponent):
    """pow's gradient with respect to its base: ``grad * exponent * input ** (exponent - 1)``.

    Exactly 0 where ``exponent`` is 0 (``x ** 0`` is flat, also at
    ``x == 0``). The exponent is a constant: it gets no gradient. The result
    has PyTorch's dtype for the three operands; real dtypes only.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.elementwise import pow_backward
    >>> pow_backward(oxmera.tensor([1.0, 1.0]), oxmera.tensor([0.0, 3.0]), 2)
    tensor([0., 6.], dtype=float32)
    """
    e = np.asarray(exponent)
    fast = (type(grad) is np.ndarray and type(input) is np.ndarray
            and grad.dtype == input.dtype and grad.dtype.kind == "f"
            and e.ndim == 0 and e.dtype.kind in "biuf")
    if fast:
        dtype = grad.dtype      # (real floating: no walk, no check)
    else:
        dtype = result_type(grad, input, exponent)
        real_only(np.empty(0, dtype), "pow_backward")
    if e.ndim == 0 and e == 0:
        return np.zeros(np.broadcast_shapes(np.shape(grad), np.shape(input)), dtype)
    if fast:
        # pow's VJP for x ** 2 and its kind: the fewest NumPy calls. The
        # exponent goes to NumPy as a Python number where the dtype holds it
        # exactly (NumPy then takes it in the arrays' dtype, as a cast would).
        number = e.item()
        if dtype.type(number) == number:
            less = number - 1
            slope = input if less == 1 else np.power(input, less)
            return np.multiply(np.multiply(grad, number), slope)
    # e - 1 in the exponent's own dtype (exact for an integer), as pow's VJP
    # composed of ops computes it; bool has no subtraction.
    less = (e.astype(dtype) if e.dtype.kind == "b" else e) - 1
    g, x = np.asarray(grad, dtype), np.asarray(input, dtype)
    if e.ndim:
        flat = e == 0
        g, x = np.where(flat, g.dtype.type(0), g), np.where(flat, x.dtype.type(1), x)
    return g * e.astype(dtype) * x ** less.astype(dtype)


@pow_backward.vjp
def _(ctx, grad_of_grad, grad, input, exponent):
    needs = ctx.needs_input_grad
    grad_grad = pow_backward(grad_of_grad, input, exponent) if needs[0] else None
    grad_input = None
    if needs[1]:
        # d/dx of grad * e * x ** (e - 1) is grad * e times pow's slope at
        # e - 1; exactly 0 where e == 0, where the base is 1 (as in
        # _pow_slope: nothing infinite is computed there).
        flat = eq(exponent, 0)
        grad_input = where(flat, 0.0, pow_backward(grad_of_grad * grad * exponent,
                                                   where(flat, 1.0, input), exponent - 1))
    return grad_grad, grad_input, None


# -- closeness, classification and logic (bool results, never recorded) --------------

@op(complex_inputs=True, inputs=2, differentiable=False, promote=True, method=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``|input - other| <= atol + rtol * |other|``, elementwise (bool, no gradient).

    Equal infinities are close; nan is close to nan only with ``equal_nan``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.isclose(oxmera.tensor([1.0, 1.1]), oxmera.tensor([1.0 + 1e-7, 1.0]))
    tensor([ True, False], dtype=bool)
    """
    if rtol < 0 or atol < 0:
        raise ValueError(f"rtol and atol must be non-negative, got rtol={rtol}, atol={atol}")
    dtype = result_type(input, other)
    if dtype == np.bool_:
        return np.equal(input, other)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)    # unsigned differences would wrap around
    input, other = np.asarray(input, dtype), np.asarray(other, dtype)
    return np.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``input`` is close to ``other``: a Python bool.

    ``isclose(input, other, rtol, atol, equal_nan).all()``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.allclose(oxmera.tensor([1.0, 2.0]), oxmera.tensor([1.0, 2.0 + 1e-7]))
    True
    """
    return bool(isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan).numpy().all())


def _classify(name, ufunc, integers, description):
    def forward(input):
        if input.dtype.kind != "f":
            # Integers and bools are finite numbers (NumPy has no bool loops).
            return np.full(input.shape, integers)
        return ufunc(input)
    forward.__name__ = name
    forward.__qualname__ = name
    forward.__module__ = __name__
    values = np.array([1.0, np.inf, -np.inf, np.nan])
    forward.__doc__ = (
        f"Whether each element is {description} (bool, no gradient).\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> oxmera.{name}(oxmera.tensor([1.0, float('inf'), float('-inf'), float('nan')]))\n"
        f"tensor({np.array2string(ufunc(values), separator=', ')}, dtype=bool)\n")
    return op(name, differentiable=False, method=True)(forward)


isnan = _classify("isnan", np.isnan, False, "nan")
isinf = _classify("isinf", np.isinf, False, "+inf or -inf")
isfinite = _classify("isfinite", np.isfinite, True, "finite (not inf, not nan)")


def _logical(name, ufunc, inputs):
    if inputs == 2:
        def forward(input, other):
            return ufunc(input, other)
        call, example = "oxmera.tensor([True, True, False]), oxmera.tensor([1.0, 0.0, 0.0])", \
            ufunc([True, True, False], [1.0, 0.0, 0.0])
        what = "of ``input`` and ``other`` (broadcasting)"
    else:
        def forward(input):
            return ufunc(input)
        call, example = "oxmera.tensor([1.0, 0.0])", ufunc([1.0, 0.0])
        what = "of ``input``"
    forward.__name__ = name
    forward.__qualname__ = name
    forward.__module__ = __name__
    forward.__doc__ = (
        f"Elementwise logical ``{name[len('logical_'):]}`` {what}: nonzero is True; a bool "
        f"tensor, no gradient.\n\n"
        f"Examples\n--------\n>>> import oxmera\n>>> oxmera.{name}({call})\n"
        f"tensor({np.array2string(example, separator=', ')}, dtype=bool)\n")
    return op(name, inputs=inputs, differentiable=False, method=True)(forward)


logical_and = _logical("logical_and", np.logical_and, 2)
logical_or = _logical("logical_or", np.logical_or, 2)
logical_xor = _logical("logical_xor", np.logical_xor, 2)
logical_not = _logical("logical_not", np.logical_not, 1)


_registry.add_tensor_attribute("true_divide", true_divide)
_registry.add_tensor_attribute("div", div)
_registry.add_tensor_attribute("divide", div)
_registry.add_tensor_attribute("where", _where_method)
_registry.add_tensor_attribute("square", square)
_registry.add_tensor_attribute("allclose", allclose)
# PyTorch's aliases: the same op under NumPy's names.
for _alias, _target in (("arcsin", asin), ("arccos", acos), ("arctan", atan),
                        ("arctan2", atan2), ("clip", clamp)):
    _registry.add_tensor_attribute(_alias, _target)
