"""Core objects built, copied or called by hand, and op declarations that do not fit.

The compiled core reads its objects' fields in C without checks on the hot
path, so an object Python made without the engine (``GradFn.__new__``), a
copy of one (which would copy a node's lock state), or an op declaration that
does not match its forward must be refused or handled before C code reads
it. A crash here is a signal, so the walk of every core type runs in a
subprocess.
"""
import copy
import inspect
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import oxmera
from oxmera._core import autograd as core
from oxmera.extend import op
from oxmera.ops._registry import REGISTRY

HERE = Path(__file__).parent


def test_every_core_type_survives_a_walk_of_every_attribute():
    # _walk_core.py builds every class of oxmera._core.autograd as Python can
    # (__new__, __init__ with odd arguments, copy/deepcopy/pickle round
    # trips), reads every attribute and calls every method with awkward
    # arguments, and calls the module's functions with all of them.
    result = subprocess.run([sys.executable, str(HERE / "_walk_core.py")], capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, (f"the walk crashed (exit {result.returncode}):\n"
                                    f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    assert result.stdout.rstrip().endswith("walked")
    walked = {line.split(":")[0] for line in result.stdout.splitlines() if ":" in line}
    classes = {name for name, obj in vars(core).items()
               if isinstance(obj, type) and obj.__module__ == core.__name__}
    assert classes <= walked, f"not walked: {sorted(classes - walked)}"


def test_a_node_cannot_be_made_by_hand():
    with pytest.raises(TypeError, match="engine.*extend.op"):
        core.GradFn()
    empty = core.GradFn.__new__(core.GradFn)        # what __new__ alone gives is inert
    assert "GradFn" in repr(empty)
    assert empty.name == "GradFn" and empty.next_functions == () and empty.needs_input_grad == ()
    with pytest.raises(RuntimeError, match="not made by the engine"):
        empty._rebuild(np.ones(2), 0)
    with pytest.raises(IndexError, match="out of range"):
        empty.input_shape(0)


def _graph():
    x = oxmera.tensor([1.0, 2.0, 3.0], dtype=oxmera.float64, requires_grad=True)
    y = (x * x).sum()
    return x, y


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy, pickle.dumps,
                                    lambda o: pickle.dumps(o, protocol=5)],
                         ids=["copy", "deepcopy", "pickle", "pickle5"])
def test_graph_objects_refuse_to_be_copied(copier):
    x, y = _graph()
    node = y.grad_fn.next_functions[0][0]           # MulBackward: it saved x
    objects = [node, y.grad_fn, REGISTRY["mul"], core.AutogradMeta.__new__(core.AutogradMeta),
               core.VersionCounter.__new__(core.VersionCounter)]
    for obj in objects:
        with pytest.raises(TypeError, match="cannot be copied or pickled"):
            copier(obj)
    # Nothing was copied, so nothing unlocked the array the node saved:
    with pytest.raises(ValueError, match="read-only"):
        x.numpy(force=True)[0] = 100.0
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_a_built_op_cannot_be_redefined():
    mul = REGISTRY["mul"]
    with pytest.raises(TypeError, match="built already"):
        mul.__init__("mul", np.add, 2, ("input", "other"), True, None, False, None, False, None)
    assert mul.forward is not np.add
    with pytest.raises(TypeError, match="was not built"):
        core.apply_op(core.OpDef.__new__(core.OpDef), (oxmera.ones(2),), None)


# -- op declarations ---------------------------------------------------------------------------

def test_op_inputs_must_be_named_parameters_of_the_forward():
    # inputs=2 on forward(*arrays) crashed the interpreter at the first call
    # with one tensor (the core read a second name that was not there).
    with pytest.raises(TypeError, match=r"inputs=2 .*only 0 positional.*not \*args"):
        @op(name="bad_star_inputs", inputs=2)
        def bad(*arrays):
            return arrays[0]
    with pytest.raises(TypeError, match=r"inputs=2 .*only 1 positional"):
        @op(name="bad_too_few_inputs", inputs=2)
        def bad2(x):
            return x
    with pytest.raises(TypeError, match="non-negative int or 'sequence'"):
        @op(name="bad_count", inputs=-3)
        def bad3(x):
            return x
    assert not {"bad_star_inputs", "bad_too_few_inputs", "bad_count"} & set(REGISTRY)


def test_op_definition_records_requirements_and_defaults():
    @op(name="scaled_example_defaults", inputs=2)
    def scaled(x, y=2.0, *, scale=1.0):
        return x * y * scale
    opdef = REGISTRY.pop("scaled_example_defaults")
    assert (opdef.n_required, opdef.input_defaults) == (1, (2.0,))
    out = scaled(oxmera.tensor([1.0, 3.0]))           # y takes its default, not None
    np.testing.assert_array_equal(out.numpy(), [2.0, 6.0])


@pytest.mark.parametrize("mask, match", [
    ((True,), r"save mask has 1 entries for 2 tensor input"),
    ((True, True, True), r"save mask has 3 entries for 2"),
    ((True, (5,)), r"input indices in range\(2\)"),
    ((True, "x"), r"True, False or a tuple"),
])
def test_opdef_checks_its_save_mask(mask, match):
    # A short mask was read past its end in C at the first recorded call.
    with pytest.raises(ValueError, match=match):
        core.OpDef("bad_mask", np.add, 2, ("x", "y"), True, mask, False, None, False, None)


@pytest.mark.parametrize("args, error, match", [
    (("n", np.add, 2, ("x",), True, None, False, None, False, None), ValueError,
     r"2 tensor input\(s\) need 2 parameter name"),
    (("n", np.add, -2, ("x",), True, None, False, None, False, None), ValueError, "n_inputs"),
    (("n", 5, 1, ("x",), True, None, False, None, False, None), TypeError, "forward must be"),
    (("n", np.add, 1, ("x",), True, None, False, 5, False, None), TypeError, "prepare"),
    (("", np.add, 1, ("x",), True, None, False, None, False, None), TypeError, "name"),
])
def test_opdef_checks_its_declaration(args, error, match):
    with pytest.raises(error, match=match):
        core.OpDef(*args)


def test_a_sequence_op_needs_its_sequence():
    with pytest.raises(TypeError, match=r"cat\(\) missing 1 required positional argument"):
        oxmera.cat()
    np.testing.assert_array_equal(oxmera.cat(tensors=[oxmera.ones(1), oxmera.zeros(1)]).numpy(),
                                  [1.0, 0.0])


# -- missing arguments, over the registry -------------------------------------------------------

def _ops_with_required_inputs(minimum):
    return [o for o in REGISTRY.values() if o.n_inputs >= minimum and o.n_required >= minimum]


@pytest.mark.parametrize("opdef", _ops_with_required_inputs(2), ids=lambda o: o.name)
def test_a_missing_tensor_input_is_a_type_error_naming_it(opdef):
    # It was taken as None: where(x > 0) gave NaN, add(x) an unrelated error.
    x = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    missing = opdef.input_names[1:opdef.n_required]
    with pytest.raises(TypeError, match=rf"{opdef.name}\(\) missing {len(missing)} required "
                                        rf"positional argument.*'{missing[0]}'"):
        core.apply_op(opdef, (x,), None)
    assert x.grad is None and x._version == 0


def test_registry_has_ops_with_optional_tensor_inputs():
    # clamp(x, min=None, max=None): optional tensor inputs keep their defaults.
    clamp = REGISTRY["clamp"]
    assert clamp.n_required == 1 and clamp.input_defaults == (None, None)
    out = oxmera.clamp(oxmera.tensor([-2.0, 2.0]), max=1.0)
    np.testing.assert_array_equal(out.numpy(), [-2.0, 1.0])


@pytest.mark.parametrize("name", ["add", "mul", "matmul", "atan2", "maximum", "pow"])
def test_public_functions_say_which_argument_is_missing(name):
    function = getattr(oxmera, name)
    second = list(inspect.signature(function).parameters)[1]
    with pytest.raises(TypeError, match=rf"{name}\(\) missing 1 required positional argument: "
                                        rf"'{second}'"):
        function(oxmera.ones(2))
