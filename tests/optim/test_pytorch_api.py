"""Every optimizer's PyTorch surface: signatures (flags included), the implementation
flags, hyper-parameter errors through the one shared validation (constructor,
add_param_group, load_state_dict), and PyTorch state dicts loaded and continued."""
import copy
import inspect

import numpy as np
import pytest

import oxmera
from oxmera import optim

NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
         "ASGD", "Rprop", "LBFGS"]
STEPPED = [n for n in NAMES if n != "LBFGS"]       # step() without a closure


def _param(values=(1.0, -2.0, 0.5)):
    return oxmera.tensor(list(values), dtype=oxmera.float64, requires_grad=True)


@pytest.mark.parametrize("name", NAMES)
def test_signature_is_pytorchs(name):
    torch = pytest.importorskip("torch")
    ours = inspect.signature(getattr(optim, name))
    theirs = inspect.signature(getattr(torch.optim, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == [
        (p.name, p.kind, p.default) for p in theirs.parameters.values()]


@pytest.mark.parametrize("name", STEPPED)
def test_flags_are_accepted_kept_and_change_nothing(name):
    cls = getattr(optim, name)
    flags = {k: v for k, v in dict(foreach=True, capturable=True, differentiable=True,
                                    maximize=True).items()
             if k in inspect.signature(cls).parameters}
    plain_w, flagged_w = _param(), _param()
    plain = cls([plain_w], lr=0.01, maximize=True)
    flagged = cls([flagged_w], lr=0.01, **flags)
    for w, opt in ((plain_w, plain), (flagged_w, flagged)):
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
    np.testing.assert_array_equal(plain_w.detach().numpy(), flagged_w.detach().numpy())
    assert all(flagged.param_groups[0][k] == v for k, v in flags.items())


@pytest.mark.parametrize("name", [n for n in STEPPED
                                  if "fused" in inspect.signature(getattr(optim, n)).parameters])
def test_fused_conflicts_are_pytorchs_errors(name):
    cls = getattr(optim, name)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
        cls([_param()], lr=0.1, fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        cls([_param()], lr=0.1, fused=True, differentiable=True)
    with pytest.raises(TypeError, match="invalid fused: 'yes'"):
        cls([_param()], lr=0.1, fused="yes")
    cls([_param()], lr=0.1, fused=True)          # alone: accepted


@pytest.mark.parametrize("name", [n for n in STEPPED if n != "LBFGS"])
def test_a_flag_of_the_wrong_type_is_a_type_error(name):
    cls = getattr(optim, name)
    with pytest.raises(TypeError, match="invalid foreach: 1"):
        cls([_param()], lr=0.1, foreach=1)
    with pytest.raises(TypeError, match="invalid maximize: 'no'"):
        cls([_param()], lr=0.1, maximize="no")


BAD = [
    ("Adadelta", dict(rho=1.5), "invalid rho value: 1.5 \\(must be in \\[0, 1.0\\]\\)"),
    ("Adadelta", dict(lr=-0.1), "invalid learning rate: -0.1"),
    ("Adadelta", dict(eps=-1), "invalid epsilon value: -1"),
    ("Adamax", dict(betas=(0.9, 1.0)), "invalid beta parameter at index 1: 1.0"),
    ("Adamax", dict(weight_decay=-1), "invalid weight_decay value: -1"),
    ("NAdam", dict(momentum_decay=-0.5), "invalid momentum_decay value: -0.5"),
    ("NAdam", dict(betas=(-0.1, 0.9)), "invalid beta parameter at index 0"),
    ("RAdam", dict(eps=float("nan")), "invalid epsilon value: nan"),
    ("RAdam", dict(betas=(0.9,)), "betas must be a pair"),
    ("ASGD", dict(lr=-1), "invalid learning rate: -1"),
    ("ASGD", dict(t0=float("inf")), "invalid t0 value: inf"),
    ("Rprop", dict(etas=(1.5, 1.2)), "invalid eta values: 1.5, 1.2"),
    ("Rprop", dict(etas=(0.5, 0.9)), "invalid eta values: 0.5, 0.9"),
    ("Rprop", dict(step_sizes=(1.0, 0.1)), "invalid step_sizes"),
]


@pytest.mark.parametrize("name, options, match", BAD, ids=[f"{n}-{o}" for n, o, _ in BAD])
def test_hyper_parameter_errors_everywhere_they_enter(name, options, match):
    cls = getattr(optim, name)
    with pytest.raises(ValueError, match=f"{name}: {match}"):
        cls([_param()], **options)
    opt = cls([_param()])
    with pytest.raises(ValueError, match=f"{name}.add_param_group\\(\\): {match}"):
        opt.add_param_group({"params": [_param()], **options})
    assert len(opt.param_groups) == 1
    saved = copy.deepcopy(opt.state_dict())
    saved["param_groups"][0].update(options)
    with pytest.raises(ValueError, match=f"{name}.load_state_dict\\(\\): param_groups\\[0\\]: "
                                         f"{match}"):
        opt.load_state_dict(saved)


def test_a_type_error_of_a_hyper_parameter():
    with pytest.raises(TypeError, match="Adadelta: invalid rho value: '0.9'"):
        optim.Adadelta([_param()], rho="0.9")


TORCH_STATE_CASES = [
    ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
    ("Adamax", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, decoupled_weight_decay=True, weight_decay=0.1)),
    ("RAdam", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, t0=2)),
    ("Rprop", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True, foreach=False)),
]


@pytest.mark.parametrize("name, options", TORCH_STATE_CASES,
                         ids=[n for n, _ in TORCH_STATE_CASES])
def test_a_pytorch_state_dict_loads_and_the_steps_continue_alike(name, options):
    torch = pytest.importorskip("torch")
    start = np.array([1.0, -2.0, 0.5])
    w_t = torch.tensor(start, requires_grad=True)
    opt_t = getattr(torch.optim, name)([w_t], **options)

    def train(opt, w, steps):
        for _ in range(steps):
            opt.zero_grad()
            ((w - 0.3) ** 4 + w * w).sum().backward()
            opt.step()

    train(opt_t, w_t, 7)
    w = _param(w_t.detach().numpy())
    opt = getattr(optim, name)([w])
    opt.load_state_dict(opt_t.state_dict())
    assert opt.param_groups[0]["lr"] == options["lr"]
    assert set(opt.state[w]) == set(opt_t.state[w_t])
    train(opt_t, w_t, 7)
    train(opt, w, 7)
    assert np.isfinite(w.detach().numpy()).all()
    assert not np.allclose(w.detach().numpy(), start)
    np.testing.assert_allclose(w.detach().numpy(), w_t.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", STEPPED)
def test_state_dict_round_trip(name):
    cls = getattr(optim, name)
    w1 = _param()
    opt1 = cls([w1], lr=0.05)
    for _ in range(3):
        opt1.zero_grad()
        (w1 ** 4).sum().backward()
        opt1.step()
    w2 = _param(w1.detach().numpy())
    opt2 = cls([w2], lr=0.5)
    opt2.load_state_dict(copy.deepcopy(opt1.state_dict()))
    assert opt2.param_groups[0]["lr"] == 0.05
    for w, opt in ((w1, opt1), (w2, opt2)):
        for _ in range(3):
            opt.zero_grad()
            (w ** 4).sum().backward()
            opt.step()
    np.testing.assert_array_equal(w1.detach().numpy(), w2.detach().numpy())


@pytest.mark.parametrize("name, key", [("NAdam", "mu_product"), ("ASGD", "eta"),
                                       ("ASGD", "mu")])
def test_scalar_state_is_checked_and_kept_in_float32(name, key):
    w = _param()
    opt = getattr(optim, name)([w], lr=0.1)
    w.sum().backward()
    opt.step()
    saved = copy.deepcopy(opt.state_dict())
    saved["state"][0][key] = 0.5
    opt.load_state_dict(saved)
    assert opt.state[w][key].dtype == np.float32 and opt.state[w][key].item() == 0.5
    saved["state"][0][key] = float("inf")
    with pytest.raises(ValueError, match=f"state '{key}' of parameter 0 is inf"):
        opt.load_state_dict(saved)
    saved["state"][0][key] = oxmera.zeros(3)
    with pytest.raises(ValueError, match="must be a number or a 0-d tensor"):
        opt.load_state_dict(saved)
