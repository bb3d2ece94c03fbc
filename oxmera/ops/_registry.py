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


class OpDef:
    """One op: forward on arrays + VJP on Tensors, and how to call them.

    Attributes read by the compiled core (``oxmera._core.autograd.apply_op``):
    ``name``, ``backward_name``, ``forward``, ``vjp``, ``n_inputs`` (leading
    tensor arguments; -1 when the first argument is a sequence of tensors),
    ``input_names``, ``differentiable``, ``save_mask`` (per input, does the
    VJP read it; None = all), ``save_output``, ``prepare`` (dtype promotion,
    or None), ``view`` (the output may be a view of input 0), ``output_type``
    (a namedtuple class for several outputs, or None).
    """

    __slots__ = ("name", "backward_name", "forward", "vjp", "n_inputs", "input_names",
                 "differentiable", "save_mask", "save_output", "prepare", "view",
                 "output_type", "public", "module")

    def __init__(self, name, forward, n_inputs, input_names, differentiable, save_mask,
                 save_output, prepare, view, output_type):
        self.name = name
        self.backward_name = _core.backward_name(name)
        self.forward = forward
        self.vjp = None
        self.n_inputs = n_inputs
        self.input_names = input_names
        self.differentiable = differentiable
        self.save_mask = save_mask
        self.save_output = save_output
        self.prepare = prepare
        self.view = view
        self.output_type = output_type
        self.public = None
        self.module = forward.__module__

    def __repr__(self):
        kind = "differentiable" if self.differentiable else "non-differentiable"
        return f"<op {self.name} ({kind})>"


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
