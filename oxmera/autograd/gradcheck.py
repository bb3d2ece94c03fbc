"""``gradcheck`` and ``gradgradcheck``: analytical gradients against finite differences.

Both work in float64: the inputs that require grad should be float64 (or
complex128) tensors (a warning says so otherwise). The numerical Jacobian
uses central differences; the analytical one runs one backward per output
element.

Complex inputs and outputs are checked as pairs of real numbers: the
Jacobian compared is the real one, with a column for the real and one for the
imaginary part of each complex input element and a row for each part of each
complex output element. It holds both Wirtinger derivatives, so this checks
as much as PyTorch's complex gradcheck does. Under PyTorch's convention the
backward of a complex output seeded with ``1`` gives the row of its real part
(``dRe(y)/dRe(x) + 1j * dRe(y)/dIm(x)``), seeded with ``1j`` that of its
imaginary part.
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


def _as_reals(array):
    """A float64 vector of ``array``'s values; a complex array's real parts, then its
    imaginary parts."""
    if array.dtype.kind == "c":
        return np.concatenate([array.real.ravel(), array.imag.ravel()]).astype(np.float64)
    return np.array(array, dtype=np.float64).ravel()


def _real_size(t):
    return t.numel() * (2 if t.dtype.kind == "c" else 1)


def _evaluate(fn, inputs):
    # Grad mode stays on: fn may itself differentiate (gradgradcheck's VJP).
    outs = _outputs_tuple(fn(*inputs))
    return [_as_reals(o._data) for o in outs]


def _numerical_jacobians(fn, inputs, diff, eps):
    """jac[o][k]: (real size of output o) x (real size of input diff[k]) matrix."""
    base = _evaluate(fn, inputs)
    jac = [[np.zeros((b.size, _real_size(inputs[i]))) for i in diff] for b in base]
    for k, i in enumerate(diff):
        arr = inputs[i]._data
        # A complex element is two coordinates: its real part, then (in the
        # second half of the columns) its imaginary part.
        steps = (eps, eps * 1j) if arr.dtype.kind == "c" else (eps,)
        for part, step in enumerate(steps):
            for col, idx in enumerate(np.ndindex(arr.shape)):
                orig = arr[idx].copy()
                arr[idx] = orig + step
                plus = _evaluate(fn, inputs)
                arr[idx] = orig - step
                minus = _evaluate(fn, inputs)
                arr[idx] = orig
                for o in range(len(base)):
                    jac[o][k][:, part * arr.size + col] = (plus[o] - minus[o]) / (2 * eps)
    return jac


def _analytical_jacobians(fn, inputs, diff):
    outs = _outputs_tuple(fn(*inputs))
    targets = [inputs[i] for i in diff]
    jac = []
    for out in outs:
        rows = [np.zeros((_real_size(out), _real_size(t))) for t in targets]
        if not (out.requires_grad and out.dtype.kind in "fc"):
            jac.append(rows)
            continue
        # Seeding a complex output with 1 gives its real part's row, with 1j
        # its imaginary part's (the rows' second half).
        units = (1, 1j) if out.dtype.kind == "c" else (1,)
        for part, unit in enumerate(units):
            for element in range(out.numel()):
                row = part * out.numel() + element
                seed = np.zeros(out.numel(), dtype=out.dtype)
                seed[element] = unit
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
                    rows[k][row] = _as_reals(g._data)
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
        if inputs[i].dtype not in (np.float64, np.complex128):
            warnings.warn(f"gradcheck(): input {i} is {inputs[i].dtype}, not float64 or "
                          f"complex128; the "
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


def _random_like(rng, t):
    values = rng.standard_normal(t.shape)
    if t.dtype.kind == "c":
        values = values + 1j * rng.standard_normal(t.shape)
    return values


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
        grad_outputs = tuple(_core._wrap(_random_like(rng, o)).requires_grad_(True)
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
