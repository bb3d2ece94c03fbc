"""The registry of memory saved for backward, under many blocks at once.

The core keeps it as an open-addressing table (see the registry comment in
autograd.pyx): these tests grow it past several resizes and free its entries
in an order unrelated to insertion, so deletions shift probe runs around,
then check every block is still found (its arrays read-only, a write through
oxmera bumping the saver's version) and the table empties.
"""
import numpy as np
import pytest

import oxmera
from oxmera._core.autograd import _locked_memory


def test_many_blocks_locked_and_released_in_random_order():
    rng = np.random.default_rng(0)
    assert _locked_memory() == (0, 0)
    leaves = [oxmera.tensor(rng.standard_normal(3), requires_grad=True) for _ in range(5000)]
    graphs = [oxmera.sin(x) for x in leaves]          # each saves its leaf's memory
    assert _locked_memory() == (5000, 5000)
    order = rng.permutation(len(graphs))
    for k, i in enumerate(order):
        if k % 7 == 0:
            # Every still-registered block is found: its array is read-only.
            j = order[rng.integers(k, len(order))]
            with pytest.raises(ValueError):
                leaves[j].detach().numpy()[0] = 1.0
        graphs[i] = None
        assert _locked_memory() == (len(order) - k - 1,) * 2
    assert all(x.detach().numpy().flags.writeable for x in leaves)


def test_a_block_saved_twice_and_written_through_an_alias():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = oxmera.sin(x)
    z = oxmera.cos(x.detach().requires_grad_())      # another tensor, the same memory
    assert _locked_memory() == (1, 2)
    alias = x.detach()
    with oxmera.no_grad():
        alias.add_(1.0)                               # found through the alias
    with pytest.raises(RuntimeError):
        y.sum().backward()
    del y, z
    assert _locked_memory() == (0, 0)
