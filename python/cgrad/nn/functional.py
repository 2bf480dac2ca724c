"""cgrad.nn.functional: the functional forms of the layers, with torch.nn.functional's
names, arguments and defaults. Each function parses PyTorch's argument forms
(ints or tuples, 'same' / 'valid' padding, reduction strings) and calls one
engine op bound in cgrad._C."""
from __future__ import annotations

# ---------------------------------------------------------------- linear layers
from .. import _C as _C_linear

# linear(input, weight, bias=None) -> input @ weight^T + bias: the engine's
# one-GEMM op bound directly, so a call runs no Python frame.
linear = _C_linear._linear
# bilinear(input1, input2, weight, bias=None) -> x1^T A x2 + b (torch.bilinear).
bilinear = _C_linear.bilinear

# ---------------------------------------------------------------- convolution, pooling, normalization, dropout, embedding

import warnings  # noqa: E402
from typing import List, Optional, Sequence, Tuple, Union  # noqa: E402

from .. import _C  # noqa: E402
from .._tensor import Tensor  # noqa: E402
from ..amp.autocast_mode import _cast_args as _amp_args  # noqa: E402

_Ints = Union[int, Sequence[int]]
_OptInts = Union[int, Sequence[Optional[int]], None]

# The convolutions, avg_pool1d/2d and adaptive_avg_pool1d are the engine
# bindings themselves (no Python frame): they take torch.nn.functional's
# arguments (ints or sequences; padding 'same' / 'valid' for convolutions).
conv1d = _C.conv1d
conv2d = _C.conv2d
conv3d = _C.conv3d
conv_transpose1d = _C.conv_transpose1d
conv_transpose2d = _C.conv_transpose2d
conv_transpose3d = _C.conv_transpose3d
avg_pool1d = _C.avg_pool1d
avg_pool2d = _C._avg_pool2d
adaptive_avg_pool1d = _C.adaptive_avg_pool1d


def max_pool1d_with_indices(input: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None, padding: _Ints = 0,
                            dilation: _Ints = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    """1-d max pooling; returns (values, indices)."""
    return _C.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d_with_indices(input: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None, padding: _Ints = 0,
                            dilation: _Ints = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    """2-d max pooling; returns (values, indices)."""
    return _C._max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool1d(input: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None, padding: _Ints = 0,
               dilation: _Ints = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """1-d max pooling over (N, C, L) or (C, L); (values, indices) when return_indices."""
    if return_indices:
        return _C.max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: _Ints, stride: Optional[_Ints] = None, padding: _Ints = 0,
               dilation: _Ints = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """2-d max pooling over (N, C, H, W) or (C, H, W); (values, indices) when return_indices."""
    if return_indices:
        return _C._max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _C.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def _output_size(output_size: _OptInts, input: Tensor, n: int) -> _Ints:
    """Adaptive pooling's output_size with None entries taken from the input."""
    if output_size is not None and not isinstance(output_size, int) and isinstance(input, Tensor):
        # PyTorch's _list_with_default: a sequence output_size needs an input of more dims (ValueError)
        if hasattr(output_size, "__len__") and input.dim() <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
    if output_size is None or isinstance(output_size, int) or not any(o is None for o in output_size):
        return output_size  # type: ignore[return-value]
    sizes = list(output_size)
    if len(sizes) != n:
        return sizes  # type: ignore[return-value]  # the binding reports the bad length
    return [input.shape[input.dim() - n + i] if o is None else o for i, o in enumerate(sizes)]


def adaptive_avg_pool2d(input: Tensor, output_size: _OptInts) -> Tensor:
    """2-d adaptive average pooling; output_size entries may be None (= input size)."""
    return _C._adaptive_avg_pool2d(input, _output_size(output_size, input, 2))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: _Ints,
                                     return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    """1-d adaptive max pooling; returns (values, indices)."""
    return _C.adaptive_max_pool1d(input, output_size)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: _OptInts,
                                     return_indices: bool = False) -> Tuple[Tensor, Tensor]:
    """2-d adaptive max pooling; returns (values, indices)."""
    return _C._adaptive_max_pool2d(input, _output_size(output_size, input, 2))


def adaptive_max_pool1d(input: Tensor, output_size: _Ints,
                        return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """1-d adaptive max pooling; (values, indices) when return_indices."""
    out = _C.adaptive_max_pool1d(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input: Tensor, output_size: _OptInts,
                        return_indices: bool = False) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """2-d adaptive max pooling; (values, indices) when return_indices."""
    out = _C._adaptive_max_pool2d(input, _output_size(output_size, input, 2))
    return out if return_indices else out[0]


def _verify_batch_size(size: Sequence[int]) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size: Sequence[int]) -> None:
    prod = 1
    for s in size[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalization over (N, C, *); in training, updates the running stats in place."""
    if training:
        _verify_batch_size(input.shape)
        if eps <= 0.0:
            raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if input.dim() == 1 and input.numel() == 0:
        # PyTorch: an empty input gives a clone (kept in the graph), scaled by weight[0] / shifted by bias[0]
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    return _C.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def instance_norm(input: Tensor, running_mean: Optional[Tensor] = None, running_var: Optional[Tensor] = None,
                  weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Instance normalization: statistics per (sample, channel) over the spatial dims."""
    if use_input_stats:
        _verify_spatial_size(input.shape)
    return _C.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps)


def layer_norm(input: Tensor, normalized_shape: _Ints, weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-5) -> Tensor:
    """Layer normalization over the last len(normalized_shape) dims."""
    return _C.layer_norm(input, normalized_shape, weight, bias, eps)


def rms_norm(input: Tensor, normalized_shape: _Ints, weight: Optional[Tensor] = None,
             eps: Optional[float] = None) -> Tensor:
    """RMS normalization over the last len(normalized_shape) dims (eps=None: the dtype's epsilon)."""
    return _C.rms_norm(input, normalized_shape, weight, eps)


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               eps: float = 1e-5) -> Tensor:
    """Group normalization: the channels of (N, C, *) in num_groups groups."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    shape = input.shape
    _verify_batch_size([shape[0] * shape[1] // num_groups, num_groups] + list(shape[2:]))
    return _C.group_norm(input, num_groups, weight, bias, eps)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (when training)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _C.dropout_(input, p, training) if inplace else _C.dropout(input, p, training)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: keeps the mean and variance of the input."""
    _check_p(p)
    return _C.alpha_dropout_(input, p, training) if inplace else _C.alpha_dropout(input, p, training)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    if batched:
        return _C.feature_dropout_(input, p, training) if inplace else _C.feature_dropout(input, p, training)
    if inplace:  # through a batched view of input's storage
        _C.feature_dropout_(input.unsqueeze(0), p, training)
        return input
    return _C.feature_dropout(input.unsqueeze(0), p, training).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability p."""
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d exists to "
            "provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an "
            "optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, nd == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) with probability p (a 3-d input is read as (N, C, L), as torch does)."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
            "instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability p."""
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an error "
            "in a future release. To retain the behavior and silence this warning, please use dropout instead. "
            "Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a "
            "channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, nd == 5)


_SELU_ALPHA = 1.7580993408473766


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels of (N, C, *): dropped channels take SELU's negative saturation value."""
    _check_p(p)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if input.dim() < 2:
        raise RuntimeError("feature_alpha_dropout: Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        return input.mul_(0.0) if inplace else input * 0.0
    noise = input.new_empty(tuple(input.shape[:2]) + (1,) * (input.dim() - 2)).bernoulli_(1.0 - p)
    a = 1.0 / ((_SELU_ALPHA * _SELU_ALPHA * p + 1.0) * (1.0 - p)) ** 0.5
    b = (noise - 1.0) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
    noise = noise * a
    return input.mul_(noise).add_(b) if inplace else input * noise + b


def embedding(input: Tensor, weight: Tensor, padding_idx: Optional[int] = None, max_norm: Optional[float] = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of weight (V, D) picked by the integer indices in input: input.shape + (D,)."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True needs sparse gradient tensors, which cgrad does not have; "
                                  "use sparse=False (a dense gradient)")
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _C.embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    if scale_grad_by_freq and weight.requires_grad and _C.is_grad_enabled():
        # PyTorch: each row's gradient divided by how often its index occurs in this input; dividing each
        # position's output gradient by its index's count does that without copying the table
        counts = input.reshape(-1).bincount(minlength=weight.shape[0]).clamp(min=1)
        scale = counts[input].to(weight.dtype).unsqueeze(-1)
        out = _C.embedding(weight, input, padding_idx)
        out.register_hook(lambda g: g / scale)
        return out
    return _C.embedding(weight, input, padding_idx)


# ---------------------------------------------------------------- activations, losses, distances, padding, resampling, attention
# Activations bind straight to the C functions where torch's signature has no
# `inplace`; the others are one-line dispatches. Losses pass the reduction
# string to the private _C kernels, which parse it. Ops torch has no kernel
# for (prelu, glu, threshold, the shrinks, normalize, cosine_embedding_loss,
# margin_ranking_loss) are compositions of cgrad ops.
import math as _math
import warnings as _warnings
from typing import Any as _Any, List as _List, Optional as _Optional, Sequence as _Sequence, Union as _Union

from cgrad import _C
from cgrad import Tensor

_relu, _relu_, _selu, _selu_, _celu, _celu_ = _C.relu, _C.relu_, _C.selu, _C.selu_, _C.celu, _C.celu_
_relu6, _relu6_, _lrelu, _elu, _elu_ = _C._relu6, _C._relu6_, _C._leaky_relu, _C._elu, _C._elu_
_silu, _silu_, _mish, _mish_, _htanh = _C._silu, _C._silu_, _C._mish, _C._mish_, _C._hardtanh
_hsig, _hsig_, _hswish, _hswish_ = _C._hardsigmoid, _C._hardsigmoid_, _C._hardswish, _C._hardswish_

relu_ = _C.relu_
selu_ = _C.selu_
celu_ = _C.celu_
leaky_relu_ = _C._leaky_relu_
elu_ = _C._elu_
gelu = _C._gelu
softplus = _C._softplus


# Integer inputs (Note: PyTorch's CPU build): hardtanh / relu6 clamp them to the
# limits truncated to integers, keeping the dtype (uint8 refuses negative limits
# for hardtanh); softsign is x / (|x| + 1), a true division; bool is refused.
def _int_hardtanh(input: Tensor, min_val: float, max_val: float, inplace: bool, name: str) -> Tensor:
    if input.dtype == _C.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    lo, hi = int(min_val), int(max_val)
    if input.dtype == _C.uint8 and name == "hardtanh" and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return input.clamp_(lo, hi) if inplace else _C.clamp(input, lo, hi)


def _is_integral(input: _Any) -> bool:
    return isinstance(input, Tensor) and not input.is_floating_point() and not input.is_complex()


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    if _is_integral(input):
        return _int_hardtanh(input, min_val, max_val, True, "hardtanh")
    return _C._hardtanh_(input, min_val, max_val)


def softsign(input: Tensor) -> Tensor:
    if _is_integral(input):
        if input.dtype == _C.bool:
            raise NotImplementedError("softsign: \"abs_cpu\" not implemented for 'Bool'")
        return input / (input.abs() + 1)  # PyTorch's formula: 1 + |x| in the integer dtype (it wraps)
    return _C._softsign(input)
logsigmoid = _C._logsigmoid
tanh = _C.tanh
sigmoid = _C.sigmoid


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _relu_(input) if inplace else _relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    if _is_integral(input):
        return _int_hardtanh(input, 0.0, 6.0, inplace, "relu6")
    return _relu6_(input) if inplace else _relu6(input)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return leaky_relu_(input, negative_slope) if inplace else _lrelu(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _elu_(input, alpha) if inplace else _elu(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _selu_(input) if inplace else _selu(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _celu_(input, alpha) if inplace else _celu(input, alpha)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _silu_(input) if inplace else _silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _mish_(input) if inplace else _mish(input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if _is_integral(input):
        return _int_hardtanh(input, min_val, max_val, inplace, "hardtanh")
    return hardtanh_(input, min_val, max_val) if inplace else _htanh(input, min_val, max_val)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _hsig_(input) if inplace else _hsig(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _hswish_(input) if inplace else _hswish(input)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    _warnings.warn(f"Implicit dimension choice for {name} has been deprecated. "
                   "Change the call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: _Optional[int] = None, _stacklevel: int = 3, dtype: _Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _C.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: _Optional[int] = None, _stacklevel: int = 3, dtype: _Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _C.log_softmax(input, dim, dtype)


def softmin(input: Tensor, dim: _Optional[int] = None, _stacklevel: int = 3, dtype: _Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _C.softmax(-input, dim)


def _need_tensor(x: _Any, fname: str, arg: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{arg}' must be Tensor, not {type(x).__name__}")


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    _need_tensor(input, "prelu")
    _need_tensor(weight, "prelu", "weight")
    input, weight = _amp_args("lower", input, weight)
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("prelu: Not allow zero-dim input tensor.")
        if weight.dim() != 1 or input.dim() < 2 or input.shape[1] != n:
            raise RuntimeError(f"prelu: Mismatch of parameter numbers and input channel size: weight {tuple(weight.shape)}"
                               f" for input {tuple(input.shape)}")
        if input.dim() >= 2:
            weight = weight.reshape((n,) + (1,) * (input.dim() - 2))
    else:
        weight = weight.reshape(())
    return _C.where(input > 0, input, weight * input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    _need_tensor(input, "glu")
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.shape[dim]
    if size % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {dim} of input {tuple(input.shape)} "
                           f"is size {size}")
    a, b = input.chunk(2, dim)
    return a * _C.sigmoid(b)


# Note [Shrinks and threshold at NaN]: PyTorch's kernels test the condition
# that replaces an element (threshold: x <= threshold; the shrinks: -lambd <=
# x <= lambd), so a NaN, for which every comparison is false, passes through
# unchanged, and so does its gradient. The where() calls below test the same
# conditions. softshrink's zeros are x * 0, as PyTorch's (-0.0 for a negative
# x); its kept branch x - lambd * sign(x) has the gradient 1 (sign's is 0).


def _torch_type_name(t: Tensor) -> str:
    """'Long' for an int64 tensor: the dtype as PyTorch's kernel errors name it."""
    return t.type().split(".")[-1][:-len("Tensor")]


def _float_kernel_only(input: Tensor, kernel: str) -> None:
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_torch_type_name(input)}\'')


def _threshold(input: Tensor, thr: float, value: float, inplace: bool) -> Tensor:
    _need_tensor(input, "threshold")
    if not input.dtype.is_floating_point:  # PyTorch converts both numbers to the input's dtype
        thr, value = _math.trunc(thr), _math.trunc(value)
    r = _C.where(input <= thr, value, input)  # Note [Shrinks and threshold at NaN]
    if not inplace:
        return r
    return input.copy_(r)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return _threshold(input, threshold, value, inplace)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _threshold(input, threshold, value, True)


def tanhshrink(input: Tensor) -> Tensor:
    return input - _C.tanh(input)


def _check_lambd(fname: str, lambd: float) -> None:
    if lambd < 0:
        raise RuntimeError(f"{fname}: lambda must be greater or equal to 0, but found to be {lambd}.")


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _need_tensor(input, "softshrink")
    _float_kernel_only(input, "softshrink_check")
    _check_lambd("softshrink", lambd)
    # Note [Shrinks and threshold at NaN]
    return _C.where(_C.abs(input) <= lambd, input * 0, input - lambd * _C.sign(input))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _need_tensor(input, "hardshrink")
    _float_kernel_only(input, "hardshrink_cpu")
    return _C.where((input >= -lambd) & (input <= lambd), 0.0, input)  # Note [Shrinks and threshold at NaN]


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: _Optional[Tensor] = None) -> Tensor:
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _C.div(input, denom, out=out)


# ---------------------------------------------------------------- losses

def _legacy_get_string(size_average: _Optional[bool], reduce: _Optional[bool], emit_warning: bool = True) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        _warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                       stacklevel=3)
    return ret


def _reduce(loss: Tensor, reduction: str, mean_divisor: _Optional[Tensor] = None) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / mean_divisor if mean_divisor is not None else loss.mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _warn_size(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        _warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                       "This will likely lead to incorrect results due to broadcasting. "
                       "Please ensure they have the same size.", stacklevel=3)


def cross_entropy(input: Tensor, target: Tensor, weight: _Optional[Tensor] = None, size_average: _Optional[bool] = None,
                  ignore_index: int = -100, reduce: _Optional[bool] = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _C._cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing)


def nll_loss(input: Tensor, target: Tensor, weight: _Optional[Tensor] = None, size_average: _Optional[bool] = None,
             ignore_index: int = -100, reduce: _Optional[bool] = None, reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _C._nll_loss(input, target, weight, reduction, ignore_index)


def _weighted_pointwise(fname: str, kernel: _Any, input: Tensor, target: Tensor, reduction: str, weight: Tensor,
                        divide_by_weight: bool, *extra: float) -> Tensor:
    if weight.shape != input.shape:
        raise ValueError(f"{fname}: Weights and input must have the same size, got weight {tuple(weight.shape)} and "
                         f"input {tuple(input.shape)}.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{fname}: Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    loss = kernel(input, target, "none", *extra) * weight
    return _reduce(loss, reduction, weight.sum() if divide_by_weight else None)


def mse_loss(input: Tensor, target: Tensor, size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
             reduction: str = "mean", weight: _Optional[Tensor] = None) -> Tensor:
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if weight is not None:
        return _weighted_pointwise("mse_loss", _C._mse_loss, input, target, reduction, weight, True)
    return _C._mse_loss(input, target, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
            reduction: str = "mean", weight: _Optional[Tensor] = None) -> Tensor:
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if weight is not None:
        return _weighted_pointwise("l1_loss", _C._l1_loss, input, target, reduction, weight, True)
    return _C._l1_loss(input, target, reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    _warn_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return _C._smooth_l1_loss(input, target, reduction, beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: _Optional[Tensor] = None) -> Tensor:
    _warn_size(input, target)
    if weight is not None:
        return _weighted_pointwise("huber_loss", _C._huber_loss, input, target, reduction, weight, False, delta)
    return _C._huber_loss(input, target, reduction, delta)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: _Optional[Tensor] = None,
                         size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
                         reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"binary_cross_entropy: Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    return _C._binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: _Optional[Tensor] = None,
                                     size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
                                     reduction: str = "mean", pos_weight: _Optional[Tensor] = None) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"binary_cross_entropy_with_logits: Target size ({target.shape}) must be the same as input size ({input.shape})")
    return _C._binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    elif reduction == "mean":
        _warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                       "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                       "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                       stacklevel=2)
    if reduction == "batchmean":
        r = _C._kl_div(input, target, "sum", log_target=log_target)
        return r / input.shape[0] if input.dim() != 0 else r
    return _C._kl_div(input, target, reduction, log_target=log_target)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
                          reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    input1, input2, target = _amp_args("fp32", input1, input2, target)
    nd = input1.dim()
    if nd not in (1, 2) or input2.dim() != nd or target.dim() != nd - 1:
        raise RuntimeError(f"cosine_embedding_loss: expected 1-D / 2-D inputs with a target of one dim less, got "
                           f"{tuple(input1.shape)}, {tuple(input2.shape)} and target {tuple(target.shape)}")
    # torch's formula: EPSILON 1e-12 inside the squared magnitudes
    prod = (input1 * input2).sum(-1)
    mag = ((input1 * input1).sum(-1) + 1e-12) * ((input2 * input2).sum(-1) + 1e-12)
    cos = prod / mag.sqrt()
    zero = _C.zeros_like(cos)
    pos = _C.where(target == 1, 1.0 - cos, zero)
    neg = _C.where(target == -1, (cos - margin).clamp_min(0.0), zero)
    return _reduce(pos + neg, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: _Optional[bool] = None, reduce: _Optional[bool] = None,
                        reduction: str = "mean") -> Tensor:
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    input1, input2, target = _amp_args("fp32", input1, input2, target)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0.0), reduction)


cosine_similarity = _C.cosine_similarity
pairwise_distance = _C.pairwise_distance

# ---------------------------------------------------------------- padding, resampling, attention

pad = _C._pad
pixel_shuffle = _C.pixel_shuffle
pixel_unshuffle = _C.pixel_unshuffle
one_hot = _C._one_hot
scaled_dot_product_attention = _C._scaled_dot_product_attention

_INTERP_RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _interp_dtype_check(input: Tensor, mode: str, dim: int, antialias: bool) -> None:
    """PyTorch's CPU kernels resample floating dtypes, and uint8 in nearest / nearest-exact and in 4-D bilinear /
    bicubic (antialiased or not); anything else raises NotImplementedError naming the kernel that refused it."""
    if input.is_floating_point() or (input.dtype == _C.uint8 and (mode in ("nearest", "nearest-exact", "bicubic")
                                                                  or (mode == "bilinear" and dim == 2))):
        return
    if antialias:
        kernel = "compute_index_ranges_weights"
    elif mode == "area":
        kernel = "adaptive_avg_pool3d_cpu" if dim == 3 else "adaptive_avg_pool2d"
    elif mode in ("nearest", "nearest-exact"):
        kernel = "upsample_nearest2d_channels_last" if dim == 2 else "compute_indices_weights_nearest"
    elif mode == "bilinear" and dim == 2:
        kernel = "upsample_bilinear2d_channels_last"
    elif mode == "bicubic":
        kernel = "compute_indices_weights_cubic"
    else:
        kernel = "compute_indices_weights_linear"
    raise NotImplementedError(f'"{kernel}" not implemented for \'{_torch_type_name(input)}\'')


def _interp_layout(input: Tensor, out: Tensor) -> Tensor:
    """PyTorch allocates interpolate's output in the input's suggested memory format: channels-last in, out."""
    if input.dim() in (4, 5) and not input.is_contiguous():
        fmt = _C.channels_last if input.dim() == 4 else _C.channels_last_3d
        if input.is_contiguous(memory_format=fmt):
            return out.contiguous(memory_format=fmt)
    return out


def interpolate(input: Tensor, size: _Union[int, _Sequence[int], None] = None,
                scale_factor: _Union[float, _Sequence[float], None] = None, mode: str = "nearest",
                align_corners: _Optional[bool] = None, recompute_scale_factor: _Optional[bool] = None,
                antialias: bool = False) -> Tensor:
    return _interp_layout(input, _interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                              antialias))


def _interpolate(input: Tensor, size: _Union[int, _Sequence[int], None], scale_factor: _Union[float, _Sequence[float], None],
                 mode: str, align_corners: _Optional[bool], recompute_scale_factor: _Optional[bool],
                 antialias: bool) -> Tensor:
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scale_factors: _Optional[_List[float]] = None
    output_size: _Optional[_List[int]] = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input "
                                 f"with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                                 "(o1, o2, ...,oK) format.")
            if not all(isinstance(s, int) or (isinstance(s, Tensor) and not s.is_floating_point()) for s in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and scale_factor of "
                                 f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                                 "and scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor and scale_factors is not None:
        output_size = [int(_math.floor(float(input.shape[i + 2]) * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires "
                             "a 4-D tensor as input")
        _interp_dtype_check(input, mode, dim, True)
        return _interpolate_aa(input, output_size, scale_factors, mode, bool(align_corners))
    if 1 <= dim <= 3 and mode in ("nearest", "nearest-exact", "area"):
        _interp_dtype_check(input, mode, dim, False)
    if dim < 1 or dim > 3:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
                                  f" (got {mode})")
    if mode == "nearest":
        return _C._interpolate(input, 0, output_size, scale_factors, False)
    if mode == "area":
        pool = globals().get(f"adaptive_avg_pool{dim}d")
        if pool is None:
            raise NotImplementedError(f"interpolate: mode 'area' needs adaptive_avg_pool{dim}d")
        return pool(input, output_size)
    if mode == "nearest-exact":
        # source index floor((dst + 0.5) * scale) (the product rounded to float32, as torch's kernel does),
        # scale = 1 / scale_factor when one is used, else in / out in float32; clamped to in - 1
        if output_size is None:
            output_size = [int(_math.floor(float(input.shape[i + 2]) * scale_factors[i])) for i in range(dim)]
        out = input
        for i in range(dim):
            size_in, size_out = int(input.shape[i + 2]), int(output_size[i])
            if scale_factors is not None and scale_factors[i] > 0:
                scale = _C.tensor(1.0 / scale_factors[i], dtype=_C.float32)
            else:
                scale = _C.tensor(float(size_in), dtype=_C.float32) / float(size_out)
            dst = _C.arange(size_out, dtype=_C.float64) + 0.5
            src = (dst * scale.to(_C.float64)).to(_C.float32).floor().to(_C.int64).clamp(max=max(size_in - 1, 0))
            out = out.index_select(i + 2, src)
        return out
    rank = _INTERP_RANK.get(mode)
    if rank is None:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
                                  f" (got {mode})")
    if input.dim() != rank:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {rank}D input")
    _interp_dtype_check(input, mode, dim, False)
    return _C._interpolate(input, 2 if mode == "bicubic" else 1, output_size, scale_factors, align_corners)


def _aa_weights(size_in: int, size_out: int, scale_factor: _Optional[float], align_corners: bool, cubic: bool
                ) -> _List[_List[float]]:
    """Note [Antialiased interpolation]: PyTorch's (and PIL's) antialiased resampling along one dim, as an
    (out, in) matrix. scale = in / out (1 / scale_factor when given; (in - 1) / (out - 1) with
    align_corners); the filter (triangle, or Keys' cubic with a = -0.5) is stretched by scale when
    downsampling, so each output averages every input it covers: output i weighs the inputs j in
    [center - support + 0.5, center + support + 0.5), center = scale (i + 0.5), by
    filter((j - center + 0.5) / max(scale, 1)), normalised to sum 1."""
    if align_corners:
        scale = (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
    elif scale_factor is not None and scale_factor > 0:
        scale = 1.0 / scale_factor
    else:
        scale = size_in / size_out
    half = 2.0 if cubic else 1.0
    support = half * scale if scale >= 1.0 else half
    invscale = 1.0 / scale if scale >= 1.0 else 1.0

    def filt(x: float) -> float:
        x = abs(x)
        if not cubic:
            return 1.0 - x if x < 1.0 else 0.0
        a = -0.5
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0

    rows = []
    for i in range(size_out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), size_in)
        w = [filt((j - center + 0.5) * invscale) for j in range(lo, hi)]
        total = sum(w)
        row = [0.0] * size_in
        for j, v in zip(range(lo, hi), w):
            row[j] = v / total if total != 0.0 else v
        rows.append(row)
    return rows


def _interpolate_aa(input: Tensor, output_size: _Optional[_List[int]], scale_factors: _Optional[_List[float]],
                    mode: str, align_corners: bool) -> Tensor:
    """interpolate(antialias=True) of a 4-D floating input (Note [Antialiased interpolation]): one weight matrix
    per spatial dim, applied as two matmuls (differentiable as they are)."""
    if mode == "lanczos":
        raise NotImplementedError("interpolate(antialias=True): mode 'lanczos'")
    sizes = [int(input.shape[2]), int(input.shape[3])]
    if output_size is None:
        output_size = [int(_math.floor(sizes[i] * scale_factors[i])) for i in range(2)]  # type: ignore[index]
    if any(o <= 0 for o in output_size) or any(v <= 0 for v in sizes):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input (H: {sizes[0]}, W: "
                           f"{sizes[1]}) output (H: {output_size[0]}, W: {output_size[1]})")
    if input.dtype == _C.uint8:  # the fixed-point passes in C (Note [uint8 resampling])
        return _C._interpolate(input, 2 if mode == "bicubic" else 1, None if scale_factors else output_size,
                               scale_factors, align_corners, antialias=True)
    cdt = input.dtype if input.dtype in (_C.float32, _C.float64) else _C.float32
    mats = [_C.tensor(_aa_weights(sizes[i], output_size[i], scale_factors[i] if scale_factors else None,
                                  align_corners, mode == "bicubic"), dtype=cdt) for i in range(2)]
    x = input.to(cdt)
    y = _C.matmul(_C.matmul(mats[0], x), mats[1].t())  # (out_h, in_h) @ (.., in_h, in_w) @ (in_w, out_w)
    return y.to(input.dtype)


def upsample(input: Tensor, size: _Union[int, _Sequence[int], None] = None,
             scale_factor: _Union[float, _Sequence[float], None] = None, mode: str = "nearest",
             align_corners: _Optional[bool] = None) -> Tensor:
    _warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


from . import _functional_extra, _functional_spatial  # noqa: E402 - the composed functions, last
for _m in (_functional_extra, _functional_spatial):
    globals().update({_n: getattr(_m, _n) for _n in _m.__all__})
del _m
