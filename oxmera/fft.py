"""``oxmera.fft``: discrete Fourier transforms, as ``torch.fft``.

The transforms are differentiable to any order (their VJPs are the adjoint
transforms, see ``oxmera.ops.fft``); the real-input ones (``rfft``, ``ihfft``)
and the real-output ones (``irfft``, ``hfft``) handle the Hermitian halves'
gradients as PyTorch does. Values are NumPy's (``numpy.fft``).
"""
from oxmera.ops.fft import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2,
                            ifftn, ifftshift, ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn, rfft,
                            rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]
