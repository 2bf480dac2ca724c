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
hardtanh_ = _C._hardtanh_
gelu = _C._gelu
softplus = _C._softplus
softsign = _C._softsign
logsigmoid = _C._logsigmoid
tanh = _C.tanh
sigmoid = _C.sigmoid


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _relu_(input) if inplace else _relu(input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
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


def _threshold(input: Tensor, thr: float, value: float, inplace: bool) -> Tensor:
    _need_tensor(input, "threshold")
    r = _C.where(input > thr, input, value)
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
    _check_lambd("softshrink", lambd)
    return _C.where(input > lambd, input - lambd, _C.where(input < -lambd, input + lambd, 0.0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    _need_tensor(input, "hardshrink")
    return _C.where((input > lambd) | (input < -lambd), input, 0.0)


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


def interpolate(input: Tensor, size: _Union[int, _Sequence[int], None] = None,
                scale_factor: _Union[float, _Sequence[float], None] = None, mode: str = "nearest",
                align_corners: _Optional[bool] = None, recompute_scale_factor: _Optional[bool] = None,
                antialias: bool = False) -> Tensor:
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
        raise NotImplementedError("interpolate: antialias=True is not supported by cgrad")
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
        raise NotImplementedError("interpolate: mode 'nearest-exact' is not supported by cgrad")
    rank = _INTERP_RANK.get(mode)
    if rank is None:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for "
                                  "the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"
                                  f" (got {mode})")
    if input.dim() != rank:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {rank}D input")
    return _C._interpolate(input, 2 if mode == "bicubic" else 1, output_size, scale_factors, align_corners)


def upsample(input: Tensor, size: _Union[int, _Sequence[int], None] = None,
             scale_factor: _Union[float, _Sequence[float], None] = None, mode: str = "nearest",
             align_corners: _Optional[bool] = None) -> Tensor:
    _warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)
