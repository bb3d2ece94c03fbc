"""``oxmera.nn.init``: fill tensors in place with the standard initializations.

Names, arguments, defaults and formulas follow ``torch.nn.init``. Every
function writes into the tensor it is given under ``no_grad`` (so a leaf
Parameter can be initialized), bumps its version (``copy_``) and returns it.
Samples come from oxmera's global generator, the one ``oxmera.manual_seed``
reseeds, or from the ``oxmera.Generator`` (or ``numpy.random.Generator``)
passed as ``generator=``;
they are drawn in float64 and rounded to the tensor's dtype. The streams
differ from PyTorch's, so the values do too: the distributions are the
same.

What it leaves to others: the generators live in ``oxmera.random``;
the layers (``oxmera.nn.modules``) call these functions in their
``reset_parameters``.
"""
import math
import numbers
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.autograd import no_grad
from oxmera import random as _random

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "orthogonal_", "xavier_uniform_", "xavier_normal_",
           "kaiming_uniform_", "kaiming_normal_", "dirac_", "sparse_",
           # PyTorch's deprecated spellings (a FutureWarning, then the ``_`` function)
           "uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse", "dirac", "eye"]

Tensor = _core.Tensor


def _rng(generator):
    return _random.numpy_generator(generator, "nn.init")


def _check_tensor(tensor, fname):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fname}(): expected a Tensor to fill, got {type(tensor).__name__}")
    if tensor.dtype.kind != "f":
        raise TypeError(f"{fname}(): expected a floating point tensor, got dtype {tensor.dtype}")


def _write(tensor, values):
    """Copy ``values`` (an array of ``tensor``'s shape) into ``tensor``; return ``tensor``."""
    with no_grad():
        tensor.copy_(_core._wrap(np.asarray(values, dtype=tensor.dtype)))
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for an initialization followed by ``nonlinearity``.

    ===================  ==================================================
    nonlinearity         gain
    ===================  ==================================================
    linear, conv*d,      1
    conv_transpose*d,
    sigmoid
    tanh                 5 / 3
    relu                 sqrt(2)
    leaky_relu           sqrt(2 / (1 + negative_slope ** 2)), ``param`` is
                         the slope (default 0.01)
    selu                 3 / 4
    ===================  ==================================================

    Parameters
    ----------
    nonlinearity : str
        The name of the function, as in ``torch.nn.functional``.
    param : float, optional
        The negative slope of ``leaky_relu``.

    Examples
    --------
    >>> from oxmera.nn import init
    >>> init.calculate_gain("tanh")
    1.6666666666666667
    >>> round(init.calculate_gain("leaky_relu", 0.2), 4)
    1.3868
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, numbers.Real):
            negative_slope = param
        else:
            raise ValueError(f"calculate_gain(): negative_slope {param} is not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain(): unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor):
    """``(fan_in, fan_out)`` of a weight of shape ``(out, in, *kernel)``.

    ``fan_in = in * prod(kernel)``, ``fan_out = out * prod(kernel)``, as in
    PyTorch; a tensor of fewer than 2 dims has none (``ValueError``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.init import _calculate_fan_in_and_fan_out
    >>> _calculate_fan_in_and_fan_out(oxmera.empty(16, 3, 5, 5))
    (75, 400)
    """
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out can not be computed for a tensor with fewer than "
                         f"2 dimensions (got shape {tuple(tensor.shape)})")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode!r} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` with samples from the uniform distribution on ``[a, b)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> w = init.uniform_(oxmera.empty(1000), -2.0, 2.0)
    >>> bool((w >= -2).all() and (w < 2).all())
    True
    """
    _check_tensor(tensor, "uniform_")
    if not a <= b:
        raise ValueError(f"uniform_(): expects a <= b, got a={a}, b={b}")
    return _write(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` with samples from the normal distribution ``N(mean, std**2)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> w = init.normal_(oxmera.empty(10000), mean=3.0, std=0.5)
    >>> round(w.mean().item(), 1), round(w.std().item(), 1)
    (3.0, 0.5)
    """
    _check_tensor(tensor, "normal_")
    if std < 0:
        raise ValueError(f"normal_(): std must be non-negative, got {std}")
    return _write(tensor, _rng(generator).normal(mean, std, tensor.shape))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill ``tensor`` from ``N(mean, std**2)`` truncated to ``[a, b]``.

    ``a`` and ``b`` are absolute bounds (not in units of ``std``), as in
    PyTorch. Samples outside are redrawn; when the interval holds little of
    the distribution, the rest come from the inverse normal CDF.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> w = init.trunc_normal_(oxmera.empty(1000), std=0.02, a=-0.04, b=0.04)
    >>> bool((w.abs() <= 0.04).all())
    True
    """
    _check_tensor(tensor, "trunc_normal_")
    if std <= 0 or not a < b:
        raise ValueError(f"trunc_normal_(): expects std > 0 and a < b, got std={std}, a={a}, "
                         f"b={b}")
    rng = _rng(generator)
    n = math.prod(tensor.shape)
    import statistics   # here, not at import: it loads decimal and fractions (~0.5 MB)
    dist = statistics.NormalDist(mean, std)
    mass = dist.cdf(b) - dist.cdf(a)
    values = np.empty(n)
    todo = np.arange(n)
    # Rejection: each round keeps a fraction `mass` of its draws.
    for _ in range(8 if mass > 0.25 else 0):
        if not todo.size:
            break
        draws = rng.normal(mean, std, todo.size)
        ok = (draws >= a) & (draws <= b)
        values[todo[ok]] = draws[ok]
        todo = todo[~ok]
    if todo.size:
        low, high = dist.cdf(a), dist.cdf(b)
        u = rng.uniform(low, high, todo.size)
        values[todo] = [dist.inv_cdf(min(max(p, 1e-300), 1 - 1e-16)) for p in u]
    return _write(tensor, np.clip(values, a, b).reshape(tensor.shape))


def constant_(tensor, val):
    """Fill ``tensor`` with the value ``val``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> init.constant_(oxmera.empty(3), 0.5)
    tensor([0.5, 0.5, 0.5], dtype=float32)
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"constant_(): expected a Tensor to fill, got {type(tensor).__name__}")
    with no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor):
    """Fill ``tensor`` with ones.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> init.ones_(oxmera.empty(2))
    tensor([1., 1.], dtype=float32)
    """
    return constant_(tensor, 1)


def zeros_(tensor):
    """Fill ``tensor`` with zeros.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> init.zeros_(oxmera.empty(2))
    tensor([0., 0.], dtype=float32)
    """
    return constant_(tensor, 0)


def eye_(tensor):
    """Fill the 2-D ``tensor`` with the identity matrix (ones on the main diagonal).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> init.eye_(oxmera.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]], dtype=float32)
    """
    _check_tensor(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError(f"eye_(): only tensors with 2 dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    return _write(tensor, np.eye(*tensor.shape))


def orthogonal_(tensor, gain=1, generator=None):
    """Fill ``tensor`` with a (semi-)orthogonal matrix, times ``gain``.

    The tensor is seen as a matrix of ``shape[0]`` rows (the other dims
    flattened); its rows (or columns, whichever are fewer) come out
    orthonormal. Drawn as in PyTorch: the QR decomposition of a Gaussian
    matrix, signs fixed by the diagonal of R.

    Examples
    --------
    >>> import numpy as np, oxmera
    >>> from oxmera.nn import init
    >>> w = init.orthogonal_(oxmera.empty(3, 5)).numpy()
    >>> np.allclose(w @ w.T, np.eye(3), atol=1e-6)
    True
    """
    _check_tensor(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_(): only tensors with 2 or more dimensions are supported, "
                         f"got shape {tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flattened = _rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flattened = flattened.T
    q, r = np.linalg.qr(flattened)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write(tensor, (q * gain).reshape(tensor.shape))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot initialization: ``U(-a, a)``, ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import math, oxmera
    >>> from oxmera.nn import init
    >>> w = init.xavier_uniform_(oxmera.empty(200, 100))
    >>> bool(w.abs().max().item() <= math.sqrt(6 / 300))
    True
    """
    _check_tensor(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot initialization: ``N(0, std**2)``, ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> w = init.xavier_normal_(oxmera.empty(400, 400))
    >>> round(w.std().item(), 2)
    0.05
    """
    _check_tensor(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity, fname):
    _check_tensor(tensor, fname)
    if 0 in tensor.shape:
        warnings.warn(f"{fname}(): initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return gain / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialization: ``U(-bound, bound)``, ``bound = gain * sqrt(3 / fan)``.

    ``gain = calculate_gain(nonlinearity, a)`` (``a``: the negative slope of
    a following leaky ReLU); ``fan`` is ``fan_in`` (preserves the forward
    pass's variance) or ``fan_out`` (the backward's), as ``mode`` says.
    ``Linear`` and ``Conv*d`` weights start from
    ``kaiming_uniform_(w, a=math.sqrt(5))``, PyTorch's default, which is
    ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> w = init.kaiming_uniform_(oxmera.empty(64, 16), mode="fan_in", nonlinearity="relu")
    >>> bool(w.abs().max().item() <= (2 ** 0.5) * (3 / 16) ** 0.5)
    True
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He initialization: ``N(0, std**2)``, ``std = gain / sqrt(fan)``.

    Arguments as in :func:`kaiming_uniform_`.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> w = init.kaiming_normal_(oxmera.empty(500, 200), nonlinearity="relu")
    >>> round(w.std().item(), 2)
    0.1
    """
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def dirac_(tensor, groups=1):
    """Fill the 3-, 4- or 5-D ``tensor`` with the Dirac delta: a convolution with it is
    the identity on as many channels as possible (per group, for ``groups > 1``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> init.dirac_(oxmera.empty(2, 2, 3))
    tensor([[[0., 1., 0.],
             [0., 0., 0.]],
    <BLANKLINE>
            [[0., 0., 0.],
             [0., 1., 0.]]], dtype=float32)
    """
    _check_tensor(tensor, "dirac_")
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_(): only tensors with 3, 4, or 5 dimensions are supported, "
                         f"got shape {tuple(tensor.shape)}")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError(f"dirac_(): dim 0 must be divisible by groups, got size {sizes[0]} "
                         f"and groups={groups}")
    out_per_group = sizes[0] // groups
    values = np.zeros(sizes)
    centre = tuple(size // 2 for size in sizes[2:])
    for d in range(min(out_per_group, sizes[1])):
        for g in range(groups):
            values[(g * out_per_group + d, d) + centre] = 1
    return _write(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill the 2-D ``tensor`` from ``N(0, std**2)``, then zero ``ceil(sparsity * rows)``
    entries of every column (rows picked at random), as in Martens (2010).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn import init
    >>> w = init.sparse_(oxmera.empty(10, 4), sparsity=0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3, 3]
    """
    _check_tensor(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError(f"sparse_(): only tensors with 2 dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    rng = _rng(generator)
    values = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[:num_zeros], col] = 0
    return _write(tensor, values)


_EXAMPLE_ARGS = {"dirac": "oxmera.empty(3, 3, 3)", "sparse": "oxmera.empty(3, 3), 0.5",
                 "constant": "oxmera.empty(3, 3), 0.5"}


def _deprecated(new):
    old = new.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    deprecated_init.__name__ = old
    deprecated_init.__qualname__ = old
    deprecated_init.__doc__ = f"""Deprecated spelling of :func:`{new.__name__}` (a FutureWarning,
    as in PyTorch).

    Examples
    --------
    >>> import warnings, oxmera
    >>> from oxmera.nn import init
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = init.{old}({_EXAMPLE_ARGS.get(old, 'oxmera.empty(3, 3)')})
    >>> caught[0].category.__name__
    'FutureWarning'
    """
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
dirac = _deprecated(dirac_)
eye = _deprecated(eye_)
