"""The command line: `python -m bench [--suite NAME ...] [--threads N ...] [--quick]
[--json PATH] [--markdown PATH] [--update-docs]`. Thread settings act through
environment variables read at import, so this process imports no library under test: it
starts one child (`--child`, the same command for one setting) per setting, collects
their results and writes the JSON and Markdown files (and, with --update-docs,
docs/benchmarks.md and the README's headline table)."""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from typing import List, Optional, Sequence

from bench import suites, writers
from bench import threads as threads_mod
from bench.native_lib import ROOT

RESULTS = os.path.join(ROOT, "bench", "results")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    p.add_argument("--suite", nargs="+", action="extend", metavar="NAME", choices=suites.NAMES,
                   help=f"suites to run (default: all): {', '.join(suites.NAMES)}")
    p.add_argument("--threads", nargs="+", action="extend", metavar="N", type=threads_mod.parse,
                   help="thread settings, each run in its own process: a count or 'default' "
                        "(each library's own default; the default setting)")
    p.add_argument("--quick", action="store_true",
                   help="fewer repeats, no 2048 matmul, a 10 000-image main job")
    p.add_argument("--json", default=os.path.join(RESULTS, "latest.json"), metavar="PATH")
    p.add_argument("--markdown", default=os.path.join(RESULTS, "latest.md"), metavar="PATH")
    p.add_argument("--update-docs", "--update-readme", dest="update_docs", action="store_true",
                   help="also write docs/benchmarks.md (every table) and the README's headline table "
                        "between the bench markers (`make bench` does, for a run of every suite)")
    p.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    return p


def _unique(values: Sequence) -> List:
    out: List = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def child_main(args: argparse.Namespace, names: Sequence[str]) -> int:
    from bench.runner import run_setting
    setting = run_setting(names, args.threads[0], args.quick)
    with open(args.child, "w", encoding="utf-8") as f:
        json.dump(setting, f)
    return 0


def run_child(names: Sequence[str], threads: Optional[int], quick: bool) -> Optional[dict]:
    """One setting in a fresh process; its tables stream to our stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "setting.json")
        cmd = [sys.executable, "-m", "bench", "--child", out, "--suite", *names,
               "--threads", "default" if threads is None else str(threads)] + (["--quick"] if quick else [])
        print(f"\n#### {threads_mod.label(threads)}", flush=True)
        proc = subprocess.run(cmd, cwd=ROOT, env=threads_mod.child_env(threads))
        if proc.returncode != 0 or not os.path.exists(out):
            print(f"bench: the {threads_mod.label(threads)} run failed (exit {proc.returncode})", file=sys.stderr)
            return None
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def summary(run: dict) -> str:
    lines = ["", "Targets:"]
    for s in run["settings"]:
        for c in s["cases"]:
            if c["target"]:
                met = {True: "met", False: "NOT MET", None: "unknown"}[c["met"]]
                lines.append(f"  [{s['label']}] {c['suite']}: {c['case']}: {c['target']} — {met}")
        for e in s["errors"]:
            lines.append(f"  [{s['label']}] {e['suite']}: FAILED")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    names = _unique(args.suite) if args.suite else list(suites.NAMES)
    settings = _unique(args.threads) if args.threads else [None]
    if args.child:
        return child_main(args, names)
    start = time.perf_counter()
    command = "python -m bench " + " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv))
    results = [run_child(names, threads, args.quick) for threads in settings]
    run = {
        "schema": writers.SCHEMA_VERSION,
        "command": command.strip(),
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "quick": args.quick,
        "suites": names,
        "settings": [r for r in results if r is not None],
        "elapsed_s": time.perf_counter() - start,
    }
    writers.write_json(run, args.json)
    writers.write_markdown(run, args.markdown)
    written = [os.path.relpath(args.json), os.path.relpath(args.markdown)]
    if args.update_docs:
        written += writers.update_docs(run, ROOT)
    print(summary(run))
    print(f"\nwritten: {', '.join(written)} ({run['elapsed_s'] / 60:.1f} min)")
    return 0 if all(r is not None for r in results) and not any(s["errors"] for s in run["settings"]) else 1
