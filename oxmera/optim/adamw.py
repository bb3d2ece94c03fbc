"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter).

PyTorch's ``torch.optim.AdamW`` is ``Adam`` with ``decoupled_weight_decay=True``
and a default weight decay of 1e-2; so is this one: the weights are
multiplied by ``1 - lr * weight_decay`` before the Adam update, instead of
the decay entering the gradient (and so the moment estimates).
"""
from oxmera.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Adam with decoupled weight decay, optionally AMSGrad.

    Each step first decays the weights, :math:`\theta \leftarrow \theta (1 - \gamma\lambda)`,
    then makes the Adam update (see ``Adam``) from the undecayed gradient.

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1e-3
        Learning rate :math:`\gamma`.
    betas : (float, float), default (0.9, 0.999)
        Decay rates of the moment estimates.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 1e-2
        Decoupled weight decay :math:`\lambda`.
    amsgrad : bool, default False
        Normalize by the running maximum of the second moment (AMSGrad).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    foreach, fused, capturable, differentiable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import AdamW
    >>> w = oxmera.tensor([1.0], requires_grad=True)
    >>> opt = AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = oxmera.tensor([0.0])    # no gradient: only the decay acts
    >>> opt.step()
    >>> round(w.item(), 6)               # 1 * (1 - 0.1 * 0.5)
    0.95
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
