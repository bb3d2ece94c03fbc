"""Define new ops: a NumPy forward and its VJP, side by side.

This is the one way ops are defined in oxmera, and it is public::

    import numpy as np
    from oxmera.extend import op

    @op(inputs=2, save=("x",))
    def scaled_add(x, y, alpha=1.0):
        return x + alpha * y

    @scaled_add.vjp
    def _(ctx, grad, x, y, alpha=1.0):
        return grad, grad * alpha

The forward receives arrays for its tensor inputs (Python numbers stay
numbers) and the other arguments as given; it returns an array (or a tuple of
arrays). The VJP receives the node as ``ctx``, the gradient of the output
(a tuple of them for several outputs) and the same arguments as the forward,
with Tensors for tensor inputs; it returns one gradient per tensor input, a
Tensor or None. It is written with oxmera ops, so it is itself differentiable.

What the engine does so the op need not: sum a gradient over broadcast
dimensions back to its input's shape, cast it to the input's dtype, skip
inputs that need no gradient (``ctx.needs_input_grad`` tells the VJP which),
free what the VJP reads after backward.

Examples
--------
>>> import numpy as np
>>> import oxmera
>>> from oxmera.extend import op
>>> @op(name="cube_example")
... def cube(x):
...     return x ** 3
>>> @cube.vjp
... def _(ctx, grad, x):
...     return grad * 3 * x * x
>>> x = oxmera.tensor(2.0, requires_grad=True)
>>> cube(x).backward()
>>> x.grad
tensor(12., dtype=float32)
"""
import collections
import functools
import inspect

from oxmera._core import autograd as _core
from oxmera.ops import _registry

__all__ = ["op"]

def op(name=None, *, inputs=1, differentiable=True, save=None, save_output=False,
       promote=False, float_only=False, view=False, outputs=None, method=None,
       operators=(), numpy=None, quiet=False, complex_inputs=False, hidden=(), unit=None,
       replay=False):
    """Decorator: turn a NumPy forward into a recorded, differentiable op.

    Parameters
    ----------
    name : str, optional
        The op's name (default: the function's name); the node is called
        ``<Name>Backward``.
    inputs : int or "sequence"
        How many leading parameters are tensor inputs, or ``"sequence"`` when
        the first parameter is a sequence of tensors (``cat``, ``stack``).
    differentiable : bool
        False for ops whose outputs never require grad (comparisons, argmax).
    save : tuple of str or dict, optional
        Names of the tensor inputs the VJP reads (default: all). Inputs not
        named reach the VJP as None and are not kept alive by the graph. A
        dict maps an input to the inputs whose gradient needs it, e.g.
        ``{"input": ("other",), "other": ("input",)}`` for ``mul``: an input
        is kept only when one of those needs a gradient (``x * 2.0`` keeps
        nothing), and reaches the VJP as None otherwise.
    save_output : bool
        The VJP reads the output as ``ctx.output``.
    promote : bool
        Bring the inputs to a common dtype by PyTorch's promotion rules first.
    float_only : bool
        Integer and bool inputs become the default float dtype first (``exp``).
    complex_inputs : bool
        With ``promote`` or ``float_only``: the op takes complex tensors (its
        VJP conjugates as the autograd mechanics' "Complex numbers" section
        says). Without it such an op refuses them with a RuntimeError rather
        than give a gradient no one checked.
    view : bool
        The output may be a view of input 0 (shares its version counter).
    outputs : tuple of str, optional
        Names of several outputs: the op returns a named tuple of them.
    hidden : tuple of str
        Outputs (named in ``outputs``) kept only for the VJP to read as
        ``ctx.output[k]``, which the public function never returns (``gelu``
        keeps the Gaussian CDF its forward computed). They are not
        differentiable: they never require grad, and the VJP receives None
        as their gradient (other floating outputs that got no gradient reach
        the VJP as zeros, an output-sized array made in each backward). They
        belong to the VJP, which may write over them when ``ctx._frees_saved``
        says the backward frees them right after it.
    method : str or bool, optional
        Also install as a Tensor method of this name (True: the op's name).
    operators : tuple of str
        Python operators to install, e.g. ``("__mul__", "__rmul__")``;
        ``__r*__`` names swap the operands.
    numpy : callable, optional
        A NumPy function the forward equals when called with its tensor
        inputs alone (``np.multiply`` for ``mul``): the core then calls it
        directly, saving a Python call on the commonest calls. The forward
        still runs when other arguments are given. A ufunc of one or two
        inputs goes further: on small float32/float64 arrays of one shape
        (or such an array and a Python number) the core runs the ufunc's
        own inner loop, the one NumPy's dispatch would pick, without the
        dispatch (the same bits; NumPy's call where the loop raised a
        floating-point flag, so its warnings hold).
    quiet : bool
        Silence NumPy's floating-point warnings (overflow, division by zero,
        invalid) in the forward, as PyTorch never warns: results are IEEE
        inf/nan. Cheaper than ``np.errstate`` inside the forward.
    unit : int or float, optional
        For an op of two inputs whose result is the other input, unchanged,
        when one input equals this value everywhere (``mul``: 1). In
        oxmera's own VJPs, in a backward that records nothing, the op's
        operator then hands on the other operand instead of computing: the
        ``grad * f'(x)`` of a VJP whose incoming gradient is the broadcast 1
        of ``loss.sum()`` costs no pass over memory. (Your VJPs always get a
        computed result, which they may write into.) Real floating dtypes
        only (for complex numbers ``(1+0j) * z`` is not always ``z``:
        ``0 * inf`` is nan). Also for an op of three inputs and two outputs
        that are the products of its first input with each other one
        (``mul_pair``, mul's VJP): when the first is this value, the two
        others are the results (there, for read-only memory only: what a
        node saved).
    replay : bool
        For oxmera's own ops: in a backward that records nothing, the VJP's
        op calls are noted the first time for each signature (which inputs
        need a gradient, the dtypes and shapes of the gradient, the saved
        inputs and the output, the call's other arguments) and rerun on the
        arrays for later nodes, without the VJP's Python frame or a Tensor
        per intermediate (see ``_Replay`` in ``oxmera/_core/autograd.pyx``).
        Declare it only for a VJP whose op calls follow from the signature:
        it may branch on dtypes, shapes and ``ctx.needs_input_grad``, not on
        values, and computes only with oxmera ops (no NumPy on ``_data``).
        Ignored for ops defined outside oxmera.

    Examples
    --------
    >>> import numpy as np
    >>> import oxmera
    >>> from oxmera.extend import op
    >>> @op(inputs=2, save={"x": ("y",), "y": ("x",)}, numpy=np.multiply)
    ... def times_example(x, y):
    ...     return np.multiply(x, y)
    >>> @times_example.vjp
    ... def _(ctx, grad, x, y):
    ...     needs = ctx.needs_input_grad
    ...     return (grad * y if needs[0] else None, grad * x if needs[1] else None)
    >>> a = oxmera.tensor([2.0], requires_grad=True)
    >>> times_example(a, 3.0).backward()
    >>> a.grad
    tensor([3.], dtype=float32)
    """
    def decorate(forward):
        opname = name or forward.__name__
        n_inputs, input_names, n_required, defaults = _tensor_parameters(opname, forward,
                                                                         inputs)
        if save is None:
            save_mask = None
        else:
            needed_by = dict(save) if isinstance(save, dict) else dict.fromkeys(save, True)
            unknown = (set(needed_by) | {name for users in needed_by.values() if users is not True
                                         for name in _names(users)}) - set(input_names)
            if unknown:
                raise ValueError(f"op {opname}: save names {sorted(unknown)} are not "
                                 f"inputs {input_names}")
            save_mask = tuple(
                False if n not in needed_by else True if needed_by[n] is True
                else tuple(input_names.index(user) for user in _names(needed_by[n]))
                for n in input_names)
        prepare = None
        if promote or float_only:
            from oxmera.ops._utils import make_prepare
            prepare = make_prepare(promote, float_only, None if complex_inputs else opname)
        output_type = None
        if outputs:
            output_type = collections.namedtuple(opname, outputs)
            output_type.__module__ = "oxmera.return_types"
        hidden_names = (hidden,) if isinstance(hidden, str) else tuple(hidden)
        fields = output_type._fields if output_type is not None else ()
        unknown = [h for h in hidden_names if h not in fields]
        if unknown:
            raise ValueError(f"op {opname}: hidden names {unknown} are not outputs {fields}")
        opdef = _registry.OpDef(opname, forward, n_inputs, input_names, differentiable,
                                save_mask, save_output, prepare, view, output_type,
                                numpy, quiet, n_required, defaults,
                                tuple(fields.index(h) for h in hidden_names) or None,
                                promotes=bool(promote), unit=unit, replay=bool(replay),
                                float_only=bool(float_only))

        public = _core.op_function(opdef)     # compiled: no Python frame per call
        functools.update_wrapper(public, forward)
        public.__name__ = opname
        public.__qualname__ = opname
        public.op = opdef

        def vjp(fn):
            if not differentiable:
                raise TypeError(f"op {opname} is declared non-differentiable; it takes no VJP")
            opdef.vjp = fn
            return fn

        public.vjp = vjp
        opdef.public = public
        _registry.register(opdef)
        if method:
            _registry.add_tensor_attribute(opname if method is True else method, public)
        for dunder in operators:
            _registry.add_tensor_attribute(dunder, _operator(opdef, dunder))
        return public

    return decorate


def _tensor_parameters(opname, forward, inputs):
    """The tensor inputs a forward declares: their count, names, how many are required
    and the defaults of the others.

    The core passes the call's first ``inputs`` arguments to these parameters
    by position, so each must be a named positional parameter of the forward
    (not ``*args``, not keyword-only): a declaration that does not fit its
    forward is refused here, when the op is defined, not at its first call.
    """
    if inputs == "sequence":
        count = 1
    elif isinstance(inputs, int) and not isinstance(inputs, bool) and inputs >= 0:
        count = inputs
    else:
        raise TypeError(f"op {opname}: inputs must be a non-negative int or 'sequence', got "
                        f"{inputs!r}")
    try:
        parameters = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError) as err:
        raise TypeError(f"op {opname}: cannot read the forward's signature: {err}") from None
    positional = [p for p in parameters[:count]
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) < count:
        shown = ", ".join(str(p) for p in parameters) or "no parameters"
        raise TypeError(f"op {opname}: inputs={inputs!r} declares {count} tensor input(s), but "
                        f"the forward's first parameters ({shown}) name only "
                        f"{len(positional)} positional one(s); list each tensor input as a "
                        f"named parameter (not *args)")
    required = sum(p.default is p.empty for p in positional)
    defaults = tuple(p.default for p in positional[required:])
    if any(p.default is p.empty for p in positional[required:]):
        raise TypeError(f"op {opname}: a tensor input without a default follows one with a "
                        f"default")
    names = tuple(p.name for p in positional)
    return (-1 if inputs == "sequence" else count), names, required, defaults


def _names(users):
    return (users,) if isinstance(users, str) else tuple(users)


_UNARY_OPERATORS = ("__neg__", "__pos__", "__abs__", "__invert__")


def _operator(opdef, dunder):
    # Operators call the core directly (not through the public function), and
    # compiled: no Python frame on the most common calls.
    kind = ("unary" if dunder in _UNARY_OPERATORS
            else "reflected" if dunder.startswith("__r") and dunder != "__rshift__"
            else "binary")
    method = _core.op_operator(opdef, kind)
    method.__name__ = method.__qualname__ = dunder
    method.op = opdef           # the core's C operator slot runs the op directly
    return method
