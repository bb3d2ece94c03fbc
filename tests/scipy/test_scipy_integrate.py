"""oxmera.scipy.integrate: odeint and solve_ivp against closed-form solutions (exponential
decay, the harmonic oscillator) and SciPy, gradients (adjoint method) against closed forms
and finite differences, in the initial state, the time points and the parameters."""
import math

import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck
from oxmera.scipy.integrate import odeint, solve_ivp

scipy_integrate = pytest.importorskip("scipy.integrate")

TIGHT = {"rtol": 1e-11, "atol": 1e-11}
F64 = oxmera.float64


def _leaf(values):
    return oxmera.tensor(values, dtype=F64, requires_grad=True)


def _decay(y, t, k):
    return -k * y


def _oscillator(y, t, w):
    # y = (position, velocity), angular frequency w
    return oxmera.stack([y[1], -w * w * y[0]])


def test_odeint_exponential_decay_values_and_closed_form_gradients():
    y0, k = _leaf([2.0, -1.0]), _leaf(0.7)
    t = _leaf([0.0, 0.5, 1.5])
    y = odeint(_decay, y0, t, args=(k,), **TIGHT)
    times = np.array([0.0, 0.5, 1.5])
    exact = np.exp(-0.7 * times)[:, None] * np.array([2.0, -1.0])
    np.testing.assert_allclose(y.detach().numpy(), exact, rtol=1e-9)
    y.sum().backward()
    # d/dy0 sum_t y0 e^{-kt} = sum_t e^{-kt}; d/dk = -sum_t t y0 e^{-kt}; d/dt = -k y0 e^{-kt}
    np.testing.assert_allclose(y0.grad.numpy(), np.exp(-0.7 * times).sum() * np.ones(2),
                               rtol=1e-8)
    np.testing.assert_allclose(k.grad.item(), -(times[:, None] * exact).sum(), rtol=1e-7)
    expected_t = (-0.7 * exact).sum(1)
    expected_t[0] = -expected_t[1:].sum()   # the start moves every later state back
    np.testing.assert_allclose(t.grad.numpy(), expected_t, rtol=1e-7, atol=1e-9)


def test_odeint_agrees_with_scipy_and_keeps_the_state_shape():
    t = np.linspace(0.0, 2.0, 5)
    y0 = np.array([[1.0, 0.5], [-0.5, 2.0]])
    y = odeint(lambda y, t: -y * oxmera.cos(t), y0, t)
    assert tuple(y.shape) == (5, 2, 2)
    expected = scipy_integrate.odeint(lambda y, t: -y * np.cos(t), y0.ravel(), t)
    np.testing.assert_allclose(y.numpy().reshape(5, 4), expected, rtol=1e-6)


def test_odeint_harmonic_oscillator_closed_form():
    w = _leaf(1.3)
    y0 = _leaf([1.0, 0.0])
    y = odeint(_oscillator, y0, [0.0, 1.0, 2.0], args=(w,), **TIGHT)
    times = np.array([0.0, 1.0, 2.0])
    np.testing.assert_allclose(y[:, 0].detach().numpy(), np.cos(1.3 * times), rtol=1e-8,
                               atol=1e-10)
    y[-1, 0].backward()
    # x(t) = cos(w t): dx/dw = -t sin(w t)
    np.testing.assert_allclose(w.grad.item(), -2.0 * math.sin(2.6), rtol=1e-7)
    np.testing.assert_allclose(y0.grad.numpy(), [math.cos(2.6), math.sin(2.6) / 1.3],
                               rtol=1e-7)


def test_odeint_gradients_against_finite_differences():
    def f(y, t, k, c):
        return -k * y * oxmera.cos(t) + c * oxmera.sin(y)
    inputs = [_leaf([1.5, -0.5]), _leaf([0.1, 0.5, 1.3]), _leaf(0.7), _leaf([0.2, -0.3])]
    assert gradcheck(lambda y0, t, k, c: odeint(f, y0, t, args=(k, c), **TIGHT), inputs,
                     atol=1e-5, rtol=1e-4)


def test_odeint_tfirst_and_non_tensor_args():
    y = odeint(lambda t, y, k: -k * y, [1.0], [0.0, 1.0], args=(2.0,), tfirst=True, **TIGHT)
    np.testing.assert_allclose(y[-1].item(), math.exp(-2.0), rtol=1e-9)


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_solve_ivp_oscillator_against_closed_form(method):
    w, y0 = _leaf(1.3), _leaf([1.0, 0.0])
    result = solve_ivp(lambda t, y, w: _oscillator(y, t, w), (0.0, 2.0), y0,
                       method=method, t_eval=[0.5, 2.0], args=(w,), rtol=1e-10, atol=1e-10)
    assert result.success and tuple(result.y.shape) == (2, 2)
    np.testing.assert_allclose(result.y[0].detach().numpy(), np.cos(1.3 * np.array([0.5, 2.0])),
                               rtol=1e-6, atol=1e-7)
    result.y[0, -1].backward()
    np.testing.assert_allclose(w.grad.item(), -2.0 * math.sin(2.6), rtol=1e-5)


def test_solve_ivp_without_t_eval_uses_the_solvers_steps():
    y0 = _leaf([1.0])
    span = _leaf([0.0, 2.0])
    result = solve_ivp(lambda t, y: -0.5 * y, span, y0, rtol=1e-10, atol=1e-10)
    expected = scipy_integrate.solve_ivp(lambda t, y: -0.5 * y, (0.0, 2.0), [1.0], rtol=1e-10,
                                         atol=1e-10)
    np.testing.assert_allclose(result.t.detach().numpy(), expected.t)
    np.testing.assert_allclose(result.y.detach().numpy(), expected.y, rtol=1e-12)
    result.y[0, -1].backward()
    # y(T) = y0 exp(-(T - t0) / 2)
    np.testing.assert_allclose(y0.grad.item(), math.exp(-1.0), rtol=1e-8)
    np.testing.assert_allclose(span.grad.numpy(), [0.5 * math.exp(-1.0), -0.5 * math.exp(-1.0)],
                               rtol=1e-7)


def test_solve_ivp_gradients_against_finite_differences():
    def fun(t, y, a):
        return oxmera.stack([y[1], -a[0] * y[0] - a[1] * y[1] * oxmera.cos(t)])
    inputs = [_leaf([1.0, 0.5]), _leaf([0.1, 1.2]), _leaf([0.6, 1.7]), _leaf([1.5, 0.3])]
    assert gradcheck(lambda y0, span, t_eval, a: solve_ivp(fun, span, y0, t_eval=t_eval,
                                                           args=(a,), **TIGHT).y,
                     inputs, atol=1e-5, rtol=1e-4)


def test_errors():
    k = _leaf(0.5)
    with pytest.raises(ValueError, match="pass it through args"):
        odeint(lambda y, t: -k * y, [1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="func returned shape"):
        odeint(lambda y, t: oxmera.ones(3, dtype=F64), [1.0, 2.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="non-empty vector"):
        odeint(_decay, [1.0], 1.0, args=(1.0,))
    with pytest.raises(NotImplementedError, match="Dfun"):
        odeint(_decay, [1.0], [0.0, 1.0], args=(1.0,), Dfun=lambda y, t, k: -k)
    with pytest.raises(NotImplementedError, match="events"):
        solve_ivp(lambda t, y: -y, (0.0, 1.0), [1.0], events=lambda t, y: y[0])
    with pytest.raises(ValueError, match="1-dimensional"):
        solve_ivp(lambda t, y: -y, (0.0, 1.0), [[1.0]])
    with pytest.raises(ValueError, match="t_span must hold 2"):
        solve_ivp(lambda t, y: -y, (0.0, 1.0, 2.0), [1.0])
    y = odeint(_decay, _leaf([1.0]), [0.0, 1.0], args=(k,))
    with pytest.raises(RuntimeError, match="not differentiable"):
        oxmera.autograd.grad(y.sum(), k, create_graph=True)


def test_float32_state_gives_float32_and_no_grad_records_nothing():
    y = odeint(_decay, oxmera.tensor([1.0]), [0.0, 1.0], args=(1.0,))
    assert y.dtype == oxmera.float32 and y.grad_fn is None
