"""The graph API: nodes, saved-tensor hooks, multi-tensor hooks, and pictures.

What PyTorch's ``torch.autograd.graph`` offers, for oxmera's graph:

- :class:`~oxmera.autograd.graph.Node`, the abstract view of a node (``GradFn`` is one): ``name()``,
  ``next_functions``, ``metadata``, ``register_hook``, ``register_prehook``;
  per node ``_saved_<name>`` (what the node saved for backward) and
  ``_raw_saved_<name>`` (a :class:`~oxmera.autograd.graph.SavedTensor` that takes its own hooks).
- :class:`~oxmera.autograd.graph.saved_tensors_hooks` (pack a tensor when a node saves it, unpack
  it when the backward reads it), :class:`~oxmera.autograd.graph.save_on_cpu`,
  :class:`~oxmera.autograd.graph.disable_saved_tensors_hooks`,
  :class:`~oxmera.autograd.graph.allow_mutation_on_saved_tensors`.
- :func:`~oxmera.autograd.graph.register_multi_grad_hook`,
  :func:`~oxmera.autograd.graph.increment_version`.
- :func:`~oxmera.autograd.graph.draw`: a Graphviz picture of the graph (``oxmera[viz]``).

The compiled core does the recording and the backward; this module keeps
the per-thread hook stacks and maps PyTorch's attribute names.
"""
import abc
import functools
import inspect
import threading

from oxmera._core import autograd as _core
from oxmera.autograd._draw import GraphPicture, draw

__all__ = ["Node", "SavedTensor", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "allow_mutation_on_saved_tensors",
           "register_multi_grad_hook", "increment_version", "draw", "GraphPicture"]


class Node(abc.ABC):
    """A node of the autograd graph, as ``torch.autograd.graph.Node``.

    Every ``grad_fn`` (oxmera's ``GradFn``) is a ``Node``, and so is the
    ``AccumulateGrad`` that ``next_functions`` shows for a leaf.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.graph import Node
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> y = (x * x).sum()
    >>> isinstance(y.grad_fn, Node), y.grad_fn.name()
    (True, 'SumBackward')
    >>> [(fn.name(), nr) for fn, nr in y.grad_fn.next_functions]
    [('MulBackward', 0)]
    """

    @abc.abstractmethod
    def name(self):
        """The node's name, e.g. ``MulBackward``."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """Per input: ``(node, output_nr)``, ``None`` where no gradient flows."""

    @property
    @abc.abstractmethod
    def metadata(self):
        """A dict for the user's notes about the node."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """Run ``fn(grad_inputs, grad_outputs)`` after the node's backward."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """Run ``fn(grad_outputs)`` before the node's backward."""


Node.register(_core.GradFn)
Node.register(_core.AccumulateGrad)


# -- saved-tensor hooks --------------------------------------------------------

class _HookState(threading.local):
    # Per thread, as in PyTorch: each thread starts with no hooks, enabled.
    def __init__(self):
        self.stack = []             # (pack, unpack) pairs, innermost last
        self.disabled = None        # the error message while disabled, else None


_state = _HookState()
_active_lock = threading.Lock()
_active_count = 0                   # threads' pushed hooks: the core asks only while > 0


def _current_hooks():
    stack = _state.stack
    return stack[-1] if stack else None


def _push_hooks(pack, unpack):
    global _active_count
    if _state.disabled is not None:
        raise RuntimeError(_state.disabled)
    _state.stack.append((pack, unpack))
    with _active_lock:
        _active_count += 1
        _core.set_saved_tensors_hooks_source(_current_hooks)


def _pop_hooks():
    global _active_count
    _state.stack.pop()
    with _active_lock:
        _active_count -= 1
        if _active_count == 0:
            _core.set_saved_tensors_hooks_source(None)


class saved_tensors_hooks:
    """Context manager: pack each tensor a node saves, unpack it when needed.

    While active (in this thread), every node recorded hands each tensor it
    saves for backward (inputs and outputs its VJP reads) to
    ``pack_hook(tensor)`` and keeps only what that returns; the backward (or
    a ``_saved_*`` attribute) gets the tensor back from
    ``unpack_hook(packed)``, which must return a Tensor with the same values.
    Hooks nest: the innermost pair applies. As in PyTorch, a packed value is
    not checked for in-place changes, and the node's memory is no longer
    kept read-only for it. An output reaches ``pack_hook`` as a tensor with
    no history (the node must not keep its own output alive).

    Parameters
    ----------
    pack_hook : callable
        ``pack_hook(tensor) -> object``.
    unpack_hook : callable
        ``unpack_hook(object) -> Tensor``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.graph import saved_tensors_hooks
    >>> packed = []
    >>> def pack(t):
    ...     packed.append(tuple(t.shape))
    ...     return t.numpy(force=True).copy()
    >>> x = oxmera.tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> with saved_tensors_hooks(pack, oxmera.from_numpy):
    ...     y = (x * x).sum()
    >>> packed
    [(3,), (3,)]
    >>> y.backward()
    >>> x.grad
    tensor([2., 4., 6.], dtype=float32)
    """

    def __init__(self, pack_hook, unpack_hook):
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError(f"saved_tensors_hooks(pack_hook, unpack_hook): both must be "
                            f"callable, got {type(pack_hook).__name__} and "
                            f"{type(unpack_hook).__name__}")
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _push_hooks(self.pack_hook, self.unpack_hook)
        return self

    def __exit__(self, *exc):
        _pop_hooks()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Context manager: saved tensors are moved to the CPU and back when needed.

    PyTorch uses it to offload a GPU's activations to host memory. oxmera
    runs on the CPU only, so the move is a no-op, but the hooks are real
    ones (and nest with others like any :class:`~oxmera.autograd.graph.saved_tensors_hooks`).

    Parameters
    ----------
    pin_memory : bool
        Accepted for PyTorch's signature; host memory is not pinned here.
    device_type : str
        Accepted for PyTorch's signature.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.graph import save_on_cpu
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> with save_on_cpu():
    ...     y = (x.exp() * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([ 5.4366, 22.1672], dtype=float32)
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(tensor):
            return tensor.device, tensor.cpu()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager: using saved-tensor hooks in it raises ``RuntimeError``.

    Parameters
    ----------
    error_message : str
        The error's message.

    Examples
    --------
    >>> from oxmera.autograd.graph import disable_saved_tensors_hooks, save_on_cpu
    >>> with disable_saved_tensors_hooks("no offloading here"):
    ...     try:
    ...         with save_on_cpu():
    ...             pass
    ...     except RuntimeError as err:
    ...         print(err)
    no offloading here
    """

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._previous = _state.disabled
        _state.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _state.disabled = self._previous
        return False


class allow_mutation_on_saved_tensors:
    """Context manager: tensors saved for backward in it may be modified in place.

    Each saved tensor is copied when its node is recorded, so an in-place
    change of the original afterwards (which would otherwise make the
    backward raise) leaves the gradients right. PyTorch copies only on the
    first change; oxmera copies eagerly, which costs the saved tensors'
    memory once more.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.graph import allow_mutation_on_saved_tensors
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> with allow_mutation_on_saved_tensors():
    ...     a = x * 1
    ...     y = (a * a).sum()
    ...     with oxmera.no_grad():
    ...         _ = a.mul_(10)
    ...     y.backward()
    >>> x.grad
    tensor([2., 4.], dtype=float32)
    """

    def __enter__(self):
        self._hooks = saved_tensors_hooks(_copy_saved, _identity)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)
        return False


def _copy_saved(tensor):
    return _core._wrap(tensor._data.copy())


def _identity(tensor):
    return tensor


# -- per-node saved attributes ------------------------------------------------

class SavedTensor:
    """What ``node._raw_saved_<name>`` is: one saved tensor of a node.

    ``register_hooks(pack_hook, unpack_hook)`` packs it at once and unpacks
    it when the backward reads it (once per saved tensor).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> y = x * x
    >>> calls = []
    >>> y.grad_fn._raw_saved_self.register_hooks(
    ...     lambda t: calls.append("pack") or t, lambda t: calls.append("unpack") or t)
    >>> y.sum().backward()
    >>> calls
    ['pack', 'unpack']
    """

    __slots__ = ("_node", "_slot")

    def __init__(self, node, slot):
        self._node = node
        self._slot = slot

    def register_hooks(self, pack_hook, unpack_hook):
        """Hand this saved tensor to ``pack_hook`` now; ``unpack_hook`` gives it back."""
        self._node._pack_saved_slot(self._slot, pack_hook, unpack_hook)

    def __repr__(self):
        return f"<SavedTensor {self._slot} of {self._node!r}>"


# PyTorch's names for an op's first inputs, where oxmera's forward says ``input``.
_TORCH_INPUT_NAMES = {"self": "input"}


@functools.lru_cache(maxsize=None)
def _other_parameters(forward, n_inputs):
    # The forward's parameters after its tensor inputs: (name, default) pairs.
    try:
        params = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        return ()
    return tuple((p.name, p.default) for p in params[max(n_inputs, 1):]
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _saved_attribute(node, attribute):
    raw = attribute.startswith("_raw_saved_")
    name = attribute[len("_raw_saved_" if raw else "_saved_"):]
    op = node.op
    missing = AttributeError(f"'{node.name()}' object has no attribute '{attribute}'")
    if op is None:
        raise missing
    if op.save_output and name.startswith("result"):
        k = 0 if name == "result" else int(name[6:]) if name[6:].isdigit() else -1
        if (name == "result") != (node._output_count == 1) or not 0 <= k < node._output_count:
            raise missing
        if raw:
            return SavedTensor(node, -1 - k)
        return node._saved_output_value(k)
    names = op.input_names
    name = _TORCH_INPUT_NAMES.get(name, name) if name not in names else name
    args, kwargs = node._saved_arguments(not raw)     # raw: no unpack hook runs
    if name in names and op.n_inputs >= 0:
        i = names.index(name)
        if raw:
            if isinstance(args[i], _core.Tensor) or i in node._packed_slots():
                return SavedTensor(node, i)
            raise missing
        if not isinstance(args[i], _core.Tensor):
            raise missing
        return args[i]
    if name in names:               # a sequence op's tensors (cat, stack)
        if raw:
            raise missing
        return args[0]
    if raw:
        raise missing
    n = max(op.n_inputs, 1)
    for j, (pname, default) in enumerate(_other_parameters(op.forward, n)):
        if pname == name:
            if kwargs and name in kwargs:
                return kwargs[name]
            if n + j < len(args):
                return args[n + j]
            if default is not inspect.Parameter.empty:
                return default
    raise missing


_core.set_saved_attribute_resolver(_saved_attribute)


# -- hooks over several tensors -----------------------------------------------

class _MultiHandle:
    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Register a hook on the gradients of several tensors together.

    ``mode="all"``: once per backward that reaches any of them, after it has
    computed their gradients, ``fn(grads)`` is called with a list holding
    each tensor's gradient (None for one this backward did not reach), as a list.
    ``mode="any"``: ``fn(grad)`` is called once per backward, with the first
    of their gradients computed. Returns a handle whose ``remove()``
    unregisters the hook. Gradients are not changed by ``fn``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.graph import register_multi_grad_hook
    >>> a = oxmera.tensor([1.0], requires_grad=True)
    >>> b = oxmera.tensor([2.0], requires_grad=True)
    >>> seen = []
    >>> handle = register_multi_grad_hook((a, b), lambda grads: seen.append(grads))
    >>> (a * b).sum().backward()
    >>> seen
    [[tensor([2.], dtype=float32), tensor([1.], dtype=float32)]]
    >>> handle.remove()
    """
    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook(): expects mode 'all' or 'any', got "
                         f"{mode!r}")
    if not callable(fn):
        raise TypeError(f"register_multi_grad_hook(): fn must be callable, got "
                        f"{type(fn).__name__}")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, _core.Tensor) or not t.requires_grad:
            raise RuntimeError(f"register_multi_grad_hook(): tensor {i} does not require grad")
    lock = threading.Lock()
    pending = {}                    # thread ident -> the gradients of its running backward

    def finish(ident):
        with lock:
            grads = pending.pop(ident)
        if mode == "all":
            fn(grads)

    def make_hook(i):
        def hook(grad):
            ident = threading.get_ident()
            with lock:
                grads = pending.get(ident)
                first = grads is None
                if first:
                    grads = pending[ident] = [None] * len(tensors)
                grads[i] = grad
            if first:
                _core._queue_callback(functools.partial(finish, ident))
                if mode == "any":
                    fn(grad)
            return None
        return hook

    return _MultiHandle([t.register_hook(make_hook(i)) for i, t in enumerate(tensors)])


def increment_version(tensor):
    """Count one in-place change of ``tensor`` (or of each tensor of an iterable).

    For changes made behind oxmera's back (through NumPy, say): a backward
    that saved the tensor earlier then raises, as after an in-place op.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.graph import increment_version
    >>> t = oxmera.zeros(2)
    >>> increment_version(t)
    >>> t._version
    1
    """
    tensors = (tensor,) if isinstance(tensor, _core.Tensor) else tuple(tensor)
    for t in tensors:
        if not isinstance(t, _core.Tensor):
            raise TypeError(f"increment_version(): expected Tensors, got {type(t).__name__}")
    for t in tensors:
        t._bump_version()
