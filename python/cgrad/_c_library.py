"""The engine as a C library from the Python package: get_include() and get_lib_dir()
name the header folder and the folder of the engine this package loads, and
compile_flags() / link_flags() give what `python -m cgrad --cflags --libs` prints,
so a C program or another extension links the exact engine the package uses."""
from __future__ import annotations

import os
from typing import List

from . import _build_config, _engine


def get_include() -> str:
    """The folder holding cgrad.h (installed in the package; the source tree's for an editable install)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")
    for d in (here, _build_config.SOURCE_INCLUDE):
        if os.path.isfile(os.path.join(d, "cgrad.h")):
            return d
    raise FileNotFoundError("cgrad.get_include: this installation has no cgrad.h (looked in "
                            f"{here} and {_build_config.SOURCE_INCLUDE})")


def get_lib_dir() -> str:
    """The folder of the engine builds (libcgrad.so and the per-CPU-level ones) this package loads."""
    return os.path.dirname(os.path.realpath(_engine._cpuinfo.__file__))


def _blas_link_flags() -> List[str]:
    """The bundled BLAS, linked as a direct dependency so that libcgrad's own need of it is met
    (the engine in the package carries no path to it: cgrad/_engine.py loads it first)."""
    if _build_config.BLAS != "scipy-openblas":
        return []
    import scipy_openblas32
    d = scipy_openblas32.get_lib_dir()
    # --no-as-needed: the program itself calls nothing in it, and the linker would drop it
    return [f"-L{d}", f"-Wl,-rpath,{d}", "-Wl,--no-as-needed", f"-l{scipy_openblas32.get_library()}",
            "-Wl,--as-needed"]


def compile_flags() -> List[str]:
    return [f"-I{get_include()}"]


def link_flags() -> List[str]:
    """Link against libcgrad.so (the baseline build: any x86-64-v2 CPU runs it) with a run path to it."""
    d = get_lib_dir()
    return [f"-L{d}", f"-Wl,-rpath,{d}", "-lcgrad"] + _blas_link_flags() + ["-lm"]
