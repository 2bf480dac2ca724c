"""Loads the engine: the BLAS it was built against, then the libcgrad.so build
for this CPU's level (Note [CPU levels], src/core/cpu_features.c). Runs when
cgrad is imported, before cgrad._C, whose libcgrad.so dependency the loaded
build then satisfies (the builds share that soname).

The level is the highest one this CPU and OS run (cpuid and xgetbv, asked
through cgrad._cpuinfo), or the lower one the environment variable
CGRAD_CPU_LEVEL names: baseline, avx2 or avx512."""
from __future__ import annotations

import ctypes
import importlib.util
import os

from . import _build_config, _cpuinfo

LEVELS = ("baseline", "avx2", "avx512")
ENV_VAR = "CGRAD_CPU_LEVEL"

_handles: list[ctypes.CDLL] = []  # the loaded libraries stay loaded for the process


def engines() -> dict[str, str]:
    """The engine builds of this installation: level -> library file, lowest level first."""
    return dict(entry.split(":", 1) for entry in _build_config.ENGINES.split())


def choose_level(supported: str, requested: str | None, available: list[str]) -> str:
    """The level to load: the highest of `available` that is at most `supported`
    and, when given, at most `requested`. A request above what the CPU runs, or
    not a level name, raises ImportError. A -Dnative=true build has one engine,
    "native", loaded whatever level is requested, but a request that names no
    level is refused there too."""
    if requested is not None and requested not in LEVELS:
        raise ImportError(f"{ENV_VAR}={requested!r} is not a CPU level: use one of {', '.join(LEVELS)}")
    if available == ["native"]:
        return "native"
    if supported not in LEVELS:
        raise ImportError("cgrad needs an x86-64-v2 CPU (SSE4.2, POPCNT); this one is below that")
    cap = LEVELS.index(supported)
    if requested is not None:
        if LEVELS.index(requested) > cap:
            raise ImportError(f"{ENV_VAR}={requested} asks for more than this CPU runs ({supported})")
        cap = LEVELS.index(requested)
    usable = [lv for lv in available if lv in LEVELS and LEVELS.index(lv) <= cap]
    if not usable:
        raise ImportError(f"no cgrad engine build runs on this CPU ({supported}); builds: {', '.join(available)}")
    return max(usable, key=LEVELS.index)


def runnable_levels() -> list[str]:
    """The engine builds this CPU runs, lowest level first."""
    supported = _cpuinfo.supported_level()
    cap = LEVELS.index(supported) if supported in LEVELS else -1
    return [lv for lv in engines() if lv == "native" or (lv in LEVELS and LEVELS.index(lv) <= cap)]


def _load_blas() -> None:
    if _build_config.BLAS != "scipy-openblas":
        return  # the system BLAS: found by the dynamic loader
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("cgrad was built against the scipy-openblas32 package, which is not installed "
                          "(pip install scipy-openblas32)")
    libdir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
    names = sorted(n for n in os.listdir(libdir) if n.startswith("libscipy_openblas") and ".so" in n)
    if not names:
        raise ImportError(f"scipy-openblas32 has no library in {libdir}")
    _handles.append(ctypes.CDLL(os.path.join(libdir, names[0])))


# OpenBLAS's idle threads spin about 2^28 cycles after each call before they
# sleep, taking cores from the engine's own pool on small machines; 4 (its
# minimum, 2^4 cycles) sends them to sleep at once. OpenBLAS reads it when it
# loads, so it is set before; a value the user has set wins. Measured on the
# 2-core VM (loaded), demo CNN step median 28 ms with it against 40-233 ms
# without, MLP 784-256-10 step 1.9-4.0 ms against 9-72 ms.
OPENBLAS_THREAD_TIMEOUT = "4"


CUBLAS_ENV = "CGRAD_CUBLAS_DIR"


def cublas_dir() -> str | None:
    """The lib folder of the nvidia-cublas wheel when it is installed (pip install cgrad[cuda]), which the
    CUDA kernel library loads cuBLAS from (Note [CUDA kernel library]); None otherwise. Nothing is imported
    or loaded: the library is opened at the first product on a cuda device."""
    try:
        spec = importlib.util.find_spec("nvidia.cublas")
    except (ImportError, ValueError):
        return None
    for root in list(spec.submodule_search_locations or []) if spec else []:
        lib = os.path.join(root, "lib")
        if os.path.isdir(lib):
            return lib
    return None


def load() -> str:
    """Load the BLAS and the engine build; returns the engine's level."""
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", OPENBLAS_THREAD_TIMEOUT)
    if CUBLAS_ENV not in os.environ:
        found = cublas_dir()
        if found:
            os.environ[CUBLAS_ENV] = found
    builds = engines()
    requested = os.environ.get(ENV_VAR, "").strip().lower() or None
    level = choose_level(_cpuinfo.supported_level(), requested, list(builds))
    _load_blas()
    here = os.path.dirname(os.path.realpath(_cpuinfo.__file__))
    _handles.append(ctypes.CDLL(os.path.join(here, builds[level])))
    return level
