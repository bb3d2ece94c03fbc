"""The update rules against closed forms (no PyTorch needed).

One step of each rule from a hand-derived closed form (first steps have
simple ones: Adam moves each weight by ``lr * g / (|g| + eps)``, RMSprop by
``lr * g / (sqrt(1 - alpha) |g| + eps)``, ...), then several steps against a
NumPy transcription of the algorithm boxes of PyTorch's documentation, for
every option (weight decay, momentum, dampening, Nesterov, AMSGrad, centered,
lr_decay, maximize). Float64 throughout, so the tolerances are tight.
"""
import numpy as np
import pytest

import oxmera
from oxmera.optim import SGD, Adagrad, Adam, AdamW, RMSprop

RNG = np.random.default_rng(5)
THETA0 = RNG.standard_normal((3, 4))
GRADS = [RNG.standard_normal((3, 4)) for _ in range(6)]


def _leaf(values=THETA0):
    return oxmera.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def _run(optimizer_class, grads, **options):
    """Apply ``grads`` (arrays, one per step) with the optimizer; the weights after each step."""
    w = _leaf()
    opt = optimizer_class([w], **options)
    out = []
    for g in grads:
        w.grad = oxmera.tensor(g)
        opt.step()
        out.append(w.detach().numpy().copy())
    return out


G = GRADS[0]


# -- one step, closed forms -----------------------------------------------------------------

ONE_STEP = [
    (SGD, dict(lr=0.1), THETA0 - 0.1 * G),
    (SGD, dict(lr=0.1, weight_decay=0.3), THETA0 - 0.1 * (G + 0.3 * THETA0)),
    (SGD, dict(lr=0.1, momentum=0.9), THETA0 - 0.1 * G),                # buffer = g at t = 1
    (SGD, dict(lr=0.1, momentum=0.9, dampening=0.5), THETA0 - 0.1 * G),  # no dampening at t = 1
    (SGD, dict(lr=0.1, momentum=0.9, nesterov=True), THETA0 - 0.1 * 1.9 * G),
    (SGD, dict(lr=0.1, maximize=True), THETA0 + 0.1 * G),
    (Adam, dict(lr=0.1), THETA0 - 0.1 * G / (np.abs(G) + 1e-8)),
    (Adam, dict(lr=0.1, eps=0.5), THETA0 - 0.1 * G / (np.abs(G) + 0.5)),
    (Adam, dict(lr=0.1, amsgrad=True), THETA0 - 0.1 * G / (np.abs(G) + 1e-8)),
    (Adam, dict(lr=0.1, weight_decay=0.2, eps=0.0),
     THETA0 - 0.1 * np.sign(G + 0.2 * THETA0)),
    (Adam, dict(lr=0.1, maximize=True), THETA0 + 0.1 * G / (np.abs(G) + 1e-8)),
    (AdamW, dict(lr=0.1, weight_decay=0.2),
     THETA0 * (1 - 0.1 * 0.2) - 0.1 * G / (np.abs(G) + 1e-8)),
    (AdamW, dict(lr=0.1, weight_decay=0.2, amsgrad=True),
     THETA0 * (1 - 0.1 * 0.2) - 0.1 * G / (np.abs(G) + 1e-8)),
    (Adam, dict(lr=0.1, weight_decay=0.2, decoupled_weight_decay=True),
     THETA0 * (1 - 0.1 * 0.2) - 0.1 * G / (np.abs(G) + 1e-8)),
    (RMSprop, dict(lr=0.1, alpha=0.9), THETA0 - 0.1 * G / (np.sqrt(0.1) * np.abs(G) + 1e-8)),
    (RMSprop, dict(lr=0.1, alpha=0.9, centered=True),
     THETA0 - 0.1 * G / (np.sqrt(0.9 * 0.1) * np.abs(G) + 1e-8)),
    (RMSprop, dict(lr=0.1, alpha=0.9, momentum=0.5),
     THETA0 - 0.1 * G / (np.sqrt(0.1) * np.abs(G) + 1e-8)),
    (RMSprop, dict(lr=0.1, alpha=0.9, weight_decay=0.1, eps=0.0),
     THETA0 - 0.1 * np.sign(G + 0.1 * THETA0) / np.sqrt(0.1)),
    (RMSprop, dict(lr=0.1, alpha=0.9, maximize=True),
     THETA0 + 0.1 * G / (np.sqrt(0.1) * np.abs(G) + 1e-8)),
    (Adagrad, dict(lr=0.1), THETA0 - 0.1 * G / (np.abs(G) + 1e-10)),
    (Adagrad, dict(lr=0.1, initial_accumulator_value=0.5),
     THETA0 - 0.1 * G / (np.sqrt(0.5 + G * G) + 1e-10)),
    (Adagrad, dict(lr=0.1, lr_decay=0.5), THETA0 - 0.1 * G / (np.abs(G) + 1e-10)),
    (Adagrad, dict(lr=0.1, weight_decay=0.2, eps=0.0),
     THETA0 - 0.1 * np.sign(G + 0.2 * THETA0)),
    (Adagrad, dict(lr=0.1, maximize=True), THETA0 + 0.1 * G / (np.abs(G) + 1e-10)),
]


@pytest.mark.parametrize("optimizer_class, options, expected", ONE_STEP,
                         ids=[f"{c.__name__}-{o}" for c, o, _ in ONE_STEP])
def test_one_step_matches_its_closed_form(optimizer_class, options, expected):
    (after,) = _run(optimizer_class, [G], **options)
    np.testing.assert_allclose(after, expected, rtol=1e-12, atol=1e-14)


def test_adagrad_second_step_uses_the_decayed_learning_rate():
    g1, g2 = GRADS[:2]
    _, after = _run(Adagrad, [g1, g2], lr=0.1, lr_decay=0.5)
    first = THETA0 - 0.1 * g1 / (np.abs(g1) + 1e-10)
    expected = first - 0.1 / 1.5 * g2 / (np.sqrt(g1 * g1 + g2 * g2) + 1e-10)
    np.testing.assert_allclose(after, expected, rtol=1e-12)


def test_adam_bias_correction_second_step():
    g1, g2 = GRADS[:2]
    b1, b2, lr, eps = 0.9, 0.999, 0.01, 1e-8
    _, after = _run(Adam, [g1, g2], lr=lr)
    m = b1 * (1 - b1) * g1 + (1 - b1) * g2
    v = b2 * (1 - b2) * g1 ** 2 + (1 - b2) * g2 ** 2
    first = THETA0 - lr * g1 / (np.abs(g1) + eps)
    expected = first - lr * (m / (1 - b1 ** 2)) / (np.sqrt(v / (1 - b2 ** 2)) + eps)
    np.testing.assert_allclose(after, expected, rtol=1e-10)


# -- several steps against the algorithm boxes -----------------------------------------------

def _sgd_box(theta, grads, lr, momentum=0, dampening=0, weight_decay=0, nesterov=False,
             maximize=False):
    b = None
    out = []
    for t, g in enumerate(grads, 1):
        if weight_decay:
            g = g + weight_decay * theta
        if momentum:
            b = g if t == 1 else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        theta = theta + lr * g if maximize else theta - lr * g
        out.append(theta)
    return out


def _adam_box(theta, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
              maximize=False, decoupled=False):
    b1, b2 = betas
    m = v = vmax = 0
    out = []
    for t, g in enumerate(grads, 1):
        if maximize:
            g = -g
        if decoupled:
            theta = theta - lr * weight_decay * theta
        elif weight_decay:
            g = g + weight_decay * theta
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            v_hat = vmax / (1 - b2 ** t)
        else:
            v_hat = v / (1 - b2 ** t)
        theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(theta)
    return out


def _rmsprop_box(theta, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, maximize=False):
    v = g_ave = b = 0
    out = []
    for g in grads:
        if maximize:
            g = -g
        if weight_decay:
            g = g + weight_decay * theta
        v = alpha * v + (1 - alpha) * g * g
        v_tilde = v
        if centered:
            g_ave = g_ave * alpha + (1 - alpha) * g
            v_tilde = v - g_ave ** 2
        if momentum > 0:
            b = momentum * b + g / (np.sqrt(v_tilde) + eps)
            theta = theta - lr * b
        else:
            theta = theta - lr * g / (np.sqrt(v_tilde) + eps)
        out.append(theta)
    return out


def _adagrad_box(theta, grads, lr, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, maximize=False):
    state_sum = initial_accumulator_value
    out = []
    for t, g in enumerate(grads, 1):
        if maximize:
            g = -g
        lr_t = lr / (1 + (t - 1) * lr_decay)
        if weight_decay:
            g = g + weight_decay * theta
        state_sum = state_sum + g * g
        theta = theta - lr_t * g / (np.sqrt(state_sum) + eps)
        out.append(theta)
    return out


BOXES = [
    (SGD, _sgd_box, dict(lr=0.05, momentum=0.9)),
    (SGD, _sgd_box, dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    (SGD, _sgd_box, dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    (SGD, _sgd_box, dict(lr=0.05, momentum=0.8, maximize=True)),
    (Adam, _adam_box, dict(lr=0.01)),
    (Adam, _adam_box, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    (Adam, _adam_box, dict(lr=0.01, maximize=True, eps=1e-3)),
    (RMSprop, _rmsprop_box, dict(lr=0.01)),
    (RMSprop, _rmsprop_box, dict(lr=0.01, alpha=0.9, momentum=0.7, centered=True,
                                 weight_decay=0.1)),
    (RMSprop, _rmsprop_box, dict(lr=0.01, momentum=0.7, maximize=True)),
    (Adagrad, _adagrad_box, dict(lr=0.1, lr_decay=0.2, weight_decay=0.1,
                                 initial_accumulator_value=0.3)),
    (Adagrad, _adagrad_box, dict(lr=0.1, maximize=True)),
]


@pytest.mark.parametrize("optimizer_class, box, options", BOXES,
                         ids=[f"{c.__name__}-{o}" for c, _, o in BOXES])
def test_several_steps_follow_the_algorithm_box(optimizer_class, box, options):
    got = _run(optimizer_class, GRADS, **options)
    expected = box(THETA0, GRADS, **options)
    for step, (g, e) in enumerate(zip(got, expected), 1):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"step {step}")


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adamw_follows_the_decoupled_algorithm_box(amsgrad):
    got = _run(AdamW, GRADS, lr=0.01, weight_decay=0.3, amsgrad=amsgrad)
    expected = _adam_box(THETA0, GRADS, lr=0.01, weight_decay=0.3, amsgrad=amsgrad,
                         decoupled=True)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("optimizer_class", [SGD, Adam, AdamW, RMSprop, Adagrad])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_the_step_keeps_the_parameter_dtype(optimizer_class, dtype):
    w = oxmera.tensor(THETA0.astype(dtype), requires_grad=True)
    extra = {"momentum": 0.9} if optimizer_class in (SGD, RMSprop) else {}
    opt = optimizer_class([w], lr=0.01, **extra)
    for g in GRADS[:2]:
        w.grad = oxmera.tensor(g.astype(dtype))
        opt.step()
    assert w.dtype == dtype
    for key, value in opt.state[w].items():
        expected = np.float32 if key == "step" else dtype
        assert value.dtype == expected, key
    reference = _run(optimizer_class, GRADS[:2], lr=0.01, **extra)[-1]
    tolerance = {np.float16: 5e-2, np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(w.detach().numpy().astype(np.float64), reference,
                               rtol=tolerance, atol=tolerance)


def _sgd_by_hand(theta, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, maximize=False):
    """PyTorch's SGD box as NumPy's ufuncs compute it in the arrays' dtype."""
    theta = theta.copy()
    buf = None
    for g in grads:
        g = -g if maximize else g
        if weight_decay:
            g = g + weight_decay * theta
        if momentum:
            if buf is None:
                buf = g.copy()
            else:
                buf *= momentum
                buf += (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        theta -= lr * g
    return theta


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", [
    {}, {"momentum": 0.9}, {"momentum": 0.9, "dampening": 0.3}, {"momentum": 0.8, "nesterov": True},
    {"weight_decay": 0.1, "momentum": 0.5}, {"maximize": True, "momentum": 0.9},
], ids=repr)
def test_sgd_has_the_bits_of_numpys_two_roundings(dtype, options):
    # The update runs as one compiled pass (``param -= lr * grad`` without the
    # temporary): each element rounded as NumPy's product, then its sum.
    theta, grads = THETA0.astype(dtype), [g.astype(dtype) for g in GRADS]
    w = oxmera.tensor(theta, requires_grad=True)
    opt = SGD([w], lr=0.037, **options)
    for g in grads:
        w.grad = oxmera.tensor(g)
        opt.step()
    np.testing.assert_array_equal(w.detach().numpy(),
                                  _sgd_by_hand(theta, grads, 0.037, **options), strict=True)


def _adam_by_hand(theta, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                  amsgrad=False, maximize=False, decoupled=False):
    """PyTorch's Adam box as NumPy's ufuncs compute it in the arrays' dtype
    (the lerp in PyTorch's two forms, the bias corrections as Python floats)."""
    theta = theta.copy()
    beta1, beta2 = betas
    with np.errstate(all="ignore"):     # (the nan and inf gradients)
        return _adam_steps(theta, grads, lr, beta1, beta2, eps, weight_decay, amsgrad,
                           maximize, decoupled)


def _adam_steps(theta, grads, lr, beta1, beta2, eps, weight_decay, amsgrad, maximize,
                decoupled):
    m, v, vmax = np.zeros_like(theta), np.zeros_like(theta), np.zeros_like(theta)
    for step, g in enumerate(grads, 1):
        g = -g if maximize else g
        if weight_decay:
            if decoupled:
                theta *= 1 - lr * weight_decay
            else:
                g = g + weight_decay * theta
        weight = 1 - beta1
        if abs(weight) < 0.5:
            m += weight * (g - m)
        else:
            np.subtract(g, (g - m) * (1 - weight), out=m)
        v *= beta2
        v += (1 - beta2) * g * g
        if amsgrad:
            np.maximum(vmax, v, out=vmax)
        denom = np.sqrt(vmax if amsgrad else v)
        denom /= (1 - beta2 ** step) ** 0.5
        denom += eps
        update = -(lr / (1 - beta1 ** step)) * m
        update /= denom
        theta += update
    return theta


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("options", [
    {}, {"amsgrad": True}, {"betas": (0.3, 0.9)}, {"betas": (0.5, 0.5), "eps": 1e-3},
    {"weight_decay": 0.1}, {"weight_decay": 0.1, "decoupled": True, "amsgrad": True},
    {"maximize": True},
], ids=repr)
def test_adam_has_the_bits_of_numpys_sequence(dtype, options):
    # One compiled pass per parameter (_kernels.adam_update), each element
    # rounded as the NumPy sequence rounds it; a nan, an inf and zeros in the
    # gradients (AMSGrad's maximum keeps a nan, as np.maximum does).
    theta = THETA0.astype(dtype)
    grads = [g.astype(dtype) for g in GRADS]
    special = np.zeros_like(grads[0])
    special.flat[:3] = (np.nan, np.inf, -0.0)
    grads = grads + [special] + grads[:2]
    w = oxmera.tensor(theta, requires_grad=True)
    options = dict(options)
    cls = AdamW if options.pop("decoupled", False) else Adam
    opt = cls([w], lr=0.037, **options)
    for g in grads:
        w.grad = oxmera.tensor(g)
        opt.step()
    expected = _adam_by_hand(theta, grads, 0.037, decoupled=cls is AdamW,
                             **{"weight_decay": 0.01 if cls is AdamW else 0.0, **options})
    np.testing.assert_array_equal(w.detach().numpy(), expected, strict=True)


@pytest.mark.parametrize("make, after_two_steps", [
    (lambda w: SGD([w], lr=0.1, momentum=0.9), 1 - 0.1 * 0.5 - 0.1 * (0.9 * 0.5 + 0.5)),
    (lambda w: Adam([w], lr=0.1), 1 - 0.2),
    (lambda w: Adam([w], lr=0.1, amsgrad=True), 1 - 0.2),
], ids=["sgd-momentum", "adam", "adam-amsgrad"])
def test_a_step_makes_no_array_of_the_parameters_size(make, after_two_steps):
    # The updates run as compiled passes (scaled_into, adam_update).
    import tracemalloc
    n = 1 << 18                                       # 1 MiB of float32
    w = oxmera.tensor(np.ones(n, np.float32), requires_grad=True)
    opt = make(w)
    w.grad = oxmera.tensor(np.full(n, 0.5, np.float32))
    opt.step()                                        # the first step makes the buffers
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        opt.step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n * 4 // 4, f"a step's peak of {peak} bytes: a temporary of the weight's size"
    np.testing.assert_allclose(w.detach().numpy()[:3], after_two_steps, rtol=1e-5)


def test_adam_kernel_refuses_what_it_does_not_take_and_changes_nothing():
    from oxmera._core import _kernels
    p, g = np.ones(8, np.float32), np.full(8, 0.5, np.float32)
    m, v = np.zeros(8, np.float32), np.zeros(8, np.float32)
    args = (0.1, 0.999, 0.5, 1e-8, 0.01)
    for refused in [(p, g, m, m, None),                      # one array twice
                    (p, g[::-1].copy()[::-1], m, v, None),   # a strided gradient
                    (p.astype(np.float16), g.astype(np.float16), m.astype(np.float16),
                     v.astype(np.float16), None),            # not float32/float64
                    (p, g, m, v, np.zeros(4, np.float32)),   # another shape
                    (p, g, m, np.zeros(8, np.float64), None)]:
        before = [a.copy() for a in refused if a is not None]
        assert _kernels.adam_update(*refused, *args) is False
        for a, b in zip([a for a in refused if a is not None], before):
            np.testing.assert_array_equal(a, b)
    frozen = v.copy()
    frozen.flags.writeable = False
    assert _kernels.adam_update(p, g, m, frozen, None, *args) is False


def test_adam_on_a_transposed_gradient_takes_numpys_path_with_the_same_bits():
    theta = THETA0.astype(np.float32)
    grads = [np.ascontiguousarray(g.T.astype(np.float32)).T for g in GRADS]   # strided
    w = oxmera.tensor(theta, requires_grad=True)
    opt = Adam([w], lr=0.037, amsgrad=True)
    for g in grads:
        w.grad = oxmera.from_numpy(g)
        assert not w.grad._data.flags.c_contiguous
        opt.step()
    np.testing.assert_array_equal(
        w.detach().numpy(), _adam_by_hand(theta, [np.ascontiguousarray(g) for g in grads],
                                          0.037, amsgrad=True), strict=True)
