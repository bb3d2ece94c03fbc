"""``oxmera.autograd.functional``: values against finite differences and PyTorch, structure
of the results (single/tuple inputs and outputs), create_graph, strict mode and errors."""
import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
from oxmera.autograd import functional as F

RNG = np.random.default_rng(0)


def t64(*shape, requires_grad=False):
    return oxmera.tensor(RNG.standard_normal(shape), dtype=oxmera.float64,
                         requires_grad=requires_grad)


def arr(t):
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def numerical_jacobian(fn, inputs, eps=1e-6):
    """blocks[i][k]: d output i / d input k, shaped out.shape + in.shape (central differences)."""
    arrays = [arr(x).copy() for x in inputs]

    def evaluate(values):
        outs = fn(*[oxmera.tensor(v) for v in values])
        outs = outs if isinstance(outs, tuple) else (outs,)
        return [arr(o) for o in outs]

    base = evaluate(arrays)
    blocks = [[np.zeros(b.shape + a.shape) for a in arrays] for b in base]
    for k, a in enumerate(arrays):
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[k][idx] += eps
            minus[k][idx] -= eps
            for i, (p, m) in enumerate(zip(evaluate(plus), evaluate(minus))):
                blocks[i][k][(Ellipsis,) + idx] = (p - m) / (2 * eps)
    return blocks


def contract_out(block, v, out_ndim):
    """v^T J for one block: sum over the output dims."""
    return np.tensordot(v, block, axes=out_ndim)


def contract_in(block, v, in_ndim):
    """J v for one block: sum over the input dims."""
    return np.tensordot(block, v, axes=(list(range(block.ndim - in_ndim, block.ndim)),
                                        list(range(in_ndim))))


# Functions written with methods and operators both libraries have, so the
# same code runs on oxmera and on torch.
def f_single(x):
    return (x.sin() * x).sum(0)


def f_multi(x, y):
    return (x.exp() * y).sum(1), x @ y.T, (x * y).sum()


def f_scalar(x, y):
    return ((x ** 3) * y.tanh()).sum() + (x * y).sum() ** 2


def f_scalar_one(x):
    return (x.sin() * x.exp()).sum()


# -- vjp -----------------------------------------------------------------------------------------

def test_vjp_single_input_single_output_agrees_with_finite_differences():
    x = t64(3, 2)
    v = t64(2)
    out, g = F.vjp(f_single, x, v)
    assert isinstance(out, oxmera.Tensor) and isinstance(g, oxmera.Tensor)
    np.testing.assert_allclose(arr(out), arr(f_single(x)))
    (jac,), = numerical_jacobian(f_single, [x])
    np.testing.assert_allclose(arr(g), contract_out(jac, arr(v), 1), rtol=1e-6, atol=1e-8)
    assert g.shape == x.shape and not g.requires_grad and not out.requires_grad


def test_vjp_tuple_inputs_and_outputs():
    x, y = t64(2, 3), t64(2, 3)
    vs = (t64(2), t64(2, 2), t64())
    outs, grads = F.vjp(f_multi, (x, y), vs)
    assert isinstance(outs, tuple) and len(outs) == 3
    assert isinstance(grads, tuple) and len(grads) == 2
    blocks = numerical_jacobian(f_multi, [x, y])
    for k in range(2):
        expected = sum(contract_out(blocks[i][k], arr(vs[i]), vs[i].ndim) for i in range(3))
        np.testing.assert_allclose(arr(grads[k]), expected, rtol=1e-6, atol=1e-8)


def test_vjp_v_may_be_omitted_for_a_one_element_output():
    x = t64(4)
    _, g = F.vjp(f_scalar_one, x)
    (jac,), = numerical_jacobian(f_scalar_one, [x])
    np.testing.assert_allclose(arr(g), jac, rtol=1e-6)
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.vjp(f_single, t64(3, 2))


def test_vjp_tuple_of_one_input_returns_a_tuple():
    x = t64(3)
    out, g = F.vjp(lambda x: x * 2, (x,), oxmera.ones(3, dtype=oxmera.float64))
    assert isinstance(g, tuple) and len(g) == 1
    assert isinstance(out, oxmera.Tensor)
    np.testing.assert_allclose(arr(g[0]), [2, 2, 2])
    out, g = F.vjp(lambda x: (x * 2,), x, (oxmera.ones(3, dtype=oxmera.float64),))
    assert isinstance(out, tuple) and len(out) == 1 and isinstance(g, oxmera.Tensor)


def test_vjp_independent_input_gives_zeros_or_raises_in_strict_mode():
    x, y = t64(3), t64(3)
    _, (gx, gy) = F.vjp(lambda x, y: x * 3, (x, y), oxmera.ones(3, dtype=oxmera.float64))
    np.testing.assert_array_equal(arr(gy), np.zeros(3))
    assert gy.dtype == y.dtype and gy.shape == y.shape
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(lambda x, y: x * 3, (x, y), oxmera.ones(3, dtype=oxmera.float64), strict=True)


def test_vjp_output_not_requiring_grad():
    x = t64(3)
    const = t64(3)
    _, g = F.vjp(lambda x: const * 1.0, x, oxmera.ones(3, dtype=oxmera.float64))
    np.testing.assert_array_equal(arr(g), np.zeros(3))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        F.vjp(lambda x: const * 1.0, x, oxmera.ones(3, dtype=oxmera.float64), strict=True)


def test_vjp_create_graph_gives_differentiable_results():
    x = t64(3, requires_grad=True)
    v = t64(3)
    out, g = F.vjp(lambda x: x.sin() * x, x, v, create_graph=True)
    assert g.requires_grad and out.requires_grad
    # d/dx sum(v * (cos(x) x + sin(x))) = v * (2 cos(x) - x sin(x))
    (gg,) = oxmera.autograd.grad(g.sum(), x)
    xv = arr(x)
    np.testing.assert_allclose(arr(gg), arr(v) * (2 * np.cos(xv) - xv * np.sin(xv)), rtol=1e-10)


def test_vjp_create_graph_reaches_captured_tensors_and_v():
    x = t64(3)
    w = t64(3, requires_grad=True)
    v = t64(3, requires_grad=True)
    _, g = F.vjp(lambda x: (x * w).exp(), x, v, create_graph=True)
    # g = v * w * exp(x w)
    dw, dv = oxmera.autograd.grad(g.sum(), (w, v))
    xv, wv, vv = arr(x), arr(w), arr(v)
    np.testing.assert_allclose(arr(dv), wv * np.exp(xv * wv), rtol=1e-10)
    np.testing.assert_allclose(arr(dw), vv * np.exp(xv * wv) * (1 + xv * wv), rtol=1e-10)


def test_results_are_detached_without_create_graph_even_for_inputs_requiring_grad():
    x = t64(3, requires_grad=True)
    out, g = F.vjp(lambda x: x * x, x, oxmera.ones(3, dtype=oxmera.float64))
    assert not out.requires_grad and not g.requires_grad
    assert x.grad is None, "the functional API must not accumulate into .grad"


def test_works_under_no_grad():
    x = t64(3)
    with oxmera.no_grad():
        _, g = F.vjp(lambda x: x * x, x, oxmera.ones(3, dtype=oxmera.float64))
        jac = F.jacobian(lambda x: x * x, x)
        _, jv = F.jvp(lambda x: x * x, x, oxmera.ones(3, dtype=oxmera.float64))
        assert not oxmera.is_grad_enabled()
    np.testing.assert_allclose(arr(g), 2 * arr(x))
    np.testing.assert_allclose(arr(jv), 2 * arr(x))
    np.testing.assert_allclose(arr(jac), np.diag(2 * arr(x)))


def test_func_receives_new_tensor_objects():
    x = t64(3)
    seen = []

    def f(a):
        seen.append(a)
        return a * x    # x captured: a constant, not the input

    _, g = F.vjp(f, x, oxmera.ones(3, dtype=oxmera.float64))
    assert seen[0] is not x
    np.testing.assert_allclose(arr(g), arr(x))


# -- jvp -----------------------------------------------------------------------------------------

def test_jvp_single_agrees_with_finite_differences():
    x = t64(3, 2)
    v = t64(3, 2)
    out, jv = F.jvp(f_single, x, v)
    (jac,), = numerical_jacobian(f_single, [x])
    np.testing.assert_allclose(arr(jv), contract_in(jac, arr(v), 2), rtol=1e-6, atol=1e-8)
    assert jv.shape == out.shape == (2,)
    assert not jv.requires_grad


def test_jvp_tuple_inputs_and_outputs():
    x, y = t64(2, 3), t64(2, 3)
    vs = (t64(2, 3), t64(2, 3))
    outs, jvs = F.jvp(f_multi, (x, y), vs)
    assert isinstance(jvs, tuple) and len(jvs) == 3
    blocks = numerical_jacobian(f_multi, [x, y])
    for i in range(3):
        expected = sum(contract_in(blocks[i][k], arr(vs[k]), 2) for k in range(2))
        np.testing.assert_allclose(arr(jvs[i]), expected, rtol=1e-6, atol=1e-8)
        assert jvs[i].shape == outs[i].shape


def test_jvp_v_may_be_omitted_for_a_one_element_input():
    x = t64()
    _, jv = F.jvp(lambda x: x.exp() * oxmera.ones(3, dtype=oxmera.float64), x)
    np.testing.assert_allclose(arr(jv), np.exp(arr(x)) * np.ones(3))
    with pytest.raises(RuntimeError, match="v can only be None"):
        F.jvp(f_single, t64(3, 2))


def test_jvp_output_independent_of_inputs():
    x = t64(3)
    const = t64(2)
    outs, (j0, j1) = F.jvp(lambda x: (x * 2, const * 1.0), x, t64(3))
    np.testing.assert_array_equal(arr(j1), np.zeros(2))
    with pytest.raises(RuntimeError, match="does not require gradients"):
        F.jvp(lambda x: (x * 2, const * 1.0), x, t64(3), strict=True)


def test_jvp_create_graph():
    x = t64(3, requires_grad=True)
    v = t64(3)
    _, jv = F.jvp(lambda x: x ** 3, x, v, create_graph=True)
    assert jv.requires_grad
    (g,) = oxmera.autograd.grad(jv.sum(), x)
    np.testing.assert_allclose(arr(g), 6 * arr(x) * arr(v), rtol=1e-10)


def test_jvp_of_a_linear_function():
    # The VJP of a linear function does not depend on the inputs: the trick
    # must still find J v through the seed.
    x = t64(3)
    v = t64(3)
    _, jv = F.jvp(lambda x: 3 * x + 1, x, v)
    np.testing.assert_allclose(arr(jv), 3 * arr(v))
    _, jv = F.jvp(lambda x: x, x, v)
    np.testing.assert_allclose(arr(jv), arr(v))


# -- jacobian ------------------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_structure_and_values(strategy, vectorize):
    x, y = t64(2, 3), t64(2, 3)
    kwargs = dict(strategy=strategy, vectorize=vectorize)
    # single input, single output: one Tensor of shape out + in
    jac = F.jacobian(f_single, x, **kwargs)
    assert isinstance(jac, oxmera.Tensor) and jac.shape == (3, 2, 3)
    (expected,), = numerical_jacobian(f_single, [x])
    np.testing.assert_allclose(arr(jac), expected, rtol=1e-6, atol=1e-8)
    # tuple inputs, tuple outputs: [output][input]
    jac = F.jacobian(f_multi, (x, y), **kwargs)
    blocks = numerical_jacobian(f_multi, [x, y])
    assert isinstance(jac, tuple) and len(jac) == 3
    for i in range(3):
        assert isinstance(jac[i], tuple) and len(jac[i]) == 2
        for k in range(2):
            assert jac[i][k].shape == blocks[i][k].shape
            np.testing.assert_allclose(arr(jac[i][k]), blocks[i][k], rtol=1e-6, atol=1e-8)
    # tuple inputs, single output: one per input
    jac = F.jacobian(lambda x, y: (x * y).sum(1), (x, y), **kwargs)
    assert isinstance(jac, tuple) and len(jac) == 2 and jac[0].shape == (2, 2, 3)
    # single input, tuple output: one per output
    jac = F.jacobian(lambda x: (x.sum(), x * 2), x, **kwargs)
    assert isinstance(jac, tuple) and len(jac) == 2
    assert jac[0].shape == (2, 3) and jac[1].shape == (2, 3, 2, 3)
    np.testing.assert_allclose(arr(jac[1]), 2 * np.eye(6).reshape(2, 3, 2, 3))


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian_0d_and_size_0(strategy):
    x = t64()
    jac = F.jacobian(lambda x: x ** 2, x, strategy=strategy)
    assert jac.shape == ()
    np.testing.assert_allclose(arr(jac), 2 * arr(x))
    jac = F.jacobian(lambda x: x * oxmera.ones(3, dtype=oxmera.float64), x, strategy=strategy)
    assert jac.shape == (3,)
    np.testing.assert_allclose(arr(jac), np.ones(3))
    empty = oxmera.zeros(0, 2, dtype=oxmera.float64)
    jac = F.jacobian(lambda x: x * 2, empty, strategy=strategy)
    assert jac.shape == (0, 2, 0, 2)
    jac = F.jacobian(lambda x: x.sum(), empty, strategy=strategy)
    assert jac.shape == (0, 2)


def test_jacobian_independent_blocks_and_strict():
    x, y = t64(2), t64(3)
    jac = F.jacobian(lambda x, y: x * 2, (x, y))
    assert jac[1].shape == (2, 3)
    np.testing.assert_array_equal(arr(jac[1]), np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        F.jacobian(lambda x, y: x * 2, (x, y), strict=True)


def test_jacobian_of_an_integer_output_is_zero():
    x = t64(3)
    jac = F.jacobian(lambda x: (x > 0), x)
    assert jac.shape == (3, 3)
    np.testing.assert_array_equal(arr(jac), np.zeros((3, 3)))


def test_jacobian_create_graph_second_derivative():
    x = t64(3, requires_grad=True)
    jac = F.jacobian(lambda x: x ** 3, x, create_graph=True)
    assert jac.requires_grad
    (g,) = oxmera.autograd.grad(jac.sum(), x)
    np.testing.assert_allclose(arr(g), 6 * arr(x), rtol=1e-10)
    jac = F.jacobian(lambda x: x ** 3, x)
    assert not jac.requires_grad


def test_jacobian_forward_mode_create_graph():
    x = t64(3, requires_grad=True)
    jac = F.jacobian(lambda x: x.sin() * 2, x, create_graph=True, strategy="forward-mode")
    (g,) = oxmera.autograd.grad(jac.sum(), x)
    np.testing.assert_allclose(arr(g), -2 * np.sin(arr(x)), rtol=1e-10)


def test_jacobian_argument_errors():
    x = t64(2)
    with pytest.raises(ValueError, match="strategy"):
        F.jacobian(f_single, x, strategy="sideways")
    with pytest.raises(RuntimeError, match="forward-mode"):
        F.jacobian(f_single, x, strict=True, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="vectorize"):
        F.jacobian(lambda x: x * 2, x, strict=True, vectorize=True)


# -- hessian, hvp, vhp ---------------------------------------------------------------------------

def numerical_hessian(fn, inputs):
    """Blocks [i][k] of the Hessian, by finite differences of the analytical gradient."""
    def gradient(*xs):
        xs = [x.detach().requires_grad_() for x in xs]
        return oxmera.autograd.grad(fn(*xs), xs, allow_unused=True, materialize_grads=True)
    return numerical_jacobian(gradient, inputs)


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_hessian_single_and_tuple(strategy):
    x = t64(2, 2)
    hess = F.hessian(f_scalar_one, x, outer_jacobian_strategy=strategy)
    assert isinstance(hess, oxmera.Tensor) and hess.shape == (2, 2, 2, 2)
    (expected,), = numerical_hessian(f_scalar_one, [x])
    np.testing.assert_allclose(arr(hess), expected, rtol=1e-6, atol=1e-8)
    x, y = t64(2), t64(3, 2)[0:2, 0]    # a non-contiguous input
    hess = F.hessian(f_scalar, (x, y), outer_jacobian_strategy=strategy)
    expected = numerical_hessian(f_scalar, [x, y])
    assert isinstance(hess, tuple) and len(hess) == 2
    for i in range(2):
        assert isinstance(hess[i], tuple) and len(hess[i]) == 2
        for k in range(2):
            np.testing.assert_allclose(arr(hess[i][k]), expected[i][k], rtol=1e-6, atol=1e-8)
    # symmetric
    np.testing.assert_allclose(arr(hess[0][1]), arr(hess[1][0]).T, rtol=1e-12)


def test_hessian_of_a_linear_function():
    x = t64(3)
    hess = F.hessian(lambda x: (x * 2).sum(), x)
    np.testing.assert_array_equal(arr(hess), np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect "
                                           "to input 0 is independent of the input"):
        F.hessian(lambda x: (x * 2).sum(), x, strict=True)


def test_hessian_create_graph():
    x = t64(3, requires_grad=True)
    hess = F.hessian(lambda x: (x ** 4).sum(), x, create_graph=True)
    assert hess.requires_grad
    (g,) = oxmera.autograd.grad(hess.sum(), x)     # d/dx sum(diag(12 x^2)) = 24 x
    np.testing.assert_allclose(arr(g), 24 * arr(x), rtol=1e-10)


def test_hessian_needs_a_single_one_element_output():
    with pytest.raises(RuntimeError, match="single element"):
        F.hessian(lambda x: x * 2, t64(3))
    with pytest.raises(RuntimeError, match="single Tensor"):
        F.hessian(lambda x: (x.sum(), x.sum()), t64(3))


@pytest.mark.parametrize("product", ["hvp", "vhp"])
def test_hvp_and_vhp_agree_with_finite_differences(product):
    fn = getattr(F, product)
    x, y = t64(3), t64(3)
    vs = (t64(3), t64(3))
    out, prods = fn(f_scalar, (x, y), vs)
    np.testing.assert_allclose(arr(out), arr(f_scalar(x, y)))
    blocks = numerical_hessian(f_scalar, [x, y])
    assert isinstance(prods, tuple) and len(prods) == 2
    for i in range(2):
        if product == "hvp":
            expected = sum(blocks[i][k] @ arr(vs[k]) for k in range(2))
        else:
            expected = sum(arr(vs[k]) @ blocks[k][i] for k in range(2))
        np.testing.assert_allclose(arr(prods[i]), expected, rtol=1e-6, atol=1e-8)
    out, p = fn(f_scalar_one, x, vs[0])
    assert isinstance(p, oxmera.Tensor) and p.shape == x.shape
    assert not p.requires_grad and not out.requires_grad


@pytest.mark.parametrize("product", ["hvp", "vhp"])
def test_hvp_and_vhp_strict_and_errors(product):
    fn = getattr(F, product)
    x, y = t64(3), t64(3)
    _, (px, py) = fn(lambda x, y: (x ** 3).sum() + y.sum(), (x, y), (t64(3), t64(3)))
    np.testing.assert_array_equal(arr(py), np.zeros(3))
    with pytest.raises(RuntimeError, match="strict mode"):
        fn(lambda x, y: (x ** 3).sum() + y.sum(), (x, y), (t64(3), t64(3)), strict=True)
    with pytest.raises(RuntimeError, match="single element"):
        fn(lambda x: x * 2, x, t64(3))
    with pytest.raises(RuntimeError, match="single Tensor"):
        fn(lambda x: (x.sum(),), x, t64(3))
    with pytest.raises(RuntimeError, match="v has invalid size"):
        fn(f_scalar_one, x, t64(4))
    with pytest.raises(RuntimeError, match="v can only be None"):
        fn(f_scalar_one, x)


@pytest.mark.parametrize("product", ["hvp", "vhp"])
def test_hvp_and_vhp_create_graph(product):
    x = t64(3, requires_grad=True)
    v = t64(3)
    _, p = getattr(F, product)(lambda x: (x ** 4).sum(), x, v, create_graph=True)
    assert p.requires_grad
    (g,) = oxmera.autograd.grad(p.sum(), x)      # p = 12 x^2 v  -> 24 x v
    np.testing.assert_allclose(arr(g), 24 * arr(x) * arr(v), rtol=1e-10)


# -- argument errors shared by all -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"])
def test_inputs_must_be_a_tensor_or_a_tuple_of_tensors(name):
    fn = getattr(F, name)
    x = t64(3)
    with pytest.raises(TypeError, match=f"inputs given to {name} must be either a Tensor or a "
                                        f"tuple of Tensors but the given inputs has type list"):
        fn(f_scalar_one, [x])
    with pytest.raises(TypeError, match="the value at index 1 has type ndarray"):
        fn(f_scalar_one, (x, np.ones(3)))


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian"])
def test_outputs_must_be_tensors(name):
    with pytest.raises(TypeError, match=f"outputs of the user-provided function given to {name}"):
        if name == "jacobian":
            F.jacobian(lambda x: 3.0, t64(3))
        else:
            getattr(F, name)(lambda x: 3.0, t64(3), t64(3))


def test_v_validation():
    x, y = t64(3), t64(2)
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        F.jvp(lambda x, y: x, (x, y), (t64(3),))
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor"):
        F.jvp(lambda x: x, x, (t64(3), t64(3)))
    with pytest.raises(RuntimeError, match=r"Entry 1 in v has invalid size: should be \(2,\)"):
        F.jvp(lambda x, y: x, (x, y), (t64(3), t64(3)))
    with pytest.raises(TypeError, match="v given to vjp"):
        F.vjp(lambda x: x, x, [1.0, 2.0, 3.0])


def test_integer_inputs_cannot_be_differentiated():
    with pytest.raises(RuntimeError, match="int64"):
        F.jacobian(lambda x: x * 2, oxmera.tensor([1, 2]))


def test_float32_results_stay_float32():
    x = oxmera.tensor([1.0, 2.0])
    assert F.jacobian(lambda x: x * x, x).dtype == oxmera.float32
    assert F.vjp(lambda x: x * x, x, oxmera.ones(2))[1].dtype == oxmera.float32
    assert F.hvp(lambda x: (x ** 3).sum(), x, oxmera.ones(2))[1].dtype == oxmera.float32


def test_docstring_examples_run():
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(F, F.__name__):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted >= 6 and result.failed == 0


# -- against PyTorch -------------------------------------------------------------------------------

TORCH_CALLS = {
    "vjp-single": (lambda m, f, ins, vs: m.vjp(f_single, ins[0], vs[0]), [(3, 2)], [(2,)]),
    "vjp-multi": (lambda m, f, ins, vs: m.vjp(f_multi, tuple(ins), tuple(vs)),
                  [(2, 3), (2, 3)], [(2,), (2, 2), ()]),
    "jvp-multi": (lambda m, f, ins, vs: m.jvp(f_multi, tuple(ins), tuple(vs)),
                  [(2, 3), (2, 3)], [(2, 3), (2, 3)]),
    "jacobian-multi": (lambda m, f, ins, vs: m.jacobian(f_multi, tuple(ins)),
                       [(2, 3), (2, 3)], []),
    "jacobian-single-tuple-out": (lambda m, f, ins, vs: m.jacobian(lambda x: (x.sum(), x * 2),
                                                                   ins[0]), [(2, 2)], []),
    "hessian-tuple": (lambda m, f, ins, vs: m.hessian(f_scalar, tuple(ins)), [(3,), (3,)], []),
    "hessian-single": (lambda m, f, ins, vs: m.hessian(f_scalar_one, ins[0]), [(2, 2)], []),
    "hvp": (lambda m, f, ins, vs: m.hvp(f_scalar, tuple(ins), tuple(vs)),
            [(3,), (3,)], [(3,), (3,)]),
    "vhp": (lambda m, f, ins, vs: m.vhp(f_scalar_one, ins[0], vs[0]), [(2, 3)], [(2, 3)]),
}


def _structure(result):
    if isinstance(result, tuple):
        return tuple(_structure(r) for r in result)
    return tuple(result.shape)


def _flatten(result):
    if isinstance(result, tuple):
        return [a for r in result for a in _flatten(r)]
    return [result.detach().numpy()]


@pytest.mark.parametrize("name", sorted(TORCH_CALLS))
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    import torch.autograd.functional as TF
    call, in_shapes, v_shapes = TORCH_CALLS[name]
    rng = np.random.default_rng(1)
    ins = [rng.standard_normal(s) for s in in_shapes]
    vs = [rng.standard_normal(s) for s in v_shapes]
    ours = call(F, None, [oxmera.tensor(a) for a in ins], [oxmera.tensor(a) for a in vs])
    theirs = call(TF, None, [torch.tensor(a) for a in ins], [torch.tensor(a) for a in vs])
    assert _structure(ours) == _structure(theirs)
    for a, b in zip(_flatten(ours), _flatten(theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


# -- properties over shapes ------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(in_shape=st.lists(st.integers(0, 3), max_size=2), out_dims=st.integers(0, 2),
       seed=st.integers(0, 2 ** 16))
def test_jacobian_agrees_with_vjp_and_jvp_for_any_shape(in_shape, out_dims, seed):
    rng = np.random.default_rng(seed)
    x = oxmera.tensor(rng.standard_normal(in_shape))
    out_shape = tuple(rng.integers(1, 3, size=out_dims))
    weights = oxmera.tensor(rng.standard_normal(out_shape + tuple(in_shape)))

    def f(x):
        # out[o] = sum_i w[o, i] * sin(x[i]) * x[i]: a full Jacobian, any shapes
        expanded = (x.sin() * x).reshape((1,) * out_dims + tuple(in_shape))
        summed = weights * expanded
        for _ in range(len(in_shape)):
            summed = summed.sum(-1)
        return summed

    jac = arr(F.jacobian(f, x))
    assert jac.shape == out_shape + tuple(in_shape)
    np.testing.assert_allclose(jac, arr(F.jacobian(f, x, strategy="forward-mode")), rtol=1e-10,
                               atol=1e-12)
    v_out = rng.standard_normal(out_shape)
    v_in = rng.standard_normal(in_shape)
    _, vjp_result = F.vjp(f, x, oxmera.tensor(v_out))
    _, jvp_result = F.jvp(f, x, oxmera.tensor(v_in))
    np.testing.assert_allclose(arr(vjp_result), contract_out(jac, v_out, out_dims), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(arr(jvp_result), contract_in(jac, v_in, len(in_shape)),
                               rtol=1e-10, atol=1e-12)
