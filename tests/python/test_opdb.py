"""PyTorch's operator database (op_db) run against cgrad (issue 16): one
test per OpInfo. The fork server (opdb/server.py) runs every entry in a
child process of its own, so nothing here can crash or hang the suite, on
float32, float64 and int64 samples (and reference inputs in every real
dtype under the slow marker). An entry must pass, or be listed in
opdb/expectations.py with its reason; a listed entry that passes fails the
test, so the lists stay true. test_opdb_figures checks the coverage figures
against their floors and docs/op-coverage.md."""
from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
from typing import Any, Dict, List

import pytest

from opdb.expectations import KNOWN_FAILURES, MISSING

HERE = os.path.dirname(os.path.abspath(__file__))
COVERAGE_DOC = os.path.join(HERE, "..", "..", "docs", "op-coverage.md")
README = os.path.join(HERE, "..", "..", "README.md")
DEFAULT_DTYPES = "float32,float64,int64"
FLOATS = ("float32", "float64")
REAL_DTYPES = "float32,float64,float16,bfloat16,int64,int32,int16,int8,uint8,bool"


def _ids() -> List[str]:
    """op_db's entry ids, from a child process: importing op_db here would freeze torch.backends' flags
    (common_utils calls disable_global_flags) for the rest of the suite."""
    proc = subprocess.run([sys.executable, "-m", "opdb.server", "--list"], cwd=HERE, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.split()


IDS = _ids()


def run_server(*args: str, timeout: float = 1200) -> Dict[str, Dict[str, Any]]:
    """Every entry's record from a fork-server run (opdb/server.py)."""
    proc = subprocess.run([sys.executable, "-m", "opdb.server", *args], cwd=HERE, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return {r["id"]: r for r in recs}


@pytest.fixture(scope="module")
def records() -> Dict[str, Dict[str, Any]]:
    return run_server("--dtypes", DEFAULT_DTYPES)


def _describe(rec: Dict[str, Any]) -> str:
    return f"{rec['id']}: {rec['status']} {rec.get('why', '')} {rec['counts']}\n  " + "\n  ".join(rec["notes"])


def check_record(rec: Dict[str, Any]) -> None:
    """The entry's outcome is the one the expectation lists give it."""
    i, status = rec["id"], rec["status"]
    assert status not in ("crash", "hang"), _describe(rec)
    if status == "excluded":
        assert i not in MISSING and i not in KNOWN_FAILURES, f"{i} is out of scope ({rec['why']}); unlist it"
        return
    if i in MISSING:
        assert status == "missing", f"{i} resolves now ({status}): remove it from MISSING\n" + _describe(rec)
        return
    assert status != "missing", f"{i} does not resolve: {rec['why']}"
    if i in KNOWN_FAILURES:
        assert status in ("fail", "nosamples"), \
            f"{i} passes now: remove it from KNOWN_FAILURES ({KNOWN_FAILURES[i]})"
        return
    assert status == "pass", _describe(rec)


@pytest.mark.parametrize("op_id", IDS)
def test_opdb_entry(records: Dict[str, Dict[str, Any]], op_id: str) -> None:
    assert op_id in records, f"the fork server reported nothing for {op_id}"
    check_record(records[op_id])


def test_expectations_name_real_entries() -> None:
    unknown = sorted((set(MISSING) | set(KNOWN_FAILURES)) - set(IDS))
    assert not unknown, f"expectations name entries op_db does not have: {unknown}"
    assert not set(MISSING) & set(KNOWN_FAILURES)


def figures(recs: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The coverage figures of a run: entries by status and samples by outcome."""
    status = collections.Counter(r["status"] for r in recs.values())
    counts: collections.Counter = collections.Counter()
    for r in recs.values():
        counts.update(r["counts"])
    per_dtype = {k: v for k, v in counts.items() if ":" in k}
    applicable = len(recs) - status["excluded"]
    resolved = applicable - status["missing"]

    def rate(k: str) -> float:
        done = counts[k + "_pass"] + counts[k + "_fail"]
        return counts[k + "_pass"] / done if done else 1.0
    fp = sum(counts[f"forward_pass:{d}"] for d in FLOATS)
    ff = sum(counts[f"forward_fail:{d}"] for d in FLOATS)
    raised = counts["error_same_type"] + counts["error_other_type"]
    errors = raised + counts["error_not_raised"]
    return {"entries": len(recs), "applicable": applicable, "resolved": resolved, "passing": status["pass"],
            "excluded": status["excluded"], "forward": rate("forward"), "grad": rate("grad"),
            "gradgrad": rate("gradgrad"), "float_forward": fp / (fp + ff) if fp + ff else 1.0,
            "float_forward_counts": (fp, fp + ff), "errors_raised": raised / errors if errors else 1.0,
            "errors_same_type": counts["error_same_type"] / errors if errors else 1.0,
            "counts": {k: v for k, v in counts.items() if k not in per_dtype}}


def coverage_markdown(recs: Dict[str, Dict[str, Any]]) -> str:
    """docs/op-coverage.md: the figures, the exclusions by reason, the entries cgrad lacks and the known failures."""
    f = figures(recs)
    c = f["counts"]
    lines = [
        "# PyTorch's op_db against cgrad",
        "",
        "Generated by `python tools/opdb_report.py` from the run of tests/python/test_opdb.py",
        "(float32, float64 and int64 samples of PyTorch 2.13's `op_db`, each entry in a child process).",
        "The test fails when this page is out of date.",
        "",
        "| measure | result |",
        "|---|---|",
        f"| op_db entries | {f['entries']} |",
        f"| in scope (real dtypes, CPU, public API) | {f['applicable']} |",
        f"| resolving to a cgrad callable | {f['resolved']} of {f['applicable']} ({100 * f['resolved'] / f['applicable']:.1f}%) |",
        f"| passing every sample | {f['passing']} of {f['applicable']} |",
        f"| forward samples passing | {c.get('forward_pass', 0)} of {c.get('forward_pass', 0) + c.get('forward_fail', 0)} "
        f"({100 * f['forward']:.2f}%) |",
        f"| of them float32 / float64 | {f['float_forward_counts'][0]} of {f['float_forward_counts'][1]} "
        f"({100 * f['float_forward']:.2f}%) |",
        f"| gradients (float64) | {c.get('grad_pass', 0)} of {c.get('grad_pass', 0) + c.get('grad_fail', 0)} "
        f"({100 * f['grad']:.2f}%) |",
        f"| second gradients | {c.get('gradgrad_pass', 0)} of {c.get('gradgrad_pass', 0) + c.get('gradgrad_fail', 0)} "
        f"({100 * f['gradgrad']:.2f}%) |",
        f"| error inputs raising in cgrad | {100 * f['errors_raised']:.1f}% (the same exception type: "
        f"{100 * f['errors_same_type']:.1f}%) |",
        "",
        "## Out of scope",
        "",
        "| reason | entries |",
        "|---|---|",
    ]
    why = collections.Counter(r["why"] for r in recs.values() if r["status"] == "excluded")
    lines += [f"| {w} | {n} |" for w, n in sorted(why.items())]
    lines += ["", f"## Not in cgrad yet ({len(MISSING)})", "", ", ".join(f"`{i}`" for i in sorted(MISSING)), "",
              f"## Known failures ({len(KNOWN_FAILURES)})", "", "| entry | reason |", "|---|---|"]
    lines += [f"| `{i}` | {KNOWN_FAILURES[i]} |" for i in sorted(KNOWN_FAILURES)]
    return "\n".join(lines) + "\n"


# The floors the figures may not fall below (raise them as entries land; issue 16 asks for 98% resolved,
# 99% of float samples passing and 97% of error inputs raising).
FLOORS = {"resolved": 548, "forward": 0.95, "float_forward": 0.99, "grad": 0.999, "errors_raised": 0.99}


def test_opdb_figures(records: Dict[str, Dict[str, Any]]) -> None:
    f = figures(records)
    for k, floor in FLOORS.items():
        assert f[k] >= floor, f"{k}: {f[k]} fell below {floor}"
    with open(COVERAGE_DOC) as fh:
        assert fh.read() == coverage_markdown(records), \
            "docs/op-coverage.md is out of date: run .venv/bin/python tools/opdb_report.py"
    with open(README) as fh:
        readme = " ".join(fh.read().split())
    claim = readme_claim(records)
    assert claim in readme, f"the README's Coverage line should say: {claim}"


def readme_claim(recs: Dict[str, Dict[str, Any]]) -> str:
    """The README's coverage sentence for these records and the nn namespaces as they are."""
    import inspect

    import torch

    import cgrad
    f = figures(recs)
    modules = [n for n in dir(torch.nn) if inspect.isclass(getattr(torch.nn, n)) and
               issubclass(getattr(torch.nn, n), torch.nn.Module)]
    funcs = [n for n in dir(torch.nn.functional) if not n.startswith("_") and callable(getattr(torch.nn.functional, n))]
    optims = [n for n in dir(torch.optim) if inspect.isclass(getattr(torch.optim, n)) and n != "Optimizer" and
              issubclass(getattr(torch.optim, n), torch.optim.Optimizer)]
    have = [n for n in optims if hasattr(cgrad.optim, n)]
    return (f"{f['resolved']} of the {f['applicable']} in-scope OpInfos resolve and {f['passing']} pass every sample; "
            f"{sum(hasattr(cgrad.nn, n) for n in modules)} of torch.nn's {len(modules)} modules and "
            f"{sum(hasattr(cgrad.nn.functional, n) for n in funcs)} of torch.nn.functional's {len(funcs)} functions; "
            + ("all " if len(have) == len(optims) else f"{len(have)} of ") + f"{len(optims)} optimizers.")


@pytest.mark.slow
def test_opdb_reference_inputs_every_real_dtype() -> None:
    """The reference inputs (PyTorch's larger sample sets) in every real dtype: nothing crashes or hangs, and
    every entry resolves. The entries that fail some of these samples are printed (for the known-failure
    work), not asserted: half-precision and small-integer dtypes are held to the default run's tolerances."""
    recs = run_server("--dtypes", REAL_DTYPES, "--reference", timeout=3600)
    bad = [_describe(r) for r in recs.values() if r["status"] in ("crash", "hang", "missing")]
    assert not bad, "\n".join(bad)
    failing = sorted(i for i, r in recs.items() if r["status"] == "fail")
    print(f"{len(failing)} entries fail some reference sample: {', '.join(failing)}")
