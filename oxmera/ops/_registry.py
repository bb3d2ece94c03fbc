"""The op registry: what an op is, and the list of all of them.

An :class:`OpDef` holds everything the core needs to run an op and record
its node: the NumPy forward, the VJP, which leading arguments are tensor
inputs, what the VJP reads. Ops are defined with :func:`oxmera.extend.op`,
which builds the OpDef and registers it here. The registry is what tests walk
to make sure every differentiable op has a gradient test, and what installs
Tensor methods and operators.
"""
from oxmera._core import autograd as _core

#: name -> OpDef, in definition order.
REGISTRY = {}

# Tensor attributes (methods, operators, properties) waiting to be installed.
_TENSOR_ATTRIBUTES = {}


# The op record itself is a compiled class: the core reads its fields on
# every call. Its fields are documented there.
OpDef = _core.OpDef


def register(opdef):
    if opdef.name in REGISTRY:
        raise ValueError(f"an op named {opdef.name!r} is already registered")
    REGISTRY[opdef.name] = opdef
    return opdef


def list_ops(differentiable=None):
    """All registered ops (OpDefs), optionally only the (non-)differentiable ones."""
    return [o for o in REGISTRY.values()
            if differentiable is None or o.differentiable == differentiable]


def add_tensor_attribute(name, value):
    """Queue ``Tensor.<name> = value``; installed by :func:`install_tensor_attributes`."""
    if name in _TENSOR_ATTRIBUTES:
        raise ValueError(f"Tensor.{name} is defined twice")
    _TENSOR_ATTRIBUTES[name] = value


def install_tensor_attributes():
    """Give the compiled Tensor type every queued method and operator."""
    _core.install_tensor_attributes(dict(_TENSOR_ATTRIBUTES))
