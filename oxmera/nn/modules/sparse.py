"""``Embedding`` and ``EmbeddingBag``: lookup tables of learnable vectors, indexed by
integer tensors (``EmbeddingBag`` reduces bags of them by sum, mean or max)."""
from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn.modules._utils import empty, factory_dtype
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter
from oxmera.autograd import no_grad

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``; ``layer(idx)`` picks rows.

    ``weight`` starts from ``N(0, 1)`` (PyTorch's default), with row
    ``padding_idx`` (if given; negative counts from the end) zeroed; that
    row's gradient stays zero, so it stays a padding vector. ``max_norm``
    renormalizes looked-up rows in place, as in PyTorch;
    ``scale_grad_by_freq=True`` divides each row's gradient by how often its
    index occurs in the input. ``sparse=True`` is not supported.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> emb = nn.Embedding(10, 3, padding_idx=0)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    >>> emb(oxmera.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])).shape
    oxmera.Size([2, 4, 3])
    >>> emb(oxmera.tensor([0]))
    tensor([[0., 0., 0.]], dtype=float32, grad_fn=<WhereBackward>)
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "Embedding")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within "
                                 f"num_embeddings ({num_embeddings})")
            if padding_idx < 0:
                padding_idx += num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: shape of weight {tuple(_weight.shape)} does not "
                                 f"match num_embeddings and embedding_dim "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        """Redraw ``weight`` from ``N(0, 1)`` and zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding holding the 2-D tensor ``embeddings`` (shared, not copied).

        ``freeze=True`` (default) makes the weight not require grad.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> emb = nn.Embedding.from_pretrained(oxmera.tensor([[1.0, 2.3], [4.0, 5.1]]))
        >>> emb(oxmera.tensor([1]))
        tensor([[4. , 5.1]], dtype=float32)
        """
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape "
                             f"{tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=embeddings,
                   _freeze=freeze)


def _check_padding_idx(layer, padding_idx, num_embeddings):
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(f"{layer}: padding_idx {padding_idx} must be within num_embeddings "
                         f"({num_embeddings})")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of rows of a learnable table, without the
    intermediate rows (see ``oxmera.nn.functional.embedding_bag``).

    ``layer(input, offsets=None, per_sample_weights=None)``: a 2-D ``input``
    is one bag per row; a 1-D ``input`` is cut into bags at ``offsets``.
    ``weight`` starts from ``N(0, 1)``; row ``padding_idx`` (if given) is
    zeroed and left out of every bag.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag
    EmbeddingBag(10, 3, mode='sum')
    >>> bag(oxmera.tensor([1, 2, 4, 5, 4, 3, 2, 9]), oxmera.tensor([0, 4])).shape
    oxmera.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "EmbeddingBag")
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode has to be one of sum, mean or max, got "
                             f"{mode!r}")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _check_padding_idx("EmbeddingBag", padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: shape of weight {tuple(_weight.shape)} does "
                                 f"not match num_embeddings and embedding_dim "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self):
        """Redraw ``weight`` from ``N(0, 1)`` and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag holding the 2-D tensor ``embeddings`` (shared, not copied).

        ``freeze=True`` (default) makes the weight not require grad.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera import nn
        >>> bag = nn.EmbeddingBag.from_pretrained(oxmera.tensor([[1.0, 2.0], [4.0, 6.0]]))
        >>> bag(oxmera.tensor([[0, 1]]))
        tensor([[2.5, 4. ]], dtype=float32)
        """
        if embeddings.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained: embeddings must be 2-D, got "
                             f"shape {tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  _weight=embeddings, include_last_offset=include_last_offset,
                  padding_idx=padding_idx)
        bag.weight.requires_grad_(not freeze)
        return bag
