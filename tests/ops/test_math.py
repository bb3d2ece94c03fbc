"""The math ops beyond the case tables: ``oxmera.special`` as a namespace, SciPy as
an optional extra, the errors of the fused products, and the generated
in-place family's rules (versions, leaves, nothing changed on error).

Values and gradients of each op are compared in ``_cases_math.py`` (gradcheck,
gradgradcheck, PyTorch); here, what those tables cannot express.
"""
import math
import sys

import numpy as np
import pytest

import oxmera
from oxmera.ops import _registry
from oxmera.ops.inplace import add_inplace_methods

# -- oxmera.special -------------------------------------------------------------------------

SPECIAL_NAMES = """expit logit erf erfc erfcx erfinv gammaln digamma psi polygamma multigammaln
    i0 i0e i1 i1e ndtr ndtri log_ndtr xlogy xlog1py entr sinc logsumexp softmax log_softmax
    zeta expm1 exp2 log1p round gammainc gammaincc bessel_j0 bessel_j1 bessel_y0 bessel_y1
    modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1
    scaled_modified_bessel_k0 scaled_modified_bessel_k1 spherical_bessel_j0
    chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w
    shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
    shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he
    laguerre_polynomial_l legendre_polynomial_p airy_ai""".split()


def test_special_namespace_has_its_names():
    assert sorted(oxmera.special.__all__) == sorted(SPECIAL_NAMES)
    for name in SPECIAL_NAMES:
        assert callable(getattr(oxmera.special, name)), name


def test_special_names_are_torch_special_names():
    torch = pytest.importorskip("torch")
    missing = [name for name in SPECIAL_NAMES if not hasattr(torch.special, name)]
    assert not missing


def test_special_aliases_are_the_same_ops():
    assert oxmera.special.expit is oxmera.sigmoid
    assert oxmera.special.gammaln is oxmera.lgamma
    assert oxmera.special.psi is oxmera.digamma
    assert oxmera.special.multigammaln is oxmera.mvlgamma


@pytest.mark.parametrize("name, reference, domain", [
    ("erfcx", "erfcx", (-3, 30)), ("erfinv", "erfinv", (-0.99, 0.99)),
    ("gammaln", "gammaln", (0.1, 50)), ("digamma", "psi", (0.1, 50)),
    ("i0", "i0", (-20, 20)), ("i0e", "i0e", (-20, 20)), ("i1", "i1", (-20, 20)),
    ("i1e", "i1e", (-20, 20)), ("ndtr", "ndtr", (-30, 8)), ("ndtri", "ndtri", (1e-9, 1 - 1e-9)),
    ("log_ndtr", "log_ndtr", (-40, 8)), ("entr", "entr", (0, 5)), ("erfc", "erfc", (-6, 27)),
    ("bessel_j0", "j0", (-30, 30)), ("bessel_j1", "j1", (-30, 30)), ("sinc", "sinc", (-5, 5)),
    ("bessel_y0", "y0", (0.01, 30)), ("bessel_y1", "y1", (0.01, 30)),
    ("modified_bessel_k0", "k0", (0.01, 30)), ("modified_bessel_k1", "k1", (0.01, 30)),
    ("scaled_modified_bessel_k0", "k0e", (0.01, 300)),
    ("scaled_modified_bessel_k1", "k1e", (0.01, 300)),
    ("airy_ai", "airy", (-20, 20)),
])
def test_special_values_match_scipy(name, reference, domain):
    scipy_special = pytest.importorskip("scipy.special")
    x = np.linspace(*domain, 301)
    ours = getattr(oxmera.special, name)(oxmera.tensor(x)).numpy()
    expected = (np.sinc(x) if name == "sinc" else scipy_special.airy(x)[0] if name == "airy_ai"
                else getattr(scipy_special, reference)(x))
    np.testing.assert_allclose(ours, expected, rtol=1e-13, atol=1e-300)


def test_airy_ai_gradient_is_scipys_derivative():
    scipy_special = pytest.importorskip("scipy.special")
    x = oxmera.tensor(np.linspace(-10, 5, 31), requires_grad=True)
    (grad,) = oxmera.autograd.grad(oxmera.special.airy_ai(x).sum(), x, create_graph=True)
    _, derivative, _, _ = scipy_special.airy(x.detach().numpy())
    np.testing.assert_allclose(grad.detach().numpy(), derivative, rtol=1e-13, atol=1e-300)
    (second,) = oxmera.autograd.grad(grad.sum(), x)      # Airy's equation: Ai'' = x Ai
    np.testing.assert_allclose(second.numpy(), x.detach().numpy() * scipy_special.airy(
        x.detach().numpy())[0], rtol=1e-13, atol=1e-300)


def test_erfc_keeps_its_relative_accuracy_in_the_tail():
    # where 1 - erf(x) would be 0: the point of a separate erfc
    values = [3.0, 10.0, 20.0, 26.0, -5.0]
    expected = [math.erfc(v) for v in values]      # the C library's, through Python
    ours = oxmera.erfc(oxmera.tensor(values, dtype=oxmera.float64)).numpy()
    np.testing.assert_allclose(ours, expected, rtol=1e-14)
    assert oxmera.erfc(oxmera.tensor([30.0, -30.0])).tolist() == [0.0, 2.0]


def test_float32_special_results_stay_float32():
    x = oxmera.tensor([0.5, 1.5])
    for fn in (oxmera.lgamma, oxmera.digamma, oxmera.erfinv, oxmera.i0, oxmera.erfc,
               oxmera.special.ndtr, oxmera.special.i1e, lambda t: oxmera.polygamma(2, t)):
        assert fn(x).dtype == oxmera.float32
    assert oxmera.lgamma(oxmera.tensor([1, 2])).dtype == oxmera.float32


@pytest.fixture
def without_scipy(monkeypatch):
    # ``import scipy.special`` fails as if SciPy were not installed
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)


@pytest.mark.parametrize("call", [
    lambda x: oxmera.lgamma(x), lambda x: oxmera.digamma(x), lambda x: oxmera.polygamma(1, x),
    lambda x: oxmera.erfinv(x * 0.1), lambda x: oxmera.special.i1(x),
    lambda x: oxmera.special.gammainc(x, x), lambda x: x.lgamma_(),
], ids=["lgamma", "digamma", "polygamma", "erfinv", "i1", "gammainc", "lgamma_"])
def test_without_scipy_the_special_functions_say_how_to_install_it(without_scipy, call):
    x = oxmera.tensor([1.0, 2.0]) * oxmera.ones(2, requires_grad=True)
    before = x.detach().numpy().copy()
    with pytest.raises(ImportError, match=r"pip install oxmera\[scipy\]"):
        call(x)
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == 0


def test_without_scipy_the_rest_still_works(without_scipy):
    x = oxmera.tensor([0.5, 1.5], requires_grad=True)
    out = (oxmera.special.ndtr(x) + oxmera.erfc(x) + oxmera.special.entr(x) + oxmera.xlogy(x, x)
           + oxmera.special.hermite_polynomial_h(x, 3) + oxmera.special.spherical_bessel_j0(x))
    out.sum().backward()
    assert x.grad is not None


def test_the_scipy_extra_is_declared():
    import pathlib
    tomllib = pytest.importorskip("tomllib")        # Python 3.11+
    pyproject = pathlib.Path(oxmera.__file__).parent.parent / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("not a source checkout")
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("scipy") for req in extras["scipy"])


# -- errors: the type PyTorch raises, the op named, nothing changed ---------------------------

ERRORS = [
    ("addmm-inner", lambda lib: lib.addmm(lib.ones(2), lib.ones(2, 3), lib.ones(2, 3)),
     "addmm"),
    ("addmm-input", lambda lib: lib.addmm(lib.ones(3), lib.ones(2, 3), lib.ones(3, 2)), "addmm"),
    ("addmm-rank", lambda lib: lib.addmm(lib.ones(2), lib.ones(3), lib.ones(3, 2)), "addmm"),
    ("addmv", lambda lib: lib.addmv(lib.ones(2), lib.ones(2, 3), lib.ones(2)), "addmv"),
    ("baddbmm", lambda lib: lib.baddbmm(lib.ones(2), lib.ones(2, 2, 3), lib.ones(3, 3, 2)),
     "baddbmm"),
    ("addbmm", lambda lib: lib.addbmm(lib.ones(2), lib.ones(2, 2, 3), lib.ones(2, 2, 2)),
     "addbmm"),
    ("chain_matmul", lambda lib: lib.chain_matmul(lib.ones(2, 3), lib.ones(2, 3)),
     "chain_matmul"),
    ("multi_dot-one", lambda lib: lib.linalg.multi_dot([lib.ones(2, 2)]), "multi_dot"),
    ("addcdiv-ints", lambda lib: lib.addcdiv(lib.ones(2), lib.tensor([1, 2]), lib.tensor([1, 2])),
     "addcdiv"),
    ("polygamma-negative", lambda lib: lib.polygamma(-1, lib.ones(2)), "polygamma"),
    ("div-rounding-mode", lambda lib: lib.div(lib.ones(2), 2, rounding_mode="round"), "div"),
    ("fmod-int-by-zero", lambda lib: lib.fmod(lib.tensor([1, 2]), lib.tensor([0, 1])), "fmod"),
    ("exp_-int", lambda lib: lib.tensor([1, 2]).exp_(), "exp_"),
    ("fmod_-broadcast", lambda lib: lib.ones(2).fmod_(lib.ones(3)), "fmod"),
    ("addcmul_-grows", lambda lib: lib.ones(3).addcmul_(lib.ones(2, 3), lib.ones(3)), "addcmul_"),
    ("float_power_-float32", lambda lib: lib.ones(2).float_power_(2), "float_power_"),
]


@pytest.mark.parametrize("call, opname", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_are_runtime_errors_naming_the_op(call, opname):
    with pytest.raises(RuntimeError, match=opname):
        call(oxmera)


@pytest.mark.parametrize("call", [e[1] for e in ERRORS if e[0] != "fmod-int-by-zero"],
                         ids=[e[0] for e in ERRORS if e[0] != "fmod-int-by-zero"])
def test_torch_raises_there_too(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        call(torch)


def test_a_failed_inplace_write_changes_nothing():
    x = oxmera.tensor([1.0, 2.0, 3.0]) * oxmera.ones(3, requires_grad=True)
    grad_fn, before = x.grad_fn, x.detach().numpy().copy()
    with pytest.raises(RuntimeError):
        x.addcmul_(oxmera.ones(2, 3), oxmera.ones(3))
    with pytest.raises(RuntimeError):
        x.fmod_(oxmera.ones(2))
    np.testing.assert_array_equal(x.detach().numpy(), before)
    assert x._version == 0 and x.grad_fn is grad_fn


# -- the generated in-place family ----------------------------------------------------------------

#: PyTorch's in-place Tensor methods of elementwise ops oxmera has (issue 14).
INPLACE_METHODS = """abs_ neg_ sign_ sgn_ reciprocal_ square_ exp_ exp2_ expm1_ log_ log2_ log10_
    log1p_ sqrt_ rsqrt_ sin_ cos_ tan_ asin_ arcsin_ acos_ arccos_ atan_ arctan_ atan2_ arctan2_
    sinh_ cosh_ tanh_ asinh_ arcsinh_ acosh_ arccosh_ atanh_ arctanh_ sigmoid_ erf_ erfc_
    erfinv_ relu_ lerp_ hypot_ floor_ ceil_ trunc_ round_ frac_ nan_to_num_ fmod_ remainder_
    copysign_ xlogy_ logit_ sinc_ deg2rad_ rad2deg_ ldexp_ float_power_ clamp_ clip_ clamp_min_
    clamp_max_ addcmul_ addcdiv_ addmm_ addmv_ addbmm_ baddbmm_ lgamma_ digamma_ polygamma_
    mvlgamma_ i0_ add_ sub_ mul_ div_ pow_ floor_divide_ true_divide_ divide_ eq_ ne_ lt_ le_
    gt_ ge_ logical_and_ logical_or_ logical_xor_ logical_not_ heaviside_ cumsum_ cumprod_
    tril_ triu_ masked_fill_ scatter_ scatter_add_ index_add_ index_copy_ index_fill_ index_put_
    masked_scatter_ scatter_reduce_ put_ fill_diagonal_""".split()
INPLACE_FUNCTIONS = """abs_ acos_ acosh_ addmv_ asin_ asinh_ atan_ atanh_ ceil_ clamp_min_
    clamp_max_ cos_ cosh_ deg2rad_ erf_ erfc_ exp_ exp2_ expm1_ floor_ frac_ i0_ ldexp_ log_
    log10_ log1p_ log2_ logit_ nan_to_num_ neg_ rad2deg_ reciprocal_ relu_ round_ rsqrt_
    sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ clamp_ fill_ zero_""".split()


def test_every_inplace_method_exists():
    missing = [name for name in INPLACE_METHODS if not callable(getattr(oxmera.Tensor, name,
                                                                        None))]
    assert not missing
    missing = [name for name in INPLACE_FUNCTIONS if not callable(getattr(oxmera, name, None))]
    assert not missing


def test_the_inplace_names_are_pytorchs():
    torch = pytest.importorskip("torch")
    assert [n for n in INPLACE_METHODS if not hasattr(torch.Tensor, n)] == []
    assert [n for n in INPLACE_FUNCTIONS if not hasattr(torch, n)] == []


@pytest.mark.parametrize("method, args", [
    ("exp_", ()), ("sigmoid_", ()), ("relu_", ()), ("clamp_min_", (0.5,)), ("lerp_", (2.0, 0.5)),
    ("addcmul_", (oxmera.ones(3), oxmera.ones(3))), ("polygamma_", (1,)), ("logit_", (0.1,)),
])
def test_inplace_methods_write_in_place_and_bump_the_version(method, args):
    x = oxmera.tensor([0.25, 0.5, 0.75])
    expected = getattr(x, method[:-1])(*args)
    storage, view = x.numpy(), x[1:]
    assert getattr(x, method)(*args) is x
    np.testing.assert_allclose(x.numpy(), expected.numpy())
    assert x.numpy() is storage or np.shares_memory(x.numpy(), storage)
    assert x._version == 1 and view._version == 1


def test_inplace_on_a_leaf_that_requires_grad_is_refused_and_allowed_under_no_grad():
    x = oxmera.tensor([0.5, 1.0], requires_grad=True)
    for call in (lambda: x.exp_(), lambda: x[0:1].sigmoid_(), lambda: oxmera.relu_(x),
                 lambda: x.addcdiv_(x, x)):
        with pytest.raises(RuntimeError, match="leaf"):
            call()
    assert x.tolist() == [0.5, 1.0] and x._version == 0
    with oxmera.no_grad():
        x.exp_()
    np.testing.assert_allclose(x.detach().numpy(), np.exp([0.5, 1.0]), rtol=1e-6)


def test_modifying_a_saved_tensor_in_place_makes_backward_raise():
    x = oxmera.tensor([0.5, 1.0], requires_grad=True)
    y = x * 1
    z = y * y                   # saves y
    y.tanh_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_inplace_gradient_flows_through_the_overwritten_tensor():
    x = oxmera.tensor([0.5, -1.0], dtype=oxmera.float64, requires_grad=True)
    y = x * 2
    y.sigmoid_().mul_(3).clamp_max_(2.0)
    y.sum().backward()
    s = 1 / (1 + np.exp(-2 * x.detach().numpy()))
    expected = np.where(3 * s <= 2.0, 3 * s * (1 - s) * 2, 0.0)
    np.testing.assert_allclose(x.grad.numpy(), expected)
    assert y.grad_fn.name() == "ClampBackward"


def test_add_inplace_methods_is_open_to_other_modules():
    def cube_example(x, *, offset=0.0):
        return x * x * x + offset
    try:
        methods = add_inplace_methods({"cube_example": cube_example})
        method = methods["cube_example_"]
        # queued for Tensor (installed with the others when oxmera.ops is imported)
        assert _registry._TENSOR_ATTRIBUTES["cube_example_"] is method
        x = oxmera.tensor([2.0], dtype=oxmera.float64) * oxmera.ones(1, dtype=oxmera.float64,
                                                                     requires_grad=True)
        leaf = x.grad_fn.next_functions[1][0].variable
        assert method(x, offset=1.0) is x and x.tolist() == [9.0] and x._version == 1
        x.sum().backward()      # through the recorded cube: 3 * 2 ** 2
        assert leaf.grad.tolist() == [24.0]
        with pytest.raises(RuntimeError, match="cube_example_.*leaf"):
            method(leaf)
    finally:
        _registry._TENSOR_ATTRIBUTES.pop("cube_example_", None)


def test_top_level_inplace_functions_are_the_methods():
    x = oxmera.tensor([-1.0, 2.0])
    assert oxmera.relu_(x) is x and x.tolist() == [0.0, 2.0]
    assert oxmera.exp_ is oxmera.Tensor.exp_


# -- results PyTorch defines ---------------------------------------------------------------------

def test_float_power_is_float64_and_div_rounding_keeps_integers():
    assert oxmera.float_power(oxmera.tensor([2.0]), 0.5).dtype == oxmera.float64
    assert oxmera.float_power(2, oxmera.tensor([1, 2])).tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="float_power"):
        oxmera.float_power(2, 3)
    assert oxmera.div(oxmera.tensor([7, -7]), 2, rounding_mode="floor").tolist() == [3, -4]
    assert oxmera.divide is oxmera.div


def test_addmm_with_beta_zero_ignores_nan_input():
    out = oxmera.addmm(oxmera.full((2, 2), math.nan), oxmera.ones(2, 3), oxmera.ones(3, 2),
                       beta=0)
    assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_heaviside_does_not_record():
    x = oxmera.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    out = oxmera.heaviside(x, oxmera.tensor(0.5))
    assert out.tolist() == [0.0, 0.5, 1.0] and not out.requires_grad


def test_zeta_and_gammainc_refuse_a_gradient_in_their_first_argument():
    s = oxmera.tensor([2.0], dtype=oxmera.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="zeta"):
        oxmera.special.zeta(s, 1.0).sum().backward()
    with pytest.raises(NotImplementedError, match="gammainc"):
        oxmera.special.gammainc(s, 1.0).sum().backward()
