"""Learning-rate schedulers: ``StepLR``, ``MultiStepLR``, ``ExponentialLR``,
``CosineAnnealingLR``, ``LambdaLR`` and ``ReduceLROnPlateau``.

Each follows PyTorch's ``torch.optim.lr_scheduler`` to the float: the
schedulers are *chainable* (each ``step()`` computes the next learning rate
from the group's current ``'lr'``, e.g. cosine annealing by PyTorch's
recursive formula), so two schedulers on one optimizer compose as they do
in PyTorch. Constructing a scheduler records ``'initial_lr'`` in each
parameter group and makes the first step (``last_epoch`` becomes 0).

Call ``scheduler.step()`` after ``optimizer.step()``, once per epoch (or
per batch, as the schedule is meant). ``state_dict()`` holds every
attribute but the optimizer; ``oxmera.save`` can write it.

Not done here: PyTorch's warning when ``scheduler.step()`` is called before
``optimizer.step()`` (it wraps the optimizer's ``step``).
"""
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

import numpy as np

from oxmera.optim.optimizer import Optimizer, _check_finite, _check_non_negative, _real

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "ReduceLROnPlateau"]

_EPOCH_DEPRECATION = ("The epoch parameter in `scheduler.step()` is deprecated (as in "
                      "PyTorch); call `scheduler.step()` without it")


#: Keys of PyTorch's scheduler state dicts that only matter inside ``step()``: accepted
#: by ``load_state_dict`` and not loaded.
_BOOKKEEPING_KEYS = ("verbose", "_get_lr_called_within_step", "_is_initial")


def _check_optimizer(optimizer, name):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{name}: {type(optimizer).__name__} is not an Optimizer")


def _check_counts(where, state, low, *keys):
    """Raise ``ValueError`` unless each ``state[key]`` is an int ``>= low``."""
    for key in keys:
        value = state[key]
        if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer))
                or value < low):
            raise ValueError(f"{where}: invalid {key}: {value!r} (must be an int >= {low})")


def _check_rates(where, state, key, length):
    """Raise unless ``state[key]`` is a list of ``length`` finite learning rates >= 0."""
    rates = state[key]
    if not isinstance(rates, (list, tuple)) or len(rates) != length:
        raise ValueError(f"{where}: {key} must be a list of {length} learning rates (one per "
                         f"parameter group), got {rates!r}")
    _check_non_negative(where, {f"{key}[{i}]": rate for i, rate in enumerate(rates)},
                        *(f"{key}[{i}]" for i in range(length)))


class LRScheduler:
    """Base class of the learning-rate schedulers.

    Subclasses implement ``get_lr()``: the learning rate of each parameter
    group after ``last_epoch`` has been advanced.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose groups' ``'lr'`` this scheduler sets.
    last_epoch : int, default -1
        Index of the last epoch done: -1 starts the schedule (and records
        each group's ``'initial_lr'``); another value resumes it, and needs
        ``'initial_lr'`` in every group (load the optimizer's state first).

    Attributes
    ----------
    base_lrs : list of float
        Each group's ``'initial_lr'``.
    last_epoch : int
        Number of ``step()`` calls made since the start of the schedule.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import LRScheduler
    >>> class Halving(LRScheduler):
    ...     def get_lr(self):
    ...         return [base / 2 ** self.last_epoch for base in self.base_lrs]
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = Halving(opt)
    >>> sched.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer, type(self).__name__)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"{type(self).__name__}: param 'initial_lr' is not specified in "
                        f"param_groups[{i}] when resuming a scheduler with last_epoch >= 0; "
                        f"load the optimizer's state dict first, or pass last_epoch=-1")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        """The scheduler's state: every attribute but the optimizer.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import StepLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sd = StepLR(opt, step_size=2).state_dict()
        >>> sd['last_epoch'], sd['step_size'], sd['base_lrs']
        (0, 2, [1.0])
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    #: Keys of ``state_dict()`` that are not attributes (loaded by the subclass).
    _not_attributes = ()

    def load_state_dict(self, state_dict):
        """Restore the state from ``state_dict()``.

        The state dict must hold the keys this scheduler's ``state_dict()``
        holds (PyTorch's bookkeeping keys are accepted and ignored), each
        value checked as the constructor checks its arguments, before any
        is loaded: a state dict that does not fit raises ``ValueError``
        and leaves the scheduler as it was.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import ExponentialLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = ExponentialLR(opt, gamma=0.5)
        >>> sched.step()
        >>> sched2 = ExponentialLR(opt, gamma=0.5)
        >>> sched2.load_state_dict(sched.state_dict())
        >>> sched2.last_epoch
        1
        >>> sched2.load_state_dict(dict(sched.state_dict(), gamma=float('nan')))
        Traceback (most recent call last):
          ...
        ValueError: ExponentialLR.load_state_dict(): invalid gamma value: nan (must be finite)
        """
        name = f"{type(self).__name__}.load_state_dict()"
        if not isinstance(state_dict, dict):
            raise TypeError(f"{name}: expected a dict, got {type(state_dict).__name__}")
        current = self.state_dict()
        unknown = [key for key in state_dict
                   if key not in current and key not in _BOOKKEEPING_KEYS]
        missing = [key for key in current
                   if key not in state_dict and key not in _BOOKKEEPING_KEYS]
        if unknown or missing:
            raise ValueError(f"{name}: the state dict does not fit this {type(self).__name__} "
                             f"(unexpected keys: {unknown}; missing keys: {missing}); is it "
                             f"another scheduler's?")
        state = {key: value for key, value in state_dict.items()
                 if key not in _BOOKKEEPING_KEYS and key not in self._not_attributes}
        try:
            self._check_state(name, state, current)
        except TypeError as err:             # a state dict that does not fit: ValueError
            raise ValueError(str(err)) from None
        self.__dict__.update(state)

    def _check_state(self, where, state, current):
        """Check (and normalize, in place) a state to load; ``current`` is this one's."""
        if "last_epoch" in state:
            _check_counts(where, state, -1, "last_epoch")
        if "_step_count" in state:
            _check_counts(where, state, 0, "_step_count")
        for key in ("base_lrs", "_last_lr", "min_lrs"):     # the lists of one rate per group
            if key in state:
                _check_rates(where, state, key, len(current[key]))
        self._check_settings(where, state)

    def _check_settings(self, where, settings):
        """Raise unless the subclass's own settings (``gamma``...) in ``settings`` are
        usable, normalizing them in place; the constructor and ``load_state_dict`` both
        run it, so the two cannot drift apart."""

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per parameter group.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import ExponentialLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = ExponentialLR(opt, gamma=0.5)
        >>> sched.step()
        >>> sched.get_last_lr()
        [0.5]
        """
        return self._last_lr

    def get_lr(self):
        """The next learning rate of each group (called by ``step()``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement get_lr()")

    def step(self, epoch=None):
        """Advance the schedule by one epoch and set each group's ``'lr'``.

        Parameters
        ----------
        epoch : int, optional
            Deprecated (as in PyTorch): jump to this epoch, using the
            closed-form schedule where there is one.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import StepLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = StepLR(opt, step_size=1, gamma=0.1)
        >>> sched.step()
        >>> opt.param_groups[0]['lr']
        0.1
        """
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]


class LambdaLR(LRScheduler):
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

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(optimizer, "LambdaLR")
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"LambdaLR: expected {len(optimizer.param_groups)} lr_lambdas "
                                 f"(one per parameter group), but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
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
            raise ValueError(f"LambdaLR.load_state_dict(): lr_lambdas must be a list of "
                             f"{len(self.lr_lambdas)} entries, None for a function and the "
                             f"attributes (a dict) of a callable object, got {saved!r}")
        super().load_state_dict(state_dict)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)

    def get_lr(self):
        return [base_lr * lmbda(self.last_epoch)
                for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


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
        self._check_settings("StepLR", settings)
        self.__dict__.update(settings)
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
        self._check_settings("MultiStepLR", settings)
        self.__dict__.update(settings)
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
        self._check_settings("ExponentialLR", settings)
        self.gamma = gamma
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
        self._check_settings("CosineAnnealingLR", settings)
        self.__dict__.update(settings)
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


class ReduceLROnPlateau(LRScheduler):
    """Reduce the learning rates when a metric has stopped improving.

    ``step(metric)`` after each validation: once the metric has not improved
    for more than ``patience`` epochs, each group's learning rate is
    multiplied by ``factor`` (not below its ``min_lr``), then ``cooldown``
    epochs pass before bad epochs count again.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    mode : {'min', 'max'}, default 'min'
        Whether the metric should decrease (a loss) or increase (an accuracy).
    factor : float, default 0.1
        Factor of each reduction (< 1).
    patience : int, default 10
        Epochs without improvement tolerated before reducing.
    threshold : float, default 1e-4
        Smallest change that counts as an improvement.
    threshold_mode : {'rel', 'abs'}, default 'rel'
        ``'rel'``: better than ``best * (1 ∓ threshold)``; ``'abs'``: better
        than ``best ∓ threshold``.
    cooldown : int, default 0
        Epochs to wait after a reduction before counting bad epochs again.
    min_lr : float or list of float, default 0
        Lower bound of the learning rate (per group, for a list).
    eps : float, default 1e-8
        A reduction smaller than this is skipped.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import ReduceLROnPlateau
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for val_loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9]:
    ...     sched.step(val_loss)
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        _check_optimizer(optimizer, "ReduceLROnPlateau")
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"ReduceLROnPlateau: expected {len(optimizer.param_groups)} "
                                 f"min_lrs (one per parameter group), got {len(min_lr)}")
            default_min_lr, min_lrs = None, list(min_lr)
        else:
            default_min_lr, min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        settings = {"factor": factor, "min_lrs": min_lrs, "default_min_lr": default_min_lr,
                    "patience": patience, "cooldown": cooldown, "eps": eps, "mode": mode,
                    "threshold": threshold, "threshold_mode": threshold_mode}
        self._check_settings("ReduceLROnPlateau", settings)
        self.optimizer = optimizer
        self.__dict__.update(settings)
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        self._reset()

    def _check_settings(self, where, settings):
        factor = settings["factor"]
        if not _real(where, "factor", factor) < 1.0 or not math.isfinite(factor):
            raise ValueError(f"{where}: factor should be < 1.0, got {factor}")
        if settings["mode"] not in ("min", "max"):
            raise ValueError(f"{where}: mode {settings['mode']!r} is unknown (use 'min' or "
                             f"'max')")
        if settings["threshold_mode"] not in ("rel", "abs"):
            raise ValueError(f"{where}: threshold mode {settings['threshold_mode']!r} is "
                             f"unknown (use 'rel' or 'abs')")
        _check_finite(where, settings, "threshold")
        _check_non_negative(where, settings, "eps")
        _check_counts(where, settings, 0, "patience", "cooldown")
        _check_rates(where, settings, "min_lrs", len(settings["min_lrs"]))
        if settings["default_min_lr"] is not None:
            _check_non_negative(where, settings, "default_min_lr")
        # The progress through a plateau, in a loaded state dict.
        _check_counts(where, settings, 0,
                      *(key for key in ("cooldown_counter", "num_bad_epochs") if key in settings))
        if "best" in settings and math.isnan(_real(where, "best", settings["best"])):
            raise ValueError(f"{where}: invalid best value: nan (must be a number or +-inf)")
        settings["mode_worse"] = math.inf if settings["mode"] == "min" else -math.inf

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record one epoch's metric; reduce the learning rates after a plateau.

        Parameters
        ----------
        metrics : float or one-element Tensor
            The monitored quantity.
        epoch : int, optional
            Deprecated (as in PyTorch).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import ReduceLROnPlateau
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = ReduceLROnPlateau(opt, mode='max', patience=0)
        >>> sched.step(0.5); sched.step(0.4)
        >>> opt.param_groups[0]['lr']
        0.1
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"ReduceLROnPlateau: the number of param groups in the optimizer "
                    f"({len(groups)}) differs from when it was initialized "
                    f"({len(self.min_lrs)}), usually because a param group was added; set "
                    f"`min_lrs` to one value per group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self):
        """True while epochs after a reduction are being waited out."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold
