"""Rprop: resilient backpropagation, step sizes adapted from the gradient's sign alone.

PyTorch's ``torch.optim.Rprop`` algorithm, step for step: after a sign
change the step size shrinks and that coordinate does not move (its
gradient is taken as zero, so the next step does not shrink it again).
"""
import numpy as np

from oxmera.optim.optimizer import (Optimizer, _check_flags, _check_non_negative, _pair,
                                    _step_count, _zero_buffers)
from oxmera.ops.creation import from_numpy

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop (Riedmiller & Braun, 1993).

    For each parameter :math:`\theta` with gradient :math:`g` and the
    previous step's gradient :math:`g'`:

    .. math::

        s &\leftarrow \operatorname{clip}(s \cdot \eta_+, s_{min}, s_{max})
            \ (g g' > 0), \quad
        \operatorname{clip}(s \cdot \eta_-, s_{min}, s_{max}) \text{ and } g \leftarrow 0
            \ (g g' < 0) \\
        \theta &\leftarrow \theta - \operatorname{sign}(g) \, s, \qquad g' \leftarrow g

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 1e-2
        Initial step size of every coordinate.
    etas : (float, float), default (0.5, 1.2)
        Multiplicative decrease and increase :math:`(\eta_-, \eta_+)`, with
        :math:`0 < \eta_- < 1 < \eta_+`.
    step_sizes : (float, float), default (1e-6, 50)
        Bounds :math:`(s_{min}, s_{max})` of the step sizes.
    capturable, foreach, differentiable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Notes
    -----
    State per parameter (PyTorch's keys): ``'step'``, ``'prev'`` (:math:`g'`)
    and ``'step_size'`` (:math:`s`).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import Rprop
    >>> w = oxmera.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = Rprop([w], lr=0.1)
    >>> for _ in range(2):
    ...     opt.zero_grad(); (w * w).sum().backward(); opt.step()
    >>> w                       # 1 - 0.1 - 0.1 * 1.2
    tensor([ 0.78, -0.78], dtype=float32, requires_grad=True)
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "prev": "finite", "step_size": "non-negative"}
    _required_state = ("step", "prev", "step_size")

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr")
        eta_minus, eta_plus = _pair(where, group, "etas", "(etaminus, etaplus)")
        if not 0.0 < eta_minus < 1.0 < eta_plus:
            raise ValueError(f"{where}: invalid eta values: {eta_minus}, {eta_plus} (must be "
                             f"0 < etaminus < 1 < etaplus)")
        low, high = _pair(where, group, "step_sizes", "(min_step_size, max_step_size)")
        if not 0.0 <= low <= high:
            raise ValueError(f"{where}: invalid step_sizes: {group['step_sizes']!r} (must be "
                             f"0 <= min_step_size <= max_step_size)")
        _check_flags(where, group, "maximize")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import Rprop
        >>> w = oxmera.tensor([0.5], requires_grad=True)
        >>> opt = Rprop([w])
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['prev', 'step', 'step_size']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            eta_minus, eta_plus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            def new_state(array):
                return {**_zero_buffers(array, "prev"),
                        "step_size": from_numpy(np.full_like(array, group["lr"]))}

            for param, grad, state in self._updates(group, new_state):
                _step_count(state)
                prev = state["prev"]._data
                step_size = state["step_size"]._data
                sign = np.sign(grad * prev)
                sign[sign > 0] = eta_plus
                sign[sign < 0] = eta_minus
                sign[sign == 0] = 1
                step_size *= sign
                np.clip(step_size, step_size_min, step_size_max, out=step_size)
                grad = np.array(grad, dtype=param.dtype)
                grad[sign == eta_minus] = 0
                param -= np.sign(grad) * step_size
                prev[...] = grad
        return loss
