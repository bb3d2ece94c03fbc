"""``F.linear_cross_entropy`` and ``nn.LinearCrossEntropyLoss`` against PyTorch 2.13's (copied
weights; skipped without torch) and against ``cross_entropy(linear(...))``."""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn

CASES = [
    # (input shape, linear weight shape, target kind, keyword arguments)
    ((6, 5), (4, 5), "indices", {}),
    ((6, 5), (4, 5), "indices", {"reduction": "none", "ignore_index": 2}),
    ((6, 5), (4, 5), "indices", {"label_smoothing": 0.3, "reduction": "sum"}),
    ((5,), (4, 5), "indices", {}),
    ((6, 5), (4, 5), "probabilities", {"label_smoothing": 0.1}),
    ((3, 5), (4, 2, 3, 5), "indices", {"reduction": "none"}),
    ((3, 5), (4, 2, 5), "probabilities", {}),
]


def _inputs(lib, shapes, kind, bias, class_weight, seed=0):
    input_shape, weight_shape = shapes
    rng = np.random.default_rng(seed)
    x, w = rng.normal(size=input_shape), rng.normal(size=weight_shape)
    classes, out_features = weight_shape[0], weight_shape[1:-1]
    batch = input_shape[:-1]
    if kind == "indices":
        target = lib.tensor(rng.integers(0, classes, batch + out_features))
    else:
        p = rng.random(batch + (classes,) + out_features)
        target = lib.tensor(p / p.sum(len(batch), keepdims=True))
    b = lib.tensor(rng.normal(size=(classes,) + out_features), requires_grad=True) if bias \
        else None
    cw = lib.tensor(rng.uniform(0.5, 2.0, classes)) if class_weight else None
    return (lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True), target, b, cw)


@pytest.mark.parametrize("bias,class_weight", [(False, False), (True, True)])
@pytest.mark.parametrize("input_shape,weight_shape,kind,kwargs", CASES)
def test_functional_against_torch(input_shape, weight_shape, kind, kwargs, bias, class_weight):
    torch = pytest.importorskip("torch")
    results = []
    for lib, fn in ((oxmera, F.linear_cross_entropy),
                    (torch, torch.nn.functional.linear_cross_entropy)):
        x, w, target, b, cw = _inputs(lib, (input_shape, weight_shape), kind, bias,
                                      class_weight)
        loss = fn(x, w, target, linear_bias=b, weight=cw, **kwargs)
        loss.sum().backward()
        grads = [t.grad for t in (x, w, b) if t is not None]
        results.append([loss.detach().numpy()] + [g.numpy() for g in grads])
    for ours, theirs in zip(*results):
        assert ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-13)


def test_equals_cross_entropy_of_linear():
    x, w, target, b, cw = _inputs(oxmera, ((6, 5), (4, 5)), "indices", True, True)
    expected = F.cross_entropy(F.linear(x, w, b), target, weight=cw)
    assert F.linear_cross_entropy(x, w, target, linear_bias=b, weight=cw).item() == \
        pytest.approx(expected.item(), rel=1e-14)


@pytest.mark.parametrize("out_features,bias", [((), False), ((2, 3), True)])
def test_module_against_torch(out_features, bias):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.LinearCrossEntropyLoss(5, 4, out_features=out_features, bias=bias,
                                             dtype=torch.float64, label_smoothing=0.1)
    ours = nn.LinearCrossEntropyLoss(5, 4, out_features=out_features, bias=bias,
                                     dtype=oxmera.float64, label_smoothing=0.1)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 5))
    target = rng.integers(0, 4, (3, *out_features))
    a = ours(oxmera.tensor(x), oxmera.tensor(target))
    b = theirs(torch.tensor(x), torch.tensor(target))
    a.backward()
    b.backward()
    assert a.item() == pytest.approx(b.item(), rel=1e-12)
    np.testing.assert_allclose(ours.linear.weight.grad.numpy(),
                               theirs.linear.weight.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_errors_as_torch():
    x, w = oxmera.ones(2, 3), oxmera.ones(4, 3)
    target = oxmera.tensor([0, 1])
    with pytest.raises(RuntimeError, match="dimensionality 1 or 2, got 3"):
        F.linear_cross_entropy(oxmera.ones(1, 2, 3), w, target)
    with pytest.raises(RuntimeError, match="at least 2, got 1"):
        F.linear_cross_entropy(x, oxmera.ones(3), target)
    with pytest.raises(RuntimeError, match="got 3 and 2, respectively"):
        F.linear_cross_entropy(x, oxmera.ones(4, 2), target)
    with pytest.raises(RuntimeError, match=r"expected linear_bias shape \(4,\), got \(3,\)"):
        F.linear_cross_entropy(x, w, target, linear_bias=oxmera.ones(3))
    with pytest.raises(RuntimeError, match="requires batched input"):
        F.linear_cross_entropy(oxmera.ones(3), oxmera.ones(4, 2, 3), oxmera.tensor(0))
    with pytest.raises(RuntimeError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(x, w, oxmera.ones(2, 4) / 4, ignore_index=1)
    with pytest.raises(NotImplementedError, match="chunked path"):
        F.linear_cross_entropy(x, w, target, options=object())
    with pytest.raises(RuntimeError, match=r"expected weight shape to be \(4,\)"):
        nn.LinearCrossEntropyLoss(3, 4, weight=oxmera.ones(3))
    with pytest.raises(RuntimeError, match="label_smoothing to be in range"):
        nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)
