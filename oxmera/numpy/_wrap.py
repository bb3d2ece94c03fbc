"""How a NumPy function becomes an ``oxmera.numpy`` function: one wrapper, generated per name.

What this module owns
    :func:`wrap` turns ``numpy.NAME`` into ``oxmera.numpy.NAME``. The wrapper
    refuses ``out=``, stacks nested lists that hold tensors (what
    ``np.array([t1, t2])`` cannot do: NumPy's protocols never see tensors
    inside a list), then

    - with a tensor among the arguments, runs the translator NumPy itself
      would run through ``Tensor.__array_function__`` / ``__array_ufunc__``
      (``oxmera/ops/interop.py``): one table of NumPy-name -> oxmera-op
      mappings serves both ``np.sum(t)`` and ``onp.sum(t)``;
    - with no tensor among them, runs NumPy (NumPy's values and dtypes
      exactly) and returns its arrays as tensors: nothing can need a gradient.

    A function no translator covers runs NumPy on the values when no input
    requires grad, and raises ``TypeError`` naming it when one does: the
    gradient is never dropped silently.

What it leaves to others
    The translators live in ``oxmera.ops.interop`` (and the composed ones in
    ``oxmera.numpy._composed``); the ops themselves in ``oxmera.ops``.
"""
import functools

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import interop as _interop

Tensor = _core.Tensor

#: NumPy functions whose first argument is a sequence of arrays (joined, not
#: one array): a list of tensors there is left as a list.
SEQUENCE_FIRST = {"concatenate", "concat", "stack", "vstack", "hstack", "dstack", "row_stack",
                  "column_stack", "lexsort", "linalg.multi_dot"}

#: NumPy functions whose lists are structure (block's nesting, select's
#: list of conditions): their arguments are passed on unchanged.
ARGUMENTS_AS_GIVEN = {"block", "choose", "select", "piecewise"}


def contains_tensor(value):
    """Whether ``value`` is a tensor or a (nested) list/tuple/dict holding one."""
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(contains_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(contains_tensor(v) for v in value.values())
    return False


def _requires_grad(value):
    if isinstance(value, Tensor):
        return value.requires_grad
    if isinstance(value, (list, tuple)):
        return any(_requires_grad(v) for v in value)
    if isinstance(value, dict):
        return any(_requires_grad(v) for v in value.values())
    return False


def needs_gradient(args, kwargs):
    """Whether a result of these arguments would be recorded (grad mode on, an input needs it)."""
    return _core.is_grad_enabled() and (_requires_grad(args) or _requires_grad(kwargs))


def _stacked(value):
    """A list/tuple holding tensors, as one tensor (``onp.array``); a list of floats as an
    array (NumPy's float64: oxmera would read it as float32); anything else as it is."""
    if isinstance(value, (list, tuple)):
        if contains_tensor(value):
            from oxmera.numpy._construct import array
            return array(value)
        try:
            as_array = np.asarray(value)
        except ValueError:          # ragged: not array data
            return value
        if as_array.dtype.kind == "f":
            return as_array
    return value


def prepare(name, args, kwargs):
    """The arguments with nested lists of tensors stacked into tensors (``out=`` refused)."""
    out = kwargs.pop("out", None)
    if out is not None and not (isinstance(out, tuple) and all(o is None for o in out)):
        raise TypeError(f"oxmera.numpy.{name}: out= is not supported (oxmera.numpy functions "
                        f"return new tensors and never write into one); use the returned tensor")
    if name in ARGUMENTS_AS_GIVEN:
        return tuple(args), kwargs
    if name in SEQUENCE_FIRST and args and isinstance(args[0], Tensor):
        # NumPy takes one array as the sequence of its sub-arrays along axis 0
        # (np.vstack(a) joins a's rows); the protocol cannot see that case.
        if args[0].ndim == 0:
            raise ValueError(f"oxmera.numpy.{name}: need a sequence of arrays, got a 0-d tensor")
        args = (args[0].unbind(0),) + tuple(args[1:])
    if name in SEQUENCE_FIRST and args and isinstance(args[0], (list, tuple)):
        args = ((type(args[0])(_stacked(a) for a in args[0]),)
                + tuple(_stacked(a) for a in args[1:]))
    else:
        args = tuple(_stacked(a) for a in args)
    kwargs = {k: _stacked(v) for k, v in kwargs.items()}
    return args, kwargs


def as_tensors(result):
    """NumPy's result with its arrays (and NumPy scalars) as tensors; Python values as they are."""
    if isinstance(result, Tensor):
        return result
    if isinstance(result, (np.ndarray, np.generic)) and not isinstance(result, np.str_):
        array = np.asarray(result)
        if array.dtype.kind not in "biufc":
            return result       # text, dates, objects
        # A read-only result (a broadcast view) is copied: tensors are writable.
        return _core._wrap(array if array.flags.writeable else array.copy())
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*(as_tensors(r) for r in result))
    if isinstance(result, (tuple, list)):
        return type(result)(as_tensors(r) for r in result)
    return result


def values(value):
    """``value`` with its tensors as arrays, for NumPy (callers make sure no gradient is lost)."""
    if isinstance(value, Tensor):
        return value.detach()._data
    if isinstance(value, (list, tuple)):
        return type(value)(values(v) for v in value)
    if isinstance(value, dict):
        return {k: values(v) for k, v in value.items()}
    return value


#: NumPy functions whose results are integers, bools or metadata: no gradient
#: can be lost, so NumPy answers them from the values even for inputs that
#: require grad.
VALUES_ONLY = {"argpartition", "common_type", "diag_indices_from", "digitize", "einsum_path",
               "iscomplex", "isfortran", "isin", "isneginf", "isposinf", "isreal",
               "tril_indices_from", "triu_indices_from", "nanargmax", "nanargmin", "signbit",
               "isnat", "lexsort", "ravel_multi_index", "unravel_index", "iscomplexobj",
               "isrealobj", "array_equal", "array_equiv"}


def no_gradient_error(name, why=None):
    return TypeError(f"oxmera.numpy.{name} has no gradient rule{f' ({why})' if why else ''}: "
                     f"it cannot take inputs that require grad. Compute it on t.detach() (no "
                     f"gradient), or compose it from oxmera.numpy functions that have one")


def _translator(func):
    """The function oxmera runs for ``func`` on tensors, or None if oxmera has none."""
    if isinstance(func, np.ufunc):
        return functools.partial(_interop._array_ufunc, None, func, "__call__")
    table = _interop._TRANSLATORS.get(func) or _interop._METADATA.get(func)
    if table is not None:
        return table
    try:
        call = _interop._by_name(func, _interop._numpy_name(func))
    except TypeError:
        return None
    return call


def supported(func):
    """Whether oxmera runs ``func`` on tensors with its own ops (so gradients flow)."""
    if isinstance(func, np.ufunc):
        try:
            _interop._ufunc_op(func, func.__name__)
        except TypeError:
            return False
        return True
    return _translator(func) is not None


def call(name, func, args, kwargs):
    """``numpy.NAME(*args, **kwargs)`` on tensors: the body of every generated wrapper."""
    args, kwargs = prepare(name, args, kwargs)
    if not (contains_tensor(args) or contains_tensor(kwargs)):
        return as_tensors(func(*args, **kwargs))
    if name in VALUES_ONLY:
        return as_tensors(func(*values(args), **values(kwargs)))
    if supported(func):
        return as_tensors(_translator(func)(*args, **kwargs))
    if needs_gradient(args, kwargs):
        raise no_gradient_error(name, "oxmera has no op for it")
    return as_tensors(func(*values(args), **values(kwargs)))


def wrap(name, func):
    """``oxmera.numpy.NAME``: ``numpy.NAME`` over oxmera tensors (see the module docstring)."""
    def wrapper(*args, **kwargs):
        return call(name, func, args, kwargs)
    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__module__ = "oxmera.numpy"
    wrapper.__wrapped__ = func
    return wrapper


def wrap_submodule(sub, names, module):
    """The functions of ``oxmera.numpy.SUB`` (``linalg``, ``fft``): ``numpy.SUB.NAME`` for
    each of ``names``, wrapped as :func:`wrap` does, named as ``module``'s, documented."""
    from oxmera.numpy._examples import example_section
    namespace = {}
    for name in names:
        function = wrap(f"{sub}.{name}", getattr(getattr(np, sub), name))
        function.__name__ = function.__qualname__ = name
        function.__module__ = module
        function.__doc__ = (f"NumPy's ``numpy.{sub}.{name}`` on oxmera tensors (differentiable "
                            f"where oxmera.{sub} has the op).\n\n"
                            f"{example_section(f'{sub}.{name}')}")
        namespace[name] = function
    return namespace
