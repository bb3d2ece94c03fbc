"""Pooling beyond ``conv.py``'s ``max_pool2d``/``avg_pool2d``: 1-D and 3-D, adaptive, unpooling, Lp.

Everything public here is a name of ``oxmera.nn.functional``, as in PyTorch.
The ops of this module:

- ``max_pool1d`` and ``max_pool3d``, ``adaptive_max_pool1d``/``2d``/``3d``
  and ``fractional_max_pool2d``/``3d`` return ``(values, indices)``. The
  fixed-window forward reduces a NumPy window view one window position at a
  time, as ``conv.max_pool2d`` does, in any number of spatial dims; the
  adaptive and fractional ones gather each window position's elements by
  index (their windows are not evenly spaced). The indices are flat within
  each spatial volume (PyTorch's); the gradient goes to the first maximum of
  a window in window order (PyTorch's tie rule), or to its last NaN.
- ``max_unpool`` puts values at such indices into zeros.

Their VJPs are written with ``conv.max_pool2d_backward`` (a scatter-add by
flat indices) and ``conv.max_pool2d_gather`` (its adjoint), applied to the
spatial volume flattened to a ``(1, volume)`` plane: an index flat in a volume
is one in that plane, so those ops (and their own VJPs) serve every
dimension, to any order.

Composed from ops (no VJP of their own):

- ``avg_pool1d`` is ``conv.avg_pool2d`` on a height-1 view; ``avg_pool3d``
  is ``avg_pool2d`` over (H, W) then over D. A box average is separable:
  PyTorch's divisor (with ``count_include_pad``, ``ceil_mode``) is the
  product of a factor per dim, and with ``divisor_override`` the first pass
  sums (divisor 1) and the second divides.
- ``adaptive_avg_pool1d``/``2d``/``3d``: one dim at a time, a reshape and a
  mean where the output size divides the input size, a matmul with the
  averaging matrix otherwise.
- ``lp_pool1d``/``2d``/``3d`` exactly as PyTorch composes them from
  ``avg_pool`` (and ``max_pool`` for an infinite norm).

Arguments are checked here, naming the function, before any op runs, so a
composed function never fails inside the op it calls. Integer inputs of the
fixed-window pools become the default float dtype, as for ``max_pool2d``
(PyTorch keeps them, or refuses); the adaptive ones refuse them
(NotImplementedError, as PyTorch).
"""
import functools
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops.conv import (_is_int, _ntuple, avg_pool2d, max_pool2d, max_pool2d_backward,
                             max_pool2d_gather)
from oxmera.ops.creation import as_tensor
from oxmera.ops.elementwise import relu
from oxmera.random import numpy_generator

__all__ = ["max_pool1d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d",
           "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices"]

OpError = _core.OpError
Tensor = _core.Tensor


# -- arguments ------------------------------------------------------------------------------

def _check_input_shape(opname, nd, shape):
    """An ``(N, C, *spatial)`` or ``(C, *spatial)`` shape, every dim but the batch non-empty."""
    shape = tuple(shape)
    if len(shape) not in (nd + 1, nd + 2):
        raise OpError(f"{opname}(): expected a {nd + 1}-D or {nd + 2}-D input (unbatched or "
                      f"batched), got input of shape {shape}")
    if 0 in shape[len(shape) - nd - 1:]:
        raise OpError(f"{opname}(): expected the input's non-batch dims to be non-empty, got "
                      f"input of shape {shape}")
    return shape


def _pool_geometry(opname, nd, input_shape, kernel_size, stride, padding, dilation, ceil_mode):
    """Check a fixed-window pooling's arguments (PyTorch's rules, in ``nd`` dims).

    Returns ``(kernel, stride, padding, dilation, output size, pads)``, where
    ``pads`` are ``(before, after)`` pairs that make every window (also a
    ``ceil_mode`` window reaching past the padding) lie inside the padded input.
    """
    input_shape = _check_input_shape(opname, nd, input_shape)
    kernel = _ntuple(kernel_size, nd, "kernel_size", opname, 1)
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        stride = kernel
    stride = _ntuple(stride, nd, "stride", opname, 1)
    padding = _ntuple(padding, nd, "padding", opname, 0)
    dilation = _ntuple(dilation, nd, "dilation", opname, 1)
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise OpError(f"{opname}(): padding should be at most half of the kernel size, but got "
                      f"padding={padding} and kernel_size={kernel} (input shape {input_shape})")
    out_size, pads = [], []
    for n, k, s, p, d in zip(input_shape[-nd:], kernel, stride, padding, dilation):
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
    for axis, (n, k, s, p, d, size) in enumerate(zip(input_shape[-nd:], kernel, stride, padding,
                                                     dilation, out_size)):
        # A dilated window can step over the whole input: its maximum would be
        # the padding's -inf, from no input element (PyTorch returns an index
        # outside the input). Refused rather than made up, as by max_pool2d.
        taps = np.arange(size)[:, None] * s - p + np.arange(k) * d
        empty = ~((taps >= 0) & (taps < n)).any(axis=1)
        if empty.any():
            raise OpError(f"{opname}(): with kernel_size={kernel}, dilation={dilation} and "
                          f"padding={padding}, the window of output {int(np.argmax(empty))} "
                          f"along spatial dim {axis} holds no element of the input (input shape "
                          f"{input_shape})")
    return kernel, stride, padding, dilation, tuple(out_size), tuple(pads)


def _adaptive_sizes(opname, nd, input_shape, output_size):
    """``output_size`` (an int, or ``nd`` ints or Nones keeping the input's size) as ``nd`` ints."""
    input_shape = _check_input_shape(opname, nd, input_shape)
    if _is_int(output_size):
        sizes = (int(output_size),) * nd
    elif (isinstance(output_size, (tuple, list)) and len(output_size) == nd
          and all(s is None or _is_int(s) for s in output_size)):
        sizes = tuple(n if s is None else int(s) for s, n in zip(output_size, input_shape[-nd:]))
    else:
        raise OpError(f"{opname}(): output_size must be an int or {nd} ints (None keeps the "
                      f"input's size), got {output_size!r}")
    if any(s < 0 for s in sizes):
        raise OpError(f"{opname}(): output_size must be non-negative, got {output_size!r}")
    return sizes


def _adaptive_windows(in_size, out_size):
    """PyTorch's adaptive windows of one dim: ``(starts, ends)``, window ``i`` from
    ``floor(i * in / out)`` up to ``ceil((i + 1) * in / out)``."""
    i = np.arange(out_size)
    return (i * in_size) // out_size, -((-(i + 1) * in_size) // out_size)


def _check_float(opname, input):
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{opname}(): not implemented for dtype {input.dtype} (input "
                                  f"shape {tuple(input.shape)}): expected a floating point input")


# -- the max-pooling kernel -------------------------------------------------------------------

def _volume_strides(spatial):
    """How far apart (in flat elements of one spatial volume) neighbours along each dim are."""
    return [math.prod(spatial[d + 1:]) for d in range(len(spatial))]


def _outer(vectors):
    """``nd`` vectors reshaped to broadcast against each other along ``nd`` dims (``np.ix_``,
    which would turn boolean vectors into indices)."""
    return [np.asarray(v).reshape((-1,) + (1,) * (len(vectors) - d - 1))
            for d, v in enumerate(vectors)]


def _outer_sum(vectors):
    """``vectors[0][:, None, ...] + vectors[1][None, :, ...] + ...``: an array of ``nd`` dims."""
    return sum(_outer(vectors))


def _first_maximum(tap, count):
    """Each window's maximum and the flat input index of the first window position holding it.

    ``tap(k)`` returns window position ``k``'s values ``(..., *out)``, their
    flat indices into the input's spatial volume (broadcastable to them) and
    where they lie inside the input (a mask, or None for everywhere), in
    window order. Padding never wins: where a window's maximum is -inf, the
    first position inside the input does. A window holding NaN gives NaN
    and the index of its last NaN, as PyTorch's kernel (it takes every NaN it
    meets).
    """
    values = np.array(tap(0)[0], copy=True)
    for k in range(1, count):
        np.maximum(values, tap(k)[0], out=values)
    indices = np.zeros(values.shape, np.int64)
    hit = np.empty(values.shape, np.bool_)
    # Last to first, each hit overwriting: the first position holding the maximum wins.
    for k in range(count - 1, -1, -1):
        taken, flat, inside = tap(k)
        np.equal(taken, values, out=hit)
        if inside is not None:
            np.logical_and(hit, inside, out=hit)
        np.copyto(indices, flat, where=hit)
    nan = np.isnan(values)
    if nan.any():
        for k in range(count):
            taken, flat, _ = tap(k)
            np.copyto(indices, flat, where=nan & np.isnan(taken))
    return values, indices


def _pad(x, nd, pads, value):
    """``x`` padded by ``(before, after)`` pairs on its last ``nd`` dims: a new array, or ``x``."""
    if not any(lo or hi for lo, hi in pads):
        return x
    spatial = x.shape[-nd:]
    out = np.full(x.shape[:-nd] + tuple(n + lo + hi for n, (lo, hi) in zip(spatial, pads)),
                  value, x.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(spatial, pads))] = x
    return out


def _window_view(padded, kernel, stride, dilation, out_size):
    """A read-only view ``(..., *out_size, *kernel)`` of ``padded``'s last ``nd`` dims, no copy.

    ``view[..., o_1, ..., k_1, ...] == padded[..., o_1 * s_1 + k_1 * d_1, ...]``.
    """
    nd = len(kernel)
    spans = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation))
    view = sliding_window_view(padded, spans, axis=tuple(range(padded.ndim - nd, padded.ndim)))
    return view[(Ellipsis,)
                + tuple(slice(None, (o - 1) * s + 1, s) for o, s in zip(out_size, stride))
                + tuple(slice(None, None, d) for d in dilation)]


def _max_pool_forward(nd, opname, input, kernel_size, stride, padding, dilation, ceil_mode):
    kernel, stride, padding, dilation, out_size, pads = _pool_geometry(
        opname, nd, input.shape, kernel_size, stride, padding, dilation, ceil_mode)
    spatial = input.shape[-nd:]
    view = _window_view(_pad(input, nd, pads, -np.inf), kernel, stride, dilation, out_size)
    positions = list(itertools.product(*(range(k) for k in kernel)))
    strides = _volume_strides(spatial)
    starts = [np.arange(o) * s - p for o, s, p in zip(out_size, stride, padding)]
    base = _outer_sum([start * v for start, v in zip(starts, strides)])
    padded = any(lo or hi for lo, hi in pads)

    def tap(k):
        position = positions[k]
        inside = None
        if padded:
            where = [(start + i * d >= 0) & (start + i * d < n)
                     for start, i, d, n in zip(starts, position, dilation, spatial)]
            inside = functools.reduce(np.logical_and, _outer(where))
        offset = sum(i * d * v for i, d, v in zip(position, dilation, strides))
        return view[(Ellipsis,) + position], base + offset, inside

    return _first_maximum(tap, len(positions))


def _adaptive_max_forward(nd, opname, input, output_size):
    _check_float(opname, input)
    sizes = _adaptive_sizes(opname, nd, input.shape, output_size)
    spatial = input.shape[-nd:]
    out_shape = input.shape[:-nd] + sizes
    if 0 in sizes:
        return np.empty(out_shape, input.dtype), np.empty(out_shape, np.int64)
    # Window position k of output i along a dim: start_i + k, clipped to the
    # window's last element. A window shorter than the longest repeats its
    # last element, which changes neither its maximum nor which comes first.
    taps = []
    for n, o in zip(spatial, sizes):
        starts, ends = _adaptive_windows(n, o)
        longest = int((ends - starts).max())
        taps.append(np.minimum(starts[:, None] + np.arange(longest), ends[:, None] - 1))
    positions = list(itertools.product(*(range(t.shape[1]) for t in taps)))
    strides = _volume_strides(spatial)

    def tap(k):
        picked = [t[:, i] for t, i in zip(taps, positions[k])]
        return (input[(Ellipsis,) + np.ix_(*picked)],
                _outer_sum([p * v for p, v in zip(picked, strides)]), None)

    return _first_maximum(tap, len(positions))


def _scatter_to_input(grad, indices, input_shape, nd):
    """``grad`` summed into zeros of ``input_shape`` at flat indices per spatial volume."""
    input_shape = tuple(input_shape)
    lead = input_shape[:-nd]
    plane = lead + (1, math.prod(grad.shape[-nd:]))
    out = max_pool2d_backward(grad.reshape(plane), as_tensor(indices).reshape(plane),
                              lead + (1, math.prod(input_shape[-nd:])))
    return out.reshape(input_shape)


def _pool_op(name, nd, forward, float_only):
    """Register ``forward`` as op ``name`` returning ``(values, indices)``, with its VJP.

    ``float_only``: integer inputs become the default float dtype (as for
    ``max_pool2d``); otherwise the forward refuses them.
    """
    pooled = op(name, save=(), save_output=True, float_only=float_only,
                outputs=("values", "indices"))(forward)

    @pooled.vjp
    def _(ctx, grads, input, *args, **kwargs):
        return _scatter_to_input(grads[0], ctx.output[1], ctx.input_shape(0), nd)

    return pooled


def _as_input(value, opname):
    """``value`` as a Tensor (arrays and lists are wrapped, sharing memory)."""
    if isinstance(value, Tensor):
        return value
    if value is None:
        raise TypeError(f"{opname}(): input must be a Tensor, got None")
    return as_tensor(value)


# -- max pooling ------------------------------------------------------------------------------

def _max_pool1d_forward(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """The op behind ``max_pool1d``: always ``(values, indices)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.pooling import _max_pool1d_op
    >>> _max_pool1d_op(oxmera.tensor([[1.0, 3.0, 2.0, 0.0]]), 2).indices
    tensor([[1, 2]], dtype=int64)
    """
    return _max_pool_forward(1, "max_pool1d", input, kernel_size, stride, padding, dilation,
                             ceil_mode)


def _max_pool3d_forward(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """The op behind ``max_pool3d``: always ``(values, indices)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.pooling import _max_pool3d_op
    >>> _max_pool3d_op(oxmera.arange(8.0).reshape(1, 2, 2, 2), 2).indices
    tensor([[[[7]]]], dtype=int64)
    """
    return _max_pool_forward(3, "max_pool3d", input, kernel_size, stride, padding, dilation,
                             ceil_mode)


_max_pool1d_op = _pool_op("max_pool1d", 1, _max_pool1d_forward, float_only=True)
_max_pool3d_op = _pool_op("max_pool3d", 3, _max_pool3d_forward, float_only=True)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over ``(N, C, L)`` or ``(C, L)`` input.

    ``stride`` defaults to ``kernel_size``; the ``-inf`` padding (at most half
    the kernel) never wins a window; ``ceil_mode`` adds a last, partial window
    where PyTorch does. With ``return_indices`` also returns each maximum's
    index along L (for ``max_unpool1d``). The gradient goes to the first
    maximum of each window (PyTorch's tie rule), or to its last NaN. A dilated
    window holding padding only is an error (PyTorch returns -inf there).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[1.0, 5.0, 2.0, 7.0, 3.0]]])
    >>> F.max_pool1d(x, 2)
    tensor([[[5., 7.]]], dtype=float32)
    >>> F.max_pool1d(x, 3, stride=2, padding=1, return_indices=True)[1]
    tensor([[[1, 3, 3]]], dtype=int64)
    """
    result = _max_pool1d_op(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (result.values, result.indices) if return_indices else result.values


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    As ``max_pool1d``, with ints or triples for ``kernel_size``,
    ``stride``, ``padding`` and ``dilation``; the indices are flat within
    each ``(D, H, W)`` volume, as PyTorch returns them.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.arange(16.0).reshape(1, 1, 2, 2, 4)
    >>> F.max_pool3d(x, 2)
    tensor([[[[[13., 15.]]]]], dtype=float32)
    >>> F.max_pool3d(x, (1, 2, 2), return_indices=True)[1].flatten()
    tensor([ 5,  7, 13, 15], dtype=int64)
    """
    result = _max_pool3d_op(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (result.values, result.indices) if return_indices else result.values


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool1d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.max_pool1d_with_indices(oxmera.tensor([[3.0, 4.0]]), 2)[1]
    tensor([[1]], dtype=int64)
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool2d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.max_pool2d_with_indices(oxmera.tensor([[[3.0, 4.0], [6.0, 5.0]]]), 2)[1]
    tensor([[[2]]], dtype=int64)
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool3d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.max_pool3d_with_indices(oxmera.arange(8.0).reshape(1, 2, 2, 2), 2)[0]
    tensor([[[[7.]]]], dtype=float32)
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# -- adaptive max pooling -----------------------------------------------------------------------

def _adaptive_max_pool1d_forward(input, output_size):
    """The op behind ``adaptive_max_pool1d``: always ``(values, indices)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.pooling import _adaptive_max_pool1d_op
    >>> _adaptive_max_pool1d_op(oxmera.tensor([[1.0, 3.0, 2.0]]), 2).indices
    tensor([[1, 1]], dtype=int64)
    """
    return _adaptive_max_forward(1, "adaptive_max_pool1d", input, output_size)


def _adaptive_max_pool2d_forward(input, output_size):
    """The op behind ``adaptive_max_pool2d``: always ``(values, indices)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.pooling import _adaptive_max_pool2d_op
    >>> _adaptive_max_pool2d_op(oxmera.arange(6.0).reshape(1, 2, 3), 1).indices
    tensor([[[5]]], dtype=int64)
    """
    return _adaptive_max_forward(2, "adaptive_max_pool2d", input, output_size)


def _adaptive_max_pool3d_forward(input, output_size):
    """The op behind ``adaptive_max_pool3d``: always ``(values, indices)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.pooling import _adaptive_max_pool3d_op
    >>> _adaptive_max_pool3d_op(oxmera.arange(8.0).reshape(1, 2, 2, 2), (1, 1, 2)).indices
    tensor([[[[6, 7]]]], dtype=int64)
    """
    return _adaptive_max_forward(3, "adaptive_max_pool3d", input, output_size)


_adaptive_max_pool1d_op = _pool_op("adaptive_max_pool1d", 1, _adaptive_max_pool1d_forward,
                                   float_only=False)
_adaptive_max_pool2d_op = _pool_op("adaptive_max_pool2d", 2, _adaptive_max_pool2d_forward,
                                   float_only=False)
_adaptive_max_pool3d_op = _pool_op("adaptive_max_pool3d", 3, _adaptive_max_pool3d_forward,
                                   float_only=False)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D max pooling to a fixed output length, over ``(N, C, L)`` or ``(C, L)`` input.

    Output ``i`` is the maximum of the inputs ``floor(i * L / out)`` up to
    ``ceil((i + 1) * L / out)`` (PyTorch's windows, which overlap when
    ``out`` does not divide ``L``). With ``return_indices`` also returns the
    maximum's index along L; the gradient goes to the first maximum of each
    window, or to its last NaN.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[1.0, 5.0, 2.0, 7.0, 3.0]]])
    >>> F.adaptive_max_pool1d(x, 2)
    tensor([[[5., 7.]]], dtype=float32)
    >>> F.adaptive_max_pool1d(x, 3, return_indices=True)[1]
    tensor([[[1, 3, 3]]], dtype=int64)
    """
    result = _adaptive_max_pool1d_op(input, output_size)
    return (result.values, result.indices) if return_indices else result.values


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D max pooling to a fixed output size, over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    ``output_size`` is an int or a pair (``None`` keeps that input size); the
    windows along each dim are ``adaptive_max_pool1d``'s, and the indices
    flat within each ``(H, W)`` plane.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.arange(12.0).reshape(1, 3, 4)
    >>> F.adaptive_max_pool2d(x, (2, None))
    tensor([[[ 4.,  5.,  6.,  7.],
             [ 8.,  9., 10., 11.]]], dtype=float32)
    >>> F.adaptive_max_pool2d(x, 1, return_indices=True)[1]
    tensor([[[11]]], dtype=int64)
    """
    result = _adaptive_max_pool2d_op(input, output_size)
    return (result.values, result.indices) if return_indices else result.values


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D max pooling to a fixed output size, over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    ``output_size`` is an int or a triple (``None`` keeps that input size);
    the indices are flat within each ``(D, H, W)`` volume.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.adaptive_max_pool3d(oxmera.arange(24.0).reshape(1, 2, 3, 4), (1, 1, 2))
    tensor([[[[21., 23.]]]], dtype=float32)
    """
    result = _adaptive_max_pool3d_op(input, output_size)
    return (result.values, result.indices) if return_indices else result.values


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.adaptive_max_pool1d_with_indices(oxmera.tensor([[3.0, 4.0]]), 1)[1]
    tensor([[1]], dtype=int64)
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.adaptive_max_pool2d_with_indices(oxmera.tensor([[[3.0, 4.0]]]), 1)[1]
    tensor([[[1]]], dtype=int64)
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool3d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.adaptive_max_pool3d_with_indices(oxmera.tensor([[[[3.0, 4.0]]]]), 1)[1]
    tensor([[[[1]]]], dtype=int64)
    """
    return adaptive_max_pool3d(input, output_size, True)


# -- fractional max pooling ---------------------------------------------------------------------

#: Which of a plane's random samples places the windows along each spatial
#: dim: PyTorch's kernels take sample 0 for W and 1 for H in 2-D, but 0, 1, 2
#: for T, H, W in 3-D.
_FRACTIONAL_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}


def _fractional_starts(samples, in_size, out_size, pool_size):
    """Window starts ``(N, C, out_size)`` along one dim from each plane's sample in [0, 1).

    PyTorch's ``generate_intervals``, in the samples' precision (as its
    kernel computes in the input's type): window ``i`` starts at
    ``int((i + u) * alpha) - int(u * alpha)``, ``alpha = (in - pool) / (out - 1)``,
    and the last one at ``in - pool``.
    """
    starts = np.empty(samples.shape + (out_size,), np.int64)
    if out_size > 1:
        alpha = samples.dtype.type(in_size - pool_size) / samples.dtype.type(out_size - 1)
        steps = np.arange(out_size - 1).astype(samples.dtype)
        starts[..., :-1] = (((steps + samples[..., None]) * alpha).astype(np.int64)
                            - (samples * alpha).astype(np.int64)[..., None])
    if out_size > 0:
        starts[..., -1] = in_size - pool_size
    return starts


def _fractional_max_forward(nd, opname, input, kernel_size, output_size, samples):
    shape = _check_input_shape(opname, nd, input.shape)
    kernel = _ntuple(kernel_size, nd, "kernel_size", opname, 1)
    sizes = _ntuple(output_size, nd, "output_size", opname, 0)
    # PyTorch's 3-D kernel wants the last window to end before the input does.
    limit = 0 if nd == 2 else 1
    for n, k, o in zip(shape[-nd:], kernel, sizes):
        if o + k - 1 > n - limit:
            raise OpError(f"{opname}(): kernel_size={kernel} is too large for output_size={sizes} "
                          f"and input of shape {shape}: each spatial dim needs output + kernel "
                          f"- 1 {'<=' if nd == 2 else '<'} input")
    batched = len(shape) == nd + 2
    x = input if batched else input[None]
    planes = x.shape[:2]
    samples = np.asarray(samples)
    if (samples.ndim != 3 or samples.shape[2] != nd or samples.shape[0] < planes[0]
            or samples.shape[1] < planes[1]):
        raise OpError(f"{opname}(): expected _random_samples of shape (N, C, {nd}) = "
                      f"{planes + (nd,)} for input of shape {shape}, got {samples.shape}")
    if samples.dtype != input.dtype:
        raise OpError(f"{opname}(): expected _random_samples of the input's dtype {input.dtype}, "
                      f"got {samples.dtype}")
    out_shape = planes + sizes
    if 0 in sizes:
        values, indices = np.empty(out_shape, input.dtype), np.empty(out_shape, np.int64)
    else:
        spatial = x.shape[2:]
        samples = samples[:planes[0], :planes[1]]
        starts = []
        for d, (n, k, o) in enumerate(zip(spatial, kernel, sizes)):
            start = _fractional_starts(samples[..., _FRACTIONAL_SAMPLE_OF_DIM[nd][d]], n, o, k)
            starts.append(start.reshape(planes + (1,) * d + (o,) + (1,) * (nd - d - 1)))
        positions = list(itertools.product(*(range(k) for k in kernel)))
        strides = _volume_strides(spatial)
        volumes = x.reshape(planes + (math.prod(spatial),))

        def tap(k):
            flat = sum((start + i) * v for start, i, v in zip(starts, positions[k], strides))
            flat = np.broadcast_to(flat, out_shape)
            picked = np.take_along_axis(volumes, flat.reshape(planes + (math.prod(sizes),)),
                                        axis=2)
            return picked.reshape(out_shape), flat, None

        values, indices = _first_maximum(tap, len(positions))
    return (values, indices) if batched else (values[0], indices[0])


def _fractional_max_pool2d_forward(input, kernel_size, output_size, _random_samples):
    """The op behind ``fractional_max_pool2d``: always ``(values, indices)``.

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> from oxmera.ops.pooling import _fractional_max_pool2d_op
    >>> samples = np.full((1, 1, 2), 0.5, np.float32)
    >>> _fractional_max_pool2d_op(oxmera.arange(16.0).reshape(1, 4, 4), 2, 2, samples).indices
    tensor([[[ 5,  7],
             [13, 15]]], dtype=int64)
    """
    return _fractional_max_forward(2, "fractional_max_pool2d", input, kernel_size, output_size,
                                   _random_samples)


def _fractional_max_pool3d_forward(input, kernel_size, output_size, _random_samples):
    """The op behind ``fractional_max_pool3d``: always ``(values, indices)``.

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> from oxmera.ops.pooling import _fractional_max_pool3d_op
    >>> samples = np.full((1, 1, 3), 0.5, np.float32)
    >>> x = oxmera.arange(27.0).reshape(1, 3, 3, 3)
    >>> _fractional_max_pool3d_op(x, 2, 1, samples).indices
    tensor([[[[26]]]], dtype=int64)
    """
    return _fractional_max_forward(3, "fractional_max_pool3d", input, kernel_size, output_size,
                                   _random_samples)


_fractional_max_pool2d_op = _pool_op("fractional_max_pool2d", 2, _fractional_max_pool2d_forward,
                                     float_only=True)
_fractional_max_pool3d_op = _pool_op("fractional_max_pool3d", 3, _fractional_max_pool3d_forward,
                                     float_only=True)


def _fractional_max_pool(nd, input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples):
    opname = f"fractional_max_pool{nd}d"
    input = _as_input(input, opname)
    shape = _check_input_shape(opname, nd, input.shape)
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{opname}(): requires specifying either an output_size or an "
                             f"output_ratio")
        ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else (
            (output_ratio,) * nd)
        if len(ratios) != nd:
            raise ValueError(f"{opname}(): output_ratio must be a number or {nd} numbers, got "
                             f"{output_ratio!r}")
        output_size = tuple(int(n * r) for n, r in zip(shape[-nd:], ratios))
    if _random_samples is None:
        # One sample per plane and dim, in the input's (floating) dtype.
        dtype = input.dtype if input.dtype.kind == "f" else np.dtype(_core.get_default_dtype())
        rng = numpy_generator(None, opname)
        planes = (shape[0] if len(shape) == nd + 2 else 1, shape[-nd - 1])
        _random_samples = rng.random(planes + (nd,)).astype(dtype)
    elif isinstance(_random_samples, Tensor):
        _random_samples = _random_samples.detach().numpy()
    pool = _fractional_max_pool2d_op if nd == 2 else _fractional_max_pool3d_op
    result = pool(input, kernel_size, output_size, _random_samples)
    return (result.values, result.indices) if return_indices else result.values


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling (Graham, 2014) over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Windows of ``kernel_size`` at pseudo-random, increasing offsets, so that
    the output has ``output_size`` (or ``output_ratio`` times the input size,
    rounded down). ``_random_samples`` (``(N, C, 2)``, in [0, 1), the input's
    dtype) places the windows of each plane exactly as PyTorch's kernel
    does; without it they are drawn from oxmera's default generator. The
    gradient goes to each window's first maximum (its last NaN).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.arange(25.0).reshape(1, 1, 5, 5)
    >>> samples = oxmera.full((1, 1, 2), 0.5)
    >>> F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=samples)
    tensor([[[[ 6.,  8.,  9.],
              [16., 18., 19.],
              [21., 23., 24.]]]], dtype=float32)
    """
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    As ``fractional_max_pool2d``, with ``_random_samples`` of shape
    ``(N, C, 3)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.arange(64.0).reshape(1, 4, 4, 4)
    >>> F.fractional_max_pool3d(x, 2, output_ratio=0.5).shape
    oxmera.Size([1, 2, 2, 2])
    """
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool2d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.fractional_max_pool2d_with_indices(oxmera.ones(1, 3, 3), 2, 1)[1]
    tensor([[[4]]], dtype=int64)
    """
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, True,
                                _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """``fractional_max_pool3d`` that always returns ``(values, indices)`` (PyTorch's name).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.fractional_max_pool3d_with_indices(oxmera.ones(1, 3, 3, 3), 2, 1)[1]
    tensor([[[[13]]]], dtype=int64)
    """
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, True,
                                _random_samples)


# -- max unpooling ----------------------------------------------------------------------------

@op(inputs=2, save=("indices",))
def max_unpool(input, indices, output_size):
    """``input``'s values put at ``indices`` into zeros whose spatial size is ``output_size``.

    The op behind ``max_unpool1d``, ``max_unpool2d`` and
    ``max_unpool3d``: ``input`` and the int64 ``indices`` are
    ``(N, C, *spatial)`` or ``(C, *spatial)``, the indices flat within each
    output volume of ``output_size`` (``len(output_size)`` spatial dims), as
    the max poolings return them. Where an index repeats, the last value
    wins (PyTorch's CPU kernel). Its VJP gathers the gradient at the indices
    (as PyTorch's, also for a repeated index), with ``max_pool2d_gather``.

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> from oxmera.ops.pooling import max_unpool
    >>> max_unpool(oxmera.tensor([[5.0, 7.0]]), oxmera.tensor(np.array([[1, 3]])), (4,))
    tensor([[0., 5., 0., 7.]], dtype=float32)
    """
    output_size = tuple(int(s) for s in output_size)
    nd = len(output_size)
    opname = f"max_unpool{nd}d"
    _check_input_shape(opname, nd, input.shape)
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{opname}(): not implemented for dtype {input.dtype}: "
                                  f"expected a floating point input")
    if indices.dtype != np.int64:
        raise OpError(f"{opname}(): expected int64 indices, got dtype {indices.dtype}")
    if indices.shape != input.shape:
        raise OpError(f"{opname}(): expected indices of the input's shape {input.shape}, got "
                      f"indices of shape {indices.shape}")
    volume = math.prod(output_size)
    lead = input.shape[:-nd]
    planes = math.prod(lead)
    flat = indices.reshape(planes, math.prod(input.shape[-nd:]))
    if flat.size and (flat.min() < 0 or flat.max() >= volume):
        bad = flat.min() if flat.min() < 0 else flat.max()
        raise OpError(f"{opname}(): found an invalid max index {bad}: output volumes are of size "
                      f"{'x'.join(map(str, output_size))} (input shape {input.shape})")
    out = np.zeros((planes, volume), input.dtype)
    # Advanced assignment with a repeated index keeps the last value.
    out[np.arange(planes)[:, None], flat] = input.reshape(flat.shape)
    return out.reshape(lead + output_size)


@max_unpool.vjp
def _(ctx, grad, input, indices, output_size):
    nd = len(tuple(output_size))
    input_shape = ctx.input_shape(0)
    lead = input_shape[:-nd]
    picked = max_pool2d_gather(grad.reshape(lead + (1, math.prod(grad.shape[-nd:]))),
                               as_tensor(indices).reshape(lead + (1, math.prod(input_shape[-nd:]))))
    return picked.reshape(input_shape), None


def _max_unpool(nd, input, indices, kernel_size, stride, padding, output_size):
    opname = f"max_unpool{nd}d"
    input = _as_input(input, opname)
    shape = _check_input_shape(opname, nd, input.shape)
    kernel = _ntuple(kernel_size, nd, "kernel_size", opname, 1)
    stride = kernel if stride is None else _ntuple(stride, nd, "stride", opname, 1)
    padding = _ntuple(padding, nd, "padding", opname, 0)
    default = [(n - 1) * s + k - 2 * p
               for n, k, s, p in zip(shape[-nd:], kernel, stride, padding)]
    if output_size is None:
        sizes = default
    else:
        sizes = list(output_size)
        if len(sizes) == nd + 2:
            sizes = sizes[2:]
        if len(sizes) != nd:
            raise ValueError(f"{opname}(): output_size should be a sequence containing {nd} or "
                             f"{nd + 2} elements, but it has a length of '{len(sizes)}'")
        for d, (size, s) in enumerate(zip(sizes, stride)):
            low, high = default[d] - s, default[d] + s
            if not low < size < high:
                raise ValueError(f"{opname}(): invalid output_size {tuple(output_size)} (dim {d} "
                                 f"must be between {low} and {high}, for input of shape {shape})")
    if any(size < 0 for size in sizes):
        raise ValueError(f"{opname}(): the output size {tuple(sizes)} must be non-negative "
                         f"(input shape {shape}, kernel_size={kernel}, stride={stride}, "
                         f"padding={padding})")
    return max_unpool(input, indices, tuple(sizes))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``: each value put back at its index, zeros elsewhere.

    ``input`` and ``indices`` (int64) are ``(N, C, L)`` or ``(C, L)``, as
    ``max_pool1d(..., return_indices=True)`` returns them. The output length is
    ``(L - 1) * stride + kernel_size - 2 * padding``, or ``output_size`` (within
    a stride of it; ``(N, C, L_out)`` is also accepted).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[1.0, 5.0, 2.0, 7.0, 3.0]]])
    >>> values, indices = F.max_pool1d(x, 2, return_indices=True)
    >>> F.max_unpool1d(values, indices, 2)
    tensor([[[0., 5., 0., 7.]]], dtype=float32)
    >>> F.max_unpool1d(values, indices, 2, output_size=[5])
    tensor([[[0., 5., 0., 7., 0.]]], dtype=float32)
    """
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: each value put back at its index, zeros elsewhere.

    As ``max_unpool1d``, over ``(N, C, H, W)`` or ``(C, H, W)``, the
    indices flat within each ``(H_out, W_out)`` plane.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[[1.0, 2.0], [4.0, 3.0]]]])
    >>> F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2)
    tensor([[[[0., 0.],
              [4., 0.]]]], dtype=float32)
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool3d``: each value put back at its index, zeros elsewhere.

    As ``max_unpool1d``, over ``(N, C, D, H, W)`` or ``(C, D, H, W)``,
    the indices flat within each output volume.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.arange(8.0).reshape(1, 1, 2, 2, 2)
    >>> F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.], dtype=float32)
    """
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# -- average pooling (composed of avg_pool2d) -------------------------------------------------

def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)`` input.

    ``stride`` defaults to ``kernel_size``. Each window's sum is divided by
    its size counting the zero padding (``count_include_pad``) or only the
    input elements in it; a ``ceil_mode`` window reaching past the padding
    counts what it covers, as in PyTorch (which has no ``divisor_override``
    in 1-D). Computed by ``avg_pool2d`` on a height-1 view.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
    >>> F.avg_pool1d(x, 2)
    tensor([[[1.5, 3.5]]], dtype=float32)
    >>> F.avg_pool1d(x, 3, stride=2, padding=1, count_include_pad=False)
    tensor([[[1.5, 3. , 4.5]]], dtype=float32)
    """
    input = _as_input(input, "avg_pool1d")
    kernel, stride, padding, *_ = _pool_geometry("avg_pool1d", 1, input.shape, kernel_size,
                                                 stride, padding, 1, ceil_mode)
    out = avg_pool2d(input.unsqueeze(-2), (1,) + kernel, (1,) + stride, (0,) + padding,
                     ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _check_divisor(opname, divisor_override):
    if divisor_override is None:
        return
    if not _is_int(divisor_override):
        raise TypeError(f"{opname}(): divisor_override must be an int or None, got "
                        f"{divisor_override!r}")
    if divisor_override == 0:
        raise OpError(f"{opname}(): divisor_override must not be zero")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    As ``avg_pool2d``, with ints or triples; each window's sum is divided by
    ``divisor_override`` if given, else by its size counting the padding
    (``count_include_pad``) or not. Computed as ``avg_pool2d`` over (H, W),
    then over D: PyTorch's divisor is a product of one factor per dim.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.arange(16.0).reshape(1, 1, 2, 2, 4)
    >>> F.avg_pool3d(x, 2)
    tensor([[[[[6.5, 8.5]]]]], dtype=float32)
    >>> F.avg_pool3d(x, 2, divisor_override=1)
    tensor([[[[[52., 68.]]]]], dtype=float32)
    """
    input = _as_input(input, "avg_pool3d")
    kernel, stride, padding, _, out_size, _ = _pool_geometry(
        "avg_pool3d", 3, input.shape, kernel_size, stride, padding, 1, ceil_mode)
    _check_divisor("avg_pool3d", divisor_override)
    shape = tuple(input.shape)
    lead, depth = shape[:-3], shape[-3]
    # (…, C * D, H, W): pool each depth slice over (H, W); a divisor
    # override is applied once, by the second pass (the first one sums).
    planes = avg_pool2d(input.reshape(lead[:-1] + (lead[-1] * depth,) + shape[-2:]), kernel[1:],
                        stride[1:], padding[1:], ceil_mode, count_include_pad,
                        None if divisor_override is None else 1)
    columns = planes.reshape(lead + (depth, out_size[1] * out_size[2]))
    out = avg_pool2d(columns, (kernel[0], 1), (stride[0], 1), (padding[0], 0), ceil_mode,
                     count_include_pad, divisor_override)
    return out.reshape(lead + out_size)


# -- adaptive average pooling (composed) -------------------------------------------------------

def _averaging_matrix(in_size, out_size, dtype):
    """``(out_size, in_size)``: row ``i`` averages PyTorch's adaptive window ``i``."""
    matrix = np.zeros((out_size, in_size), dtype)
    for i, (start, end) in enumerate(zip(*_adaptive_windows(in_size, out_size))):
        matrix[i, start:end] = 1.0 / (end - start)
    return as_tensor(matrix)


def _adaptive_mean(input, dim, out_size):
    """Adaptive average pooling of ``input`` along ``dim`` (negative) to ``out_size``.

    Where ``out_size`` divides the input's size the windows tile the dim: a
    reshape and a mean. Otherwise (uneven or overlapping windows) a matmul
    with the constant averaging matrix.
    """
    shape = tuple(input.shape)
    in_size = shape[dim]
    if out_size == in_size:
        return input
    axis = len(shape) + dim
    if out_size > 0 and in_size % out_size == 0:
        split = shape[:axis] + (out_size, in_size // out_size) + shape[axis + 1:]
        return input.reshape(split).mean(axis + 1)
    matrix = _averaging_matrix(in_size, out_size, input.dtype)
    return (input.movedim(dim, -1) @ matrix.mT).movedim(-1, dim)


def _adaptive_avg_pool(nd, input, output_size):
    opname = f"adaptive_avg_pool{nd}d"
    if not isinstance(input, Tensor):
        # PyTorch's TypeError (the pools that are ops take arrays, as every op does)
        raise TypeError(f"{opname}(): expected a Tensor input, got {type(input).__name__}")
    _check_float(opname, input)
    sizes = _adaptive_sizes(opname, nd, input.shape, output_size)
    # An average over a box is the average, along one dim, of the averages along the others.
    for dim, size in zip(range(-nd, 0), sizes):
        input = _adaptive_mean(input, dim, size)
    return input


def adaptive_avg_pool1d(input, output_size):
    """1-D average pooling to a fixed output length, over ``(N, C, L)`` or ``(C, L)`` input.

    Output ``i`` averages the inputs ``floor(i * L / out)`` up to
    ``ceil((i + 1) * L / out)``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.adaptive_avg_pool1d(oxmera.tensor([[1.0, 2.0, 3.0]]), 2)
    tensor([[1.5, 2.5]], dtype=float32)
    """
    return _adaptive_avg_pool(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """2-D average pooling to a fixed output size, over ``(N, C, H, W)`` or ``(C, H, W)``.

    ``output_size`` is an int or a pair (``None`` keeps that input size); the
    windows along each dim are ``adaptive_avg_pool1d``'s. An output size
    of 1 is global average pooling.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.adaptive_avg_pool2d(oxmera.arange(12.0).reshape(1, 3, 4), (2, 1))
    tensor([[[3.5],
             [7.5]]], dtype=float32)
    """
    return _adaptive_avg_pool(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """3-D average pooling to a fixed output size, over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    ``output_size`` is an int or a triple (``None`` keeps that input size).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.adaptive_avg_pool3d(oxmera.arange(8.0).reshape(1, 2, 2, 2), (1, None, 1))
    tensor([[[[2.5],
              [4.5]]]], dtype=float32)
    """
    return _adaptive_avg_pool(3, input, output_size)


# -- power-average pooling (composed, as PyTorch composes it) -----------------------------------

_MAX_POOLS = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}


def _lp_pool(nd, input, norm_type, kernel_size, stride, ceil_mode):
    opname = f"lp_pool{nd}d"
    input = _as_input(input, opname)
    kernel, *_ = _pool_geometry(opname, nd, input.shape, kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == math.inf:
        return _MAX_POOLS[nd](input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -_MAX_POOLS[nd](-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    exponent = 1.0 / norm_type      # a ZeroDivisionError for norm_type 0, as in PyTorch
    out = _AVG_POOLS[nd](input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(math.prod(kernel)).pow(exponent)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """1-D power-average pooling: ``(sum of x ** p over each window) ** (1 / p)``.

    Over ``(N, C, L)`` or ``(C, L)`` input, without padding; computed as
    PyTorch does, from ``avg_pool1d(x ** p)`` times the kernel size (so a
    ``ceil_mode`` window past the end is scaled as PyTorch scales it), and
    ``norm_type`` ``inf`` is max pooling of ``|x|``. Where the sum of powers
    is negative (odd ``p``), the result is NaN, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.lp_pool1d(oxmera.tensor([[[3.0, 4.0, 6.0, 8.0]]]), 2, 2)
    tensor([[[ 5., 10.]]], dtype=float32)
    """
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling over ``(N, C, H, W)`` or ``(C, H, W)`` input.

    As ``lp_pool1d``, from ``avg_pool2d``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.lp_pool2d(oxmera.ones(1, 2, 4), 1, 2)
    tensor([[[4., 4.]]], dtype=float32)
    """
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    As ``lp_pool1d``, from ``avg_pool3d``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.lp_pool3d(oxmera.ones(1, 2, 2, 2), 2, 2)
    tensor([[[[2.8284]]]], dtype=float32)
    """
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


_AVG_POOLS = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}
