"""Schedulers made of schedulers: ``SequentialLR`` (one after another, switching at
milestones) and ``ChainedScheduler`` (all at once, their factors multiplying);
exported by ``oxmera.optim.lr_scheduler``.

Their state dicts hold their own attributes and, under ``'_schedulers'``,
each inner scheduler's state dict, as PyTorch's do; loading checks every
inner state before any is kept (a failure leaves all of them as they were).
"""
import copy
from bisect import bisect_right

from oxmera.optim._lr_base import LRScheduler, _check_counts, _check_optimizer
from oxmera.optim._lr_plateau import ReduceLROnPlateau

__all__ = ["SequentialLR", "ChainedScheduler"]


class _Combined(LRScheduler):
    """What the two share: checking the inner schedulers, and state dicts holding theirs."""

    def _check_schedulers(self, optimizer, schedulers):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for i, scheduler in enumerate(schedulers):
            if not hasattr(scheduler, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its "
                                f"attribute (got a {type(scheduler).__name__}).")
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                                 f"requires additional kwargs to be specified when calling "
                                 f"`step`, but got one at index {i} in the given schedulers "
                                 f"sequence.")
            if scheduler.optimizer is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same "
                                 f"optimizer, but got scheduler {type(scheduler).__name__} at "
                                 f"index {i} with another optimizer.")

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    _not_attributes = ("_schedulers",)

    def load_state_dict(self, state_dict):
        name = f"{type(self).__name__}.load_state_dict()"
        inner = state_dict.get("_schedulers") if isinstance(state_dict, dict) else None
        if isinstance(state_dict, dict) and not (
                isinstance(inner, (list, tuple)) and len(inner) == len(self._schedulers)):
            raise ValueError(f"{name}: '_schedulers' must be a list of "
                             f"{len(self._schedulers)} state dicts (one per scheduler), got "
                             f"{inner!r:.200}")
        own = copy.deepcopy({key: value for key, value in self.__dict__.items()
                             if key not in ("optimizer", "_schedulers")})
        saved = [copy.deepcopy(s.state_dict()) for s in self._schedulers]
        super().load_state_dict(state_dict)
        try:
            for scheduler, state in zip(self._schedulers, inner):
                scheduler.load_state_dict(state)
        except Exception:                    # put every scheduler back as it was
            for scheduler, state in zip(self._schedulers, saved):
                scheduler.load_state_dict(state)
            self.__dict__.update(own)
            raise


class SequentialLR(_Combined):
    """Run schedulers one after another, switching to the next at each milestone.

    Parameters
    ----------
    optimizer : Optimizer
        The optimizer all the schedulers drive.
    schedulers : list of LRScheduler
        The schedulers, in order (made on ``optimizer``).
    milestones : list of int
        The epochs at which the next scheduler takes over (one fewer than
        the schedulers); it restarts from its own epoch 0 there.
    last_epoch : int, default -1
        Index of the last epoch (-1 starts the schedule).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import ExponentialLR, LinearLR, SequentialLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> warmup = LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> sched = SequentialLR(opt, [warmup, decay], milestones=[2])
    >>> lrs = []
    >>> for _ in range(5):
    ...     lrs.append(sched.get_last_lr()[0]); opt.step(); sched.step()
    >>> lrs
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_optimizer(optimizer, "SequentialLR")
        self._check_schedulers(optimizer, schedulers)
        milestones = list(milestones)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: Sequential Schedulers expects number of "
                             f"schedulers provided to be one more than the number of milestone "
                             f"points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._check_settings("SequentialLR", {"_milestones": milestones})
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo the initial steps the schedulers made when they were built, then make the
        # first one's again: the schedule starts from the first scheduler alone.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo_initial_steps(self)
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _check_settings(self, where, settings):
        milestones = settings["_milestones"]
        if not isinstance(milestones, (list, tuple)):
            raise ValueError(f"{where}: milestones must be a list of epochs, got "
                             f"{milestones!r}")
        _check_counts(where, {f"milestones[{i}]": m for i, m in enumerate(milestones)}, 0,
                      *(f"milestones[{i}]" for i in range(len(milestones))))

    @classmethod
    def _undo_initial_steps(cls, scheduler):
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                cls._undo_initial_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self):
        """Advance one epoch: the current scheduler steps, or the next one starts.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import ConstantLR, SequentialLR, StepLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = SequentialLR(opt, [ConstantLR(opt, factor=0.1, total_iters=1),
        ...                            StepLR(opt, step_size=1, gamma=0.5)], milestones=[1])
        >>> sched.step()
        >>> sched.get_last_lr()
        [1.0]
        """
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Combined):
    """Step several schedulers together at each ``step()``: their changes compose.

    Parameters
    ----------
    schedulers : sequence of LRScheduler
        The schedulers (all on one optimizer), stepped in order.
    optimizer : Optimizer, optional
        Their optimizer (default: the first scheduler's).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import SGD
    >>> from oxmera.optim.lr_scheduler import ChainedScheduler, ConstantLR, ExponentialLR
    >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=2),
    ...                           ExponentialLR(opt, gamma=0.5)])
    >>> lrs = []
    >>> for _ in range(4):
    ...     lrs.append(round(sched.get_last_lr()[0], 6)); opt.step(); sched.step()
    >>> lrs
    [0.1, 0.05, 0.25, 0.125]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, "
                             "but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_optimizer(optimizer, "ChainedScheduler")
        self._check_schedulers(optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = self._current_lrs()

    def step(self):
        """Step every scheduler, in order.

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import SGD
        >>> from oxmera.optim.lr_scheduler import ChainedScheduler, ExponentialLR
        >>> opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = ChainedScheduler([ExponentialLR(opt, gamma=0.5)])
        >>> sched.step()
        >>> sched.get_last_lr()
        [0.5]
        """
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = self._current_lrs()
