"""The layers of ``oxmera.nn``: forward values against NumPy references, gradients
against finite differences (float64 gradcheck through the parameters too), forward
and backward against PyTorch with the same weights (skipped without torch), default
initializations, train/eval behaviour of Dropout and BatchNorm (running statistics
against PyTorch's), and the constructor and input errors.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
from oxmera import nn
from oxmera.autograd import gradcheck

try:
    import torch
except ImportError:        # the suite runs without torch; those comparisons skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
F64 = oxmera.float64


def _np(t):
    return t.detach().numpy()


def _rng(seed=0):
    return np.random.default_rng(seed)


def _randn(*shape, seed=0, dtype=np.float64):
    return oxmera.tensor(_rng(seed).standard_normal(shape).astype(dtype))


def _randomize(module, seed=1):
    """Random parameter values (norm layers start at ones/zeros, which test little)."""
    rng = _rng(seed)
    with oxmera.no_grad():
        for p in module.parameters():
            p.copy_(oxmera.tensor(rng.standard_normal(p.shape).astype(p.dtype)))
    return module


# -- NumPy references ---------------------------------------------------------------------

def _conv2d_ref(x, w, b, stride, padding, dilation, groups):
    n, c_in, h, wd = x.shape
    c_out, c_per_group, kh, kw = w.shape
    (ph0, ph1), (pw0, pw1) = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph0, ph1), (pw0, pw1)))
    out_h = (h + ph0 + ph1 - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (wd + pw0 + pw1 - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, c_out, out_h, out_w))
    out_per_group = c_out // groups
    for o in range(c_out):
        g = o // out_per_group
        channels = slice(g * c_per_group, (g + 1) * c_per_group)
        for i in range(out_h):
            for j in range(out_w):
                rows = i * stride[0] + dilation[0] * np.arange(kh)
                cols = j * stride[1] + dilation[1] * np.arange(kw)
                patch = xp[:, channels][:, :, rows][:, :, :, cols]
                out[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    if b is not None:
        out += b[None, :, None, None]
    return out


def _pool_ref(x, k, stride, padding, reduce, pad_value):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)),
                constant_values=pad_value)
    out_h = (h + 2 * padding - k) // stride + 1
    out_w = (w + 2 * padding - k) // stride + 1
    out = np.zeros((n, c, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            window = xp[:, :, i * stride:i * stride + k, j * stride:j * stride + k]
            out[:, :, i, j] = reduce(window, axis=(2, 3))
    return out


def _adaptive_ref(x, out_sizes):
    """PyTorch's adaptive average pooling windows, by loops, over the trailing dims."""
    n_dims = len(out_sizes)
    in_sizes = x.shape[-n_dims:]
    out = np.zeros(x.shape[:-n_dims] + tuple(out_sizes))
    for index in np.ndindex(*out_sizes):
        window = []
        for i, in_size, out_size in zip(index, in_sizes, out_sizes):
            start = math.floor(i * in_size / out_size)
            end = math.ceil((i + 1) * in_size / out_size)
            window.append(slice(start, end))
        out[(...,) + index] = x[(...,) + tuple(window)].mean(axis=tuple(range(-n_dims, 0)))
    return out


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


# -- forward against NumPy ----------------------------------------------------------------

def test_linear_forward_and_shapes():
    layer = nn.Linear(4, 3, dtype=F64)
    w, b = _np(layer.weight), _np(layer.bias)
    for shape in [(5, 4), (2, 5, 4), (4,), (0, 4)]:
        x = _randn(*shape)
        np.testing.assert_allclose(_np(layer(x)), _np(x) @ w.T + b, rtol=1e-12)
    no_bias = nn.Linear(4, 3, bias=False)
    assert no_bias.bias is None and [n for n, _ in no_bias.named_parameters()] == ["weight"]
    x = _randn(2, 4, dtype=np.float32)
    out = no_bias(x)
    assert out.dtype == np.float32
    np.testing.assert_allclose(_np(out), _np(x) @ _np(no_bias.weight).T, rtol=1e-6)


def test_bilinear_forward():
    layer = nn.Bilinear(3, 4, 2, dtype=F64)
    x1, x2 = _randn(5, 3, seed=1), _randn(5, 4, seed=2)
    expected = np.einsum("ni,oij,nj->no", _np(x1), _np(layer.weight), _np(x2)) + _np(layer.bias)
    np.testing.assert_allclose(_np(layer(x1, x2)), expected, rtol=1e-12)
    batched = layer(_randn(2, 5, 3), _randn(2, 5, 4))
    assert batched.shape == (2, 5, 2)
    assert nn.Bilinear(3, 4, 2, bias=False)(x1.float(), x2.float()).shape == (5, 2)


CONV2D_CASES = [
    dict(args=(2, 4, 3), kwargs={}, x=(2, 2, 6, 7)),
    dict(args=(2, 4, (2, 3)), kwargs=dict(stride=(2, 1), padding=(1, 2)), x=(1, 2, 5, 6)),
    dict(args=(4, 6, 3), kwargs=dict(groups=2, dilation=2, padding=2), x=(2, 4, 7, 7)),
    dict(args=(2, 3, 4), kwargs=dict(padding="same"), x=(1, 2, 6, 5)),
    dict(args=(2, 3, 3), kwargs=dict(padding="valid", bias=False), x=(1, 2, 5, 5)),
]


@pytest.mark.parametrize("case", CONV2D_CASES, ids=lambda c: str(c["kwargs"]) or "default")
def test_conv2d_forward(case):
    layer = nn.Conv2d(*case["args"], **case["kwargs"], dtype=F64)
    x = _randn(*case["x"])
    padding = case["kwargs"].get("padding", 0)
    k = layer.kernel_size
    if padding == "same":
        totals = [layer.dilation[i] * (k[i] - 1) for i in range(2)]
        pads = [(t // 2, t - t // 2) for t in totals]
    elif padding == "valid":
        pads = [(0, 0), (0, 0)]
    else:
        pads = [(p, p) for p in layer.padding]
    bias = None if layer.bias is None else _np(layer.bias)
    expected = _conv2d_ref(_np(x), _np(layer.weight), bias, layer.stride, pads, layer.dilation,
                           layer.groups)
    np.testing.assert_allclose(_np(layer(x)), expected, rtol=1e-10, atol=1e-12)
    # unbatched input
    np.testing.assert_allclose(_np(layer(x[0])), expected[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_conv2d_padding_modes(mode):
    layer = nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=mode, dtype=F64)
    x = _randn(2, 2, 5, 6)
    np_mode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    padded = np.pad(_np(x), ((0, 0), (0, 0), (1, 1), (2, 2)), mode=np_mode)
    expected = _conv2d_ref(padded, _np(layer.weight), _np(layer.bias), (1, 1),
                           [(0, 0), (0, 0)], (1, 1), 1)
    np.testing.assert_allclose(_np(layer(x)), expected, rtol=1e-10, atol=1e-12)


def test_conv1d_forward():
    layer = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2, dtype=F64)
    x = _randn(3, 4, 9)
    expected = _conv2d_ref(_np(x)[:, :, None], _np(layer.weight)[:, :, None], _np(layer.bias),
                           (1, 2), [(0, 0), (1, 1)], (1, 1), 2)[:, :, 0]
    np.testing.assert_allclose(_np(layer(x)), expected, rtol=1e-10, atol=1e-12)
    assert layer(x[0]).shape == (6, 5)
    same = nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular", dtype=F64)
    x = _randn(1, 2, 7)
    padded = np.pad(_np(x), ((0, 0), (0, 0), (1, 2)), mode="wrap")
    expected = _conv2d_ref(padded[:, :, None], _np(same.weight)[:, :, None], _np(same.bias),
                           (1, 1), [(0, 0), (0, 0)], (1, 1), 1)[:, :, 0]
    np.testing.assert_allclose(_np(same(x)), expected, rtol=1e-10, atol=1e-12)


def test_pooling_forward():
    x = _randn(2, 3, 7, 8)
    np.testing.assert_allclose(_np(nn.MaxPool2d(2)(x)),
                               _pool_ref(_np(x), 2, 2, 0, np.max, -np.inf))
    np.testing.assert_allclose(_np(nn.MaxPool2d(3, stride=2, padding=1)(x)),
                               _pool_ref(_np(x), 3, 2, 1, np.max, -np.inf))
    np.testing.assert_allclose(_np(nn.AvgPool2d(2)(x)), _pool_ref(_np(x), 2, 2, 0, np.mean, 0),
                               rtol=1e-12)
    np.testing.assert_allclose(_np(nn.AvgPool2d(3, 2, 1)(x)),
                               _pool_ref(_np(x), 3, 2, 1, np.mean, 0), rtol=1e-12)
    values, indices = nn.MaxPool2d(2, return_indices=True)(x)
    assert indices.dtype == np.int64 and values.shape == indices.shape == (2, 3, 3, 4)
    flat = _np(x).reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, _np(indices).reshape(2, 3, -1), -1),
                                  _np(values).reshape(2, 3, -1))
    assert nn.MaxPool2d(2, ceil_mode=True)(x).shape == (2, 3, 4, 4)
    assert nn.MaxPool2d(2).stride == 2 and nn.AvgPool2d(3, 1).stride == 1


@pytest.mark.parametrize("in_shape, output_size", [
    ((2, 3, 8, 8), (2, 2)),            # divisible: reshape + mean
    ((2, 3, 7, 10), (3, 4)),           # overlapping windows
    ((1, 2, 5, 5), 1),                 # global average pooling
    ((3, 7, 6), (10, None)),           # unbatched, output larger than input, None keeps W
    ((2, 2, 9, 4), (4, 4)),            # one dim divisible, one not (identity)
    ((1, 1, 6, 6), (0, 3)),            # an empty output dim
])
def test_adaptive_avg_pool2d_forward(in_shape, output_size):
    x = _randn(*in_shape)
    layer = nn.AdaptiveAvgPool2d(output_size)
    sizes = (output_size,) * 2 if isinstance(output_size, int) else output_size
    sizes = tuple(s if o is None else o for o, s in zip(sizes, in_shape[-2:]))
    out = layer(x)
    assert out.shape == in_shape[:-2] + sizes
    np.testing.assert_allclose(_np(out), _adaptive_ref(_np(x), sizes), rtol=1e-12, atol=1e-15)
    assert layer(x.float()).dtype == np.float32


@settings(max_examples=60, deadline=None)
@given(h=st.integers(1, 12), w=st.integers(1, 12), out_h=st.integers(0, 14),
       out_w=st.integers(1, 14), batched=st.booleans())
def test_adaptive_avg_pool2d_any_geometry(h, w, out_h, out_w, batched):
    shape = (2, 3, h, w) if batched else (3, h, w)
    x = _randn(*shape, seed=h * 100 + w).requires_grad_()
    out = nn.AdaptiveAvgPool2d((out_h, out_w))(x)
    np.testing.assert_allclose(_np(out), _adaptive_ref(_np(x), (out_h, out_w)), rtol=1e-12,
                               atol=1e-14)
    # The gradient spreads each output's seed evenly over its window.
    seed = _rng(1).standard_normal(out.shape)
    (out * oxmera.tensor(seed)).sum().backward()
    expected = np.zeros(shape)
    for i in range(out_h):
        rs, re = (i * h) // out_h, -(-(i + 1) * h // out_h)
        for j in range(out_w):
            cs, ce = (j * w) // out_w, -(-(j + 1) * w // out_w)
            expected[..., rs:re, cs:ce] += seed[..., i:i + 1, j:j + 1] / ((re - rs) * (ce - cs))
    np.testing.assert_allclose(_np(x.grad), expected, rtol=1e-12, atol=1e-14)


def test_adaptive_avg_pool1d_forward():
    x = _randn(2, 3, 10)
    for size in (5, 4, 3, 10, 13):
        np.testing.assert_allclose(_np(nn.AdaptiveAvgPool1d(size)(x)),
                                   _adaptive_ref(_np(x), (size,)), rtol=1e-12)
    assert nn.AdaptiveAvgPool1d(2)(x[0]).shape == (3, 2)


def test_flatten_unflatten():
    x = _randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, -1)(x).shape == (120,)
    assert nn.Flatten(1, 2)(x).shape == (2, 12, 5)
    np.testing.assert_array_equal(_np(nn.Flatten()(x)), _np(x).reshape(2, 60))
    assert nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape == (2, 3, 20)
    assert nn.Unflatten(-1, [5, 1])(x).shape == (2, 3, 4, 5, 1)
    np.testing.assert_array_equal(_np(nn.Unflatten(1, (3, 4, 5))(nn.Flatten()(x))), _np(x))
    with pytest.raises(TypeError, match="unflattened_size"):
        nn.Unflatten(1, 5)
    with pytest.raises(TypeError, match="dim"):
        nn.Unflatten("a", (1,))


def test_layer_norm_forward():
    layer = _randomize(nn.LayerNorm([3, 4], dtype=F64))
    x = _randn(2, 5, 3, 4)
    a = _np(x)
    mean = a.mean(axis=(-2, -1), keepdims=True)
    var = a.var(axis=(-2, -1), keepdims=True)
    expected = (a - mean) / np.sqrt(var + 1e-5) * _np(layer.weight) + _np(layer.bias)
    np.testing.assert_allclose(_np(layer(x)), expected, rtol=1e-10)
    plain = nn.LayerNorm(4, elementwise_affine=False, eps=1e-3)
    assert plain.weight is None and plain.bias is None and list(plain.parameters()) == []
    x = _randn(3, 4, dtype=np.float32)
    a = _np(x)
    expected = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-3)
    np.testing.assert_allclose(_np(plain(x)), expected, rtol=1e-5, atol=1e-6)
    no_bias = nn.LayerNorm(4, bias=False)
    assert no_bias.bias is None and no_bias.weight is not None


@pytest.mark.parametrize("cls, shape", [(nn.BatchNorm1d, (6, 3)), (nn.BatchNorm1d, (4, 3, 5)),
                                        (nn.BatchNorm2d, (4, 3, 2, 5))])
def test_batch_norm_train_and_eval_against_numpy(cls, shape):
    layer = _randomize(cls(3, momentum=0.2, dtype=F64))
    weight, bias = _np(layer.weight), _np(layer.bias)
    param_shape = (1, 3) + (1,) * (len(shape) - 2)
    axes = (0,) + tuple(range(2, len(shape)))
    running_mean, running_var = np.zeros(3), np.ones(3)
    for step in range(3):
        x = _randn(*shape, seed=step)
        a = _np(x)
        mean, var = a.mean(axis=axes), a.var(axis=axes)
        count = a.size // 3
        expected = ((a - mean.reshape(param_shape)) / np.sqrt(var.reshape(param_shape) + 1e-5)
                    * weight.reshape(param_shape) + bias.reshape(param_shape))
        np.testing.assert_allclose(_np(layer(x)), expected, rtol=1e-9, atol=1e-12)
        running_mean = 0.8 * running_mean + 0.2 * mean
        running_var = 0.8 * running_var + 0.2 * var * count / (count - 1)
        np.testing.assert_allclose(_np(layer.running_mean), running_mean, rtol=1e-12)
        np.testing.assert_allclose(_np(layer.running_var), running_var, rtol=1e-12)
        assert layer.num_batches_tracked.item() == step + 1
    layer.eval()
    x = _randn(*shape, seed=9)
    expected = ((_np(x) - running_mean.reshape(param_shape))
                / np.sqrt(running_var.reshape(param_shape) + 1e-5)
                * weight.reshape(param_shape) + bias.reshape(param_shape))
    np.testing.assert_allclose(_np(layer(x)), expected, rtol=1e-9, atol=1e-12)
    assert layer.num_batches_tracked.item() == 3          # eval does not count batches
    np.testing.assert_allclose(_np(layer.running_mean), running_mean, rtol=1e-12)


def test_batch_norm_momentum_none_is_a_cumulative_average():
    layer = nn.BatchNorm1d(2, momentum=None, dtype=F64)
    batches = [_randn(5, 2, seed=s) for s in range(4)]
    for x in batches:
        layer(x)
    means = np.stack([_np(x).mean(0) for x in batches])
    np.testing.assert_allclose(_np(layer.running_mean), means.mean(0), rtol=1e-12)
    variances = np.stack([_np(x).var(0, ddof=1) for x in batches])
    # the running variance starts at 1 and averages the 4 batches with it
    # dropped: the first update has factor 1
    np.testing.assert_allclose(_np(layer.running_var), variances.mean(0), rtol=1e-12)


def test_batch_norm_without_running_stats_always_uses_the_batch():
    layer = nn.BatchNorm1d(2, track_running_stats=False, affine=False)
    assert layer.running_mean is None and layer.num_batches_tracked is None
    assert list(layer.buffers()) == [] and list(layer.parameters()) == []
    assert list(layer.state_dict()) == []
    x = _randn(6, 2, dtype=np.float32)
    expected = (_np(x) - _np(x).mean(0)) / np.sqrt(_np(x).var(0) + 1e-5)
    np.testing.assert_allclose(_np(layer(x)), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(layer.eval()(x)), expected, rtol=1e-5, atol=1e-6)


def test_batch_norm_reset_and_errors():
    layer = nn.BatchNorm2d(3)
    layer(_randn(2, 3, 2, 2, dtype=np.float32))
    layer.reset_running_stats()
    assert not _np(layer.running_mean).any() and (_np(layer.running_var) == 1).all()
    assert layer.num_batches_tracked.item() == 0
    with pytest.raises(ValueError, match="expected 4D input"):
        layer(_randn(2, 3, dtype=np.float32))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(_randn(2, 3, 2, 2, dtype=np.float32))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(_randn(1, 3, dtype=np.float32))
    nn.BatchNorm1d(3).eval()(_randn(1, 3, dtype=np.float32))     # fine in eval mode


def test_embedding_forward_and_padding():
    emb = nn.Embedding(6, 3, padding_idx=2, dtype=F64)
    assert not _np(emb.weight)[2].any()
    idx = oxmera.tensor([[0, 2, 5], [2, 2, 1]])
    np.testing.assert_array_equal(_np(emb(idx)), _np(emb.weight)[_np(idx)])
    emb(idx).sum().backward()
    grad = _np(emb.weight.grad)
    assert not grad[2].any() and grad[0].tolist() == [1, 1, 1] and grad[3].tolist() == [0, 0, 0]
    assert nn.Embedding(5, 2, padding_idx=-1).padding_idx == 4
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(5, 2, padding_idx=5)
    with pytest.raises(IndexError, match="out of range"):
        emb(oxmera.tensor([6]))
    pretrained = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = nn.Embedding.from_pretrained(pretrained)
    assert not frozen.weight.requires_grad
    assert np.shares_memory(frozen.weight.numpy(), pretrained.numpy())
    assert nn.Embedding.from_pretrained(pretrained, freeze=False).weight.requires_grad
    with pytest.raises(ValueError, match="2-D"):
        nn.Embedding.from_pretrained(oxmera.ones(3))
    with pytest.raises(ValueError, match="does not match"):
        nn.Embedding(3, 2, _weight=oxmera.ones(2, 2))


def test_embedding_max_norm_renormalizes_rows():
    emb = nn.Embedding(4, 3, max_norm=1.0, dtype=F64)
    with oxmera.no_grad():
        emb.weight.copy_(oxmera.full((4, 3), 2.0, dtype=F64))
    out = emb(oxmera.tensor([1, 3]))
    norms = np.linalg.norm(_np(out), axis=1)
    np.testing.assert_allclose(norms, 1.0, rtol=1e-6)
    assert np.linalg.norm(_np(emb.weight)[0]) > 3      # rows not looked up keep their norm


ACTIVATIONS = [
    (nn.ReLU(), lambda a: np.maximum(a, 0)),
    (nn.LeakyReLU(), lambda a: np.where(a > 0, a, 0.01 * a)),
    (nn.LeakyReLU(0.2), lambda a: np.where(a > 0, a, 0.2 * a)),
    (nn.ELU(alpha=0.5), lambda a: np.where(a > 0, a, 0.5 * np.expm1(a))),
    (nn.GELU(), lambda a: a * 0.5 * (1 + np.vectorize(math.erf)(a / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                       * (a + 0.044715 * a ** 3)))),
    (nn.SiLU(), lambda a: a * _sigmoid(a)),
    (nn.Softplus(), lambda a: np.log1p(np.exp(a))),
    (nn.Softplus(beta=2, threshold=1), lambda a: np.where(2 * a > 1, a,
                                                          np.log1p(np.exp(2 * a)) / 2)),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), _sigmoid),
    (nn.Softmax(dim=1), lambda a: np.exp(_log_softmax(a, 1))),
    (nn.Softmax(dim=-1), lambda a: np.exp(_log_softmax(a, -1))),
    (nn.LogSoftmax(dim=1), lambda a: _log_softmax(a, 1)),
    (nn.Identity(), lambda a: a),
]


@pytest.mark.parametrize("layer, reference", ACTIVATIONS, ids=lambda v: repr(v)
                         if isinstance(v, nn.Module) else "")
def test_activation_forward(layer, reference):
    x = _randn(3, 4, 2) * 3
    np.testing.assert_allclose(_np(layer(x)), reference(_np(x)), rtol=1e-10, atol=1e-12)
    assert layer(x.float()).dtype == np.float32


def test_inplace_activations_write_into_their_input():
    x = oxmera.tensor([-1.0, 2.0])
    out = nn.ReLU(inplace=True)(x)
    assert x.tolist() == [0.0, 2.0] and out.tolist() == [0.0, 2.0]
    x = oxmera.tensor([-1.0, 2.0])
    nn.LeakyReLU(0.5, inplace=True)(x)
    assert x.tolist() == [-0.5, 2.0]


def test_softmax_without_dim_warns_like_torch():
    with pytest.warns(UserWarning, match="dim"):
        out = nn.Softmax()(_randn(2, 3))
    np.testing.assert_allclose(_np(out).sum(1), 1.0)


def test_loss_modules_forward():
    rng = _rng(3)
    x = oxmera.tensor(rng.standard_normal((4, 3)))
    y = oxmera.tensor(rng.standard_normal((4, 3)))
    a, b = _np(x), _np(y)
    np.testing.assert_allclose(_np(nn.MSELoss()(x, y)), ((a - b) ** 2).mean())
    np.testing.assert_allclose(_np(nn.MSELoss(reduction="sum")(x, y)), ((a - b) ** 2).sum())
    np.testing.assert_allclose(_np(nn.L1Loss(reduction="none")(x, y)), np.abs(a - b))
    d = np.abs(a - b)
    np.testing.assert_allclose(_np(nn.SmoothL1Loss(beta=0.5)(x, y)),
                               np.where(d < 0.5, 0.5 * d ** 2 / 0.5, d - 0.25).mean())
    np.testing.assert_allclose(_np(nn.HuberLoss(delta=0.5)(x, y)),
                               np.where(d < 0.5, 0.5 * d ** 2, 0.5 * (d - 0.25)).mean())
    target = oxmera.tensor([0, 2, 1, 2])
    logp = _log_softmax(a, 1)
    np.testing.assert_allclose(_np(nn.CrossEntropyLoss()(x, target)),
                               -logp[np.arange(4), [0, 2, 1, 2]].mean())
    np.testing.assert_allclose(_np(nn.NLLLoss(reduction="sum")(oxmera.tensor(logp), target)),
                               -logp[np.arange(4), [0, 2, 1, 2]].sum())
    weight = oxmera.tensor([1.0, 2.0, 0.5], dtype=F64)
    picked = -logp[np.arange(4), [0, 2, 1, 2]] * np.array([1.0, 0.5, 2.0, 0.5])
    loss = nn.CrossEntropyLoss(weight=weight)
    assert loss.weight is weight and list(loss.state_dict()) == ["weight"]
    np.testing.assert_allclose(_np(loss(x, target)), picked.sum() / 4.0)
    ignore = nn.CrossEntropyLoss(ignore_index=2)(x, target)
    np.testing.assert_allclose(_np(ignore), -logp[[0, 2], [0, 1]].mean())
    p = oxmera.tensor(_sigmoid(a))
    t = oxmera.tensor((b > 0).astype(np.float64))
    bce = -(_np(t) * np.log(_np(p)) + (1 - _np(t)) * np.log(1 - _np(p)))
    np.testing.assert_allclose(_np(nn.BCELoss()(p, t)), bce.mean(), rtol=1e-10)
    np.testing.assert_allclose(_np(nn.BCEWithLogitsLoss()(x, t)), bce.mean(), rtol=1e-10)
    pos_weight = oxmera.tensor([1.0, 2.0, 3.0], dtype=F64)
    with_pos = nn.BCEWithLogitsLoss(pos_weight=pos_weight, reduction="none")(x, t)
    expected = -(np.array([1.0, 2.0, 3.0]) * _np(t) * np.log(_np(p))
                 + (1 - _np(t)) * np.log(1 - _np(p)))
    np.testing.assert_allclose(_np(with_pos), expected, rtol=1e-10)


def test_loss_module_options_and_errors():
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=2.0)
    with pytest.raises(ValueError, match="delta"):
        nn.HuberLoss(delta=0)
    with pytest.warns(UserWarning, match="deprecated") as record:
        legacy = nn.L1Loss(size_average=False)
    assert legacy.reduction == "sum" and record[0].filename == __file__
    with pytest.warns(UserWarning, match="deprecated") as record:
        legacy = nn.NLLLoss(reduce=False)          # a longer chain of __init__s
    assert legacy.reduction == "none" and record[0].filename == __file__
    bce = nn.BCEWithLogitsLoss(weight=oxmera.ones(2), pos_weight=oxmera.ones(2))
    assert list(bce.state_dict()) == ["weight", "pos_weight"]
    assert list(nn.NLLLoss().state_dict()) == []


# -- dropout -------------------------------------------------------------------------------

def test_dropout_train_and_eval():
    drop = nn.Dropout(0.3)
    x = oxmera.ones(200, 100)
    oxmera.manual_seed(5)
    out = _np(drop(x))
    kept = out != 0
    assert abs(1 - kept.mean() - 0.3) < 0.01
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    oxmera.manual_seed(5)
    np.testing.assert_array_equal(_np(drop(x)), out)     # reproducible with the seed
    drop.eval()
    assert drop(x) is x
    assert nn.Dropout(0.0)(x) is x
    assert not _np(nn.Dropout(1.0)(x)).any()
    y = oxmera.ones(4, requires_grad=True)
    train = nn.Dropout(0.5)
    out = train(y)
    out.sum().backward()
    np.testing.assert_array_equal(_np(y.grad), _np(out))       # gradient = mask / (1 - p)
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_dropout_inplace():
    x = oxmera.ones(1000)
    out = nn.Dropout(0.5, inplace=True)(x)
    assert (_np(x) == _np(out)).all() and (_np(x) == 0).any()


# -- gradients (float64, finite differences through input and parameters) ----------------

GRAD_CASES = [
    ("linear", lambda: nn.Linear(3, 2), [(4, 3)]),
    ("linear_no_bias_3d", lambda: nn.Linear(3, 2, bias=False), [(2, 2, 3)]),
    ("bilinear", lambda: nn.Bilinear(2, 3, 2), [(3, 2), (3, 3)]),
    ("conv1d", lambda: nn.Conv1d(2, 2, 3, stride=2, padding=1), [(2, 2, 5)]),
    ("conv2d_groups", lambda: nn.Conv2d(2, 4, 2, groups=2, padding=1), [(1, 2, 3, 3)]),
    ("conv2d_reflect", lambda: nn.Conv2d(1, 2, 3, padding=1, padding_mode="reflect"),
     [(1, 1, 4, 4)]),
    ("conv2d_same", lambda: nn.Conv2d(1, 1, 2, padding="same", dilation=2), [(1, 1, 4, 3)]),
    ("maxpool", lambda: nn.MaxPool2d(2, stride=1), [(1, 2, 3, 3)]),
    ("avgpool", lambda: nn.AvgPool2d(2, padding=1, count_include_pad=False), [(1, 1, 3, 3)]),
    ("adaptive2d_overlap", lambda: nn.AdaptiveAvgPool2d((2, 3)), [(1, 2, 3, 4)]),
    ("adaptive2d_divisible", lambda: nn.AdaptiveAvgPool2d(2), [(1, 1, 4, 4)]),
    ("adaptive1d", lambda: nn.AdaptiveAvgPool1d(3), [(2, 1, 5)]),
    ("layernorm", lambda: _randomize(nn.LayerNorm([2, 3])), [(2, 2, 3)]),
    ("batchnorm1d", lambda: _randomize(nn.BatchNorm1d(2)), [(4, 2)]),
    ("batchnorm2d", lambda: _randomize(nn.BatchNorm2d(2)), [(2, 2, 2, 2)]),
    ("batchnorm2d_eval", lambda: _randomize(nn.BatchNorm2d(2)).eval(), [(2, 2, 2, 2)]),
    ("embedding", lambda: nn.Embedding(4, 2), []),     # (padding rows get no gradient by design)
    ("sequential", lambda: nn.Sequential(nn.Conv2d(1, 2, 2), nn.Tanh(), nn.Flatten(),
                                         nn.Linear(8, 2), nn.LogSoftmax(1)), [(2, 1, 3, 3)]),
    ("gelu", lambda: nn.GELU(), [(3, 2)]),
    ("softplus", lambda: nn.Softplus(beta=2.0), [(3, 2)]),
    ("elu", lambda: nn.ELU(), [(3, 2)]),
    ("silu", lambda: nn.SiLU(), [(3, 2)]),
    ("softmax", lambda: nn.Softmax(1), [(3, 2)]),
]


@pytest.mark.parametrize("name, build, shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradcheck_through_inputs_and_parameters(name, build, shapes):
    oxmera.manual_seed(0)
    module = build().double()
    inputs = [_randn(*shape, seed=i).requires_grad_() for i, shape in enumerate(shapes)]
    if name == "embedding":
        index = oxmera.tensor([[0, 1], [3, 1]])
        assert gradcheck(lambda *params: module(index), tuple(module.parameters()))
        return
    params = tuple(p for p in module.parameters())
    n = len(inputs)
    assert gradcheck(lambda *args: module(*args[:n]), (*inputs, *params))


LOSS_GRAD_CASES = [
    ("mse", nn.MSELoss(), "float"),
    ("l1", nn.L1Loss(reduction="sum"), "float"),
    ("smooth_l1", nn.SmoothL1Loss(beta=0.5), "float"),
    ("huber", nn.HuberLoss(delta=0.5), "float"),
    ("cross_entropy", nn.CrossEntropyLoss(label_smoothing=0.1), "index"),
    ("cross_entropy_weighted", nn.CrossEntropyLoss(weight=oxmera.tensor([1.0, 2.0, 0.5],
                                                                        dtype=F64)), "index"),
    ("nll", nn.NLLLoss(), "index"),
    ("bce", nn.BCELoss(), "probability"),
    ("bce_logits", nn.BCEWithLogitsLoss(pos_weight=oxmera.tensor([1.0, 2.0, 3.0], dtype=F64)),
     "binary"),
]


@pytest.mark.parametrize("name, loss, kind", LOSS_GRAD_CASES, ids=[c[0] for c in LOSS_GRAD_CASES])
def test_loss_gradcheck(name, loss, kind):
    x = _randn(4, 3, seed=1)
    if kind == "float":
        target = _randn(4, 3, seed=2)
    elif kind == "index":
        target = oxmera.tensor([0, 2, 1, 2])
    else:
        target = oxmera.tensor((_rng(2).random((4, 3)) > 0.5).astype(np.float64))
    if kind == "probability":
        x = oxmera.tensor(_rng(1).uniform(0.1, 0.9, (4, 3)))
    x.requires_grad_()
    assert gradcheck(lambda t: loss(t, target), (x,))


# -- PyTorch comparisons (same weights, forward and all gradients) ------------------------

def _torch_cases():
    return [
        ("Linear", lambda n: n.Linear(5, 3), [(4, 5)]),
        ("Bilinear", lambda n: n.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
        ("Conv1d", lambda n: n.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
         [(2, 4, 11)]),
        ("Conv1d_same_replicate", lambda n: n.Conv1d(2, 3, 4, padding="same",
                                                     padding_mode="replicate"), [(2, 2, 7)]),
        ("Conv2d", lambda n: n.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0)),
         [(2, 3, 7, 6)]),
        ("Conv2d_circular", lambda n: n.Conv2d(2, 2, 3, padding=1, padding_mode="circular"),
         [(1, 2, 5, 5)]),
        ("Conv2d_same_even", lambda n: n.Conv2d(2, 3, 4, padding="same", bias=False),
         [(2, 2, 6, 5)]),
        ("MaxPool2d", lambda n: n.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
         [(2, 3, 7, 8)]),
        ("AvgPool2d", lambda n: n.AvgPool2d(3, 2, 1, count_include_pad=False), [(2, 3, 7, 8)]),
        ("AdaptiveAvgPool2d", lambda n: n.AdaptiveAvgPool2d((3, 5)), [(2, 3, 7, 11)]),
        ("AdaptiveAvgPool2d_big", lambda n: n.AdaptiveAvgPool2d((9, None)), [(3, 7, 4)]),
        ("AdaptiveAvgPool1d", lambda n: n.AdaptiveAvgPool1d(4), [(2, 3, 10)]),
        ("LayerNorm", lambda n: n.LayerNorm([3, 4]), [(2, 5, 3, 4)]),
        ("BatchNorm1d", lambda n: n.BatchNorm1d(3), [(6, 3, 4)]),
        ("BatchNorm2d", lambda n: n.BatchNorm2d(3, momentum=0.3), [(4, 3, 3, 3)]),
        ("Embedding", lambda n: n.Embedding(7, 3, padding_idx=1), []),
        ("GELU_tanh", lambda n: n.GELU("tanh"), [(4, 5)]),
        ("Softplus", lambda n: n.Softplus(beta=0.5, threshold=2.0), [(4, 5)]),
        ("LeakyReLU", lambda n: n.LeakyReLU(0.3), [(4, 5)]),
        ("ELU", lambda n: n.ELU(0.7), [(4, 5)]),
        ("LogSoftmax", lambda n: n.LogSoftmax(0), [(4, 5)]),
        ("CNN", lambda n: n.Sequential(n.Conv2d(1, 4, 3, padding=1), n.BatchNorm2d(4), n.ReLU(),
                                       n.MaxPool2d(2), n.Conv2d(4, 8, 3), n.ReLU(),
                                       n.AdaptiveAvgPool2d(1), n.Flatten(), n.Dropout(0.0),
                                       n.Linear(8, 10)), [(3, 1, 8, 8)]),
    ]


_TORCH_CASES = _torch_cases()


@needs_torch
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")
@pytest.mark.parametrize("name, build, shapes", _TORCH_CASES, ids=[c[0] for c in _TORCH_CASES])
def test_forward_and_gradients_match_torch(name, build, shapes):
    ox = _randomize(build(nn)).double()
    tm = build(torch.nn).double()
    tm.load_state_dict({k: torch.tensor(v.numpy().copy()) for k, v in ox.state_dict().items()})
    if name == "Embedding":
        ox_inputs = [oxmera.tensor([[0, 1, 6], [1, 3, 3]])]
        tm_inputs = [torch.tensor(ox_inputs[0].numpy())]
    else:
        ox_inputs = [_randn(*shape, seed=i).requires_grad_() for i, shape in enumerate(shapes)]
        tm_inputs = [torch.tensor(_np(t), requires_grad=True) for t in ox_inputs]
    ox_out, tm_out = ox(*ox_inputs), tm(*tm_inputs)
    np.testing.assert_allclose(_np(ox_out), tm_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = _rng(7).standard_normal(tuple(ox_out.shape))
    (ox_out * oxmera.tensor(seed)).sum().backward()
    (tm_out * torch.tensor(seed)).sum().backward()
    for a, b in zip(ox_inputs, tm_inputs):
        if a.requires_grad:
            np.testing.assert_allclose(_np(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-11)
    tm_params = dict(tm.named_parameters())
    for key, p in ox.named_parameters():
        np.testing.assert_allclose(_np(p.grad), tm_params[key].grad.numpy(), rtol=1e-9,
                                   atol=1e-11, err_msg=key)
    tm_state = tm.state_dict()
    for key, value in ox.state_dict().items():        # running statistics too
        np.testing.assert_allclose(value.numpy(), tm_state[key].numpy(), rtol=1e-10,
                                   err_msg=key)


@needs_torch
@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("cls", ["BatchNorm1d", "BatchNorm2d"])
def test_batch_norm_running_stats_and_eval_match_torch(cls, momentum):
    ox = getattr(nn, cls)(3, momentum=momentum)
    tm = getattr(torch.nn, cls)(3, momentum=momentum)
    shape = (5, 3) if cls == "BatchNorm1d" else (4, 3, 2, 3)
    for step in range(5):
        x = (_randn(*shape, seed=step, dtype=np.float32) * (step + 1) + step)
        np.testing.assert_allclose(_np(ox(x)), tm(torch.tensor(_np(x))).detach().numpy(),
                                   rtol=1e-4, atol=1e-5)
    for key, value in tm.state_dict().items():
        np.testing.assert_allclose(ox.state_dict()[key].numpy(), value.numpy(), rtol=1e-5,
                                   err_msg=key)
    ox.eval(), tm.eval()
    x = _randn(*shape, seed=11, dtype=np.float32)
    np.testing.assert_allclose(_np(ox(x)), tm(torch.tensor(_np(x))).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("build, kind", [
    (lambda n: n.MSELoss(), "float"), (lambda n: n.L1Loss(), "float"),
    (lambda n: n.SmoothL1Loss(beta=0.3), "float"), (lambda n: n.HuberLoss(delta=0.3), "float"),
    (lambda n: n.CrossEntropyLoss(label_smoothing=0.2, ignore_index=1), "index"),
    (lambda n: n.NLLLoss(reduction="sum"), "index"), (lambda n: n.BCELoss(), "probability"),
    (lambda n: n.BCEWithLogitsLoss(reduction="none"), "binary"),
], ids=["mse", "l1", "smooth_l1", "huber", "cross_entropy", "nll", "bce", "bce_logits"])
def test_losses_match_torch(build, kind):
    x = _rng(1).standard_normal((5, 4))
    if kind == "probability":
        x = _rng(1).uniform(0.05, 0.95, (5, 4))
    if kind == "float":
        target = _rng(2).standard_normal((5, 4))
    elif kind == "index":
        target = np.array([0, 1, 3, 2, 1])
    else:
        target = (_rng(2).random((5, 4)) > 0.5).astype(np.float64)
    ox_x = oxmera.tensor(x, requires_grad=True)
    tm_x = torch.tensor(x, requires_grad=True)
    ox_out = build(nn)(ox_x, oxmera.tensor(target))
    tm_out = build(torch.nn)(tm_x, torch.tensor(target))
    np.testing.assert_allclose(_np(ox_out), tm_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    ox_out.sum().backward()
    tm_out.sum().backward()
    np.testing.assert_allclose(_np(ox_x.grad), tm_x.grad.numpy(), rtol=1e-10, atol=1e-12)


# -- default initialization ---------------------------------------------------------------

def test_linear_and_conv_default_init_bounds_and_spread():
    oxmera.manual_seed(0)
    layer = nn.Linear(64, 256)
    bound = 1 / math.sqrt(64)
    for p in (layer.weight, layer.bias):
        assert np.abs(_np(p)).max() <= bound
    # U(-bound, bound) has variance bound**2 / 3
    np.testing.assert_allclose(_np(layer.weight).var(), bound ** 2 / 3, rtol=0.05)
    conv = nn.Conv2d(8, 64, 3, groups=2)
    fan_in = 4 * 9
    assert conv.weight.shape == (64, 4, 3, 3)
    assert np.abs(_np(conv.weight)).max() <= 1 / math.sqrt(fan_in)
    np.testing.assert_allclose(_np(conv.weight).var(), 1 / fan_in / 3, rtol=0.1)
    assert np.abs(_np(conv.bias)).max() <= 1 / math.sqrt(fan_in)
    bil = nn.Bilinear(16, 4, 8)
    assert np.abs(_np(bil.weight)).max() <= 1 / 4 and np.abs(_np(bil.bias)).max() <= 1 / 4


def test_embedding_and_norm_default_init():
    oxmera.manual_seed(0)
    emb = nn.Embedding(1000, 50)
    assert abs(_np(emb.weight).mean()) < 0.01 and abs(_np(emb.weight).std() - 1) < 0.01
    for layer in (nn.LayerNorm(5), nn.BatchNorm1d(5), nn.BatchNorm2d(5)):
        assert (_np(layer.weight) == 1).all() and not _np(layer.bias).any()


def test_initialization_follows_the_global_seed():
    oxmera.manual_seed(42)
    a = nn.Sequential(nn.Linear(3, 4), nn.Conv2d(1, 2, 3), nn.Embedding(5, 2))
    oxmera.manual_seed(42)
    b = nn.Sequential(nn.Linear(3, 4), nn.Conv2d(1, 2, 3), nn.Embedding(5, 2))
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(_np(p), _np(q))
    c = nn.Linear(3, 4)
    assert not np.array_equal(_np(c.weight), _np(a[0].weight))


def test_parameter_dtypes():
    assert nn.Linear(2, 2).weight.dtype == np.float32
    assert nn.Conv2d(1, 1, 1, dtype=oxmera.float64).bias.dtype == np.float64
    assert nn.BatchNorm1d(2, dtype=np.float64).running_var.dtype == np.float64
    oxmera.set_default_dtype(oxmera.float64)
    try:
        assert nn.Linear(2, 2).weight.dtype == np.float64
        assert nn.Embedding(2, 2).weight.dtype == np.float64
    finally:
        oxmera.set_default_dtype(oxmera.float32)
    with pytest.raises(TypeError, match="floating point"):
        nn.Linear(2, 2, dtype=oxmera.int64)
    with pytest.raises(RuntimeError, match="CPU only"):
        nn.Linear(2, 2, device="cuda")
    assert nn.Linear(2, 2, device="cpu").weight.dtype == np.float32


def test_reset_parameters_redraws():
    layer = nn.Linear(4, 4)
    before = _np(layer.weight).copy()
    version = layer.weight._version
    layer.reset_parameters()
    assert not np.array_equal(before, _np(layer.weight)) and layer.weight._version > version


# -- constructor and input errors ---------------------------------------------------------

def test_conv_constructor_errors():
    with pytest.raises(ValueError, match="in_channels .* divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels .* divisible by groups"):
        nn.Conv2d(4, 3, 3, groups=2)
    with pytest.raises(ValueError, match="positive integer"):
        nn.Conv1d(4, 4, 3, groups=0)
    with pytest.raises(ValueError, match="invalid padding string"):
        nn.Conv2d(1, 1, 3, padding="full")
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")


def test_layer_input_errors_name_the_shapes():
    with pytest.raises((ValueError, RuntimeError), match=r"\(2, 5\)"):
        nn.Linear(4, 3)(oxmera.zeros(2, 5))
    with pytest.raises((ValueError, RuntimeError), match="channel|shape"):
        nn.Conv2d(3, 2, 3)(oxmera.zeros(1, 2, 5, 5))
    with pytest.raises(ValueError, match="same leading dims"):
        nn.Bilinear(2, 3, 1)(oxmera.zeros(4, 2), oxmera.zeros(5, 3))
    with pytest.raises(ValueError, match=r"\(\*, 2\)"):
        nn.Bilinear(2, 3, 1)(oxmera.zeros(4, 3), oxmera.zeros(4, 3))
    with pytest.raises(ValueError, match="3-D or 4-D"):
        nn.AdaptiveAvgPool2d(2)(oxmera.zeros(4, 4))
    with pytest.raises(ValueError, match="non-empty"):
        nn.AdaptiveAvgPool2d(2)(oxmera.zeros(1, 1, 0, 4))
    with pytest.raises(ValueError, match="output_size"):
        nn.AdaptiveAvgPool2d((1, 2, 3))(oxmera.zeros(1, 1, 4, 4))
    with pytest.raises(ValueError, match="non-negative"):
        nn.AdaptiveAvgPool1d(-1)(oxmera.zeros(1, 1, 4))
    with pytest.raises(NotImplementedError, match="floating point"):    # PyTorch's type
        nn.AdaptiveAvgPool1d(2)(oxmera.zeros(1, 4, dtype=oxmera.int64))
    with pytest.raises(TypeError, match="Tensor"):
        nn.AdaptiveAvgPool1d(2)([[1.0, 2.0]])
    with pytest.raises((ValueError, RuntimeError), match=r"\(3,\)"):
        nn.LayerNorm(3)(oxmera.zeros(2, 4))
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")


@pytest.mark.parametrize("bad_input", [oxmera.zeros(2, 3, 4, 5), oxmera.zeros(1, 3),
                                       oxmera.zeros(4, 2), oxmera.zeros(4, 3, dtype=oxmera.int64)],
                         ids=["4-D", "one value per channel", "wrong channels", "integer"])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_failed_batch_norm_forward_changes_no_state(bad_input, momentum):
    layer = nn.BatchNorm1d(3, momentum=momentum)
    layer(_randn(4, 3, dtype=np.float32))
    before = {k: (v.numpy().copy(), v._version) for k, v in layer.state_dict().items()}
    with pytest.raises((ValueError, TypeError, RuntimeError)):
        layer(bad_input)
    for key, value in layer.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), before[key][0], err_msg=key)
        assert value._version == before[key][1], key
