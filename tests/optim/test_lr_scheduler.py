"""Learning-rate schedulers: closed forms, PyTorch's sequences (when torch is
installed), chaining, resuming, state dicts, errors."""
import copy
import math
import warnings

import pytest

import oxmera
from oxmera.optim import SGD, Adam
from oxmera.optim.lr_scheduler import (CosineAnnealingLR, ExponentialLR, LambdaLR, LRScheduler,
                                       MultiStepLR, ReduceLROnPlateau, StepLR)


def _optimizer(lrs=(0.1,), cls=SGD):
    return cls([{"params": [oxmera.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs])


def _run(make, epochs=12, lrs=(0.1, 0.02), metrics=None):
    opt = _optimizer(lrs)
    sched = make(opt)
    seen = [sched.get_last_lr()]
    for epoch in range(epochs):
        opt.step()
        if metrics is None:
            sched.step()
        else:
            sched.step(metrics[epoch])
        seen.append(sched.get_last_lr())
        assert seen[-1] == [g["lr"] for g in opt.param_groups]
    return seen


def _half(epoch):
    return 0.5 ** epoch


class _Warmup:
    """A callable object: its attributes are LambdaLR state."""

    def __init__(self, warmup):
        self.warmup = warmup

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.warmup)


SCHEDULERS = [
    ("StepLR", lambda o, m: m.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda o, m: m.MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", lambda o, m: m.ExponentialLR(o, gamma=0.9)),
    ("CosineAnnealingLR", lambda o, m: m.CosineAnnealingLR(o, T_max=4, eta_min=0.001)),
    ("LambdaLR", lambda o, m: m.LambdaLR(o, _half)),
    ("LambdaLR-list", lambda o, m: m.LambdaLR(o, [_half, _Warmup(3)])),
]
METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8]
PLATEAUS = [
    dict(patience=1, factor=0.5),
    dict(mode="max", patience=0, factor=0.5, cooldown=2),
    dict(patience=1, threshold=0.2, threshold_mode="abs", min_lr=[0.01, 0.015]),
    dict(patience=2, threshold=0.1, factor=0.2, min_lr=0.004),
]


def test_closed_forms():
    base = [0.1, 0.02]
    step = _run(lambda o: StepLR(o, step_size=3, gamma=0.5))
    assert all(math.isclose(lr, b * 0.5 ** (e // 3)) for e, lrs in enumerate(step)
               for lr, b in zip(lrs, base))
    expo = _run(lambda o: ExponentialLR(o, gamma=0.9))
    assert all(math.isclose(lr, b * 0.9 ** e) for e, lrs in enumerate(expo)
               for lr, b in zip(lrs, base))
    multi = _run(lambda o: MultiStepLR(o, milestones=[2, 5, 5], gamma=0.3))
    assert [round(lrs[0] / 0.1, 10) for lrs in multi[:7]] == [1, 1, 0.3, 0.3, 0.3, 0.027, 0.027]
    cosine = _run(lambda o: CosineAnnealingLR(o, T_max=4, eta_min=0.001), epochs=8)
    for epoch, lrs in enumerate(cosine):
        for lr, b in zip(lrs, base):
            expected = 0.001 + (b - 0.001) * (1 + math.cos(math.pi * epoch / 4)) / 2
            assert math.isclose(lr, expected, rel_tol=1e-12, abs_tol=1e-15), (epoch, lr)
    lam = _run(lambda o: LambdaLR(o, _half))
    assert all(math.isclose(lr, b * 0.5 ** e) for e, lrs in enumerate(lam)
               for lr, b in zip(lrs, base))


@pytest.mark.parametrize("name, make", SCHEDULERS, ids=[n for n, _ in SCHEDULERS])
def test_same_learning_rates_as_pytorch(name, make):
    torch = pytest.importorskip("torch")
    ours = _run(lambda o: make(o, oxmera.optim.lr_scheduler))
    topt = torch.optim.SGD([{"params": [torch.zeros(2, requires_grad=True)], "lr": lr}
                            for lr in (0.1, 0.02)])
    sched = make(topt, torch.optim.lr_scheduler)
    theirs = [sched.get_last_lr()]
    for _ in range(12):
        topt.step()
        sched.step()
        theirs.append(sched.get_last_lr())
    assert ours == theirs        # the same floating-point operations: equal, not close


@pytest.mark.parametrize("options", PLATEAUS)
def test_reduce_on_plateau_same_as_pytorch(options):
    torch = pytest.importorskip("torch")
    ours = _run(lambda o: ReduceLROnPlateau(o, **options), metrics=METRICS)
    topt = torch.optim.SGD([{"params": [torch.zeros(2, requires_grad=True)], "lr": lr}
                            for lr in (0.1, 0.02)])
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(topt, **options)
    theirs = [sched.get_last_lr()]
    for metric in METRICS:
        topt.step()
        sched.step(metric)
        theirs.append(sched.get_last_lr())
    assert ours == theirs


def test_reduce_on_plateau_by_hand():
    lrs = _run(lambda o: ReduceLROnPlateau(o, patience=1, factor=0.5, cooldown=1),
               metrics=[1, 1, 1, 1, 1, 1, 0.1, 1, 1], epochs=9, lrs=(1.0,))
    # epoch 1 sets best; bad epochs 2, 3 -> reduce; 4 is cooldown (not counted); bad 5, 6
    # -> reduce; 7 improves; bad 8, 9 -> reduce
    assert [x[0] for x in lrs] == [1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125]


def test_reduce_on_plateau_accepts_a_tensor_metric_and_respects_min_lr():
    opt = _optimizer((1.0,))
    sched = ReduceLROnPlateau(opt, patience=0, factor=0.1, min_lr=0.05)
    for _ in range(4):
        sched.step(oxmera.tensor(3.0))
    assert sched.get_last_lr() == [0.05]
    assert not sched.in_cooldown


def test_schedulers_chain_like_pytorch():
    opt = _optimizer((1.0,))
    a = ExponentialLR(opt, gamma=0.5)
    b = StepLR(opt, step_size=2, gamma=0.1)
    seen = []
    for _ in range(4):
        opt.step()
        a.step()
        b.step()
        seen.append(round(opt.param_groups[0]["lr"], 12))
    assert seen == [0.5, 0.025, 0.0125, 0.000625]


def test_cosine_rises_again_after_t_max():
    lrs = [x[0] for x in _run(lambda o: CosineAnnealingLR(o, T_max=2), epochs=4, lrs=(1.0,))]
    assert [round(x, 12) for x in lrs] == [1.0, 0.5, 0.0, 0.5, 1.0]


def test_state_dict_round_trip_resumes_the_schedule():
    opt = _optimizer((1.0,))
    sched = MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    saved_sched = copy.deepcopy(sched.state_dict())
    saved_opt = copy.deepcopy(opt.state_dict())
    expected = []
    for _ in range(3):
        opt.step()
        sched.step()
        expected.append(sched.get_last_lr())

    opt2 = _optimizer((123.0,))
    opt2.load_state_dict(saved_opt)
    sched2 = MultiStepLR(opt2, milestones=[99])
    sched2.load_state_dict(saved_sched)
    got = []
    for _ in range(3):
        opt2.step()
        sched2.step()
        got.append(sched2.get_last_lr())
    assert got == expected


def test_lambda_state_dict_keeps_callable_objects_state():
    opt = _optimizer((1.0, 1.0))
    warm = _Warmup(4)
    sched = LambdaLR(opt, [_half, warm])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [None, {"warmup": 4}]
    warm.warmup = 10
    sched.load_state_dict(sd)
    assert warm.warmup == 4 and sched.lr_lambdas[0] is _half


def test_initial_lr_and_resuming():
    opt = _optimizer((0.3,))
    StepLR(opt, step_size=1)
    assert opt.param_groups[0]["initial_lr"] == 0.3
    with pytest.raises(KeyError, match="initial_lr.*param_groups\\[0\\]"):
        StepLR(_optimizer(), step_size=1, last_epoch=3)
    resumed = _optimizer((1.0,))
    resumed.param_groups[0]["initial_lr"] = 1.0
    sched = StepLR(resumed, step_size=2, gamma=0.5, last_epoch=3)
    assert sched.last_epoch == 4


def test_step_with_an_epoch_uses_the_closed_form_and_warns():
    opt = _optimizer((1.0,))
    sched = ExponentialLR(opt, gamma=0.5)
    with pytest.warns(UserWarning, match="deprecated"):
        sched.step(3)
    assert sched.get_last_lr() == [0.125]


def test_errors():
    with pytest.raises(TypeError, match="StepLR: list is not an Optimizer"):
        StepLR([], step_size=1)
    with pytest.raises(TypeError, match="ReduceLROnPlateau: .* is not an Optimizer"):
        ReduceLROnPlateau(None)
    with pytest.raises(ValueError, match="step_size must be a positive integer"):
        StepLR(_optimizer(), step_size=0)
    with pytest.raises(ValueError, match="T_max must be positive"):
        CosineAnnealingLR(_optimizer(), T_max=0)
    with pytest.raises(ValueError, match="expected 2 lr_lambdas"):
        LambdaLR(_optimizer((1.0, 1.0)), [_half])
    with pytest.raises(ValueError, match="factor should be < 1.0"):
        ReduceLROnPlateau(_optimizer(), factor=1.0)
    with pytest.raises(ValueError, match="mode 'up' is unknown"):
        ReduceLROnPlateau(_optimizer(), mode="up")
    with pytest.raises(ValueError, match="threshold mode 'x' is unknown"):
        ReduceLROnPlateau(_optimizer(), threshold_mode="x")
    with pytest.raises(ValueError, match="expected 1 min_lrs"):
        ReduceLROnPlateau(_optimizer(), min_lr=[0, 0])
    with pytest.raises(NotImplementedError, match="get_lr"):
        LRScheduler(_optimizer())


def test_reduce_on_plateau_with_a_group_added_later():
    opt = _optimizer((1.0,))
    sched = ReduceLROnPlateau(opt, patience=0, min_lr=[0.0])
    opt.add_param_group({"params": [oxmera.zeros(1, requires_grad=True)], "lr": 1.0})
    sched.step(1.0)
    with pytest.raises(RuntimeError, match="number of param groups"):
        sched.step(2.0)
    flexible = ReduceLROnPlateau(opt, patience=0)
    opt.add_param_group({"params": [oxmera.zeros(1, requires_grad=True)], "lr": 1.0})
    flexible.step(1.0)
    flexible.step(2.0)
    assert len(flexible.get_last_lr()) == 3


def test_works_with_any_optimizer_and_no_warnings():
    opt = _optimizer((0.01,), cls=Adam)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched = CosineAnnealingLR(opt, T_max=10)
        opt.step()
        sched.step()
