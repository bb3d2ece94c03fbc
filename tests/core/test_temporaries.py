"""Temporaries: ``x * w + 1`` writes its sum into the product's memory.

The core reuses the array of an operand nobody else can see (see
``_temporary_out`` in autograd.pyx). Whether it did is visible to tracemalloc
(NumPy reports its allocations there): reuse leaves one array alive at the
peak instead of two. Every case where the operand *is* visible, or the result
would not fit, must leave values and gradients exactly as without reuse.
"""
import gc
import operator
import sys
import tracemalloc

import numpy as np
import pytest

import oxmera
from oxmera._core import autograd as _core

N = 200_000     # float32: 800 KB, above the 256 KiB threshold


@pytest.fixture
def xw():
    rng = np.random.default_rng(0)
    return [oxmera.tensor(rng.uniform(-1, 1, N).astype(np.float32), requires_grad=True)
            for _ in range(2)]


def _peak_arrays(f, itemsize=4):
    """Peak traced memory while ``f()`` runs, in arrays of N items."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = f()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak / (itemsize * N)


_ONE_INPUT = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the caller check reads the C stack with glibc only")


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("expr", [
    lambda x, w: x * w + 1,
    lambda x, w: 1 + x * w,
    lambda x, w: x * w - 2.5,
    lambda x, w: 3.0 - x * w,
    lambda x, w: (x * w) / 2,
    lambda x, w: 2 / (x + w),
    lambda x, w: (x + w) * 2,
    # one-input ops (below)
    pytest.param(lambda x, w: (x * w + 1).exp(), marks=_ONE_INPUT, id="method"),
    pytest.param(lambda x, w: oxmera.exp(x * w + 1), marks=_ONE_INPUT, id="function"),
    pytest.param(lambda x, w: (x * w).exp(), marks=_ONE_INPUT, id="product"),
    pytest.param(lambda x, w: (x + w).neg(), marks=_ONE_INPUT, id="neg"),
])
@pytest.mark.skipif(not _core.temporaries_reusable(),
                    reason="Python 3.14+: borrowed stack references, nothing is reused")
def test_an_unreferenced_operand_takes_the_result(xw, grad, expr):
    x, w = xw
    with oxmera.set_grad_enabled(grad):
        peak = _peak_arrays(lambda: expr(x, w))
    assert peak < 1.5, f"two arrays alive at the peak ({peak:.2f}): the temporary was not reused"


def test_a_named_operand_is_not_overwritten(xw):
    x, w = xw
    t = x * w
    before = t.detach().numpy().copy()
    u = t + 1
    np.testing.assert_array_equal(t.detach().numpy(), before)
    np.testing.assert_array_equal(u.detach().numpy(), before + 1)
    assert _peak_arrays(lambda: t + 1) > 0.9        # a new array, as it must


def test_operands_held_by_containers_or_c_callers_are_not_overwritten(xw):
    x, w = xw
    held = [x * w]
    before = held[0].detach().numpy().copy()
    held[0] + 1                                       # noqa: B018 (the operator is the test)
    np.testing.assert_array_equal(held[0].detach().numpy(), before)
    # sum() and operator.add call the slot from C holding the only reference
    # to an item of their argument: the instruction check refuses those.
    items = [x * w, x * w]
    first = items[0].detach().numpy().copy()
    total = sum(items)
    np.testing.assert_array_equal(items[0].detach().numpy(), first)
    np.testing.assert_allclose(total.detach().numpy(), 2 * first)
    pair = [x * w]
    result = operator.add(pair[0], 1)
    np.testing.assert_array_equal(pair[0].detach().numpy(), first)
    np.testing.assert_allclose(result.detach().numpy(), first + 1)


def test_a_temporary_the_op_saves_is_not_reused(xw):
    # mul keeps its left operand when the right one needs a gradient.
    x, w = xw
    y = (x * 2) * w
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), 2 * w.detach().numpy())


def test_gradients_through_reused_temporaries(xw):
    x, w = xw
    loss = ((x * w + 1).exp() * 0.5 - x * w).sum()
    loss.backward()
    a, b = x.detach().numpy().astype(np.float64), w.detach().numpy().astype(np.float64)
    slope = 0.5 * np.exp(a * b + 1) - 1
    np.testing.assert_allclose(x.grad.numpy(), slope * b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), slope * a, rtol=1e-5, atol=1e-6)


def test_results_that_do_not_fit_the_temporary(xw):
    x, w = xw
    # a wider dtype: the float32 product promotes to float64 with a float64 tensor
    wide = oxmera.ones(N, dtype=oxmera.float64)
    out = x * w + wide
    assert out.dtype == oxmera.float64
    expected = (x.detach().numpy() * w.detach().numpy()).astype(np.float64) + 1
    np.testing.assert_array_equal(out.detach().numpy(), expected)
    # a larger shape: broadcasting grows the result
    column = oxmera.ones(3, 1)
    grown = (x * w)[: N // 2].reshape(1, N // 2) + column
    assert tuple(grown.shape) == (3, N // 2)
    # a complex Python number makes a complex result
    z = x * w + 1j
    assert z.dtype == oxmera.complex64


def test_views_and_small_arrays_are_left_alone(xw):
    x, w = xw
    # a view of a temporary shares memory with it: never written
    head = (x * w)[:10] + 1
    np.testing.assert_allclose(head.detach().numpy(),
                               (x.detach().numpy() * w.detach().numpy())[:10] + 1)
    small = oxmera.ones(100, requires_grad=True)
    assert ((small * 2) + 1).sum().item() == 300.0



def test_reuse_is_on_exactly_where_its_proof_holds():
    # 3.10-3.13: the interpreter's stack holds strong references, so the counts
    # prove an operand unreferenced; 3.14 may hold borrowed ones (a named
    # tensor could look like a temporary), so reuse is compiled out there.
    assert _core.temporaries_reusable() == (sys.version_info < (3, 14))


# -- one-input ops: ``(x * w + 1).exp()`` (reuse itself is tested above) ------------

def test_the_caller_check_tells_the_interpreter_from_c_callers():
    if not sys.platform.startswith("linux"):
        assert not _core.called_from_eval_loop()      # compiled out: nothing is reused
        return
    assert _core.called_from_eval_loop()
    # called by C (the iterator calls it), not by the interpreter
    assert next(iter(_core.called_from_eval_loop, None)) is False


def test_inputs_held_by_names_or_c_callers_are_not_overwritten(xw):
    x, w = xw
    expected = x.detach().numpy() * w.detach().numpy() + 1

    def named(t):
        return t.exp()
    for run in (lambda: named(x * w + 1),
                lambda: max([x * w + 1], key=oxmera.exp),
                lambda: max((x * w + 1 for _ in range(1)), key=oxmera.Tensor.exp),
                lambda: list(map(oxmera.exp, (x * w + 1 for _ in range(1))))):
        assert _peak_arrays(run) > 1.9
    # max() holds the only reference to each item while it calls the key, and
    # returns the item: it must come back unchanged.
    best = max((x * w + 1 for _ in range(1)), key=oxmera.Tensor.exp)
    np.testing.assert_array_equal(best.detach().numpy(), expected)
    bound = (x * w + 1).exp                   # a bound method holds its tensor
    np.testing.assert_allclose(bound().detach().numpy(), np.exp(expected), rtol=1e-6)


def test_one_input_ops_that_save_their_input_or_change_the_dtype_are_left_alone(xw):
    x, w = xw
    a, b = x.detach().numpy(), w.detach().numpy()
    # sin saves its input for the VJP (cos(input)): a new array, right gradients
    assert _peak_arrays(lambda: (x * w).sin()) > 1.9
    (x * w).sin().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(a * b) * b, rtol=1e-5)
    # a comparison makes bools; abs of complex numbers is real
    assert _peak_arrays(lambda: (x * w).isnan()) > 0.9
    z = (x * w).to(oxmera.complex64) * 1j
    r = z.abs()
    assert r.dtype == oxmera.float32
    np.testing.assert_allclose(r.detach().numpy(), np.abs(a * b), rtol=1e-6)


def test_gradients_through_a_reused_one_input_op(xw):
    x, w = xw
    a, b = x.detach().numpy().astype(np.float64), w.detach().numpy().astype(np.float64)
    y = (x * w + 1).exp()
    np.testing.assert_allclose(y.detach().numpy(), np.exp(a * b + 1), rtol=1e-6)
    (y * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(a * b + 1) * b, rtol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.exp(a * b + 1) * a, rtol=1e-5)
