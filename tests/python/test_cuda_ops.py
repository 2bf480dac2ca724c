"""Every op of the op table (tests/python/opinfo) on a cuda device against the
CPU: values of each sample in each dtype, the gradient of float samples, and
(float64) the second derivative. Skipped without a usable CUDA device; on a GPU
machine tools/gpu_check.sh runs it. An op the CUDA backend has no kernel for
raises NotImplementedError naming the op and the device: that case is
reported as skipped (with the message), so the summary counts what runs on
cuda; any other failure, or a value that differs from the CPU's, fails."""
from __future__ import annotations

from typing import Any, List

import numpy as np
import pytest

import cgrad
from opinfo import ALL_OPS
from opinfo.core import flatten_outputs, to_lib, to_numpy

pytestmark = pytest.mark.skipif(not cgrad.cuda.is_available(), reason="no usable CUDA device")

CASES = [(op, dt) for op in ALL_OPS for dt in op.dtypes]

# cuda against the CPU: the same algorithms up to summation order and the
# libraries' transcendental functions (a few ulp), so float32 is compared to
# a few ulp of the result's size, half precision to a rounding step
_TOL = {"float64": (1e-10, 1e-9), "float32": (2e-5, 2e-5), "bfloat16": (2e-2, 2e-2), "float16": (4e-3, 4e-3)}


def _ids(case: Any) -> str:
    op, dt = case
    return f"{op.name}-{dt}"


def _on_cuda(t: Any) -> Any:
    """The same values on cuda with the same strides (a view of a cuda buffer
    when t is not contiguous), a leaf that requires grad when t does."""
    if not isinstance(t, cgrad.Tensor):
        return t
    g = t.detach().to("cuda")
    if not t.is_contiguous() and t.numel() > 0:
        base = cgrad.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device="cuda")
        base.copy_(g)
        g = base
    if t.requires_grad:
        g.requires_grad_(True)
    return g


def _args(op: Any, sample: Any, requires_grad: bool) -> tuple[List[Any], List[Any]]:
    cpu = [to_lib(cgrad, a, sample.noncontig,
                  requires_grad and isinstance(a, np.ndarray) and a.dtype.kind == "f") for a in sample.args]
    return cpu, [_on_cuda(a) for a in cpu]


def _compare(got: Any, want: Any, dt: str, what: str, scale: float = 1.0) -> None:
    assert got.device.type == "cuda", f"{what}: result on {got.device}"
    a, b = to_numpy(got.cpu()), to_numpy(want)
    assert a.shape == b.shape and a.dtype == b.dtype, f"{what}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    if a.dtype == bool or a.dtype.kind in "iu":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        atol, rtol = _TOL.get(dt, _TOL["float32"])
        np.testing.assert_allclose(a, b, atol=atol * scale, rtol=rtol * scale, equal_nan=True, err_msg=what)


def _not_on_cuda(e: BaseException) -> bool:
    return isinstance(e, NotImplementedError) and "cuda" in str(e)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_op_on_cuda_matches_cpu(case: Any) -> None:
    op, dt = case
    missing = None
    ran = 0
    rng = np.random.default_rng(7)
    for sample in op.sample_fn(dt):
        grad = op.grad and sample.grad and dt in ("float32", "float64")
        cpu, gpu = _args(op, sample, grad)
        try:
            out_g = op.fn(cgrad)(*gpu, **sample.kwargs)
        except NotImplementedError as e:
            if not _not_on_cuda(e):
                raise
            missing = str(e)
            continue
        out_c = op.fn(cgrad)(*cpu, **sample.kwargs)
        ran += 1
        og, oc = flatten_outputs(out_g), flatten_outputs(out_c)
        assert len(og) == len(oc), f"{op.name} {sample}: {len(og)} outputs on cuda, {len(oc)} on cpu"
        if not op.nondeterministic_values:
            for a, b in zip(og, oc):
                _compare(a, b, dt, f"{op.name} {sample}")
        if not grad:
            continue
        pairs = [(a, b) for a, b in zip(og, oc) if b.dtype.is_floating_point and b.requires_grad]
        if not pairs:
            continue
        total_g = total_c = None
        for a, b in pairs:
            v = rng.uniform(-1, 1, size=tuple(b.shape))
            vc = cgrad.tensor(v.tolist(), dtype=b.dtype) if v.size else cgrad.zeros(tuple(b.shape), dtype=b.dtype)
            tg, tc = (a * vc.to("cuda")).sum(), (b * vc).sum()
            total_g = tg if total_g is None else total_g + tg
            total_c = tc if total_c is None else total_c + tc
        leaves = [i for i, a in enumerate(cpu) if isinstance(a, cgrad.Tensor) and a.requires_grad]
        if not leaves:
            continue
        second = dt == "float64" and op.gradgrad
        gg = cgrad.autograd.grad(total_g, [gpu[i] for i in leaves], create_graph=second, allow_unused=True)
        gc = cgrad.autograd.grad(total_c, [cpu[i] for i in leaves], create_graph=second, allow_unused=True)
        for i, a, b in zip(leaves, gg, gc):
            assert (a is None) == (b is None), f"{op.name} {sample}: grad {i} present on one device only"
            if b is not None:
                _compare(a, b, dt, f"{op.name} grad {i} {sample}", 10)
        if not second:
            continue
        # the second derivative: d/d leaves of sum_i <grad_i, w_i>
        sg = sc = None
        for a, b in zip(gg, gc):
            if b is None or not b.requires_grad:
                continue
            w = cgrad.tensor(rng.uniform(-1, 1, size=tuple(b.shape)).tolist(), dtype=b.dtype) if b.numel() else \
                cgrad.zeros(tuple(b.shape), dtype=b.dtype)
            pg, pc = (a * w.to("cuda")).sum(), (b * w).sum()
            sg = pg if sg is None else sg + pg
            sc = pc if sc is None else sc + pc
        if sc is None:
            continue
        hg = cgrad.autograd.grad(sg, [gpu[i] for i in leaves], allow_unused=True)
        hc = cgrad.autograd.grad(sc, [cpu[i] for i in leaves], allow_unused=True)
        for i, a, b in zip(leaves, hg, hc):
            if a is not None and b is not None:
                _compare(a, b, dt, f"{op.name} grad-grad {i} {sample}", 100)
    if not ran and missing:
        pytest.skip(f"not on cuda yet: {missing}")
