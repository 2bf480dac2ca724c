"""cgrad.__config__ (as torch.__config__): how this cgrad was built and what it
runs on. `show()` names the CPU levels built, the one in use and what this
CPU supports, and the BLAS with the kernels it picked for this CPU."""
from __future__ import annotations

__all__ = ["show", "parallel_info"]


def _info() -> dict[str, object]:
    from . import _build_config, _C, _cpuinfo, _engine
    info = dict(_C._build_info())
    info["levels_built"] = list(_engine.engines())
    info["cpu_supports"] = _cpuinfo.supported_level()
    info["avx512_bf16"] = _cpuinfo.has_avx512_bf16()
    info["blas"] = _build_config.BLAS
    return info


def show() -> str:
    """A description of the build and of the CPU it runs on."""
    i = _info()
    return "\n".join([
        "cgrad built with:",
        f"  - CPU levels built: {', '.join(i['levels_built'])}",
        f"  - CPU level in use: {i['cpu_level']} (this CPU supports {i['cpu_supports']}; "
        f"AVX512_BF16: {'yes' if i['avx512_bf16'] else 'no'}; CGRAD_CPU_LEVEL selects a lower level)",
        f"  - BLAS: {i['blas']} ({i['blas_config']}), kernels: {i['blas_corename']}",
        "",
    ])


def parallel_info() -> str:
    """The thread settings in use."""
    from . import _C
    return f"cgrad parallel settings:\n  - threads (engine loops and BLAS): {_C.get_num_threads()}\n"
