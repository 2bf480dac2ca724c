"""cgrad.backends.cuda (torch.backends.cuda): CUDA settings. is_built() says
whether this cgrad has its CUDA kernel library (libcgrad_cuda.so), whether or
not a GPU is there. The flags are kept and readable, with PyTorch's defaults,
so scripts that set them run unchanged; the engine's CUDA kernels do not read
them (matmul.allow_tf32 mirrors the float32 matmul precision, which the CPU
reads)."""
from __future__ import annotations

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp", "mem_efficient_sdp_enabled",
           "enable_mem_efficient_sdp", "math_sdp_enabled", "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp"]


def is_built() -> bool:
    """Whether cgrad was built with CUDA: its kernel library was found beside the engine (loading it)."""
    from ... import _C
    return bool(_C._cuda_is_built())


class _Matmul:
    """torch.backends.cuda.matmul: allow_tf32 (mirrors get_float32_matmul_precision) and the
    reduced-precision reduction flags."""

    def __init__(self) -> None:
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        from ..._precision import get_float32_matmul_precision
        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        from ..._precision import set_float32_matmul_precision
        set_float32_matmul_precision("high" if value else "highest")


matmul = _Matmul()


def _sdp_flag(kind: str) -> tuple:
    """The query and the setter of one scaled-dot-product-attention kernel flag (PyTorch's default: on)."""
    state = {"on": True}

    def enabled() -> bool:
        return state["on"]

    def enable(enabled: bool) -> None:
        state["on"] = bool(enabled)

    enabled.__name__, enable.__name__ = f"{kind}_sdp_enabled", f"enable_{kind}_sdp"
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_flag("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_flag("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_flag("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_flag("cudnn")
