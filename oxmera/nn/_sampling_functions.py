"""Resampling functions of ``torch.nn.functional``: interpolate (and the deprecated
upsample, upsample_nearest, upsample_bilinear), affine_grid and grid_sample,
pixel_shuffle, pixel_unshuffle and channel_shuffle.

Every one is a composition of recorded ops, so its gradients to any order
come from their VJPs. Interpolation is separable in every mode: along each
spatial dim the output is a fixed linear map of the input, built here as a
NumPy matrix from PyTorch's source-index rules (its ``area_pixel_compute_*``
and ``nearest_*_compute_source_index``, including the float32 arithmetic of
the nearest modes and the bicubic convolution with A = -0.75) and applied
with one einsum per dim; the nearest modes pick rows with ``index_select``
instead. ``antialias=True`` (bilinear and bicubic) builds the matrix of
PyTorch's separable anti-aliasing kernels (``_compute_weights_aa``: the
filter widened by the downscaling factor, taps past the edges dropped and
the rest renormalized, bicubic with A = -0.5).

``grid_sample`` gathers the input at the integer neighbours of each sampling
point (``gather``: differentiable in the input) and weights them with
polynomials of the point's fractional position (differentiable in the grid),
after PyTorch's unnormalization and border/reflection rules.
"""
import itertools
import math
import numbers
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.nn._function_utils import as_input
from oxmera.ops import creation as _creation
from oxmera.ops.elementwise import remainder, where
from oxmera.ops.index import index_select
from oxmera.ops.linalg import einsum, matmul

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle", "affine_grid",
           "grid_sample"]

OpError = _core.OpError

_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_CUBIC_A = -0.75


# -- PyTorch's source-index rules, one spatial dim at a time ------------------------------

def _nearest_indices(in_size, out_size, scale, exact, spatial_dims, dtype):
    """Which input element each output element copies (PyTorch's nearest rules).

    ``floor(i * step)`` (``'nearest'``) or ``floor((i + 0.5) * step)``
    (``'nearest-exact'``), at most the last element; ``step`` is ``1 /
    scale_factor`` when given, else ``in / out``. The rounding follows
    PyTorch's CPU kernels, as measured against them: the 2-D kernels work
    in float32 (and legacy ``'nearest'`` copies when the sizes agree and
    halves the index when the output is twice the input, whatever the
    scale factor); the 1-D and 3-D ones in the input's precision (float64
    for float64). Known difference: for float32 1-D/3-D ``'nearest-exact'``
    a few sizes (2 to 41, say) put a source position that float32 rounds
    onto an integer on the other side of it.
    """
    out = np.arange(out_size)
    step = _area_pixel_scale(in_size, out_size, False, scale)
    shift = 0.5 if exact else 0.0
    if spatial_dims == 2:
        if not exact and out_size == in_size:
            return out
        if not exact and out_size == 2 * in_size:
            return out >> 1
        source = np.floor(((out + shift) * np.float64(np.float32(step))).astype(np.float32))
    elif dtype == np.float64:
        source = (out + shift) * step
        # nearest-exact rounds the double product to float32 before the floor.
        source = np.floor(source.astype(np.float32) if exact else source)
    else:
        source = np.floor((out.astype(np.float32) + np.float32(shift)) * np.float32(step))
    return np.minimum(source.astype(np.int64), in_size - 1)


def _area_pixel_scale(in_size, out_size, align_corners, scale):
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _source_positions(in_size, out_size, align_corners, scale, cubic):
    ratio = _area_pixel_scale(in_size, out_size, align_corners, scale)
    out = np.arange(out_size, dtype=np.float64)
    if align_corners:
        return ratio * out
    source = ratio * (out + 0.5) - 0.5
    return source if cubic else np.maximum(source, 0.0)


def _guard(source, in_size):
    """``guard_index_and_lambda``: the left neighbour (at most the last) and the fraction."""
    index = np.minimum(np.floor(source).astype(np.int64), in_size - 1)
    return index, np.clip(source - index, 0.0, 1.0)


def _linear_matrix(in_size, out_size, align_corners, scale):
    matrix = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    if out_size == in_size:
        # PyTorch copies when the sizes agree, whatever the scale factor.
        matrix[rows, rows] = 1.0
        return matrix
    index, fraction = _guard(_source_positions(in_size, out_size, align_corners, scale, False),
                             in_size)
    np.add.at(matrix, (rows, index), 1.0 - fraction)
    np.add.at(matrix, (rows, index + (index < in_size - 1)), fraction)
    return matrix


def _cubic_coefficients(t):
    """PyTorch's ``get_cubic_upsample_coefficients`` (Keys' cubic convolution, A = -0.75)."""
    a = _CUBIC_A

    def near(x):        # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):         # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)


def _align_corners_default(align_corners, opname):
    if align_corners is None:
        warnings.warn(f"{opname}(): default grid_sample and affine_grid behavior has changed to "
                      f"align_corners=False since 1.3.0. Please specify align_corners=True if "
                      f"the old behavior is desired.", stacklevel=3)
        return False
    return bool(align_corners)


def _cubic_matrix(in_size, out_size, align_corners, scale):
    index, fraction = _guard(_source_positions(in_size, out_size, align_corners, scale, True),
                             in_size)
    matrix = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    for offset, weight in zip(range(-1, 3), _cubic_coefficients(fraction)):
        # The taps past an edge repeat the edge element (PyTorch clamps them).
        np.add.at(matrix, (rows, np.clip(index + offset, 0, in_size - 1)), weight)
    return matrix


def _antialias_filter(x, mode):
    """PyTorch's ``aa_filter``: the triangle, or Keys' cubic with A = -0.5."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.maximum(1.0 - x, 0.0)
    a = -0.5
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))


def _antialias_matrix(in_size, out_size, align_corners, scale, mode):
    """PyTorch's ``_compute_weights_aa``: output ``i`` averages the inputs within
    ``support`` of its centre, the filter stretched by the scale when downsampling."""
    ratio = _area_pixel_scale(in_size, out_size, align_corners, scale)
    half_width = 1.0 if mode == "bilinear" else 2.0          # interp_size / 2
    support = half_width * ratio if ratio >= 1.0 else half_width
    inverse = 1.0 / ratio if ratio >= 1.0 else 1.0
    matrix = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = ratio * (i + 0.5)
        # int() truncates toward zero, as the C++ static_cast does
        low = max(int(center - support + 0.5), 0)
        high = min(int(center + support + 0.5), in_size)
        weights = _antialias_filter((np.arange(low, high) - center + 0.5) * inverse, mode)
        total = weights.sum()
        matrix[i, low:high] = weights / total if total != 0.0 else weights
    return matrix


def _area_matrix(in_size, out_size):
    """Adaptive average pooling's windows (``mode='area'``): ``[floor(i*n/m), ceil((i+1)*n/m))``."""
    rows = np.arange(out_size)
    start = rows * in_size // out_size
    end = -(-(rows + 1) * in_size // out_size)
    columns = np.arange(in_size)
    inside = (columns >= start[:, None]) & (columns < end[:, None])
    return inside / (end - start)[:, None]


# -- interpolate ------------------------------------------------------------------------------

def _per_dim(value, dims, what, input):
    if isinstance(value, (list, tuple)):
        if len(value) != dims:
            raise ValueError(f"interpolate(): input and {what} must have the same number of "
                             f"spatial dimensions, but got input with spatial dimensions of "
                             f"{list(input.shape[2:])} and {what} {value}. Please provide input "
                             f"tensor in (N, C, d1, d2, ...,dK) format and {what} in "
                             f"(o1, o2, ...,oK) format.")
        return list(value)
    return [value] * dims


def _output_geometry(input, size, scale_factor, recompute_scale_factor):
    """The output's spatial size and the scale factors the kernels see (None: from the sizes)."""
    dims = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate(): only one of size or scale_factor should be defined")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError("interpolate(): recompute_scale_factor is not meaningful with an "
                             "explicit size.")
        sizes = _per_dim(size, dims, "output size", input)
        if not all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in sizes):
            raise TypeError(f"interpolate(): expected size to be one of int or Tuple[int] or "
                            f"Tuple[int, int] or Tuple[int, int, int], but got size {size!r}")
        return [int(n) for n in sizes], [None] * dims
    if scale_factor is None:
        raise ValueError("interpolate(): either size or scale_factor should be defined")
    scales = [float(s) for s in _per_dim(scale_factor, dims, "scale_factor", input)]
    sizes = [math.floor(n * s) for n, s in zip(input.shape[2:], scales)]
    return sizes, ([None] * dims if recompute_scale_factor else scales)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample ``(N, C, *spatial)`` input (1 to 3 spatial dims) to ``size`` or by ``scale_factor``.

    Modes as ``torch.nn.functional.interpolate``: ``'nearest'`` (PyTorch's
    legacy floor rule), ``'nearest-exact'``, ``'linear'`` (3-D input),
    ``'bilinear'`` and ``'bicubic'`` (4-D), ``'trilinear'`` (5-D), ``'area'``
    (adaptive average pooling). ``align_corners`` (interpolating modes only)
    maps the corner pixels' centres onto each other. Given ``scale_factor``,
    the output size is ``floor(size * scale_factor)`` and the kernels use
    ``1 / scale_factor`` as the step, unless ``recompute_scale_factor`` (then
    ``in / out``), as PyTorch. Values equal PyTorch's (bicubic with A = -0.75,
    taps past the edge clamped). ``antialias=True`` (bilinear and bicubic, 4-D
    input) widens the filter by the downscaling factor, as PyTorch's (and
    PIL's) anti-aliased resize, with PyTorch's values.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[1.0, 2.0, 4.0]]])
    >>> F.interpolate(x, scale_factor=2)
    tensor([[[1., 1., 2., 2., 4., 4.]]], dtype=float32)
    >>> F.interpolate(x, size=5, mode="linear", align_corners=True)
    tensor([[[1. , 1.5, 2. , 3. , 4. ]]], dtype=float32)
    >>> F.interpolate(oxmera.ones(1, 3, 4, 4), scale_factor=1.5, mode="bicubic").shape
    oxmera.Size([1, 3, 6, 6])
    >>> F.interpolate(oxmera.tensor([[[[0.0, 4.0, 8.0, 4.0]]]]), size=(1, 2), mode="bilinear",
    ...               antialias=True)
    tensor([[[[2.8571, 5.7143]]]], dtype=float32)
    """
    input = as_input(input, "interpolate")
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate(): input error: got mode {mode!r}; supported "
                                  f"modes are {' | '.join(_MODES)}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("interpolate(): align_corners option can only be set with the "
                             "interpolating modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if antialias:
        if not (mode in ("bilinear", "bicubic") and input.ndim == 4):
            raise ValueError("interpolate(): anti-alias option is restricted to bilinear, "
                             "bicubic, and lanczos modes and requires a 4-D tensor as input")
    if input.ndim not in (3, 4, 5):
        raise NotImplementedError(f"interpolate(): input error: only 3D, 4D and 5D input "
                                  f"Tensors supported (got {input.ndim}D) for the modes: "
                                  f"{' | '.join(_MODES)} (got {mode})")
    if mode in _MODE_DIMS and input.ndim != _MODE_DIMS[mode] + 2:
        raise NotImplementedError(f"interpolate(): got {input.ndim}D input, but {mode} mode "
                                  f"needs {_MODE_DIMS[mode] + 2}D input")
    # 'area' is adaptive pooling to the output size: the scale plays no part.
    sizes, scales = _output_geometry(input, size, scale_factor, recompute_scale_factor)
    if any(n < 1 for n in sizes) or 0 in input.shape[2:]:
        raise OpError(f"interpolate(): input and output sizes should be greater than 0, but got "
                      f"input of shape {tuple(input.shape)} and output size {tuple(sizes)}")
    if mode not in ("nearest", "nearest-exact") and input.dtype.kind != "f":
        raise TypeError(f"interpolate(): mode {mode!r} needs a floating point input, got dtype "
                        f"{input.dtype}")
    out = input
    for dim, (in_size, out_size, scale) in enumerate(zip(input.shape[2:], sizes, scales),
                                                     start=2):
        if mode in ("nearest", "nearest-exact"):
            index = _nearest_indices(in_size, out_size, scale, mode == "nearest-exact",
                                     input.ndim - 2, input.dtype)
            if out_size != in_size or np.any(index != np.arange(out_size)):
                out = index_select(out, dim, _creation.as_tensor(index))
            continue
        if antialias:
            matrix = _antialias_matrix(in_size, out_size, align_corners, scale, mode)
        elif mode == "area":
            matrix = _area_matrix(in_size, out_size)
        elif mode == "bicubic":
            matrix = _cubic_matrix(in_size, out_size, align_corners, scale)
        else:
            matrix = _linear_matrix(in_size, out_size, align_corners, scale)
        if out_size == in_size and np.array_equal(matrix, np.eye(in_size)):
            continue
        out = _along(out, dim, matrix.astype(input.dtype))
    return out


def _along(x, dim, matrix):
    """``out[..., j, ...] = sum_k matrix[j, k] * x[..., k, ...]`` along ``dim``.

    One einsum on a reshape of ``x``: a matmul over a moved axis, or NumPy's
    matmul broadcasting the matrix over a batch (or of a non-contiguous
    operand), measured 5-100x slower.
    """
    shape = tuple(x.shape)
    flat = x.reshape(math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:]))
    out = einsum("jk,bkr->bjr", _creation.as_tensor(matrix), flat)
    return out.reshape(shape[:dim] + (matrix.shape[0],) + shape[dim + 1:])


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate` (warns, as PyTorch's).

    Examples
    --------
    >>> import warnings, oxmera
    >>> import oxmera.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample(oxmera.tensor([[[1.0, 2.0]]]), scale_factor=2)
    tensor([[[1., 1., 2., 2.]]], dtype=float32)
    """
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')`` (warns).

    Examples
    --------
    >>> import warnings, oxmera
    >>> import oxmera.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_nearest(oxmera.ones(1, 1, 2, 2), 3).shape
    oxmera.Size([1, 1, 3, 3])
    """
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: bilinear ``interpolate`` with ``align_corners=True`` (warns).

    Examples
    --------
    >>> import warnings, oxmera
    >>> import oxmera.nn.functional as F
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     F.upsample_bilinear(oxmera.tensor([[[[0.0, 3.0]]]]), (1, 4))
    tensor([[[[0., 1., 2., 3.]]]], dtype=float32)
    """
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use "
                  "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- pixel and channel shuffles -----------------------------------------------------------

def _check_factor(opname, name, factor):
    if not isinstance(factor, numbers.Integral) or isinstance(factor, bool):
        raise TypeError(f"{opname}(): {name} must be an int, got {factor!r}")
    if factor <= 0:
        raise OpError(f"{opname} expects a positive {name}, but got {factor}")
    return int(factor)


def _check_ndim(opname, input):
    if input.ndim < 3:
        raise OpError(f"{opname} expects input to have at least 3 dimensions, but got input "
                      f"with {input.ndim} dimension(s) (shape {tuple(input.shape)})")


def pixel_shuffle(input, upscale_factor):
    """``(*, C * r * r, H, W)`` to ``(*, C, H * r, W * r)``, ``r = upscale_factor``.

    Channel ``c * r * r + i * r + j`` becomes the sub-pixel ``(i, j)`` of
    channel ``c``, as ``torch.nn.functional.pixel_shuffle``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.pixel_shuffle(oxmera.arange(4.0).reshape(4, 1, 1), 2)
    tensor([[[0., 1.],
             [2., 3.]]], dtype=float32)
    """
    input = as_input(input, "pixel_shuffle")
    r = _check_factor("pixel_shuffle", "upscale_factor", upscale_factor)
    _check_ndim("pixel_shuffle", input)
    *batch, channels, height, width = input.shape
    if channels % (r * r):
        raise OpError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by "
                      f"the square of upscale_factor, but input.size(-3)={channels} is not "
                      f"divisible by {r * r}")
    n = len(batch)
    out = input.reshape(*batch, channels // (r * r), r, r, height, width)
    out = out.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return out.reshape(*batch, channels // (r * r), height * r, width * r)


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H * r, W * r)`` to ``(*, C * r * r, H, W)``: the inverse of ``pixel_shuffle``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.pixel_unshuffle(oxmera.arange(4.0).reshape(1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.], dtype=float32)
    """
    input = as_input(input, "pixel_unshuffle")
    r = _check_factor("pixel_unshuffle", "downscale_factor", downscale_factor)
    _check_ndim("pixel_unshuffle", input)
    *batch, channels, height, width = input.shape
    for name, size, axis in (("height", height, -2), ("width", width, -1)):
        if size % r:
            raise OpError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, "
                          f"but input.size({axis})={size} is not divisible by {r}")
    n = len(batch)
    out = input.reshape(*batch, channels, height // r, r, width // r, r)
    out = out.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return out.reshape(*batch, channels * r * r, height // r, width // r)


def channel_shuffle(input, groups):
    """Interleave the channels of ``(N, C, *)`` input from ``groups`` groups (ShuffleNet).

    Channel ``g * (C / groups) + k`` moves to ``k * groups + g``, as
    ``torch.nn.functional.channel_shuffle``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.channel_shuffle(oxmera.arange(6.0).reshape(1, 6, 1), 2).flatten()
    tensor([0., 3., 1., 4., 2., 5.], dtype=float32)
    """
    input = as_input(input, "channel_shuffle")
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool):
        raise TypeError(f"channel_shuffle(): groups must be an int, got {groups!r}")
    if groups <= 0:
        raise OpError(f"channel_shuffle(): number of groups to divide channels in must be "
                      f"positive. Value of groups:{groups}")
    _check_ndim("channel_shuffle", input)
    batch, channels, *rest = input.shape
    if channels % groups:
        raise OpError(f"channel_shuffle(): number of channels must be divisible by groups. Got "
                      f"{channels} channels and {groups} groups (input shape "
                      f"{tuple(input.shape)}).")
    out = input.reshape(batch, groups, channels // groups, *rest).transpose(1, 2)
    return out.reshape(batch, channels, *rest)


def native_channel_shuffle(input, groups):
    """``channel_shuffle`` (PyTorch's name for its kernel without the dispatch).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.native_channel_shuffle(oxmera.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.], dtype=float32)
    """
    return channel_shuffle(input, groups)


# -- affine_grid and grid_sample ----------------------------------------------------------

def _base_coordinates(size, align_corners):
    """PyTorch's ``linspace_from_neg_one``: pixel centres (or corners) in [-1, 1]."""
    if size <= 1:
        return np.zeros(size)
    steps = np.linspace(-1.0, 1.0, size)
    return steps if align_corners else steps * (size - 1) / size


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine maps ``theta``, for ``grid_sample``.

    ``theta`` is ``(N, 2, 3)`` for a 4-D ``size`` ``(N, C, H, W)`` (the grid is
    ``(N, H, W, 2)``, x then y) or ``(N, 3, 4)`` for a 5-D ``size`` (grid
    ``(N, D, H, W, 3)``). Coordinates are normalized to [-1, 1], at pixel
    centres unless ``align_corners``. Differentiable in ``theta``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> identity = oxmera.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> F.affine_grid(identity, (1, 1, 2, 2), align_corners=True)
    tensor([[[[-1., -1.],
              [ 1., -1.]],
    <BLANKLINE>
             [[-1.,  1.],
              [ 1.,  1.]]]], dtype=float32)
    """
    theta = as_input(theta, "affine_grid")
    align_corners = _align_corners_default(align_corners, "affine_grid")
    if theta.dtype.kind != "f":
        raise ValueError(f"affine_grid(): expected theta to have floating point type, but got "
                         f"{theta.dtype}")
    size = tuple(int(n) for n in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid(): only supports 4D and 5D sizes, for 2D and "
                                  f"3D affine transforms, respectively. Got size {size}.")
    nd = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1):
        raise ValueError(f"affine_grid(): expected a batch of {nd}D affine matrices of shape "
                         f"Nx{nd}x{nd + 1} for size {size}. Got {tuple(theta.shape)}.")
    if min(size) <= 0:
        raise ValueError(f"affine_grid(): expected non-zero, positive output size. Got {size}")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("affine_grid(): since version 1.3.0, affine_grid behavior has changed for "
                      "unit-size grids when align_corners=True (such a dim samples the "
                      "centre, 0). This is not an intended use case of affine_grid.",
                      stacklevel=2)
    if theta.shape[0] != size[0]:
        raise OpError(f"affine_grid(): theta's batch of {theta.shape[0]} does not match size "
                      f"{size}")
    spatial = size[2:]
    # Homogeneous coordinates (x, y[, z], 1) of every output position, x along the last dim.
    axes = np.meshgrid(*(_base_coordinates(n, align_corners) for n in spatial), indexing="ij")
    base = np.stack([*axes[::-1], np.ones(spatial)], axis=-1).reshape(-1, nd + 1)
    base = _creation.as_tensor(base.astype(theta.dtype))
    grid = matmul(base, theta.transpose(1, 2))
    return grid.reshape(size[0], *spatial, nd)


def _unnormalize(coordinate, size, align_corners):
    if align_corners:
        return (coordinate + 1) * ((size - 1) / 2)
    return ((coordinate + 1) * size - 1) / 2


def _reflect(coordinate, twice_low, twice_high):
    """PyTorch's ``reflect_coordinates``: fold ``coordinate`` into [low, high] by mirroring."""
    if twice_low == twice_high:
        return coordinate * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coordinate - low).abs()
    extra = remainder(distance, span)
    flips = np.floor(distance.detach().numpy() / span)
    return where(_creation.as_tensor(flips % 2 == 0), extra + low, span - extra + low)


def _source_coordinate(coordinate, size, padding_mode, align_corners):
    """A grid coordinate in input pixels, after the padding mode's border rule."""
    coordinate = _unnormalize(coordinate, size, align_corners)
    if padding_mode == "reflection":
        coordinate = (_reflect(coordinate, 0, 2 * (size - 1)) if align_corners
                      else _reflect(coordinate, -1, 2 * size - 1))
    if padding_mode != "zeros":
        coordinate = coordinate.clamp(0, size - 1)
    return coordinate


def _reflect_array(x, twice_low, twice_high):
    if twice_low == twice_high:
        return np.zeros_like(x)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = np.abs(x - low)
    extra, flips = np.fmod(distance, span), np.floor(distance / span)
    return np.where(flips % 2 == 0, extra + low, span - extra + low)


def _tap_coordinate(tap, size, padding_mode, align_corners):
    """``compute_coordinates`` of bicubic's integer taps: where each tap reads."""
    tap = tap.astype(np.float64)
    if padding_mode == "reflection":
        tap = (_reflect_array(tap, 0, 2 * (size - 1)) if align_corners
               else _reflect_array(tap, -1, 2 * size - 1))
    if padding_mode != "zeros":
        tap = np.clip(tap, 0, size - 1)
    return np.trunc(tap).astype(np.int64)


def _gather(flat, positions, spatial, batch, channels, out_shape):
    """``flat`` (N, C, prod(spatial)) at integer ``positions`` (one array per dim), 0 outside."""
    inside = np.ones(positions[0].shape, bool)
    linear = np.zeros(positions[0].shape, np.int64)
    for position, size in zip(positions, spatial):
        inside &= (position >= 0) & (position < size)
        linear = linear * size + np.clip(position, 0, size - 1)
    index = _creation.as_tensor(linear.reshape(batch, 1, -1)).expand(batch, channels, -1)
    values = flat.gather(2, index).reshape(batch, channels, *out_shape)
    return values, _creation.as_tensor(inside[:, None].astype(flat.dtype))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` ``(N, C, H, W)`` (or 5-D) at the points of ``grid`` ``(N, Ho, Wo, 2)``.

    ``grid`` holds normalized (x, y[, z]) in [-1, 1] (pixel centres unless
    ``align_corners``). ``mode``: ``'bilinear'`` (trilinear for 5-D input),
    ``'nearest'`` (ties to even, as PyTorch) or ``'bicubic'`` (4-D, A =
    -0.75); ``padding_mode``: ``'zeros'``, ``'border'`` or ``'reflection'``
    for points outside. Differentiable in ``input`` and (except ``'nearest'``)
    in ``grid``, to any order. The gradient of a point exactly on a border
    clamp is taken from inside (PyTorch takes 0 there).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
    >>> F.grid_sample(x, oxmera.tensor([[[[0.0, 0.0], [1.0, -1.0]]]]), align_corners=True)
    tensor([[[[1.5, 1. ]]]], dtype=float32)
    """
    input, grid = as_input(input, "grid_sample"), as_input(grid, "grid_sample", "grid")
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"grid_sample(): expected mode to be 'bilinear', 'nearest' or "
                         f"'bicubic', but got: {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: {padding_mode!r}")
    align_corners = _align_corners_default(align_corners, "grid_sample")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise OpError(f"grid_sample(): expected 4D or 5D input and grid with same number of "
                      f"dimensions, but got input with sizes {tuple(input.shape)} and grid with "
                      f"sizes {tuple(grid.shape)}")
    nd = input.ndim - 2
    if grid.shape[-1] != nd:
        raise OpError(f"grid_sample(): expected grid to have size {nd} in last dimension, but "
                      f"got grid with sizes {tuple(grid.shape)}")
    if grid.shape[0] != input.shape[0]:
        raise OpError(f"grid_sample(): expected grid and input to have same batch size, but got "
                      f"input with sizes {tuple(input.shape)} and grid with sizes "
                      f"{tuple(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise OpError("grid_sample(): bicubic interpolation only supports 4D input")
    if 0 in input.shape[2:]:
        raise OpError(f"grid_sample(): expected input to have non-empty spatial dimensions, but "
                      f"input has sizes {tuple(input.shape)}")
    if input.dtype.kind != "f" or grid.dtype.kind != "f":
        raise TypeError(f"grid_sample(): expected floating point input and grid, got "
                        f"{input.dtype} and {grid.dtype}")
    batch, channels, *spatial = input.shape
    out_shape = tuple(grid.shape[1:-1])
    flat = input.reshape(batch, channels, -1)
    # grid[..., 0] is x (the last spatial dim), grid[..., 1] y, grid[..., 2] z.
    raw = [grid[..., nd - 1 - i] for i in range(nd)]
    if mode == "bicubic":
        coordinates = [_unnormalize(c, n, align_corners) for c, n in zip(raw, spatial)]
    else:
        coordinates = [_source_coordinate(c, n, padding_mode, align_corners)
                       for c, n in zip(raw, spatial)]
    values = [c.detach().numpy() for c in coordinates]
    if mode == "nearest":
        out, inside = _gather(flat, [np.rint(v).astype(np.int64) for v in values], spatial,
                              batch, channels, out_shape)
        return out * inside
    lower = [np.floor(v) for v in values]
    # The fractional positions carry the gradient with respect to the grid.
    fractions = [(c - _creation.as_tensor(lo.astype(c.dtype))).unsqueeze(1)
                 for c, lo in zip(coordinates, lower)]
    lower = [lo.astype(np.int64) for lo in lower]
    if mode == "bilinear":
        weights = [((1 - t), t) for t in fractions]
        offsets = (0, 1)
    else:
        weights = [_cubic_coefficients(t) for t in fractions]
        offsets = (-1, 0, 1, 2)
    out = None
    for taps in itertools.product(range(len(offsets)), repeat=nd):
        positions = [lo + offsets[k] for lo, k in zip(lower, taps)]
        if mode == "bicubic":
            positions = [_tap_coordinate(p, n, padding_mode, align_corners)
                         for p, n in zip(positions, spatial)]
        gathered, inside = _gather(flat, positions, spatial, batch, channels, out_shape)
        term = gathered * inside
        for dim_weights, k in zip(weights, taps):
            term = term * dim_weights[k]
        out = term if out is None else out + term
    return out
