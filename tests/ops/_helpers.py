"""Helpers the op tests share: graph inspection and the "nothing changed" check."""
import contextlib
import gc

import numpy as np

import oxmera
from oxmera._core.autograd import _sealed_objects
from oxmera.ops import _registry

__all__ = ["graph_node_names", "leaf", "unchanged", "backward_name"]


def backward_name(op_name):
    """The node name the op registered as ``op_name`` records (``mul`` -> ``MulBackward``)."""
    return _registry.REGISTRY[op_name].backward_name


def graph_node_names(outputs):
    """Names of every node reachable from ``outputs`` (iteratively, no recursion)."""
    if isinstance(outputs, oxmera.Tensor):
        outputs = (outputs,)
    stack = [o.grad_fn for o in outputs if isinstance(o, oxmera.Tensor) and o.grad_fn is not None]
    seen = set()
    names = set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(str(node.name))
        stack.extend(fn for fn, _ in node.next_functions if fn is not None)
    return names


def leaf(values, dtype=np.float64, requires_grad=True):
    """A leaf tensor holding ``values`` (float64 and requiring grad by default)."""
    t = oxmera.tensor(np.asarray(values), dtype=dtype)
    return t.requires_grad_() if requires_grad else t


@contextlib.contextmanager
def unchanged(*tensors):
    """Assert the block changes none of ``tensors`` and records no node.

    Checked afterwards: the values, ``_version``, ``.grad`` (the same object
    with the same values), ``grad_fn``, and that no graph node created in the
    block is still alive (an op that fails must leave nothing on the tape).
    """
    before = [(t.detach().numpy().copy(), t._version, _grad(t),
               None if _grad(t) is None else _grad(t).detach().numpy().copy(), t.grad_fn)
              for t in tensors]
    # Freezing moves every existing object out of the collector's view, so
    # what it sees afterwards is only what the block created (and scanning
    # that is cheap, unlike the whole heap).
    gc.freeze()
    # Nodes oxmera keeps out of the collector's view are listed by the core.
    sealed_before = {id(o) for o in _sealed_objects()}
    try:
        yield
        gc.collect()
        new_nodes = [o for o in gc.get_objects() + _sealed_objects()
                     if type(o) is oxmera.GradFn and id(o) not in sealed_before]
    finally:
        gc.unfreeze()
    assert not new_nodes, f"the block left graph nodes behind: {new_nodes}"
    for t, (values, version, grad, grad_values, grad_fn) in zip(tensors, before):
        np.testing.assert_array_equal(t.detach().numpy(), values)
        assert t._version == version
        assert _grad(t) is grad
        if grad is not None:
            np.testing.assert_array_equal(grad.detach().numpy(), grad_values)
        assert t.grad_fn is grad_fn


def _grad(t):
    # Only leaves (and retain_grad tensors) have a .grad; reading it on
    # another tensor warns.
    return t.grad if t.is_leaf or t.retains_grad else None
