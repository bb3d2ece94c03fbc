"""BLAS-style fused products: ``addmm``, ``addmv``, ``addbmm``, ``baddbmm``
(``beta * input + alpha * product``), chains of matrix products
(``chain_matmul``, ``linalg.multi_dot``) and the op behind
``nn.functional.linear``.

``addmm`` and the others are composed from ``matmul`` and elementwise ops, so
they need no VJP of their own; what this module adds is PyTorch's shape
checks and its rule that ``beta=0`` ignores ``input`` (nan and inf in it do
not propagate). The products themselves are in ``oxmera.ops.linalg``.

``linear`` is a primitive (PyTorch's ``addmm`` with the weight transposed):
every layer of every model calls it, and composed it cost a ``matmul`` of a
batched input against a transposed weight (NumPy runs one small product per
batch element, and the weight's gradient was a batch of products summed
afterwards), a transpose and an ``add``, each with its own node and VJP.
"""
import math

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops.elementwise import add, mul
from oxmera.ops.linalg import matmul, matmul_tn
from oxmera.ops.reduce import sum as _sum

__all__ = ["addmm", "addmv", "addbmm", "baddbmm", "chain_matmul"]

Tensor = _core.Tensor
OpError = _core.OpError


def _shape(value):
    return tuple(value.shape) if isinstance(value, Tensor) else tuple(getattr(value, "shape", ()))


def _check(opname, operands, ranks):
    # ``operands``: (name, value) pairs; ``ranks``: the rank each must have.
    for (name, value), rank in zip(operands, ranks):
        shape = _shape(value)
        if len(shape) != rank:
            raise OpError(f"{opname}(): {name} must be a {rank}-D tensor, got shape {shape}")


def _combine(opname, input, product, beta, alpha):
    """``beta * input + alpha * product``; ``input`` must broadcast to the product's shape."""
    shape, target = _shape(input), _shape(product)
    if len(shape) > len(target) or any(
            s not in (1, t) for s, t in zip(shape[::-1], target[::-1])):
        raise OpError(f"{opname}(): input of shape {shape} cannot be broadcast to the product's "
                      f"shape {target}")
    scaled = product if alpha == 1 else mul(product, alpha)
    if beta == 0:
        # PyTorch: input is ignored, so nan or inf in it does not propagate.
        return scaled
    return add(scaled, input if beta == 1 else mul(input, beta))


@op(inputs=3, save=("input", "weight"), promote=True, replay=True)
def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` as one product: the op behind ``nn.functional.linear``.

    ``weight`` is ``(out_features, in_features)`` (or ``(in_features,)``: one
    output per row); leading dims of ``input`` are flattened into one matrix
    so that BLAS runs one product, and ``bias`` is added in place. The shapes
    are checked by ``nn.functional.linear``. Its VJP is three products at most:
    ``grad @ weight``, ``grad.T @ input`` and ``grad`` summed over the batch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.blas import linear
    >>> linear(oxmera.ones(2, 3), oxmera.ones(4, 3), oxmera.arange(4.0))
    tensor([[3., 4., 5., 6.],
            [3., 4., 5., 6.]], dtype=float32)
    """
    if weight.ndim == 2 and input.ndim > 2:
        out = np.matmul(input.reshape(_rows(input.shape)), weight.T)
        out = out.reshape(input.shape[:-1] + weight.shape[:1])
    else:
        out = np.matmul(input, weight.T)
    if bias is not None:
        bias_shape = bias.shape if isinstance(bias, np.ndarray) else np.shape(bias)
        # (one bias per output feature, nn.Linear's, asks no np.broadcast_shapes: 3.5 us)
        if isinstance(out, np.ndarray) and (bias_shape == out.shape[-1:] or out.shape == (
                np.broadcast_shapes(out.shape, bias_shape))):
            out += bias             # a fresh array: no second full-size temporary
        else:
            out = out + bias        # a 0-d product (1-D input and weight) is a NumPy scalar
    return np.asarray(out)


@linear.vjp
def _(ctx, grad, input, weight, bias=None):
    needs = ctx.needs_input_grad
    grad_input = grad_weight = grad_bias = None
    if weight.ndim == 1:
        # out = input @ weight: an (outer) product with the grad of one value per row.
        column = grad.unsqueeze(-1)
        if needs[0]:
            grad_input = column * weight
        if needs[1]:
            grad_weight = column * input      # the engine sums it over the rows
        return grad_input, grad_weight, grad if needs[2] else None
    if input.ndim == 1:
        # one row: the weight's gradient is an outer product
        if needs[0]:
            grad_input = grad @ weight
        if needs[1]:
            grad_weight = grad.unsqueeze(-1) * input
        return grad_input, grad_weight, grad if needs[2] else None
    # Every leading dim is one batch: one matrix product each, not one per row block.
    rows = grad.reshape(_rows(grad.shape)) if grad.ndim != 2 else grad
    if needs[0]:
        grad_input = rows @ weight
        if grad.ndim != 2:
            grad_input = grad_input.reshape(input.shape)
    if needs[1]:
        # (matmul_tn: the transpose a NumPy view, not an op; no reshape view of a 2-D input)
        grad_weight = matmul_tn(rows, input if input.ndim == 2 else
                                input.reshape(_rows(input.shape)))
    if needs[2]:
        # a (out,) or 0-d bias (the engine sums the rest); else the engine reduces grad itself
        grad_bias = rows.sum(0) if len(ctx.input_shape(2)) <= 1 else grad
    return grad_input, grad_weight, grad_bias


def _rows(shape):
    """``shape`` as one matrix: its leading dims flattened (not ``-1``: sizes may be 0)."""
    return (math.prod(shape[:-1]), shape[-1])


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices ``mat1`` (n, m) and
    ``mat2`` (m, p); ``input`` broadcasts to (n, p).

    ``beta=0`` ignores ``input`` (nan in it does not propagate), as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.addmm(oxmera.ones(2), oxmera.ones(2, 3), oxmera.ones(3, 2), alpha=2)
    tensor([[7., 7.],
            [7., 7.]], dtype=float32)
    """
    _check("addmm", (("mat1", mat1), ("mat2", mat2)), (2, 2))
    _check_inner("addmm", mat1, mat2, -1, 0)
    return _combine("addmm", input, matmul(mat1, mat2), beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` for a matrix ``mat`` (n, m) and a
    vector ``vec`` (m,); ``input`` broadcasts to (n,).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.addmv(oxmera.tensor([1.0, 2.0]), oxmera.ones(2, 3), oxmera.ones(3), beta=0.5)
    tensor([3.5, 4. ], dtype=float32)
    """
    _check("addmv", (("mat", mat), ("vec", vec)), (2, 1))
    _check_inner("addmv", mat, vec, -1, 0)
    return _combine("addmv", input, matmul(mat, vec), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices
    ``batch1`` (b, n, m) and ``batch2`` (b, m, p); ``input`` broadcasts to (b, n, p).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.baddbmm(oxmera.zeros(2, 1, 1), oxmera.ones(2, 1, 3), oxmera.ones(2, 3, 1)).shape
    oxmera.Size([2, 1, 1])
    """
    _check("baddbmm", (("batch1", batch1), ("batch2", batch2)), (3, 3))
    _check_batches("baddbmm", batch1, batch2)
    return _combine("baddbmm", input, matmul(batch1, batch2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum over b of (batch1[b] @ batch2[b])``: the batch of
    products of ``batch1`` (b, n, m) and ``batch2`` (b, m, p) summed to one (n, p)
    matrix; ``input`` broadcasts to (n, p).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.addbmm(oxmera.zeros(1, 1), oxmera.ones(4, 1, 3), oxmera.ones(4, 3, 1))
    tensor([[12.]], dtype=float32)
    """
    _check("addbmm", (("batch1", batch1), ("batch2", batch2)), (3, 3))
    _check_batches("addbmm", batch1, batch2)
    return _combine("addbmm", input, _sum(matmul(batch1, batch2), 0), beta, alpha)


def _check_inner(opname, left, right, left_dim, right_dim):
    a, b = _shape(left), _shape(right)
    if a[left_dim] != b[right_dim]:
        raise OpError(f"{opname}(): shapes {a} and {b} cannot be multiplied "
                      f"({a[left_dim]} != {b[right_dim]})")


def _check_batches(opname, batch1, batch2):
    a, b = _shape(batch1), _shape(batch2)
    if a[0] != b[0]:
        raise OpError(f"{opname}(): batch1 and batch2 must have the same number of matrices, "
                      f"got shapes {a} and {b}")
    _check_inner(opname, batch1, batch2, -1, -2)


def _chain_order(dims):
    """The cheapest parenthesization of a chain of matrices of shapes
    ``(dims[i], dims[i + 1])``: ``split[i][j]`` is where to split the product
    of matrices i..j (the classic dynamic program, as NumPy's multi_dot)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                candidate = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or candidate < cost[i][j]:
                    cost[i][j], split[i][j] = candidate, k
    return split


def _multiply_chain(matrices, split, i, j):
    if i == j:
        return matrices[i]
    k = split[i][j]
    return matmul(_multiply_chain(matrices, split, i, k),
                  _multiply_chain(matrices, split, k + 1, j))


def multi_dot(tensors):
    """The product of a chain of matrices, multiplied in the cheapest order.

    The first may be a vector (taken as a row) and the last a vector (a
    column); every other must be 2-D, as in ``torch.linalg.multi_dot``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.multi_dot([oxmera.ones(3), oxmera.ones(3, 4), oxmera.ones(4, 2)])
    tensor([12., 12.], dtype=float32)
    """
    return _chain("multi_dot", list(tensors), vectors=True)


def chain_matmul(*matrices):
    """The product of two or more matrices, multiplied in the cheapest order.

    Deprecated in PyTorch in favour of ``linalg.multi_dot``; every operand
    must be 2-D.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.chain_matmul(oxmera.ones(2, 3), oxmera.ones(3, 4), oxmera.ones(4, 1))
    tensor([[12.],
            [12.]], dtype=float32)
    """
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    return _chain("chain_matmul", list(matrices), vectors=False)


def _chain(opname, matrices, vectors):
    if not matrices:
        raise OpError(f"{opname}(): expected at least one tensor")
    shapes = [_shape(m) for m in matrices]
    if len(matrices) == 1:
        if vectors:
            raise OpError(f"{opname}(): expected at least 2 tensors but got 1")
        _check(opname, (("matrices[0]", matrices[0]),), (2,))
        return matrices[0].clone()     # a new tensor, still on the operand's graph
    first_row = last_column = False
    for i, shape in enumerate(shapes):
        end = i in (0, len(shapes) - 1)
        allowed = (1, 2) if vectors and end else (2,)
        if len(shape) not in allowed:
            raise OpError(f"{opname}(): tensor {i} must be "
                          f"{'1-D or 2-D' if len(allowed) == 2 else '2-D'}, got shape {shape}")
    if len(shapes[0]) == 1:
        matrices[0], first_row = matrices[0].unsqueeze(0), True
    if len(shapes[-1]) == 1:
        matrices[-1], last_column = matrices[-1].unsqueeze(-1), True
    shapes = [_shape(m) for m in matrices]
    for i in range(len(shapes) - 1):
        if shapes[i][1] != shapes[i + 1][0]:
            raise OpError(f"{opname}(): tensors {i} and {i + 1} cannot be multiplied: shapes "
                          f"{shapes[i]} and {shapes[i + 1]}")
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    out = _multiply_chain(matrices, _chain_order(dims), 0, len(matrices) - 1)
    if first_row:
        out = out.squeeze(0)
    if last_column:
        out = out.squeeze(-1)
    return out


for _name, _function in (("addmm", addmm), ("addmv", addmv), ("addbmm", addbmm),
                         ("baddbmm", baddbmm)):
    _registry.add_tensor_attribute(_name, _function)
