"""L-BFGS: convergence on smooth problems, PyTorch's iterations (when torch is
installed), the closure contract, state dicts and errors."""
import copy

import numpy as np
import pytest

import oxmera
from oxmera.optim import LBFGS


def _rosenbrock(lib, xy):
    x, y = xy[0], xy[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def _rosenbrock_numpy(xy):
    """Rosenbrock's value and gradient in NumPy: both libraries' closures hand the
    optimizer the same numbers, so any difference is the optimizer's."""
    x, y = xy
    value = (1 - x) ** 2 + 100 * (y - x * x) ** 2
    grad = np.array([-2 * (1 - x) - 400 * x * (y - x * x), 200 * (y - x * x)])
    return value, grad


def _run(lib, options, steps, start=(-1.5, 2.0), make=None):
    w = lib.tensor(list(start), dtype=lib.float64, requires_grad=True)
    opt = (make or lib.optim.LBFGS)([w], **options)
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        value, grad = _rosenbrock_numpy(w.detach().numpy())
        w.grad = lib.tensor(grad)
        return lib.tensor(value)

    losses = [float(opt.step(closure)) for _ in range(steps)]
    return w, opt, np.array(losses), len(calls)


# Without a line search, lr=1 zigzags chaotically in Rosenbrock's valley (an ulp of
# difference grew to 1e-5 in the weights within ~60 iterations): the fixed-step cases
# take smaller steps.
LBFGS_CASES = [
    dict(line_search_fn="strong_wolfe"),
    dict(lr=0.5, max_iter=5, history_size=3),
    dict(max_iter=7, history_size=2, line_search_fn="strong_wolfe"),
    dict(lr=0.1, max_iter=4, max_eval=6, tolerance_change=1e-12),
]


@pytest.mark.parametrize("options", LBFGS_CASES, ids=[str(o) for o in LBFGS_CASES])
def test_same_iterations_as_pytorch_on_rosenbrock(options):
    """Eight steps (up to ~90 iterations): the same closure calls and iterations, the same
    losses and weights. Not bit for bit: PyTorch's CPU ``add_(x, alpha=a)`` fuses the
    multiply-add, NumPy rounds twice, and Rosenbrock's valley amplifies those ulps to
    ~1e-7 in the weights by the end (a loss of ~1e-10 then differs relatively)."""
    torch = pytest.importorskip("torch")
    w_ours, opt_ours, losses_ours, calls_ours = _run(oxmera, options, 8)
    w_theirs, opt_theirs, losses_theirs, calls_theirs = _run(torch, options, 8)
    assert calls_ours == calls_theirs
    ours, theirs = opt_ours.state_dict()["state"][0], opt_theirs.state_dict()["state"][0]
    assert (ours["func_evals"], ours["n_iter"]) == (theirs["func_evals"], theirs["n_iter"])
    np.testing.assert_allclose(losses_ours, losses_theirs, rtol=1e-5, atol=1e-10)
    np.testing.assert_allclose(w_ours.detach().numpy(), w_theirs.detach().numpy(), atol=1e-6)
    assert opt_ours.state_dict()["param_groups"] == opt_theirs.state_dict()["param_groups"]


@pytest.mark.parametrize("options", LBFGS_CASES, ids=[str(o) for o in LBFGS_CASES])
def test_same_state_as_pytorch(options):
    """After two steps (before the valley amplifies rounding) the state agrees key by key."""
    torch = pytest.importorskip("torch")
    w_ours, opt_ours, _, _ = _run(oxmera, options, 2)
    w_theirs, opt_theirs, _, _ = _run(torch, options, 2)
    np.testing.assert_allclose(w_ours.detach().numpy(), w_theirs.detach().numpy(), rtol=1e-10)
    ours, theirs = opt_ours.state_dict()["state"][0], opt_theirs.state_dict()["state"][0]
    assert set(ours) == set(theirs)
    assert (ours["func_evals"], ours["n_iter"]) == (theirs["func_evals"], theirs["n_iter"])
    for key in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(ours[key].numpy(), theirs[key].numpy(), rtol=1e-8,
                                   atol=1e-12)
    for key in ("old_dirs", "old_stps"):
        assert len(ours[key]) == len(theirs[key])
        for a, b in zip(ours[key], theirs[key]):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(ours["ro"], [float(r) for r in theirs["ro"]], rtol=1e-8)
    assert [a is None for a in ours.get("al", [])] == [a is None for a in theirs.get("al", [])]
    for key in ("t", "H_diag", "prev_loss"):
        np.testing.assert_allclose(ours[key], float(theirs[key]), rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_reaches_the_minimum_of_rosenbrock(line_search_fn):
    w, _, losses, _ = _run(oxmera, dict(line_search_fn=line_search_fn, max_iter=50,
                                        tolerance_grad=1e-12, tolerance_change=1e-14),
                           30 if line_search_fn else 200, make=LBFGS)
    np.testing.assert_allclose(w.detach().numpy(), [1.0, 1.0], atol=1e-5)


def test_quadratic_in_one_step_with_strong_wolfe():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((6, 6))
    hessian = oxmera.tensor(a @ a.T + 6 * np.eye(6))
    target = oxmera.tensor(rng.standard_normal(6))
    w = oxmera.zeros(6, dtype=oxmera.float64, requires_grad=True)
    opt = LBFGS([w], line_search_fn="strong_wolfe", max_iter=100, tolerance_grad=1e-12,
                tolerance_change=1e-20)

    def closure():
        opt.zero_grad()
        diff = w - target
        loss = 0.5 * (diff @ (hessian @ diff))
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), target.numpy(), atol=1e-8)


def test_several_parameters_of_several_shapes_share_one_flat_vector():
    a = oxmera.tensor([[2.0, -1.0], [0.5, 3.0]], dtype=oxmera.float64, requires_grad=True)
    b = oxmera.tensor([4.0], dtype=oxmera.float64, requires_grad=True)
    c = oxmera.tensor([1.0], dtype=oxmera.float64, requires_grad=True)   # no gradient
    opt = LBFGS([a, b, c], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (a ** 2).sum() + ((b - 1) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(a.detach().numpy(), np.zeros((2, 2)), atol=1e-8)
    np.testing.assert_allclose(b.detach().numpy(), [1.0], atol=1e-8)
    assert c.item() == 1.0
    assert set(opt.state) == {a}                 # the state lives under the first parameter
    assert opt.state[a]["d"].shape == (6,)


def test_state_dict_round_trip_continues_identically():
    w1, opt1, _, _ = _run(oxmera, dict(max_iter=3, history_size=4), 2, make=LBFGS)
    saved = copy.deepcopy(opt1.state_dict())
    w2 = oxmera.tensor(w1.detach().numpy(), requires_grad=True)
    opt2 = LBFGS([w2], max_iter=3, history_size=4)
    opt2.load_state_dict(saved)
    for w, opt in ((w1, opt1), (w2, opt2)):
        def closure(w=w, opt=opt):
            opt.zero_grad()
            loss = _rosenbrock(oxmera, w)
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
    np.testing.assert_array_equal(w1.detach().numpy(), w2.detach().numpy())


def test_loads_a_pytorch_state_dict():
    torch = pytest.importorskip("torch")
    w_t, opt_t, _, _ = _run(torch, dict(max_iter=3, line_search_fn="strong_wolfe"), 2)
    w = oxmera.tensor(w_t.detach().numpy(), requires_grad=True)
    opt = LBFGS([w], max_iter=3, line_search_fn="strong_wolfe")
    opt.load_state_dict(opt_t.state_dict())
    assert opt.state[w]["n_iter"] == opt_t.state[w_t]["n_iter"]
    np.testing.assert_array_equal(opt.state[w]["d"].numpy(), opt_t.state[w_t]["d"].numpy())


@pytest.mark.parametrize("mutate, match", [
    (lambda s: s.update(d=oxmera.zeros(5, dtype=oxmera.float64)), "flat real vector.*2"),
    (lambda s: s.update(n_iter=-1), "'n_iter' must be an int >= 0"),
    (lambda s: s.update(t=float("nan")), "'t' is nan"),
    (lambda s: s["ro"].append(1.0), "one length"),
    (lambda s: s.update(exp_avg=1), "does not use"),
])
def test_a_state_dict_that_does_not_fit_is_refused(mutate, match):
    _, opt, _, _ = _run(oxmera, dict(max_iter=3), 2, make=LBFGS)
    saved = copy.deepcopy(opt.state_dict())
    mutate(saved["state"][0])
    before = opt.state_dict()["state"][0]["n_iter"]
    with pytest.raises(ValueError, match=match):
        opt.load_state_dict(saved)
    assert opt.state_dict()["state"][0]["n_iter"] == before


def test_errors():
    w = oxmera.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        LBFGS([{"params": [w]}, {"params": [oxmera.zeros(1, requires_grad=True)]}])
    with pytest.raises(ValueError, match="learning rate: -1"):
        LBFGS([w], lr=-1)
    with pytest.raises(ValueError, match="history_size: 0"):
        LBFGS([w], history_size=0)
    with pytest.raises(ValueError, match="max_iter: 2.5"):
        LBFGS([w], max_iter=2.5)
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        LBFGS([w], line_search_fn="backtracking")
    with pytest.raises(TypeError, match="one floating dtype"):
        LBFGS([w, oxmera.zeros(1, dtype=oxmera.float64, requires_grad=True)])
    with pytest.raises(TypeError, match="needs a closure"):
        LBFGS([w]).step(None)
    assert LBFGS([w], max_iter=8).defaults["max_eval"] == 10      # max_iter * 5 // 4


def test_an_error_in_a_line_search_probe_puts_the_weights_back():
    w = oxmera.tensor([3.0, -2.0], dtype=oxmera.float64, requires_grad=True)
    opt = LBFGS([w], line_search_fn="strong_wolfe")
    calls = []

    def closure():
        calls.append(w.tolist())
        if len(calls) == 2:                  # the first probe of the line search
            raise ArithmeticError("model blew up")
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(ArithmeticError):
        opt.step(closure)
    assert calls[1] != calls[0]              # the probe did move the weights
    assert w.tolist() == [3.0, -2.0]


def test_stops_at_once_when_the_gradient_is_already_zero():
    w = oxmera.tensor([1.0, 1.0], dtype=oxmera.float64, requires_grad=True)
    opt = LBFGS([w])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = _rosenbrock(oxmera, w)
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert len(calls) == 1 and opt.state[w] == {"func_evals": 1, "n_iter": 0}
    assert w._version == 0
