"""Forward values and gradients of every op against PyTorch, where it is importable.

The comparisons live in ``_case_table.TORCH_CASES`` (filled by the topic
modules ``_cases_<topic>.py``); each runs the same function on oxmera and on
torch, on the same float64 inputs, and compares the outputs and the
gradients of a random weighting of them. Skipped, not failed, without torch:
the suite must pass without it. ``test_every_op_is_compared_with_torch`` runs
either way, so coverage cannot fall behind.
"""
import zlib

import numpy as np
import pytest

import oxmera

from ._case_table import Leaf
from ._cases import TORCH_CASES
from .test_registry import _real_ops

#: Ops PyTorch has no counterpart of, and why.
NO_TORCH_COUNTERPART = {
    "sum_to": "internal: the engine's broadcast reduction (torch's sum_to_size is a method "
              "with other semantics for 0-d)",
    "index_backward": "internal: the VJP of indexing (a scatter-add), compared through `index`",
    "airy_ai_derivative": "internal: the VJP of airy_ai (torch has none), compared with SciPy "
                          "in test_math.py",
}

#: Op modules whose ops are compared; creation ops draw random numbers or
#: allocate, which is checked against NumPy in test_creation.py instead.
COMPARED_MODULES = tuple(f"oxmera.ops.{m}" for m in oxmera.ops.__all__ if m != "creation")

CASES = [case for cases in TORCH_CASES.values() for case in cases]


def test_every_op_is_compared_with_torch():
    names = {o.name for o in _real_ops() if o.module.startswith(COMPARED_MODULES)}
    missing = sorted(names - set(TORCH_CASES) - set(NO_TORCH_COUNTERPART))
    assert not missing, f"ops without a PyTorch comparison in TORCH_CASES: {missing}"


def _build(case, lib, torch):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = []
    for spec in case.inputs:
        if not isinstance(spec, Leaf):
            inputs.append(spec)
            continue
        # a contiguous copy that keeps 0-d arrays 0-d (ascontiguousarray would not)
        array = np.array(spec.build(rng).detach().numpy(), order="C", copy=True)
        if lib is torch:
            inputs.append(torch.tensor(array, requires_grad=spec.requires_grad))
        else:
            inputs.append(oxmera.tensor(array, requires_grad=spec.requires_grad))
    return inputs


def _outputs(result):
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def _to_numpy(value):
    if isinstance(value, oxmera.Tensor):
        return value.detach().numpy()
    if hasattr(value, "detach"):
        # (resolve_conj: PyTorch's complex results may be lazily conjugated views)
        return value.detach().cpu().resolve_conj().numpy()
    return np.asarray(value)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_against_torch(case):
    torch = pytest.importorskip("torch")
    results = {}
    for lib in (oxmera, torch):
        inputs = _build(case, lib, torch)
        outputs = _outputs(case.fn(lib, *inputs))
        grads = None
        float_outputs = [o for o in outputs if getattr(o, "requires_grad", False)]
        if case.grad and float_outputs:
            total = 0
            for k, o in enumerate(float_outputs):
                # A complex output: its real and imaginary parts weighted apart.
                pair = o.dtype in (oxmera.complex64, oxmera.complex128, torch.complex64,
                                   torch.complex128)
                if pair:
                    o = lib.view_as_real(o)
                weights = np.random.default_rng(k).uniform(0.5, 1.5, tuple(o.shape))
                w = oxmera.tensor(weights) if lib is oxmera else torch.tensor(weights)
                total = total + (o * w.to(o.dtype)).sum()
            leaves = [t for t in inputs if getattr(t, "requires_grad", False)]
            grads = (oxmera.autograd.grad if lib is oxmera else torch.autograd.grad)(
                total, leaves, allow_unused=True)
        results[lib.__name__] = ([_to_numpy(o) for o in outputs],
                                 None if grads is None else [None if g is None else _to_numpy(g)
                                                             for g in grads])
    (ours, our_grads), (theirs, their_grads) = results["oxmera"], results["torch"]
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, atol=case.atol, rtol=case.rtol, equal_nan=True)
    if our_grads is not None:
        for a, b in zip(our_grads, their_grads):
            if a is None or b is None:
                # None and an all-zero gradient mean the same
                assert a is None and b is None or np.all((a if a is not None else b) == 0)
                continue
            np.testing.assert_allclose(a, b, atol=case.atol, rtol=case.rtol, equal_nan=True)
