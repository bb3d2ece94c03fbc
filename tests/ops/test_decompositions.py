"""oxmera.linalg's decompositions beyond the gradient table: errors as
PyTorch's, the documented behaviour at degenerate points, the fields of
lstsq / cholesky_ex / inv_ex, values against NumPy and SciPy, and the
ImportError without SciPy. (Gradients and PyTorch comparisons of each op are
in ``_cases_decompositions.py``.)"""
import builtins

import numpy as np
import pytest

import oxmera
from oxmera.autograd import grad as autograd_grad

LA = oxmera.linalg
RNG = np.random.default_rng(16)


def _t(array, requires_grad=False):
    out = oxmera.tensor(np.asarray(array, dtype=np.float64))
    return out.requires_grad_() if requires_grad else out


def _spd(n, batch=()):
    a = RNG.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# -- errors ---------------------------------------------------------------------------------

def test_linalg_error_is_a_runtime_error():
    assert issubclass(LA.LinAlgError, RuntimeError)
    assert LA.LinAlgError.__module__ == "oxmera.linalg"


def test_cholesky_of_a_matrix_that_is_not_positive_definite():
    A = _t([[1.0, 2.0], [2.0, 1.0]], requires_grad=True)
    with pytest.raises(LA.LinAlgError, match=r"linalg.cholesky.*leading minor of order 2"):
        LA.cholesky(A)
    batch = _t(np.stack([np.eye(2), [[1.0, 2.0], [2.0, 1.0]]]))
    with pytest.raises(LA.LinAlgError, match=r"Batch element 1.*order 2"):
        LA.cholesky(batch)
    # upper=True reads the upper triangle (as LAPACK and PyTorch).
    lower_bad = _t([[4.0, 1.0], [100.0, 3.0]])
    assert np.allclose(LA.cholesky(lower_bad, upper=True).numpy(),
                       np.linalg.cholesky(lower_bad.numpy().T).T)
    with pytest.raises(LA.LinAlgError):
        LA.cholesky(lower_bad)


def test_cholesky_ex_reports_instead_of_raising():
    batch = _t(np.stack([4 * np.eye(3), np.diag([1.0, 1.0, -1.0]), np.diag([1.0, -1.0, 1.0])]))
    L, info = LA.cholesky_ex(batch)
    assert info.dtype == oxmera.int32
    assert info.tolist() == [0, 3, 2]
    assert np.allclose(L[0].numpy(), 2 * np.eye(3))
    assert np.isnan(L[1].numpy()).all()
    with pytest.raises(LA.LinAlgError, match="Batch element 1"):
        LA.cholesky_ex(batch, check_errors=True)


def test_singular_inverse_and_solve_are_linalg_errors():
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv.*singular"):
        LA.inv(oxmera.zeros(2, 2))
    with pytest.raises(LA.LinAlgError, match=r"linalg.solve.*singular"):
        LA.solve(oxmera.zeros(2, 2), oxmera.ones(2))
    with pytest.raises(LA.LinAlgError, match=r"lu_factor.*zero"):
        LA.lu_factor(oxmera.zeros(2, 2))


def test_inv_ex_and_solve_ex():
    a = np.stack([[[2.0, 0.0], [0.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 1.0]]])
    inverse, info = LA.inv_ex(_t(a))
    assert info.tolist() == [0, 2, 1]
    assert np.allclose(inverse[0].numpy(), np.linalg.inv(a[0]))
    assert np.isnan(inverse[1:].numpy()).all()
    result, info = LA.solve_ex(_t(a), _t(np.ones((3, 2))))
    assert info.tolist() == [0, 2, 1]
    assert np.allclose(result[0].numpy(), [0.5, 0.25])
    assert np.isnan(result[1:].numpy()).all()
    with pytest.raises(LA.LinAlgError):
        LA.inv_ex(_t(a), check_errors=True)


def test_argument_errors():
    with pytest.raises(RuntimeError, match=r"solve_triangular.*B must have at least 2"):
        LA.solve_triangular(oxmera.eye(2), oxmera.ones(2), upper=True)
    with pytest.raises(RuntimeError, match="UPLO"):
        LA.eigh(oxmera.eye(2), UPLO="X")
    with pytest.raises(RuntimeError, match=r"linalg.eigh.*square"):
        LA.eigh(oxmera.ones(2, 3))
    with pytest.raises(RuntimeError, match="mode"):
        LA.qr(oxmera.eye(2), mode="full")
    with pytest.raises(RuntimeError, match="hermitian"):
        LA.pinv(oxmera.ones(2, 3), hermitian=True)
    with pytest.raises(RuntimeError, match="rcond"):
        LA.pinv(oxmera.eye(2), rtol=0.1, rcond=0.1)
    with pytest.raises(RuntimeError, match="driver"):
        LA.lstsq(oxmera.eye(2), oxmera.ones(2, 1), driver="gelsx")
    with pytest.raises(RuntimeError, match="pivoting"):
        LA.lu_factor(oxmera.eye(2), pivot=False)
    with pytest.raises(TypeError, match="matrix_power"):
        LA.matrix_power(oxmera.eye(2), 1.5)
    with pytest.raises(RuntimeError, match="tensorinv"):
        LA.tensorinv(oxmera.ones(2, 3), ind=1)
    with pytest.raises(RuntimeError, match="tensorsolve"):
        LA.tensorsolve(oxmera.ones(2, 3), oxmera.ones(3))
    with pytest.raises(RuntimeError, match="driver"):
        LA.svd(oxmera.eye(2), driver="gesvd")


def test_qr_backward_errors_as_pytorch():
    A = _t(RNG.standard_normal((3, 2)), requires_grad=True)
    with pytest.raises(RuntimeError, match="mode='r'"):
        LA.qr(A, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="complete"):
        LA.qr(A, mode="complete").Q.sum().backward()


def test_a_failed_call_records_nothing():
    A = _t([[1.0, 2.0], [2.0, 1.0]], requires_grad=True)
    with pytest.raises(LA.LinAlgError):
        LA.cholesky(A)
    assert A.grad is None and A.grad_fn is None


# -- degenerate points -----------------------------------------------------------------------

def _grad(fn, A):
    A = _t(A, requires_grad=True)
    return autograd_grad(fn(A), A)[0].numpy()


def test_svd_at_repeated_singular_values():
    # Through S alone: U diag(gS) Vh, finite; through the vectors: 0/0, NaN
    # (as PyTorch's, which documents the gradient as undefined there).
    assert np.allclose(_grad(lambda a: LA.svd(a).S.sum(), np.eye(2)), np.eye(2))
    assert np.isnan(_grad(lambda a: (LA.svd(a).U ** 2).sum() + LA.svd(a).Vh.sum(),
                          np.eye(2))).all()


def test_eigh_at_repeated_eigenvalues():
    assert np.allclose(_grad(lambda a: LA.eigvalsh(a).sum(), np.eye(2)), np.eye(2))
    assert np.isnan(_grad(lambda a: LA.eigh(a).eigenvectors[0, 0], np.eye(2))).all()


def test_slogdet_gradient_at_a_singular_matrix_is_nan():
    sign, logabsdet = LA.slogdet(_t(np.zeros((2, 2))))
    assert sign.item() == 0 and logabsdet.item() == -np.inf
    assert np.isnan(_grad(lambda a: LA.slogdet(a).logabsdet, np.ones((2, 2)))).all()


def test_degenerate_points_match_pytorch():
    torch = pytest.importorskip("torch")
    for fn in (lambda lib, a: lib.linalg.svd(a).S.sum(),
               lambda lib, a: (lib.linalg.svd(a).U ** 2).sum(),
               lambda lib, a: lib.linalg.eigvalsh(a).sum(),
               lambda lib, a: lib.linalg.eigh(a).eigenvectors[0, 0],
               lambda lib, a: lib.linalg.slogdet(a * 0).logabsdet):
        ours = _grad(lambda a, fn=fn: fn(oxmera, a), np.eye(2))
        a = torch.eye(2, dtype=torch.float64, requires_grad=True)
        theirs = torch.autograd.grad(fn(torch, a), a)[0].numpy()
        np.testing.assert_allclose(ours, theirs, equal_nan=True)


# -- values against NumPy / SciPy -------------------------------------------------------------

def test_values_against_numpy():
    a = RNG.standard_normal((2, 4, 3))
    sq = RNG.standard_normal((2, 3, 3))
    spd = _spd(3, (2,))
    U, S, Vh = LA.svd(_t(a))
    assert U.shape == (2, 4, 4) and Vh.shape == (2, 3, 3)
    assert np.allclose(S.numpy(), np.linalg.svd(a, compute_uv=False))
    assert np.allclose(LA.eigvalsh(_t(spd)).numpy(), np.linalg.eigvalsh(spd))
    assert np.allclose(LA.cholesky(_t(spd)).numpy(), np.linalg.cholesky(spd))
    Q, R = LA.qr(_t(a))
    assert np.allclose((Q @ R).numpy(), a) and np.allclose(R.numpy(), np.triu(R.numpy()))
    sign, logabsdet = LA.slogdet(_t(sq))
    assert np.allclose(sign.numpy() * np.exp(logabsdet.numpy()), np.linalg.det(sq))
    assert np.allclose(LA.pinv(_t(a)).numpy(), np.linalg.pinv(a))
    assert np.allclose(LA.pinv(_t(spd), hermitian=True).numpy(), np.linalg.inv(spd))
    assert LA.matrix_rank(_t(a)).tolist() == np.linalg.matrix_rank(a).tolist()
    assert np.allclose(LA.matrix_power(_t(sq), -3).numpy(), np.linalg.matrix_power(sq, -3))
    for p in (None, 2, -2, "fro", "nuc", np.inf, -np.inf, 1, -1):
        assert np.allclose(LA.cond(_t(sq), p).numpy(), np.linalg.cond(sq, p))
    assert LA.cond(oxmera.zeros(2, 2), "fro").item() == np.inf
    t = RNG.standard_normal((4, 4)).reshape(2, 2, 4) + 4 * np.eye(4).reshape(2, 2, 4)
    assert np.allclose(LA.tensorinv(_t(t)).numpy(), np.linalg.tensorinv(t))
    t = RNG.standard_normal((6, 6)).reshape(2, 3, 6)
    b = RNG.standard_normal((2, 3))
    assert np.allclose(LA.tensorsolve(_t(t), _t(b)).numpy(), np.linalg.tensorsolve(t, b))
    x, y = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    assert np.allclose(LA.vecdot(_t(x), _t(y)).numpy(), x @ y)


def test_lstsq_fields():
    a, b = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))
    x, residuals, rank, values = np.linalg.lstsq(a, b)
    out = LA.lstsq(_t(a), _t(b), driver="gelsd")
    assert np.allclose(out.solution.numpy(), x)
    assert np.allclose(out.residuals.numpy(), residuals)
    assert out.rank.item() == rank and out.rank.dtype == oxmera.int64
    assert np.allclose(out.singular_values.numpy(), values)
    default = LA.lstsq(_t(a), _t(b))        # 'gelsy': no residuals nor singular values
    assert default.residuals.shape == (0,) and default.singular_values.shape == (0,)
    assert default.rank.item() == 3
    assert not out.residuals.requires_grad
    # Rank-deficient: the minimum-norm solution, no residuals.
    deficient = np.outer(a[:, 0], a[0])
    out = LA.lstsq(_t(deficient), _t(b), driver="gelsd")
    assert np.allclose(out.solution.numpy(), np.linalg.pinv(deficient) @ b)
    assert out.rank.item() == 1 and out.residuals.shape == (0,)


def test_lu_reconstructs_and_lu_solve_solves():
    for shape in ((3, 3), (2, 4, 3), (3, 5)):
        a = RNG.standard_normal(shape)
        P, L, U = LA.lu(_t(a))
        assert np.allclose((P @ L @ U).numpy(), a)
        assert np.allclose(L.numpy(), np.tril(L.numpy())) and np.allclose(U.numpy(),
                                                                           np.triu(U.numpy()))
    a, b = RNG.standard_normal((2, 3, 3)), RNG.standard_normal((2, 3, 2))
    LU, pivots = LA.lu_factor(_t(a))
    assert pivots.dtype == oxmera.int32
    assert np.allclose(LA.lu_solve(LU, pivots, _t(b)).numpy(), np.linalg.solve(a, b))
    assert np.allclose(LA.lu_solve(LU, pivots, _t(b), adjoint=True).numpy(),
                       np.linalg.solve(np.swapaxes(a, -1, -2), b))
    c = np.swapaxes(b, -1, -2)
    assert np.allclose(LA.lu_solve(LU, pivots, _t(c), left=False).numpy() @ a, c)


def test_matrix_exp_against_scipy():
    scipy_linalg = pytest.importorskip("scipy.linalg")
    a = RNG.standard_normal((2, 3, 3))
    assert np.allclose(LA.matrix_exp(_t(a)).numpy(), scipy_linalg.expm(a))


def test_dtypes_follow_the_input():
    a = oxmera.tensor(_spd(3), dtype=oxmera.float32)
    for out in (LA.cholesky(a), LA.eigh(a).eigenvalues, LA.qr(a).R, LA.pinv(a),
                LA.lu_factor(a).LU, LA.matrix_exp(a), LA.slogdet(a).logabsdet,
                LA.lstsq(a, a).solution, LA.svd(a).U):
        assert out.dtype == oxmera.float32


def test_legacy_top_level_names():
    a = _t(RNG.standard_normal((4, 3)))
    U, S, V = oxmera.svd(a)
    assert U.shape == (4, 3) and V.shape == (3, 3)
    assert np.allclose(((U * S) @ V.mT).numpy(), a.numpy())
    U, S, V = oxmera.svd(a, some=False)
    assert U.shape == (4, 4)
    U, S, V = oxmera.svd(a, compute_uv=False)
    assert not U.numpy().any() and U.shape == (4, 4) and V.shape == (3, 3)
    assert oxmera.qr(a, some=False).Q.shape == (4, 4)
    spd = _t(_spd(3))
    assert np.allclose(oxmera.cholesky(spd, True).numpy(), LA.cholesky(spd, upper=True).numpy())
    assert np.allclose(spd.logdet().numpy(), np.log(np.linalg.det(spd.numpy())))
    assert np.allclose(a.pinverse().numpy(), np.linalg.pinv(a.numpy()))


# -- without SciPy ------------------------------------------------------------------------------

def test_scipy_routines_name_the_extra_without_scipy(monkeypatch):
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name == "scipy" or name.startswith("scipy."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    for call in (lambda: LA.matrix_exp(oxmera.eye(2)), lambda: LA.lu_factor(oxmera.eye(2)),
                 lambda: LA.lu(oxmera.eye(2))):
        with pytest.raises(ImportError, match=r"pip install oxmera\[scipy\]"):
            call()
    # The NumPy-backed ones do not need it.
    assert LA.cholesky(oxmera.eye(2)).shape == (2, 2)
    assert LA.solve_triangular(oxmera.eye(2), oxmera.ones(2, 1), upper=True).shape == (2, 1)
