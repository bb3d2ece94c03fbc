"""Adagrad: per-coordinate learning rates from the sum of squared gradients.

PyTorch's ``torch.optim.Adagrad`` algorithm, step for step; as there, the
state (``'step'`` and the running ``'sum'``, filled with
``initial_accumulator_value``) is created when the optimizer is, so a state
dict taken before the first step already holds it.
"""
import numpy as np

from oxmera.optim.optimizer import Optimizer, _check_flags, _check_non_negative, _step_count
from oxmera.ops.creation import from_numpy, tensor

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad (Duchi et al.).

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t`:

    .. math::

        \tilde\gamma &= \gamma / (1 + (t - 1) \eta) \\
        g &\leftarrow g + \lambda \theta \quad (\lambda \neq 0) \\
        s &\leftarrow s + g^2 \\
        \theta &\leftarrow \theta - \tilde\gamma \, g / (\sqrt{s} + \epsilon)

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1e-2
        Learning rate :math:`\gamma`.
    lr_decay : float, default 0
        Learning-rate decay :math:`\eta`.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    initial_accumulator_value : float, default 0
        Starting value of the sum of squares :math:`s`.
    eps : float, default 1e-10
        Added to the denominator for numerical stability.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    foreach, differentiable, fused : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import Adagrad
    >>> w = oxmera.tensor([1.0], requires_grad=True)
    >>> opt = Adagrad([w], lr=0.5)
    >>> (2 * w).sum().backward(); opt.step()
    >>> round(w.item(), 6)     # 1 - 0.5 * 2 / sqrt(4)
    0.5
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "sum": "non-negative"}
    _required_state = ("step", "sum")

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "lr_decay", "weight_decay",
                            "initial_accumulator_value", "eps")
        _check_flags(where, group, "maximize")

    def _init_group_state(self, group):
        for p in group["params"]:
            state = self.state[p]
            if not state:
                self._init_state(state, p._data, group)

    @staticmethod
    def _init_state(state, param, group):
        state["step"] = tensor(0.0, dtype=np.float32)
        state["sum"] = from_numpy(np.full_like(param, group["initial_accumulator_value"]))

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import Adagrad
        >>> w = oxmera.tensor([1.0], requires_grad=True)
        >>> opt = Adagrad([w], initial_accumulator_value=0.1)
        >>> opt.state[w]['sum']
        tensor([0.1], dtype=float32)
        >>> w.sum().backward(); opt.step()
        >>> opt.state[w]['sum']
        tensor([1.1], dtype=float32)
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr = group["lr"]
            lr_decay = group["lr_decay"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            for p in self._params_to_update(group):
                param = p._data
                grad = p.grad._data
                state = self.state[p]
                if not state:
                    self._init_state(state, param, group)
                step = _step_count(state)
                if group["maximize"]:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                clr = lr / (1 + (step - 1) * lr_decay)
                state_sum = state["sum"]._data
                state_sum += grad * grad
                std = np.sqrt(state_sum)
                std += eps
                update = -clr * grad
                update /= std
                param += update
        return loss
