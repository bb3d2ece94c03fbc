"""F.interpolate / nn.Upsample*, pixel and channel shuffles.

Against torch (skipped without it): values to 1e-12 in float64 and
gradients over a sweep of sizes, scale factors and modes; the nearest
modes' indices exactly, float32 included. Without torch: closed forms
(linear interpolation of a linear ramp is exact, bicubic's weights sum
to 1, nearest with an integer factor repeats) and shuffles as round trips.
"""
import itertools
import warnings

import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn

F64 = oxmera.float64

_MODE_DIMS = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3),
              "linear": (1,), "bilinear": (2,), "bicubic": (2,), "trilinear": (3,)}
_SCALES = (0.3, 0.5, 0.77, 1.0, 1.3, 1.5, 2.0, 2.1, 2.5, 3.0, 1 / 3)


def _sweep(seed, count=24):
    """``(mode, input shape, kwargs)`` over modes, sizes and scale factors."""
    rng = np.random.default_rng(seed)
    cases = []
    for mode, dims in _MODE_DIMS.items():
        for d, trial in itertools.product(dims, range(count)):
            shape = (2, 2) + tuple(int(n) for n in rng.integers(1, 8, d))
            kwargs = {}
            if trial % 2:
                kwargs["size"] = tuple(int(n) for n in rng.integers(1, 11, d))
            else:
                kwargs["scale_factor"] = tuple(float(rng.choice(_SCALES)) for _ in range(d))
                if any(int(n * s) < 1 for n, s in zip(shape[2:], kwargs["scale_factor"])):
                    continue
                if trial % 4 == 0:
                    kwargs["recompute_scale_factor"] = True
            if mode not in ("nearest", "nearest-exact", "area"):
                kwargs["align_corners"] = trial % 3 == 0
            cases.append((mode, shape, kwargs))
    return cases


_SWEEP = _sweep(0)


@pytest.mark.parametrize("mode, shape, kwargs", _SWEEP,
                         ids=[f"{m}-{s}-{k}" for m, s, k in _SWEEP])
def test_interpolate_matches_torch_in_float64(mode, shape, kwargs):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    ours = oxmera.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out = F.interpolate(ours, mode=mode, **kwargs)
    expected = torch.nn.functional.interpolate(theirs, mode=mode, **kwargs)
    assert tuple(out.shape) == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=0,
                               atol=1e-12)
    seed = np.random.default_rng(1).standard_normal(tuple(out.shape))
    (out * oxmera.tensor(seed)).sum().backward()
    (expected * torch.tensor(seed)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nearest_indices_match_torch_exactly(dims, mode, dtype):
    torch = pytest.importorskip("torch")
    mismatches = []
    for n in range(1, 25):
        x = np.arange(n, dtype=dtype).reshape((1, 1) + (1,) * (dims - 1) + (n,))
        calls = [{"size": (1,) * (dims - 1) + (m,)} for m in range(1, 50)]
        calls += [{"scale_factor": (1.0,) * (dims - 1) + (s,)} for s in
                  (0.3, 0.5, 0.7, 1.3, 1.7, 2.0, 2.1, 2.3, 2.9, 3.3) if int(n * s) >= 1]
        for kwargs in calls:
            ours = F.interpolate(oxmera.tensor(x), mode=mode, **kwargs).numpy()
            theirs = torch.nn.functional.interpolate(torch.tensor(x), mode=mode,
                                                     **kwargs).numpy()
            if ours.shape != theirs.shape or not np.array_equal(ours, theirs):
                mismatches.append((n, kwargs))
    if dims != 2 and mode == "nearest-exact" and dtype == "float32":
        # Documented: torch's float32 1-D/3-D kernel rounds 3 of these differently.
        assert len(mismatches) <= 3, mismatches
    else:
        assert not mismatches


def test_linear_modes_reproduce_a_linear_ramp_and_bicubic_weights_sum_to_1():
    ramp = oxmera.tensor(np.arange(5.0).reshape(1, 1, 5), dtype=F64)
    out = F.interpolate(ramp, size=9, mode="linear", align_corners=True)
    np.testing.assert_allclose(out.numpy().ravel(), np.arange(9) / 2)
    flat = oxmera.ones(1, 1, 4, 5, dtype=F64)
    np.testing.assert_allclose(F.interpolate(flat, scale_factor=1.7, mode="bicubic").numpy(), 1.0,
                               atol=1e-14)
    x = oxmera.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    np.testing.assert_array_equal(F.interpolate(x, scale_factor=(2, 3)).numpy()[0, 0],
                                  np.repeat(np.repeat(x.numpy()[0, 0], 2, 0), 3, 1))


def test_bicubic_uses_a_minus_0_75():
    # One non-zero input at the centre: the output samples Keys' kernel with A = -0.75.
    x = np.zeros((1, 1, 1, 9))
    x[..., 4] = 1.0
    out = F.interpolate(oxmera.tensor(x), size=(1, 18), mode="bicubic").numpy().ravel()
    a = -0.75

    def keys(t):
        t = abs(t)
        if t <= 1:
            return ((a + 2) * t - (a + 3)) * t * t + 1
        return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a if t < 2 else 0.0
    source = (np.arange(18) + 0.5) / 2 - 0.5
    np.testing.assert_allclose(out, [keys(s - 4) for s in source], atol=1e-15)


def test_interpolate_is_differentiable_to_second_order():
    x = oxmera.tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 3)), dtype=F64,
                      requires_grad=True)
    assert oxmera.autograd.gradgradcheck(
        lambda t: F.interpolate(t, scale_factor=1.5, mode="bicubic") ** 2, (x,))


@pytest.mark.parametrize("call, error, match", [
    (lambda x: F.interpolate(x, size=4, scale_factor=2), ValueError,
     "only one of size or scale_factor"),
    (lambda x: F.interpolate(x), ValueError, "either size or scale_factor should be defined"),
    (lambda x: F.interpolate(x, size=(4, 4)), ValueError,
     "same number of spatial dimensions"),
    (lambda x: F.interpolate(x, size=4, align_corners=True), ValueError,
     "align_corners option can only be set with the interpolating modes"),
    (lambda x: F.interpolate(x, size=4, mode="bilinear"), NotImplementedError,
     "got 3D input, but bilinear mode needs 4D input"),
    (lambda x: F.interpolate(x, size=4, mode="cubic"), NotImplementedError, "got mode 'cubic'"),
    (lambda x: F.interpolate(x, size=4, recompute_scale_factor=True), ValueError,
     "recompute_scale_factor is not meaningful with an explicit size"),
    (lambda x: F.interpolate(x, scale_factor=0.1), RuntimeError,
     "sizes should be greater than 0"),
    (lambda x: F.interpolate(x[0], size=4), NotImplementedError, "got 2D"),
    (lambda x: F.interpolate(x, size=4, mode="linear", antialias=True),
     ValueError, "anti-alias option is restricted to bilinear, bicubic"),
    (lambda x: F.interpolate(x, size=4.5), TypeError, "expected size to be one of int"),
    (lambda x: F.pixel_shuffle(x, 2), RuntimeError,
     r"'channel' dimension to be divisible by the square of upscale_factor, but "
     r"input.size\(-3\)=1 is not divisible by 4"),
    (lambda x: F.pixel_shuffle(x[0], 2), RuntimeError, "at least 3 dimensions"),
    (lambda x: F.pixel_shuffle(x, 0), RuntimeError, "positive upscale_factor"),
    (lambda x: F.pixel_unshuffle(x, 2), RuntimeError,
     r"width to be divisible by downscale_factor, but input.size\(-1\)=3"),
    (lambda x: F.channel_shuffle(x, 4), RuntimeError,
     "number of channels must be divisible by groups. Got 2 channels and 4 groups"),
    (lambda x: F.channel_shuffle(x, 0), RuntimeError, "must be positive"),
])
def test_errors(call, error, match):
    x = oxmera.ones(1, 2, 3, requires_grad=True)
    with pytest.raises(error, match=match):
        call(x)
    assert x.grad is None


def test_shuffles_invert_each_other_and_keep_values():
    x = oxmera.tensor(np.random.default_rng(2).standard_normal((2, 3, 8, 4, 6)))
    np.testing.assert_array_equal(F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2).numpy(),
                                  x.numpy())
    # channel c * r * r + i * r + j becomes sub-pixel (i, j) of channel c
    shuffled = F.pixel_shuffle(x, 2).numpy()
    np.testing.assert_array_equal(shuffled[:, :, :, 1::2, 0::2], x.numpy()[:, :, 2::4])
    x = oxmera.arange(6.0).reshape(1, 6, 1)
    np.testing.assert_array_equal(F.channel_shuffle(x, 3).numpy().ravel(), [0, 2, 4, 1, 3, 5])
    np.testing.assert_array_equal(F.channel_shuffle(F.channel_shuffle(x, 3), 2).numpy(),
                                  x.numpy())


@pytest.mark.parametrize("fn, shape", [
    (lambda lib, x: lib.nn.functional.pixel_shuffle(x, 3), (2, 1, 18, 2, 3)),
    (lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2), (3, 2, 4, 6)),
    (lambda lib, x: lib.nn.functional.channel_shuffle(x, 3), (2, 6, 2, 3)),
    (lambda lib, x: lib.nn.functional.channel_shuffle(x, 2), (2, 4, 5)),
])
def test_shuffles_match_torch(fn, shape):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal(shape)
    np.testing.assert_array_equal(fn(oxmera, oxmera.tensor(x)).numpy(),
                                  fn(torch, torch.tensor(x)).numpy())


@pytest.mark.parametrize("build, shape", [
    (lambda n: n.Upsample(scale_factor=2), (1, 2, 3)),
    (lambda n: n.Upsample(size=(3, 5), mode="bilinear", align_corners=True), (1, 2, 4, 4)),
    (lambda n: n.Upsample(scale_factor=(1.5, 2), mode="bicubic"), (2, 1, 3, 4)),
    (lambda n: n.Upsample(scale_factor=1.7, mode="trilinear", recompute_scale_factor=True),
     (1, 1, 2, 3, 2)),
    (lambda n: n.Upsample(size=5, mode="nearest-exact"), (1, 1, 3)),
    (lambda n: n.UpsamplingNearest2d(scale_factor=3), (1, 2, 2, 3)),
    (lambda n: n.UpsamplingBilinear2d(size=(4, 7)), (1, 2, 3, 3)),
    (lambda n: n.PixelShuffle(2), (1, 8, 3, 2)),
    (lambda n: n.PixelUnshuffle(2), (1, 2, 4, 2)),
    (lambda n: n.ChannelShuffle(2), (2, 4, 3, 3)),
])
def test_modules_match_torch(build, shape):
    torch = pytest.importorskip("torch")
    ours, theirs = build(nn), build(torch.nn)
    assert repr(ours) == repr(theirs)
    x = np.random.default_rng(4).standard_normal(shape)
    np.testing.assert_allclose(ours(oxmera.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).numpy(), rtol=0, atol=1e-12)


def test_deprecated_upsample_functions_warn_and_interpolate():
    x = oxmera.tensor([[[[0.0, 3.0]]]])
    with pytest.warns(UserWarning, match="upsample_bilinear is deprecated"):
        out = F.upsample_bilinear(x, size=(1, 4))
    np.testing.assert_allclose(out.numpy().ravel(), [0, 1, 2, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.interpolate(x, size=(1, 4))


# -- affine_grid and grid_sample ---------------------------------------------------------------

def _grid_cases():
    rng = np.random.default_rng(5)
    cases = []
    for nd, mode, padding, corners in itertools.product(
            (2, 3), ("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"),
            (False, True)):
        if nd == 3 and mode == "bicubic":
            continue
        for _ in range(2):
            shape = (2, 3) + tuple(int(n) for n in rng.integers(1, 6, nd))
            grid = (2,) + tuple(int(n) for n in rng.integers(1, 5, nd)) + (nd,)
            cases.append((mode, padding, corners, shape, grid))
    return cases


_GRID_CASES = _grid_cases()


@pytest.mark.parametrize("mode, padding, corners, shape, grid_shape", _GRID_CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in _GRID_CASES])
def test_grid_sample_matches_torch(mode, padding, corners, shape, grid_shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(shape) + len(grid_shape))
    x, grid = rng.standard_normal(shape), rng.uniform(-1.6, 1.6, grid_shape)
    ours = [oxmera.tensor(a, requires_grad=True) for a in (x, grid)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, grid)]
    out = F.grid_sample(*ours, mode=mode, padding_mode=padding, align_corners=corners)
    expected = torch.nn.functional.grid_sample(*theirs, mode=mode, padding_mode=padding,
                                               align_corners=corners)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=0,
                               atol=1e-12)
    seed = rng.standard_normal(tuple(out.shape))
    (out * oxmera.tensor(seed)).sum().backward()
    (expected * torch.tensor(seed)).sum().backward()
    for a, b in zip(ours, theirs):
        got = np.zeros(b.shape) if a.grad is None else a.grad.numpy()
        np.testing.assert_allclose(got, b.grad.numpy(), rtol=0, atol=1e-11)


@pytest.mark.parametrize("size", [(2, 1, 3, 4), (2, 3, 1, 5), (2, 1, 2, 3, 4)])
@pytest.mark.parametrize("corners", [False, True])
def test_affine_grid_matches_torch(size, corners):
    torch = pytest.importorskip("torch")
    nd = len(size) - 2
    theta = np.random.default_rng(6).standard_normal((2, nd, nd + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # unit-size grids with align_corners warn in both
        ours = F.affine_grid(oxmera.tensor(theta), size, align_corners=corners)
        theirs = torch.nn.functional.affine_grid(torch.tensor(theta), size,
                                                 align_corners=corners)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=0, atol=1e-15)


def test_identity_affine_grid_samples_the_input_back():
    x = oxmera.tensor(np.random.default_rng(7).standard_normal((2, 3, 4, 5)))
    theta = oxmera.tensor(np.tile(np.eye(2, 3), (2, 1, 1)))
    for corners in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 5), align_corners=corners)
        for mode in ("bilinear", "nearest", "bicubic"):
            np.testing.assert_allclose(
                F.grid_sample(x, grid, mode=mode, align_corners=corners).numpy(), x.numpy(),
                atol=1e-12)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.grid_sample(oxmera.ones(1, 1, 2, 2), oxmera.ones(1, 2, 2, 3),
                           align_corners=False), RuntimeError,
     "expected grid to have size 2 in last dimension"),
    (lambda: F.grid_sample(oxmera.ones(2, 1, 2, 2), oxmera.ones(1, 2, 2, 2),
                           align_corners=False), RuntimeError, "same batch size"),
    (lambda: F.grid_sample(oxmera.ones(1, 1, 2, 2), oxmera.ones(1, 2, 2, 2, 2),
                           align_corners=False), RuntimeError, "same number of dimensions"),
    (lambda: F.grid_sample(oxmera.ones(1, 1, 2, 2, 2), oxmera.ones(1, 2, 2, 2, 3),
                           mode="bicubic", align_corners=False), RuntimeError,
     "bicubic interpolation only supports 4D input"),
    (lambda: F.grid_sample(oxmera.ones(1, 1, 2, 2), oxmera.ones(1, 2, 2, 2), mode="area"),
     ValueError, "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
    (lambda: F.grid_sample(oxmera.ones(1, 1, 2, 2), oxmera.ones(1, 2, 2, 2),
                           padding_mode="wrap"), ValueError, "expected padding_mode"),
    (lambda: F.affine_grid(oxmera.ones(1, 2, 3), (1, 1, 2, 2, 2), align_corners=False),
     ValueError, r"expected a batch of 3D affine matrices of shape Nx3x4"),
    (lambda: F.affine_grid(oxmera.ones(1, 2, 3), (1, 2, 3), align_corners=False),
     NotImplementedError, "only supports 4D and 5D sizes"),
    (lambda: F.affine_grid(oxmera.ones(1, 2, 3, dtype=oxmera.int64), (1, 1, 2, 2),
                           align_corners=False), ValueError, "floating point type"),
    (lambda: F.affine_grid(oxmera.ones(1, 2, 3), (1, 1, 0, 2), align_corners=False),
     ValueError, "non-zero, positive output size"),
])
def test_grid_errors(call, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=match):
            call()


def test_missing_align_corners_warns_and_means_false():
    x, grid = oxmera.ones(1, 1, 2, 2), oxmera.zeros(1, 1, 1, 2)
    with pytest.warns(UserWarning, match="align_corners=False"):
        out = F.grid_sample(x, grid)
    np.testing.assert_allclose(out.numpy(), F.grid_sample(x, grid, align_corners=False).numpy())
