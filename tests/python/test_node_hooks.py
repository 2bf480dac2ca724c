"""Autograd graph nodes as PyTorch has them: Node.register_prehook /
register_hook (Note [Node hooks]), Node.metadata, one Python object per node
(`y.grad_fn is y.grad_fn`, a class named after the node) and
Tensor.register_post_accumulate_grad_hook. Every scenario runs on cgrad and on
PyTorch and the two must agree: the gradients, what the hooks saw, and the
exception types."""
import gc
import weakref

import numpy as np
import pytest
import torch

import cgrad

LIBS = [cgrad, torch]


def arr(t):
    return None if t is None else np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def both(fn):
    """fn(lib) on each library; the results (nested tuples / lists of arrays, numbers, strings) must agree."""
    out = [fn(lib) for lib in LIBS]

    def same(a, b):
        if isinstance(a, (tuple, list)):
            assert isinstance(b, (tuple, list)) and len(a) == len(b), (a, b)
            for x, y in zip(a, b):
                same(x, y)
        elif isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        else:
            assert a == b, (a, b)

    same(out[0], out[1])
    return out[0]


def msg_of(e):
    """An exception's message without cgrad's leading "[op] " (the messages are PyTorch's after it)."""
    m = str(e)
    return m.split("] ", 1)[1] if m.startswith("[") else m


def leaf(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def test_prehook_sees_and_replaces_grad_outputs():
    def run(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x.exp()
        seen = []
        y.grad_fn.register_prehook(lambda go: (seen.append(arr(go[0])), (go[0] * 3,))[1])
        y.sum().backward()
        return seen, arr(x.grad)

    seen, grad = both(run)
    np.testing.assert_allclose(grad, 3 * np.exp([1.0, 2.0]))


def test_post_hook_sees_inputs_and_outputs_and_replaces_inputs():
    def run(lib):
        x, w = leaf(lib, [1.0, -2.0]), leaf(lib, [3.0, 4.0])
        y = x * w
        seen = []

        def hook(gi, go):
            seen.append(([arr(g) for g in gi], [arr(g) for g in go]))
            return (gi[0] + 1, None)

        y.grad_fn.register_hook(hook)
        y.sum().backward()
        return seen, arr(x.grad), arr(w.grad)

    seen, gx, gw = both(run)
    np.testing.assert_allclose(gx, [4.0, 5.0])
    assert gw is None


def test_hooks_run_in_registration_order_and_remove():
    def run(lib):
        x = leaf(lib, [2.0])
        y = x * x
        order = []
        h1 = y.grad_fn.register_prehook(lambda go: order.append("pre1"))
        y.grad_fn.register_prehook(lambda go: order.append("pre2"))
        y.grad_fn.register_hook(lambda gi, go: order.append("post"))
        y.register_hook(lambda g: order.append("tensor"))
        y.backward(retain_graph=True)
        h1.remove()
        h1.remove()  # idempotent
        y.backward()
        return order, arr(x.grad)

    order, grad = both(run)
    assert order == ["tensor", "pre1", "pre2", "post", "tensor", "pre2", "post"]


def test_prehook_returning_none_entries_stops_the_gradient():
    def run(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        y.grad_fn.register_prehook(lambda go: (None,))
        z = x * 2
        (y.sum() + z.sum()).backward()
        return arr(x.grad)

    np.testing.assert_allclose(both(run), [2.0, 2.0])


def test_accumulate_grad_node_hooks():
    def run(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        acc = y.grad_fn.next_functions[0][0]
        assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x
        seen = []
        acc.register_prehook(lambda go: seen.append(("pre", [arr(g) for g in go])))
        acc.register_hook(lambda gi, go: seen.append(("post", len(gi), [arr(g) for g in go], arr(x.grad))))
        y.sum().backward(retain_graph=True)
        acc.register_prehook(lambda go: (None,))
        x.grad = None
        y.sum().backward()
        seen.append(arr(x.grad))
        return seen

    seen = both(run)
    assert seen[-1] is None


def test_hooks_under_create_graph_are_differentiable():
    def run(lib):
        x = leaf(lib, [2.0])
        y = x ** 3
        y.grad_fn.register_hook(lambda gi, go: tuple(None if g is None else g * 2 for g in gi))
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g, x)
        return arr(g), arr(gg), g.requires_grad

    g, gg, rg = both(run)
    np.testing.assert_allclose(g, [24.0])
    np.testing.assert_allclose(gg, [24.0])


@pytest.mark.parametrize("case", ["not_tuple", "count", "element", "shape", "raises"])
def test_bad_hook_results_raise_as_in_pytorch(case):
    def run(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x.exp()
        hooks = {
            "not_tuple": lambda go: go[0],
            "count": lambda go: (go[0], go[0]),
            "element": lambda go: (5,),
            "shape": lambda go: (lib.ones(3, dtype=lib.float64),),
        }

        def raises(go):
            raise KeyError("boom")

        y.grad_fn.register_prehook(hooks.get(case, raises))
        with pytest.raises(Exception) as ei:
            y.sum().backward()
        assert x.grad is None
        msg = str(ei.value)
        return ei.type.__name__, msg.split(" (was")[0] if case == "shape" else msg

    both(run)


def test_post_hook_result_checks():
    def run(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x.exp()
        y.grad_fn.register_hook(lambda gi, go: (lib.ones(3, dtype=lib.float64),))
        with pytest.raises(RuntimeError, match="has changed the size of value"):
            y.sum().backward()
        return 0

    both(run)


def test_register_needs_a_callable():
    x = leaf(cgrad, [1.0])
    with pytest.raises(TypeError, match="register_hook expects a callable"):
        (x * 2).grad_fn.register_hook(3)


def test_grad_fn_identity_class_and_metadata():
    def run(lib):
        x = leaf(lib, [1.0])
        y = x * 2
        g = y.grad_fn
        assert g is y.grad_fn and y.grad_fn == g
        assert isinstance(g, lib.autograd.graph.Node)
        g.metadata["tag"] = 7
        del g
        gc.collect()
        return type(y.grad_fn).__name__, dict(y.grad_fn.metadata), isinstance(y.grad_fn._sequence_nr(), int)

    assert both(run) == ("MulBackward0", {"tag": 7}, True)


def test_sequence_numbers_grow():
    x = leaf(cgrad, [1.0])
    a = x * 2
    b = a.exp()
    assert b.grad_fn._sequence_nr() > a.grad_fn._sequence_nr()


def test_node_object_does_not_outlive_its_use():
    x = leaf(cgrad, [1.0])
    y = x * 2
    ref = weakref.ref(type(y.grad_fn))  # classes are cached per name
    g = y.grad_fn
    h = g.register_hook(lambda gi, go: None)
    del g
    h.remove()
    del h, y
    gc.collect()
    assert ref() is not None


def test_post_accumulate_grad_hook():
    def run(lib):
        p = lib.nn.Parameter(lib.tensor([1.0, 2.0], dtype=lib.float64))
        seen = []
        h = p.register_post_accumulate_grad_hook(lambda t: seen.append((t is p, arr(t.grad))))
        (p * p).sum().backward()
        (p * 3).sum().backward()
        lib.autograd.grad((p * 2).sum(), p)  # accumulates nothing: no call
        h.remove()
        (p * 3).sum().backward()
        return seen, arr(p.grad)

    seen, grad = both(run)
    assert [s[0] for s in seen] == [True, True]
    np.testing.assert_allclose(grad, [8.0, 10.0])


def test_post_accumulate_grad_hook_errors():
    def run(lib):
        x = leaf(lib, [1.0])
        out = []
        for target in (x * 2, lib.ones(1)):
            with pytest.raises(RuntimeError) as ei:
                target.register_post_accumulate_grad_hook(lambda t: None)
            out.append(msg_of(ei.value))
        for ret, exc in ((lib.ones(1, dtype=lib.float64), RuntimeError), (3, TypeError)):
            h = x.register_post_accumulate_grad_hook(lambda t, r=ret: r)
            with pytest.raises(exc) as ei:
                (x * 2).sum().backward()
            out.append(msg_of(ei.value))
            h.remove()
        return out

    both(run)


# Note [Hook contexts and a garbage collector]: a hook (or metadata) that refers back to its own tensor
# or node is a cycle through the engine, which the wrappers show to Python's gc when they hold the
# engine object's only reference. PyTorch collects the first two; cgrad collects all five.
class _Marker:
    pass


def _node_hook_cycle(lib):
    y = lib.ones(3, requires_grad=True) * 2
    m, fn = _Marker(), y.grad_fn
    fn.register_hook(lambda gi, go, fn=fn, m=m: None)
    return weakref.ref(m)


def _leaf_hook_cycle(lib):
    x, m = lib.ones(3, requires_grad=True), _Marker()
    x.register_hook(lambda g, x=x, m=m: g)
    return weakref.ref(m)


def _metadata_cycle(lib):
    fn = (lib.ones(3, requires_grad=True) * 2).grad_fn
    m = _Marker()
    fn.metadata["self"] = (fn, m)
    return weakref.ref(m)


def _non_leaf_hook_cycle(lib):
    y, m = lib.ones(3, requires_grad=True) * 2, _Marker()
    y.register_hook(lambda g, y=y, m=m: g)
    return weakref.ref(m)


def _post_accumulate_cycle(lib):
    x, m = lib.ones(3, requires_grad=True), _Marker()
    x.register_post_accumulate_grad_hook(lambda t, x=x, m=m: None)
    return weakref.ref(m)


@pytest.mark.parametrize("make, torch_too", [(_node_hook_cycle, True), (_leaf_hook_cycle, True),
                                             (_metadata_cycle, False), (_non_leaf_hook_cycle, False),
                                             (_post_accumulate_cycle, False)], ids=lambda v: getattr(v, "__name__", ""))
def test_a_hook_cycle_is_collected(make, torch_too):
    for lib in ([cgrad, torch] if torch_too else [cgrad]):
        ref = make(lib)
        gc.collect()
        assert ref() is None, lib.__name__


def test_a_collection_keeps_hooks_the_graph_still_reaches():
    """The tensor is garbage, but its grad_fn (and the hook on it) is still reached from z's graph:
    the collector must leave the hook, which runs in the later backward."""
    def run(lib):
        seen = []
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g, y=y: seen.append(arr(g)) or g * 10)
        fn = y.grad_fn
        fn.register_prehook(lambda go, fn=fn: seen.append("pre") and None)
        z = y * 3
        del y, fn
        gc.collect()
        z.sum().backward()
        return seen, arr(x.grad)

    seen, grad = both(run)
    assert seen[1] == "pre" and grad.tolist() == [60.0] * 3


def test_hooks_of_a_live_tensor_survive_collections():
    x = cgrad.ones(2, requires_grad=True)
    calls = []
    x.register_hook(lambda g, x=x: calls.append(1) or g)
    x.register_post_accumulate_grad_hook(lambda t, x=x: calls.append(2))
    gc.collect()
    (x * 2).sum().backward()
    assert calls == [1, 2] and x.grad.tolist() == [2.0, 2.0]
