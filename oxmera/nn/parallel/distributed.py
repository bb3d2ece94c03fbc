"""``DistributedDataParallel``: one model per process, gradients averaged over the process group.

What this module owns: the wrapper module (parameters and buffers from rank
0 at construction, after checking every rank has the same parameters;
buffers from rank 0 before each forward) and the reducer, which averages the
gradients while backward still runs. The parameters are packed, in reverse
order of ``parameters()`` (roughly the order backward reaches them), into
buckets of one dtype (by default the first of 1 MiB, then 25 MiB: ``bucket_cap_mb``). A
gradient hook on each parameter copies its gradient, plus any ``.grad``
kept from steps under ``no_sync()``, into its
bucket and returns that bucket slot as the gradient; once a bucket is
full its all-reduce starts (``MPI_Iallreduce``), buckets in index order so
every rank starts the same collectives in the same order. The hook of the
last parameter waits for them all: the engine commits the returned slots
into ``.grad`` only after every hook has run, so ``.grad`` receives the
averaged values with no callback after the engine.

What it leaves to others: the communication itself (``oxmera.distributed``).
"""
import contextlib
import time

import numpy as np

from oxmera._core import autograd as _core
from oxmera.distributed import distributed_c10d as c10d
from oxmera.nn.modules.module import Module

__all__ = ["DistributedDataParallel"]

#: PyTorch's sizes: a small first bucket, so communication starts early.
_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


class _Bucket:
    def __init__(self, indices, offsets, size, dtype):
        self.indices = indices          # positions in the reducer's parameter list
        self.offsets = offsets          # where each starts in ``buffer``
        self.buffer = np.zeros(size, dtype)
        self.pending = len(indices)     # gradients still to arrive this step
        self.request = None             # the MPI request of its all-reduce, once started


class _Reducer:
    """The per-step state of the gradient averaging (see the module docstring)."""

    def __init__(self, names, params, pg, bucket_bytes, first_bucket_bytes):
        self.names = names
        self.params = params
        self.pg = pg
        self.buckets = []
        self.where = {}                 # parameter index -> (bucket, offset)
        self._make_buckets(bucket_bytes, first_bucket_bytes)
        self.armed = False              # a forward asked for synchronized gradients
        self.expected = set()           # indices whose hooks this step waits for
        self.ready = set()
        self.kept = set()               # indices whose .grad went into their slot
        self.locally_used = None        # with find_unused_parameters: a 0/1 array
        self.next_bucket = 0            # the next bucket whose all-reduce to start
        self.handles = []
        # Seconds the last synchronized backward spent waiting for its all-reduces
        # after its last gradient (the communication backward did not hide);
        # bench/ddp.py reads it.
        self.last_wait_seconds = 0.0

    def _make_buckets(self, bucket_bytes, first_bucket_bytes):
        order = list(range(len(self.params)))[::-1]
        open_buckets = {}               # dtype -> (indices, offsets, size, limit)
        done = []
        for index in order:
            p = self.params[index]
            dtype = p._data.dtype
            indices, offsets, size, limit = open_buckets.get(
                dtype, ([], [], 0, first_bucket_bytes))
            indices.append(index)
            offsets.append(size)
            size += p._data.size
            if size * dtype.itemsize >= limit:
                done.append((indices, offsets, size, dtype))
                open_buckets.pop(dtype, None)
                open_buckets[dtype] = ([], [], 0, bucket_bytes)
            else:
                open_buckets[dtype] = (indices, offsets, size, limit)
        for dtype, (indices, offsets, size, _) in open_buckets.items():
            if indices:
                done.append((indices, offsets, size, dtype))
        for indices, offsets, size, dtype in done:
            bucket = _Bucket(indices, offsets, size, dtype)
            for index, offset in zip(indices, offsets):
                self.where[index] = (bucket, offset)
            self.buckets.append(bucket)

    def _slot(self, index):
        bucket, offset = self.where[index]
        p = self.params[index]
        return bucket, bucket.buffer[offset:offset + p._data.size]

    def prepare(self, expected, find_unused):
        """Called by each forward that will be followed by a synchronized backward."""
        if self.ready:
            missing = [self.names[i] for i in sorted(self.expected - self.ready)]
            self.armed = False
            self.ready.clear()
            raise RuntimeError(
                "DistributedDataParallel: Expected to have finished reduction in the prior "
                "iteration before starting a new one: these parameters received no gradient "
                f"in the last backward: {missing}. If the forward does not use every "
                "parameter, pass find_unused_parameters=True (and make sure the loss "
                "depends on every output of the forward).")
        self.armed = True
        self.expected = set(expected)
        self.ready = set()
        self.kept = set()
        self.next_bucket = 0
        for bucket in self.buckets:
            bucket.pending = len(bucket.indices)
            bucket.request = None
        self.locally_used = None
        if find_unused:
            self.locally_used = np.zeros(len(self.params), np.int32)
            self.locally_used[list(self.expected)] = 1
            # A parameter this forward did not use is ready at once: its slot holds
            # what no_sync kept in its .grad (or zero), as PyTorch's reducer does.
            for index in range(len(self.params)):
                if index not in self.expected:
                    self._fill(index, None)
        if not self.expected:
            # No gradient will reach this rank's parameters, so no hook will run:
            # take part in the step's all-reduces now, as the other ranks expect.
            self._start_ready_buckets()
            self._finish()

    def _fill(self, index, grad):
        bucket, slot = self._slot(index)
        p = self.params[index]
        kept = p.grad
        if kept is not None:
            self.kept.add(index)
        values = np.zeros(slot.shape, slot.dtype) if grad is None else grad._data.reshape(-1)
        if kept is not None:
            values = values + kept._data.reshape(-1)
        # Divide before summing, as PyTorch does: the sum of the shares is the mean.
        np.divide(values, self.pg.size(), out=slot)
        bucket.pending -= 1
        return bucket, slot

    def _start_ready_buckets(self):
        MPI = c10d._State.MPI
        while (self.next_bucket < len(self.buckets)
               and self.buckets[self.next_bucket].pending == 0):
            bucket = self.buckets[self.next_bucket]
            bucket.request = self.pg._comm.Iallreduce(MPI.IN_PLACE, bucket.buffer, MPI.SUM)
            self.next_bucket += 1
        started = [b.request for b in self.buckets[:self.next_bucket]]
        # Open MPI moves non-blocking collectives along only inside MPI calls:
        # testing them here lets the earlier buckets progress during backward.
        if started:
            MPI.Request.Testall(started)

    def on_gradient(self, index, grad):
        """The gradient hook of parameter ``index``: returns the slot .grad gets."""
        if not self.armed:
            return None
        if index not in self.expected:
            raise RuntimeError(
                f"DistributedDataParallel: parameter {self.names[index]!r} received a "
                f"gradient though the forward's outputs do not depend on it (a backward from "
                f"a tensor the forward did not return?)")
        if grad.requires_grad:
            raise RuntimeError(
                f"DistributedDataParallel: backward with create_graph=True is not supported "
                f"(parameter {self.names[index]!r} received a recorded gradient)")
        if index in self.ready:
            raise RuntimeError(
                f"DistributedDataParallel: Expected to mark a variable ready only once: "
                f"parameter {self.names[index]!r} received a gradient twice in one step "
                f"(a second backward through the same forward?)")
        self.ready.add(index)
        bucket, slot = self._fill(index, grad)
        self._start_ready_buckets()
        if len(self.ready) == len(self.expected):
            self._finish()
        return _core._wrap(slot.reshape(self.params[index]._data.shape))

    def _finish(self):
        self.armed = False
        requests = [b.request for b in self.buckets]
        used = None
        if self.locally_used is not None:
            used = self.locally_used.copy()
            requests.append(self.pg._comm.Iallreduce(c10d._State.MPI.IN_PLACE, used,
                                                     c10d._State.MPI.MAX))
        began = time.perf_counter()
        c10d.wait_all(requests, self.pg._timeout, "DistributedDataParallel's gradient "
                                                  "all-reduce")
        self.last_wait_seconds = time.perf_counter() - began
        # .grad receives the returned slot when the engine commits; a .grad kept
        # from no_sync steps is already inside that slot, so it must not be added again.
        for index in self.kept & self.ready:
            self.params[index].grad = None
        for index in range(len(self.params)):
            if index in self.ready:
                continue
            if used is not None and used[index]:
                # Unused here but used by another rank: the average still applies.
                _, slot = self._slot(index)
                p = self.params[index]
                p.grad = _core._wrap(slot.reshape(p._data.shape).copy())
        self.ready = set()


def _tensors_in(value, found):
    if isinstance(value, _core.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tensors_in(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _tensors_in(item, found)
    return found


def _reachable_leaves(outputs):
    """The leaf tensors (by id) the graph of ``outputs`` leads to."""
    # ``next_functions`` may make its node objects on the fly: every node stays
    # referenced in ``kept`` until the walk ends, so no id is reused meanwhile.
    seen, leaves, kept = set(), set(), []
    stack = [t.grad_fn for t in _tensors_in(outputs, []) if t.grad_fn is not None]
    for t in _tensors_in(outputs, []):
        if t.grad_fn is None and t.requires_grad:
            leaves.add(id(t))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        kept.append(node)
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
            continue
        for next_node, _ in node.next_functions:
            if next_node is not None:
                stack.append(next_node)
    return leaves


class DistributedDataParallel(Module):
    """Train ``module`` on every rank of a process group, gradients averaged over the ranks.

    At construction, every rank checks it has the same parameters (names,
    shapes, dtypes; a RuntimeError names the first that differs), then takes
    rank 0's parameters and buffers. Each rank then runs the forward and
    backward on its own part of the batch; the backward leaves in ``.grad``
    the average over the ranks of the gradients, all-reduced in buckets
    while backward still runs. Under ``no_sync()``, gradients accumulate
    locally; the first synchronized backward after it averages the
    accumulated sum.

    Parameters
    ----------
    module : Module
    device_ids, output_device, dim
        For accelerator modules in PyTorch: None here (the CPU is the only
        device); ``dim`` is accepted and unused, as for CPU modules.
    broadcast_buffers : bool, default True
        Copy rank 0's buffers (BatchNorm's running statistics...) to every
        rank before each forward.
    init_sync : bool, default True
        Check and broadcast the parameters at construction.
    process_group : ProcessGroup, optional
        The default group when None.
    bucket_cap_mb : float, default 25
        The size of a gradient bucket (when not given, the first one is 1 MiB).
    find_unused_parameters : bool, default False
        Follow the forward's outputs back to the parameters they depend on,
        so a forward may leave some parameters unused. Without it, a
        backward that does not reach every parameter makes the next forward
        raise.

    ``static_graph`` and ``check_reduction`` are accepted (they change no
    result); ``gradient_as_bucket_view``, ``mixed_precision``,
    ``device_mesh``, ``delay_all_reduce_named_params``,
    ``param_to_hook_all_reduce``, ``skip_all_reduce_unused_params``,
    ``bucket_cap_mb_list`` and ``batched_grad_copy`` must keep their
    defaults (a ValueError names the one that does not). Gradients are
    averaged by ``backward()``; ``autograd.grad`` and ``create_graph=True``
    through a DDP module are not supported.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera import nn
    >>> dist.init_process_group("mpi")
    >>> model = nn.parallel.DistributedDataParallel(nn.Linear(3, 1))
    >>> model(oxmera.ones(4, 3)).sum().backward()
    >>> model.module.weight.grad.shape, list(model.state_dict())
    (oxmera.Size([1, 3]), ['module.weight', 'module.bias'])
    >>> dist.destroy_process_group()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids or output_device is not None:
            raise ValueError(f"DistributedDataParallel: device_ids and output_device are for "
                             f"accelerator modules; a CPU module (all of oxmera's) takes None, "
                             f"got device_ids={device_ids!r}, output_device={output_device!r}")
        unsupported = {"gradient_as_bucket_view": gradient_as_bucket_view,
                       "delay_all_reduce_named_params": delay_all_reduce_named_params,
                       "param_to_hook_all_reduce": param_to_hook_all_reduce,
                       "mixed_precision": mixed_precision, "device_mesh": device_mesh,
                       "skip_all_reduce_unused_params": skip_all_reduce_unused_params,
                       "bucket_cap_mb_list": bucket_cap_mb_list,
                       "batched_grad_copy": batched_grad_copy}
        for name, value in unsupported.items():
            if value not in (None, False):
                raise ValueError(f"DistributedDataParallel: {name}={value!r} is not supported "
                                 f"by oxmera (leave it at its default)")
        pg = c10d._resolve(process_group, "DistributedDataParallel")
        if pg is None:
            raise ValueError("DistributedDataParallel: this rank is not a member of "
                             "process_group")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        # As PyTorch: a small first bucket unless the user chose the size.
        first_bucket_bytes = None if bucket_cap_mb is None else int(bucket_cap_mb * 1024 * 1024)
        if bucket_cap_mb is None:
            bucket_cap_mb = _DEFAULT_BUCKET_MB
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be positive, got "
                             f"{bucket_cap_mb}")
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.process_group = pg
        self.broadcast_buffers = True if broadcast_buffers is None else bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        if init_sync:
            self._check_same_parameters(module)
            self._broadcast(list(module.parameters()) + list(module.buffers()))
        names = [n for n, _ in named]
        params = [p for _, p in named]
        reducer = _Reducer(names, params, pg, self.bucket_bytes_cap,
                           first_bucket_bytes or _FIRST_BUCKET_BYTES)
        # Not a submodule or a parameter (Module.__setattr__ must not see it): plain state.
        object.__setattr__(self, "reducer", reducer)
        for index, p in enumerate(params):
            reducer.handles.append(p.register_hook(_GradientHook(reducer, index)))

    def _check_same_parameters(self, module):
        pg = self.process_group
        mine = [(n, tuple(p.shape), str(p.dtype)) for n, p in module.named_parameters()]
        everyone = [None] * pg.size()
        c10d.all_gather_object(everyone, mine, group=pg)
        reference = everyone[0]
        for rank, theirs in enumerate(everyone):
            if len(theirs) != len(reference):
                raise RuntimeError(
                    f"DistributedDataParallel: DDP expects same model across all ranks, but "
                    f"rank {pg._global_ranks[rank]} has {len(theirs)} parameters, while rank "
                    f"{pg._global_ranks[0]} has {len(reference)}")
            for (name, shape, dtype), (name0, shape0, dtype0) in zip(theirs, reference):
                if (name, shape, dtype) != (name0, shape0, dtype0):
                    raise RuntimeError(
                        f"DistributedDataParallel: parameter {name!r} has shape {shape} and "
                        f"dtype {dtype} on rank {pg._global_ranks[rank]}, but parameter "
                        f"{name0!r} has shape {shape0} and dtype {dtype0} on rank "
                        f"{pg._global_ranks[0]}: every rank must build the same model")

    def _broadcast(self, tensors):
        # Parameters are leaves that require grad: writing into them is not a
        # recorded in-place op, the data just takes rank 0's values.
        src = self.process_group._global_ranks[0]
        works = [c10d.broadcast(t, src=src, group=self.process_group, async_op=True)
                 for t in tensors]
        for work in works:
            work.wait()

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers and self.process_group.size() > 1:
                self._broadcast(buffers)
        outputs = self.module(*inputs, **kwargs)
        reducer = self.reducer
        if _core.is_grad_enabled() and self.require_backward_grad_sync:
            if self.find_unused_parameters:
                reachable = _reachable_leaves(outputs)
                expected = [i for i, p in enumerate(reducer.params) if id(p) in reachable]
            else:
                expected = range(len(reducer.params))
            reducer.prepare(expected, self.find_unused_parameters)
        else:
            reducer.armed = False
        return outputs

    @contextlib.contextmanager
    def no_sync(self):
        """Inside it, backward accumulates gradients locally, with no communication.

        The first backward of a forward run outside it averages the
        accumulated gradients over the ranks.

        Examples
        --------
        >>> import oxmera, oxmera.distributed as dist
        >>> from oxmera import nn
        >>> dist.init_process_group("mpi")
        >>> model = nn.parallel.DistributedDataParallel(nn.Linear(2, 1))
        >>> with model.no_sync():
        ...     model(oxmera.ones(1, 2)).sum().backward()
        >>> model(oxmera.ones(1, 2)).sum().backward()
        >>> model.module.bias.grad
        tensor([2.], dtype=float32)
        >>> dist.destroy_process_group()
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def __del__(self):
        reducer = self.__dict__.get("reducer")
        if reducer is not None:
            for handle in reducer.handles:
                handle.remove()


class _GradientHook:
    # A class rather than a closure so the hook names its parameter in reprs.
    def __init__(self, reducer, index):
        self.reducer = reducer
        self.index = index

    def __call__(self, grad):
        return self.reducer.on_gradient(self.index, grad)

    def __repr__(self):
        return f"<DistributedDataParallel gradient hook of {self.reducer.names[self.index]!r}>"
