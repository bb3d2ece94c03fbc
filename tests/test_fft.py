"""``oxmera.fft``'s non-op parts against PyTorch: frequencies, shifts, argument errors,
dtypes. (The transforms' values and gradients are in tests/ops/_cases_fft.py.)"""
import numpy as np
import pytest

import oxmera

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.3])
def test_frequencies_match_torch(n, d):
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(oxmera.fft, name)(n, d, dtype=oxmera.float64)
        theirs = getattr(torch.fft, name)(n, d, dtype=torch.float64)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), equal_nan=True)
    assert oxmera.fft.fftfreq(3).dtype == oxmera.float32


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_shifts_match_torch(dim):
    x = np.arange(15.0).reshape(3, 5)
    for name in ("fftshift", "ifftshift"):
        ours = getattr(oxmera.fft, name)(oxmera.tensor(x), dim=dim)
        theirs = getattr(torch.fft, name)(torch.tensor(x), dim=dim)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("make, dtype", [
    (lambda lib: lib.fft.fft(lib.arange(4)), "complex64"),
    (lambda lib: lib.fft.fft(lib.ones(3, dtype=lib.float64)), "complex128"),
    (lambda lib: lib.fft.rfft(lib.ones(4)), "complex64"),
    (lambda lib: lib.fft.irfft(lib.ones(3, dtype=lib.complex128)), "float64"),
    (lambda lib: lib.fft.hfft(lib.ones(3, dtype=lib.complex64)), "float32"),
    (lambda lib: lib.fft.ihfft(lib.ones(4, dtype=lib.float64)), "complex128"),
])
def test_result_dtypes_match_torch(make, dtype):
    assert str(make(oxmera).dtype) == dtype
    assert str(make(torch).dtype) == f"torch.{dtype}"


@pytest.mark.parametrize("call", [
    lambda lib, x: lib.fft.fft(x, norm="bad"),
    lambda lib, x: lib.fft.fft(x, n=0),
    lambda lib, x: lib.fft.rfft(x * 1j),
    lambda lib, x: lib.fft.ihfft(x * 1j),
    lambda lib, x: lib.fft.fftn(x, s=(2, 3, 4)),
    lambda lib, x: lib.fft.fftn(x, dim=(0, 0)),
    lambda lib, x: lib.fft.fft(x.half()),
    lambda lib, x: lib.fft.fft(x, dim=3),
])
def test_bad_arguments_raise_torchs_error_type(call):
    x = np.ones((2, 4))
    with pytest.raises(Exception) as theirs:
        call(torch, torch.tensor(x))
    with pytest.raises(theirs.type):
        call(oxmera, oxmera.tensor(x))


def test_round_trips_and_second_order():
    x = oxmera.tensor(np.random.default_rng(0).standard_normal((3, 8)), requires_grad=True)
    np.testing.assert_allclose(oxmera.fft.irfft(oxmera.fft.rfft(x)).detach().numpy(),
                               x.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(oxmera.fft.ifftn(oxmera.fft.fftn(x)).real.detach().numpy(),
                               x.detach().numpy(), atol=1e-12)
    # |rfft(x)|^2 summed: Parseval's weights; its Hessian-vector product exists.
    loss = oxmera.fft.rfft(x, norm="ortho").abs().pow(2).sum()
    (g,) = oxmera.autograd.grad(loss, x, create_graph=True)
    (h,) = oxmera.autograd.grad(g.sum(), x)
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    lt = torch.fft.rfft(xt, norm="ortho").abs().pow(2).sum()
    (gt,) = torch.autograd.grad(lt, xt, create_graph=True)
    (ht,) = torch.autograd.grad(gt.sum(), xt)
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(h.numpy(), ht.numpy(), atol=1e-12)
