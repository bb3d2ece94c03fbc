"""A product by one in backward: ``grad * f'(x)`` when ``grad`` is the broadcast 1.

``loss.sum().backward()`` hands the last node a broadcast 1. In a backward
that records nothing, ``mul`` (declared ``unit=1``) then hands on its other
operand instead of computing (``_unit_product`` in autograd.pyx): an
unreferenced temporary itself, read-only (saved) memory as a read-only view.
Gradients must still never alias memory the user can change: .grad, the
results of autograd.grad and what hooks see are the user's own.
"""
import numpy as np
import pytest

import oxmera
from oxmera import autograd
from oxmera._core import _kernels
from oxmera._core import autograd as _core
from oxmera.extend import op

N = 1000


@pytest.fixture(autouse=True)
def _vjp_replay_off():
    # These tests watch the VJPs' own Python code (a spy on op.vjp, the
    # temporaries it makes); a replayed VJP runs none of it, and the first
    # node of a signature runs it traced, where nothing is handed on (a
    # replay makes that test itself: tests/ops/test_vjp_replay.py). Whether a
    # signature was traced before depended on the tests run earlier.
    previous = _core.set_vjp_replay(False)
    yield
    _core.set_vjp_replay(previous)


@pytest.fixture
def x():
    rng = np.random.default_rng(0)
    return oxmera.tensor(rng.uniform(-1, 1, N).astype(np.float32), requires_grad=True)


def _np(t):
    return t.detach().numpy()


def _spy_vjp(monkeypatch, public):
    """Record (is a view, writeable) of what ``public``'s VJP returns."""
    seen = []
    original = public.op.vjp

    def spy(ctx, grad, *args, **kwargs):
        result = original(ctx, grad, *args, **kwargs)
        first = result[0] if isinstance(result, tuple) else result
        if first is not None:
            seen.append((_np(first).base is not None, _np(first).flags.writeable))
        return result
    monkeypatch.setattr(public.op, "vjp", spy)
    return seen


def test_exp_hands_on_its_saved_output_and_leaf_grads_are_private(x, monkeypatch):
    seen = _spy_vjp(monkeypatch, oxmera.exp)
    y = x.exp()
    y.sum().backward()
    assert seen == [(True, False)], "exp's VJP did not hand on a read-only view of its output"
    np.testing.assert_array_equal(_np(x.grad), _kernels.exp(_np(x)))     # (oxmera's exp)
    g = _np(x.grad)
    assert g.flags.writeable and not np.shares_memory(g, _np(y))
    before = g.copy()
    with oxmera.no_grad():
        y.add_(1.0)                     # the user's tensor changes; .grad must not
    np.testing.assert_array_equal(_np(x.grad), before)


def _address(t):
    return _np(t).__array_interface__["data"][0]


@pytest.mark.skipif(not _core.temporaries_reusable(),
                    reason="Python 3.14+: borrowed stack references, nothing is reused")
def test_a_temporary_factor_is_handed_on_itself(x, monkeypatch):
    from oxmera.ops import elementwise
    made, handed_on = [], []
    cos = elementwise.cos

    def spy_cos(input):
        result = cos(input)
        made.append(_address(result))   # (no reference kept: it stays a temporary)
        return result
    monkeypatch.setattr(elementwise, "cos", spy_cos)
    original = oxmera.sin.op.vjp

    def spy_vjp(ctx, grad, input):
        result = original(ctx, grad, input)
        handed_on.append(_address(result))
        return result
    monkeypatch.setattr(oxmera.sin.op, "vjp", spy_vjp)
    x.sin().sum().backward()
    assert len(made) == 1 and handed_on == made, "sin's cos(input) temporary was not handed on"
    np.testing.assert_allclose(_np(x.grad), np.cos(_np(x)), rtol=1e-6)
    # Held by a name, the factor is not a temporary: multiplied, not shared.
    monkeypatch.setattr(oxmera.sin.op, "vjp", original)
    kept = []
    monkeypatch.setattr(elementwise, "cos", lambda input: kept.append(cos(input)) or kept[-1])
    x.grad = None
    x.sin().sum().backward()
    assert not np.shares_memory(_np(x.grad), _np(kept[0]))


def test_autograd_grad_results_do_not_alias_the_forward(x):
    y = x.exp()
    (gx,) = autograd.grad(y.sum(), x)
    g = _np(gx)
    assert g.flags.writeable and not np.shares_memory(g, _np(y))
    np.testing.assert_array_equal(g, _kernels.exp(_np(x)))
    # A non-leaf input of mul: its gradient would be the other factor itself.
    w = oxmera.tensor(np.full(N, 3.0, np.float32), requires_grad=True)
    u = x * 2
    (gu,) = autograd.grad((u * w).sum(), u)
    assert _np(gu).flags.writeable and not np.shares_memory(_np(gu), _np(w))
    with oxmera.no_grad():
        w.mul_(2.0)                      # an optimizer step on the weight
    np.testing.assert_array_equal(_np(gu), np.full(N, 3.0, np.float32))


def test_hooks_see_private_gradients(x):
    u = x * 2
    y = u.exp()
    stored = []
    u.register_hook(lambda g: stored.append(g))
    node_seen = []
    y.grad_fn.register_hook(lambda grads_in, grads_out: node_seen.append(grads_in[0]))
    y.sum().backward()
    for g in (stored[0], node_seen[0]):
        assert _np(g).flags.writeable and not np.shares_memory(_np(g), _np(y))
    before = _np(stored[0]).copy()
    with oxmera.no_grad():
        y.add_(1.0)
    np.testing.assert_array_equal(_np(stored[0]), before)
    np.testing.assert_allclose(_np(x.grad), 2 * before, rtol=1e-6)


def test_a_hook_may_change_its_gradient_in_place(x):
    u = x * 2
    y = u.exp()
    u.register_hook(lambda g: g.mul_(0.0))      # in place, on what it was given
    y.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), np.zeros(N, np.float32))
    assert not np.any(_np(y) == 0.0), "the hook wrote into the forward's output"


def test_gradients_adding_up_are_not_written_into_shared_memory(x):
    y = x.exp()
    loss = y.sum() + (y * 3).sum()      # exp's output gradient: a sum of two
    loss.backward()
    np.testing.assert_allclose(_np(x.grad), 4 * np.exp(_np(x)), rtol=1e-6)
    x.grad = None
    w = x.exp()
    (w.sum() + w.sum()).backward()      # two broadcast ones reach exp
    np.testing.assert_allclose(_np(x.grad), 2 * np.exp(_np(x)), rtol=1e-6)
    assert not np.shares_memory(_np(x.grad), _np(w))


def test_accumulating_into_grad_keeps_the_forward_intact(x):
    y = x.exp()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), 2 * np.exp(_np(x)), rtol=1e-6)
    np.testing.assert_allclose(_np(y), np.exp(_np(x)), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_dtypes_shapes_and_values(dtype):
    a = oxmera.tensor(np.linspace(-1, 1, 24, dtype=dtype).reshape(2, 3, 4), requires_grad=True)
    a.exp().sum().backward()
    assert a.grad.dtype == a.dtype and a.grad.shape == a.shape
    np.testing.assert_array_equal(_np(a.grad), _kernels.exp(_np(a)))


def test_products_by_other_values_or_dtypes_are_computed(x):
    y = x.exp()
    (2 * y).sum().backward()                         # the gradient is a broadcast 2
    np.testing.assert_allclose(_np(x.grad), 2 * np.exp(_np(x)), rtol=1e-6)
    x64 = oxmera.tensor(_np(x).astype(np.float64), requires_grad=True)
    # A float64 broadcast 1 times float32 memory is float64: not handed on.
    u = x64.float().exp()
    (gu,) = autograd.grad(u.sum(), u)
    assert gu.dtype == oxmera.float32
    z = oxmera.tensor([1 + 1j, complex(1.0, np.inf)], requires_grad=True)
    z.exp().abs().sum().backward()                   # complex: never handed on
    assert z.grad.dtype == oxmera.complex64


def test_the_forward_never_shares_a_product(x):
    y = x.detach().exp()
    ones = oxmera.ones(()).expand(N)
    for grad in (True, False):
        with oxmera.set_grad_enabled(grad):
            p = ones * y
        assert not np.shares_memory(_np(p), _np(y))
        assert _np(p).flags.writeable


def test_create_graph_records_the_product(x):
    y = x.exp()
    (gx,) = autograd.grad(y.sum(), x, create_graph=True)
    assert gx.requires_grad
    (ggx,) = autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(_np(ggx), np.exp(_np(x)), rtol=1e-6)


def test_a_unit_is_a_number_for_two_inputs():
    with pytest.raises(ValueError, match="unit is a number for an op of two tensor inputs"):
        @op(unit=1)
        def unary_unit_example(input):
            return np.negative(input)
    with pytest.raises(ValueError, match="unit is a number"):
        @op(inputs=2, unit="1")
        def binary_unit_example(input, other):
            return np.multiply(input, other)
    # Three inputs: a pair product, of two outputs.
    with pytest.raises(ValueError, match="or of three inputs and two outputs"):
        @op(inputs=3, unit=1)
        def ternary_unit_example(u, v, w):
            return u * v * w
    with pytest.raises(ValueError, match="or of three inputs and two outputs"):
        @op(inputs=2, unit=1, outputs=("first", "second"))
        def two_outputs_unit_example(u, v):
            return u * v, u + v


def test_a_users_vjp_may_write_into_its_products(x):
    """User VJPs (autograd.Function, extend.op) get computed products, as in PyTorch."""

    class Square(autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input * input

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            g = grad_output * input             # a product by the broadcast 1
            g.mul_(2.0)                         # written in place, as users do
            return g

    Square.apply(x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), 2 * _np(x), rtol=1e-6)

    @op(save=("input",))
    def user_cube_example(input):
        return input ** 3

    @user_cube_example.vjp
    def _(ctx, grad, input):
        g = grad * input
        g *= input
        g *= 3.0
        return g

    x.grad = None
    user_cube_example(x).sum().backward()
    np.testing.assert_allclose(_np(x.grad), 3 * _np(x) ** 2, rtol=1e-5)
    assert oxmera.mul.op.internal and not user_cube_example.op.internal


def test_hooks_run_as_user_code():
    """A hook's own products are computed: only oxmera's VJPs hand a product on."""
    x = oxmera.tensor([2.0], requires_grad=True)
    w = oxmera.tensor([3.0], requires_grad=True)
    y = x * w                                   # saves w: its memory is read-only
    products = []
    y.register_hook(lambda g: products.append(g * w.detach()))      # g: a 1
    x.register_hook(lambda g: products.append(g * w.detach()))
    y.sum().backward()
    assert len(products) == 2
    for p in products:
        assert not np.shares_memory(_np(p), _np(w)), "a hook's product aliases a weight"
