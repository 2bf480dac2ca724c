"""Timing of callables: warm-up, a call count per repeat sized to a target time, several
repeats interleaved across libraries (cgrad, PyTorch, NumPy, the C limit) so that a burst
of load from other processes hits all of them alike, then median / min / max per call."""
from __future__ import annotations

import time
import timeit
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Union

from bench.record import Result

# A benchmarked operation: a callable taking no argument, or a statement (compiled into
# timeit's loop, so a call costs no Python function frame: fairer for microsecond ops)
# with the namespace it runs in.
Stmt = Union[Callable[[], object], "StmtIn"]


@dataclass
class StmtIn:
    """A statement and the names it uses, e.g. StmtIn("a + b", {"a": x, "b": y})."""
    code: str
    names: Dict[str, object]


@dataclass
class Settings:
    """How long to measure: target seconds per repeat, repeats, warm-up calls, call cap."""
    repeat_time: float = 0.03
    repeats: int = 7
    warmup: int = 2
    max_number: int = 1_000_000

    @classmethod
    def quick(cls) -> "Settings":
        return cls(repeat_time=0.015, repeats=3, warmup=1)


# A pause before each library's timed round: PyTorch's OpenMP workers keep spinning for
# tens of milliseconds after its op returns, and on a 2-core machine they took a core from
# the library timed next (demo CNN step: cgrad 23.7 ms timed alone, 45 ms right after
# PyTorch's step, 28 ms after a 50 ms pause; PyTorch's own time unchanged).
SETTLE_S = 0.05

# timeit switches the garbage collector off while timing; a training loop runs with it on,
# so the timers turn it back on (the collections an op's objects cause are part of its cost).
_GC_ON = "import gc; gc.enable()"


def _timer(op: Stmt) -> timeit.Timer:
    if isinstance(op, StmtIn):
        return timeit.Timer(op.code, setup=_GC_ON, globals=dict(op.names))
    return timeit.Timer(op, setup=_GC_ON)


def _calibrate(timer: timeit.Timer, settings: Settings, per_call: float) -> int:
    """Calls per repeat so that a repeat lasts about settings.repeat_time, starting from
    the warm-up's estimate of one call."""
    number = 1
    while per_call * number < settings.repeat_time * 0.2 and number < settings.max_number:
        number = min(settings.max_number, max(number * 10, int(settings.repeat_time * 0.2 / max(per_call, 1e-9))))
        per_call = timer.timeit(number) / number
    return int(min(settings.max_number, max(1, round(settings.repeat_time / max(per_call, 1e-9)))))


# Below this time per call, each repeat starts with one untimed call, which brings the
# library's data back into cache after the other libraries ran and lets their threads go
# idle; slower calls are not affected by either, and it would only cost time.
PRE_CALL_BELOW = 0.01


def measure(ops: Dict[str, Stmt], settings: Settings, *, suite: str, case: str,
            unit: str = "s", number: Optional[int] = None) -> Dict[str, Result]:
    """Times each library's op: warm-up calls (the last one estimates a call), a call count
    per repeat, then `settings.repeats` rounds, each round timing every library once.
    Returns per-library results in seconds per call. `number` fixes the calls per repeat
    instead of calibrating."""
    timers = {lib: _timer(op) for lib, op in ops.items()}
    numbers: Dict[str, int] = {}
    estimates: Dict[str, float] = {}
    for lib, timer in timers.items():
        for _ in range(max(1, settings.warmup)):
            estimates[lib] = timer.timeit(1)
        numbers[lib] = number if number is not None else _calibrate(timer, settings, estimates[lib])
    samples: Dict[str, List[float]] = {lib: [] for lib in timers}
    for _ in range(settings.repeats):
        for lib, timer in timers.items():
            time.sleep(SETTLE_S)
            if estimates[lib] < PRE_CALL_BELOW:
                timer.timeit(1)
            samples[lib].append(timer.timeit(numbers[lib]) / numbers[lib])
    return {lib: Result.from_samples(suite, case, lib, unit, samples[lib], numbers[lib])
            for lib in timers}
