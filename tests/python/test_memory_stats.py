"""cgrad.memory: the allocator statistics move as tensors are allocated and
freed (byte counts in the allocator's size classes: 4 MiB is one exact class)."""
import gc

import pytest

import cgrad
from cgrad import memory

MIB4 = 4 << 20


@pytest.fixture(autouse=True)
def no_gc():
    """Garbage left by earlier tests must not be freed between two readings."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def test_allocation_and_free_move_the_counters():
    before = memory.stats()
    x = cgrad.empty(1 << 20)  # float32: exactly 4 MiB
    during = memory.stats()
    assert memory.memory_allocated() - before["allocated_bytes.all.current"] == MIB4
    assert during["allocation.all.current"] == before["allocation.all.current"] + 1
    assert during["allocated_bytes.all.allocated"] - before["allocated_bytes.all.allocated"] == MIB4
    assert memory.max_memory_allocated() >= before["allocated_bytes.all.current"] + MIB4
    del x
    after = memory.stats()
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
    assert after["allocation.all.current"] == before["allocation.all.current"]
    assert after["allocated_bytes.all.freed"] - before["allocated_bytes.all.freed"] == MIB4
    # the freed block stays cached for reuse: reserved = in use + cached
    assert after["reserved_bytes.all.current"] == after["allocated_bytes.all.current"] + after["cached_bytes.all.current"]
    assert after["cached_bytes.all.current"] >= MIB4


def test_peak_and_reset():
    memory.reset_peak_memory_stats()
    base = memory.memory_allocated()
    assert memory.max_memory_allocated() == base
    y = cgrad.empty(2 << 20)  # 8 MiB
    del y
    assert memory.max_memory_allocated() >= base + 2 * MIB4
    assert memory.stats()["allocation.all.peak"] >= memory.stats()["allocation.all.current"] + 1
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == memory.memory_allocated()
    assert memory.stats()["allocation.all.peak"] == memory.stats()["allocation.all.current"]


def test_an_op_result_is_counted_and_views_are_free():
    a = cgrad.ones(1 << 20)
    before = memory.memory_allocated()
    v = a.view(1024, 1024)  # a view shares storage
    assert memory.memory_allocated() == before
    b = a * 2.0
    assert memory.memory_allocated() == before + MIB4
    del v, b


def test_empty_cache_and_devices():
    x = cgrad.empty(1 << 20)
    del x
    memory.empty_cache()
    s = memory.stats()
    assert s["cached_bytes.all.current"] == 0 and s["reserved_bytes.all.current"] == s["allocated_bytes.all.current"]
    assert memory.memory_allocated("cpu") == s["allocated_bytes.all.current"]
    if not cgrad.cuda.is_available():  # each cuda device has its own pool; none usable: zeros
        assert memory.memory_allocated("cuda") == 0 and memory.stats("cuda:1")["reserved_bytes.all.current"] == 0
    with pytest.raises(NotImplementedError, match="meta"):
        memory.memory_allocated("meta")
