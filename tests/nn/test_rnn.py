"""The recurrent layers and cells of ``oxmera.nn`` and ``oxmera.nn.utils.rnn``.

Against PyTorch with a copied state_dict (float64: outputs, final states and
every gradient to 1e-10; skipped without torch); against a NumPy reference
of the recurrences and against finite differences (gradcheck and
gradgradcheck in float64) without it; packed sequences against the padded
runs they stand for; the constructor and input errors.
"""
import math

import numpy as np
import pytest

import oxmera
from oxmera import nn
from oxmera.autograd import gradcheck, gradgradcheck
from oxmera.nn.utils import rnn as rnn_utils

try:
    import torch
except ImportError:        # the suite runs without torch; those comparisons skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
F64 = oxmera.float64
TOL = dict(rtol=1e-10, atol=1e-10)


def _np(t):
    return t.detach().numpy()


def _randn(*shape, seed=0, requires_grad=False):
    x = oxmera.tensor(np.random.default_rng(seed).standard_normal(shape))
    return x.requires_grad_() if requires_grad else x


def _layer(kind, *args, **kwargs):
    """``nn.RNN`` with relu is spelled ``"RNN_RELU"`` in the parametrizations."""
    if kind == "RNN_RELU":
        return nn.RNN(*args, nonlinearity="relu", **kwargs)
    return getattr(nn, kind)(*args, **kwargs)


def _torch_layer(kind, *args, **kwargs):
    if kind == "RNN_RELU":
        return torch.nn.RNN(*args, nonlinearity="relu", **kwargs)
    return getattr(torch.nn, kind)(*args, **kwargs)


def _pair(kind, *args, **kwargs):
    """The same layer in both libraries, float64, torch's weights loaded into oxmera's."""
    theirs = _torch_layer(kind, *args, dtype=torch.float64, **kwargs)
    ours = _layer(kind, *args, dtype=F64, **kwargs)
    ours.load_state_dict({k: oxmera.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def _both(array, requires_grad=True):
    ours = oxmera.tensor(array.copy())
    theirs = torch.tensor(array.copy())
    if requires_grad:
        ours.requires_grad_()
        theirs.requires_grad_()
    return ours, theirs


def _flat(result):
    """A layer's result as a flat list of tensors: output, then the states."""
    out, state = result
    if isinstance(out, tuple):                       # a PackedSequence: its data
        out = out[0]
    states = list(state) if isinstance(state, tuple) else [state]
    return [out, *states]


def _compare_backward(ours_outs, theirs_outs, ours_leaves, theirs_leaves, seed=5):
    """Same random cotangents on every output; every leaf's gradient must agree."""
    rng = np.random.default_rng(seed)
    cotangents = [rng.standard_normal(tuple(t.shape)) for t in theirs_outs]
    for o, t in zip(ours_outs, theirs_outs):
        np.testing.assert_allclose(_np(o), t.detach().numpy(), **TOL)
    ours_loss = sum((o * oxmera.tensor(c)).sum() for o, c in zip(ours_outs, cotangents))
    theirs_loss = sum((t * torch.tensor(c)).sum() for t, c in zip(theirs_outs, cotangents))
    ours_loss.backward()
    theirs_loss.backward()
    for o, t in zip(ours_leaves, theirs_leaves):
        np.testing.assert_allclose(_np(o.grad), t.grad.numpy(), **TOL)


CONFIGS = [
    # kind, layer kwargs, give the initial state, unbatched
    ("RNN", {}, False, False),
    ("RNN_RELU", {"num_layers": 2}, True, False),
    ("RNN", {"bidirectional": True, "batch_first": True}, True, False),
    ("LSTM", {}, False, False),
    ("LSTM", {"num_layers": 2, "bidirectional": True}, True, False),
    ("LSTM", {"proj_size": 2, "num_layers": 2}, True, False),
    ("LSTM", {"proj_size": 3, "bidirectional": True, "batch_first": True}, False, False),
    ("LSTM", {"bias": False, "batch_first": True}, True, True),
    ("LSTM", {"num_layers": 2}, False, True),
    ("GRU", {}, False, False),
    ("GRU", {"num_layers": 3, "bidirectional": True}, True, False),
    ("GRU", {"bias": False, "batch_first": True}, True, False),
    ("GRU", {"bidirectional": True}, True, True),
    ("RNN", {"bias": False}, True, True),
]


def _state_shapes(kind, kwargs, batch, hidden):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    lead = (layers,) if batch is None else (layers, batch)
    if kind == "LSTM":
        return [lead + (kwargs.get("proj_size") or hidden,), lead + (hidden,)]
    return [lead + (hidden,)]


@needs_torch
@pytest.mark.parametrize("kind,kwargs,give_state,unbatched", CONFIGS)
def test_layer_matches_torch(kind, kwargs, give_state, unbatched):
    steps, batch, inputs, hidden = 4, 3, 5, 4
    ours, theirs = _pair(kind, inputs, hidden, **kwargs)
    rng = np.random.default_rng(2)
    if unbatched:
        shape = (steps, inputs)
    else:
        shape = (batch, steps, inputs) if kwargs.get("batch_first") else (steps, batch, inputs)
    x, tx = _both(rng.standard_normal(shape))
    leaves, tleaves = [x], [tx]
    args, targs = [x], [tx]
    if give_state:
        states = [_both(rng.standard_normal(s))
                  for s in _state_shapes(kind, kwargs, None if unbatched else batch, hidden)]
        leaves += [s[0] for s in states]
        tleaves += [s[1] for s in states]
        if kind == "LSTM":
            args.append((states[0][0], states[1][0]))
            targs.append((states[0][1], states[1][1]))
        else:
            args.append(states[0][0])
            targs.append(states[0][1])
    ours_outs, theirs_outs = _flat(ours(*args)), _flat(theirs(*targs))
    for o, t in zip(ours_outs, theirs_outs):
        assert o.shape == tuple(t.shape)
    _compare_backward(ours_outs, theirs_outs, leaves + list(ours.parameters()),
                      tleaves + list(theirs.parameters()))


@needs_torch
@pytest.mark.parametrize("kind,kwargs", [
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2}),
    ("GRU", {"bidirectional": True}),
    ("RNN", {"num_layers": 2}),
])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("give_state", [False, True])
def test_packed_layer_matches_torch(kind, kwargs, enforce_sorted, give_state):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    inputs, hidden, batch = 3, 4, len(lengths)
    ours, theirs = _pair(kind, inputs, hidden, **kwargs)
    rng = np.random.default_rng(7)
    x, tx = _both(rng.standard_normal((max(lengths), batch, inputs)))
    packed = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(_np(packed.data), tpacked.data.detach().numpy())
    np.testing.assert_array_equal(packed.batch_sizes.numpy(), tpacked.batch_sizes.numpy())
    leaves, tleaves, args, targs = [x], [tx], [packed], [tpacked]
    if give_state:
        states = [_both(rng.standard_normal(s))
                  for s in _state_shapes(kind, kwargs, batch, hidden)]
        leaves += [s[0] for s in states]
        tleaves += [s[1] for s in states]
        args.append(tuple(s[0] for s in states) if kind == "LSTM" else states[0][0])
        targs.append(tuple(s[1] for s in states) if kind == "LSTM" else states[0][1])
    out, state = ours(*args)
    tout, tstate = theirs(*targs)
    assert isinstance(out, rnn_utils.PackedSequence)
    padded, out_lengths = rnn_utils.pad_packed_sequence(out)
    tpadded, _ = torch.nn.utils.rnn.pad_packed_sequence(tout)
    np.testing.assert_array_equal(out_lengths.numpy(), lengths)
    _compare_backward(_flat((padded, state)), _flat((tpadded, tstate)),
                      leaves + list(ours.parameters()), tleaves + list(theirs.parameters()))


@needs_torch
@pytest.mark.parametrize("kind", ["RNNCell", "RNN_RELU_CELL", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("form", ["batched", "unbatched", "no state"])
def test_cell_matches_torch(kind, bias, form):
    extra = {"nonlinearity": "relu"} if kind == "RNN_RELU_CELL" else {}
    name = "RNNCell" if kind == "RNN_RELU_CELL" else kind
    theirs = getattr(torch.nn, name)(5, 4, bias=bias, dtype=torch.float64, **extra)
    ours = getattr(nn, name)(5, 4, bias=bias, dtype=F64, **extra)
    ours.load_state_dict({k: oxmera.tensor(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(3)
    lead = () if form == "unbatched" else (3,)
    x, tx = _both(rng.standard_normal(lead + (5,)))
    leaves, tleaves, args, targs = [x], [tx], [x], [tx]
    if form != "no state":
        states = [_both(rng.standard_normal(lead + (4,)))
                  for _ in range(2 if name == "LSTMCell" else 1)]
        leaves += [s[0] for s in states]
        tleaves += [s[1] for s in states]
        args.append(tuple(s[0] for s in states) if name == "LSTMCell" else states[0][0])
        targs.append(tuple(s[1] for s in states) if name == "LSTMCell" else states[0][1])
    result, tresult = ours(*args), theirs(*targs)
    outs = list(result) if isinstance(result, tuple) else [result]
    touts = list(tresult) if isinstance(tresult, tuple) else [tresult]
    for o, t in zip(outs, touts):
        assert o.shape == tuple(t.shape)
    _compare_backward(outs, touts, leaves + list(ours.parameters()),
                      tleaves + list(theirs.parameters()))


@needs_torch
@pytest.mark.parametrize("kind,kwargs", [
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
    ("GRU", {"num_layers": 2, "bias": False}),
    ("RNN", {"bidirectional": True}),
    ("LSTMCell", {}), ("GRUCell", {"bias": False}), ("RNNCell", {}),
])
def test_parameter_names_shapes_and_order_match_torch(kind, kwargs):
    ours = getattr(nn, kind)(3, 5, **kwargs)
    theirs = getattr(torch.nn, kind)(3, 5, **kwargs)
    assert ([(n, p.shape) for n, p in ours.named_parameters()]
            == [(n, tuple(p.shape)) for n, p in theirs.named_parameters()])
    if not kind.endswith("Cell"):
        assert ([[tuple(p.shape) for p in ws] for ws in ours.all_weights]
                == [[tuple(p.shape) for p in ws] for ws in theirs.all_weights])
        assert ours._flat_weights_names == theirs._flat_weights_names
    assert repr(ours) == repr(theirs)


@needs_torch
def test_nonlinearity_repr_matches_torch():
    assert repr(nn.RNN(3, 4, 2, "relu")) == repr(torch.nn.RNN(3, 4, 2, "relu"))
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == repr(
        torch.nn.RNNCell(3, 4, nonlinearity="relu"))


# -- without torch: NumPy references -------------------------------------------------------

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _reference_layer(kind, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=False):
    """One layer and direction over x (T, B, I), written out per PyTorch's equations."""
    h, c, outputs = h0, c0, []
    order = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    for t in order:
        gx, gh = x[t] @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        if kind == "LSTM":
            i, f, g, o = np.split(gx + gh, 4, axis=-1)
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = _sigmoid(o) * np.tanh(c)
        elif kind == "GRU":
            xr, xz, xn = np.split(gx, 3, axis=-1)
            hr, hz, hn = np.split(gh, 3, axis=-1)
            r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
            n = np.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
        else:
            h = np.tanh(gx + gh)
        outputs.append(h)
    if reverse:
        outputs.reverse()
    return np.stack(outputs), h, c


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_bidirectional_layer_matches_numpy_reference(kind):
    layer = getattr(nn, kind)(3, 4, bidirectional=True, dtype=F64)
    x = np.random.default_rng(0).standard_normal((5, 2, 3))
    h0 = np.random.default_rng(1).standard_normal((2, 2, 4))
    c0 = np.random.default_rng(2).standard_normal((2, 2, 4))
    state = (oxmera.tensor(h0), oxmera.tensor(c0)) if kind == "LSTM" else oxmera.tensor(h0)
    out, final = layer(oxmera.tensor(x), state)
    finals = [_np(f) for f in (final if kind == "LSTM" else (final,))]
    outputs = []
    for d, ws in enumerate(layer.all_weights):
        ref_out, ref_h, ref_c = _reference_layer(kind, x, h0[d], c0[d], *[_np(w) for w in ws],
                                                 reverse=d == 1)
        outputs.append(ref_out)
        np.testing.assert_allclose(finals[0][d], ref_h, rtol=1e-12, atol=1e-12)
        if kind == "LSTM":
            np.testing.assert_allclose(finals[1][d], ref_c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(out), np.concatenate(outputs, -1), rtol=1e-12, atol=1e-12)


def test_lstm_projection_matches_numpy_reference():
    layer = nn.LSTM(3, 5, proj_size=2, dtype=F64)
    w_ih, w_hh, b_ih, b_hh, w_hr = [_np(w) for w in layer.all_weights[0]]
    x = np.random.default_rng(0).standard_normal((4, 2, 3))
    h, c = np.zeros((2, 2)), np.zeros((2, 5))
    outputs = []
    for t in range(4):
        i, f, g, o = np.split(x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = (_sigmoid(o) * np.tanh(c)) @ w_hr.T
        outputs.append(h)
    out, (h_n, c_n) = layer(oxmera.tensor(x))
    np.testing.assert_allclose(_np(out), np.stack(outputs), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(h_n[0]), h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(c_n[0]), c, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_run_equals_each_sequence_run_alone(kind, bidirectional):
    """Each sequence of a packed batch gets exactly its own unpadded run."""
    layer = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=bidirectional, dtype=F64)
    lengths = [2, 4, 1]
    seqs = [_randn(n, 3, seed=n) for n in lengths]
    out, final = layer(rnn_utils.pack_sequence(seqs, enforce_sorted=False))
    finals = final if kind == "LSTM" else (final,)
    for b, (seq, piece) in enumerate(zip(seqs, rnn_utils.unpack_sequence(out))):
        alone_out, alone_final = layer(seq)
        np.testing.assert_allclose(_np(piece), _np(alone_out), rtol=1e-12, atol=1e-12)
        alone_finals = alone_final if kind == "LSTM" else (alone_final,)
        for f, a in zip(finals, alone_finals):
            np.testing.assert_allclose(_np(f[:, b]), _np(a), rtol=1e-12, atol=1e-12)


def test_cell_is_one_step_of_the_layer():
    for layer, cell in ((nn.LSTM(3, 4, dtype=F64), nn.LSTMCell(3, 4, dtype=F64)),
                        (nn.GRU(3, 4, dtype=F64), nn.GRUCell(3, 4, dtype=F64)),
                        (nn.RNN(3, 4, dtype=F64), nn.RNNCell(3, 4, dtype=F64))):
        cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})
        x = _randn(1, 2, 3)
        out, _ = layer(x)
        step = cell(x[0])
        np.testing.assert_allclose(_np(out[0]), _np(step[0] if isinstance(step, tuple) else step),
                                   rtol=1e-12, atol=1e-12)


# -- gradients against finite differences --------------------------------------------------

@pytest.mark.parametrize("kind,kwargs", [
    ("RNN", {"num_layers": 2, "bidirectional": True}),
    ("RNN_RELU", {}),
    ("LSTM", {"bidirectional": True}),
    ("LSTM", {"proj_size": 1, "num_layers": 2}),
    ("GRU", {"num_layers": 2}),
    ("GRU", {"bias": False, "bidirectional": True, "batch_first": True}),
])
def test_layer_gradcheck(kind, kwargs):
    layer = _layer(kind, 2, 2, dtype=F64, **kwargs)
    x = _randn(3, 2, 2, requires_grad=True)      # 3 steps of 2, or 3 sequences if batch_first
    shapes = _state_shapes(kind, kwargs, 3 if kwargs.get("batch_first") else 2, 2)
    states = [_randn(*s, seed=k + 1, requires_grad=True) for k, s in enumerate(shapes)]
    params = tuple(layer.parameters())

    def fn(x, *rest):
        state = tuple(rest[:len(states)]) if kind == "LSTM" else rest[0]
        return tuple(_flat(layer(x, state)))

    inputs = (x, *states, *params)
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_packed_layer_gradcheck(kind):
    layer = getattr(nn, kind)(2, 2, bidirectional=True, dtype=F64)
    x = _randn(3, 3, 2, requires_grad=True)

    def fn(x, *params):
        out, state = layer(rnn_utils.pack_padded_sequence(x, [2, 3, 1], enforce_sorted=False))
        return (out.data, *(state if kind == "LSTM" else (state,)))

    inputs = (x, *layer.parameters())
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cell_gradcheck(name, batched):
    cell = getattr(nn, name)(3, 2, dtype=F64)
    lead = (2,) if batched else ()
    x = _randn(*lead, 3, requires_grad=True)
    states = [_randn(*lead, 2, seed=k + 1, requires_grad=True)
              for k in range(2 if name == "LSTMCell" else 1)]

    def fn(x, *rest):
        out = cell(x, tuple(rest[:2]) if name == "LSTMCell" else rest[0])
        return tuple(out) if isinstance(out, tuple) else out

    inputs = (x, *states, *cell.parameters())
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


# -- dropout, initialization, API ----------------------------------------------------------

def test_dropout_between_layers_only_in_training():
    layer = nn.LSTM(3, 4, num_layers=2, dropout=1.0, dtype=F64)
    x = _randn(5, 2, 3)
    # p=1 zeros layer 0's output: layer 1 then runs on zeros, as a lone layer with its weights.
    top = nn.LSTM(4, 4, dtype=F64)
    top.load_state_dict({k.replace("_l1", "_l0"): v for k, v in layer.state_dict().items()
                         if "_l1" in k})
    out, _ = layer(x)
    expected, _ = top(oxmera.zeros(5, 2, 4, dtype=F64))
    np.testing.assert_allclose(_np(out), _np(expected), rtol=1e-12, atol=1e-12)
    layer.eval()
    no_dropout = nn.LSTM(3, 4, num_layers=2, dtype=F64)
    no_dropout.load_state_dict(layer.state_dict())
    np.testing.assert_allclose(_np(layer(x)[0]), _np(no_dropout(x)[0]), rtol=0, atol=0)


def test_dropout_with_one_layer_warns():
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)


@pytest.mark.parametrize("make", [lambda: nn.LSTM(3, 16, 2, proj_size=4),
                                  lambda: nn.GRU(3, 16, bidirectional=True),
                                  lambda: nn.RNNCell(3, 16), lambda: nn.LSTMCell(3, 16)])
def test_initialization_is_uniform_in_one_over_sqrt_hidden(make):
    oxmera.manual_seed(0)
    module = make()
    bound = 1 / math.sqrt(16)
    values = np.concatenate([_np(p).ravel() for p in module.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    # Spread over the whole interval, not a constant or a narrower law.
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.1 * bound


def test_defaults_dtype_and_flatten_parameters():
    layer = nn.LSTM(3, 4)
    assert layer.weight_ih_l0.dtype == oxmera.float32
    assert layer.flatten_parameters() is None
    assert [p is q for p, q in zip(layer.all_weights[0], layer.parameters())] == [True] * 4
    out, (h, c) = layer(oxmera.randn(2, 1, 3))
    assert out.dtype == h.dtype == c.dtype == oxmera.float32


def test_empty_batch_gives_empty_outputs():
    out, (h, c) = nn.LSTM(3, 4)(oxmera.zeros(5, 0, 3))
    assert out.shape == (5, 0, 4) and h.shape == (1, 0, 4) and c.shape == (1, 0, 4)


def test_from_modules_path():
    from oxmera.nn.modules.rnn import LSTM
    assert LSTM is nn.LSTM and "LSTM" in nn.__all__ and "GRUCell" in nn.modules.__all__


# -- errors --------------------------------------------------------------------------------

@pytest.mark.parametrize("make,error,match", [
    (lambda: nn.LSTM(3, 4, dropout=1.5), ValueError, "LSTM: dropout should be a number"),
    (lambda: nn.LSTM(3, 4, dropout=True), ValueError, "dropout should be a number"),
    (lambda: nn.GRU(3, 4.0), TypeError, "GRU: hidden_size should be of type int, got: float"),
    (lambda: nn.GRU(3, 0), ValueError, "GRU: hidden_size must be greater than zero"),
    (lambda: nn.GRU(0, 3), ValueError, "input_size must be greater than zero"),
    (lambda: nn.RNN(3, 4, 0), ValueError, "num_layers must be greater than zero"),
    (lambda: nn.RNN(3, 4, bias=1), TypeError, "bias should be of type bool"),
    (lambda: nn.RNN(3, 4, batch_first=None), TypeError, "batch_first should be of type bool"),
    (lambda: nn.LSTM(3, 4, proj_size=4), ValueError, "proj_size has to be smaller than"),
    (lambda: nn.LSTM(3, 4, proj_size=-1), ValueError, "proj_size should be a positive"),
    (lambda: nn.GRU(3, 4, proj_size=2), ValueError, "only supported for LSTM"),
    (lambda: nn.RNN(3, 4, proj_size=2), ValueError, "only supported for LSTM"),
    (lambda: nn.RNN(3, 4, nonlinearity="gelu"), ValueError, "Unknown nonlinearity 'gelu'"),
    (lambda: nn.RNNCell(3, -1), ValueError, "RNNCell: hidden_size must be greater than zero"),
    (lambda: nn.LSTM(3, 4, device="cuda"), RuntimeError, "CPU only"),
])
def test_constructor_errors(make, error, match):
    with pytest.raises(error, match=match):
        make()


def _lstm_state(layers, batch, hidden):
    return (oxmera.zeros(layers, batch, hidden), oxmera.zeros(layers, batch, hidden))


@pytest.mark.parametrize("call,error,match", [
    (lambda: nn.LSTM(3, 4)(oxmera.zeros(5, 2, 4)), RuntimeError,
     r"LSTM: input.size\(-1\) must be equal to input_size. Expected 3, got 4"),
    (lambda: nn.GRU(3, 4)(oxmera.zeros(3)), ValueError,
     "GRU: Expected input to be 2D or 3D, got 1D"),
    (lambda: nn.GRU(3, 4)(oxmera.zeros(5, 2, 3, dtype=F64)), ValueError,
     r"GRU: RNN input dtype \(float64\) does not match weight dtype \(float32\)"),
    (lambda: nn.LSTM(3, 4)(oxmera.zeros(5, 2, 3), _lstm_state(1, 3, 4)), RuntimeError,
     r"LSTM: Expected hidden\[0\] size \(1, 2, 4\), got \[1, 3, 4\]"),
    (lambda: nn.LSTM(3, 4)(oxmera.zeros(5, 2, 3),
                           (oxmera.zeros(1, 2, 4), oxmera.zeros(1, 2, 5))), RuntimeError,
     r"Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 5\]"),
    (lambda: nn.RNN(3, 4, 2)(oxmera.zeros(5, 2, 3), oxmera.zeros(1, 2, 4)), RuntimeError,
     r"RNN: Expected hidden size \(2, 2, 4\), got \[1, 2, 4\]"),
    (lambda: nn.RNN(3, 4)(oxmera.zeros(5, 2, 3), oxmera.zeros(2, 4)), RuntimeError,
     "For batched 3-D input, hx should also be 3-D but got"),
    (lambda: nn.LSTM(3, 4)(oxmera.zeros(5, 3), _lstm_state(1, 1, 4)), RuntimeError,
     "For unbatched 2-D input, hx and cx should also be 2-D"),
    (lambda: nn.LSTM(3, 4)(oxmera.zeros(5, 2, 3), oxmera.zeros(1, 2, 4)), TypeError,
     r"LSTM: hx must be a tuple \(h_0, c_0\)"),
    (lambda: nn.GRU(3, 4)(oxmera.zeros(0, 2, 3)), RuntimeError,
     "sequence length to be larger than 0"),
    (lambda: nn.LSTMCell(3, 4)(oxmera.zeros(2, 5)), RuntimeError,
     "LSTMCell: input has inconsistent input_size: got 5 expected 3"),
    (lambda: nn.GRUCell(3, 4)(oxmera.zeros(2, 3), oxmera.zeros(3, 4)), RuntimeError,
     "GRUCell: Input batch size 2 doesn't match hidden0 batch size 3"),
    (lambda: nn.LSTMCell(3, 4)(oxmera.zeros(2, 3), (oxmera.zeros(2, 4), oxmera.zeros(2, 2))),
     RuntimeError, "hidden1 has inconsistent hidden_size: got 2, expected 4"),
    (lambda: nn.RNNCell(3, 4)(oxmera.zeros(1, 2, 3)), ValueError,
     "RNNCell: Expected input to be 1D or 2D, got 3D"),
    (lambda: nn.RNNCell(3, 4)(oxmera.zeros(3), oxmera.zeros(2, 4)), ValueError,
     "RNNCell: Expected hidden to be 1D for 1D input, got 2D"),
    (lambda: nn.LSTMCell(3, 4)(oxmera.zeros(2, 3), oxmera.zeros(2, 4)), TypeError,
     r"LSTMCell: hx must be a tuple \(h, c\)"),
])
def test_input_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_unknown_cell_nonlinearity_fails_in_forward():
    cell = nn.RNNCell(3, 4)
    cell.nonlinearity = "gelu"
    with pytest.raises(RuntimeError, match="RNNCell: Unknown nonlinearity: gelu"):
        cell(oxmera.zeros(3))


# -- nn.utils.rnn --------------------------------------------------------------------------

def test_pad_sequence_sides_and_layouts():
    seqs = [oxmera.tensor([[1.0], [2.0], [3.0]]), oxmera.tensor([[4.0]]),
            oxmera.tensor([[5.0], [6.0]])]
    right = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1.0)
    np.testing.assert_array_equal(_np(right)[..., 0], [[1, 2, 3], [4, -1, -1], [5, 6, -1]])
    left = rnn_utils.pad_sequence(seqs, padding_side="left")
    np.testing.assert_array_equal(_np(left)[..., 0].T, [[1, 2, 3], [0, 0, 4], [0, 5, 6]])
    with pytest.raises(RuntimeError, match="padding_side to be one of left or right"):
        rnn_utils.pad_sequence(seqs, padding_side="middle")
    with pytest.raises(RuntimeError, match="empty list of sequences"):
        rnn_utils.pad_sequence([])
    with pytest.raises(RuntimeError, match="same trailing dims"):
        rnn_utils.pad_sequence([oxmera.zeros(2, 3), oxmera.zeros(2, 2)])


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch_with_gradients(batch_first, padding_side):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((n, 2)) for n in (3, 1, 4)]
    pairs = [_both(a) for a in arrays]
    ours = rnn_utils.pad_sequence([p[0] for p in pairs], batch_first, 0.5, padding_side)
    theirs = torch.nn.utils.rnn.pad_sequence([p[1] for p in pairs], batch_first, 0.5,
                                             padding_side)
    _compare_backward([ours], [theirs], [p[0] for p in pairs], [p[1] for p in pairs])


@needs_torch
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_and_pad_round_trip_matches_torch(batch_first, enforce_sorted):
    lengths = [4, 2, 2, 1] if enforce_sorted else [2, 4, 1, 2]
    rng = np.random.default_rng(1)
    shape = (4, 4, 3) if batch_first else (4, 4, 3)
    x, tx = _both(rng.standard_normal(shape))
    packed = rnn_utils.pack_padded_sequence(x, oxmera.tensor(lengths), batch_first,
                                            enforce_sorted)
    tpacked = torch.nn.utils.rnn.pack_padded_sequence(tx, torch.tensor(lengths), batch_first,
                                                      enforce_sorted)
    for ours, theirs in zip(packed[1:], tpacked[1:]):
        assert (ours is None) == (theirs is None)
        if ours is not None:
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    padded, out_lengths = rnn_utils.pad_packed_sequence(packed, batch_first, -2.0, total_length=6)
    tpadded, tlengths = torch.nn.utils.rnn.pad_packed_sequence(tpacked, batch_first, -2.0,
                                                               total_length=6)
    np.testing.assert_array_equal(out_lengths.numpy(), tlengths.numpy())
    _compare_backward([packed.data, padded], [tpacked.data, tpadded], [x], [tx])


def test_pack_sequence_and_unpack_round_trip_with_gradients():
    seqs = [_randn(n, 2, seed=n, requires_grad=True) for n in (2, 5, 3)]
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    np.testing.assert_array_equal(packed.batch_sizes.numpy(), [3, 3, 2, 1, 1])
    np.testing.assert_array_equal(packed.sorted_indices.numpy(), [1, 2, 0])
    np.testing.assert_array_equal(packed.unsorted_indices.numpy(), [2, 0, 1])
    back = rnn_utils.unpack_sequence(packed)
    for s, b in zip(seqs, back):
        np.testing.assert_array_equal(_np(s), _np(b))
    sum((b * (k + 1)).sum() for k, b in enumerate(back)).backward()
    for k, s in enumerate(seqs):
        np.testing.assert_array_equal(_np(s.grad), np.full(s.shape, k + 1.0))
    padded = rnn_utils.pad_sequence(seqs)
    pieces = rnn_utils.unpad_sequence(padded, oxmera.tensor([2, 5, 3]))
    for s, p in zip(seqs, pieces):
        np.testing.assert_array_equal(_np(s), _np(p))


def test_packing_errors():
    x = oxmera.zeros(3, 2, 1)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        rnn_utils.pack_padded_sequence(x, [1, 3])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size"):
        rnn_utils.pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(RuntimeError, match="has to be greater than 0"):
        rnn_utils.pack_padded_sequence(x, [0, 3], enforce_sorted=False)
    with pytest.raises(RuntimeError, match="exceeds the input's 3 time steps"):
        rnn_utils.pack_padded_sequence(x, [4, 3])
    packed = rnn_utils.pack_padded_sequence(x, [3, 1])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        rnn_utils.pad_packed_sequence(packed, total_length=2)


def test_packed_sequence_is_a_namedtuple_with_conversions():
    packed = rnn_utils.pack_sequence([oxmera.tensor([1.0, 2.0]), oxmera.tensor([3.0])])
    data, batch_sizes, sorted_indices, unsorted_indices = packed
    assert sorted_indices is None and unsorted_indices is None
    assert packed.double().data.dtype == oxmera.float64
    assert packed.to(oxmera.float32) is packed
    assert not packed.is_cuda


def test_pad_sequence_of_a_tensor_pads_its_rows():
    # A tensor is its sequences along dim 0, as in PyTorch: (2, 3) is two sequences of 3.
    padded = rnn_utils.pad_sequence(oxmera.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    np.testing.assert_array_equal(_np(padded), [[1, 4], [2, 5], [3, 6]])


def test_packed_sequence_needs_batch_sizes():
    with pytest.raises(ValueError, match="batch_sizes must be given"):
        rnn_utils.PackedSequence(oxmera.zeros(3, 2))
