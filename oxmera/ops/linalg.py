"""Linear algebra: matmul (1-D, 2-D, batched, broadcasting batch dims)."""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op

__all__ = ["matmul"]

OpError = _core.OpError


@op(inputs=2, promote=True, method=True, operators=("__matmul__", "__rmatmul__"))
def matmul(input, other):
    """Matrix product with NumPy's rules: 1-D operands are vectors, leading
    dimensions are batch dimensions and broadcast.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.ones(2, 3)
    >>> b = oxmera.ones(3, 4)
    >>> (a @ b).shape
    (2, 4)
    >>> oxmera.matmul(oxmera.ones(5, 2, 3), oxmera.ones(3)).shape
    (5, 2)
    """
    if np.ndim(input) == 0 or np.ndim(other) == 0:
        raise OpError(f"matmul(): both arguments need at least 1 dimension, got shapes "
                      f"{np.shape(input)} and {np.shape(other)}")
    k_in = input.shape[-1]
    k_other = other.shape[-2] if other.ndim > 1 else other.shape[0]
    if k_in != k_other:
        raise OpError(f"matmul(): shapes {input.shape} and {other.shape} cannot be multiplied "
                      f"({k_in} != {k_other})")
    return np.matmul(input, other)


@matmul.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    # Treat vectors as matrices (a row for the left operand, a column for the
    # right one), as the forward does; the engine sums broadcast batch dims.
    if other.ndim == 1:
        grad = grad.unsqueeze(-1)
        other = other.unsqueeze(-1)
    if input.ndim == 1:
        grad = grad.unsqueeze(-2)
        input = input.unsqueeze(0)
    grad_input = grad_other = None
    if needs[0]:
        grad_input = grad @ other.mT
        if len(ctx.input_shape(0)) == 1:
            grad_input = grad_input.squeeze(-2)
    if needs[1]:
        grad_other = input.mT @ grad
        if len(ctx.input_shape(1)) == 1:
            grad_other = grad_other.squeeze(-1)
    return grad_input, grad_other
