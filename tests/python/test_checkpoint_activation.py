"""cgrad.utils.checkpoint against torch.utils.checkpoint: values and gradients of
checkpointed models (identical weights), RNG replay for dropout, kwargs, non-tensor
arguments, inputs without grad, nested outputs, checkpoint_sequential, the memory
the forward keeps, and the errors and warnings."""
import gc
import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import cgrad
import cgrad.nn as cnn
import cgrad.utils.checkpoint as ccp
from nn_compare import copy_state, to_numpy

MODES = [True, False]


def _mlp(lib, dropout=0.0):
    layers = [lib.nn.Linear(6, 16), lib.nn.Tanh(), lib.nn.Linear(16, 16), lib.nn.ReLU()]
    if dropout:
        layers.append(lib.nn.Dropout(dropout))
    layers.append(lib.nn.Linear(16, 3))
    return lib.nn.Sequential(*layers).double()


def _pair(dropout=0.0):
    torch.manual_seed(0)
    tm = _mlp(torch, dropout)
    cm = _mlp(cgrad, dropout)
    copy_state(tm, cm)
    return tm, cm


def _x(requires_grad=True, seed=0):
    a = np.random.default_rng(seed).standard_normal((5, 6))
    return (torch.tensor(a, requires_grad=requires_grad),
            cgrad.tensor(a, dtype=cgrad.float64, requires_grad=requires_grad))


def _close(c, t, atol=1e-10):
    assert c is not None and t is not None
    np.testing.assert_allclose(to_numpy(c), to_numpy(t), rtol=1e-7, atol=atol)


def _grads_match(cm, tm):
    for (name, cp), (_, tp) in zip(cm.named_parameters(), tm.named_parameters()):
        assert (cp.grad is None) == (tp.grad is None), name
        if tp.grad is not None:
            _close(cp.grad, tp.grad)


@pytest.mark.parametrize("reentrant", MODES)
def test_mlp_gradients_match_torch_and_the_plain_run(reentrant):
    tm, cm = _pair()
    tx, cx = _x()
    tcp.checkpoint(tm, tx, use_reentrant=reentrant).pow(2).sum().backward()
    out = ccp.checkpoint(cm, cx, use_reentrant=reentrant)
    assert out.requires_grad and out.grad_fn is not None
    _close(out, tm(tx))
    out.pow(2).sum().backward()
    _grads_match(cm, tm)
    _close(cx.grad, tx.grad)
    plain = [p.grad.clone() for p in cm.parameters()]
    cm.zero_grad()
    cm(cx.detach()).pow(2).sum().backward()
    for a, p in zip(plain, cm.parameters()):
        _close(a, p.grad)


@pytest.mark.parametrize("reentrant", MODES)
def test_dropout_replays_the_rng_state(reentrant):
    cm = _mlp(cgrad, dropout=0.5)
    _, cx = _x()
    cgrad.manual_seed(7)
    ref = cm(cx).pow(2).sum()
    ref.backward()
    ref_grads = [p.grad.clone() for p in cm.parameters()]
    ref_x = cx.grad.clone()
    cm.zero_grad()
    cx.grad = None
    cgrad.manual_seed(7)
    out = ccp.checkpoint(cm, cx, use_reentrant=reentrant).pow(2).sum()
    after_forward = cgrad.get_rng_state()
    out.backward()
    assert float(out) == float(ref)
    for a, p in zip(ref_grads, cm.parameters()):
        _close(p.grad, a, atol=0)
    _close(cx.grad, ref_x, atol=0)
    # the recompute leaves the caller's RNG stream where the forward left it
    assert cgrad.equal(cgrad.get_rng_state(), after_forward)


def test_without_preserve_rng_state_the_recompute_draws_a_new_mask():
    cm = _mlp(cgrad, dropout=0.5)
    _, cx = _x()
    cgrad.manual_seed(7)
    cm(cx).pow(2).sum().backward()
    ref = cx.grad.clone()
    cx.grad = None
    cgrad.manual_seed(7)
    ccp.checkpoint(cm, cx, use_reentrant=False, preserve_rng_state=False).pow(2).sum().backward()
    assert not cgrad.allclose(cx.grad, ref)


def test_kwargs_and_non_tensor_arguments_non_reentrant():
    tm, cm = _pair()
    tx, cx = _x()
    ty, cy = _x(seed=1)

    def fn(lib_model, x, scale, *, other, square=False):
        h = lib_model(x * scale + other)
        return h * h if square else h

    tcp.checkpoint(fn, tm, tx, 0.5, other=ty, square=True, use_reentrant=False).sum().backward()
    out = ccp.checkpoint(fn, cm, cx, 0.5, other=cy, square=True, use_reentrant=False)
    out.sum().backward()
    _grads_match(cm, tm)
    _close(cx.grad, tx.grad)
    _close(cy.grad, ty.grad)


def test_non_tensor_arguments_reentrant():
    tm, cm = _pair()
    tx, cx = _x()

    def fn(x, scale, name):
        assert name == "layer"
        return (tm if isinstance(x, torch.Tensor) else cm)(x * scale)

    tcp.checkpoint(fn, tx, 3.0, "layer", use_reentrant=True).sum().backward()
    ccp.checkpoint(fn, cx, 3.0, "layer", use_reentrant=True).sum().backward()
    _grads_match(cm, tm)
    _close(cx.grad, tx.grad)


def test_reentrant_refuses_kwargs_like_torch():
    _, cm = _pair()
    _, cx = _x()
    with pytest.raises(ValueError, match="Unexpected keyword arguments: flag"):
        tcp.checkpoint(lambda x, flag: x, torch.ones(1), flag=1, use_reentrant=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: flag"):
        ccp.checkpoint(lambda x, flag: x, cx, flag=1, use_reentrant=True)


def test_inputs_not_requiring_grad_non_reentrant_still_train_the_parameters():
    tm, cm = _pair()
    tx, cx = _x(requires_grad=False)
    tout = tcp.checkpoint(tm, tx, use_reentrant=False)
    cout = ccp.checkpoint(cm, cx, use_reentrant=False)
    assert cout.requires_grad == tout.requires_grad is True
    tout.sum().backward()
    cout.sum().backward()
    _grads_match(cm, tm)


def test_inputs_not_requiring_grad_reentrant_warns_and_gives_no_graph():
    tm, cm = _pair()
    tx, cx = _x(requires_grad=False)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        tout = tcp.checkpoint(tm, tx, use_reentrant=True)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        cout = ccp.checkpoint(cm, cx, use_reentrant=True)
    assert cout.requires_grad == tout.requires_grad is False
    with pytest.raises(RuntimeError):
        tout.sum().backward()
    with pytest.raises(RuntimeError):
        cout.sum().backward()


def test_nested_outputs_non_reentrant():
    tm, cm = _pair()
    tx, cx = _x()

    def fn(x):
        model = tm if isinstance(x, torch.Tensor) else cm
        h = model(x)
        return {"out": h, "parts": [h.sum(dim=1), (h * 2, x.shape[0])], "idx": h.argmax(dim=1)}

    t = tcp.checkpoint(fn, tx, use_reentrant=False)
    c = ccp.checkpoint(fn, cx, use_reentrant=False)
    assert set(c) == set(t) and isinstance(c["parts"], list) and c["parts"][1][1] == 5
    assert not c["idx"].requires_grad and c["parts"][0].requires_grad
    _close(c["parts"][1][0], t["parts"][1][0])
    (t["out"].pow(2).sum() + t["parts"][0].sum() + t["parts"][1][0].sum()).backward()
    (c["out"].pow(2).sum() + c["parts"][0].sum() + c["parts"][1][0].sum()).backward()
    _grads_match(cm, tm)
    _close(cx.grad, tx.grad)


def test_tuple_outputs_with_one_unused_reentrant():
    tm, cm = _pair()
    tx, cx = _x()

    def fn(x):
        h = (tm if isinstance(x, torch.Tensor) else cm)(x)
        return h, h.exp(), 4

    t = tcp.checkpoint(fn, tx, use_reentrant=True)
    c = ccp.checkpoint(fn, cx, use_reentrant=True)
    assert c[2] == 4
    t[1].sum().backward()
    c[1].sum().backward()
    _grads_match(cm, tm)
    _close(cx.grad, tx.grad)


@pytest.mark.parametrize("reentrant", MODES)
@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_matches_torch(reentrant, segments):
    tm, cm = _pair()
    tx, cx = _x()
    t = tcp.checkpoint_sequential(tm, segments, tx, use_reentrant=reentrant)
    c = ccp.checkpoint_sequential(cm, segments, cx, use_reentrant=reentrant)
    _close(c, t)
    t.pow(2).sum().backward()
    c.pow(2).sum().backward()
    _grads_match(cm, tm)
    _close(cx.grad, tx.grad)


def test_checkpoint_sequential_on_a_list_of_functions():
    tm, cm = _pair()
    tx, cx = _x()
    t = tcp.checkpoint_sequential(list(tm.children()) + [torch.sin], 2, tx, use_reentrant=False)
    c = ccp.checkpoint_sequential(list(cm.children()) + [cgrad.sin], 2, cx, use_reentrant=False)
    t.sum().backward()
    c.sum().backward()
    _grads_match(cm, tm)
    _close(cx.grad, tx.grad)


def test_autograd_grad_and_backward_inputs_non_reentrant():
    tm, cm = _pair()
    tx, cx = _x()
    tg = torch.autograd.grad(tcp.checkpoint(tm, tx, use_reentrant=False).sum(), [tx, tm[0].weight])
    cg = cgrad.autograd.grad(ccp.checkpoint(cm, cx, use_reentrant=False).sum(), [cx, cm[0].weight])
    for a, b in zip(cg, tg):
        _close(a, b)
    assert cm[0].weight.grad is None  # grad() does not accumulate
    ccp.checkpoint(cm, cx, use_reentrant=False).sum().backward(inputs=[cm[2].weight])
    assert cm[0].weight.grad is None and cm[2].weight.grad is not None


def test_double_backward_non_reentrant():
    tx, cx = _x()
    tg, = torch.autograd.grad(tcp.checkpoint(lambda x: (x.sin() * x).sum(), tx, use_reentrant=False), tx,
                              create_graph=True)
    cg, = cgrad.autograd.grad(ccp.checkpoint(lambda x: (x.sin() * x).sum(), cx, use_reentrant=False), cx,
                              create_graph=True)
    _close(cg, tg)
    tg.pow(2).sum().backward()
    cg.pow(2).sum().backward()
    _close(cx.grad, tx.grad)


@pytest.mark.parametrize("reentrant", MODES)
def test_closed_over_non_leaf_tensor_gets_its_gradient(reentrant):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 6))
    tw = torch.tensor(a, requires_grad=True)
    cw = cgrad.tensor(a, dtype=cgrad.float64, requires_grad=True)
    tx, cx = _x()
    tscaled, cscaled = tw * 2, cw * 2  # non-leaf, built outside the checkpoint
    # (torch's reentrant variant frees `tscaled`'s graph in its inner backward and then fails; the
    # reference is the plain run there)
    tout = tx @ tscaled
    tout = tcp.checkpoint(lambda x: (x @ tscaled).tanh(), tx, use_reentrant=False) if not reentrant else tout.tanh()
    (tout.sum() + tscaled.sum()).backward()
    (ccp.checkpoint(lambda x: (x @ cscaled).tanh(), cx, use_reentrant=reentrant).sum() + cscaled.sum()).backward()
    _close(cw.grad, tw.grad)
    _close(cx.grad, tx.grad)


def test_a_second_backward_needs_retain_graph():
    _, cm = _pair()
    _, cx = _x()
    loss = ccp.checkpoint(cm, cx, use_reentrant=False).sum()
    loss.backward(retain_graph=True)
    first = cx.grad.clone()
    loss.backward()
    _close(cx.grad, first * 2)
    with pytest.raises(RuntimeError):
        loss.backward()


def test_under_no_grad_it_just_runs():
    _, cm = _pair()
    _, cx = _x()
    with cgrad.no_grad():
        out = ccp.checkpoint(cm, cx, use_reentrant=False)
    assert not out.requires_grad
    _close(out, cm(cx))


@pytest.mark.parametrize("reentrant", MODES)
def test_the_forward_keeps_no_intermediate_activations(reentrant):
    # the graph keeps C tensors (not their Python objects), so the allocator's byte count is the measure
    def fn(x):
        for _ in range(6):
            x = (x * 1.5).tanh()
        return x

    x = cgrad.randn(256, 256, requires_grad=True)
    base = cgrad.memory.memory_allocated()
    out_plain = fn(x)
    plain = cgrad.memory.memory_allocated() - base
    del out_plain
    gc.collect()
    base = cgrad.memory.memory_allocated()
    out = ccp.checkpoint(fn, x, use_reentrant=reentrant)
    kept = cgrad.memory.memory_allocated() - base
    block = 256 * 256 * 4
    assert plain >= 6 * block  # six saved activations
    assert kept <= 2 * block  # the output (plus rounding of the size class)
    out.sum().backward()
    g = x.grad.clone()
    x.grad = None
    fn(x).sum().backward()
    _close(g, x.grad)


def test_use_reentrant_left_out_warns_and_means_reentrant():
    _, cm = _pair()
    _, cx = _x(requires_grad=False)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        tcp.checkpoint(lambda x: x * 2, torch.ones(2, requires_grad=True))
        ccp.checkpoint(lambda x: x * 2, cgrad.ones(2, requires_grad=True))
        out = ccp.checkpoint(cm, cx)  # reentrant: no input needs grad, so no graph
    msgs = [str(w.message) for w in rec]
    assert sum("use_reentrant parameter should be passed explicitly" in m for m in msgs) == 3
    assert {w.category for w in rec if "use_reentrant" in str(w.message)} == {UserWarning}
    assert not out.requires_grad
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant"):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "None of the inputs")
            ccp.checkpoint_sequential(cm, 2, cx)


def test_option_errors_match_torch():
    x = cgrad.ones(2, requires_grad=True)
    tx = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        tcp.checkpoint(lambda a: a, tx, use_reentrant=False, determinism_check="strict")
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        ccp.checkpoint(lambda a: a, x, use_reentrant=False, determinism_check="strict")
    for lib, t in ((tcp, tx), (ccp, x)):
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            lib.checkpoint(lambda a: a, t, use_reentrant=True, context_fn=lambda: (None, None))
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            lib.checkpoint(lambda a: a, t, use_reentrant=True, debug=True)
        with pytest.raises(ValueError, match="Unexpected keyword arguments"):
            lib.checkpoint_sequential([lambda a: a], 1, t, use_reentrant=False, flag=2)
    with pytest.raises(NotImplementedError, match="debug=True"):
        ccp.checkpoint(lambda a: a * 2, x, use_reentrant=False, debug=True)
    with pytest.raises(TypeError, match="function"):
        ccp.checkpoint(3, x, use_reentrant=False)
    with pytest.raises(ValueError, match="segments"):
        ccp.checkpoint_sequential([lambda a: a], 0, x, use_reentrant=False)


def test_context_fn_contexts_wrap_forward_and_recompute():
    calls = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            calls.append(self.name)

        def __exit__(self, *exc):
            return False

    x = cgrad.ones(3, requires_grad=True)
    out = ccp.checkpoint(lambda a: a.exp(), x, use_reentrant=False, context_fn=lambda: (Ctx("fwd"), Ctx("re")))
    assert calls == ["fwd"]
    out.sum().backward()
    assert calls == ["fwd", "re"]


def test_a_recompute_with_other_shapes_is_a_checkpoint_error():
    state = {"n": 3}

    def fn(a):
        state["n"] += 1
        return a[: state["n"]] * 2

    x = cgrad.ones(8, requires_grad=True)
    out = ccp.checkpoint(fn, x, use_reentrant=False)
    with pytest.raises(ccp.CheckpointError, match="different metadata"):
        out.sum().backward()
    assert issubclass(ccp.CheckpointError, RuntimeError)
    state["n"] = 3
    out = ccp.checkpoint(fn, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(RuntimeError):  # unchecked: the gradient has the wrong shape
        out.sum().backward()


def test_detach_variable_and_public_names():
    x = cgrad.ones(2, requires_grad=True) * 3
    d = ccp.detach_variable((x, 4))
    assert d[1] == 4 and d[0].requires_grad and d[0].grad_fn is None
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported"):
        ccp.detach_variable([x])
    assert set(ccp.__all__) <= set(tcp.__all__)


def test_signatures_match_torch():
    import inspect
    for name in ("checkpoint", "checkpoint_sequential"):
        ours = inspect.signature(getattr(ccp, name)).parameters
        theirs = inspect.signature(getattr(tcp, name)).parameters
        assert list(ours) == list(theirs)
        assert [p.kind for p in ours.values()] == [p.kind for p in theirs.values()]
        assert [p.default for p in ours.values() if p.name != "context_fn"] == \
            [p.default for p in theirs.values() if p.name != "context_fn"]


@pytest.mark.parametrize("reentrant", MODES)
def test_an_input_returned_as_is_and_integer_arguments(reentrant):
    a = np.random.default_rng(2).standard_normal(4)
    tx = torch.tensor(a, requires_grad=True)
    cx = cgrad.tensor(a, dtype=cgrad.float64, requires_grad=True)
    t1, t2 = tcp.checkpoint(lambda x, i: (x, x[i] * 2), tx, torch.tensor([0, 2]), use_reentrant=reentrant)
    c1, c2 = ccp.checkpoint(lambda x, i: (x, x[i] * 2), cx, cgrad.tensor([0, 2]), use_reentrant=reentrant)
    (t1.sum() * 3 + t2.sum()).backward()
    (c1.sum() * 3 + c2.sum()).backward()
    _close(cx.grad, tx.grad)
