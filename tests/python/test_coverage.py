"""Every public op of cgrad has an entry in the op table (tests/python/opinfo)
or in PyTorch's op_db (test_opdb.py),
and every entry runs every check of issue 6 (extreme values, strided inputs,
in-place variants, declared error inputs) unless it records a reasoned
exemption; the exemptions are listed and counted."""
import torch

import cgrad
from opinfo import ALL_OPS
from opinfo.core import ALL_EXTREMES, error_inputs, extreme_samples, strided_samples

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
NOT_OPS |= {"OutOfMemoryError", "get_device_module"}  # device errors and modules (tests/python/test_cuda.py)
NOT_OPS |= {"unsafe_split_with_sizes"}  # not in op_db; tests/python/test_ops_shape_extra.py
NOT_OPS |= {"is_floating_point", "is_complex", "is_nonzero"}  # predicates (tests/python/test_ops_math_extra.py)
NOT_OPS |= {"memory_format", "layout"}  # layout types (tests/python/test_memory_format.py)
NOT_OPS |= {"can_cast"}  # promotion query (tests/python/test_promotion.py)
NOT_OPS |= {"from_numpy", "as_tensor", "asarray", "from_dlpack", "frombuffer"}  # interop factories (test_interop.py, test_readonly.py)
NOT_OPS |= {"save", "load"}  # checkpoints (tests/python/test_torch_checkpoints.py)
NOT_OPS |= {"finfo", "iinfo"}  # dtype properties (tests/python/test_type_info.py)
NOT_OPS |= {"get_include", "get_lib_dir"}  # the C library (tests/python/test_c_library.py)
NOT_OPS |= {"set_float32_matmul_precision", "get_float32_matmul_precision"}  # a setting (tests/python/test_device_namespaces.py)
NOT_OPS |= {"autocast", "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled", "set_autocast_dtype",
            "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "set_autocast_cpu_enabled", "set_autocast_cpu_dtype",
            "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
            "autocast_increment_nesting", "autocast_decrement_nesting"}  # autocast state (tests/python/test_autocast.py)
NOT_OPS |= {"set_default_device", "get_default_device", "install_as_torch", "FloatTensor", "DoubleTensor",
            "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor", "IntTensor", "LongTensor",
            "BoolTensor"}  # settings, the torch import hook, legacy constructors (test_legacy_tensor_types.py, test_compat_launcher.py)

CHECKS = ("extremes", "strided", "inplace", "errors")
PARTIAL = ("extreme_values", "signed_zeros")  # partial opt-outs of the extremes check


def _opdb_covered():
    """Names PyTorch's op_db checks (test_opdb.py): an entry that resolves is run against PyTorch there."""
    from opdb.expectations import MISSING
    from test_opdb import IDS
    return {i.split(".")[0] for i in IDS if i not in MISSING}


def test_every_public_op_has_a_table_entry():
    covered = {op.name for op in ALL_OPS} | _opdb_covered()
    public = {n for n in dir(cgrad) if not n.startswith("_") and callable(getattr(cgrad, n))}
    dtypes = {n for n in public if isinstance(getattr(cgrad, n), cgrad.dtype)}
    missing = sorted(public - covered - NOT_OPS - dtypes)
    assert not missing, f"public ops without an OpInfo entry: {missing}"


def _runs(op, check):
    """Does this entry run `check` (without an exemption)?"""
    floats = [d for d in op.dtypes if d.startswith("float")]
    if check == "extremes":
        return bool(floats) and not op.nondeterministic_values and not op.skip_torch_compare and \
            any(extreme_samples(op, d) for d in floats)
    if check == "strided":
        return any(strided_samples(op, d) for d in op.dtypes)
    if check == "inplace":
        return op.inplace or not (op.method and hasattr(torch.Tensor, op.name + "_"))
    return bool(op.errors) and len(error_inputs(op, op.dtypes[0])) > 0


def exemption_table():
    """{check: [(op name, reason)]} over the table (one row per op name)."""
    table = {c: [] for c in CHECKS + PARTIAL}
    by_name = {}
    for op in ALL_OPS:
        by_name.setdefault(op.name, []).append(op)
    for name, ops in sorted(by_name.items()):
        for check in PARTIAL:
            reasons = [op.exempt[check] for op in ops if check in op.exempt]
            if reasons:
                table[check].append((name, reasons[0]))
        for check in CHECKS:
            if any(_runs(op, check) and check not in op.exempt for op in ops):
                continue
            reasons = [op.exempt[check] for op in ops if check in op.exempt]
            table[check].append((name, reasons[0] if reasons else None))
    return table


def test_every_entry_runs_every_check_or_is_exempt_with_a_reason():
    for op in ALL_OPS:
        unknown = set(op.exempt) - set(CHECKS) - set(PARTIAL)
        assert not unknown, f"{op.name}: unknown exemption keys {sorted(unknown)}"
        for check, why in op.exempt.items():
            assert isinstance(why, str) and len(why.split()) >= 2, f"{op.name}: exemption {check!r} needs a reason"
        narrowed = tuple(op.extremes) != ALL_EXTREMES or op.extreme_args is not None
        assert narrowed == ("extreme_values" in op.exempt), \
            f"{op.name}: narrowed extreme values need (only then) an 'extreme_values' reason"
    table = exemption_table()
    missing = {c: [n for n, why in rows if why is None] for c, rows in table.items()}
    missing = {c: v for c, v in missing.items() if v}
    assert not missing, f"ops lacking a check (and no exemption): {missing}"
    counts = {c: len(rows) for c, rows in table.items()}
    names = len({op.name for op in ALL_OPS})
    print(f"\nop table: {names} ops; exemptions per check: {counts}")
    for c, rows in table.items():
        for n, why in rows:
            print(f"  {c:9s} {n}: {why}")
