"""Linear algebra: matmul (1-D, 2-D, batched, broadcasting batch dims), mm, bmm,
dot, outer, einsum, tensordot, and the ops behind ``oxmera.linalg``: inv, det,
solve, the vector and matrix norms, svd (its op).

The primitives with VJPs of their own are matmul, einsum, inv, det, solve
and svd; mm, bmm, dot, outer and tensordot check their operands and are
composed from matmul, mul and shape ops; the norms from the reductions and
svd. ``__all__`` lists what is also ``oxmera.NAME``; the names only in
``oxmera.linalg`` are re-exported there.
"""
import collections
import math
import operator
import string

import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops import reduce as _reduce
from oxmera.ops import shape as _shape
from oxmera.ops._utils import accumulation_dtype, narrow, pick_dim
from oxmera.ops.creation import as_tensor, eye, ones, ones_like, tensor
from oxmera.ops.complex import cj
from oxmera.ops.construction import diag_embed
from oxmera.ops.elementwise import mul, where

__all__ = ["matmul", "mm", "bmm", "dot", "vdot", "outer", "einsum", "tensordot", "det", "inverse"]

OpError = _core.OpError
Tensor = _core.Tensor


def _shape_of(x):
    return tuple(x.shape) if isinstance(x, (Tensor, np.ndarray)) else np.shape(x)


def _as_tensor(x):
    return x if isinstance(x, Tensor) else as_tensor(x)


# -- matmul and its checked special cases -------------------------------------------------

@op(inputs=2, promote=True, method=True, operators=("__matmul__", "__rmatmul__"),
    complex_inputs=True, replay=True)
def matmul(input, other):
    """Matrix product with NumPy's rules: 1-D operands are vectors, leading
    dimensions are batch dimensions and broadcast.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.ones(2, 3)
    >>> b = oxmera.ones(3, 4)
    >>> (a @ b).shape
    oxmera.Size([2, 4])
    >>> oxmera.matmul(oxmera.ones(5, 2, 3), oxmera.ones(3)).shape
    oxmera.Size([5, 2])
    """
    try:
        return np.matmul(input, other)  # checked after a failure: np.ndim costs 0.3 us a call
    except ValueError:
        pass
    if np.ndim(input) == 0 or np.ndim(other) == 0:
        raise OpError(f"matmul(): both arguments need at least 1 dimension, got shapes "
                      f"{np.shape(input)} and {np.shape(other)}")
    k_in = input.shape[-1]
    k_other = other.shape[-2] if other.ndim > 1 else other.shape[0]
    if k_in != k_other:
        raise OpError(f"matmul(): shapes {input.shape} and {other.shape} cannot be multiplied "
                      f"({k_in} != {k_other})")
    raise OpError(f"matmul(): the batch dimensions of shapes {input.shape} and {other.shape} "
                  f"do not broadcast")


@matmul.vjp
def _(ctx, grad, input, other):
    needs = ctx.needs_input_grad
    # Treat vectors as matrices (a row for the left operand, a column for the
    # right one), as the forward does; the engine sums broadcast batch dims.
    if other.ndim == 1:
        grad = grad.unsqueeze(-1)
        other = other.unsqueeze(-1)
    if input.ndim == 1:
        grad = grad.unsqueeze(-2)
        input = input.unsqueeze(0)
    # A broadcast gradient (the seed of sum or mean): NumPy's matmul takes a
    # stride-0 operand 165 us slower than a contiguous one at 512x512 (it is
    # not BLAS-able); one copy (20 us) serves both products. (An op, not a
    # test of strides here: a replayed VJP may branch on dtypes and shapes,
    # not on layouts.)
    grad = materialize_broadcast(grad)
    grad_input = grad_other = None
    if needs[0]:
        grad_input = matmul_nt(grad, cj(other))
        if len(ctx.input_shape(0)) == 1:
            grad_input = grad_input.squeeze(-2)
    if needs[1]:
        grad_other = matmul_tn(cj(input), grad)
        if len(ctx.input_shape(1)) == 1:
            grad_other = grad_other.squeeze(-1)
    return grad_input, grad_other


@op(save=(), view=True, replay=True)
def materialize_broadcast(input):
    """``input`` itself, or a C-contiguous copy of it when a dimension has stride 0
    (a broadcast view): what BLAS can read (matmul's VJP runs it on its gradient).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.linalg import materialize_broadcast
    >>> materialize_broadcast(oxmera.ones(3).expand(2, 3)).is_contiguous()
    True
    """
    return np.ascontiguousarray(input) if 0 in input.strides else input


@materialize_broadcast.vjp
def _(ctx, grad, input):
    return grad


# matmul's VJP multiplies by transposed operands. As ops of their own, the
# transposes stay NumPy views inside the forward (strided operands BLAS reads
# as transposed, the same call as before) instead of oxmera views: ``W.mT``
# was an op call and, over memory saved for backward, a lock entry, about
# 2 us a view and two views a matmul VJP. (PyTorch's mm reads transposed
# operands the same way.)
def _transposed_matmul(name, transpose_left, shapes):
    product, swapped = (("input.mT @ other", "input") if transpose_left
                        else ("input @ other.mT", "other"))

    # ``left.mT @ right`` or ``left @ right.mT`` of arrays of at least 2 dims, or
    # OpError. (One function, the op's forward: matmul's VJP calls it twice a
    # node, and a helper called from it was one more Python frame a product.)
    def forward(input, other):
        if getattr(input, "ndim", 0) < 2 or getattr(other, "ndim", 0) < 2:  # (np.ndim: 0.3 us)
            raise OpError(f"{name}(): both operands need at least 2 dimensions, got shapes "
                          f"{np.shape(input)} and {np.shape(other)}")
        # (the ndarray method: np.swapaxes is a Python function around it)
        try:
            if transpose_left:
                return np.matmul(input.swapaxes(-1, -2), other)
            return np.matmul(input, other.swapaxes(-1, -2))
        except ValueError:
            pass
        raise OpError(f"{name}(): operands of shapes {input.shape} and {other.shape} cannot be "
                      f"multiplied (as transposed), or their batch dimensions do not broadcast")
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = f"""``{product}``: the product with ``{swapped}``'s last two
    dimensions swapped (both operands at least 2-D; batch dimensions broadcast).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.linalg import {name}
    >>> {name}(oxmera.ones{shapes[0]}, oxmera.ones{shapes[1]}).shape
    oxmera.Size([2, 4])
    """
    return op(inputs=2, promote=True, complex_inputs=True, replay=True)(forward)


matmul_nt = _transposed_matmul("matmul_nt", False, ((2, 3), (4, 3)))
matmul_tn = _transposed_matmul("matmul_tn", True, ((3, 2), (3, 4)))


@matmul_nt.vjp
def _(ctx, grad, input, other):
    # out = input @ other^T: d input = grad @ conj(other), d other = grad^T @ conj(input)
    needs = ctx.needs_input_grad
    return (grad @ cj(other) if needs[0] else None,
            matmul_tn(grad, cj(input)) if needs[1] else None)


@matmul_tn.vjp
def _(ctx, grad, input, other):
    # out = input^T @ other: d input = conj(other) @ grad^T, d other = conj(input) @ grad
    needs = ctx.needs_input_grad
    return (matmul_nt(cj(other), grad) if needs[0] else None,
            cj(input) @ grad if needs[1] else None)


def mm(input, mat2):
    """Product of two matrices (2-D only; :func:`matmul` for other ranks).

    Unlike PyTorch, operands of different dtypes are promoted, as in matmul.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.mm(oxmera.ones(2, 3), oxmera.ones(3, 4)).shape
    oxmera.Size([2, 4])
    """
    a, b = _shape_of(input), _shape_of(mat2)
    if len(a) != 2 or len(b) != 2:
        raise OpError(f"mm(): expected two 2-D tensors, got shapes {a} and {b}")
    if a[1] != b[0]:
        raise OpError(f"mm(): shapes {a} and {b} cannot be multiplied ({a[1]} != {b[0]})")
    return matmul(input, mat2)


def bmm(input, mat2):
    """Batched matrix product of ``(b, n, m)`` and ``(b, m, p)`` (3-D only,
    equal batch sizes: no broadcasting; :func:`matmul` broadcasts).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.bmm(oxmera.ones(5, 2, 3), oxmera.ones(5, 3, 4)).shape
    oxmera.Size([5, 2, 4])
    """
    a, b = _shape_of(input), _shape_of(mat2)
    if len(a) != 3 or len(b) != 3:
        raise OpError(f"bmm(): expected two 3-D tensors, got shapes {a} and {b}")
    if a[0] != b[0]:
        raise OpError(f"bmm(): batch sizes differ: shapes {a} and {b} ({a[0]} != {b[0]})")
    if a[2] != b[1]:
        raise OpError(f"bmm(): shapes {a} and {b} cannot be multiplied ({a[2]} != {b[1]})")
    return matmul(input, mat2)


def dot(input, other):
    """Inner product of two 1-D tensors of the same length (a 0-d tensor).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.dot(oxmera.tensor([1.0, 2.0]), oxmera.tensor([3.0, 4.0]))
    tensor(11., dtype=float32)
    """
    a, b = _shape_of(input), _shape_of(other)
    if len(a) != 1 or len(b) != 1:
        raise OpError(f"dot(): expected two 1-D tensors, got shapes {a} and {b}")
    if a != b:
        raise OpError(f"dot(): the tensors have different lengths: shapes {a} and {b}")
    return matmul(input, other)


def vdot(input, other):
    """Inner product of two 1-D tensors with the first conjugated: ``sum(conj(input) *
    other)`` (``dot`` for real tensors). Both must have the same dtype, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.vdot(oxmera.tensor([1 + 1j, 2j]), oxmera.tensor([1.0 + 0j, 1j]))
    tensor(3.-1.j, dtype=complex64)
    """
    a, b = _shape_of(input), _shape_of(other)
    if len(a) != 1 or len(b) != 1:
        raise OpError(f"vdot(): expected two 1-D tensors, got shapes {a} and {b}")
    if a != b:
        raise OpError(f"vdot(): the tensors have different lengths: shapes {a} and {b}")
    if input.dtype != other.dtype:
        raise RuntimeError(f"vdot(): expected both vectors to have the same dtype, but found "
                           f"{input.dtype} and {other.dtype}")
    return matmul(cj(input), other)


def outer(input, vec2):
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.outer(oxmera.tensor([1.0, 2.0]), oxmera.tensor([1.0, 10.0, 100.0]))
    tensor([[  1.,  10., 100.],
            [  2.,  20., 200.]], dtype=float32)
    """
    a, b = _shape_of(input), _shape_of(vec2)
    if len(a) != 1 or len(b) != 1:
        raise OpError(f"outer(): expected two 1-D tensors, got shapes {a} and {b}")
    return mul(_shape.reshape(input, (a[0], 1)), vec2)


def tensordot(a, b, dims=2):
    """Sum of products over the given dims of ``a`` and ``b`` (as ``torch.tensordot``).

    ``dims`` is an int ``d`` (the last ``d`` dims of ``a`` with the first
    ``d`` of ``b``) or a pair of dim lists ``([dims of a], [dims of b])``.
    Composed of permute, reshape and matmul.

    Examples
    --------
    >>> import oxmera
    >>> a, b = oxmera.ones(2, 3, 4), oxmera.ones(3, 4, 5)
    >>> oxmera.tensordot(a, b).shape
    oxmera.Size([2, 5])
    >>> oxmera.tensordot(a, b, dims=([1], [0])).shape
    oxmera.Size([2, 4, 4, 5])
    """
    sa, sb = _shape_of(a), _shape_of(b)
    if isinstance(dims, (tuple, list)):
        if len(dims) != 2:
            raise OpError(f"tensordot(): dims must be an int or a pair of dim lists, got {dims!r}")
        dims_a, dims_b = (list(d) if isinstance(d, (tuple, list)) else [d] for d in dims)
    else:
        count = operator.index(dims)
        if count < 0 or count > len(sa) or count > len(sb):
            raise OpError(f"tensordot(): cannot contract {count} dims of tensors of shapes {sa} "
                          f"and {sb}")
        dims_a, dims_b = list(range(len(sa) - count, len(sa))), list(range(count))
    if len(dims_a) != len(dims_b):
        raise OpError(f"tensordot(): both tensors need the same number of dims to contract, "
                      f"got {dims_a} and {dims_b} for shapes {sa} and {sb}")
    dims_a = [_core.normalize_dim(d, len(sa), "tensordot") for d in dims_a]
    dims_b = [_core.normalize_dim(d, len(sb), "tensordot") for d in dims_b]
    if len(set(dims_a)) != len(dims_a) or len(set(dims_b)) != len(dims_b):
        raise OpError(f"tensordot(): a dim is contracted twice in {dims_a} and {dims_b}")
    for da, db in zip(dims_a, dims_b):
        if sa[da] != sb[db]:
            raise OpError(f"tensordot(): contracted dimensions need the same size, but dim {da} "
                          f"of shape {sa} is {sa[da]} and dim {db} of shape {sb} is {sb[db]}")
    free_a = [d for d in range(len(sa)) if d not in dims_a]
    free_b = [d for d in range(len(sb)) if d not in dims_b]
    size = math.prod(sa[d] for d in dims_a)
    left = _shape.permute(a, free_a + dims_a).reshape(math.prod(sa[d] for d in free_a), size)
    right = _shape.permute(b, dims_b + free_b).reshape(size, math.prod(sb[d] for d in free_b))
    return matmul(left, right).reshape(tuple(sa[d] for d in free_a) + tuple(sb[d]
                                                                          for d in free_b))


# -- einsum ---------------------------------------------------------------------------------

_LETTERS = string.ascii_letters


def _sublist(subscripts):
    # NumPy's sublist form: ints 0..51 (A-Z then a-z) and Ellipsis.
    out = []
    for s in subscripts:
        if s is Ellipsis:
            out.append("...")
            continue
        i = operator.index(s)
        if not 0 <= i < 52:
            raise ValueError(f"einsum(): sublist subscripts must be in [0, 52), got {i}")
        out.append(chr(ord("A") + i) if i < 26 else chr(ord("a") + i - 26))
    return "".join(out)


def _einsum_arguments(args):
    """(equation, operands) from the call forms einsum(eq, *ops), einsum(eq, [ops])
    and einsum(op0, sublist0, op1, sublist1, ..., [output sublist])."""
    if not args:
        raise TypeError("einsum(): missing the equation and operands")
    if isinstance(args[0], str):
        operands = args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = operands[0]
        return args[0], list(operands)
    pairs = len(args) // 2
    operands = list(args[0:2 * pairs:2])
    equation = ",".join(_sublist(s) for s in args[1:2 * pairs:2])
    if len(args) % 2:
        equation += "->" + _sublist(args[-1])
    return equation, operands


def _split_ellipsis(term, equation):
    head, dots, tail = term.partition("...")
    for part in (head, tail):
        for c in part:
            if c not in _LETTERS:
                raise OpError(f"einsum(): invalid subscript {c!r} in equation {equation!r}; "
                              f"subscripts are letters a-z, A-Z and '...'")
    return head, bool(dots), tail


def _canonical_equation(equation, shapes):
    """The equation with every dim labeled by a letter and the output explicit.

    Ellipses become fresh letters (right-aligned, broadcasting like NumPy);
    an implicit output is the ellipsis dims then the letters used once, in
    alphabetical order. An explicit output without an ellipsis sums the
    ellipsis dims (as in PyTorch).
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if "->" in rhs:
        raise OpError(f"einsum(): equation {equation!r} has more than one '->'")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise OpError(f"einsum(): equation {equation!r} has {len(terms)} operand(s) but "
                      f"{len(shapes)} tensor(s) were given (shapes {', '.join(map(str, shapes))})")
    parsed, ellipsis_ndim = [], 0
    for k, (term, shape) in enumerate(zip(terms, shapes)):
        head, dots, tail = _split_ellipsis(term, equation)
        extra = len(shape) - len(head) - len(tail)
        if extra < 0 or (extra and not dots):
            raise OpError(f"einsum(): operand {k} has subscripts {term!r} for "
                          f"{len(head) + len(tail)} dim(s), but its shape is {shape}")
        parsed.append((head, extra, tail))
        ellipsis_ndim = max(ellipsis_ndim, extra)
    unused = [c for c in _LETTERS if c not in eq]
    if len(unused) < ellipsis_ndim:
        raise OpError(f"einsum(): too many dims in {equation!r} to label with 52 letters")
    ellipsis = "".join(unused[:ellipsis_ndim])
    inputs = [head + ellipsis[ellipsis_ndim - extra:] + tail for head, extra, tail in parsed]
    if arrow:
        head, dots, tail = _split_ellipsis(rhs, equation)
        output = head + (ellipsis if dots else "") + tail
        labels = set("".join(inputs))
        for c in output:
            if c not in labels:
                raise OpError(f"einsum(): output subscript {c!r} of {equation!r} does not "
                              f"appear in the operands")
        if len(set(output)) != len(output):
            raise OpError(f"einsum(): output subscripts of {equation!r} repeat a letter")
    else:
        counts = collections.Counter("".join(h + t for h, _, t in parsed))
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    return ",".join(inputs) + "->" + output


def _optimize(equation, operands):
    # NumPy's own loop is fastest for small problems; a contraction path
    # (BLAS for pairs) pays off for three operands or large ones.
    if len(operands) > 2:
        return True
    sizes = {}
    for term, a in zip(equation.split("->")[0].split(","), operands):
        sizes.update(zip(term, a.shape))
    return len(operands) == 2 and math.prod(sizes.values()) > 100_000


@op("einsum", complex_inputs=True, inputs="sequence", promote=True)
def _einsum_op(operands, equation):
    """The recorded op behind :func:`einsum`, on an equation in canonical
    form (every dim a letter, explicit output: see ``_canonical_equation``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.linalg import _einsum_op
    >>> _einsum_op([oxmera.ones(2, 3), oxmera.ones(3)], "ij,j->i")
    tensor([3., 3.], dtype=float32)
    """
    dtype = operands[0].dtype if operands else None
    wide = accumulation_dtype(dtype)
    if wide != dtype:
        # NumPy's own einsum loops sum float16 in float16 (matmul and
        # PyTorch's einsum do not): [60000, 60000, -60000] would sum to inf.
        operands = [a.astype(wide) for a in operands]
    out = np.einsum(equation, *operands, optimize=_optimize(equation, operands))
    out = np.asarray(out) if wide == dtype else narrow(out, dtype)
    # One operand can give a view of it (a transpose, a diagonal): the op's
    # output must own its memory.
    if any(np.may_share_memory(out, a) for a in operands):
        out = out.copy()
    return out


@_einsum_op.vjp
def _(ctx, grad, operands, equation):
    inputs, output = equation.split("->")
    inputs = inputs.split(",")
    return [_einsum_operand_grad(grad, operands, inputs, output, k, equation)
            if ctx.needs_input_grad[k] else None for k in range(len(operands))]


def _einsum_operand_grad(grad, operands, inputs, output, k, equation):
    """The gradient of operand ``k``: the einsum of the output's gradient with
    the other operands, to operand ``k``'s subscripts."""
    target = inputs[k]
    shape = _shape_of(operands[k])
    size = dict(zip(target, shape))
    terms, args = [output], [grad]
    for j, operand in enumerate(operands):
        if j != k:
            terms.append(inputs[j])
            args.append(cj(operand))
    available = set("".join(terms))
    # A label only operand k has (summed in the forward): its gradient is
    # constant along it, which a ones vector spreads.
    for c in dict.fromkeys(target):
        if c not in available:
            terms.append(c)
            args.append(ones(size[c], dtype=grad.dtype))
    # A repeated label (a diagonal, 'ii'): the gradient lives on the diagonal,
    # which an identity matrix tying a fresh label to the first one gives.
    fresh = iter(c for c in _LETTERS if c not in equation)
    labels, seen = [], set()
    for c in target:
        if c in seen:
            label = next(fresh, None)
            if label is None:
                raise RuntimeError(f"einsum backward: too many repeated subscripts in "
                                   f"{equation!r} to label with 52 letters")
            terms.append(c + label)
            args.append(eye(size[c], dtype=grad.dtype))
            labels.append(label)
        else:
            seen.add(c)
            labels.append(c)
    result = _einsum_op(args, ",".join(terms) + "->" + "".join(labels))
    # Where the operand has a dim the others broadcast (size 1 there), the
    # gradient is constant along it; the engine sums the opposite case.
    full = np.broadcast_shapes(result.shape, shape)
    return result.expand(full) if full != result.shape else result


def einsum(*args):
    """Einstein summation, as ``numpy.einsum`` / ``torch.einsum``.

    Takes ``einsum(equation, *operands)``, ``einsum(equation, [operands])`` or
    NumPy's sublist form ``einsum(op0, [0, 1], op1, [1, 2], [0, 2])``. Any
    subscripts NumPy accepts work: repeated letters (diagonals, ``'ii->i'``,
    traces ``'ii'``), ellipses broadcasting batch dims (``'...ij,...jk->...ik'``)
    and implicit outputs (``'ij,jk'``). The gradient of each operand is the
    einsum of the output's gradient with the other operands.

    Examples
    --------
    >>> import oxmera
    >>> a = oxmera.arange(6.0).reshape(2, 3)
    >>> oxmera.einsum("ij->ji", a).shape
    oxmera.Size([3, 2])
    >>> oxmera.einsum("ij,ij->", a, a)
    tensor(55., dtype=float32)
    >>> oxmera.einsum("ii", oxmera.eye(3))
    tensor(3., dtype=float32)
    >>> oxmera.einsum("...ij,...jk", oxmera.ones(4, 2, 3), oxmera.ones(3, 5)).shape
    oxmera.Size([4, 2, 5])
    """
    equation, operands = _einsum_arguments(args)
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): the equation must be a string, got {type(equation).__name__}")
    if not operands:
        raise OpError(f"einsum(): equation {equation!r} needs at least one operand")
    canonical = _canonical_equation(equation, [_shape_of(o) for o in operands])
    return _einsum_op(operands, canonical)


# -- inv, det, solve -----------------------------------------------------------------------

class LinAlgError(OpError):
    """A linear-algebra routine failed on the values of its input (a matrix
    that is singular or not positive-definite): ``torch.linalg.LinAlgError``.

    A ``RuntimeError``, as PyTorch's (and an :class:`oxmera.OpError`).

    Examples
    --------
    >>> import oxmera
    >>> try:
    ...     oxmera.linalg.cholesky(-oxmera.eye(2))
    ... except oxmera.linalg.LinAlgError as err:
    ...     print(isinstance(err, RuntimeError))
    True
    """


LinAlgError.__module__ = "oxmera.linalg"


def _check_square(shape, opname, what="the input"):
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise OpError(f"{opname}(): {what} must be a square matrix or a batch of them, got "
                      f"shape {shape}")


@op("linalg_inv", complex_inputs=True, save=(), save_output=True, float_only=True)
def inv(A):
    """Inverse of a square matrix (or of each in a batch): ``oxmera.linalg.inv``.

    A singular matrix is an ``oxmera.linalg.LinAlgError`` (a ``RuntimeError``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.inv(oxmera.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]], dtype=float32)
    """
    _check_square(A.shape, "linalg.inv")
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.inv(): the input of shape {A.shape} is singular (has a matrix "
                      f"with determinant 0), so it has no inverse") from None


@inv.vjp
def _(ctx, grad, A):
    out_t = cj(ctx.output).mT
    return -(out_t @ grad @ out_t)


@op("linalg_det", complex_inputs=True, save_output=True, float_only=True)
def det(A):
    """Determinant of a square matrix (or of each in a batch): ``oxmera.linalg.det``.

    The gradient is ``det(A) * inv(A)^T``; at or near a singular matrix it is
    the cofactor matrix, computed directly (from the minors' determinants up
    to 4 x 4, exact to any order; from the SVD beyond).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.det(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor(-2., dtype=float32)
    """
    _check_square(A.shape, "linalg.det")
    return np.asarray(np.linalg.det(A), dtype=A.dtype)


@det.vjp
def _(ctx, grad, A):
    n = A.shape[-1]
    if n == 0 or A.numel() == 0:
        return None
    out = ctx.output
    grad = grad.unsqueeze(-1).unsqueeze(-1)
    if _far_from_singular(A.detach().numpy(), out.detach().numpy()):
        return grad * cj(out.unsqueeze(-1).unsqueeze(-1) * inv(A).mT)
    # Near a singular matrix det * inv^T loses every digit (and fails at
    # one): the cofactor matrix is the same gradient, computed directly.
    return grad * cj(_cofactors(A) if n <= 4 else _cofactors_from_svd(A))


def _far_from_singular(a, determinant):
    # |det| over Hadamard's bound (the product of the row norms) is 1 for
    # orthogonal rows and 0 for singular matrices.
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(determinant) / np.prod(np.linalg.norm(a, axis=-1), axis=-1)
    return bool(np.all(ratio > 1e-8))


def _cofactors(A):
    """The cofactor matrix (the gradient of det): signed determinants of the
    minors. A polynomial in ``A``, exact to any order; for small matrices."""
    n = A.shape[-1]
    if n == 1:
        return ones_like(A)
    others = np.array([[j for j in range(n) if j != i] for i in range(n)])
    rows = others[:, None, :, None]         # (n, 1, n-1, 1)
    cols = others[None, :, None, :]         # (1, n, 1, n-1)
    minors = A[..., rows, cols]             # (..., n, n, n-1, n-1)
    signs = tensor(1.0 - 2.0 * (np.add.outer(np.arange(n), np.arange(n)) % 2), dtype=A.dtype)
    return det(minors) * signs


def _cofactors_from_svd(A):
    """The cofactor matrix from ``A = U S Vh``: ``det(U) det(V) U adj(S) Vh``,
    ``adj(S)`` holding the products of the other singular values (no division)."""
    U, S, Vh = _svd(A)
    signs = np.linalg.det(U.detach().numpy()) * np.linalg.det(Vh.detach().numpy())
    others = _reduce._product_of_others(S, (S.ndim - 1,))
    return ((U * others.unsqueeze(-2)) @ Vh) * tensor(signs, dtype=A.dtype).unsqueeze(
        -1).unsqueeze(-1)


@op("linalg_solve", inputs=2, save=("A",), save_output=True, promote=True,
    complex_inputs=True, float_only=True)
def _solve_op(A, B):
    """The recorded op behind :func:`solve`: ``X`` with ``A @ X = B`` for a
    matrix ``B`` (``(..., n, k)``), batch dims broadcasting.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.linalg import _solve_op
    >>> _solve_op(oxmera.eye(2) * 2, oxmera.ones(2, 1))
    tensor([[0.5],
            [0.5]], dtype=float32)
    """
    _check_square(A.shape, "linalg.solve", "A")
    if B.ndim < 2 or B.shape[-2] != A.shape[-1]:
        raise OpError(f"linalg.solve(): incompatible shapes: A {A.shape} and B {B.shape}")
    try:
        np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise OpError(f"linalg.solve(): the batch dims of A {A.shape} and B {B.shape} do not "
                      f"broadcast") from None
    try:
        return np.linalg.solve(A, B)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.solve(): A (shape {A.shape}) is singular: the system has no "
                      f"unique solution") from None


@_solve_op.vjp
def _(ctx, grad, A, B):
    # X = A^-1 B: dB = A^-T dX, dA = -dB X^T (batch dims summed by the engine).
    grad_b = _solve_op(cj(A).mT, grad)
    grad_a = -(grad_b @ cj(ctx.output).mT) if ctx.needs_input_grad[0] else None
    return grad_a, grad_b if ctx.needs_input_grad[1] else None


def solve(A, B, *, left=True):
    """The solution ``X`` of ``A @ X = B`` (``X @ A = B`` with ``left=False``):
    ``oxmera.linalg.solve``.

    ``A`` is ``(*, n, n)``; ``B`` is a batch of vectors ``(*, n)`` (when it is
    1-D or has ``A``'s shape minus the last dim) or of matrices ``(*, n, k)``;
    batch dims broadcast. A singular ``A`` is an ``oxmera.linalg.LinAlgError``.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[2.0, 1.0], [1.0, 3.0]])
    >>> oxmera.linalg.solve(A, oxmera.tensor([3.0, 5.0]))
    tensor([0.8, 1.4], dtype=float32)
    """
    sa, sb = _shape_of(A), _shape_of(B)
    _check_square(sa, "linalg.solve", "A")
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1])
    if not sb or (sb[-1] if vector else sb[-2 if left else -1]) != sa[-1]:
        raise OpError(f"linalg.solve(): incompatible shapes: A {sa} and B {sb}")
    if not left:
        A = _shape.transpose(A, -2, -1)
        if not vector:
            return _solve_op(A, _shape.transpose(B, -2, -1)).mT
    if vector:
        return _solve_op(A, _shape.unsqueeze(B, -1)).squeeze(-1)
    return _solve_op(A, B)


# -- svd, for the spectral matrix norms --------------------------------------------------------

@op("linalg_svd", save=(), save_output=True, float_only=True, complex_inputs=True,
    outputs=("U", "S", "Vh"))
def _svd(A, full_matrices=False):
    """The singular value decomposition ``A = U diag(S) Vh`` behind
    ``oxmera.linalg.svd``, :func:`svdvals` and the nuclear and spectral norms
    (``U`` is ``(..., m, k)``, ``S`` ``(..., k)`` in descending order, ``Vh``
    ``(..., k, n)``, ``k = min(m, n)``; ``(..., m, m)`` and ``(..., n, n)``
    with ``full_matrices``).

    Its gradient is PyTorch's (``svd_backward``); through ``U`` and ``Vh`` it
    needs distinct singular values, and only functions that do not depend on
    the signs of the singular vectors have a well-defined one.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.linalg import _svd
    >>> _svd(oxmera.tensor([[3.0, 0.0], [0.0, -4.0]])).S
    tensor([4., 3.], dtype=float32)
    """
    if A.ndim < 2:
        raise OpError(f"linalg.svd(): the input must have at least 2 dims, got shape {A.shape}")
    U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
    return U, S, Vh


def _absent(grad):
    # An output nothing depended on gets a zero gradient from the engine;
    # skipping its terms avoids 0/0 at repeated singular values.
    return not grad.requires_grad and not np.any(grad.detach().numpy())


@_svd.vjp
def _(ctx, grads, A, full_matrices=False):
    grad_u, grad_s, grad_vh = grads
    U, S, Vh = ctx.output
    if full_matrices:
        # As PyTorch: only the first k singular vectors are determined by A
        # (the others are any orthonormal completion); they alone carry gradient.
        k = S.shape[-1]
        U, grad_u, Vh, grad_vh = U[..., :k], grad_u[..., :k], Vh[..., :k, :], grad_vh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    use_u, use_vh = not _absent(grad_u), not _absent(grad_vh)
    if not use_u and not use_vh:
        return (U * grad_s.unsqueeze(-2)) @ Vh
    # The diagonal-free part, in the basis of the singular vectors:
    # (skew(U^H gU) S + S skew(V^H gV)) / E with E_jk = S_k^2 - S_j^2 (1 on
    # the diagonal, where the skew parts vanish for real inputs).
    squares = S * S
    k = S.shape[-1]
    diagonal = np.eye(k, dtype=bool)
    E = where(diagonal, 1.0, squares.unsqueeze(-2) - squares.unsqueeze(-1))
    inner = 0.0
    complex_ = U.dtype.kind == "c"
    phase_u = phase_v = 0.0
    if use_u:
        Uh = cj(U).mT
        product = Uh @ grad_u
        inner = (product - cj(product).mT) * S.unsqueeze(-2)
        if complex_:
            phase_u = product.diagonal(0, -2, -1)
    if use_vh:
        product = Vh @ cj(grad_vh).mT
        inner = inner + S.unsqueeze(-1) * (product - cj(product).mT)
        if complex_:
            phase_v = product.diagonal(0, -2, -1)
    inner = inner / E + grad_s.unsqueeze(-1) * eye(k, dtype=S.dtype)
    if complex_:
        _check_svd_phase(phase_u, phase_v)
        if use_u:
            # The phase of U's columns that the loss sees (that of V's
            # columns cancels it, the check above): i Im(diag(U^H gU)) / S.
            inner = inner + diag_embed(1j * phase_u.imag / S)
    if m > n and use_u:
        # The part of gU outside the span of U: (I - U U^H) gU S^-1.
        scaled = grad_u / S.unsqueeze(-2)
        return (U @ inner + scaled - U @ (Uh @ scaled)) @ Vh
    if m < n and use_vh:
        scaled = grad_vh / S.unsqueeze(-1)
        return U @ (inner @ Vh + scaled - (scaled @ cj(Vh).mT) @ Vh)
    return U @ inner @ Vh


def _check_svd_phase(phase_u, phase_v):
    """PyTorch's gauge check of svd_backward: the columns of ``U`` and ``V`` are unique
    up to a common phase ``e^(i phi)``; a loss that depends on it has no gradient
    (``Im(diag(U^H gU)) = -Im(diag(V^H gV))`` otherwise)."""
    imag_u, imag_v = (0.0 if isinstance(p, float) else p.imag.detach().numpy()
                      for p in (phase_u, phase_v))
    if not np.allclose(imag_u, -np.asarray(imag_v), atol=1e-2, rtol=1e-2):
        raise RuntimeError(
            "svd_backward: The singular vectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this phase "
            "term, making it ill-defined.")


def svdvals(A):
    """Singular values of ``A`` (``(..., min(m, n))``, descending):
    ``oxmera.linalg.svdvals``. The gradient is ``U Vh`` weighted by the
    output's gradient.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.svdvals(oxmera.tensor([[0.0, 2.0], [1.0, 0.0]]))
    tensor([2., 1.], dtype=float32)
    """
    return _svd(A).S


# -- norms ---------------------------------------------------------------------------------

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Vector norm of ``x`` over ``dim`` (all elements by default):
    ``oxmera.linalg.vector_norm``.

    ``ord`` is 2, 1, ``inf`` (max abs), ``-inf`` (min abs), 0 (nonzeros) or
    any other number. The gradient at a zero vector is 0 (as in PyTorch).
    ``axis`` is accepted for ``dim``, as in every reduction.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.linalg.vector_norm(oxmera.tensor([3.0, -4.0]))
    tensor(5., dtype=float32)
    >>> oxmera.linalg.vector_norm(oxmera.tensor([3.0, -4.0]), ord=float("inf"))
    tensor(4., dtype=float32)
    """
    if isinstance(ord, str):
        raise OpError(f"linalg.vector_norm(): ord must be a number, got {ord!r}")
    dim = pick_dim(dim, axis, "linalg.vector_norm")
    return _reduce.complex_aware_norm(x, ord, dim, keepdim, dtype)


def _matrix_dims(shape, dim, opname):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise OpError(f"{opname}(): dim must be a pair of dims, got {dim!r}")
    if len(shape) < 2:
        raise OpError(f"{opname}(): the input must have at least 2 dims, got shape {shape}")
    d0, d1 = (_core.normalize_dim(d, len(shape), opname) for d in dim)
    if d0 == d1:
        raise OpError(f"{opname}(): dims must be different, got {tuple(dim)}")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, axis=None):
    """Matrix norm of ``A`` over the two dims ``dim``: ``oxmera.linalg.matrix_norm``.

    ``ord`` is ``'fro'`` (Frobenius), ``'nuc'`` (nuclear: sum of singular
    values), 1 / -1 (max / min absolute column sum), ``inf`` / ``-inf``
    (max / min absolute row sum), 2 / -2 (largest / smallest singular value).
    ``axis`` is accepted for ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> oxmera.linalg.matrix_norm(A, 1)
    tensor(6., dtype=float32)
    >>> oxmera.linalg.matrix_norm(A, float("inf"))
    tensor(7., dtype=float32)
    """
    A = _as_tensor(A)
    dim = pick_dim(dim, axis, "linalg.matrix_norm", default=(-2, -1))
    d0, d1 = _matrix_dims(A.shape, dim, "linalg.matrix_norm")
    if isinstance(ord, str) and ord == "fro":
        return _reduce.complex_aware_norm(A, 2, (d0, d1), keepdim, dtype)
    if dtype is not None:
        A = A.to(dtype)
    if isinstance(ord, str):
        if ord != "nuc":
            raise OpError(f"linalg.matrix_norm(): unsupported ord {ord!r}")
        values = _singular_values(A, d0, d1)
        out = values.sum(-1)
    elif ord in (1, -1, math.inf, -math.inf):
        # Column sums for 1, row sums for inf; then their max (or min).
        summed, across = (d0, d1) if abs(ord) == 1 else (d1, d0)
        sums = A.abs().sum(summed, keepdim=True)
        out = (_reduce.amax if ord > 0 else _reduce.amin)(sums, across, keepdim=True)
        return out if keepdim else out.squeeze((d0, d1))
    elif ord in (2, -2):
        values = _singular_values(A, d0, d1)
        out = (_reduce.amax if ord > 0 else _reduce.amin)(values, -1)
    else:
        raise OpError(f"linalg.matrix_norm(): unsupported ord {ord!r}")
    if keepdim:
        out = out.unsqueeze(min(d0, d1)).unsqueeze(max(d0, d1))
    return out


def _singular_values(A, d0, d1):
    rest = [d for d in range(A.ndim) if d not in (d0, d1)]
    if (d0, d1) != (A.ndim - 2, A.ndim - 1):
        A = A.permute(*rest, d0, d1)
    return svdvals(A)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, axis=None):
    """Vector or matrix norm, as ``torch.linalg.norm``: ``oxmera.linalg.norm``.

    With ``dim`` an int (or a 1-tuple): a vector norm (``ord`` default 2);
    with a pair of dims: a matrix norm (``ord`` default ``'fro'``). Without
    ``dim``: the 2-norm of all elements when ``ord`` is None, else a vector
    norm of a 1-D input or a matrix norm of a 2-D one. ``axis`` is accepted
    for ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> A = oxmera.tensor([[3.0, 0.0], [0.0, 4.0]])
    >>> oxmera.linalg.norm(A)
    tensor(5., dtype=float32)
    >>> oxmera.linalg.norm(A, dim=1)
    tensor([3., 4.], dtype=float32)
    >>> oxmera.linalg.norm(A, ord=1)
    tensor(4., dtype=float32)
    """
    shape = _shape_of(A)
    dim = pick_dim(dim, axis, "linalg.norm")
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if len(shape) == 1:
            dim = (0,)
        elif len(shape) == 2:
            dim = (0, 1)
        else:
            raise OpError(f"linalg.norm(): with ord given but no dim, the input must be 1-D or "
                          f"2-D, got shape {shape}")
    if len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    raise OpError(f"linalg.norm(): dim must be an int or a pair of dims, got {tuple(dim)}")


# -- Tensor methods (as in PyTorch) ---------------------------------------------------------

def inverse(input):
    """``oxmera.linalg.inv(input)``: PyTorch's ``torch.inverse`` and ``Tensor.inverse``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.inverse(oxmera.tensor([[2.0, 0.0], [0.0, 4.0]]))
    tensor([[0.5 , 0.  ],
            [0.  , 0.25]], dtype=float32)
    """
    return inv(input)


def _det(self):
    """``oxmera.linalg.det(self)``: PyTorch's ``Tensor.det``."""
    return det(self)


for _name, _fn in (("mm", mm), ("bmm", bmm), ("dot", dot), ("vdot", vdot), ("outer", outer),
                   ("inverse", inverse), ("det", _det)):
    _registry.add_tensor_attribute(_name, _fn)
del _name, _fn
