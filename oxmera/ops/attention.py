"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both are composed from recorded ops (matmul, softmax, where, dropout), so
their gradients, to any order, come from those ops' VJPs. Masks follow
PyTorch, whose two functions read boolean masks the opposite way round:
for ``scaled_dot_product_attention`` True means "may attend", for
``multi_head_attention_forward`` (and ``nn.MultiheadAttention``) True means
"masked out". Float masks are added to the scores in both.

A row of scores that is masked out entirely gives zeros in
``scaled_dot_product_attention`` (PyTorch's safe softmax) and NaN in
``multi_head_attention_forward`` when its weights are asked for (a plain
softmax, as PyTorch's), never a NaN gradient in the rows that are not.
"""
import math

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops import creation as _creation
from oxmera.ops.activation import softmax
from oxmera.ops.elementwise import add, where
from oxmera.ops.linalg import matmul
from oxmera.ops.shape import cat

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

Tensor = _core.Tensor
_NEG_INF = float("-inf")


def _as_tensor(value, opname, what):
    if isinstance(value, Tensor):
        return value
    if value is None:
        raise TypeError(f"{opname}(): {what} must be a Tensor, got None")
    return _creation.as_tensor(value)


def _bool_mask_to_float(mask, dtype, allowed_when):
    """A bool mask as an additive float mask: 0 where attention goes, -inf elsewhere."""
    keep = mask._data if allowed_when else ~mask._data
    return _core._wrap(np.where(keep, 0.0, _NEG_INF).astype(dtype))


def _safe_softmax(scores):
    """softmax over the last dim; a row that is all -inf gives zeros (not NaN).

    The row's scores are replaced by zeros before the softmax, so neither its
    values nor its gradients pass through a NaN.
    """
    dead = np.all(np.isneginf(scores._data), axis=-1, keepdims=True)
    if not dead.any():
        return softmax(scores, -1)
    dead_t = _core._wrap(dead)
    return where(dead_t, 0.0, softmax(where(dead_t, 0.0, scores), -1))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """Attention ``softmax(query @ key^T * scale + mask) @ value``, as PyTorch's.

    Parameters
    ----------
    query : Tensor
        ``(..., L, E)``.
    key, value : Tensor
        ``(..., S, E)`` and ``(..., S, Ev)``; batch dims broadcast.
    attn_mask : Tensor, optional
        ``(L, S)`` or broadcastable to ``(..., L, S)``: bool (True: may
        attend) or float (added to the scores).
    dropout_p : float
        Dropout on the attention weights (applied whenever it is > 0, as in
        PyTorch: pass 0.0 outside training).
    is_causal : bool
        Attend only to positions at or before one's own (the lower-left
        triangle of the ``(L, S)`` scores); not together with ``attn_mask``.
    scale : float, optional
        ``1 / sqrt(E)`` by default.
    enable_gqa : bool
        Grouped-query attention: ``query`` may have a multiple of ``key``'s
        heads (dim -3); each key/value head serves that many query heads.

    Returns
    -------
    Tensor
        ``(..., L, Ev)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> q, k, v = oxmera.randn(2, 4, 8), oxmera.randn(2, 6, 8), oxmera.randn(2, 6, 3)
    >>> F.scaled_dot_product_attention(q, k, v).shape
    oxmera.Size([2, 4, 3])
    >>> out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    >>> out[:, 0].tolist() == q[:, 0].tolist()       # the first position sees only itself
    True
    """
    opname = "scaled_dot_product_attention"
    query = _as_tensor(query, opname, "query")
    key = _as_tensor(key, opname, "key")
    value = _as_tensor(value, opname, "value")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(f"{opname}(): query, key and value need at least 2 dims (..., L, E), "
                           f"got shapes {tuple(query.shape)}, {tuple(key.shape)}, "
                           f"{tuple(value.shape)}")
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"{opname}(): query (..., L, E) {tuple(query.shape)}, key (..., S, E) "
                           f"{tuple(key.shape)} and value (..., S, Ev) {tuple(value.shape)} do "
                           f"not fit")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{opname}(): dropout_p must be in [0, 1], got {dropout_p}")
    if is_causal and attn_mask is not None:
        raise RuntimeError(f"{opname}(): an explicit attn_mask should not be set when "
                           f"is_causal=True (make the causal mask part of attn_mask)")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        key, value = (_repeat_heads(t, query.shape[-3], opname) for t in (key, value))
    length, source = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    scores = matmul(query * scale, key.transpose(-2, -1))
    if is_causal:
        causal = np.tril(np.ones((length, source), dtype=bool))
        scores = add(scores, _bool_mask_to_float(_core._wrap(causal), scores.dtype, True))
    if attn_mask is not None:
        attn_mask = _as_tensor(attn_mask, opname, "attn_mask")
        if attn_mask.dtype == np.bool_:
            attn_mask = _bool_mask_to_float(attn_mask, scores.dtype, True)
        try:
            np.broadcast_shapes(tuple(attn_mask.shape), tuple(scores.shape))
        except ValueError:
            raise RuntimeError(f"{opname}(): attn_mask of shape {tuple(attn_mask.shape)} does "
                               f"not broadcast to the scores' shape {tuple(scores.shape)} "
                               f"(..., L, S)") from None
        scores = add(scores, attn_mask)
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    return matmul(weights, value)


def _dropout(weights, p):
    # nn.functional's dropout (one mask-drawing rule for the library), imported
    # at the call: nn.functional re-exports this module.
    from oxmera.nn.functional import dropout
    return dropout(weights, p, training=True)


def _repeat_heads(t, heads, opname):
    """Each of ``t``'s heads (dim -3) repeated for ``heads / t.heads`` query heads in a row."""
    own = t.shape[-3]
    if heads % own:
        raise RuntimeError(f"scaled_dot_product_attention(): with enable_gqa, the query's "
                           f"{heads} heads must be a multiple of the key's and value's {own}")
    group = heads // own
    batch = tuple(t.shape[:-3])
    return (t.unsqueeze(-3).expand(*batch, own, group, *t.shape[-2:])
            .reshape(*batch, heads, *t.shape[-2:]))


def _canonical_mask(mask, name, dtype):
    """A MultiheadAttention mask as an additive float mask (bool: True is masked out)."""
    if mask is None:
        return None
    mask = _as_tensor(mask, "multi_head_attention_forward", name)
    if mask.dtype == np.bool_:
        return _bool_mask_to_float(mask, dtype, False)
    if mask.dtype.kind != "f":
        raise TypeError(f"multi_head_attention_forward(): only bool and floating types of "
                        f"{name} are supported, got {mask.dtype}")
    return mask


def _project(x, weight, bias):
    out = matmul(x, weight.transpose(0, 1))
    return out if bias is None else out + bias


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """The computation of ``nn.MultiheadAttention``, as PyTorch's function of that name.

    Inputs are sequence-first: ``query`` ``(L, N, E)`` (or unbatched
    ``(L, E)``), ``key``/``value`` ``(S, N, E)``. Boolean masks mark what is
    masked out (True), float masks are added to the scores;
    ``key_padding_mask`` is ``(N, S)``, ``attn_mask`` ``(L, S)`` or
    ``(N * num_heads, L, S)``.

    Returns
    -------
    (Tensor, Tensor or None)
        The output ``(L, N, E)``, and the attention weights ``(N, L, S)``
        (averaged over heads) or ``(N, num_heads, L, S)`` when
        ``need_weights``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> E, H = 4, 2
    >>> x = oxmera.randn(3, 1, E)
    >>> w, b = oxmera.randn(3 * E, E), oxmera.zeros(3 * E)
    >>> out, weights = F.multi_head_attention_forward(
    ...     x, x, x, E, H, w, b, None, None, False, 0.0, oxmera.eye(E), oxmera.zeros(E))
    >>> out.shape, weights.shape
    (oxmera.Size([3, 1, 4]), oxmera.Size([1, 3, 3]))
    """
    opname = "multi_head_attention_forward"
    query = _as_tensor(query, opname, "query")
    key = _as_tensor(key, opname, "key")
    value = _as_tensor(value, opname, "value")
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise RuntimeError(f"{opname}(): query, key and value must all be 3-D (seq, batch, "
                           f"embed) or all 2-D (unbatched), got shapes {tuple(query.shape)}, "
                           f"{tuple(key.shape)}, {tuple(value.shape)}")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = _as_tensor(key_padding_mask, opname, "key_padding_mask") \
                .unsqueeze(0)
    length, batch, embed_dim = query.shape
    source = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise RuntimeError(f"{opname}(): was expecting embedding dimension of "
                           f"{embed_dim_to_check}, but got {embed_dim}")
    if embed_dim % num_heads:
        raise RuntimeError(f"{opname}(): embed_dim {embed_dim} not divisible by num_heads "
                           f"{num_heads}")
    if key.shape[:2] != value.shape[:2] or key.shape[1] != batch:
        raise RuntimeError(f"{opname}(): key shape {tuple(key.shape)} does not match value "
                           f"shape {tuple(value.shape)} or the query's batch of {batch}")
    head_dim = embed_dim // num_heads
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{opname}(): need attn_mask if specifying the is_causal hint "
                           f"(e.g. Transformer.generate_square_subsequent_mask)")
    dtype = query.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", dtype)
    attn_mask = _canonical_mask(attn_mask, "attn_mask", dtype)

    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise RuntimeError(f"{opname}(): use_separate_proj_weight is True but "
                               f"q_proj_weight, k_proj_weight or v_proj_weight is None")
        biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q = _project(query, q_proj_weight, biases[0])
        k = _project(key, k_proj_weight, biases[1])
        v = _project(value, v_proj_weight, biases[2])
    else:
        if in_proj_weight is None:
            raise RuntimeError(f"{opname}(): use_separate_proj_weight is False but "
                               f"in_proj_weight is None")
        weights = in_proj_weight.chunk(3)
        biases = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q = _project(query, weights[0], biases[0])
        k = _project(key, weights[1], biases[1])
        v = _project(value, weights[2], biases[2])

    if attn_mask is not None:
        if attn_mask.ndim == 2:
            if tuple(attn_mask.shape) != (length, source):
                raise RuntimeError(f"{opname}(): the shape of the 2D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be {(length, source)}")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.ndim == 3:
            if tuple(attn_mask.shape) != (batch * num_heads, length, source):
                raise RuntimeError(f"{opname}(): the shape of the 3D attn_mask is "
                                   f"{tuple(attn_mask.shape)}, but should be "
                                   f"{(batch * num_heads, length, source)}")
        else:
            raise RuntimeError(f"{opname}(): attn_mask's dimension {attn_mask.ndim} is not "
                               f"supported (2 or 3)")

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise RuntimeError(f"{opname}(): bias cannot be added to static key or value")
        k = cat([k, bias_k.expand(1, batch, embed_dim)])
        v = cat([v, bias_v.expand(1, batch, embed_dim)])
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise RuntimeError(f"{opname}(): bias_k and bias_v go together")

    # (L, N, E) -> (N * H, L, head_dim)
    q = q.reshape(length, batch * num_heads, head_dim).transpose(0, 1)
    k = (k.reshape(k.shape[0], batch * num_heads, head_dim).transpose(0, 1)
         if static_k is None else _as_tensor(static_k, opname, "static_k"))
    v = (v.reshape(v.shape[0], batch * num_heads, head_dim).transpose(0, 1)
         if static_v is None else _as_tensor(static_v, opname, "static_v"))
    if add_zero_attn:
        k = cat([k, _creation.zeros(batch * num_heads, 1, head_dim, dtype=k.dtype)], 1)
        v = cat([v, _creation.zeros(batch * num_heads, 1, head_dim, dtype=v.dtype)], 1)
        attn_mask = _pad_last(attn_mask)
        key_padding_mask = _pad_last(key_padding_mask)
    source = k.shape[1]

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (batch, source):
            raise RuntimeError(f"{opname}(): expecting key_padding_mask shape of "
                               f"{(batch, source)}, but got {tuple(key_padding_mask.shape)}")
        padding = (key_padding_mask.reshape(batch, 1, 1, source)
                   .expand(batch, num_heads, 1, source).reshape(batch * num_heads, 1, source))
        attn_mask = padding if attn_mask is None else attn_mask + padding

    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        output = matmul(weights, v)
    else:
        if attn_mask is not None:
            attn_mask = attn_mask.reshape(batch, num_heads, -1, source) \
                if attn_mask.shape[0] != 1 else attn_mask.unsqueeze(0)
        output = scaled_dot_product_attention(
            q.reshape(batch, num_heads, length, head_dim),
            k.reshape(batch, num_heads, source, head_dim),
            v.reshape(batch, num_heads, source, head_dim), attn_mask, dropout_p)
        weights = None
    output = output.reshape(batch, num_heads, length, head_dim).permute(2, 0, 1, 3) \
        .reshape(length * batch, embed_dim)
    output = _project(output, out_proj_weight, out_proj_bias).reshape(length, batch, embed_dim)
    if weights is not None:
        weights = weights.reshape(batch, num_heads, length, source)
        if average_attn_weights:
            weights = weights.mean(1)
    if not batched:
        output = output.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return output, weights


def _pad_last(mask):
    """A float mask with one more key position, open (0) to every query."""
    if mask is None:
        return None
    zeros = _creation.zeros(*mask.shape[:-1], 1, dtype=mask.dtype)
    return cat([mask, zeros], -1)
