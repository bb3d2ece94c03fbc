"""Random sampling: random tensors, ``multinomial``/``bernoulli``/``poisson`` and the
in-place samplers (``uniform_``, ``normal_``, ``random_`` ...).

Every function here draws from the ``generator=`` it is given or from
``oxmera.random.default_generator``, always through
:func:`oxmera.random.numpy_generator`; the numbers are NumPy's (PCG64), not
PyTorch's, but names, signatures, sizes, dtypes and errors follow PyTorch.
Arguments are checked before anything is drawn, so a call that raises leaves
the generator where it was.

Sampling is not differentiable. As in PyTorch, a sample drawn from tensors
that require grad (``normal(mean, std)``, ``bernoulli(p)``, ``poisson(rate)``)
requires grad too, with a zero gradient to those tensors, so a loss built on
it still runs backward. The in-place samplers follow the rules of the other
in-place ops (``oxmera.ops.inplace``): they raise on a leaf that requires
grad while autograd records, bump the version counter, and give a tensor
that had history a zero gradient to its old values.

What it leaves to others: the generators (``oxmera.random``), the device
rule (``oxmera._device.check_cpu``), the in-place writing rules
(``oxmera.ops.inplace``).
"""
import operator

import numpy as np

from oxmera import _device
from oxmera import random as _random
from oxmera._core import autograd as _core
from oxmera.ops import _registry, elementwise, inplace
from oxmera.ops._utils import parse_size

__all__ = ["rand", "randn", "randint", "normal", "rand_like", "randn_like", "randint_like",
           "randperm", "multinomial", "bernoulli", "poisson"]

Tensor = _core.Tensor
_wrap = _core._wrap


# -- arguments shared by every random function ---------------------------------------------

def _rng(generator, opname):
    return _random.numpy_generator(generator, f"{opname}()")


def _common(opname, out, device):
    """The keywords every random creation function checks the same way."""
    if out is not None:
        raise TypeError(f"{opname}(): out= is not supported by oxmera (every result is a new "
                        f"tensor); use the returned tensor, or out.copy_(result)")
    _device.check_cpu(f"{opname}()", device)


def _shape(opname, sizes, size=None, varargs=True):
    """A size given as varargs, one sequence, or ``size=`` (``ops._utils.parse_size``).

    ``varargs=False``: the size must be one sequence (``randint``'s ``size``).
    """
    return parse_size(opname, sizes, size, varargs=varargs, required=True)


def _float_dtype(opname, dtype, complex_ok=False):
    dtype = _core.get_default_dtype() if dtype is None else np.dtype(dtype)
    if dtype.kind != "f" and not (complex_ok and dtype.kind == "c"):
        raise NotImplementedError(f"{opname}(): not implemented for dtype {dtype}: these "
                                  f"samples are floating point (use a floating dtype)")
    return dtype


def _finish(opname, values, dtype, requires_grad):
    if requires_grad and dtype.kind not in "fc":
        raise RuntimeError(f"{opname}(): only Tensors of floating point dtype can require "
                           f"gradients, got dtype {dtype}")
    t = _wrap(np.asarray(values).astype(dtype, copy=False))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_float_tensor(opname, t, what="input"):
    if not isinstance(t, Tensor):
        raise TypeError(f"{opname}(): {what} must be a Tensor, got {type(t).__name__}")
    if t.dtype.kind != "f":
        raise NotImplementedError(f"{opname}(): not implemented for {what} of dtype {t.dtype} "
                                  f"(a floating dtype is needed)")


def _linked(values, inputs):
    """``values`` as a tensor; while recording, joined to the ``inputs`` that require grad
    with a zero gradient, as PyTorch's sampling nodes are (``NormalBackward``...)."""
    out = _wrap(values)
    if not _core.is_grad_enabled():
        return out
    everywhere = None
    for t in inputs:
        if isinstance(t, Tensor) and t.requires_grad:
            if everywhere is None:
                everywhere = Tensor(np.ones(out.shape, dtype=bool))
            # where() sends the gradient to ``out`` only: ``t`` gets zeros (summed to its shape)
            out = elementwise.where(everywhere, out, t)
    return out


# -- drawing: NumPy's samplers, kept to PyTorch's ranges ------------------------------------

def _uniform(rng, shape, dtype, low=0.0, high=1.0):
    """Uniform in [low, high) in ``dtype``: the rounding to ``dtype`` may reach ``high``."""
    values = np.asarray(low + (high - low) * rng.random(shape)).astype(dtype)
    if high > low:
        below_high = np.nextafter(dtype.type(high), dtype.type(low))
        np.minimum(values, below_high, out=values)
    return values


def _integer_bounds(dtype):
    """The closed range of integers ``dtype`` holds exactly (floats: up to 2**mantissa)."""
    if dtype.kind == "b":
        return 0, 1
    if dtype.kind == "f":
        digits = np.finfo(dtype).nmant + 1
        return -(2 ** digits), 2 ** digits
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _integers(opname, rng, shape, dtype, low, high):
    """Integers in [low, high) as ``dtype``, with PyTorch's bound checks."""
    if not low < high:
        raise RuntimeError(f"{opname}(): expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    smallest, largest = _integer_bounds(dtype)
    if not smallest <= low <= largest:
        raise RuntimeError(f"{opname}(): from={low} is out of bounds for {dtype} "
                           f"([{smallest}, {largest}])")
    if not smallest <= high - 1 <= largest:
        raise RuntimeError(f"{opname}(): to - 1 = {high - 1} is out of bounds for {dtype} "
                           f"([{smallest}, {largest}])")
    return rng.integers(low, high, shape, dtype=np.int64).astype(dtype)


def _int_argument(opname, name, value):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{opname}(): argument '{name}' must be int, not "
                        f"{type(value).__name__}") from None


# -- random tensors -------------------------------------------------------------------------

def rand(*sizes, size=None, generator=None, out=None, dtype=None, device=None,
         requires_grad=False):
    """Uniform samples from [0, 1) of the given size (varargs, a sequence or ``size=``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.rand(2, 3).shape
    oxmera.Size([2, 3])
    >>> oxmera.rand((4,), dtype=oxmera.float64).dtype
    dtype('float64')
    """
    _common("rand", out, device)
    shape, dtype = _shape("rand", sizes, size), _float_dtype("rand", dtype)
    return _finish("rand", _uniform(_rng(generator, "rand"), shape, dtype), dtype,
                   requires_grad)


def randn(*sizes, size=None, generator=None, out=None, dtype=None, device=None,
          requires_grad=False):
    """Standard normal samples of the given size (varargs, a sequence or ``size=``).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.randn(4).dtype
    dtype('float32')
    >>> oxmera.randn(size=(2, 2), requires_grad=True).requires_grad
    True
    >>> oxmera.randn(3, dtype=oxmera.complex64).dtype
    dtype('complex64')

    A complex dtype draws the real and imaginary parts each with variance
    1/2 (so ``E|z|^2 = 1``), as PyTorch.
    """
    _common("randn", out, device)
    shape = _shape("randn", sizes, size)
    dtype = _float_dtype("randn", dtype, complex_ok=True)
    rng = _rng(generator, "randn")
    if dtype.kind == "c":
        pairs = rng.standard_normal(shape + (2,)) * np.sqrt(0.5)
        return _finish("randn", pairs[..., 0] + 1j * pairs[..., 1], dtype, requires_grad)
    return _finish("randn", rng.standard_normal(shape), dtype, requires_grad)


def _low_high(opname, args, low, high, size_given):
    """PyTorch's ``(high)`` / ``(low, high)`` argument forms, and the size if positional."""
    args = list(args)
    size = None
    if not size_given and args and len(args) in (2, 3):
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    elif len(args) > 2:
        raise TypeError(f"{opname}(): takes at most low, high and size positionally, got "
                        f"{len(args) + (size is not None)} arguments")
    if high is None:
        raise TypeError(f"{opname}(): missing the required argument 'high'")
    low = _int_argument(opname, "low", 0 if low is None else low)
    high = _int_argument(opname, "high", high)
    return low, high, size


def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None,
            device=None, requires_grad=False):
    """Random integers from ``low`` (default 0) up to, not including, ``high`` (int64).

    PyTorch's forms: ``randint(high, size)``, ``randint(low, high, size)``,
    with any of them as keywords; ``size`` is a tuple. ``dtype`` may be any
    dtype that holds the range (a float dtype too).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.randint(10, (5,)).dtype
    dtype('int64')
    >>> r = oxmera.randint(3, 6, size=(100,))
    >>> 3 <= r.min().item() and r.max().item() < 6
    True
    """
    _common("randint", out, device)
    low, high, positional_size = _low_high("randint", args, low, high, size is not None)
    shape = _shape("randint", () if positional_size is None else (positional_size,), size,
                   varargs=False)
    dtype = np.dtype(np.int64) if dtype is None else np.dtype(dtype)
    if requires_grad and dtype.kind != "f":
        raise RuntimeError(f"randint(): only Tensors of floating point dtype can require "
                           f"gradients, got dtype {dtype}")
    values = _integers("randint", _rng(generator, "randint"), shape, dtype, low, high)
    return _finish("randint", values, dtype, requires_grad)


def _like(opname, input, dtype):
    if not isinstance(input, Tensor):
        raise TypeError(f"{opname}(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    return input.shape, input.dtype if dtype is None else np.dtype(dtype)


def rand_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    """Uniform samples from [0, 1) with the shape (and dtype) of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.rand_like(oxmera.zeros(2, 3, dtype=oxmera.float64)).dtype
    dtype('float64')
    """
    _common("rand_like", None, device)
    shape, dtype = _like("rand_like", input, dtype)
    dtype = _float_dtype("rand_like", dtype)
    return _finish("rand_like", _uniform(_rng(generator, "rand_like"), shape, dtype), dtype,
                   requires_grad)


def randn_like(input, *, generator=None, dtype=None, device=None, requires_grad=False,
               memory_format=None):
    """Standard normal samples with the shape (and dtype) of ``input``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.randn_like(oxmera.zeros(4)).shape
    oxmera.Size([4])
    """
    _common("randn_like", None, device)
    shape, dtype = _like("randn_like", input, dtype)
    dtype = _float_dtype("randn_like", dtype)
    return _finish("randn_like", _rng(generator, "randn_like").standard_normal(shape), dtype,
                   requires_grad)


def randint_like(input, *args, low=None, high=None, generator=None, dtype=None, device=None,
                 requires_grad=False, memory_format=None):
    """Random integers in [``low``, ``high``) with the shape (and dtype) of ``input``.

    ``randint_like(input, high)`` or ``randint_like(input, low, high)``.

    Examples
    --------
    >>> import oxmera
    >>> r = oxmera.randint_like(oxmera.zeros(3, dtype=oxmera.int32), 10)
    >>> r.dtype, r.shape
    (dtype('int32'), oxmera.Size([3]))
    """
    _common("randint_like", None, device)
    if len(args) > 2:
        raise TypeError(f"randint_like(): takes input, low and high, got {len(args) + 1} "
                        f"positional arguments")
    low, high, _ = _low_high("randint_like", args, low, high, size_given=True)
    shape, dtype = _like("randint_like", input, dtype)
    values = _integers("randint_like", _rng(generator, "randint_like"), shape, dtype, low, high)
    return _finish("randint_like", values, dtype, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of the integers from 0 to ``n - 1`` (int64 unless ``dtype``
    says otherwise).

    Examples
    --------
    >>> import oxmera
    >>> sorted(oxmera.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    _common("randperm", out, device)
    n = _int_argument("randperm", "n", n)
    if n < 0:
        raise RuntimeError(f"randperm(): n must be non-negative, got {n}")
    dtype = np.dtype(np.int64) if dtype is None else np.dtype(dtype)
    if dtype.kind == "b":
        raise NotImplementedError("randperm(): not implemented for dtype bool")
    if n > 0 and n - 1 > _integer_bounds(dtype)[1]:
        raise RuntimeError(f"randperm(): n={n} does not fit dtype {dtype}: its values go up "
                           f"to {n - 1}")
    return _finish("randperm", _rng(generator, "randperm").permutation(n), dtype, requires_grad)


# -- normal: every PyTorch form -----------------------------------------------------------

def _check_std(opname, std):
    """PyTorch's rule: std >= 0 (a NaN std is refused as well)."""
    if isinstance(std, np.ndarray):
        if not np.all(std >= 0):
            raise RuntimeError(f"{opname}(): expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"{opname}(): expects std >= 0.0, but found std {std}")


def normal(mean=None, std=None, size=None, *, generator=None, out=None, dtype=None,
           device=None, requires_grad=False):
    """Normal samples: ``mean`` and ``std`` as tensors (broadcast together) or numbers.

    The forms of ``torch.normal``: ``normal(mean_tensor, std_tensor)``,
    ``normal(mean_tensor, std=1.0)``, ``normal(mean, std_tensor)`` (the result
    has the broadcast shape and the tensors' floating dtype), and
    ``normal(mean, std, size)`` with numbers (``dtype``, ``requires_grad``).
    As in PyTorch, the sample requires grad when ``mean`` or ``std`` does,
    with a zero gradient to them (sampling is not reparametrized here:
    write ``mean + std * randn_like(mean)`` for that).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.normal(0.0, 2.0, size=(3,)).shape
    oxmera.Size([3])
    >>> oxmera.normal(oxmera.zeros(2, 1), oxmera.ones(3)).shape
    oxmera.Size([2, 3])
    """
    _common("normal", out, device)
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_is_tensor or std_is_tensor):
        if mean is None:
            mean = 0.0
        if std is None:
            std = 1.0
        if size is None:
            raise TypeError("normal(): with a number mean and std, the size is needed: "
                            "normal(mean, std, size) (or tensors for mean or std)")
        shape = _shape("normal", (size,), varargs=False)
        dtype = _float_dtype("normal", dtype)
        mean, std = float(mean), float(std)
        _check_std("normal", std)
        values = mean + std * _rng(generator, "normal").standard_normal(shape)
        return _finish("normal", values, dtype, requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise TypeError("normal(): size=, dtype= and requires_grad= go only with a number "
                        "mean and std; with a tensor mean or std the result takes their "
                        "shape and dtype")
    if mean is None:
        raise TypeError("normal(): missing the argument 'mean'")
    if std is None:
        std = 1.0
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    for name, t in (("mean", mean), ("std", std)):
        if isinstance(t, Tensor):
            _check_float_tensor("normal", t, name)
    dtype = np.result_type(*(t.dtype for t in tensors))
    mean_values = mean._data if mean_is_tensor else float(mean)
    std_values = std._data if std_is_tensor else float(std)
    try:
        shape = np.broadcast_shapes(np.shape(mean_values), np.shape(std_values))
    except ValueError:
        raise RuntimeError(f"normal(): the shapes of mean {tuple(np.shape(mean_values))} and "
                           f"std {tuple(np.shape(std_values))} do not broadcast") from None
    _check_std("normal", std_values)
    sample = _rng(generator, "normal").standard_normal(shape)
    values = np.asarray(mean_values + std_values * sample).astype(dtype, copy=False)
    return _linked(values, tensors)


# -- multinomial, bernoulli, poisson --------------------------------------------------------

def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categories weighted by each row of ``input`` (int64).

    ``input`` is 1-D (one distribution) or 2-D (one per row); weights need not
    sum to one. Without ``replacement`` each row gives distinct indices (and
    ``num_samples`` may not exceed the number of categories).

    Examples
    --------
    >>> import oxmera
    >>> w = oxmera.tensor([0.0, 10.0, 3.0, 0.0])
    >>> sorted(oxmera.multinomial(w, 2).tolist())
    [1, 2]
    >>> oxmera.multinomial(oxmera.ones(3, 5), 4, replacement=True).shape
    oxmera.Size([3, 4])
    """
    _common("multinomial", out, None)
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    num_samples = _int_argument("multinomial", "num_samples", num_samples)
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial(): prob_dist must be 1 or 2 dim, got shape "
                           f"{tuple(input.shape)}")
    if input.dtype.kind != "f":
        raise RuntimeError(f"multinomial(): only supports floating-point dtypes for input, "
                           f"got {input.dtype}")
    if num_samples <= 0:
        raise RuntimeError(f"multinomial(): cannot sample n_sample <= 0 samples (got "
                           f"num_samples={num_samples})")
    categories = input.shape[-1]
    if not replacement and num_samples > categories:
        raise RuntimeError(f"multinomial(): cannot sample n_sample > prob_dist.size(-1) samples "
                           f"without replacement ({num_samples} > {categories})")
    weights = np.asarray(input._data, dtype=np.float64).reshape(-1, categories)
    if not np.all(np.isfinite(weights) & (weights >= 0)):
        raise RuntimeError("multinomial(): probability tensor contains either `inf`, `nan` or "
                           "element < 0")
    totals = weights.sum(axis=1)
    if np.any(totals <= 0):
        raise RuntimeError(f"multinomial(): invalid multinomial distribution (sum of "
                           f"probabilities <= 0) in row {int(np.argmax(totals <= 0))}")
    rng = _rng(generator, "multinomial")
    rows = weights.shape[0]
    if replacement:
        cumulative = np.cumsum(weights, axis=1) / totals[:, None]
        # A category of weight 0 has the same cumulative value as the one before it, so
        # searchsorted(side="right") never picks it; the clip guards rounding at the top.
        last_positive = categories - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)
        draws = rng.random((rows, num_samples))
        picks = np.stack([np.searchsorted(cumulative[r], draws[r], side="right")
                          for r in range(rows)]) if rows else np.zeros((0, num_samples), int)
        picks = np.minimum(picks, last_positive[:, None])
    else:
        # Exponential keys E/w, smallest first (PyTorch's method too): the order of a
        # weighted draw without replacement; weight-0 categories come last (key inf).
        with np.errstate(divide="ignore"):
            keys = rng.standard_exponential((rows, categories)) / weights
        if num_samples < categories:
            # only the num_samples smallest keys matter: partition, then order those
            smallest = np.argpartition(keys, num_samples - 1, axis=1)[:, :num_samples]
            order = np.argsort(np.take_along_axis(keys, smallest, axis=1), axis=1,
                               kind="stable")
            picks = np.take_along_axis(smallest, order, axis=1)
        else:
            picks = np.argsort(keys, axis=1, kind="stable")
    picks = picks.astype(np.int64)
    return _wrap(picks.reshape(num_samples) if input.ndim == 1 else picks)


def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples, 1 with probability ``input`` (elementwise) or ``p`` (a number).

    The result has ``input``'s shape and dtype. As in PyTorch, it requires
    grad when ``input`` does, with a zero gradient.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.bernoulli(oxmera.tensor([0.0, 1.0, 1.0]))
    tensor([0., 1., 1.], dtype=float32)
    >>> oxmera.bernoulli(oxmera.zeros(3), p=1.0)
    tensor([1., 1., 1.], dtype=float32)
    """
    _common("bernoulli", out, None)
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' must be a Tensor, not "
                        f"{type(input).__name__}")
    if p is None:
        _check_float_tensor("bernoulli", input)
        probability = input._data
    else:
        probability = _check_probability("bernoulli", p)
    values = _draw_bernoulli("bernoulli", _rng(generator, "bernoulli"), input.shape, probability)
    return _linked(values.astype(input.dtype), (input,))


def _check_probability(opname, p):
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"{opname}(): expects p to be in [0, 1], but got p={p}")
    return p


def _draw_bernoulli(opname, rng, shape, probability):
    if isinstance(probability, np.ndarray) and not np.all((probability >= 0)
                                                          & (probability <= 1)):
        raise RuntimeError(f"{opname}(): expects all probabilities in [0, 1] (no NaN)")
    return rng.random(shape) < probability


# NumPy's Poisson sampler refuses rates above this (it would overflow int64).
_POISSON_MAX_RATE = np.iinfo(np.int64).max - 10 * np.sqrt(np.iinfo(np.int64).max)


def poisson(input, generator=None):
    """Poisson samples with the rates in ``input`` (same shape and floating dtype).

    Examples
    --------
    >>> import oxmera
    >>> oxmera.poisson(oxmera.tensor([0.0, 0.0]))
    tensor([0., 0.], dtype=float32)
    >>> oxmera.poisson(oxmera.full((2, 2), 3.0)).shape
    oxmera.Size([2, 2])
    """
    _check_float_tensor("poisson", input)
    rates = np.asarray(input._data, dtype=np.float64)
    if not np.all(rates >= 0):
        raise RuntimeError("poisson(): invalid Poisson rate, expected rate to be non-negative")
    if np.any(rates > _POISSON_MAX_RATE):
        raise RuntimeError(f"poisson(): a rate above {_POISSON_MAX_RATE:.3g} cannot be "
                           f"sampled (the count would overflow int64), got "
                           f"{rates.max():.3g}")
    values = _rng(generator, "poisson").poisson(rates)
    return _linked(np.asarray(values).astype(input.dtype), (input,))


# -- in-place samplers (Tensor methods) ---------------------------------------------------

def _sample_into(name, self, rng, draw):
    """Overwrite ``self`` with ``draw()`` (an array of its shape), by the in-place rules.

    The checks of ``oxmera.ops.inplace`` come before the draw; a write that
    still fails (a broadcast, read-only view) puts ``rng`` back where it
    was, so a refused call changes nothing. While autograd records, ``self``
    gets a node that gives its old values a zero gradient (PyTorch's
    ``NormalBackward0``...).
    """
    recording = isinstance(self, Tensor) and inplace._recording(self)
    inplace._check_writable(name, self, recording)
    state = rng.bit_generator.state
    try:
        if not recording:
            inplace._write(name, self, draw())
            return self
        sample = _wrap(np.asarray(draw()).astype(self.dtype, copy=False))
        return inplace._inplace(name, self, lambda source: inplace._overwrite(source, sample),
                                reads_self=False)
    except BaseException:
        rng.bit_generator.state = state
        raise


def _check_float_self(name, self):
    if not isinstance(self, Tensor):
        raise TypeError(f"{name}(): expected a Tensor to modify, got {type(self).__name__}")
    if self.dtype.kind != "f":
        raise NotImplementedError(f"{name}(): not implemented for dtype {self.dtype}: these "
                                  f"samples are floating point")


def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    """Fill with uniform samples from [``from``, ``to``) in place; returns ``self``.

    (PyTorch's first parameter is called ``from``, a Python keyword: pass it
    positionally.)

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(100).uniform_(2, 3)
    >>> 2 <= x.min().item() and x.max().item() < 3
    True
    """
    _check_float_self("uniform_", self)
    low, high = float(from_), float(to)
    if low > high:
        raise RuntimeError(f"uniform_(): expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    if not (np.isfinite(low) and np.isfinite(high)):
        raise RuntimeError(f"uniform_(): from={from_} and to={to} must be finite")
    rng = _rng(generator, "uniform_")
    return _sample_into("uniform_", self, rng,
                        lambda: _uniform(rng, self.shape, self.dtype, low, high))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples in place; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 3).normal_(5.0, 0.0)
    tensor([[5., 5., 5.],
            [5., 5., 5.]], dtype=float32)
    """
    _check_float_self("normal_", self)
    mean, std = float(mean), float(std)
    _check_std("normal_", std)
    rng = _rng(generator, "normal_")
    return _sample_into("normal_", self, rng,
                        lambda: mean + std * rng.standard_normal(self.shape))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples, 1 with probability ``p`` (a number or a tensor); returns ``self``.

    A tensor ``p`` broadcasts to ``self``'s shape; ``self`` may have any dtype.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(3, dtype=oxmera.int64).bernoulli_(1.0)
    tensor([1, 1, 1], dtype=int64)
    """
    if not isinstance(self, Tensor):
        raise TypeError(f"bernoulli_(): expected a Tensor to modify, got {type(self).__name__}")
    if isinstance(p, Tensor):
        _check_float_tensor("bernoulli_", p, "p")
        probability = p._data
        try:
            if np.broadcast_shapes(probability.shape, self.shape) != self.shape:
                raise ValueError
        except ValueError:
            raise RuntimeError(f"bernoulli_(): p of shape {tuple(p.shape)} does not broadcast "
                               f"to the tensor's shape {tuple(self.shape)}") from None
        if not np.all((probability >= 0) & (probability <= 1)):
            raise RuntimeError("bernoulli_(): expects all probabilities in [0, 1] (no NaN)")
    else:
        probability = _check_probability("bernoulli_", p)
    rng = _rng(generator, "bernoulli_")
    return _sample_into("bernoulli_", self, rng,
                        lambda: _draw_bernoulli("bernoulli_", rng, self.shape, probability))


_UNSET = object()


def random_(self, *bounds, to=_UNSET, generator=None):
    """Fill with random integers in place (as values of its dtype); returns ``self``.

    PyTorch's forms: ``random_()`` draws from [0, 2**mantissa] for a float
    dtype and [0, max] for an integer one; ``random_(to)`` from [0, to);
    ``random_(from, to)`` from [from, to), and ``random_(from, None)`` from
    [from, the dtype's top] (2**mantissa for floats).

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(100).random_(3, 6)
    >>> sorted(set(x.tolist()))
    [3.0, 4.0, 5.0]
    >>> oxmera.zeros(4, dtype=oxmera.bool).random_().dtype
    dtype('bool')
    """
    if not isinstance(self, Tensor):
        raise TypeError(f"random_(): expected a Tensor to modify, got {type(self).__name__}")
    if len(bounds) > 2:
        raise TypeError(f"random_(): takes from and to, got {len(bounds)} arguments")
    top = _integer_bounds(self.dtype)[1]
    if len(bounds) == 2:
        low, high = bounds
    elif len(bounds) == 1:
        low, high = (0, bounds[0]) if to is _UNSET else (bounds[0], to)
    else:
        low, high = 0, (None if to is _UNSET else to)
    low = _int_argument("random_", "from", low)
    high = top + 1 if high is None else _int_argument("random_", "to", high)
    rng = _rng(generator, "random_")
    _integers("random_", rng, (0,), self.dtype, low, high)      # the bound checks, no draw
    return _sample_into("random_", self, rng,
                        lambda: _integers("random_", rng, self.shape, self.dtype, low, high))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with exponential samples of rate ``lambd`` in place; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(1000, dtype=oxmera.float64).exponential_(4.0)
    >>> bool(x.min().item() >= 0)
    True
    """
    _check_float_self("exponential_", self)
    lambd = float(lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_(): expects lambda > 0.0, but found lambda={lambd}")
    rng = _rng(generator, "exponential_")
    return _sample_into("exponential_", self, rng,
                        lambda: rng.standard_exponential(self.shape) / lambd)


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy samples (``median``, scale ``sigma``) in place; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> oxmera.zeros(2, 2).cauchy_(1.0, 0.5).shape
    oxmera.Size([2, 2])
    """
    _check_float_self("cauchy_", self)
    median, sigma = float(median), float(sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_(): expects sigma > 0.0, but found sigma={sigma}")
    rng = _rng(generator, "cauchy_")
    return _sample_into("cauchy_", self, rng,
                        lambda: median + sigma * rng.standard_cauchy(self.shape))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with samples whose log is normal(``mean``, ``std``), in place; returns ``self``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(100).log_normal_(0.0, 1.0)
    >>> bool(x.min().item() > 0)
    True
    """
    _check_float_self("log_normal_", self)
    mean, std = float(mean), float(std)
    if not std > 0:
        raise RuntimeError(f"log_normal_(): expects std > 0.0, but found std={std}")
    rng = _rng(generator, "log_normal_")
    return _sample_into("log_normal_", self, rng,
                        lambda: np.exp(mean + std * rng.standard_normal(self.shape)))


def geometric_(self, p, *, generator=None):
    """Fill with geometric samples (trials up to the first success, >= 1) in place.

    Returns ``self``; integer and float dtypes.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.zeros(100, dtype=oxmera.int64).geometric_(0.5)
    >>> bool(x.min().item() >= 1)
    True
    """
    if not isinstance(self, Tensor):
        raise TypeError(f"geometric_(): expected a Tensor to modify, got {type(self).__name__}")
    if self.dtype.kind == "b":
        raise NotImplementedError("geometric_(): not implemented for dtype bool")
    p = float(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_(): expects p to be in (0, 1), but got p={p}")
    rng = _rng(generator, "geometric_")
    return _sample_into("geometric_", self, rng, lambda: rng.geometric(p, self.shape))


for _method in (uniform_, normal_, bernoulli_, random_, exponential_, cauchy_, log_normal_,
                geometric_, multinomial, bernoulli):
    _registry.add_tensor_attribute(_method.__name__, _method)
