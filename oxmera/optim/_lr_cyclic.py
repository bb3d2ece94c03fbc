"""Cyclic learning-rate schedules: ``CyclicLR``, ``OneCycleLR`` and
``CosineAnnealingWarmRestarts`` (exported by ``oxmera.optim.lr_scheduler``).

They compute each rate in closed form from ``last_epoch`` (not from the
group's current rate), and ``CyclicLR``/``OneCycleLR`` also cycle the
momentum (``'momentum'``, or ``'betas'[0]`` for Adam-like optimizers)
inversely to the rate, as PyTorch's do, with PyTorch's formulas to the float.
"""
import math
import types

import numpy as np

from oxmera.optim._lr_base import LRScheduler, _check_counts, _check_optimizer, _check_rates
from oxmera.optim.optimizer import _check_finite, _check_flags, _real

__all__ = ["CyclicLR", "OneCycleLR", "CosineAnnealingWarmRestarts"]


def _format_param(name, optimizer, value):
    """One value per parameter group (a single value is repeated), as PyTorch's."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


def _momentum_key(where, optimizer):
    """``True`` when the optimizer's momentum is ``betas[0]`` (Adam), ``False`` for
    ``'momentum'`` (SGD, RMSprop); refuses one that has neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(f"{where}: optimizer must support momentum or beta1 with "
                         f"`cycle_momentum` option enabled ({type(optimizer).__name__} has "
                         f"neither)")
    return "betas" in optimizer.defaults


def _set_momentum(group, use_beta1, momentum):
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


class CyclicLR(LRScheduler):
    r"""Cycle each group's learning rate between ``base_lr`` and ``max_lr`` (Smith, 2017).

    Meant to be stepped after every batch. The rate rises linearly for
    ``step_size_up`` steps, falls for ``step_size_down``, and the cycle's
    amplitude is scaled by ``scale_fn`` of the cycle number (or of the step,
    ``scale_mode='iterations'``): 1 (``'triangular'``), halved each cycle
    (``'triangular2'``) or ``gamma ** step`` (``'exp_range'``). With
    ``cycle_momentum`` the momentum cycles the opposite way, between
    ``max_momentum`` and ``base_momentum``.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates (and momentum) to set.
    base_lr, max_lr : float or list of float
        Bounds of the cycle (one per group, for a list).
    step_size_up : int, default 2000
        Steps of the rising half of a cycle.
    step_size_down : int, optional
        Steps of the falling half (default ``step_size_up``).
    mode : {'triangular', 'triangular2', 'exp_range'}, default 'triangular'
        The amplitude policy (ignored when ``scale_fn`` is given).
    gamma : float, default 1.0
        Base of ``'exp_range'``.
    scale_fn : callable, optional
        A custom amplitude policy, ``x -> factor``.
    scale_mode : {'cycle', 'iterations'}, default 'cycle'
        What ``scale_fn`` receives: the cycle number or the step.
    cycle_momentum : bool, default True
        Cycle the momentum too (the optimizer needs ``momentum`` or ``betas``).
    base_momentum, max_momentum : float or list of float, default 0.8, 0.9
        Bounds of the momentum's cycle.
    last_epoch : int, default -1
        Index of the last step (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import CyclicLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    >>> sched = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(round(sched.get_last_lr()[0], 6)); opt.step(); sched.step()
    >>> lrs
    [0.1, 0.3, 0.5, 0.3, 0.1]
    >>> round(opt.param_groups[0]['momentum'], 6)   # the rate rises: the momentum falls
    0.85
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer, "CyclicLR")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        for key, value in (("step_size_up", step_size_up), ("step_size_down", step_size_down)):
            if value is not None and not 0 < _real("CyclicLR", key, value) < math.inf:
                raise ValueError(f"CyclicLR: {key} must be a positive number of steps, got "
                                 f"{value!r}")
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"CyclicLR: scale_fn must be callable, got {type(scale_fn).__name__}")
        settings = {"max_lrs": _format_param("max_lr", optimizer, max_lr),
                    "total_size": step_size_up + step_size_down,
                    "step_ratio": step_size_up / (step_size_up + step_size_down),
                    "mode": mode, "gamma": gamma, "_scale_fn_custom": scale_fn,
                    "scale_mode": scale_mode, "cycle_momentum": cycle_momentum}
        if cycle_momentum:
            settings["use_beta1"] = _momentum_key("CyclicLR", optimizer)
            settings["base_momentums"] = _format_param("base_momentum", optimizer,
                                                       base_momentum)
            settings["max_momentums"] = _format_param("max_momentum", optimizer, max_momentum)
        _check_rates("CyclicLR", {"base_lrs": base_lrs}, "base_lrs", len(base_lrs))
        self._check_settings("CyclicLR", settings)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.__dict__.update(settings)
        self._init_scale_fn()
        if cycle_momentum and last_epoch == -1:
            for high, low, group in zip(self.max_momentums, self.base_momentums,
                                        optimizer.param_groups):
                _set_momentum(group, self.use_beta1, high)
                group["max_momentum"] = high
                group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _check_settings(self, where, settings):
        if settings["mode"] not in ("triangular", "triangular2", "exp_range") and (
                settings["_scale_fn_custom"] is None):
            raise ValueError(f"{where}: mode is invalid and scale_fn is None (mode "
                             f"{settings['mode']!r}; use 'triangular', 'triangular2' or "
                             f"'exp_range', or give a scale_fn)")
        if settings["scale_mode"] not in ("cycle", "iterations"):
            raise ValueError(f"{where}: scale_mode must be 'cycle' or 'iterations', got "
                             f"{settings['scale_mode']!r}")
        _check_finite(where, settings, "gamma", "total_size", "step_ratio")
        if not (settings["total_size"] > 0 and 0 < settings["step_ratio"] < 1):
            raise ValueError(f"{where}: total_size {settings['total_size']} and step_ratio "
                             f"{settings['step_ratio']} do not describe a cycle")
        _check_rates(where, settings, "max_lrs", len(self.optimizer.param_groups))
        _check_flags(where, settings, "cycle_momentum")
        if settings["cycle_momentum"]:
            _check_flags(where, settings, "use_beta1")
            for key in ("base_momentums", "max_momentums"):
                _check_rates(where, settings, key, len(self.optimizer.param_groups))

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular2":
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self.scale_mode = "iterations"
        else:
            self.scale_mode = "cycle"

    def scale_fn(self, x):
        """The amplitude factor at ``x`` (a cycle number or a step, per ``scale_mode``).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import CyclicLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=0.1)
        >>> CyclicLR(opt, 0.1, 1.0, mode='triangular2', cycle_momentum=False).scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        if self.mode == "exp_range":
            return self.gamma ** x
        return 1.0

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                _set_momentum(group, self.use_beta1, high - (high - low) * scale_factor * scale)
        return lrs

    def state_dict(self):
        """The state, with a custom ``scale_fn`` kept as its attributes (None for a function).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import CyclicLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=0.1)
        >>> sd = CyclicLR(opt, 0.1, 1.0, cycle_momentum=False).state_dict()
        >>> sd['total_size'], sd['_scale_fn_custom']
        (4000.0, None)
        """
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else fn.__dict__.copy())
        return state

    _not_attributes = ("_scale_fn_custom",)

    def load_state_dict(self, state_dict):
        saved = state_dict.get("_scale_fn_custom") if isinstance(state_dict, dict) else None
        fn = self._scale_fn_custom
        if saved is not None and not (isinstance(saved, dict) and fn is not None
                                      and hasattr(fn, "__dict__")):
            raise ValueError(f"CyclicLR.load_state_dict(): _scale_fn_custom must be None or "
                             f"the attributes (a dict) of this scheduler's callable scale_fn "
                             f"object, got {saved!r}")
        state = dict(state_dict) if isinstance(state_dict, dict) else state_dict
        if isinstance(state, dict):          # checked against this scheduler's scale_fn
            state.setdefault("_scale_fn_custom", None)
            state.pop("_scale_fn_ref", None)  # PyTorch's bound function, never stored
        super().load_state_dict(state)
        if saved is not None:
            fn.__dict__.update(saved)
        self._init_scale_fn()

    def _check_state(self, where, state, current):
        state["_scale_fn_custom"] = self._scale_fn_custom     # for _check_settings
        super()._check_state(where, state, current)
        del state["_scale_fn_custom"]


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy (Smith & Topin): warm the learning rate up to ``max_lr``, then
    anneal it far below its start, over ``total_steps`` steps.

    The rate starts at ``max_lr / div_factor``, reaches ``max_lr`` after
    ``pct_start`` of the steps and ends at ``initial_lr / final_div_factor``
    (with ``three_phase``, it first comes back down to the start, then
    anneals). With ``cycle_momentum`` the momentum moves the opposite way
    between ``max_momentum`` and ``base_momentum``. Stepped once per batch;
    a step beyond ``total_steps`` is a ValueError.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates (and momentum) to set.
    max_lr : float or list of float
        Peak learning rate (one per group, for a list).
    total_steps : int, optional
        Number of steps of the cycle; or give ``epochs`` and ``steps_per_epoch``.
    epochs, steps_per_epoch : int, optional
        ``total_steps = epochs * steps_per_epoch``.
    pct_start : float, default 0.3
        Fraction of the steps spent increasing the rate.
    anneal_strategy : {'cos', 'linear'}, default 'cos'
        Shape of each phase.
    cycle_momentum : bool, default True
        Cycle the momentum too (the optimizer needs ``momentum`` or ``betas``).
    base_momentum, max_momentum : float or list of float, default 0.85, 0.95
        Bounds of the momentum's cycle.
    div_factor : float, default 25
        ``initial_lr = max_lr / div_factor``.
    final_div_factor : float, default 1e4
        ``min_lr = initial_lr / final_div_factor``.
    three_phase : bool, default False
        Use three phases (up, back down to ``initial_lr``, anneal) instead of two.
    last_epoch : int, default -1
        Index of the last step (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import Adam
    >>> from oxmera.optim.lr_scheduler import OneCycleLR
    >>> opt = Adam([oxmera.zeros(1, requires_grad=True)])
    >>> sched = OneCycleLR(opt, max_lr=1.0, total_steps=5, pct_start=0.4,
    ...                    anneal_strategy='linear', div_factor=10, final_div_factor=10)
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 4)); opt.step(); sched.step()
    >>> lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.1, 1.0, 0.67, 0.34, 0.01]
    >>> opt.param_groups[0]['betas'][0]      # momentum back at max_momentum
    0.95
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(optimizer, "OneCycleLR")
        self.optimizer = optimizer
        if total_steps is not None:
            if not _is_int(total_steps) or total_steps <= 0:
                raise ValueError(f"OneCycleLR: Expected positive integer total_steps, but got "
                                 f"{total_steps}")
        elif epochs is not None and steps_per_epoch is not None:
            if not _is_int(epochs) or epochs <= 0:
                raise ValueError(f"OneCycleLR: Expected positive integer epochs, but got "
                                 f"{epochs}")
            if not _is_int(steps_per_epoch) or steps_per_epoch <= 0:
                raise ValueError(f"OneCycleLR: Expected positive integer steps_per_epoch, but "
                                 f"got {steps_per_epoch}")
            total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("OneCycleLR: You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: Expected float between 0 and 1 pct_start, but got "
                             f"{pct_start}")
        for key, value in (("div_factor", div_factor), ("final_div_factor", final_div_factor)):
            if not 0 < _real("OneCycleLR", key, value) < math.inf:
                raise ValueError(f"OneCycleLR: {key} must be a positive number, got {value!r}")
        if three_phase:
            phases = [(float(pct_start * total_steps) - 1, "initial_lr", "max_lr",
                       "max_momentum", "base_momentum"),
                      (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                      (total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                       "max_momentum")]
        else:
            phases = [(float(pct_start * total_steps) - 1, "initial_lr", "max_lr",
                       "max_momentum", "base_momentum"),
                      (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        settings = {"total_steps": total_steps,
                    "_schedule_phases": [dict(zip(keys, phase)) for phase in phases],
                    "_anneal_func_type": anneal_strategy, "cycle_momentum": cycle_momentum}
        if cycle_momentum:
            settings["use_beta1"] = _momentum_key("OneCycleLR", optimizer)
        self._check_settings("OneCycleLR", settings)
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        _check_rates("OneCycleLR", {"max_lr": max_lrs}, "max_lr", len(max_lrs))
        if cycle_momentum:
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            for key, values in (("max_momentum", max_momentums),
                                ("base_momentum", base_momentums)):
                _check_rates("OneCycleLR", {key: values}, key, len(values))
        if last_epoch == -1:
            for group, peak in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = peak / div_factor
                group["max_lr"] = peak
                group["min_lr"] = group["initial_lr"] / final_div_factor
            if cycle_momentum:
                for high, low, group in zip(max_momentums, base_momentums,
                                            optimizer.param_groups):
                    _set_momentum(group, settings["use_beta1"], high)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        self.__dict__.update(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        if settings["_anneal_func_type"] not in ("cos", "linear"):
            raise ValueError(f"{where}: anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {settings['_anneal_func_type']}")
        _check_counts(where, settings, 1, "total_steps")
        _check_flags(where, settings, "cycle_momentum")
        if settings["cycle_momentum"]:
            _check_flags(where, settings, "use_beta1")
        phases = settings["_schedule_phases"]
        names = ("initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum")
        if not (isinstance(phases, (list, tuple)) and phases and all(
                isinstance(p, dict) and set(p) == {"end_step", "start_lr", "end_lr",
                                                  "start_momentum", "end_momentum"}
                and all(p[k] in names for k in p if k != "end_step")
                and math.isfinite(_real(where, "end_step", p["end_step"])) for p in phases)):
            raise ValueError(f"{where}: _schedule_phases must be a list of phases (dicts of "
                             f"end_step, start_lr, end_lr, start_momentum, end_momentum), got "
                             f"{phases!r}")

    @staticmethod
    def _anneal(kind, start, end, pct):
        if kind == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def step(self, epoch=None):
        """Advance one step; see ``LRScheduler.step`` (a step beyond ``total_steps``
        raises ValueError and changes nothing).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import OneCycleLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        >>> sched = OneCycleLR(opt, max_lr=1.0, total_steps=10)
        >>> sched.step()
        >>> sched.last_epoch
        1
        """
        step_num = self.last_epoch + 1 if epoch is None else epoch
        if step_num > self.total_steps:
            raise ValueError(f"OneCycleLR: Tried to step {step_num} times. The specified "
                             f"number of total steps is {self.total_steps}")
        super().step(epoch)

    def get_lr(self):
        lrs = []
        step_num = self.last_epoch
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(self._anneal_func_type, group[phase["start_lr"]],
                                            group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self.use_beta1, self._anneal(
                            self._anneal_func_type, group[phase["start_momentum"]],
                            group[phase["end_momentum"]], pct))
                    break
                start_step = phase["end_step"]
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing with warm restarts (SGDR, Loshchilov & Hutter).

    .. math::

        \eta_t = \eta_{min} + \tfrac12 (\eta_{max} - \eta_{min})
                 \left(1 + \cos\left(\pi \, T_{cur} / T_i\right)\right)

    where :math:`T_{cur}` counts the epochs since the last restart and
    :math:`T_i` (first ``T_0``) is multiplied by ``T_mult`` at each restart.
    ``step(epoch)`` takes fractional epochs (``epoch + batch / batches``) to
    anneal within an epoch.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer whose learning rates to set.
    T_0 : int
        Epochs until the first restart.
    T_mult : int, default 1
        Factor of the period after each restart (>= 1).
    eta_min : float, default 0
        Minimum learning rate.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import CosineAnnealingWarmRestarts
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    >>> lrs = []
    >>> for _ in range(7):
    ...     lrs.append(round(sched.get_last_lr()[0], 4)); opt.step(); sched.step()
    >>> lrs
    [1.0, 0.5, 1.0, 0.8536, 0.5, 0.1464, 1.0]
    >>> sched.step(0.5)            # a fractional epoch
    >>> round(sched.get_last_lr()[0], 4)
    0.8536
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        settings = {"T_0": T_0, "T_i": T_0, "T_mult": T_mult, "eta_min": eta_min,
                    "T_cur": last_epoch}
        self._take_settings(settings)
        super().__init__(optimizer, last_epoch)

    def _check_settings(self, where, settings):
        if not _is_int(settings["T_0"]) or settings["T_0"] <= 0:
            raise ValueError(f"{where}: Expected positive integer T_0, but got "
                             f"{settings['T_0']}")
        if not _is_int(settings["T_mult"]) or settings["T_mult"] < 1:
            raise ValueError(f"{where}: Expected integer T_mult >= 1, but got "
                             f"{settings['T_mult']}")
        eta_min = settings["eta_min"]
        if isinstance(eta_min, (bool, np.bool_)) or not isinstance(
                eta_min, (float, int, np.floating, np.integer)):
            raise ValueError(f"{where}: Expected float or int eta_min, but got {eta_min} of "
                             f"type {type(eta_min)}")
        _check_finite(where, settings, "eta_min", "T_i", "T_cur")
        if not settings["T_i"] > 0:
            raise ValueError(f"{where}: T_i must be positive, got {settings['T_i']}")

    def get_lr(self):
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to ``epoch`` (fractional epochs allowed).

        Parameters
        ----------
        epoch : float, optional
            The epoch to go to (``>= 0``); None advances by one.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import CosineAnnealingWarmRestarts
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = CosineAnnealingWarmRestarts(opt, T_0=4)
        >>> sched.step(6.0)            # two epochs into the second period
        >>> round(sched.get_last_lr()[0], 6), sched.T_cur
        (0.5, 2.0)
        """
        # As PyTorch's, this step does not count into _step_count.
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            t_cur, t_i = self.T_cur + 1, self.T_i
            if t_cur >= t_i:
                t_cur, t_i = t_cur % t_i, t_i * self.T_mult
        else:
            if not 0 <= _real("CosineAnnealingWarmRestarts.step()", "epoch", epoch) < math.inf:
                raise ValueError(f"CosineAnnealingWarmRestarts.step(): Expected non-negative "
                                 f"epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    t_cur, t_i = epoch % self.T_0, self.T_i
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    t_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    t_i = self.T_0 * self.T_mult ** n
            else:
                t_cur, t_i = epoch, self.T_0
        self.T_cur, self.T_i = t_cur, t_i
        self.last_epoch = math.floor(epoch)
        self._set_lrs(self.get_lr())
