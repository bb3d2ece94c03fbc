"""``oxmera.nn.Parameter``: the Tensor subclass a Module registers as a learnable weight.

What it owns: construction (sharing the given data's memory, requiring grad
by default) and its repr. What it leaves to others: registration happens in
``Module.__setattr__`` (``oxmera.nn.modules.module``); ops on a Parameter
return plain Tensors, and pickling, ``copy`` and ``deepcopy`` keep the
subclass and its instance attributes, both by the core and
``oxmera.ops.interop``.
"""
from oxmera._core.autograd import Tensor, _register_parameter_type

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A Tensor that is a module's learnable parameter.

    Assigning a Parameter as an attribute of a :class:`~oxmera.nn.Module`
    registers it: it then appears in ``parameters()`` and ``state_dict()``.
    Like ``torch.nn.Parameter``, it shares memory with ``data`` (a Tensor or
    an array; a list is copied, to the default float dtype), is a leaf, and
    requires grad unless ``requires_grad=False``. Only floating point data
    can require grad (``RuntimeError`` naming the dtype otherwise).

    Parameters
    ----------
    data : Tensor, array_like or None
        The initial values; ``None`` gives an empty float tensor.
    requires_grad : bool, default True
        Whether gradients are computed for it.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import Parameter
    >>> w = Parameter(oxmera.ones(2))
    >>> w
    Parameter containing:
    tensor([1., 1.], dtype=float32, requires_grad=True)
    >>> type(w * 2).__name__
    'Tensor'
    >>> Parameter(oxmera.zeros(1), requires_grad=False).requires_grad
    False
    """

    def __init__(self, data=None, requires_grad=True):
        super().__init__(None)
        if data is not None:
            if isinstance(data, Tensor):
                data = data.detach()
            # The data setter shares memory with a Tensor or an ndarray, as
            # torch.nn.Parameter(t) shares t's storage.
            self.data = data
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


# Graphs computed from exact Parameters can then be hidden from the cyclic
# collector like those of plain tensors (see the sealing comment in the core).
_register_parameter_type(Parameter)
