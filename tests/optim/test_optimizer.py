"""The Optimizer base: parameter groups, zero_grad, step semantics, state dicts.

Update rules are in test_rules.py (closed forms) and test_torch.py (PyTorch).
"""
import copy
import warnings

import numpy as np
import pytest

import oxmera
from oxmera.optim import (ASGD, SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, Optimizer,
                          RAdam, RMSprop, Rprop)
from oxmera.optim.optimizer import required

ALL = [SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop]
OPTIONS = {SGD: dict(lr=0.1, momentum=0.9, nesterov=True), Adam: dict(lr=0.1, amsgrad=True),
           AdamW: dict(lr=0.1), RMSprop: dict(lr=0.1, momentum=0.5, centered=True),
           Adagrad: dict(lr=0.1, lr_decay=0.1), Adadelta: dict(lr=10.0, rho=0.8),
           Adamax: dict(lr=0.1), NAdam: dict(lr=0.1, decoupled_weight_decay=True),
           RAdam: dict(lr=0.1), ASGD: dict(lr=0.1, t0=1), Rprop: dict(lr=0.1)}


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return [oxmera.tensor(rng.standard_normal(s), requires_grad=True) for s in [(3, 2), (2,)]]


def _loss(params):
    a, b = params
    return ((a.sum(0) * b).sum() ** 2 + (a ** 2).sum()) / 3


def _train(opt, params, steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = _loss(params)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


# -- construction ---------------------------------------------------------------------------

def test_a_single_tensor_is_refused():
    with pytest.raises(TypeError, match="iterable of Tensors.*shape \\(2,\\)"):
        SGD(oxmera.zeros(2, requires_grad=True), lr=0.1)


def test_an_empty_parameter_list_is_refused():
    with pytest.raises(ValueError, match="SGD: optimizer got an empty parameter list"):
        SGD([], lr=0.1)


def test_a_non_leaf_is_refused():
    w = oxmera.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="non-leaf.*MulBackward"):
        Adam([w * 2])


def test_a_set_and_a_non_tensor_are_refused():
    w = oxmera.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="ordered collections"):
        SGD({w}, lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors.*ndarray"):
        SGD([np.zeros(2)], lr=0.1)


def test_a_parameter_in_two_groups_is_refused_and_duplicates_warn():
    w = oxmera.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="more than one parameter group"):
        SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        SGD([w, w], lr=0.1)


def test_required_hyper_parameters():
    class Plain(Optimizer):
        def __init__(self, params, lr=required):
            super().__init__(params, {"lr": lr})

    w = oxmera.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="didn't specify a value of required.*lr"):
        Plain([w])
    assert Plain([{"params": [w], "lr": 0.5}]).param_groups[0]["lr"] == 0.5
    assert repr(required) == "<required parameter>"


@pytest.mark.parametrize("make, match", [
    (lambda p: SGD(p, lr=-1), "SGD: invalid learning rate: -1"),
    (lambda p: SGD(p, momentum=-0.1), "momentum"),
    (lambda p: SGD(p, weight_decay=-1), "weight_decay"),
    (lambda p: SGD(p, nesterov=True), "Nesterov momentum requires a momentum"),
    (lambda p: SGD(p, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
    (lambda p: Adam(p, lr=-1), "Adam: invalid learning rate"),
    (lambda p: Adam(p, betas=(1.0, 0.9)), "beta parameter at index 0"),
    (lambda p: AdamW(p, betas=(0.9, -0.1)), "AdamW: invalid beta parameter at index 1"),
    (lambda p: Adam(p, betas=(0.9,)), "pair"),
    (lambda p: Adam(p, eps=-1), "epsilon"),
    (lambda p: AdamW(p, weight_decay=-1), "weight_decay"),
    (lambda p: RMSprop(p, alpha=-1), "alpha"),
    (lambda p: RMSprop(p, momentum=-1), "momentum"),
    (lambda p: RMSprop(p, eps=-1), "epsilon"),
    (lambda p: Adagrad(p, lr_decay=-1), "lr_decay"),
    (lambda p: Adagrad(p, initial_accumulator_value=-1), "initial_accumulator_value"),
])
def test_invalid_hyper_parameters(make, match):
    with pytest.raises(ValueError, match=match):
        make(_params())


def test_param_groups_take_defaults_and_their_own_values():
    a, b = _params()
    opt = SGD([{"params": [a]}, {"params": b, "lr": 0.01, "momentum": 0.5}], lr=0.1)
    g0, g1 = opt.param_groups
    assert g0["params"][0] is a and g1["params"][0] is b
    assert (g0["lr"], g0["momentum"]) == (0.1, 0)
    assert (g1["lr"], g1["momentum"]) == (0.01, 0.5)
    assert opt.defaults["lr"] == 0.1
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.01" in text


def test_named_parameters_are_accepted():
    a, b = _params()
    opt = Adam([("a", a), ("b", b)])
    assert opt.param_groups[0]["param_names"] == ["a", "b"]
    assert opt.param_groups[0]["params"][1] is b
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [oxmera.zeros(1, requires_grad=True)]})


def test_add_param_group_trains_the_new_group():
    a, b = _params()
    opt = SGD([a], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 1.0})
    b_before = b.detach().numpy().copy()
    b.grad = oxmera.ones_like(b)
    opt.step()
    np.testing.assert_allclose(b.detach().numpy(), b_before - 1.0)
    with pytest.raises(TypeError, match="must be a dict"):
        opt.add_param_group([b])
    with pytest.raises(ValueError, match="no 'params' entry"):
        opt.add_param_group({"lr": 0.1})


# -- zero_grad and step ---------------------------------------------------------------------

def test_zero_grad_sets_to_none_or_zeros():
    params = _params()
    opt = SGD(params, lr=0.1)
    _loss(params).backward()
    grad = params[0].grad
    opt.zero_grad(set_to_none=False)
    assert params[0].grad is grad and not grad.numpy().any()
    opt.zero_grad()
    assert all(p.grad is None for p in params)
    opt.zero_grad()          # no gradients at all: nothing to do


def test_zero_grad_detaches_a_gradient_with_history():
    w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    (w ** 3).sum().backward(create_graph=True)
    assert w.grad.grad_fn is not None
    SGD([w], lr=0.1).zero_grad(set_to_none=False)
    assert w.grad.grad_fn is None and not w.grad.requires_grad
    assert w.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("optimizer_class", ALL)
def test_step_records_nothing_and_bumps_versions(optimizer_class):
    params = _params()
    opt = optimizer_class(params, **OPTIONS[optimizer_class])
    _loss(params).backward()
    versions = [p._version for p in params]
    opt.step()               # grad mode on: no complaint about in-place writes to leaves
    for p, version in zip(params, versions):
        assert p.is_leaf and p.grad_fn is None and p.requires_grad
        assert p._version == version + 1


@pytest.mark.parametrize("optimizer_class", ALL)
def test_a_graph_saved_before_the_step_refuses_backward(optimizer_class):
    params = _params()
    opt = optimizer_class(params, **OPTIONS[optimizer_class])
    _loss(params).backward()
    stale = (params[0] * params[0]).sum()    # saves params[0]
    opt.step()
    with pytest.raises(RuntimeError, match="version"):
        stale.backward()


@pytest.mark.parametrize("optimizer_class", ALL)
def test_parameters_without_gradient_are_skipped(optimizer_class):
    a, b = _params()
    opt = optimizer_class([a, b], **OPTIONS[optimizer_class])
    before = b.detach().numpy().copy()
    a.grad = oxmera.ones_like(a)
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), before)
    assert b._version == 0
    if optimizer_class is not Adagrad:        # Adagrad creates its state up front
        assert b not in opt.state


@pytest.mark.parametrize("optimizer_class", ALL)
def test_the_gradient_is_not_modified(optimizer_class):
    params = _params()
    decay = {} if optimizer_class is Rprop else {"weight_decay": 0.1}   # Rprop has none
    opt = optimizer_class(params, maximize=True, **decay, **OPTIONS[optimizer_class])
    _loss(params).backward()
    grads = [p.grad.numpy().copy() for p in params]
    opt.step()
    opt.step()
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.numpy(), g)


def test_the_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    params = _params()
    opt = Adam(params, lr=0.1)
    calls = []

    def closure():
        opt.zero_grad()
        calls.append(oxmera.is_grad_enabled())
        loss = _loss(params)
        loss.backward()
        return loss

    with oxmera.no_grad():
        loss = opt.step(closure)
    assert calls == [True]
    assert isinstance(loss, oxmera.Tensor) and loss.item() > 0
    assert opt.step() is None


def test_changing_lr_in_a_group_takes_effect():
    w = oxmera.tensor([1.0], requires_grad=True)
    opt = SGD([w], lr=0.1)
    opt.param_groups[0]["lr"] = 0.5
    w.grad = oxmera.tensor([1.0])
    opt.step()
    assert w.item() == 0.5


def test_base_step_is_abstract():
    class Nothing(Optimizer):
        pass

    with pytest.raises(NotImplementedError, match="Nothing does not implement step"):
        Nothing(_params(), {}).step()


def test_training_reduces_the_loss():
    for optimizer_class in ALL:
        params = _params()
        losses = _train(optimizer_class(params, **OPTIONS[optimizer_class]), params, 30)
        assert losses[-1] < 0.5 * losses[0], optimizer_class.__name__


# -- state dicts ----------------------------------------------------------------------------

def test_state_dict_has_pytorchs_layout():
    a, b = _params()
    c = oxmera.zeros(4, requires_grad=True)
    opt = Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
    _loss([a, b]).backward()
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.1, 0.5]
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert set(sd["state"]) == {0, 1}           # c had no gradient
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    assert sd["state"][0]["step"].item() == 1.0 and sd["state"][0]["step"].dtype == np.float32
    assert sd["state"][1]["exp_avg"] is opt.state[b]["exp_avg"]     # live, as in PyTorch
    assert all("params" in g and isinstance(g["params"], list) for g in sd["param_groups"])


@pytest.mark.parametrize("optimizer_class", ALL)
def test_state_dict_round_trip_gives_the_same_next_steps(optimizer_class):
    params = _params()
    opt = optimizer_class(params, **OPTIONS[optimizer_class])
    _train(opt, params, 3)
    saved_params = [p.detach().numpy().copy() for p in params]
    saved = copy.deepcopy(opt.state_dict())
    expected = _train(opt, params, 3)
    expected_params = [p.detach().numpy().copy() for p in params]

    fresh = [oxmera.tensor(v, requires_grad=True) for v in saved_params]
    opt2 = optimizer_class(fresh, lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == OPTIONS[optimizer_class]["lr"]
    assert _train(opt2, fresh, 3) == expected
    for p, e in zip(fresh, expected_params):
        np.testing.assert_array_equal(p.detach().numpy(), e)


def test_load_state_dict_copies_the_state():
    params = _params()
    opt = SGD(params, lr=0.1, momentum=0.9)
    _train(opt, params, 1)
    sd = opt.state_dict()
    opt2 = SGD(params, lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    buf = opt2.state[params[0]]["momentum_buffer"]
    assert buf is not sd["state"][0]["momentum_buffer"]
    np.testing.assert_array_equal(buf.numpy(), sd["state"][0]["momentum_buffer"].numpy())


def test_load_state_dict_casts_state_to_the_parameter_dtype():
    w64 = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    opt = Adam([w64])
    w64.grad = oxmera.ones_like(w64)
    opt.step()
    w32 = oxmera.tensor([1.0, 2.0], requires_grad=True)
    opt32 = Adam([w32])
    opt32.load_state_dict(opt.state_dict())
    assert opt32.state[w32]["exp_avg"].dtype == np.float32
    assert opt32.state[w32]["step"].dtype == np.float32


def _snapshot(opt):
    return repr(opt), {id(p): {k: v.numpy().copy() for k, v in s.items()}
                       for p, s in opt.state.items()}


@pytest.mark.parametrize("mutate, match", [
    (lambda sd: sd["param_groups"].append({"params": []}), "number of parameter groups"),
    (lambda sd: sd["param_groups"][0]["params"].pop(), "doesn't match the size"),
    (lambda sd: sd["state"][0].update(exp_avg=oxmera.zeros(5)),
     "state 'exp_avg' of parameter 0 has shape \\(5,\\).*\\(3, 2\\)"),
    (lambda sd: sd.pop("state"), "expected a dict with 'state' and 'param_groups'"),
    (lambda sd: sd.update(state=[1]), "'state' must be a dict"),
    (lambda sd: sd.update(param_groups=[{"lr": 1}]), "'params' list"),
    (lambda sd: sd["state"].update({1: 5}), "state of parameter 1 must be a dict"),
])
def test_a_state_dict_that_does_not_fit_changes_nothing(mutate, match):
    params = _params()
    opt = Adam(params, lr=0.1)
    _train(opt, params, 2)
    sd = copy.deepcopy(opt.state_dict())
    sd["param_groups"][0]["lr"] = 7.0
    mutate(sd)
    before = _snapshot(opt)
    with pytest.raises(ValueError, match=match):
        opt.load_state_dict(sd)
    after = _snapshot(opt)
    assert before[0] == after[0]
    for key in before[1]:
        for name in before[1][key]:
            np.testing.assert_array_equal(before[1][key][name], after[1][key][name])


def test_load_state_dict_accepts_numbers_and_arrays():
    w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    opt = Adam([w], lr=0.1)
    opt.load_state_dict({"state": {0: {"step": 3, "exp_avg": np.ones(2),
                                       "exp_avg_sq": np.ones(2)}},
                         "param_groups": [{"params": [0], "lr": 0.2, "betas": [0.9, 0.99]}]})
    state = opt.state[w]
    assert state["step"].item() == 3.0 and state["step"].dtype == np.float32
    assert state["exp_avg"].dtype == np.float32
    group = opt.param_groups[0]
    assert group["lr"] == 0.2 and group["eps"] == 1e-8      # missing keys take the defaults
    w.grad = oxmera.ones_like(w)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
    assert state["step"].item() == 4.0


def test_adagrad_state_exists_before_the_first_step():
    w = oxmera.zeros(3, requires_grad=True)
    sd = Adagrad([w], initial_accumulator_value=0.25).state_dict()
    assert sd["state"][0]["step"].item() == 0.0
    assert sd["state"][0]["sum"].tolist() == [0.25] * 3


@pytest.mark.parametrize("optimizer_class", ALL)
def test_a_gradient_of_the_wrong_shape_updates_nothing(optimizer_class):
    a, b = _params()
    opt = optimizer_class([a, b], **OPTIONS[optimizer_class])
    a.grad = oxmera.ones_like(a)
    b.grad = oxmera.ones_like(b)
    b.data = np.zeros(3)        # swapping the array leaves the old-shaped gradient
    before = [a.detach().numpy().copy(), b.detach().numpy().copy()]
    with pytest.raises(RuntimeError, match="parameter 1 of group 0 has shape \\(3,\\) but its "
                                           "gradient has shape \\(2,\\)"):
        opt.step()
    np.testing.assert_array_equal(a.detach().numpy(), before[0])
    np.testing.assert_array_equal(b.detach().numpy(), before[1])
    assert a._version == 0
