# The contract of the compiled core: every field and every cdef routine of
# oxmera._core.autograd, so other Cython modules can cimport them.
from cpython.object cimport PyObject

cdef class VersionCounter:
    # Shared by a tensor, its views and its detached aliases: one counter per
    # block of memory, bumped by every in-place write to it.
    cdef Py_ssize_t value          # number of in-place writes so far


cdef class AutogradMeta:
    # Present only on tensors that take part in autograd; a tensor that needs
    # no gradient carries None instead, so the no-grad path is one pointer test.
    # One on every non-leaf tensor: the three numbers share 8 bytes, so it
    # fits in 64 (read the flags as truth values, not Python bools).
    cdef object grad               # accumulated gradient (a Tensor) or None
    cdef GradFn grad_fn            # the node that produced this tensor; None on leaves
    cdef list hooks                # leaf gradient hooks as [key, fn] pairs, or None
    cdef int output_nr             # which output of grad_fn this tensor is
    cdef unsigned char requires_grad    # 1 for every non-leaf; settable on leaves
    cdef unsigned char retains_grad     # non-leaf asked for .grad with retain_grad()


cdef class Tensor:
    cdef readonly object _data     # the numpy.ndarray holding the values
    cdef AutogradMeta _meta        # None unless the tensor requires grad
    cdef VersionCounter _version_counter  # None until first needed (0 writes)
    cdef object _links             # None, or (view, origin): rare, so one slot (_view_of, _origin)
    # Live nodes that saved this tensor for backward; while > 0, the registry
    # holds the _MemoryLock of _data's memory (found from _data, which cannot
    # change meanwhile: __init__ and the .data setter refuse).
    cdef int _locks
    # 1 + its index among the sealed objects (untracked), or 0: an int, beside
    # _locks in one word, so a Tensor is 80 bytes (_seal stops below 2**31).
    cdef int _sealed
    cdef object __weakref__        # weakref support (retain_grad, tests, caches)


cdef class OpDef:
    # What the core needs to run an op and record its node; built by
    # oxmera.extend.op, listed by oxmera.ops._registry. Read at C level on
    # every call, hence a cdef class.
    cdef readonly str name         # the op's name, e.g. "mul"
    cdef readonly object backward_name  # its node's name, e.g. "MulBackward" (a callable str)
    cdef readonly object forward   # forward(*arrays, *args, **kwargs) -> ndarray or tuple
    cdef public object vjp         # vjp(ctx, grad, *args, **kwargs) -> gradient(s), set later
    cdef readonly Py_ssize_t n_inputs   # leading tensor arguments; -1: a sequence of them
    cdef readonly tuple input_names     # names of the tensor parameters
    cdef readonly bint differentiable   # False: outputs never require grad
    cdef readonly tuple save_mask  # per input: does the VJP read it; None = all
    cdef readonly bint save_output  # the VJP reads the output (ctx.output)
    cdef readonly object prepare   # dtype promotion of the inputs, or None
    cdef readonly bint promotes    # prepare is PyTorch's promotion of the inputs' dtypes
    cdef readonly bint float_only  # prepare turns integer and bool results into the default float
    cdef readonly bint view        # the output may be a view of input 0
    cdef readonly object output_type    # namedtuple class for several outputs, or None
    cdef readonly object numpy_forward  # NumPy callable equal to forward on the inputs alone
    cdef readonly Py_ssize_t n_required  # leading tensor inputs without a default
    cdef readonly tuple input_defaults  # defaults of the tensor inputs after those
    cdef int loop64, loop32        # 1 + the index of numpy_forward's float64/float32 loop; 0: none
    cdef readonly bint quiet       # silence NumPy floating-point warnings in the forward
    cdef readonly tuple hidden     # indices of outputs kept only for the VJP, or None
    cdef readonly object unit      # a value that leaves the other operand as is (mul: 1), or None
    cdef readonly bint internal    # defined in oxmera: its VJP never writes into what it computes
    cdef public object public      # the public function calling the op
    cdef readonly bint replay      # its VJP may be replayed from a trace (see _Replay)
    cdef list replays              # those traces, one per signature seen (_MAX_REPLAYS)
    cdef readonly str module       # module that defined the forward


cdef class NodeExtras:
    # What few nodes have, kept out of GradFn so every node is smaller.
    cdef list pre_hooks            # [key, output_nr, fn] run on output gradients, or None
    cdef list retained             # [output_nr, weakref to Tensor] for retain_grad(), or None
    cdef object creation_trace     # forward traceback kept in anomaly mode, or None
    cdef list fn_hooks             # [pre-hooks, post-hooks] of the node itself, or None
    cdef tuple next_nrs            # per input: output index in next_fns[i], when not all 0
    # What a custom Function saved, locked with the node: Tensors and
    # (array, VersionCounter) pairs, or None.
    cdef tuple locked
    # Saved values handed to saved-tensor pack hooks: [slot, packed, unpack] per value
    # (slot i >= 0: input i; -1 - k: output k), or None. Their args/output slots read None.
    cdef list packed
    cdef dict metadata             # Node.metadata, made on first use, or None
    # The call's keyword arguments (few ops take any: split, softmax), or None.
    cdef dict kwargs


cdef class GradFn:
    # One node of the tape: how to send the gradient of an op's outputs back to
    # its inputs. It references its inputs (never its outputs), so the tape is
    # acyclic and dropping the output frees it by reference counting alone.
    cdef readonly OpDef op         # the op definition: name, vjp, flags
    # Per input: None, a leaf Tensor (sink) or a GradFn. A tuple of them, except
    # for one input: the edge itself (no tuple per node), or the shared (None,)
    # when it is None; and for two inputs of which one has no edge (x * 0.5):
    # the other edge itself, its index in ``layout``. Read it with
    # _n_edges/_edge. None until built.
    cdef object next_fns
    # The call's positional args, unsaved tensors replaced by None: a tuple
    # (one shared tuple when all are None), or the one argument itself when
    # there is one and it is neither None nor a tuple (no 1-tuple per unary
    # node), or when there are two and the other is None (``layout`` says
    # which). Read it with _args_of/_arg_at. None once released.
    cdef object args
    # Two things a node rarely has, never both at once: the versions its
    # saved inputs had when recorded, with its saved output's last (a tuple,
    # None when all are 0; read with _saved_version/_output_version), and
    # this node's task while a backward runs through it (a node holding
    # versions has its task kept by the backward instead).
    cdef object aux
    cdef object saved_output       # output ndarray (tuple for several) the VJP reuses, or None
    cdef object output_counter     # VersionCounter of the saved output (a tuple for several)
    # The output's (shape, dtype), one pair interned and shared by the nodes
    # alike (a tuple of pairs when there are several outputs): one field, not two.
    cdef object out_info
    # The number of outputs, 0xFFFF for that many or more (then it is
    # len(out_info)): read it with _num_outputs.
    cdef unsigned short n_outputs
    # Bits: _SCALAR_INPUTS (a saved input is a number or packed: args via
    # _vjp_args); _PAIR_* (next_fns or args hold the one item of a pair bare,
    # and which); _RELEASED (saved values freed by a backward without
    # retain_graph); _LOCKED (it locked saved memory read-only, released with
    # the values); _FREES_SAVED (set before each VJP: the backward frees the
    # saved values after it).
    cdef unsigned char layout
    # 1 + its index among the sealed objects (untracked), or 0: an int, in the
    # word the count and the bits leave (a node is 112 bytes with the
    # collector's header, the size pymalloc gives it: 8 bytes more would make
    # it 128).
    cdef int _sealed
    cdef NodeExtras extras         # hooks, retain_grad, anomaly trace: rare, so one slot
    cdef object __weakref__        # weakref support


cdef class _MemoryLock:
    # One block of memory that live graphs saved for backward (internal), in the
    # registry under the address of the object owning the memory, while count > 0.
    cdef size_t key                # the registry key: the address of owner
    # The end of the arrays' base chain (an ndarray or a buffer exporter), kept
    # alive so the address stays unique.
    cdef object owner
    # Per saving tensor or saved output: the Tensor or VersionCounter whose version
    # a write bumps. Borrowed: each stays alive, held by its node, while listed.
    # While there is room for one (cap_lockers <= 1) the field holds that
    # locker itself, not an array: read it with _locker_slots. (64 bytes in
    # all: a deep graph holds one a node.)
    cdef void* lockers
    cdef int count                 # locks held: saving tensors, saved outputs, write brackets
    cdef int n_lockers             # entries used in lockers
    cdef int cap_lockers           # entries allocated
    # The arrays whose WRITEABLE flag oxmera cleared, set again when count falls
    # to 0: None, the one array (the common case), or a list of them.
    cdef object cleared


cdef bint grad_enabled() except -1
cdef Tensor wrap_array(object array)
