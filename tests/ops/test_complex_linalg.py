"""The complex decompositions' gauge checks: a loss that depends on the phases of
eigen/singular vectors has no gradient, and backward raises PyTorch's
RuntimeError, as PyTorch does. (Values and gradients: _cases_complex_linalg.py.)"""
import numpy as np
import pytest

import oxmera


def _hermitian(lib, rng):
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    return lib.tensor(a + a.conj().T, requires_grad=True)


def _libraries():
    libs = [oxmera]
    try:
        import torch
        libs.append(torch)
    except ImportError:
        pass
    return libs


@pytest.mark.parametrize("lib", _libraries(), ids=lambda lib: lib.__name__)
def test_eigh_loss_through_eigenvector_phases_raises(lib):
    A = _hermitian(lib, np.random.default_rng(0))
    V = lib.linalg.eigh(A).eigenvectors
    with pytest.raises(RuntimeError, match=r"linalg_eigh_backward: .*e\^\{i phi\}"):
        V.real.sum().backward()


@pytest.mark.parametrize("lib", _libraries(), ids=lambda lib: lib.__name__)
def test_eigh_phase_free_loss_has_a_gradient(lib):
    A = _hermitian(lib, np.random.default_rng(1))
    V = lib.linalg.eigh(A).eigenvectors
    (V.abs() ** 2 * lib.arange(3.0)).sum().backward()
    assert A.grad is not None


@pytest.mark.parametrize("lib", _libraries(), ids=lambda lib: lib.__name__)
def test_svd_loss_through_singular_vector_phases_raises(lib):
    rng = np.random.default_rng(2)
    A = lib.tensor(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
                   requires_grad=True)
    U = lib.linalg.svd(A).U
    with pytest.raises(RuntimeError, match=r"svd_backward: .*e\^\{i phi\}"):
        U.real.sum().backward()
