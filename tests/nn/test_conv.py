"""conv1d, conv2d, max_pool2d and avg_pool2d against direct loop references.

The references below loop over every output element and every kernel tap,
in plain Python on float64 arrays: slow, but obviously what the definitions
say. Forward values and the gradients (for a random upstream gradient) of
the im2col/stride-trick implementations must agree with them over stride,
padding, dilation, groups, bias and unbatched inputs. First and second order
gradcheck of every op, and the PyTorch comparisons, are in
``tests/ops/_cases_conv.py``; here also: tie and NaN handling of max pooling,
dtypes, non-contiguous and size-0 inputs, and argument errors.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
import oxmera.nn.functional as F
from oxmera.autograd import grad
from ops._helpers import unchanged

RNG = np.random.default_rng(20240607)


def _np(t):
    return t.detach().numpy()


def _pairs(padding, kernel, dilation):
    """Padding as ((top, bottom), (left, right)), the way PyTorch reads it."""
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding == "same":
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    p = (padding, padding) if isinstance(padding, int) else tuple(padding)
    return tuple((v, v) for v in p)


def _two(v):
    return (v, v) if isinstance(v, int) else tuple(v)


# -- loop references -------------------------------------------------------------------------

def conv2d_loop(x, w, b, stride, padding, dilation, groups):
    """out[n, o, y, x] = b[o] + sum(c, i, j) xpad[n, c, y*s + i*d, x*s + j*d] * w[o, c, i, j]."""
    n_, c_, h, wd = x.shape
    o_, cg, kh, kw = w.shape
    (sh, sw), (dh, dw) = _two(stride), _two(dilation)
    (top, bottom), (left, right) = _pairs(padding, (kh, kw), (dh, dw))
    ho = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    og = o_ // groups
    out = np.zeros((n_, o_, ho, wo))
    for n in range(n_):
        for o in range(o_):
            group = o // og
            for y in range(ho):
                for xx in range(wo):
                    total = 0.0 if b is None else b[o]
                    for c in range(cg):
                        for i in range(kh):
                            for j in range(kw):
                                r, col = y * sh + i * dh - top, xx * sw + j * dw - left
                                if 0 <= r < h and 0 <= col < wd:
                                    total += x[n, group * cg + c, r, col] * w[o, c, i, j]
                    out[n, o, y, xx] = total
    return out


def conv2d_loop_grads(x, w, upstream, stride, padding, dilation, groups):
    """The gradients of sum(conv2d_loop(x, w, b) * upstream) for x, w and b, by the same loops."""
    n_, c_, h, wd = x.shape
    o_, cg, kh, kw = w.shape
    (sh, sw), (dh, dw) = _two(stride), _two(dilation)
    (top, bottom), (left, right) = _pairs(padding, (kh, kw), (dh, dw))
    _, _, ho, wo = upstream.shape
    og = o_ // groups
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for n in range(n_):
        for o in range(o_):
            group = o // og
            for y in range(ho):
                for xx in range(wo):
                    g = upstream[n, o, y, xx]
                    for c in range(cg):
                        for i in range(kh):
                            for j in range(kw):
                                r, col = y * sh + i * dh - top, xx * sw + j * dw - left
                                if 0 <= r < h and 0 <= col < wd:
                                    gx[n, group * cg + c, r, col] += g * w[o, c, i, j]
                                    gw[o, c, i, j] += g * x[n, group * cg + c, r, col]
    return gx, gw, upstream.sum(axis=(0, 2, 3))


def _pool_windows(h, w, kernel, stride, padding, dilation, ceil_mode):
    """Per output (y, x): the input coordinates of its window, and PyTorch's output size."""
    sizes = []
    for n, k, s, p, d in zip((h, w), kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        size = (math.ceil(span / s) if ceil_mode else span // s) + 1
        if ceil_mode and (size - 1) * s >= n + p:
            size -= 1
        sizes.append(size)
    windows = {}
    for y in range(sizes[0]):
        for x in range(sizes[1]):
            windows[y, x] = [(y * stride[0] + i * dilation[0] - padding[0],
                              x * stride[1] + j * dilation[1] - padding[1])
                             for i in range(kernel[0]) for j in range(kernel[1])]
    return tuple(sizes), windows


def max_pool2d_loop(x, kernel, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Values and flat indices: the first maximum in window order (a NaN: the last NaN)."""
    kernel = _two(kernel)
    stride = kernel if stride is None else _two(stride)
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    sizes, windows = _pool_windows(h, w, kernel, stride, _two(padding), _two(dilation), ceil_mode)
    values = np.zeros(lead + sizes)
    indices = np.zeros(lead + sizes, np.int64)
    for plane in np.ndindex(*lead):
        for (y, xx), cells in windows.items():
            best, where = -np.inf, None
            for r, c in cells:
                if 0 <= r < h and 0 <= c < w:
                    v = x[plane + (r, c)]
                    if where is None:
                        where = r * w + c
                    if v > best or np.isnan(v):
                        best, where = v, r * w + c
            values[plane + (y, xx)], indices[plane + (y, xx)] = best, where
    return values, indices


def avg_pool2d_loop(x, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                    divisor_override=None):
    kernel = _two(kernel)
    stride = kernel if stride is None else _two(stride)
    padding = _two(padding)
    lead, (h, w) = x.shape[:-2], x.shape[-2:]
    sizes, windows = _pool_windows(h, w, kernel, stride, padding, (1, 1), ceil_mode)
    out = np.zeros(lead + sizes)
    for plane in np.ndindex(*lead):
        for (y, xx), cells in windows.items():
            inside = [(r, c) for r, c in cells if 0 <= r < h and 0 <= c < w]
            # the window clipped to the padded input (PyTorch's pool size)
            padded = [(r, c) for r, c in cells if -padding[0] <= r < h + padding[0]
                      and -padding[1] <= c < w + padding[1]]
            total = sum(x[plane + cell] for cell in inside)
            if divisor_override is not None:
                divisor = divisor_override
            else:
                divisor = len(padded) if count_include_pad else len(inside)
            out[plane + (y, xx)] = total / divisor if inside else 0.0
    return out


# -- convolution against the loops --------------------------------------------------------------

#: (input shape, weight shape, bias, stride, padding, dilation, groups)
CONV2D_CONFIGS = [
    ((2, 3, 5, 5), (4, 3, 3, 3), False, 1, 0, 1, 1),
    ((2, 3, 6, 5), (4, 3, 3, 3), True, 2, 1, 1, 1),
    ((1, 2, 7, 6), (3, 2, 2, 3), True, (2, 1), (0, 2), (1, 2), 1),
    ((2, 4, 5, 5), (6, 2, 3, 3), True, 1, 1, 1, 2),
    ((1, 3, 5, 4), (6, 1, 2, 2), False, 1, 1, 1, 3),
    ((1, 2, 9, 8), (2, 2, 3, 2), True, 3, 2, 2, 1),
    ((2, 2, 5, 6), (3, 2, 2, 4), False, 1, "same", 1, 1),
    ((1, 2, 6, 6), (2, 2, 3, 3), False, 1, "same", (2, 1), 1),
    ((1, 2, 4, 4), (2, 2, 3, 3), True, 1, "valid", 1, 1),
    ((1, 2, 6, 5), (2, 2, 5, 3), True, (1, 2), (1, 0), 1, 1),
    ((2, 1, 4, 4), (1, 1, 1, 1), True, 2, 0, 1, 1),
]


def _config_id(config):
    x, w, bias, stride, padding, dilation, groups = config
    return (f"x{x}-w{w}-{'bias' if bias else 'nobias'}-s{stride}-p{padding}-d{dilation}"
            f"-g{groups}").replace(" ", "")


def _tensors(*arrays, dtype=None):
    return [None if a is None else oxmera.tensor(a if dtype is None else a.astype(dtype),
                                                 requires_grad=True) for a in arrays]


@pytest.mark.parametrize("config", CONV2D_CONFIGS, ids=_config_id)
def test_conv2d_forward_and_gradients_match_the_loop_reference(config):
    x_shape, w_shape, bias, stride, padding, dilation, groups = config
    x, w = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
    b = RNG.standard_normal(w_shape[0]) if bias else None
    expected = conv2d_loop(x, w, b, stride, padding, dilation, groups)
    tx, tw, tb = _tensors(x, w, b)
    out = F.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    assert out.shape == expected.shape
    np.testing.assert_allclose(_np(out), expected, rtol=1e-12, atol=1e-12)
    upstream = RNG.standard_normal(expected.shape)
    (out * oxmera.tensor(upstream)).sum().backward()
    gx, gw, gb = conv2d_loop_grads(x, w, upstream, stride, padding, dilation, groups)
    np.testing.assert_allclose(_np(tx.grad), gx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(tw.grad), gw, rtol=1e-12, atol=1e-12)
    if bias:
        np.testing.assert_allclose(_np(tb.grad), gb, rtol=1e-12, atol=1e-12)


def test_conv2d_unbatched_is_the_batched_result_without_the_batch_dim():
    x, w, b = RNG.standard_normal((3, 5, 6)), RNG.standard_normal((2, 3, 3, 3)), np.ones(2)
    tx, tw, tb = _tensors(x, w, b)
    out = F.conv2d(tx, tw, tb, stride=2, padding=1)
    np.testing.assert_allclose(_np(out), conv2d_loop(x[None], w, b, 2, 1, 1, 1)[0], atol=1e-12)
    assert out.grad_fn.name == "Conv2dBackward"
    upstream = RNG.standard_normal(out.shape)
    (out * oxmera.tensor(upstream)).sum().backward()
    gx, gw, gb = conv2d_loop_grads(x[None], w, upstream[None], 2, 1, 1, 1)
    np.testing.assert_allclose(_np(tx.grad), gx[0], atol=1e-12)
    np.testing.assert_allclose(_np(tw.grad), gw, atol=1e-12)
    np.testing.assert_allclose(_np(tb.grad), gb, atol=1e-12)


@pytest.mark.parametrize("stride, padding, dilation, groups", [
    (1, 0, 1, 1), (2, 1, 1, 2), (3, 2, 2, 1), (1, "same", 2, 1), (1, "same", 1, 2),
    (1, "valid", 1, 4)])
@pytest.mark.parametrize("unbatched", [False, True])
def test_conv1d_matches_the_loop_reference(stride, padding, dilation, groups, unbatched):
    # The 2-D loop with a height of 1 is the 1-D definition.
    x = RNG.standard_normal((1 if unbatched else 2, 4, 9))
    w, b = RNG.standard_normal((4, 4 // groups, 4)), RNG.standard_normal(4)
    padding_2d = padding if isinstance(padding, str) else (0, padding)
    geometry = ((1, stride), padding_2d, (1, dilation), groups)
    expected = conv2d_loop(x[:, :, None], w[:, :, None], b, *geometry)[:, :, 0]
    tx, tw, tb = _tensors(x[0] if unbatched else x, w, b)
    out = F.conv1d(tx, tw, tb, stride, padding, dilation, groups)
    assert out.grad_fn.name == "Conv1dBackward"
    np.testing.assert_allclose(_np(out), expected[0] if unbatched else expected, atol=1e-12)
    upstream = RNG.standard_normal(expected.shape)
    (out * oxmera.tensor(upstream[0] if unbatched else upstream)).sum().backward()
    gx, gw, gb = conv2d_loop_grads(x[:, :, None], w[:, :, None], upstream[:, :, None], *geometry)
    np.testing.assert_allclose(_np(tx.grad), gx[0, :, 0] if unbatched else gx[:, :, 0],
                               atol=1e-12)
    np.testing.assert_allclose(_np(tw.grad), gw[:, :, 0], atol=1e-12)
    np.testing.assert_allclose(_np(tb.grad), gb, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_conv2d_matches_the_loop_reference_on_random_geometries(data):
    groups = data.draw(st.sampled_from([1, 2]), "groups")
    cg, og = data.draw(st.integers(1, 2), "cg"), data.draw(st.integers(1, 2), "og")
    kernel = (data.draw(st.integers(1, 3), "kh"), data.draw(st.integers(1, 3), "kw"))
    stride = (data.draw(st.integers(1, 3), "sh"), data.draw(st.integers(1, 3), "sw"))
    dilation = (data.draw(st.integers(1, 2), "dh"), data.draw(st.integers(1, 2), "dw"))
    padding = (data.draw(st.integers(0, 2), "ph"), data.draw(st.integers(0, 2), "pw"))
    effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    size = [data.draw(st.integers(max(1, e - 2 * p), e - 2 * p + 4), f"size{i}")
            for i, (e, p) in enumerate(zip(effective, padding))]
    n = data.draw(st.integers(0, 2), "n")
    x = RNG.standard_normal((n, cg * groups, *size))
    w = RNG.standard_normal((og * groups, cg, *kernel))
    b = RNG.standard_normal(og * groups)
    expected = conv2d_loop(x, w, b, stride, padding, dilation, groups)
    tx, tw, tb = _tensors(x, w, b)
    out = F.conv2d(tx, tw, tb, stride, padding, dilation, groups)
    np.testing.assert_allclose(_np(out), expected, atol=1e-12)
    upstream = RNG.standard_normal(expected.shape)
    gx, gw, gb = conv2d_loop_grads(x, w, upstream, stride, padding, dilation, groups)
    ours = grad((out * oxmera.tensor(upstream)).sum(), [tx, tw, tb])
    for g, expected_grad in zip(ours, (gx, gw, gb)):
        np.testing.assert_allclose(_np(g), expected_grad, atol=1e-12)


def test_non_contiguous_inputs_give_the_contiguous_result():
    w = RNG.standard_normal((4, 3, 3, 4))[:, :, :, ::-2]          # negative strides
    inputs = (oxmera.from_numpy(RNG.standard_normal((6, 5, 3, 2)).T),   # reversed strides
              oxmera.tensor(RNG.standard_normal((2, 3, 6, 5))).permute(0, 1, 3, 2),
              oxmera.from_numpy(RNG.standard_normal((2, 3, 5, 12))[..., ::2]))
    for x in inputs:
        assert not x.numpy().flags.c_contiguous
        expected = conv2d_loop(x.numpy(), w, None, 1, 1, 1, 1)
        out = F.conv2d(x, oxmera.from_numpy(w), padding=1)
        np.testing.assert_allclose(_np(out), expected, atol=1e-12)
        np.testing.assert_array_equal(_np(F.max_pool2d(x, 2)),
                                      max_pool2d_loop(x.numpy(), 2)[0])
        np.testing.assert_allclose(_np(F.avg_pool2d(x, 2, 1)), avg_pool2d_loop(x.numpy(), 2, 1),
                                   atol=1e-12)


def test_size_0_batch_gives_empty_output_and_zero_weight_gradient():
    x = oxmera.zeros(0, 3, 5, 5, dtype=oxmera.float64, requires_grad=True)
    w = oxmera.ones(4, 3, 3, 3, dtype=oxmera.float64, requires_grad=True)
    b = oxmera.ones(4, dtype=oxmera.float64, requires_grad=True)
    out = F.conv2d(x, w, b, padding=1)
    assert out.shape == (0, 4, 5, 5)
    out.sum().backward()
    assert x.grad.shape == (0, 3, 5, 5)
    assert np.all(_np(w.grad) == 0) and np.all(_np(b.grad) == 0)


# -- dtypes -------------------------------------------------------------------------------------

def test_float32_stays_float32_through_forward_and_backward():
    x = oxmera.randn(2, 3, 6, 6, requires_grad=True)
    w = oxmera.randn(4, 3, 3, 3, requires_grad=True)
    b = oxmera.randn(4, requires_grad=True)
    for out in (F.conv2d(x, w, b, padding=1), F.max_pool2d(x, 2), F.avg_pool2d(x, 3, 1, 1),
                F.conv1d(x[:, :, 0], w[:, :, 0], b)):
        assert out.dtype == np.float32
        xg, *rest = grad(out.sum(), [x, w, b], allow_unused=True, create_graph=True)
        assert xg.dtype == np.float32
        assert all(g is None or g.dtype == np.float32 for g in rest)


def test_integer_input_becomes_the_default_float_and_mixed_floats_promote():
    x = oxmera.tensor(np.arange(16).reshape(1, 1, 4, 4))
    assert F.conv2d(x, oxmera.ones(1, 1, 2, 2)).dtype == np.float32
    assert F.max_pool2d(x, 2).dtype == np.float32
    assert F.avg_pool2d(x, 2).dtype == np.float32
    mixed = F.conv2d(oxmera.ones(1, 1, 3, 3), oxmera.ones(1, 1, 2, 2, dtype=oxmera.float64))
    assert mixed.dtype == np.float64


# -- pooling against the loops ----------------------------------------------------------------

POOL_CONFIGS = [
    ((2, 3, 6, 6), 2, None, 0, 1, False),
    ((1, 2, 7, 6), 3, 2, 1, 1, False),
    ((1, 2, 7, 6), 3, 2, 1, 1, True),
    ((2, 1, 6, 7), (2, 3), (1, 2), (1, 1), 1, True),
    ((1, 2, 8, 8), 3, 1, 1, 2, False),
    ((1, 1, 5, 5), 2, 3, 1, (2, 1), True),
    ((3, 5, 4), 2, 1, 0, 1, False),
]


def _pool_id(config):
    return "-".join(str(v) for v in config).replace(" ", "")


def _numerical_vjp(fn, x, upstream, eps=1e-6):
    """d/dx of sum(fn(x) * upstream) by central differences (the pools are piecewise linear)."""
    out = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += eps
        minus[index] -= eps
        out[index] = ((fn(plus) - fn(minus)) * upstream).sum() / (2 * eps)
    return out


@pytest.mark.parametrize("config", POOL_CONFIGS, ids=_pool_id)
def test_max_pool2d_matches_the_loop_reference(config):
    shape, kernel, stride, padding, dilation, ceil_mode = config
    # distinct values, well apart: no ties, so the gradient is well defined
    x = RNG.permutation(np.linspace(-3, 3, math.prod(shape))).reshape(shape)
    values, indices = max_pool2d_loop(x, kernel, stride, padding, dilation, ceil_mode)
    tx = oxmera.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(tx, kernel, stride, padding, dilation, ceil_mode, return_indices=True)
    np.testing.assert_array_equal(_np(out), values)
    np.testing.assert_array_equal(idx.numpy(), indices)
    assert idx.dtype == np.int64 and not idx.requires_grad
    upstream = RNG.standard_normal(values.shape)
    (out * oxmera.tensor(upstream)).sum().backward()
    expected = _numerical_vjp(
        lambda a: max_pool2d_loop(a, kernel, stride, padding, dilation, ceil_mode)[0], x, upstream)
    np.testing.assert_allclose(_np(tx.grad), expected, atol=1e-8)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor_override", [None, 5])
@pytest.mark.parametrize("config", [c for c in POOL_CONFIGS if c[4] == 1], ids=_pool_id)
def test_avg_pool2d_matches_the_loop_reference(config, count_include_pad, divisor_override):
    shape, kernel, stride, padding, _, ceil_mode = config
    x = RNG.standard_normal(shape)
    args = (kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
    expected = avg_pool2d_loop(x, *args)
    tx = oxmera.tensor(x, requires_grad=True)
    out = F.avg_pool2d(tx, *args)
    np.testing.assert_allclose(_np(out), expected, atol=1e-12)
    upstream = RNG.standard_normal(expected.shape)
    (out * oxmera.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(_np(tx.grad),
                               _numerical_vjp(lambda a: avg_pool2d_loop(a, *args), x, upstream),
                               atol=1e-8)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_pools_match_the_loop_references_on_random_geometries(data):
    kernel = (data.draw(st.integers(1, 3), "kh"), data.draw(st.integers(1, 3), "kw"))
    stride = (data.draw(st.integers(1, 3), "sh"), data.draw(st.integers(1, 3), "sw"))
    padding = tuple(data.draw(st.integers(0, k // 2), f"p{i}") for i, k in enumerate(kernel))
    dilation = (data.draw(st.integers(1, 2), "dh"), data.draw(st.integers(1, 2), "dw"))
    ceil_mode = data.draw(st.booleans(), "ceil_mode")
    count_include_pad = data.draw(st.booleans(), "count_include_pad")
    effective = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    size = [data.draw(st.integers(max(1, e - 2 * p), e - 2 * p + 4), f"size{i}")
            for i, (e, p) in enumerate(zip(effective, padding))]
    shape = (data.draw(st.integers(0, 2), "n"), 2, *size)
    x = RNG.permutation(np.linspace(-3, 3, math.prod(shape))).reshape(shape)
    _, windows = _pool_windows(*size, kernel, stride, padding, dilation, ceil_mode)
    if any(all(not (0 <= r < size[0] and 0 <= c < size[1]) for r, c in cells)
           for cells in windows.values()):
        # a dilated window stepping over the whole input: refused
        with pytest.raises(RuntimeError, match="holds no element of the input"):
            F.max_pool2d(oxmera.tensor(x), kernel, stride, padding, dilation, ceil_mode)
    else:
        values, indices = max_pool2d_loop(x, kernel, stride, padding, dilation, ceil_mode)
        ours, our_indices = F.max_pool2d(oxmera.tensor(x), kernel, stride, padding, dilation,
                                         ceil_mode, return_indices=True)
        np.testing.assert_array_equal(_np(ours), values)
        np.testing.assert_array_equal(our_indices.numpy(), indices)
    args = (kernel, stride, padding, ceil_mode, count_include_pad)
    np.testing.assert_allclose(_np(F.avg_pool2d(oxmera.tensor(x), *args)),
                               avg_pool2d_loop(x, *args), atol=1e-12)


def test_max_pool2d_ties_send_the_gradient_to_the_first_maximum():
    # PyTorch's rule (not split as max/amax do): every window of a constant
    # input has its maximum at its first element.
    x = oxmera.ones(1, 1, 4, 4, dtype=oxmera.float64, requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    expected = np.zeros((4, 4))
    expected[::2, ::2] = 1
    np.testing.assert_array_equal(_np(x.grad)[0, 0], expected)
    x.grad = None
    # overlapping windows: the top-left element of each window, counted per window
    F.max_pool2d(x, 2, stride=1).sum().backward()
    expected = np.zeros((4, 4))
    expected[:3, :3] = 1
    np.testing.assert_array_equal(_np(x.grad)[0, 0], expected)


def test_max_pool2d_tie_between_two_equal_values_picks_the_first_in_window_order():
    x = oxmera.tensor([[[[1.0, 5.0], [5.0, 2.0]]]], dtype=oxmera.float64, requires_grad=True)
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert indices.item() == 1
    values.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), [[[[0.0, 1.0], [0.0, 0.0]]]])


def test_max_pool2d_nan_wins_its_window_and_padding_never_does():
    x = oxmera.tensor([[[[1.0, np.nan, 2.0, np.nan]]]], dtype=oxmera.float64, requires_grad=True)
    values, indices = F.max_pool2d(x, (1, 4), return_indices=True)
    assert np.isnan(values.item()) and indices.item() == 3      # the last NaN, as PyTorch
    # a window of -inf that starts in the padding: the index is the first input element
    y = oxmera.tensor([[[[-np.inf, -np.inf]]]], dtype=oxmera.float64, requires_grad=True)
    values, indices = F.max_pool2d(y, (1, 2), stride=1, padding=(0, 1), return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), [[[[0, 0, 1]]]])
    values.sum().backward()
    np.testing.assert_array_equal(_np(y.grad), [[[[2.0, 1.0]]]])


def test_pooling_grad_fn_names_and_second_order():
    x = oxmera.tensor(RNG.permutation(np.linspace(-1, 1, 32)).reshape(2, 1, 4, 4),
                      requires_grad=True)
    out = F.max_pool2d(x, 2)
    assert out.grad_fn.name == "MaxPool2dBackward"
    assert F.avg_pool2d(x, 2).grad_fn.name == "AvgPool2dBackward"
    (g,) = grad((out ** 2).sum(), [x], create_graph=True)
    assert g.grad_fn is not None
    (gg,) = grad(g.sum(), [x])
    # d/dx of 2 * max(x) scattered: 2 at each window's maximum
    assert sorted(np.unique(_np(gg))) == [0.0, 2.0] and _np(gg).sum() == 2.0 * 8


# -- errors -------------------------------------------------------------------------------------

def _conv_inputs():
    return (oxmera.randn(2, 3, 5, 5, requires_grad=True),
            oxmera.randn(4, 3, 3, 3, requires_grad=True))


@pytest.mark.parametrize("call, match", [
    (lambda x, w: F.conv2d(x, oxmera.randn(4, 2, 3, 3)),
     r"conv2d\(\).*weight of shape \(4, 2, 3, 3\).*input of shape \(2, 3, 5, 5\) to have 2 "
     r"channels, but got 3"),
    (lambda x, w: F.conv2d(x, oxmera.randn(4, 1, 3, 3), groups=2),
     r"conv2d\(\).*3 channels \(input shape \(2, 3, 5, 5\)\) are not divisible by groups=2"),
    (lambda x, w: F.conv2d(oxmera.randn(2, 4, 5, 5), oxmera.randn(3, 2, 3, 3), groups=2),
     r"conv2d\(\).*3 output channels \(weight shape \(3, 2, 3, 3\)\) are not divisible by "
     r"groups=2"),
    (lambda x, w: F.conv2d(x, oxmera.randn(4, 3, 7, 3)),
     r"conv2d\(\).*padded input size per channel \(5, 5\).*kernel size \(7, 3\).*input shape "
     r"\(2, 3, 5, 5\), weight shape \(4, 3, 7, 3\)"),
    (lambda x, w: F.conv2d(x, w, dilation=4, padding=1),
     r"conv2d\(\).*padded input size per channel \(7, 7\).*kernel size \(9, 9\) \(dilated\)"),
    (lambda x, w: F.conv2d(x, w, stride=2, padding="same"),
     r"conv2d\(\): padding='same' is not supported for strided convolutions"),
    (lambda x, w: F.conv2d(x, w, padding="full"), r"conv2d\(\): invalid padding string 'full'"),
    (lambda x, w: F.conv2d(x, w, oxmera.randn(3)),
     r"conv2d\(\): expected bias of shape \(4,\).*got bias of shape \(3,\)"),
    (lambda x, w: F.conv2d(x, w[0]), r"conv2d\(\): expected a 4-D weight.*\(3, 3, 3\)"),
    (lambda x, w: F.conv2d(x[0, 0], w), r"conv2d\(\): expected a 3-D \(unbatched\) or 4-D"),
    (lambda x, w: F.conv2d(x, w, padding=-1), r"conv2d\(\): padding must be non-negative"),
    (lambda x, w: F.conv2d(x, w, stride=0), r"conv2d\(\): stride must be positive"),
    (lambda x, w: F.conv2d(x, w, stride=(1, 1, 1)), r"conv2d\(\): expected stride to be"),
    (lambda x, w: F.conv2d(x, w, groups=0), r"conv2d\(\): groups must be positive"),
    (lambda x, w: F.conv1d(x[:, :, 0], w[:, :2, 0]),
     r"conv1d\(\).*weight of shape \(4, 2, 3\).*input of shape \(2, 3, 5\) to have 2 channels"),
    (lambda x, w: F.max_pool2d(x, 2, padding=2),
     r"max_pool2d\(\): padding should be at most half of the kernel size.*\(2, 3, 5, 5\)"),
    (lambda x, w: F.max_pool2d(x, 6),
     r"max_pool2d\(\): given input of shape \(2, 3, 5, 5\), the calculated output size \(0, 0\)"),
    (lambda x, w: F.max_pool2d(x[:, :, :1, :1], (1, 2), 1, (0, 1), (1, 2)),
     r"max_pool2d\(\): with kernel_size=\(1, 2\), dilation=\(1, 2\) and padding=\(0, 1\), "
     r"the window of output column 0 holds no element of the input \(input shape "
     r"\(2, 3, 1, 1\)\)"),
    (lambda x, w: F.avg_pool2d(x[0, 0], 2), r"avg_pool2d\(\): expected a 3-D \(unbatched\) or 4-D"),
    (lambda x, w: F.avg_pool2d(x, 2, divisor_override=0),
     r"avg_pool2d\(\): divisor_override must not be zero"),
])
def test_errors_name_the_op_and_shapes_and_change_nothing(call, match):
    x, w = _conv_inputs()
    with unchanged(x, w):
        with pytest.raises(RuntimeError, match=match) as info:
            call(x, w)
        assert isinstance(info.value, ValueError)    # OpError is both
        del info


def test_argument_type_errors():
    x, w = _conv_inputs()
    with unchanged(x, w):
        with pytest.raises(TypeError, match=r"conv2d\(\): stride must be an int"):
            F.conv2d(x, w, stride=1.5)
        with pytest.raises(TypeError, match=r"conv2d\(\): groups must be an int"):
            F.conv2d(x, w, groups="2")
        with pytest.raises(TypeError, match=r"max_pool2d\(\): kernel_size must be an int"):
            F.max_pool2d(x, None)


def test_arrays_and_lists_are_accepted_beside_tensors_to_second_order():
    w = oxmera.tensor(RNG.standard_normal((2, 3, 3, 3)), requires_grad=True)
    x = RNG.standard_normal((3, 5, 5))
    out = F.conv2d(x, w, padding=1)                         # unbatched ndarray input
    out.sum().backward()
    _, expected, _ = conv2d_loop_grads(x[None], _np(w), np.ones((1, 2, 5, 5)), 1, 1, 1, 1)
    np.testing.assert_allclose(_np(w.grad), expected, atol=1e-12)
    tx = oxmera.tensor(x, requires_grad=True)
    weight_list = _np(w).tolist()
    (g,) = grad((F.conv2d(tx, weight_list, [0.5, 1.0]) ** 2).sum(), [tx], create_graph=True)
    (gg,) = grad(g.sum(), [tx])
    assert g.shape == gg.shape == (3, 5, 5)


def test_pool_gradient_ops_check_their_indices():
    from oxmera.ops.conv import max_pool2d_backward, max_pool2d_gather
    g = oxmera.ones(1, 2, 1, 2, dtype=oxmera.float64, requires_grad=True)
    with unchanged(g):
        with pytest.raises(RuntimeError, match=r"max_pool2d_backward\(\): indices must lie in "
                                               r"\[0, 4\).*got values in \[0, 4\]"):
            max_pool2d_backward(g, np.array([[[[0, 4]], [[1, 2]]]]), (1, 2, 2, 2))
        with pytest.raises(RuntimeError, match=r"max_pool2d_gather\(\): indices must lie in"):
            max_pool2d_gather(g, np.array([[[[-1]], [[0]]]]))
        with pytest.raises(TypeError, match=r"max_pool2d_gather\(\): indices must be integers"):
            max_pool2d_gather(g, np.zeros((1, 2, 1, 1)))
        with pytest.raises(RuntimeError, match=r"max_pool2d_backward\(\): expected values and "
                                               r"indices of one shape"):
            max_pool2d_backward(g, np.zeros((1, 2, 1, 3), np.int64), (1, 2, 2, 2))
