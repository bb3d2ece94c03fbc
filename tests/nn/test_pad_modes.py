"""F.pad in every mode against torch, negative amounts (crops) included.

Reflect and replicate with a negative amount are the padded original,
cropped: the limits are checked against the original size. Circular wraps
what is left after cropping, as torch does; where torch would wrap more than
once (it then reads memory it never wrote) oxmera raises instead.
"""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F


def _cases():
    rng = np.random.default_rng(0)
    cases = []
    for mode in ("constant", "reflect", "replicate", "circular"):
        for dims in (1, 2, 3):
            shape = (2, 2) + tuple(int(n) for n in rng.integers(1, 5, dims))
            for _ in range(25):
                cases.append((mode, shape, tuple(int(a) for a in rng.integers(-3, 5, 2 * dims))))
    return cases


_CASES = _cases()


@pytest.mark.parametrize("mode, shape, amounts", _CASES,
                         ids=[f"{m}-{s}-{a}" for m, s, a in _CASES])
def test_pad_matches_torch(mode, shape, amounts):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal(shape)
    try:
        expected = torch.nn.functional.pad(torch.tensor(x), amounts, mode=mode).numpy()
    except RuntimeError:
        expected = None
    ours = oxmera.tensor(x, requires_grad=True)
    if expected is None:
        with pytest.raises(RuntimeError):
            F.pad(ours, amounts, mode=mode)
        return
    if mode == "circular" and any(
            max(before, after) > n + min(before, 0) + min(after, 0)
            for n, before, after in zip(shape[::-1], amounts[::2], amounts[1::2])):
        with pytest.raises(RuntimeError, match="at most the dim"):
            F.pad(ours, amounts, mode=mode)
        return
    out = F.pad(ours, amounts, mode=mode)
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    # The gradient sums over every output position an element fills.
    theirs = torch.tensor(x, requires_grad=True)
    seed = np.random.default_rng(2).standard_normal(expected.shape)
    (out * oxmera.tensor(seed)).sum().backward()
    (torch.nn.functional.pad(theirs, amounts, mode=mode) * torch.tensor(seed)).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_negative_reflect_padding_mirrors_about_the_original_edge():
    x = oxmera.tensor([[0.0, 1.0, 2.0, 3.0]])
    # Crop 2 at the start, pad 3 at the end: the mirror is still the original's.
    np.testing.assert_array_equal(F.pad(x, (-2, 3), mode="reflect").numpy(),
                                  [[2.0, 3.0, 2.0, 1.0, 0.0]])
    np.testing.assert_array_equal(F.pad(x, (-3, 2), mode="replicate").numpy(),
                                  [[3.0, 3.0, 3.0]])
    with pytest.raises(RuntimeError, match="too small"):
        F.pad(x, (-3, -2), mode="replicate")
