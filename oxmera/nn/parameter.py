"""``oxmera.nn.Parameter``: the Tensor subclass a Module registers as a learnable weight.

What it owns: construction (sharing the given data's memory, requiring grad
by default) and its repr. What it leaves to others: registration happens in
``Module.__setattr__`` (``oxmera.nn.modules.module``); ops on a Parameter
return plain Tensors, and pickling, ``copy`` and ``deepcopy`` keep the
subclass and its instance attributes, both by the core and
``oxmera.ops.interop``.
"""
import numpy as np

from oxmera._core.autograd import Tensor, _register_parameter_type, get_default_dtype

__all__ = ["Parameter", "UninitializedParameter", "UninitializedBuffer"]


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


_UNINITIALIZED = ("Can't access the shape of an uninitialized parameter or buffer. This error "
                  "usually happens in `load_state_dict` when trying to load an uninitialized "
                  "parameter into an initialized one. Call `forward` to initialize the "
                  "parameters before accessing their attributes.")


class UninitializedTensorMixin:
    """What the placeholders of lazy modules share: no shape until ``materialize()``.

    Asking their shape or size is a RuntimeError, as in PyTorch; ``materialize``
    gives them an (uninitialized) array of a shape and makes a parameter a
    plain :class:`Parameter`.
    """

    cls_to_become = None

    def _lazy_init(self, dtype):
        self._lazy_dtype = np.dtype(get_default_dtype() if dtype is None else dtype)

    def materialize(self, shape, device=None, dtype=None):
        """Give this placeholder an uninitialized array of ``shape`` (``dtype`` default:
        the one it was made with); a parameter becomes a :class:`Parameter`."""
        from oxmera._device import check_cpu
        check_cpu("materialize()", device)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.data = np.empty(shape, dtype=self._lazy_dtype if dtype is None else dtype)
        self._materialized = True
        if self.cls_to_become is not None:
            # A plain Parameter from now on: without the placeholder's attributes,
            # its graphs can be hidden from the collector (see _register_parameter_type).
            del self._materialized, self._lazy_dtype
            self.__class__ = self.cls_to_become

    def to(self, *args, **kwargs):
        """Before ``materialize()``: remember the dtype for it (the CPU is the only
        device) and return self, so ``Module.to``/``double()`` reach lazy layers; after
        it: ``Tensor.to``."""
        if self.__dict__.get("_materialized", False):
            return Tensor.to(self, *args, **kwargs)
        from oxmera.ops.conversion import parse_to
        dtype = parse_to("to()", args, kwargs)[1]
        if dtype is not None:
            self._lazy_dtype = np.dtype(dtype)
        return self

    def float(self):
        return self.to(np.float32)

    def double(self):
        return self.to(np.float64)

    def half(self):
        return self.to(np.float16)

    @property
    def dtype(self):
        """The dtype it will be materialized in (after: its own)."""
        if self.__dict__.get("_materialized", False):
            return Tensor.dtype.__get__(self)
        return self._lazy_dtype

    # Before materialize() the shape queries refuse; after it (a buffer keeps this
    # class) they answer as a Tensor's.
    def _check_materialized(self):
        if not self.__dict__.get("_materialized", False):
            raise RuntimeError(_UNINITIALIZED)

    @property
    def shape(self):
        self._check_materialized()
        return Tensor.shape.__get__(self)

    @property
    def ndim(self):
        self._check_materialized()
        return Tensor.ndim.__get__(self)

    def size(self, dim=None):
        self._check_materialized()
        return Tensor.size(self, dim)

    def numel(self):
        self._check_materialized()
        return Tensor.numel(self)

    def dim(self):
        self._check_materialized()
        return Tensor.dim(self)

    def __repr__(self):
        if self.__dict__.get("_materialized", False):
            return Tensor.__repr__(self)
        return f"<{type(self).__name__}>"


def is_lazy(value):
    """Whether ``value`` is a placeholder of a lazy module, not yet materialized."""
    return (isinstance(value, UninitializedTensorMixin)
            and not value.__dict__.get("_materialized", False))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (a lazy module's, PyTorch's
    ``torch.nn.UninitializedParameter``); ``materialize()`` makes it a
    :class:`Parameter`.

    Examples
    --------
    >>> from oxmera.nn import Parameter, UninitializedParameter
    >>> w = UninitializedParameter()
    >>> w
    <UninitializedParameter>
    >>> w.materialize((2, 3))
    >>> type(w) is Parameter, tuple(w.shape)
    (True, (2, 3))
    """

    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        from oxmera._device import check_cpu
        check_cpu("UninitializedParameter()", device)
        super().__init__(None, requires_grad)
        self._lazy_init(dtype)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a lazy module's, PyTorch's
    ``torch.nn.UninitializedBuffer``). ``materialize()`` gives it an array in place;
    the lazy modules then register a plain Tensor holding that array (the compiled
    Tensor type cannot be assigned as a class).

    Examples
    --------
    >>> from oxmera.nn import UninitializedBuffer
    >>> b = UninitializedBuffer()
    >>> b.materialize(4)
    >>> b.shape
    oxmera.Size([4])
    """

    def __init__(self, requires_grad=False, device=None, dtype=None):
        from oxmera._device import check_cpu
        check_cpu("UninitializedBuffer()", device)
        super().__init__(None)
        self._lazy_init(dtype)
        if requires_grad:
            self.requires_grad_(True)


# Graphs computed from exact Parameters can then be hidden from the cyclic
# collector like those of plain tensors (see the sealing comment in the core).
_register_parameter_type(Parameter)
