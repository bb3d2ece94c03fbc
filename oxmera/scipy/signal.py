"""``oxmera.scipy.signal``: ``convolve`` and ``correlate``, as ``scipy.signal``'s, differentiable.

One op, the N-dimensional full convolution (values from
``scipy.signal.convolve``, which picks the direct or the FFT method), with a
VJP that is the same op on the output gradient and the flipped other input,
cut to the input's shape: so gradients of every order work. The ``same``
and ``valid`` modes are slices of the full result and ``correlate`` is the
convolution with the flipped second input, so they are differentiable
through the slicing ops.

Both inputs must have the same number of dimensions, as in SciPy.
"""
import numpy as np

import oxmera
from oxmera.extend import op
from oxmera.ops.special import scipy_module
from oxmera.scipy._inputs import as_tensors

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")
_METHODS = ("auto", "direct", "fft")


@op("signal_convolve", inputs=2, promote=True, float_only=True)
def _convolve_full(in1, in2, method="auto"):
    """The recorded op behind ``oxmera.scipy.signal.convolve``: the full convolution.

    Inputs with no elements give zeros of the full shape ``n + m - 1`` per
    dimension (at least 0): the sum over no terms.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy.signal import _convolve_full
    >>> _convolve_full(oxmera.tensor([1.0, 2.0]), oxmera.tensor([1.0, 1.0]))
    tensor([1., 3., 2.], dtype=float32)
    """
    dtype = np.result_type(in1, in2)
    if np.ndim(in1) != np.ndim(in2):
        raise ValueError(f"in1 and in2 should have the same dimensionality, got shapes "
                         f"{np.shape(in1)} and {np.shape(in2)}")
    if np.size(in1) == 0 or np.size(in2) == 0:
        return np.zeros(tuple(max(n + m - 1, 0) for n, m in zip(np.shape(in1), np.shape(in2))),
                        dtype)
    out = scipy_module("signal", "convolve").convolve(in1, in2, mode="full", method=method)
    return np.asarray(out, dtype=dtype)


def _flip_all(x):
    return oxmera.flip(x, tuple(range(x.ndim))) if x.ndim else x


def _window(x, starts, shape):
    """``x[start:start + length, ...]`` per dimension."""
    return x[tuple(slice(s, s + n) for s, n in zip(starts, shape))]


def _input_gradient(grad, other, shape, method):
    # d(full)/d(input) pulled back: correlate grad with the other input ("valid")
    if other.numel() == 0 or 0 in tuple(shape):
        return oxmera.zeros(tuple(shape), dtype=grad.dtype)
    starts = [m - 1 for m in other.shape]
    return _window(_convolve_full(grad, _flip_all(other), method), starts, shape)


@_convolve_full.vjp
def _(ctx, grad, in1, in2, method="auto"):
    needs = ctx.needs_input_grad
    return (_input_gradient(grad, in2, in1.shape, method) if needs[0] else None,
            _input_gradient(grad, in1, in2.shape, method) if needs[1] else None)


def _check(name, mode, method, in1, in2):
    if mode not in _MODES:
        raise ValueError(f"{name}(): acceptable mode flags are 'valid', 'same', or 'full', "
                         f"got {mode!r}")
    if method not in _METHODS:
        raise ValueError(f"{name}(): acceptable method flags are 'auto', 'direct', or 'fft', "
                         f"got {method!r}")
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}(): in1 and in2 should have the same dimensionality, got shapes "
                         f"{tuple(in1.shape)} and {tuple(in2.shape)}")


def _cut(full, mode, shape1, shape2, name):
    """The ``mode`` part of the full result (SciPy's ``_centered`` and valid shapes)."""
    if mode == "full":
        return full
    if mode == "same":
        return _window(full, [(m - 1) // 2 for m in shape2], shape1)
    if all(m <= n for n, m in zip(shape1, shape2)):
        return _window(full, [m - 1 for m in shape2], [n - m + 1 for n, m in zip(shape1, shape2)])
    if all(n <= m for n, m in zip(shape1, shape2)):
        return _window(full, [n - 1 for n in shape1], [m - n + 1 for n, m in zip(shape1, shape2)])
    raise ValueError(f"{name}(): for 'valid' mode, one must be at least as large as the other "
                     f"in every dimension, got shapes {tuple(shape1)} and {tuple(shape2)}")


def convolve(in1, in2, mode="full", method="auto"):
    """The N-dimensional convolution of ``in1`` and ``in2``, as ``scipy.signal.convolve``.

    ``mode``: ``"full"`` (every overlap), ``"same"`` (``in1``'s shape,
    centred) or ``"valid"`` (only complete overlaps). ``method`` (``"auto"``,
    ``"direct"``, ``"fft"``) is SciPy's, for the forward and the VJP's
    convolutions. Differentiable
    in both inputs to any order. Unlike SciPy, an input with no elements
    gives zeros of the mode's shape (SciPy gives an empty vector).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import signal
    >>> signal.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    tensor([0. , 1. , 2.5, 4. , 1.5], dtype=float64)
    >>> signal.convolve([1.0, 2.0, 3.0], [0.0, 1.0, 0.5], mode="same")
    tensor([1. , 2.5, 4. ], dtype=float64)
    >>> x = oxmera.tensor([1.0, 2.0, 3.0], dtype=oxmera.float64, requires_grad=True)
    >>> signal.convolve(x, [1.0, -1.0], mode="valid").sum().backward()
    >>> x.grad
    tensor([-1.,  0.,  1.], dtype=float64)
    """
    in1, in2 = as_tensors("convolve", in1, in2)
    _check("convolve", mode, method, in1, in2)
    return _cut(_convolve_full(in1, in2, method), mode, in1.shape, in2.shape, "convolve")


def correlate(in1, in2, mode="full", method="auto"):
    """The N-dimensional cross-correlation of ``in1`` and ``in2``, as ``scipy.signal.correlate``.

    ``z[k] = sum over l of in1[l] * in2[l - k + N - 1]`` (``N`` = ``in2``'s
    length per dimension): the convolution with ``in2`` reversed. ``mode``
    as in :func:`convolve`. Differentiable in both inputs to any order.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import signal
    >>> signal.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5])
    tensor([0.5, 2. , 3.5, 3. , 0. ], dtype=float64)
    >>> signal.correlate([1.0, 2.0, 3.0], [0.0, 1.0, 0.5], mode="valid")
    tensor([3.5], dtype=float64)
    """
    in1, in2 = as_tensors("correlate", in1, in2)
    _check("correlate", mode, method, in1, in2)
    if mode == "valid" and not all(m <= n for n, m in zip(in1.shape, in2.shape)):
        # SciPy swaps the inputs (and so reverses the result) when in2 is larger
        return _flip_all(correlate(in2, in1, mode, method))
    return _cut(_convolve_full(in1, _flip_all(in2), method), mode, in1.shape, in2.shape,
                "correlate")
