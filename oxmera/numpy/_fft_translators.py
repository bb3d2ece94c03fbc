"""``numpy.fft`` functions as translators onto ``oxmera.fft`` (NumPy's argument names).

Registered in ``oxmera.ops.interop``'s table, so ``np.fft.rfft(t)`` (through
``Tensor.__array_function__``) and ``oxmera.numpy.fft.rfft(t)`` both run
them: ``axis``/``axes`` -> ``dim``, ``n``/``s`` and ``norm`` as they are.
NumPy's dtypes hold: integer and bool inputs transform as float64, float16 as
float32 (NumPy's pocketfft has no half precision; PyTorch's CPU FFT refuses
it), so ``np.fft.fft`` of an int array and ``onp.fft.fft`` of an int tensor
are both complex128.
"""
import numpy as np

from oxmera.ops import interop as _interop

_implements = _interop._implements


def _fft():
    import oxmera
    return oxmera.fft


def _input(a):
    t = _interop._tensor(a)
    if t.dtype.kind in "biu":
        return t.to(np.float64)
    if t.dtype == np.float16:
        return t.to(np.float32)
    return t


def _one_dim(name):
    numpy_name = f"numpy.fft.{name}"

    def translator(a, n=None, axis=-1, norm=None, out=None):
        _interop._check_out(out, numpy_name)
        return getattr(_fft(), name)(_input(a), n=n, dim=axis, norm=norm)
    translator.__name__ = f"_np_fft_{name}"
    return translator


def _n_dim(name, default_axes):
    numpy_name = f"numpy.fft.{name}"

    def translator(a, s=None, axes=default_axes, norm=None, out=None):
        _interop._check_out(out, numpy_name)
        return getattr(_fft(), name)(_input(a), s=s, dim=axes, norm=norm)
    translator.__name__ = f"_np_fft_{name}"
    return translator


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    _implements(f"fft.{_name}")(_one_dim(_name))
for _name in ("fft2", "ifft2", "rfft2", "irfft2"):
    _implements(f"fft.{_name}")(_n_dim(_name, (-2, -1)))
for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    _implements(f"fft.{_name}")(_n_dim(_name, None))


def _shift(name):
    def translator(x, axes=None):
        return getattr(_fft(), name)(_interop._tensor(x), dim=axes)
    translator.__name__ = f"_np_fft_{name}"
    return translator


_implements("fft.fftshift")(_shift("fftshift"))
_implements("fft.ifftshift")(_shift("ifftshift"))


def _frequencies(name):
    # Reached with a tensor spacing ``d`` (an integer n alone runs NumPy):
    # the frequencies for spacing 1, in float64 as NumPy's, divided by d, so
    # the gradient reaches d.
    def translator(n, d=1.0, device=None):
        from oxmera._device import check_cpu
        check_cpu(f"numpy.fft.{name}", device)
        return getattr(_fft(), name)(int(n), dtype=np.float64) / d
    translator.__name__ = f"_np_fft_{name}"
    return translator


_implements("fft.fftfreq")(_frequencies("fftfreq"))
_implements("fft.rfftfreq")(_frequencies("rfftfreq"))
