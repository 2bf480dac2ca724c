"""Result records: one library's measurement of one case (Result), one case compared
across libraries with its target from the issue (Case), and the targets themselves."""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Callable, Dict, List, Optional

# Library keys, in table order, and their column titles.
LIBRARIES = ("cgrad", "torch", "numpy", "native")
TITLES = {"cgrad": "cgrad", "torch": "PyTorch", "numpy": "NumPy", "native": "C limit"}


@dataclass
class Result:
    """A measurement in `unit` (seconds per call, or MB for memory): median, min and max
    over `repeats` samples of `number` calls each, and derived figures (GB/s, GFLOP/s, ...)
    computed from the median (from the minimum for the C limit, the best it reached)."""
    suite: str
    case: str
    library: str
    unit: str
    median: float
    min: float
    max: float
    number: int = 1
    repeats: int = 1
    derived: Dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_samples(cls, suite: str, case: str, library: str, unit: str, samples: List[float],
                     number: int = 1) -> "Result":
        return cls(suite, case, library, unit, statistics.median(samples), min(samples), max(samples),
                   number, len(samples))

    def best(self) -> float:
        """The figure a comparison uses: the median, or the minimum for the C limit."""
        return self.min if self.library == "native" else self.median

    def spread(self) -> float:
        """Half the min-max range relative to the median (0.03 = +-3%)."""
        return (self.max - self.min) / 2 / self.median if self.median > 0 else 0.0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Target:
    """A target of the issue for one case: its text and a check over the case."""
    text: str
    check: Callable[["Case"], Optional[bool]]


def ratio_at_most(limit: float, other: str = "torch") -> Target:
    """cgrad time (or memory) / the other library's <= limit."""
    title = TITLES[other]
    return Target(f"<= {limit:g} x {title}", lambda c: _le(c.ratio(other), limit))


def limit_fraction_at_least(fraction: float) -> Target:
    """cgrad's throughput >= fraction of the C limit's."""
    return Target(f">= {fraction:.0%} of C limit", lambda c: _ge(c.limit_fraction(), fraction))


def all_of(*targets: Target) -> Target:
    def check(case: "Case") -> Optional[bool]:
        results = [t.check(case) for t in targets]
        return None if any(r is None for r in results) else all(results)
    return Target(", ".join(t.text for t in targets), check)


def _le(value: Optional[float], limit: float) -> Optional[bool]:
    return None if value is None else value <= limit


def _ge(value: Optional[float], limit: float) -> Optional[bool]:
    return None if value is None else value >= limit


@dataclass
class Case:
    """One row of a suite's table. `show` names what the cells display: a time unit
    ("us", "ms", "s"), the unit of a non-time measurement ("MB"), or a derived figure
    ("GB/s", "GFLOP/s") present in every result's `derived`."""
    suite: str
    name: str
    show: str
    results: Dict[str, Result] = field(default_factory=dict)
    target: Optional[Target] = None
    note: str = ""

    def ratio(self, other: str) -> Optional[float]:
        """cgrad / other in the measured unit (time or memory): below 1, cgrad is ahead."""
        mine, theirs = self.results.get("cgrad"), self.results.get(other)
        if mine is None or theirs is None or theirs.best() <= 0:
            return None
        return mine.best() / theirs.best()

    def limit_fraction(self) -> Optional[float]:
        """cgrad's throughput as a fraction of the C limit's, best repeat against best repeat
        (limit's minimum time / cgrad's minimum time): the limit is a best by definition,
        and a median against it would count the machine's noise against cgrad."""
        mine, limit = self.results.get("cgrad"), self.results.get("native")
        if mine is None or limit is None or mine.min <= 0:
            return None
        return limit.min / mine.min

    def with_rate(self, key: str, amount: float) -> "Case":
        """Adds `amount` / time as derived figure `key` to every result (e.g. "GB/s" with
        amount in GB); returns self."""
        for r in self.results.values():
            r.derived[key] = amount / r.best() if r.best() > 0 else float("nan")
        return self

    def met(self) -> Optional[bool]:
        return None if self.target is None else self.target.check(self)

    def to_dict(self) -> dict:
        return {
            "suite": self.suite, "case": self.name, "show": self.show, "note": self.note,
            "results": {lib: r.to_dict() for lib, r in self.results.items()},
            "ratio_torch": self.ratio("torch"), "ratio_numpy": self.ratio("numpy"),
            "limit_fraction": self.limit_fraction(),
            "target": None if self.target is None else self.target.text, "met": self.met(),
        }
