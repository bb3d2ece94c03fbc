"""The learning-rate schedulers' base class, ``LRScheduler``, and the checks they share.

``LRScheduler`` owns what every schedule shares, in PyTorch's shapes:
``base_lrs``, ``last_epoch``, ``step()`` (advance ``last_epoch``, ask the
subclass's ``get_lr()`` for the next rates, write them into the groups),
``get_last_lr()``, and ``state_dict``/``load_state_dict`` (every attribute
but the optimizer; a loaded state is checked key by key, by the rules the
constructor applies, before anything changes). The schedules themselves
live in ``lr_scheduler`` (decays), ``_lr_cyclic`` (cyclic and one-cycle
schedules, warm restarts), ``_lr_combined`` (``SequentialLR``,
``ChainedScheduler``) and ``_lr_plateau`` (``ReduceLROnPlateau``); users
import all of them from ``oxmera.optim.lr_scheduler``.
"""
import warnings

import numpy as np

from oxmera.optim.optimizer import Optimizer, _check_non_negative

__all__ = ["LRScheduler"]

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

    def _take_settings(self, settings):
        """Check a subclass's constructor arguments (by the rules ``load_state_dict``
        applies to them) and make them attributes."""
        self._check_settings(type(self).__name__, settings)
        self.__dict__.update(settings)

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
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """Advance to the next epoch (or jump to ``epoch``) and set the groups' rates."""
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        self._set_lrs(values)

    def _set_lrs(self, values):
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]

