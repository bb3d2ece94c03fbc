"""NAdam: Adam with Nesterov momentum (Dozat, 2016), with a momentum schedule.

PyTorch's ``torch.optim.NAdam`` algorithm, step for step. As there, the
running product of the momentum coefficients, ``'mu_product'``, is a 0-d
float32 tensor (each product is rounded to float32, whatever the
parameters' dtype), so trajectories and state dicts match PyTorch's.
"""
import numpy as np

from oxmera.optim.optimizer import (Optimizer, _check_betas, _check_flags, _check_non_negative,
                                    _lerp_, _step_count, _zero_buffers)
from oxmera.ops.creation import tensor

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam: Adam with Nesterov momentum.

    For each parameter :math:`\theta` with gradient :math:`g` at step :math:`t`,
    with :math:`\mu_t = \beta_1 (1 - \tfrac12 \cdot 0.96^{t\psi})`:

    .. math::

        g &\leftarrow g + \lambda \theta \quad (\lambda \neq 0;
            \text{ decoupled: } \theta \leftarrow \theta (1 - \gamma\lambda) \text{ instead}) \\
        m &\leftarrow \beta_1 m + (1 - \beta_1) g, \qquad
        v \leftarrow \beta_2 v + (1 - \beta_2) g^2 \\
        \theta &\leftarrow \theta - \gamma \frac{(1 - \mu_t) g / (1 - \prod_{i \le t} \mu_i)
            + \mu_{t+1} m / (1 - \prod_{i \le t+1} \mu_i)}{\sqrt{v / (1 - \beta_2^t)}
            + \epsilon}

    Parameters
    ----------
    params : iterable
        Tensors to optimize, or dicts defining parameter groups.
    lr : float, default 2e-3
        Learning rate :math:`\gamma`.
    betas : (float, float), default (0.9, 0.999)
        Decay rates :math:`\beta_1, \beta_2` of the moment estimates.
    eps : float, default 1e-8
        Added to the denominator for numerical stability.
    weight_decay : float, default 0
        Weight decay :math:`\lambda`.
    momentum_decay : float, default 4e-3
        Momentum decay :math:`\psi` of the schedule of :math:`\mu_t`.
    decoupled_weight_decay : bool, default False
        Decay the weights directly (as AdamW does; NAdamW) instead of
        through the gradient.
    foreach, capturable, differentiable : optional
        Accepted as PyTorch takes them; they select PyTorch's kernels and
        change nothing here (see ``Optimizer``).
    maximize : bool, default False
        Maximize the objective instead of minimizing it.

    Notes
    -----
    State per parameter (PyTorch's keys): ``'step'``, ``'mu_product'`` (both
    0-d float32 tensors), ``'exp_avg'`` and ``'exp_avg_sq'``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import NAdam
    >>> w = oxmera.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); opt.step()
    >>> w
    tensor([ 0.8944, -0.8944], dtype=float32, requires_grad=True)
    >>> opt.state[w]['mu_product']
    tensor(0.4501, dtype=float32)
    """

    # What step() reads from each parameter's state (load_state_dict checks it).
    _state_kinds = {"step": "step", "mu_product": "scalar", "exp_avg": "finite",
                    "exp_avg_sq": "non-negative"}
    _required_state = ("step", "mu_product", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr", "eps")
        _check_betas(where, group)
        _check_non_negative(where, group, "weight_decay", "momentum_decay")
        _check_flags(where, group, "decoupled_weight_decay", "maximize")

    def step(self, closure=None):
        """Update the parameters once; see ``Optimizer.step``.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import NAdam
        >>> w = oxmera.tensor([0.5], requires_grad=True)
        >>> opt = NAdam([w], weight_decay=0.1, decoupled_weight_decay=True)
        >>> w.sum().backward(); opt.step()
        >>> sorted(opt.state[w])
        ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
        """
        loss = self._begin_step(closure)
        for group in self.param_groups:
            lr, eps = group["lr"], group["eps"]
            beta1, beta2 = group["betas"]
            weight_decay = group["weight_decay"]
            momentum_decay = group["momentum_decay"]
            def new_state(array):
                return {"mu_product": tensor(1.0, dtype=np.float32),
                        **_zero_buffers(array, "exp_avg", "exp_avg_sq")}

            for param, grad, state in self._updates(group, new_state):
                step = _step_count(state)
                bias_correction2 = 1 - beta2 ** step
                if weight_decay != 0:
                    if group["decoupled_weight_decay"]:
                        param *= 1 - lr * weight_decay
                    else:
                        grad = grad + weight_decay * param
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                # PyTorch multiplies the float32 tensor by mu rounded to float32.
                mu_product = state["mu_product"]._data
                mu_product *= np.float32(mu)
                mu_product_value = float(mu_product)
                exp_avg = state["exp_avg"]._data
                exp_avg_sq = state["exp_avg_sq"]._data
                _lerp_(exp_avg, grad, 1 - beta1)
                exp_avg_sq *= beta2
                exp_avg_sq += (1 - beta2) * grad * grad
                denom = np.sqrt(exp_avg_sq / bias_correction2)
                denom += eps
                mu_product_next = mu_product_value * mu_next
                update = (-lr * (1.0 - mu) / (1.0 - mu_product_value)) * grad
                update /= denom
                param += update
                update = ((-lr * mu_next) / (1.0 - mu_product_next)) * exp_avg
                update /= denom
                param += update
        return loss
