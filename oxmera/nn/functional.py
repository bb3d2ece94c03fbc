"""``oxmera.nn.functional``: stateless neural-network functions.

Composed from oxmera ops where that is exact and stable, so their
gradients (to any order) come from the ops' VJPs; the ops with a fused VJP
of their own (and the reason for each) live in ``oxmera.ops.activation``
(softmax, log_softmax, softplus), ``.loss`` (binary_cross_entropy),
``.normalization`` and ``.conv``.

Names, argument names and defaults follow ``torch.nn.functional``. Losses
take ``reduction`` ``'none'``, ``'mean'`` or ``'sum'`` (and PyTorch's
deprecated ``size_average``/``reduce``); a bad input raises before anything
is computed or updated, with a message naming the function and the shapes
or dtypes involved.
"""
import math
import numbers
import warnings

import numpy as np

from oxmera import random as _random
from oxmera._core import _kernels
from oxmera._core import autograd as _core
from oxmera.ops import creation as _creation
from oxmera.ops.activation import *  # noqa: F403
from oxmera.ops.attention import *  # noqa: F403
from oxmera.nn._activation_functions import *  # noqa: F403
from oxmera.nn._more_functions import *  # noqa: F403
from oxmera.nn._loss_functions import *  # noqa: F403
from oxmera.nn._sampling_functions import *  # noqa: F403
from oxmera.ops.conv import *  # noqa: F403
from oxmera.ops.conv_transpose import *  # noqa: F403
from oxmera.ops.fold import *  # noqa: F403
from oxmera.ops.loss import *  # noqa: F403
from oxmera.ops.normalization import *  # noqa: F403
from oxmera.ops.pooling import *  # noqa: F403
from oxmera.ops import activation as _activation, blas as _blas, conv as _conv, loss as _loss
from oxmera.ops import attention as _attention
from oxmera.ops import conv_transpose as _conv_transpose, fold as _fold
from oxmera.nn import _activation_functions as _activation_functions
from oxmera.nn import _more_functions as _more_functions
from oxmera.nn import _loss_functions as _loss_functions
from oxmera.nn._embedding_functions import *  # noqa: F403
from oxmera.nn import _embedding_functions as _embedding_functions
from oxmera.nn import _sampling_functions as _sampling_functions
from oxmera.ops import normalization as _normalization
from oxmera.ops import pooling as _pooling
from oxmera.ops import elementwise as _elementwise
from oxmera.ops.activation import softplus
from oxmera.ops.elementwise import expm1, gt, rsqrt, sigmoid, tanh, where  # noqa: F401 (tanh: F.tanh)
from oxmera.ops._utils import accumulation_dtype
from oxmera.ops.loss import _check_reduction, _reduce, _sum_over
from oxmera.ops.shape import cat
from oxmera.nn._function_utils import apply_inplace as _apply, as_input as _tensor

_FUNCTIONS = ["linear", "relu", "relu_", "leaky_relu", "leaky_relu_", "elu", "elu_", "gelu",
              "silu", "softplus", "sigmoid", "tanh", "dropout", "layer_norm", "batch_norm",
              "embedding", "one_hot", "pad",
              "mse_loss", "l1_loss", "smooth_l1_loss", "nll_loss", "cross_entropy",
              "linear_cross_entropy", "binary_cross_entropy_with_logits"]

__all__ = [*_activation.__all__, *_activation_functions.__all__, *_attention.__all__,
           *_conv.__all__, *_conv_transpose.__all__, *_fold.__all__, *_loss.__all__,
           *_more_functions.__all__, *_normalization.__all__, *_sampling_functions.__all__,
           *_loss_functions.__all__, *_embedding_functions.__all__, *_pooling.__all__,
           *_FUNCTIONS]

Tensor = _core.Tensor
OpError = _core.OpError


# -- linear --------------------------------------------------------------------------------

def linear(input, weight, bias=None):
    """``input @ weight.T + bias``: weight is ``(out_features, in_features)`` as in PyTorch.

    A 1-D ``weight`` ``(in_features,)`` gives one output per row (no out dim).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.linear(oxmera.ones(2, 3), oxmera.ones(4, 3), oxmera.zeros(4)).shape
    oxmera.Size([2, 4])
    """
    input, weight = _tensor(input, "linear"), _tensor(weight, "linear", "weight")
    # (the arrays' shapes: tuples, where Size's slicing and + run in Python)
    in_shape, weight_shape = input._data.shape, weight._data.shape
    if len(weight_shape) not in (1, 2) or not in_shape or in_shape[-1] != weight_shape[-1]:
        raise OpError(f"linear(): input of shape {input.shape} and weight of shape "
                      f"{weight.shape} do not match: expected input (*, in_features) and weight "
                      f"(out_features, in_features) or (in_features,)")
    if bias is not None:
        bias = _tensor(bias, "linear", "bias")
        out_shape = in_shape[:-1] + weight_shape[:-1]
        bias_shape = bias._data.shape
        # One bias per output feature (nn.Linear's) broadcasts without asking
        # np.broadcast_shapes (3.5 us, a Python function).
        if bias_shape == weight_shape[:-1] or bias_shape == out_shape:
            broadcast = out_shape
        else:
            try:
                broadcast = np.broadcast_shapes(out_shape, bias_shape)
            except ValueError:
                broadcast = None
        if broadcast != out_shape:
            raise OpError(f"linear(): bias of shape {bias.shape} does not broadcast to the "
                          f"output shape {out_shape} (input {input.shape}, weight "
                          f"{weight.shape})")
    return _blas.linear(input, weight, bias)


# -- activations ---------------------------------------------------------------------------

def relu(input, inplace=False):
    """``max(x, 0)`` (``oxmera.relu``), with PyTorch's ``inplace`` flag.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.relu(oxmera.tensor([-1.0, 2.0]))
    tensor([0., 2.], dtype=float32)
    """
    return _apply(_elementwise.relu, input, inplace, "relu")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.leaky_relu(oxmera.tensor([-2.0, 3.0]), 0.5)
    tensor([-1.,  3.], dtype=float32)
    """
    def fn(x):
        return where(gt(x, 0), x, x * negative_slope)
    return _apply(fn, _tensor(input, "leaky_relu"), inplace, "leaky_relu")


def relu_(input):
    """In-place :func:`relu`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.relu_(oxmera.tensor([-1.0, 2.0]))
    tensor([0., 2.], dtype=float32)
    """
    return relu(input, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.leaky_relu_(oxmera.tensor([-2.0]), 0.5)
    tensor([-1.], dtype=float32)
    """
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.elu(oxmera.tensor([0.0, 2.0]))
    tensor([0., 2.], dtype=float32)
    """
    def fn(x):
        positive = gt(x, 0)
        # exp only of the non-positive part: exp of a large positive x would
        # be inf, and the zero gradient where() sends that branch, nan.
        return where(positive, x, expm1(where(positive, 0.0, x)) * alpha)
    return _apply(fn, _tensor(input, "elu"), inplace, "elu")


def elu_(input, alpha=1.0):
    """In-place :func:`elu`.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.elu_(oxmera.tensor([2.0]))
    tensor([2.], dtype=float32)
    """
    return elu(input, alpha, inplace=True)


gelu = _activation.gelu     # one op with a fused VJP (oxmera.ops.activation)


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (the swish activation).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.silu(oxmera.tensor([0.0, 1.0]))
    tensor([0.    , 0.7311], dtype=float32)
    """
    return _apply(lambda x: x * sigmoid(x), _tensor(input, "silu"), inplace, "silu")


# -- dropout -------------------------------------------------------------------------------

def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The mask comes from oxmera's generator (seeded by ``oxmera.manual_seed``);
    ``training=False`` (or ``p=0``) returns ``input`` itself, ``p=1`` zeros.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> _ = oxmera.manual_seed(0)
    >>> F.dropout(oxmera.ones(8), p=0.5)
    tensor([2., 0., 0., 0., 2., 2., 2., 2.], dtype=float32)
    >>> F.dropout(oxmera.ones(3), training=False)
    tensor([1., 1., 1.], dtype=float32)
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout(): dropout probability has to be between 0 and 1, but got {p}")
    input = _tensor(input, "dropout")
    if input.dtype.kind != "f":
        raise TypeError(f"dropout(): expected a floating point input, got dtype {input.dtype}")
    if not training or p == 0:
        return input
    if p == 1:
        mask = np.zeros(input.shape, input.dtype)
    else:
        keep = _random.numpy_generator(None, "dropout()").random(input.shape) >= p
        mask = keep * np.asarray(1.0 / (1.0 - p), dtype=input.dtype)
    mask = _core._wrap(mask.astype(input.dtype, copy=False))
    return _apply(lambda x: x * mask, input, inplace, "dropout")


# -- normalization -------------------------------------------------------------------------

def _shape_tuple(shape, opname, what):
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    try:
        return tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"{opname}(): {what} must be an int or a sequence of ints, got "
                        f"{shape!r}") from None


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalize over the trailing ``normalized_shape`` dims, then scale and shift.

    ``(x - mean) / sqrt(var + eps) * weight + bias``, with the biased variance
    over the last ``len(normalized_shape)`` dims.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.layer_norm(oxmera.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.,  1.]], dtype=float32)
    """
    input = _tensor(input, "layer_norm")
    shape = _shape_tuple(normalized_shape, "layer_norm", "normalized_shape")
    k = len(shape)
    if k == 0:
        raise OpError(f"layer_norm(): expected normalized_shape to be at least 1-dimensional, "
                      f"got normalized_shape {shape} (input of shape {input.shape})")
    if k > input.ndim or input.shape[input.ndim - k:] != shape:
        raise OpError(f"layer_norm(): normalized_shape {shape} expects an input of shape "
                      f"(*, {', '.join(map(str, shape))}), got input of shape {input.shape}")
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != shape:
            raise OpError(f"layer_norm(): {name} of shape {tuple(param.shape)} does not match "
                          f"normalized_shape {shape}")
    if input.dtype.kind != "f":
        raise TypeError(f"layer_norm(): expected a floating point input, got dtype {input.dtype}")
    # one op with a fused VJP (oxmera.ops.normalization)
    return _normalization._layer_norm(input, weight, bias, k, eps).output


def _widen(input, *others):
    """``input`` and ``others`` (tensors or None) in ``input``'s accumulation
    dtype (float32 for float16) when their own is narrower."""
    wide = accumulation_dtype(input.dtype)
    if wide == input.dtype:
        return (input, *others)
    return (input.to(wide), *(t.to(wide) if isinstance(t, Tensor) and t.dtype.itemsize
                              < wide.itemsize else t for t in others))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalize each channel (dim 1) of an ``(N, C)`` or ``(N, C, *)`` input.

    ``training=True`` uses the batch's mean and biased variance, and updates
    ``running_mean``/``running_var`` in place (when given) with ``momentum``:
    ``running = (1 - momentum) * running + momentum * batch_stat``, the
    variance unbiased, as in PyTorch. ``training=False`` normalizes with the
    running statistics.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[1.0, 2.0], [3.0, 6.0]])
    >>> mean, var = oxmera.zeros(2), oxmera.ones(2)
    >>> F.batch_norm(x, mean, var, training=True, eps=0.0)
    tensor([[-1., -1.],
            [ 1.,  1.]], dtype=float32)
    >>> mean
    tensor([0.2, 0.4], dtype=float32)
    >>> var
    tensor([1.1, 1.7], dtype=float32)
    """
    input = _tensor(input, "batch_norm")
    if input.ndim < 2:
        raise OpError(f"batch_norm(): expected an input of shape (N, C) or (N, C, *), got "
                      f"shape {input.shape}")
    if input.dtype.kind != "f":
        raise TypeError(f"batch_norm(): expected a floating point input, got dtype {input.dtype}")
    channels = input.shape[1]
    for name, param in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != (channels,):
            raise OpError(f"batch_norm(): {name} of shape {tuple(param.shape)} does not match "
                          f"the {channels} channels of the input of shape {input.shape}; "
                          f"expected shape ({channels},)")
    dims = (0,) + tuple(range(2, input.ndim))
    count = input.numel() // channels if channels else 0
    param_shape = (1, channels) + (1,) * (input.ndim - 2)
    if training and count == 1:
        raise ValueError(f"batch_norm(): expected more than 1 value per channel when "
                         f"training, got input of shape {input.shape}")
    if not training and (running_mean is None or running_var is None):
        raise ValueError("batch_norm(): running_mean and running_var must be given when "
                         "training=False (they are what evaluation normalizes with)")
    # float16 in float32, rounded once, as layer_norm.
    dtype = input.dtype
    input, weight, bias, saved_mean, saved_var = _widen(input, weight, bias, running_mean,
                                                        running_var)
    if training:
        mean = input.mean(dims, keepdim=True)
        centered = input - mean
        var = (centered * centered).mean(dims, keepdim=True)
        out = centered * rsqrt(var + eps)
        for running, stat, scale in ((running_mean, mean, 1.0),
                                     (running_var, var, count / (count - 1))):
            if running is not None:
                data = running._data
                batch = stat._data.reshape(channels) * scale
                data[...] = (1 - momentum) * data + momentum * batch
                running._bump_version()
    else:
        out = ((input - saved_mean.reshape(param_shape))
               * rsqrt(saved_var.reshape(param_shape) + eps))
    if weight is not None:
        out = out * weight.reshape(param_shape)
    if bias is not None:
        out = out + bias.reshape(param_shape)
    return out.to(dtype)


# -- embedding and one_hot -----------------------------------------------------------------

def _index_array(value, opname, what="input"):
    """The integer array behind an index tensor (TypeError naming the dtype otherwise)."""
    array = value._data if isinstance(value, Tensor) else np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{opname}(): expected an integer (int64) {what} tensor, got dtype "
                        f"{array.dtype}")
    return array


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer tensor ``input``: ``weight[input]``.

    Repeated indices accumulate their gradients; the gradient of row
    ``padding_idx`` stays zero (its output is still that row). ``max_norm``
    renormalizes, in place and as in PyTorch, the picked rows whose
    ``norm_type``-norm exceeds it. ``scale_grad_by_freq=True`` divides
    each row's gradient by the number of times its index occurs in
    ``input``. ``sparse=True`` (sparse gradients) is not supported.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> w = oxmera.arange(6.0).reshape(3, 2)
    >>> F.embedding(oxmera.tensor([2, 0]), w)
    tensor([[4., 5.],
            [0., 1.]], dtype=float32)
    """
    index = _index_array(input, "embedding")
    weight = _tensor(weight, "embedding", "weight")
    if weight.ndim != 2:
        raise OpError(f"embedding(): weight must be 2-D (num_embeddings, embedding_dim), got "
                      f"shape {weight.shape}")
    if sparse:
        raise NotImplementedError("embedding(): sparse=True (sparse gradients) is not "
                                  "supported; leave it False for dense gradients")
    num = weight.shape[0]
    if index.size and (index.min() < 0 or index.max() >= num):
        bad = index.min() if index.min() < 0 else index.max()
        raise IndexError(f"embedding(): index {bad} is out of range for a weight of shape "
                         f"{weight.shape} (indices of shape {index.shape})")
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise IndexError(f"embedding(): padding_idx {padding_idx} must be within "
                             f"num_embeddings {num}")
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
    if max_norm is not None:
        rows = np.unique(index)
        data = weight._data
        # In float32 for float16: a row of 300s and 400s has norm 500 but squares to inf.
        norms = np.linalg.norm(data[rows].astype(accumulation_dtype(data.dtype), copy=False),
                               ord=norm_type, axis=1)
        big = norms > max_norm
        if big.any():
            scale = max_norm / (norms[big] + 1e-7)
            data[rows[big]] *= scale[:, None].astype(data.dtype)
            weight._bump_version()
    index_tensor = _core._wrap(index)
    out = weight[index_tensor]
    if scale_grad_by_freq and out.requires_grad:
        # Each row's gradient divided by how often its index occurs in ``input``; the
        # values stay exactly weight[input] (out - out.detach() is exactly 0).
        rows, inverse, counts = np.unique(index, return_inverse=True, return_counts=True)
        scale = (1.0 / counts[inverse.reshape(index.shape)]).astype(weight.dtype)[..., None]
        constant = out.detach()
        out = constant + (out - constant) * _core._wrap(scale)
    if padding_idx is not None:
        padding = _core._wrap((index == padding_idx)[..., None])
        out = where(padding, out.detach(), out)
    return out


def one_hot(tensor, num_classes=-1):
    """Int64 one-hot encoding of the class indices in ``tensor``: shape ``(*, num_classes)``.

    ``num_classes=-1`` takes the largest index plus one. Not differentiable.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.one_hot(oxmera.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]], dtype=int64)
    """
    index = _index_array(tensor, "one_hot", "class-index")
    if num_classes == -1:
        if index.size == 0:
            raise ValueError(f"one_hot(): cannot infer the number of classes from an empty "
                             f"tensor of shape {index.shape}; pass num_classes")
        num_classes = int(index.max()) + 1
    if num_classes < 0:
        raise ValueError(f"one_hot(): num_classes must be -1 or non-negative, got {num_classes}")
    if index.size and index.min() < 0:
        raise ValueError(f"one_hot(): class values must be non-negative, got {index.min()}")
    if index.size and index.max() >= num_classes:
        raise ValueError(f"one_hot(): class values must be smaller than num_classes "
                         f"({num_classes}), got {index.max()}")
    out = (index[..., None] == np.arange(num_classes)).astype(np.int64)
    return _core._wrap(out)


# -- pad -----------------------------------------------------------------------------------

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_indices(mode, size, before, after, shape, dim):
    """Source index of each output position along one dim, for the non-constant modes.

    For 'reflect' and 'replicate', ``before``/``after`` may be negative: as
    in PyTorch, the output is then the padded original, cropped, so the
    mirror and the edge are the original dim's (a crop at one end does not
    move the other end's) and the limits are checked against the original
    size. 'circular' wraps what is left after cropping, as PyTorch does;
    ``pad`` crops first and passes the positive amounts.
    """
    if size + before + after < 0:
        raise OpError(f"pad(): input dim {dim} of size {size} is too small for mode {mode!r} "
                      f"with padding ({before}, {after}): calculated output size "
                      f"{size + before + after} (input of shape {shape})")
    if mode == "replicate":
        if size == 0:
            raise OpError(f"pad(): mode 'replicate' cannot pad dim {dim} of size 0 (input of "
                          f"shape {shape})")
        return np.clip(np.arange(-before, size + after), 0, size - 1)
    if mode == "reflect":
        if before >= size or after >= size:
            raise OpError(f"pad(): mode 'reflect' needs padding smaller than the dim: got "
                          f"({before}, {after}) for dim {dim} of size {size} (input of shape "
                          f"{shape})")
        positions = np.abs(np.arange(-before, size + after))
        return np.where(positions >= size, 2 * (size - 1) - positions, positions)
    if before > size or after > size:
        # PyTorch reads memory it never wrote there (wrapping more than once).
        raise OpError(f"pad(): mode 'circular' needs padding at most the dim (after any "
                      f"cropping): got ({before}, {after}) for dim {dim} of size {size} (input "
                      f"of shape {shape})")
    return np.arange(-before, size + after) % size


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the trailing dims of ``input``.

    ``pad`` lists ``(before, after)`` amounts from the last dim backwards, as
    in PyTorch: ``(1, 2)`` pads the last dim, ``(1, 1, 2, 2)`` the last two.
    ``mode``: ``'constant'`` (fill with ``value``, default 0), ``'reflect'``
    (mirror without repeating the edge), ``'replicate'`` (repeat the edge),
    ``'circular'`` (wrap around). The gradient of each input element sums
    over every output position it fills.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> x = oxmera.tensor([[1.0, 2.0, 3.0]])
    >>> F.pad(x, (1, 2))
    tensor([[0., 1., 2., 3., 0., 0.]], dtype=float32)
    >>> F.pad(x, (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]], dtype=float32)
    >>> F.pad(x, (1, 1), mode="replicate")
    tensor([[1., 1., 2., 3., 3.]], dtype=float32)
    """
    input = _tensor(input, "pad")
    if mode not in _PAD_MODES:
        raise ValueError(f"pad(): mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    try:
        amounts = [int(a) for a in pad]
    except TypeError:
        raise TypeError(f"pad(): pad must be a sequence of ints, got {pad!r}") from None
    if len(amounts) % 2:
        raise ValueError(f"pad(): the pad sequence must have an even length (before, after "
                         f"per dim), got {tuple(amounts)}")
    if len(amounts) // 2 > input.ndim:
        raise ValueError(f"pad(): pad {tuple(amounts)} pads {len(amounts) // 2} dims, but the "
                         f"input of shape {input.shape} has {input.ndim}")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f"pad(): mode {mode!r} takes no value argument, got value={value}")
    pairs = [(input.ndim - 1 - i, amounts[2 * i], amounts[2 * i + 1])
             for i in range(len(amounts) // 2)]
    # Check every dim first, so nothing is recorded for a call that fails.
    cropped = list(input.shape)
    for dim, before, after in pairs:
        if mode in ("reflect", "replicate"):
            _pad_indices(mode, input.shape[dim], before, after, input.shape, dim)
            continue
        cropped[dim] = input.shape[dim] + min(before, 0) + min(after, 0)
        if cropped[dim] < 0:
            raise OpError(f"pad(): cropping ({before}, {after}) is more than dim {dim} of size "
                          f"{input.shape[dim]} (input of shape {input.shape})")
        if mode == "circular":
            _pad_indices(mode, cropped[dim], max(before, 0), max(after, 0), input.shape, dim)
    if mode in ("reflect", "replicate") and pairs and all(
            input.shape[dim] + before + after == 0 for dim, before, after in pairs):
        raise OpError(f"pad(): input of shape {input.shape} is too small for mode {mode!r} with "
                      f"pad {tuple(amounts)}: every padded dim's output size is 0")
    out = input
    if mode in ("reflect", "replicate"):
        for dim, before, after in pairs:
            if before or after:
                index = _pad_indices(mode, input.shape[dim], before, after, input.shape, dim)
                out = out[(slice(None),) * dim + (index,)]
        return out
    if any(before < 0 or after < 0 for _, before, after in pairs):
        crop = [slice(None)] * input.ndim
        for dim, before, after in pairs:
            crop[dim] = slice(max(-before, 0), input.shape[dim] - max(-after, 0))
        out = out[tuple(crop)]
    for dim, before, after in pairs:
        before, after = max(before, 0), max(after, 0)
        if not before and not after:
            continue
        if mode == "circular":
            index = _pad_indices(mode, out.shape[dim], before, after, input.shape, dim)
            out = out[(slice(None),) * dim + (index,)]
            continue
        fill = 0 if value is None else value
        pieces = []
        for amount in (before, after):
            block = list(out.shape)
            block[dim] = amount
            pieces.append(_creation.full(tuple(block), fill, dtype=out.dtype))
        out = cat([pieces[0], out, pieces[1]], dim)
    return out


# -- losses --------------------------------------------------------------------------------

def _pair_shapes(input, target, opname):
    """Broadcast shape of an elementwise loss's input and target (PyTorch warns if unequal)."""
    if input.shape != target.shape:
        try:
            np.broadcast_shapes(input.shape, target.shape)
        except ValueError:
            raise OpError(f"{opname}(): target of shape {target.shape} does not broadcast "
                          f"with input of shape {input.shape}") from None
        warnings.warn(f"{opname}(): using a target shape {target.shape} that is different to "
                      f"the input shape {input.shape}; this will likely lead to incorrect "
                      f"results due to broadcasting. Please ensure they have the same shape.",
                      UserWarning, stacklevel=4)


def _elementwise_loss(opname, loss_fn, input, target, size_average, reduce, reduction, weight):
    reduction = _check_reduction(reduction, size_average, reduce, opname, stacklevel=4)
    input, target = _tensor(input, opname), _tensor(target, opname, "target")
    _pair_shapes(input, target, opname)
    if weight is not None and tuple(weight.shape) != input.shape:
        raise ValueError(f"{opname}(): weight of shape {tuple(weight.shape)} must have the "
                         f"input's shape {input.shape}")
    loss = loss_fn(input - target)
    if weight is None:
        return _reduce(loss, reduction)
    loss = loss * weight
    if reduction == "mean":
        return _sum_over(loss, weight)
    return _reduce(loss, reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Squared error ``(input - target) ** 2``, reduced.

    With ``weight`` (the input's shape) each error is weighted, and the mean
    is divided by the sum of the weights, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.mse_loss(oxmera.tensor([1.0, 2.0]), oxmera.tensor([0.0, 0.0]))
    tensor(2.5, dtype=float32)
    """
    return _elementwise_loss("mse_loss", lambda d: d * d, input, target, size_average, reduce,
                             reduction, weight)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Absolute error ``|input - target|``, reduced (``weight`` as in :func:`mse_loss`).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.l1_loss(oxmera.tensor([1.0, -3.0]), oxmera.tensor([0.0, 0.0]), reduction="sum")
    tensor(4., dtype=float32)
    """
    return _elementwise_loss("l1_loss", _elementwise.abs, input, target, size_average, reduce,
                             reduction, weight)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Huber-like loss: ``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta``.

    ``beta=0`` is the L1 loss.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.smooth_l1_loss(oxmera.tensor([0.5, 3.0]), oxmera.zeros(2), reduction="none")
    tensor([0.125, 2.5  ], dtype=float32)
    """
    if beta < 0:
        raise ValueError(f"smooth_l1_loss(): beta must be non-negative, got {beta}")

    def loss_fn(d):
        distance = _elementwise.abs(d)
        if beta == 0:
            return distance
        return where(distance < beta, d * d * (0.5 / beta), distance - 0.5 * beta)
    return _elementwise_loss("smooth_l1_loss", loss_fn, input, target, size_average, reduce,
                             reduction, None)


def _class_targets(input, target, weight, ignore_index, opname):
    """Check a class-index target; return what picking and weighting it needs.

    Returns ``(class_dim, picked_mask, target_weights, valid, index)``: the bool mask
    of the input's shape that is True at each non-ignored target class, the
    weight of each target (a Tensor, differentiable in ``weight``; None
    without ``weight``), the bool mask of non-ignored targets and the target
    indices (an array). When no target is ignored and there is no ``weight``,
    the masks are None: the fused ops pick the targets.
    """
    if input.ndim == 0:
        raise OpError(f"{opname}(): input must have a class dim: (C,), (N, C) or "
                      f"(N, C, d1, ...), got shape {input.shape}")
    if input.dtype.kind != "f":
        raise TypeError(f"{opname}(): expected a floating point input, got dtype {input.dtype}")
    index = target._data
    if index.dtype.kind not in "iu":
        raise TypeError(f"{opname}(): expected an integer (int64) class-index target for input "
                        f"of shape {input.shape}, got target of dtype {index.dtype} and shape "
                        f"{index.shape}")
    shape = input._data.shape      # (a tuple: Size's slicing and + run in Python)
    class_dim = 0 if len(shape) == 1 else 1
    expected = shape[:1] + shape[2:] if len(shape) > 1 else ()
    if index.shape != expected:
        raise OpError(f"{opname}(): target of shape {index.shape} does not match input of "
                      f"shape {input.shape}; expected a target of shape {expected} (the "
                      f"input's shape without the class dim {class_dim})")
    classes = shape[class_dim]
    if weight is not None and tuple(weight.shape) != (classes,):
        raise OpError(f"{opname}(): weight of shape {tuple(weight.shape)} must have one entry "
                      f"per class, shape ({classes},), for input of shape {input.shape}")
    if index.size and weight is None:
        # The common case, every target in range and none ignored (ignore_index
        # is -100 by default): one compiled pass over int64 targets checks it all,
        # else the ufuncs' reduce (not index.min()/max(), NumPy's Python wrappers).
        valid = _kernels.class_targets_valid(index, classes, ignore_index)
        if valid is None:
            low, high = np.minimum.reduce(index, axis=None), np.maximum.reduce(index, axis=None)
            valid = 0 <= low and high < classes and not low <= ignore_index <= high
        if valid:
            return class_dim, None, None, None, index
    valid = index != ignore_index
    if index.size and valid.all():
        # No target ignored: two reductions check the bounds.
        if index.min() < 0 or index.max() >= classes:
            bad = (index < 0) | (index >= classes)
            raise IndexError(f"{opname}(): target {index[bad].flat[0]} is out of bounds for "
                             f"{classes} classes (input of shape {input.shape})")
        if weight is None:
            return class_dim, None, None, None, index
        safe = index
        picked = safe[..., None] == np.arange(classes)
    else:
        bad = valid & ((index < 0) | (index >= classes))
        if bad.any():
            raise IndexError(f"{opname}(): target {index[bad].flat[0]} is out of bounds for "
                             f"{classes} classes (input of shape {input.shape})")
        safe = np.where(valid, index, 0)
        picked = (safe[..., None] == np.arange(classes)) & valid[..., None]
    if picked.ndim > 2:
        picked = np.moveaxis(picked, -1, class_dim)     # (N, d1, ..., C) -> (N, C, d1, ...)
    if weight is None:
        target_weights = None
    else:
        target_weights = weight[_core._wrap(safe)] * _core._wrap(valid.astype(weight.dtype))
    return class_dim, picked, target_weights, valid, index


def _nll(input, targets, reduction):
    """The negative log likelihood of ``input`` at the checked ``targets`` (see above).

    Also returns the mean's denominator for :func:`~oxmera.ops.loss._sum_over`
    (the target weights, or their count; None unless ``reduction='mean'``).
    """
    class_dim, picked, target_weights, valid, index = targets
    if picked is None:
        # Every target counts and none is weighted: one op (oxmera.ops.loss).
        loss = _loss.nll_class_indices(input, _core._wrap(index), class_dim, reduction)
        return loss, (float(index.size) if reduction == "mean" else None)
    # where(), not indexing or a product with a one-hot: exactly the picked
    # entries, and a zero gradient elsewhere even where input is -inf.
    loss = -where(_core._wrap(picked), input, 0.0).sum(class_dim)
    if target_weights is not None:
        loss = loss * target_weights
    if reduction == "mean":
        total = target_weights if target_weights is not None else float(valid.sum())
        return _sum_over(loss, total), total
    return _reduce(loss, reduction), None


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class-index targets, given log-probabilities.

    ``input`` is ``(C,)``, ``(N, C)`` or ``(N, C, d1, ...)`` (class dim 1);
    ``target`` holds class indices, shaped like ``input`` without the class
    dim. ``weight`` (``(C,)``) weights each target's class; targets equal to
    ``ignore_index`` count for nothing. ``'mean'`` divides by the summed
    weights of the targets not ignored (their number without ``weight``).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> logp = oxmera.tensor([[-1.0, -2.0], [-3.0, -4.0]])
    >>> F.nll_loss(logp, oxmera.tensor([1, 0]))
    tensor(2.5, dtype=float32)
    """
    reduction = _check_reduction(reduction, size_average, reduce, "nll_loss")
    input, target = _tensor(input, "nll_loss"), _tensor(target, "nll_loss", "target")
    targets = _class_targets(input, target, weight, ignore_index, "nll_loss")
    return _nll(input, targets, reduction)[0]


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross entropy between logits and class-index or class-probability targets.

    ``input`` holds unnormalized logits, ``(C,)``, ``(N, C)`` or
    ``(N, C, d1, ...)`` (class dim 1). A ``target`` of the input's shape holds
    class probabilities (floats); otherwise it holds class indices shaped like
    the input without the class dim. It is ``log_softmax`` (stable for logits
    of any magnitude) followed by the negative log likelihood, with
    ``label_smoothing`` mixing the target with the uniform distribution, and
    ``weight``/``ignore_index``/``reduction`` exactly as in PyTorch (for class
    indices, ``'mean'`` divides by the summed weights of the targets not
    ignored; for probabilities, by the number of samples).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> logits = oxmera.tensor([[0.0, 0.0], [1e4, 0.0]])
    >>> F.cross_entropy(logits, oxmera.tensor([0, 1]), reduction="none")
    tensor([6.9315e-01, 1.0000e+04], dtype=float32)
    """
    reduction = _check_reduction(reduction, size_average, reduce, "cross_entropy")
    input, target = _tensor(input, "cross_entropy"), _tensor(target, "cross_entropy", "target")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy(): label_smoothing must be between 0.0 and 1.0, got "
                         f"{label_smoothing}")
    if input.ndim == 0:
        raise OpError(f"cross_entropy(): input must have a class dim: (C,), (N, C) or "
                      f"(N, C, d1, ...), got shape {input.shape}")
    shape = input._data.shape      # (a tuple: Size's indexing runs in Python)
    class_dim = 0 if len(shape) == 1 else 1
    classes = shape[class_dim]
    weight_shape = [1] * len(shape)
    weight_shape[class_dim] = classes
    if target._data.shape == shape:
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction,
                                            label_smoothing, class_dim, tuple(weight_shape))
    # The target is checked before the log_softmax, so a bad call records nothing.
    targets = _class_targets(input, target, weight, ignore_index, "cross_entropy")
    if targets[1] is None and label_smoothing == 0:
        # Every target counts and none is weighted: one op (oxmera.ops.loss).
        # (target holds targets[4], the index array: no second tensor over it)
        return _loss.cross_entropy_class_indices(input, target, class_dim, reduction).output
    logp = _activation.log_softmax(input, class_dim)
    nll, total = _nll(logp, targets, reduction)
    if label_smoothing == 0:
        return nll
    weighted = logp if weight is None else logp * weight.reshape(tuple(weight_shape))
    smooth = -weighted.sum(class_dim)
    if targets[3] is not None:      # some targets ignored
        smooth = where(_core._wrap(targets[3]), smooth, 0.0)
    if reduction == "mean":
        smooth = _sum_over(smooth, total)
    else:
        smooth = _reduce(smooth, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / classes)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``, as
    PyTorch's ``linear_cross_entropy`` (its reference path).

    ``input`` is ``(in_features,)`` or ``(N, in_features)``; ``linear_weight``
    ``(C, in_features)`` or ``(C, d1, ..., dK, in_features)`` for a
    K-dimensional loss (logits ``(N, C, d1, ..., dK)``; batched input only),
    ``linear_bias`` the weight's shape without ``in_features``. A target of
    the logits' shape holds class probabilities (then ``ignore_index`` must
    be None); ``ignore_index=None`` means -100 for class indices. PyTorch's
    chunked path (``options``, a ``LinearCrossEntropyOptions``) is not
    provided: ``options`` must be None.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> w = oxmera.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> F.linear_cross_entropy(oxmera.tensor([[2.0, 0.0]]), w, oxmera.tensor([0]))
    tensor(0.2395, dtype=float32)
    """
    if options is not None:
        raise NotImplementedError("linear_cross_entropy(): the chunked path (options=...) is "
                                  "not supported by oxmera; pass options=None (the reference "
                                  "path, the same values)")
    input = _tensor(input, "linear_cross_entropy")
    linear_weight = _tensor(linear_weight, "linear_cross_entropy", "linear_weight")
    target = _tensor(target, "linear_cross_entropy", "target")
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {in_features} and {linear_weight.shape[-1]}, "
                           f"respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    if out_features:
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape(rows, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


def _cross_entropy_probabilities(input, target, weight, ignore_index, reduction,
                                 label_smoothing, class_dim, weight_shape):
    if target.dtype.kind != "f":
        raise TypeError(f"cross_entropy(): a target of the input's shape {input.shape} holds "
                        f"class probabilities and must be floating point, got dtype "
                        f"{target.dtype}; class indices have the shape without the class dim")
    if input.dtype.kind != "f":
        raise TypeError(f"cross_entropy(): expected a floating point input, got dtype "
                        f"{input.dtype}")
    classes = input.shape[class_dim]
    if weight is not None and tuple(weight.shape) != (classes,):
        raise OpError(f"cross_entropy(): weight of shape {tuple(weight.shape)} must have one "
                      f"entry per class, shape ({classes},), for input of shape {input.shape}")
    if ignore_index >= 0:
        raise ValueError(f"cross_entropy(): ignore_index ({ignore_index}) is not supported for "
                         f"class-probability targets")
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    logp = _activation.log_softmax(input, class_dim)
    if weight is not None:
        logp = logp * weight.reshape(weight_shape)
    loss = -(logp * target).sum(class_dim)
    if reduction == "mean":
        return _sum_over(loss, float(loss.numel()))
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Binary cross entropy of ``sigmoid(input)``, computed stably from the logits.

    ``(1 - y) * x + (1 + (pos_weight - 1) * y) * softplus(-x)``: no
    ``exp`` overflows and no ``log`` of 0, whatever the logits' magnitude.
    ``pos_weight`` weights the positive term (broadcast against the classes
    in the last dim), ``weight`` each element.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.binary_cross_entropy_with_logits(oxmera.tensor([0.0, -1e4]), oxmera.tensor([1.0, 1.0]),
    ...                                    reduction="none")
    tensor([6.9315e-01, 1.0000e+04], dtype=float32)
    """
    opname = "binary_cross_entropy_with_logits"
    reduction = _check_reduction(reduction, size_average, reduce, opname)
    input, target = _tensor(input, opname), _tensor(target, opname, "target")
    if target.shape != input.shape:
        raise ValueError(f"{opname}(): target of shape {target.shape} must have the input's "
                         f"shape {input.shape}")
    for name, param in (("weight", weight), ("pos_weight", pos_weight)):
        if param is None:
            continue
        try:
            shape = np.broadcast_shapes(input.shape, tuple(param.shape))
        except ValueError:
            shape = None
        if shape != input.shape:
            raise OpError(f"{opname}(): {name} of shape {tuple(param.shape)} does not broadcast "
                          f"to the input's shape {input.shape}")
    # softplus(-x) = log(1 + exp(-x)), by logaddexp: exact for any x (no
    # threshold shortcut).
    log_sigmoid_neg = softplus(-input, 1, math.inf)
    if pos_weight is None:
        loss = (1 - target) * input + log_sigmoid_neg
    else:
        loss = (1 - target) * input + ((pos_weight - 1) * target + 1) * log_sigmoid_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)
