"""cgrad.nn.functional: the functional forms of the layers, with torch.nn.functional's
names, arguments and defaults. Each function parses PyTorch's argument forms
(ints or tuples, 'same' / 'valid' padding, reduction strings) and calls one
engine op bound in cgrad._C."""
from __future__ import annotations

# ---------------------------------------------------------------- linear layers

# ---------------------------------------------------------------- convolution, pooling, normalization, dropout, embedding

import warnings  # noqa: E402
from typing import List, Optional, Sequence, Tuple, Union  # noqa: E402

from .. import _C  # noqa: E402
from .._tensor import Tensor  # noqa: E402

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
    if input.dim() < 2:
        raise RuntimeError("feature_alpha_dropout: Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0.0 or input.numel() == 0:
        return input
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
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: scale_grad_by_freq=True is not supported by cgrad")
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported by cgrad")
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
    return _C.embedding(weight, input, padding_idx)


# ---------------------------------------------------------------- activations, losses, distances, padding, resampling, attention
