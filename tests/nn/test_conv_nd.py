"""Conv3d, the transposed convolutions, padding strings and modes, Fold/Unfold.

Modules are compared with torch (skipped without it) with the same float64
weights: outputs, input and parameter gradients, and the second derivative
through a gradient. Without torch, the transposed convolution is checked to
be the adjoint of the convolution, and unfold a loop over blocks.
"""
import itertools

import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn
from oxmera.autograd import gradcheck, gradgradcheck

F64 = oxmera.float64


def _rng(seed):
    return np.random.default_rng(seed)


def _randn(*shape, seed=0):
    return oxmera.tensor(_rng(seed).standard_normal(shape), dtype=F64)


def _randomize(module, seed=1):
    rng = _rng(seed)
    with oxmera.no_grad():
        for p in module.parameters():
            p.copy_(oxmera.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
    return module


# -- without torch ----------------------------------------------------------------------------

@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("stride, padding, output_padding, dilation, groups", [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 2), (3, 2, 2, 2, 1), (1, 1, 1, 2, 2)])
def test_conv_transpose_is_the_adjoint_of_conv(nd, stride, padding, output_padding, dilation,
                                               groups):
    # <conv_transpose(y, w), x> == <y, conv(x, w)> for x of the transpose's output shape;
    # where output_padding >= stride the convolution has more positions than y: the
    # transpose only reaches the first ones.
    conv = getattr(F, f"conv{nd}d")
    transpose = getattr(F, f"conv_transpose{nd}d")
    y = _randn(2, 4, *(3,) * nd, seed=1)
    w = _randn(4, 6 // groups, *(2,) * nd, seed=2)
    out = transpose(y, w, None, stride, padding, output_padding, groups, dilation)
    x = _randn(*out.shape, seed=3)
    forward = conv(x, w, None, stride, padding, dilation, groups)
    forward = forward[(Ellipsis,) + tuple(slice(0, 3) for _ in range(nd))]
    assert tuple(forward.shape) == tuple(y.shape)
    np.testing.assert_allclose(float((out * x).sum()), float((y * forward).sum()), rtol=1e-12)


def test_conv_transpose_output_size_formula():
    out = F.conv_transpose2d(oxmera.ones(1, 2, 5, 4), oxmera.ones(2, 3, 3, 2), stride=(2, 3),
                             padding=(1, 0), output_padding=(1, 2), dilation=(1, 2))
    # (n - 1) * s - 2p + d (k - 1) + op + 1
    assert tuple(out.shape) == (1, 3, 4 * 2 - 2 + 2 + 1 + 1, 3 * 3 + 2 + 2 + 1)


def test_conv3d_matches_a_loop_over_kernel_positions():
    x, w, b = _randn(2, 4, 4, 5, 3, seed=1), _randn(6, 2, 2, 3, 2, seed=2), _randn(6, seed=3)
    out = F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1), dilation=(2, 1, 1), groups=2)
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (0, 0), (1, 1)))
    ref = np.zeros(tuple(out.shape)) + b.numpy()[:, None, None, None]
    for g in range(2):
        for i, j, k in itertools.product(range(2), range(3), range(2)):
            patch = xp[:, 2 * g:2 * g + 2, 2 * i:2 * i + ref.shape[2],
                       j:j + 2 * ref.shape[3] - 1:2, k:k + ref.shape[4]]
            ref[:, 3 * g:3 * g + 3] += np.einsum("ncdhw,oc->nodhw", patch,
                                                 w.numpy()[3 * g:3 * g + 3, :, i, j, k])
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_unfold_matches_a_loop_over_blocks_and_fold_is_its_adjoint():
    x = _randn(2, 3, 5, 6, seed=4)
    cols = F.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)))
    blocks = [(r, c) for r in range(0, 7 - 2, 1) for c in range(0, 8 - 2, 2)]
    ref = np.stack([xp[:, :, r:r + 3:2, c:c + 3].reshape(2, -1) for r, c in blocks], axis=-1)
    np.testing.assert_allclose(cols.numpy(), ref)
    y = _randn(*cols.shape, seed=5)
    folded = F.fold(y, (5, 6), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))
    np.testing.assert_allclose(float((folded * x).sum()), float((y * cols).sum()), rtol=1e-12)


@pytest.mark.parametrize("module, shape", [
    (lambda: nn.Conv3d(2, 4, (2, 3, 2), stride=(2, 1, 1), padding=1, padding_mode="reflect"),
     (1, 2, 3, 4, 3)),
    (lambda: nn.Conv3d(2, 2, (2, 3, 2), padding="same", padding_mode="circular"),
     (1, 2, 2, 3, 3)),
    (lambda: nn.ConvTranspose1d(2, 4, 3, stride=2, padding=1, output_padding=1, groups=2),
     (2, 2, 3)),
    (lambda: nn.ConvTranspose2d(2, 2, 2, stride=2, dilation=(1, 2)), (1, 2, 2, 2)),
    (lambda: nn.ConvTranspose3d(1, 2, 2, stride=(1, 2, 1), output_padding=(0, 1, 0)),
     (1, 1, 2, 2, 2)),
])
def test_modules_are_differentiable_to_second_order(module, shape):
    layer = _randomize(module().double())
    x = _randn(*shape, seed=9).requires_grad_()
    assert gradcheck(layer, (x,))
    assert gradgradcheck(layer, (x,))


def test_conv_transpose_module_output_size_picks_the_output_padding():
    up = nn.ConvTranspose2d(3, 2, 3, stride=(2, 3), padding=1)
    x = oxmera.randn(1, 3, 4, 5)
    assert tuple(up(x).shape) == (1, 2, 7, 13)
    assert tuple(up(x, output_size=(8, 15)).shape) == (1, 2, 8, 15)
    assert tuple(up(x, output_size=[1, 2, 8, 14]).shape) == (1, 2, 8, 14)
    assert tuple(up(x[0], output_size=(2, 8, 14)).shape) == (2, 8, 14)
    with pytest.raises(ValueError, match=r"requested an output size of \[9, 13\], but valid "
                                         r"sizes range from \[7, 13\] to \[8, 15\]"):
        up(x, output_size=(9, 13))
    with pytest.raises(ValueError, match="ConvTranspose2D: for 4D input, output_size must have "
                                         "2 or 4 elements"):
        up(x, output_size=(8,))


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.conv_transpose2d(oxmera.ones(1, 3, 4, 4), oxmera.ones(2, 2, 3, 3)),
     RuntimeError, r"conv_transpose2d\(\).*weight of shape \(2, 2, 3, 3\), expected input of "
                   r"shape \(1, 3, 4, 4\) to have 2 channels, but got 3"),
    (lambda: F.conv_transpose1d(oxmera.ones(1, 2, 4), oxmera.ones(2, 2, 3), stride=2,
                                output_padding=2),
     RuntimeError, "output padding must be smaller than either stride or dilation"),
    (lambda: F.conv_transpose1d(oxmera.ones(1, 2, 4), oxmera.ones(2, 2, 3), oxmera.ones(3)),
     RuntimeError, r"expected bias of shape \(2,\)"),
    (lambda: F.conv_transpose2d(oxmera.ones(1, 4, 2, 2), oxmera.ones(4, 1, 3, 3), groups=3),
     RuntimeError, "not divisible by groups=3"),
    (lambda: F.conv_transpose2d(oxmera.ones(1, 1, 1, 1), oxmera.ones(1, 1, 1, 1), padding=1),
     RuntimeError, "output size per channel .* is too small"),
    (lambda: F.conv_transpose3d(oxmera.ones(1, 1, 3, 3, 3), oxmera.ones(1, 1, 2, 2)),
     RuntimeError, r"expected a 5-D weight \(in_channels, out_channels / groups, kT, kH, kW\)"),
    (lambda: F.conv_transpose2d(oxmera.ones(4, 4), oxmera.ones(4, 1, 3, 3)),
     RuntimeError, r"expected a 3-D \(unbatched\) or 4-D \(batched\) input"),
    (lambda: F.conv_transpose2d(oxmera.ones(1, 1, 3, 3), oxmera.ones(1, 1, 2, 2),
                                padding="same"),
     TypeError, "takes no padding string"),
    (lambda: F.conv3d(oxmera.ones(1, 2, 3, 3, 3), oxmera.ones(1, 2, 2, 2, 2), stride=2,
                      padding="same"),
     RuntimeError, "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv3d(oxmera.ones(2, 3, 3), oxmera.ones(1, 2, 2, 2, 2)),
     RuntimeError, r"expected a 4-D \(unbatched\) or 5-D \(batched\) input"),
    (lambda: F.conv3d(oxmera.ones(1, 2, 3, 3, 3), oxmera.ones(1, 2, 2, 2)),
     RuntimeError, r"expected a 5-D weight \(out_channels, in_channels / groups, kT, kH, kW\)"),
    (lambda: F.unfold(oxmera.ones(1, 1, 2, 2), 3), RuntimeError,
     r"unfold\(\).*sliding blocks as \(0, 0\), but its components must be at least one"),
    (lambda: F.fold(oxmera.ones(1, 5, 9), (4, 4), 2), RuntimeError,
     r"fold\(\).*divisible by the product of kernel_size"),
    (lambda: F.fold(oxmera.ones(1, 4, 8), (4, 4), 2), RuntimeError,
     r"fold\(\).*number of sliding blocks 3 \* 3 = 9, but got input.size\(2\)=8"),
    (lambda: nn.ConvTranspose2d(1, 1, 3, padding_mode="reflect"), ValueError,
     "Only 'zeros' padding mode is supported for ConvTranspose2d"),
    (lambda: nn.ConvTranspose1d(1, 1, 3, padding="same"), ValueError, "no padding string"),
    (lambda: nn.Conv3d(1, 1, 3, stride=2, padding="same"), ValueError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: nn.Conv3d(1, 1, 3, padding_mode="mirror"), ValueError, "padding_mode must be"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_failed_calls_record_nothing():
    x = oxmera.ones(1, 3, 4, 4, requires_grad=True)
    with pytest.raises(RuntimeError):
        F.conv_transpose2d(x, oxmera.ones(2, 2, 3, 3))
    assert x.grad is None and x._version == 0


# -- against torch ---------------------------------------------------------------------------

def _torch_module_cases():
    return [
        ("Conv3d", lambda n: n.Conv3d(4, 6, (3, 2, 2), stride=(1, 2, 1), padding=(1, 0, 1),
                                      dilation=(1, 1, 2), groups=2), [(2, 4, 4, 5, 5)]),
        ("Conv3d_unbatched", lambda n: n.Conv3d(2, 3, 2, bias=False), [(2, 3, 3, 4)]),
        ("ConvTranspose1d", lambda n: n.ConvTranspose1d(4, 6, 3, stride=3, padding=2,
                                                        output_padding=1, groups=2,
                                                        dilation=2), [(2, 4, 6)]),
        ("ConvTranspose2d", lambda n: n.ConvTranspose2d(3, 4, (3, 2), stride=(2, 1),
                                                        padding=(1, 0), output_padding=(1, 0)),
         [(2, 3, 4, 5)]),
        ("ConvTranspose2d_dilation_op", lambda n: n.ConvTranspose2d(2, 2, 2, padding=1,
                                                                    output_padding=1,
                                                                    dilation=2),
         [(2, 4, 3)]),
        ("ConvTranspose3d", lambda n: n.ConvTranspose3d(2, 4, 2, stride=2, groups=2),
         [(1, 2, 2, 3, 2)]),
        ("Unfold", lambda n: n.Unfold((2, 3), dilation=(1, 2), padding=1, stride=2),
         [(2, 3, 5, 6)]),
        ("Fold", lambda n: n.Fold((4, 5), 2), [(2, 12, 12)]),
        ("Sequential_up_down", lambda n: n.Sequential(
            n.Conv2d(2, 4, 3, stride=2, padding=1), n.Tanh(),
            n.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1)),
         [(2, 2, 6, 6)]),
    ]


def _padding_cases():
    cases = []
    for nd, mode in itertools.product((1, 2, 3), ("zeros", "reflect", "replicate", "circular")):
        for padding in (1, "same", "valid", (2, 0, 1)[:nd]):
            if padding == (2,):     # 1-D: a padding 2 needs an input longer than 2 to reflect
                padding = 2
            cases.append((f"Conv{nd}d_{mode}_{padding}", nd, mode, padding))
    return cases


_MODULE_CASES = _torch_module_cases() + [
    (name, (lambda n, nd=nd, mode=mode, padding=padding: getattr(n, f"Conv{nd}d")(
        2, 4, (2, 3, 2)[:nd] if padding == "same" else 3, padding=padding,
        padding_mode=mode, dilation=(1, 2, 1)[:nd] if padding == "same" else 1)),
     [(2, 2) + (5, 6, 4)[:nd]]) for name, nd, mode, padding in _padding_cases()]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("name, build, shapes", _MODULE_CASES, ids=[c[0] for c in _MODULE_CASES])
def test_modules_match_torch_with_copied_weights(name, build, shapes):
    torch = pytest.importorskip("torch")
    ox = _randomize(build(nn).double())
    tm = build(torch.nn).double()
    tm.load_state_dict({k: torch.tensor(v.numpy().copy()) for k, v in ox.state_dict().items()})
    assert repr(ox) == repr(tm)
    xs = [_randn(*shape, seed=i).requires_grad_() for i, shape in enumerate(shapes)]
    ts = [torch.tensor(x.detach().numpy().copy(), requires_grad=True) for x in xs]
    ox_out, tm_out = ox(*xs), tm(*ts)
    np.testing.assert_allclose(ox_out.detach().numpy(), tm_out.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    seed = _rng(7).standard_normal(tuple(ox_out.shape))
    ox_params, tm_params = list(ox.parameters()), list(tm.parameters())
    ox_grads = oxmera.autograd.grad((ox_out * oxmera.tensor(seed)).sum(), xs + ox_params,
                                    create_graph=True)
    tm_grads = torch.autograd.grad((tm_out * torch.tensor(seed)).sum(), ts + tm_params,
                                   create_graph=True)
    for a, b in zip(ox_grads, tm_grads):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                                   atol=1e-11)
    if not tm_grads[0].requires_grad:
        return      # a linear layer without parameters: its gradient is constant
    # Second order: the gradient of the input gradient's squared norm.
    ox_second = oxmera.autograd.grad((ox_grads[0] ** 2).sum(), xs + ox_params,
                                     allow_unused=True)
    tm_second = torch.autograd.grad((tm_grads[0] ** 2).sum(), ts + tm_params, allow_unused=True)
    for a, b, like in zip(ox_second, tm_second, ts + tm_params):
        # Unreached (None) and an all-zero gradient mean the same.
        a = np.zeros(tuple(like.shape)) if a is None else a.numpy()
        b = np.zeros(tuple(like.shape)) if b is None else b.numpy()
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("cls, args", [
    ("Conv3d", (4, 6, 3)), ("ConvTranspose1d", (4, 6, 3)), ("ConvTranspose2d", (4, 6, (2, 3))),
    ("ConvTranspose3d", (6, 4, 2))])
def test_parameter_shapes_and_initialization_match_torch(cls, args):
    torch = pytest.importorskip("torch")
    ox, tm = getattr(nn, cls)(*args, groups=2), getattr(torch.nn, cls)(*args, groups=2)
    for (key, p), (tkey, tp) in zip(ox.named_parameters(), tm.named_parameters()):
        assert key == tkey and tuple(p.shape) == tuple(tp.shape)
    # kaiming_uniform(a=sqrt(5)) on the weight: bound 1/sqrt(fan_in), fan_in from dim 1.
    fan_in = ox.weight.shape[1] * int(np.prod(ox.weight.shape[2:]))
    assert np.abs(ox.weight.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
    assert np.abs(ox.bias.detach().numpy()).max() <= 1 / np.sqrt(fan_in)


def test_conv_tbc_matches_torch_and_checks_shapes():
    torch = pytest.importorskip("torch")
    rng = _rng(12)
    x, w, b = rng.standard_normal((6, 2, 3)), rng.standard_normal((3, 3, 4)), rng.standard_normal(4)
    ours = F.conv_tbc(oxmera.tensor(x), oxmera.tensor(w), oxmera.tensor(b), 2)
    theirs = torch.conv_tbc(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="bias size must equal dim 2"):
        F.conv_tbc(oxmera.tensor(x), oxmera.tensor(w), oxmera.ones(3))
    with pytest.raises(RuntimeError, match="input channels"):
        F.conv_tbc(oxmera.tensor(x), oxmera.ones(3, 2, 4), oxmera.tensor(b))
