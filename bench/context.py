"""What a suite gets to run with: the libraries, the timing settings, the quick flag and
the thread setting, plus the helpers suites share to build inputs in every library."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from bench.harness import Settings, Stmt, measure
from bench.libs import Libraries
from bench.record import Case, Target


@dataclass
class Context:
    libs: Libraries
    settings: Settings
    quick: bool = False

    @property
    def threads(self) -> Optional[int]:
        return self.libs.threads

    def arrays(self, n: int, count: int = 2, seed: int = 0) -> Dict[str, List[object]]:
        """`count` float32 vectors of n standard-normal values, as NumPy arrays and as
        separate copies in torch and cgrad (no memory shared between libraries)."""
        rng = self.libs.numpy.random.default_rng(seed)
        data = [rng.standard_normal(n).astype(self.libs.numpy.float32) for _ in range(count)]
        return {
            "numpy": [d.copy() for d in data],
            "torch": [self.libs.torch.from_numpy(d.copy()) for d in data],
            "cgrad": [self.libs.cgrad.from_numpy(d.copy()) for d in data],
        }

    def compare(self, suite: str, name: str, show: str, ops: Dict[str, Stmt],
                target: Optional[Target] = None, note: str = "", number: Optional[int] = None) -> Case:
        """Measures `ops` (library -> op) interleaved and returns the case."""
        results = measure(ops, self.settings, suite=suite, case=name, number=number)
        return Case(suite, name, show, results, target, note)

    def layout_cases(self, suite: str, name: str, make: Callable[[object, str, bool], Stmt]) -> List[Case]:
        """The four cases of a layer in the memory-format suites: forward, then forward + backward,
        each with operands contiguous and channels_last; make(framework, layout, backward) builds
        one library's op (cgrad vs PyTorch, in milliseconds)."""
        cases = []
        for backward in (False, True):
            for layout in ("contiguous", "channels_last"):
                ops = {lib: make(getattr(self.libs, lib), layout, backward) for lib in ("cgrad", "torch")}
                what = "forward + backward" if backward else "forward"
                cases.append(self.compare(suite, f"{name}, {what}, {layout}", "ms", ops))
        return cases
