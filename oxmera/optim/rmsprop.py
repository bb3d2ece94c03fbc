"""RMSprop, optionally centered and with momentum.

PyTorch's ``torch.optim.RMSprop`` algorithm, step for step: the square
average starts at zero, ε is added after the square root, and momentum
accumulates ``g / (√v + ε)`` before the learning rate is applied.
"""
import numpy as np

from oxmera.optim.optimizer import (Optimizer, _check_flags, _check_non_negative, _lerp_,
                                    _step_count, _zero_buffers)
from oxmera.ops.creation import from_numpy

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop: divide the gradient by a running root mean square of its history.

    For each parameter :math:`\theta` with gradient :math:`g`:

    .. math::

        g &\leftarrow g + \lambda \theta \quad (\lambda \neq 0) \\
        v &\leftarrow \alpha v + (1 - \alpha) g^2 \\
        \tilde v &= v - \bar g^2, \ \bar g \leftarrow \alpha \bar g + (1 - \alpha) g
            \ \text{(centered)} \quad\text{or}\quad \tilde v = v \\
        b &\leftarrow \mu b + g / (\sqrt{\tilde v} + \epsilon), \
            \theta \leftarrow \theta - \gamma b \ (\mu > 0)
            \quad\text{or}\quad \theta \leftarrow \theta - \gamma g / (\sqrt{\tilde v} + \epsilon)

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1e-2
        Learning rate :math:`\gamma`.
    alpha : float, default 0.99
        Smoothing constant :math:`\alpha` of the square average.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 0
        L2 penalty :math:`\lambda`.
    momentum : float, default 0
        Momentum factor :math:`\mu`.
    centered : bool, default False
        Normalize by an estimate of the gradient's variance instead of its
        second moment.
    maximize : bool, default False
        Maximize the objective instead of minimizing it.
    capturable, foreach, differentiable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).

    Notes
    -----
    State per parameter: ``'step'``, ``'square_avg'``, and
    ``'momentum_buffer'`` (``momentum > 0``) and ``'grad_avg'`` (centered).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import RMSprop
    >>> w = oxmera.tensor([1.0], requires_grad=True)
    >>> opt = RMSprop([w], lr=0.01, alpha=0.9)
    >>> w.sum().backward(); opt.step()
    >>> round(w.item(), 5)     # 1 - 0.01 * 1 / sqrt(0.1)
    0.96838
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "square_avg": "non-negative", "momentum_buffer": "finite",
                    "grad_avg": "finite"}
    _required_state = ("step", "square_avg")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "eps", "momentum", "weight_decay", "alpha")
        _check_flags(where, group, "centered", "maximize")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import RMSprop
        >>> w = oxmera.tensor([1.0], requires_grad=True)
        >>> opt = RMSprop([w], momentum=0.9, centered=True)
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr = group["lr"]
            alpha = group["alpha"]
            eps = group["eps"]
            weight_decay = group["weight_decay"]
            momentum = group["momentum"]
            centered = group["centered"]
            buffers = (("square_avg",) + (("momentum_buffer",) if momentum > 0 else ())
                       + (("grad_avg",) if centered else ()))
            for param, grad, state in self._updates(group,
                                                    lambda array: _zero_buffers(array, *buffers)):
                _step_count(state)
                if weight_decay != 0:
                    grad = grad + weight_decay * param
                square_avg = state["square_avg"]._data
                square_avg *= alpha
                square_avg += (1 - alpha) * grad * grad
                if centered:
                    grad_avg = _state_array(state, "grad_avg", param)
                    _lerp_(grad_avg, grad, 1 - alpha)
                    avg = square_avg + (-1 * grad_avg) * grad_avg
                    np.sqrt(avg, out=avg)
                else:
                    avg = np.sqrt(square_avg)
                avg += eps
                if momentum > 0:
                    buf = _state_array(state, "momentum_buffer", param)
                    buf *= momentum
                    buf += grad / avg
                    param -= lr * buf
                else:
                    update = -lr * grad
                    update /= avg
                    param += update
        return loss


def _state_array(state, key, param):
    """The array of ``state[key]``, created as zeros when missing (hyper-parameters
    changed after the first step)."""
    if key not in state:
        state[key] = from_numpy(np.zeros_like(param))
    return state[key]._data
