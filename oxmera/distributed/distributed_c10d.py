"""Process groups and collectives on tensors, over MPI (``torch.distributed.distributed_c10d``).

What this module owns: the default process group (``MPI.COMM_WORLD``
duplicated, so a user's own mpi4py traffic never matches ours), groups of
some ranks, the collectives on tensors (in place, the tensor's NumPy array
handed to MPI with no copy when it is contiguous), their work handles, the
object collectives (pickled into uint8 tensors, as PyTorch does), and the
fault handling: every wait polls its MPI requests against the group's
timeout instead of blocking inside MPI, and an uncaught exception in a rank
prints the rank and aborts the whole MPI job, so no rank is left waiting.

mpi4py is imported by ``init_process_group()`` only: importing it starts
MPI, which a program that never asks for a process group must not pay for.
What it leaves to others: the differentiable collectives
(``oxmera.distributed.nn.functional``), ``DistributedDataParallel``
(``oxmera.nn.parallel``) and the launcher (``oxmera.distributed.run``).
"""
import datetime
import enum
import importlib.util
import os
import pickle
import sys
import time
import traceback

import numpy as np

from oxmera._core import autograd as _core

Tensor = _core.Tensor

__all__ = [
    "Backend", "ReduceOp", "ProcessGroup", "Work", "GroupMember", "group",
    "is_available", "is_mpi_available", "is_gloo_available", "is_nccl_available",
    "is_initialized", "init_process_group", "destroy_process_group", "new_group",
    "get_rank", "get_world_size", "get_backend", "get_process_group_ranks",
    "barrier", "all_reduce", "broadcast", "reduce", "all_gather",
    "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather",
    "scatter", "send", "recv", "isend", "irecv", "all_gather_object",
    "broadcast_object_list", "gather_object",
]

#: What to install when mpi4py or an MPI library is missing.
EXTRA_HINT = "pip install 'oxmera[distributed]' (mpi4py and Open MPI from PyPI)"

#: PyTorch's default for CPU process groups.
DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


def is_available():
    """True if collectives can run here: mpi4py (and so an MPI) is installed.

    Importing ``oxmera.distributed`` works either way; without mpi4py,
    ``init_process_group()`` raises an ImportError naming the extra
    ``oxmera[distributed]``.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> isinstance(dist.is_available(), bool)
    True
    """
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available():
    """True if the ``"mpi"`` backend can be used (the same as ``is_available()``).

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.is_mpi_available() == dist.is_available()
    True
    """
    return is_available()


def is_gloo_available():
    """False: oxmera's one backend is MPI (``backend="gloo"`` is accepted as an alias of it).

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.is_gloo_available()
    False
    """
    return False


def is_nccl_available():
    """False: NCCL needs CUDA devices, which oxmera does not have.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.is_nccl_available()
    False
    """
    return False


class Backend(str):
    """The name of a communication backend: ``Backend.MPI == "mpi"``.

    ``"gloo"`` (PyTorch's CPU backend) is accepted wherever a backend is
    named and runs on MPI too, so CPU programs written for it run unchanged;
    ``"nccl"`` is refused (it needs CUDA).

    Examples
    --------
    >>> from oxmera.distributed import Backend
    >>> Backend("MPI") == Backend.MPI == "mpi"
    True
    """

    UNDEFINED = "undefined"
    MPI = "mpi"
    GLOO = "gloo"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, got "
                             f"{type(name).__name__}")
        value = name.lower()
        # "cpu:gloo" is PyTorch's per-device form; the CPU is the only device here.
        if value.startswith("cpu:"):
            value = value[4:]
        if value not in ("mpi", "gloo", "undefined"):
            raise ValueError(f"Invalid backend: '{name}': oxmera.distributed runs on MPI "
                             f"(backend 'mpi'; 'gloo' is accepted as an alias), and "
                             f"'nccl' needs CUDA devices, which oxmera does not have")
        return str.__new__(cls, value)


class ReduceOp(enum.Enum):
    """How a reduction combines the ranks' values: SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR.

    AVG is the SUM divided by the group size (floating tensors only);
    BAND, BOR and BXOR are for integer and bool tensors.

    Examples
    --------
    >>> from oxmera.distributed import ReduceOp
    >>> ReduceOp.SUM, ReduceOp.AVG.name
    (<ReduceOp.SUM: 0>, 'AVG')
    """

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7


class ProcessGroup:
    """The ranks that take part in a collective, over one MPI communicator.

    Made by ``init_process_group()`` (all ranks) and ``new_group()``;
    ``rank()`` and ``size()`` are this process's rank in the group and the
    group's size.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")   # a job of one process here (no mpiexec)
    >>> world = dist.group.WORLD
    >>> world.rank(), world.size()
    (0, 1)
    >>> dist.destroy_process_group()
    """

    def __init__(self, comm, global_ranks, timeout):
        self._comm = comm
        self._global_ranks = list(global_ranks)     # group rank -> rank in the world
        self._timeout = timeout

    def rank(self):
        return self._comm.Get_rank()

    def size(self):
        return self._comm.Get_size()

    def name(self):
        return Backend.MPI

    def __repr__(self):
        return f"ProcessGroup(backend='mpi', ranks={self._global_ranks})"


class _NonGroupMember:
    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """``GroupMember.WORLD`` (the default group, None before initialization) and
    ``GroupMember.NON_GROUP_MEMBER`` (what ``new_group()`` returns on the
    ranks it leaves out).

    Examples
    --------
    >>> from oxmera.distributed import GroupMember
    >>> GroupMember.WORLD is None     # no process group yet
    True
    """

    WORLD = None
    NON_GROUP_MEMBER = _NonGroupMember()


class group:
    """``group.WORLD``: the default process group (None before initialization).

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.group.WORLD is None
    True
    """

    WORLD = None


class _State:
    MPI = None                  # the mpi4py.MPI module, once imported
    groups = []                 # every live ProcessGroup, the default one first
    previous_excepthook = None


def _mpi():
    if _State.MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as err:
            raise ImportError(f"oxmera.distributed needs mpi4py and an MPI library: "
                              f"{EXTRA_HINT} (the import failed: {err})") from err
        _State.MPI = MPI
    return _State.MPI


def is_initialized():
    """True once ``init_process_group()`` has run (and until ``destroy_process_group()``).

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.is_initialized()
    False
    """
    return GroupMember.WORLD is not None


def _default_group():
    if GroupMember.WORLD is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return GroupMember.WORLD


def _resolve(group, name):
    """The ProcessGroup a collective ``name`` runs on, or None on a rank outside it."""
    if group is None or group is GroupMember.WORLD:
        return _default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"{name}: group must be a ProcessGroup from new_group() or None, "
                        f"got {type(group).__name__}")
    _default_group()
    if group not in _State.groups:
        raise ValueError(f"{name}: this process group was destroyed")
    return group


def _as_timeout(timeout, name):
    if timeout is None:
        return DEFAULT_TIMEOUT
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"{name}: timeout must be a datetime.timedelta, got "
                        f"{type(timeout).__name__}")
    return timeout


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's default process group: the processes an MPI launcher started.

    Rank and world size come from MPI (``mpiexec``, ``srun``, or
    ``python -m oxmera.distributed.run``); a script started alone is a job
    of one process. ``world_size``, ``rank`` and the ``env://`` variables
    ``RANK``/``WORLD_SIZE`` are accepted where they agree with MPI (a
    ValueError says which does not). ``timeout`` (default 30 minutes, as for
    PyTorch's CPU backend) bounds every wait for a collective: past it, the
    rank raises a RuntimeError naming the collective, instead of hanging.

    Once initialized, an exception no code catches prints
    ``oxmera.distributed: rank R failed`` and aborts the MPI job, so the
    other ranks stop too (the launcher exits non-zero).

    Parameters
    ----------
    backend : str, optional
        ``"mpi"`` (the default); ``"gloo"`` and ``"cpu:gloo"`` are accepted as
        aliases of it, so CPU programs written for PyTorch run unchanged.
    init_method : str, optional
        None or ``"env://"``: MPI supplies the rendezvous.
    timeout : datetime.timedelta, optional
    world_size, rank : int, optional
        Checked against MPI's when given.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group(backend="mpi")
    >>> dist.is_initialized(), dist.get_rank(), dist.get_world_size()
    (True, 0, 1)
    >>> dist.destroy_process_group()
    """
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is not None:
        Backend(backend)
    if init_method not in (None, "env://"):
        raise ValueError(f"init_process_group: init_method {init_method!r} is not supported: "
                         f"the MPI launcher supplies the rendezvous (use None or 'env://')")
    if store is not None:
        raise ValueError("init_process_group: a store is not supported: the MPI launcher "
                         "supplies the rendezvous")
    timeout = _as_timeout(timeout, "init_process_group")
    MPI = _mpi()
    comm = MPI.COMM_WORLD.Dup()
    mpi_rank, mpi_size = comm.Get_rank(), comm.Get_size()
    claims = [("world_size", world_size, mpi_size), ("rank", rank, mpi_rank)]
    for variable, truth in (("WORLD_SIZE", mpi_size), ("RANK", mpi_rank)):
        if os.environ.get(variable, "") != "":
            try:
                claims.append((f"the environment variable {variable}",
                               int(os.environ[variable]), truth))
            except ValueError:
                comm.Free()
                raise ValueError(f"init_process_group: the environment variable {variable} "
                                 f"is {os.environ[variable]!r}, not an integer") from None
    for what, claimed, truth in claims:
        if claimed not in (-1, None) and claimed != truth:
            comm.Free()
            raise ValueError(f"init_process_group: {what} is {claimed} but the MPI launcher "
                             f"says {truth} (the MPI job has {mpi_size} processes; this one "
                             f"is rank {mpi_rank})")
    world = ProcessGroup(comm, range(mpi_size), timeout)
    GroupMember.WORLD = group.WORLD = world
    _State.groups = [world]
    _install_excepthook()


def destroy_process_group(group=None):
    """Leave a process group (by default the default one, and with it every group).

    MPI itself stays initialized (it is finalized at exit), so a program may
    call ``init_process_group()`` again.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.destroy_process_group()
    >>> dist.is_initialized()
    False
    """
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    target = _resolve(group, "destroy_process_group")
    if target is GroupMember.WORLD:
        for pg in _State.groups:
            pg._comm.Free()
        _State.groups = []
        GroupMember.WORLD = globals()["group"].WORLD = None
        _uninstall_excepthook()
    else:
        target._comm.Free()
        _State.groups.remove(target)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A process group of some ranks of the world; every rank of the world must call it.

    ``ranks`` are ranks of the world (all of them when None); a rank the
    group leaves out gets ``GroupMember.NON_GROUP_MEMBER``, on which
    collectives do nothing and ``get_rank()`` answers -1.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> g = dist.new_group([0])
    >>> dist.get_rank(g), dist.get_world_size(g)
    (0, 1)
    >>> dist.destroy_process_group()
    """
    world = _default_group()
    if backend is not None:
        Backend(backend)
    size = world.size()
    ranks = list(range(size)) if ranks is None else [int(r) for r in ranks]
    bad = [r for r in ranks if not 0 <= r < size]
    if bad or len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks must be distinct ranks of the world of size "
                         f"{size}, got {ranks}")
    ranks = sorted(ranks)
    timeout = world._timeout if timeout is None else _as_timeout(timeout, "new_group")
    with_ranks = world._comm.Get_group().Incl(ranks)
    comm = world._comm.Create(with_ranks)       # collective over the whole world
    with_ranks.Free()
    if comm == _mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, timeout)
    _State.groups.append(pg)
    return pg


def get_rank(group=None):
    """This process's rank in ``group`` (the default group when None); -1 outside it.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_rank()
    0
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "get_rank")
    return -1 if pg is None else pg.rank()


def get_world_size(group=None):
    """The number of processes in ``group`` (the default group when None); -1 outside it.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_world_size()
    1
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "get_world_size")
    return -1 if pg is None else pg.size()


def get_backend(group=None):
    """The backend of ``group``: always ``"mpi"``.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("gloo")    # an alias: it runs on MPI
    >>> dist.get_backend()
    'mpi'
    >>> dist.destroy_process_group()
    """
    _resolve(group, "get_backend")
    return Backend.MPI


def get_process_group_ranks(group):
    """The world ranks of ``group``'s members, in group-rank order.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.get_process_group_ranks(dist.group.WORLD)
    [0]
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "get_process_group_ranks")
    if pg is None:
        raise ValueError("get_process_group_ranks: this rank is not a member of the group")
    return list(pg._global_ranks)


# --- faults --------------------------------------------------------------------------------

def _install_excepthook():
    if _State.previous_excepthook is None:
        _State.previous_excepthook = sys.excepthook
        sys.excepthook = _abort_job


def _uninstall_excepthook():
    if _State.previous_excepthook is not None:
        if sys.excepthook is _abort_job:
            sys.excepthook = _State.previous_excepthook
        _State.previous_excepthook = None


def _abort_job(kind, value, tb):
    # An uncaught exception in one rank would otherwise leave the others
    # waiting in their next collective; MPI_Abort ends the whole job at once,
    # and the launcher exits non-zero.
    rank = _State.MPI.COMM_WORLD.Get_rank()
    size = _State.MPI.COMM_WORLD.Get_size()
    try:
        traceback.print_exception(kind, value, tb)
        print(f"oxmera.distributed: rank {rank} (of {size}) failed with {kind.__name__}: "
              f"{value}; aborting the job", file=sys.stderr, flush=True)
    finally:
        _State.MPI.COMM_WORLD.Abort(1)


# --- work handles --------------------------------------------------------------------------

class Work:
    """A collective or point-to-point operation under way (``async_op=True``, ``isend``...).

    ``wait()`` blocks until it is done (raising a RuntimeError naming the
    operation past the group's timeout, or past ``timeout``) and returns
    True; ``is_completed()`` asks without blocking; ``result()`` is the list
    of tensors written. The tensors must not be read or written until then.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = oxmera.tensor([1.0, 2.0])
    >>> work = dist.all_reduce(t, async_op=True)
    >>> work.wait()
    True
    >>> work.is_completed(), t
    (True, tensor([1., 2.], dtype=float32))
    >>> dist.destroy_process_group()
    """

    def __init__(self, name, requests, timeout, finish=None, outputs=()):
        self._name = name
        self._requests = list(requests)
        self._timeout = timeout
        self._finish = finish
        self._outputs = list(outputs)
        self._done = False

    def _complete(self):
        if self._done:
            return
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()

    def is_completed(self):
        if not self._done and _State.MPI.Request.Testall(self._requests):
            self._complete()
        return self._done

    def is_success(self):
        return self.is_completed()

    def wait(self, timeout=None):
        if not self._done:
            limit = self._timeout if timeout is None else _as_timeout(timeout, "Work.wait")
            wait_all(self._requests, limit, self._name)
            self._complete()
        return True

    def result(self):
        self.wait()
        return self._outputs


def wait_all(requests, timeout, name):
    """Wait for MPI ``requests``, polling; past ``timeout``, a RuntimeError naming ``name``.

    Waiting in MPI itself could block forever on a rank whose peer died
    without ending the job; polling can give up.
    """
    Request = _State.MPI.Request
    if Request.Testall(requests):
        return
    deadline = time.monotonic() + timeout.total_seconds()
    pause = 0.0
    while not Request.Testall(requests):
        if time.monotonic() > deadline:
            rank = _State.MPI.COMM_WORLD.Get_rank()
            raise RuntimeError(f"oxmera.distributed: {name} on rank {rank} timed out after "
                               f"{timeout} (another rank failed, hangs, or did not call it)")
        # Yield the core first (ranks often share cores), then back off to 1 ms.
        time.sleep(pause)
        pause = min(pause * 2 or 1e-5, 1e-3)


# --- buffers -------------------------------------------------------------------------------

class _Buffer:
    """A tensor's array as MPI reads and writes it, and how to put results back.

    Contiguous arrays go to MPI as they are; others (and float16, which MPI
    has no type for, reduced in float32) go through a copy written back by
    ``finish``. ``finish`` also bumps the tensor's version, as any in-place
    write does, so autograd notices.
    """

    def __init__(self, tensor, name, what, write, reduce=False):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"{name}: {what} must be a Tensor, got {type(tensor).__name__}")
        self.tensor = tensor
        self.write = write
        array = tensor._data
        self.bracket = _core._begin_write(tensor) if write else None
        if write and not array.flags.writeable:
            _core._end_write(self.bracket)
            raise RuntimeError(f"{name}: cannot write into {what} of shape "
                               f"{tuple(tensor.shape)} (a read-only or broadcast view; clone() "
                               f"it)")
        self.copied = not array.flags.c_contiguous or array.dtype == np.float16
        if array.dtype == np.float16:
            self.array = array.astype(np.float32 if reduce else np.float16)
            if not reduce:
                self.array = self.array.view(np.uint16)
        elif self.copied:
            self.array = np.ascontiguousarray(array)
        else:
            self.array = array

    def finish(self):
        if self.write:
            try:
                if self.copied:
                    values = self.array
                    if values.dtype == np.uint16 and self.tensor._data.dtype == np.float16:
                        values = values.view(np.float16)
                    np.copyto(self.tensor._data, values.reshape(self.tensor._data.shape),
                              casting="unsafe")
            finally:
                _core._end_write(self.bracket)
                self.bracket = None
            self.tensor._bump_version()

    def release(self):
        _core._end_write(self.bracket)
        self.bracket = None


def _run(name, pg, buffers, start, async_op, after=None):
    """Start an MPI operation over ``buffers``, return its Work (async) or wait for it."""
    try:
        requests = start()
    except BaseException:
        for buffer in buffers:
            buffer.release()
        raise
    if not isinstance(requests, list):
        requests = [requests]

    def finish():
        if after is not None:
            after()
        for buffer in buffers:
            buffer.finish()

    work = Work(name, requests, pg._timeout, finish, [b.tensor for b in buffers if b.write])
    if async_op:
        return work
    work.wait()
    return None


def _mpi_op(op, dtype, name):
    MPI = _mpi()
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{name}: op must be a ReduceOp, got {op!r}")
    floating = np.issubdtype(dtype, np.floating) or np.issubdtype(dtype, np.complexfloating)
    if op is ReduceOp.AVG and not floating:
        raise RuntimeError(f"{name}: ReduceOp.AVG needs a floating tensor, got {dtype}")
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and floating:
        raise RuntimeError(f"{name}: {op} needs an integer or bool tensor, got {dtype}")
    if dtype == np.bool_:
        # MPI defines only logical operations on C bool.
        return {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR,
                ReduceOp.PRODUCT: MPI.LAND, ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND,
                ReduceOp.BXOR: MPI.LXOR}[op]
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND,
            ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _averaging(op, buffer, size):
    if op is not ReduceOp.AVG:
        return None

    def divide():
        np.divide(buffer.array, size, out=buffer.array)
    return divide


def _group_rank(pg, rank, name, what):
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)):
        raise TypeError(f"{name}: {what} must be an int rank, got {type(rank).__name__}")
    try:
        return pg._global_ranks.index(int(rank))
    except ValueError:
        raise ValueError(f"{name}: {what}={rank} is not a rank of the group (its ranks are "
                         f"{pg._global_ranks})") from None


def _check_async(async_op, name):
    if not isinstance(async_op, bool):
        raise TypeError(f"{name}: async_op must be a bool, got {type(async_op).__name__}")


# --- collectives ---------------------------------------------------------------------------

def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached this call.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> dist.barrier()
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "barrier")
    pg = _resolve(group, "barrier")
    if pg is None:
        return None
    return _run("barrier", pg, [], lambda: pg._comm.Ibarrier(), async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group with ``op``, in place, on every rank.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = oxmera.tensor([1.0, 2.0]) * (dist.get_rank() + 1)
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)   # on n ranks: [1, 2] * n(n+1)/2
    >>> t
    tensor([1., 2.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "all_reduce")
    pg = _resolve(group, "all_reduce")
    if pg is None:
        return None
    buffer = _Buffer(tensor, "all_reduce", "tensor", write=True, reduce=True)
    mpi_op = _mpi_op(op, buffer.array.dtype, "all_reduce")
    return _run("all_reduce", pg, [buffer],
                lambda: pg._comm.Iallreduce(_State.MPI.IN_PLACE, buffer.array, mpi_op),
                async_op, _averaging(op, buffer, pg.size()))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` of every other rank of the group.

    ``src`` is a rank of the world; ``group_src`` a rank within ``group``.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = oxmera.arange(3) if dist.get_rank() == 0 else oxmera.zeros(3, dtype=oxmera.int64)
    >>> dist.broadcast(t, src=0)
    >>> t
    tensor([0, 1, 2], dtype=int64)
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "broadcast")
    pg = _resolve(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, src, group_src, "broadcast", "src")
    buffer = _Buffer(tensor, "broadcast", "tensor", write=True)
    return _run("broadcast", pg, [buffer], lambda: pg._comm.Ibcast(buffer.array, root=root),
                async_op)


def _root(pg, rank, group_rank, name, what):
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"{name}: give {what} or group_{what}, not both")
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"{name}: group_{what}={group_rank} is not a rank of a group of "
                             f"size {pg.size()}")
        return int(group_rank)
    return _group_rank(pg, 0 if rank is None else rank, name, what)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` over the group into ``tensor`` of rank ``dst`` (others keep theirs).

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = oxmera.tensor([3.0, -1.0])
    >>> dist.reduce(t, dst=0, op=dist.ReduceOp.MAX)
    >>> t
    tensor([ 3., -1.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "reduce")
    pg = _resolve(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "reduce", "dst")
    is_root = pg.rank() == root
    buffer = _Buffer(tensor, "reduce", "tensor", write=is_root, reduce=True)
    mpi_op = _mpi_op(op, buffer.array.dtype, "reduce")
    MPI = _State.MPI

    def start():
        if is_root:
            return pg._comm.Ireduce(MPI.IN_PLACE, buffer.array, mpi_op, root=root)
        return pg._comm.Ireduce(buffer.array, None, mpi_op, root=root)
    return _run("reduce", pg, [buffer], start, async_op,
                _averaging(op, buffer, pg.size()) if is_root else None)


def _check_same(name, what, tensors, like):
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: {what}[{i}] must be a Tensor, got {type(t).__name__}")
        if tuple(t.shape) != tuple(like.shape) or t.dtype != like.dtype:
            raise ValueError(f"{name}: {what}[{i}] has shape {tuple(t.shape)} and dtype "
                             f"{t.dtype}; every entry must match the tensor's shape "
                             f"{tuple(like.shape)} and dtype {like.dtype}")


def _check_list(name, what, tensors, size):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}: {what} must be a list of tensors, got "
                        f"{type(tensors).__name__}")
    if len(tensors) != size:
        raise ValueError(f"{name}: {what} has {len(tensors)} tensors; the group has {size} "
                         f"ranks")


def _stacked(tensors, name, what):
    """One contiguous array holding ``tensors`` (written back by the returned finisher)."""
    buffers = [_Buffer(t, name, what, write=True) for t in tensors]
    whole = np.empty((len(tensors),) + buffers[0].array.shape, buffers[0].array.dtype)

    def finish():
        for i, buffer in enumerate(buffers):
            buffer.array = whole[i]
            buffer.copied = True
    return whole, buffers, finish


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list`` (one entry per rank of the group).

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = [oxmera.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.all_gather(out, oxmera.tensor([1.0, 2.0]))
    >>> out
    [tensor([1., 2.], dtype=float32)]
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "all_gather")
    pg = _resolve(group, "all_gather")
    if pg is None:
        return None
    _check_list("all_gather", "tensor_list", tensor_list, pg.size())
    source = _Buffer(tensor, "all_gather", "tensor", write=False)
    _check_same("all_gather", "tensor_list", tensor_list, tensor)
    whole, buffers, spread = _stacked(tensor_list, "all_gather", "tensor_list")
    return _run("all_gather", pg, buffers,
                lambda: pg._comm.Iallgather(source.array, whole), async_op, spread)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor``, concatenated (or stacked) along dim 0 into ``output_tensor``.

    ``output_tensor`` has shape ``(world_size * n, ...)`` for an input of
    shape ``(n, ...)``, or ``(world_size, n, ...)``.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = oxmera.zeros(2 * dist.get_world_size())
    >>> dist.all_gather_into_tensor(out, oxmera.tensor([5.0, 6.0]))
    >>> out
    tensor([5., 6.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "all_gather_into_tensor")
    pg = _resolve(group, "all_gather_into_tensor")
    if pg is None:
        return None
    source = _Buffer(input_tensor, "all_gather_into_tensor", "input_tensor", write=False)
    _check_gathered("all_gather_into_tensor", output_tensor, "output_tensor", input_tensor,
                    "input_tensor", pg.size())
    out = _Buffer(output_tensor, "all_gather_into_tensor", "output_tensor", write=True)
    return _run("all_gather_into_tensor", pg, [out],
                lambda: pg._comm.Iallgather(source.array, out.array), async_op)


def _check_gathered(name, big, big_name, small, small_name, size):
    """``big`` holds ``size`` copies of ``small``'s shape (concatenated or stacked on dim 0)."""
    if not isinstance(big, Tensor):
        raise TypeError(f"{name}: {big_name} must be a Tensor, got {type(big).__name__}")
    shape, whole = tuple(small.shape), tuple(big.shape)
    concatenated = (len(shape) > 0 and whole == (shape[0] * size,) + shape[1:])
    if not (concatenated or whole == (size,) + shape) or big.dtype != small.dtype:
        raise ValueError(f"{name}: {big_name} of shape {whole} and dtype {big.dtype} does not "
                         f"hold {size} copies of {small_name}'s shape {shape} (dtype "
                         f"{small.dtype}) along dim 0")


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` over the group; rank ``i`` gets block ``i`` of dim 0 in ``output``.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = oxmera.zeros(2)
    >>> dist.reduce_scatter_tensor(out, oxmera.tensor([1.0, 4.0]), op=dist.ReduceOp.AVG)
    >>> out
    tensor([1., 4.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "reduce_scatter_tensor")
    pg = _resolve(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    if not isinstance(output, Tensor):
        raise TypeError(f"reduce_scatter_tensor: output must be a Tensor, got "
                        f"{type(output).__name__}")
    _check_gathered("reduce_scatter_tensor", input, "input", output, "output", pg.size())
    source = _Buffer(input, "reduce_scatter_tensor", "input", write=False, reduce=True)
    out = _Buffer(output, "reduce_scatter_tensor", "output", write=True, reduce=True)
    mpi_op = _mpi_op(op, out.array.dtype, "reduce_scatter_tensor")
    return _run("reduce_scatter_tensor", pg, [out],
                lambda: pg._comm.Ireduce_scatter_block(source.array, out.array, mpi_op),
                async_op, _averaging(op, out, pg.size()))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list`` over the group and give rank ``i`` the reduced ``input_list[i]``.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = oxmera.zeros(2)
    >>> dist.reduce_scatter(out, [oxmera.tensor([7.0, 8.0])])
    >>> out
    tensor([7., 8.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "reduce_scatter")
    pg = _resolve(group, "reduce_scatter")
    if pg is None:
        return None
    _check_list("reduce_scatter", "input_list", input_list, pg.size())
    if not isinstance(output, Tensor):
        raise TypeError(f"reduce_scatter: output must be a Tensor, got {type(output).__name__}")
    _check_same("reduce_scatter", "input_list", input_list, output)
    whole = np.stack([_Buffer(t, "reduce_scatter", "input_list", write=False,
                              reduce=True).array for t in input_list])
    out = _Buffer(output, "reduce_scatter", "output", write=True, reduce=True)
    mpi_op = _mpi_op(op, out.array.dtype, "reduce_scatter")
    return _run("reduce_scatter", pg, [out],
                lambda: pg._comm.Ireduce_scatter_block(whole, out.array, mpi_op),
                async_op, _averaging(op, out, pg.size()))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None on the others).

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> out = [oxmera.zeros(2) for _ in range(dist.get_world_size())]
    >>> dist.gather(oxmera.tensor([1.0, 2.0]), out, dst=0)
    >>> out
    [tensor([1., 2.], dtype=float32)]
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "gather")
    pg = _resolve(group, "gather")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "gather", "dst")
    source = _Buffer(tensor, "gather", "tensor", write=False)
    if pg.rank() != root:
        if gather_list:
            raise ValueError("gather: Argument ``gather_list`` must NOT be specified on "
                             "non-destination ranks.")
        return _run("gather", pg, [], lambda: pg._comm.Igather(source.array, None, root=root),
                    async_op)
    _check_list("gather", "gather_list", gather_list, pg.size())
    _check_same("gather", "gather_list", gather_list, tensor)
    whole, buffers, spread = _stacked(gather_list, "gather", "gather_list")
    return _run("gather", pg, buffers,
                lambda: pg._comm.Igather(source.array, whole, root=root), async_op, spread)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Give rank ``i`` of the group ``scatter_list[i]`` of rank ``src``, in ``tensor``.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = oxmera.zeros(2)
    >>> dist.scatter(t, [oxmera.tensor([3.0, 4.0])], src=0)
    >>> t
    tensor([3., 4.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _check_async(async_op, "scatter")
    pg = _resolve(group, "scatter")
    if pg is None:
        return None
    root = _root(pg, src, group_src, "scatter", "src")
    if pg.rank() == root:
        _check_list("scatter", "scatter_list", scatter_list, pg.size())
        _check_same("scatter", "scatter_list", scatter_list, tensor)
        whole = np.stack([_Buffer(t, "scatter", "scatter_list", write=False).array
                          for t in scatter_list])
    elif scatter_list:
        raise ValueError("scatter: Argument ``scatter_list`` must NOT be specified on "
                         "non-source ranks.")
    else:
        whole = None
    out = _Buffer(tensor, "scatter", "tensor", write=True)
    return _run("scatter", pg, [out], lambda: pg._comm.Iscatter(whole, out.array, root=root),
                async_op)


# --- point to point ------------------------------------------------------------------------

def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns a ``Work``.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = oxmera.zeros(2)
    >>> receiving = dist.irecv(t, src=0)      # a rank may send to itself
    >>> dist.isend(oxmera.tensor([1.0, 2.0]), dst=0).wait()
    True
    >>> receiving.wait(), t
    (True, tensor([1., 2.], dtype=float32))
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "isend")
    if pg is None:
        return None
    peer = _root(pg, dst, group_dst, "isend", "dst")
    source = _Buffer(tensor, "isend", "tensor", write=False)
    return _run("isend", pg, [], lambda: pg._comm.Isend(source.array, dest=peer, tag=tag), True)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (any when None); returns a ``Work``.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> t = oxmera.zeros(1)
    >>> work = dist.irecv(t)
    >>> dist.send(oxmera.tensor([9.0]), dst=0)
    >>> work.wait(), t
    (True, tensor([9.], dtype=float32))
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "irecv")
    if pg is None:
        return None
    MPI = _State.MPI
    peer = (MPI.ANY_SOURCE if src is None and group_src is None
            else _root(pg, src, group_src, "irecv", "src"))
    out = _Buffer(tensor, "irecv", "tensor", write=True)
    return _run("irecv", pg, [out],
                lambda: pg._comm.Irecv(out.array, source=peer, tag=tag), True)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it has been sent.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> work = dist.irecv(oxmera.zeros(1), src=0)
    >>> dist.send(oxmera.tensor([1.0]), dst=0)
    >>> work.wait()
    True
    >>> dist.destroy_process_group()
    """
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender's rank.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> sending = dist.isend(oxmera.tensor([4.0]), dst=0)
    >>> t = oxmera.zeros(1)
    >>> dist.recv(t), t
    (0, tensor([4.], dtype=float32))
    >>> sending.wait()
    True
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "recv")
    if pg is None:
        return -1
    MPI = _State.MPI
    peer = (MPI.ANY_SOURCE if src is None and group_src is None
            else _root(pg, src, group_src, "recv", "src"))
    out = _Buffer(tensor, "recv", "tensor", write=True)
    status = MPI.Status()
    try:
        request = pg._comm.Irecv(out.array, source=peer, tag=tag)
    except BaseException:
        out.release()
        raise
    deadline = time.monotonic() + pg._timeout.total_seconds()
    pause = 0.0
    # The same polling as wait_all, keeping the Status that names the sender.
    while not request.Test(status):
        if time.monotonic() > deadline:
            request.Cancel()
            out.release()
            raise RuntimeError(f"oxmera.distributed: recv on rank {pg.rank()} timed out after "
                               f"{pg._timeout}")
        time.sleep(pause)
        pause = min(pause * 2 or 1e-5, 1e-3)
    out.finish()
    return pg._global_ranks[status.Get_source()]


# --- objects -------------------------------------------------------------------------------

def _pickled(obj):
    data = np.frombuffer(pickle.dumps(obj), dtype=np.uint8)
    return _core._wrap(data.copy())


def all_gather_object(object_list, obj, group=None):
    """Every rank's picklable ``obj`` into ``object_list`` (one entry per rank).

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> seen = [None] * dist.get_world_size()
    >>> dist.all_gather_object(seen, {"rank": dist.get_rank()})
    >>> seen
    [{'rank': 0}]
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "all_gather_object")
    if pg is None:
        return
    _check_list_length("all_gather_object", object_list, pg.size())
    data = _pickled(obj)
    sizes = _core._wrap(np.zeros(pg.size(), dtype=np.int64))
    all_gather_into_tensor(sizes, _core._wrap(np.array([data.shape[0]], dtype=np.int64)),
                           group=pg)
    longest = int(sizes._data.max())
    padded = _core._wrap(np.zeros(longest, dtype=np.uint8))
    padded._data[:data.shape[0]] = data._data
    out = _core._wrap(np.zeros(longest * pg.size(), dtype=np.uint8))
    all_gather_into_tensor(out, padded, group=pg)
    for i in range(pg.size()):
        object_list[i] = pickle.loads(out._data[i * longest:i * longest + sizes._data[i]])


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """Every rank's picklable ``obj`` into ``object_gather_list`` on rank ``dst``.

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> seen = [None]
    >>> dist.gather_object(("hello", 0), seen, dst=0)
    >>> seen
    [('hello', 0)]
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "gather_object")
    if pg is None:
        return
    everything = [None] * pg.size()
    all_gather_object(everything, obj, group=pg)
    if pg.rank() == _group_rank(pg, dst, "gather_object", "dst"):
        _check_list_length("gather_object", object_gather_list, pg.size())
        object_gather_list[:] = everything


def _check_list_length(name, objects, size):
    if not isinstance(objects, list) or len(objects) != size:
        raise ValueError(f"{name}: expected a list of {size} entries (the group's size), got "
                         f"{objects!r:.80}")


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Replace the entries of ``object_list`` with those of rank ``src`` (picklable objects).

    Examples
    --------
    >>> import oxmera.distributed as dist
    >>> dist.init_process_group("mpi")
    >>> config = [{"lr": 0.1}, "adam"] if dist.get_rank() == 0 else [None, None]
    >>> dist.broadcast_object_list(config, src=0)
    >>> config
    [{'lr': 0.1}, 'adam']
    >>> dist.destroy_process_group()
    """
    pg = _resolve(group, "broadcast_object_list")
    if pg is None:
        return
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: object_list must be a list, got "
                        f"{type(object_list).__name__}")
    root = _root(pg, src, group_src, "broadcast_object_list", "src")
    data = _pickled(list(object_list)) if pg.rank() == root else None
    size = _core._wrap(np.array([0 if data is None else data.shape[0]], dtype=np.int64))
    broadcast(size, group=pg, group_src=root)
    if data is None:
        data = _core._wrap(np.zeros(int(size._data[0]), dtype=np.uint8))
    broadcast(data, group=pg, group_src=root)
    received = pickle.loads(data._data.tobytes())
    if len(received) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {pg._global_ranks[root]} sent "
                         f"{len(received)} objects into a list of {len(object_list)}")
    object_list[:] = received
