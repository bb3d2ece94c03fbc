"""Custom differentiable operations: :class:`Function`, PyTorch's way.

A :class:`Function` subclass gives a ``forward(ctx, *args, **kwargs)`` that
runs on tensors with grad mode off and a ``backward(ctx, *grad_outputs)``
that returns one gradient per ``forward`` argument. ``Function.apply``
records one node for the call. ``backward`` runs with grad mode on when the
caller asked for ``create_graph``, so a backward written with oxmera ops is
itself differentiable.

This is the escape hatch for users; oxmera's own ops use
:func:`oxmera.extend.op`, which needs no ctx bookkeeping. A Function's node
is an op record of its own (one per subclass), so the engine treats it like
any other node.
"""
import weakref

import numpy as np

from oxmera._core import autograd as _core
from oxmera.autograd import graph as _graph

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

Tensor = _core.Tensor


class FunctionCtx:
    """What ``forward`` and ``backward`` of a :class:`Function` share.

    Save tensors with :meth:`save_for_backward` and read them back as
    :attr:`saved_tensors`; anything else may be stored as an attribute.
    ``needs_input_grad`` has one bool per argument of ``forward``.

    Examples
    --------
    >>> from oxmera.autograd import Function
    >>> class Square(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> import oxmera
    >>> x = oxmera.tensor([3.0], requires_grad=True)
    >>> Square.apply(x).sum().backward()
    >>> x.grad
    tensor([6.], dtype=float32)
    """

    def __init__(self):
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._to_save = ()
        self._saved = None
        self._non_differentiable = ()
        self._node_ref = None
        self._node = None
        self._name = "Function"

    def save_for_backward(self, *tensors):
        """Keep ``tensors`` (or None) for ``backward``; call it at most once, in ``forward``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"{self._name}: save_for_backward can only save tensors or "
                                f"None, got {type(t).__name__}")
        self._to_save = tensors

    def mark_non_differentiable(self, *outputs):
        """Declare outputs that get no gradient (e.g. indices); they never require grad."""
        self._non_differentiable = outputs

    def set_materialize_grads(self, value):
        """Accepted for PyTorch compatibility: ``backward`` always receives zeros for
        outputs that got no gradient."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self):
        """The tensors given to :meth:`save_for_backward`, checked to be unmodified."""
        if self._saved is None:
            return tuple(self._to_save)
        node = self._node_ref() if self._node_ref is not None else None
        if node is None or node._released:
            raise RuntimeError(
                f"{self._name}: trying to backward through the graph a second time (or to "
                f"access saved tensors after they have been freed). Saved tensors are freed "
                f"by .backward() or autograd.grad(); pass retain_graph=True to keep them.")
        out = []
        for index, entry in enumerate(self._saved):
            if entry is None:
                out.append(None)
                continue
            kind, value, version, extra = entry
            if kind == "packed":        # given to a saved-tensor pack hook (graph module)
                packed, unpack, nr = value
                tensor = unpack(packed)
                if not isinstance(tensor, Tensor):
                    raise TypeError(f"{self._name}: the unpack hook of a saved tensor returned "
                                    f"{type(tensor).__name__}; it must return a Tensor")
                if nr is not None and self._node is not None:
                    tensor = self._node._rebuild(tensor._data, nr)
                out.append(tensor)
                continue
            if kind == "output":
                owner = extra[1]()
                now = owner._version if owner is not None else version
                tensor = None
                if now == version:
                    tensor = (self._node._rebuild(value, extra[0]) if self._node is not None
                              else _core._wrap(value))
            else:
                now, tensor = value._version, value
            if now != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: saved tensor {index} of {self._name} (shape "
                    f"{tuple(value.shape)}) is at version {now}; expected version {version} "
                    f"instead.")
            out.append(tensor)
        return tuple(out)

    def _freeze(self, outputs, node):
        # Saved outputs are kept as arrays and rebuilt at backward time, as
        # ctx.output is for ops: holding the output tensor itself would make a
        # cycle (output -> node -> ctx -> output).
        saved = []
        for t in self._to_save:
            if t is None:
                saved.append(None)
                continue
            for nr, o in enumerate(outputs):
                if o is t:
                    saved.append(("output", t._data, t._version, (nr, weakref.ref(t))))
                    break
            else:
                saved.append(("input", t, t._version, None))
        hooks = _graph._current_hooks()
        if hooks is not None:
            # As for ops: the pack hook keeps what it returns instead of the tensor
            # (an output reaches it without history, so nothing holds the node).
            pack, unpack = hooks
            saved = [entry if entry is None else (
                "packed", (pack(_core._wrap(entry[1]) if entry[0] == "output" else entry[1]),
                           unpack, entry[3][0] if entry[0] == "output" else None), None, None)
                for entry in saved]
        self._saved = tuple(saved)
        self._to_save = ()
        self._node_ref = weakref.ref(node) if node is not None else None
        if node is not None:
            # Read-only while the node keeps them, like what an op saves: a
            # write through NumPy would change them silently.
            node._lock_saved(tuple(
                entry[1] if entry[0] == "input" else (entry[1], entry[3][1]())
                for entry in saved if entry is not None and entry[0] != "packed"))


class Function:
    """Base class of custom differentiable operations.

    Subclass it with static ``forward(ctx, *args, **kwargs)`` and
    ``backward(ctx, *grad_outputs)`` methods and call ``YourFunction.apply``.
    ``backward`` returns one gradient per argument of ``forward`` (None for
    non-tensor arguments and for inputs needing none).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd import Function
    >>> class MulConstant(Function):
    ...     @staticmethod
    ...     def forward(ctx, x, constant):
    ...         ctx.constant = constant
    ...         return x * constant
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad * ctx.constant, None
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> y = MulConstant.apply(x, 3.0)
    >>> y.grad_fn.name()
    'MulConstantBackward'
    >>> y.sum().backward()
    >>> x.grad
    tensor([3., 3.], dtype=float32)
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """Compute the outputs from the inputs (grad mode is off here)."""
        raise NotImplementedError("a Function subclass must implement forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Return the gradient of each ``forward`` argument, given the outputs' gradients."""
        raise NotImplementedError("a Function subclass must implement backward(ctx, *grads)")

    @classmethod
    def _opdef(cls):
        opdef = cls.__dict__.get("_oxmera_opdef")
        if opdef is None:
            opdef = _core.OpDef(cls.__name__, cls.forward, 0, (), True, None, False, None,
                                False, None)
            opdef.vjp = _make_vjp(cls, opdef)
            cls._oxmera_opdef = opdef
        return opdef

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` on ``args`` and record its node for backward."""
        ctx = FunctionCtx()
        opdef = cls._opdef()
        ctx._name = opdef.backward_name
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        inputs = tuple(a for a in args if isinstance(a, Tensor))
        record = _core.is_grad_enabled() and any(ctx.needs_input_grad)
        previous = _core._set_grad_enabled(False)
        try:
            result = cls.forward(ctx, *args, **kwargs)
        finally:
            _core._set_grad_enabled(previous)
        single = not isinstance(result, tuple)
        results = (result,) if single else result
        # Fresh tensors for the outputs: one returned as it was given (or
        # twice) must not become the node's output in the caller's place.
        seen = set()
        outputs = []
        for r in results:
            if isinstance(r, Tensor):
                if r.requires_grad or id(r) in seen or any(r is a for a in inputs):
                    marked = any(r is m for m in ctx._non_differentiable)
                    r = r.detach()
                    if marked:
                        ctx._non_differentiable += (r,)
                seen.add(id(r))
            outputs.append(r)
        tensors = tuple(o for o in outputs if isinstance(o, Tensor))
        node = None
        if record and tensors:
            ctx._positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
            ctx._nargs = len(args)
            ctx._output_positions = tuple(i for i, o in enumerate(outputs)
                                          if isinstance(o, Tensor))
            _core.record_function(opdef, inputs, tensors, (ctx,))
            node = next((t.grad_fn for t in tensors if t.grad_fn is not None), None)
            for o in tensors:
                if any(o is m for m in ctx._non_differentiable) or o.dtype.kind != "f":
                    o.detach_()
        ctx._freeze(tensors, node)
        if single:
            return outputs[0]
        return tuple(outputs)


def _make_vjp(cls, opdef):
    name = opdef.backward_name

    def vjp(node, grads, *args):
        ctx = args[-1]
        grad_outputs = tuple(grads) if len(ctx._output_positions) > 1 else (grads,)
        ctx._node = node
        try:
            result = cls.backward(ctx, *grad_outputs)
        finally:
            ctx._node = None
        result = result if isinstance(result, tuple) else (result,)
        expected = ctx._nargs
        if len(result) != expected and not (len(result) > expected and
                                            all(r is None for r in result[expected:])):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(result)})")
        grads_in = []
        for k, position in enumerate(ctx._positions):
            g = result[position]
            if g is not None and not isinstance(g, Tensor):
                raise TypeError(f"function {name} returned a {type(g).__name__} as the "
                                f"gradient of argument {position}; expected a Tensor or None")
            if g is not None:
                shape = node.input_shape(k) if node.needs_input_grad[k] else None
                if shape is not None and g.shape != shape:
                    try:
                        ok = _broadcasts_to(g.shape, shape)
                    except ValueError:
                        ok = False
                    if not ok:
                        raise RuntimeError(
                            f"function {name} returned an invalid gradient at index {position}"
                            f" - got {tuple(g.shape)} but expected shape compatible with "
                            f"{tuple(shape)}")
            grads_in.append(g)
        return tuple(grads_in)
    return vjp


def _broadcasts_to(grad_shape, shape):
    # PyTorch accepts a gradient that the input's shape can be expanded to
    # (it is then summed back), nothing else.
    return np.broadcast_shapes(grad_shape, shape) == tuple(grad_shape)


def once_differentiable(backward):
    """Decorator for a ``backward`` that is not itself differentiable.

    It runs with grad mode off; differentiating its result again raises
    (here: the result simply has no history, so it is not differentiated).

    Examples
    --------
    >>> from oxmera.autograd.function import once_differentiable
    >>> callable(once_differentiable(lambda ctx, g: g))
    True
    """
    def wrapper(ctx, *grad_outputs):
        previous = _core._set_grad_enabled(False)
        try:
            return backward(ctx, *grad_outputs)
        finally:
            _core._set_grad_enabled(previous)
    wrapper.__name__ = getattr(backward, "__name__", "backward")
    wrapper.__doc__ = backward.__doc__
    return wrapper
