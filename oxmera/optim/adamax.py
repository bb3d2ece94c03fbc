"""Adamax: Adam with the infinity norm in place of the second moment.

PyTorch's ``torch.optim.Adamax`` algorithm, step for step: the first moment
is a ``lerp`` toward the gradient, the infinity norm is
``max(β₂ u, |g| + ε)`` (ε inside the maximum), and only the first moment is
bias-corrected.
"""
import numpy as np

from oxmera.optim.optimizer import (Optimizer, _check_betas, _check_flags, _check_non_negative,
                                    _lerp_, _step_count, _zero_buffers)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax (Kingma & Ba, section 7.1).

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t`:

    .. math::

        g &\leftarrow g + \lambda \theta \quad (\lambda \neq 0) \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        u \leftarrow \max(\beta_2 u, |g| + \epsilon) \\
        \theta &\leftarrow \theta - \frac{\gamma}{1 - \beta_1^t} \frac{m}{u}

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 2e-3
        Learning rate :math:`\gamma`.
    betas : (float, float), default (0.9, 0.999)
        Decay rates :math:`\beta_1, \beta_2`.
    eps : float, default 1e-8
        Added to :math:`|g|` for numerical stability.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    foreach, differentiable, capturable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Notes
    -----
    State per parameter (PyTorch's keys): ``'step'``, ``'exp_avg'`` (:math:`m`)
    and ``'exp_inf'`` (:math:`u`).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import Adamax
    >>> w = oxmera.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()   # the first step moves each weight by lr
    >>> w
    tensor([ 0.9, -0.9], dtype=float32, requires_grad=True)
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "exp_avg": "finite", "exp_inf": "non-negative"}
    _required_state = ("step", "exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "eps")
        _check_betas(where, group)
        _check_non_negative(where, group, "weight_decay")
        _check_flags(where, group, "maximize")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import Adamax
        >>> w = oxmera.tensor([0.5], requires_grad=True)
        >>> opt = Adamax([w])
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['exp_avg', 'exp_inf', 'step']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr, eps = group["lr"], group["eps"]
            beta1, beta2 = group["betas"]
            weight_decay = group["weight_decay"]
            def new_state(array):
                return _zero_buffers(array, "exp_avg", "exp_inf")

            for param, grad, state in self._updates(group, new_state):
                step = _step_count(state)
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                exp_avg = state["exp_avg"]._data
                exp_inf = state["exp_inf"]._data
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_inf *= beta2
                norm = np.abs(grad)
                norm += eps
                np.maximum(exp_inf, norm, out=exp_inf)
                clr = lr / (1 - beta1 ** step)
                update = -clr * exp_avg
                update /= exp_inf
                param += update
        return loss
