"""cgrad.multiprocessing.spawn / start_processes: run fn(i, *args) in nprocs processes and
join them; an exception in a child is raised in the parent as ProcessRaisedException
(with the child's traceback), a child killed by a signal or exiting nonzero as
ProcessExitedException, so a dead worker never leaves the parent waiting."""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import traceback
from typing import Any, Callable, List, Optional, Tuple


class ProcessException(Exception):
    __slots__ = ("error_index", "pid")

    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised an exception: its traceback is the message."""


class ProcessExitedException(ProcessException):
    """A child exited with a nonzero code or was killed by a signal."""
    __slots__ = ("exit_code", "signal_name")

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: Optional[str] = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn: Callable[..., Any], i: int, args: Tuple[Any, ...], error_queue: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    """The processes of one spawn; join() waits for them, raising the first failure."""

    def __init__(self, processes: List[Any], error_queues: List[Any]) -> None:
        self.error_queues = error_queues
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> List[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: Optional[float] = None, grace_period: Optional[float] = None) -> bool:
        """True when every process has ended successfully; raises on the first failure (and
        terminates the others); False when timeout passes first."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        failed = None
        for s in ready:
            i = self.sentinels.pop(s)
            p = self.processes[i]
            p.join()
            if p.exitcode != 0:
                failed = i
                break
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join(grace_period)
        p = self.processes[failed]
        if self.error_queues[failed].empty():
            code = p.exitcode
            if code is not None and code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {failed} terminated with signal {name}", failed, p.pid,
                                             code, name)
            raise ProcessExitedException(f"process {failed} terminated with exit code {code}", failed, p.pid,
                                         code)
        tb = self.error_queues[failed].get()
        raise ProcessRaisedException(f"\n\n-- Process {failed} terminated with the following error:\n{tb}",
                                     failed, p.pid)


class SpawnContext(ProcessContext):
    """The context spawn() returns (join=False)."""


def start_processes(fn: Callable[..., Any], args: Tuple[Any, ...] = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn") -> Optional[ProcessContext]:
    """torch.multiprocessing.start_processes."""
    ctx = multiprocessing.get_context(start_method)
    error_queues, processes = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        error_queues.append(q)
        processes.append(p)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: Tuple[Any, ...] = (), nprocs: int = 1, join: bool = True,
          daemon: bool = False, start_method: str = "spawn") -> Optional[ProcessContext]:
    """torch.multiprocessing.spawn: start_processes with the spawn start method."""
    if start_method != "spawn":
        raise ValueError(f"cgrad.multiprocessing.spawn only supports the 'spawn' start method (got "
                         f"{start_method!r}); use start_processes for the others")
    return start_processes(fn, args, nprocs, join, daemon, start_method)
