"""Gradient cases and PyTorch comparisons of the fused LSTM and GRU gates (``oxmera.ops.rnn``).

``lstm_gates``, ``gru_gates`` and their VJP ops are elementwise with
broadcasting over their inputs; PyTorch has no public op for any, so the
comparisons are against PyTorch's cell equations written with torch ops
(and ``torch.autograd.grad`` of them for the backward ops), which is what
``torch.nn.LSTMCell`` and ``torch.nn.GRUCell`` compute.
"""
from oxmera.ops.rnn import gru_gates, gru_gates_backward, lstm_gates, lstm_gates_backward

from ._case_table import S, T, Leaf, const, add_cases, add_torch_cases


def _shapes_cases(fn, count):
    """Cases over 0-d, vector, matrix, size-0, broadcasting and non-contiguous inputs."""
    return [
        ("0d", fn, tuple(Leaf(()) for _ in range(count))),
        ("5", fn, tuple(Leaf((5,)) for _ in range(count))),
        ("2x3", fn, tuple(Leaf((2, 3)) for _ in range(count))),
        ("size-0", fn, tuple(Leaf((0, 3)) for _ in range(count))),
        ("broadcast", fn, (Leaf((2, 3)), Leaf((3,)), Leaf((2, 1)), Leaf(()))
         + tuple(Leaf((2, 3)) for _ in range(count - 4))),
        ("transposed", fn, (T((3, 2)),) + tuple(Leaf((3, 2)) for _ in range(count - 1))),
        ("strided", fn, tuple(S((2, 3)) for _ in range(count))),
        ("no-grad-state", fn, tuple(Leaf((2, 3)) for _ in range(count - 1)) + (const((2, 3)),)),
    ]


add_cases("lstm_gates", *_shapes_cases(lambda *a: tuple(lstm_gates(*a)), 5))
add_cases("lstm_gates_backward", *_shapes_cases(lambda *a: tuple(lstm_gates_backward(*a)), 7))
add_cases("gru_gates", *_shapes_cases(gru_gates, 5))
add_cases("gru_gates_backward", *_shapes_cases(lambda *a: tuple(gru_gates_backward(*a)), 6))


def _torch_gates(torch, i, f, g, o, cx):
    c = torch.sigmoid(f) * cx + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def _torch_gru_gates(torch, reset, update, input_new, hidden_new, hx):
    n = torch.tanh(input_new + torch.sigmoid(reset) * hidden_new)
    z = torch.sigmoid(update)
    return ((1 - z) * n + z * hx,)


def _lib_lstm_gates(lib, *inputs):
    if lib.__name__ == "torch":
        return _torch_gates(lib, *inputs)
    return tuple(lstm_gates(*inputs))


def _lib_gru_gates(lib, *inputs):
    if lib.__name__ == "torch":
        return _torch_gru_gates(lib, *inputs)
    return gru_gates(*inputs)


def _torch_vjp(torch, forward, grads, inputs):
    """The VJP as torch computes it, kept differentiable to compare second order too."""
    outputs = forward(torch, *inputs)
    return torch.autograd.grad(outputs, inputs, grads, create_graph=True)


def _lib_lstm_gates_backward(lib, grad_h, grad_c, *inputs):
    if lib.__name__ == "torch":
        return _torch_vjp(lib, _torch_gates, (grad_h, grad_c), inputs)
    return tuple(lstm_gates_backward(grad_h, grad_c, *inputs))


def _lib_gru_gates_backward(lib, grad, *inputs):
    if lib.__name__ == "torch":
        return _torch_vjp(lib, _torch_gru_gates, (grad,), inputs)
    return tuple(gru_gates_backward(grad, *inputs))


add_torch_cases(
    "lstm_gates",
    ("2x3", _lib_lstm_gates, tuple(Leaf((2, 3)) for _ in range(5))),
    ("broadcast", _lib_lstm_gates, (Leaf((2, 3)), Leaf((3,)), Leaf((2, 1)), Leaf(()),
                                    Leaf((2, 3)))),
    ("0d", _lib_lstm_gates, tuple(Leaf(()) for _ in range(5))),
)
add_torch_cases(
    "lstm_gates_backward",
    ("2x3", _lib_lstm_gates_backward, tuple(Leaf((2, 3)) for _ in range(7))),
    ("0d", _lib_lstm_gates_backward, tuple(Leaf(()) for _ in range(7))),
)
add_torch_cases(
    "gru_gates",
    ("2x3", _lib_gru_gates, tuple(Leaf((2, 3)) for _ in range(5))),
    ("broadcast", _lib_gru_gates, (Leaf((2, 3)), Leaf((3,)), Leaf((2, 1)), Leaf(()),
                                   Leaf((2, 3)))),
    ("0d", _lib_gru_gates, tuple(Leaf(()) for _ in range(5))),
)
add_torch_cases(
    "gru_gates_backward",
    ("2x3", _lib_gru_gates_backward, tuple(Leaf((2, 3)) for _ in range(6))),
    ("0d", _lib_gru_gates_backward, tuple(Leaf(()) for _ in range(6))),
)
