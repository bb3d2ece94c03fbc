"""Gradient clipping: ``clip_grad_norm_`` and ``clip_grad_value_``, and the two halves
of the first, ``get_total_norm`` and ``clip_grads_with_norm_`` (PyTorch 2.6+).

Both work on the ``.grad`` of the given tensors in place (with oxmera's
in-place ops under ``no_grad``, so versions are bumped and nothing records),
and follow PyTorch's ``torch.nn.utils`` to the operation: the total norm is
the norm of the per-tensor norms, and the gradients are multiplied by
``min(1, max_norm / (total_norm + 1e-6))`` in their own dtype.
"""
import types
import warnings

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.autograd.grad_mode import no_grad
from oxmera.ops.creation import tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _parameters(parameters, name):
    if isinstance(parameters, Tensor):
        return [parameters]
    is_generator = isinstance(parameters, types.GeneratorType)
    parameters = list(parameters)
    if is_generator and not parameters:
        warnings.warn(f"{name}(): `parameters` is an empty generator, no gradient clipping "
                      f"will occur", stacklevel=3)
    for i, p in enumerate(parameters):
        if not isinstance(p, Tensor):
            raise TypeError(f"{name}(): expected Tensors, but parameter {i} is a "
                            f"{type(p).__name__}")
    return parameters


def _total_norm(grads, norm_type, error_if_nonfinite, name):
    """The norm of the per-tensor norms of ``grads`` (a NumPy scalar), checked if asked."""
    norms = [np.linalg.vector_norm(g._data, ord=norm_type) for g in grads]
    dtype = np.result_type(*norms)
    total_norm = np.linalg.vector_norm(np.array(norms, dtype=dtype), ord=norm_type)
    if error_if_nonfinite and not np.isfinite(total_norm):
        raise RuntimeError(
            f"{name}(): the total norm of order {norm_type} for gradients from "
            f"`parameters` is non-finite ({total_norm}), so it cannot be clipped; nothing was "
            f"changed. To scale the gradients by the non-finite norm anyway, set "
            f"`error_if_nonfinite=False`")
    return total_norm


def _scale(grads, max_norm, total_norm):
    dtype = total_norm.dtype
    clip_coef = max_norm / (total_norm + dtype.type(1e-6))
    clip_coef = np.minimum(clip_coef, dtype.type(1.0))
    # A non-finite norm scales by NaN or 0 as documented (inf * 0 is NaN): no NumPy warning.
    with no_grad(), np.errstate(invalid="ignore", over="ignore"):
        for g in grads:
            g.mul_(clip_coef.astype(g.dtype))


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the norms of ``tensors`` (typically gradients), as one 0-d tensor.

    As if they were concatenated into one vector; ``foreach`` is accepted
    for PyTorch's signature and has no effect. An empty list gives 0.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils import get_total_norm
    >>> get_total_norm([oxmera.tensor([3.0]), oxmera.tensor([4.0])])
    tensor(5., dtype=float32)
    """
    tensors = _parameters(tensors, "get_total_norm")
    if not tensors:
        return tensor(0.0)
    total_norm = _total_norm(tensors, float(norm_type), error_if_nonfinite, "get_total_norm")
    return tensor(total_norm, dtype=total_norm.dtype)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Multiply the gradients by ``min(1, max_norm / (total_norm + 1e-6))``, in place.

    ``total_norm`` is usually :func:`get_total_norm` of the gradients (a
    tensor or a number); ``foreach`` has no effect.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils import clip_grads_with_norm_, get_total_norm
    >>> w = oxmera.zeros(2, requires_grad=True)
    >>> w.grad = oxmera.tensor([3.0, 4.0])
    >>> clip_grads_with_norm_([w], 1.0, get_total_norm([w.grad]))
    >>> w.grad
    tensor([0.6, 0.8], dtype=float32)
    """
    parameters = _parameters(parameters, "clip_grads_with_norm_")
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return
    total = total_norm._data if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    if total.dtype.kind != "f":
        total = total.astype(np.float32)
    _scale(grads, float(max_norm), total[()])


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients so that their total norm is at most ``max_norm``.

    The total norm is computed over all gradients together, as if they were
    concatenated into one vector; each ``.grad`` is multiplied in place by
    ``min(1, max_norm / (total_norm + 1e-6))``.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Tensors whose ``.grad`` to clip (those without one are skipped).
    max_norm : float
        Largest allowed total norm.
    norm_type : float, default 2.0
        Order of the norm; ``float('inf')`` for the largest absolute value.
    error_if_nonfinite : bool, default False
        Raise ``RuntimeError`` (changing nothing) when the total norm is NaN
        or infinite, instead of scaling by it.
    foreach : bool or None
        Accepted for PyTorch's signature; no effect.

    Returns
    -------
    Tensor
        The total norm before clipping (0-d, in the gradients' dtype).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils import clip_grad_norm_
    >>> w = oxmera.zeros(2, requires_grad=True)
    >>> w.grad = oxmera.tensor([3.0, 4.0])
    >>> clip_grad_norm_([w], max_norm=1.0)
    tensor(5., dtype=float32)
    >>> w.grad
    tensor([0.6, 0.8], dtype=float32)
    """
    parameters = _parameters(parameters, "clip_grad_norm_")
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return tensor(0.0)
    total_norm = _total_norm(grads, float(norm_type), error_if_nonfinite, "clip_grad_norm_")
    _scale(grads, float(max_norm), total_norm)
    return tensor(total_norm, dtype=total_norm.dtype)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated spelling of :func:`clip_grad_norm_` (a FutureWarning, as in PyTorch).

    Examples
    --------
    >>> import warnings, oxmera
    >>> from oxmera.nn.utils import clip_grad_norm
    >>> w = oxmera.zeros(2, requires_grad=True)
    >>> w.grad = oxmera.tensor([3.0, 4.0])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     clip_grad_norm([w], 10.0)
    tensor(5., dtype=float32)
    """
    warnings.warn("`oxmera.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`oxmera.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value):
    """Clamp every gradient element into ``[-clip_value, clip_value]``, in place.

    Parameters
    ----------
    parameters : Tensor or iterable of Tensor
        Tensors whose ``.grad`` to clip (those without one are skipped).
    clip_value : float
        Largest allowed absolute value.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils import clip_grad_value_
    >>> w = oxmera.zeros(3, requires_grad=True)
    >>> w.grad = oxmera.tensor([-2.0, 0.5, 3.0])
    >>> clip_grad_value_(w, 1.0)
    >>> w.grad
    tensor([-1. ,  0.5,  1. ], dtype=float32)
    """
    parameters = _parameters(parameters, "clip_grad_value_")
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
