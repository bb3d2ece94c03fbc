"""``oxmera.backends.cuda``: CUDA's switches; oxmera has no CUDA.

``matmul.allow_tf32`` (False), ``matmul.allow_fp16_reduced_precision_reduction``
and ``matmul.allow_bf16_reduced_precision_reduction`` (True) can be set and
read back as in PyTorch, and change no result: oxmera's matrix products are
NumPy's, in the dtype of their inputs. As in PyTorch, ``allow_tf32`` is
another view of ``oxmera.get_float32_matmul_precision()``: True unless the
precision is ``"highest"``; setting it sets the precision to ``"high"`` or
``"highest"``. An unknown attribute of ``matmul`` is an AttributeError.

Examples
--------
>>> import oxmera
>>> oxmera.backends.cuda.matmul.allow_tf32
False
>>> oxmera.backends.cuda.is_built()
False
"""
from oxmera import _settings

__all__ = ["is_built", "matmul"]


def is_built():
    """False: oxmera is not built with CUDA.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.backends.cuda.is_built()
    False
    """
    return False


class _Matmul:
    """PyTorch's ``torch.backends.cuda.matmul``: settings recorded, none with an effect."""

    __slots__ = ("allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self):
        return _settings.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        _settings.set_float32_matmul_precision("high" if value else "highest")

    def __repr__(self):
        return "<oxmera.backends.cuda.matmul>"


matmul = _Matmul()
