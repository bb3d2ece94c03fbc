"""``oxmera.numpy`` over complex tensors, ``onp.fft`` and ``onp.linalg.eig``: values and dtypes
against NumPy, first and second derivatives by finite differences (float64/complex128),
and the same translators reached through NumPy's protocol (``np.fft.fft(t)``)."""
import numpy as np
import pytest

import oxmera
import oxmera.numpy as onp
from oxmera.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(16)


def leaf(values):
    values = np.asarray(values)
    dtype = oxmera.complex128 if values.dtype.kind == "c" else oxmera.float64
    return oxmera.tensor(values, dtype=dtype, requires_grad=True)


def real_leaf(*shape):
    return leaf(RNG.standard_normal(shape))


def complex_leaf(*shape):
    return leaf(RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape))


def same(ours, theirs):
    assert isinstance(ours, oxmera.Tensor)
    assert ours.dtype == np.asarray(theirs).dtype, (ours.dtype, np.asarray(theirs).dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs, rtol=1e-10, atol=1e-12)


def check(fn, *inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- complex numbers ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["real", "imag", "conj", "conjugate", "angle", "real_if_close",
                                  "sort_complex", "abs", "exp", "mean", "sum"])
@pytest.mark.parametrize("make", [complex_leaf, real_leaf], ids=["complex", "real"])
def test_complex_functions_match_numpy_and_differentiate(name, make):
    z = make(2, 3)
    same(getattr(onp, name)(z), getattr(np, name)(z.detach().numpy()))
    # Through NumPy's protocol too: the same translator.
    same(getattr(np, name)(z), getattr(np, name)(z.detach().numpy()))
    if name == "imag" and z.dtype.kind != "c":
        assert not onp.imag(z).requires_grad        # zeros: NumPy's imaginary part of reals
        return
    check(getattr(onp, name), z)


def test_angle_in_degrees_and_of_integers():
    z = complex_leaf(4)
    same(onp.angle(z, deg=True), np.angle(z.detach().numpy(), deg=True))
    check(lambda z: onp.angle(z, deg=True), z)
    same(onp.angle(oxmera.tensor([-2, 3])), np.angle(np.array([-2, 3])))


def test_real_if_close_decides_the_dtype_from_the_values():
    values = np.array([1.0 + 1e-15j, 2.0 - 1e-16j])
    z = leaf(values)
    same(onp.real_if_close(z), np.real_if_close(values))       # real: within 100 eps
    assert onp.real_if_close(z).dtype == np.float64
    same(onp.real_if_close(z, tol=1), np.real_if_close(values, tol=1))   # absolute tolerance 1
    far = leaf([1.0 + 1e-3j, 2.0])
    assert onp.real_if_close(far).dtype == np.complex128
    check(onp.real_if_close, far)
    # Finite differences stay on one side of the tolerance: real, the real part's gradient.
    check(lambda z: onp.real_if_close(z, tol=1), z)


def test_sort_complex_of_integers_has_numpys_dtype():
    for dtype in (np.int8, np.int32, np.float32):
        values = np.array([3, 1, 2], dtype=dtype)
        same(onp.sort_complex(oxmera.tensor(values)), np.sort_complex(values))


def test_is_complex_predicates_answer_from_the_values():
    z = leaf([1.0 + 0j, 2.0 + 1j])
    same(onp.iscomplex(z), np.iscomplex(z.detach().numpy()))
    same(onp.isreal(z), np.isreal(z.detach().numpy()))
    assert onp.iscomplexobj(z) and not onp.isrealobj(z)
    assert not onp.iscomplexobj(real_leaf(2))


def test_complex_dtypes_are_numpys_and_create_complex_tensors():
    assert onp.complex64 is np.complex64 and onp.complex128 is np.complex128
    assert onp.cdouble is np.cdouble and onp.complexfloating is np.complexfloating
    zeros = onp.zeros(3, dtype=onp.complex64)
    assert isinstance(zeros, oxmera.Tensor) and zeros.dtype == np.complex64
    built = onp.array([1 + 2j, 3.0])
    assert isinstance(built, oxmera.Tensor) and built.dtype == np.complex128
    a = leaf(1.5)
    check(lambda a: onp.array([a * 1j, a + 2j]), a)


@pytest.mark.parametrize("name,args", [
    ("vdot", lambda z: (z, z[::-1])), ("isclose", lambda z: (z, z.conj())),
    ("allclose", lambda z: (z, z)), ("cov", lambda z: (z,)), ("corrcoef", lambda z: (z,)),
    ("nanvar", lambda z: (z,)), ("nanstd", lambda z: (z,)), ("gradient", lambda z: (z[0],)),
    ("trapezoid", lambda z: (z,)), ("linspace", lambda z: (z[0, 0], z[0, 1], 4)),
    ("interp", lambda z: (leaf([0.5, 1.5, -1.0, 3.0]), leaf([0.0, 1.0, 2.0]), z[1])),
])
def test_functions_composed_for_real_values_take_complex_ones_as_numpy(name, args):
    # These once cast complex inputs to real (dropping the imaginary parts) or forgot
    # NumPy's conjugation (vdot's first argument, cov's second factor).
    z = complex_leaf(2, 3)
    values = [a.detach().numpy() if isinstance(a, oxmera.Tensor) else a for a in args(z)]
    ours, theirs = getattr(onp, name)(*args(z)), getattr(np, name)(*values)
    if isinstance(theirs, (bool, np.bool_)):
        assert bool(ours) == bool(theirs)
        return
    same(ours, theirs)
    if ours.dtype.kind in "fc" and ours.requires_grad:
        check(lambda z: getattr(onp, name)(*args(z)), z)


def test_interp_of_complex_values_with_complex_fill_values():
    x, xp, fp = leaf([-1.0, 0.5, 3.0]), leaf([0.0, 1.0]), complex_leaf(2)
    same(onp.interp(x, xp, fp, left=5j, right=1),
         np.interp(x.detach().numpy(), xp.detach().numpy(), fp.detach().numpy(), left=5j,
                   right=1))


# -- fft ---------------------------------------------------------------------------------------

ONE_DIM = [("fft", real_leaf), ("fft", complex_leaf), ("ifft", complex_leaf),
           ("rfft", real_leaf), ("irfft", complex_leaf), ("hfft", complex_leaf),
           ("ihfft", real_leaf)]


@pytest.mark.parametrize("name,make", ONE_DIM)
@pytest.mark.parametrize("kwargs", [{}, {"n": 7, "axis": 0, "norm": "ortho"},
                                    {"n": 3, "norm": "forward"}, {"norm": "backward"}])
def test_one_dim_transforms_match_numpy(name, make, kwargs):
    x = make(4, 5)
    fn = getattr(onp.fft, name)
    same(fn(x, **kwargs), getattr(np.fft, name)(x.detach().numpy(), **kwargs))
    same(getattr(np.fft, name)(x, **kwargs), getattr(np.fft, name)(x.detach().numpy(), **kwargs))
    check(lambda t: fn(t, **kwargs), x)


N_DIM = [("fft2", real_leaf), ("fft2", complex_leaf), ("ifft2", complex_leaf),
         ("rfft2", real_leaf), ("irfft2", complex_leaf), ("fftn", complex_leaf),
         ("ifftn", real_leaf), ("rfftn", real_leaf), ("irfftn", complex_leaf)]


@pytest.mark.parametrize("name,make", N_DIM)
@pytest.mark.parametrize("kwargs", [{}, {"s": (3, 6), "axes": (2, 0), "norm": "ortho"},
                                    {"axes": (1,), "norm": "forward"}])
def test_n_dim_transforms_match_numpy(name, make, kwargs):
    x = make(2, 3, 4)
    fn = getattr(onp.fft, name)
    same(fn(x, **kwargs), getattr(np.fft, name)(x.detach().numpy(), **kwargs))
    check(lambda t: fn(t, **kwargs), x)


def test_transforms_of_integers_and_lists_take_numpys_dtypes():
    ints = np.array([1, 2, 3, 4])
    same(onp.fft.fft(oxmera.tensor(ints)), np.fft.fft(ints))
    same(onp.fft.rfft(oxmera.tensor(ints)), np.fft.rfft(ints))
    same(onp.fft.fft([1.0, 2.0, 3.0]), np.fft.fft([1.0, 2.0, 3.0]))
    x32 = oxmera.tensor([1.0, 2.0, 0.5])
    assert onp.fft.fft(x32).dtype == np.fft.fft(x32.numpy()).dtype == np.complex64


def test_shifts_and_frequencies_match_numpy():
    x = complex_leaf(4, 5)
    for name in ("fftshift", "ifftshift"):
        for kwargs in ({}, {"axes": 1}, {"axes": (0, 1)}):
            same(getattr(onp.fft, name)(x, **kwargs),
                 getattr(np.fft, name)(x.detach().numpy(), **kwargs))
        check(getattr(onp.fft, name), x)
    same(onp.fft.fftfreq(5, 0.1), np.fft.fftfreq(5, 0.1))
    same(onp.fft.rfftfreq(6), np.fft.rfftfreq(6))
    # A tensor spacing carries the gradient.
    d = leaf(0.25)
    same(onp.fft.fftfreq(6, d), np.fft.fftfreq(6, 0.25))
    same(onp.fft.rfftfreq(6, d), np.fft.rfftfreq(6, 0.25))
    check(lambda d: onp.fft.fftfreq(6, d), d)


def test_a_loss_written_with_numpys_own_fft_differentiates():
    # Parseval: sum |fft(x)|^2 = n sum x^2, so the gradient is 2 n x.
    signal = real_leaf(16)
    power = np.sum(np.abs(np.fft.fft(signal)) ** 2)
    assert isinstance(power, oxmera.Tensor)
    power.backward()
    np.testing.assert_allclose(signal.grad.numpy(), 2 * 16 * signal.detach().numpy())


def test_fft_refuses_out_and_bad_norm():
    x = real_leaf(4)
    with pytest.raises(TypeError, match="out= is not supported"):
        onp.fft.fft(x, out=np.zeros(4, complex))
    with pytest.raises(RuntimeError, match="normalization"):
        onp.fft.fft(x, norm="sideways")


# -- linalg.eig --------------------------------------------------------------------------------

def test_eig_of_a_real_matrix_with_real_eigenvalues_is_real_as_numpys():
    A = leaf([[2.0, 1.0], [0.5, 3.0]])
    values, vectors = onp.linalg.eig(A)
    theirs = np.linalg.eig(A.detach().numpy())
    # float64 up to NumPy 2.4 (all eigenvalues real), complex128 from NumPy 2.5
    assert values.dtype == theirs.eigenvalues.dtype
    assert vectors.dtype == theirs.eigenvectors.dtype
    np.testing.assert_allclose(np.sort(values.detach().numpy()), np.sort(theirs.eigenvalues))
    np.testing.assert_allclose(np.sort(onp.linalg.eigvals(A).detach().numpy()),
                               np.sort(theirs.eigenvalues))
    check(onp.linalg.eigvals, A)

    def eigenpairs(A):
        values, vectors = onp.linalg.eig(A)
        if vectors.is_complex():
            # NumPy 2.5 gives complex vectors, each defined up to a phase: only
            # phase-free functions of them have a gradient (PyTorch's rule).
            return values, vectors.abs()
        return values, vectors, A @ vectors - vectors * values     # the residual: 0
    check(eigenpairs, A)


def test_eig_of_a_rotation_is_complex_as_numpys():
    A = leaf([[0.5, -1.0], [1.0, 0.25]])
    values = onp.linalg.eigvals(A)
    theirs = np.linalg.eigvals(A.detach().numpy())
    assert values.dtype == theirs.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(values.detach().numpy()), np.sort_complex(theirs))
    check(onp.linalg.eigvals, A)
    assert np.linalg.eigvals(A).dtype == np.complex128       # through the protocol too


def test_eig_of_a_complex_matrix_and_of_integers():
    Z = complex_leaf(3, 3)
    values = onp.linalg.eigvals(Z)
    np.testing.assert_allclose(np.sort_complex(values.detach().numpy()),
                               np.sort_complex(np.linalg.eigvals(Z.detach().numpy())))
    check(lambda Z: onp.sum(onp.abs(onp.linalg.eigvals(Z)) ** 2), Z)
    ints = np.array([[1, 2], [3, 4]])
    same(onp.linalg.eigvals(oxmera.tensor(ints)), np.linalg.eigvals(ints))
