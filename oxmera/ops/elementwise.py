"""Elementwise ops: arithmetic, unary math, comparisons.

Binary ops broadcast like NumPy and promote dtypes like PyTorch; their VJPs
return gradients of the broadcast shape and leave the summing back to each
input's shape to the engine.
"""
import math

import numpy as np

from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops.creation import zeros_like

__all__ = [
    "add", "sub", "mul", "div", "true_divide", "pow", "neg",
    "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sign",
    "eq", "ne", "lt", "le", "gt", "ge", "where",
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


@op(inputs=2, save=(), promote=True, method=True, operators=("__add__", "__radd__"))
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


@op(inputs=2, save=(), promote=True, method=True, operators=("__sub__", "__rsub__"))
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


@op(inputs=2, promote=True, method=True, operators=("__mul__", "__rmul__"))
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
    return (grad * other if needs[0] else None,
            grad * input if needs[1] else None)


@op(inputs=2, promote=True, float_only=True, method=True,
    operators=("__truediv__", "__rtruediv__"))
def div(input, other):
    """Divide elementwise (true division; integers give the default float dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.div(oxmera.tensor([1.0, 3.0]), 2)
    tensor([0.5, 1.5], dtype=float32)
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.true_divide(input, other)


@div.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
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
    return div(input, other)


@op(inputs=2, promote=True, method=True, operators=("__pow__", "__rpow__"))
def pow(input, exponent):
    """Raise ``input`` to ``exponent`` elementwise.

    The gradient with respect to a tensor exponent is ``out * log(input)``,
    taken as 0 where ``input`` is 0 (the limit for a positive exponent); the
    gradient with respect to ``input`` is 0 where the exponent is 0, also at
    ``input == 0``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.pow(oxmera.tensor([2.0, 3.0]), 2)
    tensor([4., 9.], dtype=float32)
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.power(input, exponent)


@pow.vjp
def _(ctx, grad, input, exponent):
    needs = ctx.needs_input_grad
    grad_input = grad_exponent = None
    if needs[0]:
        if isinstance(exponent, (int, float)):
            grad_input = (zeros_like(grad) if exponent == 0
                          else grad * exponent * input ** (exponent - 1))
        else:
            # x ** 0 is constant: its slope is 0 even at x == 0, where
            # x ** -1 would make it 0 * inf. The factor ``exponent`` is 0
            # there already, so the power only needs a finite stand-in.
            power = where(eq(exponent, 0), 1.0, exponent - 1)
            grad_input = grad * exponent * input ** power
    if needs[1]:
        if isinstance(input, (int, float)):
            # A number base makes log(base) a constant: take it in double
            # precision (as a tensor it would be float32, the default dtype).
            log_input = math.log(input) if input > 0 else (0.0 if input == 0 else math.nan)
        else:
            safe = where(eq(input, 0), 1.0, input)
            if safe.dtype != grad.dtype:
                # An integer base: take its log in the dtype the forward used
                # (the output's), not in the default float dtype.
                safe = safe.to(grad.dtype)
            log_input = log(safe)
        grad_exponent = grad * input ** exponent * log_input
    return grad_input, grad_exponent


@op(save=(), method=True, operators=("__neg__",))
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


# -- unary math ----------------------------------------------------------------

@op(save=(), save_output=True, float_only=True, method=True)
def exp(input):
    """Exponential, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.exp(oxmera.tensor([0.0]))
    tensor([1.], dtype=float32)
    """
    return np.exp(input)


@exp.vjp
def _(ctx, grad, input):
    return grad * ctx.output


@op(float_only=True, method=True)
def log(input):
    """Natural logarithm, elementwise (``-inf`` at 0, ``nan`` below).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.log(oxmera.tensor([1.0]))
    tensor([0.], dtype=float32)
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(input)


@log.vjp
def _(ctx, grad, input):
    return grad / input


@op(save=(), save_output=True, float_only=True, method=True)
def sqrt(input):
    """Square root, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sqrt(oxmera.tensor([4.0]))
    tensor([2.], dtype=float32)
    """
    with np.errstate(invalid="ignore"):
        return np.sqrt(input)


@sqrt.vjp
def _(ctx, grad, input):
    return grad / (ctx.output * 2)


@op(float_only=True, method=True)
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
    return grad * cos(input)


@op(float_only=True, method=True)
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
    return -grad * sin(input)


@op(save=(), save_output=True, float_only=True, method=True)
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
    out = ctx.output
    return grad * (1 - out * out)


@op(save=(), save_output=True, float_only=True, method=True)
def sigmoid(input):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, elementwise, stable for large ``|x|``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.sigmoid(oxmera.tensor([0.0]))
    tensor([0.5], dtype=float32)
    """
    # exp of a non-positive number only, so nothing overflows.
    z = np.exp(-np.abs(input))
    return np.where(input >= 0, 1 / (1 + z), z / (1 + z)).astype(input.dtype, copy=False)


@sigmoid.vjp
def _(ctx, grad, input):
    out = ctx.output
    return grad * out * (1 - out)


@op(method=True)
def relu(input):
    """Rectified linear unit ``max(x, 0)``, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.relu(oxmera.tensor([-1.0, 2.0]))
    tensor([0., 2.], dtype=float32)
    """
    if input.dtype == np.bool_:
        raise TypeError("relu(): not implemented for bool tensors")
    return np.maximum(input, 0).astype(input.dtype, copy=False)


@relu.vjp
def _(ctx, grad, input):
    # Select rather than multiply by the mask: an infinite incoming
    # gradient times 0 would be nan where relu is flat.
    return where(gt(input, 0), grad, 0.0)


@op(method=True, operators=("__abs__",))
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
    return np.sign(input)


@sign.vjp
def _(ctx, grad, input):
    return zeros_like(grad)     # not grad * 0, which is nan where grad is inf


# -- comparisons (bool results, never recorded) -----------------------------------

def _compare(name, ufunc, dunder, reflected=None):
    def forward(input, other):
        return ufunc(input, other)
    forward.__name__ = name
    forward.__doc__ = (
        f"Elementwise ``{name}`` comparison with broadcasting; a bool tensor, no gradient.\n\n"
        f"Examples\n--------\n>>> import oxmera\n"
        f">>> oxmera.{name}(oxmera.tensor([1.0, 2.0]), 1.5)\n"
        f"tensor({np.array2string(ufunc(np.array([1.0, 2.0]), 1.5), separator=', ')}, "
        f"dtype=bool)\n")
    forward.__module__ = __name__
    public = op(name, inputs=2, differentiable=False, promote=True, method=True)(forward)
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


@op(inputs=3, save=("condition",), promote=False, method=False)
def where(condition, input, other):
    """Pick ``input`` where ``condition`` holds, else ``other`` (broadcasting).

    Examples
    --------
    >>> import oxmera
    >>> c = oxmera.tensor([True, False])
    >>> oxmera.where(c, oxmera.tensor([1.0, 2.0]), 0.0)
    tensor([1., 0.], dtype=float32)
    """
    from oxmera.ops._utils import result_type
    dtype = result_type(input, other)
    return np.where(condition, input, other).astype(dtype, copy=False)


@where.vjp
def _(ctx, grad, condition, input, other):
    needs = ctx.needs_input_grad
    # A literal 0, not grad * 0: the side not picked gets exactly 0 even where
    # the incoming gradient is inf or nan.
    return (None,
            where(condition, grad, 0.0) if needs[1] else None,
            where(condition, 0.0, grad) if needs[2] else None)


def _where_method(self, condition, other):
    """``where(condition, self, other)``: PyTorch's ``Tensor.where``."""
    return where(condition, self, other)


_registry.add_tensor_attribute("true_divide", true_divide)
_registry.add_tensor_attribute("where", _where_method)
