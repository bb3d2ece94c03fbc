"""``oxmera.nn.Parameter`` and ``oxmera.nn.Module``: registration, iteration, modes,
state dicts (and load_state_dict's all-or-nothing errors), dtype conversion, hooks,
the repr, copying and pickling. The reprs and state-dict keys are compared with
PyTorch's where it is installed.
"""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import oxmera
from oxmera import nn

try:
    import torch
except ImportError:        # the suite runs without torch; those comparisons skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _np(t):
    return t.detach().numpy()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(8, 3)
        self.register_buffer("scale", oxmera.ones(1))
        self.register_buffer("scratch", oxmera.zeros(2), persistent=False)

    def forward(self, x):
        x = self.bn(self.conv(x)).relu().flatten(1)
        return self.fc(x) * self.scale


# -- Parameter -------------------------------------------------------------------------------

def test_parameter_basics():
    p = nn.Parameter(oxmera.ones(2, 3))
    assert isinstance(p, oxmera.Tensor) and type(p) is nn.Parameter
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.dtype == np.float32 and p.shape == (2, 3)
    assert repr(p) == ("Parameter containing:\n"
                       "tensor([[1., 1., 1.],\n        [1., 1., 1.]], dtype=float32, "
                       "requires_grad=True)")
    assert not nn.Parameter(oxmera.ones(1), requires_grad=False).requires_grad
    empty = nn.Parameter()
    assert empty.shape == (0,) and empty.dtype == np.float32 and empty.requires_grad
    assert nn.Parameter([1.0, 2.0]).dtype == np.float32
    assert nn.Parameter(np.zeros(2)).dtype == np.float64


def test_parameter_shares_memory_with_its_data_like_torch():
    t = oxmera.zeros(3)
    p = nn.Parameter(t)
    t.fill_(5.0)
    assert p.tolist() == [5.0, 5.0, 5.0]
    a = np.zeros(2, np.float32)
    q = nn.Parameter(a)
    a[0] = 1
    assert q.tolist() == [1.0, 0.0]


def test_parameter_from_a_non_leaf_is_a_leaf():
    x = oxmera.ones(2, requires_grad=True)
    p = nn.Parameter(x * 2)
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_parameter_of_integers_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(oxmera.tensor([1, 2]))
    assert nn.Parameter(oxmera.tensor([1, 2]), requires_grad=False).dtype == np.int64


def test_ops_on_parameters_return_plain_tensors_and_gradients_arrive():
    p = nn.Parameter(oxmera.tensor([1.0, 2.0]))
    y = (p * p).sum()
    assert type(y) is oxmera.Tensor and type(p.detach()) is oxmera.Tensor
    y.backward()
    assert type(p.grad) is oxmera.Tensor and p.grad.tolist() == [2.0, 4.0]


def test_parameter_pickle_and_deepcopy_keep_the_subclass():
    p = nn.Parameter(oxmera.tensor([1.0, 2.0]))
    for clone in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert type(clone) is nn.Parameter and clone.requires_grad
        assert clone.tolist() == [1.0, 2.0]
        assert not np.shares_memory(clone.detach().numpy(), p.detach().numpy())


# -- registration ------------------------------------------------------------------------------

def test_assignment_registers_parameters_buffers_and_modules():
    net = Net()
    assert list(net._parameters) == [] and list(net._modules) == ["conv", "bn", "fc"]
    assert list(net._buffers) == ["scale", "scratch"]
    assert net.fc.weight is net.fc._parameters["weight"]
    net.extra = nn.Parameter(oxmera.zeros(1))
    assert "extra" in net._parameters
    net.plain = oxmera.zeros(1)                     # a plain tensor is a plain attribute
    assert "plain" in net.__dict__ and "plain" not in net._buffers
    net.scale = oxmera.full((1,), 2.0)              # assigning to a buffer name keeps it a buffer
    assert net._buffers["scale"].tolist() == [2.0]
    net.fc = None
    assert net._modules["fc"] is None and net.fc is None
    assert [name for name, _ in net.named_children()] == ["conv", "bn"]


def test_reassigning_a_name_moves_it_between_tables():
    m = nn.Module()
    m.x = nn.Linear(1, 1)
    m.x = nn.Parameter(oxmera.zeros(1))
    assert "x" in m._parameters and "x" not in m._modules
    del m.x
    m.register_buffer("x", oxmera.zeros(1))
    m.x = nn.ReLU()
    assert "x" in m._modules and "x" not in m._buffers
    del m.x
    assert not hasattr(m, "x")


def test_registration_errors():
    m = nn.Module()
    m.w = nn.Parameter(oxmera.zeros(1))
    with pytest.raises(TypeError, match="cannot assign 'oxmera._core.autograd.Tensor' as "
                                        "parameter 'w'"):
        m.w = oxmera.zeros(1)
    m.sub = nn.ReLU()
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    m.register_buffer("b", oxmera.zeros(1))
    with pytest.raises(TypeError, match="as buffer 'b'"):
        m.b = [1.0]
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", oxmera.zeros(1))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(KeyError, match="attribute 'training' already exists"):
        m.register_buffer("training", oxmera.zeros(1))
    with pytest.raises(TypeError, match="buffer name should be a string"):
        m.register_buffer(1, oxmera.zeros(1))
    with pytest.raises(TypeError, match="object to parameter 'p'"):
        m.register_parameter("p", oxmera.zeros(1))
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    # A Parameter with history: an in-place op recorded on one that does not require grad.
    q = nn.Parameter(oxmera.ones(1), requires_grad=False)
    q.copy_(oxmera.ones(1, requires_grad=True) * 2)
    assert q.grad_fn is not None
    with pytest.raises(ValueError, match="non-leaf"):
        m.register_parameter("q", q)
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        m.nothing


def test_assigning_before_init_is_an_attribute_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(oxmera.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Bad()

    class BadModule(nn.Module):
        def __init__(self):
            self.sub = nn.ReLU()

    with pytest.raises(AttributeError, match="before Module.__init__"):
        BadModule()


def test_module_init_takes_no_arguments_and_forward_is_required():
    with pytest.raises(TypeError, match="unexpected arguments"):
        nn.Module(3)
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(oxmera.zeros(1))


def test_dir_lists_members():
    net = Net()
    names = dir(net)
    for name in ("conv", "bn", "fc", "scale", "forward", "training"):
        assert name in names


def test_get_submodule_parameter_buffer():
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.BatchNorm1d(2)))
    assert model.get_submodule("") is model
    assert model.get_submodule("1.0") is model[1][0]
    assert model.get_parameter("0.weight") is model[0].weight
    assert model.get_buffer("1.0.running_mean") is model[1][0].running_mean
    with pytest.raises(AttributeError):
        model.get_submodule("2")
    with pytest.raises(AttributeError):
        model.get_parameter("0.nothing")
    with pytest.raises(AttributeError):
        model.get_buffer("0.weight")


# -- iteration --------------------------------------------------------------------------------

def test_named_parameters_buffers_modules():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "conv.weight", "conv.bias", "bn.weight", "bn.bias", "fc.weight", "fc.bias"]
    assert [n for n, _ in net.named_buffers()] == [
        "scale", "scratch", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_modules()] == ["", "conv", "bn", "fc"]
    assert [n for n, _ in net.named_parameters(prefix="net")][0] == "net.conv.weight"
    assert list(net.named_parameters(recurse=False)) == []
    assert [n for n, _ in net.named_buffers(recurse=False)] == ["scale", "scratch"]
    assert len(list(net.parameters())) == 6 and len(list(net.buffers())) == 5
    assert list(net.children()) == [net.conv, net.bn, net.fc]
    assert list(net.modules()) == [net, net.conv, net.bn, net.fc]
    assert [n for n, _ in net.named_modules(prefix="root")] == [
        "root", "root.conv", "root.bn", "root.fc"]


@needs_torch
def test_iteration_order_matches_torch():
    ox = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.BatchNorm1d(3), nn.ReLU()),
                       nn.ModuleDict({"a": nn.LayerNorm(3), "b": nn.Embedding(4, 3)}))
    tn = torch.nn.Sequential(torch.nn.Linear(2, 3),
                             torch.nn.Sequential(torch.nn.BatchNorm1d(3), torch.nn.ReLU()),
                             torch.nn.ModuleDict({"a": torch.nn.LayerNorm(3),
                                                  "b": torch.nn.Embedding(4, 3)}))
    assert [n for n, _ in ox.named_parameters()] == [n for n, _ in tn.named_parameters()]
    assert [n for n, _ in ox.named_buffers()] == [n for n, _ in tn.named_buffers()]
    assert [n for n, _ in ox.named_modules()] == [n for n, _ in tn.named_modules()]
    assert list(ox.state_dict()) == list(tn.state_dict())
    for (_, p), (_, q) in zip(ox.named_parameters(), tn.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape)
    for (_, b), (_, c) in zip(ox.named_buffers(), tn.named_buffers()):
        assert tuple(b.shape) == tuple(c.shape) and str(b.dtype) == str(c.dtype).split(".")[1]


def test_shared_modules_and_parameters_come_once_unless_asked():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in model.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in model.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in model.named_parameters(remove_duplicate=False)] == [
        "0.weight", "0.bias", "2.weight", "2.bias"]
    assert len(list(model.children())) == 2
    # state_dict keeps both names, as PyTorch does
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    tied = nn.Module()
    tied.a = nn.Linear(2, 2, bias=False)
    tied.b = nn.Linear(2, 2, bias=False)
    tied.b.weight = tied.a.weight
    assert [n for n, _ in tied.named_parameters()] == ["a.weight"]


def test_deep_module_chains_need_no_recursion():
    model = nn.Sequential()
    current = model
    for _ in range(3000):
        child = nn.Sequential()
        current.append(child)
        current = child
    current.append(nn.Linear(1, 1))
    assert len(list(model.modules())) == 3002
    assert len(list(model.parameters())) == 2
    assert len(model.state_dict()) == 2


# -- modes, grads, apply -------------------------------------------------------------------

def test_train_eval_reach_every_submodule():
    net = Net()
    assert net.training and all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="boolean"):
        net.train("no")


def test_train_calls_overridden_train_of_children():
    calls = []

    class Frozen(nn.Module):
        def train(self, mode=True):
            calls.append(mode)
            return super().train(False)

    model = nn.Sequential(nn.Linear(1, 1), Frozen())
    model.train()
    assert calls == [True] and not model[1].training and model[0].training


def test_zero_grad_and_requires_grad_():
    net = Net()
    net(oxmera.randn(2, 1, 4, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    grads = [p.grad for p in net.parameters()]
    net.zero_grad(set_to_none=False)
    for p, g in zip(net.parameters(), grads):
        assert p.grad is g and not _np(g).any()
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())


def test_apply_visits_children_first():
    order = []
    model = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    assert model.apply(lambda m: order.append(type(m).__name__)) is model
    assert order == ["Linear", "ReLU", "Sequential", "Sequential"]


# -- to / float / double ---------------------------------------------------------------------

def test_to_converts_float_parameters_buffers_and_grads_in_place():
    net = Net()
    params = list(net.parameters())
    net(oxmera.randn(2, 1, 4, 4)).sum().backward()
    before = [_np(p).copy() for p in params]
    assert net.to(oxmera.float64) is net
    assert list(net.parameters()) == params        # the same Parameter objects
    for p, values in zip(params, before):
        assert type(p) is nn.Parameter and p.dtype == np.float64 and p.requires_grad
        assert p.grad.dtype == np.float64
        np.testing.assert_array_equal(_np(p), values)
    assert net.bn.running_mean.dtype == np.float64
    assert net.bn.num_batches_tracked.dtype == np.int64
    assert net(oxmera.randn(2, 1, 4, 4, dtype=oxmera.float64)).dtype == np.float64
    assert net.float().fc.weight.dtype == np.float32
    assert net.double().fc.bias.dtype == np.float64
    assert net.half().fc.bias.dtype == np.float16
    assert net.to(oxmera.zeros(1, dtype=oxmera.float32)).fc.bias.dtype == np.float32
    assert net.to("cpu") is net and net.to(device="cpu", dtype=np.float64).fc.bias.dtype == \
        np.float64
    assert net.cpu() is net


def test_to_errors():
    layer = nn.Linear(1, 1)
    with pytest.raises(TypeError, match="floating point"):
        layer.to(oxmera.int64)
    with pytest.raises(RuntimeError, match="cannot use device 'cuda'"):
        layer.to("cuda")
    with pytest.raises(TypeError, match="unexpected keyword"):
        layer.to(memory=None)


# -- state_dict / load_state_dict ------------------------------------------------------------

def test_state_dict_values_share_memory_but_are_detached():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == ["scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias",
                        "bn.running_mean", "bn.running_var", "bn.num_batches_tracked",
                        "fc.weight", "fc.bias"]
    assert isinstance(sd, OrderedDict) and "scratch" not in sd
    assert type(sd["fc.weight"]) is oxmera.Tensor and not sd["fc.weight"].requires_grad
    assert np.shares_memory(sd["fc.weight"].numpy(), net.fc.weight.numpy(force=True))
    kept = net.state_dict(keep_vars=True)
    assert kept["fc.weight"] is net.fc.weight
    assert list(net.state_dict(prefix="m."))[0].startswith("m.")


@needs_torch
def test_state_dict_key_order_matches_torch():
    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 2, 3)
            self.bn = torch.nn.BatchNorm2d(2)
            self.fc = torch.nn.Linear(8, 3)
            self.register_buffer("scale", torch.ones(1))
            self.register_buffer("scratch", torch.zeros(2), persistent=False)

    assert list(Net().state_dict()) == list(TorchNet().state_dict())


def test_load_state_dict_round_trip():
    a, b = Net(), Net()
    a(oxmera.randn(4, 1, 4, 4))                   # move a's running stats
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (name, p), (_, q) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)
    x = oxmera.randn(2, 1, 4, 4)
    a.eval(), b.eval()
    np.testing.assert_array_equal(_np(a(x)), _np(b(x)))
    # the values were copied, not shared
    assert not np.shares_memory(a.fc.weight.numpy(force=True), b.fc.weight.numpy(force=True))


def test_load_state_dict_copies_into_the_same_tensors_and_bumps_versions():
    layer = nn.Linear(2, 2)
    weight, version = layer.weight, layer.weight._version
    layer.load_state_dict({"weight": np.ones((2, 2)), "bias": oxmera.zeros(2, dtype=np.float64)})
    assert layer.weight is weight and layer.weight.dtype == np.float32
    assert layer.weight._version > version
    assert _np(layer.weight).tolist() == [[1, 1], [1, 1]]


def test_load_state_dict_strict_error_lists_everything_and_changes_nothing():
    net = Net()
    sd = {k: v.clone() for k, v in Net().state_dict().items()}
    del sd["fc.bias"], sd["bn.running_var"]
    sd["fc.weight"] = oxmera.zeros(3, 9)
    sd["conv.bias"] = oxmera.zeros(5)
    sd["extra.weight"] = oxmera.zeros(1)
    sd["conv.weight_typo"] = oxmera.zeros(1)
    sd["bn.weight"] = "not a tensor"
    tensors = [t for _, t in net.state_dict(keep_vars=True).items()]
    before = [(t.detach().numpy().copy(), t._version) for t in tensors]
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    message = str(info.value)
    assert message.startswith("Error(s) in loading state_dict for Net:\n\t")
    assert 'Missing key(s) in state_dict: "bn.running_var", "fc.bias".' in message
    assert 'Unexpected key(s) in state_dict: "extra.weight", "conv.weight_typo".' in message
    assert ("size mismatch for fc.weight: copying a param with shape (3, 9) from checkpoint, "
            "the shape in current model is (3, 8).") in message
    assert "size mismatch for conv.bias" in message
    assert 'While copying the parameter named "bn.weight"' in message
    lines = message.split("\n\t")
    assert lines[1].startswith("Missing") and lines[2].startswith("Unexpected")
    for t, (values, version) in zip(tensors, before):
        np.testing.assert_array_equal(t.detach().numpy(), values)
        assert t._version == version


def test_load_state_dict_non_strict_reports_keys_but_shape_mismatches_still_raise():
    layer = nn.Linear(2, 2)
    result = layer.load_state_dict({"weight": oxmera.zeros(2, 2), "other": oxmera.zeros(1)},
                                   strict=False)
    assert result == (["bias"], ["other"])
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    assert not _np(layer.weight).any()
    bias = _np(layer.bias).copy()
    with pytest.raises(RuntimeError, match="size mismatch for bias"):
        layer.load_state_dict({"bias": oxmera.zeros(3), "weight": oxmera.ones(2, 2)},
                              strict=False)
    assert not _np(layer.weight).any()            # nothing was copied
    np.testing.assert_array_equal(_np(layer.bias), bias)


def test_load_state_dict_skips_none_entries_and_non_persistent_buffers():
    layer = nn.Linear(2, 2, bias=False)
    with pytest.raises(RuntimeError, match='Unexpected key.*"bias"'):
        layer.load_state_dict({"weight": oxmera.zeros(2, 2), "bias": oxmera.zeros(2)})
    net = Net()
    sd = net.state_dict()
    sd["scratch"] = oxmera.ones(2)
    with pytest.raises(RuntimeError, match='Unexpected key.*"scratch"'):
        net.load_state_dict(sd)
    with pytest.raises(TypeError, match="dict-like"):
        net.load_state_dict([("a", 1)])


def test_load_state_dict_assign():
    layer = nn.Linear(2, 2)
    layer.weight.requires_grad_(False)
    new_weight, new_bias = oxmera.ones(2, 2), oxmera.zeros(2)
    layer.load_state_dict({"weight": new_weight, "bias": new_bias}, assign=True)
    assert type(layer.weight) is nn.Parameter and not layer.weight.requires_grad
    assert layer.bias.requires_grad
    assert np.shares_memory(layer.weight.numpy(), new_weight.numpy())
    bn = nn.BatchNorm1d(2)
    mean = oxmera.full((2,), 3.0)
    sd = bn.state_dict()
    sd["running_mean"] = mean
    bn.load_state_dict(sd, assign=True)
    assert bn.running_mean is mean


@needs_torch
def test_load_state_dict_error_text_matches_torch():
    ox, tn = nn.Linear(2, 3), torch.nn.Linear(2, 3)
    with pytest.raises(RuntimeError) as ox_error:
        ox.load_state_dict({"weight": oxmera.zeros(3, 2), "extra": oxmera.zeros(1)})
    with pytest.raises(RuntimeError) as torch_error:
        tn.load_state_dict({"weight": torch.zeros(3, 2), "extra": torch.zeros(1)})
    assert str(ox_error.value) == str(torch_error.value)
    with pytest.raises(RuntimeError) as ox_error:
        ox.load_state_dict({"weight": oxmera.zeros(3, 2), "bias": oxmera.zeros(2)})
    with pytest.raises(RuntimeError) as torch_error:
        tn.load_state_dict({"weight": torch.zeros(3, 2), "bias": torch.zeros(2)})
    assert str(ox_error.value) == str(torch_error.value).replace("torch.Size([2])", "(2,)") \
        .replace("torch.Size([3])", "(3,)")


@needs_torch
@pytest.mark.parametrize("as_arrays", [True, False], ids=["numpy", "torch"])
def test_load_state_dict_from_torch_weights(as_arrays):
    tn = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    tn(torch.randn(6, 3))                          # running stats away from 0 and 1
    ox = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    state = tn.state_dict()
    ox.load_state_dict({k: v.numpy() for k, v in state.items()} if as_arrays else state)
    assert ox[1].num_batches_tracked.item() == 1
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    tn.eval(), ox.eval()
    np.testing.assert_allclose(_np(ox(oxmera.tensor(x))),
                               tn(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_load_state_dict_refuses_what_it_cannot_write_before_writing():
    layer = nn.Linear(2, 2)
    weight = _np(layer.weight).copy()
    with pytest.raises(RuntimeError, match="requires grad, so it needs a floating point"):
        layer.load_state_dict({"weight": np.ones((2, 2), np.int64), "bias": np.ones(2)},
                              assign=True)
    assert layer.bias.tolist() != [1.0, 1.0]
    frozen = nn.Module()
    frozen.register_buffer("table", oxmera.from_numpy(np.broadcast_to(np.float32(1), (3,))))
    with pytest.raises(RuntimeError, match="read-only"):
        frozen.load_state_dict({"table": np.zeros(3)})
    frozen.load_state_dict({"table": np.zeros(3)}, assign=True)
    assert frozen.table.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(_np(layer.weight), weight)


# -- hooks -----------------------------------------------------------------------------------

def test_forward_hooks_see_and_replace_inputs_and_outputs():
    layer = nn.Linear(2, 2)
    seen = []
    h1 = layer.register_forward_pre_hook(lambda m, args: seen.append(("pre", m, args)))
    h2 = layer.register_forward_hook(lambda m, args, out: seen.append(("post", out.shape)))
    x = oxmera.ones(3, 2)
    layer(x)
    assert seen[0][0] == "pre" and seen[0][1] is layer and seen[0][2][0] is x
    assert seen[1] == ("post", (3, 2))
    h1.remove(), h2.remove()
    h1.remove()                                     # a second remove does nothing
    layer(x)
    assert len(seen) == 2
    layer.register_forward_pre_hook(lambda m, args: args[0] * 0)       # non-tuple -> wrapped
    h = layer.register_forward_hook(lambda m, args, out: out + 1)
    np.testing.assert_allclose(_np(layer(x)), _np(layer.bias.expand(3, 2)) + 1, rtol=1e-6)
    h.remove()


def test_forward_hooks_with_kwargs_prepend_and_order():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    m = Scale()
    order = []
    m.register_forward_hook(lambda mod, args, out: order.append("a"))
    m.register_forward_hook(lambda mod, args, out: order.append("b"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"factor": 3.0}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: order.append(kwargs["factor"]),
                            with_kwargs=True)
    assert m(oxmera.ones(1)).tolist() == [3.0]
    assert order == ["b", "a", 3.0]
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
        m(oxmera.ones(1))


def test_always_call_hook_runs_when_forward_raises():
    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Broken()
    calls = []
    m.register_forward_hook(lambda mod, args, out: calls.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(oxmera.ones(1))
    assert calls == ["always"]


def test_hook_handle_context_manager_and_weak_reference():
    layer = nn.Identity()
    with layer.register_forward_hook(lambda m, a, o: o * 2):
        assert layer(oxmera.ones(1)).tolist() == [2.0]
    assert layer(oxmera.ones(1)).tolist() == [1.0]
    handle = layer.register_forward_hook(lambda m, a, o: None)
    del layer
    handle.remove()                                 # the module is gone: nothing to do


# -- repr ------------------------------------------------------------------------------------

def test_nested_repr():
    assert repr(Net()) == (
        "Net(\n"
        "  (conv): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))\n"
        "  (bn): BatchNorm2d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)\n"
        "  (fc): Linear(in_features=8, out_features=3, bias=True)\n"
        ")")
    model = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Dropout(0.2)))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=2, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Dropout(p=0.2, inplace=False)\n"
        "  )\n"
        ")")
    assert repr(nn.Module()) == "Module()"
    assert repr(nn.Sequential()) == "Sequential()"
    assert repr(nn.ModuleList()) == "ModuleList()"

    class Multi(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(1, 1)

        def extra_repr(self):
            return "first\nsecond"

    assert repr(Multi()) == ("Multi(\n  first\n  second\n"
                             "  (fc): Linear(in_features=1, out_features=1, bias=True)\n)")


@needs_torch
def test_reprs_match_torch():
    def build(lib):
        n = lib.nn
        return n.Sequential(
            n.Conv2d(1, 8, 3, padding=1), n.BatchNorm2d(8), n.ReLU(), n.MaxPool2d(2),
            n.Conv2d(8, 16, (3, 5), stride=2, padding="same" if False else 0, dilation=1,
                     groups=2, bias=False, padding_mode="reflect"),
            n.Conv1d(4, 4, 3, padding="same"), n.AvgPool2d(2, 1), n.AdaptiveAvgPool2d((2, None)),
            n.Flatten(), n.Unflatten(1, (2, 8)), n.Dropout(0.25), n.LayerNorm([2, 8]),
            n.BatchNorm1d(4, affine=False, momentum=None, track_running_stats=False),
            n.BatchNorm2d(3, bias=False),
            n.Embedding(10, 3, padding_idx=-1, max_norm=1.0), n.Identity(),
            n.ModuleList([n.Linear(2, 2), n.Linear(2, 2), n.ReLU(), n.Linear(2, 2)]),
            n.ModuleDict({"act": n.LeakyReLU(0.2, inplace=True), "gelu": n.GELU("tanh")}),
            n.Bilinear(2, 3, 4), n.ELU(), n.SiLU(), n.Softplus(), n.Tanh(), n.Sigmoid(),
            n.Softmax(dim=1), n.LogSoftmax(1), n.ReLU(inplace=True),
            n.MSELoss(), n.L1Loss(), n.CrossEntropyLoss(label_smoothing=0.1), n.NLLLoss(),
            n.BCELoss(), n.BCEWithLogitsLoss(), n.SmoothL1Loss(), n.HuberLoss(),
            n.AdaptiveAvgPool1d(3))

    assert repr(build(oxmera)) == repr(build(torch))


# -- copying and pickling ----------------------------------------------------------------------

def test_deepcopy_and_pickle_of_modules():
    net = Net()
    net(oxmera.randn(2, 1, 4, 4)).sum().backward()
    x = oxmera.randn(2, 1, 4, 4)
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert type(clone.fc.weight) is nn.Parameter
        assert clone.fc.weight is not net.fc.weight
        assert [n for n, _ in clone.named_parameters()] == [n for n, _ in net.named_parameters()]
        assert "scratch" in clone._non_persistent_buffers_set
        clone.eval(), net.eval()
        np.testing.assert_array_equal(_np(clone(x)), _np(net(x)))
        net.train()
    shared = nn.Linear(1, 1)
    clone = copy.deepcopy(nn.Sequential(shared, shared))
    assert clone[0] is clone[1]


def test_modules_with_hooks_deepcopy():
    layer = nn.Linear(1, 1)
    layer.register_forward_hook(lambda m, a, o: o * 0)
    clone = copy.deepcopy(layer)
    assert not _np(clone(oxmera.ones(1, 1))).any()


# -- containers -------------------------------------------------------------------------------

def test_sequential_indexing_slicing_and_editing():
    a, b, c = nn.Linear(1, 1), nn.ReLU(), nn.Tanh()
    model = nn.Sequential(a, b, c)
    assert len(model) == 3 and model[0] is a and model[-1] is c and list(model) == [a, b, c]
    sub = model[1:]
    assert type(sub) is nn.Sequential and list(sub) == [b, c]
    assert list(sub._modules) == ["1", "2"]           # PyTorch keeps the keys of a slice
    with pytest.raises(IndexError, match="out of range"):
        model[3]
    d = nn.Sigmoid()
    model[1] = d
    assert model[1] is d
    del model[0]
    assert list(model._modules) == ["0", "1"] and list(model) == [d, c]
    assert model.append(a) is model and model[2] is a
    model.insert(0, b)
    assert list(model) == [b, d, c, a]
    model.extend([nn.Identity()])
    assert len(model) == 5 and model.pop(4).__class__ is nn.Identity
    combined = nn.Sequential(a) + nn.Sequential(b)
    assert list(combined) == [a, b]
    model += nn.Sequential(c)
    assert model[-1] is c
    del model[1:3]
    assert list(model._modules) == ["0", "1", "2"]
    with pytest.raises(ValueError, match="Sequential"):
        model + [a]
    with pytest.raises(TypeError, match="expected a Module"):
        model.insert(0, 3)
    named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert named.first is a and named[1] is b
    assert "0" not in dir(model)


def test_sequential_forward_chains():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = oxmera.randn(5, 3)
    expected = model[2](model[1](model[0](x)))
    np.testing.assert_array_equal(_np(model(x)), _np(expected))
    empty = nn.Sequential()
    assert empty(x) is x


def test_module_list():
    layers = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
    assert len(layers) == 2 and isinstance(layers[0], nn.Linear)
    assert type(layers[:1]) is nn.ModuleList and len(layers[:1]) == 1
    layers.append(nn.Tanh())
    layers.extend([nn.Sigmoid()])
    layers += [nn.Identity()]
    assert [type(m).__name__ for m in layers] == ["Linear", "ReLU", "Tanh", "Sigmoid",
                                                   "Identity"]
    layers.insert(1, nn.ELU())
    assert type(layers[1]) is nn.ELU and list(layers._modules) == [str(i) for i in range(6)]
    del layers[1]
    assert type(layers[1]) is nn.ReLU and list(layers._modules) == [str(i) for i in range(5)]
    assert type(layers.pop(-1)) is nn.Identity
    layers[0] = nn.Linear(1, 2)
    assert layers[0].out_features == 2
    assert len(layers + nn.ModuleList([nn.ReLU()])) == 5
    with pytest.raises(IndexError):
        layers[10]
    with pytest.raises(TypeError, match="iterable"):
        layers.extend(3)
    with pytest.raises(NotImplementedError):
        layers(oxmera.ones(1))
    assert len(list(layers.parameters())) == 2
    assert repr(nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.ReLU()])) == (
        "ModuleList(\n  (0-1): 2 x ReLU()\n  (2): Tanh()\n  (3): ReLU()\n)")


def test_module_dict():
    d = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
    assert list(d) == ["a", "b"] and len(d) == 2 and "a" in d and "c" not in d
    d["c"] = nn.Linear(1, 1)
    assert list(d.keys()) == ["a", "b", "c"] and isinstance(d.c, nn.Linear)
    assert [type(v).__name__ for v in d.values()] == ["ReLU", "Tanh", "Linear"]
    del d["a"]
    assert list(d) == ["b", "c"]
    assert isinstance(d.pop("b"), nn.Tanh)
    d.update([("x", nn.ReLU())])
    d.update(nn.ModuleDict({"y": nn.ReLU()}))
    assert list(d) == ["c", "x", "y"]
    assert [n for n, _ in d.named_parameters()] == ["c.weight", "c.bias"]
    with pytest.raises(TypeError, match="iterable"):
        d.update(3)
    with pytest.raises(ValueError, match="length 3"):
        d.update([("a", nn.ReLU(), 1)])
    with pytest.raises(TypeError, match="should be Iterable"):
        d.update([3])
    d.clear()
    assert len(d) == 0
