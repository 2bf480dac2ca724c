"""cgrad.nn's foundation against torch.nn: Parameter / Buffer, the Module API
(registration, naming order, state_dict / load_state_dict, hooks, repr,
train / eval, dtype moves), the containers, and the linear layers (outputs and
every gradient with torch's weights copied in)."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import cgrad
import cgrad.nn as nn
import cgrad.nn.functional as F
from nn_compare import compare_module, copy_state, to_numpy


# ---------------------------------------------------------------- a model built the same way in both libraries

class _Block:
    @staticmethod
    def make(lib):
        class Block(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(4, 3)
                self.scale = lib.nn.Parameter(lib.ones(3))
                self.register_buffer("running", lib.zeros(3))
                self.register_buffer("tmp", lib.ones(2), persistent=False)
                self.act = lib.nn.Identity()

            def forward(self, x):
                return self.act(self.fc(x)) * self.scale + self.running

        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = lib.nn.Linear(5, 4, bias=False)
                self.blocks = lib.nn.ModuleList([Block(), Block()])
                self.head = lib.nn.Sequential(OrderedDict(flat=lib.nn.Flatten(), out=lib.nn.Linear(3, 2)))
                self.shared = self.head.out  # the same module twice: deduplicated

            def forward(self, x):
                x = self.inp(x)
                for b in self.blocks:
                    x = b(x) if x.shape[-1] == 4 else x
                return self.head(x)

        return Net()


def test_names_and_state_dict_keys_match_torch():
    t, c = _Block.make(torch), _Block.make(cgrad)
    assert [n for n, _ in c.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in c.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in c.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in c.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in c.named_modules(remove_duplicate=False)] == \
        [n for n, _ in t.named_modules(remove_duplicate=False)]
    assert [n for n, _ in c.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in c.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in t.named_parameters(prefix="m", recurse=False)]
    assert [n for n, _ in c.blocks[0].named_parameters(prefix="p")] == \
        [n for n, _ in t.blocks[0].named_parameters(prefix="p")]
    sd_t, sd_c = t.state_dict(), c.state_dict()
    assert isinstance(sd_c, OrderedDict)
    assert list(sd_c) == list(sd_t)
    assert list(c.state_dict(prefix="model.")) == list(t.state_dict(prefix="model."))
    assert type(sd_c["inp.weight"]) is cgrad.Tensor and not sd_c["inp.weight"].requires_grad
    assert isinstance(c.state_dict(keep_vars=True)["inp.weight"], nn.Parameter)
    assert len(list(c.parameters())) == len(list(t.parameters()))
    assert len(list(c.modules())) == len(list(t.modules()))
    assert len(list(c.buffers())) == len(list(t.buffers()))


def test_repr_equals_torch():
    t, c = _Block.make(torch), _Block.make(cgrad)
    assert repr(c) == repr(t)
    for make in [lambda lib: lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)] + [lib.nn.Identity()]),
                 lambda lib: lib.nn.ModuleDict({"a": lib.nn.Linear(2, 3, bias=False), "b": lib.nn.Flatten(0, 1)}),
                 lambda lib: lib.nn.Sequential(),
                 lambda lib: lib.nn.Bilinear(2, 3, 4), lambda lib: lib.nn.Unflatten(1, (2, 3)),
                 lambda lib: lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2, 3)), lib.ones(4)]),
                 lambda lib: lib.nn.ParameterDict({"w": lib.nn.Parameter(lib.ones(2)), "v": lib.zeros(3, 1)})]:
        assert repr(make(cgrad)) == repr(make(torch)).replace("torch.", "cgrad.")


def test_parameter_and_buffer():
    d = cgrad.randn(2, 3)
    p = nn.Parameter(d)
    assert isinstance(p, nn.Parameter) and isinstance(p, cgrad.Tensor) and p.requires_grad and p.is_leaf
    with cgrad.no_grad():
        d.add_(1.0)
    assert np.allclose(to_numpy(p), to_numpy(d))  # shares data
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert repr(p).endswith("requires_grad=True)")
    y = p * 2
    assert type(y) is cgrad.Tensor
    assert not nn.Parameter(cgrad.ones(2), requires_grad=False).requires_grad
    assert tuple(nn.Parameter().shape) == (0,)
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and np.allclose(to_numpy(q), to_numpy(p))
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.requires_grad and np.allclose(to_numpy(r), to_numpy(p))
    b = nn.Buffer(cgrad.ones(3), persistent=False)
    assert isinstance(b, nn.Buffer) and not isinstance(cgrad.ones(3), nn.Buffer) and b.persistent is False
    m = nn.Module()
    m.buf = b
    m.buf2 = nn.Buffer(cgrad.zeros(2))
    assert list(m.state_dict()) == ["buf2"] and [n for n, _ in m.named_buffers()] == ["buf", "buf2"]
    m.buf2 = cgrad.ones(2)  # assigning a plain tensor to a buffer name keeps it a buffer
    assert "buf2" in m._buffers and np.allclose(to_numpy(m.buf2), 1)


def test_setattr_routing_and_errors():
    m = nn.Module()
    m.w = nn.Parameter(cgrad.ones(2))
    assert "w" in m._parameters and "w" not in m.__dict__
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as parameter 'w'"):
        m.w = cgrad.ones(2)
    m.w = None
    assert m._parameters["w"] is None and m.w is None
    m.sub = nn.Linear(2, 2)
    assert "sub" in m._modules
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__
    del m.sub
    assert "sub" not in m._modules
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'sub'"):
        m.sub
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        m.register_parameter("plain", None)
    with pytest.raises(KeyError, match="contain"):
        m.register_buffer("a.b", None)
    with pytest.raises(TypeError, match="is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Bad(nn.Module):
            def __init__(self):
                self.p = nn.Parameter(cgrad.ones(1))
        Bad()
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)
    assert "w" in dir(m)


def test_submodule_access():
    t, c = _Block.make(torch), _Block.make(cgrad)
    assert c.get_submodule("blocks.1.fc") is c.blocks[1].fc
    assert c.get_parameter("blocks.0.fc.weight") is c.blocks[0].fc.weight
    assert c.get_buffer("blocks.0.running") is c.blocks[0].running
    for target, err in [("blocks.5", AttributeError), ("inp.weight", AttributeError)]:
        with pytest.raises(err) as ec:
            c.get_submodule(target)
        with pytest.raises(err) as et:
            t.get_submodule(target)
        assert str(ec.value) == str(et.value)
    with pytest.raises(AttributeError, match="`fc` is not an nn.Parameter"):
        c.get_parameter("blocks.0.fc")
    c.set_submodule("head.out", nn.Linear(3, 5))
    assert c.head.out.out_features == 5


def test_load_state_dict_results_and_errors():
    t, c = _Block.make(torch), _Block.make(cgrad)
    copy_state(t, c)
    for (name, a), (_, b) in zip(t.state_dict().items(), c.state_dict().items()):
        assert np.allclose(to_numpy(a), to_numpy(b)), name
    sd = c.state_dict()
    res = c.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == [] and repr(res) == "<All keys matched successfully>"
    tsd = t.state_dict()
    partial_c = {k: v for k, v in sd.items() if not k.startswith("head")}
    partial_c["extra.weight"] = cgrad.ones(1)
    partial_t = {k: v for k, v in tsd.items() if not k.startswith("head")}
    partial_t["extra.weight"] = torch.ones(1)
    rc, rt = c.load_state_dict(partial_c, strict=False), t.load_state_dict(partial_t, strict=False)
    assert rc.missing_keys == rt.missing_keys and rc.unexpected_keys == rt.unexpected_keys
    assert rc._fields == ("missing_keys", "unexpected_keys") and repr(rc) == repr(rt)
    with pytest.raises(RuntimeError) as ec:
        c.load_state_dict(partial_c)
    with pytest.raises(RuntimeError) as et:
        t.load_state_dict(partial_t)
    assert str(ec.value) == str(et.value)
    bad_c, bad_t = dict(sd), dict(tsd)
    bad_c["inp.weight"], bad_t["inp.weight"] = cgrad.ones(4, 4), torch.ones(4, 4)
    with pytest.raises(RuntimeError) as ec:
        c.load_state_dict(bad_c)
    with pytest.raises(RuntimeError) as et:
        t.load_state_dict(bad_t)
    assert str(ec.value) == str(et.value).replace("torch.Size", "cgrad.Size")
    assert "size mismatch for inp.weight" in str(ec.value)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        c.load_state_dict([1, 2])
    # assign: the module takes the given tensors, as Parameters keeping requires_grad
    new_w = cgrad.full((4, 5), 2.0)
    c.load_state_dict({**sd, "inp.weight": new_w}, assign=True)
    assert isinstance(c.inp.weight, nn.Parameter) and c.inp.weight.requires_grad
    assert np.allclose(to_numpy(c.inp.weight), 2.0)


def test_train_eval_requires_grad_zero_grad_apply():
    c = _Block.make(cgrad)
    assert c.training and c.eval() is c and not any(m.training for m in c.modules())
    c.train()
    assert all(m.training for m in c.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        c.train("yes")
    c.requires_grad_(False)
    assert not any(p.requires_grad for p in c.parameters())
    c.requires_grad_()
    out = c(cgrad.randn(2, 5))
    out.sum().backward()
    assert c.inp.weight.grad is not None and c.blocks[1].fc.weight.grad is None  # blocks[1] is skipped
    c.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in c.parameters() if p.grad is not None)
    c.zero_grad()
    assert all(p.grad is None for p in c.parameters())
    seen = []
    c.apply(lambda m: seen.append(type(m).__name__))
    tseen = []
    _Block.make(torch).apply(lambda m: tseen.append(type(m).__name__))
    assert seen == tseen


def test_to_dtype_and_casts():
    c = _Block.make(cgrad)
    c(cgrad.randn(2, 5)).sum().backward()
    w = c.inp.weight
    assert c.to(cgrad.float64) is c
    assert c.inp.weight is w and w.dtype == cgrad.float64 and w.grad.dtype == cgrad.float64
    assert c.blocks[0].running.dtype == cgrad.float64
    assert all(p.dtype == cgrad.float64 for p in c.parameters())
    c.float()
    assert all(p.dtype == cgrad.float32 for p in c.parameters())
    c.to(cgrad.ones(1, dtype=cgrad.float64))
    assert c.head.out.bias.dtype == cgrad.float64
    c.to("cpu", cgrad.float32)
    c.to(device="cpu", dtype=cgrad.float64)
    assert c.head.out.bias.dtype == cgrad.float64
    c.half()
    assert c.inp.weight.dtype == cgrad.float16
    c.double().cpu()
    assert c.inp.weight.dtype == cgrad.float64
    with pytest.raises(TypeError, match="only accepts floating point"):
        c.to(cgrad.int64)
    ib = nn.Module()
    ib.register_buffer("idx", cgrad.arange(3))
    ib.double()
    assert ib.idx.dtype == cgrad.int64  # integer buffers are not cast


# ---------------------------------------------------------------- hooks

def _hook_log(lib):
    log = []
    m = lib.nn.Linear(3, 2)
    m.register_forward_pre_hook(lambda mod, args: log.append(("pre", len(args))))
    m.register_forward_pre_hook(lambda mod, args: log.append(("pre_first",)), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: log.append(("pre_kw", sorted(kwargs))), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("fwd", tuple(out.shape))))
    m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("fwd_kw", len(args))), with_kwargs=True)
    h = m.register_forward_hook(lambda mod, args, out: log.append(("removed",)))
    h.remove()
    m(lib.ones(4, 3))
    return log


def test_forward_hooks_order_and_arguments():
    assert _hook_log(cgrad) == _hook_log(torch)
    m = nn.Linear(3, 2)
    m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    m.register_forward_hook(lambda mod, args, out: out + 1)
    out = m(cgrad.ones(1, 3))
    assert np.allclose(to_numpy(out), to_numpy(m.bias) + 1)
    m2 = nn.Identity()
    with m2.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True):
        assert float(m2(cgrad.zeros(())).item()) == 1.0
    assert not m2._has_call_hooks and float(m2(cgrad.zeros(())).item()) == 0.0
    calls = []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    b = Boom()
    b.register_forward_hook(lambda mod, args, out: calls.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        b(1)
    assert calls == [None]


def _backward_hook_run(lib, modify):
    torch.manual_seed(0)
    m = lib.nn.Linear(3, 2).double()
    with (torch.no_grad() if lib is torch else cgrad.no_grad()):
        m.weight.copy_(lib.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]], dtype=lib.float64))
        m.bias.copy_(lib.tensor([0.1, -0.2], dtype=lib.float64))
    log = []

    def pre(mod, grad_output):
        log.append(("pre", [to_numpy(g) for g in grad_output]))
        if modify:
            return (grad_output[0] * 2,)

    def post(mod, grad_input, grad_output):
        log.append(("post", [None if g is None else to_numpy(g) for g in grad_input],
                    [to_numpy(g) for g in grad_output]))
        if modify:
            return (grad_input[0] + 1,)

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(post)
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], dtype=lib.float64, requires_grad=True)
    y = m(x)
    (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
    return log, to_numpy(x.grad), to_numpy(m.weight.grad), to_numpy(m.bias.grad)


@pytest.mark.parametrize("modify", [False, True])
def test_full_backward_hooks_match_torch(modify):
    lc, xc, wc, bc = _backward_hook_run(cgrad, modify)
    lt, xt, wt, bt = _backward_hook_run(torch, modify)
    assert [e[0] for e in lc] == [e[0] for e in lt] == ["pre", "post"]
    for ec, et in zip(lc, lt):
        for gc, gt in zip(ec[1:], et[1:]):
            for a, b in zip(gc, gt):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(a, b)
    for a, b in [(xc, xt), (wc, wt), (bc, bt)]:
        np.testing.assert_allclose(a, b)


def test_backward_hook_without_input_grad():
    for lib in (cgrad, torch):
        m = lib.nn.Linear(2, 2)
        got = []
        m.register_full_backward_hook(lambda mod, gi, go: got.append((gi, len(go))))
        m(lib.ones(1, 2)).sum().backward()
        assert len(got) == 1 and got[0][0] == (None,) and got[0][1] == 1


def test_state_dict_and_load_hooks():
    m = nn.Linear(2, 2)
    seen = []
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: seen.append(("pre", prefix)))
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: seen.append(("post", list(sd))))
    m.state_dict(prefix="x.")
    assert seen == [("pre", "x."), ("post", ["x.weight", "x.bias"])]
    m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
    res = m.load_state_dict({"weight": cgrad.ones(2, 2)}, strict=True)
    assert res.missing_keys == []


def test_call_overhead_is_small():
    """Module.__call__ without hooks is a flag test and forward: well under torch's cost."""
    import timeit
    ci, ti = nn.Identity(), torch.nn.Identity()
    cx, tx = cgrad.ones(1), torch.ones(1)
    n = 20000
    tc = min(timeit.repeat(lambda: ci(cx), number=n, repeat=3)) / n
    tt = min(timeit.repeat(lambda: ti(tx), number=n, repeat=3)) / n
    assert tc < 2.0 * tt, f"cgrad {tc * 1e9:.0f} ns vs torch {tt * 1e9:.0f} ns per call"


# ---------------------------------------------------------------- containers

def test_sequential_ops():
    for lib in (cgrad, torch):
        a, b, c_, d = (lib.nn.Linear(2, 2), lib.nn.Identity(), lib.nn.Flatten(), lib.nn.Linear(2, 3))
        s = lib.nn.Sequential(a, b, c_)
        assert len(s) == 3 and s[0] is a and s[-1] is c_ and list(s) == [a, b, c_]
        assert isinstance(s[1:], lib.nn.Sequential) and list(s[1:]) == [b, c_]
        s.append(d)
        assert s[3] is d
        s.insert(1, lib.nn.Identity())
        assert [type(m).__name__ for m in s] == ["Linear", "Identity", "Identity", "Flatten", "Linear"]
        assert s.pop(1).__class__.__name__ == "Identity" and len(s) == 4
        del s[0]
        assert list(s._modules) == ["0", "1", "2"] and s[0] is b
        s.extend([lib.nn.Identity()])
        t2 = s + lib.nn.Sequential(lib.nn.Identity())
        assert len(t2) == 5
        s[0] = a
        assert s[0] is a
        with pytest.raises(IndexError):
            s[10]
    cs = nn.Sequential(nn.Linear(3, 4), nn.Flatten(0), nn.Unflatten(0, (2, 4)))
    ts = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Flatten(0), torch.nn.Unflatten(0, (2, 4)))
    copy_state(ts, cs)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype("float32")
    np.testing.assert_allclose(to_numpy(cs(cgrad.tensor(x))), to_numpy(ts(torch.tensor(x))), rtol=1e-5, atol=1e-6)


def test_modulelist_moduledict():
    for lib in (cgrad, torch):
        ml = lib.nn.ModuleList([lib.nn.Linear(1, 1) for _ in range(3)])
        ml.append(lib.nn.Identity())
        ml.insert(0, lib.nn.Flatten())
        ml += [lib.nn.Identity()]
        assert len(ml) == 6 and type(ml[0]).__name__ == "Flatten" and type(ml[-1]).__name__ == "Identity"
        assert len(ml[1:3]) == 2 and isinstance(ml[1:3], lib.nn.ModuleList)
        del ml[0]
        assert list(ml._modules) == [str(i) for i in range(5)]
        assert len(list(ml.parameters())) == 6
        ml.pop(0)
        assert len(ml) == 4
        md = lib.nn.ModuleDict({"b": lib.nn.Linear(1, 1), "a": lib.nn.Identity()})
        md["c"] = lib.nn.Flatten()
        assert list(md.keys()) == ["b", "a", "c"] and "a" in md and len(md) == 3
        md.update([("d", lib.nn.Identity())])
        assert list(md) == ["b", "a", "c", "d"]
        assert type(md.pop("a")).__name__ == "Identity" and len(md) == 3
        assert [n for n, _ in md.named_parameters()] == ["b.weight", "b.bias"]


def test_parameterlist_parameterdict():
    for lib in (cgrad, torch):
        pl = lib.nn.ParameterList([lib.ones(2), lib.nn.Parameter(lib.zeros(3))])
        pl.append(lib.ones(1))
        assert len(pl) == 3 and all(isinstance(p, lib.nn.Parameter) for p in pl)
        assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
        pd = lib.nn.ParameterDict({"b": lib.ones(1), "a": lib.ones(2)})
        pd["c"] = lib.zeros(2)
        assert list(pd.keys()) == ["a", "b", "c"]  # a plain dict is sorted, as in torch
        assert isinstance(pd["c"], lib.nn.Parameter) and "a" in pd and len(pd) == 3
        assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
        del pd["a"]
        assert list(pd) == ["b", "c"]


# ---------------------------------------------------------------- linear layers

@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (3,), (2, 5, 3), (0, 3)])
def test_linear_matches_torch(bias, shape):
    compare_module(lambda lib: lib.nn.Linear(3, 4, bias=bias), [shape])


def test_linear_float32_and_default_init():
    compare_module(lambda lib: lib.nn.Linear(6, 5), [(7, 6)], dtype="float32", atol=1e-5, rtol=1e-4)
    cgrad.manual_seed(0)
    m = nn.Linear(400, 300)
    w, b = to_numpy(m.weight), to_numpy(m.bias)
    bound = 1 / np.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert w.min() >= -bound and w.max() <= bound and abs(w.std() - bound / np.sqrt(3)) < 0.02 * bound
    assert b.min() >= -bound and b.max() <= bound and abs(b.mean()) < 0.15 * bound


def test_bilinear_matches_torch():
    compare_module(lambda lib: lib.nn.Bilinear(3, 2, 4), [(5, 3), (5, 2)])
    compare_module(lambda lib: lib.nn.Bilinear(3, 2, 4, bias=False), [(2, 5, 3), (2, 5, 2)])
    x1, x2, w, b = (np.random.default_rng(1).standard_normal(s) for s in [(4, 3), (4, 2), (5, 3, 2), (5,)])
    np.testing.assert_allclose(to_numpy(cgrad.bilinear(*[cgrad.tensor(a) for a in (x1, x2, w, b)])),
                               to_numpy(torch.bilinear(*[torch.tensor(a) for a in (x1, x2, w, b)])), rtol=1e-10)


def test_lazy_linear():
    m = nn.LazyLinear(4)
    assert isinstance(m.weight, nn.UninitializedParameter) and m.has_uninitialized_params()
    assert repr(m.weight) == "<UninitializedParameter>"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    y = m(cgrad.randn(2, 3))
    assert type(m) is nn.Linear and m.in_features == 3 and tuple(y.shape) == (2, 4)
    assert type(m.weight) is nn.Parameter and tuple(m.weight.shape) == (4, 3)
    assert not m._has_call_hooks
    # loading a state dict materializes the parameters
    lz = nn.LazyLinear(2)
    src = nn.Linear(5, 2)
    lz.load_state_dict(src.state_dict())
    assert tuple(lz.weight.shape) == (2, 5) and np.allclose(to_numpy(lz.weight), to_numpy(src.weight))
    tl = torch.nn.LazyLinear(4, bias=False)
    cl = nn.LazyLinear(4, bias=False)
    tl(torch.ones(1, 3)), cl(cgrad.ones(1, 3))
    assert repr(cl) == repr(tl)


def test_functional_linear():
    rng = np.random.default_rng(3)
    x, w, b, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5), rng.standard_normal(4)
    cx, cw, cb, cv = (cgrad.tensor(a) for a in (x, w, b, v))
    tx, tw, tb, tv = (torch.tensor(a) for a in (x, w, b, v))
    np.testing.assert_allclose(to_numpy(F.linear(cx, cw, cb)), to_numpy(torch.nn.functional.linear(tx, tw, tb)))
    np.testing.assert_allclose(to_numpy(F.linear(input=cx, weight=cw)), to_numpy(torch.nn.functional.linear(tx, tw)))
    np.testing.assert_allclose(to_numpy(F.linear(cx, cv, cb[0])), to_numpy(torch.nn.functional.linear(tx, tv, tb[0])))
    np.testing.assert_allclose(to_numpy(F.linear(cx, cw.T.contiguous().T, None)), to_numpy(tx @ tw.T))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        F.linear(cx, cgrad.ones(5, 3, dtype=cgrad.float64))
    with pytest.raises(RuntimeError, match="same dtype"):
        F.linear(cx, cw.float())
    with pytest.raises(TypeError, match="weight"):
        F.linear(cx, 3)
    with pytest.raises(TypeError):
        F.linear(cx)
    ci = cgrad.tensor([[1, 2]]), cgrad.tensor([[3, 4], [5, 6]])
    assert to_numpy(F.linear(*ci)).tolist() == [[11, 17]]
    # double backward through F.linear
    xg = cgrad.tensor(x, requires_grad=True)
    wg = cgrad.tensor(w, requires_grad=True)
    (g,) = cgrad.autograd.grad((F.linear(xg, wg) ** 2).sum(), [xg], create_graph=True)
    g.sum().backward()
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(w, requires_grad=True)
    (gt,) = torch.autograd.grad((torch.nn.functional.linear(xt, wt) ** 2).sum(), [xt], create_graph=True)
    gt.sum().backward()
    np.testing.assert_allclose(to_numpy(wg.grad), to_numpy(wt.grad), rtol=1e-10)
    assert F.linear(xg, wg).grad_fn.name() == "LinearBackward0"


def test_flatten_unflatten_modules():
    compare_module(lambda lib: lib.nn.Flatten(), [(2, 3, 4)])
    compare_module(lambda lib: lib.nn.Flatten(0, 1), [(2, 3, 4)])
    compare_module(lambda lib: lib.nn.Unflatten(1, (3, 2)), [(2, 6)])
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints"):
        nn.Unflatten(1, (2.0, 3))


def test_module_pickle_and_deepcopy():
    c = _Block.make(cgrad).head
    d = copy.deepcopy(c)
    assert d.out.weight is not c.out.weight and np.allclose(to_numpy(d.out.weight), to_numpy(c.out.weight))
    e = pickle.loads(pickle.dumps(nn.Sequential(nn.Linear(2, 2))))
    assert isinstance(e[0].weight, nn.Parameter) and e[0].weight.requires_grad
