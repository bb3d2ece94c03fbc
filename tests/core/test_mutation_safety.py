"""Arrays saved for backward are read-only to NumPy while their graph lives.

PyTorch's version counters do not see writes made through NumPy (into
``t.numpy()`` or the array given to ``from_numpy``), which then corrupt a
gradient silently; oxmera makes those writes raise, and gives the arrays back
when the graph is freed (by backward, or by dropping it).
"""
import gc

import numpy as np
import pytest

import oxmera


def test_writing_through_from_numpy_memory_raises_while_saved():
    a = np.array([1.0, 2.0, 3.0])
    x = oxmera.from_numpy(a).requires_grad_()
    y = (x * x).sum()
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 5.0
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    a[0] = 5.0                       # the graph is freed: writable again
    assert x.tolist() == [5.0, 2.0, 3.0]


def test_writing_into_a_saved_output_raises():
    x = oxmera.tensor([0.5, 1.0], requires_grad=True)
    y = x.exp()                      # exp saves its output
    with pytest.raises(ValueError, match="read-only"):
        y.detach().numpy()[0] = 0.0
    y.sum().backward()
    y.detach().numpy()[0] = 0.0


def test_retain_graph_keeps_the_lock_until_the_graph_is_dropped():
    w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    data = np.array([3.0, 4.0])
    x = oxmera.from_numpy(data)
    loss = (x * w).sum()             # mul saves x (for w's gradient)
    loss.backward(retain_graph=True)
    with pytest.raises(ValueError):
        data[0] = 0.0
    del loss
    data[0] = 0.0


def test_dropping_a_graph_without_backward_unlocks():
    gc.disable()
    try:
        data = np.array([3.0, 4.0])
        w = oxmera.tensor([1.0, 2.0], requires_grad=True)
        loss = (oxmera.from_numpy(data) * w).sum()
        with pytest.raises(ValueError):
            data[1] = 0.0
        del loss
        data[1] = 0.0
    finally:
        gc.enable()


def test_a_tensor_saved_twice_stays_locked_until_both_are_freed():
    data = np.array([1.0, 2.0])
    x = oxmera.from_numpy(data)
    w = oxmera.tensor([1.0, 1.0], requires_grad=True)
    first = (x * w).sum()
    second = (x * w * 2).sum()
    first.backward()
    with pytest.raises(ValueError):
        data[0] = 9.0
    second.backward()
    data[0] = 9.0


def test_arrays_read_only_before_stay_read_only():
    data = np.array([1.0, 2.0])
    data.flags.writeable = False
    x = oxmera.from_numpy(data)
    w = oxmera.tensor([1.0, 1.0], requires_grad=True)
    (x * w).sum().backward()
    assert not data.flags.writeable


def test_unsaved_arrays_stay_writable():
    data = np.array([1.0, 2.0])
    w = oxmera.tensor([1.0, 1.0], requires_grad=True)
    loss = (oxmera.from_numpy(data) + w).sum()     # add saves nothing
    data[0] = 7.0
    loss.backward()


def test_in_place_ops_still_write_and_backward_reports_the_version():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    a = x * 1
    b = a * a                        # saves a
    a.add_(1.0)                      # oxmera's own in-place op: allowed, bumps the version
    assert a.tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="version 1; expected version 0"):
        b.sum().backward()


def test_in_place_through_a_view_of_a_saved_tensor():
    x = oxmera.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 1
    b = a * a
    a[1:].mul_(2.0)
    assert a.tolist() == [1.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match="version"):
        b.sum().backward()


def test_no_grad_optimizer_updates_after_backward():
    w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    x = oxmera.tensor([3.0, 4.0])
    loss = (x * w).sum()
    loss.backward()
    with oxmera.no_grad():
        w -= 0.1 * w.grad
    assert np.allclose(w.tolist(), [0.7, 1.6])
