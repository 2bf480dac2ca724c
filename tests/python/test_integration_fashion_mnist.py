"""Integration: an MLP trained on a Fashion-MNIST subset with cgrad.nn, cgrad.optim and the
DataLoader reaches > 80% test accuracy in under 30 s. Skipped (with the reason) only when the
dataset is absent: `make test` installs it when running as root."""
import os

import pytest

import cgrad
from cgrad import nn
from cgrad.datasets import FashionMNIST
from cgrad.datasets.fashion_mnist import DEFAULT_ROOT

pytestmark = pytest.mark.skipif(not os.path.isdir(DEFAULT_ROOT),
                                reason=f"Fashion-MNIST not installed at {DEFAULT_ROOT} "
                                       "(apt-get install dataset-fashion-mnist; make test does it as root)")


def _flat(ds: FashionMNIST, n: int):
    x = ds.data[:n].reshape(n, 784).to(cgrad.float32) / 255.0
    return (x - 0.286) / 0.353, ds.targets[:n]


def test_mlp_on_a_subset_learns_above_80_percent():
    # (its time is a benchmark's business: bench/, the mainjob suite)
    cgrad.manual_seed(0)
    train_x, train_y = _flat(FashionMNIST(train=True), 12000)
    test_x, test_y = _flat(FashionMNIST(train=False), 2000)
    loader = cgrad.utils.data.DataLoader(cgrad.utils.data.TensorDataset(train_x, train_y), batch_size=64,
                                         shuffle=True, generator=cgrad.Generator().manual_seed(0))
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = cgrad.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(2):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
    model.eval()
    with cgrad.no_grad():
        accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
    assert accuracy > 0.80, f"test accuracy {accuracy:.3f} after 2 epochs on 12k images"
