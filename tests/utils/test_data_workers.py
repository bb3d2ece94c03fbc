"""DataLoader with worker processes: the same batches as num_workers=0, worker
info and seeding, iterable datasets sharded by the user, worker exceptions
with their traceback, timeout, dead workers, persistent workers, and no
worker outliving its iterator or the program.

Every test here is bounded: an alarm fails a test that hangs (and loaders
use ``timeout``), and the tests of the program's end run it in a subprocess
with a timeout.
"""
import gc
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import oxmera
from oxmera.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info
from oxmera.utils.data import dataloader as _dataloader

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGALRM") or sys.platform != "linux",
                                reason="worker tests are bounded with SIGALRM (Linux)")
FORK = "fork"
X = oxmera.arange(40.0).reshape(20, 2)
Y = oxmera.arange(20)


@pytest.fixture(autouse=True)
def _bounded():
    def hung(signum, frame):
        raise TimeoutError("a DataLoader worker test hung")
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _alive(pid):
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pids, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


class Records(Dataset):
    """Samples of several types, and where and with what seed they were made."""

    def __len__(self):
        return 13

    def __getitem__(self, i):
        info = get_worker_info()
        return {"x": np.full(2, i, dtype=np.float32), "i": i, "name": f"s{i}",
                "worker": -1 if info is None else info.id, "pid": os.getpid()}


class Raises(Dataset):
    def __init__(self, error, at=3):
        self.error, self.at = error, at

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == self.at:
            raise self.error
        return i


class Shards(IterableDataset):
    """range(n), split between the workers by get_worker_info (the user's job)."""

    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class NeedsTwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


def _plain(batches):
    """Batches as plain Python values, to compare loaders."""
    out = []
    for b in batches:
        if isinstance(b, dict):
            out.append({k: v for k, v in _plain_items(b.items()) if k not in ("worker", "pid")})
        elif isinstance(b, (list, tuple)):
            out.append([v.tolist() if isinstance(v, oxmera.Tensor) else v for v in b])
        else:
            out.append(b.tolist() if isinstance(b, oxmera.Tensor) else b)
    return out


def _plain_items(items):
    for k, v in items:
        yield k, (v.tolist() if isinstance(v, oxmera.Tensor) else v)


@pytest.mark.parametrize("kwargs", [dict(batch_size=4, shuffle=True), dict(batch_size=3),
                                    dict(batch_size=4, shuffle=True, drop_last=True),
                                    dict(batch_size=None), dict(batch_sampler=[[5], [1, 2, 0]])])
def test_workers_give_the_batches_of_the_main_process(kwargs):
    for dataset in (Records(), TensorDataset(X, Y)):
        main = list(DataLoader(dataset, generator=11, **kwargs))
        workers = list(DataLoader(dataset, generator=11, num_workers=2, timeout=10,
                                  multiprocessing_context=FORK, **kwargs))
        assert _plain(workers) == _plain(main) and len(main) > 0
    batches = list(DataLoader(Records(), batch_size=3, num_workers=2, timeout=10,
                              multiprocessing_context=FORK))
    assert {int(w) for b in batches for w in b["worker"]} == {0, 1}
    assert all(int(p) != os.getpid() for b in batches for p in b["pid"])


def test_out_of_order_yields_the_same_batches():
    kwargs = dict(batch_size=2, num_workers=2, timeout=10, multiprocessing_context=FORK)
    ordered = _plain(DataLoader(TensorDataset(Y), **kwargs))
    unordered = _plain(DataLoader(TensorDataset(Y), in_order=False, prefetch_factor=4, **kwargs))
    assert sorted(map(str, unordered)) == sorted(map(str, ordered))


def _seed_sample(i):
    info = get_worker_info()
    return (info.id, info.num_workers, info.seed, random.random(), oxmera.rand(1).item(),
            type(info.dataset).__name__)


class SeedProbe(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return _seed_sample(i) + (os.environ.get("OXMERA_TEST_INIT"),)


def _init(worker_id):
    os.environ["OXMERA_TEST_INIT"] = f"init {worker_id}"


def test_worker_info_seeds_and_worker_init_fn():
    assert get_worker_info() is None

    def run(seed):
        loader = DataLoader(SeedProbe(), batch_size=None, num_workers=2, timeout=10,
                            generator=oxmera.Generator().manual_seed(seed),
                            worker_init_fn=_init, multiprocessing_context=FORK)
        return list(loader)
    samples = run(5)
    assert samples == run(5)                     # reproducible from the loader's generator
    assert samples != run(6)
    by_worker = {s[0]: s for s in samples}
    assert set(by_worker) == {0, 1}
    assert all(s[1] == 2 and s[5] == "SeedProbe" for s in samples)
    assert by_worker[1][2] == by_worker[0][2] + 1           # seed = base_seed + worker id
    assert by_worker[0][3] != by_worker[1][3] and by_worker[0][4] != by_worker[1][4]
    assert all(s[6] == f"init {s[0]}" for s in samples)
    assert "OXMERA_TEST_INIT" not in os.environ


def test_worker_info_cannot_be_changed():
    from oxmera.utils.data._utils.worker import WorkerInfo
    info = WorkerInfo(id=1, num_workers=2, seed=3, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo"):
        info.id = 0


def test_iterable_dataset_sharding_is_the_users_job():
    kwargs = dict(num_workers=2, timeout=10, multiprocessing_context=FORK)
    sharded = [i for b in DataLoader(Shards(11), batch_size=3, **kwargs) for i in b.tolist()]
    assert sorted(sharded) == list(range(11))
    unsharded = [int(i) for i in DataLoader(Shards(5, shard=False), batch_size=None, **kwargs)]
    assert sorted(unsharded) == sorted(list(range(5)) * 2)       # every worker yields it all
    dropped = list(DataLoader(Shards(11), batch_size=3, drop_last=True, **kwargs))
    assert all(len(b) == 3 for b in dropped) and len(dropped) == 3   # 6 + 5 samples: 2 + 1


@pytest.mark.parametrize("error, raised, text", [
    (KeyError("missing key"), KeyError, "missing key"),
    (ValueError("bad sample 3"), ValueError, "bad sample 3"),
    (NeedsTwoArgs(1, 2), RuntimeError, "NeedsTwoArgs"),
])
def test_a_worker_exception_is_raised_with_its_traceback(error, raised, text):
    loader = DataLoader(Raises(error), batch_size=2, num_workers=2, timeout=10,
                        multiprocessing_context=FORK)
    with pytest.raises(raised) as caught:
        list(loader)
    message = str(caught.value)
    assert "in DataLoader worker process" in message and text in message
    assert "Traceback (most recent call last)" in message and "__getitem__" in message


def test_a_worker_init_fn_exception_is_raised():
    def init(worker_id):
        raise OSError(f"cannot open shard {worker_id}")
    loader = DataLoader(TensorDataset(Y), num_workers=1, worker_init_fn=init, timeout=10,
                        multiprocessing_context=FORK)
    with pytest.raises(OSError, match="cannot open shard 0"):
        list(loader)


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(0.8)         # past the loader's timeout; the shutdown then waits for it
        return i


def test_timeout_raises_runtime_error():
    start = time.monotonic()
    it = iter(DataLoader(Slow(), num_workers=1, timeout=0.3, multiprocessing_context=FORK))
    pids = [w.pid for w in it._workers]
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        next(it)
    assert time.monotonic() - start < 5
    del it
    gc.collect()
    assert _wait_gone(pids)


class Dies(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        os._exit(7)


def test_a_dead_worker_is_an_error():
    with pytest.raises(RuntimeError, match="exited unexpectedly.*exit code 7"):
        list(DataLoader(Dies(), num_workers=1, multiprocessing_context=FORK))


class Pids(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return os.getpid()


def _pids(loader):
    return {int(p) for p in loader}


def test_persistent_workers_are_reused_across_epochs():
    kwargs = dict(batch_size=None, num_workers=2, timeout=10, multiprocessing_context=FORK)
    persistent = DataLoader(Pids(), persistent_workers=True, **kwargs)
    first = _pids(persistent)
    assert len(first) == 2 and _pids(persistent) == first
    it = iter(persistent)
    next(it)                                       # an epoch left unfinished
    assert _pids(persistent) == first              # the next one starts over, same workers
    fresh = DataLoader(Pids(), **kwargs)
    assert _pids(fresh).isdisjoint(_pids(fresh))   # without: new workers at every epoch
    stream = DataLoader(Shards(9), batch_size=2, persistent_workers=True, num_workers=2,
                        timeout=10, multiprocessing_context=FORK)
    for _ in range(3):
        assert sorted(i for b in stream for i in b.tolist()) == list(range(9))
    workers = [w.pid for w in persistent._iterator._workers]
    persistent._iterator._shutdown_workers()      # as after a dead worker: new ones next
    assert _wait_gone(workers)
    again = _pids(persistent)
    assert len(again) == 2 and again.isdisjoint(first)
    workers = [w.pid for w in persistent._iterator._workers]
    del persistent, it
    gc.collect()
    assert _wait_gone(workers)


def test_dropping_an_iterator_mid_epoch_stops_its_workers():
    it = iter(DataLoader(TensorDataset(Y), batch_size=2, num_workers=2, timeout=10,
                         multiprocessing_context=FORK))
    next(it)
    pids = [w.pid for w in it._workers]
    assert all(_alive(p) for p in pids)
    del it
    gc.collect()
    assert _wait_gone(pids)


def test_an_exhausted_iterator_stops_its_workers():
    it = iter(DataLoader(TensorDataset(Y), batch_size=5, num_workers=2, timeout=10,
                         multiprocessing_context=FORK))
    pids = [w.pid for w in it._workers]
    assert len(list(it)) == 4
    assert _wait_gone(pids)


def test_fork_by_default_only_without_other_threads():
    assert _dataloader._fork_is_safe()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not _dataloader._fork_is_safe()
        context = DataLoader(TensorDataset(Y), num_workers=1)._worker_context()
        assert context.get_start_method() == "spawn"
    finally:
        stop.set()
        thread.join()
    assert DataLoader(TensorDataset(Y), num_workers=1)._worker_context().get_start_method() \
        == "fork"


def test_spawned_workers_give_the_same_batches():
    kwargs = dict(batch_size=4, shuffle=True, generator=3)
    main = _plain(DataLoader(Records(), **kwargs))
    spawned = _plain(DataLoader(Records(), num_workers=1, timeout=20,
                                multiprocessing_context="spawn", **kwargs))
    assert spawned == main


# -- the program's end ----------------------------------------------------------------------

# The program imports the oxmera this interpreter has (the installed one, as the tests'
# own imports do: under tox, the wheel, not the source tree, which has no compiled core).
_PROGRAM = textwrap.dedent("""
    import os, signal, sys
    import oxmera
    from oxmera.utils.data import DataLoader, TensorDataset

    # Batches of 400 kB: the unread ones fill the result pipe, which must not keep a
    # worker from exiting.
    loader = DataLoader(TensorDataset(oxmera.zeros(100, 50_000)), batch_size=2,
                        num_workers=2, persistent_workers={persistent})
    it = iter(loader)
    next(it)
    print(" ".join(str(w.pid) for w in it._workers), flush=True)
    if {kill}:
        os.kill(os.getpid(), signal.SIGKILL)
""")


def test_no_worker_outlives_the_program():
    """A program ends with an iterator mid-epoch (plain or persistent), or is killed:
    its workers are gone (killed, the program cannot stop them: they notice their
    parent is gone). The three programs run at once, to keep the test short."""
    cases = [(False, False), (True, False), (False, True)]
    runs = [subprocess.Popen([sys.executable, "-c",
                              _PROGRAM.format(persistent=persistent, kill=kill)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for persistent, kill in cases]
    try:
        outputs = [run.communicate(timeout=20) for run in runs]
    finally:
        for run in runs:
            run.kill()
    left = []
    for (persistent, kill), run, (out, err) in zip(cases, runs, outputs):
        assert run.returncode == (-signal.SIGKILL if kill else 0), err
        pids = [int(p) for p in out.split()]
        assert len(pids) == 2
        if not _wait_gone(pids, 10.0):
            left.append((persistent, kill, [p for p in pids if _alive(p)]))
    for _, _, pids in left:            # a failure must not leave them running either
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
    assert not left, f"workers outlived their program (persistent, killed, pids): {left}"


def _value(batch):
    return batch.tolist() if hasattr(batch, "tolist") else batch


class _ShardsVia:
    """range(n) sharded with the given library's get_worker_info (torch's or ours)."""

    def __init__(self, n, worker_info):
        self.n, self.worker_info = n, worker_info

    def __iter__(self):
        info = self.worker_info()
        return iter(range(info.id, self.n, info.num_workers))


class _OurShards(_ShardsVia, IterableDataset):
    pass


def test_worker_batches_in_pytorchs_order():
    torch = pytest.importorskip("torch")
    tdata = torch.utils.data
    class _TorchShards(_ShardsVia, tdata.IterableDataset):
        pass
    for kwargs in [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                   dict(batch_size=None)]:
        ours = DataLoader(_OurShards(11, get_worker_info), num_workers=2, timeout=10,
                          multiprocessing_context=FORK, **kwargs)
        theirs = tdata.DataLoader(_TorchShards(11, tdata.get_worker_info), num_workers=2,
                                  timeout=10, multiprocessing_context=FORK, **kwargs)
        assert [_value(b) for b in ours] == [_value(b) for b in theirs]
    for kwargs in [dict(batch_size=4), dict(batch_sampler=[[3, 1], [0], [2, 2, 2]])]:
        ours = DataLoader(list(range(9)), num_workers=2, multiprocessing_context=FORK,
                          timeout=10, **kwargs)
        theirs = tdata.DataLoader(list(range(9)), num_workers=2, timeout=10,
                                  multiprocessing_context=FORK, **kwargs)
        assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]
