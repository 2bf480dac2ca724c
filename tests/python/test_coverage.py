"""Every public op of cgrad has an entry in the op table (tests/python/opinfo)."""
import cgrad
from opinfo import ALL_OPS

# Public names that are not ops (types, state, factories checked in their own tests).
NOT_OPS = {
    "Tensor", "Size", "dtype", "device", "DtypeMismatch", "DeviceMismatch", "ShapeMismatch",
    "InvalidArgument", "IndexOutOfRange",
    "autograd", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
    "is_inference_mode_enabled", "is_anomaly_enabled", "manual_seed", "initial_seed", "get_default_dtype",
    "set_default_dtype", "set_num_threads", "get_num_threads", "result_type", "promote_types", "is_tensor",
    "tensor", "grad", "numel",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
}
NOT_OPS |= {"can_cast"}  # promotion query (tests/python/test_promotion.py)
NOT_OPS |= {"from_numpy", "as_tensor", "asarray", "from_dlpack"}  # interop factories (tests/python/test_interop.py)
NOT_OPS |= {"save", "load"}  # checkpoints (tests/python/test_serialization.py)
NOT_OPS |= {"autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
            "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_cpu_dtype",
            "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
            "autocast_increment_nesting", "autocast_decrement_nesting"}  # autocast state (tests/python/test_autocast.py)


def test_every_public_op_has_a_table_entry():
    covered = {op.name for op in ALL_OPS}
    public = {n for n in dir(cgrad) if not n.startswith("_") and callable(getattr(cgrad, n))}
    dtypes = {n for n in public if isinstance(getattr(cgrad, n), cgrad.dtype)}
    missing = sorted(public - covered - NOT_OPS - dtypes)
    assert not missing, f"public ops without an OpInfo entry: {missing}"
