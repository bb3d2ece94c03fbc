"""First and second order gradients of every differentiable op, from the case table.

The cases live in ``_cases.GRADIENT_CASES`` (keyed by op name);
``test_registry.py`` makes sure every registered differentiable op has some.
"""
import numpy as np
import pytest

import oxmera
from oxmera.autograd import grad, gradcheck, gradgradcheck

from ._cases import COMPOSITE_CASES, all_cases
from ._helpers import backward_name, graph_node_names

CASES = all_cases()


def _outputs(result):
    return (result,) if isinstance(result, oxmera.Tensor) else tuple(result)


def _check_backward_runs(fn, inputs):
    """Backward (and a recorded backward, differentiated again) gives each
    input a gradient of its own shape and dtype.

    gradcheck builds Jacobians element by element, so for size-0 tensors it
    never runs a backward at all; this does, whatever the sizes.
    """
    targets = [t for t in inputs if isinstance(t, oxmera.Tensor) and t.requires_grad]
    outputs = [o for o in _outputs(fn(*inputs)) if o.requires_grad]
    total = sum((o.sum() for o in outputs[1:]), outputs[0].sum())
    grads = grad(total, targets, create_graph=True, allow_unused=True)
    for t, g in zip(targets, grads):
        if g is None:
            continue
        assert g.shape == t.shape and g.dtype == t.dtype
        assert np.isfinite(g.detach().numpy()).all()
    differentiable = [g for g in grads if g is not None and g.requires_grad]
    if differentiable:
        second = sum((g.sum() for g in differentiable[1:]), differentiable[0].sum())
        for t, g in zip(targets, grad(second, targets, allow_unused=True)):
            if g is not None:
                assert g.shape == t.shape and g.dtype == t.dtype


@pytest.mark.parametrize("name, case", CASES, ids=[case.id for _, case in CASES])
def test_gradients(name, case):
    inputs = case.build()
    outputs = _outputs(case.fn(*inputs))
    # The case must exercise the op it is filed under.
    assert backward_name(name) in graph_node_names(outputs), (
        f"{case.id} does not record a {backward_name(name)} node")
    assert gradcheck(case.fn, inputs, **case.tolerances)
    if case.second_order:
        assert gradgradcheck(case.fn, inputs, **case.tolerances)
    _check_backward_runs(case.fn, inputs)


@pytest.mark.parametrize("case", COMPOSITE_CASES, ids=[c.id for c in COMPOSITE_CASES])
def test_composite_gradients(case):
    inputs = case.build()
    assert gradcheck(case.fn, inputs, **case.tolerances)
    assert gradgradcheck(case.fn, inputs, **case.tolerances)
