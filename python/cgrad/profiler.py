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
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, TypeVar

from . import _C

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "FunctionEvent", "FunctionEventAvg", "EventList"]

_F = TypeVar("_F", bound=Callable[..., Any])

_SHAPES, _MEMORY, _FLOPS, _STACK = 1, 2, 4, 8


class ProfilerActivity(enum.Enum):
    """What to profile: only CPU exists (CUDA raises NotImplementedError)."""
    CPU = 0
    CUDA = 1


class ProfilerAction(enum.Enum):
    """What a profiling schedule asks for at a step (torch.profiler.ProfilerAction)."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A step -> ProfilerAction function for `profile(schedule=...)`: after `skip_first` steps, cycles of
    `wait` idle steps, `warmup` steps and `active` recorded steps (the last one RECORD_AND_SAVE, which hands
    the window to on_trace_ready); `repeat` cycles (0: no limit). `skip_first_wait` drops the first cycle's
    wait. As torch.profiler.schedule."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError(f"schedule: need wait >= 0, warmup >= 0, active > 0, repeat >= 0, skip_first >= 0; "
                         f"got wait={wait}, warmup={warmup}, active={active}, repeat={repeat}, skip_first={skip_first}")
    cycle = wait + warmup + active

    def action_at(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"schedule: step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        pos = step - skip_first + (wait if skip_first_wait else 0)
        if repeat and pos >= repeat * cycle:
            return ProfilerAction.NONE
        phase = pos % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD_AND_SAVE if phase == cycle - 1 else ProfilerAction.RECORD

    return action_at


def tensorboard_trace_handler(dir_name: str, worker_name: Optional[str] = None, use_gzip: bool = False) -> Any:
    """Not available: TensorBoard's trace format is not written (use a callable calling export_chrome_trace)."""
    raise NotImplementedError("cgrad.profiler.tensorboard_trace_handler is not supported; pass a callable "
                              "on_trace_ready that calls prof.export_chrome_trace(path)")


class FunctionEvent:
    """One recorded call: times in microseconds, memory in bytes (-1 / 0 when not recorded)."""

    def __init__(self, id: int, name: str, kind: str, thread: int, start_us: float, end_us: float,
                 input_shapes: List[List[int]], input_dtypes: List[str], flops: int, alloc_bytes: int,
                 stack: Optional[List[str]] = None) -> None:
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
        self.stack: List[str] = stack or []  # with_stack: ["file(line): function"] of the Python call site
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

    def __init__(self, key: str, input_shapes: Optional[List[List[int]]], stack: Optional[List[str]] = None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.stack: List[str] = stack or []
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
                 shapes: bool = False, stack: bool = False) -> None:
        super().__init__(events)
        self._memory = memory
        self._flops = flops
        self._shapes = shapes
        self._stack = stack

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> "EventList":
        """Group the events by name (and by input shapes, and by the first group_by_stack_n entries of the
        call stack, when asked), in first-call order."""
        groups: Dict[Tuple[str, str, Tuple[str, ...]], FunctionEventAvg] = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else ""
            stack = tuple(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else ()
            g = groups.get((e.key, shapes, stack))
            if g is None:
                g = groups[(e.key, shapes, stack)] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None, list(stack))
            g.add(e)
        return EventList(groups.values(), memory=self._memory, flops=self._flops,
                         shapes=group_by_input_shape, stack=group_by_stack_n > 0)

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
        if self._stack:
            cols.append(("Source Location", 60, lambda e: (e.stack[0] if e.stack else "")[-60:]))
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
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        trace.append({"ph": "X", "cat": _CATEGORY.get(e.kind, "cpu_op"), "name": e.name, "pid": pid,
                      "tid": e.thread, "ts": e.start_us, "dur": e.cpu_time_total, "args": args})
    with open(path, "w") as f:
        json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)


def _parse_dtypes(s: str) -> List[str]:
    inner = s[1:-1] if s.startswith("[") else s
    return [d for d in inner.split(", ")] if inner else []


def _build_events(raw: List[Tuple[Any, ...]]) -> List[FunctionEvent]:
    events: List[FunctionEvent] = []
    for i, (name, kind, thread, start, end, parent, shapes, dtypes, flops, alloc, stack) in enumerate(raw):
        e = FunctionEvent(i, name, kind, thread, start / 1e3, end / 1e3, json.loads(shapes) if shapes else [],
                          _parse_dtypes(dtypes), flops, alloc, [stack] if stack else [])
        if parent >= 0:
            e.cpu_parent = events[parent]
            events[parent].cpu_children.append(e)
        events.append(e)
    return events


_UNSUPPORTED = ("experimental_config", "execution_trace_observer", "use_cuda", "use_device", "profile_memory_cuda",
                "acc_events", "custom_trace_id_callback")

_A = ProfilerAction
_LIB_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _set_module_ranges(on: bool) -> None:
    from .nn.modules import module
    module._set_profile_ranges(on)


class profile:
    """Context manager recording every op call while active (torch.profiler.profile on CPU).

    Supported: activities (ProfilerActivity.CPU), record_shapes, profile_memory, with_flops, with_stack,
    with_modules, schedule / on_trace_ready with step(). The other torch arguments raise
    NotImplementedError naming them when given a non-default value.

    With a schedule, each step() asks it for the next action: RECORD / RECORD_AND_SAVE steps are recorded
    (each step inside a "ProfilerStep#N" range), and at the end of each active window on_trace_ready(prof)
    is called, where prof.key_averages() / events() / export_chrome_trace() see that window. Without one,
    the whole block is recorded and on_trace_ready (if given) is called once at its end."""

    def __init__(self, activities: Optional[Iterable[ProfilerActivity]] = None, *,
                 schedule: Optional[Callable[[int], ProfilerAction]] = None,
                 on_trace_ready: Optional[Callable[["profile"], Any]] = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_flops: bool = False, with_stack: bool = False,
                 with_modules: bool = False, enabled: bool = True, **unsupported: Any) -> None:
        for k, v in unsupported.items():
            if k not in _UNSUPPORTED:
                raise TypeError(f"profile() got an unexpected keyword argument {k!r}")
            if v not in (None, False):
                raise NotImplementedError(f"cgrad.profiler.profile: {k} is not supported (CPU op profiling only)")
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        for a in acts:
            if a is not ProfilerActivity.CPU:
                raise NotImplementedError(f"cgrad.profiler.profile: activity {a} is not supported (CPU only)")
        if schedule is not None and not callable(schedule):
            raise TypeError(f"profile: schedule must be callable (step -> ProfilerAction), "
                            f"got {type(schedule).__name__}")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError(f"profile: on_trace_ready must be callable, got {type(on_trace_ready).__name__}")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.enabled = enabled
        self.schedule = schedule if schedule is not None else (lambda step: ProfilerAction.RECORD)
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._step_range: Optional[record_function] = None
        self._events: Optional[List[FunctionEvent]] = None
        self._running = False

    # the engine session: started for recorded steps, stopped (events kept) at a window's end
    def _start_trace(self) -> None:
        if not self.enabled:
            return
        flags = (_SHAPES if self.record_shapes else 0) | (_MEMORY if self.profile_memory else 0) | \
            (_FLOPS if self.with_flops else 0) | (_STACK if self.with_stack else 0)
        if self.with_stack:
            _C._profiler_set_stack_prefix(_LIB_DIR)
        _C._profiler_start(flags)
        self._running = True
        if self.with_modules:
            _set_module_ranges(True)

    def _stop_trace(self) -> None:
        if self._running:
            if self.with_modules:
                _set_module_ranges(False)
            self._running = False
            self._events = _build_events(_C._profiler_stop())
        elif not self.enabled:
            self._events = []

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, prev: ProfilerAction, cur: Optional[ProfilerAction]) -> None:
        recording = (_A.RECORD, _A.RECORD_AND_SAVE)
        if prev is _A.NONE:
            if cur in recording:
                self._start_trace()
        elif prev is _A.WARMUP:
            if cur is _A.NONE or cur is None:  # a warmup with no active step: an empty window
                if cur is _A.NONE:
                    warnings.warn("profiler schedule: WARMUP followed by NONE", stacklevel=3)
                self._start_trace()
                self._stop_trace()
            elif cur in recording:
                self._start_trace()
        elif prev is _A.RECORD:
            if cur is None:
                self._stop_trace()
                self._trace_ready()
            elif cur in (_A.NONE, _A.WARMUP):
                warnings.warn(f"profiler schedule: RECORD followed by {cur.name}", stacklevel=3)
                self._stop_trace()
        else:  # RECORD_AND_SAVE: the window is complete
            self._stop_trace()
            self._trace_ready()
            if cur in recording:
                self._start_trace()

    def _enter_step_range(self) -> None:
        if self.record_steps:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _exit_step_range(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _action(self, step: int) -> ProfilerAction:
        a = self.schedule(step)
        if not isinstance(a, ProfilerAction):
            raise TypeError(f"profile: the schedule returned {a!r} for step {step}, not a ProfilerAction")
        return a

    def start(self) -> None:
        self.current_action = self._action(self.step_num)
        self._transit(_A.NONE, self.current_action)
        self._enter_step_range()

    def stop(self) -> None:
        self._exit_step_range()
        prev, self.current_action = self.current_action, ProfilerAction.NONE  # a second stop does nothing
        self._transit(prev, None)

    def step(self) -> None:
        """Mark the start of the next step: the schedule decides whether it is recorded."""
        self._exit_step_range()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self._action(self.step_num)
        self._transit(prev, self.current_action)
        self._enter_step_range()

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

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError("key_averages(group_by_input_shape=True) needs profile(record_shapes=True)")
        if group_by_stack_n > 0 and not self.with_stack:
            raise RuntimeError("key_averages(group_by_stack_n=...) needs profile(with_stack=True)")
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

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
