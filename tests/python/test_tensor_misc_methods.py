"""The compatibility Tensor methods of python/cgrad/_tensor_misc.py against
PyTorch: new, resize / resize_as, apply_ / map_ / map2_, adjoint,
is_same_size, the conjugate / negative-bit queries, get_device, pinned
memory, as_subclass, hardshrink / prelu; values, gradients and errors."""
import warnings

import numpy as np
import pytest
import torch

import cgrad

LIBS = [cgrad, torch]


def arr(t):
    return np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def both(fn):
    """fn(lib) on each library; the results (arrays, numbers, strings, tuples of them) must agree."""
    a, b = (fn(lib) for lib in LIBS)
    assert type(a) is type(b) or isinstance(a, np.ndarray), (a, b)
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y) if isinstance(x, np.ndarray) else (x == y or pytest.fail(f"{x} != {y}"))
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b)
    else:
        assert a == b, (a, b)


def base(lib, dtype=None):
    return lib.arange(6.0, dtype=dtype or lib.float32).reshape(2, 3)


def test_new_forms():
    both(lambda lib: (tuple(base(lib).new(2, 3).shape), str(base(lib).new([1, 2]).dtype).split(".")[1],
                      tuple(base(lib).new().shape), tuple(base(lib, lib.float64).new(lib.Size([4])).shape),
                      str(base(lib, lib.float64).new((1.5, 2)).dtype).split(".")[1]))
    x = base(cgrad)
    assert x.new(x).data_ptr() == x.data_ptr()  # a tensor argument: an alias


def test_resize_and_resize_as():
    def run(lib):
        a = base(lib, lib.float64).t().requires_grad_()
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            r = a.resize(3, 2)
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            q = a.resize_as(lib.ones(6))
        (r * lib.arange(6.0, dtype=lib.float64).reshape(3, 2)).sum().backward()
        with pytest.raises(RuntimeError) as ei, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a.resize(4, 2)
        return arr(r), arr(q), arr(a.grad), str(ei.value)

    both(run)


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_apply_map_map2(dtype):
    def run(lib):
        dt = getattr(lib, dtype)
        x = lib.arange(6, dtype=dt).reshape(2, 3)
        y = x.t().contiguous().t()  # non-contiguous
        y.apply_(lambda v: v * 2 + 0.7)
        z = x.clone()
        z.map_(lib.arange(3, dtype=dt), lambda a, b: a - b)
        w = x.clone()
        w.map2_(x, lib.ones(1, dtype=dt), lambda a, b, c: a * b + c)
        e = lib.ones(0, dtype=dt)
        e.apply_(lambda v: v + 1)
        return arr(y), arr(z), arr(w), tuple(e.shape)

    both(run)


def test_apply_errors():
    def run(lib):
        out = []
        for f in (lambda t: t.apply_(lambda v: v), lambda t: t.map_(t, lambda a, b: a)):
            with pytest.raises(RuntimeError) as ei:
                f(lib.ones(2, requires_grad=True))
            out.append(str(ei.value))
        return tuple(out)

    both(run)


def test_queries_and_views():
    def run(lib):
        x = base(lib)
        b = lib.ones(4, 2, 3)
        with pytest.raises(RuntimeError) as ei:
            lib.ones(2).adjoint()
        return (x.get_device(), x.is_conj(), x.is_neg(), x.resolve_conj() is x, x.resolve_neg() is x, x.is_pinned(),
                x.is_same_size(x.t()), x.is_same_size(x + 1), arr(x.adjoint()), tuple(b.adjoint().shape),
                x.adjoint().is_contiguous(), str(ei.value), x.const_data_ptr() == x.data_ptr())

    both(run)


@pytest.mark.skipif(cgrad.cuda.is_available(), reason="a CUDA device is usable: pin_memory copies (test_cuda.py)")
def test_pin_memory_is_refused_as_on_a_cpu_build():
    def run(lib):
        with pytest.raises(RuntimeError) as ei:
            lib.ones(2).pin_memory()
        return str(ei.value)

    both(run)


def test_as_subclass_keeps_the_graph():
    def run(lib):
        class Sub(lib.Tensor):
            pass

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        s = (a * 3).as_subclass(Sub)
        (s * s).sum().backward()
        with pytest.raises(TypeError) as ei:
            a.as_subclass(int)
        return type(s).__name__, s.requires_grad, arr(a.grad), str(ei.value)

    both(run)
    x = cgrad.ones(3)
    assert x.as_subclass(cgrad.nn.Parameter).data_ptr() == x.data_ptr()


def test_hardshrink_prelu_methods():
    def run(lib):
        x = lib.tensor([[-2.0, -0.3, 0.0], [0.4, 1.0, 3.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.25, 0.5], dtype=lib.float64, requires_grad=True)
        y = x.hardshrink(0.5) + x.t().prelu(w).t()
        y.sum().backward()
        return arr(y), arr(x.grad), arr(w.grad)

    both(run)
