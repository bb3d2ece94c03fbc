"""Every VJP receives Tensors for its tensor inputs, whatever the caller passed.

``x @ np.ones(2)`` and ``x @ [1.0, 1.0]`` passed the forward and crashed in
backward (``'numpy.ndarray' object has no attribute 'unsqueeze'``): the node
handed the VJP the raw operand. The engine now makes every array or list
given for a tensor input a Tensor (and a Python number a 0-d one) before the
VJP sees it, so no op can get this wrong. Checked over the whole registry:
each differentiable op with more than one tensor input is called as its
gradient cases call it (captured by a spy on the core's entry point), then
again with its other tensor inputs given as ndarrays and as lists; values
and gradients must match the all-Tensor call, to first and second order.
"""
import numpy as np
import pytest

import oxmera
from oxmera._core import autograd as core
from oxmera.ops._registry import REGISTRY
from ops._cases import all_cases  # (tests/ is on sys.path: pytest rootdir-style packages)

# Internal ops the engine or in-place writes record, never called with raw operands.
INTERNAL = {"copy_slices"}

# Ops whose leading tensor inputs have no derivative (their VJP raises, as in
# PyTorch, or as oxmera.scipy documents): how many to pass over before the
# leaf differentiated.
INPUTS_WITHOUT_GRADIENT = {"zeta": 1, "gammainc": 1, "gammaincc": 1, "betainc": 2, "iv": 1,
                           "ive": 1}


def _multi_input_ops():
    # oxmera's own ops (tests and the docs' examples define others, e.g. times_example).
    return sorted(o.name for o in REGISTRY.values()
                  if o.differentiable and (o.n_inputs >= 2 or o.n_inputs < 0)
                  and o.name not in INTERNAL and o.module.startswith("oxmera."))


def _capture_calls():
    """op name -> the first (args, kwargs) its gradient cases call it with, tensors given.

    Seen through the core's profiler hook, which every op call reaches (op
    functions and operators are compiled: there is no Python wrapper to
    patch); the hook runs each op unprofiled, so an op a forward calls is
    not captured as a call of its own (its own cases call it).
    """
    calls = {}

    class Spy:
        def op(self, opdef, args, kwargs):
            if opdef.name not in calls and any(isinstance(a, oxmera.Tensor) for a in _inputs(
                    opdef, args, kwargs)):
                calls[opdef.name] = (args, dict(kwargs or {}))
            return core.apply_op_unprofiled(opdef, args, kwargs)

        def node(self, node, grads):
            return core.run_node_backward(node, grads)

    previous = core.get_profiler()
    core.set_profiler(Spy())
    try:
        for name, case in all_cases():
            if name in calls or REGISTRY.get(name) is None:
                continue
            try:
                case.fn(*case.build())
            except Exception:           # noqa: BLE001 - a case may rely on what it got
                pass
    finally:
        core.set_profiler(previous)
    return calls


def _inputs(opdef, args, kwargs):
    """The tensor-input slots of a call: (place, value) pairs."""
    if opdef.n_inputs < 0:
        return list(args[0]) if args else []
    values = list(args[:opdef.n_inputs])
    values += [kwargs[n] for n in opdef.input_names[len(values):] if kwargs and n in kwargs]
    return values


_CALLS = None


def _calls():
    global _CALLS
    if _CALLS is None:
        _CALLS = _capture_calls()
    return _CALLS


def _fresh(value):
    return value.detach().numpy().copy() if isinstance(value, oxmera.Tensor) else value


def _rebuild_call(opdef, args, kwargs, convert, as_tensors):
    """The call with one float input differentiated and every other tensor input
    converted by ``convert``, then made a Tensor if ``as_tensors`` (the reference:
    the same values, by the same dtype rules); returns (args, kwargs, leaf)."""
    leaf = None
    skip = INPUTS_WITHOUT_GRADIENT.get(opdef.name, 0)

    def slot(value):
        nonlocal leaf, skip
        if not isinstance(value, oxmera.Tensor):
            return value
        array = _fresh(value)
        if leaf is None and array.dtype.kind in "fc":
            if skip:
                skip -= 1
                raw = convert(array)
                return oxmera.as_tensor(raw) if as_tensors else raw
            leaf = oxmera.tensor(array, requires_grad=True)
            return leaf
        raw = convert(array)
        return oxmera.as_tensor(raw) if as_tensors else raw

    if opdef.n_inputs < 0:
        new_args = ([slot(v) for v in args[0]],) + tuple(args[1:])
        return new_args, dict(kwargs), leaf
    n = opdef.n_inputs
    new_args = tuple(slot(v) for v in args[:n]) + tuple(args[n:])
    new_kwargs = {k: (slot(v) if k in opdef.input_names else v) for k, v in kwargs.items()}
    return new_args, new_kwargs, leaf


def _outputs(result):
    if isinstance(result, oxmera.Tensor):
        return [result]
    return [r for r in result if isinstance(r, oxmera.Tensor) and r.requires_grad]


def _gradients(opdef, args, kwargs, convert, as_tensors):
    new_args, new_kwargs, leaf = _rebuild_call(opdef, args, kwargs, convert, as_tensors)
    outs = _outputs(core.apply_op(opdef, new_args, new_kwargs or None))
    seeds = [oxmera.tensor(np.random.default_rng(len(o.shape)).uniform(0.5, 1.5, o.shape),
                           dtype=o.dtype) for o in outs]
    (first,) = oxmera.autograd.grad(outs, [leaf], seeds, create_graph=True, allow_unused=True)
    if first is None or not first.requires_grad:
        return [o.detach().numpy() for o in outs], first, None
    total = first.sum() if first.dtype.kind != "c" else oxmera.view_as_real(first).sum()
    (second,) = oxmera.autograd.grad(total, [leaf], allow_unused=True)
    return [o.detach().numpy() for o in outs], first, second


def test_every_multi_input_op_was_captured():
    missing = sorted(set(_multi_input_ops()) - set(_calls()))
    assert not missing, f"no gradient case calls these through the core's entry point: {missing}"


@pytest.mark.parametrize("convert", [np.asarray, lambda a: a.tolist()], ids=["ndarray", "list"])
@pytest.mark.parametrize("name", _multi_input_ops())
def test_raw_operands_reach_the_vjp_as_tensors(name, convert):
    calls = _calls()
    if name not in calls:
        pytest.skip("not captured (see test_every_multi_input_op_was_captured)")
    opdef = REGISTRY[name]
    args, kwargs = calls[name]
    # Lists of floats become the default dtype: float64 here, as the cases are.
    previous = oxmera.get_default_dtype()
    oxmera.set_default_dtype(oxmera.float64)
    try:
        values, first, second = _gradients(opdef, args, kwargs, convert, True)
        raw_values, raw_first, raw_second = _gradients(opdef, args, kwargs, convert, False)
    finally:
        oxmera.set_default_dtype(previous)
    for a, b in zip(values, raw_values):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    assert (first is None) == (raw_first is None)
    if first is not None:
        np.testing.assert_allclose(raw_first.detach().numpy(), first.detach().numpy(),
                                   rtol=1e-12, atol=1e-12)
    if second is not None and raw_second is not None:
        np.testing.assert_allclose(raw_second.numpy(), second.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("operand", [np.ones(2), [1.0, 1.0], (1.0, 1.0)],
                         ids=["ndarray", "list", "tuple"])
def test_the_issue_reproducer_matmul_with_a_raw_operand(operand):
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    (x @ operand).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    x.grad = None
    (operand @ x if not isinstance(operand, tuple) else oxmera.matmul(operand, x)).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_a_vjp_sees_tensors_for_numbers_and_arrays():
    from oxmera.extend import op
    seen = []

    @op(name="scale_probe_example", inputs=2)
    def scale(x, y):
        return x * y

    @scale.vjp
    def _(ctx, grad, x, y):
        seen.append((type(x).__name__, type(y).__name__, y.dtype, y.shape))
        return grad * y, grad * x

    REGISTRY.pop("scale_probe_example")
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    for other in (0.1, 3, np.array([2.0, 2.0]), [2.0, 2.0], np.float64(0.1)):
        x.grad = None
        scale(x, other).sum().backward()
    assert {s[:2] for s in seen} == {("Tensor", "Tensor")}
    assert seen[0][2] == np.float64 and seen[0][3] == ()      # exact: 0.1 stays 0.1
    np.testing.assert_array_equal(x.grad.numpy(), [0.1, 0.1])


def test_a_raw_array_saved_for_backward_is_locked():
    # The node keeps the caller's array as a Tensor over its memory: writing
    # it between forward and backward would change the gradient silently.
    operand = np.array([2.0, 3.0])
    x = oxmera.tensor([1.0, 1.0], dtype=oxmera.float64, requires_grad=True)
    y = (x * operand).sum()
    with pytest.raises(ValueError, match="read-only"):
        operand[0] = 100.0
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 3.0])
    operand[0] = 100.0               # unlocked with the graph
