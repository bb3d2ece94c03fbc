"""oxmera.scipy.linalg against scipy.linalg: values, first and second derivatives, errors."""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck
from oxmera.scipy import linalg

scipy_linalg = pytest.importorskip("scipy.linalg")

RNG = np.random.default_rng(0)
ROOT = RNG.normal(size=(3, 3))
SPD = ROOT @ ROOT.T + 3 * np.eye(3)
# garbage in the triangle the triangular routines must not read
TRIANGULAR = np.triu(RNG.normal(size=(3, 3))) + 3 * np.eye(3) + np.tril(np.full((3, 3), 99.0), -1)
B = RNG.normal(size=(3, 2))
VECTOR = RNG.normal(size=3)


def _leaf(values):
    return oxmera.tensor(np.array(values, dtype=np.float64), requires_grad=True)


@pytest.mark.parametrize("trans", [0, 1, "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
@pytest.mark.parametrize("rhs", [B, VECTOR], ids=["matrix", "vector"])
def test_solve_triangular(trans, lower, unit_diagonal, rhs):
    a = TRIANGULAR.T if lower else TRIANGULAR
    got = linalg.solve_triangular(a, rhs, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    expected = scipy_linalg.solve_triangular(a, rhs, trans=trans, lower=lower,
                                             unit_diagonal=unit_diagonal)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)

    def solve(matrix, right):
        return linalg.solve_triangular(matrix, right, trans=trans, lower=lower,
                                       unit_diagonal=unit_diagonal)
    assert gradgradcheck(solve, [_leaf(a), _leaf(rhs)])


def test_solve_triangular_bad_trans():
    with pytest.raises(ValueError, match="trans must be"):
        linalg.solve_triangular(TRIANGULAR, B, trans=3)


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("rhs", [B, VECTOR], ids=["matrix", "vector"])
def test_cholesky_and_cho_solve(lower, rhs):
    c, side = linalg.cho_factor(SPD, lower=lower)
    assert side is lower
    expected_factor = scipy_linalg.cholesky(SPD, lower=lower)
    np.testing.assert_allclose(c.numpy(), expected_factor, rtol=1e-12)
    np.testing.assert_allclose(linalg.cholesky(SPD, lower=lower).numpy(), expected_factor,
                               rtol=1e-12)
    np.testing.assert_allclose(linalg.cho_solve((c, lower), rhs).numpy(),
                               scipy_linalg.cho_solve(scipy_linalg.cho_factor(SPD, lower=lower),
                                                      rhs), rtol=1e-10)

    def through_factor(a, right):
        a = (a + a.mT) / 2
        return linalg.cho_solve(linalg.cho_factor(a, lower=lower), right)
    assert gradcheck(through_factor, [_leaf(SPD), _leaf(rhs)])
    assert gradgradcheck(through_factor, [_leaf(SPD), _leaf(rhs)])


@pytest.mark.parametrize("trans", [0, 1])
def test_lu_factor_and_lu_solve(trans):
    a = RNG.normal(size=(4, 4))
    lu, piv = linalg.lu_factor(a)
    expected_lu, expected_piv = scipy_linalg.lu_factor(a)
    np.testing.assert_allclose(lu.numpy(), expected_lu, rtol=1e-12)
    np.testing.assert_array_equal(piv.numpy(), expected_piv)
    rhs = RNG.normal(size=(4, 2))
    np.testing.assert_allclose(linalg.lu_solve((lu, piv), rhs, trans=trans).numpy(),
                               scipy_linalg.lu_solve((expected_lu, expected_piv), rhs,
                                                     trans=trans), rtol=1e-10)
    # SciPy's own factors work too
    np.testing.assert_allclose(linalg.lu_solve((expected_lu, expected_piv), rhs[:, 0]).numpy(),
                               np.linalg.solve(a, rhs[:, 0]), rtol=1e-10)
    assert gradcheck(lambda m, r: linalg.lu_solve(linalg.lu_factor(m), r, trans=trans),
                     [_leaf(a), _leaf(rhs)])


def test_solve_inv_det():
    a = SPD + RNG.normal(size=(3, 3)) * 0.1
    np.testing.assert_allclose(linalg.solve(a, VECTOR).numpy(), scipy_linalg.solve(a, VECTOR),
                               rtol=1e-12)
    np.testing.assert_allclose(linalg.solve(a, B, transposed=True).numpy(),
                               scipy_linalg.solve(a, B, transposed=True), rtol=1e-12)
    np.testing.assert_allclose(linalg.inv(a).numpy(), scipy_linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(linalg.det(a).item(), scipy_linalg.det(a), rtol=1e-12)
    assert gradgradcheck(lambda m, r: linalg.solve(m, r), [_leaf(a), _leaf(B)])


@pytest.mark.parametrize("name", ["expm", "sqrtm", "logm"])
@pytest.mark.parametrize("matrix", ["spd", "nonsymmetric", "batch"])
def test_matrix_functions(name, matrix):
    a = {"spd": SPD, "nonsymmetric": RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3),
         "batch": RNG.uniform(-1, 1, (2, 3, 3)) + 3 * np.eye(3)}[matrix]
    got = getattr(linalg, name)(a).numpy()
    expected = np.stack([getattr(scipy_linalg, name)(m) for m in a.reshape(-1, 3, 3)])
    np.testing.assert_allclose(got.reshape(-1, 3, 3), expected, rtol=1e-9, atol=1e-12)
    # SciPy's logm takes ~0.1 s a call whatever the size, and the checks make
    # hundreds: logm's are on the leading 2 x 2 block
    small = a[..., :2, :2] if name == "logm" else a
    assert gradcheck(getattr(linalg, name), [_leaf(small)])
    assert gradgradcheck(getattr(linalg, name), [_leaf(small[..., :2, :2])])


def test_sqrtm_squares_back_and_logm_inverts_expm():
    root = linalg.sqrtm(SPD)
    np.testing.assert_allclose((root @ root).numpy(), SPD, rtol=1e-10)
    np.testing.assert_allclose(linalg.expm(linalg.logm(SPD)).numpy(), SPD, rtol=1e-10)


@pytest.mark.parametrize("name", ["sqrtm", "logm"])
def test_complex_results_and_bad_shapes_raise(name):
    with pytest.raises(ValueError, match="complex"):
        getattr(linalg, name)([[-1.0, 0.0], [0.0, 2.0]])
    with pytest.raises(ValueError, match="square matrix"):
        getattr(linalg, name)([[1.0, 2.0, 3.0]])


def test_block_diag():
    blocks = ([[1.0, 2.0], [3.0, 4.0]], [5.0, 6.0, 7.0], 8.0)
    np.testing.assert_array_equal(linalg.block_diag(*blocks).numpy(),
                                  scipy_linalg.block_diag(*blocks))
    leaves = [_leaf(b) for b in blocks]
    assert gradgradcheck(lambda *bs: linalg.block_diag(*bs), leaves)
    with pytest.raises(ValueError, match="2 or fewer dimensions"):
        linalg.block_diag(np.ones((1, 1, 1)))
