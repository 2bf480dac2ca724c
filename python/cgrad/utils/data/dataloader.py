"""DataLoader: batches of a dataset, in the main process or in worker processes."""
from __future__ import annotations

import itertools
import queue
import os
import time
import warnings
import weakref
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Union

import cgrad

from . import _worker
from ._worker import get_worker_info  # noqa: F401  (torch.utils.data.dataloader.get_worker_info)
from ._collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler


class _InfiniteConstantSampler(Sampler[None]):
    """The index sampler of an IterableDataset: the dataset itself decides when to stop."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader:
    """Iterates over a dataset in batches (torch.utils.data.DataLoader): sampling, batching,
    collation, and optional worker processes (num_workers > 0)."""

    def __init__(self, dataset: Dataset[Any], batch_size: Optional[int] = 1, shuffle: Optional[bool] = None,
                 sampler: Union[Sampler[Any], Iterable[Any], None] = None,
                 batch_sampler: Union[Sampler[List[Any]], Iterable[List[Any]], None] = None,
                 num_workers: int = 0, collate_fn: Optional[Callable[[List[Any]], Any]] = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Optional[Callable[[int], None]] = None, multiprocessing_context: Any = None,
                 generator: Optional[Any] = None, *, prefetch_factor: Optional[int] = None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if not in_order:
            raise NotImplementedError("DataLoader: in_order=False (out-of-order batches) is not supported")
        if pin_memory:  # with a GPU, batches are not copied: cgrad has no pinned memory (Tensor.pin_memory)
            from ... import cuda
            if not cuda.is_available():
                warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                              "then device pinned memory won't be used.")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        if isinstance(multiprocessing_context, str):
            import multiprocessing
            multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
        self.multiprocessing_context = multiprocessing_context

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, "
                                 f"but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, "
                                 f"but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            self._dataset_kind = "map"
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                 "sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator: Optional[_MultiProcessingIter] = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessingIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _MultiProcessingIter(self)

    def __len__(self) -> int:
        if self._dataset_kind == "iterable":
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)

    def _base_seed(self) -> int:
        return int(cgrad.randint(0, 2 ** 62, (), dtype=cgrad.int64, generator=self.generator).item())


class _SingleProcessIter:
    """Batches fetched in the calling process."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = loader
        self._len = None
        self._auto_collation = loader._auto_collation
        self._collate_fn = loader.collate_fn
        self._dataset = loader.dataset
        if loader._dataset_kind == "iterable":
            self._it: Any = iter(loader.dataset)  # type: ignore[call-overload]
            self._sampler_iter: Any = None
        else:
            self._sampler_iter = iter(loader._index_sampler)

    def __iter__(self) -> "_SingleProcessIter":
        return self

    def __len__(self) -> int:
        return len(self._loader)

    def __next__(self) -> Any:
        loader = self._loader
        if self._sampler_iter is None:
            return _worker._fetch_iterable(self._it, loader.batch_size, loader.drop_last, self._collate_fn)
        index = next(self._sampler_iter)
        return _worker._fetch(self._dataset, index, self._auto_collation, self._collate_fn)


class _MultiProcessingIter:
    """Batches fetched by worker processes, returned in sampler order."""

    def __init__(self, loader: DataLoader) -> None:
        import multiprocessing  # only loaders with workers need it
        from ... import multiprocessing as cg_multiprocessing
        cg_multiprocessing.init_reductions()  # batches come back through shared memory
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor or 0
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._is_iterable = loader._dataset_kind == "iterable"
        self._data_queue = ctx.Queue()
        self._index_queues: List[Any] = []
        self._workers: List[Any] = []
        self._shutdown = False
        self._done_event = ctx.Event()
        base_seed = loader._base_seed()
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(target=_worker._worker_loop,
                            args=(self._is_iterable, loader.dataset, index_queue, self._data_queue, self._done_event, os.getpid(),
                                  loader._auto_collation, loader.batch_size, loader.collate_fn, loader.drop_last,
                                  base_seed, loader.worker_init_fn, i, self._num_workers),
                            daemon=True)
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._epoch = 0
        self._reset(loader)

    def _reset(self, loader: DataLoader) -> None:
        self._epoch += 1
        self._loader = weakref.ref(loader)  # a persistent loader holds its iterator: no cycle
        self._sampler_iter = iter(loader._index_sampler)
        if self._is_iterable:
            self._sampler_iter = itertools.repeat(loader.batch_size)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info: Dict[int, tuple] = {}
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch * self._num_workers):
            self._try_put_index()

    def __iter__(self) -> "_MultiProcessingIter":
        return self

    def __len__(self) -> int:
        loader = self._loader()
        if loader is None:
            raise TypeError("the DataLoader of this iterator is gone")
        return len(loader)

    def _try_put_index(self) -> None:
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_cycle)
            if self._workers_status[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._epoch, self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._send_idx += 1

    def _get_data(self) -> Any:
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            # poll each second for dead workers, and never past the deadline
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            try:
                return self._data_queue.get(timeout=wait)
            except queue.Empty:
                dead = [w.pid for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {', '.join(map(str, dead))}) exited unexpectedly")
                if deadline is not None and time.monotonic() >= deadline:
                    self._shutdown_workers(join_s=0.0)  # a worker that is late may be hung: don't wait for it
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def __next__(self) -> Any:
        if self._shutdown:
            raise StopIteration
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers(graceful=True)
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            epoch, idx, data = self._get_data()
            if epoch != self._epoch or idx not in self._task_info:
                continue  # a result of an earlier epoch, or of a task already skipped
            if isinstance(data, _worker._IterableEnd):
                self._workers_status[data.worker_id] = False
                del self._task_info[idx]
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process(data)

    def _process(self, data: Any) -> Any:
        self._try_put_index()
        if isinstance(data, _worker._ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self, graceful: bool = False, join_s: float = 5.0) -> None:
        # Idle workers poll done_event; `graceful` also wakes them at once with None. Only the
        # normal end of an epoch does that: from __del__ (which the garbage collector may run
        # inside a put on the same queue) a put could deadlock. A worker still alive after
        # join_s seconds is terminated.
        if self._shutdown:
            return
        self._shutdown = True
        self._done_event.set()
        if graceful:
            for q in self._index_queues:
                q.put(None)
        for w in self._workers:
            w.join(timeout=join_s)
            if w.is_alive():
                w.terminate()
                w.join()
        for q in self._index_queues:
            q.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:
            pass
