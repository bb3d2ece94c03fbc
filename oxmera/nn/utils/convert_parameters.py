"""``parameters_to_vector`` / ``vector_to_parameters``: all parameters as one flat tensor."""
from oxmera._core import autograd as _core

__all__ = ["parameters_to_vector", "vector_to_parameters"]

Tensor = _core.Tensor


def parameters_to_vector(parameters):
    """One 1-D tensor holding every parameter's values, flattened, in order.

    Differentiable (a concatenation of views), as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Linear(3, 2)
    >>> nn.utils.parameters_to_vector(layer.parameters()).shape
    oxmera.Size([8])
    """
    import oxmera
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    flat = []
    for param in parameters:
        if not isinstance(param, Tensor):
            raise TypeError(f"parameters_to_vector(): expected oxmera.Tensor, but got: "
                            f"{type(param).__name__}")
        flat.append(param.reshape(-1))
    return oxmera.cat(flat)


def vector_to_parameters(vec, parameters):
    """Set the parameters' values from the 1-D tensor ``vec`` (the inverse of
    :func:`parameters_to_vector`).

    As in PyTorch, each parameter's ``data`` becomes a view of ``vec`` (they
    share memory afterwards); the Parameter objects stay the same.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Linear(2, 1)
    >>> nn.utils.vector_to_parameters(oxmera.tensor([1.0, 2.0, 3.0]), layer.parameters())
    >>> layer.weight.tolist(), layer.bias.tolist()
    ([[1.0, 2.0]], [3.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected oxmera.Tensor, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise ValueError(f"vector_to_parameters(): vec must be 1-D, got shape {tuple(vec.shape)}")
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    total = sum(p.numel() for p in parameters)
    if total > vec.numel():
        # PyTorch raises from the view in the middle of the loop, after changing the
        # first parameters; checking first changes nothing.
        raise RuntimeError(f"vector_to_parameters(): the parameters hold {total} values, vec "
                           f"only {vec.numel()}")
    pointer = 0
    for param in parameters:
        num = param.numel()
        param.data = vec[pointer:pointer + num].view(tuple(param.shape)).detach()
        pointer += num
