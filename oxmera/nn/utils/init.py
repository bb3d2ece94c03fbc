"""``skip_init``: build a module without keeping its initial values (PyTorch's
``torch.nn.utils.init``)."""
import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with uninitialized parameters and buffers.

    PyTorch builds the module on its ``meta`` device (no memory, no
    initialization) and then allocates it; oxmera has no such device, so
    the module is built (its initialization runs) and its tensors are then
    replaced by uninitialized ones of the same shapes (``to_empty``). The
    class must take a ``device`` argument, as PyTorch requires.

    Examples
    --------
    >>> from oxmera import nn
    >>> layer = nn.utils.skip_init(nn.Linear, 4, 3)
    >>> tuple(layer.weight.shape)
    (3, 4)
    """
    from oxmera.nn.modules.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    return module_cls(*args, device=final_device, **kwargs).to_empty(device=final_device)
