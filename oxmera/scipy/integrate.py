"""``oxmera.scipy.integrate``: ``odeint`` and ``solve_ivp``, differentiable.

The solution comes from SciPy's own solvers (LSODA for ``odeint``, the
``method`` asked for in ``solve_ivp``), on the right-hand side written with
oxmera ops and evaluated without recording. Gradients with respect to the
initial state, every time point and every tensor in ``args`` come from the
**adjoint method** (Pontryagin; Chen et al. 2018, as ``autograd.scipy``'s
``odeint`` and ``jax.experimental.ode``): the augmented system

    d/dt [y, a, a_t, a_p] = [f, -a df/dy, -a df/dt, -a df/dp]

is solved backward from each time point to the one before by the same SciPy
solver, with the vector-Jacobian products ``a df/d(y, t, p)`` computed by
oxmera's autograd at each evaluation.

Why the adjoint rather than differentiating through a solver written in
oxmera ops: the values are SciPy's (its stiff and adaptive solvers, error
control and all), memory does not grow with the number of steps, and the
gradient is as accurate as the tolerances asked for (``rtol``/``atol`` apply
to the backward solve too). The price: the backward pass runs SciPy on
arrays, so it is differentiable once: asking for a graph of the gradient
(``create_graph=True``) raises RuntimeError rather than return a second
derivative that silently misses terms.

Parameters must reach ``func`` through ``args``: a tensor that requires grad
and that ``func`` takes from its closure would get no gradient, so that
raises ValueError naming the remedy.
"""
import numpy as np

import oxmera
from oxmera.autograd import Function
from oxmera.ops.special import scipy_module
from oxmera.scipy._inputs import as_tensor

__all__ = ["odeint", "solve_ivp", "OdeResult"]


class _Problem:
    """The right-hand side ``func(y, t, *args)`` as SciPy's solvers call it, and its adjoint.

    ``solve(dynamics, state, times)`` integrates ``dynamics(state, t)``
    (flat float64 arrays) and returns the states at ``times``, one row each;
    the forward pass and each backward step use it.
    """

    def __init__(self, name, func, shape, args, solve):
        self.name, self.func, self.shape, self.solve = name, func, tuple(shape), solve
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.args = args

    def _call(self, y, t, params):
        values = iter(params)
        call_args = [next(values) if isinstance(a, oxmera.Tensor) else a for a in self.args]
        out = self.func(y, t, *call_args)
        if not isinstance(out, oxmera.Tensor):
            out = as_tensor(out, self.name, "the value of func")
        if tuple(out.shape) != self.shape and out.numel() != self.size:
            raise ValueError(f"{self.name}(): func returned shape {tuple(out.shape)}; the state "
                             f"y0 has shape {self.shape}")
        return out

    def _params(self):
        # float64 copies of the tensor arguments, detached from the caller's graph
        return [oxmera.from_numpy(np.array(a.detach().numpy(), dtype=np.float64))
                for a in self.args if isinstance(a, oxmera.Tensor)]

    def check_closure(self, y0, t0):
        """ValueError when func's value requires grad with every input detached."""
        with oxmera.enable_grad():
            out = self._call(self._state(y0), self._time(t0), self._params())
        if out.requires_grad:
            raise ValueError(f"{self.name}(): func uses a tensor that requires grad but is not "
                             f"one of its arguments; pass it through args=(...) so that it "
                             f"gets a gradient")

    def _state(self, flat):
        return oxmera.from_numpy(np.array(flat, dtype=np.float64).reshape(self.shape))

    @staticmethod
    def _time(t):
        return oxmera.from_numpy(np.array(float(t)))

    def dynamics(self):
        params = self._params()

        def evaluate(state, t):
            with oxmera.no_grad():
                out = self._call(self._state(state), self._time(t), params)
            return np.asarray(out.numpy(), dtype=np.float64).reshape(-1)
        return evaluate

    def augmented(self, param_sizes):
        n = self.size

        def evaluate(state, t):
            with oxmera.enable_grad():
                y = self._state(state[:n]).requires_grad_()
                time = self._time(t).requires_grad_()
                params = [p.requires_grad_() for p in self._params()]
                out = self._call(y, time, params)
                inputs = [y, time, *params]
                if out.requires_grad:
                    adjoint = oxmera.from_numpy(-state[n:2 * n].reshape(tuple(out.shape)))
                    grads = oxmera.autograd.grad(out, inputs, adjoint, allow_unused=True)
                else:
                    grads = [None] * len(inputs)
            sizes = [n, 1, *param_sizes]
            parts = [out.detach().numpy().reshape(-1)]
            parts += [np.zeros(size) if g is None else g.numpy().reshape(-1)
                      for g, size in zip(grads, sizes)]
            return np.concatenate(parts).astype(np.float64, copy=False)
        return evaluate


class _Adjoint(Function):
    """The solution at ``times`` from ``y0``; its backward is the adjoint solve."""

    @staticmethod
    def forward(ctx, problem, y0, times, *args):
        t = np.array(times.detach().numpy(), dtype=np.float64)
        start = np.array(y0.detach().numpy(), dtype=np.float64).reshape(-1)
        states = problem.solve(problem.dynamics(), start, t)
        ctx.problem, ctx.states, ctx.t = problem, states, t
        dtype = y0.dtype if y0.dtype.kind == "f" else oxmera.float64
        return oxmera.from_numpy(states.reshape((len(t),) + problem.shape)).to(dtype)

    @staticmethod
    def backward(ctx, grad):
        problem = ctx.problem
        if oxmera.is_grad_enabled():
            raise RuntimeError(f"{problem.name}(): its gradient (the adjoint solve, by SciPy) is "
                               f"not differentiable; second derivatives through "
                               f"{problem.name} are not supported")
        states, t, n = ctx.states, ctx.t, problem.size
        g = np.array(grad.numpy(), dtype=np.float64).reshape(len(t), n)
        param_sizes = [p.numel() for p in problem._params()]
        dynamics, augmented = problem.dynamics(), problem.augmented(param_sizes)
        adjoint, adjoint_t0 = g[-1].copy(), 0.0
        adjoint_params = np.zeros(sum(param_sizes))
        time_grads = np.zeros(len(t))
        for i in range(len(t) - 1, 0, -1):
            # moving the i-th time point moves its output along f
            time_grads[i] = g[i] @ dynamics(states[i], t[i])
            adjoint_t0 -= time_grads[i]
            state = np.concatenate([states[i], adjoint, [adjoint_t0], adjoint_params])
            state = problem.solve(augmented, state, np.array([t[i], t[i - 1]]))[-1]
            adjoint = state[n:2 * n] + g[i - 1]
            adjoint_t0 = state[2 * n]
            adjoint_params = state[2 * n + 1:]
        time_grads[0] = adjoint_t0
        grads, offset = [], 0
        for a in problem.args:
            if isinstance(a, oxmera.Tensor):
                size = a.numel()
                grads.append(oxmera.from_numpy(
                    adjoint_params[offset:offset + size].reshape(tuple(a.shape))))
                offset += size
            else:
                grads.append(None)
        return (None, oxmera.from_numpy(adjoint.reshape(problem.shape)),
                oxmera.from_numpy(time_grads), *grads)


def _float_state(y0, name):
    y0 = as_tensor(y0, name, "y0")
    return y0 if y0.dtype.kind == "f" else y0.to(oxmera.float64)


def _solve(problem, y0, times):
    """The solution tensor; recorded only when something needs a gradient."""
    args = problem.args
    if oxmera.is_grad_enabled():
        # one evaluation, even when no argument requires grad: a closure's
        # tensor would otherwise lose its gradient without a word
        problem.check_closure(y0.detach().numpy().reshape(-1), times.detach().numpy()[0])
    return _Adjoint.apply(problem, y0, times, *args)


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, rtol=None,
           atol=None, tfirst=False, **options):
    """Integrate ``dy/dt = func(y, t, *args)`` from ``y0`` at ``t[0]``; the states at ``t``.

    As ``scipy.integrate.odeint`` (LSODA, the same ``rtol``/``atol`` and
    other ``options`` such as ``mxstep``, ``hmax``), with ``func`` written
    with oxmera ops on tensors: ``y`` has ``y0``'s shape (any shape here)
    and ``t`` is a 0-d float64 tensor. The result has shape
    ``(len(t),) + y0.shape``, row 0 being ``y0``.

    Differentiable in ``y0``, every entry of ``t`` and every tensor in
    ``args``, by the adjoint method (see :mod:`oxmera.scipy.integrate`:
    first derivatives only). ``Dfun`` and ``full_output`` are not supported.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy.integrate import odeint
    >>> rate = oxmera.tensor(0.5, dtype=oxmera.float64, requires_grad=True)
    >>> y = odeint(lambda y, t, k: -k * y, [2.0], [0.0, 1.0, 2.0], args=(rate,),
    ...            rtol=1e-10, atol=1e-10)
    >>> y[:, 0]
    tensor([2.    , 1.2131, 0.7358], dtype=float64, grad_fn=<IndexBackward>)
    >>> y[-1, 0].backward()
    >>> round(rate.grad.item(), 6)          # d/dk 2 exp(-2k) = -4 exp(-2k)
    -1.471518
    """
    if Dfun is not None or full_output:
        raise NotImplementedError("odeint(): Dfun and full_output are not supported")
    if tfirst:
        user = func
        func = lambda y, t, *a: user(t, y, *a)   # noqa: E731
    y0 = _float_state(y0, "odeint")
    times = as_tensor(t, "odeint", "t")
    if times.ndim != 1 or times.shape[0] == 0:
        raise ValueError(f"odeint(): t must be a non-empty vector of time points, got shape "
                         f"{tuple(times.shape)}")
    tolerances = {"rtol": rtol, "atol": atol, **options}
    scipy_odeint = scipy_module("integrate", "odeint").odeint

    def solve(dynamics, state, at):
        return scipy_odeint(dynamics, state, at, **tolerances)
    return _solve(_Problem("odeint", func, y0.shape, tuple(args), solve), y0, times)


class OdeResult(dict):
    """The result of :func:`solve_ivp`: a dict whose keys are also attributes, as SciPy's.

    ``t`` (the time points), ``y`` (the states, one column per time point),
    ``status``, ``message``, ``success``, ``nfev``, ``njev``, ``nlu``; ``sol``,
    ``t_events`` and ``y_events`` are None.

    Examples
    --------
    >>> from oxmera.scipy.integrate import OdeResult
    >>> OdeResult(success=True).success
    True
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, **options):
    """Solve ``dy/dt = fun(t, y, *args)`` on ``t_span`` from ``y0``, as SciPy's ``solve_ivp``.

    ``method`` (``"RK45"``, ``"DOP853"``, ``"Radau"``, ``"BDF"``, ``"LSODA"``...)
    and ``options`` (``rtol``, ``atol``, ``max_step``...) go to SciPy. The
    result's ``y`` has shape ``(n, len(t))``. Without ``t_eval`` the time
    points are the solver's steps; their first and last are ``t_span``'s.

    Differentiable in ``y0``, ``t_span``, ``t_eval`` and every tensor in
    ``args``, by the adjoint method (first derivatives only; see
    :mod:`oxmera.scipy.integrate`). ``dense_output`` and ``events`` are not
    supported, and a failed solve raises RuntimeError with SciPy's message.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.scipy.integrate import solve_ivp
    >>> y0 = oxmera.tensor([1.0, 0.0], dtype=oxmera.float64, requires_grad=True)
    >>> oscillator = lambda t, y: oxmera.stack([y[1], -y[0]])
    >>> result = solve_ivp(oscillator, (0.0, 1.0), y0, t_eval=[1.0], rtol=1e-10, atol=1e-10)
    >>> result.y[:, 0]                     # (cos 1, -sin 1)
    tensor([ 0.5403, -0.8415], dtype=float64, grad_fn=<IndexBackward>)
    >>> result.y[0, 0].backward()
    >>> y0.grad                            # d cos(1) / d y0 = (cos 1, sin 1)
    tensor([0.5403, 0.8415], dtype=float64)
    """
    if dense_output or events is not None:
        raise NotImplementedError("solve_ivp(): dense_output and events are not supported")
    y0 = _float_state(y0, "solve_ivp")
    if y0.ndim != 1:
        raise ValueError(f"solve_ivp(): y0 must be 1-dimensional, got shape {tuple(y0.shape)}")
    if isinstance(t_span, oxmera.Tensor):
        span = t_span
    else:
        span = oxmera.stack([as_tensor(s, "solve_ivp", "t_span") for s in t_span])
    if tuple(span.shape) != (2,):
        raise ValueError(f"solve_ivp(): t_span must hold 2 times, got shape {tuple(span.shape)}")
    scipy_solve_ivp = scipy_module("integrate", "solve_ivp").solve_ivp
    start, stop = (float(v) for v in span.detach().numpy())
    args = tuple(args) if args is not None else ()
    report = {}

    def solve(dynamics, state, at):
        # at[0] is where state is given; SciPy reports the states at at[1:]
        if len(at) == 1 or at[0] == at[-1]:
            return np.repeat(state[None], len(at), 0)
        result = scipy_solve_ivp(lambda t, s: dynamics(s, t), (at[0], at[-1]), state,
                                 method=method, t_eval=at[1:], **options)
        if not result.success:
            raise RuntimeError(f"solve_ivp(): the solver failed: {result.message}")
        report.setdefault("result", result)
        return np.concatenate([state[None], result.y.T])

    if t_eval is None:
        # the solver's own steps: a first solve finds them; the ends are t_span's
        problem = _Problem("solve_ivp", lambda y, t, *a: fun(t, y, *a), y0.shape, args, solve)
        dynamics = problem.dynamics()
        steps = scipy_solve_ivp(lambda t, s: dynamics(s, t), (start, stop),
                                np.array(y0.detach().numpy(), dtype=np.float64), method=method,
                                **options)
        if not steps.success:
            raise RuntimeError(f"solve_ivp(): the solver failed: {steps.message}")
        inner = oxmera.from_numpy(np.array(steps.t[1:-1], dtype=np.float64)).to(span.dtype)
        times = oxmera.cat([span[:1], inner, span[1:]]) if len(steps.t) > 1 else span[:1]
        y = _solve(problem, y0, times)
    else:
        evaluated = as_tensor(t_eval, "solve_ivp", "t_eval")
        if evaluated.ndim != 1:
            raise ValueError(f"solve_ivp(): t_eval must be a vector, got shape "
                             f"{tuple(evaluated.shape)}")
        # the initial time leads, so that y0 is where the solve starts; its row is dropped
        times = evaluated
        problem = _Problem("solve_ivp", lambda y, t, *a: fun(t, y, *a), y0.shape, args, solve)
        y = _solve(problem, y0, oxmera.cat([span[:1].to(evaluated.dtype), evaluated]))[1:]
    info = report.get("result")
    return OdeResult(t=times, y=y.mT, sol=None, t_events=None, y_events=None,
                     nfev=info.nfev if info else 0, njev=info.njev if info else 0,
                     nlu=info.nlu if info else 0, status=0, message="The solver successfully "
                     "reached the end of the integration interval.", success=True)
