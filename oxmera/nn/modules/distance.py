"""``CosineSimilarity`` and ``PairwiseDistance``, over ``nn.functional``'s."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """The cosine similarity of two inputs along ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.CosineSimilarity(dim=0)(oxmera.tensor([1.0, 0.0]), oxmera.tensor([2.0, 0.0]))
    tensor(1., dtype=float32)
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm distance of two inputs over their last dim.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.PairwiseDistance(eps=0.0)(oxmera.tensor([[0.0, 0.0]]), oxmera.tensor([[3.0, 4.0]]))
    tensor([5.], dtype=float32)
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
