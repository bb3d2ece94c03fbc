"""The elementwise part of an LSTM and a GRU step as one op each, with one-op VJPs.

A fused VJP, for speed: an LSTM step composed of ops is about ten
elementwise ops after its matrix product (a GRU step as many), each recorded
and each with a node in backward; that bookkeeping cost more than the step's
product itself (nn.LSTM 2x256, seq 64, batch 32). ``lstm_gates`` and
``gru_gates`` do the gates in one op, their VJPs are one op each
(``lstm_gates_backward``, ``gru_gates_backward``, NumPy forwards), and those
ops' VJPs are written with ops, so every order of derivative still works.
For float32 (B, H) gates (the four slices of one gates matrix) the forward
and ``lstm_gates_backward`` are each one compiled pass
(``oxmera/_core/_kernels.h``): NumPy's sigmoid is four passes, and the
ten-odd passes of each were most of an LSTM step's time after its product.

All are elementwise with broadcasting over the gate pre-activations and the
previous state, as ``nn.LSTM``/``nn.GRU`` call them after one ``split`` of
the gates tensor (PyTorch's gate orders ``i, f, g, o`` and ``r, z, n``).
They are internal kernels of the recurrent layers and cells (PyTorch has no
public counterpart), so they are not re-exported at the top level.
"""
import numpy as np

from oxmera._core import _kernels
from oxmera.extend import op
from oxmera.ops.elementwise import sigmoid, stable_sigmoid, tanh

__all__ = ["lstm_gates", "lstm_gates_backward", "gru_gates", "gru_gates_backward"]


def _activations(input_gate, forget_gate, cell_gate, output_gate):
    return (stable_sigmoid(input_gate), stable_sigmoid(forget_gate), np.tanh(cell_gate),
            stable_sigmoid(output_gate))


@op(inputs=5, promote=True, float_only=True, outputs=("h", "c"))
def lstm_gates(input_gate, forget_gate, cell_gate, output_gate, cx):
    """One LSTM step from its gate pre-activations: ``(h, c)``.

    ``c = sigmoid(f) * cx + sigmoid(i) * tanh(g)`` and
    ``h = sigmoid(o) * tanh(c)``, elementwise with broadcasting.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.rnn import lstm_gates
    >>> zero = oxmera.zeros(2)
    >>> lstm_gates(zero, zero, zero, zero, oxmera.tensor([2.0, -2.0]))
    lstm_gates(h=tensor([ 0.3808, -0.3808], dtype=float32), c=tensor([ 1., -1.], dtype=float32))
    """
    gates = (input_gate, forget_gate, cell_gate, output_gate)
    if _kernels.lstm_gates_takes(gates, (cx,)):
        return _kernels.lstm_gates(*gates, cx)     # the formula below in one compiled pass
    i, f, g, o = _activations(*gates)
    c = f * cx + i * g
    return o * np.tanh(c), c


@lstm_gates.vjp
def _(ctx, grads, input_gate, forget_gate, cell_gate, output_gate, cx):
    grad_h, grad_c = grads
    return tuple(lstm_gates_backward(grad_h, grad_c, input_gate, forget_gate, cell_gate,
                                     output_gate, cx))


@op(inputs=7, promote=True, float_only=True,
    outputs=("input_gate", "forget_gate", "cell_gate", "output_gate", "cx"))
def lstm_gates_backward(grad_h, grad_c, input_gate, forget_gate, cell_gate, output_gate, cx):
    """The VJP of ``lstm_gates``: the gradients of its five inputs, given those of h and c.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.rnn import lstm_gates_backward
    >>> one, zero = oxmera.ones(1), oxmera.zeros(1)
    >>> lstm_gates_backward(zero, one, zero, zero, zero, zero, one).forget_gate
    tensor([0.25], dtype=float32)
    """
    gates = (input_gate, forget_gate, cell_gate, output_gate)
    if _kernels.lstm_gates_takes(gates, (cx, grad_h, grad_c)):
        return _kernels.lstm_gates_backward(grad_h, grad_c, *gates, cx)    # one compiled pass
    i, f, g, o = _activations(*gates)
    t = np.tanh(f * cx + i * g)
    dc = grad_c + grad_h * o * (1 - t * t)
    return (dc * g * i * (1 - i), dc * cx * f * (1 - f), dc * i * (1 - g * g),
            grad_h * t * o * (1 - o), dc * f)


@lstm_gates_backward.vjp
def _(ctx, grads, grad_h, grad_c, input_gate, forget_gate, cell_gate, output_gate, cx):
    # L = <outputs, (ui, uf, ug, uo, v)>, differentiated by hand through
    # dc = grad_c + grad_h * o * (1 - t^2) and t = tanh(f * cx + i * g).
    ui, uf, ug, uo, v = grads
    i, f, g, o = (sigmoid(input_gate), sigmoid(forget_gate), tanh(cell_gate),
                  sigmoid(output_gate))
    di, df, do, dg = i * (1 - i), f * (1 - f), o * (1 - o), 1 - g * g
    t = tanh(f * cx + i * g)
    dt = 1 - t * t
    dc = grad_c + grad_h * o * dt
    delta = ui * g * di + uf * cx * df + ug * i * dg + v * f        # dL/d(dc)
    l_c = (uo * grad_h * do - 2 * delta * grad_h * o * t) * dt       # dL/dc through t
    return (delta * o * dt + uo * t * do,
            delta,
            di * (ui * dc * g * (1 - 2 * i) + ug * dc * dg + l_c * g),
            df * (uf * dc * cx * (1 - 2 * f) + v * dc + l_c * cx),
            dg * (ui * dc * di - 2 * ug * dc * i * g + l_c * i),
            do * (delta * grad_h * dt + uo * grad_h * t * (1 - 2 * o)),
            uf * dc * df + l_c * f)


@op(inputs=5, promote=True, float_only=True)
def gru_gates(reset_gate, update_gate, input_new, hidden_new, hx):
    """One GRU step from its gate pre-activations: the new hidden state.

    ``reset_gate`` and ``update_gate`` are the sums of the input and hidden
    projections; ``input_new`` is ``W_in x + b_in`` and ``hidden_new``
    ``W_hn h + b_hn``: ``n = tanh(input_new + sigmoid(reset_gate) * hidden_new)``,
    ``h' = (1 - z) * n + z * hx`` with ``z = sigmoid(update_gate)``,
    elementwise with broadcasting.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.rnn import gru_gates
    >>> zero = oxmera.zeros(2)
    >>> gru_gates(zero, zero, oxmera.tensor([0.5, -0.5]), zero, oxmera.tensor([1.0, 1.0]))
    tensor([0.7311, 0.2689], dtype=float32)
    """
    z = stable_sigmoid(update_gate)
    n = np.tanh(input_new + stable_sigmoid(reset_gate) * hidden_new)
    return n + z * (hx - n)


@gru_gates.vjp
def _(ctx, grad, reset_gate, update_gate, input_new, hidden_new, hx):
    return tuple(gru_gates_backward(grad, reset_gate, update_gate, input_new, hidden_new, hx))


@op(inputs=6, promote=True, float_only=True,
    outputs=("reset_gate", "update_gate", "input_new", "hidden_new", "hx"))
def gru_gates_backward(grad, reset_gate, update_gate, input_new, hidden_new, hx):
    """The VJP of ``gru_gates``: the gradients of its five inputs, given that of h'.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.rnn import gru_gates_backward
    >>> one, zero = oxmera.ones(1), oxmera.zeros(1)
    >>> gru_gates_backward(one, zero, zero, zero, zero, one).update_gate
    tensor([0.25], dtype=float32)
    """
    r, z = stable_sigmoid(reset_gate), stable_sigmoid(update_gate)
    n = np.tanh(input_new + r * hidden_new)
    grad_a = grad * (1 - z) * (1 - n * n)          # through n = tanh(a)
    return (grad_a * hidden_new * r * (1 - r), grad * (hx - n) * z * (1 - z), grad_a,
            grad_a * r, grad * z)


@gru_gates_backward.vjp
def _(ctx, grads, grad, reset_gate, update_gate, input_new, hidden_new, hx):
    # L = <outputs, (ur, uz, ux, uh, v)>, differentiated by hand through
    # q = grad * (1 - z) * (1 - n^2) (the gradient of a = input_new + r * hidden_new).
    ur, uz, ux, uh, v = grads
    r, z = sigmoid(reset_gate), sigmoid(update_gate)
    dr, dz = r * (1 - r), z * (1 - z)
    n = tanh(input_new + r * hidden_new)
    dn = 1 - n * n
    q = grad * (1 - z) * dn
    big_q = ur * hidden_new * dr + ux + uh * r                   # dL/dq
    l_a = (-2 * big_q * grad * (1 - z) * n - uz * grad * dz) * dn  # dL/da through n
    return (big_q * (1 - z) * dn + uz * (hx - n) * dz + v * z,
            dr * (ur * q * hidden_new * (1 - 2 * r) + uh * q + l_a * hidden_new),
            dz * (uz * grad * (hx - n) * (1 - 2 * z) - big_q * grad * dn + v * grad),
            l_a,
            ur * q * dr + l_a * r,
            uz * grad * dz)
