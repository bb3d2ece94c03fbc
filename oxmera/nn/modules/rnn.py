"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells, as in PyTorch.

Parameter names, shapes, gate order (LSTM ``i, f, g, o``; GRU ``r, z, n``)
and initialization are PyTorch's, so a PyTorch ``state_dict`` loads as is and
gives the same outputs.

How a layer runs (the reason for the shape of the code): the input
projection ``x @ W_ih.T + b`` of a whole layer and direction is one matrix
product over every time step at once (one ``linear``); each step is then one
product ``h @ W_hh.T`` with its slice of that projection added in place
(``linear(h, W_hh, xp)``), one ``split`` of that
gates tensor, and the gate nonlinearities: for the LSTM one op
(``oxmera.ops.rnn.lstm_gates``, whose VJP is one op too), for the GRU one
op after adding the projections' reset and update parts (``gru_gates``),
for the plain RNN its activation. For the LSTM and the plain RNN,
``b_hh`` is added to the input projection (the gates only see the sum); the
GRU keeps it inside ``r * (W_hn h + b_hn)``. Every op is differentiable, so
gradients of any order flow to inputs, states and parameters.

A ``PackedSequence`` runs the same steps on the shrinking batch of the
sequences still running (they are sorted longest first), so each
sequence's final state is its state at its own last step.
"""
import math
import numbers
import warnings

from oxmera._core import autograd as _core
from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn.modules._utils import empty, factory_dtype
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter
from oxmera.nn.utils.rnn import PackedSequence
from oxmera.ops.creation import zeros
from oxmera.ops.elementwise import relu, tanh
from oxmera.ops.index import index_select
from oxmera.ops.blas import linear
from oxmera.ops.rnn import gru_gates, lstm_gates
from oxmera.ops.shape import cat, split, stack, unbind

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


# -- one time step ---------------------------------------------------------------------------
# Each takes the step's input projection ``xp`` (batch, gates * hidden), the state tuple and the
# hidden-side weights, and returns the new state tuple, whose first entry is the step's output.
# The hidden product is ``linear(h, w_hh, xp)``: one product with the projection added in place,
# and a VJP of ``grad @ w_hh`` and ``grad.T @ h``, both with contiguous operands and the second
# already in ``w_hh``'s layout (``h @ w_hh.T`` as a matmul of a transposed view cost a
# transpose node and a weight gradient 30 % slower in OpenBLAS for these shapes).

def _rnn_tanh_step(xp, state, w_hh, b_hh, w_hr):
    return (tanh(linear(state[0], w_hh, xp)),)


def _rnn_relu_step(xp, state, w_hh, b_hh, w_hr):
    return (relu(linear(state[0], w_hh, xp)),)


def _lstm_step(xp, state, w_hh, b_hh, w_hr):
    h, c = state
    # The gates in one op (lstm_gates): ten recorded elementwise ops cost more than the product.
    h, c = lstm_gates(*split(linear(h, w_hh, xp), c.shape[-1], -1), c)
    if w_hr is not None:
        h = linear(h, w_hr)
    return h, c


def _gru_step(xp, state, w_hh, b_hh, w_hr):
    h = state[0]
    hidden = h.shape[-1]
    hp = linear(h, w_hh, b_hh)
    x_rz, x_n = split(xp, [2 * hidden, hidden], -1)
    h_rz, h_n = split(hp, [2 * hidden, hidden], -1)
    # r and z see the sum of both projections; n sees them apart (r scales W_hn h + b_hn).
    return (gru_gates(*split(x_rz + h_rz, hidden, -1), x_n, h_n, h),)


_STEPS = {"RNN_TANH": _rnn_tanh_step, "RNN_RELU": _rnn_relu_step, "LSTM": _lstm_step,
          "GRU": _gru_step}


def _input_projection(mode, input, w_ih, b_ih, b_hh):
    """``input @ w_ih.T`` plus the biases the gates see as a sum (all but the GRU's b_hh).

    One ``linear``: a (T, B, I) input is multiplied as one (T * B, I) matrix
    (a 3-D matmul would be T small products, and its weight gradient a
    (T, I, G) tensor summed afterwards), the bias added in place.
    """
    if b_ih is not None and mode != "GRU":
        b_ih = b_ih + b_hh
    return linear(input, w_ih, b_ih)


def _run_direction(step, steps, state0, w_hh, b_hh, w_hr, reverse):
    """Run ``step`` over the per-step projections ``steps`` (batch non-increasing in time).

    Returns the per-step outputs in time order and the final state, each
    sequence's taken at its own last step (its rows of ``state0`` when
    reversed: a reversed sequence starts at its own last step).
    """
    outputs = [None] * len(steps)
    batch = state0[0].shape[0]
    if not reverse:
        state, finished = state0, []
        for t, xp in enumerate(steps):
            size = xp.shape[0]
            if size < batch:
                # Rows size..batch ended at step t - 1: their final state is now.
                finished.append(tuple(s[size:batch] for s in state))
                state = tuple(s[:size] for s in state)
                batch = size
            state = step(xp, state, w_hh, b_hh, w_hr)
            outputs[t] = state[0]
        if finished:
            finished.append(state)
            state = tuple(cat([part[k] for part in reversed(finished)])
                          for k in range(len(state)))
        return outputs, state
    running = steps[-1].shape[0]
    state = state0 if running == batch else tuple(s[:running] for s in state0)
    for t in range(len(steps) - 1, -1, -1):
        xp = steps[t]
        size = xp.shape[0]
        if size > running:
            # Sequences that end at step t start here, from their initial state.
            state = tuple(cat([s, s0[running:size]]) for s, s0 in zip(state, state0))
            running = size
        state = step(xp, state, w_hh, b_hh, w_hr)
        outputs[t] = state[0]
    return outputs, state


def _shape_list(tensor):
    return list(tensor.shape)


def _is_tensor(value):
    return isinstance(value, _core.Tensor)


class RNNBase(Module):
    """The multi-layer recurrence the ``RNN``, ``LSTM`` and ``GRU`` layers share.

    ``mode`` is ``"RNN_TANH"``, ``"RNN_RELU"``, ``"LSTM"`` or ``"GRU"``; use
    the subclasses. Layer ``k``'s parameters are ``weight_ih_l{k}``
    ``(gates * hidden_size, in)``, ``weight_hh_l{k}`` ``(gates * hidden_size,
    out)``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` and, for an LSTM with
    ``proj_size``, ``weight_hr_l{k}`` ``(proj_size, hidden_size)``; the
    reverse direction's end in ``_reverse``. All are drawn from
    ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

    Examples
    --------
    >>> from oxmera import nn
    >>> [name for name, _ in nn.GRU(3, 4, bidirectional=True).named_parameters()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing "
                             f"the probability of an element being zeroed, got {dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        for arg, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                 ("input_size", input_size, int),
                                 ("hidden_size", hidden_size, int),
                                 ("num_layers", num_layers, int), ("proj_size", proj_size, int)):
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise TypeError(f"{name}: {arg} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
        if input_size <= 0:
            raise ValueError(f"{name}: input_size must be greater than zero, got {input_size}")
        if hidden_size <= 0:
            raise ValueError(f"{name}: hidden_size must be greater than zero, got {hidden_size}")
        if num_layers <= 0:
            raise ValueError(f"{name}: num_layers must be greater than zero, got {num_layers}")
        if proj_size < 0:
            raise ValueError(f"{name}: proj_size should be a positive integer or zero to disable "
                             f"projections, got {proj_size}")
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size, got "
                             f"proj_size={proj_size} and hidden_size={hidden_size}")
        if mode not in _GATES:
            raise ValueError(f"{name}: Unrecognized RNN mode: {mode}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN "
                             f"or GRU")
        dtype = factory_dtype(device, dtype, name)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * directions
                shapes = [("weight_ih", (gate_size, layer_input_size)),
                          ("weight_hh", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for base, shape in shapes:
                    param_name = f"{base}_l{layer}{suffix}"
                    setattr(self, param_name, Parameter(empty(shape, dtype)))
                    names.append(param_name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """Do nothing: kept for PyTorch code that calls it.

        In PyTorch it packs the weights into one cuDNN buffer on a GPU and is a
        no-op on the CPU; oxmera runs on the CPU only, so there is nothing to
        flatten.
        """

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction, in PyTorch's order."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- shapes and checks -------------------------------------------------------------------

    def _state_sizes(self):
        """The feature sizes of the state tensors: (h,) or (h, c)."""
        if self.mode == "LSTM":
            return (self.proj_size or self.hidden_size, self.hidden_size)
        return (self.hidden_size,)

    def _check_input(self, input, packed):
        name = type(self).__name__
        weight_dtype = self.weight_ih_l0.dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"{name}: RNN input dtype ({input.dtype}) does not match weight "
                             f"dtype ({weight_dtype}). Convert input: input.to({weight_dtype}), "
                             f"or convert model: model.to({input.dtype})")
        expected_dim = 2 if packed else 3
        if input.ndim != expected_dim:
            raise RuntimeError(f"{name}: input must have {expected_dim} dimensions, got "
                               f"{input.ndim}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _initial_states(self, hx, batch, dtype, is_batched, packed):
        """The initial states as a tuple of (layers * directions, batch, size) tensors."""
        name = type(self).__name__
        sizes = self._state_sizes()
        layers = self.num_layers * (2 if self.bidirectional else 1)
        if hx is None:
            return tuple(zeros(layers, batch, size, dtype=dtype) for size in sizes)
        lstm = self.mode == "LSTM"
        if lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2 or not all(map(_is_tensor, hx)):
                raise TypeError(f"{name}: hx must be a tuple (h_0, c_0) of two tensors, got "
                                f"{type(hx).__name__}")
            states = tuple(hx)
        else:
            if not _is_tensor(hx):
                raise TypeError(f"{name}: hx must be a tensor, got {type(hx).__name__}")
            states = (hx,)
        if not packed:
            want = 3 if is_batched else 2
            if any(s.ndim != want for s in states):
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                got = ", ".join(f"{s.ndim}-D" for s in states)
                what = "hx and cx" if lstm else "hx"
                raise RuntimeError(f"{name}: For {kind} input, {what} should also be {want}-D but "
                                   f"got ({got}) tensor{'s' if lstm else ''}")
            if not is_batched:
                states = tuple(s.unsqueeze(1) for s in states)
        for k, (s, size) in enumerate(zip(states, sizes)):
            expected = (layers, batch, size)
            if tuple(s.shape) != expected:
                label = f"hidden[{k}]" if lstm else "hidden"
                raise RuntimeError(f"{name}: Expected {label} size {expected}, got "
                                   f"{_shape_list(s)}")
            if s.dtype != dtype:
                raise ValueError(f"{name}: hidden state dtype ({s.dtype}) does not match the "
                                 f"input dtype ({dtype})")
        return states

    # -- the recurrence ----------------------------------------------------------------------

    def _layer_weights(self, layer, direction):
        names = self._all_weights[layer * (2 if self.bidirectional else 1) + direction]
        weights = dict(zip((n.split("_l")[0] for n in names), (getattr(self, n) for n in names)))
        return (weights["weight_ih"], weights["weight_hh"], weights.get("bias_ih"),
                weights.get("bias_hh"), weights.get("weight_hr"))

    def _run(self, input, batch_sizes, states):
        """Every layer and direction over ``input`` (T, B, I), or packed data when
        ``batch_sizes`` (a list of ints) is given. Returns the last layer's output
        and the final states stacked as (layers * directions, B, size)."""
        step = _STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        initial = [unbind(s, 0) for s in states]
        finals = [[] for _ in states]
        layer_input = input
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(layer, direction)
                xp = _input_projection(self.mode, layer_input, w_ih, b_ih, b_hh)
                steps = unbind(xp, 0) if batch_sizes is None else split(xp, batch_sizes, 0)
                index = layer * directions + direction
                state0 = tuple(s[index] for s in initial)
                step_outputs, final = _run_direction(
                    step, steps, state0, w_hh, b_hh, w_hr, reverse=direction == 1)
                outputs.append(stack(step_outputs) if batch_sizes is None
                               else cat(step_outputs))
                for k, f in enumerate(final):
                    finals[k].append(f)
            layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, training=True)
        return layer_input, tuple(stack(f) for f in finals)

    def forward(self, input, hx=None):
        name = type(self).__name__
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes.numpy()]
            self._check_input(data, packed=True)
            batch = batch_sizes[0] if batch_sizes else 0
            states = self._initial_states(hx, batch, data.dtype, True, packed=True)
            if hx is not None and sorted_indices is not None:
                # The user's hx follows the batch order; the packed batch is sorted.
                states = tuple(index_select(s, 1, sorted_indices) for s in states)
            output, finals = self._run(data, batch_sizes, states)
            if unsorted_indices is not None:
                finals = tuple(index_select(f, 1, unsorted_indices) for f in finals)
            output = PackedSequence(output, input.batch_sizes, sorted_indices, unsorted_indices)
            return output, (finals if self.mode == "LSTM" else finals[0])
        if not _is_tensor(input):
            raise TypeError(f"{name}: input must be a Tensor or a PackedSequence, got "
                            f"{type(input).__name__}")
        if input.ndim not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D tensor "
                             f"instead")
        is_batched = input.ndim == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        self._check_input(input, packed=False)
        if self.batch_first:
            input = input.transpose(0, 1)
        steps, batch = input.shape[:2]
        states = self._initial_states(hx, batch, input.dtype, is_batched, packed=False)
        if steps == 0:
            raise RuntimeError(f"{name}: Expected sequence length to be larger than 0 in RNN")
        output, finals = self._run(input, None, states)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            finals = tuple(f.squeeze(1) for f in finals)
        return output, (finals if self.mode == "LSTM" else finals[0])


_LAYER_DOC = """Parameters
    ----------
    input_size : int
        Features of each input step.
    hidden_size : int
        Features of the hidden state.
    num_layers : int, default 1
        Stacked layers; layer ``k > 0`` reads layer ``k - 1``'s output.
    {extra}bias : bool, default True
        Whether the layers have ``bias_ih`` and ``bias_hh``.
    batch_first : bool, default False
        Input and output are ``(B, T, *)`` rather than ``(T, B, *)`` (the
        states stay ``(layers * directions, B, *)``).
    dropout : float, default 0
        Dropout on each layer's output but the last, in training mode only.
    bidirectional : bool, default False
        Also run each layer backwards in time; the outputs are concatenated.
    device, dtype
        ``None`` or ``"cpu"``; the parameters' float dtype (default float32).

    Call with ``input`` ``(T, B, input_size)`` (``(T, input_size)``
    unbatched) or a ``PackedSequence``, and optionally the initial state
    {state} (zeros when omitted).
"""


class RNN(RNNBase):
    """An Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``.

    {doc}
    Returns ``(output, h_n)``: ``output`` ``(T, B, D * hidden_size)`` (a
    ``PackedSequence`` for packed input) and ``h_n`` ``(num_layers * D, B,
    hidden_size)``, ``D = 2`` if bidirectional else 1.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> rnn = nn.RNN(10, 20, num_layers=2)
    >>> output, h_n = rnn(oxmera.randn(5, 3, 10), oxmera.zeros(2, 3, 20))
    >>> output.shape, h_n.shape
    (oxmera.Size([5, 3, 20]), oxmera.Size([2, 3, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("RNN: proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument "
                            f"{next(iter(kwargs))!r}")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             f"'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size,
                         hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


RNN.__doc__ = RNN.__doc__.replace("{doc}", _LAYER_DOC.format(
    extra="nonlinearity : {'tanh', 'relu'}, default 'tanh'\n    ",
    state="``h_0`` ``(num_layers * D, B, hidden_size)``"))


class LSTM(RNNBase):
    """A long short-term memory layer, gates in PyTorch's order ``i, f, g, o``.

    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (times
    ``weight_hr`` when ``proj_size > 0``).

    {doc}
    Returns ``(output, (h_n, c_n))``: ``output`` ``(T, B, D * H_out)``,
    ``h_n`` ``(num_layers * D, B, H_out)``, ``c_n`` ``(num_layers * D, B,
    hidden_size)``, where ``H_out`` is ``proj_size`` or ``hidden_size``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> lstm = nn.LSTM(10, 20, batch_first=True, proj_size=5)
    >>> output, (h_n, c_n) = lstm(oxmera.randn(3, 7, 10))
    >>> output.shape, h_n.shape, c_n.shape
    (oxmera.Size([3, 7, 5]), oxmera.Size([1, 3, 5]), oxmera.Size([1, 3, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device=device, dtype=dtype)


LSTM.__doc__ = LSTM.__doc__.replace("{doc}", _LAYER_DOC.format(
    extra="proj_size : int, default 0\n        Project each h_t to this size "
          "(``weight_hr_l{k}``).\n    ",
    state="``(h_0, c_0)``"))


class GRU(RNNBase):
    """A gated recurrent unit layer, gates in PyTorch's order ``r, z, n``.

    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h_t = (1 - z) * n +
    z * h_{t-1}``.

    {doc}
    Returns ``(output, h_n)`` shaped as the ``RNN``'s.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> gru = nn.GRU(10, 20, bidirectional=True)
    >>> output, h_n = gru(oxmera.randn(5, 10))
    >>> output.shape, h_n.shape
    (oxmera.Size([5, 40]), oxmera.Size([2, 20]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("GRU: proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument "
                            f"{next(iter(kwargs))!r}")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)


GRU.__doc__ = GRU.__doc__.replace("{doc}", _LAYER_DOC.format(
    extra="", state="``h_0`` ``(num_layers * D, B, hidden_size)``"))


# -- cells -----------------------------------------------------------------------------------

class RNNCellBase(Module):
    """The parameters and checks the one-step cells share.

    ``weight_ih`` ``(gates * hidden_size, input_size)``, ``weight_hh``
    ``(gates * hidden_size, hidden_size)``, ``bias_ih`` and ``bias_hh``, all
    drawn from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

    Examples
    --------
    >>> from oxmera import nn
    >>> nn.GRUCell(3, 4).weight_hh.shape
    oxmera.Size([12, 4])
    """

    _mode = None

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        for arg, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name}: {arg} should be of type int, got: "
                                f"{type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name}: {arg} must be greater than zero, got {value}")
        dtype = factory_dtype(device, dtype, name)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), dtype))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), dtype))
        if bias:
            self.bias_ih = Parameter(empty((num_chunks * hidden_size,), dtype))
            self.bias_hh = Parameter(empty((num_chunks * hidden_size,), dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def _step(self, input, states):
        """One step from ``input`` (1-D or 2-D) and the state tuple (None: zeros)."""
        name = type(self).__name__
        if not _is_tensor(input):
            raise TypeError(f"{name}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        is_batched = input.ndim == 2
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"{name}: input dtype ({input.dtype}) does not match weight "
                               f"dtype ({self.weight_ih.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got "
                               f"{input.shape[-1]} expected {self.input_size}")
        if not is_batched:
            input = input.unsqueeze(0)
        batch = input.shape[0]
        count = 2 if self._mode == "LSTM" else 1
        if states is None:
            states = tuple(zeros(batch, self.hidden_size, dtype=input.dtype)
                           for _ in range(count))
        else:
            want = 2 if is_batched else 1
            for k, s in enumerate(states):
                if not _is_tensor(s):
                    raise TypeError(f"{name}: hidden{k} must be a Tensor, got "
                                    f"{type(s).__name__}")
                if s.ndim != want:
                    raise ValueError(f"{name}: Expected hidden to be {want}D for "
                                     f"{want}D input, got {s.ndim}D instead")
            if not is_batched:
                states = tuple(s.unsqueeze(0) for s in states)
            for k, s in enumerate(states):
                if s.shape[0] != batch:
                    raise RuntimeError(f"{name}: Input batch size {batch} doesn't match "
                                       f"hidden{k} batch size {s.shape[0]}")
                if s.shape[1] != self.hidden_size:
                    raise RuntimeError(f"{name}: hidden{k} has inconsistent hidden_size: got "
                                       f"{s.shape[1]}, expected {self.hidden_size}")
                if s.dtype != input.dtype:
                    raise RuntimeError(f"{name}: hidden{k} dtype ({s.dtype}) does not match "
                                       f"the input dtype ({input.dtype})")
        xp = _input_projection(self._mode, input, self.weight_ih, self.bias_ih, self.bias_hh)
        out = _STEPS[self._mode](xp, states, self.weight_hh, self.bias_hh, None)
        if not is_batched:
            out = tuple(s.squeeze(0) for s in out)
        return out


class RNNCell(RNNCellBase):
    """One Elman RNN step: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Parameters
    ----------
    input_size, hidden_size : int
        Features of the input and of the hidden state.
    bias : bool, default True
        Whether to learn ``bias_ih`` and ``bias_hh``.
    nonlinearity : {'tanh', 'relu'}, default 'tanh'
    device, dtype
        ``None`` or ``"cpu"``; the parameters' float dtype (default float32).

    Call with ``input`` ``(B, input_size)`` or ``(input_size,)`` and
    optionally ``hx`` ``(B, hidden_size)`` or ``(hidden_size,)`` (zeros when
    omitted); returns ``h'`` shaped as ``hx``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> cell = nn.RNNCell(10, 20)
    >>> hx = oxmera.zeros(3, 20)
    >>> for x in oxmera.randn(6, 3, 10):
    ...     hx = cell(x, hx)
    >>> hx.shape
    oxmera.Size([3, 20])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    @property
    def _mode(self):
        if self.nonlinearity == "tanh":
            return "RNN_TANH"
        if self.nonlinearity == "relu":
            return "RNN_RELU"
        raise RuntimeError(f"RNNCell: Unknown nonlinearity: {self.nonlinearity}")

    def forward(self, input, hx=None):
        return self._step(input, None if hx is None else (hx,))[0]


class LSTMCell(RNNCellBase):
    """One LSTM step, gates in PyTorch's order ``i, f, g, o``.

    ``c' = f * c + i * g``, ``h' = o * tanh(c')``.

    Parameters
    ----------
    input_size, hidden_size : int
        Features of the input and of the hidden state.
    bias : bool, default True
        Whether to learn ``bias_ih`` and ``bias_hh``.
    device, dtype
        ``None`` or ``"cpu"``; the parameters' float dtype (default float32).

    Call with ``input`` ``(B, input_size)`` or ``(input_size,)`` and
    optionally ``(h, c)`` (zeros when omitted); returns ``(h', c')``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> cell = nn.LSTMCell(10, 20)
    >>> h, c = cell(oxmera.randn(3, 10))
    >>> h.shape, c.shape
    (oxmera.Size([3, 20]), oxmera.Size([3, 20]))
    """

    _mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h, c) of two tensors, got "
                            f"{type(hx).__name__}")
        return self._step(input, None if hx is None else tuple(hx))


class GRUCell(RNNCellBase):
    """One GRU step, gates in PyTorch's order ``r, z, n``.

    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n +
    z * h``.

    Parameters
    ----------
    input_size, hidden_size : int
        Features of the input and of the hidden state.
    bias : bool, default True
        Whether to learn ``bias_ih`` and ``bias_hh``.
    device, dtype
        ``None`` or ``"cpu"``; the parameters' float dtype (default float32).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.GRUCell(10, 20)(oxmera.randn(10)).shape
    oxmera.Size([20])
    """

    _mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._step(input, None if hx is None else (hx,))[0]

