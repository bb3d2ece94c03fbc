"""Discrete Fourier transforms: the ops behind ``oxmera.fft`` (as ``torch.fft``).

Four recorded ops carry every transform, all linear, so each VJP is the
adjoint transform, itself written with these ops (differentiable to any
order):

- ``fft_c2c``: complex to complex over some dims (forward or inverse). The
  adjoint of the forward DFT is the inverse one without its ``1/n``, which
  is the inverse transform under the *dual* norm (``"backward"`` and
  ``"forward"`` swap, ``"ortho"`` stays).
- ``fft_r2c``: real to the Hermitian half (``rfftn``): the first ``n//2 + 1``
  entries of the last dim. Adjoint: zero-pad the gradient back to ``n``,
  inverse c2c under the dual norm, real part (the input is real).
- ``fft_c2r``: Hermitian half to real (``irfftn``). Adjoint: ``rfftn`` of the
  gradient under the dual norm, the entries that stand for two (``k`` and
  ``n - k``, ``0 < k < n/2``) doubled, as PyTorch's backward does.
- ``fft_resize``: ``n``/``s``: trim or zero-pad dims (adjoint: the reverse).

Real inputs of the complex transforms are cast to complex first (a recorded
cast, whose gradient is the real part, PyTorch's rule); integers become the
default float first. float16 is refused, as PyTorch's CPU FFT does.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _utils
from oxmera.ops.complex import conj, real

__all__ = []

Tensor = _core.Tensor
_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


# -- the recorded ops ------------------------------------------------------------------------

@op(save=())
def fft_resize(input, dims, sizes):
    """``input`` with each of ``dims`` cut or zero-padded (at the end) to ``sizes``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.fft import fft_resize
    >>> fft_resize(oxmera.tensor([1.0, 2.0, 3.0]), (0,), (5,))
    tensor([1., 2., 3., 0., 0.], dtype=float32)
    """
    shape = list(input.shape)
    for d, n in zip(dims, sizes):
        shape[d] = n
    out = np.zeros(shape, input.dtype)
    common = tuple(slice(0, min(a, b)) for a, b in zip(input.shape, shape))
    out[common] = input[common]
    return out


@fft_resize.vjp
def _(ctx, grad, input, dims, sizes):
    shape = ctx.input_shape(0)
    return fft_resize(grad, dims, tuple(shape[d] for d in dims))


@op(save=())
def fft_c2c(input, dims, norm, forward):
    """The complex DFT of ``input`` over ``dims`` (``forward`` False: the inverse).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.fft import fft_c2c
    >>> fft_c2c(oxmera.tensor([1.0 + 0j, 1.0]), (0,), "backward", True)
    tensor([2.+0.j, 0.+0.j], dtype=complex64)
    """
    transform = np.fft.fftn if forward else np.fft.ifftn
    return np.asarray(transform(input, axes=dims, norm=norm), dtype=input.dtype)


@fft_c2c.vjp
def _(ctx, grad, input, dims, norm, forward):
    return fft_c2c(grad, dims, _DUAL[norm], not forward)


@op(save=())
def fft_r2c(input, dims, norm):
    """The DFT of real ``input`` over ``dims``, the last of them halved (``n//2 + 1``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.fft import fft_r2c
    >>> fft_r2c(oxmera.tensor([1.0, 2.0, 3.0, 4.0]), (0,), "backward")
    tensor([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    return np.asarray(np.fft.rfftn(input, axes=dims, norm=norm),
                      dtype=_utils.complex_of(input.dtype))


@fft_r2c.vjp
def _(ctx, grad, input, dims, norm):
    shape = ctx.input_shape(0)
    full = fft_resize(grad, dims[-1:], (shape[dims[-1]],))
    return real(fft_c2c(full, dims, _DUAL[norm], False))


@op(save=())
def fft_c2r(input, dims, norm, n):
    """The real inverse DFT over ``dims`` of the Hermitian half ``input`` (whose last dim
    is ``n//2 + 1`` long), ``n`` long in the last dim.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.fft import fft_c2r
    >>> fft_c2r(oxmera.tensor([10 + 0j, -2 + 2j, -2 + 0j]), (0,), "backward", 4)
    tensor([1., 2., 3., 4.], dtype=float32)
    """
    s = [input.shape[d] for d in dims[:-1]] + [n]
    return np.asarray(np.fft.irfftn(input, s=s, axes=dims, norm=norm),
                      dtype=_utils.real_of(input.dtype))


@fft_c2r.vjp
def _(ctx, grad, input, dims, norm, n):
    half = fft_r2c(grad, dims, _DUAL[norm])
    # Entries 1 .. (n - 1) // 2 stand for themselves and their mirror n - k.
    last = dims[-1]
    weights = np.ones(n // 2 + 1)
    weights[1:(n - 1) // 2 + 1] = 2.0
    shape = [1] * half.ndim
    shape[last] = n // 2 + 1
    return half * _core._wrap(weights.reshape(shape).astype(_utils.real_of(half.dtype)))


# -- argument handling -----------------------------------------------------------------------

def _check_input(input, opname, real_input=False):
    if not isinstance(input, Tensor):
        raise TypeError(f"fft.{opname}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    kind = input.dtype.kind
    if input.dtype == np.float16:
        raise RuntimeError(f"fft.{opname}(): Unsupported dtype Half (oxmera's FFT, as "
                           f"PyTorch's on the CPU, takes float32 and float64)")
    if real_input and kind == "c":
        raise RuntimeError(f"{opname} expects a real input tensor, but got {input.dtype}")
    if kind in "biu":
        input = input.to(_core.get_default_dtype())
    return input


def _as_complex(input):
    return input if input.dtype.kind == "c" else input.to(_utils.complex_of(input.dtype))


def _dims_and_sizes(input, s, dim, opname):
    """PyTorch's reading of ``s`` and ``dim``: the dims transformed (unique, in order) and
    the signal size along each (``-1`` or absent: the input's)."""
    ndim = input.ndim
    if dim is None:
        dims = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
        if s is not None and len(s) > ndim:
            raise RuntimeError(f"fft.{opname}(): Got shape with {len(s)} values but input "
                               f"tensor only has {ndim} dimensions.")
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_utils.normalize_dim(d, ndim, f"fft.{opname}") for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"fft.{opname}(): FFT dims must be unique, got {dim}")
        if s is not None and len(s) != len(dims):
            raise RuntimeError(f"fft.{opname}(): When given, dim and shape arguments must have "
                               f"the same length, got s={tuple(s)} and dim={tuple(dim)}")
    sizes = []
    for k, d in enumerate(dims):
        n = input.shape[d] if s is None or s[k] == -1 else int(s[k])
        if n < 1:
            raise RuntimeError(f"fft.{opname}(): Invalid number of data points ({n}) specified")
        sizes.append(n)
    return dims, tuple(sizes)


def _resized(input, dims, sizes):
    if all(input.shape[d] == n for d, n in zip(dims, sizes)):
        return input
    return fft_resize(input, dims, sizes)


def _one_dim(n, dim):
    return (None if n is None else (n,)), (dim,)


# -- the transforms --------------------------------------------------------------------------

def fftn(input, s=None, dim=None, norm=None):
    """The n-dimensional DFT over ``dim`` (all dims by default, or the last ``len(s)``),
    each cut or zero-padded to ``s``.

    ``norm``: ``"backward"`` (default; no scaling), ``"ortho"`` (``1/sqrt(n)``)
    or ``"forward"`` (``1/n``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.fftn(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[10.+0.j, -2.+0.j],
            [-4.+0.j,  0.+0.j]], dtype=complex64)
    """
    return _c2c(input, s, dim, norm, True, "fftn")


def ifftn(input, s=None, dim=None, norm=None):
    """The n-dimensional inverse DFT (``norm="backward"``, the default, scales by ``1/n``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.ifftn(oxmera.tensor([[10.0, -2.0], [-4.0, 0.0]]))
    tensor([[1.+0.j, 2.+0.j],
            [3.+0.j, 4.+0.j]], dtype=complex64)
    """
    return _c2c(input, s, dim, norm, False, "ifftn")


def _c2c(input, s, dim, norm, forward, opname):
    norm = _norm(norm)
    input = _check_input(input, opname)
    dims, sizes = _dims_and_sizes(input, s, dim, opname)
    x = _as_complex(_resized(input, dims, sizes))
    if not dims:
        return x
    return fft_c2c(x, dims, norm, forward)


def fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional DFT along ``dim``, the signal cut or zero-padded to ``n``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.fft(oxmera.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex64)
    """
    return _c2c(input, *_one_dim(n, dim), norm, True, "fft")


def ifft(input, n=None, dim=-1, norm=None):
    """The one-dimensional inverse DFT along ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.ifft(oxmera.tensor([10.0 + 0j, -2 + 2j, -2, -2 - 2j]))
    tensor([1.+0.j, 2.+0.j, 3.+0.j, 4.+0.j], dtype=complex64)
    """
    return _c2c(input, *_one_dim(n, dim), norm, False, "ifft")


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional DFT over ``dim`` (the last two by default).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.fft2(oxmera.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _c2c(input, s, dim, norm, True, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional inverse DFT over ``dim`` (the last two by default).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.ifft2(oxmera.tensor([[4.0, 0.0], [0.0, 0.0]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]], dtype=complex64)
    """
    return _c2c(input, s, dim, norm, False, "ifft2")


def rfftn(input, s=None, dim=None, norm=None):
    """The n-dimensional DFT of a real tensor, the last transformed dim halved to
    ``n//2 + 1`` entries (the others follow from Hermitian symmetry).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.rfftn(oxmera.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))
    tensor([[21.+0.j    , -3.+1.7321j],
            [-9.+0.j    ,  0.+0.j    ]], dtype=complex64)
    """
    return _r2c(input, s, dim, norm, "rfftn")


def _r2c(input, s, dim, norm, opname):
    norm = _norm(norm)
    input = _check_input(input, opname, real_input=True)
    dims, sizes = _dims_and_sizes(input, s, dim, opname)
    if not dims:
        raise RuntimeError(f"fft.{opname}(): must transform at least one axis")
    return fft_r2c(_resized(input, dims, sizes), dims, norm)


def rfft(input, n=None, dim=-1, norm=None):
    """The one-dimensional DFT of a real tensor: the ``n//2 + 1`` non-redundant entries.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.rfft(oxmera.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex64)
    """
    return _r2c(input, *_one_dim(n, dim), norm, "rfft")


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional DFT of a real tensor (the last dim halved).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.rfft2(oxmera.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _r2c(input, s, dim, norm, "rfft2")


def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`rfftn`: a real tensor from the Hermitian half.

    The output's last transformed dim is ``s[-1]`` long, by default
    ``2 * (m - 1)`` for an input of ``m`` there. The imaginary parts of the
    entries that must be real (0, and ``n/2`` for even ``n``) are ignored, so
    their gradient is real, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.irfftn(oxmera.tensor([[21.0 + 0j, -3 + 1.7320508j], [-9, 0]]), s=(2, 3))
    tensor([[1., 2., 3.],
            [4., 5., 6.]], dtype=float32)
    """
    return _c2r(input, s, dim, norm, "irfftn")


def _c2r(input, s, dim, norm, opname, conjugate=False):
    norm = _norm(norm)
    input = _check_input(input, opname)
    dims, sizes = _dims_and_sizes(input, s, dim, opname)
    if not dims:
        raise RuntimeError(f"fft.{opname}(): must transform at least one axis")
    last = dims[-1]
    if s is None or s[-1] == -1:
        n = 2 * (input.shape[last] - 1)
        if n < 1:
            raise RuntimeError(f"fft.{opname}(): Invalid number of data points ({n}) specified")
    else:
        n = sizes[-1]
    x = _as_complex(_resized(input, dims, sizes[:-1] + (n // 2 + 1,)))
    if conjugate:
        x = conj(x)
    return fft_c2r(x, dims, norm, n)


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`rfft`: ``n`` real values (default ``2 * (m - 1)``) from the
    ``m`` entries of a Hermitian half.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.irfft(oxmera.tensor([10.0 + 0j, -2 + 2j, -2]))
    tensor([1., 2., 3., 4.], dtype=float32)
    """
    return _c2r(input, *_one_dim(n, dim), norm, "irfft")


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """The inverse of :func:`rfft2`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.irfft2(oxmera.tensor([[4.0 + 0j, 0], [0, 0]]))
    tensor([[1., 1.],
            [1., 1.]], dtype=float32)
    """
    return _c2r(input, s, dim, norm, "irfft2")


def hfftn(input, s=None, dim=None, norm=None):
    """The n-dimensional DFT of a Hermitian-symmetric signal given by its half: a real
    result (``irfftn`` of the conjugate under the opposite norm).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.hfftn(oxmera.tensor([[1.0 + 0j, 2.0], [3.0, 4.0]]))
    tensor([[10., -2.],
            [-4.,  0.]], dtype=float32)
    """
    return _c2r(input, s, dim, _DUAL[_norm(norm)], "hfftn", conjugate=True)


def hfft(input, n=None, dim=-1, norm=None):
    """The DFT of a Hermitian-symmetric signal from its first half: ``n`` real values
    (default ``2 * (m - 1)``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.hfft(oxmera.tensor([1.0 + 0j, 2.0, 3.0]))
    tensor([ 8., -2.,  0., -2.], dtype=float32)
    """
    return _c2r(input, *_one_dim(n, dim), _DUAL[_norm(norm)], "hfft", conjugate=True)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional :func:`hfftn`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.hfft2(oxmera.tensor([[1.0 + 0j, 0.0], [0.0, 0.0]]))
    tensor([[1., 1.],
            [1., 1.]], dtype=float32)
    """
    return _c2r(input, s, dim, _DUAL[_norm(norm)], "hfft2", conjugate=True)


def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`hfftn`: the Hermitian half of the inverse DFT of a real
    tensor (``conj(rfftn(...))`` under the opposite norm).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.ihfftn(oxmera.tensor([[10.0, -2.0], [-4.0, 0.0]]))
    tensor([[1.-0.j, 2.-0.j],
            [3.-0.j, 4.-0.j]], dtype=complex64)
    """
    return conj(_r2c(input, s, dim, _DUAL[_norm(norm)], "ihfftn"))


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`hfft`: ``n//2 + 1`` entries from ``n`` real values.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.ihfft(oxmera.tensor([8.0, -2.0, 0.0, -2.0]))
    tensor([1.-0.j, 2.-0.j, 3.-0.j], dtype=complex64)
    """
    return conj(_r2c(input, *_one_dim(n, dim), _DUAL[_norm(norm)], "ihfft"))


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """The two-dimensional :func:`ihfftn`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.ihfft2(oxmera.ones(2, 2))
    tensor([[1.-0.j, 0.-0.j],
            [0.-0.j, 0.-0.j]], dtype=complex64)
    """
    return conj(_r2c(input, s, dim, _DUAL[_norm(norm)], "ihfft2"))


# -- frequencies and shifts ------------------------------------------------------------------

def _frequencies(opname, values, n, d, dtype, requires_grad):
    from oxmera.ops.creation import tensor
    if n < 0:
        raise RuntimeError(f"fft.{opname}(): n must be non-negative, got {n}")
    dtype = _core.get_default_dtype() if dtype is None else np.dtype(dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = values / (n * d)       # rfftfreq(0) is [nan], as in PyTorch
    return tensor(values, dtype=dtype, requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (n * d)``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.fftfreq(4)
    tensor([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    from oxmera._device import check_cpu
    check_cpu("fft.fftfreq()", device)
    values = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies("fftfreq", values.astype(np.float64), n, d, dtype, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of :func:`rfft` of ``n`` points: ``[0, 1, ..., n // 2] / (n * d)``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.rfftfreq(5, 0.5)
    tensor([0. , 0.4, 0.8], dtype=float32)
    """
    from oxmera._device import check_cpu
    check_cpu("fft.rfftfreq()", device)
    values = np.arange(0, n // 2 + 1, dtype=np.float64)
    return _frequencies("rfftfreq", values, n, d, dtype, requires_grad)


def _shift(input, dim, sign, opname):
    from oxmera.ops.shape import roll
    if not isinstance(input, Tensor):
        raise TypeError(f"fft.{opname}(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_utils.normalize_dim(d, input.ndim, f"fft.{opname}") for d in dims)
    if not dims:
        return roll(input, 0, 0) if input.ndim else input.clone()
    return roll(input, tuple(sign * (input.shape[d] // 2) for d in dims), dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the middle: roll each of ``dim`` (all by default) by
    ``n // 2``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.fftshift(oxmera.fft.fftfreq(5))
    tensor([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float32)
    """
    return _shift(input, dim, 1, "fftshift")


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: roll each of ``dim`` by ``-(n // 2)``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.fft.ifftshift(oxmera.fft.fftshift(oxmera.arange(5)))
    tensor([0, 1, 2, 3, 4], dtype=int64)
    """
    return _shift(input, dim, -1, "ifftshift")
