"""Padding layers, as PyTorch's ``torch.nn.modules.padding``: ``ZeroPad``, ``ConstantPad``,
``ReflectionPad``, ``ReplicationPad`` and ``CircularPad``, each for 1, 2 and 3 trailing
spatial dims, over ``F.pad``.

``padding`` is an int (the same on every side) or a tuple of ``2 * d`` amounts,
last dim first, as ``F.pad`` takes them; the input is ``(N, C, *spatial)`` or
unbatched ``(C, *spatial)``.
"""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = [f"{kind}Pad{d}d" for kind in ("Zero", "Constant", "Reflection", "Replication",
                                          "Circular") for d in (1, 2, 3)]


class _Pad(Module):
    """A padding layer: ``mode`` of ``F.pad`` over ``dims`` trailing dims."""

    mode = "constant"
    dims = 1

    def __init__(self, padding, value=0.0):
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.dims)
        padding = tuple(padding)
        if len(padding) != 2 * self.dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"{2 * self.dims} ints, got {padding}")
        self.padding = padding
        self.value = value

    def forward(self, input):
        if input.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"{type(self).__name__}: expected {self.dims + 1}D or "
                             f"{self.dims + 2}D input, got shape {tuple(input.shape)}")
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding, value):
        super().__init__(padding, value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPad(_Pad):
    def __init__(self, padding):
        super().__init__(padding, 0.0)


_DOC = """{kind} padding of the last {dims} dim(s): {what}.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> tuple(nn.{name}({example})(oxmera.ones(1, 1{ones})).shape)
    {shape}
    """

_KINDS = {
    "Zero": (_ZeroPad, "constant", "zeros", "1"),
    "Constant": (_ConstantPad, "constant", "a constant value", "1, 0.5"),
    "Reflection": (_Pad, "reflect", "the input mirrored, without repeating the edge", "1"),
    "Replication": (_Pad, "replicate", "the edge repeated", "1"),
    "Circular": (_Pad, "circular", "the input wrapped around", "1"),
}


def _make(kind, dims):
    base, mode, what, example = _KINDS[kind]
    name = f"{kind}Pad{dims}d"
    doc = _DOC.format(kind=kind, dims=dims, what=what, name=name, example=example,
                      ones=", 3" * dims, shape=(1, 1) + (5,) * dims)
    return type(name, (base,), {"mode": mode, "dims": dims, "__doc__": doc,
                                "__module__": __name__, "__qualname__": name})


for _kind in _KINDS:
    for _dims in (1, 2, 3):
        globals()[f"{_kind}Pad{_dims}d"] = _make(_kind, _dims)
del _kind, _dims
