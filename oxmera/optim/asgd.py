"""ASGD: averaged stochastic gradient descent (Polyak & Juditsky, 1992).

PyTorch's ``torch.optim.ASGD`` algorithm, step for step. As there, the step
size ``'eta'`` and the averaging coefficient ``'mu'`` are 0-d float32
tensors of the state (each new value is rounded to float32, whatever the
parameters' dtype), so trajectories and state dicts match PyTorch's.
"""
import numpy as np

from oxmera.optim.optimizer import (Optimizer, _check_finite, _check_flags, _check_non_negative,
                                    _step_count, _zero_buffers)
from oxmera.ops.creation import tensor

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged stochastic gradient descent.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t`
    (:math:`\eta_1 = \gamma`, :math:`\mu_1 = 1`):

    .. math::

        g &\leftarrow g + \lambda_{wd} \theta \quad (\lambda_{wd} \neq 0) \\
        \theta &\leftarrow \theta (1 - \lambda \eta_t) - \eta_t g \\
        a &\leftarrow a + \mu_t (\theta - a) \\
        \eta_{t+1} &= \gamma / (1 + \lambda \gamma t)^\alpha, \qquad
        \mu_{t+1} = 1 / \max(1, t - t_0)

    The average :math:`a` (``state['ax']``) is what to evaluate the model
    with after training.

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1e-2
        Learning rate :math:`\gamma`.
    lambd : float, default 1e-4
        Decay term :math:`\lambda`.
    alpha : float, default 0.75
        Power :math:`\alpha` of the step-size decay.
    t0 : float, default 1e6
        Step :math:`t_0` at which averaging starts.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda_{wd}`.
    foreach, differentiable, capturable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Notes
    -----
    State per parameter (PyTorch's keys): ``'step'``, ``'eta'``, ``'mu'``
    (0-d float32 tensors) and ``'ax'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import ASGD
    >>> w = oxmera.tensor([1.0], dtype=oxmera.float64, requires_grad=True)
    >>> opt = ASGD([w], lr=0.1, lambd=0.0, t0=0)
    >>> w.sum().backward(); opt.step()
    >>> round(w.item(), 6), round(opt.state[w]['ax'].item(), 6)
    (0.9, 0.9)
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "eta": "scalar", "mu": "scalar", "ax": "finite"}
    _required_state = ("step", "eta", "mu", "ax")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "weight_decay")
        # PyTorch leaves these unchecked; a NaN would still poison every parameter.
        _check_finite(where, group, "lambd", "alpha", "t0")
        _check_flags(where, group, "maximize")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import ASGD
        >>> w = oxmera.tensor([0.5], requires_grad=True)
        >>> opt = ASGD([w])
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['ax', 'eta', 'mu', 'step']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
            weight_decay = group["weight_decay"]
            def new_state(array):
                return {"eta": tensor(lr, dtype=np.float32), "mu": tensor(1.0, dtype=np.float32),
                        **_zero_buffers(array, "ax")}

            for param, grad, state in self._updates(group, new_state):
                step = _step_count(state)
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                eta = float(state["eta"]._data)
                mu = float(state["mu"]._data)
                param *= 1 - lambd * eta
                param -= eta * grad
                ax = state["ax"]._data
                if mu != 1:
                    ax += (param - ax) * mu
                else:
                    ax[...] = param
                state["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
                state["mu"]._data[...] = 1 / max(1, step - t0)
        return loss
