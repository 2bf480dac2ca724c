"""cgrad.profiler: the events recorded for a small MLP match the ops it runs
(forward calls and the autograd graph's nodes), the Chrome trace is valid JSON
with one complete event per call, record_function ranges nest, FLOPs and bytes
allocated are those of the shapes, and nothing is recorded outside a session;
the ops outside the drivers (views, indexing, factories, copies, nn ops) are
recorded under torch's names, forward + backward FLOPs equal the analytic
count, schedules act as torch's, with_stack / with_modules add call sites and
module ranges."""
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
        names[type(n).__name__] += 1  # the class name: name() qualifies AccumulateGrad as PyTorch does
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
    with pytest.raises(NotImplementedError, match="tensorboard_trace_handler"):
        cgrad.profiler.tensorboard_trace_handler("logdir")
    with pytest.raises(TypeError, match="schedule must be callable"):
        profile(schedule=3)
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


# ----------------------------------------------------------------- ops outside the drivers

def _top_names(events, strip=""):
    return [e.name.replace(strip, "") for e in events if e.cpu_parent is None]


def _inputs(L):
    x = L.ones(4, 6)
    return {"x": x, "idx": L.tensor([0, 2]), "v": L.ones(2, 6), "gi": L.zeros(4, 2, dtype=L.int64), "m": x > 0,
            "img": L.ones(1, 2, 4, 4), "tgt": L.tensor([0, 1, 2, 3])}


# one call each; torch records the same top-level op names (aten:: stripped)
_PARITY = {
    "factories": lambda L, F, d: (L.zeros(3, 4), L.ones(2), L.full((2, 2), 3.0), L.empty(5), L.arange(6),
                                  L.linspace(0, 1, 5), L.eye(3), L.rand(3), L.randn(2, 2), L.randint(0, 5, (3,)),
                                  L.randperm(5)),
    "views": lambda L, F, d: (d["x"].view(6, 4), d["x"].reshape(3, 8), d["x"].permute(1, 0), d["x"].transpose(0, 1),
                              d["x"].t(), d["x"].unsqueeze(0).squeeze(0), d["x"].flatten(), d["x"].narrow(1, 0, 2),
                              d["x"].diagonal(), d["x"].unfold(1, 2, 2), d["x"].detach()),
    "indexing": lambda L, F, d: (d["x"][1], d["x"][d["idx"]], d["x"].index_select(0, d["idx"]),
                                 d["x"].gather(1, d["gi"]), d["x"].scatter(1, d["gi"], d["x"]),
                                 d["x"].masked_fill(d["m"], 0.0), d["x"].masked_select(d["m"]), d["m"].nonzero(),
                                 L.where(d["m"], d["x"], d["x"])),
    "copies": lambda L, F, d: (d["x"].t().contiguous(), d["x"].clone().index_put_((d["idx"],), d["v"]),
                               d["x"].clone().fill_(2.0).zero_().copy_(d["x"]), d["idx"].float(),
                               d["x"].clone().normal_()),
    "shape_ops": lambda L, F, d: (d["x"].flip(0), d["x"].roll(1, 0), d["x"].repeat(2, 1), d["x"].tril(),
                                  d["x"].cumsum(0), L.cat([d["x"], d["x"]]), L.stack([d["x"], d["x"]])),
    "nn": lambda L, F, d: (F.one_hot(d["idx"], 4), F.embedding(d["idx"], d["x"]), F.layer_norm(d["x"], (6,)),
                           F.dropout(d["x"], 0.5), F.pad(d["x"], (1, 1)), F.max_pool2d(d["img"], 2),
                           F.batch_norm(d["img"], None, None, training=True), F.cross_entropy(d["x"], d["tgt"]),
                           F.scaled_dot_product_attention(d["img"], d["img"], d["img"]),
                           L.einsum("ij,kj->ik", d["x"], d["x"])),
}


@pytest.mark.parametrize("case", sorted(_PARITY))
def test_ops_outside_the_drivers_are_recorded_as_torch_records_them(case):
    torch = pytest.importorskip("torch")
    from torch.autograd.profiler import profile as torch_profile  # the legacy profiler: no Kineto start-up
    d = _inputs(torch)
    with torch_profile(use_kineto=False) as tp:
        _PARITY[case](torch, torch.nn.functional, d)
    d = _inputs(cgrad)
    with profile() as p:
        _PARITY[case](cgrad, cgrad.nn.functional, d)
    assert _top_names(p.events()) == _top_names(tp.function_events, "aten::")


def _model_forward(L, F, p):
    x = L.zeros(2, 3, 4) + p["b"]
    h = x.reshape(2, 12)[p["idx"]]
    h = F.relu(F.linear(h, p["w"], p["bias"]))
    h = h.view(-1).unsqueeze(0).t()
    e = L.ones(h.shape[0], 1)
    return ((h - e) * (h - e)).sum()


def test_small_model_with_views_indexing_and_factories_records_each_call_as_torch():
    torch = pytest.importorskip("torch")
    from torch.autograd.profiler import profile as torch_profile
    g = torch.Generator().manual_seed(0)
    raw = {"b": torch.randn(4, generator=g), "w": torch.randn(5, 12, generator=g), "bias": torch.randn(5, generator=g)}
    counts, losses = [], []
    for L, prof in ((torch, lambda: torch_profile(use_kineto=False)), (cgrad, profile)):
        p = {k: L.tensor(v.tolist(), requires_grad=True) for k, v in raw.items()}
        p["idx"] = L.tensor([1, 0, 1])
        with prof() as pr:
            loss = _model_forward(L, L.nn.functional, p)
        ev = pr.function_events if L is torch else pr.events()
        counts.append(collections.Counter(e.name.replace("aten::", "") for e in ev if e.cpu_parent is None))
        losses.append(float(loss.detach()))
    assert counts[1] == counts[0]
    assert counts[1] == {"zeros": 1, "add": 1, "reshape": 1, "index": 1, "linear": 1, "relu": 1, "view": 1,
                         "unsqueeze": 1, "t": 1, "ones": 1, "sub": 2, "mul": 1, "sum": 1}
    assert losses[1] == pytest.approx(losses[0], rel=1e-5)


# ----------------------------------------------------------------- FLOPs of forward + backward

def _total_flops(fn):
    with profile(with_flops=True) as prof:
        fn()
    return sum(e.flops for e in prof.events())


def test_flops_of_forward_and_backward_match_the_analytic_count():
    g = cgrad.Generator().manual_seed(0)
    # MLP 8 -> 16 -> 4, batch 5; x needs no gradient, so the first layer has no input-gradient GEMM
    x = cgrad.randn(5, 8, generator=g)
    w1, b1 = cgrad.randn(16, 8, generator=g, requires_grad=True), cgrad.randn(16, generator=g, requires_grad=True)
    w2, b2 = cgrad.randn(4, 16, generator=g, requires_grad=True), cgrad.randn(4, generator=g, requires_grad=True)
    f1, f2 = 2 * 5 * 8 * 16, 2 * 5 * 16 * 4
    assert _total_flops(lambda: F.linear(F.relu(F.linear(x, w1, b1)), w2, b2).sum().backward()) == 2 * f1 + 3 * f2
    assert _total_flops(lambda: (F.relu(x @ w1.t()) @ w2.t()).sum().backward()) == 2 * f1 + 3 * f2
    # conv net: conv 3->4 (3x3, pad 1), conv 4->6 (3x3, stride 2, pad 1), linear 96 -> 5, input 2x3x8x8
    img = cgrad.randn(2, 3, 8, 8, generator=g)
    c1 = cgrad.randn(4, 3, 3, 3, generator=g, requires_grad=True)
    c2 = cgrad.randn(6, 4, 3, 3, generator=g, requires_grad=True)
    cb = cgrad.randn(6, generator=g, requires_grad=True)
    wl = cgrad.randn(5, 96, generator=g, requires_grad=True)
    fc1 = 2 * (2 * 4 * 8 * 8) * (3 * 3 * 3)
    fc2 = 2 * (2 * 6 * 4 * 4) * (4 * 3 * 3)
    fl = 2 * 2 * 96 * 5

    def net():
        h = F.relu(F.conv2d(img, c1, padding=1))
        h = F.conv2d(h, c2, cb, stride=2, padding=1)
        F.linear(h.flatten(1), wl).sum().backward()
    # forward once each; backward: weight grad for every layer, input grad for all but the first
    assert _total_flops(net) == 2 * fc1 + 3 * fc2 + 3 * fl
    with profile(with_flops=True) as prof:
        net()
    wgrad = [e for e in prof.events() if e.name == "conv_weight_grad"]
    assert sorted(e.flops for e in wgrad) == [fc2, fc1]


# ----------------------------------------------------------------- schedule

_SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=0, warmup=0, active=1),
              dict(wait=2, warmup=1, active=3, repeat=2),
              dict(wait=1, warmup=2, active=1, repeat=1, skip_first=3),
              dict(wait=3, warmup=1, active=2, repeat=2, skip_first=2, skip_first_wait=1)]


@pytest.mark.parametrize("kw", _SCHEDULES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_schedule_matches_torch(kw):
    torch = pytest.importorskip("torch")
    import warnings
    from cgrad.profiler import schedule
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns about warmup=0
        ref = torch.profiler.schedule(**kw)
    ours = schedule(**kw)
    assert [ours(i).name for i in range(40)] == [ref(i).name for i in range(40)]


def test_schedule_rejects_bad_arguments():
    from cgrad.profiler import schedule
    with pytest.raises(ValueError, match="active"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.raises(ValueError, match="step"):
        schedule(wait=0, warmup=0, active=1)(-1)


def test_profile_with_schedule_hands_each_active_window_to_on_trace_ready(tmp_path):
    from cgrad.profiler import schedule
    x = cgrad.ones(3)
    windows = []

    def ready(p):
        trace = tmp_path / f"w{p.step_num}.json"
        p.export_chrome_trace(str(trace))
        ranges = [e for e in p.events() if e.kind == "range"]
        windows.append((p.step_num, [r.name for r in ranges], [[c.name for c in r.cpu_children] for r in ranges],
                        len(json.loads(trace.read_text())["traceEvents"]), p.key_averages()))

    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready) as prof:
        for step in range(10):
            x.view(3, 1).sum()  # two ops per step
            prof.step()
    # steps 0 wait, 1 warmup, 2-3 active, 4 wait, 5 warmup, 6-7 active, 8-9 past the repeats
    assert [w[0] for w in windows] == [4, 8]
    assert [w[1] for w in windows] == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]
    assert all(w[2] == [["view", "sum"], ["view", "sum"]] for w in windows)
    assert all(w[3] == 6 for w in windows)  # 2 step ranges + 4 ops
    assert {a.key: a.count for a in windows[0][4]} == {"ProfilerStep#2": 1, "view": 2, "sum": 2, "ProfilerStep#3": 1}
    assert not cgrad._C._profiler_enabled()
    # without a schedule, the whole block is one window, handed over at its end
    seen = []
    with profile(on_trace_ready=lambda p: seen.append([e.name for e in p.events()])):
        x * 2
    assert seen == [["mul"]]


# ----------------------------------------------------------------- with_stack / with_modules

def test_with_stack_records_the_python_call_site():
    import inspect
    x = cgrad.ones(4, 6)
    lin = cgrad.nn.Linear(6, 2)
    with profile(with_stack=True) as prof:
        line_view = inspect.currentframe().f_lineno + 1
        x.view(6, 4)
        line_lin = inspect.currentframe().f_lineno + 1
        lin(x)  # ops inside cgrad's own code report the user's line
    ev = {e.name: e for e in prof.events()}
    here = __file__
    assert ev["view"].stack == [f"{here}({line_view}): test_with_stack_records_the_python_call_site"]
    assert ev["linear"].stack == [f"{here}({line_lin}): test_with_stack_records_the_python_call_site"]
    assert all(c.stack == ev["linear"].stack for c in ev["linear"].cpu_children)
    t = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in t
    with profile() as plain:
        x.view(6, 4)
    assert plain.events()[0].stack == []


def test_with_modules_records_module_ranges():
    model = cgrad.nn.Sequential(cgrad.nn.Linear(6, 3), cgrad.nn.ReLU(), cgrad.nn.Linear(3, 2))
    x = cgrad.ones(4, 6)
    with profile(with_modules=True) as prof:
        model(x)
    ev = prof.events()
    top = [e for e in ev if e.cpu_parent is None]
    assert [e.name for e in top] == ["nn.Module: Sequential"]
    assert [c.name for c in top[0].cpu_children] == ["nn.Module: Linear", "nn.Module: ReLU", "nn.Module: Linear"]
    assert [[g.name for g in c.cpu_children] for c in top[0].cpu_children] == [["linear"], ["relu"], ["linear"]]
    with profile() as prof:
        model(x)
    assert [e.name for e in prof.events() if e.cpu_parent is None] == ["linear", "relu", "linear"]
