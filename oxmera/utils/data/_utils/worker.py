"""The loop a ``DataLoader`` worker process runs, and ``get_worker_info`` (as
``torch.utils.data._utils.worker``).

A worker reads ``(task index, indices)`` from its own index queue, fetches
and collates the batch, and puts ``(task index, batch)`` on the result queue
all workers share; the main process puts the batches back in order. ``None``
on the index queue stops the worker; so does the main process's death (the
worker checks its parent every ``MP_STATUS_CHECK_INTERVAL`` seconds while
idle), so no worker outlives the program.
"""
import os
import queue
import random

from oxmera import random as _random
from oxmera.utils.data._utils import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper
from oxmera.utils.data._utils.fetch import create_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]


class WorkerInfo:
    """What a worker process knows about itself; its attributes cannot be set.

    Attributes
    ----------
    id : int
        The worker's number, in ``[0, num_workers)``.
    num_workers : int
        How many workers the loader has.
    seed : int
        The seed of the worker's random generators (``random`` and oxmera's
        default one): the loader's base seed plus ``id``.
    dataset : Dataset
        The worker's copy of the dataset.

    Examples
    --------
    >>> from oxmera.utils.data._utils.worker import WorkerInfo
    >>> info = WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
    >>> info
    WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
    """

    __initialized = False

    def __init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, value):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")
        super().__setattr__(key, value)

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__keys)
        return f"{type(self).__name__}({fields})"


_worker_info = None


def get_worker_info():
    """The current worker's ``WorkerInfo`` in a ``DataLoader`` worker process,
    None in the main process.

    An ``IterableDataset`` uses it in ``__iter__`` to give each worker its
    own share of the data (each worker holds a copy of the dataset, and
    without sharding every sample would come once per worker).

    Examples
    --------
    >>> from oxmera.utils.data import get_worker_info
    >>> print(get_worker_info())          # in the main process
    None
    """
    return _worker_info


class _IterableDatasetStopIteration:
    """A worker's iterator of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """A persistent worker starts a new epoch (its reply acknowledges it)."""


class _ParentWatchdog:
    """Whether the process that started this worker is still alive."""

    def __init__(self):
        self.parent_pid = os.getppid()
        self.alive = True

    def is_alive(self):
        if self.alive:
            # An orphan is re-parented (to init or a subreaper): the pid changes.
            self.alive = os.getppid() == self.parent_pid
        return self.alive


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    watchdog = _ParentWatchdog()
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        _random.manual_seed(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                     drop_last)
        except Exception:
            # Reported with the first task, where the main process waits for data.
            init_exception = ExceptionWrapper(where=where)

        iteration_end = False
        while watchdog.is_alive():
            try:
                task = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, _ResumeIteration):
                data_queue.put((task, None))
                iteration_end = False
                if fetcher is not None:      # a new epoch iterates the dataset afresh
                    fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                             drop_last)
                continue
            if task is None:
                break
            if done_event.is_set() or iteration_end:
                continue        # drain what the main process sent before it stopped us
            idx, index = task
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind != "iterable":
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            data_queue.put((idx, data))
            del data, idx, index, task      # free the batch before waiting for the next task
    except KeyboardInterrupt:
        pass        # the main process gets it too and shuts the workers down
    if done_event.is_set() or not watchdog.is_alive():
        # Nobody reads the results any more: exit without flushing them (a full pipe
        # would block the exit forever).
        data_queue.cancel_join_thread()
        data_queue.close()
