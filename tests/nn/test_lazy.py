"""Lazy layers (``oxmera.nn.modules.lazy``): materialized by the first input or a state dict,
compared with PyTorch's lazy layers (copied weights) where torch is installed."""
import numpy as np
import pytest

import oxmera
from oxmera import nn

#: (lazy name, constructor arguments, input shape, the layer it becomes)
LAYERS = [
    ("LazyLinear", (3,), (2, 5), "Linear"),
    ("LazyLinear", (4, False), (2, 3, 6), "Linear"),
    ("LazyConv1d", (4, 3), (2, 6, 9), "Conv1d"),
    ("LazyConv1d", (4, 3), (6, 9), "Conv1d"),            # unbatched
    ("LazyConv2d", (4, 3, 2, 1, 1, 2), (2, 6, 7, 7), "Conv2d"),
    ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4), "Conv3d"),
    ("LazyConvTranspose1d", (4, 3, 2), (2, 6, 5), "ConvTranspose1d"),
    ("LazyConvTranspose2d", (4, 3, 2, 1, 1), (2, 6, 5, 5), "ConvTranspose2d"),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3), "ConvTranspose3d"),
    ("LazyBatchNorm1d", (), (4, 3), "BatchNorm1d"),
    ("LazyBatchNorm2d", (1e-3, 0.2), (4, 3, 2, 2), "BatchNorm2d"),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2), "BatchNorm3d"),
    ("LazyInstanceNorm1d", (1e-5, 0.1, True, True), (4, 3, 5), "InstanceNorm1d"),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4), "InstanceNorm2d"),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2), "InstanceNorm3d"),
]


def _ids():
    return [f"{name}-{'x'.join(map(str, shape))}" for name, _, shape, _ in LAYERS]


@pytest.mark.parametrize("name,args,shape,becomes", LAYERS, ids=_ids())
def test_first_forward_materializes_as_the_plain_layer(name, args, shape, becomes):
    x = np.random.default_rng(0).normal(size=shape)
    oxmera.manual_seed(3)
    lazy = getattr(nn, name)(*args)
    assert lazy.has_uninitialized_params()
    out = lazy(oxmera.tensor(x, dtype=oxmera.float32))
    assert type(lazy) is getattr(nn, becomes)
    assert not hasattr(lazy, "_initialize_hook")
    for p in lazy.parameters():
        assert type(p) is nn.Parameter and p.requires_grad
    # the same random draws as the plain layer constructed at that moment
    if becomes == "Linear":
        channels = shape[-1]
    elif "Norm" in name or len(shape) == len(lazy.kernel_size) + 2:
        channels = shape[1]
    else:
        channels = shape[0]                     # an unbatched convolution input
    plain_args = (channels, *args)
    oxmera.manual_seed(3)
    plain = getattr(nn, becomes)(*plain_args)
    expected = plain(oxmera.tensor(x, dtype=oxmera.float32))     # moves running stats too
    for (key, a), (key_b, b) in zip(lazy.state_dict().items(), plain.state_dict().items()):
        assert key == key_b
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())


@pytest.mark.parametrize("name,args,shape,becomes", LAYERS, ids=_ids())
def test_against_torch(name, args, shape, becomes):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).normal(size=shape)
    ours = getattr(nn, name)(*args, dtype=oxmera.float64)
    theirs = getattr(torch.nn, name)(*args, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours(oxmera.tensor(x))
    expected = theirs(torch.tensor(x))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # a PyTorch state dict of the materialized layer loads and gives its outputs
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    ours.train(theirs.training)
    # the training forward above moved torch's running statistics once; ours loaded them
    if hasattr(theirs, "running_mean") and theirs.running_mean is not None:
        theirs.eval()
        ours.eval()
        expected = theirs(torch.tensor(x))
    np.testing.assert_allclose(ours(oxmera.tensor(x)).detach().numpy(),
                               expected.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_load_state_dict_materializes_before_any_forward():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Conv2d(3, 4, 3).double()
    ours = nn.LazyConv2d(4, 3, dtype=oxmera.float64)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert not ours.has_uninitialized_params() and tuple(ours.weight.shape) == (4, 3, 3, 3)
    x = np.random.default_rng(2).normal(size=(1, 3, 5, 5))
    out = ours(oxmera.tensor(x))
    assert type(ours) is nn.Conv2d
    np.testing.assert_allclose(out.detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)


def test_lazy_layers_in_a_model_train():
    model = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(),
                          nn.LazyLinear(2))
    x = oxmera.randn(3, 2, 5, 5)
    model(x)                                     # materialize, then make the optimizer
    optimizer = oxmera.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert [type(m).__name__ for m in model] == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten",
                                                 "Linear"]


def test_placeholders_refuse_their_shape():
    layer = nn.LazyLinear(3)
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        layer.weight.shape
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        layer.weight.size()
    assert repr(layer.weight) == "<UninitializedParameter>"
    norm = nn.LazyBatchNorm1d()
    assert isinstance(norm.running_mean, nn.UninitializedBuffer)
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        norm.running_mean.numel()


def test_wrong_input_rank_is_an_error():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input "
                                           r"to LazyConv2d, but got input of size: \(5, 5\)"):
        nn.LazyConv2d(4, 3)(oxmera.ones(5, 5))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(oxmera.ones(1, 3, 5))


def test_dtype_and_device_arguments():
    layer = nn.LazyLinear(2, dtype=oxmera.float64)
    layer(oxmera.ones(1, 3, dtype=oxmera.float64))
    assert layer.weight.dtype == oxmera.float64
    with pytest.raises(RuntimeError, match="CPU"):
        nn.LazyLinear(2, device="cuda")


def test_module_to_before_the_first_forward_sets_the_dtype():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).normal(size=(2, 3, 5, 5))
    ours = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d()).double()
    theirs = torch.nn.Sequential(torch.nn.LazyConv2d(4, 3), torch.nn.LazyBatchNorm2d()).double()
    assert ours[0].weight.dtype == oxmera.float64
    ours(oxmera.tensor(x))
    theirs(torch.tensor(x))
    for (key, a), (key_b, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        assert key == key_b and a.dtype == np.dtype(str(b.dtype).split(".")[1])
