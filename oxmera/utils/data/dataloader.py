"""``DataLoader``: batches of a dataset, in the main process or in worker
processes, as in ``torch.utils.data.dataloader``.

With ``num_workers > 0`` the loader starts that many processes. The main
process draws the indices from the sampler and sends each batch's indices to
one worker's index queue (round robin, at most ``prefetch_factor`` batches
ahead per worker); the workers fetch and collate and put the batches on one
result queue, and the main process yields them in the sampler's order, so
the batches are the ones ``num_workers=0`` gives. Batches cross processes
by pickling. Each worker seeds ``random`` and oxmera's default generator
with ``base_seed + worker_id``, the base seed drawn from the loader's
``generator`` once per iterator (NumPy's global legacy generator is not
seeded, as in PyTorch: seed it in ``worker_init_fn`` if the dataset uses
it). Every loader draws that seed, with workers or not, so a shuffling
loader's orders are the same for any ``num_workers``; with
``persistent_workers`` the iterator, and so the seed, is kept between
epochs, so from the second epoch on its orders differ from a
non-persistent loader's (as in PyTorch).

The workers start with the ``fork`` method on Linux when the process runs
no other thread (besides multiprocessing's queue feeders): a fork then
copies nothing another thread holds half-changed. Otherwise, and on other
systems, they start with ``spawn``, which pickles the dataset,
``collate_fn`` and ``worker_init_fn`` (they must then be importable, not
lambdas or classes defined in ``__main__`` of an interactive session).
``multiprocessing_context`` chooses the method explicitly.

No worker outlives its iterator: dropping the iterator (or the loader, with
``persistent_workers``), exhausting it, an error, or the program's end stop
them; a worker whose parent died exits by itself.
"""
import atexit
import itertools
import numbers
import os
import queue
import sys
import threading
import time
import warnings
import weakref
from typing import Generic, TypeVar

from oxmera.utils.data._utils import (MP_STATUS_CHECK_INTERVAL, ExceptionWrapper, draw_seed,
                                      keep_generator)
from oxmera.utils.data._utils.collate import default_collate, default_convert
from oxmera.utils.data._utils.fetch import create_fetcher
from oxmera.utils.data._utils.worker import (_IterableDatasetStopIteration, _ResumeIteration,
                                             _worker_loop, get_worker_info)
from oxmera.utils.data.dataset import IterableDataset
from oxmera.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


class _DatasetKind:
    Map = "map"
    Iterable = "iterable"


class _InfiniteConstantSampler(Sampler):
    """None forever: the "indices" of an IterableDataset (its fetcher counts them)."""

    def __iter__(self):
        while True:
            yield None


def _fork_is_safe():
    # multiprocessing is imported where workers are started or configured, not
    # with oxmera: it loads sockets, signals and OpenSSL (through secrets),
    # which a program loading in its own process never needs.
    import multiprocessing
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return False
    return all(t is threading.main_thread() or t.name == "QueueFeederThread"
               for t in threading.enumerate())


class DataLoader(Generic[T_co]):
    """Iterate over a dataset in batches: shuffled or by a sampler, in worker processes
    or not.

    Parameters
    ----------
    dataset : Dataset or IterableDataset
        Map-style (``__getitem__`` and ``__len__``; a list works) or
        iterable-style.
    batch_size : int or None, default 1
        Samples per batch; None yields the samples one by one, unbatched
        (through ``default_convert`` unless ``collate_fn`` is given).
    shuffle : bool, default False
        Visit the samples in a new random order at every epoch (a
        ``RandomSampler``); not with ``sampler`` or an iterable dataset.
    sampler : Sampler or iterable, optional
        The order of the indices (instead of ``shuffle``).
    batch_sampler : Sampler or iterable, optional
        Yields whole batches of indices; not with ``batch_size``,
        ``shuffle``, ``sampler`` or ``drop_last``.
    num_workers : int, default 0
        Worker processes loading the batches (0: the main process does).
    collate_fn : callable, optional
        Merges a list of samples into a batch (default ``default_collate``).
    pin_memory : bool, default False
        Accepted; there is nothing to pin on the CPU.
    drop_last : bool, default False
        Drop the last batch when it is smaller than ``batch_size``.
    timeout : float, default 0
        With workers, the seconds to wait for a batch before raising
        RuntimeError (0: wait as long as the workers live).
    worker_init_fn : callable, optional
        Called as ``worker_init_fn(worker_id)`` in each worker after seeding.
    multiprocessing_context : str or multiprocessing context, optional
        How workers start: "fork", "spawn", "forkserver" or a context
        (default: see the module docstring).
    generator : oxmera.Generator, numpy.random.Generator, int or None
        Draws the workers' base seed and, with ``shuffle``, the orders (see
        ``oxmera.utils.data.sampler``): with an int seed the sequence of
        epochs is the same each time a loader is made; with None it follows
        ``oxmera.manual_seed``.
    prefetch_factor : int, optional
        Batches each worker loads ahead (default 2 with workers; only with
        workers).
    persistent_workers : bool, default False
        Keep the workers between epochs (only with workers).
    pin_memory_device : str, default ""
        Accepted with ``pin_memory``; nothing is pinned.
    in_order : bool, default True
        With workers, yield the batches in the sampler's order; False yields
        each as soon as it is ready.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(oxmera.arange(10.0).reshape(5, 2), oxmera.arange(5))
    >>> loader = DataLoader(ds, batch_size=2)
    >>> len(loader)
    3
    >>> [y.tolist() for _, y in loader]
    [[0, 1], [2, 3], [4]]
    >>> shuffled = DataLoader(ds, batch_size=2, shuffle=True, drop_last=True, generator=0)
    >>> [len(y) for _, y in shuffled]     # 2 batches of 2 of the 5 samples, in a random order
    [2, 2]
    """

    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if isinstance(num_workers, bool) or not isinstance(num_workers, int) \
                or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers option should be a non-negative int; "
                             f"use num_workers=0 to disable multiprocessing (got "
                             f"num_workers={num_workers!r})")
        if timeout < 0:
            raise ValueError(f"DataLoader: timeout option should be non-negative, got "
                             f"timeout={timeout!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor option could only be specified in "
                             "multiprocessing. let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError(f"DataLoader: prefetch_factor option should be non-negative, got "
                             f"prefetch_factor={prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        if batch_size is not None and (isinstance(batch_size, bool) or batch_size <= 0
                                       or not isinstance(batch_size, numbers.Integral)):
            raise ValueError(f"DataLoader: batch_size should be a positive integer value "
                             f"or None, but got batch_size={batch_size!r}")

        if isinstance(dataset, IterableDataset):
            kind = _DatasetKind.Iterable
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle!r}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler!r}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler="
                                 f"{batch_sampler!r}")
        else:
            kind = _DatasetKind.Map
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and is "
                             "mutually exclusive with drop_last")

        self._generator = keep_generator(generator, "DataLoader")
        if sampler is None:
            if kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=self._generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_size = int(batch_size)
            batch_sampler = BatchSampler(sampler, batch_size, bool(drop_last))

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._dataset_kind = kind
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        if num_workers > 0:
            self.check_worker_number_rationality()

    # -- configuration ------------------------------------------------------------------

    @property
    def multiprocessing_context(self):
        """The multiprocessing context the workers start with (None: chosen at each start)."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            import multiprocessing      # not at import: see _fork_is_safe
            if self.num_workers == 0:
                raise ValueError(f"DataLoader: multiprocessing_context can only be used with "
                                 f"multi-process loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"DataLoader: multiprocessing_context option should "
                                     f"specify a valid start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(f"DataLoader: multiprocessing_context option should be a valid "
                                f"context object or a string specifying the start method, but "
                                f"got multiprocessing_context={context!r}")
        self._multiprocessing_context = context

    def _worker_context(self):
        if self._multiprocessing_context is not None:
            return self._multiprocessing_context
        import multiprocessing          # not at import: see _fork_is_safe
        return multiprocessing.get_context("fork" if _fork_is_safe() else "spawn")

    def __setattr__(self, attr, value):
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                          "dataset", "persistent_workers"):
            raise ValueError(f"DataLoader: {attr} attribute should not be set after "
                             f"DataLoader is initialized")
        super().__setattr__(attr, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def check_worker_number_rationality(self):
        """Warn (as PyTorch) when ``num_workers`` exceeds the CPUs this process may use."""
        try:
            cpus = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = os.cpu_count()
        if cpus is not None and self.num_workers > cpus:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. Our suggested max number of worker in current system is "
                          f"{cpus}, which is smaller than what this DataLoader is going to "
                          f"create. Please be aware that excessive worker creation might get "
                          f"DataLoader running slow or even freeze, lower the worker number to "
                          f"avoid potential slowness/freeze if necessary.", stacklevel=3)

    # -- iteration ----------------------------------------------------------------------

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self):
        if not self.persistent_workers or self.num_workers == 0:
            return self._get_iterator()
        if self._iterator is None or self._iterator._shutdown:
            # (shut down: its workers died or were stopped; start new ones)
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else -(-length // self.batch_size))
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        # The sampler's own draws happen at its first index, after this seed's (as in PyTorch).
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = draw_seed(loader._generator)
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            warnings.warn(f"Length of IterableDataset {self._dataset} was reported to be "
                          f"{self._IterableDataset_len_called} (when accessing len(dataloader)), "
                          f"but {self._num_yielded} samples have been fetched. For "
                          f"multiprocessing data-loading, this could be caused by not properly "
                          f"configuring the IterableDataset replica at each worker.",
                          stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._dataset_fetcher = create_fetcher(self._dataset_kind, self._dataset,
                                               self._auto_collation, self._collate_fn,
                                               self._drop_last)

    def _next_data(self):
        return self._dataset_fetcher.fetch(self._next_index())


#: The multi-process iterators not yet shut down, stopped at the program's end
#: (before multiprocessing's own exit handler, which would only terminate them).
_live_iterators = weakref.WeakSet()


@atexit.register
def _shutdown_live_iterators():
    for iterator in list(_live_iterators):
        iterator._shutdown_workers()


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        context = loader._worker_context()
        self._worker_result_queue = context.Queue()
        self._workers_done_event = context.Event()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        self._stop_workers = weakref.finalize(
            self, _stop_workers, os.getpid(), self._workers, self._index_queues,
            self._worker_result_queue, self._workers_done_event)
        _live_iterators.add(self)
        try:
            for worker_id in range(self._num_workers):
                index_queue = context.Queue()
                # A worker gone before reading its queue must not block our exit.
                index_queue.cancel_join_thread()
                worker = context.Process(
                    target=_worker_loop, daemon=True,
                    args=(self._dataset_kind, self._dataset, index_queue,
                          self._worker_result_queue, self._workers_done_event,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, loader.worker_init_fn, worker_id,
                          self._num_workers))
                self._index_queues.append(index_queue)
                worker.start()
                self._workers.append(worker)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0          # the next task's number
        self._rcvd_idx = 0          # the next task to yield (in order)
        # task number -> (worker_id,) while pending, (worker_id, data) once arrived early
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # Persistent workers start the epoch over; results of the last epoch's
            # unfinished tasks arrive before the acknowledgements and are dropped.
            for index_queue in self._index_queues:
                index_queue.put(_ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                idx, _ = self._get_data()
                if isinstance(idx, _ResumeIteration):
                    waiting -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return          # every worker's iterable has ended: nothing more to fetch
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout):
        try:
            return True, self._worker_result_queue.get(timeout=timeout)
        except queue.Empty:
            pass
        dead = [w for w, alive in zip(self._workers, self._workers_status)
                if alive and not w.is_alive()]
        if dead:
            details = ", ".join(f"pid {w.pid} exit code {w.exitcode}" for w in dead)
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader worker(s) exited unexpectedly ({details})")
        return False, None

    def _get_data(self):
        if self._timeout > 0:
            deadline = time.monotonic() + self._timeout
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                ok, data = self._try_get_data(min(left, MP_STATUS_CHECK_INTERVAL))
                if ok:
                    return data
        while True:
            ok, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if ok:
                return data

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]     # its worker's iterable ended
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process_data(info[1])
            if self._shutdown:
                raise RuntimeError("DataLoader: the iterator's workers were shut down")
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
            elif idx == self._rcvd_idx or not self._in_order:
                del self._task_info[idx]
                if idx == self._rcvd_idx:
                    self._rcvd_idx += 1
                return self._process_data(data)
            else:
                self._task_info[idx] += (data,)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id):
        # A persistent worker stays, idle until the next epoch's _ResumeIteration.
        self._workers_status[worker_id] = False
        if not self._persistent_workers:
            self._index_queues[worker_id].put(None)

    def _shutdown_workers(self):
        if not self._shutdown:
            self._shutdown = True
            self._stop_workers()


def _stop_workers(owner_pid, workers, index_queues, result_queue, done_event):
    """Stop an iterator's workers: ask them to exit, then terminate the ones that do not.

    The iterator's weakref.finalize calls it when the iterator is collected or
    shut down, or at the program's end. Being the finalizer's argument keeps
    the queues reachable, so a garbage-collected iterator still has working
    queues here (collected with it, their feeder threads would already be
    closed, and the workers would never get the None that stops them).
    """
    if os.getpid() != owner_pid:
        return          # a forked worker inherited the iterator: not its workers to stop
    try:
        done_event.set()
        for index_queue in index_queues:
            index_queue.put(None)
        for worker in workers:
            worker.join(timeout=MP_STATUS_CHECK_INTERVAL)
    finally:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
                worker.join()
        for index_queue in index_queues:
            index_queue.close()
        result_queue.cancel_join_thread()
        result_queue.close()
