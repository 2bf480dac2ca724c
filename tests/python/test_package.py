"""The package itself: importing cgrad loads neither numpy nor torch, the
Tensor's operators are C slots (no Python frame), Tensor can be subclassed."""
import subprocess
import sys

import pytest

import torch

import cgrad


def test_import_loads_neither_numpy_nor_torch():
    code = ("import sys, cgrad\n"
            "x = cgrad.tensor([1.0, 2.0]) * 2\n"
            "repr(x)\n"
            "print(sorted(m for m in ('numpy', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_operators_are_c_slots():
    t = type(cgrad.tensor([1.0]))
    for name in ("__add__", "__radd__", "__mul__", "__sub__", "__truediv__", "__neg__", "__iadd__",
                 "__getitem__", "__setitem__", "__lt__", "__eq__", "__bool__", "__float__", "__index__"):
        assert type(getattr(t, name)).__name__ == "wrapper_descriptor", name
    # methods bound in C are builtin method descriptors
    assert type(t.add).__name__ == "method_descriptor"
    assert type(t.backward).__name__ == "method_descriptor"


def test_public_names():
    for name in ("Tensor", "tensor", "zeros", "float32", "float", "double", "long", "half", "no_grad",
                 "result_type", "promote_types", "can_cast", "is_tensor", "DtypeMismatch"):
        assert hasattr(cgrad, name), name
    assert cgrad.float is cgrad.float32 and cgrad.long is cgrad.int64
    assert str(cgrad.float32) == "cgrad.float32"
    assert cgrad.is_tensor(cgrad.zeros(1)) and not cgrad.is_tensor([1.0])
    assert isinstance(cgrad.tensor([1.0]), cgrad.Tensor)


class MyTensor(cgrad.Tensor):
    """A subclass with its own attribute and method."""

    def double_it(self):
        return self * 2


class MyTorchTensor(torch.Tensor):
    def double_it(self):
        return self * 2


def test_subclass_instances():
    m = MyTensor([1.0, 2.0])
    assert type(m) is MyTensor and isinstance(m, cgrad.Tensor)
    m.tag = "hello"  # instances have a __dict__
    assert m.tag == "hello"
    assert m.shape == (2,)
    assert m.tolist() == [1.0, 2.0]
    r = m.double_it()
    # ops on a subclass give tensors (PyTorch's __torch_function__ would keep
    # the subclass; cgrad's C ops return the base Tensor)
    assert isinstance(r, cgrad.Tensor) and r.tolist() == [2.0, 4.0]
    tm = MyTorchTensor([1.0, 2.0])
    assert isinstance(tm.double_it(), torch.Tensor)
    assert repr(m) == repr(tm).replace("MyTorchTensor", "MyTensor")


def test_subclass_autograd():
    m = MyTensor([1.0, 2.0]).requires_grad_()
    (m * m).sum().backward()
    assert m.grad.tolist() == [2.0, 4.0]


def test_tensor_identity_is_stable():
    x = cgrad.ones(2, requires_grad=True)
    (x * 3).sum().backward()
    assert x.grad is x.grad


def test_tensor_cpu_and_cuda():
    t = cgrad.ones(2)
    assert t.cpu() is t  # already on the CPU, as torch returns self
    if cgrad.cuda.is_available():
        c = t.cuda()
        assert c.is_cuda and c.cuda() is c and c.cpu().tolist() == [1.0, 1.0]
    elif cgrad.backends.cuda.is_built():  # PyTorch's CUDA build without a GPU: RuntimeError
        with pytest.raises(RuntimeError, match="cannot use device cuda:0"):
            t.cuda()
    else:  # PyTorch's CPU build
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            t.cuda()
