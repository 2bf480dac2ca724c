"""The benchmark package (bench/, `make bench`) stays runnable: the harness on a trivial
case, the dispatch suite at tiny timing settings, the JSON / Markdown / README writers and
the C limits library. Timings are not checked, only the shape of the results."""
import io
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from bench import cli, native_lib as native, writers  # noqa: E402
from bench.harness import Settings, StmtIn, measure  # noqa: E402
from bench.runner import run_setting  # noqa: E402

TINY = Settings(repeat_time=0.0005, repeats=2, warmup=1)
RESULT_KEYS = {"suite", "case", "library", "unit", "median", "min", "max", "number", "repeats", "derived"}
CASE_KEYS = {"suite", "case", "show", "note", "results", "ratio_torch", "ratio_numpy", "limit_fraction",
             "target", "met"}


def test_harness_times_each_library_interleaved():
    results = measure({"cgrad": StmtIn("x + 1", {"x": 1}), "torch": lambda: None}, TINY, suite="s", case="c")
    assert set(results) == {"cgrad", "torch"}
    for lib, r in results.items():
        assert (r.suite, r.case, r.library, r.unit, r.repeats) == ("s", "c", lib, "s", 2)
        assert 0 < r.min <= r.median <= r.max and r.number >= 1


def test_cli_parses_suites_and_thread_settings():
    args = cli.parser().parse_args(["--suite", "dispatch", "gemm", "--threads", "default", "2", "--quick"])
    assert args.suite == ["dispatch", "gemm"] and args.threads == [None, 2] and args.quick
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["--suite", "nope"])


def test_dispatch_suite_writes_the_json_schema(tmp_path):
    out = io.StringIO()
    setting = run_setting(["dispatch"], None, quick=True, settings=TINY, out=out)
    assert "a + b, n=100" in out.getvalue() and not setting["errors"]
    run = {"schema": writers.SCHEMA_VERSION, "command": "python -m bench --suite dispatch", "created": "now",
           "quick": True, "suites": ["dispatch"], "settings": [setting], "elapsed_s": 1.0}
    path = tmp_path / "latest.json"
    writers.write_json(run, str(path))
    loaded = json.loads(path.read_text())
    s = loaded["settings"][0]
    assert {"CPU", "cores", "memory", "OS", "Python", "cgrad", "PyTorch", "NumPy"} <= set(s["machine"])
    assert s["threads"] is None and s["threads_in_effect"]["cgrad"] >= 1
    assert len(s["cases"]) == 25
    for case in s["cases"]:
        assert set(case) == CASE_KEYS and case["suite"] == "dispatch" and case["show"] == "us"
        assert {"cgrad", "torch"} <= set(case["results"]) and case["ratio_torch"] > 0
        for r in case["results"].values():
            assert set(r) == RESULT_KEYS and r["median"] > 0
    targeted = [c for c in s["cases"] if c["target"]]
    assert [c["case"] for c in targeted] == ["a + b, n=100", "(a * b).sum().backward(), n=1,000"]
    assert all(c["met"] in (True, False) for c in targeted)

    md = writers.markdown(loaded)
    assert "## Machine" in md and "| case | unit | cgrad | PyTorch | NumPy |" in md
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n## Performance\n\n{writers.README_BEGIN}\nold\n{writers.README_END}\n\n## Tests\n")
    writers.update_readme(loaded, str(readme))
    text = readme.read_text()
    assert "old" not in text and "#### Dispatch: small ops" in text and text.endswith("## Tests\n")


@pytest.mark.skipif(not os.path.exists(native.LIBRARY), reason="build/libbench_native.so not built (ninja -C build)")
def test_native_add_and_sgemm():
    lib = native.load()
    buffers = lib.buffers(4096, 2)
    buffers.add(2)
    expected = sum((i % 1024) * 0.001 + 1.0 - (i % 512) * 0.002 for i in range(4096))
    assert abs(buffers.checksum() - expected) < 1e-2
    buffers.sgemm(64)
    assert lib.blas_threads() >= 1 and "OpenBLAS" in lib.blas_config()
    with pytest.raises(ValueError):
        buffers.sgemm(65)
    buffers.close()
