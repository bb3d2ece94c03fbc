"""In-place ops: values, version counters, the errors SPEC §5/§6 ask for, and
gradients through in-place writes (on non-leaves and through views)."""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import gradcheck, gradgradcheck

from ._helpers import leaf

#: op name -> (call on a float tensor, NumPy equivalent on an array)
INPLACE = {
    "add_": (lambda t: t.add_(2.0), lambda a: a + 2.0),
    "add_-alpha": (lambda t: t.add_(oxmera.ones(3), alpha=-2), lambda a: a - 2.0),
    "sub_": (lambda t: t.sub_(0.5), lambda a: a - 0.5),
    "mul_": (lambda t: t.mul_(3.0), lambda a: a * 3.0),
    "div_": (lambda t: t.div_(4.0), lambda a: a / 4.0),
    "pow_": (lambda t: t.pow_(2), lambda a: a ** 2),
    "clamp_": (lambda t: t.clamp_(-0.4, 0.6), lambda a: np.clip(a, -0.4, 0.6)),
    "clamp_-min": (lambda t: t.clamp_(min=0.0), lambda a: np.maximum(a, 0.0)),
    "zero_": (lambda t: t.zero_(), lambda a: a * 0),
    "fill_": (lambda t: t.fill_(1.5), lambda a: np.full_like(a, 1.5)),
    "copy_": (lambda t: t.copy_(oxmera.tensor([7.0, 8.0, 9.0])), lambda a: np.array([7., 8, 9])),
    "iadd": (lambda t: _iop(t, "__iadd__", 1.0), lambda a: a + 1),
    "isub": (lambda t: _iop(t, "__isub__", 1.0), lambda a: a - 1),
    "imul": (lambda t: _iop(t, "__imul__", 2.0), lambda a: a * 2),
    "itruediv": (lambda t: _iop(t, "__itruediv__", 2.0), lambda a: a / 2),
    "setitem": (lambda t: t.__setitem__(slice(1, None), 5.0) or t,
                lambda a: np.array([a[0], 5.0, 5.0])),
}


def _iop(t, dunder, value):
    result = getattr(t, dunder)(value)
    assert result is t
    return t


def _start():
    return np.array([-1.5, 0.25, 2.0])


@pytest.mark.parametrize("name", INPLACE)
def test_values_and_version(name):
    call, expected = INPLACE[name]
    t = oxmera.tensor(_start())
    view = t[1:]
    memory = t.numpy()
    out = call(t)
    assert out is t
    np.testing.assert_allclose(t.numpy(), expected(_start()).astype(np.float32), rtol=1e-6)
    assert t.numpy() is memory or np.shares_memory(t.numpy(), memory)  # written in place
    assert t._version == 1 and view._version == 1     # the counter is shared with views


@pytest.mark.parametrize("name", INPLACE)
def test_on_a_leaf_that_requires_grad_raises_and_changes_nothing(name):
    call, _ = INPLACE[name]
    x = leaf(_start())
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        call(x)
    np.testing.assert_array_equal(x.numpy(force=True), _start().astype(np.float32))
    assert x._version == 0 and x.is_leaf and x.grad_fn is None
    with oxmera.no_grad():
        call(x)                    # allowed with grad mode off, like PyTorch
    assert x._version == 1 and x.is_leaf


@pytest.mark.parametrize("name", INPLACE)
def test_modifying_a_saved_tensor_makes_backward_raise(name):
    call, _ = INPLACE[name]
    x = leaf(_start())
    a = x * 1
    b = a * a                      # saves a (version 0)
    call(a)
    with pytest.raises(RuntimeError, match=r"MulBackward.*version 1; expected version 0"):
        b.sum().backward()
    assert x.grad is None


@pytest.mark.parametrize("name", INPLACE)
def test_on_a_non_leaf_the_gradient_is_right(name):
    call, expected = INPLACE[name]
    # d/dx sum(op(2x)) by finite differences of the NumPy equivalent
    x = leaf(_start(), dtype=np.float64)
    y = x * 2
    call(y).sum().backward() if name != "setitem" else (call(y), y.sum().backward())
    eps = 1e-6
    numeric = np.array([(expected(2 * (_start() + eps * e)).sum()
                         - expected(2 * (_start() - eps * e)).sum()) / (2 * eps)
                        for e in np.eye(3)])
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_the_issue_example():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    y.add_(1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_mul_by_a_tensor_that_requires_grad_uses_the_old_values():
    x = leaf([1.0, 2.0], dtype=np.float64)
    w = leaf([3.0, 4.0], dtype=np.float64)
    y = x * 1
    y.mul_(w)
    y.mul_(w)                       # y = x w^2
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [9.0, 16.0])
    np.testing.assert_allclose(w.grad.numpy(), [6.0, 16.0])


def test_in_place_on_a_tensor_without_grad_attaches_it_to_the_graph():
    w = leaf([2.0], dtype=np.float64)
    z = oxmera.zeros(3, dtype=np.float64)
    z.add_(w)
    assert z.requires_grad and not z.is_leaf
    (z * z).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [12.0])


def test_setitem_gradient_flows_to_value_and_untouched_part():
    x = leaf([1.0, 2.0, 3.0, 4.0], dtype=np.float64)
    v = leaf([10.0, 20.0], dtype=np.float64)
    y = x * 3
    y[1:3] = v
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 0.0, 0.0, 72.0])
    np.testing.assert_allclose(v.grad.numpy(), [20.0, 40.0])


def test_setitem_broadcast_value_gets_summed_gradient():
    v = leaf(2.0, dtype=np.float64)
    z = oxmera.zeros(2, 3, dtype=np.float64)
    z[:, 1:] = v
    z.sum().backward()
    assert v.grad.item() == 4.0


def test_write_through_a_view_rewrites_the_base_history():
    x = leaf([1.0, 2.0, 3.0], dtype=np.float64)
    y = x * 2
    y[1:].mul_(3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 6.0, 6.0])
    assert y.grad_fn.name() == "CopySlicesBackward"


def test_second_order_through_in_place_ops():
    def fn(x, w):
        y = x * w
        y[0] = x[1] * w[2]
        y.mul_(w)
        return y
    inputs = (leaf([0.5, -1.0, 2.0], dtype=np.float64), leaf([1.5, 0.5, -0.75],
                                                             dtype=np.float64))
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_view_of_a_leaf_that_requires_grad_raises():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="view of a leaf tensor that requires grad"):
        x[1:].add_(1.0)
    assert x._version == 0


def test_views_from_multi_output_ops_cannot_be_modified_while_recording():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    y = x * 1
    first, _ = oxmera.split(y, 2) if hasattr(oxmera, "split") else pytest.skip("no split yet")
    with pytest.raises(RuntimeError, match="several views"):
        first.mul_(2)


@pytest.mark.parametrize("call, message", [
    (lambda t: t.add_(oxmera.ones(2, 3)), r"output with shape \(3,\) doesn't match the "
                                           r"broadcast shape \(2, 3\)"),
    (lambda t: t.__setitem__(slice(None), oxmera.ones(4)), r"setitem.*shape \(4,\)"),
    (lambda t: t.fill_(oxmera.ones(2)), r"fill_\(\).*0-dimension"),
    (lambda t: t.copy_(oxmera.ones(2)), r"copy_\(\).*\(2,\).*\(3,\)"),
    (lambda t: t.__setitem__(5, 1.0), r"setitem.*out of bounds|index 5"),
])
@pytest.mark.parametrize("recording", [False, True])
def test_errors_name_the_op_and_shapes_and_change_nothing(call, message, recording):
    t = oxmera.tensor([1.0, 2.0, 3.0])
    if recording:
        t = t * oxmera.tensor(1.0, requires_grad=True)
    grad_fn = t.grad_fn
    with pytest.raises((RuntimeError, IndexError), match=message):
        call(t)
    np.testing.assert_array_equal(t.numpy(force=True), [1.0, 2.0, 3.0])
    assert t._version == 0 and t.grad_fn is grad_fn


@pytest.mark.parametrize("recording", [False, True])
def test_float_result_into_an_int_tensor_raises(recording):
    t = oxmera.tensor([1, 2, 3])
    other = oxmera.tensor(0.5, requires_grad=True) if recording else 0.5
    with pytest.raises(RuntimeError, match="can't be cast"):
        t.add_(other)
    assert t.tolist() == [1, 2, 3] and t._version == 0


def test_int_tensors_update_in_place():
    t = oxmera.tensor([1, 2, 3])
    t += 2
    t *= 3
    assert t.tolist() == [9, 12, 15] and t.dtype == np.int64


def test_iadd_keeps_the_python_name_bound_to_the_same_tensor():
    t = oxmera.zeros(3)
    alias = t
    t += 1
    assert t is alias and alias.tolist() == [1.0, 1.0, 1.0]


def test_read_only_memory_is_reported():
    t = oxmera.zeros(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="add_"):
        t.add_(1.0)


def test_add_and_sub_with_alpha_on_large_tensors_equal_the_two_step_formula():
    # The optimizer path (nothing recording) updates large tensors in chunks
    # through a small scratch; the roundings must be exactly those of
    # ``self + other * alpha`` in the tensor's dtype, aliases and layouts included.
    rng = np.random.default_rng(3)
    base = rng.standard_normal((300, 200)).astype(np.float32)
    other = rng.standard_normal((300, 200)).astype(np.float32)
    for method, ufunc in (("add_", np.add), ("sub_", np.subtract)):
        t = oxmera.tensor(base.copy())
        getattr(t, method)(oxmera.tensor(other), alpha=0.37)
        expected = ufunc(base, np.multiply(other, 0.37, dtype=np.float32))
        np.testing.assert_array_equal(t.numpy(), expected)
    t = oxmera.tensor(base.copy())
    t.add_(t, alpha=2.0)                                    # other is self
    np.testing.assert_array_equal(t.numpy(), base + np.multiply(base, 2.0, dtype=np.float32))
    t = oxmera.tensor(base.copy())
    t[1:].sub_(t[:-1], alpha=0.5)                           # overlapping views
    expected = base.copy()
    expected[1:] = base[1:] - np.multiply(base[:-1], 0.5, dtype=np.float32)
    np.testing.assert_array_equal(t.numpy(), expected)
    t = oxmera.tensor(base.copy())
    t.add_(oxmera.tensor(other.T.copy()).T, alpha=-1.5)     # a transposed operand
    np.testing.assert_array_equal(t.numpy(), base + np.multiply(other, -1.5, dtype=np.float32))
    assert t._version == 1


@pytest.mark.parametrize("method", ["add_", "sub_"])
def test_alpha_update_in_one_compiled_call_keeps_the_in_place_rules(method):
    # p.add_/sub_(g, alpha=...) takes one compiled call (write_unrecorded with
    # the scaled_update kernel) when nothing records; what it must keep:
    sign = 1.0 if method == "add_" else -1.0
    g = oxmera.tensor([1.0, 2.0, 4.0])
    # a leaf that requires grad, under no_grad: written, version bumped once
    p = oxmera.tensor([1.0, 1.0, 1.0], requires_grad=True)
    with oxmera.no_grad():
        assert getattr(p, method)(g, alpha=0.5) is p
    np.testing.assert_array_equal(p.detach().numpy(),
                                  np.float32(1.0) + sign * np.multiply(g.numpy(), 0.5))
    assert p._version == 1 and p.requires_grad and p.is_leaf and p.grad_fn is None
    # ... and the graph that saved it sees the write
    w = oxmera.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (w * w).sum()
    with oxmera.no_grad():
        getattr(w, method)(g, alpha=0.25)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    # recording: the same call is the error PyTorch gives, nothing written
    q = oxmera.tensor([1.0, 1.0, 1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        getattr(q, method)(g, alpha=0.5)
    assert q.detach().numpy().tolist() == [1.0, 1.0, 1.0] and q._version == 0
    # recording through a differentiable operand: recorded, not the kernel's
    t = oxmera.tensor([1.0, 1.0, 1.0])
    h = oxmera.tensor([1.0, 2.0, 4.0], requires_grad=True)
    getattr(t, method)(h, alpha=0.5)
    assert t.requires_grad and t.grad_fn is not None
    t.sum().backward()
    np.testing.assert_array_equal(h.grad.numpy(), [sign * 0.5] * 3)
    # a read-only broadcast view stays read-only
    b = oxmera.zeros(3).expand(2, 3)
    with pytest.raises(RuntimeError, match="read-only"):
        getattr(b, method)(oxmera.ones(2, 3), alpha=0.5)
    # other dtypes and numbers take NumPy's path with NumPy's roundings
    d = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64)
    getattr(d, method)(oxmera.tensor([3.0, 3.0]), alpha=0.1)
    np.testing.assert_array_equal(d.numpy(), np.add([1.0, 2.0], sign * np.float32(3.0) * 0.1))
    assert d._version == 1


def test_write_unrecorded_declines_what_it_does_not_write():
    from oxmera._core import _kernels
    from oxmera._core.autograd import write_unrecorded

    p = oxmera.ones(3)
    assert write_unrecorded(np.ones(3, np.float32), p, _kernels.scaled_update, 1.0, True) is False
    assert write_unrecorded(p, oxmera.ones(3, dtype=oxmera.float64), _kernels.scaled_update,
                            1.0, True) is False          # the kernel declines
    assert p._version == 0 and p.numpy().tolist() == [1.0, 1.0, 1.0]
    assert write_unrecorded(p, p, _kernels.scaled_update, 1.0, True) is False  # overlap
    assert write_unrecorded(p, oxmera.ones(3), _kernels.scaled_update, 1.0, True) is True
    assert p._version == 1 and p.numpy().tolist() == [0.0, 0.0, 0.0]
