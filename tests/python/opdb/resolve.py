"""Which op_db entries apply to cgrad (`exclusion` gives the reason of the
ones that do not) and the cgrad callable of each (`resolve`).

An entry's torch callable maps onto cgrad by its name: `nn.functional.relu`
is cgrad.nn.functional.relu, `__radd__` is cgrad.Tensor.__radd__. Where op_db
wraps the call in a lambda (`lambda x: x.view(shape)`, `wrapper_set_seed(
torch.randn, ...)`), the lambda is rebuilt with `torch` bound to cgrad, so
the same code calls cgrad; a name cgrad lacks raises Missing."""
from __future__ import annotations

import types
from typing import Any, Callable, Dict, Optional

import torch

import cgrad

ISSUE_17 = "issue 17 (complex dtypes, torch.linalg, torch.fft, torch.special)"

# Namespaces and top-level ops another issue owns; that issue moves them into scope.
OTHER_ISSUE_PREFIXES = {"linalg.": ISSUE_17, "fft.": ISSUE_17, "special.": ISSUE_17}
OTHER_ISSUE_NAMES = {
    **{n: ISSUE_17 + ": the classic linear-algebra forms" for n in (
        "inverse", "det", "logdet", "slogdet", "cholesky", "cholesky_inverse", "cholesky_solve", "qr", "svd",
        "svd_lowrank", "pca_lowrank", "lu", "lu_solve", "lu_unpack", "triangular_solve", "pinverse",
        "matrix_power", "matrix_exp", "chain_matmul", "lstsq", "geqrf", "ormqr", "linalg_lu", "symeig",
        "eig", "addr_complex", "logaddexp_complex")},
    **{n: ISSUE_17 + ": spectral" for n in ("stft", "istft")},
    **{n: ISSUE_17 + ": a complex result" for n in ("cfloat", "cdouble", "chalf", "view_as_complex", "complex",
                                                    "polar", "view_as_real", "resolve_conj", "resolve_neg")},
}
# Entries that are not part of the Python API a CPU user calls.
NOT_API_PREFIXES = {
    "torch.ops.": "an ATen overload (torch.ops.aten), not torch's Python API",
    "torch._": "a private torch function (fp8 scaled matmul)",
    "jiterator_": "CUDA-only (torch.cuda.jiterator)",
    "sparse.": "sparse layouts",
}
NOT_API_NAMES = {
    "to_sparse": "sparse layouts",
    "_softmax_backward_data": "an ATen backward kernel, not torch's Python API",
    "_batch_norm_with_update": "an ATen kernel, not torch's Python API",
    "_upsample_bilinear2d_aa": "an ATen kernel, not torch's Python API",
    "slice": "an ATen overload (torch.ops.aten.slice), not torch's Python API",
    "native_dropout_backward": "an ATen backward kernel, not torch's Python API",
    "max_pool2d_with_indices_backward": "an ATen backward kernel, not torch's Python API",
    "fake_quantize_per_tensor_affine": "quantization",
    "fake_quantize_per_channel_affine": "quantization",
}


class Missing(Exception):
    """cgrad has no object under this torch name."""


def op_id(op: Any) -> str:
    """The entry's id, as PyTorch's test names spell it: name, or name.variant."""
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def real_dtypes(op: Any) -> list:
    """The entry's CPU dtypes that are neither complex nor quantized (qint8, quint8, ...)."""
    return sorted((d for d in op.supported_dtypes("cpu") if not d.is_complex and not str(d)[6:].startswith(("q", "qu"))),
                  key=str)


def exclusion(op: Any) -> Optional[str]:
    """Why the entry is out of this suite's scope, or None."""
    if isinstance(op.op, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        return NOT_API_PREFIXES["torch.ops."]
    if op.name.startswith("_") and not op.name.startswith("__"):
        return "a private torch function (leading underscore), not its public API"
    for table_p, table_n in ((NOT_API_PREFIXES, NOT_API_NAMES), (OTHER_ISSUE_PREFIXES, OTHER_ISSUE_NAMES)):
        if op.name in table_n:
            return table_n[op.name]
        for prefix, why in table_p.items():
            if op.name.startswith(prefix):
                return why
    if not real_dtypes(op):
        return ISSUE_17 + ": complex dtypes only"
    return None


class _Namespace:
    """Stands in for `torch` (or a submodule) inside op_db's lambdas: each
    attribute is cgrad's object of the same name."""

    def __init__(self, target: Any, path: str, real: Any) -> None:
        self._target, self._path, self._real = target, path, real

    def __getattr__(self, name: str) -> Any:
        try:
            val = getattr(self._target, name)
        except AttributeError:
            if name.startswith("_") and hasattr(self._real, name):
                return getattr(self._real, name)  # the test harness's private helpers (torch.utils._mode_utils)
            raise Missing(f"{self._path}.{name}") from None
        if isinstance(val, types.ModuleType):
            return _Namespace(val, f"{self._path}.{name}", getattr(self._real, name, None))
        if isinstance(val, type) and val is cgrad.Tensor:
            return _TensorType()
        return val


class _TensorType:
    """`torch.Tensor` inside a lambda: cgrad.Tensor's attributes, Missing for absent ones."""

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(cgrad.Tensor, name)
        except AttributeError:
            raise Missing(f"torch.Tensor.{name}") from None


def _rebind(fn: types.FunctionType, depth: int = 0) -> types.FunctionType:
    """fn with `torch` bound to cgrad in its globals, and so the test helpers it calls."""
    g: Dict[str, Any] = dict(fn.__globals__)
    g["torch"] = _Namespace(cgrad, "torch", torch)
    for name in fn.__code__.co_names:
        val = g.get(name)
        if isinstance(val, types.FunctionType) and depth < 3 and val.__module__.startswith("torch.testing"):
            g[name] = _rebind(val, depth + 1)
    if "F" in g and g["F"] is torch.nn.functional:
        g["F"] = _Namespace(cgrad.nn.functional, "torch.nn.functional", torch.nn.functional)
    closure = fn.__closure__
    if closure:
        cells = []
        for c in closure:
            v = c.cell_contents
            if isinstance(v, types.FunctionType) and v.__module__.startswith("torch.testing"):
                v = _rebind(v, depth + 1)
            cells.append(types.CellType(v))
        closure = tuple(cells)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)


def _by_name(name: str) -> Any:
    if name.startswith("__") or name in ("T", "H", "mT", "mH"):
        obj: Any = cgrad.Tensor
        parts = [name]
    else:
        obj, parts = cgrad, name.split(".")
    for i, p in enumerate(parts):
        try:
            obj = getattr(obj, p)
        except AttributeError:
            raise Missing("torch." + ".".join(parts[:i + 1])) from None
    return obj


def resolve(op: Any) -> Callable[..., Any]:
    """The cgrad callable that plays the entry's `op`; Missing when cgrad lacks it."""
    f = op.op
    if isinstance(f, types.FunctionType) and (f.__name__ == "<lambda>" or f.__module__.startswith("torch.testing")):
        return _rebind(f)
    if type(f).__name__ in ("method_descriptor", "wrapper_descriptor") or \
            (isinstance(f, types.FunctionType) and f.__module__ == "torch._tensor"):
        try:
            return getattr(cgrad.Tensor, f.__name__)
        except AttributeError:
            raise Missing("torch.Tensor." + f.__name__) from None
    return _by_name(op.name)
