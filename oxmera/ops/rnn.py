"""The LSTM cell's elementwise part as one op: ``lstm_gates`` and its VJP ``lstm_gates_backward``.

A fused VJP, for speed: an LSTM step composed of ops is about ten
elementwise ops after its matrix product, each recorded and each with a
node in backward; that bookkeeping cost more than the step's product itself
(nn.LSTM 2x256, seq 64, batch 32). ``lstm_gates`` does the gates in one op,
its VJP is one op (``lstm_gates_backward``, a NumPy forward), and that op's
VJP is written with ops, so every order of derivative still works.

Both ops are elementwise with broadcasting over the four gate
pre-activations and the previous cell state, as ``nn.LSTM`` calls them after
one ``split`` of the gates tensor (PyTorch's gate order ``i, f, g, o``).
They are internal kernels of ``oxmera.nn.LSTM``/``LSTMCell`` (PyTorch has no
public counterpart), so they are not re-exported at the top level.
"""
import numpy as np

from oxmera.extend import op
from oxmera.ops.elementwise import sigmoid, stable_sigmoid, tanh

__all__ = ["lstm_gates", "lstm_gates_backward"]


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
    i, f, g, o = _activations(input_gate, forget_gate, cell_gate, output_gate)
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
    i, f, g, o = _activations(input_gate, forget_gate, cell_gate, output_gate)
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
