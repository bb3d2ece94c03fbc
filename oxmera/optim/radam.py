"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2019).

PyTorch's ``torch.optim.RAdam`` algorithm, step for step: while the
approximated length of the simple moving average, ρₜ, is at most 5 the
update is bias-corrected momentum alone; then the adaptive term enters,
scaled by the variance rectification term.
"""
import numpy as np

from oxmera.optim.optimizer import (Optimizer, _check_betas, _check_flags, _check_non_negative,
                                    _lerp_, _step_count, _zero_buffers)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam: rectified Adam.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t`,
    with :math:`\rho_\infty = 2/(1-\beta_2) - 1` and
    :math:`\rho_t = \rho_\infty - 2 t \beta_2^t / (1 - \beta_2^t)`:

    .. math::

        g &\leftarrow g + \lambda \theta \quad (\lambda \neq 0;
            \text{ decoupled: } \theta \leftarrow \theta (1 - \gamma\lambda) \text{ instead}) \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2, \qquad \hat m = m / (1 - \beta_1^t) \\
        \theta &\leftarrow \theta - \gamma \hat m \, r_t
            \frac{\sqrt{1 - \beta_2^t}}{\sqrt v + \epsilon} \quad (\rho_t > 5),
        \qquad \theta \leftarrow \theta - \gamma \hat m \quad \text{otherwise}

    where :math:`r_t = \sqrt{\frac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}
    {(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}}`.

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
        Weight decay :math:`\lambda`.
    decoupled_weight_decay : bool, default False
        Decay the weights directly (as AdamW does; RAdamW) instead of
        through the gradient.
    foreach, capturable, differentiable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Notes
    -----
    State per parameter (PyTorch's keys): ``'step'``, ``'exp_avg'`` and
    ``'exp_avg_sq'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import RAdam
    >>> w = oxmera.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()   # early steps: momentum only
    >>> w
    tensor([ 0.8, -0.8], dtype=float32, requires_grad=True)
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "exp_avg": "finite", "exp_avg_sq": "non-negative"}
    _required_state = ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "eps")
        _check_betas(where, group)
        _check_non_negative(where, group, "weight_decay")
        _check_flags(where, group, "decoupled_weight_decay", "maximize")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import RAdam
        >>> w = oxmera.tensor([0.5], requires_grad=True)
        >>> opt = RAdam([w])
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['exp_avg', 'exp_avg_sq', 'step']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr, eps = group["lr"], group["eps"]
            beta1, beta2 = group["betas"]
            weight_decay = group["weight_decay"]
            def new_state(array):
                return _zero_buffers(array, "exp_avg", "exp_avg_sq")

            for param, grad, state in self._updates(group, new_state):
                step = _step_count(state)
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param *= 1 - lr * weight_decay
                    else:
                        grad = grad + weight_decay * param
                exp_avg = state["exp_avg"]._data
                exp_avg_sq = state["exp_avg_sq"]._data
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                bias_correction1 = 1 - beta1 ** step
                bias_correction2 = 1 - beta2 ** step
                update = exp_avg / bias_correction1
                update *= lr
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive_lr = np.sqrt(exp_avg_sq)
                    adaptive_lr += eps
                    update *= bias_correction2 ** 0.5 / adaptive_lr
                    update *= rect
                param -= update
        return loss
