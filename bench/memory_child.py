"""A fresh process for the startup suite's peak-RSS figure: imports one framework only
(`cgrad` or `torch`) and runs STEPS training steps of the MLP 784-256-10 at batch 128.
    python -m bench.memory_child FRAMEWORK STEPS [THREADS]
Prints the peak RSS in KiB: VmHWM of /proc/self/status, the high-water mark of this
program's own address space (ru_maxrss would also hold the parent's RSS at the fork
before exec), or ru_maxrss where /proc is missing."""
from __future__ import annotations

import importlib
import re
import resource
import sys


def peak_rss_kib() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            match = re.search(r"^VmHWM:\s*(\d+) kB", f.read(), re.M)
        if match:
            return int(match.group(1))
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main(argv) -> int:
    framework, steps = argv[0], int(argv[1])
    threads = int(argv[2]) if len(argv) > 2 else 0
    fw = importlib.import_module(framework)
    if threads > 0 and hasattr(fw, "set_num_threads"):
        fw.set_num_threads(threads)
    if steps > 0:
        from bench import models
        fw.manual_seed(0)
        step = models.train_step(fw, models.MLP_256)
        for _ in range(steps):
            step()
    print(peak_rss_kib())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
