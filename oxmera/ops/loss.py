"""Loss ops with fused, numerically stable VJPs (cross_entropy, nll_loss, ...)."""

__all__ = []
