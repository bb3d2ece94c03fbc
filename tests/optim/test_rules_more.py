"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop against NumPy transcriptions of the
algorithm boxes of PyTorch's documentation (no PyTorch needed), for every option;
float64, so the tolerances are tight. NAdam's momentum product and ASGD's step
size and averaging coefficient are float32 in PyTorch's state (and so here): the
boxes round them the same way."""
import numpy as np
import pytest

import oxmera
from oxmera.optim import ASGD, Adadelta, Adamax, NAdam, RAdam, Rprop

RNG = np.random.default_rng(7)
THETA0 = RNG.standard_normal((3, 4))
# Sign changes and zeros, so Rprop's three cases all occur.
GRADS = [RNG.standard_normal((3, 4)) for _ in range(8)]
GRADS[3][0, 0] = 0.0


def _run(optimizer_class, grads, **options):
    w = oxmera.tensor(THETA0.copy(), requires_grad=True)
    opt = optimizer_class([w], **options)
    out = []
    for g in grads:
        w.grad = oxmera.tensor(g)
        opt.step()
        out.append(w.detach().numpy().copy())
    return out


def _decay(theta, g, lr, weight_decay, decoupled=False):
    """The weight decay (coupled: into the gradient; decoupled: onto the weights)."""
    if decoupled:
        return theta * (1 - lr * weight_decay), g
    return theta, g + weight_decay * theta if weight_decay else g


def _adadelta_box(theta, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    v = u = 0
    out = []
    for g in grads:
        g = -g if maximize else g
        theta, g = _decay(theta, g, lr, weight_decay)
        v = rho * v + (1 - rho) * g * g
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        theta = theta - lr * delta
        out.append(theta)
    return out


def _adamax_box(theta, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                maximize=False):
    b1, b2 = betas
    m = u = 0
    out = []
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        theta, g = _decay(theta, g, lr, weight_decay)
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        theta = theta - lr * m / ((1 - b1 ** t) * u)
        out.append(theta)
    return out


def _nadam_box(theta, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
               momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    m = v = 0
    mu_product = np.float32(1.0)
    out = []
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        theta, g = _decay(theta, g, lr, weight_decay, decoupled_weight_decay)
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product = np.float32(mu_product * np.float32(mu))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        denom = np.sqrt(v / (1 - b2 ** t)) + eps
        theta = (theta - lr * (1 - mu) / (1 - float(mu_product)) * g / denom
                 - lr * mu_next / (1 - float(mu_product) * mu_next) * m / denom)
        out.append(theta)
    return out


def _radam_box(theta, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
               decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    m = v = 0
    rho_inf = 2 / (1 - b2) - 1
    out = []
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        theta, g = _decay(theta, g, lr, weight_decay, decoupled_weight_decay)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho_t > 5:
            l_t = np.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
            r_t = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                          / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            theta = theta - lr * m_hat * l_t * r_t
        else:
            theta = theta - lr * m_hat
        out.append(theta)
    return out


def _asgd_box(theta, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
              maximize=False):
    eta, mu = float(np.float32(lr)), 1.0
    ax = np.zeros_like(theta)
    out, averages = [], []
    for t, g in enumerate(grads, 1):
        g = -g if maximize else g
        theta, g = _decay(theta, g, lr, weight_decay)
        theta = theta * (1 - lambd * eta) - eta * g
        ax = ax + (theta - ax) * mu if mu != 1 else theta.copy()
        eta = float(np.float32(lr / (1 + lambd * lr * t) ** alpha))
        mu = float(np.float32(1 / max(1, t - t0)))
        out.append(theta)
        averages.append(ax)
    return out, averages


def _rprop_box(theta, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50),
               maximize=False):
    eta_minus, eta_plus = etas
    prev = np.zeros_like(theta)
    step = np.full_like(theta, lr)
    out = []
    for g in grads:
        g = (-g if maximize else g).copy()
        product = g * prev
        step = np.where(product > 0, np.minimum(step * eta_plus, step_sizes[1]),
                        np.where(product < 0, np.maximum(step * eta_minus, step_sizes[0]),
                                 step))
        g[product < 0] = 0
        theta = theta - np.sign(g) * step
        prev = g
        out.append(theta)
    return out


BOXES = [
    (Adadelta, _adadelta_box, dict()),
    (Adadelta, _adadelta_box, dict(lr=0.5, rho=0.7, eps=1e-4, weight_decay=0.1)),
    (Adadelta, _adadelta_box, dict(lr=0.3, maximize=True)),
    (Adamax, _adamax_box, dict(lr=0.01)),
    (Adamax, _adamax_box, dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1)),
    (Adamax, _adamax_box, dict(lr=0.01, maximize=True)),
    (NAdam, _nadam_box, dict(lr=0.01)),
    (NAdam, _nadam_box, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, momentum_decay=0.05)),
    (NAdam, _nadam_box, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (NAdam, _nadam_box, dict(lr=0.01, maximize=True)),
    (RAdam, _radam_box, dict(lr=0.01)),                  # rho_t > 5 from step 6
    (RAdam, _radam_box, dict(lr=0.01, betas=(0.8, 0.7), weight_decay=0.1)),   # > 5 at once
    (RAdam, _radam_box, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    (RAdam, _radam_box, dict(lr=0.01, maximize=True)),
    (Rprop, _rprop_box, dict()),
    (Rprop, _rprop_box, dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.05, 0.2))),
    (Rprop, _rprop_box, dict(lr=0.05, maximize=True)),
]


@pytest.mark.parametrize("optimizer_class, box, options", BOXES,
                         ids=[f"{c.__name__}-{o}" for c, _, o in BOXES])
def test_several_steps_follow_the_algorithm_box(optimizer_class, box, options):
    got = _run(optimizer_class, GRADS, **options)
    expected = box(THETA0, GRADS, **options)
    for step, (g, e) in enumerate(zip(got, expected), 1):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


@pytest.mark.parametrize("options", [dict(lr=0.05), dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3,
                                                         weight_decay=0.1),
                                     dict(lr=0.05, t0=0, maximize=True)])
def test_asgd_follows_the_algorithm_box_and_averages(options):
    w = oxmera.tensor(THETA0.copy(), requires_grad=True)
    opt = ASGD([w], **options)
    expected, averages = _asgd_box(THETA0, GRADS, **options)
    for step, g in enumerate(GRADS):
        w.grad = oxmera.tensor(g)
        opt.step()
        np.testing.assert_allclose(w.detach().numpy(), expected[step], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(opt.state[w]["ax"].numpy(), averages[step], rtol=1e-10,
                                   atol=1e-12)


def test_rprop_step_sizes_stay_within_bounds_and_a_sign_change_does_not_move():
    w = oxmera.tensor([1.0, 1.0], dtype=oxmera.float64, requires_grad=True)
    opt = Rprop([w], lr=0.1, etas=(0.5, 2.0), step_sizes=(0.04, 0.3))
    # Coordinate 0 keeps its sign: 0.1, 0.2, then 0.4 clipped to 0.3. Coordinate 1 flips at
    # step 2: its step halves to 0.05 and it stays put; the next step neither grows nor
    # shrinks it (the stored gradient is 0), the one after doubles it.
    for g, moved in [([1.0, 1.0], [0.9, 0.9]), ([1.0, -1.0], [0.7, 0.9]),
                     ([1.0, 1.0], [0.4, 0.85]), ([1.0, 1.0], [0.1, 0.75])]:
        w.grad = oxmera.tensor(g, dtype=oxmera.float64)
        opt.step()
        np.testing.assert_allclose(w.detach().numpy(), moved, atol=1e-12)
    np.testing.assert_allclose(opt.state[w]["step_size"].numpy(), [0.3, 0.1])


@pytest.mark.parametrize("optimizer_class", [Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_step_keeps_the_parameter_dtype(optimizer_class, dtype):
    w = oxmera.tensor(THETA0.astype(dtype), requires_grad=True)
    opt = optimizer_class([w], lr=0.01)
    for g in GRADS[:3]:
        w.grad = oxmera.tensor(g.astype(dtype))
        opt.step()
    assert w.dtype == dtype
    scalars = {"step", "mu_product", "eta", "mu"}          # 0-d float32, as in PyTorch
    for key, value in opt.state[w].items():
        assert value.dtype == (np.float32 if key in scalars else dtype), key
        assert value.shape == (() if key in scalars else w.shape), key
