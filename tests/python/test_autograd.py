"""cgrad.autograd beyond the op table: custom Functions (saved tensors and
their versions, dirty / non-differentiable outputs, lazy grads, double
backward, ctx lifetime), gradcheck / gradgradcheck (including planted wrong
backwards), autograd.functional against torch.autograd.functional, multi-root
backward, grad options, anomaly mode and the determinism switches."""
import gc
import weakref

import numpy as np
import pytest
import torch

import cgrad
from cgrad.autograd import Function, once_differentiable
from cgrad.autograd.gradcheck import GradcheckError


def arr(t):
    return np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def close(a, b, tol=1e-10):
    if a is None or b is None:
        assert a is None and b is None
        return
    np.testing.assert_allclose(arr(a), arr(b), rtol=tol, atol=tol)


def leaf(lib, values, requires_grad=True):
    return lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)


def tsum(t):
    """Sum of a 1-d tensor with indexing and + only (works for both libraries)."""
    s = t[0]
    for i in range(1, t.shape[0]):
        s = s + t[i]
    return s


# ---------------------------------------------------------------- Functions under test, for both libraries

def make_functions(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class ScaledMul(lib.autograd.Function):
        """(x, scale, y) -> (x * y * scale, x - y): non-tensor input, two outputs."""

        @staticmethod
        def forward(ctx, x, scale, y):
            ctx.save_for_backward(x, y)
            ctx.scale = scale
            ctx.needs = ctx.needs_input_grad
            return x * y * scale, x - y

        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            gx = ga * y * ctx.scale + gb if ctx.needs_input_grad[0] else None
            gy = ga * x * ctx.scale - gb if ctx.needs_input_grad[2] else None
            return gx, None, gy

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    return Exp, ScaledMul, Cube


CG_EXP, CG_SCALED, CG_CUBE = make_functions(cgrad)
T_EXP, T_SCALED, T_CUBE = make_functions(torch)


class BadExp(Function):
    """Wrong backward (factor 2): gradcheck must catch it."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 2


class BadSecondOrder(Function):
    """Right first derivative of x^3, but its backward hides x from the graph,
    so the second derivative is wrong: only gradgradcheck can catch it."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x.detach() * x


# ---------------------------------------------------------------- Function

def test_function_values_grads_and_grad_fn():
    for lib, F in ((cgrad, CG_EXP), (torch, T_EXP)):
        x = leaf(lib, [0.5, -1.0, 2.0])
        y = F.apply(x)
        y.backward(lib.ones_like(y))
        if lib is cgrad:
            cx, cy = x, y
        else:
            tx, ty = x, y
    close(cy, ty)
    close(cx.grad, tx.grad)
    fn = cy.grad_fn
    assert fn.name() == "ExpBackward" == ty.grad_fn.name()
    assert isinstance(fn, cgrad.autograd.graph.Node)
    (nxt, nr), = fn.next_functions
    assert nxt.name() == "torch::autograd::AccumulateGrad" and type(nxt).__name__ == "AccumulateGrad"  # as PyTorch
    assert nr == 0 and nxt.variable is cx
    assert cy.grad_fn is fn and type(fn).__name__ == type(ty.grad_fn).__name__ == "ExpBackward"


def test_function_several_inputs_outputs_and_non_tensor_args():
    res = {}
    for lib, F in ((cgrad, CG_SCALED), (torch, T_SCALED)):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = leaf(lib, [0.5, -1.0, 4.0], requires_grad=False)
        a, b = F.apply(x, 2.5, y)
        assert a.requires_grad and b.requires_grad
        assert a.grad_fn.name() == "ScaledMulBackward"
        lib.autograd.backward([a, b], [lib.ones_like(a), lib.ones_like(b) * 2])
        res[lib] = (a, b, x.grad, y.grad)
    for c, t in zip(res[cgrad], res[torch]):
        close(c, t)
    x = leaf(cgrad, [1.0, 2.0])
    y = leaf(cgrad, [3.0, 4.0])
    a, b = CG_SCALED.apply(x, 1.0, y)
    assert a.grad_fn.next_functions[0][0].variable is x and a.grad_fn.next_functions[1][0].variable is y
    gx, gy = cgrad.autograd.grad(a, (x, y), cgrad.ones_like(a))
    close(gx, y)
    close(gy, x)


def test_function_needs_input_grad_and_no_graph_without_grad():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x, k, y):
            seen.append(ctx.needs_input_grad)
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g, None, g

    x = leaf(cgrad, [1.0])
    y = leaf(cgrad, [2.0], requires_grad=False)
    out = Probe.apply(x, 3, y)
    assert seen[-1] == (True, False, False) and out.requires_grad
    with cgrad.no_grad():
        out = Probe.apply(x, 3, y)
    assert seen[-1] == (False, False, False)
    assert not out.requires_grad and out.grad_fn is None
    out = Probe.apply(y, 3, y)
    assert not out.requires_grad and out.grad_fn is None


def test_function_wrong_number_of_gradients():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    class ExtraNones(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    class GradForNonTensor(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    x = leaf(cgrad, [1.0, 2.0])
    y = leaf(cgrad, [3.0, 4.0])
    with pytest.raises(RuntimeError, match=r"TooFewBackward returned an incorrect number of gradients \(expected 2, got 1\)"):
        TooFew.apply(x, y).backward(cgrad.ones_like(x))
    with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 1, got 2\)"):
        TooMany.apply(x).backward(cgrad.ones_like(x))
    ExtraNones.apply(x).backward(cgrad.ones_like(x))
    close(x.grad, cgrad.tensor([2.0, 2.0], dtype=cgrad.float64))
    with pytest.raises(RuntimeError, match="gradient different than None at position 2"):
        GradForNonTensor.apply(x, 3.0).backward(cgrad.ones_like(x))


def test_function_gradient_shape_and_dtype_are_checked():
    class Broadcasting(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return cgrad.ones(2, 3, dtype=cgrad.float32)  # sums to x's shape, casts to float64

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return cgrad.ones(5, dtype=cgrad.float64)

    x = leaf(cgrad, [1.0, 2.0, 3.0])
    g, = cgrad.autograd.grad(Broadcasting.apply(x), x, cgrad.ones_like(x))
    assert g.dtype == cgrad.float64
    close(g, cgrad.tensor([2.0, 2.0, 2.0], dtype=cgrad.float64))
    with pytest.raises(RuntimeError, match=r"WrongShapeBackward returned an invalid gradient at index 0 - got \[5\]"):
        cgrad.autograd.grad(WrongShape.apply(x), x, cgrad.ones_like(x))


def test_saved_tensor_modified_in_place_raises():
    for lib, F in ((cgrad, CG_CUBE), (torch, T_CUBE)):
        x = leaf(lib, [1.0, 2.0])
        a = x * 1
        y = F.apply(a)
        a.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward(lib.ones_like(y))


def test_saved_tensors_freed_after_backward_and_retain_graph():
    x = leaf(cgrad, [1.0, 2.0])
    y = CG_CUBE.apply(x)
    y.backward(cgrad.ones_like(y), retain_graph=True)
    y.backward(cgrad.ones_like(y))
    close(x.grad, cgrad.tensor([6.0, 24.0], dtype=cgrad.float64))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward(cgrad.ones_like(y))


def test_ctx_lifetime_no_reference_cycle():
    refs = []

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            refs.append(weakref.ref(ctx))
            y = x * 2
            ctx.save_for_backward(x, y)
            return y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * 2

    gc.collect()
    gc.disable()
    try:
        x = leaf(cgrad, [1.0, 2.0])
        y = Keep.apply(x)
        assert refs[-1]() is not None  # the graph (y.grad_fn) keeps ctx alive
        z = y * 3
        del y
        assert refs[-1]() is not None
        z.backward(cgrad.ones_like(z))
        assert refs[-1]() is not None  # graph still referenced by z
        with pytest.raises(RuntimeError, match="second time"):
            refs[-1]().saved_tensors
        del z
        assert refs[-1]() is None  # freed with the graph, without the cycle collector
        y = Keep.apply(x)
        del y
        assert refs[-1]() is None
    finally:
        gc.enable()


def test_mark_dirty_in_place_function():
    def make(lib):
        class MulTwo_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return MulTwo_

    out = {}
    for lib in (cgrad, torch):
        F = make(lib)
        x = leaf(lib, [1.0, 3.0])
        a = x * 1
        b = F.apply(a)
        assert b is a
        assert a.grad_fn.name() == "MulTwo_Backward"
        (b * b).backward(lib.ones_like(b))
        out[lib] = (a, x.grad)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            F.apply(leaf(lib, [1.0]))
    close(out[cgrad][0], out[torch][0])
    close(out[cgrad][1], out[torch][1])


def test_input_returned_as_is_gets_new_alias():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = leaf(cgrad, [1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and x.grad_fn is None
    assert y.grad_fn.name() == "IdentityBackward"
    y.backward(cgrad.ones_like(y))
    close(x.grad, cgrad.tensor([3.0, 3.0], dtype=cgrad.float64))


def test_mark_non_differentiable_and_integer_outputs():
    got = []

    def make(lib):
        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                mask = (x > 0).to(x.dtype)
                ctx.mark_non_differentiable(mask)
                return x * 2, mask, x > 0, 7

            @staticmethod
            def backward(ctx, g, gmask, gbool, gint):
                got.append((lib, gmask, gbool, gint))
                return g * 2
        return Split

    for lib in (cgrad, torch):
        x = leaf(lib, [1.0, -2.0])
        y, mask, pos, k = make(lib).apply(x)
        assert y.requires_grad and not mask.requires_grad and not pos.requires_grad and k == 7
        assert mask.grad_fn is None
        y.backward(lib.ones_like(y))
        close(x.grad, lib.tensor([2.0, 2.0], dtype=lib.float64))
    (_, cm, cb, ci), (_, tm, tb, ti) = got
    close(cm, tm)  # zeros for a non-differentiable output
    assert ci is None and ti is None


def test_set_materialize_grads():
    got = {}

    def make(lib, materialize):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                got[(lib, materialize)] = (ga, gb)
                return (ga * 2 if ga is not None else 0) + (gb * 3 if gb is not None else 0)
        return Two

    for lib in (cgrad, torch):
        for materialize in (True, False):
            x = leaf(lib, [1.0, 2.0])
            a, b = make(lib, materialize).apply(x)
            a.backward(lib.ones_like(a))
            close(x.grad, lib.tensor([2.0, 2.0], dtype=lib.float64))
    assert got[(cgrad, False)][1] is None and got[(torch, False)][1] is None
    close(got[(cgrad, True)][1], got[(torch, True)][1])


def test_setup_context_style_and_kwargs_defaults():
    class Scale(Function):
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = leaf(cgrad, [1.0, 2.0])
    y = Scale.apply(x)
    y.backward(cgrad.ones_like(y))
    close(x.grad, cgrad.tensor([3.0, 3.0], dtype=cgrad.float64))
    x.grad = None
    Scale.apply(x, k=5.0).backward(cgrad.ones_like(y))
    close(x.grad, cgrad.tensor([5.0, 5.0], dtype=cgrad.float64))


def test_double_backward_through_function():
    res = {}
    for lib, F in ((cgrad, CG_CUBE), (torch, T_CUBE)):
        x = leaf(lib, [1.0, -2.0, 0.5])
        y = F.apply(x)
        g, = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        assert g.requires_grad
        gg, = lib.autograd.grad(g, x, lib.ones_like(g))
        res[lib] = (g, gg)
    close(res[cgrad][0], res[torch][0])
    close(res[cgrad][1], res[torch][1])  # 6x
    x = leaf(cgrad, [0.3, -0.7])
    assert cgrad.autograd.gradcheck(CG_CUBE.apply, (x,))
    assert cgrad.autograd.gradgradcheck(CG_CUBE.apply, (x,))
    assert cgrad.autograd.gradcheck(lambda a, b: CG_SCALED.apply(a, 1.5, b), (x, leaf(cgrad, [2.0, 0.1])))


def test_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not cgrad.is_grad_enabled()
            return g * 2 * x

    x = leaf(cgrad, [1.0, 3.0])
    y = Sq.apply(x)
    g, = cgrad.autograd.grad(y, x, cgrad.ones_like(y), retain_graph=True)
    close(g, cgrad.tensor([2.0, 6.0], dtype=cgrad.float64))
    g, = cgrad.autograd.grad(y, x, cgrad.ones_like(y), create_graph=True, retain_graph=True)
    assert not g.requires_grad  # as in torch: only grad_outputs requiring grad mark the results
    go = cgrad.ones_like(y).requires_grad_()
    g, = cgrad.autograd.grad(y, x, go, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "DelayedErrorBackward"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.backward(cgrad.ones_like(g))


def test_backward_exception_type_propagates():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom in backward")

    x = leaf(cgrad, [1.0])
    with pytest.raises(ValueError, match="boom in backward"):
        Boom.apply(x).backward(cgrad.ones_like(x))
    with pytest.raises(ValueError, match="boom in backward"):
        cgrad.autograd.grad(Boom.apply(x), x, cgrad.ones_like(x))


def test_function_base_errors():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

    x = leaf(cgrad, [1.0])
    with pytest.raises(NotImplementedError, match="backward or vjp"):
        NoBackward.apply(x).backward(cgrad.ones_like(x))
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        NoBackward()(x)
    with pytest.raises(TypeError, match="save_for_backward can only save"):
        class SaveInt(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(3)
                return x
        SaveInt.apply(x)


# ---------------------------------------------------------------- gradcheck / gradgradcheck

def test_gradcheck_passes_on_correct_gradients():
    x = leaf(cgrad, [[0.3, -1.2, 2.0], [0.1, 0.5, -0.4]])
    y = leaf(cgrad, [1.5, -0.5, 0.7])
    f = lambda a, b: (a * b.exp() / (b * b + 1), a - b)  # noqa: E731
    assert cgrad.autograd.gradcheck(f, (x, y))
    assert cgrad.autograd.gradgradcheck(f, (x, y))
    assert cgrad.autograd.gradcheck(CG_EXP.apply, x, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert cgrad.autograd.gradcheck(lambda a, k: a * k, (x, 2.0))  # non-tensor inputs are passed through
    assert cgrad.autograd.gradcheck(lambda a: a * 2, leaf(cgrad, 1.5))  # 0-d input


def test_gradcheck_catches_a_wrong_backward():
    x = leaf(cgrad, [0.3, -0.8])
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0") as e:
        cgrad.autograd.gradcheck(BadExp.apply, (x,))
    assert isinstance(e.value, RuntimeError)
    assert "numerical" in str(e.value) and "analytical" in str(e.value)
    assert cgrad.autograd.gradcheck(BadExp.apply, (x,), raise_exception=False) is False
    assert cgrad.autograd.gradcheck(BadSecondOrder.apply, (x,))  # first order is right...
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        cgrad.autograd.gradgradcheck(BadSecondOrder.apply, (x,))  # ...second order is not
    assert cgrad.autograd.gradgradcheck(BadSecondOrder.apply, (x,), raise_exception=False) is False


def test_gradcheck_arguments():
    import inspect
    from cgrad.autograd import gradcheck as gc_fn, gradgradcheck as ggc_fn
    from torch.autograd.gradcheck import gradcheck as t_gc, gradgradcheck as t_ggc
    for ours, theirs in ((gc_fn, t_gc), (ggc_fn, t_ggc)):
        ps, pt = inspect.signature(ours).parameters, inspect.signature(theirs).parameters
        assert list(ps) == list(pt)
        assert all(ps[k].default == pt[k].default for k in ps)
    x = leaf(cgrad, [1.0], requires_grad=False)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        cgrad.autograd.gradcheck(lambda a: a * 2, (x,))
    with pytest.warns(UserWarning, match="not a double precision"):
        cgrad.autograd.gradcheck(lambda a: a * 2, cgrad.tensor([1.0], requires_grad=True), atol=1e-2, rtol=1e-2,
                                 eps=1e-3, check_batched_grad=True, fast_mode=True)
    import sys
    assert sys.modules["cgrad.autograd.gradcheck"].GradcheckError is GradcheckError


# ---------------------------------------------------------------- functional vs torch.autograd.functional

def f_single(lib):
    return lambda x: x * x.exp() / (x * x + 1)


def f_pair(lib):
    return lambda x, y: (x * y, x.exp() - y * y * y)


def f_scalar(lib):
    return lambda x: tsum(x * x * x.exp())


def f_scalar_pair(lib):
    return lambda x, y: tsum(x * x * y + y.exp() * x)


def both(values_list):
    return ({"cg": tuple(leaf(cgrad, v, requires_grad=False) for v in values_list),
             "t": tuple(leaf(torch, v, requires_grad=False) for v in values_list)})


def compare(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            compare(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    close(a, b, 1e-9)


X = [0.3, -0.5, 1.2]
Y = [0.7, 0.2, -1.1]
V = [1.0, -2.0, 0.5]


@pytest.mark.parametrize("name", ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"])
def test_functional_matches_torch(name):
    cf, tf = getattr(cgrad.autograd.functional, name), getattr(torch.autograd.functional, name)
    ins, vs = both([X, Y]), both([V, [0.5, 0.5, -1.0]])
    cx, cy = ins["cg"]
    tx, ty = ins["t"]
    cv, cv2 = vs["cg"]
    tv, tv2 = vs["t"]
    if name == "jacobian":
        compare(cf(f_single(cgrad), cx), tf(f_single(torch), tx))
        compare(cf(f_pair(cgrad), (cx, cy)), tf(f_pair(torch), (tx, ty)))
        compare(cf(f_pair(cgrad), (cx, cy), vectorize=True), tf(f_pair(torch), (tx, ty), vectorize=True))
    elif name == "hessian":
        compare(cf(f_scalar(cgrad), cx), tf(f_scalar(torch), tx))
        compare(cf(f_scalar_pair(cgrad), (cx, cy)), tf(f_scalar_pair(torch), (tx, ty)))
    elif name == "vjp":
        compare(cf(f_single(cgrad), cx, cv), tf(f_single(torch), tx, tv))
        compare(cf(f_pair(cgrad), (cx, cy), (cv, cv2)), tf(f_pair(torch), (tx, ty), (tv, tv2)))
        compare(cf(f_scalar(cgrad), cx), tf(f_scalar(torch), tx))
    elif name == "jvp":
        compare(cf(f_single(cgrad), cx, cv), tf(f_single(torch), tx, tv))
        compare(cf(f_pair(cgrad), (cx, cy), (cv, cv2)), tf(f_pair(torch), (tx, ty), (tv, tv2)))
    else:
        compare(cf(f_scalar(cgrad), cx, cv), tf(f_scalar(torch), tx, tv))
        compare(cf(f_scalar_pair(cgrad), (cx, cy), (cv, cv2)), tf(f_scalar_pair(torch), (tx, ty), (tv, tv2)))


def test_functional_create_graph_and_errors():
    x = leaf(cgrad, X)
    tx = leaf(torch, X)
    _, jv = cgrad.autograd.functional.jvp(f_single(cgrad), x, leaf(cgrad, V, False), create_graph=True)
    _, tjv = torch.autograd.functional.jvp(f_single(torch), tx, leaf(torch, V, False), create_graph=True)
    assert jv.requires_grad
    g, = cgrad.autograd.grad(tsum(jv), x)
    tg, = torch.autograd.grad(tsum(tjv), tx)
    close(g, tg, 1e-9)
    h = cgrad.autograd.functional.hessian(f_scalar(cgrad), x, create_graph=True)
    assert h.requires_grad and tuple(h.shape) == (3, 3)
    out, vj = cgrad.autograd.functional.vjp(f_single(cgrad), x, leaf(cgrad, V, False))
    assert not out.requires_grad and not vj.requires_grad
    with pytest.raises(RuntimeError, match="v can only be None"):
        cgrad.autograd.functional.vjp(f_single(cgrad), x)
    with pytest.raises(RuntimeError, match="v has invalid size"):
        cgrad.autograd.functional.vjp(f_single(cgrad), x, leaf(cgrad, [1.0]))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        cgrad.autograd.functional.jacobian(f_single(cgrad), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="should contain a single element"):
        cgrad.autograd.functional.hessian(f_single(cgrad), x)
    const = lambda a, b: a * 2  # noqa: E731
    with pytest.raises(RuntimeError, match="independent of input 1"):
        cgrad.autograd.functional.jacobian(const, (x, leaf(cgrad, Y)), strict=True)
    j = cgrad.autograd.functional.jacobian(const, (x, leaf(cgrad, Y)))
    tj = torch.autograd.functional.jacobian(lambda a, b: a * 2, (tx, leaf(torch, Y)))
    compare(j, tj)
    with pytest.raises(NotImplementedError, match="forward-mode"):
        cgrad.autograd.functional.jacobian(f_single(cgrad), x, strategy="forward-mode")


# ---------------------------------------------------------------- backward / grad

def test_backward_several_roots_at_once():
    res = {}
    for lib in (cgrad, torch):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [0.5, -1.0])
        h = x * w
        a, b = h * h, h.exp()
        lib.autograd.backward([a, b], [lib.ones_like(a), leaf(lib, [2.0, 3.0], False)], retain_graph=True)
        res[lib] = (x.grad, w.grad)
        x.grad = w.grad = None
        s = a[0]  # one-element root: no grad tensor needed; inputs restricts accumulation
        lib.autograd.backward((s, b), (None, lib.ones_like(b)), inputs=[x])
        res[lib] += (x.grad,)
        assert w.grad is None
    for c, t in zip(res[cgrad], res[torch]):
        close(c, t)
    x = leaf(cgrad, [1.0, 2.0])
    y = x * 2
    with pytest.raises(RuntimeError, match="cannot be empty"):
        cgrad.autograd.backward(y, cgrad.ones_like(y), inputs=[])
    with pytest.raises(RuntimeError, match="same length"):
        cgrad.autograd.backward([y, y], [cgrad.ones_like(y)])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        cgrad.autograd.backward([y])
    with pytest.raises(RuntimeError, match="does not require grad"):
        cgrad.autograd.backward([x.detach() * 1], [cgrad.ones_like(x)])
    cgrad.autograd.backward(y, grad_variables=cgrad.ones_like(y))
    close(x.grad, cgrad.tensor([2.0, 2.0], dtype=cgrad.float64))


def test_grad_options():
    x = leaf(cgrad, [1.0, 2.0])
    u = leaf(cgrad, [3.0])
    y = x * x
    with pytest.raises(RuntimeError, match="allow_unused"):
        cgrad.autograd.grad(y, (x, u), cgrad.ones_like(y), retain_graph=True)
    gx, gu = cgrad.autograd.grad(y, (x, u), cgrad.ones_like(y), retain_graph=True, allow_unused=True)
    assert gu is None
    gx, gu = cgrad.autograd.grad(y, (x, u), cgrad.ones_like(y), retain_graph=True, materialize_grads=True)
    close(gu, cgrad.zeros(1, dtype=cgrad.float64))
    close(gx, cgrad.tensor([2.0, 4.0], dtype=cgrad.float64))
    with pytest.raises(ValueError, match="allow_unused"):
        cgrad.autograd.grad(y, x, cgrad.ones_like(y), allow_unused=False, materialize_grads=True)
    with pytest.raises(NotImplementedError, match="is_grads_batched"):
        cgrad.autograd.grad(y, x, cgrad.ones_like(y), is_grads_batched=True)


# ---------------------------------------------------------------- anomaly mode, determinism

def test_detect_anomaly_names_the_op():
    class NanBack(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = leaf(cgrad, [1.0, 2.0])
    NanBack.apply(x).backward(cgrad.ones_like(x))  # off: NaN goes through silently
    assert not cgrad.is_anomaly_enabled()
    with cgrad.autograd.detect_anomaly():
        assert cgrad.is_anomaly_enabled()
        with pytest.raises(RuntimeError, match="Function 'NanBackBackward' returned nan values"):
            NanBack.apply(x).backward(cgrad.ones_like(x))
        z = leaf(cgrad, [0.0])
        with pytest.raises(RuntimeError, match=r"Function 'DivBackward0' returned nan values"):
            (z / z).backward(cgrad.ones_like(z))
    assert not cgrad.is_anomaly_enabled()
    cgrad.autograd.set_detect_anomaly(True)
    assert cgrad.is_anomaly_enabled()
    cgrad.autograd.set_detect_anomaly(False)
    with cgrad.autograd.set_detect_anomaly(True):
        assert cgrad.is_anomaly_enabled()
    assert not cgrad.is_anomaly_enabled()


def test_deterministic_algorithms_switch():
    assert cgrad.are_deterministic_algorithms_enabled() is torch.are_deterministic_algorithms_enabled() is False
    try:
        cgrad.use_deterministic_algorithms(True)
        assert cgrad.are_deterministic_algorithms_enabled()
        assert not cgrad.is_deterministic_algorithms_warn_only_enabled()
        cgrad.use_deterministic_algorithms(True, warn_only=True)
        assert cgrad.is_deterministic_algorithms_warn_only_enabled()
        with pytest.raises(TypeError):
            cgrad.use_deterministic_algorithms(True, True)  # warn_only is keyword-only, as in torch
    finally:
        cgrad.use_deterministic_algorithms(False)
    assert not cgrad.are_deterministic_algorithms_enabled()
    assert not cgrad.is_deterministic_algorithms_warn_only_enabled()
