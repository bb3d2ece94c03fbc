"""``oxmera.nn.utils.stateless.functional_call``: call a module with other tensors in
place of its parameters and buffers (PyTorch's, deprecated there in favour of
``torch.func.functional_call``, which it equals)."""
import warnings

from oxmera._core import autograd as _core

__all__ = ["functional_call"]

Tensor = _core.Tensor
_MISSING = object()


def _owner(module, name):
    path, _, attr = name.rpartition(".")
    return module.get_submodule(path), attr


def _swap(module, name, value):
    """Put ``value`` at ``name``; return what was there (``_MISSING`` if nothing)."""
    owner, attr = _owner(module, name)
    if attr in owner._parameters:
        old, owner._parameters[attr] = owner._parameters[attr], value
    elif attr in owner._buffers:
        old, owner._buffers[attr] = owner._buffers[attr], value
    else:
        old = owner.__dict__.get(attr, _MISSING)
        if value is _MISSING:
            owner.__dict__.pop(attr, None)
        else:
            object.__setattr__(owner, attr, value)
    return old


def _untied(module, given):
    """``given`` plus, for each tensor registered under several names (tied weights),
    the names it does not list, with the value given for that tensor."""
    names_of = {}
    for name, tensor in [*module.named_parameters(remove_duplicate=False),
                         *module.named_buffers(remove_duplicate=False)]:
        names_of.setdefault(id(tensor), (tensor, set()))[1].add(name)
    out = dict(given)
    for _, names in names_of.values():
        if len(names) < 2:
            continue
        listed = [n for n in names if n in given]
        if not listed:
            continue
        if len({id(given[n]) for n in listed}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
        for name in names:
            out.setdefault(name, given[listed[0]])
    return out


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the tensors of ``parameters_and_buffers`` (by
    dotted name) standing for its parameters and buffers during the call.

    The module is restored afterwards, even if the call raises. Gradients
    flow to the given tensors (e.g. for meta-learning). ``tie_weights``:
    a tensor registered under several names is replaced under all of them.
    ``strict``: the names must be exactly the module's (a RuntimeError
    listing the missing and unexpected ones otherwise). A FutureWarning
    says the function is deprecated, as in PyTorch.

    Examples
    --------
    >>> import warnings, oxmera
    >>> from oxmera import nn
    >>> from oxmera.nn.utils.stateless import functional_call
    >>> layer = nn.Linear(2, 1)
    >>> params = {"weight": oxmera.ones(1, 2), "bias": oxmera.zeros(1)}
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     functional_call(layer, params, (oxmera.tensor([[1.0, 2.0]]),))
    tensor([[3.]], dtype=float32)
    """
    warnings.warn("`oxmera.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    if isinstance(parameters_and_buffers, (tuple, list)):
        merged = {}
        for d in parameters_and_buffers:
            repeated = set(merged) & set(d)
            if repeated:
                raise ValueError(f"{sorted(repeated)} appeared in multiple dictionaries; "
                                 f"behavior of functional call is ambiguous")
            merged.update(d)
        parameters_and_buffers = merged
    given = _untied(module, parameters_and_buffers) if tie_weights else dict(
        parameters_and_buffers)
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(valid - set(given)), sorted(set(given) - valid)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(errors)))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    originals = {}
    try:
        for name, value in given.items():
            originals[name] = _swap(module, name, value)
        return module(*args, **(kwargs or {}))
    finally:
        # Restore in reverse; a tensor the call replaced in the module goes back to
        # the caller's dict, as in PyTorch.
        for name in reversed(list(originals)):
            now = _swap(module, name, originals[name])
            if name in parameters_and_buffers and now is not _MISSING:
                parameters_and_buffers[name] = now
