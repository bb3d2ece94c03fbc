"""Adam (and, with decoupled weight decay, AdamW), optionally AMSGrad.

PyTorch's ``torch.optim.Adam`` algorithm, step for step and in the same
order of floating-point operations as its single-tensor implementation:
the first moment is a ``lerp`` toward the gradient, the bias corrections are
Python floats, and the update is ``θ - (step_size · m) / (√v / √(1-β₂ᵗ) + ε)``.
"""
import numpy as np

from oxmera._core import _kernels
from oxmera.optim.optimizer import (Optimizer, _check_betas, _check_flags, _check_non_negative,
                                    _lerp_, _step_count, _zero_buffers)
from oxmera.ops.creation import from_numpy

__all__ = ["Adam"]


class Adam(Optimizer):
    r"""Adam: adaptive moment estimation (Kingma & Ba), optionally AMSGrad.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t`:

    .. math::

        g &\leftarrow g + \lambda \theta \quad (\lambda \neq 0;
            \text{ decoupled: } \theta \leftarrow \theta (1 - \gamma\lambda) \text{ instead}) \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        \hat v &= \max(\hat v, v) \ \text{(amsgrad)} \quad\text{or}\quad \hat v = v \\
        \theta &\leftarrow \theta - \frac{\gamma}{1 - \beta_1^t}
            \frac{m}{\sqrt{\hat v} / \sqrt{1 - \beta_2^t} + \epsilon}

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1e-3
        Learning rate :math:`\gamma`.
    betas : (float, float), default (0.9, 0.999)
        Decay rates :math:`\beta_1, \beta_2` of the moment estimates.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 0
        Weight decay :math:`\lambda` (an L2 penalty added to the gradient).
    amsgrad : bool, default False
        Normalize by the running maximum of the second moment (AMSGrad).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    decoupled_weight_decay : bool, default False
        Decay the weights directly, as AdamW does, instead of through the
        gradient.
    foreach, fused, capturable, differentiable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).

    Notes
    -----
    State per parameter: ``'step'`` (a 0-d float32 tensor), ``'exp_avg'``,
    ``'exp_avg_sq'`` and, with ``amsgrad``, ``'max_exp_avg_sq'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import Adam
    >>> w = oxmera.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Adam([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()          # the first step moves each weight by about lr
    >>> w
    tensor([ 0.9, -0.9], dtype=float32, requires_grad=True)
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "exp_avg": "finite", "exp_avg_sq": "non-negative",
                    "max_exp_avg_sq": "non-negative"}
    _required_state = ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "eps")
        _check_betas(where, group)
        _check_non_negative(where, group, "weight_decay")
        _check_flags(where, group, "amsgrad", "maximize", "decoupled_weight_decay")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import Adam
        >>> w = oxmera.tensor([0.5], requires_grad=True)
        >>> opt = Adam([w], lr=0.01, amsgrad=True)
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['exp_avg', 'exp_avg_sq', 'max_exp_avg_sq', 'step']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr = group["lr"]
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            amsgrad = group["amsgrad"]
            buffers = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if amsgrad else ())
            for param, grad, state in self._updates(group,
                                                    lambda array: _zero_buffers(array, *buffers)):
                exp_avg = state["exp_avg"]._data
                exp_avg_sq = state["exp_avg_sq"]._data
                step = _step_count(state)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param *= 1 - lr * weight_decay
                    else:
                        grad = grad + weight_decay * param
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2 ** 0.5
                max_exp_avg_sq = None
                if amsgrad:
                    if "max_exp_avg_sq" not in state:
                        state["max_exp_avg_sq"] = from_numpy(np.zeros_like(param))
                    max_exp_avg_sq = state["max_exp_avg_sq"]._data
                # The kernel makes the steps below in one pass, with their
                # roundings (they made five temporaries of the parameter's size).
                if _kernels.adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
                                        1 - beta1, beta2, bias_correction2_sqrt, eps,
                                        step_size):
                    continue
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                if amsgrad:
                    np.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
                    denom = np.sqrt(max_exp_avg_sq)
                else:
                    denom = np.sqrt(exp_avg_sq)
                denom /= bias_correction2_sqrt
                denom += eps
                update = -step_size * exp_avg
                update /= denom
                param += update
        return loss
