"""Activation ops that need a fused VJP or a stable forward: softmax, log_softmax, ...

Activations that compose from elementwise ops are defined in
``oxmera.nn.functional``; only those with a stated numerical or speed reason
for a VJP of their own live here.
"""

__all__ = []
