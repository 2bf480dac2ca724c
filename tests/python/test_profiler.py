"""cgrad.profiler: the events recorded for a small MLP match the ops it runs
(forward calls and the autograd graph's nodes), the Chrome trace is valid JSON
with one complete event per call, record_function ranges nest, FLOPs and bytes
allocated are those of the shapes, and nothing is recorded outside a session."""
import collections
import json

import pytest

import cgrad
import cgrad.nn.functional as F
from cgrad.profiler import ProfilerActivity, profile, record_function


def graph_nodes(t):
    """Multiset of the autograd node names reachable from t (each node once)."""
    seen, names, stack = set(), collections.Counter(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:  # node objects compare and hash by the engine node
            continue
        seen.add(n)
        names[n.name()] += 1
        stack.extend(f for f, _ in n.next_functions)
    return names


def mlp_step():
    g = cgrad.Generator().manual_seed(0)
    w1 = cgrad.randn(16, 8, generator=g, requires_grad=True)
    b1 = cgrad.randn(16, generator=g, requires_grad=True)
    w2 = cgrad.randn(4, 16, generator=g, requires_grad=True)
    b2 = cgrad.randn(4, generator=g, requires_grad=True)
    x, target = cgrad.randn(5, 8, generator=g), cgrad.randn(5, 4, generator=g)
    return w1, b1, w2, b2, x, target


def test_mlp_forward_and_backward_events_match_the_ops_called():
    w1, b1, w2, b2, x, target = mlp_step()
    with profile(record_shapes=True) as prof:
        h = F.relu(F.linear(x, w1, b1))
        y = F.linear(h, w2, b2)
        loss = ((y - target) * (y - target)).sum()
        nodes = graph_nodes(loss)
        loss.backward()
    ev = prof.events()
    top = collections.Counter(e.name for e in ev if e.cpu_parent is None and e.kind == "op")
    # the forward's calls, the seed gradient (torch records aten::ones_like too), and the add with which
    # the engine sums the two gradients reaching y
    assert top == {"linear": 2, "relu": 1, "sub": 2, "mul": 1, "sum": 1, "ones_like": 1, "add": 1}
    backward = collections.Counter(e.name for e in ev if e.kind == "backward")
    assert backward == nodes  # each node of the graph ran once, AccumulateGrad of the 4 leaves included
    assert nodes["AccumulateGrad"] == 4
    # the ops of the backward formulas nest in their nodes: mm for grad input and weight of the
    # second linear, only for the weight of the first (x needs no gradient); the views an op or
    # formula makes nest in it (as torch's aten::t > aten::transpose)
    assert all(e.cpu_parent is None or e.cpu_parent.kind in ("backward", "op") for e in ev)
    inner = collections.Counter((e.cpu_parent.name, e.name) for e in ev if e.cpu_parent is not None)
    assert inner[("LinearBackward0", "mm")] == 3 and inner[("LinearBackward0", "sum")] == 2
    assert inner[("MulBackward0", "mul")] == 2
    lin = [e for e in ev if e.name == "linear"]
    assert lin[0].input_shapes == [[5, 8], [16, 8], [16]] and lin[0].input_dtypes == ["float32"] * 3
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["linear"].count == 2 and avg["relu"].count == 1
    assert avg["linear"].cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in lin))
    for e in ev:
        assert e.end_us >= e.start_us and e.self_cpu_time_total <= e.cpu_time_total + 1e-9


def test_chrome_trace_is_valid_json_with_one_event_per_call(tmp_path):
    w1, b1, w2, b2, x, target = mlp_step()
    with profile(record_shapes=True) as prof:
        with record_function("forward"):
            loss = F.linear(F.relu(F.linear(x, w1, b1)), w2, b2).sum()
        loss.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert len(events) == len(prof.events())
    assert [e["name"] for e in events] == [e.name for e in prof.events()]
    for e in events:
        assert e["ph"] == "X" and e["dur"] >= 0 and isinstance(e["ts"], float)
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
    lin = [e for e in events if e["name"] == "linear"]
    assert lin[0]["args"]["Input Dims"] == [[5, 8], [16, 8], [16]] and lin[0]["cat"] == "cpu_op"
    fwd = next(e for e in events if e["name"] == "forward")
    assert fwd["cat"] == "user_annotation"
    for e in lin:  # the ranges contain their children in time
        assert fwd["ts"] <= e["ts"] and e["ts"] + e["dur"] <= fwd["ts"] + fwd["dur"] + 1e-3


def test_record_function_nests_as_context_manager_and_decorator():
    a, b = cgrad.ones(4), cgrad.ones(4)

    @record_function("helper")
    def helper(u):
        return (u * 2).exp()

    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                c = a + b
            d = helper(c)
        e = d.sum()
    ev = prof.events()
    by = {x.name: x for x in ev}
    assert [x.name for x in by["outer"].cpu_children] == ["inner", "helper"]
    assert [x.name for x in by["inner"].cpu_children] == ["add"]
    assert [x.name for x in by["helper"].cpu_children] == ["mul", "exp"]
    assert by["sum"].cpu_parent is None and by["outer"].cpu_parent is None
    assert float(e) == pytest.approx(4 * float(cgrad.tensor(4.0).exp()), rel=1e-6)
    avg = {x.key: x for x in prof.key_averages()}
    assert avg["outer"].self_cpu_time_total <= avg["outer"].cpu_time_total


def test_nothing_is_recorded_outside_a_session():
    a = cgrad.ones(8)
    with record_function("idle"):  # no session: a no-op
        a + a
    with profile() as prof:
        pass
    assert len(prof.events()) == 0
    with profile() as prof:
        a * a
    (a + a).exp()  # after the block
    assert [e.name for e in prof.events()] == ["mul"]
    assert not cgrad._C._profiler_enabled()


def test_flops_and_memory():
    a, b = cgrad.randn(6, 7), cgrad.randn(7, 9)
    x, w = cgrad.randn(2, 3, 10, 10), cgrad.randn(5, 3, 3, 3)
    with profile(with_flops=True, profile_memory=True) as prof:
        a @ b  # 2-d: mm
        cgrad.matmul(cgrad.randn(2, 6, 7), b)  # folded into one mm of 12 rows
        F.conv2d(x, w, padding=1)
        cgrad.ones(1000) + 1.0
    mm = [e for e in prof.events() if e.name == "mm"]
    assert [e.flops for e in mm] == [2 * 6 * 7 * 9, 2 * 12 * 7 * 9]
    ev = {e.name: e for e in prof.events()}
    assert ev["convolution"].flops == 2 * (2 * 5 * 10 * 10) * (3 * 3 * 3)
    assert ev["add"].flops == 0 and ev["add"].cpu_memory_usage == 4096  # 4000 bytes in a 4 KiB class
    assert mm[0].cpu_memory_usage >= 6 * 9 * 4
    table = prof.key_averages().table(sort_by="flops")
    assert "Total MFLOPs" in table and "CPU Mem" in table and "Self CPU Mem" in table


def test_table_and_grouping():
    xs = [cgrad.ones(n) for n in (3, 3, 5)]
    with profile(record_shapes=True) as prof:
        for x in xs:
            x * 2.0
    t = prof.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"):
        assert col in t
    assert "Self CPU time total:" in t
    rows = [line.split() for line in t.splitlines() if line.strip().startswith("mul ")]
    assert len(rows) == 1 and rows[0][-1] == "3"
    shaped = prof.key_averages(group_by_input_shape=True)
    assert sorted((e.key, str(e.input_shapes), e.count) for e in shaped) == [
        ("mul", "[[3], []]", 2), ("mul", "[[5], []]", 1)]
    assert "Input Shapes" in shaped.table()
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="gpu_time")


def test_arguments():
    with pytest.raises(NotImplementedError, match="use_cuda"):
        profile(use_cuda=True)
    with pytest.raises(NotImplementedError, match="CUDA"):
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with pytest.raises(TypeError, match="bogus"):
        profile(bogus=1)
    with profile(activities=[ProfilerActivity.CPU]):
        with pytest.raises(RuntimeError, match="already running"):
            with profile():
                pass
    p = profile()
    with pytest.raises(RuntimeError, match="no results"):
        p.events()
    with profile(enabled=False) as off:
        cgrad.ones(2) + 1
    assert len(off.events()) == 0
