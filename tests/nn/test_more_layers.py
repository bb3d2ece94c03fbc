"""Normalization, dropout, padding, distance and parameter-container layers against PyTorch.

Reprs, state_dict keys, outputs and gradients with the same weights (float64),
train/eval behaviour, running statistics, and errors.
"""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn

LAYERS = {
    "GroupNorm": ((2, 4), (3, 4, 5)),
    "GroupNorm-noaffine": ((1, 4, 1e-3, False), (3, 4, 5)),
    "InstanceNorm1d": ((4,), (3, 4, 5)),
    "InstanceNorm1d-unbatched": ((4,), (4, 5)),
    "InstanceNorm2d-affine": ((4, 1e-5, 0.1, True, True), (2, 4, 3, 3)),
    "InstanceNorm3d": ((4,), (2, 4, 2, 2, 2)),
    "BatchNorm3d": ((4,), (2, 4, 2, 2, 2)),
    "RMSNorm": ((5,), (3, 4, 5)),
    "RMSNorm-two": (((4, 5), 1e-5, False), (3, 4, 5)),
    "LocalResponseNorm": ((3,), (2, 4, 5)),
    "CosineSimilarity": ((), (3, 4, 5)),
    "PairwiseDistance": ((), (3, 4, 5)),
    "ZeroPad2d": ((2,), (1, 2, 3, 3)),
    "ConstantPad1d": (((1, 2), 3.5), (2, 3, 4)),
    "ConstantPad3d": ((1, 0.5), (1, 2, 2, 2)),
    "ReflectionPad1d": (((2, 1),), (2, 3, 4)),
    "ReflectionPad2d": ((1,), (1, 2, 3, 3)),
    "ReplicationPad2d": (((1, 0, 2, 1),), (2, 3, 3)),
    "ReplicationPad3d": ((1,), (1, 1, 2, 2, 2)),
    "CircularPad1d": ((2,), (2, 3, 4)),
    "CircularPad2d": ((1,), (1, 1, 3, 3)),
    "Dropout1d": ((0.5,), (2, 3, 4)),
    "Dropout2d": ((0.5,), (2, 3, 2, 2)),
    "AlphaDropout": ((0.3,), (2, 3, 4)),
    "FeatureAlphaDropout": ((0.3,), (2, 3, 4)),
}


@pytest.mark.parametrize("case", sorted(LAYERS))
def test_layer_against_torch(case):
    torch = pytest.importorskip("torch")
    name = case.split("-")[0]
    args, shape = LAYERS[case]
    theirs = getattr(torch.nn, name)(*args).double()
    ours = getattr(nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    if ours.state_dict():
        ours.load_state_dict({k: oxmera.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        for p in ours.parameters():
            with oxmera.no_grad():
                p.copy_(p + oxmera.tensor(np.linspace(0.1, 0.5, p.numel()).reshape(p.shape)))
        theirs.load_state_dict({k: torch.tensor(v.numpy(force=True))
                                for k, v in ours.state_dict().items()})
    if "Dropout" in name:
        ours.eval()
        theirs.eval()
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(shape)]
    if name in ("CosineSimilarity", "PairwiseDistance"):
        inputs.append(rng.standard_normal(shape))
    o_in = [oxmera.tensor(a, requires_grad=True) for a in inputs]
    t_in = [torch.tensor(a, requires_grad=True) for a in inputs]
    out, expected = ours(*o_in), theirs(*t_in)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    g = rng.standard_normal(expected.shape)
    (out * oxmera.tensor(g)).sum().backward()
    (expected * torch.tensor(g)).sum().backward()
    for a, b in zip(o_in, t_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-11)
    for (key, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=1e-11, err_msg=key)
    for key, buffer in ours.named_buffers():
        np.testing.assert_allclose(buffer.numpy(force=True),
                                   dict(theirs.named_buffers())[key].numpy(), atol=1e-12)


def test_instance_norm_running_statistics_as_torch():
    torch = pytest.importorskip("torch")
    ours = nn.InstanceNorm1d(3, track_running_stats=True, dtype=oxmera.float64)
    theirs = torch.nn.InstanceNorm1d(3, track_running_stats=True).double()
    x = np.random.default_rng(1).standard_normal((4, 3, 6))
    for _ in range(3):
        ours(oxmera.tensor(x))
        theirs(torch.tensor(x))
    np.testing.assert_allclose(ours.running_var.numpy(), theirs.running_var.numpy())
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(oxmera.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), atol=1e-12)


def test_channel_dropout_zeroes_whole_channels_and_scales():
    oxmera.manual_seed(0)
    out = nn.Dropout2d(0.5)(oxmera.ones(8, 16, 3, 3)).numpy()
    per_channel = out.reshape(8 * 16, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.std(1) == 0).all()
    assert 0.3 < (per_channel[:, 0] == 0).mean() < 0.7


def test_alpha_dropout_keeps_mean_and_variance():
    oxmera.manual_seed(1)
    x = F.selu(oxmera.randn(200000, dtype=oxmera.float64))
    out = F.alpha_dropout(x, 0.3, training=True)
    assert abs(out.mean().item() - x.mean().item()) < 0.01
    assert abs(out.std().item() - x.std().item()) < 0.01


def test_parameter_containers():
    torch = pytest.importorskip("torch")
    ours = nn.ParameterList([nn.Parameter(oxmera.zeros(2)), oxmera.ones(3)])
    theirs = torch.nn.ParameterList([torch.nn.Parameter(torch.zeros(2)), torch.ones(3)])
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ours)
    ours.append(oxmera.zeros(1))
    assert len(ours) == 3 and len(list(ours[1:])) == 2
    d = nn.ParameterDict({"a": oxmera.zeros(2)})
    d["b"] = oxmera.ones(1)
    assert list(d) == ["a", "b"] and "a" in d and d.get("c") is None
    assert d.pop("a").shape == (2,) and list(d.state_dict()) == ["b"]
    with pytest.raises(KeyError):
        d["a"]
    model = nn.Module()
    model.scales = nn.ParameterDict({"x": oxmera.ones(2)})
    assert [n for n, _ in model.named_parameters()] == ["scales.x"]


def test_errors():
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(oxmera.ones(2, 4, 3), 3)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.InstanceNorm1d(3)(oxmera.ones(3))
    with pytest.raises(ValueError, match="to match num_features"):
        nn.InstanceNorm1d(3, affine=True)(oxmera.ones(2, 4, 5))
    with pytest.raises(ValueError, match="expected 5D input"):
        nn.BatchNorm3d(2)(oxmera.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="normalized_shape"):
        F.rms_norm(oxmera.ones(2, 3), (4,))
    with pytest.raises(ValueError, match="padding must be"):
        nn.ReflectionPad2d((1, 2, 3))
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout2d(oxmera.ones(1, 2, 2, 2), p=1.5)
