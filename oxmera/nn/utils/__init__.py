"""Training utilities of ``oxmera.nn``: gradient clipping (``clip_grad_norm_``,
``clip_grad_value_``) and variable-length sequences (``rnn``), as in ``torch.nn.utils``."""
from oxmera.nn.utils import rnn
from oxmera.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_

__all__ = ["clip_grad_norm_", "clip_grad_value_", "rnn"]
