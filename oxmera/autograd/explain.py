"""``explain(tensor)``: why a tensor has no gradient, in words.

The questions a learner asks after ``backward()``: why is ``x.grad`` None?
The core keeps just enough to answer: whether a tensor requires grad, its
node, and, for a tensor cut from the graph, why (``Tensor._origin``: made
under ``no_grad``, by a non-differentiable op, or by ``detach``). Given the
output too, the graph is walked (iteratively) to see whether the tensor is
reachable from it.
"""
from oxmera._core import autograd as _core

__all__ = ["explain"]

Tensor = _core.Tensor


def _reachable(output, target):
    """Whether ``target`` (a leaf or a node) is in ``output``'s graph."""
    start = output.grad_fn if output.grad_fn is not None else output
    want = target.grad_fn if target.grad_fn is not None else target
    stack, seen = [start], set()
    while stack:
        fn = stack.pop()
        if fn is want:
            return True
        if isinstance(fn, Tensor) or fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            stack.append(getattr(nxt, "variable", nxt))
    return False


def _cut_reason(tensor):
    origin = tensor._origin
    if origin is None:
        return None
    reason, opname = origin
    if reason == "no_grad":
        return (f"it was computed by {opname}() while grad mode was off (inside no_grad(), "
                f"inference_mode() or set_grad_enabled(False)), so it was not recorded and "
                f"does not require grad")
    if reason == "non-differentiable":
        return (f"it was computed by {opname}(), which is not differentiable (its result never "
                f"requires grad), so the graph is cut there")
    return ("it was made by detach() (or detach_()), which cuts it from the graph: "
            "nothing flows back through it")


def explain(tensor, output=None):
    """Say why ``tensor`` has (or will get) no gradient, or how it gets one.

    Parameters
    ----------
    tensor : Tensor
        Typically a leaf whose ``.grad`` is None after ``backward()``; any
        tensor works.
    output : Tensor, optional
        The tensor ``backward()`` was called on: then whether ``tensor`` is
        reachable from it is checked too.

    Returns
    -------
    str
        One or two sentences; the first names the reason.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd import explain
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> print(explain(x).split(":")[0])
    tensor of shape (2,) does not require grad
    >>> w = oxmera.tensor([1.0], requires_grad=True)
    >>> with oxmera.no_grad():
    ...     y = w * 2
    >>> print(explain(y).split(": ")[1].split(" (")[0])
    it was computed by mul() while grad mode was off
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"explain() expects a Tensor, got {type(tensor).__name__}")
    what = f"tensor of shape {tuple(tensor.shape)}"
    if not tensor.requires_grad:
        cut = _cut_reason(tensor)
        if cut is not None:
            return f"{what} does not require grad: {cut}."
        if tensor.dtype.kind != "f":
            return (f"{what} does not require grad: its dtype {tensor.dtype} is not floating "
                    f"point, and only floating-point tensors can require grad.")
        return (f"{what} does not require grad: it was created with requires_grad=False; call "
                f"x.requires_grad_() (floating dtypes only) to track it.")
    if output is not None:
        if not isinstance(output, Tensor):
            raise TypeError(f"explain(): output must be a Tensor, got {type(output).__name__}")
        if not output.requires_grad:
            cut = _cut_reason(output)
            return (f"{what} requires grad, but the output does not, so backward() from it "
                    f"cannot reach anything"
                    + (f": the output {cut}." if cut else " (it was never connected to a "
                       "tensor that requires grad)."))
        if not _reachable(output, tensor):
            return (f"{what} requires grad but is not reachable from the output: the output "
                    f"was not computed from it, or the path was cut (by detach(), a no_grad() "
                    f"block or a non-differentiable op such as a comparison, argmax or "
                    f"round; explain() the intermediate tensors to find which).")
    if tensor.is_leaf:
        if tensor.grad is None:
            return (f"{what} is a leaf that requires grad; its .grad is filled by backward() "
                    f"from an output computed from it" + (" (it is reachable from the given "
                                                          "output)" if output is not None
                                                          else "") + ".")
        return f"{what} is a leaf that requires grad and has a .grad."
    if not tensor.retains_grad:
        return (f"{what} is not a leaf (made by {tensor.grad_fn.name()}): backward() does not "
                f"fill .grad of non-leaf tensors unless you call .retain_grad() on them "
                f"before backward().")
    return f"{what} is a non-leaf that retains its grad (made by {tensor.grad_fn.name()})."
