"""ctypes access to build/libbench_native.so (bench/native/bench_native.c): the STREAM-style
add loop and the direct cblas_sgemm call that the bandwidth and gemm suites report as the
machine's limits. `ninja -C build` (or `make build`) builds the library."""
from __future__ import annotations

import ctypes
import os
from typing import Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBRARY = os.path.join(ROOT, "build", "libbench_native.so")


class Buffers:
    """Three pre-touched float32 arrays of `count` elements (a, b inputs; c output)."""

    def __init__(self, native: "Native", count: int, threads: int) -> None:
        self._lib = native.lib
        self.count = count
        self.handle = self._lib.bench_buffers_new(count, threads)
        if not self.handle:
            raise MemoryError(f"bench_native: cannot allocate 3 x {count} floats")

    def add(self, threads: int) -> None:
        self._lib.bench_add(self.handle, threads)

    def sgemm(self, n: int) -> None:
        if self._lib.bench_sgemm(self.handle, n) != 0:
            raise ValueError(f"bench_native: {n} x {n} does not fit in {self.count} floats")

    def checksum(self) -> float:
        return self._lib.bench_checksum(self.handle)

    def close(self) -> None:
        if self.handle:
            self._lib.bench_buffers_free(self.handle)
            self.handle = None

    def __del__(self) -> None:
        self.close()


class Native:
    """The loaded library; `threads` <= 0 means the OpenMP default."""

    def __init__(self, path: str = LIBRARY) -> None:
        lib = ctypes.CDLL(path)
        lib.bench_buffers_new.restype = ctypes.c_void_p
        lib.bench_buffers_new.argtypes = [ctypes.c_int64, ctypes.c_int]
        lib.bench_buffers_free.argtypes = [ctypes.c_void_p]
        lib.bench_add.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.bench_sgemm.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.bench_sgemm.restype = ctypes.c_int
        lib.bench_checksum.argtypes = [ctypes.c_void_p]
        lib.bench_checksum.restype = ctypes.c_double
        lib.bench_blas_set_threads.argtypes = [ctypes.c_int]
        lib.bench_blas_get_threads.restype = ctypes.c_int
        lib.bench_blas_config.restype = ctypes.c_char_p
        lib.bench_omp_max_threads.restype = ctypes.c_int
        self.lib = lib

    def buffers(self, count: int, threads: int) -> Buffers:
        return Buffers(self, count, threads)

    def set_blas_threads(self, threads: int) -> None:
        self.lib.bench_blas_set_threads(threads)

    def blas_threads(self) -> int:
        return self.lib.bench_blas_get_threads()

    def blas_config(self) -> str:
        return self.lib.bench_blas_config().decode()

    def omp_threads(self) -> int:
        return self.lib.bench_omp_max_threads()


def load() -> Optional[Native]:
    """The library, or None when it has not been built."""
    if not os.path.exists(LIBRARY):
        return None
    return Native()
