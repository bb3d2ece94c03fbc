"""``backward`` and ``grad``: the public entry points to the compiled engine."""
from oxmera._core import autograd as _core

__all__ = ["backward", "grad"]

Tensor = _core.Tensor


def _as_tuple(value, what):
    if value is None:
        return None
    if isinstance(value, Tensor):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise TypeError(f"{what} must be a Tensor or a sequence of Tensors, got "
                        f"{type(value).__name__}") from None


def _grad_outputs(grads, n, what):
    if grads is None:
        return (None,) * n
    grads = (grads,) if isinstance(grads, Tensor) or not isinstance(grads, (tuple, list)) \
        else tuple(grads)
    if len(grads) != n:
        raise RuntimeError(f"{what}: got {len(grads)} gradients for {n} outputs")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad``.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Outputs to differentiate.
    grad_tensors : Tensor, array_like or sequence of them, optional
        Gradient with respect to each output (None for one-element outputs).
    retain_graph : bool, optional
        Keep the graph for another backward; defaults to ``create_graph``.
    create_graph : bool
        Record the backward pass (for higher-order gradients).
    inputs : Tensor or sequence of Tensor, optional
        Accumulate only into these.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> oxmera.autograd.backward([(x * x).sum(), x.sum()])
    >>> x.grad
    tensor([3., 5.], dtype=float32)
    """
    tensors = _as_tuple(tensors, "backward(): tensors")
    grads = _grad_outputs(grad_tensors, len(tensors), "backward()")
    inputs = _as_tuple(inputs, "backward(): inputs")
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("backward(): 'inputs' argument to backward() cannot be empty")
    if retain_graph is None:
        retain_graph = create_graph
    _core.run_backward(tensors, grads, bool(retain_graph), bool(create_graph), inputs,
                       False, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    Parameters
    ----------
    outputs : Tensor or sequence of Tensor
    inputs : Tensor or sequence of Tensor
    grad_outputs : Tensor or sequence, optional
        Gradient with respect to each output (None for one-element outputs).
    retain_graph : bool, optional
        Defaults to ``create_graph``.
    create_graph : bool
        Record the computation, so the result can be differentiated again.
    allow_unused : bool
        Return None for an input the outputs do not depend on, instead of
        raising ``RuntimeError``.
    materialize_grads : bool
        Return zeros instead of None for unused inputs (implies ``allow_unused``).

    Returns
    -------
    tuple of Tensor (or None)

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor(2.0, requires_grad=True)
    >>> (g,) = oxmera.autograd.grad(x ** 3, x, create_graph=True)
    >>> g
    tensor(12., dtype=float32, grad_fn=<PowBackwardBackward>)
    >>> oxmera.autograd.grad(g, x)
    (tensor(12., dtype=float32),)
    """
    outputs = _as_tuple(outputs, "grad(): outputs")
    inputs = _as_tuple(inputs, "grad(): inputs")
    if len(inputs) == 0:
        raise RuntimeError("grad(): inputs cannot be empty")
    grads = _grad_outputs(grad_outputs, len(outputs), "grad()")
    if retain_graph is None:
        retain_graph = create_graph
    result = _core.run_backward(outputs, grads, bool(retain_graph), bool(create_graph), inputs,
                                bool(allow_unused or materialize_grads), False)
    if materialize_grads:
        from oxmera.ops.creation import zeros_like
        result = tuple(zeros_like(i) if g is None else g for g, i in zip(result, inputs))
    return result
