"""The rest of torch.nn's activations, as functions and modules, against PyTorch.

Values and gradients at kinks and ends (where each function's gradient
follows PyTorch's backward), reprs, in-place forms and errors. Gradients to
second order are in ``_gradient_cases.py``.
"""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn

# Points on and around every kink and end of the functions below.
POINTS = np.array([-7.0, -6.0, -4.0, -3.0, -2.5, -1.0, -0.5, -0.1, 0.0, 0.1, 0.3, 0.5, 1.0,
                   2.5, 3.0, 4.0, 6.0, 7.0, 30.0, -30.0])

FUNCTIONS = {
    "relu6": {}, "hardtanh": {}, "hardtanh-range": {"min_val": -0.5, "max_val": 3.0},
    "hardsigmoid": {}, "hardswish": {}, "mish": {}, "selu": {}, "celu": {"alpha": 2.0},
    "softsign": {}, "logsigmoid": {}, "tanhshrink": {}, "softshrink": {},
    "softshrink-1": {"lambd": 1.0}, "hardshrink": {}, "threshold": {"threshold": 0.5,
                                                                    "value": -2.0},
    "rrelu": {"lower": 0.1, "upper": 0.3},
}


@pytest.mark.parametrize("case", sorted(FUNCTIONS))
def test_function_against_torch(case):
    torch = pytest.importorskip("torch")
    name = case.split("-")[0]
    kwargs = FUNCTIONS[case]
    ours = oxmera.tensor(POINTS, requires_grad=True)
    theirs = torch.tensor(POINTS, requires_grad=True)
    out = getattr(F, name)(ours, **kwargs)
    expected = getattr(torch.nn.functional, name)(theirs, **kwargs)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-14,
                               atol=1e-15)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-7, atol=1e-15)


@pytest.mark.parametrize("name", ["glu", "softmin", "prelu"])
def test_functions_with_dims_or_weights_against_torch(name):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 4, 3))
    w = np.array([0.1, -0.2, 0.3, 0.4])
    ours, theirs = oxmera.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ow, tw = oxmera.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    calls = {"glu": lambda lib, a, b: lib.glu(a, 1), "softmin": lambda lib, a, b:
             lib.softmin(a, dim=1), "prelu": lambda lib, a, b: lib.prelu(a, b)}
    out = calls[name](F, ours, ow)
    expected = calls[name](torch.nn.functional, theirs, tw)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-13)
    g = np.random.default_rng(1).standard_normal(expected.shape)
    (out * oxmera.tensor(g)).sum().backward()
    (expected * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-14)
    if name == "prelu":
        np.testing.assert_allclose(ow.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


MODULES = {
    "ReLU6": ((), {}), "ReLU6-inplace": ((), {"inplace": True}), "Hardtanh": ((-2.0, 2.0), {}),
    "Hardswish": ((), {}), "Hardswish-inplace": ((), {"inplace": True}), "Hardsigmoid": ((), {}),
    "Mish": ((), {}), "SELU": ((), {"inplace": True}), "CELU": ((0.5,), {}),
    "Softsign": ((), {}), "LogSigmoid": ((), {}), "GLU": ((0,), {}), "PReLU": ((), {}),
    "RReLU": ((0.1, 0.2), {}), "Threshold": ((0.1, 20.0), {}), "Softmin": ((1,), {}),
    "Softmax2d": ((), {}), "Tanhshrink": ((), {}), "Softshrink": ((0.2,), {}),
    "Hardshrink": ((0.2,), {}),
}


@pytest.mark.parametrize("case", sorted(MODULES))
def test_module_against_torch(case):
    torch = pytest.importorskip("torch")
    name = case.split("-")[0]
    args, kwargs = MODULES[case]
    ours = getattr(nn, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    ours.eval()
    theirs.eval()
    x = np.random.default_rng(2).standard_normal((2, 4, 3, 3))
    out = ours(oxmera.tensor(x, dtype=oxmera.float32))
    expected = theirs(torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_in_place_forms_write_into_the_input():
    for fn, expected in [(F.relu_, [0.0, 2.0]), (F.hardtanh_, [-1.0, 1.0]),
                         (lambda x: F.threshold_(x, 0.0, 5.0), [5.0, 2.0]),
                         (lambda x: F.leaky_relu_(x, 0.5), [-1.0, 2.0])]:
        x = oxmera.tensor([-2.0, 2.0])
        assert fn(x) is x
        assert x.tolist() == expected
    x = oxmera.tensor([-2.0, 2.0])
    nn.ReLU6(inplace=True)(x)
    assert x.tolist() == [0.0, 2.0]


def test_rrelu_draws_slopes_in_training_only():
    x = -oxmera.ones(1000)
    layer = nn.RReLU(0.1, 0.3)
    slopes = -layer(x).numpy()
    assert 0.1 <= slopes.min() and slopes.max() <= 0.3 and slopes.std() > 0.03
    assert np.allclose(-layer.eval()(x).numpy(), 0.2)


def test_errors():
    with pytest.raises(ValueError, match="min_val"):
        F.hardtanh(oxmera.ones(2), 2.0, 1.0)
    with pytest.raises(RuntimeError, match="halving dimension must be even"):
        F.glu(oxmera.ones(3))
    with pytest.raises(RuntimeError, match="mismatch of parameter numbers"):
        F.prelu(oxmera.ones(2, 3), oxmera.ones(2))
    with pytest.raises(RuntimeError, match="lambda must be greater or equal to 0"):
        F.softshrink(oxmera.ones(2), -1.0)
    with pytest.raises(ValueError, match="expected input of 3 or 4 dims"):
        nn.Softmax2d()(oxmera.ones(2, 2))
    with pytest.raises(TypeError, match="floating point"):
        F.hardswish(oxmera.tensor([1, 2]))
    x = oxmera.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        F.relu_(x)
    assert x.tolist() == [1.0, -1.0] and x._version == 0
