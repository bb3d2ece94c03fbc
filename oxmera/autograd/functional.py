"""``oxmera.autograd.functional``: vjp, jvp, jacobian, hessian, hvp, vhp.

Higher-level transforms of a Python function of tensors, built on
:func:`oxmera.autograd.grad` alone, with the signatures and semantics of
``torch.autograd.functional``:

- ``inputs`` is a Tensor or a *tuple* of Tensors (a list is an error, as in
  PyTorch); results follow the same structure: a single Tensor for a single
  input, a tuple for a tuple. ``func`` may return a Tensor or a tuple of
  them, and results indexed by output follow that structure the same way.
  ``jacobian`` returns, for a tuple of outputs and a tuple of inputs, a
  tuple (per output) of tuples (per input); ``hessian`` a tuple (per input)
  of tuples (per input).
- ``create_graph=False`` returns results cut from any graph; ``True``
  records them, so they can be differentiated again (also with respect to
  tensors ``func`` captures or the inputs, if those require grad).
- ``strict=False`` returns zeros where an output does not depend on an
  input; ``strict=True`` raises ``RuntimeError`` instead.
- Forward-mode products (``jvp``, ``hvp``, ``strategy="forward-mode"``) use
  the double-backward trick: the VJP is linear in the output gradient, so
  differentiating it with respect to that gradient gives the JVP. Every op's
  VJP is written with oxmera ops, which is what makes this work.

oxmera has no ``vmap``: ``vectorize=True`` is accepted and gives the same
result, computed one row (or column) at a time as with ``vectorize=False``.

What is left to others: the engine (``oxmera.autograd.grad``) and the ops.
"""
from oxmera._core import autograd as _core
from oxmera.autograd.engine import grad as _grad
from oxmera.autograd.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

Tensor = _core.Tensor


# -- helpers (as torch.autograd.functional has them) ---------------------------------------------

def _as_tuple(value, arg_name, fn_name):
    """``(was_a_tuple, tuple_of_tensors)``; only a tuple counts as several tensors."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where} has type {type(item).__name__}.")
    return is_tuple, items


def _unpack(result, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is one flag, or two for nested results."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            result = tuple(item[0] for item in result)
        if not outer:
            result = result[0]
    elif not to_unpack:
        result = result[0]
    return result


def _prepare(tensors, create_graph, need_graph):
    """New tensor objects for ``tensors``: a differentiable alias or a detached one.

    Always new objects, so the inputs ``func`` receives are told apart from
    the same tensors ``func`` may capture. With ``create_graph``, an input
    that requires grad stays connected (a view of it), so the result can be
    differentiated with respect to it.
    """
    result = []
    for t in tensors:
        if create_graph and t.requires_grad:
            result.append(t.view(t.shape))
        else:
            # requires_grad_ raises for a non-floating input, naming its dtype.
            result.append(t.detach().requires_grad_() if need_graph else t.detach())
    return tuple(result)


def _finish(tensors, create_graph):
    """Detach results unless ``create_graph`` (nested tuples too)."""
    if create_graph:
        return tensors
    return tuple(t.detach() if isinstance(t, Tensor) else _finish(t, create_graph)
                 for t in tensors)


def _check_v(v, reference, reference_is_tuple):
    if len(v) != len(reference):
        if reference_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(reference)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (t, ref) in enumerate(zip(v, reference)):
        if t.shape != ref.shape:
            prefix = f"Entry {i} in " if reference_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {ref.shape} but got "
                               f"{t.shape}.")


_STRICT_MESSAGES = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."),
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[kind].format(i=i))


def _grad_of(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` that skips outputs not requiring grad; None for unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs)
            if o is not None and o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return _grad(tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept),
                 retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)


_FILL_MESSAGES = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward mode "
                          "AD."),
}


def _fill_zeros(grads, references, strict, create_graph, stage):
    """Zeros (shaped like ``references[i]``) for the None gradients, or a strict-mode error."""
    from oxmera.ops.creation import zeros_like
    result = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_FILL_MESSAGES[stage].format(i=i))
            g = zeros_like(references[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        result.append(g)
    return tuple(result)


def _seed_like(output):
    """A zero gradient for ``output`` that requires grad (the double-backward trick's dummy)."""
    from oxmera.ops.creation import zeros_like
    if not output.requires_grad or output.dtype.kind != "f":
        return None
    return zeros_like(output, requires_grad=True)


def _prepare_v(v, reference, reference_is_tuple, create_graph, fn_name, what):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, reference, reference_is_tuple)
        return v
    if len(reference) != 1 or reference[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if the {what} a single Tensor with a "
                           f"single element.")
    return None


def _call(func, inputs, fn_name, strict):
    outputs = func(*inputs)
    is_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


# -- the public transforms -----------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    Parameters
    ----------
    func : callable
        Takes Tensor arguments, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point at which ``func`` is differentiated.
    v : Tensor or tuple of Tensor, optional
        Shaped like the output(s) of ``func``; may be omitted when ``func``
        returns a single one-element Tensor (it is then 1).
    create_graph : bool
        Record the computation so the results can be differentiated again.
    strict : bool
        Raise ``RuntimeError`` where an input does not affect the outputs,
        instead of returning zeros for it.

    Returns
    -------
    func_output : Tensor or tuple of Tensor
        ``func(*inputs)``.
    vjp : Tensor or tuple of Tensor
        Shaped like ``inputs``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.functional import vjp
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> out, g = vjp(lambda x: x ** 2, x, oxmera.tensor([1.0, 10.0]))
    >>> out
    tensor([1., 4.], dtype=float32)
    >>> g
    tensor([ 2., 40.], dtype=float32)
    >>> vjp(lambda x, y: 2 * x + 3 * y, (x, x), oxmera.ones(2))[1]
    (tensor([2., 2.], dtype=float32), tensor([3., 3.], dtype=float32))
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _prepare_v(v, outputs, outputs_tuple, create_graph, "vjp",
                       "user-provided function returns")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad_of(outputs, inputs, v, create_graph=create_graph)
        result = _fill_zeros(grads, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``.

    Computed by the double-backward trick (the VJP is linear in the output
    gradient ``u``; differentiating ``u -> J^T u`` again gives ``J v``), so
    it costs two backward passes.

    Parameters
    ----------
    func : callable
        Takes Tensor arguments, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point at which ``func`` is differentiated.
    v : Tensor or tuple of Tensor, optional
        Shaped like ``inputs``; may be omitted for a single one-element input.
    create_graph : bool
        Record the computation so the results can be differentiated again.
    strict : bool
        Raise ``RuntimeError`` where an output does not depend on the inputs,
        instead of returning zeros for it.

    Returns
    -------
    func_output : Tensor or tuple of Tensor
        ``func(*inputs)``.
    jvp : Tensor or tuple of Tensor
        Shaped like the output(s).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.functional import jvp
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> jvp(lambda x: x ** 2, x, oxmera.tensor([1.0, 10.0]))[1]
    tensor([ 2., 40.], dtype=float32)
    >>> jvp(lambda x, y: 2 * x + 3 * y, (x, x), (oxmera.ones(2), oxmera.ones(2)))[1]
    tensor([5., 5.], dtype=float32)
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, inputs_tuple, create_graph, "jvp",
                       "input to the user-provided function is")
        outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # The VJP is linear in the seeds, so their value (zero) never appears
        # in what follows; they only must not hold inf or nan.
        seeds = tuple(_seed_like(o) for o in outputs)
        grad_inputs = _grad_of(outputs, inputs, seeds, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    used = [i for i, s in enumerate(seeds) if s is not None]
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        found = _grad_of(grad_inputs, tuple(seeds[i] for i in used), v,
                         create_graph=create_graph) if used else ()
        grads = [None] * len(outputs)
        for i, g in zip(used, found):
            grads[i] = g
        result = _fill_zeros(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), outputs_tuple))


def _one_hot(shape, dtype, index):
    import numpy as np
    seed = np.zeros(shape, dtype=dtype)
    seed.reshape(-1)[index] = 1
    return _core._wrap(seed)


def _stack_rows(rows, out_shape, in_shape, like):
    """Rows (one per output element) -> a Tensor of shape ``out_shape + in_shape``."""
    from oxmera.ops.creation import zeros
    from oxmera.ops.shape import cat
    shape = tuple(out_shape) + tuple(in_shape)
    if not rows:
        return zeros(shape, dtype=like.dtype)
    # Flattened rows joined (rather than stacked): a 0-d gradient the engine
    # summed can hold a NumPy scalar, which a sequence op would take for a
    # Python number of the default dtype; reshape makes it an array first.
    return cat([row.reshape(-1) for row in rows], 0).reshape(shape)


def _jacobian_reverse(outputs, inputs, create_graph, strict):
    """One backward per output element: rows of the Jacobian."""
    from oxmera.ops.creation import zeros_like
    jacobian = []
    for i, out in enumerate(outputs):
        rows = tuple([] for _ in inputs)
        differentiable = out.requires_grad and out.dtype.kind == "f"
        for j in range(out.numel()):
            if differentiable:
                grads = _grad(out, inputs, _one_hot(out.shape, out.dtype, j), retain_graph=True,
                              create_graph=create_graph, allow_unused=True)
            else:
                grads = (None,) * len(inputs)
            for k, (g, inp) in enumerate(zip(grads, inputs)):
                if g is not None:
                    if strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           f"strict mode when create_graph=True.")
                    rows[k].append(g)
                else:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is "
                                           f"independent of input {k}. This is not allowed in "
                                           f"strict mode.")
                    rows[k].append(zeros_like(inp))
        jacobian.append(tuple(_stack_rows(rows[k], out.shape, inp.shape, inp)
                              for k, inp in enumerate(inputs)))
    return tuple(jacobian)


def _jacobian_forward(outputs, inputs, create_graph):
    """One JVP (double-backward trick) per input element: columns of the Jacobian."""
    from oxmera.ops.creation import zeros_like
    seeds = tuple(_seed_like(o) for o in outputs)
    used = [i for i, s in enumerate(seeds) if s is not None]
    grad_inputs = _grad_of(outputs, inputs, seeds, create_graph=True) if used else ()
    columns = [[[] for _ in inputs] for _ in outputs]
    for k, inp in enumerate(inputs):
        g_in = grad_inputs[k] if used else None
        for j in range(inp.numel()):
            found = [None] * len(outputs)
            if g_in is not None and g_in.requires_grad:
                hits = _grad(g_in, tuple(seeds[i] for i in used),
                             _one_hot(inp.shape, inp.dtype, j), retain_graph=True,
                             create_graph=create_graph, allow_unused=True)
                for i, g in zip(used, hits):
                    found[i] = g
            for i, out in enumerate(outputs):
                columns[i][k].append(zeros_like(out) if found[i] is None else found[i])
    jacobian = []
    for i, out in enumerate(outputs):
        per_input = []
        for k, inp in enumerate(inputs):
            cols = _stack_rows(columns[i][k], inp.shape, out.shape, out)
            # Stacked as in_shape + out_shape: bring the output dims first.
            n_in, n_out = len(inp.shape), len(out.shape)
            if n_in and n_out:
                cols = cols.permute(*range(n_in, n_in + n_out), *range(n_in))
            per_input.append(cols)
        jacobian.append(tuple(per_input))
    return tuple(jacobian)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``.

    Parameters
    ----------
    func : callable
        Takes Tensor arguments, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple of Tensor
        The point at which ``func`` is differentiated.
    create_graph : bool
        Record the computation so the Jacobian can be differentiated again.
    strict : bool
        Raise ``RuntimeError`` where an output does not depend on an input,
        instead of returning zeros for that block.
    vectorize : bool
        Accepted for PyTorch compatibility; oxmera has no ``vmap``, so the
        result is computed row by row either way (same values).
        ``strict=True`` with ``vectorize=True`` raises, as in PyTorch.
    strategy : {"reverse-mode", "forward-mode"}
        ``"reverse-mode"``: one backward per output element (best when there
        are fewer outputs than inputs); ``"forward-mode"``: one JVP (by the
        double-backward trick) per input element. ``strict=True`` is not
        supported with ``"forward-mode"`` (as in PyTorch); unlike PyTorch,
        ``create_graph=True`` and ``vectorize=False`` are.

    Returns
    -------
    Tensor, or tuple of Tensor, or tuple of tuple of Tensor
        Block ``[i][j]`` (output ``i``, input ``j``) has shape
        ``outputs[i].shape + inputs[j].shape``; a level of tuple is dropped
        where ``func`` returned a single Tensor or ``inputs`` was one.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.functional import jacobian
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> jacobian(lambda x: x ** 2, x)
    tensor([[2., 0.],
            [0., 4.]], dtype=float32)
    >>> jx, jy = jacobian(lambda x, y: (x * y).sum(), (x, oxmera.tensor([3.0, 4.0])))
    >>> jx, jy
    (tensor([3., 4.], dtype=float32), tensor([1., 2.], dtype=float32))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'jacobian(): expected strategy to be either "forward-mode" or '
                         f'"reverse-mode", got {strategy!r}. Hint: if your function has more '
                         f'outputs than inputs, "forward-mode" tends to be faster; otherwise '
                         f'prefer "reverse-mode".')
    if strategy == "forward-mode" and strict:
        raise RuntimeError('jacobian(): `strict=True` and `strategy="forward-mode"` are not '
                           'supported together. Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize and strict:
            raise RuntimeError("jacobian(): `strict=True` and `vectorize=True` are not supported "
                               "together. Please either set `strict=False` or `vectorize=False`.")
        if strategy == "forward-mode":
            result = _jacobian_forward(outputs, inputs, create_graph)
        else:
            result = _jacobian_reverse(outputs, inputs, create_graph, strict)
        result = _finish(result, create_graph)
    return _unpack(result, (outputs_tuple, inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs``.

    Parameters
    ----------
    func : callable
        Takes Tensor arguments, returns a Tensor with a single element.
    inputs : Tensor or tuple of Tensor
        The point at which ``func`` is differentiated.
    create_graph : bool
        Record the computation so the Hessian can be differentiated again.
    strict : bool
        Raise ``RuntimeError`` where the Hessian is independent of an input
        (``func`` linear in it), instead of returning zeros.
    vectorize : bool
        Accepted for PyTorch compatibility (same result either way).
    outer_jacobian_strategy : {"reverse-mode", "forward-mode"}
        How the Jacobian of the gradient is computed (see :func:`jacobian`).

    Returns
    -------
    Tensor, or tuple of tuple of Tensor
        Block ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``;
        a single Tensor for a single input.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), oxmera.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]], dtype=float32)
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'hessian(): expected outer_jacobian_strategy to be either '
                         f'"forward-mode" or "reverse-mode", got {outer_jacobian_strategy!r}.')

    def single_output(*args):
        out = func(*args)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               f"contain a single element, got shape {out.shape}")
        return out.reshape(())

    def jacobian_of(*args):
        jac = jacobian(single_output, args, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(jacobian_of, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(result, (inputs_tuple, inputs_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    if outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           f"contain a single element, got shape {outputs[0].shape}")
    return outputs_tuple, outputs


def _gradient_at(func, inputs, v, create_graph, strict, name):
    """What vhp and hvp start from (grad mode on): the inputs and ``v`` made
    ready, ``func``'s scalar output, and its gradient recorded for a second
    backward."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, inputs_tuple, create_graph, name,
                   "input to the user-provided function is")
    outputs_tuple, outputs = _scalar_output(func, inputs, name, strict)
    jac = _grad_of(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """The vector-Hessian product ``v^T H`` of the scalar function ``func``.

    Parameters
    ----------
    func : callable
        Takes Tensor arguments, returns a Tensor with a single element.
    inputs : Tensor or tuple of Tensor
        The point at which ``func`` is differentiated.
    v : Tensor or tuple of Tensor, optional
        Shaped like ``inputs``; may be omitted for a single one-element input.
    create_graph : bool
        Record the computation so the results can be differentiated again.
    strict : bool
        Raise ``RuntimeError`` where the product is independent of an input.

    Returns
    -------
    func_output : Tensor
        ``func(*inputs)``.
    vhp : Tensor or tuple of Tensor
        Shaped like ``inputs``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.functional import vhp
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> vhp(lambda x: (x ** 3).sum(), x, oxmera.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.], dtype=float32)
    """
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _gradient_at(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad_of(jac, inputs, v, create_graph=create_graph)
        result = _fill_zeros(grads, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """The Hessian-vector product ``H v`` of the scalar function ``func``.

    For a twice continuously differentiable ``func`` the Hessian is
    symmetric and this equals :func:`vhp`; it is computed here by the
    double-backward trick (as PyTorch does), so it costs one more backward.

    Parameters
    ----------
    func : callable
        Takes Tensor arguments, returns a Tensor with a single element.
    inputs : Tensor or tuple of Tensor
        The point at which ``func`` is differentiated.
    v : Tensor or tuple of Tensor, optional
        Shaped like ``inputs``; may be omitted for a single one-element input.
    create_graph : bool
        Record the computation so the results can be differentiated again.
    strict : bool
        Raise ``RuntimeError`` where the product is independent of an input.

    Returns
    -------
    func_output : Tensor
        ``func(*inputs)``.
    hvp : Tensor or tuple of Tensor
        Shaped like ``inputs``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.functional import hvp
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> hvp(lambda x: (x ** 3).sum(), x, oxmera.tensor([1.0, 0.0]))[1]
    tensor([6., 0.], dtype=float32)
    """
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _gradient_at(
            func, inputs, v, create_graph, strict, "hvp")
        seeds = tuple(_seed_like(inp) for inp in inputs)
        double_back = _grad_of(jac, inputs, seeds, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad_of(double_back, seeds, v, create_graph=create_graph)
        result = _fill_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(result, create_graph), inputs_tuple))
