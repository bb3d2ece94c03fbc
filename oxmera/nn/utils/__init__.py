"""Training utilities of ``oxmera.nn``, as in ``torch.nn.utils``: gradient clipping
(``clip_grad_norm_``, ``clip_grad_value_``), variable-length sequences (``rnn``),
flat parameter vectors (``parameters_to_vector``, ``vector_to_parameters``),
parametrizations (``parametrize``, ``parametrizations.weight_norm`` /
``spectral_norm``) and the legacy ``weight_norm`` and ``spectral_norm``."""
from oxmera.nn.utils import parametrizations, parametrize, rnn, stateless
from oxmera.nn.utils.clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,
                                        clip_grads_with_norm_, get_total_norm)
from oxmera.nn.utils.init import skip_init
from oxmera.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from oxmera.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from oxmera.nn.utils.weight_norm import remove_weight_norm, weight_norm

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "parametrizations",
           "parametrize", "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init",
           "spectral_norm", "stateless", "vector_to_parameters", "weight_norm"]
