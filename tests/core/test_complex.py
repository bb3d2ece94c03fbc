"""Complex tensors: dtypes, creation, promotion, printing, the real/complex boundary and
backward's rules, against PyTorch where installed. (Op values and gradients are in
tests/ops/_cases_complex.py.)"""
import itertools

import numpy as np
import pytest

import oxmera

DTYPES = ["bool", "uint8", "int64", "float16", "float32", "float64", "complex64", "complex128"]


def test_dtype_names():
    assert oxmera.complex64 is np.dtype(np.complex64) or oxmera.complex64 == np.complex64
    assert oxmera.cfloat == oxmera.complex64 and oxmera.cdouble == oxmera.complex128


def test_creation_from_python_complex_numbers_and_arrays():
    assert oxmera.tensor([1 + 2j, 3]).dtype == oxmera.complex64
    assert oxmera.tensor(2j).dtype == oxmera.complex64
    assert oxmera.tensor([1.0, oxmera.tensor(1j)]).dtype == oxmera.complex64
    assert oxmera.tensor(np.array([1j])).dtype == oxmera.complex128
    assert oxmera.tensor(np.array([1j], np.complex64)).dtype == oxmera.complex64
    assert oxmera.tensor([1, 2], dtype=oxmera.complex128).dtype == oxmera.complex128
    assert oxmera.zeros(2, dtype=oxmera.cfloat).is_complex()
    assert complex(oxmera.tensor(1 + 2j)) == 1 + 2j
    previous = oxmera.get_default_dtype()
    oxmera.set_default_dtype(oxmera.float64)
    try:
        assert oxmera.tensor([1j]).dtype == oxmera.complex128
        assert (oxmera.ones(2, dtype=oxmera.int64) * 1j).dtype == oxmera.complex128
    finally:
        oxmera.set_default_dtype(previous)


def test_printing():
    assert repr(oxmera.tensor([1 + 2j, 0.5 - 0.5j])) == (
        "tensor([1. +2.j , 0.5-0.5j], dtype=complex64)")


def test_requires_grad_and_implicit_backward_refused():
    z = oxmera.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * z).sum().backward()
    with pytest.raises(RuntimeError, match="scalar outputs"):
        (z * oxmera.ones(2)).backward()
    (z * z).sum().backward(oxmera.tensor(1 + 0j))
    assert z.grad.dtype == oxmera.complex64


def test_gradient_into_a_real_input_is_the_real_part():
    x = oxmera.tensor([0.5, -1.5], dtype=oxmera.float64, requires_grad=True)
    z = x * (2 + 3j)
    (z * z.conj()).real.sum().backward()        # |z|^2 = 13 x^2
    assert x.grad.dtype == oxmera.float64
    np.testing.assert_allclose(x.grad.numpy(), 26 * x.detach().numpy())


def test_cast_to_real_keeps_the_real_part():
    assert oxmera.tensor([1 + 2j]).to(oxmera.float32).tolist() == [1.0]


def test_conj_of_a_real_tensor_is_itself():
    x = oxmera.ones(2)
    assert x.conj() is x and oxmera.resolve_conj(x) is x
    assert not oxmera.tensor([1j]).conj().is_conj()


def test_errors():
    with pytest.raises(RuntimeError):
        oxmera.ones(2).imag
    with pytest.raises(RuntimeError):
        oxmera.view_as_real(oxmera.ones(2))
    with pytest.raises(RuntimeError):
        oxmera.view_as_complex(oxmera.ones(3))
    with pytest.raises(RuntimeError):
        oxmera.view_as_complex(oxmera.ones(2, 4)[:, ::2])
    with pytest.raises(RuntimeError):
        oxmera.complex(oxmera.ones(2), oxmera.ones(2, dtype=oxmera.float64))
    with pytest.raises(RuntimeError, match="complex"):
        oxmera.erf(oxmera.ones(2, 2, dtype=oxmera.complex64))


def _name(torch_dtype):
    # oxmera has no complex32 (PyTorch's float16 meeting complex): complex64 instead.
    return str(torch_dtype).replace("torch.", "").replace("complex32", "complex64")


def _operand(lib, dtype, kind):
    d = getattr(lib, dtype)
    if kind == "dim":
        return lib.ones(2, dtype=d)
    return lib.ones((), dtype=d)


@pytest.mark.filterwarnings("ignore:ComplexHalf support")
@pytest.mark.parametrize("a, b", list(itertools.product(DTYPES, DTYPES)))
def test_promotion_matches_torch(a, b):
    torch = pytest.importorskip("torch")
    for ka, kb in (("dim", "dim"), ("dim", "0d"), ("0d", "dim")):
        if "bool" in (a, b) and a == b:
            continue
        ours = _operand(oxmera, a, ka) + _operand(oxmera, b, kb) if (a, b) != ("bool", "bool") \
            else None
        theirs = _operand(torch, a, ka) + _operand(torch, b, kb)
        assert str(ours.dtype) == _name(theirs.dtype), (a, ka, b, kb)


@pytest.mark.filterwarnings("ignore:ComplexHalf support")
@pytest.mark.parametrize("dtype", DTYPES[1:])
@pytest.mark.parametrize("scalar", [2, 2.5, 1j])
def test_promotion_with_python_numbers_matches_torch(dtype, scalar):
    torch = pytest.importorskip("torch")
    ours = oxmera.ones(2, dtype=getattr(oxmera, dtype)) * scalar
    theirs = torch.ones(2, dtype=getattr(torch, dtype)) * scalar
    assert str(ours.dtype) == _name(theirs.dtype)
    assert str(oxmera.result_type(oxmera.ones(2, dtype=getattr(oxmera, dtype)), scalar)) == \
        _name(torch.result_type(torch.ones(2, dtype=getattr(torch, dtype)), scalar))


@pytest.mark.parametrize("call", [
    lambda z: z.sort(), lambda z: z > 0, lambda z: z.max(), lambda z: z.amax(),
    lambda z: z.argmin(), lambda z: z.sign(), lambda z: oxmera.relu(z), lambda z: z.floor(),
    lambda z: z.clamp(0, 1), lambda z: oxmera.maximum(z, z), lambda z: z.topk(1),
])
def test_ops_needing_an_order_refuse_complex_as_torch(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        call(torch.tensor([1 + 1j, 2j]))
    with pytest.raises(RuntimeError):
        call(oxmera.tensor([1 + 1j, 2j]))


def test_gradcheck_catches_a_missing_conjugate():
    from oxmera.autograd import GradcheckError, gradcheck, gradgradcheck
    from oxmera.extend import op

    @op(name="times_two_plus_i_unconjugated_example", inputs=1)
    def wrong(x):
        return x * (2 + 1j)

    @wrong.vjp
    def _(ctx, grad, x):
        return grad * (2 + 1j)          # should be grad * (2 - 1j)

    z = oxmera.tensor([0.5 - 1j], dtype=oxmera.complex128, requires_grad=True)
    with pytest.raises(GradcheckError):
        gradcheck(wrong, (z,))
    assert gradcheck(lambda t: t * (2 + 1j), (z,))
    assert gradgradcheck(lambda t: (t * t.conj() * t).exp(), (z,))
    # A real input and a complex output, and the other way round.
    x = oxmera.tensor([0.3, -0.7], dtype=oxmera.float64, requires_grad=True)
    assert gradcheck(lambda t: oxmera.polar(t.abs() + 1, t), (x,))
    assert gradcheck(lambda t: (t * t).abs(), (z,))


def test_cfloat_cdouble_methods():
    x = oxmera.ones(2, requires_grad=True)
    z = x.cdouble()
    assert z.dtype == oxmera.complex128 and z.requires_grad
    (z * 1j).imag.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    assert x.cfloat().dtype == oxmera.complex64


def test_complex_tensors_round_trip_through_pytorchs_format(tmp_path):
    torch = pytest.importorskip("torch")
    tensors = {"a": oxmera.tensor([1 + 2j, 3 - 1j]),
               "b": oxmera.tensor(np.array([[1 + 2j], [0.5j]]))}
    path = tmp_path / "complex.pt"
    oxmera.save(tensors, path)
    theirs = torch.load(path)
    assert theirs["a"].dtype == torch.complex64 and theirs["b"].dtype == torch.complex128
    np.testing.assert_array_equal(theirs["b"].numpy(), tensors["b"].numpy())
    torch.save(theirs, path)
    ours = oxmera.load(path)
    assert ours["a"].dtype == oxmera.complex64
    np.testing.assert_array_equal(ours["a"].numpy(), tensors["a"].numpy())


def test_randn_complex_has_unit_variance_split_between_the_parts():
    z = oxmera.randn(200000, dtype=oxmera.complex128, generator=oxmera.Generator().manual_seed(0))
    assert z.dtype == oxmera.complex128
    assert abs(float((z.abs() ** 2).mean()) - 1.0) < 0.02
    assert abs(float(z.real.var()) - 0.5) < 0.02 and abs(float(z.imag.var()) - 0.5) < 0.02
    assert oxmera.randn(2, dtype=oxmera.cfloat, requires_grad=True).requires_grad
