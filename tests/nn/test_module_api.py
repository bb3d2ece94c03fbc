"""Module API beyond the basics: backward hooks, state-dict hooks, extra state,
set_submodule, to_empty, share_memory; compared with torch where installed."""
from collections import OrderedDict

import numpy as np
import pytest

import oxmera
from oxmera import nn


def _hooked_run(lib, nn_mod, inputs_require_grad=True):
    layer = nn_mod.Linear(3, 2).double()
    with (oxmera.no_grad() if lib is oxmera else lib.no_grad()):
        layer.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3)))
        layer.bias.copy_(lib.tensor([1.0, 2.0]))
    seen = []

    def listed(grads):
        return [None if g is None else g.tolist() for g in grads]

    def pre(module, grad_output):
        seen.append(("pre", listed(grad_output)))
        return (grad_output[0] * 3,)

    def full(module, grad_input, grad_output):
        seen.append(("full", listed(grad_input), listed(grad_output)))
        if grad_input[0] is not None:
            return (grad_input[0] * 2,)
        return None

    layer.register_full_backward_pre_hook(pre)
    layer.register_full_backward_hook(full)
    x = lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float64,
                   requires_grad=inputs_require_grad)
    (layer(x) * lib.tensor([1.0, 3.0], dtype=lib.float64)).sum().backward()
    seen.append(None if x.grad is None else x.grad.tolist())
    seen.append(layer.weight.grad.tolist())
    return seen


@pytest.mark.parametrize("inputs_require_grad", [True, False])
def test_full_backward_hooks_as_torch(inputs_require_grad):
    torch = pytest.importorskip("torch")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _hooked_run(torch, torch.nn, inputs_require_grad)
    assert _hooked_run(oxmera, nn, inputs_require_grad) == expected


def test_full_backward_hook_closed_form_and_removal():
    layer = nn.Linear(2, 2, bias=False, dtype=oxmera.float64)
    with oxmera.no_grad():
        layer.weight.copy_(oxmera.tensor([[1.0, 2.0], [3.0, 4.0]]))
    seen = []
    handle = layer.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    x = oxmera.ones(1, 2, dtype=oxmera.float64, requires_grad=True)
    layer(x).sum().backward()
    (grad_input,), (grad_output,) = seen[0]
    assert grad_output.tolist() == [[1.0, 1.0]]
    assert grad_input.tolist() == [[4.0, 6.0]]          # ones @ W
    handle.remove()
    layer(x).sum().backward()
    assert len(seen) == 1


def test_backward_hook_non_tensor_argument_and_tuple_output():
    class Pair(nn.Module):
        def forward(self, x, scale):
            return x * scale, x.sum()

    module = Pair()
    seen = []
    module.register_full_backward_hook(lambda m, gi, go: seen.append((len(gi), gi[1], len(go))))
    x = oxmera.ones(3, requires_grad=True)
    a, b = module(x, 2.0)
    (a.sum() + b).backward()
    assert seen == [(2, None, 2)]
    assert x.grad.tolist() == [3.0, 3.0, 3.0]


def test_backward_hook_wrong_count_raises():
    layer = nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    x = oxmera.ones(1, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid number of grad_input"):
        layer(x).sum().backward()


def test_state_dict_hooks_order_and_metadata():
    model = nn.Sequential(nn.Linear(1, 1), nn.ReLU())
    events = []
    model.register_state_dict_pre_hook(lambda m, p, k: events.append(("pre", p)))
    model[0].register_state_dict_pre_hook(lambda m, p, k: events.append(("pre", p)))
    model[0].register_state_dict_post_hook(lambda m, sd, p, md: events.append(("post", p, md)))
    model.register_state_dict_post_hook(lambda m, sd, p, md: events.append(("post", p, md)))
    state = model.state_dict()
    assert events == [("pre", ""), ("pre", "0."), ("post", "0.", {"version": 1}),
                      ("post", "", {"version": 1})]
    assert list(state._metadata) == ["", "0", "1"]


def test_state_dict_post_hook_public_must_return_none_private_may_replace():
    layer = nn.Linear(1, 1)
    handle = layer.register_state_dict_post_hook(lambda m, sd, p, md: {})
    with pytest.raises(RuntimeError, match="must return None"):
        layer.state_dict()
    handle.remove()
    layer._register_state_dict_hook(lambda m, sd, p, md: OrderedDict(only=1))
    assert layer.state_dict() == {"only": 1}


def test_load_state_dict_pre_and_post_hooks_as_torch():
    torch = pytest.importorskip("torch")
    for lib, nn_mod in ((torch, torch.nn), (oxmera, nn)):
        layer = nn_mod.Linear(2, 1)
        calls = []

        def pre(module, state_dict, prefix, local_metadata, strict, missing, unexpected,
                errors):
            calls.append(("pre", prefix, strict, sorted(state_dict)))
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

        def post(module, keys):
            calls.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
            keys.missing_keys.clear()

        layer.register_load_state_dict_pre_hook(pre)
        layer.register_load_state_dict_post_hook(post)
        given = {"w": lib.ones(1, 2), "extra": lib.zeros(1)}
        result = layer.load_state_dict(given, strict=False)
        assert sorted(given) == ["extra", "w"]          # the caller's dict is not edited
        assert layer.weight.tolist() == [[1.0, 1.0]]
        if lib is torch:
            expected = (calls, list(result.missing_keys), list(result.unexpected_keys))
        else:
            got = (calls, list(result.missing_keys), list(result.unexpected_keys))
    assert got == expected


def test_load_state_dict_pre_hook_error_message_fails_and_changes_nothing():
    layer = nn.Linear(1, 1)
    before = layer.weight.tolist()
    layer.register_load_state_dict_pre_hook(
        lambda m, sd, p, md, strict, miss, unexp, errors: errors.append("refused by hook"))
    with pytest.raises(RuntimeError, match="refused by hook"):
        layer.load_state_dict({"weight": oxmera.zeros(1, 1), "bias": oxmera.zeros(1)})
    assert layer.weight.tolist() == before


def test_strict_load_still_raises_after_post_hooks():
    layer = nn.Linear(1, 1)
    layer.register_load_state_dict_post_hook(lambda m, keys: None)
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        layer.load_state_dict({"weight": oxmera.zeros(1, 1)})


def test_private_load_pre_hook_without_module():
    layer = nn.Linear(1, 1)
    seen = []
    layer._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: seen.append(prefix))
    nn.Sequential(layer).load_state_dict(nn.Sequential(nn.Linear(1, 1)).state_dict())
    assert seen == ["0."]


class _Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.lin = nn.Linear(1, 1)

    def get_extra_state(self):
        return {"calls": self.calls}

    def set_extra_state(self, state):
        self.calls = state["calls"]


def test_extra_state_round_trip_and_missing():
    a, b = _Counter(), _Counter()
    a.calls = 7
    state = nn.Sequential(a).state_dict()
    assert list(state) == ["0._extra_state", "0.lin.weight", "0.lin.bias"]  # torch's order
    nn.Sequential(b).load_state_dict(state)
    assert b.calls == 7
    del state["0._extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0._extra_state"'):
        nn.Sequential(b).load_state_dict(state)
    assert nn.Sequential(b).load_state_dict(state, strict=False).missing_keys == [
        "0._extra_state"]


def test_extra_state_key_matches_torch():
    torch = pytest.importorskip("torch")

    class TorchCounter(torch.nn.Module):
        def get_extra_state(self):
            return 3

        def set_extra_state(self, state):
            pass

    class OxCounter(nn.Module):
        def get_extra_state(self):
            return 3

        def set_extra_state(self, state):
            pass

    assert list(torch.nn.Sequential(TorchCounter()).state_dict()) == list(
        nn.Sequential(OxCounter()).state_dict())


def test_set_submodule_as_torch():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()))
    model.set_submodule("1.0", nn.Tanh())
    assert isinstance(model[1][0], nn.Tanh)
    with pytest.raises(ValueError, match="without a target name"):
        model.set_submodule("", nn.Tanh())
    with pytest.raises(ValueError, match="is not an nn.Module"):
        model.set_submodule("0", 3)
    with pytest.raises(AttributeError, match="has no attribute `extra`"):
        model.set_submodule("1.extra", nn.Tanh(), strict=True)
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        model.set_submodule("0.weight", nn.Tanh())
    model.set_submodule("1.extra", nn.Tanh())
    assert isinstance(model[1].extra, nn.Tanh)


def test_to_empty_and_share_memory():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    weight = model[0].weight
    assert model.to_empty(device="cpu") is model
    assert model[0].weight is weight and tuple(weight.shape) == (3, 2)
    inner = model[1].running_mean
    model.to_empty(recurse=False)
    assert model[1].running_mean is inner
    with pytest.raises(RuntimeError, match="to_empty"):
        model.to_empty(device="cuda")
    assert model.share_memory() is model


def test_new_module_api_names_exist_in_torch():
    torch = pytest.importorskip("torch")
    for name in ("register_full_backward_hook", "register_full_backward_pre_hook",
                 "register_state_dict_pre_hook", "register_state_dict_post_hook",
                 "_register_state_dict_hook", "register_load_state_dict_pre_hook",
                 "_register_load_state_dict_pre_hook", "register_load_state_dict_post_hook",
                 "get_extra_state", "set_extra_state", "set_submodule", "share_memory",
                 "to_empty"):
        assert hasattr(torch.nn.Module, name) and hasattr(nn.Module, name)


def _sequential_story(n):
    s = n.Sequential(n.Linear(1, 1), n.ReLU(), n.Tanh(), n.Sigmoid())
    out = [repr(s[1:3]), repr(s[::-1]), type(s[1:]).__name__]
    s.append(n.ReLU())
    s.insert(0, n.Identity())
    s.insert(-1, n.ELU())
    s.extend([n.Tanh()])
    out += [repr(s.pop(2)), repr(s), len(s)]
    del s[1:3]
    out += [repr(s), repr(s + n.Sequential(n.ReLU())), repr(s * 2),
            repr(2 * n.Sequential(n.ReLU()))]
    t = n.Sequential(n.ReLU(), n.Tanh())
    t *= 3
    out.append(repr(t))
    shared = n.Linear(1, 1)
    m = n.Sequential(shared, shared)
    out += [[k for k, _ in m.named_modules()],
            [k for k, _ in m.named_modules(remove_duplicate=False)],
            [k for k, _ in m.named_modules(prefix="p")], [k for k, _ in m.named_children()],
            len(list(m.modules())), len(list(m.children())),
            (m * 2)[0] is (m * 2)[3]]
    for bad in (0, 1.5):
        try:
            m * bad
        except (TypeError, ValueError) as err:
            out.append(type(err).__name__)
    return out


def test_sequential_and_iteration_as_torch():
    torch = pytest.importorskip("torch")
    assert _sequential_story(nn) == _sequential_story(torch.nn)


def _module_api_story(lib, n):
    model = n.Sequential(n.Linear(2, 2), n.BatchNorm1d(2))
    model[0].register_buffer("scratch", lib.zeros(2), persistent=False)
    out = [list(model.state_dict()), [k for k, _ in model.named_buffers()]]
    model.requires_grad_(False)
    out.append([p.requires_grad for p in model.parameters()])
    model.requires_grad_()
    model(lib.ones(3, 2)).sum().backward()
    model.zero_grad(set_to_none=False)
    out.append([float(p.grad.abs().sum()) for p in model.parameters()])
    model.zero_grad()
    out.append([p.grad is None for p in model.parameters()])
    out.append(tuple(model.get_parameter("0.weight").shape))
    out.append(tuple(model.get_buffer("1.running_mean").shape))
    for target in ("0.nothing", "2"):
        try:
            model.get_parameter(target)
        except AttributeError as err:
            out.append(type(err).__name__)
    events = []
    model.register_forward_pre_hook(lambda m, a, k: events.append(("pre-kw", sorted(k))),
                                    with_kwargs=True)
    model.register_forward_pre_hook(lambda m, a: events.append("pre-first"), prepend=True)
    model.register_forward_hook(lambda m, a, k, o: events.append("post-kw"), with_kwargs=True)
    model.register_forward_hook(lambda m, a, o: events.append("always"), always_call=True)
    model(lib.ones(3, 2))
    out.append(events)
    return out


def test_module_api_as_torch():
    torch = pytest.importorskip("torch")
    assert _module_api_story(oxmera, nn) == _module_api_story(torch, torch.nn)


def _legacy_hook_story(lib, n):
    layer = n.Tanh()
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append(([g.tolist() for g in grad_input], [g.tolist() for g in grad_output]))
        return (grad_input[0] * 2,)

    handle = layer.register_backward_hook(hook)
    x = lib.tensor([0.5, 1.0], dtype=lib.float64, requires_grad=True)
    layer(x).sum().backward()
    seen.append(x.grad.tolist())
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
        layer.register_full_backward_hook(lambda *a: None)
    handle.remove()
    other = n.Tanh()
    other.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
        other.register_backward_hook(hook)
    return seen


def test_legacy_backward_hook_as_torch():
    torch = pytest.importorskip("torch")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _legacy_hook_story(torch, torch.nn)
    assert _legacy_hook_story(oxmera, nn) == expected
