"""``gradcheck`` and ``gradgradcheck``: analytical gradients against finite differences.

Both work in float64: the inputs that require grad should be float64 tensors
(a warning says so otherwise). The numerical Jacobian uses central
differences; the analytical one runs one backward per output element.
"""
import warnings

import numpy as np

from oxmera._core import autograd as _core
from oxmera.autograd.engine import grad as _grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]

Tensor = _core.Tensor


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd import Function, gradcheck, GradcheckError
    >>> class WrongSquare(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad            # should be 2 * x * grad
    >>> x = oxmera.tensor([1.5], dtype=oxmera.float64, requires_grad=True)
    >>> try:
    ...     gradcheck(WrongSquare.apply, (x,))
    ... except GradcheckError:
    ...     print("caught")
    caught
    """


def _outputs_tuple(out):
    return (out,) if isinstance(out, Tensor) else tuple(out)


def _differentiable(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _evaluate(fn, inputs):
    # Grad mode stays on: fn may itself differentiate (gradgradcheck's VJP).
    outs = _outputs_tuple(fn(*inputs))
    return [np.array(o._data, dtype=np.float64) for o in outs]


def _numerical_jacobians(fn, inputs, diff, eps):
    """jac[o][k]: (numel of output o) x (numel of input diff[k]) matrix."""
    base = _evaluate(fn, inputs)
    jac = [[np.zeros((b.size, inputs[i].numel())) for i in diff] for b in base]
    for k, i in enumerate(diff):
        arr = inputs[i]._data
        for col, idx in enumerate(np.ndindex(arr.shape)):
            orig = arr[idx].copy()
            arr[idx] = orig + eps
            plus = _evaluate(fn, inputs)
            arr[idx] = orig - eps
            minus = _evaluate(fn, inputs)
            arr[idx] = orig
            for o in range(len(base)):
                jac[o][k][:, col] = ((plus[o] - minus[o]) / (2 * eps)).ravel()
    return jac


def _analytical_jacobians(fn, inputs, diff):
    outs = _outputs_tuple(fn(*inputs))
    targets = [inputs[i] for i in diff]
    jac = []
    for out in outs:
        rows = [np.zeros((out.numel(), t.numel())) for t in targets]
        if out.requires_grad and out.dtype.kind == "f":
            for row in range(out.numel()):
                seed = np.zeros(out.numel(), dtype=out.dtype)
                seed[row] = 1
                grads = _grad(out, targets, grad_outputs=_core._wrap(seed.reshape(out.shape)),
                              retain_graph=True, allow_unused=True)
                for k, g in enumerate(grads):
                    if g is None:
                        continue
                    if g.shape != targets[k].shape:
                        raise GradcheckError(
                            f"gradient of input {diff[k]} has shape {g.shape}, expected "
                            f"{targets[k].shape}")
                    if g.dtype != targets[k].dtype:
                        raise GradcheckError(
                            f"gradient of input {diff[k]} has dtype {g.dtype}, expected "
                            f"{targets[k].dtype}")
                    rows[k][row] = np.asarray(g._data, dtype=np.float64).ravel()
        jac.append(rows)
    return jac


def _report(o, i, numerical, analytical, atol, rtol):
    diff = np.abs(numerical - analytical) - (atol + rtol * np.abs(numerical))
    worst = np.unravel_index(np.argmax(diff), diff.shape)
    lines = [f"Jacobian mismatch for output {o} with respect to input {i}:",
             f"worst entry (output element {worst[0]}, input element {worst[1]}): "
             f"numerical {numerical[worst]:.8g}, analytical {analytical[worst]:.8g}, "
             f"difference {abs(numerical[worst] - analytical[worst]):.3g} "
             f"(atol={atol}, rtol={rtol})"]
    if numerical.size <= 64:
        with np.printoptions(precision=6, suppress=True):
            lines += ["numerical:", str(numerical), "analytical:", str(analytical)]
    return "\n".join(lines)


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check ``fn``'s gradients against central finite differences.

    Parameters
    ----------
    fn : callable
        Takes ``*inputs``, returns a Tensor or a tuple of Tensors.
    inputs : Tensor or tuple
        Arguments of ``fn``; the Tensors that require grad (float64) are checked.
    eps, atol, rtol : float
        Finite-difference step and tolerances (``|a - n| <= atol + rtol * |n|``).
    raise_exception : bool
        Raise :class:`GradcheckError` on failure (else return False).

    Returns
    -------
    bool

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([0.5, 1.5], dtype=oxmera.float64, requires_grad=True)
    >>> oxmera.autograd.gradcheck(lambda t: (t * t.sin()).sum(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff = _differentiable(inputs)
    if not diff:
        raise ValueError("gradcheck(): no input requires grad")
    for i in diff:
        if inputs[i].dtype != np.float64:
            warnings.warn(f"gradcheck(): input {i} is {inputs[i].dtype}, not float64; the "
                          f"check may fail from rounding alone", UserWarning, stacklevel=2)
    # Perturbing works on the inputs' own memory; a read-only (broadcast)
    # input is replaced by a writable copy with the same values.
    inputs = tuple(_writable(t) if k in diff else t for k, t in enumerate(inputs))
    analytical = _analytical_jacobians(fn, inputs, diff)
    numerical = _numerical_jacobians(fn, inputs, diff, eps)
    for o in range(len(numerical)):
        for k, i in enumerate(diff):
            n, a = numerical[o][k], analytical[o][k]
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                if raise_exception:
                    raise GradcheckError(_report(o, i, n, a, atol, rtol))
                return False
    return True


def _writable(t):
    if t._data.flags.writeable:
        return t
    return _core._wrap(t._data.copy()).requires_grad_(True)


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, seed=0):
    """Check second derivatives: gradcheck of ``fn``'s vector-Jacobian product.

    The VJP is taken with ``create_graph=True`` against ``grad_outputs``
    (random float64 tensors, seeded, when not given), and checked with
    respect to both the inputs and ``grad_outputs``.

    Examples
    --------
    >>> import oxmera
    >>> x = oxmera.tensor([0.5, 1.5], dtype=oxmera.float64, requires_grad=True)
    >>> oxmera.autograd.gradgradcheck(lambda t: t.exp() * t, (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    diff = _differentiable(inputs)
    outs = _outputs_tuple(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(_core._wrap(rng.standard_normal(o.shape)).requires_grad_(True)
                             for o in outs if o.requires_grad)
    else:
        grad_outputs = (grad_outputs,) if isinstance(grad_outputs, Tensor) else tuple(grad_outputs)
    n_in = len(inputs)

    def vjp(*args):
        ins, gos = args[:n_in], args[n_in:]
        results = _outputs_tuple(fn(*ins))
        used = [r for r in results if r.requires_grad]
        grads = _grad(used, [ins[i] for i in diff], grad_outputs=list(gos),
                      create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
