"""Parity of every op in the table (tests/python/opinfo) with PyTorch:
values, gradients, in-place and method forms, and float64 gradcheck /
gradgradcheck of cgrad's own autograd."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import cgrad
from opinfo import ALL_OPS
from opinfo.core import assert_close, dtype_name, flatten_outputs, numeric_check, to_lib, to_numpy

CASES = [(op, dt) for op in ALL_OPS for dt in op.dtypes]


def _ids(case):
    op, dt = case
    return f"{op.name}-{dt}"


def _run(lib, op, sample, requires_grad):
    args = [to_lib(lib, a, sample.noncontig, requires_grad and isinstance(a, np.ndarray) and a.dtype.kind == "f")
            for a in sample.args]
    return args, op.fn(lib)(*args, **sample.kwargs)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_values_match_torch(case):
    op, dt = case
    for sample in op.sample_fn(dt):
        _, out_c = _run(cgrad, op, sample, False)
        if op.skip_torch_compare:
            continue
        _, out_t = _run(torch, op, sample, False)
        oc, ot = flatten_outputs(out_c), flatten_outputs(out_t)
        assert len(oc) == len(ot), f"{op.name} {sample}: {len(oc)} outputs vs {len(ot)}"
        for a, b in zip(oc, ot):
            assert dtype_name(a) == dtype_name(b), f"{op.name} {sample}: dtype {a.dtype} vs {b.dtype}"
            assert tuple(a.shape) == tuple(b.shape), f"{op.name} {sample}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
            if not op.nondeterministic_values:
                assert_close(to_numpy(a), to_numpy(b), op.atol, op.rtol, f"{op.name} {sample}")


@pytest.mark.parametrize("case", [c for c in CASES if c[0].method], ids=_ids)
def test_method_and_inplace_forms(case):
    op, dt = case
    for sample in op.sample_fn(dt):
        if not sample.args or not isinstance(sample.args[0], np.ndarray) or op.nondeterministic_values:
            continue
        args = [to_lib(cgrad, a, sample.noncontig, False) for a in sample.args]
        ref = flatten_outputs(op.fn(cgrad)(*args, **sample.kwargs))
        got = flatten_outputs(getattr(args[0], op.name)(*args[1:], **sample.kwargs))
        for a, b in zip(got, ref):
            assert_close(to_numpy(a), to_numpy(b), 0, 0, f"{op.name} method {sample}")
        if op.inplace and len(ref) == 1 and tuple(ref[0].shape) == tuple(args[0].shape) and ref[0].dtype == args[0].dtype:
            target = args[0].clone()
            storage_ptr = target.data_ptr() if hasattr(target, "data_ptr") else None
            res = getattr(target, op.name + "_")(*args[1:], **sample.kwargs)
            assert res is target
            if storage_ptr is not None:
                assert target.data_ptr() == storage_ptr
            assert_close(to_numpy(target), to_numpy(ref[0]), 0, 0, f"{op.name}_ in-place {sample}")


@pytest.mark.parametrize("case", [c for c in CASES if c[0].grad and c[1].startswith("float")], ids=_ids)
def test_gradients_match_torch(case):
    op, dt = case
    rng = np.random.default_rng(3)
    for sample in op.sample_fn(dt):
        if not sample.grad:
            continue
        args_c, out_c = _run(cgrad, op, sample, True)
        args_t, out_t = _run(torch, op, sample, True)
        oc = [o for o in flatten_outputs(out_c) if o.dtype.is_floating_point and o.requires_grad]
        ot = [o for o in flatten_outputs(out_t) if o.dtype.is_floating_point and o.requires_grad]
        if not ot:
            continue
        assert len(oc) == len(ot), f"{op.name} {sample}: differentiable outputs differ"
        total_c = total_t = None
        for a, b in zip(oc, ot):
            g = rng.uniform(-1, 1, size=tuple(b.shape)).astype(str(b.dtype).split(".")[-1])
            tc = (a * cgrad.tensor(g.tolist(), dtype=a.dtype)).sum() if g.size else a.sum()
            tt = (b * torch.tensor(g)).sum() if g.size else b.sum()
            total_c = tc if total_c is None else total_c + tc
            total_t = tt if total_t is None else total_t + tt
        total_c.backward()
        total_t.backward()
        for i, (ac, at) in enumerate(zip(args_c, args_t)):
            if not hasattr(at, "grad") or not getattr(at, "requires_grad", False):
                continue
            if at.grad is None:
                assert ac.grad is None or not np.any(to_numpy(ac.grad)), f"{op.name} {sample}: grad {i} should be None/zero"
                continue
            assert ac.grad is not None, f"{op.name} {sample}: missing grad for input {i}"
            assert_close(to_numpy(ac.grad), at.grad.numpy(), op.atol * 10, op.rtol * 10, f"{op.name} grad {i} {sample}")


@pytest.mark.parametrize("case", [c for c in CASES if c[0].grad and c[1] == "float64"], ids=_ids)
def test_gradcheck_and_gradgradcheck(case):
    op, dt = case
    for sample in op.sample_fn(dt):
        if not sample.grad or sample.noncontig:
            continue
        arrays = [a for a in sample.args]
        diff = [i for i, a in enumerate(arrays) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        if not diff or sum(arrays[i].size for i in diff) > 40:
            continue
        fixed = {i: a for i, a in enumerate(arrays) if i not in diff}

        def f(*xs):
            return op.fn(cgrad)(*xs, **sample.kwargs)
        arrs = [np.array(a, dtype=np.float64) if i in diff else a for i, a in enumerate(arrays)]
        del fixed
        numeric_check(cgrad, f, arrs, diff, create_graph=False)
        if op.gradgrad:
            numeric_check(cgrad, f, arrs, diff, create_graph=True)
