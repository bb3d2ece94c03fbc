"""Gradient and PyTorch cases of ``oxmera.fft`` (the ops ``fft_c2c``, ``fft_r2c``,
``fft_c2r`` and ``fft_resize`` behind every transform); see ``_case_table``.

Each transform is checked under the three norms, with ``n``/``s`` cutting and
padding, over chosen dims, on non-contiguous and size-0 (batch) inputs.
"""
import oxmera

from ._case_table import C, Leaf, S, T, add_cases, add_torch_cases

fft = oxmera.fft


def _both(name, label, fn, inputs, torch_fn=None):
    """A gradient case, and the same call compared with PyTorch (``fn(lib.fft, ...)``);
    size-0 inputs only the first (PyTorch's MKL FFT fails on an empty batch)."""
    add_cases(name, (label, lambda *xs: fn(fft, *xs), inputs))
    if "size0" in label:
        return
    add_torch_cases(name, (label, (lambda lib, *xs: fn(lib.fft, *xs).resolve_conj())
                           if torch_fn is None else torch_fn, inputs))


for _norm in (None, "ortho", "forward"):
    _n = _norm or "default"
    _both("fft_c2c", f"fft-{_n}", lambda f, x, norm=_norm: f.fft(x, norm=norm), (C((2, 5)),))
    _both("fft_c2c", f"ifft-n-{_n}", lambda f, x, norm=_norm: f.ifft(x, n=7, norm=norm),
          (C((5,)),))
    _both("fft_c2c", f"fftn-real-{_n}", lambda f, x, norm=_norm: f.fftn(x, norm=norm),
          (Leaf((3, 4)),))
    _both("fft_r2c", f"rfft-{_n}", lambda f, x, norm=_norm: f.rfft(x, norm=norm), (Leaf((3, 6)),))
    _both("fft_r2c", f"ihfft-{_n}", lambda f, x, norm=_norm: f.ihfft(x, norm=norm), (Leaf((5,)),))
    _both("fft_c2r", f"irfft-{_n}", lambda f, x, norm=_norm: f.irfft(x, norm=norm), (C((2, 4)),))
    _both("fft_c2r", f"irfft-odd-{_n}", lambda f, x, norm=_norm: f.irfft(x, n=7, norm=norm),
          (C((4,)),))
    _both("fft_c2r", f"hfft-{_n}", lambda f, x, norm=_norm: f.hfft(x, norm=norm), (C((4,)),))

_both("fft_c2c", "fft2-transposed", lambda f, x: f.fft2(x), (C((3, 4), layout="transposed"),))
_both("fft_c2c", "ifftn-s-dim", lambda f, x: f.ifftn(x, s=(3, 2), dim=(2, 0)), (C((2, 3, 4)),))
_both("fft_c2c", "fft-size0-batch", lambda f, x: f.fft(x), (C((0, 4)),))
_both("fft_c2c", "fft-strided-real", lambda f, x: f.fft(x, dim=0), (S((3, 4)),))
_both("fft_r2c", "rfft2-transposed", lambda f, x: f.rfft2(x), (T((4, 5)),))
_both("fft_r2c", "rfftn-s", lambda f, x: f.rfftn(x, s=(2, 6)), (Leaf((3, 4)),))
_both("fft_r2c", "ihfft2-strided", lambda f, x: f.ihfft2(x), (S((3, 4)),))
_both("fft_r2c", "rfft-size0-batch", lambda f, x: f.rfft(x), (Leaf((0, 4)),))
_both("fft_c2r", "irfft2-transposed", lambda f, x: f.irfft2(x), (C((4, 3), layout="transposed"),))
_both("fft_c2r", "irfftn-s-dim", lambda f, x: f.irfftn(x, s=(3, 5), dim=(0, 2)),
      (C((2, 3, 4)),))
_both("fft_c2r", "hfftn-strided", lambda f, x: f.hfftn(x), (C((3, 4), layout="strided"),))
_both("fft_c2r", "hfft2", lambda f, x: f.hfft2(x, s=(2, 4)), (C((2, 3)),))
_both("fft_c2r", "irfft-size0-batch", lambda f, x: f.irfft(x), (C((0, 3)),))
_both("fft_c2r", "irfft-real-input", lambda f, x: f.irfft(x), (Leaf((2, 4)),))
_both("fft_resize", "fft-n-pad", lambda f, x: f.fft(x, n=6), (C((2, 4)),))
_both("fft_resize", "fft-n-cut", lambda f, x: f.fft(x, n=3), (Leaf((2, 4)),))
_both("fft_resize", "fftn-s-both", lambda f, x: f.fftn(x, s=(2, 6)), (C((3, 4), layout="strided"),))
_both("fft_resize", "irfft-long-input", lambda f, x: f.irfft(x, n=4), (C((6,)),))
_both("fft_resize", "size0-batch", lambda f, x: f.fft(x, n=5), (C((0, 3)),))
_both("fft_c2c", "fftshift", lambda f, x: f.fftshift(f.fft(x)), (C((3, 4)),))
_both("fft_c2c", "ifftshift-dim", lambda f, x: f.ifftshift(f.ifft(x), dim=1), (C((3, 5)),))
