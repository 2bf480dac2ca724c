"""The DataLoader's worker processes: the loop each one runs, its WorkerInfo,
and how an exception inside a worker travels back to the main process."""
from __future__ import annotations

import os
import queue
import sys
from typing import Any, Callable, Optional

import cgrad

_worker_info: Optional["WorkerInfo"] = None
_POLL_S = 0.1  # how often an idle worker checks whether it should exit


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    __initialized = False

    def __init__(self, **kwargs: Any) -> None:
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs.keys())
        self.__initialized = True

    def __setattr__(self, key: str, val: Any) -> None:
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info() -> Optional[WorkerInfo]:
    """The current worker's WorkerInfo in a DataLoader worker process, None in the main process."""
    return _worker_info


class _ExceptionWrapper:
    """An exception raised in a worker, with its traceback as text (exceptions themselves may not pickle)."""

    def __init__(self, where: str) -> None:
        import pickle
        import traceback
        exc_type, exc, tb = sys.exc_info()
        try:
            pickle.dumps(exc_type)
            self.exc_type: type = exc_type  # type: ignore[assignment]
        except Exception:
            self.exc_type = RuntimeError
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self) -> None:
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)  # KeyError shows its argument with repr(): keep the newlines
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class _KeyErrorMessage(str):
    """A message whose repr is itself, so a KeyError's traceback text stays readable."""

    def __repr__(self) -> str:
        return str(self)


class _IterableEnd:
    """Sent by a worker whose IterableDataset replica is exhausted for the epoch."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


def _fetch(dataset: Any, index: Any, auto_collation: bool, collate_fn: Callable[[Any], Any]) -> Any:
    if auto_collation:
        getitems = getattr(dataset, "__getitems__", None)
        data = getitems(index) if callable(getitems) else [dataset[i] for i in index]
    else:
        data = dataset[index]
    return collate_fn(data)


def _fetch_iterable(it: Any, batch_size: Optional[int], drop_last: bool,
                    collate_fn: Callable[[Any], Any]) -> Any:
    if batch_size is None:
        return collate_fn(next(it))
    batch = []
    for _ in range(batch_size):
        try:
            batch.append(next(it))
        except StopIteration:
            break
    if not batch or (drop_last and len(batch) < batch_size):
        raise StopIteration
    return collate_fn(batch)


def _worker_loop(is_iterable: bool, dataset: Any, index_queue: Any, data_queue: Any, done_event: Any,
                 parent_pid: int, auto_collation: bool,
                 batch_size: Optional[int], collate_fn: Callable[[Any], Any], drop_last: bool, base_seed: int,
                 init_fn: Optional[Callable[[int], None]], worker_id: int, num_workers: int) -> None:
    global _worker_info
    import random
    from ... import multiprocessing as cg_multiprocessing
    cg_multiprocessing.init_reductions()  # batches go back as shared-memory handles
    seed = base_seed + worker_id
    random.seed(seed)
    cgrad.manual_seed(seed)
    cgrad.set_num_threads(1)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed % (2 ** 32))
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_error: Optional[_ExceptionWrapper] = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        init_error = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
    it_epoch, it, exhausted = -1, None, False
    try:
        while True:
            try:
                request = index_queue.get(timeout=_POLL_S)
            except queue.Empty:
                if done_event.is_set() or os.getppid() != parent_pid:
                    break
                continue
            if request is None or done_event.is_set():
                break
            epoch, task_idx, index = request
            data: Any
            if init_error is not None:
                data, init_error = init_error, None
            elif is_iterable:
                if epoch != it_epoch:
                    it_epoch, exhausted = epoch, False
                    try:
                        it = iter(dataset)
                    except Exception:
                        data_queue.put((epoch, task_idx,
                                        _ExceptionWrapper(f"in DataLoader worker process {worker_id}")))
                        exhausted = True
                        continue
                if exhausted:
                    data = _IterableEnd(worker_id)
                else:
                    try:
                        data = _fetch_iterable(it, batch_size, drop_last, collate_fn)
                    except StopIteration:
                        exhausted = True
                        data = _IterableEnd(worker_id)
                    except Exception:
                        data = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
            else:
                try:
                    data = _fetch(dataset, index, auto_collation, collate_fn)
                except Exception:
                    data = _ExceptionWrapper(f"in DataLoader worker process {worker_id}")
            data_queue.put((epoch, task_idx, data))
            del data
    except KeyboardInterrupt:
        pass
    data_queue.cancel_join_thread()
    data_queue.close()
