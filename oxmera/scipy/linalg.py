"""``oxmera.scipy.linalg``: ``scipy.linalg``'s names over oxmera tensors, differentiable.

SciPy's argument conventions over :mod:`oxmera.linalg`'s ops: ``lower=``
instead of ``upper=``, ``trans=``, ``(c, lower)`` and ``(lu, piv)`` factor
tuples, 0-based LAPACK pivots, a vector right-hand side giving a vector.
``cholesky`` is upper triangular by default, as in SciPy. Leading batch
dimensions broadcast where the oxmera op does.

Two ops are new here, with SciPy's values: ``sqrtm`` and ``logm`` (the
principal square root and logarithm). Their VJPs use the block-triangular
identity of Fréchet derivatives, ``L_f(A)^T(G)`` = the upper-right block of
``f([[A^T, G], [0, A^T]])``, so the VJP is the op itself applied to a
matrix twice the size, and is differentiable again (any order). ``expm`` is
:func:`oxmera.linalg.matrix_exp`.

A matrix whose principal square root or logarithm is complex (a negative
real eigenvalue) raises ValueError: these two compute real results only (no
complex ones yet, though oxmera has complex tensors).
"""
import numpy as np

import oxmera
from oxmera.extend import op
from oxmera.ops.special import scipy_module
from oxmera.scipy._inputs import as_tensor

__all__ = ["solve_triangular", "solve", "inv", "det", "cholesky", "cho_factor", "cho_solve",
           "lu_factor", "lu_solve", "expm", "sqrtm", "logm", "block_diag"]


def _right_hand_side(b):
    # SciPy: a vector b is one right-hand side, and the solution is a vector
    return (b.unsqueeze(-1), True) if b.ndim == 1 else (b, False)


def _transposed(trans, name):
    if trans in (0, "N"):
        return False
    if trans in (1, 2, "T", "C"):
        return True
    raise ValueError(f"{name}(): trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    """Solve ``a x = b`` (``a.T x = b`` for ``trans=1``) for triangular ``a``.

    Only the triangle named by ``lower`` is read; ``unit_diagonal`` takes the
    diagonal as ones. Differentiable in ``a`` and ``b``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> a = [[2.0, 0.0], [1.0, 4.0]]
    >>> linalg.solve_triangular(a, [2.0, 9.0], lower=True)
    tensor([1., 2.], dtype=float64)
    >>> linalg.solve_triangular(a, [2.0, 8.0], lower=True, trans="T")
    tensor([0., 2.], dtype=float64)
    """
    a, b = as_tensor(a, "solve_triangular", "a"), as_tensor(b, "solve_triangular", "b")
    transposed = _transposed(trans, "solve_triangular")
    rhs, vector = _right_hand_side(b)
    # a.T's triangle is the other one: solve with it, reading a's named triangle
    matrix = a.mT if transposed else a
    upper = lower if transposed else not lower
    x = oxmera.linalg.solve_triangular(matrix, rhs, upper=upper, unitriangular=unit_diagonal)
    return x.squeeze(-1) if vector else x


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a="gen", transposed=False):
    """Solve ``a x = b`` for square ``a`` (``a.T x = b`` with ``transposed=True``).

    ``assume_a`` (``"gen"``, ``"sym"``, ``"pos"``...) is accepted and the
    general solver used: the result and its gradient are the same.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.solve([[3.0, 1.0], [1.0, 2.0]], [9.0, 8.0])
    tensor([2., 3.], dtype=float64)
    """
    a, b = as_tensor(a, "solve", "a"), as_tensor(b, "solve", "b")
    rhs, vector = _right_hand_side(b)
    x = oxmera.linalg.solve(a.mT if transposed else a, rhs)
    return x.squeeze(-1) if vector else x


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of a square matrix, as ``scipy.linalg.inv``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.inv([[2.0, 0.0], [0.0, 4.0]])
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]], dtype=float64)
    """
    return oxmera.linalg.inv(as_tensor(a, "inv", "a"))


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of a square matrix, as ``scipy.linalg.det``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.det([[2.0, 1.0], [1.0, 4.0]])
    tensor(7., dtype=float64)
    """
    return oxmera.linalg.det(as_tensor(a, "det", "a"))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of a positive-definite matrix: upper ``U`` with
    ``a = U.T U`` by default (SciPy's default), lower ``L`` with ``lower=True``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.cholesky([[4.0, 2.0], [2.0, 5.0]])
    tensor([[2., 1.],
            [0., 2.]], dtype=float64)
    """
    return oxmera.linalg.cholesky(as_tensor(a, "cholesky", "a"), upper=not lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor with its side, ``(c, lower)``, for :func:`cho_solve`.

    Unlike SciPy's, ``c``'s other triangle is zero (SciPy leaves whatever was
    in ``a`` there); ``cho_solve`` reads only the factor's triangle either way.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> c, lower = linalg.cho_factor([[4.0, 2.0], [2.0, 5.0]], lower=True)
    >>> c, lower
    (tensor([[2., 0.],
            [1., 2.]], dtype=float64), True)
    """
    return cholesky(a, lower=lower), bool(lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` given ``(c, lower) = cho_factor(a)``.

    Differentiable in the factor and ``b`` (two triangular solves).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> factor = linalg.cho_factor([[4.0, 2.0], [2.0, 5.0]])
    >>> linalg.cho_solve(factor, [8.0, 12.0])
    tensor([1., 2.], dtype=float64)
    """
    c, lower = c_and_lower
    c, b = as_tensor(c, "cho_solve", "c"), as_tensor(b, "cho_solve", "b")
    rhs, vector = _right_hand_side(b)
    factor = c if lower else c.mT          # the lower factor L with a = L L^T
    y = oxmera.linalg.solve_triangular(factor, rhs, upper=False)
    x = oxmera.linalg.solve_triangular(factor.mT, y, upper=True)
    return x.squeeze(-1) if vector else x


def lu_factor(a, overwrite_a=False, check_finite=True):
    """The LU factorization with partial pivoting, ``(lu, piv)``, for :func:`lu_solve`.

    ``piv`` holds SciPy's 0-based LAPACK pivots (row ``i`` was swapped with
    row ``piv[i]``), an int32 tensor. Differentiable in ``a`` through ``lu``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> lu, piv = linalg.lu_factor([[1.0, 2.0], [3.0, 4.0]])
    >>> lu
    tensor([[3.    , 4.    ],
            [0.3333, 0.6667]], dtype=float64)
    >>> piv
    tensor([1, 1], dtype=int32)
    """
    lu, pivots = oxmera.linalg.lu_factor(as_tensor(a, "lu_factor", "a"))
    return lu, pivots - 1


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve ``a x = b`` (``a.T x = b`` for ``trans=1``) given ``lu_factor(a)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> factors = linalg.lu_factor([[1.0, 2.0], [3.0, 4.0]])
    >>> linalg.lu_solve(factors, [5.0, 11.0])
    tensor([1., 2.], dtype=float64)
    """
    lu, piv = lu_and_piv
    lu, b = as_tensor(lu, "lu_solve", "lu"), as_tensor(b, "lu_solve", "b")
    pivots = (piv if isinstance(piv, oxmera.Tensor)
              else oxmera.from_numpy(np.asarray(piv, dtype=np.int32))) + 1
    rhs, vector = _right_hand_side(b)
    x = oxmera.linalg.lu_solve(lu, pivots.to(oxmera.int32), rhs,
                               adjoint=_transposed(trans, "lu_solve"))
    return x.squeeze(-1) if vector else x


def expm(A):
    """The matrix exponential: :func:`oxmera.linalg.matrix_exp` under SciPy's name.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.expm([[0.0, 1.0], [0.0, 0.0]])
    tensor([[1., 1.],
            [0., 1.]], dtype=float64)
    """
    return oxmera.linalg.matrix_exp(as_tensor(A, "expm", "A"))


def _matrix_function(name, scipy_name, what):
    def forward(A):
        function = getattr(scipy_module("linalg", scipy_name), scipy_name)
        if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
            raise ValueError(f"expected a square matrix (or a batch of them), "
                             f"got shape {A.shape}")
        out = np.empty(A.shape, dtype=A.dtype)
        for index in np.ndindex(A.shape[:-2]):
            value = np.asarray(function(A[index]))
            if np.iscomplexobj(value):
                if np.abs(value.imag).max(initial=0.0) > 1e-8 * max(1.0, np.abs(value).max()):
                    raise ValueError(
                        f"the principal {what} of this matrix is complex (it "
                        f"has an eigenvalue on the negative real axis); oxmera.scipy.linalg."
                        f"{scipy_name} computes real results only")
                value = value.real
            out[index] = value
        return out
    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = __name__
    forward.__doc__ = (f"The recorded op behind ``oxmera.scipy.linalg.{scipy_name}``.\n\n"
                       f"Examples\n--------\n>>> import oxmera\n"
                       f">>> from oxmera.scipy.linalg import _{scipy_name}\n"
                       f">>> _{scipy_name}(oxmera.eye(2))\n"
                       f"{'tensor([[1., 0.],' if scipy_name == 'sqrtm' else 'tensor([[0., 0.],'}\n"
                       f"{'        [0., 1.]]' if scipy_name == 'sqrtm' else '        [0., 0.]]'}"
                       f", dtype=float32)\n")
    function = op(name, float_only=True)(forward)

    @function.vjp
    def _(ctx, grad, A):
        # Frechet derivative of f at A^T in the direction grad: the upper-right
        # block of f([[A^T, grad], [0, A^T]]) (Higham, Functions of Matrices, 3.2)
        n = A.shape[-1]
        At = A.mT
        top = oxmera.cat([At, grad], -1)
        bottom = oxmera.cat([oxmera.zeros_like(At), At], -1)
        return function(oxmera.cat([top, bottom], -2))[..., :n, n:]
    return function


_sqrtm = _matrix_function("sqrtm", "sqrtm", "square root")
_logm = _matrix_function("logm", "logm", "logarithm")


def sqrtm(A, disp=True, blocksize=64):
    """The principal matrix square root ``X`` with ``X @ X = A``, from SciPy.

    Batched over leading dimensions. Differentiable to any order (see the
    module's note). ValueError when the principal root is complex.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.sqrtm([[4.0, 1.0], [0.0, 9.0]])
    tensor([[2. , 0.2],
            [0. , 3. ]], dtype=float64)
    """
    return _sqrtm(as_tensor(A, "sqrtm", "A"))


def logm(A, disp=True):
    """The principal matrix logarithm ``X`` with ``expm(X) = A``, from SciPy.

    Batched over leading dimensions. Differentiable to any order (see the
    module's note). ValueError when the principal logarithm is complex.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.logm([[1.0, 1.0], [0.0, 1.0]])
    tensor([[0., 1.],
            [0., 0.]], dtype=float64)
    """
    return _logm(as_tensor(A, "logm", "A"))


def block_diag(*arrs):
    """A block-diagonal matrix of the inputs, as ``scipy.linalg.block_diag``.

    A vector counts as one row, a number as a 1 x 1 block (SciPy's rules);
    :func:`oxmera.block_diag` does the rest, so it is differentiable.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy import linalg
    >>> linalg.block_diag([[1.0, 2.0]], 3.0)
    tensor([[1., 2., 0.],
            [0., 0., 3.]], dtype=float64)
    """
    blocks = []
    for i, arr in enumerate(arrs):
        block = as_tensor(arr, "block_diag", f"arrs[{i}]")
        if block.ndim > 2:
            raise ValueError(f"block_diag(): arguments must have 2 or fewer dimensions; "
                             f"arrs[{i}] has shape {tuple(block.shape)}")
        blocks.append(block.reshape((1, -1)) if block.ndim < 2 else block)
    return oxmera.block_diag(*blocks)
