"""nn.init.dirac_, sparse_ and the deprecated spellings, against torch where installed."""
import warnings

import numpy as np
import pytest

import oxmera
from oxmera.nn import init


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 2, 3, 3), 2), ((4, 6, 1, 2, 5), 1),
                                          ((6, 3, 4), 3), ((2, 5, 3, 3), 1)])
def test_dirac_as_torch(shape, groups):
    torch = pytest.importorskip("torch")
    expected = torch.nn.init.dirac_(torch.empty(*shape), groups=groups).numpy()
    np.testing.assert_array_equal(init.dirac_(oxmera.empty(*shape), groups=groups).numpy(),
                                  expected)


def test_dirac_is_the_identity_convolution_closed_form():
    w = init.dirac_(oxmera.empty(3, 3, 5)).numpy()
    x = np.random.default_rng(0).standard_normal((3, 9))
    # "valid" cross-correlation of each output channel with the 5-tap kernels
    out = np.stack([sum(np.correlate(x[c], w[o, c], "valid") for c in range(3))
                    for o in range(3)])
    np.testing.assert_allclose(out, x[:, 2:-2])


def test_dirac_errors_change_nothing():
    t = oxmera.ones(3, 2, 3)
    with pytest.raises(ValueError, match="divisible by groups"):
        init.dirac_(t, groups=2)
    assert t.tolist() == np.ones((3, 2, 3)).tolist()
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        init.dirac_(oxmera.empty(2, 2))


def test_sparse_zero_count_and_distribution():
    t = oxmera.empty(1000, 20, dtype=oxmera.float64)
    assert init.sparse_(t, sparsity=0.25, std=0.5, generator=oxmera.Generator().manual_seed(1)) is t
    values = t.numpy()
    assert ((values == 0).sum(axis=0) == 250).all()
    nonzero = values[values != 0]
    assert abs(nonzero.std() - 0.5) < 0.02 and abs(nonzero.mean()) < 0.02
    with pytest.raises(ValueError, match="2 dimensions"):
        init.sparse_(oxmera.empty(2, 2, 2), 0.5)


def test_sparse_zero_count_as_torch():
    torch = pytest.importorskip("torch")
    for rows, sparsity in ((7, 0.3), (10, 0.1), (5, 1.0), (4, 0.0)):
        expected = (torch.nn.init.sparse_(torch.empty(rows, 6), sparsity) == 0).sum(0)
        got = (init.sparse_(oxmera.empty(rows, 6), sparsity) == 0).sum(0)
        assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("old", ["uniform", "normal", "constant", "xavier_uniform",
                                 "xavier_normal", "kaiming_uniform", "kaiming_normal",
                                 "orthogonal", "sparse", "dirac", "eye"])
def test_deprecated_spellings_warn_and_fill(old):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(old, ())
    t = oxmera.zeros(4, 4, 3) if old == "dirac" else oxmera.zeros(4, 4)
    with pytest.warns(FutureWarning, match=f"`nn.init.{old}` is now deprecated in favor of "
                                           f"`nn.init.{old}_`"):
        assert getattr(init, old)(t, *args) is t
    assert float(t.abs().sum()) > 0


def test_every_torch_init_function_exists():
    torch = pytest.importorskip("torch")
    import inspect
    names = [n for n, f in vars(torch.nn.init).items()
             if inspect.isfunction(f) and not n.startswith("_") and f.__module__ ==
             "torch.nn.init"]
    missing = [n for n in names if not hasattr(init, n)]
    assert missing == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in ("linear", "conv1d", "conv_transpose2d", "sigmoid", "tanh", "relu",
                     "leaky_relu", "selu"):
            assert init.calculate_gain(name) == pytest.approx(
                torch.nn.init.calculate_gain(name))
