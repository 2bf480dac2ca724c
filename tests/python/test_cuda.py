"""cgrad's CUDA devices from Python: cgrad.device for cuda, the cgrad.cuda
namespace, tensors on cuda devices (factories, to / cuda / cpu, interop,
serialization) and Module.to('cuda').

What a run can check depends on the build (cgrad.cuda's docstring):
- "none": no CUDA kernel library (libcgrad_cuda.so) -- PyTorch's CPU build,
  which is the torch installed here, so these runs compare with it;
- "no-device": the library but no usable GPU -- PyTorch's CUDA build on such
  a machine (RuntimeError with the engine's reason where a device is needed);
- "devices": GPUs. The tests under `gpu` (skipped without a device) run the
  kernels against the CPU.

Whatever the build, a stand-in kernel library on host memory (FAKE_LIBRARY,
compiled here with the C compiler and loaded through CGRAD_CUDA_LIBRARY in a
child process) plays the other states: a machine without a driver, one with
no GPU, and one with two "GPUs" whose copies, casts and fills work and whose
kernels are all missing. That checks the Python layer's own logic (devices,
moves, memory statistics, out-of-memory, serialization, modules, streams) with
devices present on any machine; the numbers real kernels compute are the gpu
tests'."""
from __future__ import annotations

import copy
import io
import os
import pickle
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import cgrad

ROOT = Path(__file__).resolve().parents[2]
ABI_HEADER = ROOT / "src" / "backend" / "cuda" / "cuda_abi.h"


def _state() -> str:
    if not cgrad.backends.cuda.is_built():
        return "none"
    return "devices" if cgrad.cuda.is_available() else "no-device"


STATE = _state()
gpu = pytest.mark.skipif(STATE != "devices", reason="no CUDA device")
no_gpu = pytest.mark.skipif(STATE == "devices", reason="a CUDA device is usable here")
NOT_COMPILED = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def outcome(fn):
    """('value', v) or ('raises', exception type name, message)."""
    try:
        return ("value", fn())
    except BaseException as e:  # the type and message are what is compared
        return ("raises", type(e).__name__, str(e))


# ---------------------------------------------------------------- cgrad.device for cuda (every build)

def _device_facts(d):
    return (d.type, d.index, str(d), repr(d))


def _parse(lib, args, kwargs):
    got = outcome(lambda: lib.device(*args, **kwargs))
    if got[0] == "value":
        return ("value", _device_facts(got[1]))
    # torch lists all its device types; cgrad the ones it has
    return got[:2] + (re.sub(r"Expected one of .* device type", "Expected one of <types> device type", got[2]),)


PARSE = [("cuda",), ("cuda:0",), ("cuda:1",), ("cuda:12",), ("cuda:-1",), ("cuda:x",), ("cudax",), ("cuda:01",),
         ("cuda: 1",), ("cuda:1:2",), ("cuda:",), (" cuda",), ("CUDA",), ("foo",), ("cpu",), ("meta",),
         ("cuda", 0), ("cuda", 3), ("cuda", None), ("cuda", -1), ("cuda:0", 1), ("cuda", "1"), ("cuda", True),
         ("cuda", 1.0), (-1,)]


@pytest.mark.parametrize("args", PARSE, ids=repr)
def test_device_parsing_is_torch_s(args):
    """Parsing needs no GPU, as torch.device's: the same devices, and the same errors and messages."""
    assert _parse(cgrad, args, {}) == _parse(torch, args, {})


def test_device_keywords_equality_hash_and_pickle():
    for lib in (cgrad, torch):
        assert _device_facts(lib.device(type="cuda", index=1)) == ("cuda", 1, "cuda:1", "device(type='cuda', index=1)")
        a, b, c = lib.device("cuda"), lib.device("cuda:0"), lib.device("cuda", 0)
        assert a != b and b == c and hash(b) == hash(c) and len({a, b, c}) == 2  # the index counts, as in torch
        assert lib.device("cuda:1") != b and a.index is None and b.index == 0
        assert lib.device(b) == b
    for d in ("cuda", "cuda:1", "cpu", "meta"):
        dev = cgrad.device(d)
        assert pickle.loads(pickle.dumps(dev)) == dev and copy.deepcopy(dev) == dev
    # cgrad compares a device with a device string (its own convenience; torch says False): by the same rule
    assert cgrad.device("cuda:1") == "cuda:1" and cgrad.device("cuda:1") != "cuda" and cgrad.device("cuda") == "cuda"
    assert cgrad.device("cpu") == "cpu" and cgrad.device("cuda:0") != "cpu"


def test_cpu_and_meta_tensors_are_not_cuda():
    for lib in (cgrad, torch):
        for t in (lib.ones(2), lib.ones(2, device="meta")):
            assert t.is_cuda is False and t.get_device() == -1 and not hasattr(t, "__cuda_array_interface__")
    got = outcome(lambda: cgrad.ones(2).__cuda_array_interface__)
    assert got[:2] == ("raises", "AttributeError") and got == outcome(lambda: torch.ones(2).__cuda_array_interface__)
    assert cgrad.ones(2).__dlpack_device__() == (1, 0)


def test_out_of_memory_error_is_torch_s():
    assert cgrad.cuda.OutOfMemoryError is cgrad.OutOfMemoryError
    assert [k.__name__ for k in cgrad.OutOfMemoryError.__mro__] == [k.__name__ for k in torch.OutOfMemoryError.__mro__]
    assert not issubclass(cgrad.OutOfMemoryError, MemoryError)  # torch's is a RuntimeError only


def test_device_modules():
    for lib in (cgrad, torch):
        assert lib.get_device_module("cuda") is lib.cuda and lib.get_device_module(lib.device("cuda:1")) is lib.cuda
        with pytest.raises(RuntimeError):
            lib.get_device_module(3)
    if STATE == "devices":
        assert cgrad.get_device_module() is cgrad.cuda


def test_negative_and_non_cuda_arguments_as_torch():
    """Refused before any device is looked at, whatever the build."""
    calls = [lambda L: L.zeros(1, device=-1), lambda L: L.zeros(1).cuda(-1), lambda L: L.zeros(1).cuda("cpu"),
             lambda L: L.zeros(1).cuda(L.device("meta"))]
    for call in calls:
        assert outcome(lambda: call(cgrad))[:3] == outcome(lambda: call(torch))[:3]
    for lib in (cgrad, torch):
        with lib.cuda.device(-1), lib.cuda.device_of(lib.zeros(1)), lib.cuda.stream(None):
            lib.cuda.set_device(-1)  # all no-ops


# ---------------------------------------------------------------- no usable device (states none and no-device)

MAKE_ON_CUDA = {
    "zeros": lambda L: L.zeros(2, device="cuda"),
    "ones_cuda1": lambda L: L.ones(2, 3, device="cuda:1"),
    "full": lambda L: L.full((2,), 1.5, device="cuda"),
    "empty": lambda L: L.empty(2, device=L.device("cuda", 0)),
    "tensor": lambda L: L.tensor([1.0, 2.0], device="cuda"),
    "zeros_like": lambda L: L.zeros_like(L.ones(2), device="cuda"),
    "to": lambda L: L.ones(2).to("cuda"),
    "to_device_dtype": lambda L: L.ones(2).to(L.device("cuda"), L.float64),
    "to_kw": lambda L: L.ones(2).to(device="cuda:0", non_blocking=True),
    "cuda": lambda L: L.ones(2).cuda(),
    "cuda_non_blocking": lambda L: L.ones(2).cuda(non_blocking=True),
    "module_cuda": lambda L: L.nn.Linear(2, 2).cuda(),
    "module_to": lambda L: L.nn.Linear(2, 2).to("cuda"),
}


@no_gpu
@pytest.mark.parametrize("name", sorted(MAKE_ON_CUDA))
def test_making_or_moving_to_cuda_without_a_device(name):
    make = MAKE_ON_CUDA[name]
    got = outcome(lambda: make(cgrad))
    if STATE == "none":  # exactly PyTorch's CPU build
        assert got == ("raises", "AssertionError", NOT_COMPILED) == outcome(lambda: make(torch))
    else:  # PyTorch's CUDA build without a GPU raises RuntimeError; cgrad says why
        assert got[:2] == ("raises", "RuntimeError") and re.search(r"cannot use device cuda:\d: ", got[2]), got
        assert got[2].endswith(cgrad._C._cuda_unavailable_reason())


INT_DEVICES = [lambda L: L.zeros(1, device=0), lambda L: L.zeros(1).to(0), lambda L: L.zeros(1).cuda(0),
               lambda L: L.zeros(1).cuda(device=1), lambda L: L.nn.Linear(2, 2).to(0), lambda L: L.device(0)]


@no_gpu
@pytest.mark.parametrize("make", INT_DEVICES)
def test_an_int_device_needs_an_accelerator(make):
    """An int is the accelerator's device N (cuda:N with a GPU); with none, PyTorch's RuntimeError."""
    assert outcome(lambda: make(cgrad)) == ("raises", "RuntimeError", NO_ACCELERATOR) == outcome(lambda: make(torch))


@no_gpu
def test_namespace_without_a_device():
    c = cgrad.cuda
    assert c.is_available() is False and c.device_count() == 0 and c.is_initialized() is False
    assert cgrad.backends.cuda.is_built() is (STATE == "no-device") and cgrad.accelerator.is_available() is False
    assert c.memory_allocated() == 0 and c.max_memory_reserved() == 0 and dict(c.memory_stats()) == {}
    assert c.get_rng_state_all() == [] and c.get_arch_list() == [] and c.is_bf16_supported() is False
    c.manual_seed(1), c.manual_seed_all(1), c.seed(), c.empty_cache()  # accepted, nothing to do
    expected = AssertionError if STATE == "none" else RuntimeError
    for call in (c.current_device, c.synchronize, c.init, c.get_device_properties, c.mem_get_info, c.current_stream,
                 c.initial_seed, lambda: c.get_device_name(0)):
        with pytest.raises(expected) as info:
            call()
        assert type(info.value) is expected
        if STATE == "no-device":
            assert cgrad._C._cuda_unavailable_reason() in str(info.value)
    with pytest.raises(RuntimeError, match=re.escape(NO_ACCELERATOR)):
        cgrad.ones(2).pin_memory()
    assert cgrad.ones(2).is_pinned() is False


@no_gpu
def test_default_device_cuda_without_a_device():
    expected = AssertionError if STATE == "none" else RuntimeError
    try:
        cgrad.set_default_device("cuda")  # accepted, as by torch
        for make in (lambda: cgrad.ones(2), lambda: cgrad.tensor([1.0]), lambda: cgrad.get_default_device()):
            with pytest.raises(expected) as info:
                make()
            assert type(info.value) is expected
        cgrad.set_default_device("cuda:1")
        assert cgrad.get_default_device() == cgrad.device("cuda", 1)  # an index: the device itself, as torch
    finally:
        cgrad.set_default_device(None)
    assert cgrad.ones(1).device == cgrad.device("cpu")


# ---------------------------------------------------------------- a stand-in kernel library (every build)

FAKE_LIBRARY = r"""
/* A stand-in for libcgrad_cuda.so on host memory (tests only): FAKE_CUDA_DEVICES devices (default 2) of
 * FAKE_CUDA_MEMORY bytes each (default 64 MiB), or with FAKE_CUDA_NO_DRIVER=1 the status of a machine
 * without a driver; FAKE_CUDA_SYNC_ERROR=N makes the first synchronize report error N. Copies, casts and
 * fills work; every kernel is missing (CGCU_MISSING). */
#include "cuda_abi.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV 16
static size_t g_used[MAXDEV], g_total = 64u << 20;
static int g_pending;

static const char *err_str(int st) {
    static char buf[64];
    if (st == 35) return "CUDA driver version is insufficient for CUDA runtime version";
    snprintf(buf, sizeof buf, "fake CUDA error %d", st);
    return buf;
}

static int dev_count(int *n) {
    const char *nd = getenv("FAKE_CUDA_NO_DRIVER");
    if (nd && *nd == '1') {
        *n = 0;
        return 35;
    }
    const char *e = getenv("FAKE_CUDA_DEVICES"), *m = getenv("FAKE_CUDA_MEMORY");
    *n = e ? atoi(e) : 2;
    if (m) g_total = (size_t)strtoull(m, NULL, 10);
    return CGCU_OK;
}

static int props(int dev, cgcu_props *p) {
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "cgrad fake GPU %d", dev);
    p->major = dev == 0 ? 9 : 7, p->minor = 0, p->multiprocessors = 4, p->total_memory = g_total;
    return CGCU_OK;
}

/* the blocks handed out, with their sizes for the memory counts */
#define MAXBLOCKS 4096
static struct { char *p; size_t n; } g_blocks[MAXBLOCKS];

static int dmalloc(int dev, size_t n, void **p) {
    if (g_used[dev] + n > g_total) return CGCU_OOM;
    int slot = 0;
    while (slot < MAXBLOCKS && g_blocks[slot].p) slot++;
    char *b = slot < MAXBLOCKS ? malloc(n ? n : 1) : NULL;
    if (!b) return CGCU_OOM;
    g_blocks[slot].p = b, g_blocks[slot].n = n;
    g_used[dev] += n;
    memset(b, 0xA5, n); /* device memory is not zeroed */
    *p = b;
    return CGCU_OK;
}

static int dfree(int dev, void *p) {
    if (!p) return CGCU_OK;
    for (int i = 0; i < MAXBLOCKS; i++)
        if (g_blocks[i].p == p) {
            g_used[dev] -= g_blocks[i].n;
            g_blocks[i].p = NULL;
            free(p);
            return CGCU_OK;
        }
    return CGCU_INVALID;
}

static int meminfo(int dev, size_t *f, size_t *t) {
    *f = g_total - g_used[dev], *t = g_total;
    return CGCU_OK;
}

static int copy_(int dev, void *d, const void *s, size_t n) {
    (void)dev;
    memcpy(d, s, n);
    return CGCU_OK;
}

static int sync_(int dev) {
    (void)dev;
    const char *e = getenv("FAKE_CUDA_SYNC_ERROR");
    if (e && !g_pending) {
        g_pending = 1;
        return atoi(e);
    }
    return CGCU_OK;
}

static int missing_ew(int dev, const cgcu_plan *p, int op, int dt, const double *pr, int *le) {
    (void)dev, (void)p, (void)op, (void)dt, (void)pr, (void)le;
    return CGCU_MISSING;
}

static size_t isz(int dt) {
    static const size_t s[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8, 2, 4, 8};
    return dt >= 0 && dt < 13 ? s[dt] : 0;
}

static float h2f(uint16_t h) {
    uint32_t s = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, f;
    if (e == 0) {
        if (!m) f = s;
        else {
            e = 127 - 15 + 1;
            while (!(m & 0x400)) m <<= 1, e--;
            f = s | (e << 23) | ((m & 0x3ff) << 13);
        }
    } else if (e == 31) f = s | 0x7f800000u | (m << 13);
    else f = s | ((e - 15 + 127) << 23) | (m << 13);
    float r;
    memcpy(&r, &f, 4);
    return r;
}

static uint16_t f2h(float x) {
    uint32_t f;
    memcpy(&f, &x, 4);
    uint32_t s = (f >> 16) & 0x8000, e = (f >> 23) & 0xff, m = f & 0x7fffff;
    if (e == 0xff) return (uint16_t)(s | 0x7c00 | (m ? 0x200 : 0));
    int ne = (int)e - 127 + 15;
    if (ne >= 31) return (uint16_t)(s | 0x7c00);
    if (ne <= 0) {
        if (ne < -10) return (uint16_t)s;
        m |= 0x800000;
        uint32_t sh = (uint32_t)(14 - ne), r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(s | r);
    }
    uint32_t r = ((uint32_t)ne << 10) | (m >> 13), rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++;
    return (uint16_t)(s | r);
}

static double load(const char *p, int dt) {
    switch (dt) {
    case 0: return *(const uint8_t *)p != 0;
    case 1: return *(const uint8_t *)p;
    case 2: return *(const int8_t *)p;
    case 3: return *(const int16_t *)p;
    case 4: return *(const int32_t *)p;
    case 5: return (double)*(const int64_t *)p;
    case 6: return h2f(*(const uint16_t *)p);
    case 7: {
        uint32_t u = (uint32_t)*(const uint16_t *)p << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case 8: return *(const float *)p;
    case 9: return *(const double *)p;
    case 10: return *(const uint16_t *)p;
    case 11: return *(const uint32_t *)p;
    default: return (double)*(const uint64_t *)p;
    }
}

static void store(char *p, int dt, double v) {
    switch (dt) {
    case 0: *(uint8_t *)p = v != 0; break;
    case 1: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
    case 2: *(int8_t *)p = (int8_t)(int64_t)v; break;
    case 3: *(int16_t *)p = (int16_t)(int64_t)v; break;
    case 4: *(int32_t *)p = (int32_t)(int64_t)v; break;
    case 5: *(int64_t *)p = (int64_t)v; break;
    case 6: *(uint16_t *)p = f2h((float)v); break;
    case 7: {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        u += 0x7fff + ((u >> 16) & 1);
        *(uint16_t *)p = (uint16_t)(u >> 16);
        break;
    }
    case 8: *(float *)p = (float)v; break;
    case 9: *(double *)p = v; break;
    case 10: *(uint16_t *)p = (uint16_t)(int64_t)v; break;
    case 11: *(uint32_t *)p = (uint32_t)(int64_t)v; break;
    default: *(uint64_t *)p = (uint64_t)v; break;
    }
}

/* every element of the plan (dim 0 innermost, byte strides): ptrs[a] for each argument */
#define FOR_EACH(p, body)                                                                           \
    do {                                                                                            \
        int64_t idx_[CGCU_MAX_DIMS] = {0};                                                          \
        for (int64_t n_ = 0; n_ < (p)->numel; n_++) {                                               \
            char *ptrs[CGCU_MAX_ARGS];                                                              \
            for (int a_ = 0; a_ < (p)->nargs; a_++) {                                               \
                ptrs[a_] = (p)->ptr[a_];                                                            \
                for (int d_ = 0; d_ < (p)->ndim; d_++) ptrs[a_] += idx_[d_] * (p)->strides[a_][d_]; \
            }                                                                                       \
            body;                                                                                   \
            for (int d_ = 0; d_ < (p)->ndim; d_++) {                                                \
                if (++idx_[d_] < (p)->shape[d_]) break;                                             \
                idx_[d_] = 0;                                                                       \
            }                                                                                       \
        }                                                                                           \
    } while (0)

static int cast(int dev, const cgcu_plan *p, int dst, int src) {
    (void)dev;
    if (dst == src) FOR_EACH(p, memcpy(ptrs[0], ptrs[1], isz(dst)));
    else if ((dst == 5 || dst == 12) && (src == 5 || src == 12)) FOR_EACH(p, memcpy(ptrs[0], ptrs[1], 8));
    else FOR_EACH(p, store(ptrs[0], dst, load(ptrs[1], src)));
    return CGCU_OK;
}

static int fill(int dev, const cgcu_plan *p, const void *v, size_t n) {
    (void)dev;
    FOR_EACH(p, memcpy(ptrs[0], v, n));
    return CGCU_OK;
}

static int reduce_(int dev, const cgcu_reduce_plan *p) {
    (void)dev, (void)p;
    return CGCU_MISSING;
}

static int gemm_(int dev, int dab, int dc, int ta, int tb, int64_t m, int64_t n, int64_t k, double al, const void *a,
                 int64_t lda, int64_t sa, const void *b, int64_t ldb, int64_t sb, double be, void *c, int64_t ldc,
                 int64_t sc, int64_t batch) {
    (void)dev, (void)dab, (void)dc, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)al, (void)a, (void)lda;
    (void)sa, (void)b, (void)ldb, (void)sb, (void)be, (void)c, (void)ldc, (void)sc, (void)batch;
    return CGCU_MISSING;
}

static int softmax_(int dev, int dt, void *y, const void *x, int64_t o, int64_t l, int64_t i, int lg) {
    (void)dev, (void)dt, (void)y, (void)x, (void)o, (void)l, (void)i, (void)lg;
    return CGCU_MISSING;
}

static int softmax_bw(int dev, int dt, void *gx, const void *g, const void *y, int64_t o, int64_t l, int64_t i,
                      int lg) {
    (void)dev, (void)dt, (void)gx, (void)g, (void)y, (void)o, (void)l, (void)i, (void)lg;
    return CGCU_MISSING;
}

static int index_gather_(int dev, const cgcu_plan *p, int itemsize) {
    (void)dev, (void)p, (void)itemsize;
    return CGCU_MISSING;
}

static int index_put_(int dev, const cgcu_plan *p, int dt, int acc) {
    (void)dev, (void)p, (void)dt, (void)acc;
    return CGCU_MISSING;
}

static int embedding_(int dev, void *out, const void *w, const int64_t *idx, int64_t n, int64_t D, int isz) {
    (void)dev, (void)out, (void)w, (void)idx, (void)n, (void)D, (void)isz;
    return CGCU_MISSING;
}

static int dropout_mask_(int dev, void *m, int64_t n, int isz, const void *kept, double keep, uint64_t seed,
                         uint64_t base) {
    (void)dev, (void)m, (void)n, (void)isz, (void)kept, (void)keep, (void)seed, (void)base;
    return CGCU_MISSING;
}

static int optim_step_(int dev, const cgcu_optim *o) {
    (void)dev, (void)o;
    return CGCU_MISSING;
}

/* every entry set: an entry added to cgcu_api fails to compile here until the stand-in has it */
#define FAKE_ENTRIES 21
_Static_assert(sizeof(cgcu_api) == sizeof(void *) * (FAKE_ENTRIES + 1) &&
               offsetof(cgcu_api, error_string) == sizeof(void *),
               "cgcu_api changed: give the stand-in kernel library of tests/python/test_cuda.py the new entries");

static const cgcu_api k_api = {
    .abi_version = CGCU_ABI_VERSION,
    .error_string = err_str,
    .device_count = dev_count,
    .properties = props,
    .malloc = dmalloc,
    .free = dfree,
    .mem_info = meminfo,
    .copy_h2d = copy_,
    .copy_d2h = copy_,
    .synchronize = sync_,
    .elementwise = missing_ew,
    .cast = cast,
    .fill = fill,
    .reduce = reduce_,
    .gemm = gemm_,
    .softmax = softmax_,
    .softmax_backward = softmax_bw,
    .index_gather = index_gather_,
    .index_put = index_put_,
    .embedding = embedding_,
    .dropout_mask = dropout_mask_,
    .optim_step = optim_step_,
};

__attribute__((visibility("default"))) const cgcu_api *cgcu_get_api(int abi) {
    return abi == CGCU_ABI_VERSION ? &k_api : NULL;
}
"""


@pytest.fixture(scope="module")
def fake_library(tmp_path_factory):
    """The stand-in kernel library, compiled against the engine's cuda_abi.h."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    if not cc or not ABI_HEADER.exists():
        pytest.skip("needs a C compiler and the source tree's src/backend/cuda/cuda_abi.h")
    d = tmp_path_factory.mktemp("fake_cuda")
    (d / "fake_cuda.c").write_text(FAKE_LIBRARY)
    out = d / "libfake_cuda.so"
    r = subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-shared", "-fPIC", f"-I{ABI_HEADER.parent}", "-o", str(out),
                        str(d / "fake_cuda.c")], capture_output=True, text=True)
    assert r.returncode == 0, f"the stand-in kernel library does not compile against cuda_abi.h:\n{r.stderr}"
    return out


def run_with(library, script, **env):
    """Run script in a child process whose cgrad loads `library` as its CUDA kernel library."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CUDA_")}
    child_env = {**inherited, "CGRAD_CUDA_LIBRARY": str(library), **{k: str(v) for k, v in env.items()}}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=child_env,
                       timeout=300, cwd=str(ROOT))
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r.stdout


NO_DEVICE_SCRIPT = """
import re, warnings
import cgrad
c = cgrad.cuda
why = cgrad._C._cuda_unavailable_reason()
assert re.fullmatch(WHY, why), why
assert cgrad.backends.cuda.is_built() and not c.is_available() and c.device_count() == 0
for make in (lambda: cgrad.zeros(2, device="cuda"), lambda: cgrad.ones(2).cuda(), lambda: cgrad.ones(1).to("cuda:3"),
             lambda: cgrad.nn.Linear(2, 2).to("cuda")):
    try:
        make()
        raise AssertionError("made a tensor on cuda")
    except RuntimeError as e:
        assert type(e) is RuntimeError and re.search(r"cannot use device cuda:\\d: (" + WHY + ")", str(e)), e
# PyTorch's CUDA build without a GPU: each call needing a device raises RuntimeError (torch/cuda _lazy_init)
for call in (c.current_device, c.synchronize, c.init, c.mem_get_info, c.current_stream, c.Stream, c.initial_seed,
             c.get_rng_state, c.reset_peak_memory_stats, lambda: c.set_device(0), lambda: c.get_device_properties(0),
             lambda: c.device(0).__enter__(), lambda: c.device(None).__enter__()):
    try:
        call()
        raise AssertionError(f"{call} did not raise")
    except RuntimeError as e:
        assert type(e) is RuntimeError, e
assert c.memory_allocated() == 0 and dict(c.memory_stats()) == {} and c.get_rng_state_all() == []
c.manual_seed(0), c.seed(), c.empty_cache()
assert repr(c.Event()).startswith("<cgrad.cuda.Event")  # made lazily, as PyTorch's
for call in (lambda: cgrad.device(0), lambda: cgrad.ones(1).pin_memory(), lambda: cgrad.accelerator.synchronize()):
    try:
        call()
        raise AssertionError("no error")
    except RuntimeError as e:
        assert str(e) == "Cannot access accelerator device when none is available.", e
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    assert not cgrad.amp.GradScaler("cuda").is_enabled()
    assert "CUDA is not available" in str(w[0].message)
cgrad.set_default_device("cuda")
try:
    cgrad.ones(1)
    raise AssertionError("made a tensor on cuda")
except RuntimeError as e:
    assert "cannot use device cuda:0" in str(e)
finally:
    cgrad.set_default_device(None)
print("OK")
"""


# the engine's reasons (cg_cuda_unavailable_reason): a status from the library, with or without libcuda.so.1 here
NO_DRIVER = (r"found no NVIDIA driver on this system \(libcuda\.so\.1 could not be loaded\)|"
             r"CUDA is not usable here: CUDA driver version is insufficient for CUDA runtime version")


@pytest.mark.parametrize("env,why", [({"FAKE_CUDA_NO_DRIVER": 1}, NO_DRIVER),
                                     ({"FAKE_CUDA_DEVICES": 0}, r"no CUDA GPUs are available")],
                         ids=["no-driver", "no-gpu"])
def test_library_without_a_device(fake_library, env, why):
    """The state of PyTorch's CUDA build on a machine without a driver or a GPU."""
    run_with(fake_library, f"WHY = {why!r}\n" + textwrap.dedent(NO_DEVICE_SCRIPT), **env)


DEVICES_SCRIPT = """
import copy, io, pickle, threading, warnings
import numpy as np
import cgrad
c, nn = cgrad.cuda, cgrad.nn


def raises(exc, fn, match=""):
    try:
        fn()
    except exc as e:
        assert match in str(e), (match, str(e))
        return e
    raise AssertionError(f"{fn} did not raise {exc.__name__}")


# -- the namespace
assert c.is_available() and c.device_count() == 2 and cgrad.backends.cuda.is_built()
assert cgrad.accelerator.is_available() and cgrad.accelerator.current_accelerator() == cgrad.device("cuda")
p = c.get_device_properties(0)
assert (p.name, p.major, p.minor, p.multi_processor_count, p.total_memory) == ("cgrad fake GPU 0", 9, 0, 4, 64 << 20)
assert repr(p) == ("_CudaDeviceProperties(name='cgrad fake GPU 0', major=9, minor=0, total_memory=64MB, "
                   "multi_processor_count=4)")
assert c.get_device_name(1) == "cgrad fake GPU 1" and c.get_device_capability("cuda:1") == (7, 0)
assert c.is_bf16_supported() and c.is_tf32_supported()
raises(AssertionError, lambda: c.get_device_properties(2), "Invalid device id")
raises(ValueError, lambda: c.get_device_properties("cpu"), "Expected a cuda device")
assert c.current_device() == 0 and c.is_initialized()
c.synchronize(), c.synchronize(1), c.synchronize("cuda:1"), c.init(), c.ipc_collect()
free, total = c.mem_get_info(1)
assert total == 64 << 20 and free <= total

# -- the current device: per thread, set_device / device / device_of / streams
c.set_device(1)
assert c.current_device() == 1 and cgrad.zeros(1, device="cuda").device == cgrad.device("cuda", 1)
assert cgrad.zeros(1).cuda().device == cgrad.device("cuda", 1) and cgrad.accelerator.current_device_index() == 1
seen = []
t = threading.Thread(target=lambda: seen.append(c.current_device()))
t.start(), t.join()
assert seen == [0]  # a new thread starts on device 0, as in PyTorch
c.set_device(0)
raises(RuntimeError, lambda: c.set_device(2), "invalid device ordinal")
raises(ValueError, lambda: c.set_device(cgrad.device("cuda")), "specified index")
with c.device(1):
    assert c.current_device() == 1
    with c.device_of(cgrad.zeros(1).cuda(0)):
        assert c.current_device() == 0
    assert c.current_device() == 1
assert c.current_device() == 0
s1 = c.Stream(1)
assert s1.device == cgrad.device("cuda", 1) and s1 == c.current_stream(1) == c.default_stream("cuda:1")
assert s1 != c.current_stream() and s1.query() is True
with c.stream(s1):
    assert c.current_device() == 1 and c.current_stream() == s1
assert c.current_device() == 0
s1.synchronize(), s1.wait_stream(c.current_stream()), c.current_stream().wait_stream(s1)
e0, e1 = c.Event(enable_timing=True), c.Event(enable_timing=True)
e0.record(), e1.record(s1)
assert e0.query() and e0.elapsed_time(e1) >= 0 and s1.record_event().device == cgrad.device("cuda", 1)
raises(RuntimeError, lambda: c.Event().elapsed_time(c.Event()), "enable_timing=True")
raises(RuntimeError, lambda: c.Event(enable_timing=True).elapsed_time(e1), "recorded")

# -- ints, strings and devices name cuda devices
assert cgrad.device(0) == cgrad.device("cuda", 0) and cgrad.device(5) == cgrad.device("cuda:5")
assert cgrad.zeros(2, device=1).device == cgrad.zeros(2).to(1).device == cgrad.zeros(2).cuda(1).device
raises(RuntimeError, lambda: cgrad.zeros(2, device="cuda:2"), "invalid device ordinal cuda:2 (2 CUDA devices)")
raises(RuntimeError, lambda: cgrad.ones(2).to(cgrad.device("cuda", 7)), "invalid device ordinal cuda:7")

# -- moves: every dtype, contiguous and not, round trips exactly
for dt in (cgrad.bool, cgrad.uint8, cgrad.int8, cgrad.int16, cgrad.int32, cgrad.int64, cgrad.float16,
           cgrad.bfloat16, cgrad.float32, cgrad.float64, cgrad.uint16, cgrad.uint32, cgrad.uint64):
    x = (cgrad.arange(24) % 5).to(dt).reshape(2, 3, 4)
    for src in (x, x.permute(2, 0, 1), x[:, ::2, 1:], x[0, 1]):
        y = src.cuda()
        assert y.is_cuda and y.get_device() == 0 and y.dtype == dt and y.shape == src.shape, (dt, y)
        assert y.cpu().tolist() == src.tolist() and y.contiguous().cpu().tolist() == src.tolist(), dt
        assert y.cuda(1).cpu().tolist() == src.tolist() and y.cuda() is y and y.to("cuda:0") is y
x = cgrad.arange(6.).reshape(2, 3)
y = x.cuda()
assert y.to(cgrad.float64).cpu().dtype == cgrad.float64 and y.to("cpu", cgrad.int32).tolist() == [[0, 1, 2], [3, 4, 5]]
assert y.to(x).device.type == "cpu" and x.to(y).is_cuda and x.type("torch.cuda.DoubleTensor").is_cuda
assert y.type() == "torch.cuda.FloatTensor" and y.type("torch.FloatTensor").device.type == "cpu"
assert y.tolist() == x.tolist() and y[1, 2].item() == 5.0 and float(y[0, 1]) == 1.0 and int(y[1, 0]) == 3
assert bool(y[0, 1]) and format(y[0, 1], ".1f") == "1.0" and cgrad.tensor([y[0, 0], y[1, 1]]).tolist() == [0.0, 4.0]
assert repr(y) == "tensor([[0., 1., 2.],\\n        [3., 4., 5.]], device='cuda:0')"
assert repr(cgrad.zeros(2, device="cuda:1", dtype=cgrad.float64)) == \\
    "tensor([0., 0.], device='cuda:1', dtype=cgrad.float64)"
assert y.t().cpu().tolist() == x.t().tolist() and y[:, 1].cpu().tolist() == [1.0, 4.0]
moved = x.clone().requires_grad_().cuda()
assert moved.requires_grad and not moved.is_leaf and moved.cpu().grad_fn is not None
z = y.clone()
z.copy_(cgrad.ones(2, 3))  # copy_ crosses devices, as PyTorch's
z[0] = cgrad.tensor([7., 8., 9.])
z[1, 1] = 2.5
assert z.tolist() == [[7.0, 8.0, 9.0], [1.0, 2.5, 1.0]]
assert x.clone().copy_(y).tolist() == x.tolist()

# -- factories the stand-in can serve (fills and host copies; its kernels are missing)
assert cgrad.zeros(2, 3, device="cuda").tolist() == [[0.0] * 3] * 2
assert cgrad.ones(2, device="cuda", dtype=cgrad.bool).tolist() == [True, True]
assert cgrad.full((2,), 7, device="cuda:1").tolist() == [7, 7] and cgrad.empty(3, device="cuda").shape == (3,)
assert cgrad.tensor([[1.5, 2]], device="cuda", dtype=cgrad.float16).tolist() == [[1.5, 2.0]]
assert cgrad.as_tensor(np.arange(3), device="cuda").tolist() == [0, 1, 2]
assert cgrad.zeros_like(y).is_cuda and cgrad.full_like(y, 2.0).tolist() == [[2.0] * 3] * 2
assert y.new_tensor([1.0]).is_cuda and y.new_zeros(2).is_cuda and y.new_full((2,), 3.0).tolist() == [3.0, 3.0]
assert cgrad.empty(2, pin_memory=True).device.type == "cpu"  # no pinned allocator: ordinary memory
pinned = x.pin_memory()
assert pinned.tolist() == x.tolist() and not pinned.is_pinned() and pinned.data_ptr() != x.data_ptr()
raises(RuntimeError, lambda: y.pin_memory(), "only dense CPU tensors can be pinned")

# -- what a device cannot give the host
raises(TypeError, lambda: y.numpy(), "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
       "the tensor to host memory first.")
raises(TypeError, lambda: np.asarray(y), "can't convert cuda:0 device type tensor to numpy")
raises(TypeError, lambda: cgrad.ones(1, device="cuda:1").numpy(), "can't convert cuda:1 device type")
raises(RuntimeError, lambda: y.share_memory_(), "only available on CPU")
import cgrad.multiprocessing, multiprocessing.reduction
raises(RuntimeError, lambda: multiprocessing.reduction.ForkingPickler.dumps(y), "no CUDA IPC")
assert y.__dlpack_device__() == (2, 0) and cgrad.ones(1).cuda(1).__dlpack_device__() == (2, 1)
raises(cgrad.DeviceMismatch, lambda: cgrad.ones(2, device="cuda") + cgrad.ones(2), "same device")
raises(NotImplementedError, lambda: y + 1, "not implemented for device 'cuda'")  # the stand-in has no kernels
raises(NotImplementedError, lambda: y * cgrad.tensor(2.0), "[mul]")  # a 0-d CPU tensor joins a cuda op

# -- memory: per device, from the engine's pools
c.empty_cache()
base = c.memory_allocated(1)
big = cgrad.empty(1 << 20, device="cuda:1")
assert c.memory_allocated(1) >= base + (4 << 20) and c.memory_allocated(0) < (4 << 20)
assert c.max_memory_allocated(1) >= c.memory_allocated(1) and c.memory_reserved(1) >= c.memory_allocated(1)
st = c.memory_stats(1)
assert list(st) == sorted(st) and st["allocated_bytes.all.current"] == c.memory_allocated(1)
assert c.mem_get_info(1)[0] <= (64 << 20) - (4 << 20)
del big
assert c.memory_allocated(1) == base and c.memory_reserved(1) > base
c.empty_cache()
assert c.memory_reserved(1) == c.memory_allocated(1)
c.reset_peak_memory_stats(1)
assert c.max_memory_allocated(1) == c.memory_allocated(1)
assert cgrad.memory.memory_allocated("cuda:1") == c.memory_allocated(1)

# -- out of memory on a device: torch.OutOfMemoryError, and the device still works
e = raises(c.OutOfMemoryError, lambda: cgrad.empty(2 ** 45, dtype=cgrad.uint8, device="cuda"), "CUDA out of memory")
assert isinstance(e, RuntimeError) and not isinstance(e, MemoryError) and "cuda:0" in str(e)
assert cgrad.ones(4, device="cuda").tolist() == [1.0] * 4

# -- random numbers: one generator (cgrad.cuda's docstring)
c.manual_seed(123)
assert cgrad.initial_seed() == 123 == c.initial_seed() and len(c.get_rng_state_all()) == 2
state = c.get_rng_state()
a = cgrad.rand(3)
c.set_rng_state(state)
assert cgrad.rand(3).tolist() == a.tolist()

# -- modules
m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
w0 = m[0].weight
m.cuda()
assert all(t.is_cuda for t in list(m.parameters()) + list(m.buffers()))
assert isinstance(m[0].weight, nn.Parameter) and m[0].weight.requires_grad and m[0].weight.cpu().tolist() == w0.tolist()
assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]
assert all(v.is_cuda for v in m.state_dict().values())
m.to(1)
assert m[0].weight.device == cgrad.device("cuda", 1)
m.cpu()
assert all(t.device.type == "cpu" for t in m.parameters()) and m[0].weight.tolist() == w0.tolist()
m.to("cuda", cgrad.float64)
assert m[0].weight.dtype == cgrad.float64 and m[0].weight.is_cuda
m.to(cgrad.zeros(1, dtype=cgrad.float32))
assert m[0].weight.device.type == "cpu" and m[0].weight.dtype == cgrad.float32
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    assert not cgrad.amp.GradScaler("cuda").is_enabled() and not cgrad.autocast("cuda")._enabled
    assert all("not implement" in str(x.message) for x in w) and len(w) == 2, [str(x.message) for x in w]

# -- serialization: cuda tensors keep their device; map_location moves them
buf = io.BytesIO()
a = cgrad.arange(4.).cuda(1)
cgrad.save({"a": a, "view": a[1:], "cpu": cgrad.ones(2), "dev": cgrad.device("cuda:1")}, buf)
for ml, dev in ((None, "cuda:1"), ("cpu", "cpu"), ({"cuda:1": "cuda:0"}, "cuda:0"),
                (lambda s, loc: s.cuda(0), "cuda:0"), (cgrad.device("cuda"), "cuda:0")):
    buf.seek(0)
    got = cgrad.load(buf, map_location=ml)
    assert str(got["a"].device) == dev and got["a"].tolist() == [0.0, 1.0, 2.0, 3.0], (ml, got)
    assert got["view"].tolist() == [1.0, 2.0, 3.0] and got["dev"] == cgrad.device("cuda", 1)
buf.seek(0)
import torch  # PyTorch reads cgrad's checkpoint of cuda tensors (mapped to its CPU)
got = torch.load(buf, map_location="cpu")
assert got["a"].tolist() == [0.0, 1.0, 2.0, 3.0] and got["view"].tolist() == [1.0, 2.0, 3.0]
assert pickle.loads(pickle.dumps(a)).device == a.device and copy.deepcopy(a).device == a.device
assert cgrad.load(io.BytesIO(buf.getvalue()), map_location=lambda s, loc: s)["a"].device.type == "cpu"  # torch's idiom
cgrad.utils.safetensors.save_file({"y": y}, DIR + "/y.safetensors")
got = cgrad.utils.safetensors.load_file(DIR + "/y.safetensors", device=1)["y"]
assert got.device == cgrad.device("cuda", 1) and got.tolist() == x.tolist()
assert cgrad.utils.safetensors.load_file(DIR + "/y.safetensors")["y"].tolist() == x.tolist()

# -- the default device
try:
    cgrad.set_default_device("cuda")
    assert cgrad.ones(2).device == cgrad.device("cuda", 0) == cgrad.get_default_device()
    with c.device(1):
        assert cgrad.ones(2).device == cgrad.device("cuda", 1) == cgrad.get_default_device()
    cgrad.set_default_device(1)
    assert cgrad.tensor([1.0]).device == cgrad.device("cuda", 1)
finally:
    cgrad.set_default_device(None)
assert cgrad.ones(1).device.type == "cpu"
print("OK")
"""


def test_library_with_devices(fake_library, tmp_path):
    """Two stand-in GPUs: everything of the Python layer that needs devices but no kernels."""
    run_with(fake_library, f"DIR = {str(tmp_path)!r}\n" + textwrap.dedent(DEVICES_SCRIPT))


def test_library_reports_asynchronous_errors(fake_library):
    run_with(fake_library, """
        import cgrad
        try:
            cgrad.cuda.synchronize()
            raise AssertionError("no error")
        except RuntimeError as e:
            assert type(e) is RuntimeError and str(e) == "[synchronize] CUDA error on cuda:0: fake CUDA error 719", e
        cgrad.cuda.synchronize()  # reported once
        print("OK")
        """, FAKE_CUDA_SYNC_ERROR=719)


# ---------------------------------------------------------------- on a GPU: the kernels against the CPU

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "uint16",
          "uint32", "uint64"]


def _on_gpu(t):
    assert t.is_cuda and t.device == cgrad.device("cuda", 0), t.device
    return t.cpu()


def close(got, want, rtol=1e-5, atol=1e-6):
    """got (a cuda tensor) equals want (a CPU tensor) in dtype, shape and values, to the tolerance."""
    g = _on_gpu(got)
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, want.dtype, g.shape, want.shape)
    if g.dtype in (cgrad.float16, cgrad.bfloat16):
        g, want = g.float(), want.float()
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=rtol, atol=atol)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_round_trip_every_dtype(dtype):
    dt = getattr(cgrad, dtype)
    x = (cgrad.arange(60) % 7).to(dt).reshape(3, 4, 5)
    for src in (x, x.permute(2, 0, 1), x[:, ::2, 1:], x[1, 2], x.expand(2, 3, 4, 5)):
        y = src.cuda()
        assert y.dtype == dt and y.shape == src.shape and _on_gpu(y).tolist() == src.tolist()
        assert y.contiguous().cpu().tolist() == src.tolist() and y.clone().cpu().tolist() == src.tolist()


FACTORIES = {
    "zeros": lambda d: cgrad.zeros(2, 3, device=d),
    "ones": lambda d: cgrad.ones(2, 3, dtype=cgrad.int64, device=d),
    "full": lambda d: cgrad.full((2, 3), 2.5, device=d),
    "tensor": lambda d: cgrad.tensor([[1, 2], [3, 4]], device=d),
    "tensor_f16": lambda d: cgrad.tensor([1.5, -2.0], dtype=cgrad.float16, device=d),
    "arange": lambda d: cgrad.arange(7, device=d),
    "arange_float": lambda d: cgrad.arange(0, 1, 0.125, device=d),
    "linspace": lambda d: cgrad.linspace(-1, 1, 9, device=d),
    "logspace": lambda d: cgrad.logspace(0, 2, 5, device=d),
    "eye": lambda d: cgrad.eye(3, 4, device=d),
    "zeros_like": lambda d: cgrad.zeros_like(cgrad.ones(2, 2, device=d)),
    "ones_like": lambda d: cgrad.ones_like(cgrad.ones(2, 2, device=d)),
    "full_like": lambda d: cgrad.full_like(cgrad.ones(2, 2, device=d), 3.0),
    "new_full": lambda d: cgrad.ones(2, device=d).new_full((3,), 4.0),
}


@gpu
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_gpu_factories_match_the_cpu(name):
    close(FACTORIES[name]("cuda"), FACTORIES[name]("cpu"))


@gpu
def test_gpu_random_factories():
    for make in (lambda: cgrad.rand(1000, device="cuda"), lambda: cgrad.randn(1000, device="cuda"),
                 lambda: cgrad.randint(3, 9, (1000,), device="cuda"), lambda: cgrad.randperm(50, device="cuda"),
                 lambda: cgrad.empty(1000, device="cuda").uniform_(-2, 2),
                 lambda: cgrad.empty(1000, device="cuda").normal_(1.0, 0.5)):
        cgrad.manual_seed(7)
        a = make()
        cgrad.manual_seed(7)
        assert _on_gpu(a).tolist() == make().cpu().tolist()  # reproducible from the seed
    assert 0 <= cgrad.rand(1000, device="cuda").min().item() and cgrad.rand(1000, device="cuda").max().item() < 1
    r = cgrad.randint(3, 9, (1000,), device="cuda").cpu()
    assert r.min().item() >= 3 and r.max().item() < 9
    assert sorted(cgrad.randperm(50, device="cuda").tolist()) == list(range(50))
    assert abs(cgrad.randn(10000, device="cuda").mean().item()) < 0.05


UNARY = ["neg", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "round",
         "reciprocal", "rsqrt", "log1p", "expm1", "erf", "sign", "square"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "atan2", "remainder", "eq", "lt", "ge", "ne"]


def _pos(*shape, dtype=cgrad.float32):
    return (cgrad.rand(*shape) + 0.5).to(dtype)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", UNARY)
def test_gpu_unary_ops(op, dtype):
    x = _pos(3, 5, dtype=getattr(cgrad, dtype)) * (1 if op in ("log", "sqrt", "rsqrt") else 2) - (
        0 if op in ("log", "sqrt", "rsqrt", "reciprocal") else 1.2)
    fn = getattr(cgrad, op)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    close(fn(x.cuda()), fn(x), **tol)
    close(fn(x.cuda().t()), fn(x.t()), **tol)  # not contiguous


@gpu
@pytest.mark.parametrize("op", BINARY)
def test_gpu_binary_ops_broadcast_and_scalars(op):
    a, b = _pos(3, 1) * 3 - 1, _pos(4) + 1
    fn = getattr(cgrad, op)
    close(fn(a.cuda(), b.cuda()), fn(a, b))
    close(fn(a.cuda().expand(3, 4).t(), b.cuda()[:3]), fn(a.expand(3, 4).t(), b[:3]))
    if op not in ("maximum", "minimum", "atan2"):  # those take tensors only, as in PyTorch
        close(fn(a.cuda(), 2.5), fn(a, 2.5))
    close(fn(a.cuda(), cgrad.tensor(1.5)), fn(a, cgrad.tensor(1.5)))  # a 0-d CPU tensor joins a cuda op
    if op in ("add", "sub", "mul", "maximum", "eq"):
        i, j = cgrad.arange(12).reshape(3, 4), cgrad.arange(4) - 2
        close(fn(i.cuda(), j.cuda()), fn(i, j), rtol=0, atol=0)


@gpu
def test_gpu_inplace_and_operators():
    x = cgrad.randn(4, 3)
    y = x.cuda()
    y += 1
    y *= cgrad.tensor(2.0)
    y.sub_(x.cuda()).clamp_(min=-1)
    close(y, ((x + 1) * 2 - x).clamp(min=-1))
    close(-(y ** 2) / 3 > 0.5, -((((x + 1) * 2 - x).clamp(min=-1)) ** 2) / 3 > 0.5)
    close(cgrad.where(y > 0, y, cgrad.zeros_like(y)), cgrad.where(y.cpu() > 0, y.cpu(), cgrad.zeros_like(y.cpu())))


REDUCTIONS = {
    "sum": lambda t: t.sum(), "sum_dim": lambda t: t.sum(1), "sum_keep": lambda t: t.sum(0, keepdim=True),
    "mean": lambda t: t.mean(-1), "prod": lambda t: t.prod(1), "amax": lambda t: t.amax(0), "amin": lambda t: t.amin(),
    "max_dim": lambda t: t.max(1).values, "argmax": lambda t: t.argmax(1), "argmin": lambda t: t.argmin(),
    "std": lambda t: t.std(0), "var": lambda t: t.var(1, unbiased=False), "norm": lambda t: t.norm(),
    "logsumexp": lambda t: t.logsumexp(1), "all": lambda t: (t > -3).all(1), "any": lambda t: (t > 1).any(),
}


@gpu
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_gpu_reductions(name):
    x = cgrad.randn(6, 7)
    fn = REDUCTIONS[name]
    close(fn(x.cuda()), fn(x), rtol=1e-5, atol=1e-5)
    close(fn(x.cuda().t().contiguous().t()), fn(x), rtol=1e-5, atol=1e-5)
    close(fn(x.double().cuda()), fn(x.double()), rtol=1e-12, atol=1e-12)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gpu_matmul_bmm_linear(dtype):
    dt = getattr(cgrad, dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    a, b, v = cgrad.randn(3, 4, dtype=dt), cgrad.randn(4, 5, dtype=dt), cgrad.randn(4, dtype=dt)
    A, B = cgrad.randn(2, 3, 4, dtype=dt), cgrad.randn(2, 4, 5, dtype=dt)
    w, bias = cgrad.randn(5, 4, dtype=dt), cgrad.randn(5, dtype=dt)
    cases = [lambda L: L[0] @ L[1], lambda L: L[0].t().t() @ L[1].t().contiguous().t(), lambda L: L[0] @ L[2],
             lambda L: L[2] @ L[1], lambda L: cgrad.bmm(L[3], L[4]), lambda L: L[3] @ L[1],
             lambda L: cgrad.matmul(L[3].transpose(1, 2).contiguous().transpose(1, 2), L[4]),
             lambda L: cgrad.nn.functional.linear(L[3], L[5], L[6]), lambda L: cgrad.mm(L[1].t(), L[0].t())]
    cpu = [a, b, v, A, B, w, bias]
    dev = [t.cuda() for t in cpu]
    for case in cases:
        close(case(dev), case(cpu), **tol)


@gpu
def test_gpu_half_matmul():
    a, b = cgrad.randn(8, 16), cgrad.randn(16, 4)
    for dt in (cgrad.float16, cgrad.bfloat16):
        got = (a.to(dt).cuda() @ b.to(dt).cuda()).cpu().float()
        want = a.to(dt).float() @ b.to(dt).float()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-2, atol=2e-2)


@gpu
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_gpu_softmax_forward_and_backward(fn, dim):
    F = cgrad.nn.functional
    x = cgrad.randn(3, 4, 5)
    g = cgrad.randn(3, 4, 5)
    xc = x.clone().requires_grad_()
    xg = x.cuda().requires_grad_()
    yc, yg = getattr(F, fn)(xc, dim), getattr(F, fn)(xg, dim)
    close(yg.detach(), yc.detach())
    yc.backward(g)
    yg.backward(g.cuda())
    close(xg.grad, xc.grad, rtol=1e-5, atol=1e-6)


@gpu
def test_gpu_backward_equals_the_cpu():
    x, w = cgrad.randn(5, 4, dtype=cgrad.float64), cgrad.randn(4, 3, dtype=cgrad.float64)

    def grads(device):
        xd, wd = x.to(device).requires_grad_(), w.to(device).requires_grad_()
        out = ((cgrad.tanh(xd @ wd) * 2 + xd.sum(1, keepdim=True)) ** 2).mean() + cgrad.sigmoid(wd).sum()
        out.backward()
        return out.detach(), xd.grad, wd.grad

    for got, want in zip(grads("cuda"), grads("cpu")):
        close(got, want, rtol=1e-10, atol=1e-12)


def _mlp():
    cgrad.manual_seed(0)
    return cgrad.nn.Sequential(cgrad.nn.Linear(4, 16), cgrad.nn.Tanh(), cgrad.nn.Linear(16, 1))


@gpu
@pytest.mark.parametrize("step", ["optimizer", "manual"])
def test_gpu_module_to_cuda_trains_as_on_the_cpu(step):
    cpu = _mlp()
    dev = copy.deepcopy(cpu).to("cuda")
    assert all(p.is_cuda for p in dev.parameters())
    cgrad.manual_seed(1)
    X, Y = cgrad.randn(32, 4), cgrad.randn(32, 1)
    runs = [(cpu, X, Y), (dev, X.cuda(), Y.cuda())]
    opts = [cgrad.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m, _, _ in runs] if step == "optimizer" else None
    for it in range(5):
        losses = []
        for k, (model, x, y) in enumerate(runs):
            model.zero_grad()
            loss = cgrad.nn.functional.mse_loss(model(x), y)
            loss.backward()
            if opts:
                opts[k].step()
            else:
                with cgrad.no_grad():
                    for p in model.parameters():
                        p -= 0.1 * p.grad
            losses.append(loss.item())
        assert abs(losses[0] - losses[1]) <= 1e-5 * max(1.0, abs(losses[0])), (it, losses)
    for pc, pd in zip(cpu.parameters(), dev.parameters()):
        close(pd.detach(), pc.detach(), rtol=1e-4, atol=1e-5)
    assert all(p.device.type == "cpu" for p in dev.cpu().parameters())


@gpu
def test_gpu_memory_allocated_follows_tensors():
    c = cgrad.cuda
    c.synchronize()
    base = c.memory_allocated()
    x = cgrad.empty(1 << 20, device="cuda")  # 4 MiB
    assert c.memory_allocated() >= base + (4 << 20)
    assert c.max_memory_allocated() >= c.memory_allocated() and c.memory_reserved() >= c.memory_allocated()
    assert c.memory_stats()["allocated_bytes.all.current"] == c.memory_allocated()
    del x
    assert c.memory_allocated() == base
    c.empty_cache()
    assert c.memory_reserved() == c.memory_allocated()
    free, total = c.mem_get_info()
    assert 0 < free <= total


@gpu
def test_gpu_out_of_memory_then_a_normal_allocation():
    with pytest.raises(cgrad.cuda.OutOfMemoryError, match="CUDA out of memory") as info:
        cgrad.empty(2 ** 45, dtype=cgrad.uint8, device="cuda")  # 32 TiB
    assert isinstance(info.value, RuntimeError) and not isinstance(info.value, MemoryError)
    assert cgrad.ones(1000, device="cuda").sum().item() == 1000.0


@gpu
def test_gpu_synchronize_streams_and_events():
    c = cgrad.cuda
    x = cgrad.randn(256, 256, device="cuda")
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        x = x @ x / 256
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0 and end.query() and c.current_stream().query()
    c.synchronize(), c.synchronize(0), c.synchronize("cuda:0"), c.current_stream().synchronize()
    with c.stream(c.Stream()):
        y = x + 1
    close(y, x.cpu() + 1)


@gpu
def test_gpu_numpy_and_cross_device_errors():
    x = cgrad.ones(2, device="cuda")
    msg = "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
    for call in (x.numpy, lambda: np.asarray(x)):
        with pytest.raises(TypeError) as info:
            call()
        assert str(info.value) == msg
    with pytest.raises(RuntimeError, match="same device"):
        x + cgrad.ones(2)
    with pytest.raises(RuntimeError, match="same device"):
        cgrad.ones(2) * x
    assert x.tolist() == [1.0, 1.0] and x.sum().item() == 2.0


@gpu
def test_gpu_cuda_array_interface_and_dlpack():
    x = cgrad.arange(6.).reshape(2, 3).cuda()
    cai = x.__cuda_array_interface__
    assert cai["shape"] == (2, 3) and cai["typestr"] == "<f4" and cai["strides"] is None and cai["version"] == 3
    assert cai["data"] == (x.data_ptr(), False) and x.data_ptr() != 0
    assert x.t().__cuda_array_interface__["strides"] == (4, 12)
    assert cgrad.ones(0, device="cuda").__cuda_array_interface__["data"][0] == 0
    with pytest.raises(RuntimeError, match="requires grad"):
        x.clone().requires_grad_().__cuda_array_interface__
    assert x.__dlpack_device__() == (2, 0)
    y = cgrad.from_dlpack(x)
    assert y.is_cuda and y.data_ptr() == x.data_ptr() and y.cpu().tolist() == x.cpu().tolist()
    z = cgrad.from_dlpack(x.__dlpack__(stream=-1))
    assert z.data_ptr() == x.data_ptr()


@gpu
def test_gpu_serialization_round_trip(tmp_path):
    x = cgrad.randn(3, 4).cuda()
    cgrad.save({"x": x, "xt": x.t()}, tmp_path / "c.pt")
    got = cgrad.load(tmp_path / "c.pt")
    assert got["x"].device == cgrad.device("cuda", 0) and got["xt"].cpu().tolist() == x.t().cpu().tolist()
    assert cgrad.load(tmp_path / "c.pt", map_location="cpu")["x"].tolist() == x.cpu().tolist()
    assert torch.load(tmp_path / "c.pt", map_location="cpu")["x"].tolist() == x.cpu().tolist()


@gpu
def test_gpu_default_and_current_device():
    try:
        cgrad.set_default_device("cuda")
        assert cgrad.ones(2).device == cgrad.device("cuda", 0) == cgrad.get_default_device()
    finally:
        cgrad.set_default_device(None)
    if cgrad.cuda.device_count() > 1:
        with cgrad.cuda.device(1):
            assert cgrad.zeros(1, device="cuda").device == cgrad.device("cuda", 1)
            close_to = cgrad.ones(3).cuda()
            assert close_to.get_device() == 1 and (close_to + 1).cpu().tolist() == [2.0] * 3
    assert cgrad.cuda.current_device() == 0


# ---------------------------------------------------------------- the device's random streams, checked on the host

PHILOX_HOST_CHECK = ROOT / "tests" / "c" / "cuda_philox_host.cu"


@pytest.mark.parametrize("seed", [0, 1234, 2**63 + 12345])
def test_device_philox_draws_the_cpu_stream(tmp_path, seed):
    """random.cu's Philox and 53-bit uniform, compiled for the host by nvcc, give the engine's float64
    rand values bit for bit (what makes a seeded dropout on cuda equal the CPU's)."""
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not nvcc or not PHILOX_HOST_CHECK.exists():
        pytest.skip("needs nvcc and the source tree's tests/c/cuda_philox_host.cu")
    exe = tmp_path / "philox_host"
    r = subprocess.run([nvcc, "-std=c++17", f"-I{ROOT / 'include'}", f"-I{ROOT / 'src'}", "-o", str(exe),
                        str(PHILOX_HOST_CHECK)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    n = 37
    out = subprocess.run([str(exe), str(seed), str(n)], capture_output=True, text=True, check=True).stdout.split()
    cgrad.manual_seed(seed)
    want = cgrad.rand(n, dtype=cgrad.float64).tolist()
    assert [float(v) for v in out] == want
