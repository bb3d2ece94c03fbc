"""oxmera.scipy.special against scipy.special: values, first and second derivatives, errors.

This folder has no ``__init__.py`` on purpose: as a package it would be
imported as ``scipy`` (pytest's rootdir-relative package names) and shadow
SciPy itself; the test modules' names carry ``scipy_`` to stay unique.
"""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck
from oxmera.scipy import special

scipy_special = pytest.importorskip("scipy.special")

RNG = np.random.default_rng(0)
POSITIVE = RNG.uniform(0.5, 3.0, (3, 4))
REAL = RNG.uniform(-2.0, 2.0, (3, 4))
UNIT = RNG.uniform(0.1, 0.9, (3, 4))


def _leaf(values):
    return oxmera.tensor(np.array(values, dtype=np.float64), requires_grad=True)


# name: (the function of tensors, the same with scipy.special on arrays, inputs)
UNARY = {
    "gammaln": (POSITIVE,), "gamma": (POSITIVE,), "digamma": (POSITIVE,), "psi": (POSITIVE,),
    "erf": (REAL,), "erfc": (REAL,), "erfcx": (REAL,), "erfinv": (UNIT * 2 - 1,),
    "erfcinv": (UNIT * 2,), "expit": (REAL,), "logit": (UNIT,), "log_expit": (REAL * 10,),
    "entr": (POSITIVE,), "i0": (REAL,), "i0e": (REAL,), "i1": (REAL,), "i1e": (REAL,),
    "ndtr": (REAL,), "ndtri": (UNIT,), "log_ndtr": (REAL * 5,), "expm1": (REAL,),
    "log1p": (POSITIVE,),
    "betaln": (POSITIVE, POSITIVE.T.reshape(3, 4)), "beta": (POSITIVE, POSITIVE[::-1]),
    "xlogy": (REAL, POSITIVE), "xlog1py": (REAL, POSITIVE), "rel_entr": (POSITIVE, POSITIVE[::-1]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_and_gradients(name):
    inputs = UNARY[name]
    function = getattr(special, name)
    got = function(*inputs)
    assert got.dtype == oxmera.float64
    np.testing.assert_allclose(got.numpy(), getattr(scipy_special, name)(*inputs), rtol=1e-10,
                               atol=1e-12)
    leaves = [_leaf(x) for x in inputs]
    assert gradcheck(function, leaves)
    assert gradgradcheck(function, leaves)


def test_float32_tensors_keep_their_dtype():
    x = oxmera.tensor([0.5, 1.5])
    assert special.gammaln(x).dtype == oxmera.float32
    assert special.xlogy(x, 2.0).dtype == oxmera.float32


@pytest.mark.parametrize("name,order", [("iv", 2.5), ("ive", 1.5), ("iv", 0.0), ("ive", -1.0)])
def test_bessel_of_real_order(name, order):
    z = POSITIVE
    np.testing.assert_allclose(getattr(special, name)(order, z).numpy(),
                               getattr(scipy_special, name)(order, z), rtol=1e-12)
    assert gradcheck(lambda x: getattr(special, name)(order, x), [_leaf(z)])
    assert gradgradcheck(lambda x: getattr(special, name)(order, x), [_leaf(z)])


def test_non_differentiable_arguments_raise_when_differentiated():
    v = _leaf(1.5)
    with pytest.raises(NotImplementedError, match="order v"):
        special.iv(v, [1.0, 2.0]).sum().backward()
    a = _leaf(2.0)
    with pytest.raises(NotImplementedError, match="betainc with respect to a or b"):
        special.betainc(a, 3.0, [0.5]).sum().backward()
    with pytest.raises(NotImplementedError, match="gammainc with respect to input"):
        special.gammainc(a, [0.5]).sum().backward()


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_in_x(name):
    a = POSITIVE
    np.testing.assert_allclose(getattr(special, name)(a, POSITIVE.T.reshape(3, 4)).numpy(),
                               getattr(scipy_special, name)(a, POSITIVE.T.reshape(3, 4)),
                               rtol=1e-12)
    assert gradgradcheck(lambda x: getattr(special, name)(a, x), [_leaf(POSITIVE)])


def test_betainc_in_x():
    a, b = POSITIVE, POSITIVE[::-1]
    np.testing.assert_allclose(special.betainc(a, b, UNIT).numpy(),
                               scipy_special.betainc(a, b, UNIT), rtol=1e-12)
    assert gradgradcheck(lambda x: special.betainc(a, b, x), [_leaf(UNIT)])


@pytest.mark.parametrize("n", [0, 1, 3])
def test_polygamma(n):
    np.testing.assert_allclose(special.polygamma(n, POSITIVE).numpy(),
                               scipy_special.polygamma(n, POSITIVE), rtol=1e-12)
    assert gradgradcheck(lambda x: special.polygamma(n, x), [_leaf(POSITIVE)])


def test_polygamma_with_an_array_of_orders():
    orders = np.array([[0, 1, 2, 1]])
    np.testing.assert_allclose(special.polygamma(orders, POSITIVE).numpy(),
                               scipy_special.polygamma(orders, POSITIVE), rtol=1e-12)
    assert gradcheck(lambda x: special.polygamma(orders, x), [_leaf(POSITIVE)])
    with pytest.raises(ValueError, match="non-negative integers"):
        special.polygamma(-1, POSITIVE)
    with pytest.raises(ValueError, match="non-negative integers"):
        special.polygamma(1.5, POSITIVE)


def test_multigammaln():
    a = POSITIVE + 2
    np.testing.assert_allclose(special.multigammaln(a, 3).numpy(),
                               scipy_special.multigammaln(a, 3), rtol=1e-12)
    assert gradgradcheck(lambda x: special.multigammaln(x, 3), [_leaf(a)])
    with pytest.raises(ValueError, match="condition a > 0.5"):
        special.multigammaln([0.5, 2.0], 3)
    with pytest.raises(ValueError, match="positive integer"):
        special.multigammaln([2.0], 0)


def test_zeta():
    np.testing.assert_allclose(special.zeta(POSITIVE + 1.5).numpy(),
                               scipy_special.zeta(POSITIVE + 1.5), rtol=1e-12)
    np.testing.assert_allclose(special.zeta(2.5, POSITIVE).numpy(),
                               scipy_special.zeta(2.5, POSITIVE), rtol=1e-12)
    assert gradgradcheck(lambda q: special.zeta(2.5, q), [_leaf(POSITIVE)])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp(axis, keepdims):
    expected = scipy_special.logsumexp(REAL, axis=axis, keepdims=keepdims)
    got = special.logsumexp(REAL, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(expected)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    assert gradgradcheck(lambda a: special.logsumexp(a, axis=axis, keepdims=keepdims),
                         [_leaf(REAL)])


@pytest.mark.parametrize("axis", [None, 1])
def test_logsumexp_with_b_and_sign(axis):
    b = RNG.uniform(-1.0, 2.0, (3, 4))
    out, sign = special.logsumexp(REAL, axis=axis, b=b, return_sign=True)
    expected, expected_sign = scipy_special.logsumexp(REAL, axis=axis, b=b, return_sign=True)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    np.testing.assert_array_equal(sign.numpy(), expected_sign)
    assert gradgradcheck(lambda a, w: special.logsumexp(a, axis=axis, b=w, return_sign=True)[0],
                         [_leaf(REAL), _leaf(b)])
    # without return_sign, a negative sum is nan, as in SciPy
    with np.errstate(invalid="ignore"):
        expected = scipy_special.logsumexp(REAL, axis=axis, b=b)
    np.testing.assert_allclose(special.logsumexp(REAL, axis=axis, b=b).numpy(), expected,
                               rtol=1e-12)


def test_logsumexp_of_minus_infinity_and_a_broadcast_b():
    a = np.array([[-np.inf, -np.inf], [0.0, 1.0]])
    np.testing.assert_allclose(special.logsumexp(a, axis=1, b=[2.0, 3.0]).numpy(),
                               scipy_special.logsumexp(a, axis=1, b=[2.0, 3.0]))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_softmax(name, axis):
    np.testing.assert_allclose(getattr(special, name)(REAL, axis=axis).numpy(),
                               getattr(scipy_special, name)(REAL, axis=axis), rtol=1e-12)
    assert gradgradcheck(lambda x: getattr(special, name)(x, axis=axis), [_leaf(REAL)])


def test_inputs_that_are_not_real_numbers_are_refused():
    with pytest.raises(TypeError, match=r"gammaln\(\): input must be a Tensor"):
        special.gammaln("1.0")
    with pytest.raises(TypeError, match="complex"):
        special.erf(np.array([1j]))


def test_without_scipy_the_error_names_the_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match=r"pip install oxmera\[scipy\]"):
        special.iv(1.0, [1.0])
    with pytest.raises(ImportError, match=r"pip install oxmera\[scipy\]"):
        special.gammaln([1.0])


def test_scipy_on_a_tensor_that_requires_grad_points_at_oxmera_scipy():
    x = _leaf([1.0, 2.0])
    # a SciPy ufunc reaches oxmera's __array_ufunc__: the error names the twin
    with pytest.raises(TypeError, match=r"scipy\.special\.gammaln is not supported on oxmera "
                                        r"tensors: use oxmera\.scipy\.special\.gammaln"):
        scipy_special.gammaln(x)
    with pytest.raises(TypeError, match="the differentiable functions of oxmera.scipy.special"):
        scipy_special.kv(1.0, x)
    # anything else converts the tensor to an array: numpy()'s error names oxmera.scipy
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires "
                                           r"grad.*oxmera\.scipy"):
        scipy_special.logsumexp(x)


def test_importing_oxmera_scipy_needs_no_scipy():
    import subprocess
    import sys
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import oxmera.scipy\n"
            "from oxmera.scipy import stats, special\n"
            "print(round(stats.norm.logpdf([0.0]).item(), 4))\n"
            "try:\n"
            "    special.gammaln([1.0])\n"
            "except ImportError as error:\n"
            "    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.splitlines() == [
        "-0.9189",
        "lgamma() needs SciPy, an optional dependency of oxmera: pip install oxmera[scipy]"]
