"""cgrad.utils.data (datasets, samplers, DataLoader, default_collate) against
torch.utils.data, and cgrad.datasets.FashionMNIST's IDX reader."""
import collections
import gzip
import os
import struct

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import cgrad
import cgrad.utils.data as cud
from cgrad.datasets import FashionMNIST, read_idx
from data_workers import Failing, Hangs, Stream, double, check_worker_info

Point = collections.namedtuple("Point", ["x", "y"])


class Squares(cud.Dataset):
    def __init__(self, n, lib):
        self.n, self.lib = n, lib

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": self.lib.full((2,), float(i)), "i": i, "name": f"s{i}",
                "pair": (i * 1.5, self.lib.tensor([i, i * i])), "pt": Point(i, float(i))}


class TorchSquares(tud.Dataset):
    __init__ = Squares.__init__
    __len__ = Squares.__len__
    __getitem__ = Squares.__getitem__


def _same(a, b):
    """A cgrad batch equals a torch batch: same structure, types, values and dtypes."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, cgrad.Tensor), type(a)
        assert str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    elif isinstance(b, dict):
        assert type(a) is type(b) and a.keys() == b.keys()
        for k in b:
            _same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


@pytest.mark.parametrize("kw", [dict(batch_size=1), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=5), dict(batch_size=None), dict(batch_size=20)])
def test_loader_matches_torch(kw):
    c = cud.DataLoader(Squares(10, cgrad), **kw)
    t = tud.DataLoader(TorchSquares(10, torch), **kw)
    assert len(c) == len(t)
    cb, tb = list(c), list(t)
    assert len(cb) == len(tb)
    for a, b in zip(cb, tb):
        _same(a, b)


def test_default_collate_matches_torch():
    cases = [
        [1, 2, 3], [1.5, 2.0], [True, False], ["a", "b"],
        [(1, 2.0), (3, 4.0)], [[1, 2], [3, 4]], [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
        [Point(1, 2), Point(3, 4)],
    ]
    for batch in cases:
        _same(cud.default_collate(batch), tud.default_collate(batch))
    arrays = [np.arange(3, dtype=np.float32), np.ones(3, dtype=np.float32)]
    _same(cud.default_collate(arrays), tud.default_collate(arrays))
    ints = [np.int64(2), np.int64(3)]
    _same(cud.default_collate(ints), tud.default_collate(ints))
    ct = cud.default_collate([cgrad.ones(2, 3), cgrad.zeros(2, 3)])
    assert tuple(ct.shape) == (2, 2, 3)
    with pytest.raises(RuntimeError, match="equal size"):
        cud.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate"):
        cud.default_collate([object(), object()])


def test_default_convert():
    _same(cud.default_convert({"a": np.arange(3)}), tud.default_convert({"a": np.arange(3)}))
    assert cud.default_convert("abc") == "abc"


def test_shuffle_reproducible_with_generator():
    ds = cud.TensorDataset(cgrad.arange(20))

    def order(seed):
        g = cgrad.Generator()
        g.manual_seed(seed)
        return [b[0].tolist() for b in cud.DataLoader(ds, batch_size=4, shuffle=True, generator=g)]

    a, b, c = order(0), order(0), order(1)
    assert a == b and a != c
    flat = sorted(x for batch in a for x in batch)
    assert flat == list(range(20))
    # successive epochs of one loader differ; global seeding makes them reproducible too
    cgrad.manual_seed(3)
    dl = cud.DataLoader(ds, batch_size=20, shuffle=True)
    e1, e2 = next(iter(dl))[0].tolist(), next(iter(dl))[0].tolist()
    cgrad.manual_seed(3)
    assert next(iter(dl))[0].tolist() == e1 and e1 != e2


def test_samplers():
    assert list(cud.SequentialSampler(range(4))) == list(tud.SequentialSampler(range(4)))
    g = cgrad.Generator()
    g.manual_seed(5)
    rs = cud.RandomSampler(range(7), generator=g)
    assert len(rs) == 7 and sorted(rs) == list(range(7))
    rs = cud.RandomSampler(range(7), replacement=True, num_samples=40, generator=g)
    drawn = list(rs)
    assert len(drawn) == 40 and all(0 <= i < 7 for i in drawn)
    rs = cud.RandomSampler(range(3), num_samples=7)
    assert len(list(rs)) == 7
    for bs, dl in [(3, False), (3, True), (2, False), (10, True)]:
        c = cud.BatchSampler(cud.SequentialSampler(range(7)), bs, dl)
        t = tud.BatchSampler(tud.SequentialSampler(range(7)), bs, dl)
        assert list(c) == list(t) and len(c) == len(t)
    assert sorted(cud.SubsetRandomSampler([4, 8, 9])) == [4, 8, 9]
    with pytest.raises(ValueError):
        cud.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError):
        cud.RandomSampler(range(3), num_samples=0)


def test_custom_sampler_and_batch_sampler():
    ds = cud.TensorDataset(cgrad.arange(10))
    out = [b[0].tolist() for b in cud.DataLoader(ds, batch_size=2, sampler=[9, 1, 3])]
    assert out == [[9, 1], [3]]
    out = [b[0].tolist() for b in cud.DataLoader(ds, batch_sampler=[[0, 1, 2], [7]])]
    assert out == [[0, 1, 2], [7]]
    dl = cud.DataLoader(ds, batch_size=None, sampler=[4, 2])
    assert [x[0].item() for x in dl] == [4, 2]


def test_loader_argument_errors():
    ds = cud.TensorDataset(cgrad.arange(10))
    for kw in [dict(sampler=[1], shuffle=True), dict(batch_sampler=[[1]], batch_size=2),
               dict(batch_sampler=[[1]], drop_last=True), dict(batch_size=None, drop_last=True),
               dict(num_workers=-1), dict(persistent_workers=True), dict(prefetch_factor=2)]:
        with pytest.raises(ValueError):
            cud.DataLoader(ds, **kw)
    with pytest.raises(ValueError):
        cud.DataLoader(Stream(4), shuffle=True)
    with pytest.raises(ValueError):
        cud.DataLoader(Stream(4), sampler=[0])


def test_chain_dataset():
    chained = Stream(3) + Stream(2)
    assert isinstance(chained, cud.ChainDataset)
    assert list(chained) == [0, 1, 2, 0, 1] and len(chained) == 5
    assert [b.tolist() for b in cud.DataLoader(chained, batch_size=2)] == [[0, 1], [2, 0], [1]]


def test_iterable_dataset():
    for kw in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)]:
        c = [x.tolist() if hasattr(x, "tolist") else x for x in cud.DataLoader(Stream(10), **kw)]
        t = [x.tolist() for x in tud.DataLoader(range(10), **kw)] if kw.get("batch_size") else list(range(10))
        assert c == t
        assert len(cud.DataLoader(Stream(10), **kw)) == len(tud.DataLoader(range(10), **kw))


def test_tensor_subset_concat_datasets():
    x, y = cgrad.arange(12).reshape(6, 2), cgrad.arange(6)
    ds = cud.TensorDataset(x, y)
    assert len(ds) == 6 and ds[2][0].tolist() == [4, 5] and ds[2][1].item() == 2
    with pytest.raises(AssertionError):
        cud.TensorDataset(x, cgrad.arange(5))
    sub = cud.Subset(ds, [5, 0, 3])
    assert len(sub) == 3 and sub[0][1].item() == 5 and sub[-1][1].item() == 3
    tsub = tud.Subset(list(range(6)), [5, 0, 3])
    assert [tsub[i] for i in range(3)] == [sub[i][1].item() for i in range(3)]
    a, b = list(range(3)), list(range(10, 15))
    cc = cud.ConcatDataset([a, b])
    tc = tud.ConcatDataset([a, b])
    assert len(cc) == len(tc) == 8 and cc.cumulative_sizes == tc.cumulative_sizes
    assert [cc[i] for i in range(-8, 8)] == [tc[i] for i in range(-8, 8)]
    with pytest.raises(ValueError):
        cc[-9]
    with pytest.raises(IndexError):
        cc[8]
    assert len(sub + sub) == 6


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [0.34, 0.33, 0.33], [10]])
def test_random_split(lengths):
    g = cgrad.Generator()
    g.manual_seed(0)
    parts = cud.random_split(range(10), lengths, generator=g)
    tparts = tud.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(p) for p in tparts]
    assert sorted(i for p in parts for i in p) == list(range(10))
    g.manual_seed(0)
    again = cud.random_split(range(10), lengths, generator=g)
    assert [list(p) for p in parts] == [list(p) for p in again]
    with pytest.raises(ValueError):
        cud.random_split(range(10), [3, 3])


@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_workers(context):
    ds = cud.TensorDataset(cgrad.arange(23).float())
    ref = [b[0].tolist() for b in cud.DataLoader(ds, batch_size=4)]
    dl = cud.DataLoader(ds, batch_size=4, num_workers=2, multiprocessing_context=context,
                        worker_init_fn=check_worker_info)
    assert [b[0].tolist() for b in dl] == ref and len(dl) == len(ref)
    assert cud.get_worker_info() is None
    # shuffled order with workers equals the single-process order for the same seed
    g = cgrad.Generator()
    g.manual_seed(7)
    single = [b[0].tolist() for b in cud.DataLoader(ds, batch_size=5, shuffle=True, generator=g)]
    g.manual_seed(7)
    multi = [b[0].tolist() for b in cud.DataLoader(ds, batch_size=5, shuffle=True, generator=g,
                                                   num_workers=2, multiprocessing_context=context)]
    assert sorted(x for b in multi for x in b) == sorted(x for b in single for x in b)
    # iterable dataset split by get_worker_info, custom collate, persistent workers over two epochs
    dl = cud.DataLoader(Stream(9), batch_size=2, num_workers=2, collate_fn=double,
                        multiprocessing_context=context, persistent_workers=True)
    for _ in range(2):
        got = sorted(x for b in dl for x in b)
        assert got == [2 * i for i in range(9)]
    # an exception inside a worker comes back with its type and the worker's traceback
    with pytest.raises(KeyError, match="worker process") as info:
        list(cud.DataLoader(Failing(), batch_size=2, num_workers=2, multiprocessing_context=context))
    assert "Original Traceback" in str(info.value) and "bad index 5" in str(info.value)


def test_timeout_with_a_hung_worker_raises_when_it_says():
    """timeout=2 with a worker that never answers: the error comes at about 2 s (it came at
    timeout + 1 s polling + 5 s joining the hung worker); the bound leaves room for a slow machine."""
    import time
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out after 2 seconds"):
        list(cud.DataLoader(Hangs(), num_workers=1, timeout=2, multiprocessing_context="fork"))
    elapsed = time.monotonic() - start
    assert 1.9 <= elapsed < 5.0, elapsed


# ------------------------------------------------------------------ FashionMNIST / IDX


def _write_idx(path, magic, shape, payload, compress=False):
    raw = struct.pack(">I", magic) + b"".join(struct.pack(">I", s) for s in shape) + payload
    if compress:
        with gzip.open(path + ".gz", "wb") as f:
            f.write(raw)
    else:
        with open(path, "wb") as f:
            f.write(raw)


@pytest.mark.parametrize("compress", [False, True])
def test_fashion_mnist_small_files(tmp_path, compress):
    rng = np.random.default_rng(0)
    imgs = rng.integers(0, 256, (5, 28, 28), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    _write_idx(str(tmp_path / "t10k-images-idx3-ubyte"), 2051, (5, 28, 28), imgs.tobytes(), compress)
    _write_idx(str(tmp_path / "t10k-labels-idx1-ubyte"), 2049, (5,), labels.tobytes(), compress)
    ds = FashionMNIST(root=str(tmp_path), train=False)
    assert len(ds) == 5
    assert ds.data.dtype == cgrad.uint8 and tuple(ds.data.shape) == (5, 28, 28)
    assert ds.targets.dtype == cgrad.int64 and ds.targets.tolist() == labels.tolist()
    np.testing.assert_array_equal(ds.data.numpy(), imgs)
    img, label = ds[2]
    assert label == 4 and isinstance(label, int)
    assert img.dtype == cgrad.float32 and tuple(img.shape) == (1, 28, 28)
    np.testing.assert_allclose(img.numpy()[0], imgs[2] / 255.0, rtol=1e-6)
    ds = FashionMNIST(root=str(tmp_path), train=False, transform=lambda x: x * 2,
                      target_transform=lambda y: y + 10)
    img, label = ds[0]
    assert label == 13 and float(img.max()) <= 2.0
    batch = next(iter(cud.DataLoader(ds, batch_size=4)))
    assert tuple(batch[0].shape) == (4, 1, 28, 28) and batch[1].dtype == cgrad.int64
    with pytest.raises(FileNotFoundError, match="apt-get install dataset-fashion-mnist"):
        FashionMNIST(root=str(tmp_path), train=True)


def test_idx_errors(tmp_path):
    p = str(tmp_path / "x-idx")
    _write_idx(p, 2049, (3,), b"\x01\x02\x03")
    assert read_idx(p, 2049).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="magic number 2049, expected 2051"):
        read_idx(p, 2051)
    _write_idx(p, 2051, (2, 2, 2), b"\x00" * 7)
    with pytest.raises(ValueError, match="7 data bytes"):
        read_idx(p, 2051)
    with open(p, "wb") as f:
        f.write(struct.pack(">I", 2051) + b"\x00\x00")
    with pytest.raises(ValueError, match="truncated"):
        read_idx(p, 2051)
    with pytest.raises(RuntimeError, match="download"):
        FashionMNIST(root=str(tmp_path), download=True)


REAL = "/usr/share/datasets/fashion-mnist"


@pytest.mark.skipif(not os.path.isdir(REAL), reason="dataset-fashion-mnist is not installed "
                    "(apt-get install dataset-fashion-mnist)")
def test_fashion_mnist_real():
    test = FashionMNIST(train=False)
    assert len(test) == 10000 and tuple(test.data.shape) == (10000, 28, 28)
    assert sorted(set(test.targets.tolist())) == list(range(10))
    img, label = test[0]
    assert tuple(img.shape) == (1, 28, 28) and 0.0 <= float(img.min()) and float(img.max()) <= 1.0
    assert label == 9  # the first test image is an ankle boot
