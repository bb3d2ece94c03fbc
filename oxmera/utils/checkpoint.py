"""``oxmera.utils.checkpoint``: trade compute for memory, as ``torch.utils.checkpoint``.

``checkpoint(function, *args)`` runs ``function`` and keeps only its outputs
and its inputs for backward: the graph of intermediate results it built is
dropped as soon as the call returns, and rebuilt in the backward pass by
running ``function`` again (with the random state of the first run, so
dropout draws the same mask). The peak memory of a deep network then holds
the outputs of each checkpointed segment plus the intermediates of one
segment, instead of every intermediate of every layer.

How: the forward runs once with grad mode on (as PyTorch's non-reentrant
variant does); the tensors it reads that require grad are found by walking
the graph it built, from its outputs back to the leaves: its tensor
arguments and the parameters (or other leaf tensors) it used, e.g. through
``self``. One node (an :class:`oxmera.autograd.Function`) then stands for the
whole call, with those tensors as inputs, and the walked graph is released.
Its backward recomputes ``function`` and differentiates the recomputation
(``oxmera.autograd.grad``) with respect to the same tensors, so gradients
reach arguments and parameters alike, through ``backward()`` or
``oxmera.autograd.grad``, and to second order with ``create_graph=True``.

Not supported: a tensor that requires grad and is not a leaf (computed by
earlier ops) must reach ``function`` as an argument (positional or
keyword), not through a closure or an attribute (the backward then
fails, or needs ``retain_graph``); ``context_fn`` is applied, ``determinism_check``, ``debug``
and ``early_stop`` are accepted and have no effect; only the default
generator's state is preserved.
"""
import warnings

from oxmera._core import autograd as _core
from oxmera.autograd import engine as _engine
from oxmera.autograd.function import Function
from oxmera import random as _random

__all__ = ["checkpoint", "checkpoint_sequential", "noop_context_fn"]

Tensor = _core.Tensor


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def noop_context_fn():
    """The default ``context_fn`` of :func:`checkpoint`: two contexts that do nothing.

    Examples
    --------
    >>> from oxmera.utils.checkpoint import noop_context_fn
    >>> forward_context, recompute_context = noop_context_fn()
    >>> with forward_context:
    ...     pass
    """
    return _NullContext(), _NullContext()


def _leaves_of(outputs, stop):
    """The distinct leaf tensors that require grad behind ``outputs``, in the order met.

    ``stop`` holds the ids of leaves already known (the detached arguments).
    Iterative walk, each node once: deep stacks must not recurse.
    """
    seen_nodes, seen_leaves, leaves = set(), set(stop), []
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    for o in outputs:
        if o.grad_fn is None and o.requires_grad and id(o) not in seen_leaves:
            seen_leaves.add(id(o))
            leaves.append(o)
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        for fn, _ in node.next_functions:
            if fn is None:
                continue
            variable = getattr(fn, "variable", None)
            if variable is not None:                  # an AccumulateGrad: a leaf
                if id(variable) not in seen_leaves:
                    seen_leaves.add(id(variable))
                    leaves.append(variable)
            elif id(fn) not in seen_nodes:
                stack.append(fn)
    return leaves


def _flat_tensors(result):
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [r for r in result if isinstance(r, Tensor)]
    return []


def _leaf_like(tensor):
    leaf = tensor.detach()
    leaf.requires_grad_(tensor.requires_grad)
    return leaf


def _replaced(args, kwargs, slots, values):
    """``args`` and ``kwargs`` with the tensors at ``slots`` replaced by ``values``."""
    args, kwargs = list(args), dict(kwargs)
    for slot, value in zip(slots, values):
        if isinstance(slot, int):
            args[slot] = value
        else:
            kwargs[slot] = value
    return args, kwargs


class CheckpointFunction(Function):
    """The node standing for one checkpointed call (see the module docstring)."""

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        outputs = state.outputs
        state.outputs = None                  # the node must not hold the first run's graph
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        state = ctx.state
        originals = state.tensors[:state.n_args]
        create_graph = _core.is_grad_enabled()
        fresh = []
        for original in originals:
            # Leaves again, so the recomputation's graph ends at them; but with
            # create_graph the gradients must stay functions of the caller's tensors
            # (second order), so the recomputation reads those.
            t = original
            if not create_graph:
                t = _leaf_like(original)
            fresh.append(t)
        args, kwargs = _replaced(state.args, state.kwargs, state.tensor_slots, fresh)
        current = _random.get_rng_state() if state.rng_state is not None else None
        try:
            if state.rng_state is not None:
                _random.set_rng_state(state.rng_state)
            with _core_enable_grad(), state.recompute_context:
                result = state.function(*args, **kwargs)
        finally:
            if current is not None:
                _random.set_rng_state(current)
        outputs = _flat_tensors(result)
        if len(outputs) != len(grad_outputs):
            raise RuntimeError(f"checkpoint: the recomputed function returned {len(outputs)} "
                               f"tensors, the first run {len(grad_outputs)}; the function "
                               f"must do the same thing when it runs again")
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
        wanted = fresh + list(state.tensors[state.n_args:])
        targets = [t for t in wanted if t.requires_grad]
        grads = iter(())
        if pairs and targets:
            grads = iter(_engine.grad([o for o, _ in pairs], targets, [g for _, g in pairs],
                                      create_graph=create_graph,
                                      allow_unused=True))
        result = [next(grads) if t.requires_grad else None for t in wanted]
        return (None, *result)


def _core_enable_grad():
    from oxmera.autograd import enable_grad
    return enable_grad()


class _State:
    """What the checkpoint node needs to run the function again."""

    __slots__ = ("function", "args", "kwargs", "tensor_slots", "n_args", "tensors",
                 "rng_state", "recompute_context", "outputs")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)``, keeping only its inputs and outputs for backward.

    The intermediate results are recomputed in the backward pass (see the
    module docstring for how); ``preserve_rng_state=True`` (a keyword, the
    default) restores the random state of the first run for the
    recomputation, so dropout draws the same mask. ``function`` must compute
    the same thing when it runs again, and return a Tensor or a tuple/list
    whose Tensors are the outputs.

    ``use_reentrant``: as in PyTorch 2.13, leaving it out warns (pass it
    explicitly); ``use_reentrant=True`` keeps the reentrant variant's rules
    (no keyword arguments for ``function``; when no argument requires grad,
    a warning and no gradients at all, parameters included). Both variants
    otherwise compute the same gradients, here by the same mechanism.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> from oxmera.utils.checkpoint import checkpoint
    >>> block = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
    >>> x = oxmera.randn(2, 4, requires_grad=True)
    >>> y = checkpoint(block, x, use_reentrant=False)
    >>> y.grad_fn.name()
    'CheckpointFunctionBackward'
    >>> y.sum().backward()
    >>> tuple(block[0].weight.grad.shape), tuple(x.grad.shape)
    ((4, 4), (2, 4))
    """
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if use_reentrant is None:
        warnings.warn("oxmera.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly, as PyTorch 2.13 asks. use_reentrant=False is recommended.",
                      UserWarning, stacklevel=2)
        use_reentrant = True                   # PyTorch's default when it is left out
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and context_fn is not noop_context_fn:
        raise ValueError("Passing `context_fn` is only supported when use_reentrant=False.")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    # Where the call's tensors are: positions of args, then names of kwargs.
    slots = ([i for i, a in enumerate(args) if isinstance(a, Tensor)]
             + [k for k, v in kwargs.items() if isinstance(v, Tensor)])
    given = [args[slot] if isinstance(slot, int) else kwargs[slot] for slot in slots]
    if use_reentrant and not any(t.requires_grad for t in given):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      UserWarning, stacklevel=2)
        from oxmera.autograd import no_grad
        with no_grad(), forward_context:
            return function(*args, **kwargs)
    if not _core.is_grad_enabled():
        with forward_context:
            return function(*args, **kwargs)

    rng_state = _random.get_rng_state() if preserve_rng_state else None
    detached = [_leaf_like(t) for t in given]
    run_args, run_kwargs = _replaced(args, kwargs, slots, detached)
    with forward_context:
        result = function(*run_args, **run_kwargs)
    outputs = _flat_tensors(result)
    leaves = _leaves_of(outputs, {id(t) for t in detached})
    if not outputs:
        return result

    state = _State()
    state.function = function
    state.args = tuple(args)
    state.kwargs = kwargs
    state.tensor_slots = tuple(slots)
    state.n_args = len(slots)
    # The caller's tensors (their graph links the node to earlier ops), then the
    # leaves met inside, e.g. parameters.
    state.tensors = tuple(given) + tuple(leaves)
    state.rng_state = rng_state
    state.recompute_context = recompute_context
    state.outputs = outputs
    del outputs
    new = list(CheckpointFunction.apply(state, *state.tensors))
    if isinstance(result, Tensor):
        return new[0]
    out = [new.pop(0) if isinstance(r, Tensor) else r for r in result]
    return type(result)(out)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules) on ``input`` in
    ``segments`` pieces, checkpointing all of them but the last, as PyTorch does.

    Each piece has ``len(functions) // segments`` functions (the last piece
    takes the rest). ``preserve_rng_state`` may be given as a keyword.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> from oxmera.utils.checkpoint import checkpoint_sequential
    >>> model = nn.Sequential(*[nn.Linear(3, 3) for _ in range(6)])
    >>> x = oxmera.randn(2, 3, requires_grad=True)
    >>> out = checkpoint_sequential(model, 3, x, use_reentrant=False)
    >>> bool(oxmera.allclose(out, model(x)))
    True
    """
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from oxmera.nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    if not isinstance(segments, int) or segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be a positive int, got "
                         f"{segments!r}")

    def run_function(start, end):
        def forward(value):
            for j in range(start, end + 1):
                value = functions[j](value)
            return value
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
