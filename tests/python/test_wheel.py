"""The distributable wheel (`make wheel`, which sets CGRAD_WHEEL to the
repaired wheel's path and runs this file): its tags, the shared libraries its
binaries need, and a smoke test (import, matmul, a training step) in a fresh
virtualenv at every CPU level this machine runs. Without CGRAD_WHEEL, skipped."""
from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile

import pytest

WHEEL = os.environ.get("CGRAD_WHEEL")
pytestmark = pytest.mark.skipif(not WHEEL, reason="make wheel builds the wheel and runs these tests on it")

# What a manylinux wheel may need from the system (the manylinux policy's
# libraries), and what the scipy-openblas32 dependency provides.
SYSTEM_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2",
               "libgcc_s.so.1"}
DEPENDENCY_LIBS = {"libscipy_openblas.so"}


def _needed(path: str) -> tuple[set[str], str | None]:
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    needed = {line.split("[", 1)[1].split("]")[0] for line in out.splitlines() if "(NEEDED)" in line}
    soname = next((line.split("[", 1)[1].split("]")[0] for line in out.splitlines() if "(SONAME)" in line), None)
    return needed, soname


def test_wheel_tags():
    name = os.path.basename(WHEEL)
    dist, version, py, abi, plat = name[:-4].split("-")
    assert dist == "cgrad"
    assert py == abi == f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert all(p.startswith("manylinux_2_") and p.endswith("_x86_64") for p in plat.split(".")), plat
    with zipfile.ZipFile(WHEEL) as z:
        wheel_meta = z.read(f"cgrad-{version}.dist-info/WHEEL").decode()
        meta = z.read(f"cgrad-{version}.dist-info/METADATA").decode()
    assert "Root-Is-Purelib: false" in wheel_meta
    assert "Requires-Dist: scipy-openblas32" in meta


def test_wheel_library_closure(tmp_path):
    with zipfile.ZipFile(WHEEL) as z:
        z.extractall(tmp_path)
    sos = [os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs if ".so" in f]
    names = {os.path.basename(p) for p in sos}
    for lib in ("libcgrad.so", "libcgrad-avx2.so", "libcgrad-avx512.so"):
        assert lib in names, f"{lib} missing from the wheel"
    provided = set(names)
    for p in sos:
        needed, soname = _needed(p)
        if soname:
            provided.add(soname)
    for p in sos:
        needed, _ = _needed(p)
        outside = needed - provided - SYSTEM_LIBS - DEPENDENCY_LIBS
        assert not outside, f"{os.path.basename(p)} needs {sorted(outside)}, which neither the wheel nor manylinux provides"
        out = subprocess.run(["readelf", "-d", p], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():  # no RPATH into the machine that built it
            if "RPATH" in line or "RUNPATH" in line:
                assert all(e.startswith("$ORIGIN") for e in line.split("[", 1)[1].split("]")[0].split(":")), line


SMOKE = """
import os, cgrad
from cgrad import nn
a = cgrad.arange(12.0).reshape(3, 4)
assert (a @ a.t()).tolist() == [[14.0, 38.0, 62.0], [38.0, 126.0, 214.0], [62.0, 214.0, 366.0]]
cgrad.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt = cgrad.optim.SGD(model.parameters(), lr=0.05)
x = cgrad.randn(64, 8)
y = x.sum(1, keepdim=True)
losses = []
for _ in range(50):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
assert losses[-1] < 0.5 * losses[0], losses
maps = open("/proc/self/maps").read()
print(cgrad.backends.cpu.get_cpu_capability(), "cgrad" in maps)
"""


def test_wheel_smoke_in_a_fresh_venv(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = str(env_dir / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", WHEEL], check=True)
    levels = subprocess.run([py, "-c", "from cgrad import _engine; print(*_engine.runnable_levels())"],
                            capture_output=True, text=True, check=True, cwd=tmp_path).stdout.split()
    assert levels and levels[0] == "baseline"
    names = {"baseline": "DEFAULT", "avx2": "AVX2", "avx512": "AVX512"}
    for level in levels:
        env = dict(os.environ, CGRAD_CPU_LEVEL=level)
        out = subprocess.run([py, "-c", SMOKE], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [names[level], "True"]
