"""Helpers of the core tests."""
from oxmera.extend import op
from oxmera.ops import _registry


def test_op(name, forward, vjp):
    """Register an op for a test once (the registry refuses a name twice).

    Such ops are defined outside oxmera, so the registry-coverage test of
    tests/ops does not ask for their gradient cases.
    """
    existing = _registry.REGISTRY.get(name)
    if existing is not None:
        return existing.public
    forward.__name__ = name
    public = op(name=name)(forward)
    public.vjp(vjp)
    return public


test_op.__test__ = False     # a helper, not a test, despite its name
