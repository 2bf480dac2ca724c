"""The legacy constructors (cgrad.Tensor(...), cgrad.FloatTensor ... BoolTensor),
isinstance against them, Tensor.type() names and conversions, and the default
device / dtype settings, each compared with PyTorch."""
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch

import cgrad

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "BoolTensor"]
DTYPES = ["float32", "float64", "float16", "bfloat16", "uint8", "int8", "int16", "int32", "int64", "bool"]


def _same(c, t):
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(c.shape) == tuple(t.shape)


def _same_values(c, t):
    _same(c, t)
    assert c.float().tolist() == t.float().tolist()


@pytest.mark.parametrize("name", TYPES)
def test_typed_constructor_from_sizes_data_and_nothing(name):
    C, T = getattr(cgrad, name), getattr(torch, name)
    for args in [(), (3,), (2, 3), (0, 4)]:
        _same(C(*args), T(*args))
    _same(C(cgrad.Size([2, 2])), T(torch.Size([2, 2])))
    for data in ([1, 0, 2], [[1.5, 2.0], [0.0, 3.0]], (1, 2), [True, False], [], np.array([1.0, 2.0])):
        _same_values(C(data), T(data))
    assert type(C([1])) is cgrad.Tensor and C.__name__ == name and repr(C) == f"<class 'cgrad.{name}'>"
    assert C([1], device="cpu").device.type == "cpu"


@pytest.mark.parametrize("name,dtype", list(zip(TYPES, DTYPES)))
def test_isinstance_holds_exactly_as_in_torch(name, dtype):
    C, T = getattr(cgrad, name), getattr(torch, name)
    assert C.dtype == getattr(cgrad, dtype) and not issubclass(C, cgrad.Tensor) and not C.is_cuda
    for d in DTYPES:
        ct, tt = cgrad.zeros(2, dtype=getattr(cgrad, d)), torch.zeros(2, dtype=getattr(torch, d))
        assert isinstance(ct, C) == isinstance(tt, T), (name, d)
    assert isinstance(cgrad.zeros(2, dtype=C.dtype, device="meta"), C) == \
        isinstance(torch.zeros(2, dtype=getattr(torch, dtype), device="meta"), T) == False  # noqa: E712
    assert not isinstance([1.0], C) and not isinstance(3, C)
    assert pickle.loads(pickle.dumps(C)) is C


def test_a_tensor_argument_gives_an_alias():
    x = cgrad.arange(6.0).reshape(2, 3).t()
    for make in (cgrad.FloatTensor, cgrad.Tensor):
        y = make(x)
        assert y is not x and y.data_ptr() == x.data_ptr() and y.stride() == x.stride()
        y[0, 0] = 42.0
        assert x[0, 0].item() == 42.0
    i = cgrad.arange(3)
    assert cgrad.Tensor(i).dtype == cgrad.int64 and torch.Tensor(torch.arange(3)).dtype == torch.int64  # dtype kept
    assert cgrad.LongTensor(i).data_ptr() == i.data_ptr()
    g = cgrad.ones(2, requires_grad=True)
    a, ta = cgrad.FloatTensor(g), torch.FloatTensor(torch.ones(2, requires_grad=True))
    assert a.requires_grad == ta.requires_grad and (a.grad_fn is None) == (ta.grad_fn is None)


def test_data_conversion_matches_torch():
    for name, data in [("LongTensor", [1.7, -2.7]), ("BoolTensor", [0, 2, 0.5]), ("IntTensor", [[1, 2], [3, 4]]),
                       ("ByteTensor", [0, 255]), ("HalfTensor", [0.1, 65504.0]), ("Tensor", [1, 2]),
                       ("Tensor", [True, False]), ("DoubleTensor", [1e-300])]:
        _same_values(getattr(cgrad, name)(data), getattr(torch, name)(data))


def test_bad_arguments_raise_the_same_exception_class():
    cases = [((2.5,), {}), (("ab",), {}), ((True,), {}), ((-1,), {}), ((2, -3), {}), (([[1, 2], [3]],), {}),
             ((2, "a"), {}),
             ((2,), {"device": "meta"}), ((2,), {"requires_grad": True})]
    for args, kwargs in cases:
        for name in ("Tensor", "FloatTensor"):
            with pytest.raises(Exception) as t_info:
                getattr(torch, name)(*args, **kwargs)
            with pytest.raises(type(t_info.value)):
                getattr(cgrad, name)(*args, **kwargs)
    with pytest.raises(TypeError):
        torch.Tensor([1, 2], dtype=torch.float64)
    with pytest.raises(TypeError, match="Tensor.*unexpected keyword argument 'dtype'"):
        cgrad.Tensor([1, 2], dtype=cgrad.float64)
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.arange(3))
    with pytest.raises(TypeError, match="FloatTensor.*dtype cgrad.float32.*int64"):
        cgrad.FloatTensor(cgrad.arange(3))


def test_tensor_legacy_constructor_follows_the_default_dtype():
    try:
        cgrad.set_default_dtype(cgrad.float64)
        torch.set_default_dtype(torch.float64)
        _same(cgrad.Tensor([1.0]), torch.Tensor([1.0]))
        _same(cgrad.Tensor(2), torch.Tensor(2))
        _same(cgrad.FloatTensor([1.0]), torch.FloatTensor([1.0]))  # a typed class keeps its dtype
        assert cgrad.Tensor(2).type() == torch.Tensor(2).type() == "torch.DoubleTensor"
    finally:
        cgrad.set_default_dtype(cgrad.float32)
        torch.set_default_dtype(torch.float32)


def test_tensor_subclass_through_the_legacy_constructor():
    class Mine(cgrad.Tensor):
        pass

    class Theirs(torch.Tensor):
        pass

    assert type(Mine([1, 2])) is Mine and type(Theirs([1, 2])) is Theirs
    for lib, cls in ((cgrad, Mine), (torch, Theirs)):  # the Parameter-style constructor libraries use
        base = lib.ones(2)
        made = lib.Tensor._make_subclass(cls, base, True)
        assert type(made) is cls and made.requires_grad and made.data_ptr() == base.data_ptr()
        assert not lib.Tensor._make_subclass(cls, base).requires_grad
    _same_values(Mine([1, 2]), Theirs([1, 2]))
    _same(Mine(2, 3), Theirs(2, 3))


@pytest.mark.parametrize("dtype", DTYPES + ["uint16", "uint32", "uint64"])
def test_type_names_match_torch(dtype):
    c, t = cgrad.zeros(1, dtype=getattr(cgrad, dtype)), torch.zeros(1, dtype=getattr(torch, dtype))
    assert c.type() == t.type()
    assert cgrad.zeros(1, dtype=getattr(cgrad, dtype), device="meta").type() == \
        torch.zeros(1, dtype=getattr(torch, dtype), device="meta").type()


def test_type_converts_from_names_classes_and_dtypes():
    x, tx = cgrad.ones(2), torch.ones(2)
    for name in TYPES:
        _same(x.type(getattr(cgrad, name)), tx.type(getattr(torch, name)))
        _same(x.type(f"torch.{name}"), tx.type(f"torch.{name}"))
    assert x.type(cgrad.FloatTensor) is x and tx.type(torch.FloatTensor) is tx
    assert x.type(cgrad.float64).dtype == cgrad.float64
    assert x.type(dtype="torch.IntTensor").dtype == cgrad.int32
    for bad, exc in [("foo", ValueError), ("torch.FooTensor", ValueError), (3, TypeError),
                     ("torch.cuda.FloatTensor", RuntimeError)]:
        with pytest.raises(exc):
            tx.type(bad)
        if "cuda" in str(bad) and cgrad.cuda.is_available():  # a CUDA type moves the tensor there
            y = x.type(bad)
            assert y.is_cuda and y.dtype == cgrad.float32 and y.type("torch.DoubleTensor").device.type == "cpu"
            continue
        with pytest.raises(exc):
            x.type(bad)


# ---------------------------------------------------------------- default device and dtype

def test_default_device_is_cpu():
    assert str(cgrad.get_default_device()) == str(torch.get_default_device()) == "cpu"
    assert isinstance(cgrad.get_default_device(), cgrad.device)
    for d in ("cpu", None, cgrad.device("cpu"), "cpu:0"):
        cgrad.set_default_device(d)
        torch.set_default_device(d if not isinstance(d, cgrad.device) else torch.device("cpu"))
        assert cgrad.get_default_device().type == "cpu" and cgrad.ones(2).device.type == "cpu"
    torch.set_default_device(None)


def test_default_device_meta_as_torch():
    try:
        cgrad.set_default_device("meta")
        torch.set_default_device("meta")
        assert str(cgrad.get_default_device()) == str(torch.get_default_device()) == "meta"
        for name, args in [("zeros", (2,)), ("ones", (2, 3)), ("empty", (1,)), ("full", ((2,), 1.5)), ("arange", (3,)),
                           ("linspace", (0, 1, 5)), ("eye", (2,)), ("rand", (2,)), ("randn", (2,)),
                           ("randint", (0, 5, (3,))), ("randperm", (4,)), ("tensor", ([1.0, 2.0],))]:
            c, t = getattr(cgrad, name)(*args), getattr(torch, name)(*args)
            assert c.device.type == t.device.type == "meta", name
            _same(c, t)
        assert cgrad.zeros(2, device="cpu").device.type == "cpu"
        assert cgrad.Tensor(2).device.type == torch.Tensor(2).device.type == "cpu"  # legacy constructors: cpu
        x = cgrad.zeros(2, device="cpu")
        assert cgrad.rand_like(x).device.type == "cpu" and (x + 1).device.type == "cpu"
    finally:
        cgrad.set_default_device(None)
        torch.set_default_device(None)
    assert cgrad.ones(1).device.type == "cpu"


UNAVAILABLE = ["cuda", "cuda:1", "mps", "xla"]
REFUSED = ["foo", "CPU", 3]


@pytest.fixture(scope="module")
def torch_default_device_behaviour():
    """{device: (what set_default_device raised, what torch.tensor([1.0]) then raised)}, as exception class
    names ('-' for nothing), each tried in a fresh process (torch's device context keeps state after a failure)."""
    code = ("import sys, torch\nd = eval(sys.argv[1])\nout = []\n"
            "for f in (lambda: torch.set_default_device(d), lambda: torch.tensor([1.0])):\n"
            "    try:\n        f()\n        out.append('-')\n"
            "    except BaseException as e:\n        out.append(type(e).__name__)\nprint(*out)\n")
    return {d: tuple(subprocess.run([sys.executable, "-c", code, repr(d)], capture_output=True, text=True,
                                    timeout=120).stdout.split()) for d in UNAVAILABLE + REFUSED}


@pytest.mark.parametrize("device", UNAVAILABLE)
def test_default_device_without_a_backend_fails_at_the_first_tensor(device, torch_default_device_behaviour):
    at_set, at_tensor = torch_default_device_behaviour[device]
    assert at_set == "-" and at_tensor in ("AssertionError", "RuntimeError")
    expected = AssertionError if at_tensor == "AssertionError" else RuntimeError
    cuda = device.startswith("cuda")
    if cuda and cgrad.cuda.is_available():
        pytest.skip("a CUDA device is usable here: test_cuda.py covers the default device on it")
    if cuda and cgrad.backends.cuda.is_built():
        expected = RuntimeError  # PyTorch's CUDA build without a GPU (the torch here is the CPU build)
    try:
        cgrad.set_default_device(device)
        for make in (lambda: cgrad.ones(2), lambda: cgrad.tensor([1.0]), lambda: cgrad.arange(3),
                     lambda: cgrad.rand(2), lambda: cgrad.full((1,), 2.0)):
            with pytest.raises(expected) as info:
                make()
            assert type(info.value) is expected
        if device == "cuda:1":  # a device with an index is returned as it is (PyTorch's get_default_device)
            assert cgrad.get_default_device() == cgrad.device("cuda", 1)
        else:
            with pytest.raises(expected):
                cgrad.get_default_device()
        assert cgrad.ones(2, device="cpu").device.type == "cpu" and cgrad.Tensor(2).device.type == "cpu"
    finally:
        cgrad.set_default_device(None)
    assert cgrad.ones(1).device.type == "cpu" and cgrad.get_default_device().type == "cpu"


@pytest.mark.parametrize("device", REFUSED)
def test_default_device_refusals_match_torch(device, torch_default_device_behaviour):
    at_set, _ = torch_default_device_behaviour[device]
    assert at_set == "RuntimeError"
    if isinstance(device, int) and cgrad.cuda.is_available():
        pytest.skip("an int is the accelerator's device: cuda:N, with a GPU usable here")
    with pytest.raises(RuntimeError):
        cgrad.set_default_device(device)
    with pytest.raises(TypeError):
        cgrad.set_default_device(2.5)
    assert cgrad.get_default_device().type == "cpu" and cgrad.ones(1).device.type == "cpu"


def test_default_dtype_matches_torch():
    assert str(cgrad.get_default_dtype()) == "cgrad.float32" and torch.get_default_dtype() == torch.float32
    try:
        for d in ("float64", "float16", "bfloat16", "float32"):
            cgrad.set_default_dtype(getattr(cgrad, d))
            torch.set_default_dtype(getattr(torch, d))
            assert str(cgrad.get_default_dtype()) == f"cgrad.{d}"
            _same(cgrad.tensor([1.5]), torch.tensor([1.5]))
            _same(cgrad.zeros(2), torch.zeros(2))
            _same(cgrad.arange(3) / 2, torch.arange(3) / 2)
    finally:
        cgrad.set_default_dtype(cgrad.float32)
        torch.set_default_dtype(torch.float32)
    for bad in ("int32", "complex64"):
        with pytest.raises(TypeError):
            torch.set_default_dtype(getattr(torch, bad))
        if hasattr(cgrad, bad):
            with pytest.raises(TypeError):
                cgrad.set_default_dtype(getattr(cgrad, bad))
    for bad in (float, "float32", None):
        with pytest.raises(TypeError):
            torch.set_default_dtype(bad)
        with pytest.raises(TypeError, match="set_default_dtype"):
            cgrad.set_default_dtype(bad)
    assert cgrad.get_default_dtype() == cgrad.float32
