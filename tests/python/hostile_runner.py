"""The fork server behind test_hostile_inputs.py: a small process (cgrad and
the case table, no PyTorch, so a fork is cheap) that reads one case name per
line on stdin, runs the case in a forked child with a timeout, and writes one
JSON report per line on stdout: what the case raised, whether it is the
declared type, the message, the allocator bytes the failed call left live,
and whether cgrad still works afterwards; or that the child hung, died from a
signal or failed to report."""
import gc
import json
import os
import sys
import warnings

import cgrad
from forked import run_forked
from hostile_cases import BY_NAME


def _live_bytes():
    gc.collect()
    return cgrad._C._memory_stats()["live_bytes"]


def _run_case(c):
    """In the child: run the case and describe what happened."""
    before = _live_bytes()
    err = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            c.fn(cgrad)
        except BaseException as e:  # noqa: BLE001 - every exception is reported
            err = e
    if err is None:
        return {"raised": None}
    out = {"raised": type(err).__name__, "message": str(err), "is_declared": isinstance(err, c.exc)}
    del err
    out["leaked_bytes"] = _live_bytes() - before
    out["alive"] = (cgrad.ones(3) * 2).sum().item() == 6.0
    return out


def main():
    timeout = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    gc.freeze()  # the children's gc.collect() leaves the server's objects (and their pages) alone
    for line in sys.stdin:
        name = line.strip()
        rep = run_forked(lambda: _run_case(BY_NAME[name]), timeout) if name in BY_NAME else {"unknown": True}
        sys.stdout.write(json.dumps(rep) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
