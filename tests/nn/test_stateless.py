"""nn.utils.stateless.functional_call, compared with torch where installed."""
import warnings

import numpy as np
import pytest

import oxmera
from oxmera import nn
from oxmera.nn.utils.stateless import functional_call


def _call(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return functional_call(*args, **kwargs)


def test_gradients_reach_the_given_tensors_and_module_is_restored():
    layer = nn.Linear(2, 1, dtype=oxmera.float64)
    weight, bias = layer.weight, layer.bias
    w = oxmera.tensor([[1.0, -2.0]], dtype=oxmera.float64, requires_grad=True)
    fast = w * 3                                      # a non-leaf, as in meta-learning
    out = _call(layer, {"weight": fast, "bias": oxmera.zeros(1, dtype=oxmera.float64)},
                (oxmera.tensor([[1.0, 2.0]], dtype=oxmera.float64),))
    assert out.tolist() == [[-9.0]]
    out.sum().backward()
    assert w.grad.tolist() == [[3.0, 6.0]]
    assert layer.weight is weight and layer.bias is bias and weight.grad is None
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        functional_call(layer, {}, oxmera.ones(1, 2, dtype=oxmera.float64))


def test_restored_after_an_exception_and_strict_keys():
    model = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    weight = model[0].weight
    with pytest.raises(RuntimeError):
        _call(model, {"0.weight": oxmera.ones(3, 3)}, (oxmera.ones(1, 2),))
    assert model[0].weight is weight
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'x'.\\s+Missing key\\(s\\): "
                                           "'0.bias'"):
        _call(model, {"0.weight": oxmera.ones(2, 2), "x": oxmera.ones(1)}, (oxmera.ones(1, 2),),
              strict=True)
    _call(model, {"extra": oxmera.ones(1)}, (oxmera.ones(1, 2),))
    assert not hasattr(model, "extra")


def _tied_story(lib, n):
    class Tied(n.Module):
        def __init__(self):
            super().__init__()
            self.a = n.Linear(2, 2, bias=False)
            self.b = n.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    call = (lib.func.functional_call if lib.__name__ == "torch" else _call)
    model = Tied()
    x = lib.ones(1, 2, dtype=lib.float64)
    eye = lib.eye(2, dtype=lib.float64) * 2
    out = [call(model.double(), {"a.weight": eye}, (x,)).tolist(),
           call(model, {"a.weight": eye}, (x,), tie_weights=False).tolist() !=
           call(model, {"a.weight": eye}, (x,)).tolist()]
    try:
        call(model, {"a.weight": eye, "b.weight": eye * 2}, (x,))
    except ValueError as err:
        out.append(str(err))
    return out


def test_tied_weights_as_torch():
    torch = pytest.importorskip("torch")
    assert _tied_story(oxmera, nn) == _tied_story(torch, torch.nn)


def test_batch_norm_buffers_as_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((4, 3))
    results = []
    for lib, n, call in ((torch, torch.nn, torch.func.functional_call),
                         (oxmera, nn, _call)):
        bn = n.BatchNorm1d(3).double()
        given = {"running_mean": lib.zeros(3, dtype=lib.float64),
                 "running_var": lib.ones(3, dtype=lib.float64),
                 "num_batches_tracked": lib.tensor(0), "weight": lib.ones(3, dtype=lib.float64),
                 "bias": lib.zeros(3, dtype=lib.float64)}
        out = call(bn, given, (lib.tensor(x),))
        results.append((out.detach().numpy(), given["running_mean"].numpy(),
                        bn.running_mean.numpy(), int(given["num_batches_tracked"])))
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_skip_init():
    layer = nn.utils.skip_init(nn.Linear, 4, 3, bias=False, dtype=oxmera.float64)
    assert tuple(layer.weight.shape) == (3, 4) and layer.bias is None
    assert layer.weight.dtype == np.float64 and layer.weight.requires_grad
    with pytest.raises(RuntimeError, match="must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)
    with pytest.raises(RuntimeError, match="Expected a Module"):
        nn.utils.skip_init(int)
