"""Optimizer and scheduler ``load_state_dict``: all or nothing, and checked.

- Every hyper-parameter of every group is checked by the optimizer's one validation,
  the one its constructor and ``add_param_group`` run: a value one of them refuses,
  all three refuse.
- Every per-parameter state entry is checked against its parameter (the keys
  ``step()`` reads, type, shape, finite values, non-negative sums of squares, a whole
  ``step``), so a loaded state can never make the next ``step()`` write NaN or raise
  after updating only some parameters.
- A refused state dict is a ``ValueError`` naming what is wrong, and leaves the
  optimizer (groups, state, parameters) or the scheduler exactly as it was.
"""
import copy
import math
import warnings

import numpy as np
import pytest

import oxmera
from oxmera.optim import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop
from oxmera.optim.lr_scheduler import (CosineAnnealingLR, ExponentialLR, LambdaLR,
                                       MultiStepLR, ReduceLROnPlateau, StepLR)

NAN, INF = math.nan, math.inf
OPTIONS = {SGD: dict(lr=0.1, momentum=0.9), Adam: dict(lr=0.1, amsgrad=True),
           AdamW: dict(lr=0.1), RMSprop: dict(lr=0.01, momentum=0.5, centered=True),
           Adagrad: dict(lr=0.1)}


def _trained(cls, steps=2):
    """An optimizer of two parameters after ``steps`` steps, and its parameters."""
    params = [oxmera.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2),
                            requires_grad=True),
              oxmera.tensor([0.5, -0.25], requires_grad=True)]
    opt = cls(params, **OPTIONS[cls])
    for _ in range(steps):
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        opt.step()
    return opt, params


def _snapshot(opt):
    """Everything load_state_dict could change, by value and by identity."""
    groups = [(id(g), id(g["params"]), {k: copy.deepcopy(v) for k, v in g.items()
                                        if k != "params"}) for g in opt.param_groups]
    state = {id(p): (id(s), {k: (id(v), v.numpy().copy() if isinstance(v, oxmera.Tensor)
                                 else copy.deepcopy(v))
                             for k, v in s.items()}) for p, s in opt.state.items()}
    params = [(p.numpy(force=True).copy(), p._version) for g in opt.param_groups
              for p in g["params"]]
    return id(opt.state), groups, state, params


def _assert_same(before, after):
    assert before[0] == after[0] and before[1] == after[1]
    assert before[2].keys() == after[2].keys()
    for key in before[2]:
        assert before[2][key][0] == after[2][key][0]
        for name, (ident, value) in before[2][key][1].items():
            assert after[2][key][1][name][0] == ident
            np.testing.assert_array_equal(after[2][key][1][name][1], value)
    for (value, version), (value2, version2) in zip(before[3], after[3]):
        np.testing.assert_array_equal(value, value2)
        assert version == version2


def _refused(opt, state_dict, *words):
    before = _snapshot(opt)
    with pytest.raises(ValueError) as info:
        opt.load_state_dict(state_dict)
    message = str(info.value)
    assert message.startswith(f"{type(opt).__name__}.load_state_dict(): "), message
    for word in words:
        assert word in message, (word, message)
    _assert_same(before, _snapshot(opt))
    return message


# -- hyper-parameters: one validation for the constructor, add_param_group and loading ------

BAD_HYPER_PARAMETERS = [
    (SGD, "lr", NAN, "learning rate"), (SGD, "lr", -1.0, "learning rate"),
    (SGD, "lr", INF, "learning rate"), (SGD, "lr", "0.1", "learning rate"),
    (SGD, "lr", None, "learning rate"), (SGD, "lr", True, "learning rate"),
    (SGD, "lr", 10 ** 400, "learning rate"),
    (SGD, "momentum", -0.5, "momentum"), (SGD, "momentum", NAN, "momentum"),
    (SGD, "dampening", NAN, "dampening"), (SGD, "weight_decay", INF, "weight_decay"),
    (SGD, "nesterov", "yes", "nesterov"), (SGD, "maximize", None, "maximize"),
    (Adam, "lr", NAN, "learning rate"), (Adam, "betas", (2, 5), "beta parameter at index 0"),
    (Adam, "betas", (0.9, 1.0), "beta parameter at index 1"),
    (Adam, "betas", (0.9, NAN), "beta parameter at index 1"), (Adam, "betas", (0.9,), "pair"),
    (Adam, "betas", "ab", "pair"), (Adam, "betas", ("a", 0.9), "beta parameter at index 0"),
    (Adam, "betas", 0.9, "pair"), (Adam, "eps", -1e-8, "epsilon"),
    (Adam, "weight_decay", NAN, "weight_decay"), (Adam, "amsgrad", 1, "amsgrad"),
    (Adam, "decoupled_weight_decay", "no", "decoupled_weight_decay"),
    (AdamW, "betas", (2, 5), "beta parameter"), (AdamW, "weight_decay", -1, "weight_decay"),
    (RMSprop, "alpha", NAN, "alpha"), (RMSprop, "alpha", -0.1, "alpha"),
    (RMSprop, "eps", INF, "epsilon"), (RMSprop, "momentum", -1, "momentum"),
    (RMSprop, "centered", "x", "centered"),
    (Adagrad, "lr_decay", -1, "lr_decay"), (Adagrad, "eps", NAN, "epsilon"),
    (Adagrad, "initial_accumulator_value", INF, "initial_accumulator_value"),
    (Adagrad, "maximize", 0, "maximize"),
]


def _case_id(case):
    cls, key, value, _ = case
    return f"{cls.__name__}-{key}={value!r}"[:60]


@pytest.mark.parametrize("cls, key, value, label", BAD_HYPER_PARAMETERS,
                         ids=[_case_id(c) for c in BAD_HYPER_PARAMETERS])
def test_a_bad_hyper_parameter_is_refused_everywhere(cls, key, value, label):
    opt, params = _trained(cls)
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0][key] = value
    _refused(opt, saved, "param_groups[0]", label)
    # the constructor and add_param_group run the same check, so they refuse it too
    with pytest.raises((TypeError, ValueError), match=label):
        cls([oxmera.zeros(2, requires_grad=True)], **dict(OPTIONS[cls], **{key: value}))
    groups = list(opt.param_groups)
    with pytest.raises((TypeError, ValueError), match=label):
        opt.add_param_group({"params": [oxmera.zeros(1, requires_grad=True)], key: value})
    assert opt.param_groups == groups
    # and the optimizer still steps, finite
    opt.step()
    assert all(np.isfinite(p.numpy(force=True)).all() for p in params)


def test_nesterov_needs_momentum_in_a_loaded_group_too():
    opt, _ = _trained(SGD)
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0].update(nesterov=True, dampening=0.5)
    _refused(opt, saved, "Nesterov momentum requires a momentum and zero dampening")


def test_a_scheduler_s_initial_lr_in_a_group_is_checked():
    opt, _ = _trained(Adam)
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0]["initial_lr"] = NAN
    _refused(opt, saved, "initial_lr")


def test_missing_hyper_parameters_take_the_defaults_and_valid_ones_load():
    opt, params = _trained(Adam)
    saved = copy.deepcopy(opt.state_dict())
    for key in ("eps", "amsgrad", "weight_decay"):
        del saved["param_groups"][0][key]
    saved["param_groups"][0].update(lr=np.float32(0.05), betas=[0.5, 0.75], foreach=None)
    opt.load_state_dict(saved)
    group = opt.param_groups[0]
    # (this optimizer's defaults: amsgrad=True was given to its constructor)
    assert group["eps"] == 1e-8 and group["amsgrad"] is True and group["foreach"] is None
    assert group["betas"] == [0.5, 0.75]


# -- per-parameter state: checked against the parameter ---------------------------------------

def _with(cls, index, key, value):
    opt, params = _trained(cls)
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0]["lr"] = 0.123           # would change if the load went through
    if value is _DELETE:
        del saved["state"][index][key]
    else:
        saved["state"][index][key] = value
    return opt, saved


_DELETE = object()

BAD_STATE = [
    (Adam, "step", "x", "must be a number or a 0-d tensor"),
    (Adam, "step", -1.0, "whole number >= 0"), (Adam, "step", 1.5, "whole number >= 0"),
    (Adam, "step", NAN, "whole number >= 0"), (Adam, "step", INF, "whole number >= 0"),
    (Adam, "step", 1e39, "float32"), (Adam, "step", True, "must be a number"),
    (Adam, "step", None, "must be a number"), (Adam, "step", [3], "must be a number"),
    (Adam, "step", oxmera.tensor([3.0, 4.0]), "0-d tensor"),
    (Adam, "step", np.array(3 + 1j), "0-d tensor"),
    (Adam, "exp_avg", oxmera.zeros(5), "has shape (5,)"),
    (Adam, "exp_avg", "zeros", "must be a tensor"),
    (Adam, "exp_avg", None, "must be a tensor"),
    (Adam, "exp_avg", 0.0, "must be a tensor"),
    (Adam, "exp_avg", np.full((3, 2), NAN), "NaN or infinite"),
    (Adam, "exp_avg", np.full((3, 2), 1e300), "beyond the range"),
    (Adam, "exp_avg", np.zeros((3, 2), np.complex128), "dtype complex128"),
    (Adam, "exp_avg", np.zeros((3, 2), bool), "dtype bool"),
    (Adam, "exp_avg", np.array([["a", "b"]] * 3), "dtype <U1"),
    (Adam, "exp_avg_sq", -np.ones((3, 2)), "negative"),
    (Adam, "max_exp_avg_sq", np.full((3, 2), -INF), "NaN or infinite"),
    (Adam, "exp_avg_sq", _DELETE, "lacks ['exp_avg_sq']"),
    (Adam, "momentum_buffer", np.zeros((3, 2)), "momentum_buffer"),
    (SGD, "momentum_buffer", np.zeros((2, 3)), "has shape (2, 3)"),
    (SGD, "momentum_buffer", np.full((3, 2), INF), "NaN or infinite"),
    (SGD, "exp_avg", np.zeros((3, 2)), "another optimizer's"),
    (RMSprop, "square_avg", -np.ones((3, 2)), "negative"),
    (RMSprop, "grad_avg", np.full((3, 2), NAN), "NaN"),
    (RMSprop, "momentum_buffer", None, "must be a tensor"),
    (RMSprop, "square_avg", _DELETE, "lacks"),
    (Adagrad, "sum", np.full((3, 2), NAN), "NaN"), (Adagrad, "sum", _DELETE, "lacks"),
    (Adagrad, "step", "1", "must be a number"),
]


@pytest.mark.parametrize("index", [0, 1], ids=["first-parameter", "last-parameter"])
@pytest.mark.parametrize("cls, key, value, words", BAD_STATE,
                         ids=[_case_id(c) for c in BAD_STATE])
def test_a_bad_state_entry_is_refused_and_nothing_changes(cls, key, value, words, index):
    if isinstance(value, np.ndarray) and value.shape == (3, 2) and index == 1:
        value = value[0]                        # the second parameter has shape (2,)
    opt, saved = _with(cls, index, key, value)
    _refused(opt, saved, f"parameter {index}", words)


def test_the_issue_s_state_cannot_make_step_update_some_parameters_then_raise():
    opt, params = _trained(Adam)
    saved = copy.deepcopy(opt.state_dict())
    del saved["state"][1]["exp_avg"]             # the last parameter's state is broken
    saved["state"][0]["step"] = oxmera.tensor(7.0)
    _refused(opt, saved, "parameter 1", "lacks ['exp_avg']")
    before = [p.numpy(force=True).copy() for p in params]
    opt.zero_grad()
    sum((p * p).sum() for p in params).backward()
    opt.step()                                    # every parameter moves
    assert all((p.numpy(force=True) != b).all() for p, b in zip(params, before))
    assert opt.state[params[0]]["step"].item() == 3.0


@pytest.mark.parametrize("mutate, words", [
    (lambda sd: sd["state"].update({5: {}}), "parameter(s) [5], which no parameter group"),
    (lambda sd: sd["state"].update({"0": {}}), "parameter(s) ['0']"),
    (lambda sd: sd["param_groups"][0].update(params=[0, 0]), "index 0 appears twice"),
    (lambda sd: sd["param_groups"][0].update(params=["a", "b"]), "indices (ints)"),
    (lambda sd: sd["param_groups"][0].update(params=[[0], 1]), "indices (ints)"),
    (lambda sd: sd["param_groups"][0].update(param_names=["a"]), "'param_names' must be"),
    (lambda sd: sd["state"].update({1: [1, 2]}), "state of parameter 1 must be a dict"),
])
def test_state_dicts_whose_keys_do_not_fit(mutate, words):
    opt, _ = _trained(Adam)
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0]["lr"] = 0.5
    mutate(saved)
    _refused(opt, saved, words)


def test_valid_states_of_every_form_load_under_warnings_as_errors():
    opt, params = _trained(Adam)
    saved = copy.deepcopy(opt.state_dict())
    saved["state"][0].update(step=np.int64(4), exp_avg=np.ones((3, 2)),       # float64
                             exp_avg_sq=np.ones((3, 2), np.int32))
    saved["state"][1].update(step=oxmera.tensor(4.0, dtype=oxmera.float64),
                             exp_avg=oxmera.zeros(2, dtype=oxmera.float16))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.load_state_dict(saved)
        opt.zero_grad()
        sum((p * p).sum() for p in params).backward()
        opt.step()
    for state in opt.state.values():
        assert state["step"].dtype == np.float32 and state["step"].shape == ()
        assert state["step"].item() == 5.0 and state["exp_avg"].dtype == np.float32
    sgd, _ = _trained(SGD)
    saved = copy.deepcopy(sgd.state_dict())
    saved["state"][0]["momentum_buffer"] = None      # what PyTorch stores without momentum
    sgd.load_state_dict(saved)
    assert sgd.state[sgd.param_groups[0]["params"][0]]["momentum_buffer"] is None
    sgd.step()


def test_a_custom_optimizer_keeps_the_generic_checks():
    class Custom(Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

    w = oxmera.zeros(2, requires_grad=True)
    opt = Custom([w])
    opt.load_state_dict({"state": {0: {"step": 3, "note": "anything", "buf": np.ones(2)}},
                         "param_groups": [{"params": [0], "lr": 0.2}]})
    assert opt.state[w]["note"] == "anything" and opt.state[w]["buf"].tolist() == [1.0, 1.0]
    _refused(opt, {"state": {0: {"buf": np.ones(3)}}, "param_groups": [{"params": [0]}]},
             "has shape (3,)")


# -- schedulers -----------------------------------------------------------------------------

def _optimizer():
    return SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)


SCHEDULERS = {
    "StepLR": lambda opt: StepLR(opt, step_size=2),
    "MultiStepLR": lambda opt: MultiStepLR(opt, milestones=[1, 3]),
    "ExponentialLR": lambda opt: ExponentialLR(opt, gamma=0.5),
    "CosineAnnealingLR": lambda opt: CosineAnnealingLR(opt, T_max=4),
    "LambdaLR": lambda opt: LambdaLR(opt, _Warmup()),
    "ReduceLROnPlateau": lambda opt: ReduceLROnPlateau(opt, patience=0),
}


class _Warmup:
    def __init__(self):
        self.warmup = 3

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.warmup)


BAD_SCHEDULER_STATES = [
    ("StepLR", "last_epoch", "x", "last_epoch"), ("StepLR", "last_epoch", -5, "last_epoch"),
    ("StepLR", "last_epoch", 1.5, "last_epoch"), ("StepLR", "_step_count", None, "_step_count"),
    ("StepLR", "step_size", 0, "step_size"), ("StepLR", "gamma", NAN, "gamma"),
    ("StepLR", "base_lrs", [1.0, 2.0], "base_lrs"), ("StepLR", "base_lrs", [NAN], "base_lrs"),
    ("StepLR", "_last_lr", "x", "_last_lr"),
    ("MultiStepLR", "milestones", {"a": 1}, "milestone"),
    ("MultiStepLR", "milestones", {2: -1}, "milestone count"),
    ("MultiStepLR", "milestones", [1, 2], "milestones must be a dict"),
    ("ExponentialLR", "gamma", "0.5", "gamma"), ("ExponentialLR", "gamma", INF, "gamma"),
    ("CosineAnnealingLR", "T_max", 0, "T_max"), ("CosineAnnealingLR", "eta_min", NAN,
                                                 "eta_min"),
    ("LambdaLR", "lr_lambdas", [1], "lr_lambdas"), ("LambdaLR", "lr_lambdas", [], "lr_lambdas"),
    ("ReduceLROnPlateau", "mode", "up", "mode 'up'"),
    ("ReduceLROnPlateau", "mode", ["min"], "mode ['min']"),
    ("ReduceLROnPlateau", "threshold_mode", "x", "threshold mode"),
    ("ReduceLROnPlateau", "factor", 2.0, "factor"), ("ReduceLROnPlateau", "factor", NAN, "factor"),
    ("ReduceLROnPlateau", "patience", -1, "patience"),
    ("ReduceLROnPlateau", "min_lrs", [0.0, 0.0], "min_lrs"),
    ("ReduceLROnPlateau", "best", NAN, "best"), ("ReduceLROnPlateau", "best", "x", "best"),
    ("ReduceLROnPlateau", "num_bad_epochs", -1, "num_bad_epochs"),
    ("ReduceLROnPlateau", "eps", -1.0, "eps"),
    ("ReduceLROnPlateau", "optimizer", None, "unexpected keys: ['optimizer']"),
    ("StepLR", "no_such_key", 1, "unexpected keys: ['no_such_key']"),
    ("StepLR", "last_epoch", _DELETE, "missing keys: ['last_epoch']"),
    ("LambdaLR", "lr_lambdas", _DELETE, "missing keys: ['lr_lambdas']"),
]


@pytest.mark.parametrize("name, key, value, words", BAD_SCHEDULER_STATES,
                         ids=[f"{c[0]}-{c[1]}={c[2]!r}"[:60] for c in BAD_SCHEDULER_STATES])
def test_a_bad_scheduler_state_is_refused_and_nothing_changes(name, key, value, words):
    opt = _optimizer()
    sched = SCHEDULERS[name](opt)
    for _ in range(2):
        opt.step()
        sched.step(1.0) if name == "ReduceLROnPlateau" else sched.step()
    saved = copy.deepcopy(sched.state_dict())
    saved["last_epoch"] = 77                      # would change if the load went through
    if value is _DELETE:
        del saved[key]
    else:
        saved[key] = value
    def attributes():
        return {k: v for k, v in sched.__dict__.items() if k not in ("optimizer", "lr_lambdas")}

    before = copy.deepcopy(attributes())
    lambdas = [copy.deepcopy(vars(fn)) for fn in getattr(sched, "lr_lambdas", [])]
    with pytest.raises(ValueError) as info:
        sched.load_state_dict(saved)
    assert str(info.value).startswith(f"{name}.load_state_dict(): "), info.value
    assert words in str(info.value), info.value
    assert attributes() == before
    assert sched.optimizer is opt
    assert [vars(fn) for fn in getattr(sched, "lr_lambdas", [])] == lambdas


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_a_scheduler_state_round_trips_and_pytorch_bookkeeping_is_ignored(name):
    opt = _optimizer()
    sched = SCHEDULERS[name](opt)
    for _ in range(3):
        sched.step(1.0) if name == "ReduceLROnPlateau" else sched.step()
    saved = copy.deepcopy(sched.state_dict())
    saved.update(verbose=False, _get_lr_called_within_step=False)
    other = SCHEDULERS[name](_optimizer())
    other.load_state_dict(saved)
    assert other.last_epoch == sched.last_epoch and other.get_last_lr() == sched.get_last_lr()
    assert not hasattr(other, "verbose")
