"""Convolution and pooling ops: conv1d, conv2d, conv3d, max_pool2d, avg_pool2d.

A convolution gathers its input into the im2col matrix in one compiled
pass (``oxmera/_core/_conv_kernels.h``: any input strides, the zero padding
by bounds, no padded copy) and multiplies it by the weight in one batched
matmul (batched over samples and groups, or one product over the whole batch
for small images); its input gradient is the product's transpose and the
compiled col2im, the gather's adjoint. ``max_pool2d`` (float32/float64) and
its gradient are compiled loops too. ``avg_pool2d`` and a float16
``max_pool2d`` reduce the strided window view (``sliding_window_view``) of
the padded input one kernel position at a time: ``KH * KW`` whole-array
NumPy calls (measured 10-20x faster than reducing the view over its two
small window axes); ``avg_pool2d``'s gradient adds whole strided slices the
same way. Measurements: docs/performance.rst.

Every VJP is written with ops of this module, and each of those has its VJP
here too, so gradients of any order work:

- ``conv1d``/``2d``/``3d``: d input is :func:`conv_input_grad` (the transposed
  convolution), d weight is :func:`conv_weight_grad`, d bias a sum.
- ``conv_input_grad`` and ``conv_weight_grad`` are bilinear, like the
  convolution itself; their VJPs are the convolution and each other.
- ``avg_pool2d`` is linear; its VJP is :func:`avg_pool2d_backward`, whose VJP
  is ``avg_pool2d``.
- ``max_pool2d`` sends each output's gradient to its window's maximum with
  :func:`max_pool2d_backward` (a scatter-add by the indices the forward
  found), whose VJP is :func:`max_pool2d_gather`, whose VJP is
  ``max_pool2d_backward``.

The convolution kernels work on any number of spatial dims (1 to 3 are
exposed). Shapes follow PyTorch: ``(N, C, *spatial)`` inputs, or
``(C, *spatial)`` without the batch dimension. The transposed convolutions
(``oxmera.ops.conv_transpose``) are ``conv_input_grad``. Argument errors are
``OpError`` (a ``ValueError`` and a ``RuntimeError``) naming the op and the
shapes, raised before anything is computed or recorded.
"""
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from oxmera._core import _kernels
from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops._utils import accumulation_dtype, narrow
from oxmera.ops.creation import as_tensor

__all__ = ["conv1d", "conv2d", "conv3d", "max_pool2d", "avg_pool2d"]

OpError = _core.OpError


# -- arguments ------------------------------------------------------------------

def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _ntuple(value, n, name, opname, minimum):
    """``value`` (an int, or a sequence of 1 or ``n`` ints) as a tuple of ``n`` ints."""
    if _is_int(value):
        values = (int(value),) * n
    elif isinstance(value, (tuple, list)) and value and all(_is_int(v) for v in value):
        if len(value) == 1:
            values = (int(value[0]),) * n
        elif len(value) == n:
            values = tuple(int(v) for v in value)
        else:
            raise OpError(f"{opname}(): expected {name} to be a single integer or a sequence of "
                          f"{n} integers, got {name}={tuple(value)}")
    else:
        raise TypeError(f"{opname}(): {name} must be an int or a tuple of {n} ints, got "
                        f"{value!r}")
    if any(v < minimum for v in values):
        kind = "positive" if minimum else "non-negative"
        raise OpError(f"{opname}(): {name} must be {kind}, got {name}={values}")
    return values


def _conv_padding(padding, nd, kernel, stride, dilation, opname):
    """``padding`` as ``nd`` ``(before, after)`` pairs.

    Accepts what PyTorch does (an int, ``nd`` ints, ``'valid'``, ``'same'``)
    and, beyond it, explicit pairs ``((top, bottom), (left, right))``; the
    VJPs pass pairs, so an uneven ``'same'`` padding survives differentiation.
    """
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise OpError(f"{opname}(): invalid padding string {padding!r}, should be one of "
                          f"'valid' or 'same'")
        if any(s != 1 for s in stride):
            raise OpError(f"{opname}(): padding='same' is not supported for strided "
                          f"convolutions (stride={stride})")
        # PyTorch puts the odd one out of an uneven total after the input.
        totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)
    if (isinstance(padding, (tuple, list)) and len(padding) == nd
            and all(isinstance(p, (tuple, list)) for p in padding)):
        if any(len(p) != 2 for p in padding):
            raise OpError(f"{opname}(): padding pairs must be (before, after), got {padding!r}")
        # Negative amounts crop: the transposed convolution's output_padding
        # makes its gradient a convolution of a longer input, cropped.
        return tuple(_ntuple(p, 2, "padding", opname, -math.inf) for p in padding)
    return tuple((p, p) for p in _ntuple(padding, nd, "padding", opname, 0))


def _conv_geometry(opname, input_shape, weight_shape, bias_shape, stride, padding, dilation,
                   groups, shown_shape=None):
    """Check a convolution's arguments; return ``(stride, pads, dilation, output size)``.

    ``input_shape`` is batched, ``(N, C, *spatial)``; ``shown_shape`` is the
    shape the caller passed (unbatched, maybe), for messages.
    """
    shown = tuple(input_shape if shown_shape is None else shown_shape)
    input_shape, weight_shape = tuple(input_shape), tuple(weight_shape)
    nd = len(weight_shape) - 2
    if not _is_int(groups):
        raise TypeError(f"{opname}(): groups must be an int, got {groups!r}")
    if groups < 1:
        raise OpError(f"{opname}(): groups must be positive, got groups={groups}")
    channels = input_shape[1]
    out_channels, group_channels = weight_shape[:2]
    kernel = weight_shape[2:]
    if any(k < 1 for k in kernel):
        raise OpError(f"{opname}(): weight of shape {weight_shape} has an empty kernel")
    if channels % groups:
        raise OpError(f"{opname}(): the input's {channels} channels (input shape {shown}) are "
                      f"not divisible by groups={groups}")
    if out_channels % groups:
        raise OpError(f"{opname}(): the weight's {out_channels} output channels (weight shape "
                      f"{weight_shape}) are not divisible by groups={groups}")
    if group_channels * groups != channels:
        raise OpError(f"{opname}(): given groups={groups} and weight of shape {weight_shape}, "
                      f"expected input of shape {shown} to have {group_channels * groups} "
                      f"channels, but got {channels} channels instead")
    if bias_shape is not None and tuple(bias_shape) != (out_channels,):
        raise OpError(f"{opname}(): expected bias of shape ({out_channels},) for weight of shape "
                      f"{weight_shape}, got bias of shape {tuple(bias_shape)}")
    stride = _ntuple(stride, nd, "stride", opname, 1)
    dilation = _ntuple(dilation, nd, "dilation", opname, 1)
    pads = _conv_padding(padding, nd, kernel, stride, dilation, opname)
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(input_shape[2:], pads))
    effective = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(p < e for p, e in zip(padded, effective)):
        raise OpError(f"{opname}(): calculated padded input size per channel {padded} is smaller "
                      f"than the kernel size {effective} (dilated): the kernel can't be greater "
                      f"than the padded input (input shape {shown}, weight shape {weight_shape}, "
                      f"padding {padding!r})")
    out_size = tuple((p - e) // s + 1 for p, e, s in zip(padded, effective, stride))
    return stride, pads, dilation, out_size


# -- NumPy kernels (N-D, on arrays) ------------------------------------------------

def _pad(x, pads, value):
    """``x`` (..., *spatial) padded by ``(before, after)`` pairs, one per trailing dim.

    A new array, or ``x`` itself when nothing is padded. A negative amount
    crops instead (the gradient ops of a transposed convolution with
    ``output_padding`` pass one).
    """
    nd = len(pads)
    if not any(lo or hi for lo, hi in pads):
        return x
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        x = x[(Ellipsis,) + tuple(slice(max(-lo, 0), n - max(-hi, 0))
                                  for (lo, hi), n in zip(pads, x.shape[-nd:]))]
        pads = tuple((max(lo, 0), max(hi, 0)) for lo, hi in pads)
        if not any(lo or hi for lo, hi in pads):
            return x
    shape = x.shape[:-nd] + tuple(n + lo + hi for (lo, hi), n in zip(pads, x.shape[-nd:]))
    out = np.zeros(shape, x.dtype) if value == 0 else np.full(shape, value, x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, x.shape[-nd:]))] = x
    return out


def _unpad(padded, pads, spatial):
    """The adjoint of ``_pad(x, pads, 0)``: the part of ``padded`` over ``x`` (of ``spatial`` size).

    Where ``_pad`` cropped, that part of ``x`` gets zeros.
    """
    nd = len(pads)
    if not any(lo or hi for lo, hi in pads):
        return padded
    inside = tuple(slice(max(lo, 0), max(lo, 0) + n - max(-lo, 0) - max(-hi, 0))
                   for (lo, hi), n in zip(pads, spatial))
    if all(lo >= 0 and hi >= 0 for lo, hi in pads):
        return np.ascontiguousarray(padded[(Ellipsis,) + inside])
    out = np.zeros(padded.shape[:-nd] + tuple(spatial), padded.dtype)
    out[(Ellipsis,) + tuple(slice(max(-lo, 0), n - max(-hi, 0))
                            for (lo, hi), n in zip(pads, spatial))] = padded[(Ellipsis,) + inside]
    return out


def _windows(padded, kernel, stride, dilation, out_size):
    """A read-only view ``(..., *kernel, *out_size)`` of ``padded`` (..., *padded size), no copy.

    In 2-D, ``view[..., i, j, y, x] == padded[..., y * sh + i * dh, x * sw + j * dw]``.
    """
    nd = len(kernel)
    spans = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))
    view = sliding_window_view(padded, spans, axis=tuple(range(padded.ndim - nd, padded.ndim)))
    view = view[(Ellipsis,) + tuple(slice(None, (o - 1) * s + 1, s)
                                    for o, s in zip(out_size, stride))
                + tuple(slice(None, None, d) for d in dilation)]
    return np.moveaxis(view, tuple(range(-nd, 0)), tuple(range(-2 * nd, -nd)))


def _add_windows(out, piece, kernel, stride, dilation, out_size):
    """col2im: ``out[window position (i, j, ...) of every output] += piece(i, j, ...)``.

    A loop over the kernel positions, each adding one whole strided slice
    (windows overlap, so it cannot be one assignment; ``np.add.at`` would
    need an index array as large as the im2col matrix).
    """
    for taps in itertools.product(*(range(k) for k in kernel)):
        out[(Ellipsis,) + tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                                for t, s, d, o in zip(taps, stride, dilation, out_size))] \
            += piece(*taps)


#: Samples go through im2col, matmul and col2im in chunks whose im2col matrix
#: is about this many bytes, so it is still in cache when the next step reads
#: it (measured on a (32, 16, 32, 32) float32 input: 10-15% faster than whole
#: batches; much smaller chunks lose it again to per-call overhead).
_CHUNK_BYTES = 4 << 20


def _chunks(n, per_sample_bytes):
    """Slices of the batch dimension, each about ``_CHUNK_BYTES`` of im2col matrix."""
    step = max(1, _CHUNK_BYTES // max(1, per_sample_bytes))
    return [slice(start, min(start + step, n)) for start in range(0, n, step)]


#: A convolution whose output has fewer positions per sample than this runs as
#: one matrix product over the whole batch instead of one per sample: the
#: products of small images (8x8, 4x4 in a digits CNN) are too small for BLAS
#: to reach its speed, and the weight's gradient was a batch of products
#: summed afterwards (measured on the demo's digits CNN, bench/ digits_cnn).
_BATCHED_POSITIONS = 256


def _batch_layout(positions):
    return positions < _BATCHED_POSITIONS


def _columns(x, kernel, out_size, stride, pads, dilation, batch_layout):
    """The im2col matrix of ``x`` (N, C, *spatial), padded by ``pads`` with zeros.

    ``(C*K, N*P)`` in the batch layout (the samples side by side, as one
    product over the batch needs them), else ``(N, C*K, P)``; ``K`` is the
    kernel's size, ``P`` the number of output positions, and a row's ``C*K``
    index is channel-major, so ``groups`` is a reshape to ``(g, C/g*K, ...)``.
    The batch layout (small images) is one compiled pass over any layout of
    ``x`` (``_conv_kernels.h``): NumPy's one strided copy per kernel position
    spent its time on rows of 4 to 8 elements, and needed a padded copy of
    the input first.
    """
    args = (tuple(kernel), tuple(out_size), stride, tuple(lo for lo, _ in pads), dilation)
    if batch_layout:
        return _kernels.im2col(x, *args, True)
    # Per sample (images of 256 positions and more): the kernel's row pass
    # when it applies (unit stride along rows of 16 outputs or more: 0.31
    # against 0.40 ms for 7 samples of a (32, 16, 32, 32) input), else the
    # strided copy of the padded input's window view, faster than the
    # kernel's per-element table there (that input with stride 2: 1.2
    # against 1.7 ms).
    cols = _kernels.im2col(x, *args, False, rows_only=True)
    if cols is not None:
        return cols
    windows = _windows(_pad(x, pads, 0), kernel, stride, dilation, out_size)
    n, c = x.shape[:2]
    return np.ascontiguousarray(windows).reshape(n, c * math.prod(kernel), math.prod(out_size))


def _add_columns(cols, out, kernel, out_size, stride, pads, dilation, batch_layout):
    """col2im, the adjoint of :func:`_columns`: adds ``cols`` at their input positions of
    ``out`` (N, C, *spatial; float32 or float64 as ``cols``), dropping the padding."""
    _kernels.col2im(np.ascontiguousarray(cols), out, tuple(kernel), tuple(out_size), stride,
                    tuple(lo for lo, _ in pads), dilation, batch_layout)


def _sample_major(array):
    """Whether ``array`` (N, C, ...) is laid out sample by sample, or as its ``(C, N, ...)``
    transpose is: a convolution's batch layout returns its output channel-first, and
    the ops after it (max pooling, its gradient, col2im) keep that layout, so that
    every later copy into the channel-first column matrices is a reshape."""
    return abs(array.strides[0]) >= abs(array.strides[1]) or array.shape[1] == 1


def _channels_first(array, groups):
    """``array`` (N, O, *spatial) as ``(g, O/g, N*P)`` (a copy unless it is laid out so)."""
    n, o = array.shape[:2]
    order = (1, 0, *range(2, array.ndim))
    return np.ascontiguousarray(array.transpose(order)).reshape(groups, o // groups, -1)


def _correlate(x, w, stride, pads, dilation, groups, out_size):
    """The convolution (a cross-correlation) of ``x`` (N, C, *spatial) with ``w`` (O, C/g, *k)."""
    n, o = x.shape[0], w.shape[0]
    kernel, size, positions = w.shape[2:], math.prod(w.shape[1:]), math.prod(out_size)
    dtype = np.result_type(x.dtype, w.dtype)
    wm = np.ascontiguousarray(w).reshape(groups, o // groups, size)
    if _batch_layout(positions):
        # (g, O/g, K) @ (g, K, N*P): an (O, N, *out) array, returned as its
        # (N, O, *out) view (no copy; later ops take any strides)
        cols = _columns(x, kernel, out_size, stride, pads, dilation, True)
        out = np.matmul(wm, cols.reshape(groups, size, n * positions))
        return out.reshape((o, n) + tuple(out_size)).swapaxes(0, 1)
    out = np.empty((n, groups, o // groups, positions), dtype)
    for chunk in _chunks(n, groups * size * positions * dtype.itemsize):
        cols = _columns(x[chunk], kernel, out_size, stride, pads, dilation, False)
        # (g, O/g, K) @ (n, g, K, P) -> (n, g, O/g, P): already (N, O, Ho, Wo) in memory.
        np.matmul(wm, cols.reshape(-1, groups, size, positions), out=out[chunk])
    return out.reshape((n, o) + tuple(out_size))


def _correlate_input_grad(grad, w, input_shape, stride, pads, dilation, groups):
    """The transposed convolution: the gradient of ``_correlate`` with respect to ``x``."""
    n, o = grad.shape[:2]
    out_size, kernel = grad.shape[2:], w.shape[2:]
    size, positions = math.prod(w.shape[1:]), math.prod(out_size)
    dtype = np.result_type(grad.dtype, w.dtype)
    wm = np.ascontiguousarray(w).reshape(groups, o // groups, size).transpose(0, 2, 1)
    # col2im adds in float32 for float16 (as the weight's gradient sums), rounded once.
    wide = accumulation_dtype(dtype)
    if _batch_layout(positions):
        # (g, K, O/g) @ (g, O/g, N*P): the batch's im2col gradient, (C*K, N*P),
        # added into a channel-first gradient (returned as its (N, C, ...) view)
        cols = np.matmul(wm, _channels_first(grad, groups))
        out = np.zeros((input_shape[1], n) + tuple(input_shape[2:]), wide).swapaxes(0, 1)
        _add_columns(cols.astype(wide, copy=False), out, kernel, out_size, stride, pads,
                     dilation, True)
        return narrow(out, dtype)
    out = np.zeros(tuple(input_shape), wide)
    gm = np.ascontiguousarray(grad).reshape(n, groups, o // groups, positions)
    for chunk in _chunks(n, groups * size * positions * dtype.itemsize):
        # (g, K, O/g) @ (n, g, O/g, P): the gradient of the im2col matrix, then col2im.
        cols = np.matmul(wm, gm[chunk])
        _add_columns(cols.astype(out.dtype, copy=False), out[chunk], kernel, out_size, stride,
                     pads, dilation, False)
    return narrow(out, dtype)


def _correlate_weight_grad(x, grad, weight_shape, stride, pads, dilation, groups):
    """The gradient of ``_correlate`` with respect to ``w``."""
    n, o = grad.shape[:2]
    kernel, out_size = weight_shape[2:], grad.shape[2:]
    size, positions = math.prod(weight_shape[1:]), math.prod(out_size)
    dtype = np.result_type(x.dtype, grad.dtype)
    # The sum over the samples accumulates in float32 for float16 (as PyTorch).
    wide = accumulation_dtype(dtype)
    if _batch_layout(positions):
        # (g, O/g, N*P) @ (g, N*P, K): the sum over the samples is in the product
        cols = _columns(x, kernel, out_size, stride, pads, dilation, True)
        total = np.matmul(_channels_first(grad, groups).astype(wide, copy=False),
                          cols.reshape(groups, size, n * positions).astype(wide, copy=False)
                          .transpose(0, 2, 1))
        return narrow(total.reshape(weight_shape), dtype)
    gm = np.ascontiguousarray(grad).reshape(n, groups, o // groups, positions)
    total = np.zeros((groups, o // groups, size), wide)
    for chunk in _chunks(n, groups * size * positions * dtype.itemsize):
        cols = _columns(x[chunk], kernel, out_size, stride, pads, dilation, False)
        # Per sample and group (O/g, P) @ (P, K), summed over the samples.
        total += np.add.reduce(np.matmul(gm[chunk], cols.reshape(-1, groups, size, positions)
                                         .transpose(0, 1, 3, 2)), axis=0, dtype=total.dtype)
    return narrow(total.reshape(weight_shape), dtype)


# -- convolution -----------------------------------------------------------------------

def _check_conv_dims(nd, opname, input, weight):
    if np.ndim(weight) != nd + 2:
        kernel = {1: "kL", 2: "kH, kW", 3: "kT, kH, kW"}[nd]
        raise OpError(f"{opname}(): expected a {nd + 2}-D weight (out_channels, in_channels / "
                      f"groups, {kernel}), got weight of shape {np.shape(weight)}")
    if np.ndim(input) not in (nd + 1, nd + 2):
        raise OpError(f"{opname}(): expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) "
                      f"input, got input of shape {np.shape(input)} (weight shape "
                      f"{np.shape(weight)})")


def _conv_forward(nd, opname, input, weight, bias, stride, padding, dilation, groups):
    _check_conv_dims(nd, opname, input, weight)
    unbatched = input.ndim == nd + 1
    x = input[None] if unbatched else input
    stride, pads, dilation, out_size = _conv_geometry(
        opname, x.shape, weight.shape, None if bias is None else np.shape(bias), stride, padding,
        dilation, groups, input.shape)
    out = _correlate(x, weight, stride, pads, dilation, groups, out_size)
    if bias is not None:
        out += bias.reshape(bias.shape + (1,) * nd)
    return out[0] if unbatched else out


def _conv_vjp(nd, opname, ctx, grad, input, weight, bias, stride, padding, dilation, groups):
    needs = ctx.needs_input_grad
    # Inputs given as arrays or lists reach the VJP as they were given.
    input, weight = as_tensor(input), as_tensor(weight)
    unbatched = input.ndim == nd + 1
    if unbatched:
        input, grad = input.unsqueeze(0), grad.unsqueeze(0)
    stride, pads, dilation, _ = _conv_geometry(opname, input.shape, weight.shape, None, stride,
                                               padding, dilation, groups)
    grad_input = grad_weight = grad_bias = None
    if needs[0]:
        grad_input = conv_input_grad(grad, weight, input.shape, stride, pads, dilation, groups)
        if unbatched:
            grad_input = grad_input.squeeze(0)
    if needs[1]:
        grad_weight = conv_weight_grad(input, grad, weight.shape, stride, pads, dilation, groups)
    if needs[2]:
        # NumPy reduces over the samples fastest when they are the outer dim in
        # memory, as one pass of whole-row adds (a (128, 32, 4, 4) gradient: 17
        # against 130 us for one reduction over dims (0, 2, 3)); a channel-first
        # gradient is fastest in one reduction.
        spatial = tuple(range(2, nd + 2))
        if abs(grad.stride(0)) >= abs(grad.stride(1)):
            grad_bias = grad.sum(dim=0).sum(dim=tuple(d - 1 for d in spatial))
        else:
            grad_bias = grad.sum(dim=(0,) + spatial)
    return grad_input, grad_weight, grad_bias


@op(inputs=3, save=("input", "weight"), promote=True, float_only=True)
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation, as in PyTorch) over ``(N, C, L)`` or ``(C, L)`` input.

    ``weight`` is ``(out_channels, in_channels / groups, kL)``, ``bias``
    ``(out_channels,)`` or None. ``stride``, ``padding`` and ``dilation`` are
    ints or 1-tuples; ``padding`` may also be ``'valid'``, ``'same'`` (stride 1
    only; an uneven total puts the extra element after the input, as PyTorch
    does) or a pair ``((before, after),)``. Inputs of different floating dtypes
    are promoted (PyTorch raises), integer ones become the default float dtype.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    >>> F.conv1d(x, oxmera.tensor([[[1.0, -1.0]]]))
    tensor([[[-1., -1., -1.]]], dtype=float32)
    >>> F.conv1d(x, oxmera.ones(2, 1, 3), oxmera.tensor([0.0, 10.0]), padding=1).shape
    oxmera.Size([1, 2, 4])
    """
    return _conv_forward(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


@conv1d.vjp
def _(ctx, grad, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_vjp(1, "conv1d", ctx, grad, input, weight, bias, stride, padding, dilation,
                     groups)


@op(inputs=3, save=("input", "weight"), promote=True, float_only=True)
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation, as in PyTorch) over ``(N, C, H, W)`` or ``(C, H, W)``.

    ``weight`` is ``(out_channels, in_channels / groups, kH, kW)``, ``bias``
    ``(out_channels,)`` or None. ``stride``, ``padding`` and ``dilation`` are
    ints or pairs; ``padding`` may also be ``'valid'``, ``'same'`` (stride 1
    only; an uneven total puts the extra row/column after the input, as
    PyTorch does) or explicit ``((top, bottom), (left, right))``. Computed as
    an im2col matrix (one strided copy of the padded input) times the weight,
    one batched matmul over samples and groups. Inputs of different floating
    dtypes are promoted (PyTorch raises); float32 stays float32.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.arange(16.0).reshape(1, 1, 4, 4)
    >>> w = oxmera.ones(1, 1, 2, 2)
    >>> F.conv2d(x, w, stride=2)
    tensor([[[[10., 18.],
              [42., 50.]]]], dtype=float32)
    >>> F.conv2d(oxmera.ones(3, 8, 8), oxmera.ones(6, 1, 3, 3), padding="same", groups=3).shape
    oxmera.Size([6, 8, 8])
    """
    return _conv_forward(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


@conv2d.vjp
def _(ctx, grad, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_vjp(2, "conv2d", ctx, grad, input, weight, bias, stride, padding, dilation,
                     groups)


@op(inputs=3, save=("input", "weight"), promote=True, float_only=True)
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation, as in PyTorch) over ``(N, C, D, H, W)`` or unbatched.

    ``weight`` is ``(out_channels, in_channels / groups, kT, kH, kW)``,
    ``bias`` ``(out_channels,)`` or None. ``stride``, ``padding`` and
    ``dilation`` are ints or triples; ``padding`` may also be ``'valid'`` or
    ``'same'`` (stride 1 only; an uneven total puts the extra element after
    the input, as PyTorch does). The same im2col code as ``conv2d``, over
    three spatial dims.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.ones(1, 2, 3, 4, 4)
    >>> F.conv3d(x, oxmera.ones(1, 2, 2, 2, 2))[0, 0, 0]
    tensor([[16., 16., 16.],
            [16., 16., 16.],
            [16., 16., 16.]], dtype=float32)
    >>> F.conv3d(x, oxmera.ones(4, 1, 3, 3, 3), stride=(1, 2, 2), padding=1, groups=2).shape
    oxmera.Size([1, 4, 3, 2, 2])
    """
    return _conv_forward(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


@conv3d.vjp
def _(ctx, grad, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_vjp(3, "conv3d", ctx, grad, input, weight, bias, stride, padding, dilation,
                     groups)


_CONVOLUTIONS = {1: conv1d, 2: conv2d, 3: conv3d}


def _grad_op_geometry(opname, input_shape, weight_shape, stride, padding, dilation, groups):
    nd = len(weight_shape) - 2
    if nd not in (1, 2, 3) or len(input_shape) != nd + 2:
        raise OpError(f"{opname}(): expected a batched input shape and a weight of 1 to 3 "
                      f"spatial dims with as many, got input shape {tuple(input_shape)} and "
                      f"weight shape {tuple(weight_shape)}")
    return nd, _conv_geometry(opname, input_shape, weight_shape, None, stride, padding, dilation,
                              groups)


def _check_grad_shape(opname, grad, expected, input_shape, weight_shape):
    if tuple(grad.shape) != expected:
        raise OpError(f"{opname}(): expected grad of shape {expected} for input shape "
                      f"{tuple(input_shape)} and weight shape {tuple(weight_shape)}, got grad "
                      f"of shape {tuple(grad.shape)}")


@op(inputs=2, promote=True, float_only=True)
def conv_input_grad(grad, weight, input_shape, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d``/``2d``/``3d`` with respect to the input: a transposed convolution.

    ``grad`` is the gradient of the convolution's output ``(N, O, *out)``,
    ``input_shape`` the batched input's shape; the other arguments are the
    convolution's (1-D to 3-D, from the weight's dimensions). Its VJP is the
    convolution (with respect to ``grad``) and :func:`conv_weight_grad`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.conv import conv_input_grad
    >>> conv_input_grad(oxmera.ones(1, 1, 2), oxmera.ones(1, 1, 2), (1, 1, 3))
    tensor([[[1., 2., 1.]]], dtype=float32)
    """
    input_shape = tuple(input_shape)
    nd, (stride, pads, dilation, out_size) = _grad_op_geometry(
        "conv_input_grad", input_shape, np.shape(weight), stride, padding, dilation, groups)
    _check_grad_shape("conv_input_grad", grad, input_shape[:1] + weight.shape[:1] + out_size,
                      input_shape, weight.shape)
    out = _correlate_input_grad(grad, weight, input_shape, stride, pads, dilation, groups)
    return out.reshape(input_shape)


@conv_input_grad.vjp
def _(ctx, grad_of_input, grad, weight, input_shape, stride=1, padding=0, dilation=1, groups=1):
    # conv_input_grad(g, w) is the adjoint of x -> conv(x, w): <conv(x, w), g>
    # = <x, conv_input_grad(g, w)>; so for a cotangent X of the result,
    # d/dg = conv(X, w) and d/dw = conv_weight_grad(X, g).
    needs = ctx.needs_input_grad
    grad, weight = as_tensor(grad), as_tensor(weight)
    convolution = _CONVOLUTIONS[weight.ndim - 2]
    return (convolution(grad_of_input, weight, None, stride, padding, dilation, groups)
            if needs[0] else None,
            conv_weight_grad(grad_of_input, grad, weight.shape, stride, padding, dilation, groups)
            if needs[1] else None)


@op(inputs=2, promote=True, float_only=True)
def conv_weight_grad(input, grad, weight_shape, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of ``conv1d``/``2d``/``3d`` with respect to the weight.

    ``input`` is the batched input ``(N, C, *spatial)``, ``grad`` the gradient
    of the convolution's output; the other arguments are the convolution's.
    Its VJP is the convolution (with respect to ``grad``) and
    :func:`conv_input_grad` (with respect to ``input``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.conv import conv_weight_grad
    >>> conv_weight_grad(oxmera.tensor([[[1.0, 2.0, 3.0]]]), oxmera.ones(1, 1, 2), (1, 1, 2))
    tensor([[[3., 5.]]], dtype=float32)
    """
    weight_shape = tuple(weight_shape)
    nd = len(weight_shape) - 2
    if np.ndim(input) != nd + 2:
        raise OpError(f"conv_weight_grad(): expected a batched {nd + 2}-D input for weight shape "
                      f"{weight_shape}, got input of shape {np.shape(input)}")
    nd, (stride, pads, dilation, out_size) = _grad_op_geometry(
        "conv_weight_grad", input.shape, weight_shape, stride, padding, dilation, groups)
    _check_grad_shape("conv_weight_grad", grad, input.shape[:1] + weight_shape[:1] + out_size,
                      input.shape, weight_shape)
    out = _correlate_weight_grad(input, grad, weight_shape, stride, pads, dilation, groups)
    return out.reshape(weight_shape)


@conv_weight_grad.vjp
def _(ctx, grad_of_weight, input, grad, weight_shape, stride=1, padding=0, dilation=1, groups=1):
    # <conv(x, w), g> = <w, conv_weight_grad(x, g)>; for a cotangent W of the
    # result, d/dx = conv_input_grad(g, W) and d/dg = conv(x, W).
    needs = ctx.needs_input_grad
    input, grad = as_tensor(input), as_tensor(grad)
    convolution = _CONVOLUTIONS[len(weight_shape) - 2]
    return (conv_input_grad(grad, grad_of_weight, input.shape, stride, padding, dilation, groups)
            if needs[0] else None,
            convolution(input, grad_of_weight, None, stride, padding, dilation, groups)
            if needs[1] else None)


# -- pooling ---------------------------------------------------------------------------

def _pool_geometry(opname, input_shape, kernel_size, stride, padding, dilation, ceil_mode):
    """Check a pooling's arguments.

    Returns ``(kernel, stride, dilation, output size, pads)``, where ``pads``
    are the ``(before, after)`` pairs that make every window (also a
    ``ceil_mode`` window reaching past the padding) lie inside the padded input.
    """
    input_shape = tuple(input_shape)
    if len(input_shape) not in (3, 4):
        raise OpError(f"{opname}(): expected a 3-D (unbatched) or 4-D (batched) input, got "
                      f"input of shape {input_shape}")
    kernel = _ntuple(kernel_size, 2, "kernel_size", opname, 1)
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        stride = kernel
    stride = _ntuple(stride, 2, "stride", opname, 1)
    padding = _ntuple(padding, 2, "padding", opname, 0)
    dilation = _ntuple(dilation, 2, "dilation", opname, 1)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise OpError(f"{opname}(): padding should be at most half of the kernel size, but got "
                      f"padding={padding} and kernel_size={kernel} (input shape {input_shape})")
    out_size, pads = [], []
    for n, k, s, p, d in zip(input_shape[-2:], kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        size = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (size - 1) * s >= n + p:
            size -= 1       # PyTorch: the last window must start inside the input or padding
        out_size.append(size)
        pads.append((p, p + max(0, (size - 1) * s + d * (k - 1) + 1 - (n + 2 * p))))
    if any(size < 1 for size in out_size):
        raise OpError(f"{opname}(): given input of shape {input_shape}, the calculated output size "
                      f"{tuple(out_size)} is too small (kernel_size={kernel}, stride={stride}, "
                      f"padding={padding}, dilation={dilation})")
    for axis, (n, k, s, p, d, size) in enumerate(zip(input_shape[-2:], kernel, stride, padding,
                                                     dilation, out_size)):
        # A dilated window can step over the whole input: its maximum would
        # be the padding's -inf, from no input element (PyTorch returns an
        # index outside the input there). Refused rather than made up.
        taps = np.arange(size)[:, None] * s - p + np.arange(k) * d
        empty = ~((taps >= 0) & (taps < n)).any(axis=1)
        if empty.any():
            where = f"{'row' if axis == 0 else 'column'} {int(np.argmax(empty))}"
            raise OpError(f"{opname}(): with kernel_size={kernel}, dilation={dilation} and "
                          f"padding={padding}, the window of output {where} holds no element "
                          f"of the input (input shape {input_shape})")
    return kernel, stride, dilation, tuple(out_size), tuple(pads)


def _max_pool2d_forward(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    kernel, stride, dilation, out_size, pads = _pool_geometry(
        "max_pool2d", input.shape, kernel_size, stride, padding, dilation, ceil_mode)
    if input.dtype in (np.float32, np.float64):
        # One compiled pass (_conv_kernels.h), by the same rules as the NumPy
        # passes below: 5-10x faster than them on a CNN's planes. It walks the
        # planes in memory order and writes them so (see _sample_major).
        batched = input if input.ndim == 4 else input[None]
        swap = not _sample_major(batched)
        values, indices = _kernels.max_pool2d(batched.swapaxes(0, 1) if swap else batched,
                                              kernel, out_size, stride,
                                              tuple(lo for lo, _ in pads), dilation)
        if swap:
            values, indices = values.swapaxes(0, 1), indices.swapaxes(0, 1)
        return (values, indices) if input.ndim == 4 else (values[0], indices[0])
    height, width = input.shape[-2:]
    windows = _windows(_pad(input, pads, -np.inf), kernel, stride, dilation, out_size)
    positions = [(i, j) for i in range(kernel[0]) for j in range(kernel[1])]
    values = windows[..., 0, 0, :, :].copy()
    for i, j in positions[1:]:
        np.maximum(values, windows[..., i, j, :, :], out=values)
    # Which window position holds each maximum: the first one (PyTorch's
    # rule), found by going through the positions last to first, each
    # overwriting the last. Padding never wins: where a window's maximum is
    # -inf, the first position inside the input does.
    padded = any(lo or hi for lo, hi in pads)
    rows = np.arange(out_size[0])[:, None] * stride[0] - pads[0][0]
    cols = np.arange(out_size[1]) * stride[1] - pads[1][0]
    position_type = np.min_scalar_type(len(positions))
    found = np.zeros(values.shape, position_type)
    hit = np.empty(values.shape, np.bool_)
    step = np.empty(values.shape, position_type)
    for k in range(len(positions) - 1, -1, -1):
        i, j = positions[k]
        np.equal(windows[..., i, j, :, :], values, out=hit)
        if padded:
            r, c = rows + i * dilation[0], cols + j * dilation[1]
            np.logical_and(hit, (r >= 0) & (r < height) & (c >= 0) & (c < width), out=hit)
        # found = k where hit: found + hit * (k - found) in unsigned arithmetic
        # (which wraps), into reused buffers; 5-10x faster than a masked copy.
        np.subtract(position_type.type(k), found, out=step)
        np.multiply(step, hit, out=step)
        np.add(found, step, out=found)
    nan = np.isnan(values)
    if nan.any():
        # PyTorch's kernel takes every NaN it meets, so the last one wins.
        for k, (i, j) in enumerate(positions):
            np.copyto(found, k, where=nan & np.isnan(windows[..., i, j, :, :]))
    # Flat indices into each (H, W) plane of the input, as PyTorch returns them.
    offsets = np.array([i * dilation[0] * width + j * dilation[1] for i, j in positions],
                       np.int64)
    indices = offsets[found]
    indices += rows * width + cols
    return values, indices


_max_pool2d_forward.__doc__ = """The op behind :func:`max_pool2d`: always ``(values, indices)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.conv import _max_pool2d_op
    >>> _max_pool2d_op(oxmera.tensor([[[1.0, 3.0], [2.0, 0.0]]]), 2).indices
    tensor([[[1]]], dtype=int64)
    """

_max_pool2d_op = op("max_pool2d", save=(), save_output=True, float_only=True,
                    outputs=("values", "indices"))(_max_pool2d_forward)


@_max_pool2d_op.vjp
def _(ctx, grads, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return max_pool2d_backward(grads[0], ctx.output[1], ctx.input_shape(0))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    ``stride`` defaults to ``kernel_size``; padding (at most half the kernel)
    never wins a window. With ``return_indices`` also returns each maximum's
    flat index into its ``(H, W)`` plane, as PyTorch does. The gradient goes
    to one element per window: the first maximum in window order (PyTorch's
    tie rule; not split between ties as ``max``/``amax`` do); for a window
    holding NaN, the NaN (the last one, as PyTorch). A dilated window that
    would hold padding only is an error (PyTorch returns -inf with an index
    outside the input).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[[1.0, 2.0, 5.0, 6.0], [3.0, 4.0, 7.0, 8.0]]]])
    >>> F.max_pool2d(x, 2)
    tensor([[[[4., 8.]]]], dtype=float32)
    >>> F.max_pool2d(x, 2, return_indices=True)[1]
    tensor([[[[5, 7]]]], dtype=int64)
    """
    result = _max_pool2d_op(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (result.values, result.indices) if return_indices else result.values


def _plane_shapes(opname, grad_shape, indices_shape, input_shape):
    input_shape = tuple(input_shape)
    if (len(input_shape) not in (3, 4) or tuple(grad_shape) != tuple(indices_shape)
            or tuple(grad_shape[:-2]) != input_shape[:-2] or len(grad_shape) != len(input_shape)):
        raise OpError(f"{opname}(): expected values and indices of one shape (..., Ho, Wo) "
                      f"matching input shape {input_shape} up to the last two dims, got "
                      f"{tuple(grad_shape)} and {tuple(indices_shape)}")
    return math.prod(input_shape[:-2]), input_shape[-2] * input_shape[-1]


def _check_indices(opname, indices, plane_size, input_shape):
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{opname}(): indices must be integers, got {indices.dtype}")
    if indices.size and (indices.min() < 0 or indices.max() >= plane_size):
        raise OpError(f"{opname}(): indices must lie in [0, {plane_size}) (flat, per (H, W) "
                      f"plane of input shape {tuple(input_shape)}), got values in "
                      f"[{indices.min()}, {indices.max()}]")


@op(inputs=2, save=("indices",))
def max_pool2d_backward(grad, indices, input_shape):
    """The gradient of ``max_pool2d``: ``grad`` summed into zeros of ``input_shape`` at ``indices``.

    ``indices`` are flat indices into the ``(H, W)`` planes, as ``max_pool2d``
    returns them; where windows overlap, an element gathers the gradients of
    every window it is the maximum of. Its VJP is :func:`max_pool2d_gather`.

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> from oxmera.ops.conv import max_pool2d_backward
    >>> max_pool2d_backward(oxmera.ones(1, 1, 2), np.array([[[1, 1]]]), (1, 1, 3))
    tensor([[[0., 2., 0.]]], dtype=float32)
    """
    planes, plane_size = _plane_shapes("max_pool2d_backward", grad.shape, indices.shape,
                                       input_shape)
    if grad.dtype.kind != "f":
        raise TypeError(f"max_pool2d_backward(): grad must be floating, got {grad.dtype}")
    _check_indices("max_pool2d_backward", indices, plane_size, input_shape)
    if grad.dtype in (np.float32, np.float64):
        # A compiled loop (_conv_kernels.h): np.add.at costs ~10x more. Indices
        # laid out channel-first (as max_pool2d leaves them for a convolution's
        # output) give a gradient laid out so, without a copy of either.
        if len(input_shape) == 4 and not _sample_major(indices):
            return _kernels.plane_scatter(
                grad.swapaxes(0, 1), indices.swapaxes(0, 1), planes, plane_size).reshape(
                    (input_shape[1], input_shape[0]) + input_shape[2:]).swapaxes(0, 1)
        return _kernels.plane_scatter(grad, indices, planes, plane_size).reshape(input_shape)
    outputs = math.prod(grad.shape[-2:])
    flat = indices.reshape(planes, outputs) + np.arange(planes)[:, None] * plane_size
    # Repeated indices (overlapping windows) accumulate: np.add.at (in NumPy 2
    # as fast as a bincount, and it keeps the dtype).
    total = np.zeros(planes * plane_size, grad.dtype)
    np.add.at(total, flat.ravel(), grad.reshape(planes * outputs))
    return total.reshape(input_shape)


@max_pool2d_backward.vjp
def _(ctx, grad_of_input, grad, indices, input_shape):
    return max_pool2d_gather(grad_of_input, indices), None


@op(inputs=2, save=("indices",))
def max_pool2d_gather(input, indices):
    """Pick ``input``'s elements at ``max_pool2d``'s ``indices`` (flat, per ``(H, W)`` plane).

    The adjoint of :func:`max_pool2d_backward` (and its VJP); its own VJP is
    ``max_pool2d_backward``.

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> from oxmera.ops.conv import max_pool2d_gather
    >>> max_pool2d_gather(oxmera.tensor([[[5.0, 6.0, 7.0]]]), np.array([[[2, 0]]]))
    tensor([[[7., 5.]]], dtype=float32)
    """
    if input.ndim not in (3, 4) or indices.shape[:-2] != input.shape[:-2]:
        raise OpError(f"max_pool2d_gather(): expected indices of shape (..., Ho, Wo) matching "
                      f"input shape {input.shape} up to the last two dims, got "
                      f"{indices.shape}")
    planes, plane_size = math.prod(input.shape[:-2]), input.shape[-2] * input.shape[-1]
    _check_indices("max_pool2d_gather", indices, plane_size, input.shape)
    picked = np.take_along_axis(input.reshape(planes, plane_size),
                                indices.reshape(planes, math.prod(indices.shape[-2:])), axis=1)
    return picked.reshape(indices.shape)


@max_pool2d_gather.vjp
def _(ctx, grad, input, indices):
    return max_pool2d_backward(grad, indices, ctx.input_shape(0)), None


def _avg_divisor(input_shape, kernel, stride, padding, out_size, count_include_pad,
                 divisor_override, dtype):
    """What each window's sum is divided by (PyTorch's rule), broadcastable to (Ho, Wo)."""
    if divisor_override is not None:
        return np.asarray(divisor_override, dtype)
    factors = []
    for n, k, s, p, size in zip(input_shape[-2:], kernel, stride, padding, out_size):
        start = np.arange(size) * s - p
        end = np.minimum(start + k, n + p)      # a window may reach into the padding only
        inside = np.minimum(end, n) - np.maximum(start, 0)
        factors.append(end - start if count_include_pad else inside)
    divisor = np.multiply.outer(*factors)
    # A window entirely in the padding (possible with ceil_mode) sums to 0
    # and gives 0, as in PyTorch, instead of 0 / 0.
    return np.where(divisor > 0, divisor, 1).astype(dtype)


def _avg_pool_geometry(opname, input_shape, kernel_size, stride, padding, ceil_mode,
                       divisor_override):
    kernel, stride, dilation, out_size, pads = _pool_geometry(
        opname, input_shape, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None:
        if not _is_int(divisor_override):
            raise TypeError(f"{opname}(): divisor_override must be an int or None, got "
                            f"{divisor_override!r}")
        if divisor_override == 0:
            raise OpError(f"{opname}(): divisor_override must not be zero")
    padding = tuple(lo for lo, _ in pads)
    return kernel, stride, dilation, out_size, pads, padding


@op(save=(), float_only=True)
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    ``stride`` defaults to ``kernel_size``. Each window's sum is divided by
    ``divisor_override`` if given, else by the window's size counting the
    zero padding (``count_include_pad``) or only the input elements in it;
    with ``ceil_mode`` a last window reaching past the padding counts only
    what it covers, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[[1.0, 2.0, 5.0, 6.0], [3.0, 4.0, 7.0, 8.0]]]])
    >>> F.avg_pool2d(x, 2)
    tensor([[[[2.5, 6.5]]]], dtype=float32)
    >>> F.avg_pool2d(x, 2, padding=1, count_include_pad=False)[0, 0, 0]
    tensor([1. , 3.5, 6. ], dtype=float32)
    """
    kernel, stride, dilation, out_size, pads, padding = _avg_pool_geometry(
        "avg_pool2d", input.shape, kernel_size, stride, padding, ceil_mode, divisor_override)
    windows = _windows(_pad(input, pads, 0), kernel, stride, dilation, out_size)
    # A sum of KH*KW strided slices: 10-20x faster than windows.sum(axis=(-4, -3)).
    # float16 sums in float32 (as PyTorch), rounded once at the end.
    total = windows[..., 0, 0, :, :].astype(accumulation_dtype(input.dtype))
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            if i or j:
                total += windows[..., i, j, :, :]
    total /= _avg_divisor(input.shape, kernel, stride, padding, out_size, count_include_pad,
                          divisor_override, total.dtype)
    return narrow(total, input.dtype)


@avg_pool2d.vjp
def _(ctx, grad, input, kernel_size, stride=None, padding=0, ceil_mode=False,
      count_include_pad=True, divisor_override=None):
    return avg_pool2d_backward(grad, ctx.input_shape(0), kernel_size, stride, padding, ceil_mode,
                               count_include_pad, divisor_override)


@op(save=(), float_only=True)
def avg_pool2d_backward(grad, input_shape, kernel_size, stride=None, padding=0, ceil_mode=False,
                        count_include_pad=True, divisor_override=None):
    """The gradient of ``avg_pool2d``: each output's gradient / divisor, spread over its window.

    Linear in ``grad``; the adjoint of ``avg_pool2d`` with the same
    arguments, which is also its VJP.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.conv import avg_pool2d_backward
    >>> avg_pool2d_backward(oxmera.ones(1, 1, 1), (1, 2, 2), 2)
    tensor([[[0.25, 0.25],
             [0.25, 0.25]]], dtype=float32)
    """
    input_shape = tuple(input_shape)
    kernel, stride, dilation, out_size, pads, padding = _avg_pool_geometry(
        "avg_pool2d_backward", input_shape, kernel_size, stride, padding, ceil_mode,
        divisor_override)
    expected = input_shape[:-2] + out_size
    if tuple(grad.shape) != expected:
        raise OpError(f"avg_pool2d_backward(): expected grad of shape {expected} for input shape "
                      f"{input_shape}, got grad of shape {tuple(grad.shape)}")
    scaled = grad / _avg_divisor(input_shape, kernel, stride, padding, out_size,
                                 count_include_pad, divisor_override, grad.dtype)
    (top, bottom), (left, right) = pads
    height, width = input_shape[-2:]
    out = np.zeros(input_shape[:-2] + (height + top + bottom, width + left + right), grad.dtype)
    _add_windows(out, lambda i, j: scaled, kernel, stride, dilation, out_size)
    if top or bottom or left or right:
        out = np.ascontiguousarray(out[..., top:top + height, left:left + width])
    return out


@avg_pool2d_backward.vjp
def _(ctx, grad, grad_output, input_shape, kernel_size, stride=None, padding=0, ceil_mode=False,
      count_include_pad=True, divisor_override=None):
    return avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, count_include_pad,
                      divisor_override)
