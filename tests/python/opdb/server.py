"""The op_db fork server: imports PyTorch, cgrad and op_db once, then runs
every entry in a forked child of its own (`--jobs` at a time, one thread
each) and prints one JSON record per entry on stdout. A child that dies
(a signal, an exit without a record) is reported as status "crash", one
that outlives `--timeout` seconds as "hang"; neither stops the run.

    python -m opdb.server --list
    python -m opdb.server [--dtypes float32,float64,int64] [--reference] [--jobs 2] [--timeout 120] [ID ...]
"""
from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
import time
from typing import Any, Dict, List


def _child(op: Any, dtypes: List[Any], reference: bool, w: int) -> None:
    from .check import run_entry
    code = 0
    try:
        rec = run_entry(op, dtypes, reference)
        os.write(w, json.dumps(rec, default=str).encode())
    except BaseException:  # noqa: BLE001 - reported as an exit without a record
        code = 3
    finally:
        os._exit(code)


def _settled(op: Any) -> Dict[str, Any]:
    """The record of an entry that is out of scope or does not resolve (no child needed), else {}."""
    from .resolve import Missing, exclusion, op_id, resolve
    why = exclusion(op)
    if why:
        return {"id": op_id(op), "status": "excluded", "why": why, "counts": {}, "notes": []}
    try:
        resolve(op)
    except Missing as e:
        return {"id": op_id(op), "status": "missing", "why": f"cgrad has no {e}", "counts": {}, "notes": []}
    return {}


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtypes", default="float32,float64,int64")
    ap.add_argument("--reference", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--list", action="store_true", help="print the entries' ids, one per line, and stop")
    ap.add_argument("ids", nargs="*")
    args = ap.parse_args(argv)

    import warnings
    warnings.simplefilter("ignore")
    import torch
    torch.set_num_threads(1)
    import cgrad
    cgrad.set_num_threads(1)
    from torch.testing._internal.common_methods_invocations import op_db
    from .resolve import op_id

    if args.list:
        out = sys.stdout
        out.write("".join(op_id(op) + "\n" for op in op_db))
        return 0
    dtypes = [getattr(torch, d) for d in args.dtypes.split(",")]
    todo = [op for op in op_db if not args.ids or op_id(op) in args.ids]
    running: Dict[int, Dict[str, Any]] = {}  # read end -> child
    out = sys.stdout

    def finish(r: int, status: str = "") -> None:
        ch = running.pop(r)
        os.close(r)
        if status == "hang":
            os.kill(ch["pid"], signal.SIGKILL)
        _, st = os.waitpid(ch["pid"], 0)
        data = b"".join(ch["chunks"])
        if not status:
            if data and os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
                rec = json.loads(data.decode())
                rec["seconds"] = round(time.monotonic() - ch["start"], 2)
                out.write(json.dumps(rec) + "\n")
                out.flush()
                return
            status = "crash"
        why = ("ran past %.0f s" % args.timeout if status == "hang" else
               "killed by %s" % signal.Signals(os.WTERMSIG(st)).name if os.WIFSIGNALED(st) else
               "exited with status %d without a record" % os.WEXITSTATUS(st))
        out.write(json.dumps({"id": ch["id"], "status": status, "why": why, "counts": {}, "notes": []}) + "\n")
        out.flush()

    while todo or running:
        while todo and len(running) < args.jobs:
            op = todo.pop(0)
            quick = _settled(op)
            if quick:
                out.write(json.dumps(quick) + "\n")
                continue
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                _child(op, dtypes, args.reference, w)
            os.close(w)
            running[r] = {"pid": pid, "id": op_id(op), "chunks": [], "start": time.monotonic(),
                          "deadline": time.monotonic() + args.timeout}
        if not running:
            continue
        wait = max(0.0, min(ch["deadline"] for ch in running.values()) - time.monotonic())
        ready = select.select(list(running), [], [], wait)[0]
        for r in ready:
            chunk = os.read(r, 1 << 16)
            if chunk:
                running[r]["chunks"].append(chunk)
            else:
                finish(r)
        now = time.monotonic()
        for r in [r for r, ch in running.items() if ch["deadline"] <= now]:
            finish(r, "hang")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
