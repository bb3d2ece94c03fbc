"""The optimizer base class: parameter groups, per-parameter state, state dicts.

``Optimizer`` owns what every update rule shares, in PyTorch's shapes so a
PyTorch user's training loop and checkpoints read the same: ``param_groups``
(a list of dicts, each holding ``'params'`` and that group's
hyper-parameters), ``state`` (a dict from parameter to its per-parameter
state), ``zero_grad``, ``step(closure)`` and ``state_dict`` /
``load_state_dict`` (``'state'`` keyed by parameter index, ``'param_groups'``
holding index lists in place of the parameters).

The update rules live in the subclasses (``sgd``, ``adam``, ``adamw``,
``rmsprop``, ``adagrad``). They do their arithmetic on the parameters'
NumPy arrays in place (two to three times faster than the equivalent oxmera
in-place ops for small tensors, and nothing can be recorded on the tape),
in the parameter's dtype and in the order of operations of PyTorch's
single-tensor implementations, then bump each parameter's version counter
so a backward that saved the old values raises instead of using new ones.
"""
import copy
import math
import warnings
from collections import defaultdict
from itertools import chain

import numpy as np

from oxmera._core import autograd as _core
from oxmera._core.autograd import Tensor
from oxmera.autograd.grad_mode import enable_grad
from oxmera.ops.creation import from_numpy, tensor

__all__ = ["Optimizer", "required"]


def _real(where, label, value):
    """``value`` as a float, after checking it is a real number (not a bool, not a string)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise TypeError(f"{where}: invalid {label}: {value!r} (must be a real number, got "
                        f"{type(value).__name__})")
    try:
        return float(value)
    except OverflowError:             # an int beyond float's range
        return math.inf if value > 0 else -math.inf


#: How the optimizers' messages name their hyper-parameters (PyTorch's wording).
_LABELS = {"lr": "learning rate", "eps": "epsilon value", "initial_lr": "initial_lr value"}


def _label(key):
    return _LABELS.get(key, f"{key} value")


def _check_finite(where, group, *keys):
    """Raise unless each ``group[key]`` is a finite real number (``TypeError`` for a
    non-number, ``ValueError`` for NaN or infinity)."""
    for key in keys:
        value = group[key]
        if not math.isfinite(_real(where, _label(key), value)):
            raise ValueError(f"{where}: invalid {_label(key)}: {value} (must be finite)")


def _check_non_negative(where, group, *keys):
    """Raise unless each ``group[key]`` is a finite real number ``>= 0``.

    The one check of the optimizers' non-negative hyper-parameters, with
    PyTorch's wording: ``"SGD: invalid momentum value: -1 (must be >= 0)"``;
    a NaN or an infinity would write NaN into the parameters, so they are
    refused too.
    """
    _check_finite(where, group, *keys)
    for key in keys:
        if not 0.0 <= group[key]:
            raise ValueError(f"{where}: invalid {_label(key)}: {group[key]} (must be >= 0)")


def _check_flags(where, group, *keys):
    """Raise ``TypeError`` unless each ``group[key]`` is a bool."""
    for key in keys:
        if not isinstance(group[key], (bool, np.bool_)):
            raise TypeError(f"{where}: invalid {key}: {group[key]!r} (must be a bool, got "
                            f"{type(group[key]).__name__})")


def _pair(where, group, key, names, label=None):
    """``group[key]`` as two floats, after checking it is a pair of real numbers
    (``names`` says what the pair holds, ``label(i)`` how a message names item ``i``)."""
    pair = group[key]
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValueError(f"{where}: {key} must be a pair {names}, got {pair!r}")
    label = label or (lambda i: f"{key}[{i}]")
    return tuple(_real(where, label(i), value) for i, value in enumerate(pair))


def _check_betas(where, group):
    """Raise unless ``group['betas']`` is a pair of real numbers in [0, 1) (Adam's)."""
    betas = _pair(where, group, "betas", "(beta1, beta2)",
                  lambda i: f"beta parameter at index {i}")
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"{where}: invalid beta parameter at index {i}: "
                             f"{group['betas'][i]} (must be in [0, 1))")


def _check_at_most(where, group, key, high):
    """Raise unless ``group[key]`` is a finite real number in ``[0, high]``."""
    _check_non_negative(where, group, key)
    if not group[key] <= high:
        raise ValueError(f"{where}: invalid {_label(key)}: {group[key]} (must be in "
                         f"[0, {high}])")


def _check_implementation_flags(where, group):
    """Check PyTorch's implementation flags, which change nothing here.

    ``foreach`` and ``fused`` pick PyTorch's multi-tensor or fused kernels,
    ``capturable`` makes the step CUDA-graph safe and ``differentiable``
    lets autograd through the step: oxmera has one implementation, which
    updates the arrays outside the tape, so the flags are accepted (and kept
    in the groups, as in PyTorch's state dicts) for programs that pass them.
    PyTorch's refusals of contradictory flags are kept.
    """
    for key in ("foreach", "fused"):
        value = group.get(key)
        if value is not None and not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{where}: invalid {key}: {value!r} (must be None or a bool, got "
                            f"{type(value).__name__})")
    _check_flags(where, group, *(key for key in ("capturable", "differentiable")
                                 if key in group))
    if group.get("fused"):
        if group.get("differentiable"):
            raise RuntimeError(f"{where}: `fused` does not support `differentiable`")
        if group.get("foreach"):
            raise RuntimeError(f"{where}: `fused` and `foreach` cannot be `True` together.")


class _RequiredParameter:
    """Marks a hyper-parameter every parameter group must give (no default)."""

    def __repr__(self):
        return "<required parameter>"


#: Default value of a hyper-parameter that has none (PyTorch's ``optim.optimizer.required``).
required = _RequiredParameter()


class Optimizer:
    """Base class of the optimizers: parameter groups, state and state dicts.

    Parameters
    ----------
    params : iterable of Tensor, iterable of (str, Tensor), or iterable of dict
        The tensors to optimize (leaf tensors), or dicts each defining a
        parameter group: ``{'params': [...], 'lr': ...}``; keys a group
        does not give take the optimizer's defaults.
    defaults : dict
        Default hyper-parameters of every group.

    Attributes
    ----------
    param_groups : list of dict
        Each group's ``'params'`` (a list of tensors) and hyper-parameters;
        change ``group['lr']`` to change the learning rate.
    state : dict
        Per-parameter state, keyed by the parameter tensor.
    defaults : dict
        The hyper-parameters groups inherit.

    Notes
    -----
    Subclasses implement ``step``. ``state_dict()`` refers to the live state
    tensors (as in PyTorch): ``copy.deepcopy`` it, or ``oxmera.save`` it,
    for a snapshot.

    PyTorch's implementation flags (``foreach``, ``fused``, ``capturable``,
    ``differentiable``) are taken by each optimizer that PyTorch's takes
    them, checked (bool or None; ``fused`` with ``foreach`` or
    ``differentiable`` is a RuntimeError, as in PyTorch) and kept in the
    groups, and change nothing: oxmera has one implementation, which updates
    the parameters' arrays outside the tape (so ``differentiable=True`` does
    not make the step differentiable).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0., 0.], dtype=float32, requires_grad=True)
    >>> opt.zero_grad()
    >>> w.grad is None
    True
    """

    #: The per-parameter state ``step()`` reads, by key, and what each value must be
    #: (``"step"``: a whole number >= 0; ``"finite"``: a finite tensor of the parameter's
    #: shape; ``"non-negative"``: also >= 0; ``"finite or None"``; ``"scalar"``: a finite
    #: number, kept as a 0-d float32 tensor as PyTorch keeps it); ``load_state_dict``
    #: refuses other keys. None (a subclass that declares nothing): any keys, tensors of
    #: the parameter's shape and a numeric ``'step'``.
    _state_kinds = None
    #: The keys a non-empty per-parameter state must hold (``step()`` reads them).
    _required_state = ()

    def __init__(self, params, defaults):
        name = type(self).__name__
        self._check_param_group(name, defaults)
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError(f"{name}: params should be an iterable of Tensors or dicts, but got "
                            f"a Tensor of shape {params.shape}; pass [tensor]")
        if isinstance(params, (set, frozenset)):
            raise TypeError(f"{name}: optimizer parameters need to be organized in ordered "
                            f"collections, but the ordering of tensors in sets will change "
                            f"between runs; use a list instead")
        if isinstance(params, dict):
            raise TypeError(f"{name}: params should be an iterable of Tensors or dicts, but got "
                            f"a dict; pass [dict] for one parameter group")
        param_groups = list(params)
        if not param_groups:
            raise ValueError(f"{name}: optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"

    # -- parameter groups ------------------------------------------------------------------

    def add_param_group(self, param_group):
        """Add a parameter group (a dict with ``'params'``) to ``param_groups``.

        Use it to train more tensors as training goes on (unfreezing layers,
        growing a model); keys the group does not give take the defaults.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> a = oxmera.zeros(2, requires_grad=True)
        >>> b = oxmera.zeros(3, requires_grad=True)
        >>> opt = SGD([a], lr=0.1)
        >>> opt.add_param_group({'params': [b], 'lr': 0.01})
        >>> [g['lr'] for g in opt.param_groups]
        [0.1, 0.01]
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(f"{name}.add_param_group(): param_group must be a dict, "
                            f"but got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ValueError(f"{name}.add_param_group(): the parameter group has no 'params' "
                             f"entry (keys: {sorted(map(str, param_group))})")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(f"{name}: optimizer parameters need to be organized in ordered "
                            f"collections, but the ordering of tensors in sets will change "
                            f"between runs; use a list instead")
        else:
            params = list(params)
        group = dict(param_group)
        tensors = []
        names = []
        for param in params:
            if isinstance(param, tuple) and len(param) == 2 and isinstance(param[0], str):
                names.append(param[0])
                param = param[1]
            tensors.append(param)
        if names and len(names) != len(tensors):
            raise ValueError(f"{name}: all optimizer params should be with/without names; "
                             f"some param names are missing")
        for i, param in enumerate(tensors):
            if not isinstance(param, Tensor):
                raise TypeError(f"{name}: optimizer can only optimize Tensors, but parameter "
                                f"{i} of the group is a {type(param).__name__}")
            if not (param.is_leaf or param.retains_grad):
                raise ValueError(f"{name}: can't optimize a non-leaf Tensor (parameter {i} of "
                                 f"the group, shape {param.shape}, was computed by "
                                 f"{param.grad_fn.name}); optimize the leaf it came from")
        group["params"] = tensors
        if names:
            group["param_names"] = names
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise ValueError(f"{name}: parameter group didn't specify a value of required "
                                 f"optimization parameter {key}")
            group.setdefault(key, default)
        self._check_param_group(f"{name}.add_param_group()", group)
        seen = set()
        if any(id(p) in seen or seen.add(id(p)) for p in tensors):
            warnings.warn(f"{name}: optimizer contains a parameter group with duplicate "
                          f"parameters", stacklevel=3)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in tensors):
            raise ValueError(f"{name}: some parameters appear in more than one parameter group")
        for g in self.param_groups:
            if ("param_names" in g) != ("param_names" in group):
                raise ValueError(f"{name}: all optimizer param groups should be with/without "
                                 f"names")
        self.param_groups.append(group)
        self._init_group_state(group)

    def _init_group_state(self, group):
        """Hook for optimizers that create state at construction (Adagrad)."""

    def _check_hyper_parameters(self, where, group):
        """Raise ``ValueError`` (``TypeError`` for a wrong type) unless ``group``'s
        hyper-parameters are ones ``step()`` can use; messages start with ``where``.

        The one validation of a subclass's hyper-parameters: the constructor runs it
        on the defaults, ``add_param_group`` and ``load_state_dict`` on each group, so
        the three cannot drift apart. The base class checks nothing.
        """

    def _check_param_group(self, where, group):
        """``_check_hyper_parameters``, plus the keys every optimizer's groups share."""
        if "initial_lr" in group:           # recorded by the learning-rate schedulers
            _check_non_negative(where, group, "initial_lr")
        _check_implementation_flags(where, group)
        self._check_hyper_parameters(where, group)

    # -- gradients and steps ---------------------------------------------------------------

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors.

        Parameters
        ----------
        set_to_none : bool, default True
            Set each ``.grad`` to None (frees the memory; ``step`` skips a
            parameter without gradient) instead of filling it with zeros.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> w = oxmera.ones(2, requires_grad=True)
        >>> opt = SGD([w], lr=0.1)
        >>> w.sum().backward()
        >>> opt.zero_grad(set_to_none=False)
        >>> w.grad
        tensor([0., 0.], dtype=float32)
        """
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                elif grad.requires_grad:
                    grad.requires_grad_(False)
                grad.zero_()

    def step(self, closure=None):
        """Update the parameters once from their ``.grad``.

        Parameters
        ----------
        closure : callable, optional
            Re-evaluates the model and returns the loss (run with grad mode
            on); its value is returned.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> w = oxmera.tensor([3.0], requires_grad=True)
        >>> opt = SGD([w], lr=0.25)
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> opt.step(closure).item()
        9.0
        >>> w.item()
        1.5
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def _begin_step(self, closure):
        """Check the gradients fit their parameters, then run the closure."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        self._check_grad_shapes()
        return loss

    def _check_grad_shapes(self):
        """Raise ``RuntimeError`` if a gradient's shape is not its parameter's."""
        name = type(self).__name__
        for i, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                grad = p.grad
                if grad is not None and grad.shape != p.shape:
                    raise RuntimeError(f"{name}.step(): parameter {j} of group {i} has shape "
                                       f"{p.shape} but its gradient has shape {grad.shape}; "
                                       f"nothing was updated")

    @staticmethod
    def _params_to_update(group):
        """The group's parameters that have a gradient, each writable while the caller
        updates its array; each one's version is bumped after its update."""
        for p in group["params"]:
            if p.grad is None:
                continue
            # A graph that saved the parameter keeps its array read-only to NumPy; the
            # step may still write (the version bump makes that graph's backward raise).
            unlocked = _begin_write(p)
            try:
                yield p
            finally:
                _end_write(unlocked)
            p._bump_version()

    def _updates(self, group, new_state):
        """What every step loop starts with, for each parameter of ``group`` with a gradient:
        ``(array, gradient, state)``, the array writable while the caller updates it.

        On first use the state gets PyTorch's ``'step'`` counter (a 0-d float32 tensor)
        and what ``new_state(array)`` returns (a dict); the gradient is negated for
        ``maximize``. The caller advances ``'step'`` (``_step_count``).
        """
        for p in self._params_to_update(group):
            param = p._data
            state = self.state[p]
            if not state:
                state["step"] = tensor(0.0, dtype=np.float32)
                state.update(new_state(param))
            grad = p.grad._data
            yield param, (-grad if group["maximize"] else grad), state

    # -- state dicts -----------------------------------------------------------------------

    def state_dict(self):
        """The optimizer's state as a dict, in PyTorch's format.

        Returns
        -------
        dict
            ``'state'``: per-parameter state keyed by the parameter's index
            (counting through the groups in order); ``'param_groups'``: each
            group's hyper-parameters, with ``'params'`` the list of its
            parameters' indices. The state tensors are the live ones.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> w = oxmera.ones(2, requires_grad=True)
        >>> opt = SGD([w], lr=0.1, momentum=0.9)
        >>> w.sum().backward(); opt.step()
        >>> sd = opt.state_dict()
        >>> sd['state'][0]['momentum_buffer']
        tensor([1., 1.], dtype=float32)
        >>> sd['param_groups'][0]['params'], sd['param_groups'][0]['lr']
        ([0], 0.1)
        """
        index_of = {}
        groups = []
        for group in self.param_groups:
            packed = {key: value for key, value in group.items() if key != "params"}
            for p in group["params"]:
                index_of.setdefault(id(p), len(index_of))
            packed["params"] = [index_of[id(p)] for p in group["params"]]
            groups.append(packed)
        packed_state = {}
        for param, value in self.state.items():
            key = index_of.get(id(param), param) if isinstance(param, Tensor) else param
            packed_state[key] = dict(value) if isinstance(value, dict) else value
        return {"state": packed_state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()`` (of an optimizer of the same parameter layout).

        Everything is checked before anything changes, as this optimizer's
        constructor checks its arguments: every group's hyper-parameters
        (missing ones take the defaults), and every parameter's state
        (the keys this optimizer's ``step()`` reads, each a finite value of
        the parameter's shape, ``'step'`` a whole number). A state dict that
        does not fit raises ``ValueError`` and leaves this optimizer as it
        was. State tensors are copied (in the parameter's floating dtype),
        so the loaded optimizer shares no memory with ``state_dict``.

        Examples
        --------
        >>> import copy
        >>> import oxmera
        >>> from oxmera.optim import Adam
        >>> w = oxmera.ones(2, requires_grad=True)
        >>> opt = Adam([w], lr=0.1)
        >>> w.sum().backward(); opt.step()
        >>> saved = copy.deepcopy(opt.state_dict())
        >>> opt2 = Adam([w], lr=0.5)
        >>> opt2.load_state_dict(saved)
        >>> opt2.param_groups[0]['lr'], opt2.state[w]['step'].item()
        (0.1, 1.0)
        >>> saved['param_groups'][0]['betas'] = (2, 5)
        >>> opt2.load_state_dict(saved)
        Traceback (most recent call last):
          ...
        ValueError: Adam.load_state_dict(): param_groups[0]: invalid beta parameter at index 0: ...
        """
        name = f"{type(self).__name__}.load_state_dict()"
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            got = (f"a dict with keys {sorted(map(str, state_dict))}"
                   if isinstance(state_dict, dict) else type(state_dict).__name__)
            raise ValueError(f"{name}: expected a dict with 'state' and 'param_groups', got "
                             f"{got}")
        saved_groups = state_dict["param_groups"]
        saved_state = state_dict["state"]
        if not isinstance(saved_groups, (list, tuple)) or not all(
                isinstance(g, dict) and isinstance(g.get("params"), (list, tuple))
                for g in saved_groups):
            raise ValueError(f"{name}: 'param_groups' must be a list of dicts each with a "
                             f"'params' list")
        if not isinstance(saved_state, dict):
            raise ValueError(f"{name}: 'state' must be a dict, got "
                             f"{type(saved_state).__name__}")
        groups = self.param_groups
        if len(groups) != len(saved_groups):
            raise ValueError(f"{name}: loaded state dict has a different number of parameter "
                             f"groups ({len(saved_groups)}) than the optimizer ({len(groups)})")
        for i, (group, saved) in enumerate(zip(groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"{name}: loaded state dict contains a parameter group ({i}) "
                                 f"that doesn't match the size of the optimizer's group "
                                 f"({len(saved['params'])} vs {len(group['params'])} "
                                 f"parameters)")
        param_of = self._saved_index_map(name, saved_groups)
        unknown = [key for key in saved_state if key not in param_of]
        if unknown:
            raise ValueError(f"{name}: 'state' holds the state of parameter(s) "
                             f"{unknown[:5]!r}, which no parameter group lists (the groups "
                             f"list {len(param_of)} parameters: {sorted(param_of)[:10]!r})")
        new_groups = [self._loaded_group(f"{name}: param_groups[{i}]", group, saved)
                      for i, (group, saved) in enumerate(zip(groups, saved_groups))]
        new_state = defaultdict(dict)
        for key, value in saved_state.items():
            if not isinstance(value, dict):
                raise ValueError(f"{name}: the state of parameter {key} must be a dict, got "
                                 f"{type(value).__name__}")
            param = param_of[key]
            new_state[param] = self._loaded_state(name, key, param, value)
        self.state = new_state
        self.param_groups = new_groups

    def _saved_index_map(self, name, saved_groups):
        """Each saved parameter index -> this optimizer's parameter it stands for."""
        param_of = {}
        own = chain.from_iterable(g["params"] for g in self.param_groups)
        saved = chain.from_iterable(g["params"] for g in saved_groups)
        for index, param in zip(saved, own):
            if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
                raise ValueError(f"{name}: the groups' 'params' must list parameter indices "
                                 f"(ints), got {index!r}")
            if param_of.setdefault(index, param) is not param:
                raise ValueError(f"{name}: parameter index {index} appears twice in "
                                 f"'param_groups' for two different parameters")
        return param_of

    def _loaded_group(self, where, group, saved):
        """The group ``saved`` describes, holding ``group``'s parameters, checked."""
        new_group = copy.deepcopy({k: v for k, v in saved.items() if k != "params"})
        new_group["params"] = group["params"]
        if "param_names" in new_group:
            names = new_group["param_names"]
            if not (isinstance(names, (list, tuple)) and len(names) == len(group["params"])
                    and all(isinstance(n, str) for n in names)):
                raise ValueError(f"{where}: 'param_names' must be a list of "
                                 f"{len(group['params'])} strings, got {names!r}")
        elif "param_names" in group:
            new_group["param_names"] = group["param_names"]
        for key, default in self.defaults.items():
            if default is not required:
                new_group.setdefault(key, default)
            elif key not in new_group:
                raise ValueError(f"{where}: the group does not give the required optimization "
                                 f"parameter {key}")
        try:
            self._check_param_group(where, new_group)
        except (TypeError, RuntimeError) as err:     # a state dict that does not fit
            raise ValueError(str(err)) from None
        return new_group

    def _loaded_state(self, name, index, param, saved):
        """A checked copy of the per-parameter state ``saved`` of ``param``."""
        kinds = self._state_kinds
        if kinds is not None and saved:
            unknown = [key for key in saved if key not in kinds]
            missing = [key for key in self._required_state if key not in saved]
            if unknown or missing:
                problem = (f"has key(s) {unknown} that {type(self).__name__} does not use"
                           if unknown else f"lacks {missing}")
                raise ValueError(f"{name}: the state of parameter {index} {problem} (a "
                                 f"{type(self).__name__} state holds {list(kinds)}, of which "
                                 f"{list(self._required_state)} are needed); is it another "
                                 f"optimizer's state dict?")
        loaded = {}
        for key, value in saved.items():
            where = f"{name}: state {key!r} of parameter {index}"
            kind = kinds[key] if kinds is not None else None
            if key == "step" or kind == "step":
                loaded[key] = _loaded_step(where, value)
            elif kind == "scalar":
                loaded[key] = _loaded_scalar(where, value)
            elif kind is None and not _is_array(value):
                loaded[key] = copy.deepcopy(value)       # a custom optimizer's own value
            elif kind == "finite or None" and value is None:
                loaded[key] = None
            else:
                loaded[key] = _loaded_tensor(where, param, kind, value)
        return loaded


def _is_array(value):
    return isinstance(value, (Tensor, np.ndarray)) or (
        hasattr(value, "__array__") and not isinstance(value, (str, bytes, np.generic)))


def _as_array(value):
    """The NumPy array of a Tensor, an ndarray or another array (a torch.Tensor), or None."""
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, np.ndarray):
        return value
    if _is_array(value):
        try:
            return np.asarray(value)
        except Exception:                    # e.g. a torch.Tensor that requires grad
            return None
    return None


def _loaded_step(where, value):
    """A loaded step count as the 0-d float32 tensor the optimizers advance."""
    number = _scalar_value(where, value, "the count of steps taken")
    with np.errstate(all="ignore"):          # an overflow to inf is refused just below
        step = np.float32(number)
    if not (math.isfinite(step) and step >= 0 and step == math.floor(step)):
        raise ValueError(f"{where} is {number!r}; it must be a whole number >= 0 (the count "
                         f"of steps taken) that float32 holds")
    return tensor(step, dtype=np.float32)


def _scalar_value(where, value, what):
    """``value`` (a number or a 0-d real tensor) as a Python float."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, (bool, np.bool_)):
        try:
            return float(value)
        except OverflowError:                # an int beyond float's range
            return math.inf if value > 0 else -math.inf
    array = _as_array(value)
    if array is None or array.shape != () or array.dtype.kind not in "iuf":
        described = (f"a {array.dtype} array of shape {array.shape}" if array is not None
                     else f"a {type(value).__name__}")
        raise ValueError(f"{where} must be a number or a 0-d tensor ({what}), got {described}")
    return float(array[()])


def _loaded_scalar(where, value):
    """A loaded per-parameter scalar (NAdam's mu_product, ASGD's eta) as a 0-d float32
    tensor, PyTorch's dtype for it."""
    number = _scalar_value(where, value, "a finite number")
    with np.errstate(all="ignore"):          # an overflow to inf is refused just below
        scalar = np.float32(number)
    if not math.isfinite(scalar):
        raise ValueError(f"{where} is {number!r}; it must be a finite number that float32 "
                         f"holds")
    return tensor(scalar, dtype=np.float32)


def _loaded_tensor(where, param, kind, value):
    """A checked copy of a loaded state tensor, in the parameter's floating dtype."""
    array = _as_array(value)
    if array is None:
        raise ValueError(f"{where} must be a tensor of the parameter's shape {param.shape}, "
                         f"got a {type(value).__name__}")
    if array.shape != param.shape:
        raise ValueError(f"{where} has shape {array.shape}, but the parameter has shape "
                         f"{param.shape}")
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{where} has dtype {array.dtype}; it must be a real number tensor")
    dtype = param.dtype if np.dtype(param.dtype).kind == "f" else array.dtype
    with np.errstate(all="ignore"):          # an overflow to inf is refused just below
        copied = np.array(array, dtype=dtype)
    if kind is not None:
        if not np.isfinite(copied).all():
            cause = ("holds NaN or infinite values" if not np.isfinite(array).all()
                     else f"holds values beyond the range of the parameter's {dtype}")
            raise ValueError(f"{where} {cause}; step() would write them into the parameter")
        if kind == "non-negative" and (copied < 0).any():
            raise ValueError(f"{where} holds negative values; it is a sum of squares, whose "
                             f"square root step() takes")
    return from_numpy(copied)


def _no_lock(tensor):
    return None


# oxmera's core makes arrays saved by a live graph read-only to NumPy; these let an
# in-place write through (absent from older cores: nothing to unlock then).
_begin_write = getattr(_core, "_begin_write", _no_lock)
_end_write = getattr(_core, "_end_write", _no_lock)


def _zero_buffers(array, *names):
    """``{name: zeros like array}`` for each name: the buffers a step keeps per parameter."""
    return {name: from_numpy(np.zeros_like(array)) for name in names}


def _step_count(state):
    """Advance the ``'step'`` counter (a 0-d float32 tensor, as in PyTorch); return it."""
    step = state["step"]._data
    step += 1
    return float(step)


def _lerp_(start, end, weight):
    """``start.lerp_(end, weight)`` with PyTorch's formula: exact at weight 0 and 1."""
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        np.subtract(end, (end - start) * (1 - weight), out=start, casting="same_kind")
    return start
