"""make fuzz: runs each fuzz target of targets.py under atheris (libFuzzer's
engine, coverage from cgrad's and the harness's Python code) for a bounded time,
then adds the inputs that added coverage to tests/fuzz/corpus/<target>/ and
prints one line per target: executions, corpus size, crashes.

    python tests/fuzz/run.py [--seconds 60] [--target NAME] [--write-seeds]"""
from __future__ import annotations

import argparse
import faulthandler
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
MAX_LEN = 512            # bytes per input: keeps the saved corpora small
MAX_KEPT = 48            # inputs added to a corpus by one run, at most
HANG_SECONDS = 15        # one case running longer is a hang
CRASH_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build-fuzz")


def write_seeds() -> None:
    """Seed files (seed-<n>) for every target, written when missing."""
    sys.path.insert(0, HERE)
    from targets import seeds
    for name, items in seeds().items():
        d = os.path.join(CORPUS, name)
        os.makedirs(d, exist_ok=True)
        for k, data in enumerate(items):
            p = os.path.join(d, f"seed-{k}")
            if not os.path.exists(p):
                with open(p, "wb") as fh:
                    fh.write(data)


def child(target: str, argv: List[str]) -> None:
    """Runs in its own process: libFuzzer never returns from Fuzz()."""
    import atheris
    import numpy  # noqa: F401 - imported before instrumentation: not ours to cover
    import torch  # noqa: F401
    sys.path.insert(0, HERE)
    with atheris.instrument_imports(include=["cgrad", "targets"]):
        import targets
    fn = targets.TARGETS[target]
    # the input under test is kept in build-fuzz/<target>-current, and a case
    # running past HANG_SECONDS dumps the Python stacks and ends the run, so a
    # hang leaves its input behind
    os.makedirs(CRASH_DIR, exist_ok=True)
    fd = os.open(os.path.join(CRASH_DIR, f"{target}-current"), os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)

    def one(data: bytes) -> None:
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
        fn(data)
        faulthandler.cancel_dump_traceback_later()
    atheris.Setup([sys.argv[0]] + argv, one)
    atheris.Fuzz()


def run_target(name: str, seconds: int, crash_dir: str) -> int:
    saved = os.path.join(CORPUS, name)
    os.makedirs(saved, exist_ok=True)
    for f in os.listdir(crash_dir):
        if f.startswith(name + "-"):
            os.remove(os.path.join(crash_dir, f))
    with tempfile.TemporaryDirectory(prefix=f"cgrad-fuzz-{name}-") as work:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--",
               f"-max_total_time={seconds}", f"-max_len={MAX_LEN}", "-rss_limit_mb=6144",
               "-timeout=60", "-print_final_stats=1", f"-artifact_prefix={crash_dir}/{name}-", work, saved]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        log = proc.stdout + proc.stderr
        execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
        crashed = proc.returncode != 0
        if crashed:
            tail = "\n".join(log.splitlines()[-40:])
            print(f"[{name}] the fuzzer stopped with status {proc.returncode}:\n{tail}", flush=True)
        # libFuzzer keeps in `work` only the inputs that added coverage; keep
        # the smallest MAX_KEPT of those not already saved (names are hashes)
        before = set(os.listdir(saved))
        kept = 0
        for f in sorted(os.listdir(work), key=lambda f: (os.path.getsize(os.path.join(work, f)), f)):
            if f in before or kept >= MAX_KEPT:
                continue
            shutil.copy(os.path.join(work, f), os.path.join(saved, f))
            kept += 1
        if crashed and os.path.exists(os.path.join(crash_dir, f"{name}-current")):
            shutil.copy(os.path.join(crash_dir, f"{name}-current"), os.path.join(crash_dir, f"{name}-last-input"))
        n_crash = len([f for f in os.listdir(crash_dir) if f.startswith(name + "-") and f != f"{name}-current"])
        print(f"fuzz {name}: {execs[-1] if execs else '?'} executions in {seconds} s, "
              f"corpus {len(os.listdir(saved))} files (+{kept}), crashes {n_crash}", flush=True)
        return 1 if (crashed or n_crash) else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--target", action="append")
    ap.add_argument("--write-seeds", action="store_true")
    ap.add_argument("--child")
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.rest)
        return 0
    write_seeds()
    if args.write_seeds:
        return 0
    sys.path.insert(0, HERE)
    from targets import TARGETS
    names = args.target or list(TARGETS)
    crash_dir = CRASH_DIR
    os.makedirs(crash_dir, exist_ok=True)
    failed = 0
    for name in names:
        failed |= run_target(name, args.seconds, crash_dir)
    if failed:
        print(f"crash inputs are in {crash_dir}; replay one with "
              f"python -c \"import sys; sys.path.insert(0, 'tests/fuzz'); import targets; "
              f"targets.TARGETS[NAME](open(PATH, 'rb').read())\"")
    return failed


if __name__ == "__main__":
    sys.exit(main())
