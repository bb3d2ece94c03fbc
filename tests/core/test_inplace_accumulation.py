"""The engine adds a node's incoming gradients in place when it alone holds them.

A gradient that reaches a node from several uses is summed into the first
one's array when that array is the engine's own (see ``_accumulate`` in
autograd.pyx). Anything a user can see (a hook's stored gradient, the
``gradient`` given to backward, a gradient handed to two inputs) must never
change afterwards, and every sum must equal the out-of-place one.
"""
import tracemalloc

import numpy as np

import oxmera


def test_sums_of_many_uses_are_exact():
    rng = np.random.default_rng(0)
    x = oxmera.tensor(rng.standard_normal(50), requires_grad=True)
    a = x * 1.5
    loss = (a.sin() + a.cos() + a.exp() + a * a + a).sum()
    loss.backward()
    v = 1.5 * x.detach().numpy()
    expected = 1.5 * (np.cos(v) - np.sin(v) + np.exp(v) + 2 * v + 1)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-13)


def test_gradients_users_can_see_are_never_changed():
    x = oxmera.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    a = x * 2.0
    a.register_hook(lambda g: seen.append(g) or None)     # keeps a's total gradient
    b = a + 0.0                                            # add hands one tensor to both uses
    c = b * 3.0 + b * 4.0 + a
    given = oxmera.ones(3, dtype=oxmera.float64)
    kept = given.clone()
    c.backward(given)
    np.testing.assert_array_equal(given.numpy(), kept.numpy())   # the user's seed
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0].numpy(), [8.0, 8.0, 8.0])
    np.testing.assert_array_equal(x.grad.numpy(), [16.0, 16.0, 16.0])
    # a second backward through a new graph leaves the stored gradient alone
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(seen[0].numpy(), [8.0, 8.0, 8.0])


def test_autograd_grad_of_a_non_leaf_with_several_uses():
    x = oxmera.tensor([0.5, -1.0], requires_grad=True)
    a = x.exp()
    out = a * a + a.sin() + a
    (ga,) = oxmera.autograd.grad(out.sum(), a)
    v = np.exp(x.detach().numpy())
    np.testing.assert_allclose(ga.numpy(), 2 * v + np.cos(v) + 1, rtol=1e-14)


def test_create_graph_sums_stay_differentiable():
    x = oxmera.tensor([0.3, 0.7], requires_grad=True)
    a = x * x
    y = (a.sin() + a * a).sum()
    (g,) = oxmera.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    v = x.detach().numpy()
    # d/dx [2x cos(x^2) + 4x^3] = 2 cos(x^2) - 4x^2 sin(x^2) + 12 x^2
    expected = 2 * np.cos(v * v) - 4 * v * v * np.sin(v * v) + 12 * v * v
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_a_sum_of_uses_allocates_no_array_per_use():
    # Four uses of one large intermediate, each VJP one fresh product: summed
    # out of place, the pending sum, the new product and their total are alive
    # at once; in place, two.
    n = 400_000
    x = oxmera.tensor(np.ones(n), requires_grad=True)
    a = x * 2.0
    loss = (a * 2.0 + a * 3.0 + a * 4.0 + a * 1.0).sum()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        loss.backward()
        peak = tracemalloc.get_traced_memory()[1] / (8 * n)
    finally:
        tracemalloc.stop()
    assert peak < 2.5, f"{peak:.2f} arrays alive at once during backward"
    np.testing.assert_array_equal(x.grad.numpy(), np.full(n, 20.0))
