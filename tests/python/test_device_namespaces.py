"""The device namespaces a CPU-only PyTorch has (torch.cuda, torch.cuda.amp,
torch.accelerator, torch.mps, torch.backends.*, the float32 matmul precision)
answer as PyTorch 2.13's CPU build does: each expression gives the same value,
or raises the same exception type, under cgrad and under torch.

That holds for a cgrad without its CUDA kernel library, which is what
PyTorch's CPU build is. A cgrad with the library on a machine without a GPU
answers as PyTorch's CUDA build does there (NO_DEVICE: the differences, read
from torch/cuda/__init__.py, where every call needing a device runs
_lazy_init and that raises RuntimeError without a GPU); with a GPU the CUDA
expressions are test_cuda.py's."""
from __future__ import annotations

import warnings

import pytest
import torch

import cgrad

SAME = [
    "L.cuda.is_available()", "L.cuda.device_count()", "L.cuda.is_initialized()", "L.cuda.manual_seed(0)",
    "L.cuda.manual_seed_all(123)", "L.cuda.manual_seed('a')", "L.cuda.seed()", "L.cuda.seed_all()",
    "L.cuda.current_device()", "L.cuda.synchronize()", "L.cuda.get_device_name()", "L.cuda.get_device_name(0)",
    "L.cuda.get_device_capability()", "L.cuda.get_device_properties(0)", "L.cuda.init()", "L.cuda.initial_seed()",
    "L.cuda.get_rng_state()", "L.cuda.get_rng_state_all()", "L.cuda.set_rng_state_all([])", "L.cuda.ipc_collect()",
    "L.cuda.mem_get_info()", "L.cuda.current_stream()", "L.cuda.is_bf16_supported()", "L.cuda.is_tf32_supported()",
    "L.cuda.get_arch_list()", "L.cuda.get_gencode_flags()", "L.cuda.empty_cache()", "L.cuda.memory_allocated()",
    "L.cuda.max_memory_allocated(0)", "L.cuda.memory_reserved()", "L.cuda.max_memory_reserved()",
    "L.cuda.memory_cached()", "L.cuda.memory_stats()", "L.cuda.set_device(0)", "L.cuda.reset_peak_memory_stats()",
    "L.cuda.reset_max_memory_allocated()", "L.cuda.Stream()", "L.cuda.Event()", "enter(L.cuda.device(0))",
    "enter(L.cuda.device(None))", "L.cuda.amp.GradScaler().is_enabled()", "enter(L.cuda.amp.autocast())",
    "L.accelerator.is_available()", "L.accelerator.device_count()", "L.accelerator.current_accelerator()",
    "L.accelerator.current_device_index()", "L.accelerator.synchronize()", "L.accelerator.current_stream()",
    "L.mps.device_count()", "L.mps.manual_seed(0)", "L.mps.synchronize()", "L.mps.empty_cache()", "L.mps.seed()",
    "L.mps.current_allocated_memory()", "L.backends.mps.is_available()", "L.backends.mps.is_built()",
    "L.backends.cuda.is_built()", "L.backends.cuda.matmul.allow_tf32",
    "L.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
    "L.backends.cuda.matmul.allow_bf16_reduced_precision_reduction", "L.backends.cuda.flash_sdp_enabled()",
    "L.backends.cuda.mem_efficient_sdp_enabled()", "L.backends.cuda.math_sdp_enabled()",
    "L.backends.cudnn.is_available()", "L.backends.cudnn.version()", "L.backends.cudnn.enabled",
    "L.backends.cudnn.benchmark", "L.backends.cudnn.deterministic", "L.backends.cudnn.allow_tf32",
    "L.get_float32_matmul_precision()",
]


def _cuda_state() -> str:
    if not cgrad.backends.cuda.is_built():
        return "none"
    return "devices" if cgrad.cuda.is_available() else "no-device"


CUDA_STATE = _cuda_state()
# PyTorch's CUDA build without a GPU, where it differs from its CPU build
NO_DEVICE = {e: ("raises", "RuntimeError") for e in [
    "L.cuda.current_device()", "L.cuda.synchronize()", "L.cuda.get_device_name()", "L.cuda.get_device_name(0)",
    "L.cuda.get_device_capability()", "L.cuda.get_device_properties(0)", "L.cuda.init()", "L.cuda.initial_seed()",
    "L.cuda.get_rng_state()", "L.cuda.ipc_collect()", "L.cuda.mem_get_info()", "L.cuda.current_stream()",
    "L.cuda.set_device(0)",  # _cuda_setDevice exists and initialises CUDA
    "L.cuda.reset_peak_memory_stats()", "L.cuda.reset_max_memory_allocated()",  # a None device index: TORCH_CHECK
    "enter(L.cuda.device(None))",  # _cuda_exchangeDevice(None): TORCH_CHECK
]}
NO_DEVICE["L.backends.cuda.is_built()"] = ("value", True)
NO_DEVICE["L.cuda.Event()"] = ("value", "Event")  # made lazily: no CUDA call until record()
NEEDS_A_DEVICE_STATE = ("L.cuda.", "enter(L.cuda.", "L.accelerator.", "L.backends.cuda.is_built")


def enter(ctx):
    with ctx:
        return "entered"


def outcome(lib, expr):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = eval(expr, {"L": lib, "enter": enter})
        except BaseException as e:  # the exception type is what must match
            return ("raises", type(e).__name__)
    return ("value", value)


@pytest.mark.parametrize("expr", SAME)
def test_same_as_pytorch_cpu_build(expr):
    if CUDA_STATE == "devices" and expr.startswith(NEEDS_A_DEVICE_STATE):
        pytest.skip("a CUDA device is usable here (test_cuda.py)")
    expected = outcome(torch, expr)
    got = outcome(cgrad, expr)
    if CUDA_STATE == "no-device" and expr in NO_DEVICE:
        expected = NO_DEVICE[expr]
        if expected == ("value", "Event"):
            got = (got[0], type(got[1]).__name__)
    assert got == expected


@pytest.mark.parametrize("lib", [cgrad, torch], ids=["cgrad", "torch"])
def test_flags_are_settable_and_checked(lib):
    cudnn = lib.backends.cudnn
    old = (cudnn.benchmark, cudnn.deterministic)
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        assert cudnn.benchmark is True and cudnn.deterministic is True
        with pytest.raises(RuntimeError, match="expects a bool"):
            cudnn.benchmark = "yes"
        assert cudnn.benchmark is True
    finally:
        cudnn.benchmark, cudnn.deterministic = old
    lib.backends.cuda.enable_flash_sdp(False)
    assert lib.backends.cuda.flash_sdp_enabled() is False
    lib.backends.cuda.enable_flash_sdp(True)


@pytest.mark.parametrize("lib", [cgrad, torch], ids=["cgrad", "torch"])
def test_matmul_precision_and_allow_tf32(lib):
    try:
        lib.set_float32_matmul_precision("medium")
        assert lib.get_float32_matmul_precision() == "medium"
        assert lib.backends.cuda.matmul.allow_tf32 is True
        with pytest.warns(UserWarning, match="is not one of"):
            lib.set_float32_matmul_precision("HIGH")
        assert lib.get_float32_matmul_precision() == "medium"
        lib.set_float32_matmul_precision("highest")
        assert lib.backends.cuda.matmul.allow_tf32 is False
        lib.backends.cuda.matmul.allow_tf32 = True
        assert lib.get_float32_matmul_precision() == "high"
    finally:
        lib.set_float32_matmul_precision("highest")


def test_cuda_amp_spellings_warn_and_disable():
    with pytest.warns(FutureWarning, match="deprecated"):
        s = cgrad.cuda.amp.GradScaler()
    assert not s.is_enabled()
    with pytest.warns(FutureWarning, match="deprecated"):
        a = cgrad.cuda.amp.autocast()
    with a:
        assert not cgrad.is_autocast_enabled()


def test_what_cgrad_decides_differently():
    """cgrad uses neither oneDNN nor OpenMP (PyTorch's x86 builds do): it says so."""
    assert cgrad.backends.mkldnn.is_available() is False and cgrad.backends.openmp.is_available() is False
    assert torch.backends.mkldnn.is_available() is True
