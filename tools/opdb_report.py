"""Rewrite docs/op-coverage.md from a run of PyTorch's op_db against cgrad
(tests/python/opdb, the same run test_opdb.py checks the page against).

    .venv/bin/python tools/opdb_report.py
"""
import os
import sys

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python")
sys.path.insert(0, TESTS)

from test_opdb import COVERAGE_DOC, DEFAULT_DTYPES, coverage_markdown, figures, run_server  # noqa: E402


def main() -> int:
    recs = run_server("--dtypes", DEFAULT_DTYPES)
    with open(COVERAGE_DOC, "w") as fh:
        fh.write(coverage_markdown(recs))
    f = figures(recs)
    print(f"{f['resolved']} of {f['applicable']} entries resolve, {f['passing']} pass; "
          f"forward {100 * f['forward']:.2f}%, grad {100 * f['grad']:.2f}%, errors raised {100 * f['errors_raised']:.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
