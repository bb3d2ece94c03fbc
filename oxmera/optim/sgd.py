"""Stochastic gradient descent, with momentum, dampening and Nesterov momentum.

The rule is PyTorch's ``torch.optim.SGD`` algorithm, step for step (the
first step's momentum buffer is the gradient itself, not ``(1 - dampening)``
times it), computed on the parameters' arrays in their dtype.
"""
import numpy as np

from oxmera.optim.optimizer import Optimizer, _check_finite, _check_flags, _check_non_negative
from oxmera.ops.creation import from_numpy
from oxmera.ops.inplace import scaled_into

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum).

    For each parameter :math:`\theta` with gradient :math:`g`:

    .. math::

        g &\leftarrow g + \lambda \theta \quad (\text{weight decay } \lambda \neq 0) \\
        b &\leftarrow \mu b + (1 - \tau) g \quad (b = g \text{ on the first step}) \\
        g &\leftarrow g + \mu b \ \text{(nesterov)} \quad\text{or}\quad g \leftarrow b \\
        \theta &\leftarrow \theta - \gamma g \quad (\theta + \gamma g \text{ if maximize})

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1e-3
        Learning rate :math:`\gamma`.
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    dampening : float, default 0
        Dampening :math:`\tau` of the momentum.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    nesterov : bool, default False
        Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    foreach, differentiable, fused : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).

    Notes
    -----
    State per parameter: ``'momentum_buffer'`` when ``momentum != 0``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> w = oxmera.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     opt.step()
    >>> w
    tensor([ 0.46, -0.92], dtype=float32, requires_grad=True)
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"momentum_buffer": "finite or None"}

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "momentum", "weight_decay")
        _check_finite(where, group, "dampening")
        _check_flags(where, group, "nesterov", "maximize")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"{where}: Nesterov momentum requires a momentum and zero "
                             f"dampening (got momentum={group['momentum']}, "
                             f"dampening={group['dampening']})")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> w = oxmera.tensor([2.0], requires_grad=True)
        >>> opt = SGD([w], lr=0.1, weight_decay=0.5)
        >>> w.sum().backward(); opt.step()
        >>> round(w.item(), 6)   # 2 - 0.1 * (1 + 0.5 * 2)
        1.8
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr = group["lr"]
            momentum = group["momentum"]
            dampening = group["dampening"]
            weight_decay = group["weight_decay"]
            for p in self._params_to_update(group):
                param = p._data
                grad = p.grad._data
                if group["maximize"]:
                    grad = -grad
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                if momentum != 0:
                    state = self.state[p]
                    buffer = state.get("momentum_buffer")
                    if buffer is None:
                        buf = np.array(grad, dtype=param.dtype)
                        state["momentum_buffer"] = from_numpy(buf)
                    else:
                        buf = buffer._data
                        buf *= momentum
                        scaled_into(np.add, buf, grad, 1 - dampening)
                    grad = grad + momentum * buf if group["nesterov"] else buf
                # ``param -= lr * grad`` (the same bits) without the temporary
                scaled_into(np.subtract, param, grad, lr)
        return loss
