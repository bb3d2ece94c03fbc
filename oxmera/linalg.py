"""``oxmera.linalg``: norm, vector_norm, matrix_norm, inv, det, solve, svdvals, multi_dot
(as ``torch.linalg``).

The ops live in ``oxmera.ops.linalg``; this namespace only re-exports them.
"""
from oxmera.ops.blas import multi_dot
from oxmera.ops.construction import linalg_cross as cross
from oxmera.ops.linalg import det, inv, matrix_norm, norm, solve, svdvals, vector_norm

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "det", "solve", "svdvals", "cross",
           "multi_dot"]
