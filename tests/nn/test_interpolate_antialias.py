"""``F.interpolate(antialias=True)`` (bilinear, bicubic) against PyTorch's anti-aliased resize,
and against closed forms without torch."""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F

CALLS = [
    ((2, 3, 17, 13), {"size": (5, 4)}),
    ((1, 2, 8, 8), {"scale_factor": 0.3}),
    ((1, 1, 5, 6), {"size": (11, 13)}),                      # upsampling
    ((1, 2, 9, 7), {"scale_factor": (0.5, 1.7)}),
    ((1, 1, 10, 10), {"size": (3, 3), "align_corners": True}),
    ((1, 1, 10, 10), {"size": (10, 10)}),
    ((1, 1, 7, 9), {"scale_factor": 0.45, "recompute_scale_factor": True}),
    ((1, 1, 20, 3), {"size": (1, 1)}),
]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("shape,kwargs", CALLS, ids=[str(c[1]) for c in CALLS])
def test_against_torch(mode, shape, kwargs):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).normal(size=shape)
    ours = F.interpolate(oxmera.tensor(x), mode=mode, antialias=True, **kwargs)
    theirs = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, antialias=True,
                                             **kwargs)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-13)
    x32 = x.astype(np.float32)
    ours = F.interpolate(oxmera.tensor(x32), mode=mode, antialias=True, **kwargs)
    theirs = torch.nn.functional.interpolate(torch.tensor(x32), mode=mode, antialias=True,
                                             **kwargs)
    assert ours.dtype == oxmera.float32
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_gradient_against_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).normal(size=(1, 2, 9, 11))
    w = np.random.default_rng(2).normal(size=(1, 2, 4, 3))
    ours = oxmera.tensor(x, requires_grad=True)
    (F.interpolate(ours, size=(4, 3), mode="bicubic", antialias=True) * oxmera.tensor(w)).sum() \
        .backward()
    theirs = torch.tensor(x, requires_grad=True)
    (torch.nn.functional.interpolate(theirs, size=(4, 3), mode="bicubic", antialias=True)
     * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-13)


def test_downsampling_by_an_integer_factor_is_a_triangle_average():
    # bilinear, factor 2: taps at distance 0.5 and 1.5 from the centre, weights 3/4 and 1/4
    # stretched by 2 -> (1 - 0.25, 1 - 0.75), normalized over the taps inside the row
    row = np.array([0.0, 4.0, 8.0, 4.0])
    out = F.interpolate(oxmera.tensor(row.reshape(1, 1, 1, 4)), size=(1, 2), mode="bilinear",
                        antialias=True).numpy().ravel()
    first = (0.75 * 0.0 + 0.75 * 4.0 + 0.25 * 8.0) / 1.75
    second = (0.25 * 4.0 + 0.75 * 8.0 + 0.75 * 4.0) / 1.75
    np.testing.assert_allclose(out, [first, second], rtol=1e-6)


def test_constant_input_stays_constant():
    out = F.interpolate(oxmera.full((1, 1, 13, 7), 2.5, dtype=oxmera.float64), size=(4, 9),
                        mode="bicubic", antialias=True)
    np.testing.assert_allclose(out.numpy(), 2.5, rtol=1e-14)


def test_other_modes_refuse_antialias():
    with pytest.raises(ValueError, match="anti-alias"):
        F.interpolate(oxmera.ones(1, 1, 4), size=2, mode="linear", antialias=True)
    with pytest.raises(ValueError, match="anti-alias"):
        F.interpolate(oxmera.ones(1, 1, 4, 4), size=2, mode="nearest", antialias=True)
