"""The parts of ``oxmera.numpy`` written out or composed: values against NumPy, first and
second derivatives by finite differences (float64)."""
import numpy as np
import pytest

import oxmera
import oxmera.numpy as onp
from oxmera.autograd import gradcheck, gradgradcheck


def leaf(values):
    return oxmera.tensor(values, dtype=oxmera.float64, requires_grad=True)


def close(ours, theirs):
    np.testing.assert_allclose(ours.detach().numpy(), theirs, rtol=1e-10, atol=1e-12)


def check(fn, *inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- building arrays -------------------------------------------------------------------------

def test_array_of_nested_lists_holding_tensors_is_stacked_and_differentiable():
    a, b = leaf(1.5), leaf([2.0, 3.0])
    m = onp.array([[a, 0.0], b])
    close(m, [[1.5, 0.0], [2.0, 3.0]])
    assert m.dtype == np.float64 and m.grad_fn is not None
    check(lambda a, b: onp.array([[a, a * a], b]), a, b)
    check(lambda a: onp.asarray([a, 2.0 * a, [1.0, 2.0]]), leaf([0.5, -1.0]))


def test_array_dtype_and_errors_follow_numpy():
    t32 = oxmera.tensor([1.0], requires_grad=True)
    assert onp.array([t32, t32]).dtype == np.float32
    assert onp.array([t32, np.array([1.0])]).dtype == np.float64
    assert onp.array([leaf(1.0)], dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="inhomogeneous"):
        onp.array([leaf([1.0, 2.0]), leaf([1.0])])
    assert onp.array(leaf([1.0]), ndmin=3).shape == (1, 1, 1)


def test_array_copies_and_asarray_does_not():
    t = leaf([1.0, 2.0])
    assert onp.asarray(t) is t
    c = onp.array(t)
    assert c is not t and c.grad_fn is not None
    a = np.zeros(2)
    onp.asarray(a)[0] = 5.0                 # shares memory, as np.asarray
    assert a[0] == 5.0


def test_r_and_c_join_tensors_numbers_and_ranges():
    x = leaf([1.0, 2.0])
    close(onp.r_[x, 0.0, 5:7], np.r_[[1.0, 2.0], 0.0, 5:7])
    close(onp.r_[x, 0:1:3j], np.r_[[1.0, 2.0], 0:1:3j])
    close(onp.c_[x, x * 2], np.c_[[1.0, 2.0], [2.0, 4.0]])
    m = leaf([[1.0, 2.0], [3.0, 4.0]])
    close(onp.r_["1", m, m], np.r_["1", m.detach().numpy(), m.detach().numpy()])
    close(onp.r_["0,2,0", x, x], np.r_["0,2,0", [1.0, 2.0], [1.0, 2.0]])
    close(onp.r_["0,2", x, x], np.r_["0,2", [1.0, 2.0], [1.0, 2.0]])
    check(lambda x: onp.r_[x, x * x, 1.0], x)
    check(lambda x: onp.c_[x, onp.sin(x)], x)
    with pytest.raises(ValueError, match="directive"):
        onp.r_["r", x]
    close(onp.r_[1, 2, 3], np.r_[1, 2, 3])      # no tensors: NumPy's own


def test_append_and_single_array_stacking():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    data = x.detach().numpy()
    close(onp.append(x, [5.0]), np.append(data, [5.0]))
    close(onp.append(x, [[5.0, 6.0]], axis=0), np.append(data, [[5.0, 6.0]], axis=0))
    for name in ("vstack", "hstack", "dstack", "column_stack", "stack", "concatenate"):
        close(getattr(onp, name)(x), getattr(np, name)(data))
        check(lambda x, name=name: getattr(onp, name)(x * x), x)
    check(lambda x: onp.append(x, x[0], axis=None), x)


def test_einsum_sublist_form():
    a, b = leaf([[1.0, 2.0], [3.0, 4.0]]), leaf([[0.5, -1.0], [2.0, 1.0]])
    A, B = a.detach().numpy(), b.detach().numpy()
    close(onp.einsum(a, [0, 1], b, [1, 2], [0, 2]), np.einsum(A, [0, 1], B, [1, 2], [0, 2]))
    close(onp.einsum(a, [Ellipsis, 1], [Ellipsis]), np.einsum(A, [Ellipsis, 1], [Ellipsis]))
    close(np.einsum(a, [0, 1], b, [1, 0]), np.einsum(A, [0, 1], B, [1, 0]))   # the protocol too
    check(lambda a, b: onp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a, b)
    with pytest.raises(ValueError, match="sublist"):
        onp.einsum(a, [0, 99], [0])


# -- composed functions ----------------------------------------------------------------------

VALUES = [0.3, -1.2, 2.5, 0.7, 1.9]


def test_sort_median_quantile():
    x = leaf([[0.3, -1.2, 2.5], [0.7, 1.9, -0.4]])
    data = x.detach().numpy()
    for axis in (0, 1, -1, None):
        close(onp.sort(x, axis=axis), np.sort(data, axis=axis))
        close(onp.median(x, axis=axis), np.median(data, axis=axis))
        check(lambda x, axis=axis: onp.sort(x, axis=axis), x)
    close(onp.median(leaf(VALUES[:4])), np.median(VALUES[:4]))     # even: the middle two
    close(onp.quantile(x, [0.2, 0.9], axis=1), np.quantile(data, [0.2, 0.9], axis=1))
    close(onp.percentile(x, 40.0), np.percentile(data, 40.0))
    check(lambda x: onp.median(x, axis=1), x)
    assert np.array_equal(onp.argsort(x, axis=0).numpy(), np.argsort(data, axis=0))


@pytest.mark.parametrize("left, right", [(None, None), (-5.0, 7.0)])
def test_interp(left, right):
    xp, fp = leaf([0.0, 1.0, 2.5, 4.0]), leaf([1.0, -1.0, 3.0, 0.5])
    x = leaf([-0.5, 0.3, 1.0, 2.0, 3.9, 5.0])
    expected = np.interp(x.detach(), xp.detach().numpy(), fp.detach().numpy(), left, right)
    close(onp.interp(x, xp, fp, left, right), expected)
    inside = leaf([0.3, 1.7, 3.1])
    check(lambda x, xp, fp: onp.interp(x, xp, fp, left, right), inside, xp, fp)
    check(lambda fp: onp.interp(x, xp, fp, left, right), fp)


def test_polynomials():
    p, x = leaf([2.0, -1.0, 0.5]), leaf([0.3, 1.5, -2.0])
    P, X = p.detach().numpy(), x.detach().numpy()
    close(onp.polyval(p, x), np.polyval(P, X))
    close(onp.polyval([p[0], 1.0, p[2]], x), np.polyval([2.0, 1.0, 0.5], X))
    close(onp.polyadd(p, [1.0, 2.0]), np.polyadd(P, [1.0, 2.0]))
    close(onp.polysub([1.0, 2.0], p), np.polysub([1.0, 2.0], P))
    close(onp.polymul(p, [1.0, 2.0]), np.polymul(P, [1.0, 2.0]))
    close(onp.polyder(p), np.polyder(P))
    close(onp.polyder(p, 2), np.polyder(P, 2))
    check(onp.polyval, p, x)
    check(lambda p: onp.polymul(p, p), p)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", [(5, 3), (3, 5), (4, 4), (1, 3)])
def test_convolve_and_correlate(mode, n, m):
    rng = np.random.default_rng(n * 10 + m)
    a, v = leaf(rng.standard_normal(n)), leaf(rng.standard_normal(m))
    A, V = a.detach().numpy(), v.detach().numpy()
    close(onp.convolve(a, v, mode), np.convolve(A, V, mode))
    close(onp.correlate(a, v, mode), np.correlate(A, V, mode))
    check(lambda a, v: onp.convolve(a, v, mode), a, v)
    check(lambda a, v: onp.correlate(a, v, mode), a, v)


def test_gradient_and_trapezoid():
    y = leaf([[1.0, 2.5, 2.0, 4.0], [0.5, 0.0, -1.0, 3.0]])
    Y = y.detach().numpy()
    xs = leaf([0.0, 0.5, 1.5, 3.0])
    for ours, theirs in [(onp.gradient(y), np.gradient(Y)),
                         (onp.gradient(y, 0.5, axis=1), np.gradient(Y, 0.5, axis=1)),
                         (onp.gradient(y, xs, axis=1), np.gradient(Y, xs.detach().numpy(),
                                                                   axis=1))]:
        ours = ours if isinstance(ours, (tuple, list)) else [ours]
        theirs = theirs if isinstance(theirs, (tuple, list)) else [theirs]
        for o, t in zip(ours, theirs):
            close(o, t)
    close(onp.trapezoid(y), np.trapezoid(Y))
    close(onp.trapezoid(y, xs), np.trapezoid(Y, xs.detach().numpy()))
    close(onp.trapezoid(y, dx=0.2, axis=0), np.trapezoid(Y, dx=0.2, axis=0))
    check(lambda y, xs: onp.gradient(y, xs, axis=1), y, xs)
    check(lambda y, xs: onp.trapezoid(y, xs), y, xs)
    check(lambda y: onp.diff(y, 2, axis=1), y)
    check(lambda y: onp.cumprod(y, axis=1), y)


def test_linspace_logspace_meshgrid_are_differentiable():
    a, b = leaf(0.5), leaf(2.0)
    for endpoint in (True, False):
        close(onp.linspace(a, b, 5, endpoint=endpoint), np.linspace(0.5, 2.0, 5,
                                                                    endpoint=endpoint))
        close(onp.logspace(a, b, 4, endpoint=endpoint, base=2.0),
              np.logspace(0.5, 2.0, 4, endpoint=endpoint, base=2.0))
        check(lambda a, b, e=endpoint: onp.linspace(a, b, 5, endpoint=e), a, b)
    starts, stops = leaf([0.0, 1.0]), leaf([1.0, 3.0])
    close(onp.linspace(starts, stops, 3, axis=1), np.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=1))
    values, step = onp.linspace(a, b, 4, retstep=True)
    assert abs(float(step) - 0.5) < 1e-12
    x, y = leaf([1.0, 2.0, 3.0]), leaf([4.0, 5.0])
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            ours = onp.meshgrid(x, y, indexing=indexing, sparse=sparse)
            theirs = np.meshgrid([1.0, 2.0, 3.0], [4.0, 5.0], indexing=indexing, sparse=sparse)
            for o, t in zip(ours, theirs):
                close(o, t)
    check(lambda x, y: onp.meshgrid(x, y), x, y)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad(mode):
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    widths = ((1, 2), (2, 1))
    close(onp.pad(x, widths, mode=mode), np.pad(x.detach().numpy(), widths, mode=mode))
    check(lambda x: onp.pad(x, widths, mode=mode), x)


def test_statistics_and_selection():
    m = leaf([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [4.0, 1.0, 1.5]])
    M = m.detach().numpy()
    close(onp.cov(m), np.cov(M))
    close(onp.cov(m, rowvar=False, ddof=0), np.cov(M, rowvar=False, ddof=0))
    close(onp.cov(m[0], m[1]), np.cov(M[0], M[1]))
    close(onp.corrcoef(m), np.corrcoef(M))
    close(onp.cross(m, m[::-1]), np.cross(M, M[::-1]))
    close(onp.delete(m, [0, 2], axis=1), np.delete(M, [0, 2], axis=1))
    close(onp.compress([True, False, True], m, axis=0), np.compress([True, False, True], M, 0))
    close(onp.extract(M > 1.0, m), np.extract(M > 1.0, M))
    close(onp.full((2, 3), m[0, 0]), np.full((2, 3), 1.0))
    for fn in (onp.cov, onp.corrcoef, lambda m: onp.cross(m, m[::-1]),
               lambda m: onp.delete(m, 1), lambda m: onp.full((2,), m[0, 0])):
        check(fn, m)


# -- numpy.linalg and numpy.random ----------------------------------------------------------

def test_linalg_follows_numpy_signatures():
    a = leaf([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    A = a.detach().numpy()
    close(onp.linalg.svd(a, compute_uv=False), np.linalg.svd(A, compute_uv=False))
    close(onp.linalg.qr(a, mode="r"), np.linalg.qr(A, mode="r"))
    b = leaf([1.0, 2.0, 3.0])
    solution, residuals, rank, s = onp.linalg.lstsq(a, b)
    expected = np.linalg.lstsq(A, b.detach().numpy())
    close(solution, expected[0])
    close(s, expected[3])
    assert int(rank) == expected[2]
    close(onp.linalg.norm(a, axis=0), np.linalg.norm(A, axis=0))
    close(onp.linalg.trace(a, offset=1), np.linalg.trace(A, offset=1))
    symmetric = lambda a: (a + a.transpose(0, 1)) / 2  # noqa: E731
    check(lambda a: onp.linalg.cholesky(symmetric(a)), a)
    check(lambda a: onp.linalg.slogdet(a)[1], a)
    check(lambda a, b: onp.linalg.solve(a, b), a, b)


def test_random_draws_are_tensors_from_oxmeras_generator():
    onp.random.seed(5)
    a = onp.random.randn(2, 3)
    oxmera.manual_seed(5)
    b = onp.random.standard_normal((2, 3))
    assert isinstance(a, oxmera.Tensor) and a.shape == (2, 3) and a.dtype == np.float64
    assert np.array_equal(a.numpy(), b.numpy())
    assert onp.random.randint(0, 3, 10).dtype == np.int64
    assert onp.random.rand() .ndim == 0
    with pytest.raises(TypeError, match=r"oxmera\.numpy\.random\.normal has no gradient rule"):
        onp.random.normal(leaf(0.0), 1.0, 3)
    assert onp.random.normal(oxmera.tensor(0.0), 1.0, 3).shape == (3,)


@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nanprod", "nansum", "nanmean", "nanvar",
                                  "nanstd", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_functions_ignore_nans_in_values_and_gradients(name, axis):
    data = np.array([[0.5, np.nan, 3.0], [2.5, -1.0, 1.5], [1.2, 0.4, -0.6]])
    x = leaf(data)
    if name in ("nancumsum", "nancumprod") and axis is None:
        expected = getattr(np, name)(data)
    else:
        expected = getattr(np, name)(data, axis=axis)
    close(getattr(onp, name)(x, axis=axis), expected)
    getattr(onp, name)(x, axis=axis).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and x.grad[0, 1].item() == 0.0
    clean = leaf(np.nan_to_num(data, nan=0.7)[:2])
    check(lambda t: getattr(onp, name)(t, axis=axis), clean)


def test_small_compositions():
    x = leaf([[0.5, -1.5, 2.0], [1.0, 0.3, -0.2]])
    X = x.detach().numpy()
    pairs = [(onp.cbrt(x), np.cbrt(X)), (onp.positive(x), X), (onp.fix(x), np.fix(X)),
             (onp.real(x), X), (onp.imag(x), np.zeros_like(X)), (onp.angle(x), np.angle(X)),
             (onp.matrix_transpose(x), X.T), (onp.rollaxis(x, 1), np.rollaxis(X, 1)),
             (onp.vecdot(x, x), np.vecdot(X, X)), (onp.matvec(x, x[0]), np.matvec(X, X[0])),
             (onp.vecmat(x[0], x.T), np.vecmat(X[0], X.T)),
             (onp.cumulative_sum(x, axis=1, include_initial=True),
              np.cumulative_sum(X, axis=1, include_initial=True)),
             (onp.vander(x[0], 4), np.vander(X[0], 4)),
             (onp.vander(x[0], increasing=True), np.vander(X[0], increasing=True)),
             (onp.geomspace(x[1, 0], 8.0, 4), np.geomspace(1.0, 8.0, 4))]
    for ours, theirs in pairs:
        close(ours, theirs)
    check(onp.cbrt, leaf([0.5, -1.5, 2.0]))
    check(lambda x: onp.vander(x[0], 3), x)
    check(lambda x: onp.geomspace(x[0, 0], x[0, 2], 5), x)
    check(lambda x: onp.cumulative_prod(x, axis=0, include_initial=True), x)
    assert [t.shape for t in onp.unstack(x, axis=1)] == [(2,)] * 3
    # integer and bool results carry no gradient, so NumPy answers them even for x
    assert np.array_equal(onp.isin(x, [0.5]).numpy(), np.isin(X, [0.5]))
    assert np.array_equal(onp.signbit(x).numpy(), np.signbit(X))


def test_select_and_piecewise():
    x = leaf([-2.0, -0.5, 0.5, 3.0])
    X = x.detach().numpy()
    close(onp.select([x < 0, x > 1], [x * x, onp.sqrt(onp.abs(x))], default=-1.0),
          np.select([X < 0, X > 1], [X * X, np.sqrt(np.abs(X))], default=-1.0))
    check(lambda x: onp.select([x < 0, x > 1], [x * x, 2 * x], 0.5), x)
    # sqrt is evaluated on the positive entries only: no NaN in value or gradient
    pieces = [lambda t: onp.sqrt(t), lambda t: -t ** 2]
    close(onp.piecewise(x, [x > 0], pieces), np.piecewise(X, [X > 0], [np.sqrt, lambda t: -t ** 2]))
    close(onp.piecewise(x, [x < 0, x > 1], [0.0, lambda t: t * 3.0]),
          np.piecewise(X, [X < 0, X > 1], [0.0, lambda t: t * 3.0]))
    onp.piecewise(x, [x > 0], pieces).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    check(lambda x: onp.piecewise(x, [x > 0], pieces), x)
    with pytest.raises(ValueError, match="functions are expected"):
        onp.piecewise(x, [x > 0], [1.0, 2.0, 3.0])


def test_numpys_own_functions_run_the_composed_translators_on_tensors():
    # import oxmera imports oxmera.numpy, whose translators serve the protocol too
    x = leaf([3.0, 1.0, 2.0])
    close(np.sort(x), [1.0, 2.0, 3.0])
    close(np.median(x), 2.0)
    close(np.interp(1.5, [1.0, 2.0], x[:2]), 2.0)
    close(np.convolve(x, [1.0, 1.0]), np.convolve([3.0, 1.0, 2.0], [1.0, 1.0]))
    assert np.sort(x).grad_fn is not None
    check(lambda x: np.linspace(x[0], x[1], 4), x)
