"""The compiled gathers behind the convolutions and max pooling (oxmera/_core/_conv_kernels.h).

im2col and col2im are checked against a NumPy window view of the padded input
(and against each other: col2im is im2col's adjoint), over 1 to 3 spatial
dims, strides, dilations, paddings (negative ones crop), both column layouts,
every float dtype and inputs of any layout. max pooling is checked against a
loop over the windows written from its documented rule (first maximum in
window order, the last NaN, padding never wins), and its gradient in both
plane orders against np.add.at.
"""
import itertools

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import oxmera
import oxmera.nn.functional as F
from oxmera._core import _kernels
from oxmera.ops.conv import max_pool2d_backward

GEOMETRIES = [   # input shape, kernel, stride, padding before (and after), dilation
    ((2, 3, 7), (2,), (1,), (0,), (1,)),
    ((2, 3, 9), (3,), (2,), (2,), (2,)),
    ((2, 4, 6, 5), (3, 3), (2, 1), (1, 2), (1, 2)),
    ((3, 2, 5, 5), (3, 3), (1, 1), (-1, 1), (1, 1)),      # a crop (transposed conv grads)
    ((2, 3, 4, 4), (3, 3), (1, 1), (1, 1), (1, 1)),       # the digits CNN's second conv
    ((3, 2, 5, 6, 4), (2, 3, 2), (1, 2, 1), (1, 0, 1), (2, 1, 1)),
    ((2, 2, 20, 20, 20), (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1)),  # past the table's size
    # unit stride along rows of 16 outputs or more (the row pass): a crop and
    # a dilation along them, a kernel taller than the input (rows wholly in
    # the padding), 1-D and 3-D
    ((2, 3, 6, 21), (2, 3), (2, 1), (0, -1), (1, 2)),
    ((1, 2, 3, 16), (5, 3), (1, 1), (2, 1), (1, 1)),
    ((2, 3, 20), (3,), (1,), (1,), (1,)),
    ((1, 2, 3, 4, 18), (2, 2, 3), (1, 2, 1), (1, 0, 2), (1, 1, 2)),
]


def _reference_columns(x, kernel, stride, pad, dilation, batch_layout):
    """The column matrix from a NumPy window view of the zero-padded input."""
    nd = len(kernel)
    lo = [max(p, 0) for p in pad]
    cropped = x[(Ellipsis,) + tuple(slice(max(-p, 0), None) for p in pad)]
    padded = np.pad(cropped, [(0, 0), (0, 0)] + [(p, p) for p in lo])
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    view = sliding_window_view(padded, spans, axis=tuple(range(2, 2 + nd)))
    out = [(n + 2 * p - s) // st + 1 for n, p, s, st in
           zip(x.shape[2:], pad, spans, stride)]
    view = view[(Ellipsis,) + tuple(slice(None, (o - 1) * st + 1, st)
                                    for o, st in zip(out, stride))
                + tuple(slice(None, None, d) for d in dilation)]
    view = np.moveaxis(view, tuple(range(-nd, 0)), tuple(range(2, 2 + nd)))  # (N, C, *k, *out)
    n, c = x.shape[:2]
    k, p = int(np.prod(kernel)), int(np.prod(out))
    if batch_layout:
        return np.ascontiguousarray(np.moveaxis(view, 0, 1 + nd)).reshape(c * k, n * p), out
    return np.ascontiguousarray(view).reshape(n, c * k, p), out


def _layouts(x):
    """x and views of its values in other layouts: channel-first, strided, reversed
    (wrap them with ``oxmera.as_tensor``, which keeps the layout; ``tensor`` copies)."""
    yield x
    yield np.ascontiguousarray(x.swapaxes(0, 1)).swapaxes(0, 1)
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    wide[..., ::2] = x
    yield wide[..., ::2]
    yield np.ascontiguousarray(x[..., ::-1])[..., ::-1]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: str(g[0]))
@pytest.mark.parametrize("batch_layout", [True, False])
def test_im2col_is_the_window_view_copied(geometry, batch_layout):
    shape, kernel, stride, pad, dilation = geometry
    rng = np.random.default_rng(0)
    for dtype in (np.float16, np.float32, np.float64):
        x = rng.standard_normal(shape).astype(dtype)
        expected, out = _reference_columns(x, kernel, stride, pad, dilation, batch_layout)
        for view in _layouts(x):
            got = _kernels.im2col(view, kernel, tuple(out), stride, pad, dilation, batch_layout)
            assert got.dtype == dtype and got.flags.c_contiguous
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: str(g[0]))
@pytest.mark.parametrize("batch_layout", [True, False])
def test_col2im_is_the_adjoint_of_im2col(geometry, batch_layout):
    shape, kernel, stride, pad, dilation = geometry
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    columns, out = _reference_columns(x, kernel, stride, pad, dilation, batch_layout)
    cotangent = rng.standard_normal(columns.shape)
    for dtype in (np.float32, np.float64):
        # into a channel-first `out` as well: the kernel takes any strides
        for target in (np.zeros(shape, dtype),
                       np.zeros((shape[1], shape[0]) + shape[2:], dtype).swapaxes(0, 1)):
            back = _kernels.col2im(cotangent.astype(dtype), target, kernel, tuple(out), stride,
                                   pad, dilation, batch_layout)
            assert back is target
            np.testing.assert_allclose((x * back).sum(), (columns * cotangent).sum(),
                                       rtol=1e-4 if dtype == np.float32 else 1e-12)


def test_rows_only_gives_the_row_pass_or_none():
    # _columns asks for the row pass and copies NumPy's window view otherwise;
    # the kernel's rule (unit stride along rows of 16 outputs or more, the
    # input's rows contiguous) decides.
    x = np.random.default_rng(2).standard_normal((2, 3, 5, 20)).astype(np.float32)
    args = ((3, 3), (5, 20), (1, 1), (1, 1), (1, 1))
    got = _kernels.im2col(x, *args, False, rows_only=True)
    np.testing.assert_array_equal(got, _reference_columns(x, (3, 3), (1, 1), (1, 1), (1, 1),
                                                          False)[0])
    assert _kernels.im2col(x, (3, 3), (5, 10), (1, 2), (1, 1), (1, 1), False,
                           rows_only=True) is None                    # a stride along rows
    assert _kernels.im2col(x[..., :12], (3, 3), (5, 12), (1, 1), (1, 1), (1, 1), False,
                           rows_only=True) is None                    # rows of 12
    wide = np.zeros(x.shape[:-1] + (40,), np.float32)
    wide[..., ::2] = x
    assert _kernels.im2col(wide[..., ::2], *args, False, rows_only=True) is None   # strided


def test_kernels_refuse_what_they_cannot_do():
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(TypeError, match="2, 4 or 8 bytes"):
        _kernels.im2col(x.astype(np.complex128), (2, 2), (3, 3), (1, 1), (0, 0), (1, 1), True)
    with pytest.raises(TypeError, match="one for both"):
        _kernels.col2im(np.zeros((4, 9), np.float64), x, (2, 2), (3, 3), (1, 1), (0, 0),
                        (1, 1), True)
    with pytest.raises(ValueError, match="columns of shape"):
        _kernels.col2im(np.zeros((4, 8), np.float32), x, (2, 2), (3, 3), (1, 1), (0, 0),
                        (1, 1), True)


def _reference_max_pool(x, kernel, stride, pad, dilation, out):
    """Each window's first maximum in window order, or its last NaN; padding skipped."""
    n, c, h, w = x.shape
    values = np.empty((n, c) + tuple(out), x.dtype)
    indices = np.empty((n, c) + tuple(out), np.int64)
    for i, j, oh, ow in itertools.product(range(n), range(c), range(out[0]), range(out[1])):
        best, where = None, None
        for kh, kw in itertools.product(range(kernel[0]), range(kernel[1])):
            ih = oh * stride[0] - pad[0] + kh * dilation[0]
            iw = ow * stride[1] - pad[1] + kw * dilation[1]
            if 0 <= ih < h and 0 <= iw < w:
                v = x[i, j, ih, iw]
                if best is None or v > best or np.isnan(v):
                    best, where = v, ih * w + iw
        values[i, j, oh, ow], indices[i, j, oh, ow] = best, where
    return values, indices


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("args", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(2, 1)),
])
def test_max_pool2d_follows_its_rule_in_every_layout(dtype, args):
    rng = np.random.default_rng(2)
    x = rng.integers(-3, 3, (2, 3, 9, 8)).astype(dtype)     # many ties
    x[0, 0, 0, :3] = np.nan
    x[0, 1, 2, 2] = np.nan
    x[1, 2] = -np.inf
    geometry = dict(kernel_size=None, stride=None, padding=0, dilation=1, ceil_mode=False)
    geometry.update(args)
    from oxmera.ops.conv import _pool_geometry
    kernel, stride, dilation, out, pads = _pool_geometry(
        "max_pool2d", x.shape, geometry["kernel_size"], geometry["stride"],
        geometry["padding"], geometry["dilation"], geometry["ceil_mode"])
    expected = _reference_max_pool(x, kernel, stride, [lo for lo, _ in pads], dilation, out)
    for view in _layouts(x):
        values, indices = F.max_pool2d(oxmera.as_tensor(view), return_indices=True, **args)
        np.testing.assert_array_equal(values.numpy(), expected[0])
        np.testing.assert_array_equal(indices.numpy(), expected[1])
    values, indices = F.max_pool2d(oxmera.tensor(x[0]), return_indices=True, **args)
    np.testing.assert_array_equal(indices.numpy(), expected[1][0])


def test_max_pool2d_of_a_channel_first_view_keeps_that_layout_through_its_gradient():
    # a convolution's output on small images is an (N, C) view of (C, N) memory;
    # pooling and its gradient keep that layout (no transposing copies)
    rng = np.random.default_rng(3)
    memory = rng.standard_normal((4, 3, 6, 6)).astype(np.float32)
    x = oxmera.tensor(memory).transpose(0, 1).detach().requires_grad_()
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert indices.numpy().strides[1] > indices.numpy().strides[0]
    grad = rng.standard_normal(tuple(values.shape)).astype(np.float32)
    values.backward(oxmera.tensor(grad))
    expected = np.zeros((3 * 4, 36), np.float32)
    flat = indices.numpy().reshape(12, 9) + np.arange(12)[:, None] * 36
    np.add.at(expected.reshape(-1), flat.ravel(), grad.reshape(-1))
    np.testing.assert_array_equal(x.grad.numpy(), expected.reshape(3, 4, 6, 6))
    # the op directly, with both index layouts, gives one result
    contiguous = np.ascontiguousarray(indices.numpy())
    for idx in (indices.numpy(), contiguous):
        got = max_pool2d_backward(oxmera.tensor(grad), idx, (3, 4, 6, 6))
        np.testing.assert_array_equal(got.numpy(), expected.reshape(3, 4, 6, 6))


def test_conv_float16_input_gradient_adds_in_float32():
    # col2im adds the float16 column gradient in float32, rounded once
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 5, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    g = rng.standard_normal((2, 4, 5, 5))
    xt = oxmera.tensor(x.astype(np.float16), requires_grad=True)
    out = F.conv2d(xt, oxmera.tensor(w.astype(np.float16)), padding=1)
    out.backward(oxmera.tensor(g.astype(np.float16)))
    x64 = oxmera.tensor(x, requires_grad=True)
    F.conv2d(x64, oxmera.tensor(w.astype(np.float16).astype(np.float64)), padding=1).backward(
        oxmera.tensor(g.astype(np.float16).astype(np.float64)))
    assert xt.grad.dtype == oxmera.float16
    np.testing.assert_allclose(xt.grad.numpy().astype(np.float64), x64.grad.numpy(),
                               rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("positions", ["batched", "per-sample"])
def test_conv2d_of_any_input_layout_is_the_same(positions):
    rng = np.random.default_rng(5)
    size = 6 if positions == "batched" else 20      # below / above _BATCHED_POSITIONS
    x = rng.standard_normal((3, 4, size, size)).astype(np.float32)
    w = oxmera.tensor(rng.standard_normal((6, 2, 3, 3)).astype(np.float32))
    expected = F.conv2d(oxmera.tensor(x), w, padding=1, stride=(1, 2), groups=2).numpy()
    for view in _layouts(x):
        got = F.conv2d(oxmera.as_tensor(view), w, padding=1, stride=(1, 2), groups=2).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
