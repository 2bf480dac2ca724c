"""The machine description written at the top of the results: CPU, cores, memory, OS,
Python and library versions, the BLAS each library uses."""
from __future__ import annotations

import os
import platform
import re
import sys
from typing import Dict


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def cpu_model() -> str:
    match = re.search(r"^model name\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    return match.group(1).strip() if match else (platform.processor() or platform.machine())


def cpu_flags() -> str:
    match = re.search(r"^flags\s*:\s*(.+)$", _read("/proc/cpuinfo"), re.M)
    flags = set(match.group(1).split()) if match else set()
    wanted = ("avx", "avx2", "fma", "f16c", "avx512f")
    return " ".join(f for f in wanted if f in flags) or "unknown"


def memory_gib() -> float:
    match = re.search(r"^MemTotal:\s*(\d+) kB", _read("/proc/meminfo"), re.M)
    return int(match.group(1)) / 2**20 if match else float("nan")


def os_name() -> str:
    match = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', _read("/etc/os-release"), re.M)
    name = match.group(1) if match else platform.system()
    return f"{name}, kernel {platform.release()}"


def torch_blas(torch) -> str:
    config = torch.__config__.show()
    match = re.search(r"BLAS_INFO=(\w+)", config)
    return match.group(1) if match else "unknown"


def numpy_blas(numpy) -> str:
    try:
        blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # older NumPy: no dict mode
        return "unknown"


def describe(libs) -> Dict[str, str]:
    """A flat, ordered description (key -> text)."""
    cgrad_blas = libs.native.blas_config() if libs.native is not None else "OpenBLAS (version unknown: build/ missing)"
    return {
        "CPU": f"{cpu_model()} ({cpu_flags()})",
        "cores": f"{os.cpu_count()} logical",
        "memory": f"{memory_gib():.1f} GiB",
        "OS": os_name(),
        "Python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "cgrad": f"{libs.cgrad.__version__}, BLAS: {cgrad_blas}",
        "PyTorch": f"{libs.torch.__version__}, BLAS: {torch_blas(libs.torch)}",
        "NumPy": f"{libs.numpy.__version__}, BLAS: {numpy_blas(libs.numpy)}",
    }
