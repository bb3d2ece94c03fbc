"""More of ``torch.nn.functional``, composed from recorded ops: channel dropout and alpha
dropout, normalizations (normalize, group_norm, instance_norm, rms_norm,
local_response_norm) and distances (cosine_similarity, pairwise_distance).

Each is a composition, so its gradients to any order come from the ops'
VJPs; float16 inputs are normalized in float32 and rounded once, as
``layer_norm`` does.
"""
import numpy as np

from oxmera import random as _random
from oxmera._core import autograd as _core
from oxmera.autograd import no_grad
from oxmera.nn._function_utils import apply_inplace, as_input
from oxmera.ops import creation as _creation
from oxmera.ops._utils import accumulation_dtype
from oxmera.ops.elementwise import clamp, rsqrt, sqrt
from oxmera.ops.reduce import sum as _sum
from oxmera.ops.shape import cat

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
           "normalize", "group_norm", "instance_norm", "rms_norm", "local_response_norm",
           "cosine_similarity", "pairwise_distance"]

OpError = _core.OpError

# -alpha * scale of SELU: where alpha dropout sends a dropped unit.
_ALPHA_PRIME = -1.7580993408473766


def _float_input(input, opname):
    input = as_input(input, opname)
    if input.dtype.kind != "f":
        raise TypeError(f"{opname}(): expected a floating point input, got dtype {input.dtype}")
    return input


def _check_p(p, opname):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{opname}(): dropout probability has to be between 0 and 1, but "
                         f"got {p}")


def _keep_mask(shape, p, dtype, opname):
    """A 0/1 array of ``shape``: 1 with probability ``1 - p``, from the default generator."""
    keep = _random.numpy_generator(None, f"{opname}()").random(shape) >= p
    return keep.astype(dtype)


# -- dropout of whole channels, and alpha dropout ------------------------------------------

def _feature_dropout(input, p, training, inplace, batched_ndim, opname, shape_text):
    _check_p(p, opname)
    input = _float_input(input, opname)
    if input.ndim not in (batched_ndim, batched_ndim - 1):
        raise RuntimeError(f"{opname}(): expected {batched_ndim - 1}D or {batched_ndim}D input "
                           f"({shape_text}), got shape {tuple(input.shape)}")
    if not training or p == 0:
        return input
    # One draw per channel: (N, C, 1, ...) batched, (C, 1, ...) unbatched.
    lead = 2 if input.ndim == batched_ndim else 1
    shape = tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    mask = _core._wrap(_keep_mask(shape, p, input.dtype, opname) * np.asarray(scale, input.dtype))
    return apply_inplace(lambda x: x * mask, input, inplace, opname)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an ``(N, C, L)`` or ``(C, L)`` input with probability ``p``,
    scaling the rest by ``1 / (1 - p)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> out = F.dropout1d(oxmera.ones(2, 50, 3), p=0.5)
    >>> sorted(set(out.numpy().reshape(100, 3).std(1).tolist()))   # a channel is all or nothing
    [0.0]
    """
    return _feature_dropout(input, p, training, inplace, 3, "dropout1d", "(N, C, L) or (C, L)")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an ``(N, C, H, W)`` or ``(C, H, W)`` input with probability
    ``p``, scaling the rest by ``1 / (1 - p)``.

    A 3-D input is taken as unbatched ``(C, H, W)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.dropout2d(oxmera.ones(1, 2, 2, 2), training=False).shape
    oxmera.Size([1, 2, 2, 2])
    """
    return _feature_dropout(input, p, training, inplace, 4, "dropout2d",
                            "(N, C, H, W) or (C, H, W)")


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of an ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.dropout3d(oxmera.ones(1, 2, 2, 2, 2), p=1.0).sum().item()
    0.0
    """
    return _feature_dropout(input, p, training, inplace, 5, "dropout3d",
                            "(N, C, D, H, W) or (C, D, H, W)")


def _alpha_dropout(input, p, training, inplace, mask_shape, opname):
    _check_p(p, opname)
    input = _float_input(input, opname)
    if not training or p == 0:
        return input
    if p == 1:
        return apply_inplace(lambda x: x * 0.0, input, inplace, opname)
    # Keeps SELU's fixed point: mean 0 and variance 1 stay so after dropout.
    a = ((1 - p) * (1 + p * _ALPHA_PRIME ** 2)) ** -0.5
    b = -a * _ALPHA_PRIME * p
    keep = _keep_mask(mask_shape(input), p, input.dtype, opname)
    scale = _core._wrap((keep * a).astype(input.dtype))
    shift = _core._wrap(((1 - keep) * (a * _ALPHA_PRIME) + b).astype(input.dtype))
    return apply_inplace(lambda x: x * scale + shift, input, inplace, opname)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped units take SELU's negative saturation, and an
    affine correction keeps mean and variance.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> _ = oxmera.manual_seed(0)
    >>> out = F.alpha_dropout(oxmera.randn(100000), p=0.2, training=True)
    >>> abs(out.mean().item()) < 0.02, abs(out.std().item() - 1) < 0.02
    (True, True)
    """
    return _alpha_dropout(input, p, training, inplace, lambda x: x.shape, "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1 of a batched input).

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.feature_alpha_dropout(oxmera.ones(2, 3, 4), training=False).shape
    oxmera.Size([2, 3, 4])
    """
    def mask_shape(x):
        if x.ndim < 2:
            raise RuntimeError(f"feature_alpha_dropout(): expected an input of at least 2 "
                               f"dims (N, C, *), got shape {tuple(x.shape)}")
        return tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
    return _alpha_dropout(input, p, training, inplace, mask_shape, "feature_alpha_dropout")


# -- normalizations --------------------------------------------------------------------------

def _widened(x):
    """``x`` in float32 if float16 (statistics overflow float16), else itself."""
    wide = accumulation_dtype(x.dtype)
    return x if wide == x.dtype else x.to(wide)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.normalize(oxmera.tensor([[3.0, 4.0]]))
    tensor([[0.6, 0.8]], dtype=float32)
    """
    if out is not None:
        raise TypeError("normalize(): out= is not supported by oxmera; use the returned tensor")
    input = _float_input(input, "normalize")
    norm = input.norm(p, dim, keepdim=True)
    return input / clamp(norm, min=eps)


def _affine(out, weight, bias, channel_dim, opname):
    """``out * weight + bias`` per channel (``channel_dim``), where given."""
    shape = [1] * out.ndim
    shape[channel_dim] = out.shape[channel_dim]
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != (out.shape[channel_dim],):
            raise OpError(f"{opname}(): {name} of shape {tuple(param.shape)} does not match the "
                          f"{out.shape[channel_dim]} channels of the input")
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize each group of ``C / num_groups`` channels of an ``(N, C, *)`` input over
    its channels and positions, then scale and shift each channel.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> out = F.group_norm(oxmera.randn(2, 4, 5), num_groups=2)
    >>> round(out[0, :2].mean().item(), 5), round(out[0, :2].var(correction=0).item(), 3)
    (0.0, 1.0)
    """
    input = _float_input(input, "group_norm")
    if input.ndim < 2:
        raise RuntimeError(f"group_norm(): expected an input of at least 2 dims (N, C, *), got "
                           f"shape {tuple(input.shape)}")
    batch, channels = input.shape[:2]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(f"group_norm(): expected number of channels in input ({channels}) "
                           f"to be divisible by num_groups ({num_groups})")
    x = _widened(input)
    grouped = x.reshape(batch, num_groups, -1)
    centered = grouped - grouped.mean(-1, keepdim=True)
    var = (centered * centered).mean(-1, keepdim=True)
    out = (centered * rsqrt(var + eps)).reshape(input.shape)
    return _affine(out, weight, bias, 1, "group_norm").to(input.dtype)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample of an ``(N, C, *)`` input over its positions.

    With ``use_input_stats`` (training, or no running statistics kept) the
    statistics are each instance's own, and ``running_mean``/``running_var``
    (when given) are updated in place with their batch averages (the
    variance unbiased) and ``momentum``; otherwise the running statistics
    normalize.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> out = F.instance_norm(oxmera.randn(2, 3, 10))
    >>> round(out[1, 2].mean().item(), 5)
    0.0
    """
    input = _float_input(input, "instance_norm")
    if input.ndim < 3:
        raise RuntimeError(f"instance_norm(): expected an input of at least 3 dims (N, C, *), "
                           f"got shape {tuple(input.shape)}")
    dims = tuple(range(2, input.ndim))
    x = _widened(input)
    if use_input_stats:
        mean = x.mean(dims, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dims, keepdim=True)
        _update_running(running_mean, running_var, mean, var, input, dims, momentum)
        out = centered * rsqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("instance_norm(): expected running_mean and running_var when "
                               "use_input_stats is False")
        shape = (1, input.shape[1]) + (1,) * len(dims)
        out = (x - running_mean.reshape(shape)) * rsqrt(running_var.reshape(shape) + eps)
    return _affine(out, weight, bias, 1, "instance_norm").to(input.dtype)


def _update_running(running_mean, running_var, mean, var, input, dims, momentum):
    count = int(np.prod([input.shape[d] for d in dims]))
    for running, stat, correction in ((running_mean, mean, 1.0),
                                      (running_var, var, count / max(count - 1, 1))):
        if running is None:
            continue
        batch_average = stat.detach().numpy().reshape(input.shape[0], input.shape[1]).mean(0)
        new = (1 - momentum) * running.numpy(force=True) + momentum * correction * batch_average
        with no_grad():
            running.copy_(_core._wrap(new.astype(running.dtype)))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps) * weight`` over the last ``len(normalized_shape)``
    dims; ``eps`` defaults to the dtype's machine epsilon, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.rms_norm(oxmera.tensor([[3.0, 4.0]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]], dtype=float32)
    """
    input = _float_input(input, "rms_norm")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k > input.ndim or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"rms_norm(): normalized_shape {list(shape)} expects an input of "
                           f"shape [*, {', '.join(map(str, shape))}], but got input of size "
                           f"{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"rms_norm(): weight of shape {tuple(weight.shape)} does not match "
                           f"normalized_shape {shape}")
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    x = _widened(input)
    out = x * rsqrt((x * x).mean(dims, keepdim=True) + eps)
    if weight is not None:
        out = out * weight
    return out.to(input.dtype)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha * mean of x**2 over `size` neighbouring channels) ** beta``.

    The window is centered on each channel (``size // 2`` before,
    ``(size - 1) // 2`` after) and counts positions past the edges as
    zeros, as PyTorch's does.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.local_response_norm(oxmera.ones(1, 3, 1), size=2, alpha=1.0, beta=1.0, k=0.0)
    tensor([[[2.],
             [1.],
             [1.]]], dtype=float32)
    """
    input = _float_input(input, "local_response_norm")
    if input.ndim < 3:
        raise ValueError(f"local_response_norm(): expected 3D or higher dimensional input "
                         f"(got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    squares = input * input
    rest = tuple(input.shape[2:])
    padded = cat([_creation.zeros(input.shape[0], size // 2, *rest, dtype=input.dtype), squares,
                  _creation.zeros(input.shape[0], (size - 1) // 2, *rest, dtype=input.dtype)], 1)
    # The window's sum: one slice of the padded squares per offset.
    window = padded[:, 0:channels]
    for offset in range(1, size):
        window = window + padded[:, offset:offset + channels]
    return input / ((window * (alpha / size) + k) ** beta)


# -- distances --------------------------------------------------------------------------------

def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (broadcasting):
    each divided by ``max(its norm, eps)``, then their dot product.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.cosine_similarity(oxmera.tensor([[1.0, 0.0]]), oxmera.tensor([[1.0, 1.0]]))
    tensor([0.7071], dtype=float32)
    """
    x1 = _float_input(x1, "cosine_similarity")
    x2 = _float_input(x2, "cosine_similarity")
    try:
        np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise RuntimeError(f"cosine_similarity(): x1 of shape {tuple(x1.shape)} and x2 of "
                           f"shape {tuple(x2.shape)} do not broadcast") from None
    n1 = clamp(sqrt(_sum(x1 * x1, dim, keepdim=True)), min=eps)
    n2 = clamp(sqrt(_sum(x2 * x2, dim, keepdim=True)), min=eps)
    return _sum((x1 / n1) * (x2 / n2), dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dim (broadcasting), as PyTorch's.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> F.pairwise_distance(oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.], dtype=float32)
    """
    x1 = _float_input(x1, "pairwise_distance")
    x2 = _float_input(x2, "pairwise_distance")
    difference = x1 - x2 + eps
    if difference.ndim == 0:
        difference = difference.reshape(1)
    return difference.norm(p, -1, keepdim=keepdim)
