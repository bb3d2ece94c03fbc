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


def _real_sum(o):
    """A real scalar depending on every element of ``o`` (both parts of a complex one)."""
    return o.sum() if o.dtype.kind != "c" else oxmera.view_as_real(o).sum()


def _check_backward_runs(fn, inputs):
    """Backward (and a recorded backward, differentiated again) gives each
    input a gradient of its own shape and dtype.

    gradcheck builds Jacobians element by element, so for size-0 tensors it
    never runs a backward at all; this does, whatever the sizes.
    """
    targets = [t for t in inputs if isinstance(t, oxmera.Tensor) and t.requires_grad]
    outputs = [o for o in _outputs(fn(*inputs)) if o.requires_grad]
    total = sum((_real_sum(o) for o in outputs[1:]), _real_sum(outputs[0]))
    grads = grad(total, targets, create_graph=True, allow_unused=True)
    for t, g in zip(targets, grads):
        if g is None:
            continue
        assert g.shape == t.shape and g.dtype == t.dtype
        assert np.isfinite(g.detach().numpy()).all()
    differentiable = [g for g in grads if g is not None and g.requires_grad]
    if differentiable:
        second = sum((_real_sum(g) for g in differentiable[1:]), _real_sum(differentiable[0]))
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


def _leaf_positions(inputs):
    return [k for k, t in enumerate(inputs) if isinstance(t, oxmera.Tensor) and t.requires_grad]


MULTI_INPUT_CASES = [(name, case) for name, case in CASES
                     if len(_leaf_positions(case.build())) >= 2]


@pytest.mark.parametrize("name, case", MULTI_INPUT_CASES,
                         ids=[case.id for _, case in MULTI_INPUT_CASES])
def test_each_input_alone_gets_the_same_gradient(name, case):
    """With only one input requiring grad, the VJP skips the others
    (``ctx.needs_input_grad``) and must still give that input its gradient:
    a VJP reading what the node keeps only for inputs needing a gradient
    failed this way (binary_cross_entropy in its target)."""
    inputs = case.build()
    positions = _leaf_positions(inputs)
    weights = None
    full = None
    for alone in [None] + positions:
        built = case.build()
        if alone is not None:
            built = tuple(t.detach() if k in positions and k != alone else t
                          for k, t in enumerate(built))
        # Every floating output, so each keeps its weight whichever inputs require grad
        # (one that needs no gradient only adds a constant).
        outputs = [o for o in _outputs(case.fn(*built)) if o.dtype.kind in "fc"]
        if weights is None:
            rng = np.random.default_rng(0)
            weights = [oxmera.tensor(rng.standard_normal(o.shape), dtype=o.dtype) for o in outputs]
        total = sum((_real_sum(o * w) for o, w in zip(outputs, weights)), oxmera.tensor(0.0,
                    dtype=oxmera.float64))
        targets = [built[k] for k in (positions if alone is None else [alone])]
        if not total.requires_grad:         # nothing of the output depends on that input
            grads = [None]
        else:
            grads = grad(total, targets, allow_unused=True)
        if alone is None:
            full = dict(zip(positions, grads))
            continue
        got, want = grads[0], full[alone]
        if want is None:
            assert got is None or not np.any(got.numpy())
            continue
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=f"input {alone} alone")
