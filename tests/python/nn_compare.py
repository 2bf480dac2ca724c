"""Shared helper of the nn module tests: build a cgrad module and its torch
twin, copy torch's parameters and buffers into the cgrad one (load_state_dict
from NumPy copies), run both on the same inputs and compare outputs, input
gradients, every parameter gradient and the buffers afterwards.

    compare_module(lambda lib: lib.nn.Linear(3, 4), [(2, 3)])
    compare_module(make, [x_array], dtype="float64", train=(True, False))
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import torch

import cgrad

ArrayOrShape = Union[np.ndarray, Tuple[int, ...]]


def to_numpy(t: Any) -> np.ndarray:
    """A tensor of either library (or a number) as a NumPy array."""
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    if isinstance(t, cgrad.Tensor):
        return np.asarray(t.detach().numpy())
    return np.asarray(t)


def copy_state(src: torch.nn.Module, dst: cgrad.nn.Module) -> None:
    """Load every parameter and persistent buffer of the torch module into the cgrad one (strict: same keys)."""
    sd = {k: cgrad.tensor(to_numpy(v)) for k, v in src.state_dict().items()}
    dst.load_state_dict(sd, strict=True)


def _inputs(specs: Sequence[ArrayOrShape], dtype: str, seed: int) -> List[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for s in specs:
        a = s if isinstance(s, np.ndarray) else rng.standard_normal(s)
        out.append(a.astype(dtype) if a.dtype.kind == "f" else a)
    return out


def _flat(out: Any) -> List[Any]:
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out]


def compare_module(make: Callable[[Any], Any], inputs: Sequence[ArrayOrShape], dtype: str = "float64",
                   train: Sequence[bool] = (True, False), atol: float = 1e-6, rtol: float = 1e-5,
                   grad: bool = True, seed: int = 0, call: Optional[Callable[[Any, List[Any]], Any]] = None,
                   check_buffers: bool = True) -> Tuple[Any, Any]:
    """Build `make(torch)` and `make(cgrad)`, copy torch's state into cgrad's and, for each mode in `train`,
    compare the outputs and (when grad) the gradients of the float inputs and of every parameter.
    `call(module, tensors)` runs the module (default module(*tensors)). Returns (torch module, cgrad module)."""
    tm = make(torch)
    cm = make(cgrad)
    tdt = getattr(torch, dtype)
    tm = tm.to(tdt)
    cm = cm.to(getattr(cgrad, dtype))
    copy_state(tm, cm)
    arrays = _inputs(inputs, dtype, seed)
    run = call or (lambda m, xs: m(*xs))
    for mode in train:
        tm.train(mode)
        cm.train(mode)
        assert cm.training == mode and all(m.training == mode for m in cm.modules())
        tm.zero_grad(set_to_none=True)
        cm.zero_grad(set_to_none=True)
        tx = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        cx = [cgrad.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        tout, cout = _flat(run(tm, tx)), _flat(run(cm, cx))
        assert len(tout) == len(cout), f"{len(tout)} torch outputs vs {len(cout)} cgrad outputs"
        for k, (a, b) in enumerate(zip(tout, cout)):
            np.testing.assert_allclose(to_numpy(b), to_numpy(a), atol=atol, rtol=rtol, err_msg=f"output {k} (train={mode})")
        if not grad:
            continue
        rng = np.random.default_rng(seed + 1)
        weights = [rng.standard_normal(tuple(o.shape)).astype(dtype) for o in tout if o.dtype.is_floating_point]
        tl = sum((o * torch.tensor(w)).sum() for o, w in zip([o for o in tout if o.dtype.is_floating_point], weights))
        cl = sum((o * cgrad.tensor(w)).sum() for o, w in zip([o for o in cout if o.dtype.is_floating_point], weights))
        tl.backward()
        cl.backward()
        for k, (a, b) in enumerate(zip(tx, cx)):
            if a.requires_grad:
                assert (a.grad is None) == (b.grad is None), f"input {k} grad presence"
                if a.grad is not None:
                    np.testing.assert_allclose(to_numpy(b.grad), to_numpy(a.grad), atol=atol, rtol=rtol,
                                               err_msg=f"input {k} grad (train={mode})")
        tparams: Dict[str, Any] = dict(tm.named_parameters())
        cparams: Dict[str, Any] = dict(cm.named_parameters())
        assert list(tparams) == list(cparams), f"parameter names {list(tparams)} vs {list(cparams)}"
        for name in tparams:
            a, b = tparams[name].grad, cparams[name].grad
            assert (a is None) == (b is None), f"grad presence of {name}"
            if a is not None:
                np.testing.assert_allclose(to_numpy(b), to_numpy(a), atol=atol, rtol=rtol,
                                           err_msg=f"grad of {name} (train={mode})")
        if check_buffers:
            tb, cb = dict(tm.named_buffers()), dict(cm.named_buffers())
            assert list(tb) == list(cb)
            for name in tb:
                np.testing.assert_allclose(to_numpy(cb[name]), to_numpy(tb[name]), atol=atol, rtol=rtol,
                                           err_msg=f"buffer {name} (train={mode})")
    return tm, cm
