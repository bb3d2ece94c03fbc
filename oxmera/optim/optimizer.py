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
import warnings
from collections import defaultdict
from itertools import chain

import numpy as np

from oxmera._core import autograd as _core
from oxmera._core.autograd import Tensor
from oxmera.autograd.grad_mode import enable_grad
from oxmera.ops.creation import from_numpy, tensor

__all__ = ["Optimizer", "required"]



def _check_non_negative(optimizer, *labeled_values):
    """Raise ``ValueError`` at the first ``(label, value)`` that is negative or NaN.

    The one check of the optimizers' non-negative hyper-parameters, with
    PyTorch's wording: ``"SGD: invalid momentum value: -1 (must be >= 0)"``.
    """
    for label, value in labeled_values:
        if not 0.0 <= value:
            raise ValueError(f"{optimizer}: invalid {label}: {value} (must be >= 0)")

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

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        name = type(self).__name__
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
        name = type(self).__name__
        for i, group in enumerate(self.param_groups):
            for j, p in enumerate(group["params"]):
                grad = p.grad
                if grad is not None and grad.shape != p.shape:
                    raise RuntimeError(f"{name}.step(): parameter {j} of group {i} has shape "
                                       f"{p.shape} but its gradient has shape {grad.shape}; "
                                       f"nothing was updated")
        return loss

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

        Everything is checked before anything changes: a state dict that
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
        """
        name = type(self).__name__
        if not isinstance(state_dict, dict) or not {"state", "param_groups"} <= set(state_dict):
            got = (f"a dict with keys {sorted(map(str, state_dict))}"
                   if isinstance(state_dict, dict) else type(state_dict).__name__)
            raise ValueError(f"{name}.load_state_dict(): expected a dict with 'state' and "
                             f"'param_groups', got {got}")
        saved_groups = state_dict["param_groups"]
        saved_state = state_dict["state"]
        if not isinstance(saved_groups, (list, tuple)) or not all(
                isinstance(g, dict) and isinstance(g.get("params"), (list, tuple))
                for g in saved_groups):
            raise ValueError(f"{name}.load_state_dict(): 'param_groups' must be a list of dicts "
                             f"each with a 'params' list")
        if not isinstance(saved_state, dict):
            raise ValueError(f"{name}.load_state_dict(): 'state' must be a dict, got "
                             f"{type(saved_state).__name__}")
        groups = self.param_groups
        if len(groups) != len(saved_groups):
            raise ValueError(f"{name}.load_state_dict(): loaded state dict has a different "
                             f"number of parameter groups ({len(saved_groups)}) than the "
                             f"optimizer ({len(groups)})")
        for i, (group, saved) in enumerate(zip(groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"{name}.load_state_dict(): loaded state dict contains a "
                                 f"parameter group ({i}) that doesn't match the size of the "
                                 f"optimizer's group ({len(saved['params'])} vs "
                                 f"{len(group['params'])} parameters)")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        new_state = defaultdict(dict)
        for key, value in saved_state.items():
            param = id_map.get(key)
            if param is None:
                new_state[key] = copy.deepcopy(value)
                continue
            if not isinstance(value, dict):
                raise ValueError(f"{name}.load_state_dict(): the state of parameter {key} must "
                                 f"be a dict, got {type(value).__name__}")
            new_state[param] = {k: self._cast_state(param, key, k, v) for k, v in value.items()}
        new_groups = []
        for group, saved in zip(groups, saved_groups):
            new_group = copy.deepcopy({k: v for k, v in saved.items() if k != "params"})
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            for k, default in self.defaults.items():
                if default is not required:
                    new_group.setdefault(k, default)
            new_groups.append(new_group)
        self.state = new_state
        self.param_groups = new_groups

    def _cast_state(self, param, index, key, value):
        """A copy of one loaded state value, checked against its parameter."""
        name = type(self).__name__
        if isinstance(value, np.ndarray):
            value = from_numpy(np.array(value))
        if isinstance(value, Tensor):
            if key == "step":
                return tensor(value._data)
            if value.shape != param.shape:
                raise ValueError(f"{name}.load_state_dict(): state '{key}' of parameter {index} "
                                 f"has shape {value.shape}, but the parameter has shape "
                                 f"{param.shape}")
            dtype = param.dtype if param.dtype.kind == "f" else value.dtype
            return from_numpy(np.array(value._data, dtype=dtype))
        if key == "step" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return tensor(float(value), dtype=np.float32)
        return copy.deepcopy(value)


def _no_lock(tensor):
    return None


# oxmera's core makes arrays saved by a live graph read-only to NumPy; these let an
# in-place write through (absent from older cores: nothing to unlock then).
_begin_write = getattr(_core, "_begin_write", _no_lock)
_end_write = getattr(_core, "_end_write", _no_lock)


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
