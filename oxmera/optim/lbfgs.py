"""L-BFGS: a limited-memory quasi-Newton method, optionally with a strong-Wolfe line search.

PyTorch's ``torch.optim.LBFGS`` (itself after minFunc), iteration for
iteration: the same two-loop recursion, the same first step
``min(1, 1/‖g‖₁)·lr``, the same stopping tests and the same strong-Wolfe
line search with cubic interpolation, so a step makes the same closure
calls PyTorch's makes and leaves the same parameters.

The arithmetic is done on one flat NumPy vector of all the parameters'
gradients (in their dtype; all parameters must share it), and the
parameters are written in place outside the tape, as the other optimizers
write them. Scalars of the state (``'t'``, ``'ro'``, ``'H_diag'``, ...) are
Python floats where PyTorch keeps 0-d tensors.
"""
import math

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.autograd.grad_mode import enable_grad
from oxmera.optim.optimizer import (Optimizer, _as_array, _begin_write, _check_finite,
                                    _check_non_negative, _end_write, _scalar_value)
from oxmera.ops.creation import from_numpy

__all__ = ["LBFGS"]

_LINE_SEARCHES = (None, "strong_wolfe")


class LBFGS(Optimizer):
    r"""L-BFGS (limited-memory Broyden–Fletcher–Goldfarb–Shanno).

    Each ``step(closure)`` runs up to ``max_iter`` iterations: the search
    direction comes from the last ``history_size`` pairs of parameter and
    gradient changes (the two-loop recursion), the step length is ``lr``
    (the first one ``min(1, 1/‖g‖₁)·lr``) or, with
    ``line_search_fn="strong_wolfe"``, one that satisfies the strong Wolfe
    conditions. The iterations stop early when the gradient's largest
    entry falls to ``tolerance_grad``, or the step or the loss changes by
    less than ``tolerance_change``, or ``max_eval`` closure calls were made.

    Parameters
    ----------
    params : iterable
        Tensors to optimize (a single parameter group: L-BFGS has no
        per-group options, as in PyTorch); all of one floating dtype.
    lr : float, default 1
        Learning rate (the step length before any line search).
    max_iter : int, default 20
        Maximum number of iterations per ``step``.
    max_eval : int, optional
        Maximum number of closure calls per ``step`` (default
        ``max_iter * 5 // 4``).
    tolerance_grad : float, default 1e-7
        Stop when the largest absolute gradient entry is at most this.
    tolerance_change : float, default 1e-9
        Stop when the step or the loss changes by less than this.
    history_size : int, default 100
        Number of past updates kept to approximate the inverse Hessian.
    line_search_fn : {None, 'strong_wolfe'}, default None
        The line search; None takes fixed steps of ``lr``.

    Notes
    -----
    ``step`` needs the closure (it re-evaluates the loss and the gradients
    several times): it must clear the gradients, compute the loss, call
    ``backward()`` and return the loss. The state (PyTorch's keys:
    ``'func_evals'``, ``'n_iter'``, ``'d'``, ``'t'``, ``'old_dirs'``,
    ``'old_stps'``, ``'ro'``, ``'H_diag'``, ``'prev_flat_grad'``,
    ``'prev_loss'``, ``'al'``) lives under the first parameter. An unknown
    ``line_search_fn`` is refused when the optimizer is made (PyTorch waits
    for the first ``step``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.optim import LBFGS
    >>> w = oxmera.tensor([3.0, -2.0], dtype=oxmera.float64, requires_grad=True)
    >>> opt = LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> opt.step(closure).item()     # the loss before the step
    13.0
    >>> w
    tensor([1., 1.], dtype=float64, requires_grad=True)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if max_eval is None and _is_count(max_iter):
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        self._params = self.param_groups[0]["params"]
        dtypes = {np.dtype(p.dtype) for p in self._params}
        if len(dtypes) != 1 or next(iter(dtypes)).kind != "f":
            raise TypeError(f"LBFGS: all parameters must have one floating dtype (they are "
                            f"flattened into one vector), got {sorted(map(str, dtypes))}")

    def add_param_group(self, param_group):
        """Add the one parameter group (a second one is refused, as in PyTorch).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import LBFGS
        >>> opt = LBFGS([oxmera.zeros(2, requires_grad=True)])
        >>> opt.add_param_group({'params': [oxmera.zeros(1, requires_grad=True)]})
        Traceback (most recent call last):
          ...
        ValueError: LBFGS doesn't support per-parameter options (parameter groups)
        """
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def _check_hyper_parameters(self, where, group):
        _check_non_negative(where, group, "lr")
        for key, low in (("max_iter", 1), ("max_eval", 1), ("history_size", 1)):
            if not _is_count(group[key]) or group[key] < low:
                raise ValueError(f"{where}: invalid {key}: {group[key]!r} (must be an int "
                                 f">= {low})")
        _check_finite(where, group, "tolerance_grad", "tolerance_change")
        if group["line_search_fn"] not in _LINE_SEARCHES:
            raise RuntimeError(f"{where}: line_search_fn {group['line_search_fn']!r}: only "
                               f"'strong_wolfe' is supported (or None)")

    # -- the flat vector of all parameters -------------------------------------------------

    def _numel(self):
        return sum(p.numel() for p in self._params)

    def _gather_flat_grad(self):
        self._check_grad_shapes()
        return np.concatenate([np.zeros(p.numel(), dtype=p.dtype) if p.grad is None
                               else p.grad._data.reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update):
        """``params += step_size * update`` (``update`` flat)."""
        offset = 0
        for p in self._params:
            numel = p.numel()
            piece = update[offset:offset + numel].reshape(p.shape)
            self._write(p, lambda data: np.add(data, step_size * piece, out=data,
                                               casting="same_kind"))
            offset += numel

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            self._write(p, lambda target: np.copyto(target, data))

    @staticmethod
    def _write(p, write):
        unlocked = _begin_write(p)
        try:
            write(p._data)
        finally:
            _end_write(unlocked)
        p._bump_version()

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        try:
            loss = float(closure())
            flat_grad = self._gather_flat_grad()
        finally:                             # the search only probes: put the point back
            self._set_param(x)
        return loss, flat_grad

    # -- the step --------------------------------------------------------------------------

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; return the closure's first loss.

        Parameters
        ----------
        closure : callable
            Clears the gradients, re-evaluates the model, calls
            ``backward()`` and returns the loss (run with grad mode on).

        Examples
        --------
        >>> import oxmera
        >>> from oxmera.optim import LBFGS
        >>> w = oxmera.tensor([2.0], dtype=oxmera.float64, requires_grad=True)
        >>> opt = LBFGS([w], max_iter=1)
        >>> def closure():
        ...     opt.zero_grad(); loss = (w ** 2).sum(); loss.backward(); return loss
        >>> _ = opt.step(closure)
        >>> opt.state[w]['n_iter'], opt.state[w]['func_evals']
        (1, 1)
        """
        if not callable(closure):
            raise TypeError(f"LBFGS.step() needs a closure that re-evaluates the loss, got "
                            f"{type(closure).__name__}")
        group = self.param_groups[0]
        lr = group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        def evaluate():
            with enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d = _array_or_none(state.get("d"))
        t = state.get("t")
        old_dirs = [x._data for x in state.get("old_dirs", [])]
        old_stps = [x._data for x in state.get("old_stps", [])]
        ro = list(state.get("ro", []))
        h_diag = state.get("H_diag")
        prev_flat_grad = _array_or_none(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:      # the memory is full: forget one
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                # The two-loop recursion: d = -H g with H the L-BFGS inverse Hessian.
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += old_dirs[i] * -al[i]
                d = r = q * h_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += old_stps[i] * (al[i] - be_i)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:          # not a descent direction
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = from_numpy(d)
        state["t"] = float(t)
        state["old_dirs"] = [from_numpy(x) for x in old_dirs]
        state["old_stps"] = [from_numpy(x) for x in old_stps]
        state["ro"] = [float(x) for x in ro]
        state["H_diag"] = float(h_diag)
        state["prev_flat_grad"] = from_numpy(prev_flat_grad)
        state["prev_loss"] = float(prev_loss)
        if "al" in state:
            state["al"] = [None if x is None else float(x) for x in state["al"]]
        return orig_loss

    # -- loading ---------------------------------------------------------------------------

    _COUNTS = ("func_evals", "n_iter")
    _NUMBERS = ("t", "H_diag", "prev_loss")
    _VECTORS = ("d", "prev_flat_grad")
    _HISTORIES = ("old_dirs", "old_stps")

    def _loaded_state(self, name, index, param, saved):
        """A checked copy of the L-BFGS state (which lives under the first parameter)."""
        where = f"{name}: the state of parameter {index}"
        known = self._COUNTS + self._NUMBERS + self._VECTORS + self._HISTORIES + ("ro", "al")
        unknown = [key for key in saved if key not in known]
        if unknown:
            raise ValueError(f"{where} has key(s) {unknown} that LBFGS does not use (an LBFGS "
                             f"state holds {list(known)}); is it another optimizer's state "
                             f"dict?")
        if saved and param is not self._params[0]:
            raise ValueError(f"{where}: LBFGS keeps its state under the first parameter only")
        numel, dtype = self._numel(), self._params[0].dtype
        loaded = {}
        for key, value in saved.items():
            at = f"{where}: {key!r}"
            if key in self._COUNTS:
                if not _is_count(value) or value < 0:
                    raise ValueError(f"{at} must be an int >= 0, got {value!r}")
                loaded[key] = int(value)
            elif key in self._NUMBERS:
                loaded[key] = _finite_number(at, value)
            elif key in self._VECTORS:
                loaded[key] = _flat_vector(at, value, numel, dtype)
            elif key in self._HISTORIES or key in ("ro", "al"):
                if not isinstance(value, (list, tuple)):
                    raise ValueError(f"{at} must be a list, got {type(value).__name__}")
                if key == "ro":
                    loaded[key] = [_finite_number(f"{at}[{i}]", v) for i, v in enumerate(value)]
                elif key == "al":
                    loaded[key] = [None if v is None else _finite_number(f"{at}[{i}]", v)
                                   for i, v in enumerate(value)]
                else:
                    loaded[key] = [_flat_vector(f"{at}[{i}]", v, numel, dtype)
                                   for i, v in enumerate(value)]
        group = self.param_groups[0]
        lengths = {len(loaded.get(key, ())) for key in self._HISTORIES + ("ro",)}
        if len(lengths) != 1 or max(lengths) > group["history_size"]:
            raise ValueError(f"{where}: 'old_dirs', 'old_stps' and 'ro' must be lists of one "
                             f"length, at most history_size ({group['history_size']}), got "
                             f"{[len(loaded.get(k, ())) for k in self._HISTORIES + ('ro',)]}")
        if "al" in loaded and len(loaded["al"]) != group["history_size"]:
            raise ValueError(f"{where}: 'al' must hold history_size ({group['history_size']}) "
                             f"entries, got {len(loaded['al'])}")
        if loaded.get("n_iter", 0) > 0 and not {"d", "t", "prev_flat_grad"} <= set(loaded):
            raise ValueError(f"{where}: a state after {loaded['n_iter']} iterations needs 'd', "
                             f"'t' and 'prev_flat_grad' (the next iteration reads them)")
        return loaded


def _is_count(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _array_or_none(value):
    return None if value is None else value._data


def _finite_number(where, value):
    number = _scalar_value(where, value, "a finite number")
    if not math.isfinite(number):
        raise ValueError(f"{where} is {number}; it must be finite")
    return number


def _flat_vector(where, value, numel, dtype):
    array = _as_array(value) if not isinstance(value, Tensor) else value._data
    if array is None or array.shape != (numel,) or array.dtype.kind not in "iuf":
        got = (f"shape {array.shape} and dtype {array.dtype}" if array is not None
               else f"a {type(value).__name__}")
        raise ValueError(f"{where} must be a flat real vector of all the parameters' "
                         f"{numel} elements, got {got}")
    copied = np.array(array, dtype=dtype)
    if not np.isfinite(copied).all():
        raise ValueError(f"{where} holds NaN or infinite values")
    return from_numpy(copied)


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), within bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step length along ``d`` meeting the strong Wolfe conditions (PyTorch's search:
    bracketing, then zooming by cubic interpolation); returns
    ``(loss, flat_grad, t, evaluations)``."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:                  # bracket a step that satisfies the conditions
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket until a point satisfies the conditions.
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # Keep away from the bracket's ends unless progress was made last time.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos] = t
            bracket_f[high_pos] = f_new
            bracket_g[high_pos] = g_new.copy()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos] = t
            bracket_f[low_pos] = f_new
            bracket_g[low_pos] = g_new.copy()
            bracket_gtd[low_pos] = gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
