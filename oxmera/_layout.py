"""Memory formats and layouts: ``oxmera.contiguous_format``, ``channels_last``, ``strided`` ...

PyTorch programs pass these as ``memory_format=`` (to ``Tensor.to``,
``empty_like`` ...) and ``layout=`` (to the creation functions), so oxmera
has the same objects, printed as ``oxmera.<name>``.

A memory format says how a result's elements lie in memory; an oxmera tensor
is a NumPy array, which can lie in any of them, so they are honoured as
PyTorch does: ``contiguous_format`` is C order, ``channels_last`` keeps the
channel dimension (dim 1) innermost in a 4-d tensor (``channels_last_3d``:
a 5-d one), ``preserve_format`` keeps the input's own order. The layouts are
``strided`` (dense arrays, every Tensor) and ``sparse_coo`` / ``sparse_csr``
(sparse tensors, ``oxmera.ops.sparse``).
"""

__all__ = ["memory_format", "contiguous_format", "preserve_format", "channels_last",
           "channels_last_3d", "layout", "strided", "sparse_coo", "sparse_csr"]


class _Named:
    """A named singleton, compared by identity, printed as ``oxmera.<name>``."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"oxmera.{self._name}"

    def __reduce__(self):
        # Pickles by name, so a loaded object is the module's own (identity compares).
        return self._name


class memory_format(_Named):
    """How a tensor's elements are ordered in memory (PyTorch's ``torch.memory_format``).

    The four values are ``oxmera.contiguous_format``, ``preserve_format``,
    ``channels_last`` and ``channels_last_3d``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.channels_last
    oxmera.channels_last
    >>> isinstance(oxmera.preserve_format, oxmera.memory_format)
    True
    """

    __slots__ = ()


class layout(_Named):
    """How a tensor is stored (PyTorch's ``torch.layout``): ``oxmera.strided`` (dense),
    ``oxmera.sparse_coo`` or ``oxmera.sparse_csr`` (sparse tensors).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.strided
    oxmera.strided
    """

    __slots__ = ()


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")


def check_memory_format(where, value):
    """``value`` if it is a memory format (None: ``preserve_format``), else a TypeError."""
    if value is None:
        return preserve_format
    if not isinstance(value, memory_format):
        raise TypeError(f"{where}: memory_format must be an oxmera.memory_format "
                        f"(oxmera.contiguous_format, preserve_format, channels_last or "
                        f"channels_last_3d), got {value!r}")
    return value


def check_layout(where, value):
    """Refuse any layout but ``strided`` (None means it): oxmera's tensors are dense."""
    if value is not None and value is not strided:
        raise TypeError(f"{where}: layout must be oxmera.strided (oxmera tensors are dense "
                        f"NumPy arrays; sparse layouts are not supported), got {value!r}")


# The dimension orders (outermost first) whose C order is each channels-last format's memory.
_ORDERS = {channels_last: (0, 2, 3, 1), channels_last_3d: (0, 2, 3, 4, 1)}


def dim_order(where, memory_format, shape):
    """The dim order ``memory_format`` lays a tensor of ``shape`` out in, outermost first.

    None for ``contiguous_format`` and ``preserve_format``; a RuntimeError
    (naming ``where``) when a channels-last format meets the wrong rank.
    """
    order = _ORDERS.get(memory_format)
    if order is not None and len(shape) != len(order):
        raise RuntimeError(f"{where}: required rank {len(order)} tensor to use "
                           f"{memory_format!r} format, got shape {tuple(shape)}")
    return order
