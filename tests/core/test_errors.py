"""Errors (SPEC §6): the right type, a message naming what went wrong, nothing half-done.

Every test snapshots the tensors involved (values, ``_version``, ``.grad``,
``grad_fn``) before the failing call and checks they are all unchanged after.
"""
import warnings

import numpy as np
import pytest

import oxmera
from oxmera import autograd

from ._helpers import test_op

F64 = oxmera.float64


def leaf(values):
    return oxmera.tensor(values, dtype=F64, requires_grad=True)


def snapshot(*tensors):
    state = []
    for t in tensors:
        grad = _grad_of(t)
        state.append((t.detach().numpy().copy(), t._version, t.requires_grad, t.grad_fn,
                      None if grad is None else (grad, grad.detach().numpy().copy(),
                                                 grad._version)))
    return state


def _grad_of(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")    # .grad of a non-leaf warns
        return t.grad


def assert_unchanged(before, *tensors):
    after = snapshot(*tensors)
    for i, (b, a) in enumerate(zip(before, after)):
        np.testing.assert_array_equal(a[0], b[0], err_msg=f"values of tensor {i} changed")
        assert a[1] == b[1], f"_version of tensor {i} changed"
        assert a[2] == b[2], f"requires_grad of tensor {i} changed"
        assert a[3] is b[3], f"grad_fn of tensor {i} changed"
        if b[4] is None:
            assert a[4] is None, f"tensor {i} got a .grad"
        else:
            assert a[4][0] is b[4][0], f".grad of tensor {i} was replaced"
            np.testing.assert_array_equal(a[4][1], b[4][1], err_msg=f".grad of tensor {i} changed")
            assert a[4][2] == b[4][2], f".grad of tensor {i} was written in place"


def _with_grads():
    """Two leaves that already hold a .grad, and a graph using them."""
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward()
    return x, w


# -- requires_grad on non-floating tensors ---------------------------------------------

def test_int_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError, match=r"floating point.*int64"):
        oxmera.tensor([1, 2], requires_grad=True)
    t = oxmera.tensor([1, 2])
    before = snapshot(t)
    with pytest.raises(RuntimeError, match="int64"):
        t.requires_grad = True
    with pytest.raises(RuntimeError, match="int64"):
        t.requires_grad_()
    assert_unchanged(before, t)
    with pytest.raises(RuntimeError, match="int32"):
        oxmera.ones(2, dtype=oxmera.int32, requires_grad=True)
    with pytest.raises(RuntimeError, match="bool"):
        oxmera.tensor([True], requires_grad=True)


# -- backward --------------------------------------------------------------------------

def test_non_scalar_backward_needs_gradient():
    x, w = _with_grads()
    y = x * w
    before = snapshot(x, w, y)
    with pytest.raises(RuntimeError, match=r"scalar outputs.*\(2,\)"):
        y.backward()
    assert_unchanged(before, x, w, y)
    y.backward(oxmera.ones(2, dtype=F64))          # the graph was not freed by the failure
    assert x.grad.tolist() == [6.0, 8.0]


def test_gradient_of_wrong_shape():
    x, w = _with_grads()
    y = x * w
    before = snapshot(x, w, y)
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        y.backward(oxmera.ones(3, dtype=F64))
    with pytest.raises(RuntimeError, match=r"\(2, 1\).*\(2,\)"):
        autograd.grad(y, x, grad_outputs=oxmera.ones(2, 1, dtype=F64))
    assert_unchanged(before, x, w, y)
    y.backward(oxmera.ones(2, dtype=F64))
    assert x.grad.tolist() == [6.0, 8.0]


def test_second_backward_without_retain_graph():
    x, w = _with_grads()
    y = (x * w * w).sum()
    y.backward()
    before = snapshot(x, w)
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        y.backward()
    with pytest.raises(RuntimeError, match=r"retain_graph=True"):
        autograd.grad(y, x)
    assert_unchanged(before, x, w)


def test_failed_backward_through_partly_freed_graph_changes_no_grad():
    # a is shared; the first backward frees a's node; the second fails on it
    # after its own nodes were validated: nothing may have been accumulated.
    x, w, b = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([0.5, 0.5])
    a = x * w
    (a * 2).sum().backward()
    c = (a * b + b * b).sum()
    before = snapshot(x, w, b)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        c.backward()
    assert_unchanged(before, x, w, b)


def test_failure_during_propagation_changes_no_grad():
    # The error comes from a hook halfway through the backward: .grad of the
    # leaves already reached must not have changed either.
    x, w = _with_grads()
    u = leaf([1.0, 1.0])
    h = x * w
    boom = h.register_hook(lambda g: (_ for _ in ()).throw(ValueError("hook failed")))
    y = (h * u).sum() + (u * u).sum()
    before = snapshot(x, w, u)
    with pytest.raises(ValueError, match="hook failed"):
        y.backward()
    assert_unchanged(before, x, w, u)
    boom.remove()


def _failing_forward(x):
    return x * 1.0


def _failing_vjp(ctx, grad, x):
    raise ArithmeticError("vjp failed")


def _failing_vjp_op():
    return test_op("_test_failing_vjp", _failing_forward, _failing_vjp)


def test_failing_vjp_changes_no_grad():
    failing_op = _failing_vjp_op()
    x, w = _with_grads()
    y = (failing_op(x) * w).sum() + (w * w).sum()
    before = snapshot(x, w)
    with pytest.raises(ArithmeticError, match="vjp failed"):
        y.backward(retain_graph=True)
    assert_unchanged(before, x, w)
    assert failing_op(x).grad_fn.name == "TestFailingVjpBackward"


def test_saved_tensor_modified_in_place():
    x, w = _with_grads()
    y = (x * w).sum()
    w._bump_version()                 # what an in-place op on w does
    before = snapshot(x, w)
    with pytest.raises(RuntimeError, match=r"MulBackward.*version 1.*version 0"):
        y.backward()
    assert_unchanged(before, x, w)


def test_backward_of_tensor_without_grad():
    t = oxmera.ones(2)
    before = snapshot(t)
    with pytest.raises(RuntimeError, match="does not require grad"):
        t.sum().backward()
    assert_unchanged(before, t)


# -- op errors: shapes, dims, indices ---------------------------------------------------

def test_add_shape_mismatch():
    a, b = leaf(np.ones((2, 3))), leaf(np.ones((4, 5)))
    before = snapshot(a, b)
    for fn in (lambda: a + b, lambda: oxmera.add(a, b), lambda: b + a):
        with pytest.raises((ValueError, RuntimeError)) as info:
            fn()
        msg = str(info.value)
        assert "add" in msg and "(2, 3)" in msg and "(4, 5)" in msg, msg
        assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)
    assert_unchanged(before, a, b)


def test_matmul_shape_mismatch():
    a, b = leaf(np.ones((2, 3))), leaf(np.ones((4, 5)))
    before = snapshot(a, b)
    for fn in (lambda: a @ b, lambda: oxmera.matmul(a, b)):
        with pytest.raises((ValueError, RuntimeError)) as info:
            fn()
        msg = str(info.value)
        assert "matmul" in msg and "(2, 3)" in msg and "(4, 5)" in msg, msg
    assert_unchanged(before, a, b)


def test_bad_dim():
    x = leaf(np.ones((2, 3)))
    before = snapshot(x)
    with pytest.raises(IndexError, match=r"sum.*range.*got 2"):
        x.sum(dim=2)
    with pytest.raises(IndexError, match=r"range"):
        x.size(-3)
    with pytest.raises(IndexError):
        x.transpose(0, 5)
    assert_unchanged(before, x)


def test_index_out_of_range():
    x = leaf(np.ones((2, 3)))
    before = snapshot(x)
    with pytest.raises(IndexError, match=r"index 5.*size 2"):
        x[5]
    with pytest.raises(IndexError, match=r"index 7.*size 3"):
        x[0, 7]
    with pytest.raises(IndexError):
        x[-3]
    assert_unchanged(before, x)


def test_grad_setter_errors_change_nothing():
    x, w = _with_grads()
    before = snapshot(x)
    with pytest.raises(RuntimeError, match=r"\(3,\)"):
        x.grad = oxmera.ones(3, dtype=F64)
    with pytest.raises(TypeError):
        x.grad = np.ones(2)
    assert_unchanged(before, x)


def test_node_input_index_out_of_range():
    # ctx.input_shape(i) / ctx.input_dtype(i) take i from VJP authors' code; a
    # wrong index must raise, not read past the end of a tuple (it crashed).
    x = leaf([1.0, 2.0])
    node = (x * 2.0).grad_fn
    assert node.input_shape(0) == (2,) and node.input_dtype(0) == np.float64
    for i in (2, 5, -1):
        with pytest.raises(IndexError, match=f"MulBackward.*{i}.*2 inputs"):
            node.input_shape(i)
        with pytest.raises(IndexError, match="out of range"):
            node.input_dtype(i)
    with pytest.raises(RuntimeError, match="input 1 needs no gradient"):
        node.input_shape(1)
