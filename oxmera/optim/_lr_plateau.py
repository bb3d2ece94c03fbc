"""``ReduceLROnPlateau``: learning rates reduced when a monitored metric stops improving.

Unlike the other schedulers it is driven by ``step(metric)`` and follows
no schedule of epochs; exported by ``oxmera.optim.lr_scheduler``.
"""
import math
import warnings

from oxmera.optim._lr_base import (_EPOCH_DEPRECATION, LRScheduler, _check_counts,
                                   _check_optimizer, _check_rates)
from oxmera.optim.optimizer import _check_finite, _check_non_negative, _real

__all__ = ["ReduceLROnPlateau"]


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
