"""Learning-rate schedulers, with PyTorch's ``torch.optim.lr_scheduler`` names.

This module holds the decays (``StepLR``, ``MultiStepLR``,
``ExponentialLR``, ``CosineAnnealingLR``, ``LambdaLR``,
``MultiplicativeLR``, ``ConstantLR``, ``LinearLR``, ``PolynomialLR``) and
exports the rest: the base class ``LRScheduler`` (``_lr_base``), the
cyclic schedules ``CyclicLR``, ``OneCycleLR`` and
``CosineAnnealingWarmRestarts`` (``_lr_cyclic``), the combinations
``SequentialLR`` and ``ChainedScheduler`` (``_lr_combined``) and
``ReduceLROnPlateau`` (``_lr_plateau``).

Each follows PyTorch to the float: the schedulers are *chainable* (each
``step()`` computes the next learning rate from the group's current
``'lr'``, e.g. cosine annealing by PyTorch's recursive formula), so two
schedulers on one optimizer compose as they do in PyTorch. Constructing a
scheduler records ``'initial_lr'`` in each parameter group and makes the
first step (``last_epoch`` becomes 0).

Call ``scheduler.step()`` after ``optimizer.step()``, once per epoch (or
per batch, as the schedule is meant). ``state_dict()`` holds every
attribute but the optimizer; ``oxmera.save`` can write it.

Not done here: PyTorch's warning when ``scheduler.step()`` is called before
``optimizer.step()`` (it wraps the optimizer's ``step``).
"""
import math
import types
from bisect import bisect_right
from collections import Counter

import numpy as np

from oxmera.optim._lr_base import LRScheduler, _check_counts, _check_optimizer
from oxmera.optim._lr_combined import ChainedScheduler, SequentialLR
from oxmera.optim._lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from oxmera.optim._lr_plateau import ReduceLROnPlateau
from oxmera.optim.optimizer import _check_finite, _real

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR",
           "ConstantLR", "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
           "ChainedScheduler", "SequentialLR", "ReduceLROnPlateau", "CyclicLR", "OneCycleLR",
           "CosineAnnealingWarmRestarts"]


class _LambdaScheduler(LRScheduler):
    """What ``LambdaLR`` and ``MultiplicativeLR`` share: one callable per group, and
    state dicts that keep the attributes of callable objects (not plain functions)."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        name = type(self).__name__
        _check_optimizer(optimizer, name)
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"{name}: expected {len(optimizer.param_groups)} lr_lambdas "
                                 f"(one per parameter group), but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"{name}: lr_lambda should be a function, but got "
                                f"{type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    _not_attributes = ("lr_lambdas",)

    def load_state_dict(self, state_dict):
        saved = state_dict.get("lr_lambdas") if isinstance(state_dict, dict) else None
        if isinstance(state_dict, dict) and "lr_lambdas" in state_dict and not (
                isinstance(saved, (list, tuple)) and len(saved) == len(self.lr_lambdas)
                and all(item is None or (isinstance(item, dict) and hasattr(fn, "__dict__"))
                        for fn, item in zip(self.lr_lambdas, saved))):
            raise ValueError(f"{type(self).__name__}.load_state_dict(): lr_lambdas must be a "
                             f"list of {len(self.lr_lambdas)} entries, None for a function "
                             f"and the attributes (a dict) of a callable object, got "
                             f"{saved!r}")
        super().load_state_dict(state_dict)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_LambdaScheduler):
    """Each group's learning rate is its initial one times ``lr_lambda(epoch)``.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    lr_lambda : callable or list of callables
        ``epoch -> factor``, or one per parameter group.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Notes
    -----
    ``state_dict()`` stores the ``__dict__`` of lambdas that are callable
    objects and None for plain functions (which are not state).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import LambdaLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    >>> for _ in range(3):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.0125]
    """

    def get_lr(self):
        return [base_lr * lmbda(self.last_epoch)
                for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """Multiply each group's learning rate by ``lr_lambda(epoch)`` at every epoch.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    lr_lambda : callable or list of callables
        ``epoch -> factor``, or one per parameter group.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Notes
    -----
    State dicts keep callable objects' attributes, as ``LambdaLR``'s do.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import MultiplicativeLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> for _ in range(3):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.125]
    """

    def get_lr(self):
        if self._is_initial:
            return self._current_lrs()
        return [group["lr"] * lmbda(self.last_epoch)
                for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply each group's learning rate by ``gamma`` every ``step_size`` epochs.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    step_size : int
        Period of the decay, in epochs.
    gamma : float, default 0.1
        Factor of each decay.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import StepLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
    >>> lrs
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        settings = {"step_size": step_size, "gamma": gamma}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        step_size = settings["step_size"]
        if isinstance(step_size, (bool, np.bool_)) or not isinstance(
                step_size, (int, float, np.integer, np.floating)) or not (
                0 < step_size < math.inf and int(step_size) == step_size):
            raise ValueError(f"{where}: step_size must be a positive integer, got "
                             f"{step_size!r}")
        _check_finite(where, settings, "gamma")

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply each group's learning rate by ``gamma`` at each milestone epoch.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    milestones : iterable of int
        Epochs at which to decay (a repeated milestone decays that many times).
    gamma : float, default 0.1
        Factor of each decay.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import MultiStepLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
    >>> lrs
    [1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        settings = {"milestones": Counter(milestones), "gamma": gamma}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        milestones = settings["milestones"]
        if not isinstance(milestones, dict):
            raise ValueError(f"{where}: milestones must be a dict (a Counter) from epoch to "
                             f"count, got {type(milestones).__name__}")
        for epoch, count in milestones.items():
            _check_counts(where, {"milestone": epoch, "milestone count": count}, 0,
                          "milestone", "milestone count")
        # A state dict read back by oxmera.load holds a plain dict.
        settings["milestones"] = Counter(milestones)
        _check_finite(where, settings, "gamma")

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch]
                for lr in self._current_lrs()]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply each group's learning rate by ``gamma`` every epoch.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    gamma : float
        Factor of the decay per epoch.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import ExponentialLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        settings = {"gamma": gamma}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        _check_finite(where, settings, "gamma")

    def get_lr(self):
        if self._is_initial:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal each group's learning rate along a cosine from its initial value to ``eta_min``.

    .. math::

        \eta_t = \eta_{min} + \frac{1}{2}(\eta_{max} - \eta_{min})
                 \left(1 + \cos\left(\frac{t\pi}{T_{max}}\right)\right)

    computed, as PyTorch does, recursively from the current learning rate
    (so it composes with other schedulers); past ``T_max`` it rises again.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    T_max : int
        Number of epochs of the half period.
    eta_min : float, default 0
        The minimum learning rate.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import CosineAnnealingLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingLR(opt, T_max=2)
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.5, 0.0, 0.5]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        settings = {"T_max": T_max, "eta_min": eta_min}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        _check_finite(where, settings, "T_max", "eta_min")
        if settings["T_max"] <= 0:
            raise ValueError(f"{where}: T_max must be positive, got {settings['T_max']!r}")

    def get_lr(self):
        if self._is_initial:
            return self._current_lrs()
        groups = self.optimizer.param_groups
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base_lr - self.eta_min)
                    * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


def _check_factor(where, settings, key, low, high, message, *, open_low=False):
    """Raise ``ValueError`` (PyTorch's message) unless ``settings[key]`` is in
    ``[low, high]`` (``(low, high]`` when ``open_low``)."""
    value = _real(where, key, settings[key])
    if not (low < value if open_low else low <= value) or not value <= high:
        raise ValueError(f"{where}: {message} (got {key}={settings[key]!r})")


class ConstantLR(LRScheduler):
    """Multiply each group's learning rate by ``factor`` until epoch ``total_iters``.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    factor : float, default 1/3
        The factor, in [0, 1] (the rate is divided by it again at ``total_iters``).
    total_iters : int, default 5
        Number of epochs the factor applies.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import ConstantLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ConstantLR(opt, factor=0.5, total_iters=2)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
    >>> lrs
    [0.5, 0.5, 1.0, 1.0]
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        settings = {"factor": factor, "total_iters": total_iters}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        _check_factor(where, settings, "factor", 0.0, 1.0,
                      "Constant multiplicative factor expected to be between 0 and 1.")
        _check_counts(where, settings, 0, "total_iters")

    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters)
                           * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Change each group's learning rate linearly, from ``start_factor`` to
    ``end_factor`` times its initial one, over ``total_iters`` epochs (a warm-up).

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    start_factor : float, default 1/3
        Factor of the first epoch, in (0, 1].
    end_factor : float, default 1.0
        Factor from epoch ``total_iters`` on, in [0, 1].
    total_iters : int, default 5
        Number of epochs of the change.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import LinearLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
    >>> lrs
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        settings = {"start_factor": start_factor, "end_factor": end_factor,
                    "total_iters": total_iters}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        _check_factor(where, settings, "start_factor", 0.0, 1.0,
                      "Starting multiplicative factor expected to be greater than 0 and less "
                      "or equal to 1.", open_low=True)
        _check_factor(where, settings, "end_factor", 0.0, 1.0,
                      "Ending multiplicative factor expected to be between 0 and 1.")
        _check_counts(where, settings, 0, "total_iters")

    def get_lr(self):
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        slope = self.end_factor - self.start_factor
        return [group["lr"] * (1.0 + slope / (self.total_iters * self.start_factor
                                              + (self.last_epoch - 1) * slope))
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay each group's learning rate to zero by a polynomial of the epoch, over
    ``total_iters`` epochs.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    total_iters : int, default 5
        Number of epochs of the decay (the rate is 0 from then on).
    power : float, default 1.0
        Power of the polynomial.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import PolynomialLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = PolynomialLR(opt, total_iters=4, power=2.0)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
    >>> lrs
    [1.0, 0.5625, 0.25, 0.0625, 0.0]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        settings = {"total_iters": total_iters, "power": power}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        _check_counts(where, settings, 1, "total_iters")
        _check_finite(where, settings, "power")

    def get_lr(self):
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        decay_factor = ((1.0 - self.last_epoch / self.total_iters)
                        / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay_factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]
