"""The schedulers added beside the decays of test_lr_scheduler.py: OneCycleLR,
CyclicLR, CosineAnnealingWarmRestarts, LinearLR, ConstantLR, PolynomialLR,
MultiplicativeLR, SequentialLR, ChainedScheduler. Learning rates (and the
cycled momentum) equal PyTorch's step for step (when torch is installed),
state dicts round trip and load PyTorch's, errors are PyTorch's."""
import copy
import math
import warnings

import pytest

import oxmera
from oxmera.optim import SGD, Adam, Adagrad
from oxmera.optim import lr_scheduler as ours_module


class _Scale:
    """A callable object: its attributes are scheduler state."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x):
        return self.rate ** x


def _decay(epoch):
    return 0.9 if epoch % 3 else 0.5


MAKERS = [
    ("OneCycle-cos", "SGD", lambda o, m: m.OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=40)),
    ("OneCycle-linear-3phase", "SGD",
     lambda o, m: m.OneCycleLR(o, max_lr=0.5, epochs=4, steps_per_epoch=10,
                               anneal_strategy="linear", three_phase=True, pct_start=0.25)),
    ("OneCycle-adam", "Adam",
     lambda o, m: m.OneCycleLR(o, max_lr=0.01, total_steps=40, base_momentum=[0.8, 0.7],
                               max_momentum=0.9, div_factor=10.0, final_div_factor=100.0)),
    ("OneCycle-no-momentum", "Adagrad",
     lambda o, m: m.OneCycleLR(o, max_lr=0.1, total_steps=40, cycle_momentum=False)),
    ("Cyclic-triangular", "SGD",
     lambda o, m: m.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.05], step_size_up=4)),
    ("Cyclic-triangular2", "SGD",
     lambda o, m: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                             step_size_down=5, mode="triangular2")),
    ("Cyclic-exp_range-adam", "Adam",
     lambda o, m: m.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=5, mode="exp_range",
                             gamma=0.97)),
    ("Cyclic-scale_fn", "SGD",
     lambda o, m: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=_Scale(0.8),
                             scale_mode="iterations", base_momentum=0.7, max_momentum=0.95)),
    ("Cyclic-no-momentum", "Adagrad",
     lambda o, m: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                             cycle_momentum=False)),
    ("WarmRestarts", "SGD", lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=5)),
    ("WarmRestarts-mult", "SGD",
     lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001)),
    ("LinearLR", "SGD", lambda o, m: m.LinearLR(o, start_factor=0.1, total_iters=7)),
    ("LinearLR-down", "SGD",
     lambda o, m: m.LinearLR(o, start_factor=1.0, end_factor=0.2, total_iters=9)),
    ("ConstantLR", "SGD", lambda o, m: m.ConstantLR(o, factor=0.25, total_iters=6)),
    ("PolynomialLR", "SGD", lambda o, m: m.PolynomialLR(o, total_iters=12, power=2.0)),
    ("PolynomialLR-sqrt", "SGD", lambda o, m: m.PolynomialLR(o, total_iters=8, power=0.5)),
    ("MultiplicativeLR", "SGD", lambda o, m: m.MultiplicativeLR(o, _decay)),
    ("MultiplicativeLR-list", "SGD",
     lambda o, m: m.MultiplicativeLR(o, [_decay, _Scale(0.99)])),
    ("SequentialLR", "SGD",
     lambda o, m: m.SequentialLR(o, [m.LinearLR(o, start_factor=0.1, total_iters=5),
                                     m.CosineAnnealingLR(o, T_max=10)], milestones=[5])),
    ("SequentialLR-3", "SGD",
     lambda o, m: m.SequentialLR(o, [m.ConstantLR(o, factor=0.5, total_iters=3),
                                     m.ExponentialLR(o, gamma=0.9),
                                     m.StepLR(o, step_size=4, gamma=0.5)],
                                 milestones=[4, 15])),
    ("ChainedScheduler", "SGD",
     lambda o, m: m.ChainedScheduler([m.ConstantLR(o, factor=0.2, total_iters=4),
                                      m.ExponentialLR(o, gamma=0.95)])),
    ("ChainedScheduler-warmup-poly", "SGD",
     lambda o, m: m.ChainedScheduler([m.LinearLR(o, start_factor=0.5, total_iters=5),
                                      m.PolynomialLR(o, total_iters=20)], optimizer=o)),
]
STEPS = 40


def _optimizer(lib, kind):
    if lib is oxmera:
        cls = {"SGD": SGD, "Adam": Adam, "Adagrad": Adagrad}[kind]
        params = [[oxmera.zeros(2, requires_grad=True)] for _ in range(2)]
    else:
        cls = getattr(lib.optim, kind)
        params = [[lib.zeros(2, requires_grad=True)] for _ in range(2)]
    options = {"SGD": {"momentum": 0.5}, "Adam": {}, "Adagrad": {}}[kind]
    return cls([{"params": params[0], "lr": 0.1}, {"params": params[1], "lr": 0.02}],
               **options)


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _trace(lib, kind, make, steps=STEPS):
    module = ours_module if lib is oxmera else lib.optim.lr_scheduler
    opt = _optimizer(lib, kind)
    sched = make(opt, module)
    lrs, momenta = [sched.get_last_lr()], [_momenta(opt)]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        momenta.append(_momenta(opt))
        assert lrs[-1] == [g["lr"] for g in opt.param_groups]
    return lrs, momenta, sched, opt


@pytest.mark.parametrize("name, kind, make", MAKERS, ids=[m[0] for m in MAKERS])
def test_same_rates_and_momenta_as_pytorch(name, kind, make):
    torch = pytest.importorskip("torch")
    ours_lrs, ours_momenta, ours, _ = _trace(oxmera, kind, make)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # PyTorch's step-order warning
        theirs_lrs, theirs_momenta, theirs, _ = _trace(torch, kind, make)
    assert ours_lrs == theirs_lrs            # the same floating-point operations: equal
    assert ours_momenta == theirs_momenta
    ours_keys = set(ours.state_dict()) - {"_is_initial"}
    theirs_keys = set(theirs.state_dict()) - {"_is_initial", "_get_lr_called_within_step"}
    assert ours_keys == theirs_keys


@pytest.mark.parametrize("name, kind, make", MAKERS, ids=[m[0] for m in MAKERS])
def test_state_dict_round_trip_resumes(name, kind, make):
    full_lrs, full_momenta, _, _ = _trace(oxmera, kind, make)
    lrs, _, sched, opt = _trace(oxmera, kind, make, steps=STEPS // 2)
    saved_opt = copy.deepcopy(opt.state_dict())
    saved = copy.deepcopy(sched.state_dict())
    fresh_opt = _optimizer(oxmera, kind)
    fresh = make(fresh_opt, ours_module)
    fresh_opt.load_state_dict(saved_opt)
    fresh.load_state_dict(saved)
    assert fresh.get_last_lr() == full_lrs[STEPS // 2]
    for epoch in range(STEPS // 2 + 1, STEPS + 1):
        fresh_opt.step()
        fresh.step()
        assert fresh.get_last_lr() == full_lrs[epoch], epoch
        assert _momenta(fresh_opt) == full_momenta[epoch], epoch


@pytest.mark.parametrize("name, kind, make", MAKERS, ids=[m[0] for m in MAKERS])
def test_loads_pytorchs_state_dict(name, kind, make):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs_lrs, _, theirs, theirs_opt = _trace(torch, kind, make, steps=STEPS // 2)
        theirs_opt.step()
        theirs.step()
    opt = _optimizer(oxmera, kind)
    sched = make(opt, ours_module)
    opt.load_state_dict(_group_state(theirs_opt))
    sched.load_state_dict(theirs.state_dict())
    opt.step()
    sched.step()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs_opt.step()
        theirs.step()
    assert sched.get_last_lr() == theirs.get_last_lr()


def _group_state(torch_opt):
    """A PyTorch optimizer's state dict, with the groups' tensors-free values."""
    state = torch_opt.state_dict()
    return {"state": {}, "param_groups": state["param_groups"]}


def test_warm_restarts_fractional_epochs_match_pytorch():
    torch = pytest.importorskip("torch")
    epochs = [0.0, 0.25, 0.5, 1.75, 2.0, 2.9, 3.0, 4.5, 8.99, 9.0, 10.2, 21.0, 3.3]
    seen = []
    for lib, module in ((oxmera, ours_module), (torch, torch.optim.lr_scheduler)):
        opt = _optimizer(lib, "SGD")
        sched = module.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01)
        trace = []
        for epoch in epochs:
            sched.step(epoch)
            trace.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        seen.append(trace)
    assert seen[0] == seen[1]


def test_warm_restarts_closed_form_by_hand():
    opt = _optimizer(oxmera, "SGD")
    sched = ours_module.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=0.0)
    for epoch in [0.5, 5.0, 13.0]:
        sched.step(epoch)
        t_cur, t_i = {0.5: (0.5, 4), 5.0: (1.0, 8), 13.0: (1.0, 16)}[epoch]
        expected = 0.1 * (1 + math.cos(math.pi * t_cur / t_i)) / 2
        assert math.isclose(sched.get_last_lr()[0], expected, rel_tol=1e-12)


def test_one_cycle_steps_past_the_end_are_refused_and_change_nothing():
    opt = _optimizer(oxmera, "SGD")
    sched = ours_module.OneCycleLR(opt, max_lr=1.0, total_steps=3)
    for _ in range(3):
        sched.step()
    before = copy.deepcopy(sched.state_dict())
    with pytest.raises(ValueError, match="Tried to step 4 times. The specified number of "
                                         "total steps is 3"):
        sched.step()
    assert sched.state_dict() == before


ERRORS = [
    (lambda o, m: m.OneCycleLR(o, max_lr=1.0), ValueError,
     "You must define either total_steps OR \\(epochs AND steps_per_epoch\\)"),
    (lambda o, m: m.OneCycleLR(o, max_lr=1.0, total_steps=0), ValueError,
     "Expected positive integer total_steps, but got 0"),
    (lambda o, m: m.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=-1), ValueError,
     "Expected positive integer steps_per_epoch, but got -1"),
    (lambda o, m: m.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1), ValueError,
     "Expected float between 0 and 1 pct_start, but got 1"),
    (lambda o, m: m.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
     ValueError, "anneal_strategy must be one of 'cos' or 'linear', instead got exp"),
    (lambda o, m: m.OneCycleLR(o, max_lr=[1.0], total_steps=5), ValueError,
     "max_lr must have the same length as optimizer.param_groups"),
    (lambda o, m: m.CyclicLR(o, 0.1, 1.0, mode="sawtooth"), ValueError,
     "mode is invalid and scale_fn is None"),
    (lambda o, m: m.CyclicLR(o, [0.1, 0.2, 0.3], 1.0), ValueError,
     "base_lr must have the same length as optimizer.param_groups"),
    (lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=0), ValueError,
     "Expected positive integer T_0, but got 0"),
    (lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=2.5), ValueError,
     "Expected positive integer T_0, but got 2.5"),
    (lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError,
     "Expected integer T_mult >= 1, but got 0"),
    (lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), ValueError,
     "Expected float or int eta_min"),
    (lambda o, m: m.LinearLR(o, start_factor=0), ValueError,
     "Starting multiplicative factor expected to be greater than 0 and less or equal to 1."),
    (lambda o, m: m.LinearLR(o, end_factor=1.5), ValueError,
     "Ending multiplicative factor expected to be between 0 and 1."),
    (lambda o, m: m.ConstantLR(o, factor=1.5), ValueError,
     "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda o, m: m.MultiplicativeLR(o, 0.5), TypeError,
     "lr_lambda should be a function, but got float"),
    (lambda o, m: m.MultiplicativeLR(o, [_decay]), ValueError, "Expected 2 lr_lambdas|"
                                                                "expected 2 lr_lambdas"),
    (lambda o, m: m.SequentialLR(o, [], milestones=[]), ValueError,
     "SequentialLR expects at least one scheduler"),
    (lambda o, m: m.SequentialLR(o, [m.StepLR(o, 2), m.StepLR(o, 3)], milestones=[]),
     ValueError, "expects number of schedulers provided to be one more than the number of "
                 "milestone points"),
    (lambda o, m: m.SequentialLR(o, [m.ReduceLROnPlateau(o)], milestones=[]), ValueError,
     "does not support `ReduceLROnPlateau`"),
    (lambda o, m: m.ChainedScheduler([]), ValueError,
     "ChainedScheduler expects at least one scheduler to be chained"),
    (lambda o, m: m.ChainedScheduler([m.StepLR(o, 2), m.StepLR(_optimizer_like(o), 2)]),
     ValueError, "expects all schedulers to belong to the same optimizer"),
    (lambda o, m: m.ChainedScheduler([object()], optimizer=o), TypeError,
     "at index 0 should have `optimizer` as its attribute"),
]


def _optimizer_like(opt):
    """Another optimizer of the same class and library, on a new parameter."""
    param = opt.param_groups[0]["params"][0].detach().clone().requires_grad_(True)
    return type(opt)([param], lr=0.1)


@pytest.mark.parametrize("make, error, match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors_as_pytorchs(make, error, match):
    with pytest.raises(error, match=match):
        make(_optimizer(oxmera, "SGD"), ours_module)
    torch = pytest.importorskip("torch")
    with pytest.raises(error):                   # PyTorch refuses it with the same type
        make(_optimizer(torch, "SGD"), torch.optim.lr_scheduler)


def test_cycle_momentum_needs_momentum():
    opt = _optimizer(oxmera, "Adagrad")
    for make in (lambda: ours_module.CyclicLR(opt, 0.1, 1.0),
                 lambda: ours_module.OneCycleLR(opt, 1.0, total_steps=4)):
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1 with "
                                             "`cycle_momentum` option enabled"):
            make()


BAD_STATES = [
    ("WarmRestarts", lambda sd: sd.update(T_mult=0), "Expected integer T_mult >= 1"),
    ("WarmRestarts", lambda sd: sd.update(T_cur=float("nan")), "invalid T_cur value: nan"),
    ("LinearLR", lambda sd: sd.update(start_factor=2.0), "Starting multiplicative factor"),
    ("ConstantLR", lambda sd: sd.update(total_iters=-1), "invalid total_iters: -1"),
    ("PolynomialLR", lambda sd: sd.update(total_iters=0), "invalid total_iters: 0"),
    ("OneCycle-cos", lambda sd: sd.update(_anneal_func_type="exp"), "anneal_strategy"),
    ("OneCycle-cos", lambda sd: sd.update(_schedule_phases=[{"end_step": 3}]),
     "_schedule_phases must be a list of phases"),
    ("OneCycle-cos", lambda sd: sd.update(total_steps=0), "invalid total_steps: 0"),
    ("Cyclic-triangular", lambda sd: sd.update(mode="saw"), "mode is invalid"),
    ("Cyclic-triangular", lambda sd: sd.update(max_lrs=[0.1]), "max_lrs must be a list of 2"),
    ("Cyclic-triangular", lambda sd: sd.update(base_momentums=[0.8, float("inf")]),
     "base_momentums\\[1\\]"),
    ("Cyclic-triangular", lambda sd: sd.update(step_ratio=1.0), "do not describe a cycle"),
    ("Cyclic-scale_fn", lambda sd: sd.update(_scale_fn_custom=[1]), "_scale_fn_custom"),
    ("Cyclic-triangular", lambda sd: sd.pop("total_size"), "missing keys: \\['total_size'\\]"),
    ("MultiplicativeLR", lambda sd: sd.update(lr_lambdas=[None]), "lr_lambdas must be a list"),
    ("SequentialLR", lambda sd: sd.update(_milestones=[-3]), "invalid milestones\\[0\\]: -3"),
    ("SequentialLR", lambda sd: sd["_schedulers"][1].update(T_max=-1),
     "T_max must be positive"),
    ("SequentialLR", lambda sd: sd.update(_schedulers=[]), "'_schedulers' must be a list of 2"),
    ("ChainedScheduler", lambda sd: sd["_schedulers"][1].update(gamma=float("nan")),
     "invalid gamma value: nan"),
    ("ChainedScheduler", lambda sd: sd.update(last_epoch=1), "unexpected keys"),
]


def _snapshot(sched):
    state = sched.state_dict()
    if "_schedulers" in state:
        state["_schedulers"] = [_snapshot(s) for s in sched._schedulers]
    return copy.deepcopy(state)


@pytest.mark.parametrize("name, mutate, match", BAD_STATES,
                         ids=[f"{n}-{m}" for n, _, m in BAD_STATES])
def test_a_state_dict_that_does_not_fit_changes_nothing(name, mutate, match):
    kind, make = next((k, mk) for n, k, mk in MAKERS if n == name)
    _, _, sched, _ = _trace(oxmera, kind, make, steps=5)
    saved = copy.deepcopy(sched.state_dict())
    mutate(saved)
    before = _snapshot(sched)
    with pytest.raises(ValueError, match=match):
        sched.load_state_dict(saved)
    assert _snapshot(sched) == before


def test_cyclic_scale_fn_object_state_is_kept():
    opt = _optimizer(oxmera, "SGD")
    sched = ours_module.CyclicLR(opt, 0.01, 0.1, step_size_up=2, scale_fn=_Scale(0.5),
                                 scale_mode="iterations")
    saved = sched.state_dict()
    assert saved["_scale_fn_custom"] == {"rate": 0.5}
    other = ours_module.CyclicLR(_optimizer(oxmera, "SGD"), 0.01, 0.1, step_size_up=2,
                                 scale_fn=_Scale(0.9), scale_mode="iterations")
    other.load_state_dict(saved)
    assert other._scale_fn_custom.rate == 0.5


def _lrs(make, steps=30, kind="SGD"):
    return [lrs[0] for lrs in _trace(oxmera, kind, make, steps)[0]]


def test_closed_forms():
    """Without PyTorch: each schedule against its formula (first group, base 0.1)."""
    base = 0.1
    cases = {
        "LinearLR": (lambda o, m: m.LinearLR(o, start_factor=0.2, end_factor=0.9,
                                             total_iters=8),
                     lambda e: base * (0.2 + 0.7 * min(e, 8) / 8)),
        "ConstantLR": (lambda o, m: m.ConstantLR(o, factor=0.3, total_iters=5),
                       lambda e: base * (0.3 if e < 5 else 1.0)),
        "PolynomialLR": (lambda o, m: m.PolynomialLR(o, total_iters=10, power=3.0),
                         lambda e: base * (1 - min(e, 10) / 10) ** 3),
        "MultiplicativeLR": (lambda o, m: m.MultiplicativeLR(o, lambda e: 0.9),
                             lambda e: base * 0.9 ** e),
        "Cyclic": (lambda o, m: m.CyclicLR(o, 0.01, 0.1, step_size_up=4),
                   lambda e: 0.01 + 0.09 * max(0.0, 1 - abs(e / 4 - 2 * (1 + e // 8) + 1))),
        "Cyclic-triangular2": (lambda o, m: m.CyclicLR(o, 0.01, 0.1, step_size_up=4,
                                                       mode="triangular2"),
                               lambda e: 0.01 + 0.09 * max(0.0, 1 - abs(
                                   e / 4 - 2 * (1 + e // 8) + 1)) / 2 ** (e // 8)),
        "OneCycle-linear": (lambda o, m: m.OneCycleLR(o, max_lr=1.0, total_steps=21,
                                                      pct_start=0.5, anneal_strategy="linear",
                                                      div_factor=10.0, final_div_factor=2.0),
                            lambda e: (0.1 + 0.9 * e / 9.5 if e <= 9.5
                                       else 1.0 + (0.05 - 1.0) * (e - 9.5) / 10.5)),
        "OneCycle-cos": (lambda o, m: m.OneCycleLR(o, max_lr=1.0, total_steps=21,
                                                   pct_start=0.5, div_factor=10.0,
                                                   final_div_factor=2.0),
                         lambda e: (1.0 + (0.1 - 1.0) * (1 + math.cos(math.pi * e / 9.5)) / 2
                                    if e <= 9.5 else 0.05 + (1.0 - 0.05)
                                    * (1 + math.cos(math.pi * (e - 9.5) / 10.5)) / 2)),
    }
    for name, (make, formula) in cases.items():
        steps = 21 if name.startswith("OneCycle") else 30
        for epoch, lr in enumerate(_lrs(make, steps)):
            assert math.isclose(lr, formula(epoch), rel_tol=1e-12, abs_tol=1e-15), (name, epoch)


def test_cyclic_and_one_cycle_move_the_momentum_against_the_rate():
    opt = _optimizer(oxmera, "SGD")
    sched = ours_module.CyclicLR(opt, 0.01, 0.1, step_size_up=2, base_momentum=0.8,
                                 max_momentum=0.9)
    seen = []
    for _ in range(4):
        seen.append((sched.get_last_lr()[0], opt.param_groups[0]["momentum"]))
        opt.step()
        sched.step()
    assert [round(m, 10) for _, m in seen] == [0.9, 0.85, 0.8, 0.85]
    opt = _optimizer(oxmera, "Adam")
    ours_module.OneCycleLR(opt, max_lr=0.01, total_steps=10, base_momentum=0.8)
    assert opt.param_groups[0]["betas"] == (0.95, 0.999)         # starts at max_momentum
    assert opt.param_groups[0]["max_lr"] == 0.01 and opt.param_groups[0]["initial_lr"] == 0.0004


def test_sequential_restarts_the_next_scheduler_at_its_milestone():
    lrs = _lrs(lambda o, m: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.5, total_iters=10), m.ExponentialLR(o, gamma=0.5)],
        milestones=[3]), steps=6)
    assert lrs == pytest.approx([0.05, 0.05, 0.05, 0.1, 0.05, 0.025, 0.0125])
