"""Copies and dtype conversions: clone, contiguous, to / float / double ...
(``Tensor.type``, with the legacy type names, is in ``tensor_types``.)

Casting between floating dtypes is differentiable (the gradient is cast
back); casting to an integer or bool dtype cuts the graph, as in PyTorch.
"""
import numpy as np

from oxmera import _device, _layout
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
    if dtype.kind not in "biufc":
        raise TypeError(f"to(): unsupported dtype {dtype}")
    if input.dtype.kind == "c" and dtype.kind != "c":
        # Complex to real keeps the real part (PyTorch's cast; NumPy's warns).
        # This is also how a complex gradient reaches a real input: the
        # gradient of a real x used in a complex result is the real part.
        input = input.real
    return input.astype(dtype)


@_cast.vjp
def _(ctx, grad, input, dtype):
    return grad.to(ctx.input_dtype(0))


def _is_dtype(value):
    # NumPy dtypes and scalar types (oxmera.float32, np.float32). A string is a
    # device in PyTorch's to() ("cpu", "cuda:0"), never a dtype name.
    return isinstance(value, np.dtype) or (isinstance(value, type)
                                           and issubclass(value, np.generic))


def _is_device(value):
    return value is None or isinstance(value, (str, _device.device)) or (
        isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)))


def parse_to(where, args, kwargs, allow_copy=True):
    """PyTorch's ``to()`` arguments as ``(device, dtype, non_blocking, copy, memory_format)``.

    The three forms are PyTorch's: ``(device=None, dtype=None, non_blocking=False,
    copy=False)``, ``(dtype, non_blocking=False, copy=False)`` and ``(tensor,
    non_blocking=False, copy=False)`` (the tensor's device and dtype), each
    positionally or by keyword, plus the keyword ``memory_format``. The device
    must be the CPU (``oxmera._device.check_cpu``); ``dtype`` is a NumPy
    dtype or None; ``memory_format`` is None when not given. ``where`` names
    the call in messages; ``allow_copy=False`` refuses ``copy`` (``Module.to``).
    Shared by ``Tensor.to`` and ``nn.Module.to``.
    """
    kwargs = dict(kwargs)
    if "copy" in kwargs and not allow_copy:
        raise RuntimeError(f"{where} does not accept copy argument")
    if args and isinstance(args[0], _core.Tensor):
        names = ("tensor", "non_blocking", "copy")
    elif args and _is_dtype(args[0]):
        names = ("dtype", "non_blocking", "copy")
    elif args and _is_device(args[0]):
        names = ("device", "dtype", "non_blocking", "copy")
    elif args:
        raise TypeError(f"{where}: expected a device, a dtype or a Tensor first, got "
                        f"{args[0]!r}")
    else:
        names = ("copy",)       # (dropped below when copy is refused)
    if not allow_copy:
        names = names[:-1]
    if len(args) > len(names):
        raise TypeError(f"{where}: unexpected argument {args[len(names)]!r} (positional "
                        f"arguments of this form: {', '.join(names)})")
    for name, value in zip(names, args):
        if name in kwargs:
            raise TypeError(f"{where} got multiple values for argument '{name}'")
        kwargs[name] = value
    tensor = kwargs.pop("tensor", None)
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"{where} got an unexpected keyword argument {next(iter(kwargs))!r}")
    if tensor is not None:
        device, dtype = tensor.device, tensor.dtype
    if not _is_device(device):
        raise TypeError(f"{where}: device must be a str, an oxmera.device or an int, got "
                        f"{device!r}")
    device = _device.check_cpu(where, device)
    if dtype is not None:
        if not _is_dtype(dtype):
            raise TypeError(f"{where}: expected a dtype (e.g. oxmera.float64), got {dtype!r}")
        dtype = np.dtype(dtype)
    for name, flag in (("non_blocking", non_blocking), ("copy", copy)):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{where}: unexpected argument {flag!r} ({name} must be a bool)")
    if memory_format is not None:
        memory_format = _layout.check_memory_format(where, memory_format)
    return device, dtype, bool(non_blocking), bool(copy), memory_format


def _in_format(input, memory_format, where):
    """``input`` laid out in ``memory_format`` (itself when it already is); differentiable."""
    if memory_format is None or memory_format is _layout.preserve_format:
        return input
    if memory_format is _layout.contiguous_format:
        return input if input._data.flags.c_contiguous else contiguous(input)
    order = _layout.dim_order(where, memory_format, input.shape)
    if input._data.transpose(order).flags.c_contiguous:
        return input
    inverse = tuple(int(i) for i in np.argsort(order))
    # Composite of differentiable ops: C order in the permuted order, seen back
    # in the tensor's own dimension order.
    return contiguous(input.permute(*order)).permute(*inverse)


def to(input, *args, **kwargs):
    """Convert to a dtype, device (the CPU) or memory format, as PyTorch's ``Tensor.to``.

    The forms are PyTorch's: ``to(dtype)``, ``to(device)``, ``to(device,
    dtype)``, ``to(other_tensor)`` (its dtype; its device is the CPU),
    optionally followed by ``non_blocking`` and ``copy``, and the keywords
    ``device=``, ``dtype=``, ``non_blocking=``, ``copy=``, ``memory_format=``.
    A device is a string (``"cpu"``, ``"cpu:0"``), an :class:`oxmera.device`
    or an int; any device but the CPU is a RuntimeError (oxmera computes on
    the CPU). ``non_blocking`` is accepted and has no effect (every copy is
    synchronous). The tensor itself is returned when nothing changes;
    ``copy=True`` always makes a new tensor. ``memory_format``:
    ``oxmera.preserve_format`` (the default) keeps the input's memory order,
    ``contiguous_format`` gives C order (where PyTorch returns a non-contiguous
    tensor that is not channels-last as it is), ``channels_last`` (4-d) and
    ``channels_last_3d`` (5-d) put dim 1 innermost. Casts between floating
    dtypes and changes of memory format are differentiable; a conversion to
    an integer or bool dtype is not (as in PyTorch).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.5]).to(oxmera.float64)
    tensor([1.5], dtype=float64)
    >>> oxmera.tensor([1.5]).to("cpu", dtype=oxmera.float16)
    tensor([1.5], dtype=float16)
    >>> x = oxmera.ones(2)
    >>> x.to("cpu") is x, x.to(x, copy=True) is x
    (True, False)
    """
    if not kwargs and len(args) == 1 and isinstance(args[0], np.dtype):
        # to(dtype), the call gradients and ops make: no parsing to pay for.
        dtype, copy, memory_format = args[0], False, None
    else:
        _, dtype, _, copy, memory_format = parse_to("Tensor.to()", args, kwargs)
    result = input
    if dtype is not None and dtype != input.dtype:
        result = _cast(input, dtype)
        if dtype.kind not in "fc":
            result = result.detach()
    if memory_format is not None:
        result = _in_format(result, memory_format, "Tensor.to()")
    if copy and result is input:
        result = clone(input)
    return result


def _caster(dtype):
    def method(self):
        return to(self, dtype)
    method.__name__ = np.dtype(dtype).name
    method.__doc__ = f"Convert to {np.dtype(dtype).name} (like ``to({np.dtype(dtype).name})``)."
    return method


def _device_of(self):
    """The device the tensor is on: always ``oxmera.device("cpu")``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2).device
    device(type='cpu')
    """
    return _device.get_default_device()


def _cpu(self, memory_format=None):
    """The tensor on the CPU: the tensor itself (it is there), as in PyTorch.

    ``memory_format`` (default: keep the tensor's) is applied as in ``Tensor.to``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.ones(2)
    >>> x.cpu() is x
    True
    """
    return _in_format(self, _layout.check_memory_format("Tensor.cpu()", memory_format),
                      "Tensor.cpu()")


def _cuda(self, device=None, non_blocking=False, memory_format=None):
    """Always a RuntimeError: oxmera has no CUDA device (it computes on the CPU).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(2).cuda()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    RuntimeError: Tensor.cuda(): cannot use device 'cuda': oxmera computes on the CPU ...
    """
    _device.check_cpu("Tensor.cuda()", _device.cuda_device("Tensor.cuda()", device))


def _pin_memory(self, device=None):
    """The tensor itself: pinned memory only speeds up copies to an accelerator.

    PyTorch returns a copy in page-locked memory (and without an accelerator
    raises a RuntimeError); oxmera has no accelerator to copy to, so there is
    nothing to pin and the tensor is returned as it is (``is_pinned()`` stays
    False). Programs written for a GPU that pin their batches run unchanged.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.ones(2)
    >>> x.pin_memory() is x, x.is_pinned()
    (True, False)
    """
    if device is not None:
        _device.check_cpu("Tensor.pin_memory()", device)
    return self


def _is_pinned(self, device=None):
    """False: oxmera never pins memory (see ``Tensor.pin_memory``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(2).is_pinned()
    False
    """
    return False


def _get_device(self):
    """-1, PyTorch's answer for a CPU tensor (CUDA tensors give their device index).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.ones(2).get_device()
    -1
    """
    return -1


def _constant_property(value, doc):
    def getter(self):
        return value
    getter.__doc__ = doc
    return property(getter)


_registry.add_tensor_attribute("to", to)
_registry.add_tensor_attribute("copy", clone)
_registry.add_tensor_attribute("device", property(_device_of))
_registry.add_tensor_attribute("cpu", _cpu)
_registry.add_tensor_attribute("cuda", _cuda)
_registry.add_tensor_attribute("pin_memory", _pin_memory)
_registry.add_tensor_attribute("is_pinned", _is_pinned)
_registry.add_tensor_attribute("get_device", _get_device)
_registry.add_tensor_attribute("is_cpu", _constant_property(True, "True: tensors are on the CPU."))
for _name in ("is_cuda", "is_mps", "is_meta", "is_xpu"):
    _registry.add_tensor_attribute(_name, _constant_property(
        False, f"False: oxmera tensors are on the CPU (``{_name}`` is PyTorch's)."))
for _name, _dtype in (("float", np.float32), ("double", np.float64), ("half", np.float16),
                      ("long", np.int64), ("int", np.int32), ("short", np.int16),
                      ("bool", np.bool_), ("byte", np.uint8), ("char", np.int8),
                      ("cfloat", np.complex64), ("cdouble", np.complex128)):
    _registry.add_tensor_attribute(_name, _caster(_dtype))
