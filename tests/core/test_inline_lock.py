"""The inline memory lock: a tensor saved alone over memory its own array owns.

Such a tensor (every saved input of a deep chain) is its memory's lock in the
core's registry, with no _MemoryLock of its own; the first other use of the
memory (another saver, a write, an export, a view) makes it a full lock. These
tests pin that each of those keeps the mutation-safety rules of SPEC §5.
"""
import gc

import numpy as np
import pytest

import oxmera
from oxmera._core.autograd import _inline_locks, _locked_memory


@pytest.fixture(autouse=True)
def _no_locks_left_by_earlier_tests():
    # The counts below are of the whole process: graphs earlier tests left
    # in reference cycles (freed at the collector's next pass) must be gone.
    gc.collect()
    assert _locked_memory() == (0, 0) and _inline_locks() == 0


def _saved():
    x = oxmera.tensor([0.5, 1.0, 1.5], dtype=oxmera.float64, requires_grad=True)
    h = x * 2.0                     # h owns its array (and x is saved by nobody)
    y = oxmera.cos(h)               # cos saves h
    return x, h, y


def test_a_sole_saver_is_its_own_lock_and_unlocks_its_memory():
    x, h, y = _saved()
    assert _inline_locks() >= 1 and _locked_memory() >= (1, 1)
    assert not h.detach().numpy().flags.writeable
    y.sum().backward()
    assert _inline_locks() == 0 and _locked_memory() == (0, 0)
    assert h.detach().numpy().flags.writeable
    np.testing.assert_allclose(x.grad.numpy(), -2.0 * np.sin(2.0 * np.array([0.5, 1.0, 1.5])),
                               rtol=1e-12)


def test_a_dropped_graph_unlocks_an_inline_lock():
    x, h, y = _saved()
    array = h.detach().numpy()
    del y
    assert array.flags.writeable and _locked_memory() == (0, 0)


def test_a_second_saver_makes_it_a_full_lock():
    x, h, y = _saved()
    z = h * h                       # saves h again: same tensor, same lock
    alias = h.detach().requires_grad_()
    w = alias * alias               # another tensor over the same memory
    assert _locked_memory() == (1, 2) and _inline_locks() == 0
    del y
    assert not h.detach().numpy().flags.writeable   # z and w still need it
    del z
    assert not h.detach().numpy().flags.writeable
    del w
    assert h.detach().numpy().flags.writeable and _locked_memory() == (0, 0)


def test_an_inplace_write_through_an_alias_is_seen():
    x, h, y = _saved()
    alias = h.detach()
    with oxmera.no_grad():
        alias.add_(1.0)             # bumps the savers of the memory
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_a_numpy_write_into_the_saved_memory_raises():
    x, h, y = _saved()
    array = h.detach().numpy()
    with pytest.raises(ValueError, match="read-only"):
        array[0] = 5.0
    y.sum().backward()
    array[0] = 5.0                  # writable again once the graph is spent


def test_a_view_made_while_locked_is_read_only_and_freed_with_the_lock():
    x, h, y = _saved()
    v = h[1:]                       # an oxmera view of the locked memory
    assert not v.detach().numpy().flags.writeable
    y.sum().backward()
    assert _locked_memory() == (0, 0)
    assert h.detach().numpy().flags.writeable
