"""Helpers the distributions share: broadcasting parameters, probs <-> logits, lazy
attributes, summing event dimensions, the random draws.

What it leaves to others: the ops (``oxmera.ops``), the generators (``oxmera.random``).
"""
import functools
import numbers

import numpy as np

import oxmera
from oxmera import random as _random

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]

Tensor = oxmera.Tensor


def broadcast_all(*values):
    """Broadcast numbers and tensors to one shape, as tensors.

    Numbers become tensors of the tensors' dtype (the default dtype when all are
    numbers), so a ``Normal(0., scale)`` keeps ``scale``'s dtype.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.utils import broadcast_all
    >>> a, b = broadcast_all(oxmera.zeros(2, 1), 1.0)
    >>> tuple(a.shape), tuple(b.shape)
    ((2, 1), (2, 1))
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or "
                         "oxmera.Tensor.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else oxmera.get_default_dtype()
    as_tensors = [v if isinstance(v, Tensor) else oxmera.tensor(v, dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in as_tensors))
    return tuple(t.expand(*shape) if tuple(t.shape) != shape else t for t in as_tensors)


def _dtype_eps(dtype):
    return float(np.finfo(dtype).eps)


def clamp_probs(probs):
    """Probabilities clamped into ``[eps, 1 - eps]`` of their dtype (for logs of them).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.utils import clamp_probs
    >>> clamp_probs(oxmera.tensor([0.0, 1.0], dtype=oxmera.float64))[0].item() > 0
    True
    """
    eps = _dtype_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Logits to probabilities: a sigmoid (``is_binary``) or a softmax over the last dim.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.utils import logits_to_probs
    >>> logits_to_probs(oxmera.tensor([0.0, 0.0])).tolist()
    [0.5, 0.5]
    """
    if is_binary:
        return oxmera.sigmoid(logits)
    return oxmera.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    """Probabilities to logits: ``log(p) - log1p(-p)`` (``is_binary``) or ``log(p)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.utils import probs_to_logits
    >>> probs_to_logits(oxmera.tensor([0.5]), is_binary=True).tolist()
    [0.0]
    """
    clamped = clamp_probs(probs)
    if is_binary:
        return oxmera.log(clamped) - oxmera.log1p(-clamped)
    return oxmera.log(clamped)


class lazy_property:
    """A property computed once, on first use, then stored on the instance.

    Distributions use it for the parameterization not given (``probs`` from
    ``logits`` and back), so only the one asked for is built.

    Examples
    --------
    >>> from oxmera.distributions.utils import lazy_property
    >>> class A:
    ...     @lazy_property
    ...     def x(self):
    ...         print("computed")
    ...         return 1
    >>> a = A(); a.x
    computed
    1
    >>> a.x
    1
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            # Looked up on the class (by help(), Sphinx's autodoc): a read-only
            # property of the same function and docstring, which documents as one.
            return _ClassView(self.wrapped)
        with oxmera.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _ClassView(property):
    """What a :class:`lazy_property` looks like on its class: a plain property."""

    def __init__(self, wrapped):
        super().__init__(wrapped)
        functools.update_wrapper(self, wrapped)


def _sum_rightmost(value, dim):
    """Sum the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(*value.shape[:value.dim() - dim], -1).sum(-1)


def _extended_shape(sample_shape, batch_shape, event_shape=()):
    return tuple(sample_shape) + tuple(batch_shape) + tuple(event_shape)


def _rng(where):
    """The default generator's NumPy generator (seeded by ``oxmera.manual_seed``)."""
    return _random.numpy_generator(None, where)


def _draw(values, like):
    """A drawn NumPy array as a tensor of ``like``'s dtype, recording nothing."""
    return oxmera.tensor(np.asarray(values), dtype=like.dtype)


def _numpy(t):
    return t.detach().numpy()


def _batch_mv(matrix, vector):
    """``matrix @ vector`` over broadcast batch dimensions."""
    return oxmera.matmul(matrix, vector.unsqueeze(-1)).squeeze(-1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower triangle (from diagonal ``diag``) of the last two dims, as a vector.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.utils import tril_matrix_to_vec
    >>> tril_matrix_to_vec(oxmera.tensor([[1., 2.], [3., 4.]])).tolist()
    [1.0, 3.0, 4.0]
    """
    n = mat.shape[-1]
    rows, cols = np.tril_indices(n, k=diag)
    return mat[..., oxmera.tensor(rows), oxmera.tensor(cols)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of :func:`tril_matrix_to_vec`: a lower-triangular matrix.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions.utils import vec_to_tril_matrix
    >>> vec_to_tril_matrix(oxmera.tensor([1., 3., 4.])).tolist()
    [[1.0, 0.0], [3.0, 4.0]]
    """
    m = vec.shape[-1]
    n = 0
    while len(np.tril_indices(n, k=diag)[0]) < m:
        n += 1
    if len(np.tril_indices(n, k=diag)[0]) != m:
        raise ValueError(f"vec_to_tril_matrix(): a vector of size {m} is not the lower "
                         f"triangle (diagonal {diag}) of a square matrix")
    rows, cols = np.tril_indices(n, k=diag)
    flat_index = np.full((n, n), m, dtype=np.int64)
    flat_index[rows, cols] = np.arange(m)
    padded = oxmera.cat([vec, oxmera.zeros(*vec.shape[:-1], 1, dtype=vec.dtype)], dim=-1)
    return padded[..., oxmera.tensor(flat_index.reshape(-1))].reshape(*vec.shape[:-1], n, n)
