"""``oxmera.nn.Module``: the base class of every layer and model.

What it owns: registration of parameters, buffers and submodules through
attribute assignment; iterating over them by name; train/eval mode;
``state_dict``/``load_state_dict``; dtype conversion; forward hooks; and the
nested repr. Everything follows ``torch.nn.Module`` (names, arguments,
order of iteration, error types and messages), with one deliberate
difference: ``load_state_dict`` checks every key, shape and value before it
copies anything, so a failed load leaves the module exactly as it was
(PyTorch copies the matching entries before it raises).

What it leaves to others: the math is in ``oxmera.nn.functional`` and the
ops; the Parameter class is ``oxmera.nn.parameter``; optimizers
(``oxmera.optim``) only read ``parameters()``/``named_parameters()``;
saving to disk (``oxmera.save``) works on ``state_dict()``.
"""
import functools
import itertools
import math
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from oxmera import _device, _layout
from oxmera._core import autograd as _core
from oxmera.autograd import no_grad
from oxmera.autograd.function import Function
from oxmera.ops import conversion as _conversion
from oxmera.nn.parameter import Parameter

__all__ = ["Module", "RemovableHandle"]

Tensor = _core.Tensor
_EXTRA_STATE_KEY = "_extra_state"


class RemovableHandle:
    """A handle returned by the ``register_*_hook`` methods; ``remove()`` unregisters.

    Usable as a context manager: the hook is removed on exit.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Identity()
    >>> seen = []
    >>> with layer.register_forward_hook(lambda m, args, out: seen.append(out.shape)):
    ...     _ = layer(oxmera.zeros(2))
    >>> _ = layer(oxmera.zeros(3))
    >>> seen
    [oxmera.Size([2])]
    """

    _next_id = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        # Weak references: a handle kept by the user must not keep a
        # deleted module's hook tables alive.
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._next_id)
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        """Unregister the hook (a second call does nothing)."""
        hooks_dict = self.hooks_dict_ref()
        if hooks_dict is not None:
            hooks_dict.pop(self.id, None)
        for ref in self.extra_dict_ref:
            extra = ref()
            if extra is not None:
                extra.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it did not find and did not expect."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text, spaces):
    """Indent every line of ``text`` but the first by ``spaces`` (blank lines stay empty)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    rest = [(" " * spaces) + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


def _typename(value):
    kind = type(value)
    module = kind.__module__
    if module in ("builtins", None):
        return kind.__qualname__
    return f"{module}.{kind.__qualname__}"


def _check_name(kind, name):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        raise KeyError(f"{kind} name can't contain \".\", got: {name!r}")
    if name == "":
        raise KeyError(f"{kind} name can't be empty string \"\"")


def _plan_load(key, value, target, assign, is_parameter):
    """What ``load_state_dict`` stores for ``key``, or the message saying why it cannot.

    Without ``assign``: ``value``'s array, after checking that its conversion to
    ``target``'s dtype loses nothing NumPy would only warn about (a warning turned into
    an error by ``python -W error`` must not stop the load half way): complex values
    into a real tensor, NaN or infinity into an integer or bool one, values out of an
    integer dtype's range, finite values that overflow a floating dtype. With
    ``assign``: the tensor the module will hold (a Parameter for a parameter).
    """
    def refused(problem):
        return f"While copying the parameter named \"{key}\", {problem}"

    if isinstance(value, Tensor):
        array = value._data
    elif isinstance(value, np.ndarray):
        array = value
    elif hasattr(value, "__array__") and not isinstance(value, (str, bytes)):
        try:
            array = np.asarray(value)          # e.g. a torch.Tensor
        except Exception as err:             # e.g. a torch.Tensor that requires grad
            return refused(f"the checkpoint's value cannot be read as an array ({err})")
    else:
        return refused(f"expected oxmera.Tensor or an array from checkpoint but received "
                       f"{type(value)}")
    if array.shape != target.shape:
        return (f"size mismatch for {key}: copying a param with shape {array.shape} from "
                f"checkpoint, the shape in current model is {target.shape}.")
    if array.dtype.kind not in "biufc":
        return refused(f"the checkpoint holds dtype {array.dtype}, which cannot be cast to "
                       f"{target.dtype}")
    if array.dtype.kind == "c":                  # oxmera has no complex dtype
        return refused(f"the checkpoint holds complex values ({array.dtype}), and the "
                       f"module's {target.dtype} tensor real ones only; take .real first if "
                       f"the imaginary parts are zero")
    if assign:
        if is_parameter and target.requires_grad and array.dtype.kind != "f":
            return (f"While assigning the parameter named \"{key}\": it requires grad, so it "
                    f"needs a floating point value, but the checkpoint holds dtype "
                    f"{array.dtype}")
        tensor = value if isinstance(value, Tensor) else _core._wrap(array)
        if is_parameter and not isinstance(tensor, Parameter):
            tensor = Parameter(tensor, requires_grad=False)
        return tensor
    if not target._data.flags.writeable:
        return (f"While copying the parameter named \"{key}\": the module's tensor is "
                f"read-only (e.g. a broadcast view); give the module its own copy, or load "
                f"with assign=True")
    dtype = np.dtype(target.dtype)
    if np.can_cast(array.dtype, dtype, "safe"):   # nothing can be lost: no check needed
        return array
    if dtype.kind in "iub" and array.dtype.kind == "f" and not np.isfinite(array).all():
        return refused(f"the checkpoint holds NaN or infinite values, which its {dtype} "
                       f"tensor cannot hold")
    if dtype.kind in "iu" and array.dtype.kind in "iuf" and array.size:
        info = np.iinfo(dtype)
        # Python numbers compare exactly across int64, uint64 and float64; a cast truncates.
        low, high = (math.trunc(float(x)) if array.dtype.kind == "f" else int(x)
                     for x in (array.min(), array.max()))
        if low < info.min or high > info.max:
            return refused(f"the checkpoint holds values from {array.min()} to "
                           f"{array.max()}, beyond the range of its {dtype} tensor "
                           f"({info.min} to {info.max})")
    if dtype.kind == "f" and array.dtype.kind in "iuf" and _overflows(array, dtype):
        return refused(f"the checkpoint holds values beyond the range of its {dtype} tensor "
                       f"(largest {np.finfo(dtype).max})")
    return array


def _overflows(array, dtype):
    """Whether casting ``array`` to the floating ``dtype`` turns a finite value into an
    infinity (one pass over it in the common case, and no copy)."""
    if not array.size:
        return False
    limit = np.finfo(dtype).max
    if -limit <= np.fmin.reduce(array, axis=None) and np.fmax.reduce(array, axis=None) <= limit:
        return False               # (fmin/fmax skip NaN; an infinity takes the long way)
    with np.errstate(all="ignore"):
        converted = array.astype(dtype)
    return bool((np.isinf(converted) & ~np.isinf(array)).any())


# Hook tables added after the first release: a module unpickled from an older
# file gets them empty (``__setstate__``).
_LATER_TABLES = ("_backward_hooks", "_backward_pre_hooks", "_non_full_backward_hooks",
                 "_state_dict_hooks",
                 "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                 "_load_state_dict_post_hooks")


class _BackwardHookFunction(Function):
    """Identity on tensors whose backward hands their gradients to a hook.

    The module's backward hooks see the gradients at the boundary of its
    call: one such node on the inputs (``grad_input``), one on the outputs
    (``grad_output``), as PyTorch's ``BackwardHookFunction`` does.
    """

    @staticmethod
    def forward(ctx, hook, *tensors):
        ctx.hook = hook
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return (None, *ctx.hook(grads))


def _pack_with_none(positions, values, size):
    out = [None] * size
    for position, value in zip(positions, values):
        out[position] = value
    return tuple(out)


class _BackwardHook:
    """The state of one call of a module that has backward hooks."""

    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_positions = None

    @staticmethod
    def _wrap(values, hook):
        positions = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        if not (_core.is_grad_enabled() and any(values[i].requires_grad for i in positions)):
            return None, values
        wrapped = _BackwardHookFunction.apply(hook, *[values[i] for i in positions])
        out = list(values)
        for i, w in zip(positions, wrapped):
            out[i] = w
        return positions, tuple(out)

    def setup_input(self, args):
        self.n_inputs = len(args)
        self.input_positions, args = self._wrap(args, self._input_hook)
        return args

    def setup_output(self, result):
        single = isinstance(result, Tensor)
        if not (single or isinstance(result, tuple)):
            return result            # e.g. a dict: PyTorch hooks only Tensors and tuples
        outputs = (result,) if single else result
        self.n_outputs = len(outputs)
        self.output_positions, outputs = self._wrap(outputs, self._output_hook)
        return outputs[0] if single else outputs

    def _output_hook(self, grads):
        grad_outputs = _pack_with_none(self.output_positions, grads, self.n_outputs)
        for hook in list(self.module._backward_pre_hooks.values()):
            new = hook(self.module, grad_outputs)
            if new is None:
                continue
            new = new if isinstance(new, tuple) else (new,)
            if len(new) != len(grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output,"
                                   f" got {len(new)}, but expected {len(grad_outputs)}")
            grad_outputs = new
        self.grad_outputs = grad_outputs
        if self.input_positions is None:
            # No input requires grad: the hooks run now, with grad_input all None.
            grad_inputs = (None,) * self.n_inputs
            for hook in list(self.module._backward_hooks.values()):
                new = hook(self.module, grad_inputs, grad_outputs)
                if new is not None and not all(g is None for g in new):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return tuple(grad_outputs[i] for i in self.output_positions)

    def _input_hook(self, grads):
        grad_inputs = _pack_with_none(self.input_positions, grads, self.n_inputs)
        for hook in list(self.module._backward_hooks.values()):
            new = hook(self.module, grad_inputs, self.grad_outputs)
            if new is None:
                continue
            new = new if isinstance(new, tuple) else (new,)
            if len(new) != len(grad_inputs):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(new)}, but expected {len(grad_inputs)}")
            grad_inputs = new
        return tuple(grad_inputs[i] for i in self.input_positions)


def _call_module_hook(hook, module_ref, grad_inputs, grad_outputs):
    module = module_ref()
    if module is None:        # the module is gone: nothing to report to
        return None
    return hook(module, grad_inputs, grad_outputs)


class Module:
    """Base class for all neural-network modules; subclass it and define ``forward``.

    Assigning a :class:`Parameter`, a Module or (through
    :meth:`register_buffer`) a Tensor buffer as an attribute registers it,
    so ``parameters()``, ``state_dict()``, ``to()``, ``train()`` and the
    repr reach it. Calling the module runs its forward pre-hooks,
    ``forward`` and its forward hooks. A subclass must call
    ``super().__init__()`` before assigning any of these.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> class TwoLayer(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.hidden = nn.Linear(4, 8)
    ...         self.out = nn.Linear(8, 2)
    ...     def forward(self, x):
    ...         return self.out(self.hidden(x).relu())
    >>> model = TwoLayer()
    >>> model
    TwoLayer(
      (hidden): Linear(in_features=4, out_features=8, bias=True)
      (out): Linear(in_features=8, out_features=2, bias=True)
    )
    >>> [name for name, _ in model.named_parameters()]
    ['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
    >>> model(oxmera.randn(3, 4)).shape
    oxmera.Size([3, 2])
    """

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            unexpected = ", ".join([repr(a) for a in args] + list(kwargs))
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments "
                            f"({unexpected}) for Module.__init__()")
        # object.__setattr__: our __setattr__ reads these dicts.
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_hooks", OrderedDict())
        setattr_(self, "_forward_hooks_with_kwargs", OrderedDict())
        setattr_(self, "_forward_hooks_always_called", OrderedDict())
        setattr_(self, "_forward_pre_hooks", OrderedDict())
        setattr_(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        for table in _LATER_TABLES:
            setattr_(self, table, OrderedDict())

    def forward(self, *args, **kwargs):
        """The computation; every subclass defines it (call the module, not ``forward``)."""
        raise NotImplementedError(f"Module [{type(self).__name__}] is missing the required "
                                  f"\"forward\" function")

    # -- registration --------------------------------------------------------------------

    def register_buffer(self, name, tensor, persistent=True):
        """Register a Tensor (or None) that is state but not a parameter, e.g. running stats.

        A buffer is reachable as an attribute, converted by ``to()``, and,
        when ``persistent`` (and not None), saved in ``state_dict()``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> m = nn.Module()
        >>> m.register_buffer("steps", oxmera.tensor(0))
        >>> m.register_buffer("scratch", oxmera.zeros(2), persistent=False)
        >>> list(m.state_dict())
        ['steps']
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(oxmera.Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Register ``param`` (a :class:`Parameter` or None) under ``name``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> m = nn.Module()
        >>> m.register_parameter("scale", nn.Parameter(oxmera.ones(1)))
        >>> m.register_parameter("shift", None)
        >>> [name for name, _ in m.named_parameters()]
        ['scale']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            f"(oxmera.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Register the submodule ``module`` (or None) under ``name``.

        Examples
        --------
        >>> from oxmera import nn
        >>> m = nn.Module()
        >>> m.add_module("act", nn.ReLU())
        >>> m.act
        ReLU()
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if "_modules" not in self.__dict__:
            raise AttributeError("cannot assign module before Module.__init__() call")
        _check_name("module", name)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of :meth:`add_module`.

        Examples
        --------
        >>> from oxmera import nn
        >>> m = nn.Module()
        >>> m.register_module("act", nn.Tanh())
        >>> list(m.named_children())
        [('act', Tanh())]
        """
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` (``""`` is the module itself).

        Examples
        --------
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
        >>> model.get_submodule("1.0")
        ReLU()
        """
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not isinstance(module, Module) or item not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}` "
                                     f"(looking up {target!r})")
            module = module._modules[item]
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target):
        """The parameter at the dotted path ``target``, e.g. ``"0.weight"``.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Sequential(nn.Linear(2, 3)).get_parameter("0.bias").shape
        oxmera.Size([3])
        """
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._parameters:
            raise AttributeError(f"{module._get_name()} has no parameter `{name}`")
        return module._parameters[name]

    def get_buffer(self, target):
        """The buffer at the dotted path ``target``, e.g. ``"0.running_mean"``.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Sequential(nn.BatchNorm1d(3)).get_buffer("0.running_var")
        tensor([1., 1., 1.], dtype=float32)
        """
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._buffers:
            raise AttributeError(f"{module._get_name()} has no buffer `{name}`")
        return module._buffers[name]

    def set_submodule(self, target, module, strict=False):
        """Put ``module`` at the dotted path ``target`` (its parent must exist).

        With ``strict=True`` the last name must already be an attribute of the
        parent.

        Examples
        --------
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
        >>> model.set_submodule("1.0", nn.Tanh())
        >>> model[1]
        Sequential(
          (0): Tanh()
        )
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    # -- attribute access ----------------------------------------------------------------

    def __getattr__(self, name):
        # Only called when normal lookup fails. Reads __dict__ directly:
        # copy/pickle call this on an instance whose __init__ never ran.
        state = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            members = state.get(table)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        state = self.__dict__

        def remove_from(*tables):
            for table in tables:
                if name in table:
                    if isinstance(table, dict):
                        del table[name]
                    else:
                        table.discard(name)

        params = state.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(state, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(oxmera.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = state.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(state, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (oxmera.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = state.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        f"(oxmera.Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules,
                *self._buffers]
        return sorted({key for key in keys if not key[0].isdigit()})

    def __setstate__(self, state):
        self.__dict__.update(state)
        # A module pickled by an older version may lack the newer tables.
        for name in ("_forward_hooks", "_forward_hooks_with_kwargs",
                     "_forward_hooks_always_called", "_forward_pre_hooks",
                     "_forward_pre_hooks_with_kwargs", *_LATER_TABLES):
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # -- iteration -----------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        # id() is safe here: every member is kept alive by its module while we iterate.
        seen = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, value in get_members(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + "." if module_prefix else "") + name, value

    def parameters(self, recurse=True):
        """An iterator over the parameters (each once), this module's first.

        Examples
        --------
        >>> from oxmera import nn
        >>> [tuple(p.shape) for p in nn.Linear(3, 2).parameters()]
        [(2, 3), (2,)]
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, parameter)`` pairs, names dotted from this module.

        A parameter shared by several modules comes once (at its first
        name) unless ``remove_duplicate=False``.

        Examples
        --------
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1, bias=False))
        >>> [name for name, _ in model.named_parameters()]
        ['0.weight', '0.bias', '2.weight']
        >>> [name for name, _ in model.named_parameters(prefix="net", recurse=False)]
        []
        """
        return self._named_members(lambda module: module._parameters.items(), prefix=prefix,
                                   recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """An iterator over the buffers (None buffers skipped).

        Examples
        --------
        >>> from oxmera import nn
        >>> [tuple(b.shape) for b in nn.BatchNorm1d(3).buffers()]
        [(3,), (3,), ()]
        """
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """``(name, buffer)`` pairs, names dotted from this module.

        Examples
        --------
        >>> from oxmera import nn
        >>> [name for name, _ in nn.Sequential(nn.BatchNorm1d(3)).named_buffers()]
        ['0.running_mean', '0.running_var', '0.num_batches_tracked']
        """
        return self._named_members(lambda module: module._buffers.items(), prefix=prefix,
                                   recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        """An iterator over the immediate submodules.

        Examples
        --------
        >>> from oxmera import nn
        >>> list(nn.Sequential(nn.ReLU(), nn.Tanh()).children())
        [ReLU(), Tanh()]
        """
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """``(name, submodule)`` pairs of the immediate submodules (each once).

        Examples
        --------
        >>> from oxmera import nn
        >>> [name for name, _ in nn.Sequential(nn.ReLU(), nn.Tanh()).named_children()]
        ['0', '1']
        """
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self):
        """An iterator over every module of the tree, this one first (each once).

        Examples
        --------
        >>> from oxmera import nn
        >>> len(list(nn.Sequential(nn.Linear(2, 2), nn.ReLU()).modules()))
        3
        """
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(name, module)`` over the tree, depth first, this one first under ``prefix``.

        Examples
        --------
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
        >>> [name for name, _ in model.named_modules()]
        ['', '0', '1', '1.0']
        """
        if memo is None:
            memo = set()
        # An explicit stack, not recursion: a deep chain of modules must not
        # hit the recursion limit. Pushed in reverse to keep torch's order.
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in memo:
                continue
            if remove_duplicate:
                memo.add(id(module))
            yield name, module
            children = [(name + ("." if name else "") + child_name, child)
                        for child_name, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))

    # -- modes and whole-tree operations -------------------------------------------------

    def train(self, mode=True):
        """Set training mode (``mode=True``) or evaluation mode on the whole tree.

        Dropout and batch norm behave differently in the two modes. Returns
        the module.

        Examples
        --------
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.Dropout())
        >>> model.train(False)[0].training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """Set evaluation mode (``train(False)``); returns the module.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Dropout().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter (freeze with False); returns the module.

        Examples
        --------
        >>> from oxmera import nn
        >>> layer = nn.Linear(2, 2).requires_grad_(False)
        >>> [p.requires_grad for p in layer.parameters()]
        [False, False]
        """
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter: to None (default) or to zeros.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Linear(2, 1)
        >>> layer(oxmera.ones(1, 2)).sum().backward()
        >>> layer.zero_grad()
        >>> layer.weight.grad is None
        True
        """
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                grad = param.grad
                if grad.grad_fn is not None:
                    grad = grad.detach()
                    param.grad = grad
                with no_grad():
                    grad.zero_()

    def apply(self, fn):
        """Call ``fn(module)`` on every submodule (children first), then on this one.

        Returns the module. Typical use: custom initialization.

        Examples
        --------
        >>> from oxmera import nn
        >>> def init_weights(m):
        ...     if isinstance(m, nn.Linear):
        ...         nn.init.ones_(m.weight)
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(init_weights)
        >>> model[0].weight.sum().item()
        4.0
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        """Replace every parameter's values, gradient and every buffer by ``fn`` of them
        (in the children too unless ``recurse=False``).

        The Parameter objects stay the same (their data is swapped), so an
        optimizer built before ``to()`` still holds the module's parameters.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                new_data = fn(param)
                grad = param.grad
                new_grad = None if grad is None else fn(grad)
            if new_data is param:
                continue
            param.grad = None
            param.data = new_data
            if new_grad is not None:
                param.grad = new_grad
        for name, buffer in self._buffers.items():
            if buffer is not None:
                with no_grad():
                    self._buffers[name] = fn(buffer)
        return self

    def to(self, *args, **kwargs):
        """Convert the floating point parameters and buffers to a dtype, in place.

        PyTorch's forms: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``,
        ``to(tensor)`` (its dtype), each optionally followed by
        ``non_blocking`` (no effect), and the keywords ``device=``,
        ``dtype=``, ``non_blocking=``, ``memory_format=`` (applied to the 4-d
        and 5-d parameters and buffers, e.g. convolution weights, as in
        PyTorch). The device must be the CPU (a RuntimeError otherwise).
        Integer and bool buffers (e.g. ``num_batches_tracked``) keep their
        dtype; gradients are converted with their parameters. Returns the
        module.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Linear(2, 2).to("cpu", oxmera.float64)
        >>> layer.weight.dtype
        dtype('float64')
        """
        _, dtype, _, _, memory_format = _conversion.parse_to("Module.to()", args, kwargs,
                                                             allow_copy=False)
        if dtype is not None and dtype.kind not in "fc":
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        # Checked before converting anything: a failed to() leaves the module as it was.
        # (Ranks are read only when a memory format is given, as PyTorch does: a lazy
        # module's placeholders have none yet, and their to() keeps the dtype for later.)
        if memory_format is not None:
            for name, t in itertools.chain(self.named_parameters(), self.named_buffers()):
                if t.ndim in (4, 5):
                    _layout.dim_order(f"Module.to() ({name!r})", memory_format, t.shape)

        def convert(t):
            return t.to(dtype if t.dtype.kind in "fc" else None,
                        memory_format=(memory_format if memory_format is not None
                                       and t.ndim in (4, 5) else None))

        return self._apply(convert)

    def type(self, dst_type):
        """Convert every parameter and buffer to ``dst_type``, integer buffers included.

        As PyTorch's ``Module.type``: unlike ``to()``, nothing keeps its
        dtype. A parameter that requires grad cannot become an integer
        (a RuntimeError, nothing converted). Returns the module.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> bn = nn.BatchNorm1d(2).type(oxmera.float64)
        >>> bn.weight.dtype, bn.num_batches_tracked.dtype
        (dtype('float64'), dtype('float64'))
        """
        dtype = np.dtype(dst_type)
        if dtype.kind not in "fc":
            for name, param in self.named_parameters():
                if param.requires_grad:
                    raise RuntimeError(
                        f"Module.type(): parameter {name!r} requires gradients and cannot "
                        f"become {dtype} (only floating point tensors can require gradients)")
        return self._apply(lambda t: t.to(dtype))

    def float(self):
        """Convert the floating point parameters and buffers to float32; returns the module.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> nn.Linear(2, 2, dtype=oxmera.float64).float().weight.dtype
        dtype('float32')
        """
        return self.to(np.float32)

    def double(self):
        """Convert the floating point parameters and buffers to float64; returns the module.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Linear(2, 2).double().bias.dtype
        dtype('float64')
        """
        return self.to(np.float64)

    def half(self):
        """Convert the floating point parameters and buffers to float16; returns the module.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Linear(2, 2).half().weight.dtype
        dtype('float16')
        """
        return self.to(np.float16)

    def cpu(self):
        """Return the module (oxmera runs on the CPU only).

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.ReLU().cpu()
        ReLU()
        """
        return self

    def share_memory(self):
        """Return the module: a no-op in oxmera.

        PyTorch moves the tensors into shared memory for ``torch.multiprocessing``;
        oxmera has no such workers, and its tensors are NumPy arrays of the
        process, so there is nothing to move.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.ReLU().share_memory()
        ReLU()
        """
        return self

    def to_empty(self, *, device=None, recurse=True):
        """Give every parameter and buffer new uninitialized storage of the same shape.

        PyTorch uses it to materialize a module built on the ``meta`` device;
        in oxmera (CPU only) it replaces the values by uninitialized ones. With
        ``recurse=False`` only this module's own tensors. Returns the module.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Linear(2, 3).to_empty(device="cpu").weight.shape
        oxmera.Size([3, 2])
        """
        _device.check_cpu("Module.to_empty()", device)
        import oxmera
        return self._apply(oxmera.empty_like, recurse=recurse)

    def cuda(self, device=None):
        """Always a RuntimeError: oxmera has no CUDA device (it computes on the CPU).

        Nothing is moved or changed. Write ``model.to(device)`` with a device
        chosen by ``oxmera.cuda.is_available()`` to run the same program on
        oxmera and PyTorch.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.ReLU().cuda()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        RuntimeError: Module.cuda(): cannot use device 'cuda': oxmera computes on the CPU ...
        """
        _device.check_cpu("Module.cuda()", _device.cuda_device("Module.cuda()", device))

    # -- state dict ----------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def get_extra_state(self):
        """What ``state_dict()`` saves under ``"_extra_state"`` besides tensors (override it).

        A module that overrides it (and :meth:`set_extra_state`) gets a
        ``<prefix>_extra_state`` entry holding any picklable value; the base
        class has none and raises a RuntimeError, as PyTorch's does.

        Examples
        --------
        >>> from oxmera import nn
        >>> class Counter(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.calls = 0
        ...     def get_extra_state(self):
        ...         return {"calls": self.calls}
        ...     def set_extra_state(self, state):
        ...         self.calls = state["calls"]
        >>> a, b = Counter(), Counter()
        >>> a.calls = 5
        >>> dict(a.state_dict())
        {'_extra_state': {'calls': 5}}
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> b.calls
        5
        """
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        """Restore what :meth:`get_extra_state` returned (override both together).

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Module().set_extra_state({})
        Traceback (most recent call last):
          ...
        RuntimeError: Reached a code path in Module.set_extra_state() that should never be called...
        """
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at https://github.com/pytorch/pytorch/"
                           "issues/new?template=bug-report.yml to report this bug.")

    def register_state_dict_pre_hook(self, hook):
        """Run ``hook(module, prefix, keep_vars)`` before this module's entries are saved.

        Examples
        --------
        >>> from oxmera import nn
        >>> layer = nn.Linear(1, 1)
        >>> seen = []
        >>> handle = layer.register_state_dict_pre_hook(lambda m, p, k: seen.append(p))
        >>> _ = nn.Sequential(layer).state_dict()
        >>> seen
        ['0.']
        """
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """Run ``hook(module, state_dict, prefix, local_metadata)`` after this module's
        entries (and its children's) are saved; it may edit ``state_dict`` in
        place and must return None.

        Examples
        --------
        >>> from oxmera import nn
        >>> layer = nn.Linear(1, 1)
        >>> def drop_bias(module, state_dict, prefix, local_metadata):
        ...     del state_dict[prefix + "bias"]
        >>> handle = layer.register_state_dict_post_hook(drop_bias)
        >>> list(layer.state_dict())
        ['weight']
        """
        hook._from_public_api = True
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook):
        """PyTorch's older post hook: like :meth:`register_state_dict_post_hook`, but a
        non-None return of the top module's hook replaces the state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """Run ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module's entries are read.

        ``state_dict`` is ``load_state_dict``'s own copy: the hook may rename,
        add or drop keys (e.g. to load an older layout). Appending to
        ``error_msgs`` makes the load fail.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Linear(1, 1)
        >>> def rename(module, state_dict, prefix, *rest):
        ...     if prefix + "w" in state_dict:
        ...         state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        >>> handle = layer.register_load_state_dict_pre_hook(rename)
        >>> layer.load_state_dict({"w": oxmera.ones(1, 1), "bias": oxmera.zeros(1)})
        <All keys matched successfully>
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """PyTorch's older form: without ``with_module`` the hook gets no module argument."""
        if with_module:
            hook = functools.partial(hook, self)
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """Run ``hook(module, incompatible_keys)`` after ``load_state_dict`` loaded this
        module and its children.

        ``incompatible_keys`` holds the ``missing_keys`` and
        ``unexpected_keys`` lists found so far; the hook may edit them in
        place (e.g. clear keys it knows are fine) and must return None. A
        strict load raises afterwards if keys remain; in that case, as in
        PyTorch, the entries that matched were already copied.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Linear(1, 1)
        >>> def bias_optional(module, keys):
        ...     if "bias" in keys.missing_keys:
        ...         keys.missing_keys.remove("bias")
        >>> handle = layer.register_load_state_dict_post_hook(bias_optional)
        >>> layer.load_state_dict({"weight": oxmera.ones(1, 1)})
        <All keys matched successfully>
        """
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An ordered dict of every parameter and persistent buffer, by dotted name.

        The values share memory with the module's tensors but are detached
        (no history, ``requires_grad=False``) unless ``keep_vars=True``. A
        submodule registered under two names appears under both, as in
        PyTorch.

        Examples
        --------
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        >>> list(model.state_dict())  # doctest: +NORMALIZE_WHITESPACE
        ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var',
         '1.num_batches_tracked']
        """
        if destination is None:
            destination = OrderedDict()
        if not hasattr(destination, "_metadata"):
            try:
                destination._metadata = OrderedDict()
            except AttributeError:        # e.g. a plain dict given as destination
                pass
        metadata = getattr(destination, "_metadata", {})
        top = destination
        # Explicit stack (deep trees); children in registration order; the post
        # hooks run after the children (the ``True`` entries).
        stack = [(prefix, self, False)]
        while stack:
            module_prefix, module, done = stack.pop()
            local_metadata = {"version": module._version}
            if done:
                for hook in list(module._state_dict_hooks.values()):
                    result = hook(module, destination, module_prefix, local_metadata)
                    if getattr(hook, "_from_public_api", False):
                        if result is not None:
                            raise RuntimeError("state_dict post-hook must return None")
                    elif result is not None and module is self:
                        top = result
                continue
            metadata[module_prefix[:-1]] = local_metadata
            for hook in list(module._state_dict_pre_hooks.values()):
                hook(module, module_prefix, keep_vars)
            module._save_to_state_dict(destination, module_prefix, keep_vars)
            stack.append((module_prefix, module, True))
            children = [(module_prefix + name + ".", child, False)
                        for name, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))
        return top

    def _local_state(self):
        """The parameters and persistent buffers ``load_state_dict`` fills, by local name."""
        local = {name: p for name, p in self._parameters.items() if p is not None}
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                local[name] = buffer
        return local

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` into this module and its children.

        With ``strict=True`` the keys must match ``state_dict()``'s exactly.
        Every key, value type and shape is checked before anything is
        copied: on any problem a single ``RuntimeError`` lists the missing
        keys, the unexpected keys and each shape mismatch, and the module is
        left unchanged. With ``strict=False`` missing and unexpected keys
        are allowed (shape mismatches still raise). Values may be Tensors,
        NumPy arrays or other arrays (anything with ``__array__``, e.g. a
        ``torch.Tensor`` from a PyTorch state dict); they are cast to each
        target's dtype. ``assign=True``
        makes the module hold the given tensors (parameters wrapped as
        Parameters keeping their ``requires_grad``) instead of copying.

        Returns
        -------
        IncompatibleKeys
            A named tuple ``(missing_keys, unexpected_keys)``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> a, b = nn.Linear(2, 2), nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        >>> b.load_state_dict({"weight": oxmera.zeros(2, 2)}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        >>> b.load_state_dict({"weight": oxmera.zeros(3, 2)})
        Traceback (most recent call last):
          ...
        RuntimeError: Error(s) in loading state_dict for Linear:
            Missing key(s) in state_dict: "bias".
            size mismatch for weight: copying a param with shape (3, 2) from checkpoint, ...
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        # A copy: load pre-hooks may edit it.
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        missing, errors, plan, hook_unexpected, post_order = [], [], [], [], []
        consumed = set()
        stack = [("", self)]
        while stack:
            prefix, module = stack.pop()
            post_order.append(module)
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            for hook in list(module._load_state_dict_pre_hooks.values()):
                # strict is always True here, as PyTorch passes it to the hooks (its
                # per-module loader collects the keys and leaves strictness to the caller).
                hook(state_dict, prefix, local_metadata, True, missing, hook_unexpected,
                     errors)
            if type(module).set_extra_state is not Module.set_extra_state:
                key = prefix + _EXTRA_STATE_KEY
                if key in state_dict:
                    consumed.add(key)
                    plan.append((module, _EXTRA_STATE_KEY, None, state_dict[key]))
                else:
                    missing.append(key)
            for name, target in module._local_state().items():
                key = prefix + name
                if key not in state_dict:
                    missing.append(key)
                    continue
                consumed.add(key)
                planned = _plan_load(key, state_dict[key], target, assign,
                                     name in module._parameters)
                if isinstance(planned, str):
                    errors.append(planned)
                else:
                    plan.append((module, name, target, planned))
            children = [(prefix + name + ".", child)
                        for name, child in module._modules.items() if child is not None]
            stack.extend(reversed(children))
        unexpected = hook_unexpected + [key for key in state_dict
                                        if key not in consumed and key not in hook_unexpected]
        post_hooks = any(m._load_state_dict_post_hooks for m in post_order)
        if errors or (strict and not post_hooks):
            self._raise_load_errors(errors, missing, unexpected, strict)
        # Every value and conversion was checked above: the writes below cannot fail half
        # way, and the casts lose nothing a warning would report.
        for module, name, target, planned in plan:
            if target is None:
                module.set_extra_state(planned)
            elif not assign:
                with np.errstate(all="ignore"):
                    target._data[...] = planned
                target._bump_version()
            elif name in module._parameters:
                planned.requires_grad_(target.requires_grad)
                module._parameters[name] = planned
            else:
                module._buffers[name] = planned
        keys = _IncompatibleKeys(missing, unexpected)
        if post_hooks:
            # Children before parents, as PyTorch's recursion runs them.
            for module in reversed(post_order):
                for hook in list(module._load_state_dict_post_hooks.values()):
                    if hook(module, keys) is not None:
                        raise RuntimeError("Hooks registered with "
                                           "``register_load_state_dict_post_hook`` are not "
                                           "expected to return new values, if "
                                           "incompatible_keys need to be modified, it should "
                                           "be done inplace.")
            if strict:
                self._raise_load_errors([], missing, unexpected, strict)
        return keys

    def _raise_load_errors(self, errors, missing, unexpected, strict):
        errors = list(errors)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))

    # -- hooks and calling ---------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Run ``hook(module, args)`` before each ``forward``.

        A non-None return replaces the positional arguments (a single value
        is wrapped in a tuple). With ``with_kwargs=True`` the hook is
        ``hook(module, args, kwargs)`` and may return ``(args, kwargs)``.
        ``prepend=True`` runs it before the hooks already registered.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Identity()
        >>> handle = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        >>> layer(oxmera.ones(2))
        tensor([2., 2.], dtype=float32)
        >>> handle.remove()
        >>> layer(oxmera.ones(2))
        tensor([1., 1.], dtype=float32)
        """
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Run ``hook(module, args, output)`` after each ``forward``.

        A non-None return replaces the output. With ``with_kwargs=True`` the
        hook is ``hook(module, args, kwargs, output)``; ``always_call=True``
        runs it even when ``forward`` raises; ``prepend=True`` runs it before
        the hooks already registered.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
        >>> shapes = {}
        >>> handle = model[0].register_forward_hook(
        ...     lambda m, args, out: shapes.update(linear=out.shape))
        >>> _ = model(oxmera.randn(5, 4))
        >>> shapes
        {'linear': oxmera.Size([5, 3])}
        >>> handle.remove()
        """
        handle = RemovableHandle(self._forward_hooks, extra_dict=[
            self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Run ``hook(module, grad_output)`` when the gradients of the outputs are known.

        ``grad_output`` has one entry per output (``None`` for an output that
        is not a Tensor or needs no gradient); a non-None return (a tuple of
        the same length) replaces it for the rest of the backward pass.
        ``prepend=True`` runs it before the hooks already registered.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Linear(2, 1)
        >>> handle = layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
        >>> layer(oxmera.ones(1, 2)).sum().backward()
        >>> layer.weight.grad
        tensor([[0., 0.]], dtype=float32)
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Run ``hook(module, grad_input, grad_output)`` when the inputs' gradients are known.

        ``grad_input`` has one entry per positional argument of the call
        (``None`` for one that is not a Tensor or needs no gradient) and
        ``grad_output`` one per output; a non-None return (a tuple as long
        as ``grad_input``) replaces the inputs' gradients. Gradients of
        keyword arguments and of parameters are not part of ``grad_input``,
        as in PyTorch. When no input requires grad the hook still runs, with
        ``grad_input`` all None.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Linear(2, 3)
        >>> seen = []
        >>> handle = layer.register_full_backward_hook(
        ...     lambda m, gi, go: seen.append((tuple(gi[0].shape), tuple(go[0].shape))))
        >>> layer(oxmera.ones(4, 2, requires_grad=True)).sum().backward()
        >>> seen
        [((4, 2), (4, 3))]
        """
        if self._non_full_backward_hooks:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """PyTorch's deprecated backward hook: ``hook(module, grad_input, grad_output)``
        on the node of the last op of ``forward``.

        ``grad_input`` are the gradients of that op's inputs (not of the
        module's), which is why PyTorch deprecated it; which op comes last
        may differ from PyTorch's. Use :meth:`register_full_backward_hook`.
        A module cannot have both kinds (a RuntimeError, as in PyTorch).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> layer = nn.Tanh()
        >>> seen = []
        >>> handle = layer.register_backward_hook(lambda m, gi, go: seen.append(len(go)))
        >>> layer(oxmera.ones(2, requires_grad=True)).sum().backward()
        >>> seen
        [1]
        """
        if self._backward_hooks:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        handle = RemovableHandle(self._non_full_backward_hooks)
        self._non_full_backward_hooks[handle.id] = hook
        return handle

    def _attach_non_full_backward_hooks(self, result):
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is not None:
            for hook in self._non_full_backward_hooks.values():
                grad_fn.register_hook(functools.partial(_call_module_hook, hook,
                                                        weakref.ref(self)))

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks or self._non_full_backward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        called = set()
        result = None
        backward_hook = None
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError(f"forward pre-hook must return None or a tuple "
                                               f"of (new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            if self._backward_hooks or self._backward_pre_hooks:
                backward_hook = _BackwardHook(self)
                args = backward_hook.setup_input(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    new = hook(self, args, kwargs, result)
                else:
                    new = hook(self, args, result)
                if new is not None:
                    result = new
            if backward_hook is not None:
                result = backward_hook.setup_output(result)
            if self._non_full_backward_hooks:
                self._attach_non_full_backward_hooks(result)
            return result
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id not in self._forward_hooks_always_called or hook_id in called:
                    continue
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        new = hook(self, args, kwargs, result)
                    else:
                        new = hook(self, args, result)
                    if new is not None:
                        result = new
                except Exception as e:
                    warnings.warn(f"module forward hook with ``always_call=True`` raised an "
                                  f"exception that was silenced as another error was raised "
                                  f"in forward: {e}", stacklevel=2)
            raise

    # -- repr ----------------------------------------------------------------------------

    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's repr parentheses (override in layers).

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Linear(2, 3).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {_addindent(repr(module), 2)}"
                       for name, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"
