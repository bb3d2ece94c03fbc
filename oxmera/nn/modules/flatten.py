"""``Flatten`` and ``Unflatten``: reshape layers (views, so gradients flow through)."""
from oxmera.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` into one (by default all but the batch dim).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Flatten()
    Flatten(start_dim=1, end_dim=-1)
    >>> nn.Flatten()(oxmera.zeros(32, 1, 5, 5)).shape
    oxmera.Size([32, 25])
    >>> nn.Flatten(0, 2)(oxmera.zeros(32, 1, 5, 5)).shape
    oxmera.Size([160, 5])
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim ``dim`` into the shape ``unflattened_size`` (the inverse of ``Flatten``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Unflatten(1, (2, 5, 5))
    >>> layer
    Unflatten(dim=1, unflattened_size=(2, 5, 5))
    >>> layer(oxmera.zeros(2, 50)).shape
    oxmera.Size([2, 2, 5, 5])
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError(f"Unflatten: dim must be an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)) or not all(
                isinstance(s, int) for s in unflattened_size):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got "
                            f"{unflattened_size!r}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
