"""``F.embedding_bag``: sums, means or maxima of bags of embedding rows, composed from
``embedding``, ``index_add`` and indexing (so every gradient, to second order, comes
from those ops' VJPs)."""
import numpy as np

from oxmera._core import autograd as _core

__all__ = ["embedding_bag"]

Tensor = _core.Tensor


def _bags(index, offsets, include_last_offset, opname):
    """Bag starts, the number of positions used, and each used position's bag."""
    n = index.shape[0]
    if offsets.size and offsets[0] != 0:
        raise RuntimeError(f"{opname}: offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got "
                           f"{offsets[0]}")
    if offsets.size and offsets[-1] > n:
        raise RuntimeError(f"{opname}: offsets[-1] can not be greater than input's length {n} "
                           f"but got offsets[-1] of {offsets[-1]}")
    if (np.diff(offsets) < 0).any():
        raise RuntimeError(f"{opname}: offsets must be non-decreasing, got "
                           f"{offsets.tolist()}")
    if include_last_offset:
        starts = offsets[:-1]
        used = int(offsets[-1]) if offsets.size else 0
    else:
        starts = offsets
        used = n
    bag_of = np.searchsorted(starts, np.arange(used), side="right") - 1
    return starts, used, bag_of


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Reduce bags of rows of ``weight`` (picked by ``input``) by sum, mean or max.

    A 2-D ``input`` of shape ``(B, N)`` is ``B`` bags of ``N`` indices
    (``offsets`` must be None). A 1-D ``input`` is cut into bags at the
    positions ``offsets`` (starting with 0); with
    ``include_last_offset=True`` the last offset is the end of the last bag
    (PyTorch documents it as the input's length; its kernels disagree with
    each other for other values, here it always ends the last bag).
    Entries equal to ``padding_idx`` are left out of their bag (and of a
    mean's count); an empty bag gives zeros. ``per_sample_weights`` (the
    shape of ``input``, ``mode="sum"`` only) weighs each row.
    ``max_norm``/``norm_type`` renormalize rows in place and
    ``scale_grad_by_freq`` scales the gradient, as in :func:`embedding`.
    Returns shape ``(B, embedding_dim)``.

    Examples
    --------
    >>> import oxmera
    >>> import oxmera.nn.functional as F
    >>> w = oxmera.arange(12.0).reshape(6, 2)
    >>> F.embedding_bag(oxmera.tensor([1, 2, 4, 5, 4, 3]), w, oxmera.tensor([0, 2]),
    ...                 mode="sum")
    tensor([[ 6.,  8.],
            [32., 36.]], dtype=float32)
    >>> F.embedding_bag(oxmera.tensor([[0, 2], [1, 1]]), w, mode="max")
    tensor([[4., 5.],
            [2., 3.]], dtype=float32)
    """
    import oxmera
    from oxmera.nn.functional import _index_array, embedding

    opname = "embedding_bag"
    if not isinstance(weight, Tensor):
        raise TypeError(f"{opname}(): weight must be a Tensor, got {type(weight).__name__}")
    index = _index_array(input, opname)
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != index.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights "
                         f"({tuple(per_sample_weights.shape)}) is not None, then it must have "
                         f"the same shape as the input ({index.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if index.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        offsets_array = np.arange(0, index.size, max(index.shape[1], 1))[:index.shape[0]]
        include_last_offset = False
        index = index.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif index.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        offsets_array = _index_array(offsets, opname, "offsets")
        if offsets_array.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{index.ndim}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if sparse:
        raise NotImplementedError("embedding_bag(): sparse=True (sparse gradients) is not "
                                  "supported; leave it False for dense gradients")
    num = weight.shape[0]
    if index.size and (index.min() < 0 or index.max() >= num):
        position = int(np.flatnonzero((index < 0) | (index >= num))[0])
        raise IndexError(f"embedding_bag(): index {position} of input takes value "
                         f"{index[position]} which is not in the valid range [0, {num})")
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise IndexError(f"embedding_bag(): padding_idx {padding_idx} must be within "
                             f"num_embeddings {num}")
        padding_idx = padding_idx + num if padding_idx < 0 else padding_idx
    starts, used, bag_of = _bags(index, offsets_array, include_last_offset, opname)
    n_bags = len(starts)
    dim = weight.shape[1]
    index = index[:used]
    keep = np.ones(used, bool) if padding_idx is None else index != padding_idx
    rows = embedding(_core._wrap(index), weight, None, max_norm, norm_type, scale_grad_by_freq)
    counts = np.bincount(bag_of[keep], minlength=n_bags)
    if mode == "max":
        values = np.where(keep[:, None], rows._data, -np.inf)
        best = np.full((n_bags, dim), -np.inf)
        np.maximum.at(best, bag_of, values)
        # The first position reaching each bag's maximum (PyTorch keeps the first).
        hit = (values == best[bag_of]) & keep[:, None]
        first = np.full((n_bags, dim), used, dtype=np.int64)
        np.minimum.at(first, bag_of, np.where(hit, np.arange(used)[:, None], used))
        filled = counts > 0
        first[~filled] = 0
        if used == 0:
            # Nothing to pick; ``+ rows.sum() * 0`` keeps the result connected to
            # weight (it requires grad when weight does, as PyTorch's).
            return oxmera.zeros(n_bags, dim, dtype=weight.dtype) + rows.sum() * 0
        picked = rows[_core._wrap(first), _core._wrap(np.arange(dim)[None, :])]
        mask = _core._wrap(filled[:, None].astype(weight.dtype))
        return picked * mask
    coefficients = keep.astype(weight.dtype)
    if mode == "mean":
        coefficients = coefficients / np.maximum(counts, 1)[bag_of].astype(weight.dtype)
    scaled = rows * _core._wrap(coefficients[:, None])
    if per_sample_weights is not None:
        scaled = scaled * per_sample_weights[:used].reshape(used, 1)
    zeros = oxmera.zeros(n_bags, dim, dtype=weight.dtype)
    return oxmera.index_add(zeros, 0, _core._wrap(bag_of.astype(np.int64)), scaled)
