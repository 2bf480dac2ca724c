"""cgrad.profiler: the op-level profiler (torch.profiler's CPU subset).

The engine records every op call, autograd node and `record_function` range
with its nesting, CPU time, input shapes / dtypes, FLOPs (GEMM-like ops and
convolutions) and bytes allocated (Note [Profiler] in src/core/profiler.c);
this module turns those events into PyTorch-style tables and Chrome traces.

    with cgrad.profiler.profile(record_shapes=True) as prof:
        loss = model(x).sum(); loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")
"""
from __future__ import annotations

import contextlib
import enum
import functools
import json
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, TypeVar

from . import _C

__all__ = ["profile", "record_function", "ProfilerActivity", "FunctionEvent", "FunctionEventAvg", "EventList"]

_F = TypeVar("_F", bound=Callable[..., Any])

_SHAPES, _MEMORY, _FLOPS = 1, 2, 4


class ProfilerActivity(enum.Enum):
    """What to profile: only CPU exists (CUDA raises NotImplementedError)."""
    CPU = 0
    CUDA = 1


class FunctionEvent:
    """One recorded call: times in microseconds, memory in bytes (-1 / 0 when not recorded)."""

    def __init__(self, id: int, name: str, kind: str, thread: int, start_us: float, end_us: float,
                 input_shapes: List[List[int]], input_dtypes: List[str], flops: int, alloc_bytes: int) -> None:
        self.id = id
        self.name = name
        self.key = name
        self.kind = kind
        self.thread = thread
        self.start_us = start_us
        self.end_us = end_us
        self.input_shapes = input_shapes
        self.input_dtypes = input_dtypes
        self.flops = max(flops, 0)
        self.cpu_memory_usage = max(alloc_bytes, 0)
        self.cpu_parent: Optional[FunctionEvent] = None
        self.cpu_children: List[FunctionEvent] = []

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent name={self.name} kind={self.kind} cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes} children={len(self.cpu_children)}>")


class FunctionEventAvg:
    """Events grouped by name (and input shapes): totals, call count, average time."""

    def __init__(self, key: str, input_shapes: Optional[List[List[int]]]) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.flops = 0

    def add(self, e: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage
        self.flops += e.flops

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "cpu_memory_usage",
              "self_cpu_memory_usage", "flops")


def _fmt_time(us: float) -> str:
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_mem(b: int) -> str:
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(b) >= size:
            return f"{b / size:.2f} {unit}"
    return f"{b} b"


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with PyTorch's reporting helpers."""

    def __init__(self, events: Iterable[Any] = (), *, memory: bool = False, flops: bool = False,
                 shapes: bool = False) -> None:
        super().__init__(events)
        self._memory = memory
        self._flops = flops
        self._shapes = shapes

    def key_averages(self, group_by_input_shape: bool = False) -> "EventList":
        """Group the events by name (and by input shapes when asked), in first-call order."""
        groups: Dict[Tuple[str, str], FunctionEventAvg] = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else ""
            g = groups.get((e.key, shapes))
            if g is None:
                g = groups[(e.key, shapes)] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else None)
            g.add(e)
        return EventList(groups.values(), memory=self._memory, flops=self._flops,
                         shapes=group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total", None)
        for e in self:
            if isinstance(e, FunctionEventAvg):
                total.count += e.count
                total.cpu_time_total += e.cpu_time_total
                total.self_cpu_time_total += e.self_cpu_time_total
                total.cpu_memory_usage += e.cpu_memory_usage
                total.self_cpu_memory_usage += e.self_cpu_memory_usage
                total.flops += e.flops
            else:
                total.add(e)
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_name_column_width: int = 55,
              header: Optional[str] = None, top_level_events_only: bool = False) -> str:
        """A text table like PyTorch's: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg,
        memory columns (profile_memory), # of Calls, Input Shapes (grouped by shape), FLOPs (with_flops)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"table: sort_by must be one of {', '.join(_SORT_KEYS)}, got {sort_by!r}")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        total_self = self.self_cpu_time_total or 1.0
        name_w = min(max([len(e.key) for e in rows] + [4]) + 4, max_name_column_width)
        cols: List[Tuple[str, int, Callable[[Any], str]]] = [
            ("Name", name_w, lambda e: e.key if len(e.key) <= name_w - 4 else e.key[:name_w - 7] + "..."),
            ("Self CPU %", 12, lambda e: f"{100.0 * e.self_cpu_time_total / total_self:.2f}%"),
            ("Self CPU", 12, lambda e: _fmt_time(e.self_cpu_time_total)),
            ("CPU total %", 12, lambda e: f"{100.0 * e.cpu_time_total / total_self:.2f}%"),
            ("CPU total", 12, lambda e: _fmt_time(e.cpu_time_total)),
            ("CPU time avg", 12, lambda e: _fmt_time(e.cpu_time_total / getattr(e, "count", 1))),
        ]
        if self._memory:
            cols += [("CPU Mem", 12, lambda e: _fmt_mem(e.cpu_memory_usage)),
                     ("Self CPU Mem", 12, lambda e: _fmt_mem(e.self_cpu_memory_usage))]
        cols.append(("# of Calls", 12, lambda e: str(getattr(e, "count", 1))))
        if self._shapes:
            cols.append(("Input Shapes", 40, lambda e: str(e.input_shapes)))
        if self._flops:
            cols.append(("Total MFLOPs", 12, lambda e: f"{e.flops / 1e6:.3f}" if e.flops else "--"))
        sep = "  ".join("-" * w for _, w, _ in cols)
        lines = [sep, "  ".join(n.rjust(w) for n, w, _ in cols), sep]
        if header:
            lines.insert(0, header)
        for e in rows:
            lines.append("  ".join(f(e).rjust(w) for _, w, f in cols))
        lines.append(sep)
        lines.append(f"Self CPU time total: {_fmt_time(self.self_cpu_time_total)}")
        return "\n".join(lines) + "\n"

    def export_chrome_trace(self, path: str) -> None:
        """Write the events as Chrome-trace JSON (complete "X" events, µs)."""
        _write_trace(path, [e for e in self if isinstance(e, FunctionEvent)])

    def __str__(self) -> str:
        return self.table()


_CATEGORY = {"op": "cpu_op", "backward": "autograd", "range": "user_annotation"}


def _write_trace(path: str, events: List[FunctionEvent]) -> None:
    pid = os.getpid()
    trace = []
    for e in events:
        args: Dict[str, Any] = {"Sequence": e.id}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_dtypes
        if e.flops:
            args["flops"] = e.flops
        if e.cpu_memory_usage:
            args["bytes allocated"] = e.cpu_memory_usage
        trace.append({"ph": "X", "cat": _CATEGORY.get(e.kind, "cpu_op"), "name": e.name, "pid": pid,
                      "tid": e.thread, "ts": e.start_us, "dur": e.cpu_time_total, "args": args})
    with open(path, "w") as f:
        json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


def _parse_dtypes(s: str) -> List[str]:
    inner = s[1:-1] if s.startswith("[") else s
    return [d for d in inner.split(", ")] if inner else []


def _build_events(raw: List[Tuple[Any, ...]]) -> List[FunctionEvent]:
    events: List[FunctionEvent] = []
    for i, (name, kind, thread, start, end, parent, shapes, dtypes, flops, alloc) in enumerate(raw):
        e = FunctionEvent(i, name, kind, thread, start / 1e3, end / 1e3, json.loads(shapes) if shapes else [],
                          _parse_dtypes(dtypes), flops, alloc)
        if parent >= 0:
            e.cpu_parent = events[parent]
            events[parent].cpu_children.append(e)
        events.append(e)
    return events


_UNSUPPORTED = ("schedule", "on_trace_ready", "with_stack", "with_modules", "experimental_config",
                "execution_trace_observer", "use_cuda", "use_device", "profile_memory_cuda")


class profile:
    """Context manager recording every op call while active (torch.profiler.profile on CPU).

    Supported: activities (ProfilerActivity.CPU), record_shapes, profile_memory, with_flops.
    The other torch arguments raise NotImplementedError naming them when given a non-default value."""

    def __init__(self, activities: Optional[Iterable[ProfilerActivity]] = None, *, record_shapes: bool = False,
                 profile_memory: bool = False, with_flops: bool = False, enabled: bool = True,
                 **unsupported: Any) -> None:
        for k, v in unsupported.items():
            if k not in _UNSUPPORTED:
                raise TypeError(f"profile() got an unexpected keyword argument {k!r}")
            if v not in (None, False):
                raise NotImplementedError(f"cgrad.profiler.profile: {k} is not supported (CPU op profiling only)")
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        for a in acts:
            if a is not ProfilerActivity.CPU:
                raise NotImplementedError(f"cgrad.profiler.profile: activity {a} is not supported (CPU only)")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.enabled = enabled
        self._events: Optional[List[FunctionEvent]] = None
        self._running = False

    def start(self) -> None:
        if not self.enabled:
            self._events = []
            return
        flags = (_SHAPES if self.record_shapes else 0) | (_MEMORY if self.profile_memory else 0) | \
            (_FLOPS if self.with_flops else 0)
        _C._profiler_start(flags)
        self._running = True

    def stop(self) -> None:
        if self._running:
            self._running = False
            self._events = _build_events(_C._profiler_stop())

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def events(self) -> EventList:
        """Every recorded event, in start order."""
        if self._events is None:
            raise RuntimeError("profiler: no results yet (use the profile object after its `with` block or stop())")
        return EventList(self._events, memory=self.profile_memory, flops=self.with_flops,
                         shapes=self.record_shapes)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("key_averages(group_by_input_shape=True) needs profile(record_shapes=True)")
        return self.events().key_averages(group_by_input_shape)

    def table(self, **kwargs: Any) -> str:
        return self.key_averages().table(**kwargs)

    def export_chrome_trace(self, path: str) -> None:
        self.events().export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        return self.events().self_cpu_time_total


class record_function(contextlib.ContextDecorator):
    """A labelled range: an event named `name` whose children are the ops run inside it.
    Usable as a context manager or a decorator; costs nothing when no profile is active."""

    def __init__(self, name: str, args: Optional[str] = None) -> None:
        self.name = name if args is None else f"{name} ({args})"
        self._ids: List[int] = []

    def __enter__(self) -> "record_function":
        self._ids.append(_C._profiler_range_push(self.name))
        return self

    def __exit__(self, *exc: Any) -> None:
        _C._profiler_range_pop(self._ids.pop())

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name):
                return fn(*args, **kwargs)
        return inner  # type: ignore[return-value]
