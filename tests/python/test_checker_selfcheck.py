"""The checkers check themselves: the op table's gradcheck / gradgradcheck
(opinfo.core.numeric_check) and test_ops.py's comparisons with PyTorch must
fail on deliberately wrong backward and forward code, and pass on the same code
written correctly (so a failure is the bug's, not the harness's)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import cgrad
import test_ops as ops_checks
from opinfo.core import OpInfo, SampleInput, numeric_check, unary_samples


# ---------------------------------------------------------------- custom Functions: right and wrong

class Cube(cgrad.autograd.Function):
    """x**3 with a correct, twice-differentiable backward."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3 * x * x


class CubeGradOffByFactor(cgrad.autograd.Function):
    """x**3 whose backward is 1.01 times the true gradient."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3.03 * x * x


class CubeWrongSecondDerivative(cgrad.autograd.Function):
    """x**3 whose first derivative is right in value, but computed from a
    detached x: the backward graph forgets that 3x^2 depends on x, so the
    second derivative w.r.t. x is missing."""

    @staticmethod
    def forward(ctx: Any, x: Any) -> Any:
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        xd = x.detach()
        return g * 3 * xd * xd


class MulGradSwapped(cgrad.autograd.Function):
    """a * b whose backward hands each input the other input's gradient."""

    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b = ctx.saved_tensors
        return g * a, g * b


class MulRight(cgrad.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        a, b = ctx.saved_tensors
        return g * b, g * a


def _x(shape: tuple = (2, 3), seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0.5, 1.5, size=shape)


# ---------------------------------------------------------------- numeric_check itself

def test_numeric_check_passes_a_correct_backward() -> None:
    numeric_check(cgrad, Cube.apply, [_x()], [0], create_graph=False)
    numeric_check(cgrad, Cube.apply, [_x()], [0], create_graph=True)
    numeric_check(cgrad, MulRight.apply, [_x(seed=1), _x(seed=2)], [0, 1], create_graph=True)


def test_gradcheck_catches_a_backward_off_by_a_factor() -> None:
    with pytest.raises(AssertionError, match="gradcheck input 0"):
        numeric_check(cgrad, CubeGradOffByFactor.apply, [_x()], [0], create_graph=False)


def test_gradcheck_catches_swapped_input_gradients() -> None:
    with pytest.raises(AssertionError, match="gradcheck input"):
        numeric_check(cgrad, MulGradSwapped.apply, [_x(seed=1), _x(seed=2)], [0, 1], create_graph=False)


def test_gradgradcheck_catches_a_wrong_second_derivative() -> None:
    # the first derivative is right, so gradcheck passes ...
    numeric_check(cgrad, CubeWrongSecondDerivative.apply, [_x()], [0], create_graph=False)
    # ... and only the second-order check sees the missing term
    with pytest.raises(AssertionError, match="gradgradcheck input 0"):
        numeric_check(cgrad, CubeWrongSecondDerivative.apply, [_x()], [0], create_graph=True)


def test_library_gradcheck_agrees() -> None:
    """cgrad.autograd.gradcheck / gradgradcheck (the public ones) see the same bugs."""
    x = cgrad.tensor(_x().tolist(), dtype=cgrad.float64, requires_grad=True)
    assert cgrad.autograd.gradcheck(Cube.apply, (x,))
    assert cgrad.autograd.gradgradcheck(Cube.apply, (x,))
    assert not cgrad.autograd.gradcheck(CubeGradOffByFactor.apply, (x,), raise_exception=False)
    assert cgrad.autograd.gradcheck(CubeWrongSecondDerivative.apply, (x,))
    assert not cgrad.autograd.gradgradcheck(CubeWrongSecondDerivative.apply, (x,), raise_exception=False)


# ---------------------------------------------------------------- test_ops.py's checks on wrong ops

def _op(call: Callable[..., Any], **kw: Any) -> OpInfo:
    """A table entry named like a real op (so the PyTorch side is torch.<name>) whose
    cgrad side runs `call` and whose PyTorch side runs the real op."""
    return OpInfo(name="mul", sample_fn=kw.pop("sample_fn", unary_samples(0.5, 1.5)), method=False,
                  call=call, **kw)


def _cube_op(fn: Any) -> OpInfo:
    def call(lib: Any, x: Any) -> Any:
        return fn.apply(x) if lib is cgrad else x * x * x
    return _op(call)


def test_parity_checks_pass_correct_code() -> None:
    op = _cube_op(Cube)
    ops_checks.test_values_match_torch((op, "float32"))
    ops_checks.test_gradients_match_torch((op, "float64"))
    ops_checks.test_gradcheck_and_gradgradcheck((op, "float64"))


def test_gradient_parity_catches_a_wrong_backward() -> None:
    op = _cube_op(CubeGradOffByFactor)
    with pytest.raises(AssertionError, match="grad 0"):
        ops_checks.test_gradients_match_torch((op, "float64"))
    with pytest.raises(AssertionError, match="gradcheck"):
        ops_checks.test_gradcheck_and_gradgradcheck((op, "float64"))


def test_op_table_gradgradcheck_catches_a_wrong_second_derivative() -> None:
    op = _cube_op(CubeWrongSecondDerivative)
    ops_checks.test_gradients_match_torch((op, "float64"))  # first order agrees with PyTorch
    with pytest.raises(AssertionError, match="gradgradcheck"):
        ops_checks.test_gradcheck_and_gradgradcheck((op, "float64"))


def _wrong_scale(lib: Any, x: Any) -> Any:
    return x * x * (1.0001 if lib is cgrad else 1.0)          # relative error 1e-4 > rtol


def _wrong_dtype(lib: Any, x: Any) -> Any:
    return (x * x).double() if lib is cgrad else x * x        # float64 where PyTorch gives float32


def _wrong_shape(lib: Any, x: Any) -> Any:
    return (x * x).unsqueeze(0) if lib is cgrad else x * x    # an extra leading dim


def _wrong_last_element(lib: Any, x: Any) -> Any:
    y = x * x
    if lib is cgrad and y.numel() > 1:
        y = y.clone()
        y.view(-1)[-1] = 0.0                                    # one element of many
    return y


def _wrong_when_noncontiguous(lib: Any, x: Any) -> Any:
    y = x * x
    return y + 1 if (lib is cgrad and not x.is_contiguous()) else y


def _wrong_output_count(lib: Any, x: Any) -> Any:
    return (x * x, x) if lib is cgrad else x * x


@pytest.mark.parametrize("call", [_wrong_scale, _wrong_dtype, _wrong_shape, _wrong_last_element,
                                  _wrong_when_noncontiguous, _wrong_output_count],
                         ids=lambda f: f.__name__)
def test_value_parity_catches_a_wrong_forward(call: Callable[..., Any]) -> None:
    with pytest.raises(AssertionError):
        ops_checks.test_values_match_torch((_op(call), "float32"))


def test_value_parity_catches_wrong_integer_results() -> None:
    def call(lib: Any, x: Any) -> Any:
        return x * x + (1 if lib is cgrad else 0)
    op = _op(call, dtypes=("int64",), sample_fn=unary_samples(-3, 3))
    with pytest.raises(AssertionError):
        ops_checks.test_values_match_torch((op, "int64"))


def test_method_form_check_catches_a_wrong_method() -> None:
    """test_method_and_inplace_forms compares Tensor.<name> with cgrad.<name>:
    an op whose functional form is wrong differs from the (real) method."""
    def call(lib: Any, x: Any, y: Any) -> Any:
        return lib.mul(x, y) + 1
    op = OpInfo(name="mul", call=call, sample_fn=lambda dt: [SampleInput((_x((3, 4)).astype(dt), _x((3, 4), 1).astype(dt)))])
    with pytest.raises(AssertionError):
        ops_checks.test_method_and_inplace_forms((op, "float32"))
    ok = OpInfo(name="mul", sample_fn=op.sample_fn)
    ops_checks.test_method_and_inplace_forms((ok, "float32"))
