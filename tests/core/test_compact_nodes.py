"""Nodes of two-input ops keep no tuple when one input has no edge.

``x * 0.5``, ``2.0 - x`` and ``x + c`` (``c`` needing no gradient) are most of
a deep graph's binary nodes: the node keeps the one edge and the one saved
argument bare, with their positions, and a node whose saved arguments are all
None shares one tuple. These tests pin what must not change with that:
next_functions, needs_input_grad, the saved arguments, gradients of every
order, saved-tensor hooks, and (the point of it) no tuple per node.
"""
import gc

import numpy as np
import pytest

import oxmera
from oxmera.autograd.graph import saved_tensors_hooks


def _tuples_held(node):
    # The tuples the node references for its edges and arguments, but not
    # those shared by the nodes alike: the (shape, dtype) of its output and
    # the all-None argument tuple.
    return [o for o in gc.get_referents(node)
            if type(o) is tuple and not (len(o) == 2 and isinstance(o[1], np.dtype))
            and any(item is not None for item in o)]


def _leaf(values=(0.5, -1.25, 2.0)):
    return oxmera.tensor(np.array(values, dtype=np.float64), requires_grad=True)


CASES = {
    # name: (function of x, its derivative in x, which input is x, whether
    # the VJP reads both arguments: then they are one tuple, the node's only)
    "mul_number_right": (lambda x: x * 0.5, lambda v: np.full_like(v, 0.5), 0, False),
    "mul_number_left": (lambda x: 0.5 * x, lambda v: np.full_like(v, 0.5), 1, False),
    "rsub_number": (lambda x: 2.0 - x, lambda v: -np.ones_like(v), 1, False),
    "add_number": (lambda x: x + 0.001, lambda v: np.ones_like(v), 0, False),
    "div_number_left": (lambda x: 3.0 / x, lambda v: -3.0 / v ** 2, 1, True),
    "pow_number": (lambda x: x ** 3, lambda v: 3 * v ** 2, 0, True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_edge_of_two_is_kept_bare(name):
    f, df, at, both = CASES[name]
    x = _leaf()
    h = oxmera.sin(x)           # the edge is a node, not the leaf
    y = f(h)
    node = y.grad_fn
    fns = node.next_functions
    assert len(fns) == 2
    assert fns[at] == (h.grad_fn, 0)
    assert fns[1 - at] == (None, 0)
    assert node.needs_input_grad == tuple(i == at for i in range(2))
    held = _tuples_held(node)
    if both:
        assert held == [node._saved_arguments()[0]] and len(held[0]) == 2
    else:
        assert held == []
    y.sum().backward()
    s = np.sin(x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), df(s) * np.cos(x.detach().numpy()), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bare_nodes_differentiate_twice(name):
    f = CASES[name][0]
    x = _leaf()
    assert oxmera.autograd.gradcheck(lambda t: f(oxmera.sin(t)), (x,))
    assert oxmera.autograd.gradgradcheck(lambda t: f(oxmera.sin(t)), (x,))


def test_the_saved_argument_reads_in_its_position():
    x = _leaf()
    h = oxmera.sin(x)
    right = (h * 0.5).grad_fn._saved_arguments()[0]
    left = (3.0 / h).grad_fn._saved_arguments()[0]
    assert len(right) == 2 and right[1] == 0.5
    assert len(left) == 2 and left[0] == 3.0 and left[1] is h


def test_a_node_saving_nothing_shares_its_argument_tuple():
    x = _leaf()
    c = oxmera.tensor([1.0, 2.0, 3.0], dtype=oxmera.float64)
    a = (oxmera.sin(x) + c).grad_fn
    b = (oxmera.cos(x) - 0.25).grad_fn
    args_a, args_b = a._saved_arguments()[0], b._saved_arguments()[0]
    assert args_a == (None, None) and args_a is args_b       # one tuple for all
    assert not gc.is_tracked(args_a)
    assert _tuples_held(a) == []


def test_both_edges_keep_their_tuple():
    x, w = _leaf(), _leaf((1.0, 2.0, 3.0))
    node = (x * w).grad_fn
    assert [f is not None for f, _ in node.next_functions] == [True, True]
    (x * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w.detach().numpy())


def test_saved_tensor_hooks_see_a_bare_argument():
    packed = []

    def pack(t):
        packed.append(t)
        return t.detach().numpy().copy()

    def unpack(a):
        return oxmera.tensor(a)

    x = _leaf()
    with saved_tensors_hooks(pack, unpack):
        h = oxmera.sin(x)
        y = 3.0 / h                     # saves h, at position 1 beside a number
    assert any(p is h for p in packed)
    y.sum().backward()
    s = np.sin(x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), -3.0 / s ** 2 * np.cos(x.detach().numpy()),
                               rtol=1e-12)


def test_a_bare_node_is_spent_by_backward():
    x = _leaf()
    y = 3.0 / oxmera.sin(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.sum().backward()


def test_inplace_change_of_a_bare_saved_input_is_caught():
    x = _leaf()
    h = oxmera.sin(x)
    y = 3.0 / h
    with oxmera.no_grad():
        h.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


# -- what a node keeps in fewer bytes: its output count, versions, flags ------------

def test_a_node_of_more_outputs_than_its_count_field_holds():
    # The count is 16 bits; from 65535 outputs on it is read from out_info.
    x = oxmera.tensor(np.arange(70_000.0), requires_grad=True)
    outs = x.unbind(0)
    node = outs[0].grad_fn
    assert node._output_count == 70_000 and outs[69_999].output_nr == 69_999
    (outs[5] * 2 + outs[69_999] * 3).backward()
    g = x.grad.numpy()
    assert g[5] == 2.0 and g[69_999] == 3.0 and g.sum() == 5.0


def test_versions_recorded_beside_a_backward_task():
    # A node whose saved input had been written keeps that version where a
    # backward keeps its task otherwise: the backward keeps it aside, and
    # both the version check and the gradient hold.
    x = _leaf()
    h = oxmera.sin(x)
    with oxmera.no_grad():
        h.mul_(2.0)                         # h at version 1
    y = oxmera.cos(h) * h                   # both nodes saved h at version 1
    z = y.exp()                             # saves its output at version 0
    z.sum().backward(retain_graph=True)
    hv = 2.0 * np.sin(x.detach().numpy())
    # (the write ran under no_grad: h's history is still sin's, as in PyTorch)
    expected = np.exp(np.cos(hv) * hv) * (-np.sin(hv) * hv + np.cos(hv)) \
        * np.cos(x.detach().numpy())
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    with oxmera.no_grad():
        h.add_(1.0)                         # version 2: the saved values are stale
    with pytest.raises(RuntimeError, match="is at version 2; expected version 1"):
        z.sum().backward()


def test_released_and_frees_saved_flags():
    x = _leaf()
    y = oxmera.sin(x)
    node = y.grad_fn
    assert node._released is False
    seen = []
    node.register_hook(lambda gi, go: seen.append(node._frees_saved))
    y.sum().backward()
    assert node._released is True and seen == [True]
