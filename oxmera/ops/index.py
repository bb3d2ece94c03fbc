"""Indexing: ``t[index]`` with ints, slices, None, Ellipsis, bool masks and
integer tensors/arrays (NumPy's basic and advanced indexing).

The VJP of indexing scatters the gradient into zeros of the input's shape
(``index_backward``), adding where an index repeats; the VJP of that is
indexing again, so both are differentiable to any order.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op

__all__ = ["getitem"]

Tensor = _core.Tensor
_BASIC = (int, slice, type(None), type(Ellipsis))


def normalize_index(index):
    """The index with Tensors turned into arrays, as a tuple; and whether it is basic."""
    if not isinstance(index, tuple):
        index = (index,)
    out = []
    basic = True
    for part in index:
        if isinstance(part, Tensor):
            part = part._data
        elif isinstance(part, (list, np.ndarray)) or (isinstance(part, np.generic)
                                                       and part.dtype == np.bool_):
            part = np.asarray(part)
        elif isinstance(part, np.integer):
            part = int(part)
        if isinstance(part, bool) or not isinstance(part, _BASIC):
            basic = False
            if isinstance(part, np.ndarray) and part.dtype.kind not in "biu":
                raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                                 f"got dtype {part.dtype}")
        out.append(part)
    if basic and Ellipsis not in out:
        # A trailing Ellipsis makes NumPy return a 0-d view, not a scalar copy.
        out.append(Ellipsis)
    return tuple(out), basic


@op("index", save=(), view=True, operators=("__getitem__",))
def getitem(input, index):
    """``input[index]``: NumPy indexing rules, as a differentiable op.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.arange(6.0).reshape(2, 3)
    >>> x[1, 1:]
    tensor([4., 5.], dtype=float32)
    >>> x[x > 3]
    tensor([4., 5.], dtype=float32)
    """
    idx, _ = normalize_index(index)
    try:
        return input[idx]
    except IndexError as err:
        raise IndexError(f"index: {err} (tensor of shape {input.shape})") from None


@getitem.vjp
def _(ctx, grad, input, index):
    return index_backward(grad, ctx.input_shape(0), index)


@op(save=())
def index_backward(grad, shape, index):
    """Zeros of ``shape`` with ``grad`` added at ``index`` (repeats accumulate).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.index import index_backward
    >>> index_backward(oxmera.ones(3), (2,), oxmera.tensor([0, 0, 1]))
    tensor([2., 1.], dtype=float32)
    """
    idx, basic = normalize_index(index)
    out = np.zeros(shape, dtype=grad.dtype)
    if basic:
        out[idx] = grad
    else:
        np.add.at(out, idx, grad)
    return out


@index_backward.vjp
def _(ctx, grad, grad_in, shape, index):
    return grad[index]
