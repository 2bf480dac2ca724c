"""The demo CNN (cgrad.examples.fashion_mnist) trained under bfloat16 autocast
against the same run in float32 (same initial weights, same batches): test
accuracy within 1 point and close loss curves. A short run is in the default
suite; the one-epoch run is marked slow."""
from __future__ import annotations

import importlib.util
import os

import pytest

import cgrad
from cgrad.datasets.fashion_mnist import DEFAULT_ROOT

# The demo's module loaded from its file under a private name: importing
# cgrad.examples would add a submodule attribute to the package, which the
# stub check (test_stubs.py) would then see.
_spec = importlib.util.spec_from_file_location(
    "_amp_fashion_mnist_demo", os.path.join(os.path.dirname(cgrad.__file__), "examples", "fashion_mnist.py"))
_demo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_demo)
build_model, load_split = _demo.build_model, _demo.load_split

pytestmark = pytest.mark.skipif(not os.path.isdir(DEFAULT_ROOT),
                                reason=f"Fashion-MNIST not installed at {DEFAULT_ROOT} "
                                       "(apt-get install dataset-fashion-mnist; make test does it as root)")


def _train(steps: int, batch: int, amp: bool, n_test: int):
    F = cgrad.nn.functional
    tx, ty = load_split(cgrad, True, None)
    vx, vy = load_split(cgrad, False, None)
    vx, vy = vx[:n_test], vy[:n_test]
    cgrad.manual_seed(0)
    model = build_model(cgrad.nn)
    opt = cgrad.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    perm = cgrad.randperm(len(tx), generator=cgrad.Generator().manual_seed(1))
    losses = []
    for i in range(steps):
        idx = perm[i * batch:(i + 1) * batch]
        with cgrad.autocast("cpu", dtype=cgrad.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(tx[idx]), ty[idx])
        assert loss.dtype == cgrad.float32
        opt.zero_grad()
        loss.backward()
        assert all(p.grad.dtype == cgrad.float32 for p in model.parameters())
        opt.step()
        losses.append(loss.item())
    model.eval()
    with cgrad.no_grad(), cgrad.autocast("cpu", dtype=cgrad.bfloat16, enabled=amp):
        acc = (model(vx).argmax(1) == vy).float().mean().item() * 100
    return losses, acc


def _compare(steps: int, batch: int, n_test: int, min_acc: float):
    l32, a32 = _train(steps, batch, False, n_test)
    l16, a16 = _train(steps, batch, True, n_test)
    tail = max(steps // 4, 1)
    m32, m16 = sum(l32[-tail:]) / tail, sum(l16[-tail:]) / tail
    assert a32 > min_acc, f"float32 run reached only {a32:.2f}%"
    assert abs(a16 - a32) <= 1.0, f"bf16 autocast {a16:.2f}% vs float32 {a32:.2f}%"
    assert abs(m16 - m32) <= 0.05, f"mean loss of the last {tail} steps: bf16 {m16:.4f} vs float32 {m32:.4f}"
    return a32, a16, m32, m16


def test_cnn_bf16_autocast_short_run_tracks_float32():
    # 200 steps of 32 images: ~83% test accuracy on 2000 test images for both
    _compare(200, 32, 2000, 75.0)


@pytest.mark.slow
def test_cnn_bf16_autocast_one_epoch_within_one_point_of_float32():
    a32, a16, m32, m16 = _compare(60000 // 64, 64, 10000, 85.0)
    print(f"one epoch: float32 {a32:.2f}% (loss {m32:.4f}), bf16 autocast {a16:.2f}% (loss {m16:.4f})")
