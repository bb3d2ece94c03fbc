"""Variable-length sequences for the recurrent layers, as in ``torch.nn.utils.rnn``.

A ``PackedSequence`` holds a batch of sequences of different lengths
without padding: its ``data`` is the time steps one after the other, each
step holding the sequences still running at that step (longest first), and
``batch_sizes[t]`` says how many that is. The recurrent layers run it step
by step on ever smaller batches, so each sequence's final state is its state
at its own last step.

Every function here moves rows with one ``index_select`` (padding comes from
one extra row of ``padding_value``), so gradients flow to ``data`` and to the
padded inputs; lengths, batch sizes and permutations are int64 tensors that
never require grad.
"""
from collections import namedtuple

import numpy as np

from oxmera._core import autograd as _core
from oxmera.ops.creation import full
from oxmera.ops.index import index_select
from oxmera.ops.shape import cat, unbind

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def _int_array(value):
    """An int64 NumPy copy of a list or an integer tensor (lengths, indices)."""
    if isinstance(value, _core.Tensor):
        value = value.numpy()
    return np.asarray(value, dtype=np.int64).reshape(-1)


def _index_tensor(array):
    return _core._wrap(np.ascontiguousarray(array, dtype=np.int64))


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (``None`` stays ``None``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import invert_permutation
    >>> invert_permutation(oxmera.tensor([2, 0, 1]))
    tensor([1, 2, 0], dtype=int64)
    """
    if permutation is None:
        return None
    permutation = _int_array(permutation)
    inverse = np.empty_like(permutation)
    inverse[permutation] = np.arange(permutation.size)
    return _index_tensor(inverse)


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A batch of variable-length sequences packed time step after time step.

    Made by ``pack_padded_sequence`` or ``pack_sequence``, not by hand.

    Attributes
    ----------
    data : oxmera.Tensor
        ``(sum(batch_sizes), *)``: step 0 of every sequence (longest first),
        then step 1 of those that have one, and so on.
    batch_sizes : oxmera.Tensor
        int64, how many sequences run at each step (non-increasing).
    sorted_indices : oxmera.Tensor or None
        The batch position of the sequence packed at position ``i``
        (``None`` when the input was already sorted by decreasing length).
    unsorted_indices : oxmera.Tensor or None
        Its inverse: the packed position of each original sequence.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import pack_sequence
    >>> packed = pack_sequence([oxmera.tensor([1, 2, 3]), oxmera.tensor([4, 5])])
    >>> packed.data
    tensor([1, 4, 2, 5, 3], dtype=int64)
    >>> packed.batch_sizes
    tensor([2, 2, 1], dtype=int64)
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise ValueError("PackedSequence: batch_sizes must be given (build a PackedSequence "
                             "with pack_padded_sequence or pack_sequence)")
        if not isinstance(batch_sizes, _core.Tensor):
            batch_sizes = _index_tensor(_int_array(batch_sizes))
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same sequence with ``data`` converted by ``Tensor.to`` (self if unchanged)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self):
        """Self: oxmera tensors are on the CPU."""
        return self

    def double(self):
        """``data`` as float64."""
        return self.to(np.float64)

    def float(self):
        """``data`` as float32."""
        return self.to(np.float32)

    def half(self):
        """``data`` as float16."""
        return self.to(np.float16)

    @property
    def is_cuda(self):
        """False: oxmera runs on the CPU only."""
        return False

    def is_pinned(self):
        """False: there is no pinned memory on the CPU alone."""
        return False


def _batch_sizes(lengths):
    """How many of the (decreasingly sorted) sequences run at each step."""
    steps = np.arange(int(lengths.max()) if lengths.size else 0)
    return (lengths[None, :] > steps[:, None]).sum(axis=1).astype(np.int64)


def _with_padding_row(flat, padding_value):
    """``flat`` (N, *) and one more row of ``padding_value``: index N is padding."""
    pad = full((1, *flat.shape[1:]), padding_value, dtype=flat.dtype)
    return cat([flat, pad])


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` if ``batch_first``) of given lengths.

    With ``enforce_sorted=True`` the lengths must be decreasing; otherwise
    the sequences are sorted here and the permutation is kept in the result,
    so the layers' outputs come back in the input's order.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import pack_padded_sequence
    >>> x = oxmera.tensor([[1, 4], [2, 5], [3, 0]])
    >>> pack_padded_sequence(x, [3, 2]).data
    tensor([1, 4, 2, 5, 3], dtype=int64)
    >>> packed = pack_padded_sequence(x[:, [1, 0]], [2, 3], enforce_sorted=False)
    >>> packed.data, packed.sorted_indices
    (tensor([1, 4, 2, 5, 3], dtype=int64), tensor([1, 0], dtype=int64))
    """
    lengths = _int_array(lengths)
    if input.ndim < 2:
        raise ValueError(f"pack_padded_sequence: expected a padded input of at least 2 dims "
                         f"(T, B, *), got shape {input.shape}")
    steps, batch = (input.shape[1], input.shape[0]) if batch_first else input.shape[:2]
    if lengths.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.size} (batch_size={batch})")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        order = None
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
    if lengths.size and lengths.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if lengths.size and lengths.max() > steps:
        raise RuntimeError(f"pack_padded_sequence: a length of {lengths.max()} exceeds the "
                           f"input's {steps} time steps (input shape {input.shape})")
    batch_sizes = _batch_sizes(lengths)
    source = np.arange(batch) if order is None else order
    # Row (t, j) of the packed data is step t of the j-th longest sequence.
    rows = []
    for t, size in enumerate(batch_sizes):
        b = source[:size]
        rows.append(b * steps + t if batch_first else t * batch + b)
    index = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    flat = input.reshape(batch * steps, *input.shape[2:])
    data = index_select(flat, 0, _index_tensor(index))
    sorted_indices = None if order is None else _index_tensor(order)
    return PackedSequence(data, _index_tensor(batch_sizes), sorted_indices,
                          invert_permutation(sorted_indices))


def _lengths_of(batch_sizes):
    """The sorted sequences' lengths from the batch sizes."""
    batch = int(batch_sizes[0]) if batch_sizes.size else 0
    return (batch_sizes[None, :] > np.arange(batch)[:, None]).sum(axis=1).astype(np.int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: the padded batch and each sequence's length.

    The batch comes back in the order it was packed from; ``total_length``
    pads the time dim to that size (at least the longest length).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> packed = pack_sequence([oxmera.tensor([1, 2]), oxmera.tensor([3, 4, 5])],
    ...                        enforce_sorted=False)
    >>> padded, lengths = pad_packed_sequence(packed, batch_first=True, padding_value=-1)
    >>> padded
    tensor([[ 1,  2, -1],
            [ 3,  4,  5]], dtype=int64)
    >>> lengths
    tensor([2, 3], dtype=int64)
    """
    data = sequence.data
    batch_sizes = _int_array(sequence.batch_sizes)
    lengths = _lengths_of(batch_sizes)
    max_length = batch_sizes.size
    if total_length is not None:
        if total_length < max_length:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_length}")
        max_length = total_length
    batch = lengths.size
    unsorted = (np.arange(batch) if sequence.unsorted_indices is None
                else _int_array(sequence.unsorted_indices))
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)])[:-1]
    pad_row = data.shape[0]
    # index[t, b]: the packed row of step t of original sequence b, or the padding row.
    t = np.arange(max_length)[:, None]
    j = unsorted[None, :]
    running = t < lengths[j]
    index = np.where(running, offsets[np.minimum(t, offsets.size - 1)] + j, pad_row)
    if batch_first:
        index = index.T
    out = index_select(_with_padding_row(data, padding_value), 0,
                       _index_tensor(index.reshape(-1)))
    out = out.reshape(*index.shape, *data.shape[1:])
    return out, _index_tensor(lengths[unsorted])


def _sequence_list(sequences, opname):
    if isinstance(sequences, _core.Tensor):
        sequences = unbind(sequences, 0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    trailing = sequences[0].shape[1:]
    for s in sequences:
        if s.ndim == 0 or s.shape[1:] != trailing:
            raise RuntimeError(f"{opname}: every sequence must be (L, *) with the same trailing "
                               f"dims, got shapes {[tuple(x.shape) for x in sequences]}")
    return sequences


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` if batch_first).

    ``padding_side="left"`` puts the padding before each sequence.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import pad_sequence
    >>> seqs = [oxmera.tensor([1, 2, 3]), oxmera.tensor([4])]
    >>> pad_sequence(seqs, batch_first=True)
    tensor([[1, 2, 3],
            [4, 0, 0]], dtype=int64)
    >>> pad_sequence(seqs, batch_first=True, padding_side="left")
    tensor([[1, 2, 3],
            [0, 0, 4]], dtype=int64)
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    sequences = _sequence_list(sequences, "pad_sequence")
    lengths = np.array([s.shape[0] for s in sequences], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)])[:-1]
    steps = int(lengths.max())
    flat = cat(sequences) if len(sequences) > 1 else sequences[0]
    t = np.arange(steps)[:, None]
    if padding_side == "left":
        t = t - (steps - lengths[None, :])
    index = np.where((t >= 0) & (t < lengths[None, :]), starts[None, :] + t, flat.shape[0])
    if batch_first:
        index = index.T
    out = index_select(_with_padding_row(flat, padding_value), 0,
                       _index_tensor(index.reshape(-1)))
    return out.reshape(*index.shape, *flat.shape[1:])


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences of the given lengths.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import unpad_sequence
    >>> unpad_sequence(oxmera.tensor([[1, 2, 3], [4, 0, 0]]), oxmera.tensor([3, 1]),
    ...                batch_first=True)
    [tensor([1, 2, 3], dtype=int64), tensor([4], dtype=int64)]
    """
    lengths = _int_array(lengths)
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :int(n)] for i, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences ``(L_i, *)`` (decreasing lengths unless enforce_sorted=False).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import pack_sequence
    >>> packed = pack_sequence([oxmera.tensor([1]), oxmera.tensor([2, 3])],
    ...                        enforce_sorted=False)
    >>> packed.data, packed.batch_sizes
    (tensor([2, 1, 3], dtype=int64), tensor([2, 1], dtype=int64))
    >>> packed.sorted_indices, packed.unsorted_indices
    (tensor([1, 0], dtype=int64), tensor([1, 0], dtype=int64))
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Undo ``pack_sequence``: the list of sequences in their original order.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> unpack_sequence(pack_sequence([oxmera.tensor([1]), oxmera.tensor([2, 3])],
    ...                               enforce_sorted=False))
    [tensor([1], dtype=int64), tensor([2, 3], dtype=int64)]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
