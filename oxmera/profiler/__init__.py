"""Where the time and memory go: ``profile``, ``record_function``, ``ProfilerActivity``.

As ``torch.profiler``: inside ``with profile() as prof:`` every op call
(``oxmera::mul``...) and every node's backward (``MulBackward``...) is
recorded with its wall time, and optionally its input shapes, the bytes its
outputs allocated and the Python stack; ``record_function("name")`` adds
ranges of one's own. ``prof.key_averages().table(...)`` sums them up in
PyTorch's columns, ``prof.export_chrome_trace(path)`` writes a trace that
Perfetto (ui.perfetto.dev) and chrome://tracing open.

The compiled core calls the active profiler around each op and each node
(``oxmera._core.autograd.set_profiler``); when none is active that costs
one pointer test per op. Ops called inside another op's forward are part
of it; ops a node's VJP calls are its children, as in PyTorch. While an op
runs, the core's profiler pointer is cleared for it, so ops that other
threads run at that very moment are not recorded (profile one thread).
"""
import enum
import functools
import json
import os
import threading
import time
import traceback

from oxmera._core import autograd as _core

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What a profiler records: ``CPU`` (the only one oxmera has; the rest are accepted
    and record nothing).

    Examples
    --------
    >>> from oxmera.profiler import ProfilerActivity
    >>> ProfilerActivity.CPU
    <ProfilerActivity.CPU: 0>
    """

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a ``schedule`` tells the profiler to do at a step.

    Examples
    --------
    >>> from oxmera.profiler import ProfilerAction
    >>> ProfilerAction.RECORD
    <ProfilerAction.RECORD: 2>
    """

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The steps to record: ``skip_first`` steps, then cycles of ``wait`` idle,
    ``warmup`` and ``active`` recorded steps (``repeat`` cycles, 0: forever).

    Examples
    --------
    >>> from oxmera.profiler import schedule
    >>> plan = schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [plan(step).name for step in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("schedule(): invalid arguments: wait, warmup, repeat and skip_first "
                         "must be >= 0 and active > 0")

    def plan(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if position < cycle - 1
                else ProfilerAction.RECORD_AND_SAVE)

    return plan


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each trace as a Chrome trace file in ``dir_name``.

    Examples
    --------
    >>> import os, tempfile
    >>> import oxmera
    >>> from oxmera.profiler import profile, tensorboard_trace_handler
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     with profile(on_trace_ready=tensorboard_trace_handler(folder)):
    ...         _ = oxmera.ones(2) * 2
    ...     len(os.listdir(folder))
    1
    """
    if use_gzip:
        raise NotImplementedError("tensorboard_trace_handler(): use_gzip is not supported")

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{os.uname().nodename if hasattr(os, 'uname') else 'host'}_" \
                              f"{os.getpid()}"
        prof.export_chrome_trace(os.path.join(
            dir_name, f"{name}.{time.time_ns() // 1000000}.pt.trace.json"))

    return handler


class _Event:
    """One recorded call or range (PyTorch's FunctionEvent, in part)."""

    __slots__ = ("name", "start_ns", "end_ns", "thread", "input_shapes", "memory",
                 "child_ns", "child_memory", "stack", "parent", "kind")

    def __init__(self, name, thread, kind, parent):
        self.name = name
        self.thread = thread
        self.kind = kind            # "op", "node" or "range"
        self.parent = parent
        self.input_shapes = []
        self.memory = 0             # bytes its outputs allocated (and its children's)
        self.child_ns = 0
        self.child_memory = 0
        self.stack = []
        self.start_ns = self.end_ns = 0

    @property
    def cpu_time_total(self):
        """Wall time in microseconds."""
        return (self.end_ns - self.start_ns) / 1000.0

    @property
    def self_cpu_time_total(self):
        """Wall time outside the recorded children, in microseconds."""
        return (self.end_ns - self.start_ns - self.child_ns) / 1000.0


def _shape_of(value):
    if isinstance(value, _core.Tensor):
        return list(value._data.shape)
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(v, _core.Tensor) for v in value):
        return [list(v._data.shape) for v in value]
    return []


def _allocated(value):
    # Bytes an op's outputs hold in memory of their own (views allocate none).
    if isinstance(value, _core.Tensor):
        data = value._data
        return data.nbytes if data.base is None else 0
    if isinstance(value, (tuple, list)):
        return sum(_allocated(v) for v in value)
    return 0


class _ThreadState(threading.local):
    def __init__(self):
        self.open = []              # the events open in this thread, innermost last


class profile:
    """Context manager: record the ops, backward nodes and ranges run inside it.

    Parameters
    ----------
    activities : iterable of ProfilerActivity, optional
        Accepted as in PyTorch; oxmera records the CPU.
    schedule : callable, optional
        ``schedule(step) -> ProfilerAction`` (see ``oxmera.profiler.schedule``): which
        calls of ``step()`` start recording and which hand the trace to
        ``on_trace_ready``. Without it, everything inside is recorded.
    on_trace_ready : callable, optional
        Called with the profiler when a trace is complete.
    record_shapes : bool
        Record each op's input shapes (the ``Input Shapes`` column of
        ``key_averages(group_by_input_shape=True).table()``).
    profile_memory : bool
        Record the bytes each op's outputs allocate (``CPU Mem`` columns).
    with_stack : bool
        Record the Python stack where each op was called (in the trace).
    with_flops, with_modules, experimental_config, acc_events
        Accepted for PyTorch's signature; not recorded.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.profiler import profile, record_function, ProfilerActivity
    >>> x = oxmera.ones(8, 4, requires_grad=True)
    >>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    ...     with record_function("step"):
    ...         (x * 2).sum().backward()
    >>> sorted(e.key for e in prof.key_averages())    # the VJPs' ops included
    ['MulBackward', 'SumBackward', 'oxmera::expand', 'oxmera::mul', 'oxmera::sum', 'step']
    >>> table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=3)
    >>> table.splitlines()[1].split()[:4]
    ['Name', 'Self', 'CPU', '%']
    >>> table.splitlines()[3].split()[0]
    'step'
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, use_cuda=None):
        if activities is not None:
            activities = set(activities)
            for a in activities:
                if not isinstance(a, ProfilerActivity):
                    raise TypeError(f"profile(): activities must be ProfilerActivity members, "
                                    f"got {a!r}")
        self.activities = activities if activities is not None else {ProfilerActivity.CPU}
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self._events = []
        self._state = _ThreadState()
        self._recording = False
        self._step = 0
        self._previous = None
        self._t0 = None

    # -- switching on and off ---------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Start profiling (as entering the ``with``)."""
        self._step = 0
        if self.schedule is None or self.schedule(0) in (ProfilerAction.RECORD,
                                                         ProfilerAction.RECORD_AND_SAVE,
                                                         ProfilerAction.WARMUP):
            self._start_recording(self.schedule is not None
                                  and self.schedule(0) == ProfilerAction.WARMUP)

    def stop(self):
        """Stop profiling; with no schedule, the trace is handed to ``on_trace_ready``."""
        was = self._recording
        self._stop_recording()
        if was and self.on_trace_ready is not None and (
                self.schedule is None or self.schedule(self._step) != ProfilerAction.NONE):
            self.on_trace_ready(self)

    def step(self):
        """Mark the end of a training step (for ``schedule``)."""
        if self.schedule is None:
            return
        before = self.schedule(self._step)
        self._step += 1
        after = self.schedule(self._step)
        if before == ProfilerAction.RECORD_AND_SAVE:
            self._stop_recording()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        if after in (ProfilerAction.WARMUP, ProfilerAction.RECORD,
                     ProfilerAction.RECORD_AND_SAVE):
            if not self._recording or before == ProfilerAction.RECORD_AND_SAVE:
                self._start_recording(after == ProfilerAction.WARMUP)
            elif before == ProfilerAction.WARMUP and after != ProfilerAction.WARMUP:
                self._events = []   # warm-up calls are run, not kept
        elif self._recording:
            self._stop_recording()

    def _start_recording(self, warmup=False):
        if _core.get_profiler() is not None and _core.get_profiler() is not self:
            raise RuntimeError("profile(): another profiler is already active")
        self._events = []
        self._t0 = time.perf_counter_ns()
        self._recording = True
        _core.set_profiler(self)

    def _stop_recording(self):
        if self._recording:
            self._recording = False
            _core.set_profiler(None)

    # -- what the core calls ----------------------------------------------
    def _begin(self, name, kind, shapes_of=None):
        state = self._state
        parent = state.open[-1] if state.open else None
        event = _Event(name, threading.get_ident(), kind, parent)
        if self.record_shapes and shapes_of is not None:
            event.input_shapes = [_shape_of(v) for v in shapes_of]
        if self.with_stack:
            event.stack = [f"{f.filename}({f.lineno}): {f.name}"
                           for f in traceback.extract_stack()[-12:-2]]
        state.open.append(event)
        event.start_ns = time.perf_counter_ns()
        return event

    def _end(self, event, result=None):
        event.end_ns = time.perf_counter_ns()
        state = self._state
        if state.open and state.open[-1] is event:
            state.open.pop()
        if self.profile_memory and result is not None:
            event.memory += _allocated(result)
        parent = event.parent
        if parent is not None:
            parent.child_ns += event.end_ns - event.start_ns
            parent.memory += event.memory
            parent.child_memory += event.memory
        self._events.append(event)

    def op(self, opdef, args, kwargs):
        """Run one op call, recorded (called by the core)."""
        n = len(opdef.input_names) if opdef.n_inputs >= 0 else 1
        event = self._begin("oxmera::" + opdef.name, "op", args[:n])
        result = None
        try:
            result = _core.apply_op_unprofiled(opdef, args, kwargs)
            return result
        finally:
            self._end(event, result)

    def node(self, node, grads):
        """Run one node's backward, recorded (called by the core)."""
        event = self._begin(str(node.name()), "node",
                            grads if isinstance(grads, (tuple, list)) else (grads,))
        result = None
        try:
            result = _core.run_node_backward(node, grads)
            return result
        finally:
            self._end(event, result)

    # -- results ----------------------------------------------------------
    def events(self):
        """The recorded events, in the order they ended."""
        return list(self._events)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The events summed per name (and input shapes, if asked): an ``EventList``."""
        groups = {}
        for e in self._events:
            key = (e.name, str(e.input_shapes) if group_by_input_shape else None,
                   tuple(e.stack[-group_by_stack_n:]) if group_by_stack_n else None)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = _Average(e.name, e.input_shapes if group_by_input_shape
                                             else None)
            avg._add(e)
        return EventList(groups.values(), self.profile_memory,
                         self.record_shapes and group_by_input_shape)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON) to ``path``: open it in Perfetto
        (ui.perfetto.dev) or chrome://tracing."""
        t0 = self._t0 or 0
        pid = os.getpid()
        trace = []
        for e in sorted(self._events, key=lambda e: e.start_ns):
            event = {"ph": "X", "cat": {"op": "cpu_op", "node": "cpu_op",
                                        "range": "user_annotation"}[e.kind],
                     "name": e.name, "pid": pid, "tid": e.thread,
                     "ts": (e.start_ns - t0) / 1000.0, "dur": (e.end_ns - e.start_ns) / 1000.0,
                     "args": {}}
            if e.input_shapes:
                event["args"]["Input Dims"] = e.input_shapes
            if self.profile_memory:
                event["args"]["Allocated Bytes"] = e.memory - e.child_memory
            if e.stack:
                event["args"]["Call stack"] = ";".join(e.stack)
            trace.append(event)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)
        return path


class _Average:
    """The events of one name summed (PyTorch's FunctionEventAvg)."""

    __slots__ = ("key", "count", "cpu_time_total", "self_cpu_time_total", "cpu_memory_usage",
                 "self_cpu_memory_usage", "input_shapes")

    def __init__(self, key, input_shapes):
        self.key = key
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0

    def _add(self, event):
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.memory
        self.self_cpu_memory_usage += event.memory - event.child_memory

    @property
    def cpu_time(self):
        """Average wall time per call, in microseconds."""
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_time(self.self_cpu_time_total)}"
                f" cpu_time={_time(self.cpu_time_total)} count={self.count}>")


def _time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes / kb:.2f} KB"
    return f"{nbytes} B"


_SORT_KEYS = {"cpu_time": "cpu_time", "cpu_time_total": "cpu_time_total",
              "self_cpu_time_total": "self_cpu_time_total", "count": "count",
              "cpu_memory_usage": "cpu_memory_usage",
              "self_cpu_memory_usage": "self_cpu_memory_usage"}


class EventList(list):
    """The averaged events; ``table()`` prints them in PyTorch's layout."""

    def __init__(self, items, profile_memory=False, with_shapes=False):
        super().__init__(items)
        self._profile_memory = profile_memory
        self._with_shapes = with_shapes

    @property
    def self_cpu_time_total(self):
        """The sum of the self times, in microseconds: the time the events cover."""
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The table PyTorch prints: one row per name, ``Self CPU time total`` below.

        ``sort_by``: ``"cpu_time_total"``, ``"self_cpu_time_total"``, ``"cpu_time"``,
        ``"count"``, ``"cpu_memory_usage"``, ``"self_cpu_memory_usage"`` (descending), or
        None (first seen first); ``row_limit`` rows at most (negative: all).
        """
        rows = list(self)
        if sort_by is not None:
            attr = _SORT_KEYS.get(sort_by)
            if attr is None:
                raise ValueError(f"table(): sort_by must be one of {sorted(_SORT_KEYS)}, got "
                                 f"{sort_by!r}")
            rows.sort(key=lambda e: getattr(e, attr), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total = self.self_cpu_time_total
        name_width = min(max([len(e.key) for e in self] + [4]) + 4, max_name_column_width)
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                   "CPU time avg"]
        if self._profile_memory:
            headers += ["CPU Mem", "Self CPU Mem"]
        headers.append("# of Calls")
        widths = [name_width] + [12] * (len(headers) - 1)
        if self._with_shapes:
            headers.append("Input Shapes")
            widths.append(min(max([len(str(e.input_shapes)) for e in self] + [12]) + 4,
                              max_shapes_column_width))
        line = "  ".join("-" * w for w in widths) + "  "
        out = []
        if header:
            out += ["=" * len(line), header]
        out += [line, _row(headers, widths), line]
        for e in rows:
            name = e.key if len(e.key) <= name_width else e.key[:name_width - 3] + "..."
            cells = [name, _percent(e.self_cpu_time_total, total), _time(e.self_cpu_time_total),
                     _percent(e.cpu_time_total, total), _time(e.cpu_time_total),
                     _time(e.cpu_time)]
            if self._profile_memory:
                cells += [_memory(e.cpu_memory_usage), _memory(e.self_cpu_memory_usage)]
            cells.append(str(e.count))
            if self._with_shapes:
                cells.append(str(e.input_shapes)[:widths[-1]])
            out.append(_row(cells, widths))
        out += [line, f"Self CPU time total: {_time(total)}", ""]
        return "\n".join(out)

    def __str__(self):
        return self.table()


def _percent(part, total):
    return f"{100.0 * part / total:.2f}%" if total else "0.00%"


def _row(cells, widths):
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths)) + "  "


class record_function:
    """A named range in the profile, as a context manager or a decorator.

    Outside a profiler it does nothing.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.profiler import profile, record_function
    >>> with profile() as prof:
    ...     with record_function("forward"):
    ...         y = oxmera.ones(3) * 2
    >>> [e.key for e in prof.key_averages()]
    ['oxmera::mul', 'forward']
    """

    def __init__(self, name, args=None):
        self.name = str(name)
        self.args = args
        self._event = None
        self._profiler = None

    def __enter__(self):
        prof = _core.get_profiler()
        if prof is not None:
            self._profiler = prof
            self._event = prof._begin(self.name, "range")
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            self._profiler._end(self._event)
            self._event = self._profiler = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapper


from oxmera import _exports  # noqa: E402
# Loaded on first use (oxmera's __getattr__), after oxmera's own tidying of dir().
_exports.tidy_loaded_modules()
