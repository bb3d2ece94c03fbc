"""Copies and dtype conversions: clone, contiguous, to / float / double ...
(``Tensor.type``, with the legacy type names, is in ``tensor_types``.)

Casting between floating dtypes is differentiable (the gradient is cast
back); casting to an integer or bool dtype cuts the graph, as in PyTorch.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import _registry

__all__ = ["clone", "contiguous", "to"]


@op(save=(), method=True)
def clone(input):
    """A copy with its own memory; gradients flow through it.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> y = x.clone()
    >>> y is x
    False
    """
    return np.array(input, copy=True)


@clone.vjp
def _(ctx, grad, input):
    return grad


@op(save=(), view=True, method=True)
def contiguous(input):
    """The tensor in C-contiguous memory (a view of it when it already is).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).T.contiguous().shape
    oxmera.Size([3, 2])
    """
    if input.flags.c_contiguous:
        # np.ascontiguousarray would return the array itself; a view keeps
        # the output sharing the input's version counter, like any view.
        return input.view()
    return np.ascontiguousarray(input)


@contiguous.vjp
def _(ctx, grad, input):
    return grad


# quiet: a float32 value past float16's range becomes inf silently, as in PyTorch.
@op("to", save=(), quiet=True)
def _cast(input, dtype):
    """The recorded dtype conversion behind :func:`to` (always a copy).

    The engine also uses it to cast gradients to their input's dtype.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.conversion import _cast
    >>> _cast(oxmera.tensor([1.5, 2.5]), oxmera.float64)
    tensor([1.5, 2.5], dtype=float64)
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in "biuf":
        raise TypeError(f"to(): unsupported dtype {dtype}")
    return input.astype(dtype)


@_cast.vjp
def _(ctx, grad, input, dtype):
    return grad.to(ctx.input_dtype(0))


_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta")


def to(input, *args, dtype=None, device=None, copy=False, non_blocking=False):
    """Convert to ``dtype`` (a copy only when the dtype changes, or ``copy=True``).

    Accepts PyTorch's forms: ``to(dtype)``, ``to(other_tensor)`` (its dtype),
    ``to(device)``, ``to(device, dtype)``, keywords ``dtype=``/``device=``.
    Devices other than ``"cpu"`` are an error: oxmera is CPU-only. A
    conversion to an integer or bool dtype is not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.5]).to(oxmera.float64)
    tensor([1.5], dtype=float64)
    >>> oxmera.tensor([1.5]).to("cpu", dtype=oxmera.float16)
    tensor([1.5], dtype=float16)
    """
    for arg in args:
        if isinstance(arg, _core.Tensor):
            dtype = arg.dtype
        elif isinstance(arg, str) and arg.split(":")[0] in _DEVICE_TYPES:
            device = arg
        elif dtype is None:
            dtype = arg
        else:
            raise TypeError(f"to(): unexpected argument {arg!r} after dtype {dtype!r}")
    if device is not None and str(device).split(":")[0] != "cpu":
        raise RuntimeError(f"to(): oxmera tensors live on the CPU only, got device {device!r}")
    if dtype is None or np.dtype(dtype) == input.dtype:
        return input.clone() if copy else input
    result = _cast(input, dtype)
    if np.dtype(dtype).kind != "f":
        return result.detach()
    return result


def _caster(dtype):
    def method(self):
        return to(self, dtype)
    method.__name__ = np.dtype(dtype).name
    method.__doc__ = f"Convert to {np.dtype(dtype).name} (like ``to({np.dtype(dtype).name})``)."
    return method


_registry.add_tensor_attribute("to", to)
_registry.add_tensor_attribute("copy", clone)
for _name, _dtype in (("float", np.float32), ("double", np.float64), ("half", np.float16),
                      ("long", np.int64), ("int", np.int32), ("short", np.int16),
                      ("bool", np.bool_), ("byte", np.uint8), ("char", np.int8)):
    _registry.add_tensor_attribute(_name, _caster(_dtype))
