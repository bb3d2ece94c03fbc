"""Rules every op shares: dtype promotion and dim handling.

Promotion follows PyTorch (``torch.result_type``): the category (bool < int <
float) is the highest among all operands, but within a category, tensors
with dimensions decide over 0-d tensors, and those over Python numbers. So a
Python float does not upcast a float32 tensor, a float64 0-d tensor does not
upcast a float32 vector, and an int tensor times a Python float gives the
default float dtype.
"""
import operator

import numpy as np

from oxmera._core import autograd as _core

_BOOL = np.dtype(np.bool_)
_INT64 = np.dtype(np.int64)
_FLOAT16 = np.dtype(np.float16)
_FLOAT32 = np.dtype(np.float32)
_FLOAT64 = np.dtype(np.float64)
_COMPLEX64 = np.dtype(np.complex64)
_COMPLEX128 = np.dtype(np.complex128)


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def _category(dtype):
    return _CATEGORY[dtype.kind]


def complex_of(dtype):
    """The complex dtype of a float one's precision (``toComplexType``): float64 gives
    complex128, every other float complex64 (oxmera has no complex32); complex stays."""
    if dtype.kind == "c":
        return dtype
    return _COMPLEX128 if dtype == _FLOAT64 else _COMPLEX64


def real_of(dtype):
    """The real dtype of a complex one's precision (``toRealValueType``); others unchanged."""
    if dtype.kind != "c":
        return dtype
    return _FLOAT64 if dtype == _COMPLEX128 else _FLOAT32


def _promote(a, b):
    # PyTorch's promoteTypes: an integer or bool meeting a float gives that
    # float (NumPy would widen int64 + float32 to float64); otherwise NumPy's.
    if a is None:
        return b
    if b is None:
        return a
    ka, kb = a.kind, b.kind
    if ka == "c" or kb == "c":
        # complex meets complex or float: NumPy's widening (float64 with
        # complex64 is complex128, as PyTorch); meets an integer: unchanged
        # (NumPy would widen int64 with complex64 to complex128).
        if ka in "biu":
            return b
        if kb in "biu":
            return a
        return np.promote_types(a, b)
    if ka == "f" and kb != "f":
        return a
    if kb == "f" and ka != "f":
        return b
    return np.promote_types(a, b)


def _combine(higher, lower):
    # at::native::combine_categories: a lower-priority participant only
    # matters when it is of a higher category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.kind == "c":
        return higher
    if lower.kind == "c":
        # A complex participant of lower priority keeps a float's precision.
        return complex_of(higher) if higher.kind == "f" else lower
    if higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return _promote(higher, lower)
    return higher


def real_only(array, opname):
    """Refuse a complex ``array`` in an op whose complex form oxmera lacks (a
    ``RuntimeError`` naming it), rather than compute a wrong value or gradient."""
    if array.dtype.kind == "c":
        raise RuntimeError(f"{opname}(): complex inputs are not supported by oxmera yet (got "
                           f"dtype {array.dtype}, shape {array.shape})")


def ordered_only(array, opname):
    """Refuse a complex ``array`` in an op that needs an order (comparisons, extremes,
    sorting, rounding), with PyTorch's error type; NumPy would order complex numbers
    lexicographically and give a result PyTorch never does."""
    if getattr(array, "dtype", None) is not None and array.dtype.kind == "c":
        raise RuntimeError(f"{opname}(): not implemented for complex tensors (complex numbers "
                           f"have no order; compare abs() or the real parts)")


def _scalar_dtype(value):
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, int):
        return _INT64
    if isinstance(value, complex):
        return _core.get_default_complex_dtype()
    return _core.get_default_dtype()


def result_type(*operands):
    """The dtype an op on ``operands`` (arrays, Tensors, Python numbers) gives.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera.ops._utils import result_type
    >>> result_type(np.zeros(3, np.float32), np.zeros((), np.float64))
    dtype('float32')
    >>> result_type(np.zeros(3, np.int64), 2.5)
    dtype('float32')
    """
    if len(operands) == 2:
        # The commonest question without the walk (a VJP's where(flat, 0.0,
        # grad)): a float array beside a Python number, or beside an array of
        # its own dtype, gives that array's dtype.
        for a, b in (operands, operands[::-1]):
            if (type(a) is np.ndarray and a.dtype.kind == "f"
                    and (type(b) in (float, int, bool)
                         or (type(b) is np.ndarray and b.dtype == a.dtype))):
                return a.dtype
    dim_result = zero_result = wrapped_result = None
    for v in operands:
        if v is None:
            continue
        if isinstance(v, (bool, int, float, complex)):
            wrapped_result = _promote(wrapped_result, _scalar_dtype(v))
            continue
        dtype = v.dtype
        if v.ndim:
            dim_result = _promote(dim_result, dtype)
        else:
            zero_result = _promote(zero_result, dtype)
    return _combine(dim_result, _combine(zero_result, wrapped_result))


def make_prepare(promote, float_only, real_only_name=None):
    """Build the input-preparing step of an op (``OpDef.prepare``).

    It casts array inputs to the promoted dtype (Python numbers are left for
    NumPy, which treats them as weakly typed, giving the same result), and
    with ``float_only`` turns integer and bool results into the default float.
    With ``real_only_name`` (an op not declared ``complex_inputs``), a complex
    result dtype is refused naming that op.
    """
    def prepare(values):
        if promote:
            target = result_type(*values)
        else:
            target = None
            for v in values:
                if v is not None and not isinstance(v, (bool, int, float)):
                    target = v.dtype
                    break
            if target is None:
                target = result_type(*values)
        if float_only and target.kind not in "fc":
            target = _core.get_default_dtype()
        elif target.kind == "c" and real_only_name is not None:
            raise RuntimeError(f"{real_only_name}(): complex inputs are not supported by "
                               f"oxmera yet (dtype {target})")
        out = []
        for v in values:
            if v is None:
                out.append(v)
            elif isinstance(v, (bool, int, float)):
                # An int scalar into a float op: NumPy keeps the float dtype.
                out.append(float(v) if target.kind == "f" and isinstance(v, bool) else v)
            elif v.dtype != target:
                out.append(v.astype(target))
            else:
                out.append(v)
        if all(isinstance(v, (bool, int, float)) for v in out if v is not None):
            out = [np.asarray(v, dtype=target) if v is not None else v for v in out]
        return out
    return prepare


def accumulation_dtype(dtype):
    """The dtype that sums, products and statistics over ``dtype`` are computed in.

    float32 for float16, as PyTorch's CPU kernels do (``at::acc_type``): a
    float16 running sum passes 65504, float16's largest finite value, long
    before the result does (``norm([300, 400])`` squares to 250000), and a
    count or a divisor past it (``mean`` over 70000 elements) is inf. Every
    other dtype is its own. Results are cast back: only the arithmetic is wider.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera.ops._utils import accumulation_dtype
    >>> accumulation_dtype(np.dtype(np.float16)), accumulation_dtype(np.dtype(np.float64))
    (dtype('float32'), dtype('float64'))
    """
    # No np.dtype() call: this runs on every sum, and == accepts types too.
    return _FLOAT32 if dtype == _FLOAT16 else dtype


def narrow(array, dtype):
    """``array`` (or a NumPy scalar) as an array of ``dtype``, the last step of
    a computation done in :func:`accumulation_dtype`: a value past float16's
    range becomes inf without NumPy's overflow warning, as in PyTorch.

    Examples
    --------
    >>> import numpy as np
    >>> from oxmera.ops._utils import narrow
    >>> narrow(np.float32(1e5), np.float16)
    array(inf, dtype=float16)
    """
    array = np.asarray(array)
    if array.dtype == dtype:
        return array        # nothing to narrow (float32 and float64): no np.errstate (~1 us)
    with np.errstate(over="ignore"):
        return array.astype(dtype, copy=False)


def widened(tensor, compute):
    """``compute(tensor)`` run in :func:`accumulation_dtype` and cast back.

    For the arithmetic that VJPs and composed ops do on float16 tensors with
    numbers that float16 cannot hold: ``grad / 70000`` in float16 divides by
    inf, where PyTorch divides in float32. The casts are recorded ops, so
    the result is differentiable to any order; other dtypes run ``compute``
    directly.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.ops._utils import widened
    >>> widened(oxmera.ones(2, dtype=oxmera.float16), lambda t: t / 70000 * 70000)
    tensor([1., 1.], dtype=float16)
    """
    wide = accumulation_dtype(tensor.dtype)
    if wide == tensor.dtype:
        return compute(tensor)
    return compute(tensor.to(wide)).to(tensor.dtype)


normalize_dim = _core.normalize_dim


def normalize_dims(dim, ndim, opname):
    """``dim`` (None, int or sequence) as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if ndim == 0:
        # A 0-d tensor accepts dim 0 and -1, and has nothing to reduce.
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            normalize_dim(d, 0, opname)
        return ()
    if isinstance(dim, (tuple, list)):
        dims = tuple(sorted(normalize_dim(d, ndim, opname) for d in dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"{opname}(): dim {tuple(dim)} appears multiple times in the "
                               f"list of dims")
        return dims
    return (normalize_dim(dim, ndim, opname),)


def pick_dim(dim, axis, opname, default=None):
    """Accept ``axis`` as NumPy's name for ``dim`` (but not both).

    ``default`` is ``dim``'s default (``cat``'s 0): a ``dim`` still equal to
    it counts as not given. Where ``axis`` is the parameter's own name
    (``concatenate``), pass it first and ``dim`` as the alias.
    """
    if axis is not None:
        if dim is not None and dim != default:
            raise TypeError(f"{opname}(): pass dim or axis, not both")
        return axis
    return dim


# ``np.broadcast_to`` as a read-only view built in C (a tenth of its cost):
# the VJP of every reduction and broadcasting op calls it.
broadcast_view = _core.broadcast_view


def parse_size(opname, sizes, size=None, *, varargs=True, required=False):
    """A size given as varargs ``f(2, 3)``, one sequence ``f((2, 3))``, or ``size=``, as a
    tuple of ints: the one parser of every creation and sampling function.

    ``varargs=False``: the size must be one sequence (``randint``'s). ``required``:
    no size at all is an error (the samplers), else it is ``()``. Errors as
    PyTorch's: TypeError for a size that is not ints (a float is a mistake, not a
    size: ``operator.index``), RuntimeError for a negative dimension.
    """
    if size is not None:
        if sizes:
            raise TypeError(f"{opname}() got multiple values for argument 'size'")
        sizes = (size,)
    if not sizes and required:
        raise TypeError(f"{opname}(): missing the size (e.g. {opname}(2, 3) or "
                        f"{opname}(size=(2, 3)))")
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    elif sizes and not varargs:
        raise TypeError(f"{opname}(): argument 'size' must be a tuple of ints, not "
                        f"{type(sizes[0]).__name__}")
    shape = []
    for position, s in enumerate(sizes):
        try:
            shape.append(operator.index(s))
        except TypeError:
            raise TypeError(f"{opname}(): argument 'size' must be a tuple of ints, but found "
                            f"element of type {type(s).__name__} at pos {position}") from None
    for s in shape:
        if s < 0:
            raise RuntimeError(f"{opname}(): trying to create a tensor with negative dimension "
                               f"{s}: {shape}")
    return tuple(shape)
