"""The reference model of the shared-memory fuzzer (``_sharing.py``): NumPy, no oxmera.

It knows the rules the core states ("mutation safety" in
``oxmera/_core/autograd.pyx``) and PyTorch's, and nothing of how oxmera
implements them: which block of memory each array and tensor is over and
where in it (an index array, moved by the same view ops as the objects),
the state of each array's WRITEABLE flag, each tensor's version counter
(shared by views, ``detach()`` and ``copy.copy``; not by ``.data``,
``from_numpy`` or ``as_tensor``), which live graphs saved which memory, the
values of every block and the gradient each backward must give.

The rules it models, from the core's documentation:

- a graph that saves a tensor locks its memory: the tensor's array and the
  memory's owner (the end of NumPy's base chain) are made read-only, if they
  were writable, until no live graph saved any tensor over that memory (a
  backward without ``retain_graph`` frees the graph's saves);
- arrays oxmera hands out while the memory is locked (``numpy()``,
  ``__array__``) join the lock, and so do the views oxmera makes of an array
  the lock made read-only; DLPack refuses to export locked memory;
- a NumPy view made of a read-only array is read-only for good (NumPy's
  rule: oxmera does not know it), also when it is given to oxmera;
- at the unlock, exactly the arrays the lock made read-only are writable again;
- an in-place write by oxmera bumps the writer's version counter and, once
  each, the counter of every tensor a live graph saved over that memory; a
  backward then raises if any tensor it saved changed version;
- a NumPy view made before the lock keeps its own flag (the documented limit):
  its state says "writable", and the fuzzer does not write through it while
  the memory is locked.
"""
import numpy as np

from ._programs import _np_basic, sample_real

WRITABLE = "writable"      # its own WRITEABLE flag is set
MEMBER = "member"          # read-only because oxmera's lock cleared it; set again at the unlock
INHERITED = "inherited"    # a view made of a read-only array: read-only (oxmera's views of
                           # a locked array are adopted by the lock)
FIXED = "fixed"            # read-only by design (bytes, broadcast, np.diagonal, set by the program)


def step_values(seed, k, shape):
    """The values step ``k`` makes (new memory, ``__init__``)."""
    return sample_real(tuple(shape), np.random.default_rng([seed, 100 + k]))


# -- views, the same on arrays, tensors and the model's index arrays ----------------------

def np_view(a, spec):
    """The NumPy view ``spec`` of ``a`` (also moves an index array of the model)."""
    kind = spec[0]
    if kind == "index":
        return _np_basic(a, spec[1])
    if kind == "transpose":
        return np.swapaxes(a, spec[1], spec[2])
    if kind == "unsqueeze":
        return np.expand_dims(a, spec[1])
    if kind == "diagonal":
        return np.diagonal(a, spec[1])
    if kind in ("reshape", "view"):
        return a.reshape(spec[1])
    if kind in ("expand", "broadcast"):
        return np.broadcast_to(a, spec[1])
    if kind == "frombuffer":
        return a.reshape(-1)          # the model's twin of np.frombuffer (contiguous only)
    if kind in FOREIGN_VIEWS or kind in ROUTES:
        return a                      # same elements, another route to them
    raise ValueError(kind)


def _as_strided(a):
    return np.lib.stride_tricks.as_strided(a, shape=a.shape, strides=a.strides)


#: NumPy arrays over an array's memory whose chain leads to it through something
#: else than an ndarray's base (the core follows these to the owner).
ROUTES = {
    "as_strided": _as_strided,                        # a DummyArray
    "memoryview": lambda a: np.asarray(memoryview(a)),
}

#: NumPy arrays over an array's memory whose chain does not lead to its owner.
FOREIGN_VIEWS = {
    "dlpack": np.from_dlpack,                         # a capsule
}


def _is_run(where):
    """Whether an index array is contiguous memory in C order (reshape is then a view)."""
    return where.size > 0 and np.array_equal(
        where.ravel(), np.arange(where.flat[0], where.flat[0] + where.size))


# -- the model ------------------------------------------------------------------------------

class ArrayModel:
    """One NumPy array object: held by the program, or the array inside a tensor."""

    def __init__(self, block, where, state, parent=None, foreign=False, route=False):
        self.block = block          # the block of memory it is over
        self.where = where          # int array of its shape: each element's offset in the block
        self.state = state          # WRITABLE, MEMBER, INHERITED or FIXED
        self.parent = parent        # the next array of its chain to the owner; None: the owner
        self.foreign = foreign      # its base chain does not lead to the owner
        self.route = route          # its NumPy base is a wrapper of its parent (ROUTES)
        self.was_member = False     # a lock made it read-only once (for the statistics)

    def chain(self):
        """The arrays the core walks from this one to the memory's owner."""
        return [self] + ([] if self.parent is None else self.parent.chain())

    def overlaps(self):
        return np.unique(self.where).size < self.where.size


class TensorModel:
    def __init__(self, array, counter, requires_grad=False, view_base=None, root=None,
                 root_pos=None):
        self.array = array                  # the ArrayModel of its data
        self.counter = counter              # index of its version counter
        self.requires_grad = requires_grad
        self.view_base = view_base          # for a view: the tensor it is a view of
        self.root = root                    # the leaf its gradient goes to (None: no gradient)
        self.root_pos = root_pos            # int array of its shape: positions in the root

    @property
    def is_leaf(self):
        return not (self.requires_grad and self.view_base is not None)


class GraphModel:
    def __init__(self, kind, saves, contributions):
        self.kind = kind
        self.saves = saves                  # [(holder, block, counter, version when saved)]
        self.contributions = contributions  # [(root tensor, its gradient from this graph)]
        self.state = "live"                 # "spent" once a backward freed it, then "dead"


class Model:
    """What a program must do, computed with NumPy alone."""

    def __init__(self, seed, avoid=frozenset()):
        self.seed = seed
        self.avoid = avoid          # bugs the drawing keeps away from
        self.blocks = []            # the values of each block of memory (flat float64)
        self.block_arrays = []      # every ArrayModel over each block
        self.arrays = []            # the arrays the program holds, by program index
        self.tensors = []
        self.graphs = []
        self.counters = []
        self.grads = {}             # root tensor -> the .grad it must have (None: no grad yet)
        self.ever_locked = set()    # blocks a graph saved once (the drawing favours them)
        self.made_blocks = 0
        self.outcomes = {}          # what the steps expected, for the run's statistics

    # -- memory and arrays

    def new_block(self, values, state):
        """A new block holding ``values``; returns its owner's ArrayModel."""
        values = np.asarray(values, dtype=np.float64)
        self.blocks.append(values.ravel().copy())
        owner = ArrayModel(len(self.blocks) - 1, np.arange(values.size).reshape(values.shape),
                           state)
        self.block_arrays.append([owner])
        return owner

    def new_view(self, source, where, state, foreign=False, route=False):
        """A view of ``source``. NumPy makes a view's base the first array up the chain
        that owns its memory or whose base is no array (a route's wrapper): the core
        walks from the view to that array, then on."""
        if route or source.parent is None or source.route:
            parent = source
        else:
            parent = source.parent
        view = ArrayModel(source.block, where, state, parent, foreign or source.foreign, route)
        self.block_arrays[source.block].append(view)
        return view

    def values(self, array):
        return self.blocks[array.block][array.where]

    def new_counter(self):
        self.counters.append(0)
        return len(self.counters) - 1

    def new_tensor(self, tensor):
        self.tensors.append(tensor)
        if tensor.requires_grad and tensor.is_leaf:
            k = len(self.tensors) - 1
            tensor.root = k
            tensor.root_pos = np.arange(tensor.array.where.size).reshape(tensor.array.where.shape)
            self.grads[k] = None
        return tensor

    # -- locks

    def live(self):
        return [g for g in self.graphs if g.state == "live"]

    def locked(self, block):
        return any(b == block for g in self.live() for _, b, _, _ in g.saves)

    def locked_blocks(self):
        return {b for g in self.live() for _, b, _, _ in g.saves}

    def lock_holders(self):
        return {holder for g in self.live() for holder, _, _, _ in g.saves}

    def saved_tensors(self):
        return {holder[1] for holder in self.lock_holders() if holder[0] == "tensor"}

    def lock_chain(self, array):
        """The array and its owner are made read-only (those that were writable)."""
        self.ever_locked.add(array.block)
        for a in array.chain():
            if a.state == WRITABLE:
                a.state = MEMBER
                a.was_member = True

    def hand_out(self, tensor):
        """``numpy()`` & co.: the tensor's array joins the lock of its memory, if any."""
        if self.locked(tensor.array.block) and tensor.array.state == WRITABLE:
            self.lock_chain(tensor.array)

    def adopt(self, view, source):
        """A view oxmera made of an array the lock made read-only joins the lock."""
        if view.state == INHERITED and source.state == MEMBER and self.locked(view.block):
            view.state = MEMBER
            view.was_member = True
            self.note("adopted into a lock")

    def release(self):
        """Blocks no live graph saved any more: every flag the lock cleared is set again."""
        locked = self.locked_blocks()
        for b, arrays in enumerate(self.block_arrays):
            if b not in locked:
                for a in arrays:
                    if a.state == MEMBER:
                        a.state = WRITABLE

    # -- writes and versions

    def bump(self, tensor):
        """An in-place write by oxmera through ``tensor``: its counter, and once each, the
        counters of every tensor a live graph saved over the memory."""
        bumped = {tensor.counter}
        self.counters[tensor.counter] += 1
        for g in self.live():
            for _, block, counter, _ in g.saves:
                if block == tensor.array.block and counter not in bumped:
                    bumped.add(counter)
                    self.counters[counter] += 1
                    self.note("write bumped the version of a saver with its own counter")

    def dirty(self, graph):
        return any(self.counters[c] != v for _, _, c, v in graph.saves)

    def scatter(self, tensor, grad):
        """``grad`` (of ``tensor``'s shape) sent back to the elements of its root."""
        root = self.tensors[tensor.root]
        out = np.zeros(root.root_pos.size)
        np.add.at(out, tensor.root_pos.ravel(), np.broadcast_to(grad, tensor.root_pos.shape)
                  .ravel())
        return out.reshape(root.root_pos.shape)

    def note(self, name, outcome=None):
        key = name if outcome is None else f"{name}: {outcome[0].__name__} {outcome[1]}"
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        return outcome
