"""Walk every type of the compiled core and poke every attribute of what Python can make.

Run as a script (``python _walk_core.py``) by ``test_core_objects.py``, in a
subprocess: a crash of the interpreter (a signal) is then a failed test, not a
lost test run. For each class defined in ``oxmera._core.autograd`` it builds
the instances that Python code can produce without the engine —
``cls.__new__(cls)``, ``cls(*args)`` for a few argument lists, and the
``copy.copy``/``copy.deepcopy``/pickle round trips of each (where they are
allowed) — plus the real objects the engine makes (a tensor in a graph, its
node, a registered op), and on each reads every attribute and calls every
callable one with a set of awkward argument lists. Exceptions are expected
and ignored; only a crash counts. Module functions of the core are called
with the same objects as arguments too.

It prints one line per class (``<name>: <n> instances, <m> calls``) and
``walked`` at the end, which the test requires.
"""
import copy
import faulthandler
import os
import pickle
import sys
import warnings

import numpy as np

import oxmera
from oxmera._core import autograd as core

faulthandler.enable()
warnings.simplefilter("ignore")

TRACE = bool(os.environ.get("OXMERA_WALK_TRACE"))    # each call to stderr, to find a crash

# Attributes that would make the walk itself loop or wait (not crash).
SKIP = {"__init_subclass__", "__subclasshook__", "__class_getitem__", "__iter__", "__next__"}


def engine_objects():
    """Real objects the engine made: a leaf, an output, its node, an op and its meta."""
    x = oxmera.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()
    objects = [x, y, y.grad_fn, y.grad_fn.next_functions[0][0],
               oxmera.ops._registry.REGISTRY["mul"]]
    return objects, (x, y)


def argument_lists(target):
    """Awkward argument lists: none, None, numbers out of every range, wrong types, the
    object itself."""
    array = np.ones(2)
    return [(), (None,), (0,), (1,), (-1,), (7,), (1000,), (2.5,), ("x",), ((),), ([1.0],),
            (array,), (target,), (target, target), (None, None), (0, None), (array, 0),
            ((target,), None), ((target,), (None,)), ((), {}), ({},)]


def python_made(cls):
    """The instances of ``cls`` that Python code can make, and their copies."""
    made = []
    try:
        made.append(cls.__new__(cls))
    except BaseException:
        pass
    for args in [(), (None,), (1,), ([1.0],), (np.ones(2),), ("x",)]:
        try:
            made.append(cls(*args))
        except BaseException:
            pass
    return made


def copies(obj):
    out = []
    for make in (copy.copy, copy.deepcopy, lambda o: pickle.loads(pickle.dumps(o)),
                 lambda o: pickle.loads(pickle.dumps(o, protocol=5))):
        try:
            out.append(make(obj))
        except BaseException:
            pass
    return out


def poke(obj):
    """Read every attribute of ``obj`` and call every callable one; return the call count."""
    calls = 0
    for name in dir(obj):
        if name in SKIP:
            continue
        try:
            attr = getattr(obj, name)
        except BaseException:
            continue
        try:
            repr(attr)
        except BaseException:
            pass
        if not callable(attr) or isinstance(attr, type):
            continue
        for args in argument_lists(obj):
            calls += 1
            if TRACE:
                print(f"  {type(obj).__name__}.{name}{tuple(type(a).__name__ for a in args)}",
                      file=sys.stderr, flush=True)
            try:
                result = attr(*args)
                if hasattr(result, "__next__"):       # a generator: take one step
                    next(result, None)
            except BaseException:
                pass
    return calls


def call_every_op():
    """Every registered op through the core's entry points, with awkward arguments:
    too few, too many, None, numbers, arrays, nested sequences; and recorded as a
    custom Function's node, which only a Function's op may be."""
    calls = 0
    t = oxmera.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    lists = [(), (t,), (t, t), (t, t, t), (t, None), (None, t), (None,), (t, 1000),
             (t, [1.0]), ([t, t],), ([t, None],), ([],), (t, t, t, t, t, t), (np.ones(2),)]
    for opdef in list(oxmera.ops._registry.REGISTRY.values()):
        for args in lists:
            for kwargs in (None, {"dim": 0}, {name: t for name in opdef.input_names}):
                calls += 1
                try:
                    core.apply_op(opdef, args, kwargs)
                except BaseException:
                    pass
        for inputs, outputs in (((t,), (oxmera.ones(1),)), ((), ()), ((t, t), (oxmera.ones(1),))):
            calls += 1
            try:
                core.record_function(opdef, inputs, outputs, ())
            except BaseException:
                pass
    return calls


def main():
    engine, keep = engine_objects()
    classes = [obj for obj in vars(core).values()
               if isinstance(obj, type) and obj.__module__ == core.__name__]
    pool = list(engine)
    for cls in sorted(classes, key=lambda c: c.__name__):
        instances = python_made(cls)
        instances += [c for i in list(instances) for c in copies(i)]
        instances += [c for e in engine if type(e) is cls for c in copies(e)]
        calls = sum(poke(i) for i in instances)
        pool += instances
        print(f"{cls.__name__}: {len(instances)} instances, {calls} calls", flush=True)
    for obj in engine:
        poke(obj)
    functions = [f for name, f in vars(core).items()
                 if callable(f) and not isinstance(f, type) and not name.startswith("__")]
    calls = 0
    for f in functions:
        for target in pool:
            for args in argument_lists(target):
                calls += 1
                try:
                    f(*args)
                except BaseException:
                    pass
    print(f"module functions: {len(functions)}, {calls} calls", flush=True)
    print(f"ops: {call_every_op()} calls", flush=True)
    del keep
    print("walked", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
