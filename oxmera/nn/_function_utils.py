"""What the functions of ``oxmera.nn.functional`` share: taking inputs, and ``inplace=``."""
from oxmera._core import autograd as _core
from oxmera.ops import creation as _creation

Tensor = _core.Tensor


def as_input(value, opname, what="input"):
    """``value`` as a Tensor (arrays and lists are wrapped, sharing memory)."""
    if isinstance(value, Tensor):
        return value
    if value is None:
        raise TypeError(f"{opname}(): {what} must be a Tensor, got None")
    if getattr(type(value), "__oxmera_function__", None) is not None:
        # A sparse tensor (oxmera.ops.sparse) is refused by name, as its ops are.
        raise NotImplementedError(f"{opname}(): not supported for sparse tensors (layout="
                                  f"{value.layout!r}); call .to_dense() first")
    return _creation.as_tensor(value)


def apply_inplace(fn, input, inplace, opname):
    """``fn(input)``, or with PyTorch's ``inplace=True`` written into ``input`` (``copy_``).

    In place, ``fn`` runs on a clone: its graph must not save the very tensor
    the copy then modifies.
    """
    if not inplace:
        return fn(input)
    copy_ = getattr(input, "copy_", None)
    if copy_ is None:
        raise NotImplementedError(f"{opname}(): inplace=True needs Tensor.copy_")
    return copy_(fn(input.clone()))
