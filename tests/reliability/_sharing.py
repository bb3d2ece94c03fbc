"""Random stateful programs over shared memory: the lock on memory saved for backward.

The functional fuzzer (``_programs.py``) checks values and gradients of pure
programs, which gradcheck may run many times. This one checks what the core
promises about memory that graphs saved ("mutation safety" in
``oxmera/_core/autograd.pyx``; docs/autograd_mechanics.rst, "saved arrays are
read-only"), which needs programs with side effects, run once, step by step:

- NumPy arrays the program makes (owned, over bytes, read-only, broadcast),
  NumPy views of them and of arrays oxmera hands out (``numpy()``,
  ``np.asarray``, DLPack), views of views;
- tensors sharing that memory: ``from_numpy``/``as_tensor``/``from_dlpack``
  twice over one array, ``detach()`` (then ``requires_grad_()``),
  ``copy.copy``, ``.data`` reads, ``.data = other`` swaps, tensor views of
  views (slicing, transpose, reshape/view, unsqueeze, diagonal, expand);
- graphs that save some of those tensors (or their own output), backward
  passes, and graph deaths (``del``, with or without ``gc.collect()``)
  interleaved with writes by NumPy and by oxmera's in-place ops through any
  sharer, and refusals (``.data =`` and ``__init__`` on saved tensors, in-place
  ops on leaves that require grad).

The reference is ``_sharing_model.Model``, NumPy without oxmera: it tracks
which block of memory each array and tensor is over and where in it, each
array's WRITEABLE state, each tensor's version counter, which live graphs
saved which memory, every block's values and the gradient each backward must
give. Each step here is three functions: ``prepare`` draws its parameters
from what the model holds, ``model`` applies it to the model and says what
oxmera must do (succeed, or raise what), ``run`` does it. The runner
(:func:`run_sharing_program`) does each step with oxmera and NumPy and
checks after every step: values, flags, versions, ``requires_grad``,
gradients, the number of locked blocks; at the end it drops every graph and
checks that ``_locked_memory()`` is back where it started and that every array
is writable again unless it was made read-only.

A :class:`SharingProgram` is plain data whose ``repr`` is Python, like
``Program``: a failure pastes back as a regression.
"""
import copy
import dataclasses
import gc
import re

import numpy as np
from hypothesis import strategies as st

import oxmera
from oxmera._core import autograd as core

from ._programs import BOUND, Gen, _basic_index, _factor, _np_basic, const_value
from ._sharing_model import (FIXED, FOREIGN_VIEWS, INHERITED, MEMBER, ROUTES, WRITABLE,
                             GraphModel, Model, TensorModel, _is_run, np_view, step_values)

# What the model promises and oxmera cannot do (documented limits): the
# drawing keeps away from each, while the model still expects the promise, so
# the strict xfails kept for them in test_fuzz_sharing.py pass only if it is
# ever done. Remove a name once its xfail passes.
KNOWN_BUGS = frozenset({
    # An array made by np.from_dlpack ends its chain at a DLPack capsule, which
    # says nothing of the memory's owner: to the core it is other memory, so
    # saving a tensor over it locks nothing of the owner, and in-place writes
    # through the other tensors give no version error (a wrong gradient).
    "foreign-memory",
})

VERSION_ERROR = (RuntimeError, "modified by an inplace operation")
READ_ONLY_NUMPY = (ValueError, "read-only")
READ_ONLY_OXMERA = (RuntimeError, "read-only")

MAX_BLOCKS = 3             # blocks made by memory and tensor steps (graphs make more)
MAX_OBJECTS = 14           # arrays, tensors, graphs: each list stays this short


@dataclasses.dataclass
class SharingProgram:
    """One random stateful program; ``repr`` gives the Python to rebuild it."""

    seed: int
    steps: tuple       # ((step name, params dict of literals), ...)


def numpy_view(a, spec):
    """What the program runs for the NumPy view step ``spec``."""
    if spec[0] == "frombuffer":
        return np.frombuffer(a, dtype=a.dtype)
    if spec[0] in FOREIGN_VIEWS:
        return FOREIGN_VIEWS[spec[0]](a)
    if spec[0] in ROUTES:
        return ROUTES[spec[0]](a)
    return np_view(a, spec)


def tensor_view(t, spec):
    """The oxmera view ``spec`` of tensor ``t``."""
    kind = spec[0]
    if kind == "index":
        return t[spec[1]]
    if kind == "transpose":
        return t.transpose(spec[1], spec[2])
    if kind == "unsqueeze":
        return t.unsqueeze(spec[1])
    if kind == "diagonal":
        return t.diagonal(spec[1])
    if kind == "reshape":
        return t.reshape(spec[1])
    if kind == "view":
        return t.view(spec[1])
    if kind == "expand":
        return t.expand(*spec[1])
    raise ValueError(kind)


def draw_view(g, where, for_tensor):
    """A view spec for an object over ``where`` (its index array)."""
    ndim = where.ndim
    kinds = ["index", "index", "unsqueeze"] + (["transpose"] if ndim else [])
    if ndim >= 2:
        kinds.append("diagonal")
    if _is_run(where):
        kinds += ["reshape", "view"] if for_tensor else ["reshape", "frombuffer"]
    if for_tensor:
        kinds.append("expand")
    else:
        kinds += sorted(FOREIGN_VIEWS) + sorted(ROUTES)
    kind = g.choice(kinds)
    if kind == "index":
        return ("index", _basic_index(g, where.shape))
    if kind == "transpose":
        return ("transpose", g.integer(-ndim, ndim - 1), g.integer(-ndim, ndim - 1))
    if kind == "unsqueeze":
        return ("unsqueeze", g.integer(-ndim - 1, ndim))
    if kind == "diagonal":
        return ("diagonal", g.choice([0, 1, -1]))
    if kind in ("reshape", "view"):
        shape = _factor(g, where.size, g.integer(0, 3))
        return None if shape is None else (kind, shape)
    if kind == "expand":
        return ("expand", broadcast_shape(g, where.shape))
    return (kind,)


def broadcast_shape(g, shape):
    """A shape ``shape`` broadcasts to, really broadcasting (a new dim or a size-1 dim grown)."""
    grown = tuple(2 if s == 1 and g.boolean() else s for s in shape)
    if grown == tuple(shape) or g.boolean():
        grown = (2,) + grown
    return grown


# -- steps ---------------------------------------------------------------------------------------

#: name -> SharingStep
STEPS = {}


@dataclasses.dataclass(frozen=True)
class SharingStep:
    name: str
    weight: int          # how many times it is listed in the drawing's choices
    prepare: object      # (g, model) -> params, or None when the step does not apply
    model: object        # (model, params, k) -> None (success) or (error type, message regex)
    run: object          # (world, params, k, expected) -> None; does it, checks the outcome


def sharing_step(name, weight, model, run):
    def register(prepare):
        if name in STEPS:
            raise ValueError(f"sharing step {name} defined twice")
        STEPS[name] = SharingStep(name, weight, prepare, model, run)
        return prepare
    return register


class World:
    """The objects a program made, parallel to the model's lists."""

    def __init__(self, seed):
        self.seed = seed
        self.arrays = []
        self.tensors = []
        self.graphs = []      # per graph: the objects keeping it alive, or None once dropped


def attempt(fn):
    """Run ``fn``; its result and the error it raised as ``(type, message)`` (or None).

    Only the message is kept: a traceback would keep the frames, and with them
    the graphs the program is about to drop.
    """
    try:
        return fn(), None
    except Exception as err:        # noqa: BLE001 - compared with the expected outcome
        return None, (type(err), str(err))


def check_outcome(where, got, expected):
    if expected is None:
        assert got is None, f"{where}: raised {got[0].__name__}: {got[1]}"
        return
    assert got is not None, f"{where}: expected {expected[0].__name__} ({expected[1]}), " \
                            f"got no error"
    assert issubclass(got[0], expected[0]) and re.search(expected[1], got[1]), \
        f"{where}: expected {expected[0].__name__} matching {expected[1]!r}, got " \
        f"{got[0].__name__}: {got[1]}"


def _pick(g, indices):
    """One of ``indices``, the latest first (a shrunk program reads its latest objects)."""
    indices = list(indices)
    return g.draw(st.sampled_from(indices[::-1])) if indices else None


def _pick_over_saved(g, m, indices, block_of):
    """Like :func:`_pick`, but mostly among objects over memory a graph saved (now or once):
    where sharing meets the lock."""
    indices = list(indices)
    saved = [i for i in indices if block_of(i) in m.ever_locked]
    if saved and g.integer(0, 2):
        indices = saved
    return _pick(g, indices)


def _mostly(g, indices, pred):
    """``indices``, three times in four only those satisfying ``pred`` (if any do)."""
    indices = list(indices)
    chosen = [i for i in indices if pred(i)]
    return chosen if chosen and g.integer(0, 3) else indices


def _pick_array(g, m, indices):
    return _pick_over_saved(g, m, indices, lambda i: m.arrays[i].block)


def _pick_tensor(g, m, indices):
    return _pick_over_saved(g, m, indices, lambda j: m.tensors[j].array.block)


def _full(model):
    return max(len(model.arrays), len(model.tensors), len(model.graphs)) >= MAX_OBJECTS


def _shape(g):
    return tuple(g.integer(1, 3) for _ in range(g.integer(0, 3)))


# memory ------------------------------------------------------------------------------------

def _memory_model(m, p, k):
    values = step_values(m.seed, k, p["shape"])
    m.made_blocks += 1
    if p["kind"] == "bytes":
        # np.frombuffer over bytes: the owner is the bytes, the program holds a view
        flat = m.new_block(values.ravel(), FIXED)
        m.arrays.append(m.new_view(flat, flat.where.reshape(values.shape), FIXED))
    else:
        m.arrays.append(m.new_block(values, WRITABLE if p["kind"] == "owned" else FIXED))
    return m.note("memory", None)


def _memory_run(w, p, k, expected):
    values = step_values(w.seed, k, p["shape"])
    if p["kind"] == "bytes":
        array = np.frombuffer(values.tobytes(), dtype=np.float64).reshape(values.shape)
    else:
        array = np.empty(values.shape)        # owns its memory: the end of every base chain
        array[...] = values
        if p["kind"] == "readonly":
            array.flags.writeable = False
    w.arrays.append(array)


@sharing_step("memory", 1, _memory_model, _memory_run)
def _memory(g, m):
    if m.made_blocks >= MAX_BLOCKS or _full(m):
        return None
    return {"shape": _shape(g), "kind": g.choice(["owned"] * 4 + ["bytes", "readonly"])}


def _tensor_model(m, p, k):
    m.made_blocks += 1
    owner = m.new_block(step_values(m.seed, k, p["shape"]), WRITABLE)
    m.new_tensor(TensorModel(owner, m.new_counter(), p["requires_grad"]))
    return m.note("tensor", None)


def _tensor_run(w, p, k, expected):
    w.tensors.append(oxmera.tensor(step_values(w.seed, k, p["shape"]), dtype=oxmera.float64,
                                   requires_grad=p["requires_grad"]))


@sharing_step("tensor", 1, _tensor_model, _tensor_run)
def _tensor(g, m):
    if m.made_blocks >= MAX_BLOCKS or _full(m):
        return None
    return {"shape": _shape(g), "requires_grad": g.boolean()}


# NumPy arrays over the memory ----------------------------------------------------------------

def _np_view_model(m, p, k):
    source = m.arrays[p["a"]]
    spec = p["view"]
    if spec[0] in ("diagonal", "broadcast"):
        state = FIXED                         # NumPy makes these read-only
    else:
        state = {WRITABLE: WRITABLE, MEMBER: INHERITED, INHERITED: INHERITED,
                 FIXED: FIXED}[source.state]
    m.arrays.append(m.new_view(source, np_view(source.where, spec), state,
                               foreign=spec[0] in FOREIGN_VIEWS, route=spec[0] in ROUTES))
    return m.note("np_view", None)


def _np_view_run(w, p, k, expected):
    w.arrays.append(numpy_view(w.arrays[p["a"]], p["view"]))


@sharing_step("np_view", 3, _np_view_model, _np_view_run)
def _np_view(g, m):
    """A NumPy view (of a view...) of an array the program holds, or a broadcast of it;
    often of an array a lock made read-only (the view is then read-only for good)."""
    i = _pick_array(g, m, _mostly(g, range(len(m.arrays)), lambda i: m.arrays[i].state == MEMBER))
    if i is None or _full(m):
        return None
    where = m.arrays[i].where
    if g.integer(0, 7) == 0:
        return {"a": i, "view": ("broadcast", broadcast_shape(g, where.shape))}
    spec = draw_view(g, where, for_tensor=False)
    return None if spec is None else {"a": i, "view": spec}


def _set_readonly_model(m, p, k):
    m.arrays[p["a"]].state = FIXED
    return m.note("set_readonly", None)


def _set_readonly_run(w, p, k, expected):
    w.arrays[p["a"]].flags.writeable = False


@sharing_step("set_readonly", 1, _set_readonly_model, _set_readonly_run)
def _set_readonly(g, m):
    # Not while its memory is locked: if the lock cleared the flag, clearing
    # it again changes nothing NumPy reports, and the unlock sets it back (a
    # documented limit, docs/autograd_mechanics.rst; test_readonly_while_locked).
    candidates = [i for i, a in enumerate(m.arrays)
                  if a.state == WRITABLE and not m.locked(a.block)]
    i = _pick(g, candidates)
    return None if i is None else {"a": i}


# tensors over the memory ----------------------------------------------------------------------

def _from_numpy_model(m, p, k):
    array = m.arrays[p["a"]]
    m.new_tensor(TensorModel(array, m.new_counter()))
    return m.note(p["form"], None)


_FROM_ARRAY = {"from_numpy": oxmera.from_numpy, "as_tensor": oxmera.as_tensor,
               "from_dlpack": oxmera.from_dlpack}


def _from_numpy_run(w, p, k, expected):
    w.tensors.append(_FROM_ARRAY[p["form"]](w.arrays[p["a"]]))


def _usable(m, array):
    """Whether a step may hand ``array`` to oxmera without meeting a known core bug."""
    return not (array.foreign and "foreign-memory" in m.avoid)


@sharing_step("from_numpy", 3, _from_numpy_model, _from_numpy_run)
def _from_numpy(g, m):
    """A tensor over an array the program holds (another one over the same memory)."""
    i = _pick_array(g, m, [i for i, a in enumerate(m.arrays) if _usable(m, a)])
    if i is None or _full(m):
        return None
    return {"a": i, "form": g.choice(sorted(_FROM_ARRAY))}


def _share_model(m, p, k):
    t = m.tensors[p["t"]]
    how = p["how"]
    if how == "dlpack" and t.requires_grad:
        return m.note(how, (BufferError, "require gradient"))
    if how in ("detach", "detach_grad"):
        m.new_tensor(TensorModel(t.array, t.counter, how == "detach_grad"))
    elif how == "data":
        m.new_tensor(TensorModel(t.array, m.new_counter()))
    elif how == "copy":
        m.new_tensor(TensorModel(t.array, t.counter, t.requires_grad))
    else:
        m.hand_out(t)
        m.new_tensor(TensorModel(t.array, m.new_counter()))
    return m.note(how, None)


def _share_run(w, p, k, expected):
    t = w.tensors[p["t"]]
    how = p["how"]
    if how == "detach":
        make = t.detach
    elif how == "detach_grad":
        make = lambda: t.detach().requires_grad_()          # noqa: E731
    elif how == "data":
        make = lambda: t.data                                # noqa: E731
    elif how == "copy":
        make = lambda: copy.copy(t)                          # noqa: E731
    else:
        make = lambda: oxmera.from_dlpack(t)                 # noqa: E731
    new, got = attempt(make)
    check_outcome(f"{how}", got, expected)
    if got is None:
        w.tensors.append(new)


@sharing_step("share", 4, _share_model, _share_run)
def _share(g, m):
    """Another tensor over a tensor's memory: detach, detach + requires_grad_, .data,
    copy.copy, oxmera.from_dlpack."""
    j = _pick_tensor(g, m, range(len(m.tensors)))
    if j is None or _full(m):
        return None
    how = g.choice(["detach", "detach_grad", "data", "copy", "dlpack"])
    if how in ("copy", "dlpack") and not _usable(m, m.tensors[j].array):
        return None
    return {"t": j, "how": how}


def _view_model(m, p, k):
    t = m.tensors[p["t"]]
    spec = p["view"]
    if spec[0] == "expand":
        # a broadcast: read-only by design; but an empty one shares no element,
        # and is a view like any other when made of an array the lock cleared
        empty = np.broadcast_to(t.array.where, spec[1]).size == 0
        state = INHERITED if empty and t.array.state == MEMBER else FIXED
    else:
        state = {WRITABLE: WRITABLE, MEMBER: INHERITED, INHERITED: INHERITED,
                 FIXED: FIXED}[t.array.state]
    array = m.new_view(t.array, np_view(t.array.where, spec), state)
    m.adopt(array, t.array)
    base = p["t"] if t.view_base is None else t.view_base
    view = TensorModel(array, t.counter, t.requires_grad, view_base=base, root=t.root,
                       root_pos=None if t.root is None else np_view(t.root_pos, spec))
    m.new_tensor(view)
    return m.note("view", None)


def _view_run(w, p, k, expected):
    w.tensors.append(tensor_view(w.tensors[p["t"]], p["view"]))


@sharing_step("view", 4, _view_model, _view_run)
def _view(g, m):
    """A tensor view (of a view...) of a tensor."""
    j = _pick_tensor(g, m, range(len(m.tensors)))
    if j is None or _full(m):
        return None
    t = m.tensors[j]
    spec = draw_view(g, t.array.where, for_tensor=True)
    if spec is None:
        return None
    return {"t": j, "view": spec}


def _requires_grad_model(m, p, k):
    t = m.tensors[p["t"]]
    t.requires_grad = True
    t.root = p["t"]
    t.root_pos = np.arange(t.array.where.size).reshape(t.array.where.shape)
    m.grads[p["t"]] = None
    return m.note("requires_grad_", None)


def _requires_grad_run(w, p, k, expected):
    t = w.tensors[p["t"]]
    assert t.requires_grad_() is t


def _has_views(m, j):
    return any(t.view_base == j for t in m.tensors)


@sharing_step("requires_grad_", 1, _requires_grad_model, _requires_grad_run)
def _requires_grad(g, m):
    # Leaves that are no view and have none (a view made before its base
    # requires grad is a corner PyTorch answers differently: left alone).
    j = _pick(g, [j for j, t in enumerate(m.tensors) if not t.requires_grad
                  and t.view_base is None and not _has_views(m, j)])
    return None if j is None else {"t": j}


def _swap_model(m, p, k):
    t = m.tensors[p["t"]]
    if p["t"] in m.saved_tensors():
        return m.note("swap_data", (RuntimeError, r"cannot assign \.data"))
    kind, i = p["src"]
    array = m.arrays[i] if kind == "array" else m.tensors[i].array
    t.array = array                          # keeps its version counter, as in PyTorch
    return m.note("swap_data", None)


def _swap_run(w, p, k, expected):
    t = w.tensors[p["t"]]
    kind, i = p["src"]
    src = w.arrays[i] if kind == "array" else w.tensors[i]
    before = np.array(t._data)

    def swap():
        t.data = src

    _, got = attempt(swap)
    check_outcome("t.data = other", got, expected)
    if got is not None:
        np.testing.assert_array_equal(np.array(t._data), before, err_msg="refused .data swap")


@sharing_step("swap_data", 2, _swap_model, _swap_run)
def _swap(g, m):
    """``t.data = other`` (an array or a tensor); refused on a tensor a live graph saved."""
    j = _pick_tensor(g, m, [j for j, t in enumerate(m.tensors) if t.view_base is None])
    if j is None:
        return None
    t = m.tensors[j]
    sources = [("array", i, a) for i, a in enumerate(m.arrays)] + \
              [("tensor", i, u.array) for i, u in enumerate(m.tensors) if i != j]
    # A tensor that requires grad keeps its shape (its gradient's); a saved one refuses anyway.
    sources = [(kind, i) for kind, i, a in sources if _usable(m, a)
               and (not t.requires_grad or a.where.shape == t.array.where.shape)]
    if not sources:
        return None
    kind, i = g.choice(sources)
    return {"t": j, "src": (kind, i)}


def _reinit_model(m, p, k):
    if p["t"] in m.saved_tensors():
        return m.note("reinit", (RuntimeError, "re-initialized"))
    owner = m.new_block(step_values(m.seed, k, p["shape"]), WRITABLE)
    m.tensors[p["t"]] = TensorModel(owner, m.new_counter())
    return m.note("reinit", None)


def _reinit_run(w, p, k, expected):
    t = w.tensors[p["t"]]
    before = np.array(t._data)
    _, got = attempt(lambda: t.__init__(step_values(w.seed, k, p["shape"]),
                                        dtype=oxmera.float64))
    check_outcome("Tensor.__init__", got, expected)
    if got is not None:
        np.testing.assert_array_equal(np.array(t._data), before, err_msg="refused __init__")


@sharing_step("reinit", 1, _reinit_model, _reinit_run)
def _reinit(g, m):
    """``t.__init__(values)`` again: a fresh leaf, or refused on a saved tensor."""
    saved = m.saved_tensors()
    j = _pick(g, [j for j, t in enumerate(m.tensors) if j in saved or (
        not t.requires_grad and not _has_views(m, j))])
    return None if j is None else {"t": j, "shape": _shape(g)}


# handing arrays out ---------------------------------------------------------------------------

def _hand_out_model(m, p, k):
    t = m.tensors[p["t"]]
    how = p["how"]
    if t.requires_grad and how != "numpy_force":
        return m.note(how, (BufferError, "require gradient") if how == "dlpack" else
                      (RuntimeError, r"Can't call numpy\(\) on Tensor that requires grad"))
    if how == "dlpack":
        if m.locked(t.array.block):
            # the consumer's array would be read-only for good, or writable over saved values
            return m.note(how, (BufferError, "saved for backward by a live graph"))
        # np.from_dlpack's array: a new object over the memory, its chain ends at a capsule
        state = WRITABLE if t.array.state == WRITABLE else FIXED
        m.arrays.append(m.new_view(t.array, t.array.where, state, foreign=True))
        return m.note(how, None)
    m.hand_out(t)
    m.arrays.append(t.array)
    return m.note(how, None)


_HAND_OUT = {
    "numpy": lambda t: t.numpy(),
    "numpy_force": lambda t: t.numpy(force=True),
    "asarray": np.asarray,
    "dlpack": np.from_dlpack,
}


def _hand_out_run(w, p, k, expected):
    array, got = attempt(lambda: _HAND_OUT[p["how"]](w.tensors[p["t"]]))
    check_outcome(p["how"], got, expected)
    if got is None:
        w.arrays.append(array)


@sharing_step("hand_out", 3, _hand_out_model, _hand_out_run)
def _hand_out(g, m):
    """``numpy()``, ``numpy(force=True)``, ``np.asarray``, ``np.from_dlpack`` of a tensor."""
    j = _pick_tensor(g, m, range(len(m.tensors)))
    if j is None or _full(m):
        return None
    return {"t": j, "how": g.choice(sorted(_HAND_OUT))}


# graphs -------------------------------------------------------------------------------------

def _graph_model(m, p, k):
    j = p["t"]
    t = m.tensors[j]
    values = m.values(t.array).copy()
    kind = p["kind"]
    g_index = len(m.graphs)
    if kind == "exp":
        # ExpBackward saves its output: new memory, locked; the input is not saved.
        out = m.new_block(np.exp(values), WRITABLE)
        counter = m.new_counter()
        graph = GraphModel(kind, [(("output", g_index), out.block, counter, 0)],
                           [(t.root, m.scatter(t, np.exp(values)))])
        m.graphs.append(graph)
        m.lock_chain(out)
        if p["share"]:
            m.new_tensor(TensorModel(out, counter))      # y.detach()
        return m.note("graph exp", None)
    saves = [(("tensor", j), t.array.block, t.counter, m.counters[t.counter])]
    if kind == "square":
        contributions = [(t.root, m.scatter(t, 2.0 * values))]
    else:
        # (t * w).sum(), w a new leaf: mul saves t for w's gradient, and w for t's
        weight = const_value(p["c"])
        w = m.new_tensor(TensorModel(m.new_block(weight, WRITABLE), m.new_counter(), True))
        w_index = len(m.tensors) - 1
        contributions = [(w_index, values)]
        if t.requires_grad:
            saves.append((("tensor", w_index), w.array.block, w.counter, 0))
            contributions.append((t.root, m.scatter(t, weight)))
    graph = GraphModel(kind, saves, contributions)
    m.graphs.append(graph)
    for holder, _, _, _ in saves:
        saved = m.tensors[holder[1]]
        m.lock_chain(saved.array)
        if saved.view_base is not None:
            # The core clears the chain of the view's base tensor too (its
            # array may be one NumPy's chain to the owner skips: _lock_tensor).
            base = m.tensors[saved.view_base].array
            if base.block == saved.array.block:
                m.lock_chain(base)
    return m.note(f"graph {kind}", None)


def _graph_run(w, p, k, expected):
    t = w.tensors[p["t"]]
    kind = p["kind"]
    if kind == "exp":
        y = t.exp()
        w.graphs.append({"loss": y.sum(), "y": y})
        if p["share"]:
            w.tensors.append(y.detach())
        return
    if kind == "square":
        w.graphs.append({"loss": (t * t).sum()})
        return
    weight = oxmera.tensor(const_value(p["c"]), dtype=oxmera.float64, requires_grad=True)
    w.tensors.append(weight)
    w.graphs.append({"loss": (t * weight).sum()})


@sharing_step("graph", 5, _graph_model, _graph_run)
def _graph(g, m):
    """A graph saving a tensor: ``(t * w).sum()``, ``(t * t).sum()`` or ``t.exp().sum()``."""
    if len(m.graphs) >= MAX_OBJECTS or len(m.tensors) >= MAX_OBJECTS:
        return None
    j = _pick_tensor(g, m, range(len(m.tensors)))
    if j is None:
        return None
    t = m.tensors[j]
    kinds = ["weight"] + (["square", "exp"] if t.requires_grad else [])
    kind = g.choice(kinds)
    if kind == "exp":
        if not np.all(m.values(t.array) < 3.0):
            return None
        return {"t": j, "kind": kind, "share": g.boolean()}
    if kind == "square":
        return {"t": j, "kind": kind}
    return {"t": j, "kind": kind, "c": g.const(t.array.where.shape)}


def _backward_model(m, p, k):
    graph = m.graphs[p["g"]]
    if graph.state == "spent":
        return m.note("backward", (RuntimeError, "backward through the graph a second time"))
    if m.dirty(graph):
        return m.note("backward", VERSION_ERROR)        # the graph stays as it was
    for root, grad in graph.contributions:
        m.grads[root] = grad.copy() if m.grads[root] is None else m.grads[root] + grad
    if not p["retain"]:
        graph.state = "spent"
        m.release()
    return m.note("backward", None)


def _backward_run(w, p, k, expected):
    _, got = attempt(lambda: w.graphs[p["g"]]["loss"].backward(retain_graph=p["retain"]))
    check_outcome("backward", got, expected)


@sharing_step("backward", 3, _backward_model, _backward_run)
def _backward(g, m):
    i = _pick(g, [i for i, graph in enumerate(m.graphs) if graph.state != "dead"])
    return None if i is None else {"g": i, "retain": g.boolean()}


def _drop_model(m, p, k):
    graph = m.graphs[p["g"]]
    locked, live = m.locked_blocks(), graph.state == "live"
    graph.state = "dead"
    m.release()
    if locked - m.locked_blocks():
        m.note("drop unlocked memory" + (" (gc)" if p["gc"] else " (reference counting)"))
    elif live:
        m.note("drop left the memory locked by another graph")
    return m.note("drop", None)


def _drop_run(w, p, k, expected):
    w.graphs[p["g"]] = None
    if p["gc"]:
        gc.collect()


@sharing_step("drop", 3, _drop_model, _drop_run)
def _drop(g, m):
    """The graph dies: ``del`` (reference counting alone frees it), or ``del`` + gc."""
    i = _pick(g, [i for i, graph in enumerate(m.graphs) if graph.state != "dead"])
    return None if i is None else {"g": i, "gc": g.integer(0, 5) == 0}


# writes --------------------------------------------------------------------------------------

def _operand(m, p):
    if "scalar" in p:
        return p["scalar"]
    if "c" in p:
        return const_value(p["c"])
    return m.values(m.tensors[p["src"]].array)


def _written(m, where, p):
    """(positions in the block, new values) of a write of ``p`` into the elements ``where``."""
    if "index" in p:
        where = _np_basic(where, p["index"])
    old = m.blocks[m.tensors[p["t"]].array.block][where] if "t" in p else \
        m.blocks[m.arrays[p["a"]].block][where]
    op = p.get("op", "setitem")
    operand = None if op == "zero_" else _operand(m, p)
    if op == "add_":
        new = old + p.get("alpha", 1) * operand
    elif op == "iadd":
        new = old + operand
    elif op in ("mul_", "imul"):
        new = old * operand
    elif op == "zero_":
        new = np.zeros_like(old)
    else:                                   # fill_, copy_, setitem
        new = np.broadcast_to(operand, old.shape)
    return where, np.broadcast_to(new, old.shape)


def _ox_write_model(m, p, k):
    t = m.tensors[p["t"]]
    if not p["no_grad"] and t.requires_grad:
        return m.note("ox_write", (RuntimeError, "leaf tensor that requires grad" if t.is_leaf
                                   else "view of a leaf tensor that requires grad"))
    if t.array.state in (INHERITED, FIXED):
        return m.note("ox_write", READ_ONLY_OXMERA)
    where, new = _written(m, t.array.where, p)
    m.blocks[t.array.block][where] = new
    m.bump(t)
    return m.note("ox_write", None)


def _ox_operand(w, p):
    if "scalar" in p:
        return p["scalar"]
    if "c" in p:
        return oxmera.tensor(const_value(p["c"]), dtype=oxmera.float64)
    return w.tensors[p["src"]]


def _ox_write_run(w, p, k, expected):
    t = w.tensors[p["t"]]
    op = p["op"]
    operand = None if op == "zero_" else _ox_operand(w, p)

    def write():
        target = t
        if op == "add_":
            assert t.add_(operand, **({"alpha": p["alpha"]} if "alpha" in p else {})) is t
        elif op == "iadd":
            target += operand
            assert target is t
        elif op == "imul":
            target *= operand
            assert target is t
        elif op == "setitem":
            t[p["index"]] = operand
        else:
            assert getattr(t, op)(*(() if operand is None else (operand,))) is t

    if p["no_grad"]:
        with oxmera.no_grad():
            _, got = attempt(write)
    else:
        _, got = attempt(write)
    check_outcome(op, got, expected)


_WRITE_OPS = ("add_", "iadd", "mul_", "imul", "zero_", "fill_", "copy_", "setitem")


@sharing_step("ox_write", 6, _ox_write_model, _ox_write_run)
def _ox_write(g, m):
    """An in-place op of oxmera through any tensor over the memory."""
    j = _pick_tensor(g, m, _mostly(g, range(len(m.tensors)),
                                   lambda j: m.tensors[j].array.state != FIXED))
    if j is None:
        return None
    t = m.tensors[j]
    op = g.choice(_WRITE_OPS)
    p = {"t": j, "op": op}
    target = t.array.where
    if op == "setitem":
        p["index"] = _basic_index(g, target.shape)
        target = _np_basic(target, p["index"])
    if op in ("mul_", "imul"):
        p["scalar"] = g.choice([2.0, -0.5, 1.5])
    elif op == "fill_":
        p["scalar"] = g.choice([0.25, -1.5])
    elif op != "zero_":
        kinds = ["const", "tensor"] + ([] if op == "copy_" else ["scalar"])
        kind = g.choice(kinds)
        if kind == "scalar":
            p["scalar"] = g.choice([0.5, -1.0])
        elif kind == "const":
            p["c"] = g.const(g.partner_shape(target.shape))
        else:
            src = _pick(g, [i for i, u in enumerate(m.tensors)
                            if _broadcasts_to(u.array.where.shape, target.shape)])
            if src is None:
                return None
            p["src"] = src
            if (op == "copy_" and t.array.state in (INHERITED, FIXED)
                    and m.tensors[src].array.block == t.array.block
                    and _same_elements(m.tensors[src].array.where, t.array.where)):
                return None     # NumPy's copyto skips a copy onto itself: no read-only error
        if op == "add_" and g.boolean():
            p["alpha"] = g.choice([2, -0.5])
    needs = t.requires_grad or ("src" in p and m.tensors[p["src"]].requires_grad)
    # Mostly under no_grad where a tensor requires grad; sometimes not, for the refusal.
    p["no_grad"] = needs and not (t.requires_grad and g.integer(0, 5) == 0)
    if t.array.state in (WRITABLE, MEMBER) and (p["no_grad"] or not t.requires_grad):
        _, new = _written(m, t.array.where, p)
        if not np.all(np.abs(new) <= BOUND):
            return None
    return p


def _same_elements(src, target):
    """Whether a copy from ``src`` (broadcast) onto ``target`` reads each element where it
    writes it (index arrays of one block)."""
    return np.array_equal(np.broadcast_to(src, target.shape), target)


def _broadcasts_to(shape, target):
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _np_write_model(m, p, k):
    a = m.arrays[p["a"]]
    if a.state != WRITABLE:
        m.note(f"np_write refused: {a.state}")
        return m.note("np_write", READ_ONLY_NUMPY)
    if a.was_member:
        m.note("np_write through an array a lock had made read-only")
    where, new = _written(m, a.where, p)
    m.blocks[a.block][where] = new
    return m.note("np_write", None)


def _np_write_run(w, p, k, expected):
    a = w.arrays[p["a"]]
    value = p["scalar"] if "scalar" in p else const_value(p["c"])

    def write():
        _np_basic(a, p["index"])[...] = value

    _, got = attempt(write)
    check_outcome("NumPy write", got, expected)


@sharing_step("np_write", 4, _np_write_model, _np_write_run)
def _np_write(g, m):
    """A NumPy write into an array the program holds.

    Not through an array that is writable while its memory is locked: a NumPy
    view made before the lock keeps its flag (the documented limit), and such
    a write would change saved values behind the graph's back.
    """
    candidates = [i for i, a in enumerate(m.arrays)
                  if not (a.state == WRITABLE and m.locked(a.block))]
    i = _pick_array(g, m, _mostly(g, candidates, lambda i: m.arrays[i].state != FIXED))
    if i is None:
        return None
    a = m.arrays[i]
    p = {"a": i, "index": _basic_index(g, a.where.shape)}
    target = _np_basic(a.where, p["index"])
    if g.boolean():
        p["scalar"] = g.choice([0.5, -2.0])
    else:
        p["c"] = g.const(g.partner_shape(target.shape))
    return p


# -- drawing and running ------------------------------------------------------------------------

@st.composite
def sharing_programs(draw, min_steps=6, max_steps=40, avoid=KNOWN_BUGS):
    """A random :class:`SharingProgram` of ``min_steps`` to ``max_steps`` steps."""
    seed = draw(st.integers(0, 2 ** 16))
    # Each program favours other steps (hypothesis favours the first of a list).
    names = [str(n) for n in np.random.default_rng(seed).permutation(
        [name for name, step in sorted(STEPS.items()) for _ in range(step.weight)])]
    g = Gen(draw, [])
    m = Model(seed, avoid)
    steps = []
    n_steps = draw(st.integers(min_steps, max_steps))
    failures = 0
    while len(steps) < n_steps and failures < 3 * n_steps:
        name = draw(st.sampled_from(names))
        params = STEPS[name].prepare(g, m)
        if params is None:
            failures += 1
            continue
        STEPS[name].model(m, params, len(steps))
        steps.append((name, params))
    return SharingProgram(seed, tuple(steps))


def _check_array(where, array, model_array, m):
    expected = m.values(model_array)
    if not np.array_equal(array, expected):       # (assert_array_equal is slow to pass)
        np.testing.assert_array_equal(array, expected, err_msg=f"{where}: values")
    state = model_array.state
    if state == WRITABLE and m.locked(model_array.block):
        return              # a view made before the lock: its flag is its own (the limit)
    assert array.flags.writeable == (state == WRITABLE), \
        f"{where}: WRITEABLE is {array.flags.writeable}, the array is {state}"


def check_world(where, w, m, start):
    """Everything the model knows, against the objects the program made."""
    for i, (array, model_array) in enumerate(zip(w.arrays, m.arrays)):
        _check_array(f"{where}: array {i}", array, model_array, m)
    for j, (t, model_t) in enumerate(zip(w.tensors, m.tensors)):
        name = f"{where}: tensor {j}"
        _check_array(name, t._data, model_t.array, m)      # _data: no hand-out
        assert t._version == m.counters[model_t.counter], \
            f"{name}: version {t._version}, expected {m.counters[model_t.counter]}"
        assert t.requires_grad == model_t.requires_grad, f"{name}: requires_grad"
        assert t.is_leaf == model_t.is_leaf, f"{name}: is_leaf"
    for j, expected in m.grads.items():
        grad = w.tensors[j].grad
        if expected is None:
            assert grad is None, f"{where}: tensor {j} has a grad before any backward reached it"
        else:
            assert grad is not None, f"{where}: tensor {j} has no grad"
            if not np.allclose(grad._data, expected, rtol=1e-13, atol=1e-13):
                np.testing.assert_allclose(grad._data, expected, rtol=1e-13, atol=1e-13,
                                           err_msg=f"{where}: grad of tensor {j}")
    blocks = core._locked_memory()[0] - start[0]
    assert blocks == len(m.locked_blocks()), \
        f"{where}: {blocks} blocks locked, expected {len(m.locked_blocks())}"


def run_sharing_program(program, model=Model):
    """Run ``program`` with oxmera, checking every step against ``model``.

    Call ``gc.collect()`` first once (programs themselves leave no garbage): a
    collection during the run must not free locks that earlier code left.
    """
    start = core._locked_memory()
    m = model(program.seed, avoid=())
    w = World(program.seed)
    for k, (name, params) in enumerate(program.steps):
        where = f"step {k} ({name} {params})"
        expected = STEPS[name].model(m, params, k)
        try:
            STEPS[name].run(w, params, k, expected)
        except AssertionError as err:
            raise AssertionError(f"{where}: {err}") from None
        check_world(where, w, m, start)
    # The end: every graph dropped, no lock left, every array writable again
    # unless it was made read-only, and NumPy writes go through. Without
    # gc.collect(): reference counting alone must free every graph.
    for graph in m.graphs:
        graph.state = "dead"
    m.release()
    w.graphs.clear()
    assert core._locked_memory() == start, \
        f"the end: {core._locked_memory()} locked once every graph was dropped (without " \
        f"gc.collect()), {start} at the start"
    check_world("the end", w, m, start)
    for i, (array, model_array) in enumerate(zip(w.arrays, m.arrays)):
        if model_array.state == WRITABLE:
            array[...] = m.values(model_array)
    return m
