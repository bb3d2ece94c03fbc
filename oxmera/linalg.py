"""``oxmera.linalg``: the linear-algebra functions of ``torch.linalg``.

Complex matrices: every function here takes them, as PyTorch's (``eig``/``eigvals``
give complex results for real ones too), with PyTorch's gradients; ``eigh``'s,
``eig``'s and ``svd``'s backward refuse a loss that depends on the vectors' phases.

The ops live in ``oxmera.ops.linalg``, ``oxmera.ops.decompositions`` and
``oxmera.ops.matrix_functions``;
this namespace only re-exports them.
"""
from oxmera.ops.blas import multi_dot
from oxmera.ops.construction import linalg_cross as cross
from oxmera.ops.decompositions import (cholesky_ex, diagonal, eig, eigh, eigvals, eigvalsh, lu,
                                       lu_factor, lu_factor_ex, lu_solve, solve_triangular,
                                       vander)
from oxmera.ops.decompositions import linalg_cholesky as cholesky
from oxmera.ops.decompositions import linalg_qr as qr
from oxmera.ops.decompositions import linalg_svd as svd
from oxmera.ops.matrix_functions import (cond, inv_ex, lstsq, matrix_exp, matrix_power,
                                         matrix_rank, pinv, slogdet, solve_ex, tensorinv,
                                         tensorsolve, vecdot)
from oxmera.ops.linalg import (LinAlgError, det, inv, matmul, matrix_norm, norm, solve, svdvals,
                               vector_norm)

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "inv_ex", "det", "slogdet", "solve",
           "solve_ex", "solve_triangular", "svd", "svdvals", "eig", "eigvals", "eigh", "eigvalsh",
           "cholesky",
           "cholesky_ex", "qr", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "pinv", "lstsq",
           "matrix_power", "matrix_exp", "matrix_rank", "cond", "cross", "vecdot", "multi_dot",
           "tensorinv", "tensorsolve", "matmul", "diagonal", "vander", "LinAlgError"]
