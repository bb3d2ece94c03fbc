"""Adadelta: step sizes from running averages of squared gradients and squared updates.

PyTorch's ``torch.optim.Adadelta`` algorithm, step for step and in the order
of floating-point operations of its single-tensor implementation (ε inside
both square roots; the update scaled by ``lr`` at the end).
"""
import numpy as np

from oxmera.optim.optimizer import (Optimizer, _check_at_most, _check_flags, _check_non_negative,
                                    _step_count, _zero_buffers)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta (Zeiler, 2012).

    For each parameter :math:`\theta` with gradient :math:`g`:

    .. math::

        g &\leftarrow g + \lambda \theta \quad (\lambda \neq 0) \\
        v &\leftarrow \rho v + (1 - \rho) g^2 \\
        \Delta &= \frac{\sqrt{u + \epsilon}}{\sqrt{v + \epsilon}} \, g \\
        u &\leftarrow \rho u + (1 - \rho) \Delta^2 \\
        \theta &\leftarrow \theta - \gamma \Delta

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1.0
        Coefficient :math:`\gamma` that scales the update.
    rho : float, default 0.9
        Decay rate :math:`\rho` of the running averages, in [0, 1].
    eps : float, default 1e-6
        Added inside the square roots for numerical stability.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    foreach, capturable, differentiable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Notes
    -----
    State per parameter (PyTorch's keys): ``'step'``, ``'square_avg'``
    (:math:`v`) and ``'acc_delta'`` (:math:`u`).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import Adadelta
    >>> w = oxmera.tensor([1.0], dtype=oxmera.float64, requires_grad=True)
    >>> opt = Adadelta([w], lr=1.0, rho=0.5, eps=1e-6)
    >>> w.sum().backward(); opt.step()
    >>> round(w.item(), 6)      # 1 - sqrt(1e-6) / sqrt(0.5 + 1e-6)
    0.998586
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "square_avg": "non-negative", "acc_delta": "non-negative"}
    _required_state = ("step", "square_avg", "acc_delta")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr")
        _check_at_most(where, group, "rho", 1.0)
        _check_non_negative(where, group, "eps", "weight_decay")
        _check_flags(where, group, "maximize")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import Adadelta
        >>> w = oxmera.tensor([0.5], requires_grad=True)
        >>> opt = Adadelta([w])
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['acc_delta', 'square_avg', 'step']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr, rho, eps = group["lr"], group["rho"], group["eps"]
            weight_decay = group["weight_decay"]
            def new_state(array):
                return _zero_buffers(array, "square_avg", "acc_delta")

            for param, grad, state in self._updates(group, new_state):
                _step_count(state)
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                square_avg = state["square_avg"]._data
                acc_delta = state["acc_delta"]._data
                square_avg *= rho
                square_avg += (1 - rho) * grad * grad
                std = np.sqrt(square_avg + eps)
                delta = np.sqrt(acc_delta + eps)
                delta /= std
                delta *= grad
                acc_delta *= rho
                acc_delta += (1 - rho) * delta * delta
                param += -lr * delta
        return loss
