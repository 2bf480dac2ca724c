"""WeightedRandomSampler, DistributedSampler and StackDataset against
torch.utils.data: the draws' distribution, the replicas' shares (PyTorch's
exact indices without shuffling; a partition of the padded indices with it),
epochs and seeds, stacked samples through a DataLoader, and the errors."""
import numpy as np
import pytest
import torch
import torch.utils.data as tud

import cgrad
import cgrad.utils.data as cud


def test_weighted_random_sampler_distribution():
    g = cgrad.Generator()
    g.manual_seed(0)
    weights = [0.0, 1.0, 3.0, 6.0]
    draws = list(cud.WeightedRandomSampler(weights, 20000, generator=g))
    counts = np.bincount(draws, minlength=4) / len(draws)
    assert counts[0] == 0
    np.testing.assert_allclose(counts[1:], [0.1, 0.3, 0.6], atol=0.015)
    assert len(cud.WeightedRandomSampler(weights, 7)) == 7
    distinct = list(cud.WeightedRandomSampler([1, 1, 1, 1, 1], 5, replacement=False))
    assert sorted(distinct) == [0, 1, 2, 3, 4]
    s = cud.WeightedRandomSampler(cgrad.tensor([1.0, 2.0]), 3)
    assert s.weights.dtype == cgrad.float64 and all(i in (0, 1) for i in s)


@pytest.mark.parametrize("kwargs", [dict(weights=[1.0], num_samples=0), dict(weights=[1.0], num_samples=True),
                                    dict(weights=[1.0], num_samples=2, replacement=1),
                                    dict(weights=[[1.0, 2.0]], num_samples=2)])
def test_weighted_random_sampler_errors(kwargs):
    with pytest.raises(ValueError) as expected:
        tud.WeightedRandomSampler(**kwargs)
    with pytest.raises(ValueError, match=str(expected.value).replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        cud.WeightedRandomSampler(**kwargs)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (9, 3, False), (2, 5, False),
                                                 (7, 2, True), (0, 2, False)])
def test_distributed_sampler_unshuffled_matches_torch(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        c = cud.DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        t = tud.DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        if n == 0:
            assert len(c) == len(t) == 0
            continue
        assert list(c) == list(t) and len(c) == len(t) and c.total_size == t.total_size


@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_shuffled(drop_last):
    data, replicas = list(range(11)), 3
    samplers = [cud.DistributedSampler(data, num_replicas=replicas, rank=r, seed=5, drop_last=drop_last)
                for r in range(replicas)]
    shares = [list(s) for s in samplers]
    assert [len(s) for s in shares] == [len(tud.DistributedSampler(data, replicas, r, drop_last=drop_last))
                                        for r in range(replicas)]
    flat = sum(shares, [])
    if drop_last:
        assert len(set(flat)) == len(flat) == 9
    else:
        assert set(flat) == set(data) and len(flat) == 12
    assert [list(s) for s in samplers] == shares  # the same epoch gives the same order
    for s in samplers:
        s.set_epoch(1)
    assert [list(s) for s in samplers] != shares
    again = cud.DistributedSampler(data, num_replicas=replicas, rank=0, seed=5, drop_last=drop_last)
    again.set_epoch(1)
    assert list(again) == list(samplers[0])


def test_distributed_sampler_errors():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        cud.DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        cud.DistributedSampler(range(4), num_replicas=3, rank=-1)
    with pytest.raises(RuntimeError, match="Requires distributed package to be available"):
        cud.DistributedSampler(range(4))


def test_stack_dataset():
    xs, ys = np.arange(12.0).reshape(6, 2), np.arange(6)
    ct = cud.StackDataset(cud.TensorDataset(cgrad.from_numpy(xs)), list(ys))
    tt = tud.StackDataset(tud.TensorDataset(torch.from_numpy(xs)), list(ys))
    assert len(ct) == len(tt) == 6
    (cx,), cy = ct[2]
    (tx,), ty = tt[2]
    assert cx.tolist() == tx.tolist() and cy == ty
    cd = cud.StackDataset(a=list(ys), b=[str(v) for v in ys])
    td = tud.StackDataset(a=list(ys), b=[str(v) for v in ys])
    assert cd[4] == td[4] and cd.__getitems__([1, 3]) == td.__getitems__([1, 3])
    assert ct.__getitems__([0, 5])[1][1] == 5
    batches = list(cud.DataLoader(cud.StackDataset(x=cud.TensorDataset(cgrad.from_numpy(xs)), y=list(ys)),
                                  batch_size=4))
    assert [b["y"].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5]]
    assert batches[1]["x"][0].tolist() == [[8.0, 9.0], [10.0, 11.0]]


def test_stack_dataset_errors():
    with pytest.raises(ValueError, match="but both types are given"):
        cud.StackDataset([1], a=[1])
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        cud.StackDataset()
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        cud.StackDataset([1, 2], [1])

    class Short(cud.Dataset):
        def __getitems__(self, indices):
            return [0]

        def __len__(self):
            return 3
    with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
        cud.StackDataset(Short(), [1, 2, 3]).__getitems__([0, 1])
