"""In-place ops: ``add_ sub_ mul_ div_ pow_ clamp_ zero_ fill_ copy_``, ``+=`` and
friends, ``t[index] = value``, and the generated family (``exp_``, ``sigmoid_``,
``addcmul_``...: ``add_inplace_methods``).

How an in-place op stays differentiable: while autograd records, the op
computes its result out of place (an ordinary recorded op), writes it into
the tensor's memory and gives the tensor that result's place in the graph
(``Tensor._set_history``). When the tensor is a view, the write changes its
base too, so the base gets a new node as well (``copy_slices``, PyTorch's
CopySlices): the gradient of the new base flows to the old base outside the
view's region and through the view ops into the written values. Each write
bumps the version counter shared by a tensor and its views, so a backward
that needs the old values raises instead of using the new ones.

When nothing records (grad mode off, or no tensor involved requires grad)
the arithmetic ops write with NumPy's ``out=`` directly: no copy.

Every other in-place method is generated from its out-of-place function by
``add_inplace_methods`` (one mechanism, the same rules): this module
calls it for the elementwise family; another module can call it for more.

What this module leaves to others: the version check (the core, at
backward time), the ops computing the results (``elementwise``, ``index``).
"""
import inspect

import numpy as np

from oxmera._core import _kernels
from oxmera._core import autograd as _core
from oxmera.extend import op
from oxmera.ops import (_registry, blas, elementwise, index, pointwise, reduce, scatter,
                        shape, special)
from oxmera.ops.index import getitem, index_error, normalize_index

__all__ = ["setitem"]

Tensor = _core.Tensor
_apply = _core.apply_op


def _requires_grad(value):
    return isinstance(value, Tensor) and value.requires_grad


def _arrays(value):
    return value._data if isinstance(value, Tensor) else value


def _check_writable(name, self, recording):
    """Errors that must come before anything is computed or written."""
    if not isinstance(self, Tensor):
        raise TypeError(f"{name}(): expected a Tensor to modify, got {type(self).__name__}")
    if not recording:
        return
    if self.requires_grad and self.is_leaf:
        raise RuntimeError(
            f"{name}(): a leaf tensor that requires grad (shape {self.shape}) is being used in "
            f"an in-place operation; do it under `with oxmera.no_grad():`, or use the "
            f"out-of-place op")
    view = self._view_of
    if view is not None:
        base, chain = view
        if base is None:
            raise RuntimeError(
                f"{name}(): this tensor is one of several views returned by "
                f"{chain[0][0].name}() and cannot be modified in place while autograd records "
                f"(its base's history could not be rewritten); clone() it first")
        if base.requires_grad and base.is_leaf:
            raise RuntimeError(
                f"{name}(): a view of a leaf tensor that requires grad (shape {base.shape}) is "
                f"being used in an in-place operation; do it under `with oxmera.no_grad():`")


def _recording(self, *others):
    return _core.is_grad_enabled() and (self.requires_grad or any(map(_requires_grad, others)))


def _fit(name, self, out):
    """``out`` in ``self``'s shape and dtype, or the error PyTorch gives."""
    if out.shape != self.shape:
        raise RuntimeError(f"{name}(): output with shape {self.shape} doesn't match the "
                           f"broadcast shape {out.shape}")
    if out.dtype != self.dtype:
        if not np.can_cast(out.dtype, self.dtype, "same_kind"):
            raise RuntimeError(f"{name}(): result type {out.dtype} can't be cast to the "
                               f"desired output type {self.dtype}")
        out = out.to(self.dtype)
    return out


def _write(name, self, values):
    unlocked = _core._begin_write(self)    # saved arrays are read-only to NumPy, not to us
    try:
        np.copyto(self._data, values, casting="unsafe")
    except ValueError as err:
        raise RuntimeError(f"{name}(): cannot write into this tensor of shape {self.shape}: "
                           f"{err} (a broadcast/expanded view is read-only; clone() it)") from None
    finally:
        _core._end_write(unlocked)
    self._bump_version()


def _commit(name, self, out):
    """Write the recorded result ``out`` into ``self`` and give ``self`` its history."""
    out = _fit(name, self, out)
    _write(name, self, out._data)
    if out.grad_fn is None:
        return self
    view = self._view_of
    if view is None:
        self._set_history(out)
        return self
    base, chain = view
    base._set_history(copy_slices(base, out, chain))
    # The view is now a view of the new base.
    replayed = base
    for step_op, args, kwargs in chain:
        replayed = _apply(step_op, (replayed,) + args, kwargs)
    self._set_history(replayed)
    return self


def _inplace(name, self, compute, others=(), reads_self=True):
    """Run ``compute(source)`` and make its result this tensor's new value.

    ``reads_self``: the computation's VJP reads ``self``'s values, so while
    recording it gets a copy (the write would otherwise invalidate them).
    """
    recording = _recording(self, *others) if isinstance(self, Tensor) else False
    _check_writable(name, self, recording)
    if not recording:
        with _core_no_grad():
            out = compute(self)
        out = _fit(name, self, out)
        _write(name, self, out._data)
        return self
    source = self.clone() if reads_self else self
    return _commit(name, self, compute(source))


class _core_no_grad:
    """Grad mode off for one computation (no import of oxmera.autograd here)."""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = _core.is_grad_enabled()
        _core._set_grad_enabled(False)

    def __exit__(self, *exc):
        _core._set_grad_enabled(self.previous)


# -- arithmetic: NumPy writes in place when nothing records ---------------------------

def _ufunc_inplace(name, ufunc, self, other, fallback):
    if isinstance(self, Tensor) and not _recording(self, other):
        return _update(name, ufunc, self, other)
    return _inplace(name, self, fallback, (other,), reads_self=name in ("mul_", "div_"))


def _update(name, ufunc, self, other, alpha=None):
    """``self = ufunc(self, other * alpha)`` written by NumPy into ``self``'s array, for a
    Tensor ``self`` when nothing records (the caller checked both)."""
    unlocked = _core._begin_write(self)
    try:
        if alpha is None:
            ufunc(self._data, _arrays(other), out=self._data, casting="same_kind")
        else:
            scaled_into(ufunc, self._data, _arrays(other), alpha)
    except TypeError as err:   # numpy.UFuncTypeError: a float result into an int tensor
        raise RuntimeError(f"{name}(): result type can't be cast to the desired output type "
                           f"{self.dtype}: {err}") from None
    except ValueError as err:
        other_shape = np.shape(_arrays(other))
        try:
            shape = np.broadcast_shapes(self.shape, other_shape)
        except ValueError:
            raise RuntimeError(f"{name}(): the operand of shape {other_shape} does not "
                               f"broadcast with the tensor's shape {self.shape}") from None
        if shape != self.shape:
            raise RuntimeError(f"{name}(): output with shape {self.shape} doesn't match the "
                               f"broadcast shape {shape}") from None
        raise RuntimeError(f"{name}(): cannot update this tensor of shape {self.shape}: "
                           f"{err} (a broadcast/expanded view is read-only; clone() "
                           f"it)") from None
    finally:
        _core._end_write(unlocked)
    self._bump_version()
    return self


# An optimizer's ``p.add_(g, alpha=-lr)``: ``g * alpha`` as one temporary of
# the parameter's size costs a fresh allocation (page faults as dear as the
# arithmetic, measured 110 us against 61 us on a 784x256 float32 weight). For
# float32 and float64, a compiled kernel does the same two roundings (the
# product, then the sum) in one pass (37 us there, the 13 chunks below 74 us);
# other dtypes go in chunks through a small scratch that stays in cache.
_CHUNK = 16384


def scaled_into(ufunc, target, value, alpha):
    """``target = ufunc(target, value * alpha)`` in ``target``'s memory, for ``ufunc``
    ``np.add`` or ``np.subtract``, an array ``target``, and ``value`` an array or a
    number: NumPy's two roundings (the product in ``value``'s dtype, then the sum),
    without a temporary of ``target``'s size where the kernel or the chunks take it.
    (An optimizer's update: ``Tensor.add_/sub_`` with ``alpha``, ``optim.SGD``.)

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera.ops.inplace import scaled_into
    >>> p = np.ones(3, np.float32)
    >>> scaled_into(np.subtract, p, np.arange(3, dtype=np.float32), 0.5)
    >>> p
    array([1. , 0.5, 0. ], dtype=float32)
    """
    if _kernels.scaled_update(target, value, alpha, ufunc is np.subtract):
        return      # (the kernel checks what it takes: one call on an optimizer's hot path)
    if _in_chunks(target, value):
        _scaled_in_chunks(ufunc, target, value, alpha)
    else:
        ufunc(target, _times(value, alpha), out=target, casting="same_kind")


def _in_chunks(target, value):
    return (isinstance(value, np.ndarray) and target.size > _CHUNK
            and value.shape == target.shape and value.dtype == target.dtype
            and target.dtype.kind in "fc" and target.flags.c_contiguous
            and value.flags.c_contiguous and not np.may_share_memory(target, value))


def _scaled_in_chunks(ufunc, target, value, alpha):
    flat_target, flat_value = target.reshape(-1), value.reshape(-1)
    scratch = np.empty(_CHUNK, target.dtype)
    for start in range(0, flat_target.size, _CHUNK):
        stop = min(start + _CHUNK, flat_target.size)
        part = scratch[:stop - start]
        np.multiply(flat_value[start:stop], alpha, out=part, dtype=target.dtype)
        ufunc(flat_target[start:stop], part, out=flat_target[start:stop])


def _times(other, alpha):
    # ``other * alpha`` as an array of other's dtype (a Python number stays a number)
    if isinstance(other, (Tensor, np.ndarray)):
        value = _arrays(other)
        return np.multiply(value, alpha, dtype=value.dtype if value.dtype.kind == "f" else None)
    return other * alpha


def add_(self, other, *, alpha=1):
    """In-place :func:`oxmera.add`: ``self += alpha * other``; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> x.add_(1)
    tensor([2., 3.], dtype=float32)
    """
    if alpha != 1:
        # an optimizer's update (p.add_(g, alpha=-lr)): one compiled call, when it applies
        if _core.write_unrecorded(self, other, _kernels.scaled_update, alpha, False):
            return self
        if isinstance(self, Tensor) and not _recording(self, other):
            # scale the operand, then add in place
            return _update("add_", np.add, self, other, alpha)
        return _inplace("add_", self, lambda s: elementwise.add(s, other, alpha=alpha), (other,),
                        reads_self=False)
    return _ufunc_inplace("add_", np.add, self, other, lambda s: elementwise.add(s, other))


def sub_(self, other, *, alpha=1):
    """In-place :func:`oxmera.sub`: ``self -= alpha * other``; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> x.sub_(oxmera.tensor([1.0, 1.0]), alpha=2)
    tensor([-1.,  0.], dtype=float32)
    """
    if alpha != 1:
        if _core.write_unrecorded(self, other, _kernels.scaled_update, alpha, True):
            return self     # (as in add_)
        if isinstance(self, Tensor) and not _recording(self, other):
            return _update("sub_", np.subtract, self, other, alpha)
        return _inplace("sub_", self, lambda s: elementwise.sub(s, other, alpha=alpha), (other,),
                        reads_self=False)
    return _ufunc_inplace("sub_", np.subtract, self, other, lambda s: elementwise.sub(s, other))


def mul_(self, other):
    """In-place :func:`oxmera.mul`; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> x.mul_(3)
    tensor([3., 6.], dtype=float32)
    """
    return _ufunc_inplace("mul_", np.multiply, self, other, lambda s: elementwise.mul(s, other))


def div_(self, other, *, rounding_mode=None):
    """In-place :func:`oxmera.div` (with its ``rounding_mode``); returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> x.div_(2)
    tensor([0.5, 1. ], dtype=float32)
    >>> oxmera.tensor([-7, 7]).div_(2, rounding_mode="trunc")
    tensor([-3,  3], dtype=int64)
    """
    if rounding_mode is not None:
        return _inplace("div_", self,
                        lambda s: elementwise.div(s, other, rounding_mode=rounding_mode),
                        (other,), reads_self=False)
    return _ufunc_inplace("div_", np.true_divide, self, other,
                          lambda s: elementwise.div(s, other))


def pow_(self, exponent):
    """In-place :func:`oxmera.pow`; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([1.0, 2.0])
    >>> x.pow_(2)
    tensor([1., 4.], dtype=float32)
    """
    return _inplace("pow_", self, lambda s: elementwise.pow(s, exponent), (exponent,))


def floor_divide_(self, other):
    """In-place ``floor_divide``; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([7.0, -7.0])
    >>> x.floor_divide_(2)
    tensor([ 3., -4.], dtype=float32)
    """
    return _inplace("floor_divide_", self, lambda s: s // other, (other,))


def remainder_(self, other):
    """In-place ``remainder``; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([7.0, -7.0])
    >>> x.remainder_(3)
    tensor([1., 2.], dtype=float32)
    """
    return _inplace("remainder_", self, lambda s: s % other, (other,))


def clamp_(self, min=None, max=None):
    """In-place ``clamp``: limit the values to ``[min, max]``; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([-2.0, 0.5, 3.0])
    >>> x.clamp_(-1, 1)
    tensor([-1. ,  0.5,  1. ], dtype=float32)
    """
    return _inplace("clamp_", self, lambda s: s.clamp(min, max), (min, max))


def zero_(self):
    """Fill with zeros in place; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 2.0]).zero_()
    tensor([0., 0.], dtype=float32)
    """
    return fill_(self, 0)


def fill_(self, value):
    """Fill with ``value`` (a number or a one-element tensor) in place; returns ``self``.

    A tensor ``value`` that requires grad receives the sum of the gradient.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.tensor([1.0, 2.0]).fill_(7)
    tensor([7., 7.], dtype=float32)
    """
    if isinstance(value, Tensor) and value.numel() != 1:
        raise RuntimeError(f"fill_(): only supports a 0-dimension value tensor, but got one "
                           f"with shape {value.shape}")
    if isinstance(self, Tensor) and not _recording(self, value):
        _check_writable("fill_", self, False)
        if isinstance(value, Tensor):
            value = value._data.reshape(())
        _write("fill_", self, value)
        return self

    def compute(source):
        fill = value.reshape(()) if isinstance(value, Tensor) else value
        return _overwrite(source, fill)
    return _inplace("fill_", self, compute, (value,), reads_self=False)


def _overwrite(source, value):
    # ``value`` broadcast to ``source``'s shape, as a recorded op connected to
    # ``source`` (gradient zero: its old values are gone) and to ``value``.
    return elementwise.where(Tensor(np.ones(source.shape, dtype=bool)), value, source)


def copy_(self, src):
    """Copy ``src`` (broadcast to this shape) into this tensor; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(2, 2)
    >>> x.copy_(oxmera.tensor([1.0, 2.0]))
    tensor([[1., 2.],
            [1., 2.]], dtype=float32)
    """
    if not isinstance(self, Tensor):
        raise TypeError(f"copy_(): expected a Tensor to modify, got {type(self).__name__}")
    shape = np.shape(_arrays(src))
    try:
        np.broadcast_shapes(shape, self.shape)
        if np.broadcast_shapes(shape, self.shape) != self.shape:
            raise ValueError
    except ValueError:
        raise RuntimeError(f"copy_(): the source of shape {shape} cannot be broadcast to the "
                           f"destination's shape {self.shape}") from None

    def compute(source):
        return _overwrite(source, src if isinstance(src, Tensor) else Tensor(_core.as_array(src)))
    if not _recording(self, src):
        _check_writable("copy_", self, False)
        _write("copy_", self, np.broadcast_to(_arrays(src), self.shape))
        return self
    return _inplace("copy_", self, compute, (src,), reads_self=False)


# -- indexing assignment -------------------------------------------------------------------

@op(inputs=2, save=())
def index_put(input, values, index):
    """``input`` with ``input[index] = values`` applied, out of place.

    What ``t[index] = values`` records while autograd is on; differentiable
    with respect to both (zero gradient for ``input`` where overwritten).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.inplace import index_put
    >>> index_put(oxmera.zeros(3), oxmera.tensor(5.0), (1,))
    tensor([0., 5., 0.], dtype=float32)
    """
    idx, _ = normalize_index(index)
    out = input.copy()
    try:
        out[idx] = values
    except IndexError as err:
        raise index_error("index_put", err, idx, input.shape) from None
    return out


@index_put.vjp
def _(ctx, grad, input, values, index):
    grad_input = grad_values = None
    if ctx.needs_input_grad[0]:
        keep = np.ones(grad.shape, dtype=bool)
        keep[normalize_index(index)[0]] = False
        grad_input = elementwise.where(Tensor(keep), grad, 0.0)
    if ctx.needs_input_grad[1]:
        grad_values = getitem(grad, index)
        shape = ctx.input_shape(1)
        if grad_values.ndim < len(shape):
            # NumPy assignment drops a value's leading 1-dims; restore them
            # (the engine sums any broadcasting back).
            grad_values = grad_values.reshape((1,) * (len(shape) - grad_values.ndim)
                                              + tuple(grad_values.shape))
    return grad_input, grad_values


def setitem(self, index, value):
    """``self[index] = value``: NumPy assignment rules, differentiable.

    The gradient flows into ``value`` (summed where it was broadcast) and
    into the untouched part of ``self``'s previous value; it is zero where
    ``self`` was overwritten. Bumps ``self``'s version.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(3)
    >>> v = oxmera.tensor(2.0, requires_grad=True)
    >>> x[1:] = v
    >>> x.sum().backward()
    >>> v.grad
    tensor(2., dtype=float32)
    """
    if not isinstance(self, Tensor):
        raise TypeError(f"setitem(): expected a Tensor to modify, got {type(self).__name__}")
    recording = _recording(self, value)
    _check_writable("setitem", self, recording)
    if not recording:
        idx, _ = normalize_index(index)
        unlocked = _core._begin_write(self)
        try:
            self._data[idx] = _arrays(value)
        except IndexError as err:
            raise index_error("setitem", err, idx, self.shape) from None
        except ValueError as err:
            raise RuntimeError(f"setitem: cannot assign a value of shape "
                               f"{np.shape(_arrays(value))} to the indexed part of a tensor of "
                               f"shape {self.shape}: {err}") from None
        finally:
            _core._end_write(unlocked)
        self._bump_version()
        return
    try:
        out = index_put(self, value, index)
    except ValueError as err:
        raise RuntimeError(f"setitem: cannot assign a value of shape {np.shape(_arrays(value))} "
                           f"to the indexed part of a tensor of shape {self.shape}: "
                           f"{str(err).split(': ', 1)[-1]}") from None
    _commit("setitem", self, out)


@op(inputs=2, save=())
def copy_slices(base, values, chain):
    """The base of a view after an in-place write through the view (internal).

    The values are already in ``base``'s memory when this is recorded; the
    node sends the gradient of the new base to the old base outside the
    view's region and, through the view ops in ``chain``, to ``values``.

    Examples
    --------
    >>> import oxmera
    >>> y = oxmera.zeros(4) * oxmera.tensor(1.0, requires_grad=True)
    >>> y[1:3].add_(5)
    tensor([5., 5.], dtype=float32, grad_fn=<IndexBackward>)
    >>> y.grad_fn.name()
    'CopySlicesBackward'
    """
    return base


def _region(shape, chain):
    # Where the view lies in its base: replay the view ops on a mask.
    mask = np.zeros(shape, dtype=bool)
    view = mask
    for step_op, args, kwargs in chain:
        view = step_op.forward(view, *args, **(kwargs or {}))
    view[...] = True
    return mask


@copy_slices.vjp
def _(ctx, grad, base, values, chain):
    grad_base = grad_values = None
    if ctx.needs_input_grad[0]:
        grad_base = elementwise.where(Tensor(_region(grad.shape, chain)), 0.0, grad)
    if ctx.needs_input_grad[1]:
        grad_values = grad
        for step_op, args, kwargs in chain:
            grad_values = _apply(step_op, (grad_values,) + args, kwargs)
    return grad_base, grad_values


# -- the generated family ----------------------------------------------------------------------

def add_inplace_methods(functions, examples=None):
    """Give ``Tensor`` an in-place method ``<name>_`` for each out-of-place function.

    ``functions`` maps a name to the function computing the new value out of
    place, called as ``function(self, *args, **kwargs)`` with the method's
    arguments (an op's public function, or a composite). The method follows
    the rules of every in-place op here: the result must fit ``self``'s shape
    and be castable to its dtype (else RuntimeError, nothing written); a leaf
    that requires grad (or a view of one) is refused while autograd records;
    the write bumps the version shared with views; while recording, ``self``
    takes the result's place in the graph (through its base, for a view).

    ``examples`` maps a name to the arguments of the method's docstring
    example, as source text: ``"0.5"``, or ``("oxmera.ones(2, 2)", "a, b")``
    for the tensor to modify and the arguments (default: a float vector, no
    arguments).

    Returns ``{"<name>_": method}``, e.g. for a module to also export some
    as functions (``oxmera.exp_(x)``). Call it at import time, before the
    ops package installs the Tensor attributes (``oxmera/ops/__init__.py``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops.inplace import add_inplace_methods
    >>> def halve_example(x, *, times=1):
    ...     return x * 0.5 ** times
    >>> methods = add_inplace_methods({"halve_example": halve_example})
    >>> x = oxmera.tensor([4.0, 8.0])
    >>> methods["halve_example_"](x, times=2)
    tensor([1., 2.], dtype=float32)
    >>> x._version
    1
    >>> from oxmera.ops import _registry
    >>> del _registry._TENSOR_ATTRIBUTES["halve_example_"]    # an example: not kept
    """
    generated = {}
    examples = examples or {}
    for name, function in dict(functions).items():
        method = _inplace_method(name, function, examples.get(name, ""))
        _registry.add_tensor_attribute(method.__name__, method)
        generated[method.__name__] = method
    return generated


def _inplace_method(name, function, example):
    inplace_name = name + "_"
    opdef = getattr(function, "op", None)
    # Clone ``self`` while recording only if the computation's VJP reads it
    # (the write would change the saved values): an op whose first input is
    # not saved (exp, tanh: they reuse the output) needs no copy.
    reads_self = (opdef is None or opdef.save_mask is None
                  or opdef.save_mask[0] is not False)
    compute = function
    if opdef is not None and not opdef.differentiable:
        # A comparison written into a float tensor (``x.gt_(0)``): the new
        # values are constants, so the old ones get a zero gradient, as in
        # PyTorch, and the tensor keeps a place in the graph.
        def compute(source, *args, **kwargs):
            return _overwrite(source, function(source, *args, **kwargs))
        reads_self = False

    def method(self, *args, **kwargs):
        others = args + tuple(kwargs.values())
        return _inplace(inplace_name, self, lambda source: compute(source, *args, **kwargs),
                        others, reads_self=reads_self)
    method.__name__ = method.__qualname__ = inplace_name
    method.__module__ = __name__
    try:    # what help() and IDEs show: the out-of-place function's parameters
        method.__signature__ = inspect.signature(function)
    except (TypeError, ValueError):
        pass
    tensor, arguments = example if isinstance(example, tuple) else ("oxmera.tensor([0.25, 0.5])",
                                                                    example)
    method.__doc__ = (
        f"In-place ``{name}``: ``self`` becomes ``{name}(self, ...)``; returns ``self``.\n\n"
        f"Generated by ``add_inplace_methods`` (see there for the rules).\n\n"
        f"Examples\n--------\n>>> import oxmera\n>>> x = {tensor}\n"
        f">>> x.{inplace_name}({arguments}) is x\nTrue\n>>> x._version\n1\n")
    return method


def _float_power_in_double(input, exponent):
    # float_power_ cannot round its float64 result into another dtype.
    if input.dtype != np.float64:
        raise RuntimeError(f"float_power_(): the base given to float_power_ has dtype "
                           f"{input.dtype} but the operation's result requires dtype float64")
    return pointwise.float_power(input, exponent)


# Every elementwise op with an in-place Tensor method in PyTorch (the
# hand-written ones above keep NumPy's ``out=`` fast path for optimizers).
_GENERATED = add_inplace_methods({
    **{name: getattr(elementwise, name) for name in (
        "neg", "abs", "sign", "reciprocal", "square", "exp", "exp2", "expm1", "log", "log2",
        "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "arcsin", "acos",
        "arccos", "atan", "arctan", "atan2", "arctan2", "sinh", "cosh", "tanh", "sigmoid",
        "erf", "relu", "lerp", "hypot", "floor", "ceil", "trunc", "round", "nan_to_num")},
    **{name: getattr(pointwise, name) for name in (
        "acosh", "arccosh", "asinh", "arcsinh", "atanh", "arctanh", "fmod", "copysign", "sgn",
        "frac", "xlogy", "logit", "erfc", "sinc", "deg2rad", "rad2deg", "ldexp", "clamp_min",
        "clamp_max", "addcmul", "addcdiv")},
    **{name: getattr(special, name) for name in (
        "erfinv", "lgamma", "digamma", "mvlgamma", "i0")},
    "polygamma": special._polygamma,          # Tensor.polygamma_(n): the tensor comes first
    "float_power": _float_power_in_double,
    **{name: getattr(blas, name) for name in ("addmm", "addmv", "addbmm", "baddbmm")},
    # comparisons and logic: 1 and 0 (True and False) in the tensor's dtype
    **{name: getattr(elementwise, name) for name in (
        "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
        "logical_not")},
    "heaviside": pointwise.heaviside,
    # the scans and triangles, which PyTorch also writes in place
    "cumsum": reduce.cumsum, "cumprod": reduce.cumprod, "tril": shape.tril, "triu": shape.triu,
}, examples={
    "lerp": "oxmera.ones(2), 0.5", "atan2": "oxmera.ones(2)", "arctan2": "oxmera.ones(2)",
    "hypot": "oxmera.ones(2)", "fmod": "0.2", "copysign": "-1.0", "xlogy": "2.0",
    "logit": "0.1", "ldexp": "oxmera.tensor([1, 2])", "clamp_min": "0.3", "clamp_max": "0.3",
    "addcmul": "oxmera.ones(2), oxmera.ones(2)", "addcdiv": "oxmera.ones(2), oxmera.ones(2)",
    "mvlgamma": ("oxmera.tensor([1.5, 2.0])", "2"), "polygamma": "1",
    "float_power": ("oxmera.tensor([0.25, 0.5], dtype=oxmera.float64)", "2"),
    "addmv": "oxmera.ones(2, 3), oxmera.ones(3)",
    "addmm": ("oxmera.zeros(2, 2)", "oxmera.ones(2, 3), oxmera.ones(3, 2)"),
    "addbmm": ("oxmera.zeros(2, 2)", "oxmera.ones(4, 2, 3), oxmera.ones(4, 3, 2)"),
    "baddbmm": ("oxmera.zeros(4, 2, 2)", "oxmera.ones(4, 2, 3), oxmera.ones(4, 3, 2)"),
    **dict.fromkeys(("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                     "logical_xor"), "0.3"),
    "heaviside": "oxmera.tensor(0.5)", "cumsum": "0", "cumprod": "0",
    "tril": ("oxmera.ones(2, 2)", ""), "triu": ("oxmera.ones(2, 2)", ""),
})

def _fill_diagonal(input, fill_value, wrap=False):
    """``input`` with its main diagonal set to ``fill_value`` (``Tensor.fill_diagonal_``).

    As PyTorch's: a 2-D tensor, or every dim of one size; a tall matrix's
    diagonal restarts every ``columns + 1`` rows when ``wrap``.
    """
    shape_ = tuple(input.shape)
    if input.ndim < 2:
        raise RuntimeError(f"fill_diagonal_(): dimensions must larger than 1, got a tensor of "
                           f"shape {shape_}")
    if input.ndim > 2 and len(set(shape_)) != 1:
        raise RuntimeError(f"fill_diagonal_(): all dimensions of input must be of equal length, "
                           f"got shape {shape_}")
    mask = np.zeros(shape_, dtype=bool)
    flat = mask.reshape(-1)
    if input.ndim == 2:
        rows, columns = shape_
        stop = rows * columns if wrap or rows <= columns else columns * columns
        flat[:stop:columns + 1] = True
    else:
        flat[::sum(int(np.prod(shape_[k + 1:])) for k in range(input.ndim))] = True
    return elementwise.where(Tensor(mask), fill_value, input)


# Indexing ops PyTorch also writes in place (``x.index_add_(0, i, s)``, ``x[mask] = v``'s
# cousins masked_fill_ and masked_scatter_).
_GENERATED.update(add_inplace_methods({
    "masked_fill": index.masked_fill, "scatter": index.scatter,
    "scatter_add": index.scatter_add,
    **{name: getattr(scatter, name) for name in (
        "index_add", "index_copy", "index_fill", "index_put", "masked_scatter",
        "scatter_reduce", "put")},
    "fill_diagonal": _fill_diagonal,
}, examples={
    "masked_fill": "oxmera.tensor([True, False]), 0.0",
    "scatter": "0, oxmera.tensor([1]), 3.0",
    "scatter_add": "0, oxmera.tensor([1, 1]), oxmera.ones(2)",
    "index_add": "0, oxmera.tensor([0]), oxmera.ones(1)",
    "index_copy": "0, oxmera.tensor([1]), oxmera.ones(1)",
    "index_fill": "0, oxmera.tensor([1]), 2.0",
    "index_put": "(oxmera.tensor([0]),), oxmera.ones(1)",
    "masked_scatter": "oxmera.tensor([False, True]), oxmera.ones(2)",
    "scatter_reduce": "0, oxmera.tensor([0, 0]), oxmera.ones(2), 'sum'",
    "put": "oxmera.tensor([1]), oxmera.ones(1)",
    "fill_diagonal": ("oxmera.zeros(2, 2)", "1.0"),
}))

#: The in-place forms PyTorch also has as functions (``torch.relu_(x)``).
_FUNCTIONS = ("abs_", "acos_", "acosh_", "addmv_", "asin_", "asinh_", "atan_", "atanh_",
              "ceil_", "clamp_min_", "clamp_max_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_",
              "exp_", "exp2_", "expm1_", "floor_", "frac_", "i0_", "ldexp_", "log_", "log10_",
              "log1p_", "log2_", "logit_", "nan_to_num_", "neg_", "rad2deg_", "reciprocal_",
              "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
              "square_", "tan_", "tanh_", "trunc_", "xlogy_")
globals().update((name, _GENERATED[name]) for name in _FUNCTIONS)
__all__ += [*_FUNCTIONS, "clamp_", "fill_", "zero_"]


# -- Tensor methods and operators ------------------------------------------------------------

def _operator(method):
    def inplace_operator(self, other):
        return method(self, other)
    inplace_operator.__name__ = method.__name__
    inplace_operator.__doc__ = f"``self op= other``: :meth:`Tensor.{method.__name__}`."
    return inplace_operator


for _method in (add_, sub_, mul_, div_, pow_, clamp_, zero_, fill_, copy_, floor_divide_,
                remainder_):
    _registry.add_tensor_attribute(_method.__name__, _method)
_registry.add_tensor_attribute("clip_", clamp_)
_registry.add_tensor_attribute("true_divide_", div_)
_registry.add_tensor_attribute("divide_", div_)
_registry.add_tensor_attribute("__setitem__", setitem)
for _dunder, _method in (("__iadd__", add_), ("__isub__", sub_), ("__imul__", mul_),
                         ("__itruediv__", div_), ("__ifloordiv__", floor_divide_),
                         ("__imod__", remainder_), ("__ipow__", pow_)):
    _registry.add_tensor_attribute(_dunder, _operator(_method))
