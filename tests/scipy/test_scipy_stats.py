"""oxmera.scipy.stats against scipy.stats: values (inside and outside the support, invalid
parameters), first and second derivatives in the data and the parameters, errors."""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck
from oxmera.scipy import stats

scipy_stats = pytest.importorskip("scipy.stats")

X = np.array([-1.5, -0.2, 0.3, 0.5, 1.5, 4.0])
Q = np.array([0.05, 0.25, 0.5, 0.9])
K = np.array([-1.0, 0.0, 1.0, 2.5, 3.0, 5.0, 7.0])

# name: (shape parameters, loc, scale) for the values, then a point inside the
# support and parameters for the gradient checks
CONTINUOUS = {
    "norm": ((), 1.0, 2.0),
    "expon": ((), 0.25, 2.0),
    "laplace": ((), 1.0, 2.0),
    "cauchy": ((), 1.0, 2.0),
    "logistic": ((), 1.0, 2.0),
    "t": ((3.0,), 1.0, 2.0),
    "gamma": ((2.5,), -1.0, 2.0),
    "beta": ((2.0, 3.0), -2.0, 4.0),
}
METHODS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")


def _cases():
    for name, (shapes, loc, scale) in CONTINUOUS.items():
        for method in METHODS:
            if hasattr(getattr(stats, name), method):
                yield name, method, shapes, loc, scale


@pytest.mark.parametrize("name,method,shapes,loc,scale", list(_cases()))
def test_continuous_values(name, method, shapes, loc, scale):
    points = Q if method == "ppf" else X
    got = getattr(getattr(stats, name), method)(points, *shapes, loc=loc, scale=scale)
    with np.errstate(divide="ignore"):
        expected = getattr(getattr(scipy_stats, name), method)(points, *shapes, loc=loc,
                                                                scale=scale)
    assert got.dtype == oxmera.float64
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,method,shapes,loc,scale", list(_cases()))
def test_continuous_gradients_in_the_data_and_loc_scale(name, method, shapes, loc, scale):
    # away from the median, where laplace's ppf has a kink in its derivative
    points = np.array([0.05, 0.3, 0.8]) if method == "ppf" else np.array([0.4, 0.9, 1.3])
    leaves = [oxmera.tensor(v, dtype=oxmera.float64, requires_grad=True)
              for v in (points, loc + 0.1, scale)]
    function = getattr(getattr(stats, name), method)

    def call(x, location, spread):
        return function(x, *shapes, loc=location, scale=spread)
    assert gradcheck(call, leaves)
    assert gradgradcheck(call, leaves)


# the shape parameters' gradients: every logpdf, and the cdfs whose formula allows it
SHAPE_GRADIENTS = [("t", "logpdf"), ("t", "pdf"), ("gamma", "logpdf"), ("beta", "logpdf"),
                   ("beta", "pdf"), ("gamma", "pdf")]


@pytest.mark.parametrize("name,method", SHAPE_GRADIENTS)
def test_gradients_in_shape_parameters(name, method):
    shapes, loc, scale = CONTINUOUS[name]
    x = np.array([0.4, 0.9, 1.3])
    leaves = [oxmera.tensor(v, dtype=oxmera.float64, requires_grad=True) for v in shapes]
    function = getattr(getattr(stats, name), method)

    def call(*params):
        return function(x, *params, loc=loc, scale=scale)
    assert gradcheck(call, leaves)
    assert gradgradcheck(call, leaves)


@pytest.mark.parametrize("name,method", [("t", "cdf"), ("gamma", "sf"), ("beta", "cdf")])
def test_cdf_gradient_in_a_shape_parameter_raises(name, method):
    shapes, loc, scale = CONTINUOUS[name]
    params = [oxmera.tensor(v, dtype=oxmera.float64, requires_grad=True) for v in shapes]
    out = getattr(getattr(stats, name), method)([0.4, 0.9], *params, loc=loc, scale=scale)
    with pytest.raises(NotImplementedError):
        out.sum().backward()


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_invalid_parameters_give_nan(name):
    shapes, loc, _ = CONTINUOUS[name]
    assert np.isnan(getattr(stats, name).logpdf(0.5, *shapes, loc=loc, scale=-1.0).item())
    if shapes:
        bad = tuple(-abs(s) for s in shapes)
        assert np.isnan(getattr(stats, name).logpdf(0.5, *bad, loc=loc).item())


def test_broadcasting_and_positional_parameters():
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    loc = np.array([0.0, 0.5, 1.0])
    np.testing.assert_allclose(stats.norm.logpdf(x, loc, 2.0).numpy(),
                               scipy_stats.norm.logpdf(x, loc, 2.0), rtol=1e-12)
    np.testing.assert_allclose(stats.t.cdf(x, np.array([[1.0], [4.0]]), loc).numpy(),
                               scipy_stats.t.cdf(x, np.array([[1.0], [4.0]]), loc), rtol=1e-10)
    with pytest.raises(TypeError):
        stats.norm.logpdf(x, 0.0, 1.0, 2.0)


def test_float32_data_stays_float32():
    out = stats.norm.logpdf(oxmera.tensor([0.5, 1.0]), 0.0, 1.0)
    assert out.dtype == oxmera.float32


DISCRETE = {"poisson": (2.5,), "binom": (5, 0.3)}


@pytest.mark.parametrize("name", sorted(DISCRETE))
@pytest.mark.parametrize("method", ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"])
def test_discrete_values(name, method):
    params = DISCRETE[name]
    got = getattr(getattr(stats, name), method)(K, *params)
    with np.errstate(divide="ignore"):
        expected = getattr(getattr(scipy_stats, name), method)(K, *params)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-9, atol=1e-12)
    shifted = getattr(getattr(stats, name), method)(K, *params, loc=1)
    with np.errstate(divide="ignore"):
        expected = getattr(getattr(scipy_stats, name), method)(K, *params, loc=1)
    np.testing.assert_allclose(shifted.numpy(), expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["logpmf", "pmf", "cdf", "sf"])
def test_discrete_gradients_in_the_rate_and_probability(method):
    k = np.array([0.0, 1.0, 3.0])
    mu = oxmera.tensor([2.5], dtype=oxmera.float64, requires_grad=True)
    assert gradgradcheck(lambda m: getattr(stats.poisson, method)(k, m), [mu])
    p = oxmera.tensor([0.3], dtype=oxmera.float64, requires_grad=True)
    assert gradgradcheck(lambda q: getattr(stats.binom, method)(k, 5, q), [p])


def test_discrete_invalid_parameters_give_nan():
    assert np.isnan(stats.poisson.logpmf(1.0, -1.0).item())
    assert np.isnan(stats.binom.logpmf(1.0, 5, 1.5).item())
    assert np.isnan(stats.binom.logpmf(1.0, 2.5, 0.5).item())


@pytest.mark.parametrize("x,mean,cov", [
    ([[0.5, 1.0], [1.5, -1.0], [0.0, 0.0]], [0.0, 1.0], [[2.0, 0.3], [0.3, 1.0]]),
    ([0.5, 1.0], [0.0, 1.0], [2.0, 0.5]),              # a diagonal
    ([0.5, 1.0, -0.3], None, 2.0),                     # d = 1: three points
    (0.7, 0.5, 1.5),
    (np.ones((2, 3, 2)) * 0.3, [0.1, -0.1], [[1.0, 0.2], [0.2, 1.0]]),
])
def test_multivariate_normal_values(x, mean, cov):
    for method in ("logpdf", "pdf"):
        got = getattr(stats.multivariate_normal, method)(x, mean, cov)
        expected = getattr(scipy_stats.multivariate_normal, method)(x, mean, cov)
        assert got.shape == np.shape(expected)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)


def test_multivariate_normal_gradients():
    rng = np.random.default_rng(1)
    x = oxmera.tensor(rng.normal(size=(4, 3)), requires_grad=True)
    mean = oxmera.tensor(rng.normal(size=3), requires_grad=True)
    root = rng.normal(size=(3, 3))
    cov = oxmera.tensor(root @ root.T + 3 * np.eye(3), requires_grad=True)

    def logpdf(x, mean, cov):
        # the covariance symmetrized, so finite differences stay in its domain
        return stats.multivariate_normal.logpdf(x, mean, (cov + cov.mT) / 2)
    assert gradcheck(logpdf, [x, mean, cov])
    assert gradgradcheck(logpdf, [x, mean, cov])


def test_multivariate_normal_errors():
    with pytest.raises(ValueError, match="last axis has length 3"):
        stats.multivariate_normal.logpdf([1.0, 2.0, 3.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="do not describe one dimension"):
        stats.multivariate_normal.logpdf([1.0, 2.0], [0.0, 0.0], np.eye(3))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        stats.multivariate_normal.logpdf([1.0, 2.0], allow_singular=True)
    with pytest.raises(oxmera.linalg.LinAlgError):
        stats.multivariate_normal.logpdf([1.0, 2.0], [0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize("x", [[0.2, 0.3, 0.5], [[0.2, 0.4], [0.3, 0.1], [0.5, 0.5]],
                               [0.2, 0.3]])
def test_dirichlet_values(x):
    alpha = [1.5, 2.0, 3.0]
    for method in ("logpdf", "pdf"):
        np.testing.assert_allclose(getattr(stats.dirichlet, method)(x, alpha).numpy(),
                                   getattr(scipy_stats.dirichlet, method)(x, alpha), rtol=1e-12)


def test_dirichlet_gradients():
    x = oxmera.tensor([[0.2, 0.4], [0.3, 0.1]], dtype=oxmera.float64, requires_grad=True)
    alpha = oxmera.tensor([1.5, 2.0, 3.0], dtype=oxmera.float64, requires_grad=True)
    # x's last component is 1 - sum of the others, so perturbations stay on the simplex
    assert gradcheck(stats.dirichlet.logpdf, [x, alpha])
    assert gradgradcheck(stats.dirichlet.logpdf, [x, alpha])


def test_dirichlet_errors():
    with pytest.raises(ValueError, match="sum to 1"):
        stats.dirichlet.logpdf([0.2, 0.3, 0.6], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        stats.dirichlet.logpdf([1.2, -0.2], [1.0, 1.0])
    with pytest.raises(ValueError, match="greater than 0"):
        stats.dirichlet.logpdf([0.5, 0.5], [1.0, 0.0])
    with pytest.raises(ValueError, match="first axis must have 3"):
        stats.dirichlet.logpdf([0.5], [1.0, 1.0, 1.0])
