"""Devices: ``oxmera.device``, and the one rule about them — oxmera computes on the CPU.

A :class:`device` object can name any device PyTorch knows (``cuda:0``,
``mps``...), since programs build them before deciding where to run; placing
a tensor or a module anywhere but the CPU is a ``RuntimeError`` saying why
(:func:`check_cpu`). Every function with a ``device=`` keyword goes through
:func:`check_cpu`, so the rule and its message live here once.

The default device (``set_default_device``, ``with oxmera.device("cpu"):``)
is the CPU and can only be set to it.
"""
import operator
import threading

__all__ = ["device", "set_default_device", "get_default_device"]

# PyTorch's device types (torch/csrc/Device parsing): a name outside these is an error
# there too, so a typo is caught whichever library the program runs on.
_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "xla", "meta", "hip", "ve", "fpga", "ipu",
                 "lazy", "vulkan", "mtia", "hpu", "maia", "privateuseone", "opengl",
                 "opencl", "ideep", "mkldnn")


class device:
    """A device: its ``type`` (``"cpu"``, ``"cuda"``, ...) and optional ``index``.

    Made as PyTorch's are: ``device("cpu")``, ``device("cuda:1")``,
    ``device("cuda", 1)``, ``device(type="cpu")``, ``device(0)`` (the CUDA
    device 0). Devices compare equal when type and index are equal (a device
    never equals a string); ``str`` gives ``"cpu"`` or ``"cuda:1"``. Only the
    CPU can hold tensors: see :func:`oxmera.set_default_device`.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.device("cpu")
    device(type='cpu')
    >>> d = oxmera.device("cuda", 1)
    >>> str(d), d.type, d.index
    ('cuda:1', 'cuda', 1)
    >>> oxmera.device("cpu") == oxmera.device("cpu:0")
    False
    """

    __slots__ = ("_type", "_index")

    def __init__(self, type=None, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): an index cannot be given with a device object")
            self._type, self._index = type._type, type._index
            return
        if type is None:
            raise TypeError("device(): missing the device type (e.g. device('cpu'))")
        if not isinstance(type, str):
            try:
                ordinal = operator.index(type)
            except TypeError:
                raise TypeError(f"device(): expected a str, an int or a device, got "
                                f"{builtins_type(type).__name__}") from None
            if index is not None:
                raise TypeError("device(): an int device cannot be given an index")
            type, index = "cuda", ordinal
        kind, sep, suffix = type.partition(":")
        if sep:
            if index is not None:
                raise RuntimeError(f"device(): type (string) must not include an index because "
                                   f"index was passed explicitly: {type}")
            if not suffix.isdigit() or (len(suffix) > 1 and suffix[0] == "0"):
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(suffix)
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                               f"start of device string: {type}")
        if index is not None:
            try:
                index = operator.index(index)
            except TypeError:
                raise TypeError(f"device(): index must be an int, got "
                                f"{builtins_type(index).__name__}") from None
            if index < 0:
                raise RuntimeError(f"Device index must not be negative, got {index}")
        self._type, self._index = kind, index

    @property
    def type(self):
        """The device type, e.g. ``"cpu"``."""
        return self._type

    @property
    def index(self):
        """The device index, or None."""
        return self._index

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self._type == other._type and self._index == other._index

    def __hash__(self):
        return hash((self._type, self._index))

    def __str__(self):
        return self._type if self._index is None else f"{self._type}:{self._index}"

    def __repr__(self):
        if self._index is None:
            return f"device(type='{self._type}')"
        return f"device(type='{self._type}', index={self._index})"

    def __reduce__(self):
        return (device, (self._type, self._index))

    # ``with oxmera.device("cpu"):`` sets the default device inside the block.
    def __enter__(self):
        previous = get_default_device()
        set_default_device(self)
        _state.stack.append(previous)
        return self

    def __exit__(self, *exc):
        set_default_device(_state.stack.pop())
        return False


builtins_type = type      # (``type`` is a parameter name above, as in PyTorch)
_device_class = device    # (``device`` is a parameter name below, as in PyTorch)

_CPU = device("cpu")


class _DefaultDevice(threading.local):
    stack = []

    def __init__(self):
        self.stack = []


_state = _DefaultDevice()


def check_cpu(where, dev):
    """``dev`` as a :class:`device` (None stays None) if it is the CPU; else a RuntimeError.

    ``where`` names the call for the message, e.g. ``"zeros()"`` or ``"Tensor.to()"``.
    """
    if dev is None:
        return None
    if not isinstance(dev, device):
        dev = device(dev)
    if dev._type != "cpu":
        raise RuntimeError(
            f"{where}: cannot use device '{dev}': oxmera computes on the CPU with NumPy "
            f"(only device 'cpu' exists; use device='cpu', or leave device out)")
    return dev


def cuda_device(where, device=None):
    """The CUDA device a ``.cuda(device)`` call names (``where`` names the call).

    As in PyTorch: None is ``cuda``, an int a CUDA device index, a string or
    device is taken as it is and must be a CUDA one (a RuntimeError otherwise).
    Callers pass the result to :func:`check_cpu`, which refuses it.
    """
    if device is None:
        return _device_class("cuda")
    if isinstance(device, (str, _device_class)):
        named = _device_class(device)
    else:
        named = _device_class("cuda", device)
    if named.type != "cuda":
        raise RuntimeError(f"{where}: invalid device '{named}', must be a cuda device")
    return named


def set_default_device(device):
    """Set the device new tensors are made on: only the CPU (or None, the CPU) is allowed.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.set_default_device("cpu")
    >>> oxmera.get_default_device()
    device(type='cpu')
    """
    check_cpu("set_default_device()", device)


def get_default_device():
    """The device new tensors are made on: always the CPU.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.get_default_device()
    device(type='cpu')
    """
    return _CPU
