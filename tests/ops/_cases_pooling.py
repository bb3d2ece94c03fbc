"""Gradient cases and PyTorch comparisons of the ops of ``oxmera/ops/pooling.py``.

The ops: max_pool1d/3d, adaptive_max_pool1d/2d/3d and fractional_max_pool2d/3d
(each ``(values, indices)``), and max_unpool. None takes a 0-d input
(test_registry's CANNOT_TAKE). Max pooling uses the ``distinct`` domain so no window holds a
tie (a kink, where finite differences mean nothing); ties and NaN are tested
against torch in ``tests/nn/test_pooling.py``, as are the functions composed
of these ops and ``avg_pool2d`` (whose gradient cases are in
``tests/nn/_gradient_cases.py``).
"""
import numpy as np

import oxmera
from oxmera.ops.pooling import (_adaptive_max_pool1d_op, _adaptive_max_pool2d_op,
                                _adaptive_max_pool3d_op, _fractional_max_pool2d_op,
                                _fractional_max_pool3d_op, _max_pool1d_op, _max_pool3d_op,
                                max_unpool)

from ._case_table import S, T, Leaf, add_cases, add_torch_cases


def _values(pool):
    return lambda *args, **kwargs: pool(*args, **kwargs).values


# -- max_pool1d / max_pool3d ---------------------------------------------------------------------

_mp1 = _values(_max_pool1d_op)
_mp3 = _values(_max_pool3d_op)

add_cases(
    "max_pool1d",
    ("kernel-2", lambda x: _mp1(x, 2), (Leaf((2, 2, 6), "distinct"),)),
    ("overlapping-padding", lambda x: _mp1(x, 3, 1, 1), (Leaf((1, 2, 5), "distinct"),)),
    ("dilation-ceil", lambda x: _mp1(x, 2, 2, 1, 2, True), (Leaf((1, 1, 6), "distinct"),)),
    ("unbatched", lambda x: _mp1(x, 2, 1), (Leaf((3, 4), "distinct"),)),
    ("size-0", lambda x: _mp1(x, 2), (Leaf((0, 2, 4)),)),
    ("transposed", lambda x: _mp1(x, 2, 1), (T((2, 3, 4), "distinct"),)),
)
add_cases(
    "max_pool3d",
    ("kernel-2", lambda x: _mp3(x, 2), (Leaf((1, 2, 2, 4, 4), "distinct"),)),
    ("overlapping-padding-ceil", lambda x: _mp3(x, (2, 3, 2), (1, 2, 1), (1, 1, 0),
                                                ceil_mode=True),
     (Leaf((1, 1, 3, 4, 3), "distinct"),)),
    ("dilation", lambda x: _mp3(x, 2, 1, 0, (1, 2, 1)), (Leaf((1, 1, 3, 4, 3), "distinct"),)),
    ("unbatched", lambda x: _mp3(x, (1, 2, 2)), (Leaf((2, 2, 2, 4), "distinct"),)),
    ("size-0", lambda x: _mp3(x, 2), (Leaf((0, 1, 2, 2, 2)),)),
    ("strided", lambda x: _mp3(x, 2, 1), (S((1, 1, 2, 3, 3), "distinct"),)),
)

# -- adaptive max pooling ------------------------------------------------------------------------

_amp1 = _values(_adaptive_max_pool1d_op)
_amp2 = _values(_adaptive_max_pool2d_op)
_amp3 = _values(_adaptive_max_pool3d_op)

add_cases(
    "adaptive_max_pool1d",
    ("divides", lambda x: _amp1(x, 3), (Leaf((2, 2, 6), "distinct"),)),
    ("overlapping", lambda x: _amp1(x, 4), (Leaf((1, 2, 7), "distinct"),)),
    ("larger", lambda x: _amp1(x, 5), (Leaf((2, 3), "distinct"),)),
    ("size-0", lambda x: _amp1(x, 2), (Leaf((0, 2, 4)),)),
    ("transposed", lambda x: _amp1(x, 3), (T((2, 3, 5), "distinct"),)),
)
add_cases(
    "adaptive_max_pool2d",
    ("uneven", lambda x: _amp2(x, (2, 3)), (Leaf((2, 2, 5, 4), "distinct"),)),
    ("keep-width", lambda x: _amp2(x, (2, None)), (Leaf((2, 3, 4), "distinct"),)),
    ("size-0", lambda x: _amp2(x, 2), (Leaf((0, 2, 3, 3)),)),
    ("strided", lambda x: _amp2(x, 2), (S((1, 2, 3, 3), "distinct"),)),
)
add_cases(
    "adaptive_max_pool3d",
    ("uneven", lambda x: _amp3(x, (2, 1, 3)), (Leaf((1, 2, 3, 2, 4), "distinct"),)),
    ("unbatched", lambda x: _amp3(x, 2), (Leaf((2, 3, 3, 3), "distinct"),)),
    ("size-0", lambda x: _amp3(x, 1), (Leaf((0, 1, 2, 2, 2)),)),
    ("transposed", lambda x: _amp3(x, (1, 2, 2)), (T((1, 2, 2, 3, 3), "distinct"),)),
)

# -- fractional max pooling ----------------------------------------------------------------------

_fmp2 = _values(_fractional_max_pool2d_op)
_fmp3 = _values(_fractional_max_pool3d_op)
# One sample per plane and dim, fixed (the op takes them; F draws them).
_SAMPLES = np.random.default_rng(11).random((2, 3, 3))

add_cases(
    "fractional_max_pool2d",
    ("overlapping", lambda x: _fmp2(x, 2, (3, 4), _SAMPLES[:2, :2, :2]),
     (Leaf((2, 2, 5, 6), "distinct"),)),
    ("unbatched", lambda x: _fmp2(x, (2, 1), 2, _SAMPLES[:1, :3, :2]),
     (Leaf((3, 4, 3), "distinct"),)),
    ("size-0", lambda x: _fmp2(x, 2, 2, _SAMPLES[:0, :2, :2]), (Leaf((0, 2, 3, 3)),)),
    ("transposed", lambda x: _fmp2(x, 2, 2, _SAMPLES[:2, :2, :2]),
     (T((2, 2, 4, 4), "distinct"),)),
)
add_cases(
    "fractional_max_pool3d",
    ("overlapping", lambda x: _fmp3(x, 2, (2, 3, 2), _SAMPLES[:1, :2]),
     (Leaf((1, 2, 4, 5, 4), "distinct"),)),
    ("size-0", lambda x: _fmp3(x, 1, 1, _SAMPLES[:0, :1]), (Leaf((0, 1, 2, 2, 2)),)),
    ("strided", lambda x: _fmp3(x, (1, 2, 2), 2, _SAMPLES[:1, :2]),
     (S((2, 3, 4, 4), "distinct"),)),
)

# -- max_unpool ------------------------------------------------------------------------------------

# Indices as max pooling returns them, flat per output volume, none repeated
# within a plane (a repeated index keeps only its last value: no derivative
# for the others, while the gradient, as PyTorch's, gathers for all).
_INDICES_1D = np.array([[[1, 2, 5], [0, 4, 3]], [[6, 0, 2], [3, 5, 1]]])
_INDICES_2D = np.array([[[[5, 0], [7, 10]]], [[[1, 3], [8, 11]]]])

add_cases(
    "max_unpool",
    ("1d", lambda x: max_unpool(x, _INDICES_1D, (7,)), (Leaf((2, 2, 3)),)),
    ("2d-unbatched", lambda x: max_unpool(x, _INDICES_2D[1], (3, 4)), (Leaf((1, 2, 2)),)),
    ("3d", lambda x: max_unpool(x, _INDICES_2D[:, :, None], (2, 2, 3)), (Leaf((2, 1, 1, 2, 2)),)),
    ("size-0", lambda x: max_unpool(x, _INDICES_2D[:0], (3, 4)), (Leaf((0, 1, 2, 2)),)),
    ("transposed", lambda x: max_unpool(x, _INDICES_1D, (7,)), (T((2, 2, 3)),)),
)

# -- PyTorch comparisons ---------------------------------------------------------------------------


def _indices(lib, indices):
    return oxmera.tensor(indices) if lib is oxmera else lib.from_numpy(indices)


def _f(lib, name):
    """``F.<name>`` (ours from the pooling module, the op's public wrapper) or torch's."""
    return getattr(lib.nn.functional, name)


add_torch_cases(
    "max_pool1d",
    ("padding-dilation-ceil", lambda lib, x: _f(lib, "max_pool1d")(
        x, 3, 2, 1, dilation=2, ceil_mode=True, return_indices=True),
     (Leaf((2, 3, 9), "distinct"),)),
    ("unbatched", lambda lib, x: _f(lib, "max_pool1d")(x, 2, 1, return_indices=True),
     (Leaf((3, 6), "distinct"),)),
)
add_torch_cases(
    "max_pool3d",
    ("padding-ceil", lambda lib, x: _f(lib, "max_pool3d")(
        x, (3, 2, 2), (2, 1, 2), (1, 1, 0), ceil_mode=True, return_indices=True),
     (Leaf((2, 2, 5, 4, 5), "distinct"),)),
    ("dilation-unbatched", lambda lib, x: _f(lib, "max_pool3d")(
        x, 2, 1, dilation=(2, 1, 2), return_indices=True),
     (Leaf((2, 4, 3, 4), "distinct"),)),
)
add_torch_cases(
    "adaptive_max_pool1d",
    ("overlapping", lambda lib, x: _f(lib, "adaptive_max_pool1d")(x, 4, True),
     (Leaf((2, 3, 7), "distinct"),)),
    ("larger-unbatched", lambda lib, x: _f(lib, "adaptive_max_pool1d")(x, 5, True),
     (Leaf((2, 3), "distinct"),)),
)
add_torch_cases(
    "adaptive_max_pool2d",
    ("uneven", lambda lib, x: _f(lib, "adaptive_max_pool2d")(x, (3, 2), True),
     (Leaf((2, 2, 7, 5), "distinct"),)),
    ("none-unbatched", lambda lib, x: _f(lib, "adaptive_max_pool2d")(x, (None, 3), True),
     (Leaf((2, 4, 5), "distinct"),)),
)
add_torch_cases(
    "adaptive_max_pool3d",
    ("uneven", lambda lib, x: _f(lib, "adaptive_max_pool3d")(x, (2, 3, 2), True),
     (Leaf((2, 2, 3, 5, 4), "distinct"),)),
)


def _unpool(lib, x, indices, output_size, kernel_size, stride=None):
    """``max_unpool`` against PyTorch's ``max_unpool<n>d`` (with a geometry giving that size)."""
    if lib is oxmera:
        return max_unpool(x, _indices(lib, indices), output_size)
    unpool = getattr(lib.nn.functional, f"max_unpool{len(output_size)}d")
    return unpool(x, _indices(lib, indices), kernel_size, stride, output_size=output_size)


add_torch_cases(
    "max_unpool",
    ("1d", lambda lib, x: _unpool(lib, x, _INDICES_1D, (7,), 3, 2), (Leaf((2, 2, 3)),)),
    # repeated indices: the last value wins, the gradient gathers for each
    ("2d-repeated", lambda lib, x: _unpool(lib, x, _INDICES_2D % 2, (3, 4), 2),
     (Leaf((2, 1, 2, 2)),)),
    ("3d-unbatched", lambda lib, x: _unpool(lib, x, _INDICES_2D[:, :, None][0], (2, 2, 3),
                                            (2, 1, 2)),
     (Leaf((1, 1, 2, 2)),)),
)


def _fractional(lib, nd, x, kernel_size, output_size, samples):
    samples = oxmera.tensor(samples) if lib is oxmera else lib.from_numpy(samples)
    pool = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
    return pool(x, kernel_size, output_size, return_indices=True, _random_samples=samples)


add_torch_cases(
    "fractional_max_pool2d",
    ("batched", lambda lib, x: _fractional(lib, 2, x, (3, 2), (4, 5), _SAMPLES[:, :, :2]),
     (Leaf((2, 3, 9, 8), "distinct"),)),
    ("unbatched", lambda lib, x: _fractional(lib, 2, x, 2, 3, _SAMPLES[:1, :, :2]),
     (Leaf((3, 5, 7), "distinct"),)),
)
add_torch_cases(
    "fractional_max_pool3d",
    ("batched", lambda lib, x: _fractional(lib, 3, x, (2, 3, 2), (3, 2, 4), _SAMPLES),
     (Leaf((2, 3, 5, 6, 7), "distinct"),)),
)
