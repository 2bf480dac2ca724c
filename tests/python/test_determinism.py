"""Determinism: with a fixed seed and thread count, two training runs of the
demo model (python/cgrad/examples/fashion_mnist.py) give bitwise-identical
parameters and buffers, with use_deterministic_algorithms on or off.

No op schema in src/ is flagged nondeterministic: every CPU kernel has a fixed
reduction order (scatter-add, index_add, index_put with accumulate and the
backward passes of embedding, gathers and pooling included), so
use_deterministic_algorithms(True) refuses nothing; the guard itself is tested
in C (tests/c/test_autograd.c: autograd_determinism_guard, which flags `add`).
Here, the ops PyTorch reports as nondeterministic on some device run under
the flag and give the same bits on every run and for every thread count."""
import importlib.util
import os

import numpy as np
import pytest

import cgrad
import cgrad.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"


def _load_demo():
    """The demo script, loaded from its file: importing cgrad.examples would add
    a package attribute that the stub check (test_stubs.py) then expects."""
    path = os.path.join(os.path.dirname(cgrad.__file__), "examples", "fashion_mnist.py")
    spec = importlib.util.spec_from_file_location("_fashion_mnist_demo", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DEMO = _load_demo()
build_model = DEMO.build_model


@pytest.fixture
def threads():
    """Restores the thread count and the determinism flag the test changes."""
    n = cgrad.get_num_threads()
    yield
    cgrad.set_num_threads(n)
    cgrad.use_deterministic_algorithms(False)


def random_batches(steps, batch):
    g = cgrad.Generator().manual_seed(7)
    return [((cgrad.randn(batch, 1, 28, 28, generator=g)), cgrad.randint(0, 10, (batch,), generator=g))
            for _ in range(steps)]


def real_batches(steps, batch):
    from cgrad.datasets import FashionMNIST
    ds = FashionMNIST(root=DATA, train=True)
    images = ((ds.data[: steps * batch].to(cgrad.float32) / 255.0 - DEMO.PIXEL_MEAN) / DEMO.PIXEL_STD).unsqueeze(1)
    labels = ds.targets[: steps * batch]
    return [(images[i * batch:(i + 1) * batch], labels[i * batch:(i + 1) * batch]) for i in range(steps)]


def train_demo(batches, nthreads, deterministic=False, before_last=None):
    """The demo's model and optimizer (AdamW, dropout on) trained on the batches;
    its state afterwards (and before the last step into `before_last`)."""
    cgrad.set_num_threads(nthreads)
    cgrad.use_deterministic_algorithms(deterministic)
    cgrad.manual_seed(0)  # initial weights and dropout masks
    model = build_model(cgrad.nn)
    opt = cgrad.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    for i, (x, y) in enumerate(batches):
        if before_last is not None and i == len(batches) - 1:
            before_last.update({k: v.clone() for k, v in model.state_dict().items()})
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {k: v.clone() for k, v in model.state_dict().items()}


def assert_same_bits(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and cgrad.equal(a[k], b[k]), f"{k} differs"


@pytest.mark.parametrize("nthreads,steps", [(1, 100), (2, 20)])  # OpenMP barriers are slow on a loaded machine
def test_demo_training_is_bitwise_reproducible(threads, nthreads, steps):
    batches = random_batches(steps, 8)
    before_last = {}
    first = train_demo(batches, nthreads, before_last=before_last)
    # the second run under use_deterministic_algorithms(True), which refuses nothing and changes nothing
    assert_same_bits(first, train_demo(batches, nthreads, deterministic=True))
    assert not cgrad.equal(first["0.weight"], before_last["0.weight"])  # one step apart: the comparison can fail


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir(DATA), reason="dataset-fashion-mnist is not installed")
def test_demo_training_on_real_data_is_bitwise_reproducible(threads):
    """Batch 64, 100 steps of the real training set, twice, with the default thread count."""
    batches = real_batches(100, 64)
    nthreads = cgrad.get_num_threads()
    assert_same_bits(train_demo(batches, nthreads), train_demo(batches, nthreads))


def nondeterministic_elsewhere():
    """Ops PyTorch flags as nondeterministic (on CUDA): forward and backward results."""
    g = cgrad.Generator().manual_seed(3)
    x = cgrad.randn(300, 257, generator=g, dtype=cgrad.float32, requires_grad=True)
    idx = cgrad.randint(0, 300, (5000,), generator=g)  # many duplicates
    src = cgrad.randn(5000, 257, generator=g)
    emb = cgrad.randn(300, 64, generator=g, requires_grad=True)
    img = cgrad.randn(4, 3, 33, 33, generator=g, requires_grad=True)
    out = {
        "index_add": x.detach().index_add(0, idx, src),
        "scatter_add": x.detach().scatter_add(0, idx.unsqueeze(1).expand(5000, 257), src),
        "index_put_accumulate": x.detach().index_put((idx,), src, accumulate=True),
        "cumsum": x.detach().cumsum(0),
    }
    loss = (x[idx] * src).sum() + F.embedding(idx, emb).pow(2).sum() + x.gather(0, idx[:300, None].expand(300, 257)).sum()
    loss = loss + F.max_pool2d(img, 3, 2).sum() + F.avg_pool2d(img, 2).pow(2).sum()
    loss = loss + F.interpolate(img, scale_factor=1.7, mode="bilinear").pow(2).sum()
    loss = loss + F.nll_loss(F.log_softmax(img, 1), cgrad.randint(0, 3, (4, 33, 33), generator=g))
    loss.backward()
    out.update(x_grad=x.grad, emb_grad=emb.grad, img_grad=img.grad, loss=loss.detach())
    return out


def test_ops_nondeterministic_elsewhere_give_the_same_bits(threads):
    cgrad.use_deterministic_algorithms(True)
    cgrad.set_num_threads(1)
    ref = nondeterministic_elsewhere()
    for n in (1, 2, 3):
        cgrad.set_num_threads(n)
        got = nondeterministic_elsewhere()
        for k in ref:
            assert np.array_equal(ref[k].numpy(), got[k].numpy()), f"{k} differs with {n} threads"


# The alert every op declared nondeterministic runs (cg_alert_nondeterministic;
# _C._alert_not_deterministic reaches it from Python, as torch's
# torch._C._alert_not_deterministic does). No schema in src/ is declared (see
# the module docstring), so the alert is driven directly here; the schema path
# (a copy of `add` declared nondeterministic) is tested in
# tests/c/test_autograd.c: autograd_determinism_guard.

def test_alert_is_silent_without_the_flag(threads):
    import warnings
    cgrad.use_deterministic_algorithms(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cgrad._C._alert_not_deterministic("my_scatter")


def test_alert_raises_naming_the_op_under_the_flag(threads):
    cgrad.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match=r"my_scatter.*does not have a deterministic implementation"):
        cgrad._C._alert_not_deterministic("my_scatter")


def test_alert_warns_under_warn_only(threads):
    cgrad.use_deterministic_algorithms(True, warn_only=True)
    assert cgrad.is_deterministic_algorithms_warn_only_enabled()
    with pytest.warns(UserWarning, match=r"my_scatter.*warn_only=True"):
        cgrad._C._alert_not_deterministic("my_scatter")


def test_alert_under_warnings_as_errors_raises(threads):
    import warnings
    cgrad.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeError, match="my_scatter"):
            cgrad._C._alert_not_deterministic("my_scatter")

