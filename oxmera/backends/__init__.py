"""``oxmera.backends``: PyTorch's ``torch.backends`` switches, for programs that set them.

oxmera computes on the CPU with NumPy: cuDNN, CUDA and MPS do not exist
here. Their ``is_available()`` say so (False), and their settings
(``cudnn.deterministic``, ``cudnn.benchmark``, ``cudnn.enabled``,
``cuda.matmul.allow_tf32`` ...) are plain attributes, set and read back as
in PyTorch, that change nothing.

Examples
--------
>>> import oxmera
>>> oxmera.backends.cudnn.deterministic = True
>>> oxmera.backends.cudnn.is_available(), oxmera.backends.mps.is_available()
(False, False)
>>> oxmera.backends.cudnn.deterministic = False
"""
from oxmera.backends import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
