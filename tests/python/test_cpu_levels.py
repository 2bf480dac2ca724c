"""CPU levels (Note [CPU levels], src/core/cpu_features.c) and the bundled
BLAS: the level chosen at import (cpuid + xgetbv, or CGRAD_CPU_LEVEL), what
each level computes, what cgrad.__config__ and cgrad.backends.cpu report, and
which OpenBLAS is loaded."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import cgrad
from cgrad import _build_config, _cpuinfo, _engine


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    e = dict(os.environ)
    e.pop("CGRAD_CPU_LEVEL", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)


@pytest.mark.parametrize("supported,requested,available,expected", [
    ("avx512", None, ["baseline", "avx2", "avx512"], "avx512"),
    ("avx2", None, ["baseline", "avx2", "avx512"], "avx2"),
    ("baseline", None, ["baseline", "avx2", "avx512"], "baseline"),
    ("avx512", "avx2", ["baseline", "avx2", "avx512"], "avx2"),
    ("avx512", "baseline", ["baseline", "avx2", "avx512"], "baseline"),
    ("avx2", "avx2", ["baseline", "avx2", "avx512"], "avx2"),
    ("avx512", None, ["baseline"], "baseline"),        # a build with fewer levels
    ("avx512", "avx2", ["baseline", "avx512"], "baseline"),
    ("avx2", "baseline", ["native"], "native"),         # -Dnative=true: the one build
])
def test_choose_level(supported, requested, available, expected):
    assert _engine.choose_level(supported, requested, available) == expected


@pytest.mark.parametrize("supported,requested,match", [
    ("avx2", "avx512", "asks for more than this CPU runs"),
    ("baseline", "avx2", "asks for more than this CPU runs"),
    ("avx512", "sse2", "is not a CPU level"),
    ("none", None, "x86-64-v2"),
])
def test_choose_level_refuses(supported, requested, match):
    with pytest.raises(ImportError, match=match):
        _engine.choose_level(supported, requested, ["baseline", "avx2", "avx512"])


def test_a_native_build_refuses_a_request_that_names_no_level():
    with pytest.raises(ImportError, match="is not a CPU level"):
        _engine.choose_level("avx512", "sse9", ["native"])


def _proc_flags() -> set[str]:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


@pytest.mark.skipif(not os.path.exists("/proc/cpuinfo"), reason="needs /proc/cpuinfo")
def test_supported_level_agrees_with_the_kernel():
    # Linux lists a feature in /proc/cpuinfo only when the CPU has it and the
    # kernel enabled its register state: an independent view of cpuid + xgetbv.
    flags = _proc_flags()
    v2 = {"sse4_2", "popcnt", "ssse3", "cx16", "lahf_lm"} <= flags
    v3 = v2 and {"avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "movbe", "abm"} <= flags
    v4 = v3 and {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= flags
    expected = "avx512" if v4 else "avx2" if v3 else "baseline" if v2 else "none"
    assert _cpuinfo.supported_level() == expected
    assert _cpuinfo.has_avx512_bf16() == ("avx512_bf16" in flags and "avx512f" in flags)


def test_default_level_is_the_best_this_cpu_runs():
    best = _engine.runnable_levels()[-1]
    if "CGRAD_CPU_LEVEL" not in os.environ:
        assert cgrad._C._build_info()["cpu_level"] == best or best == "native"


_PROBE = """
import json, cgrad
x = cgrad.linspace(-4.0, 4.0, 1001)
h = cgrad.linspace(-3.0, 3.0, 517).to(cgrad.float16)
a = cgrad.arange(64 * 48, dtype=cgrad.float32).reshape(64, 48) / 1000
print(json.dumps({
    "capability": cgrad.backends.cpu.get_cpu_capability(),
    "built": cgrad._C._build_info()["cpu_level"],
    "config": cgrad.__config__.show(),
    "x": x.tolist(), "exp": x.exp().tolist(), "tanh": x.tanh().tolist(),
    "gelu": cgrad.nn.functional.gelu(x).tolist(),
    "h": h.float().tolist(), "half_sigmoid": h.sigmoid().float().tolist(), "sum": float(x.sum()),
    "a": a.tolist(), "mm": (a @ a.t()).tolist(), "softmax": a.softmax(-1).tolist(),
}))
"""


def _probe(level: str) -> dict:
    out = _run(_PROBE, CGRAD_CPU_LEVEL=level)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _assert_ulps(got, ref, ulps: float, what: str) -> None:
    import numpy as np
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    spacing = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    err = np.abs(got - ref) / spacing
    assert err.max() <= ulps, f"{what}: {err.max():.2f} ulp at x index {int(err.argmax())}"


@pytest.mark.parametrize("level", _engine.runnable_levels())
def test_each_level_loads_and_computes(level):
    # Each build is checked against float64 references on its own inputs:
    # levels may differ in the last bits (FMA contraction, vector widths),
    # never beyond these bounds.
    import math
    import numpy as np
    if level == "native":
        pytest.skip("a -Dnative=true build has one level")
    r = _probe(level)
    names = {"baseline": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}
    assert r["built"] == level and r["capability"] == names[level]
    assert f"CPU level in use: {level}" in r["config"]
    x = np.asarray(r["x"], np.float64)
    _assert_ulps(r["exp"], np.exp(x), 2, "exp")
    _assert_ulps(r["tanh"], np.tanh(x), 2, "tanh")
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(r["gelu"], 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-6, atol=2e-7)
    h = np.asarray(r["h"], np.float64)
    ref = (1 / (1 + np.exp(-h))).astype(np.float16).astype(np.float64)  # float32 compute, one rounding
    np.testing.assert_allclose(r["half_sigmoid"], ref, rtol=2 ** -10, atol=0)
    np.testing.assert_allclose(r["sum"], x.astype(np.float32).astype(np.float64).sum(), atol=1e-5)
    a = np.asarray(r["a"], np.float64)
    np.testing.assert_allclose(r["mm"], a @ a.T, rtol=1e-6, atol=1e-6)
    e = np.exp(a - a.max(-1, keepdims=True))
    np.testing.assert_allclose(r["softmax"], e / e.sum(-1, keepdims=True), rtol=1e-6, atol=1e-9)


def test_a_bad_level_request_is_an_import_error():
    out = _run("import cgrad", CGRAD_CPU_LEVEL="sse9")
    assert out.returncode != 0
    assert "ImportError" in out.stderr and "CGRAD_CPU_LEVEL='sse9' is not a CPU level" in out.stderr


def test_config_names_the_build_and_the_blas():
    text = cgrad.__config__.show()
    info = cgrad._C._build_info()
    assert f"CPU level in use: {info['cpu_level']}" in text
    assert f"this CPU supports {_cpuinfo.supported_level()}" in text
    assert f"kernels: {info['blas_corename']}" in text
    assert "OpenBLAS" in info["blas_config"]
    assert "threads" in cgrad.__config__.parallel_info()


def _mapped_libraries(code: str, **env: str) -> list[str]:
    out = _run(code + "\nprint(open('/proc/self/maps').read())", **env)
    assert out.returncode == 0, out.stderr
    return sorted({f[-1] for f in (line.split() for line in out.stdout.splitlines()) if f and ".so" in f[-1]})


@pytest.mark.skipif(_build_config.BLAS != "scipy-openblas", reason="built with -Dblas=system")
def test_the_bundled_openblas_is_the_one_loaded():
    import scipy_openblas32  # the runtime dependency
    libs = _mapped_libraries("import cgrad; (cgrad.ones(64, 64) @ cgrad.ones(64, 64)).sum()")
    blas = [p for p in libs if "openblas" in os.path.basename(p)]
    assert blas and all(p.startswith(scipy_openblas32.get_lib_dir()) for p in blas), blas
    assert sum("libcgrad" in os.path.basename(p) for p in libs) == 1, libs


@pytest.mark.skipif(_build_config.BLAS != "scipy-openblas", reason="built with -Dblas=system")
def test_openblas_coretype_is_the_users_override():
    # OPENBLAS_CORETYPE picks OpenBLAS's kernels; cgrad never sets it.
    code = "import cgrad; print(cgrad._C._build_info()['blas_corename'])"
    forced = _run(code, OPENBLAS_CORETYPE="Sandybridge")
    assert forced.returncode == 0 and forced.stdout.strip().lower() == "sandybridge"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENBLAS_")}
    own = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert own.returncode == 0 and own.stdout.strip().lower() != "sandybridge"


def test_openblas_thread_timeout_is_set_before_openblas_loads():
    # cgrad/_engine.py sets it unless the user has; the README says so.
    code = "import os, cgrad; print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == _engine.OPENBLAS_THREAD_TIMEOUT
    assert _run(code, OPENBLAS_THREAD_TIMEOUT="12").stdout.strip() == "12"
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "README.md")) as f:
        assert f"`OPENBLAS_THREAD_TIMEOUT={_engine.OPENBLAS_THREAD_TIMEOUT}` unless already set" in f.read()
