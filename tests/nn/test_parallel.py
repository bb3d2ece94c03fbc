"""nn.DataParallel / nn.parallel.data_parallel: PyTorch's behaviour without an accelerator."""
import numpy as np
import pytest

import oxmera
from oxmera import nn


def test_data_parallel_runs_the_module_with_prefixed_names():
    inner = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    model = nn.DataParallel(inner, device_ids=[0, 1], output_device=0, dim=0)
    assert model.module is inner and model.device_ids == []
    x = oxmera.randn(5, 3)
    assert np.array_equal(model(x).detach().numpy(), inner(x).detach().numpy())
    assert list(model.state_dict()) == ["module." + k for k in inner.state_dict()]
    assert [n for n, _ in model.named_parameters()] == [
        "module." + n for n, _ in inner.named_parameters()]
    model(x).sum().backward()
    assert inner[0].weight.grad is not None


def test_data_parallel_keywords_and_functional_form():
    class Scale(nn.Module):
        def forward(self, x, factor=1.0):
            return x * factor

    x = oxmera.ones(2)
    assert nn.DataParallel(Scale())(x, factor=3.0).tolist() == [3.0, 3.0]
    assert nn.parallel.data_parallel(Scale(), x).tolist() == [1.0, 1.0]
    assert nn.parallel.data_parallel(Scale(), (x, 2.0)).tolist() == [2.0, 2.0]
    assert nn.parallel.data_parallel(Scale(), (x,), module_kwargs={"factor": 4.0}).tolist() == [
        4.0, 4.0]
    with pytest.raises(TypeError, match="DataParallel"):
        nn.DataParallel(lambda t: t)


def test_data_parallel_state_dict_as_torch():
    torch = pytest.importorskip("torch")
    torch_model = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 2),
                                                            torch.nn.BatchNorm1d(2)))
    model = nn.DataParallel(nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)))
    assert list(model.state_dict()) == list(torch_model.state_dict())
    assert model.device_ids == torch_model.device_ids
    assert repr(model) == repr(torch_model)
    model.load_state_dict({k: v.detach().numpy() for k, v in torch_model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    model.eval()
    torch_model.eval()
    np.testing.assert_allclose(model(oxmera.tensor(x)).detach().numpy(),
                               torch_model(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
