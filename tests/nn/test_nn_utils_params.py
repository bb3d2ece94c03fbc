"""nn.utils: parameters_to_vector / vector_to_parameters, parametrize,
parametrizations.weight_norm / spectral_norm and the legacy weight_norm, compared with
torch (copied weights and state dicts) where installed, and with closed forms."""
import warnings

import numpy as np
import pytest

import oxmera
from oxmera import nn
from oxmera.nn.utils import parametrize


def test_parameters_to_vector_round_trip_and_gradient():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert tuple(vec.shape) == (11,)
    np.testing.assert_array_equal(
        vec.detach().numpy(),
        np.concatenate([p.detach().numpy().ravel() for p in model.parameters()]))
    vec.sum().backward()
    assert all(p.grad.tolist() == np.ones(p.shape).tolist() for p in model.parameters())
    weight = model[0].weight
    nn.utils.vector_to_parameters(oxmera.arange(11.0), model.parameters())
    assert model[0].weight is weight
    assert model[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert model[1].bias.tolist() == [10.0]
    with pytest.raises(TypeError, match="expected oxmera.Tensor"):
        nn.utils.vector_to_parameters([1.0], model.parameters())
    with pytest.raises(RuntimeError, match="hold 11 values, vec only 4"):
        nn.utils.vector_to_parameters(oxmera.zeros(4), model.parameters())
    assert model[1].bias.tolist() == [10.0]


class _Double(nn.Module):
    def forward(self, x):
        return 2 * x

    def right_inverse(self, x):
        return x / 2


class _Split(nn.Module):
    """Two originals: right_inverse returns a pair."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, x):
        return x * 0.25, x * 0.75


def test_register_parametrization_property_and_assignment():
    layer = nn.Linear(2, 2, dtype=oxmera.float64)
    before = layer.weight.detach().clone()
    parametrize.register_parametrization(layer, "weight", _Double())
    assert type(layer).__name__ == "ParametrizedLinear"
    assert isinstance(layer, nn.Linear)
    np.testing.assert_allclose(layer.weight.detach().numpy(), before.numpy())   # 2 * (w/2)
    np.testing.assert_allclose(layer.parametrizations.weight.original.detach().numpy(),
                               before.numpy() / 2)
    layer.weight = oxmera.ones(2, 2, dtype=oxmera.float64)
    assert layer.parametrizations.weight.original.tolist() == [[0.5, 0.5], [0.5, 0.5]]
    layer(oxmera.ones(1, 2, dtype=oxmera.float64)).sum().backward()
    assert layer.parametrizations.weight.original.grad.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    parametrize.register_parametrization(layer, "weight", _Double())    # chained
    assert layer.weight.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert len(layer.parametrizations.weight) == 2


def test_several_originals_and_remove():
    layer = nn.Linear(2, 2, dtype=oxmera.float64)
    before = layer.weight.detach().clone()
    parametrize.register_parametrization(layer, "weight", _Split())
    assert sorted(layer.state_dict()) == ["bias", "parametrizations.weight.original0",
                                          "parametrizations.weight.original1"]
    np.testing.assert_allclose(layer.weight.detach().numpy(), before.numpy())
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear and isinstance(layer.weight, nn.Parameter)
    assert not hasattr(layer, "parametrizations")
    np.testing.assert_allclose(layer.weight.detach().numpy(), before.numpy())


def test_remove_keeps_the_parameter_object():
    layer = nn.Linear(2, 2)
    parametrize.register_parametrization(layer, "weight", _Double())
    original = layer.parametrizations.weight.original
    value = layer.weight.detach().clone()
    parametrize.remove_parametrizations(layer, "weight")
    assert layer.weight is original
    np.testing.assert_array_equal(layer.weight.detach().numpy(), value.numpy())
    layer = nn.Linear(2, 2)
    parametrize.register_parametrization(layer, "weight", _Double())
    original_values = layer.parametrizations.weight.original.detach().clone()
    parametrize.remove_parametrizations(layer, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(layer.weight.detach().numpy(), original_values.numpy())


def test_cached_and_errors():
    layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", _Double())
    with parametrize.cached():
        with parametrize.cached():
            first = layer.weight
        assert layer.weight is first
    assert layer.weight is not first
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(layer, "nothing", _Double())
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        parametrize.remove_parametrizations(layer, "bias")

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Shrink())
    parametrize.register_parametrization(nn.Linear(2, 2), "weight", Shrink(), unsafe=True)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        import pickle
        pickle.dumps(layer)


def test_parametrized_buffer():
    bn = nn.BatchNorm1d(2)
    parametrize.register_parametrization(bn, "running_var", _Double())
    assert "parametrizations.running_var.original" in bn.state_dict()
    assert bn.running_var.tolist() == [1.0, 1.0]


def _copy_state(torch_module, module):
    module.load_state_dict({k: v.detach().numpy() for k, v in torch_module.state_dict().items()})


def test_weight_norm_as_torch():
    torch = pytest.importorskip("torch")
    for dim in (0, 1, None):
        t_layer = torch.nn.utils.parametrizations.weight_norm(
            torch.nn.Linear(3, 4).double(), dim=dim)
        layer = nn.utils.parametrizations.weight_norm(nn.Linear(3, 4, dtype=oxmera.float64),
                                                      dim=dim)
        assert list(layer.state_dict()) == list(t_layer.state_dict())
        _copy_state(t_layer, layer)
        x = np.random.default_rng(dim or 5).standard_normal((2, 3))
        t_out = t_layer(torch.tensor(x))
        out = layer(oxmera.tensor(x))
        np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
        (t_out ** 2).sum().backward()
        (out ** 2).sum().backward()
        for (name, p), (t_name, t_p) in zip(layer.named_parameters(),
                                            t_layer.named_parameters()):
            assert name == t_name
            np.testing.assert_allclose(p.grad.numpy(), t_p.grad.numpy(), rtol=1e-10)


def test_weight_norm_loads_the_legacy_layout_and_conv_weights():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        legacy = torch.nn.utils.weight_norm(torch.nn.Linear(3, 2).double())
        ox_legacy = nn.utils.weight_norm(nn.Linear(3, 2, dtype=oxmera.float64))
    assert list(ox_legacy.state_dict()) == list(legacy.state_dict())
    _copy_state(legacy, ox_legacy)
    x = np.ones((1, 3))
    np.testing.assert_allclose(ox_legacy(oxmera.tensor(x)).detach().numpy(),
                               legacy(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    layer = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2, dtype=oxmera.float64))
    layer.load_state_dict({k: v.detach().numpy() for k, v in legacy.state_dict().items()})
    np.testing.assert_allclose(layer(oxmera.tensor(x)).detach().numpy(),
                               legacy(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    nn.utils.remove_weight_norm(ox_legacy)
    assert list(ox_legacy.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(ox_legacy)


def test_legacy_weight_norm_rules():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = nn.utils.weight_norm(nn.Linear(3, 2, dtype=oxmera.float64), dim=None)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            nn.utils.weight_norm(layer)
    assert tuple(layer.weight_g.shape) == ()
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.weight_norm(nn.Linear(1, 1))
    layer(oxmera.ones(1, 3, dtype=oxmera.float64)).sum().backward()
    v = layer.weight_v.detach().numpy()
    g = layer.weight_g.item()
    # d/dg of sum(x @ (g v/|v|)^T) with x = ones: sum(v)/|v|
    np.testing.assert_allclose(layer.weight_g.grad.item(), v.sum() / np.linalg.norm(v))
    np.testing.assert_allclose(layer.weight.detach().numpy(), g * v / np.linalg.norm(v))


@pytest.mark.parametrize("shape,dim", [((4, 3), None), ((5, 2, 3), None), ((4, 3), 1)])
def test_spectral_norm_as_torch(shape, dim):
    torch = pytest.importorskip("torch")

    class TorchHolder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(*shape, dtype=torch.float64))

        def forward(self, x):
            return (self.weight * x).sum()

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(oxmera.zeros(*shape, dtype=oxmera.float64))

        def forward(self, x):
            return (self.weight * x).sum()

    t_mod = torch.nn.utils.parametrizations.spectral_norm(TorchHolder(), n_power_iterations=2,
                                                          dim=dim)
    mod = nn.utils.parametrizations.spectral_norm(Holder(), n_power_iterations=2, dim=dim)
    assert list(mod.state_dict()) == list(t_mod.state_dict())
    _copy_state(t_mod, mod)
    x = np.random.default_rng(0).standard_normal(shape)
    for step in range(3):                   # each training forward updates _u and _v
        t_out = t_mod(torch.tensor(x))
        out = mod(oxmera.tensor(x))
        np.testing.assert_allclose(out.item(), t_out.item(), rtol=1e-10)
    t_out.backward()
    out.backward()
    np.testing.assert_allclose(mod.parametrizations.weight.original.grad.numpy(),
                               t_mod.parametrizations.weight.original.grad.numpy(), rtol=1e-8)
    for key, value in t_mod.state_dict().items():
        np.testing.assert_allclose(mod.state_dict()[key].numpy(), value.numpy(), rtol=1e-10)
    mod.eval()
    t_mod.eval()
    np.testing.assert_allclose(mod(oxmera.tensor(x)).item(), t_mod(torch.tensor(x)).item(),
                               rtol=1e-10)


def test_spectral_norm_closed_form_and_errors():
    layer = nn.Linear(5, 4, dtype=oxmera.float64)
    with oxmera.no_grad():       # singular values 4, 1, 0.5, 0.1: fast convergence
        rng = np.random.default_rng(1)
        left = np.linalg.qr(rng.standard_normal((4, 4)))[0]
        right = np.linalg.qr(rng.standard_normal((5, 5)))[0][:4]
        layer.weight.copy_(oxmera.tensor(left @ np.diag([4.0, 1.0, 0.5, 0.1]) @ right))
    nn.utils.parametrizations.spectral_norm(layer, n_power_iterations=30)
    layer(oxmera.ones(1, 5, dtype=oxmera.float64))
    top = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
    np.testing.assert_allclose(top, 1.0, rtol=1e-6)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), dim=2)
    with pytest.raises(ValueError, match="no parameter or buffer with name 'kernel'"):
        nn.utils.parametrizations.spectral_norm(nn.Linear(2, 2), name="kernel")


def test_legacy_spectral_norm_as_torch():
    torch = pytest.importorskip("torch")
    t_layer = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3).double(), n_power_iterations=2)
    layer = nn.utils.spectral_norm(nn.Linear(4, 3, dtype=oxmera.float64), n_power_iterations=2)
    assert list(layer.state_dict()) == list(t_layer.state_dict())
    _copy_state(t_layer, layer)
    x = np.random.default_rng(0).standard_normal((2, 4))
    for _ in range(3):
        t_out = t_layer(torch.tensor(x))
        out = layer(oxmera.tensor(x))
        np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-10)
    t_out.sum().backward()
    out.sum().backward()
    np.testing.assert_allclose(layer.weight_orig.grad.numpy(), t_layer.weight_orig.grad.numpy(),
                               rtol=1e-8)
    for key, value in t_layer.state_dict().items():
        np.testing.assert_allclose(layer.state_dict()[key].numpy(), value.numpy(), rtol=1e-10)
    layer.eval()
    t_layer.eval()
    np.testing.assert_allclose(layer(oxmera.tensor(x)).detach().numpy(),
                               t_layer(torch.tensor(x)).detach().numpy(), rtol=1e-10)
    torch.nn.utils.remove_spectral_norm(t_layer)
    nn.utils.remove_spectral_norm(layer)
    assert list(layer.state_dict()) == list(t_layer.state_dict())
    np.testing.assert_allclose(layer.weight.detach().numpy(), t_layer.weight.detach().numpy(),
                               rtol=1e-10)


def test_legacy_spectral_norm_rules():
    layer = nn.Linear(3, 3, dtype=oxmera.float64)
    with oxmera.no_grad():       # singular values 3, 1, 0.5: the power method converges fast
        q = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
        layer.weight.copy_(oxmera.tensor(q @ np.diag([3.0, 1.0, 0.5]) @ q.T))
    nn.utils.spectral_norm(layer)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(layer)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
        nn.utils.remove_spectral_norm(layer, "bias")
    for _ in range(20):
        layer(oxmera.ones(1, 3, dtype=oxmera.float64))
    top = np.linalg.svd(layer.weight.detach().numpy(), compute_uv=False)[0]
    np.testing.assert_allclose(top, 1.0, rtol=1e-8)


def test_deepcopy_of_a_parametrized_module():
    import copy
    layer = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2, dtype=oxmera.float64))
    twin = copy.deepcopy(layer)
    assert type(twin) is type(layer)
    x = oxmera.ones(1, 3, dtype=oxmera.float64)
    np.testing.assert_array_equal(twin(x).detach().numpy(), layer(x).detach().numpy())
    with oxmera.no_grad():
        twin.parametrizations.weight.original0.mul_(2)
    assert not np.allclose(twin(x).detach().numpy(), layer(x).detach().numpy())


def test_total_norm_and_split_clipping_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    for norm_type in (2.0, 1.0, float("inf")):
        results = []
        for lib, utils in ((torch, torch.nn.utils), (oxmera, nn.utils)):
            params = [lib.zeros(*g.shape, dtype=lib.float64, requires_grad=True) for g in grads]
            for p, g in zip(params, grads):
                p.grad = lib.tensor(g)
            total = utils.get_total_norm([p.grad for p in params], norm_type)
            utils.clip_grads_with_norm_(params, 0.5, total)
            results.append([total.item()] + [p.grad.numpy().copy() for p in params])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                again = utils.clip_grad_norm(params, 0.1, norm_type, foreach=None)
            results[-1].append(again.item())
        for got, want in zip(results[1], results[0]):
            np.testing.assert_allclose(got, want, rtol=1e-12)
    assert nn.utils.get_total_norm([]).item() == 0.0
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.get_total_norm([oxmera.tensor([float("nan")])], error_if_nonfinite=True)
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        nn.utils.clip_grad_norm([], 1.0)
