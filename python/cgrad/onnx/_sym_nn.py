"""Symbolics of cgrad.nn.functional: linear, convolutions, pools, norms
(inference form), activations, embedding, dropout (identity when not
training), padding, interpolation, scaled_dot_product_attention."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

import numpy as np

from .. import _C
from ._registry import register


def _tuple(v: Any, n: int) -> List[int]:
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v] if len(v) == n else [int(v[0])] * n
    return [int(v)] * n


def _ones(ctx: Any, n: int, dtype: Any, value: float = 1.0) -> str:
    return ctx.g.const(np.full((n,), value, dtype=np.float32).astype(_np(dtype)))


def _np(dtype: Any) -> Any:
    from ._graph import np_dtype
    return np_dtype(dtype)


# ---------------------------------------------------------------------- linear
@register("linear", "nn.functional.linear")
def linear(ctx: Any, out: Any, input: Any, weight: Any, bias: Any = None) -> str:
    y = ctx.g.op("MatMul", ctx.v(input), ctx.g.op("Transpose", ctx.v(weight), perm=[1, 0]))
    return y if bias is None else ctx.g.op("Add", y, ctx.v(bias))


@register("bilinear")
def bilinear(ctx: Any, out: Any, input1: Any, input2: Any, weight: Any, bias: Any = None) -> str:
    # y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j]
    o, i, j = weight.shape
    x1 = ctx.v(input1)
    w = ctx.g.op("Reshape", ctx.g.op("Transpose", ctx.v(weight), perm=[1, 0, 2]), ctx.g.ints([i, o * j]))
    t = ctx.g.op("Reshape", ctx.g.op("MatMul", x1, w), reshape_like(ctx, input1, [o, j]))
    y = ctx.g.squeeze(ctx.g.op("MatMul", t, ctx.g.unsqueeze(ctx.v(input2), [-1])), [-1])
    return y if bias is None else ctx.g.op("Add", y, ctx.v(bias))


def reshape_like(ctx: Any, input: Any, tail: Sequence[int]) -> str:
    """Target: input's leading dims (all but the last, copied) followed by tail."""
    return ctx.g.ints([0] * (input.dim() - 1) + list(tail))


# ---------------------------------------------------------------------- convolutions
def _conv_pads(padding: Any, k: List[int], dilation: List[int], n: int) -> List[int]:
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * 2 * n
        if padding == "same":
            total = [d * (kk - 1) for d, kk in zip(dilation, k)]
            return [t // 2 for t in total] + [t - t // 2 for t in total]
        raise ValueError(f"Invalid padding string {padding!r}")
    p = _tuple(padding, n)
    return p + p


def conv(ctx: Any, input: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> str:
    n = weight.dim() - 2
    k = list(weight.shape[2:])
    dil = _tuple(dilation, n)
    x = ctx.v(input)
    unbatched = input.dim() == n + 1
    if unbatched:
        x = ctx.g.unsqueeze(x, [0])
    inputs = [x, ctx.v(weight)] + ([ctx.v(bias)] if bias is not None else [])
    y = ctx.g.op("Conv", *inputs, kernel_shape=k, strides=_tuple(stride, n), pads=_conv_pads(padding, k, dil, n),
                 dilations=dil, group=int(groups))
    return ctx.g.squeeze(y, [0]) if unbatched else y


@register("conv1d", "conv2d", "conv3d")
def _conv(ctx: Any, out: Any, input: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
          dilation: Any = 1, groups: int = 1) -> str:
    return conv(ctx, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose(ctx: Any, out: Any, input: Any, weight: Any, bias: Any, stride: Any, padding: Any,
                   output_padding: Any, groups: int, dilation: Any) -> str:
    n = weight.dim() - 2
    k = list(weight.shape[2:])
    s, p, d = _tuple(stride, n), _tuple(padding, n), _tuple(dilation, n)
    unbatched = input.dim() == n + 1
    x = ctx.v(input)
    if unbatched:
        x = ctx.g.unsqueeze(x, [0])
    spatial_in = list(input.shape[-n:])
    spatial_out = list(out.shape[-n:])
    op = [o - ((i - 1) * ss - 2 * pp + dd * (kk - 1) + 1)
          for o, i, ss, pp, dd, kk in zip(spatial_out, spatial_in, s, p, d, k)]
    inputs = [x, ctx.v(weight)] + ([ctx.v(bias)] if bias is not None else [])
    y = ctx.g.op("ConvTranspose", *inputs, kernel_shape=k, strides=s, pads=p + p, dilations=d, group=int(groups),
                 output_padding=op)
    return ctx.g.squeeze(y, [0]) if unbatched else y


@register("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")
def _conv_transpose(ctx: Any, out: Any, input: Any, weight: Any, bias: Any = None, stride: Any = 1,
                    padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> str:
    return conv_transpose(ctx, out, input, weight, bias, stride, padding, output_padding, groups, dilation)


# ---------------------------------------------------------------------- pools
def _pool_prep(ctx: Any, input: Any, n: int) -> Any:
    x = ctx.v(input)
    unbatched = input.dim() == n + 1
    return (ctx.g.unsqueeze(x, [0]), True) if unbatched else (x, False)


def max_pool(ctx: Any, input: Any, n: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
             ceil_mode: bool, return_indices: bool) -> str:
    if return_indices:
        raise NotImplementedError("cgrad.onnx.export: max pooling with return_indices=True")
    k = _tuple(kernel_size, n)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _tuple(stride, n)
    p = _tuple(padding, n)
    x, unb = _pool_prep(ctx, input, n)
    y = ctx.g.op("MaxPool", x, kernel_shape=k, strides=s, pads=p + p, dilations=_tuple(dilation, n),
                 ceil_mode=1 if ceil_mode else 0)
    return ctx.g.squeeze(y, [0]) if unb else y


def avg_pool(ctx: Any, input: Any, n: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
             count_include_pad: bool, divisor_override: Any) -> str:
    if divisor_override is not None:
        raise NotImplementedError("cgrad.onnx.export: avg pooling with divisor_override")
    k = _tuple(kernel_size, n)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _tuple(stride, n)
    p = _tuple(padding, n)
    x, unb = _pool_prep(ctx, input, n)
    y = ctx.g.op("AveragePool", x, kernel_shape=k, strides=s, pads=p + p, ceil_mode=1 if ceil_mode else 0,
                 count_include_pad=1 if count_include_pad else 0)
    return ctx.g.squeeze(y, [0]) if unb else y


@register("max_pool1d", "max_pool2d", "max_pool3d")
def _max_pool(ctx: Any, out: Any, input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
              dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> str:
    n = int(ctx.op_name[-2])
    return max_pool(ctx, input, n, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


@register("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(ctx: Any, out: Any, input: Any, kernel_size: Any, stride: Any = None, padding: Any = 0,
              ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None) -> str:
    n = int(ctx.op_name[-2])
    return avg_pool(ctx, input, n, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_pool(ctx: Any, input: Any, n: int, output_size: Any, kind: str, return_indices: bool = False) -> str:
    if return_indices:
        raise NotImplementedError("cgrad.onnx.export: adaptive max pooling with return_indices=True")
    spatial = list(input.shape[-n:])
    osz = [spatial[i] if o is None else int(o) for i, o in
           enumerate(output_size if isinstance(output_size, (list, tuple)) else [output_size] * n)]
    x, unb = _pool_prep(ctx, input, n)
    if all(o == 1 for o in osz):
        y = ctx.g.op("GlobalAveragePool" if kind == "avg" else "GlobalMaxPool", x)
    else:
        dyn = [d for d in ctx.dyn_dims(input) if d >= input.dim() - n]
        if dyn or any(i % o for i, o in zip(spatial, osz)):
            raise NotImplementedError(f"cgrad.onnx.export: adaptive {kind} pooling from {tuple(spatial)} to "
                                      f"{tuple(osz)} (ONNX needs the input size to be a multiple of the output size)")
        k = [i // o for i, o in zip(spatial, osz)]
        y = ctx.g.op("AveragePool" if kind == "avg" else "MaxPool", x, kernel_shape=k, strides=k)
    return ctx.g.squeeze(y, [0]) if unb else y


@register("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")
def _adaptive_avg(ctx: Any, out: Any, input: Any, output_size: Any) -> str:
    return adaptive_pool(ctx, input, int(ctx.op_name[-2]), output_size, "avg")


@register("adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d")
def _adaptive_max(ctx: Any, out: Any, input: Any, output_size: Any, return_indices: bool = False) -> str:
    return adaptive_pool(ctx, input, int(ctx.op_name[-2]), output_size, "max", return_indices)


# ---------------------------------------------------------------------- norms
@register("batch_norm")
def batch_norm(ctx: Any, out: Any, input: Any, running_mean: Any, running_var: Any, weight: Any = None,
               bias: Any = None, training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> str:
    c = input.shape[1]
    if training and running_mean is not None:
        raise NotImplementedError("cgrad.onnx.export: batch_norm in training mode (it updates its running stats); "
                                  "export the model in eval mode")
    if running_mean is None or running_var is None:
        return _batch_stats_norm(ctx, input, weight, bias, eps)
    scale = ctx.v(weight) if weight is not None else _ones(ctx, c, input.dtype)
    b = ctx.v(bias) if bias is not None else _ones(ctx, c, input.dtype, 0.0)
    return ctx.g.op("BatchNormalization", ctx.v(input), scale, b, ctx.v(running_mean), ctx.v(running_var),
                    epsilon=float(eps))


def _batch_stats_norm(ctx: Any, input: Any, weight: Any, bias: Any, eps: float) -> str:
    """Batch norm with the batch's own statistics (eval without running stats): mean and biased variance over
    every dim but the channels."""
    axes = [0] + list(range(2, input.dim()))
    y = _normalize_last(ctx, ctx.v(input), axes, eps, input.dtype)
    tail = [1] * (input.dim() - 2)
    if weight is not None:
        y = ctx.g.op("Mul", y, ctx.g.op("Reshape", ctx.v(weight), ctx.g.ints([-1] + tail)))
    if bias is not None:
        y = ctx.g.op("Add", y, ctx.g.op("Reshape", ctx.v(bias), ctx.g.ints([-1] + tail)))
    return y


@register("instance_norm")
def instance_norm(ctx: Any, out: Any, input: Any, running_mean: Any = None, running_var: Any = None,
                  weight: Any = None, bias: Any = None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> str:
    if not use_input_stats:
        return batch_norm(ctx, out, input, running_mean, running_var, weight, bias, False, momentum, eps)
    c = input.shape[1]
    scale = ctx.v(weight) if weight is not None else _ones(ctx, c, input.dtype)
    b = ctx.v(bias) if bias is not None else _ones(ctx, c, input.dtype, 0.0)
    return ctx.g.op("InstanceNormalization", ctx.v(input), scale, b, epsilon=float(eps))


def _normalize_last(ctx: Any, x: str, axes: List[int], eps: float, dtype: Any) -> str:
    mean = ctx.g.reduce("ReduceMean", x, axes, True)
    d = ctx.g.op("Sub", x, mean)
    var = ctx.g.reduce("ReduceMean", ctx.g.op("Mul", d, d), axes, True)
    return ctx.g.op("Div", d, ctx.g.op("Sqrt", ctx.g.op("Add", var, ctx.v(float(eps), dtype))))


@register("layer_norm")
def layer_norm(ctx: Any, out: Any, input: Any, normalized_shape: Any, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> str:
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    k = len(ns)
    if ctx.g.opset >= 17:
        n = int(np.prod(ns))
        scale = ctx.v(weight) if weight is not None else ctx.g.const(np.ones(ns, dtype=_np(input.dtype)))
        b = ctx.v(bias) if bias is not None else None
        return ctx.g.op("LayerNormalization", ctx.v(input), scale, b, axis=-k, epsilon=float(eps)) if n else \
            ctx.g.op("Identity", ctx.v(input))
    y = _normalize_last(ctx, ctx.v(input), list(range(input.dim() - k, input.dim())), eps, input.dtype)
    if weight is not None:
        y = ctx.g.op("Mul", y, ctx.v(weight))
    return y if bias is None else ctx.g.op("Add", y, ctx.v(bias))


@register("group_norm")
def group_norm(ctx: Any, out: Any, input: Any, num_groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> str:
    x = ctx.v(input)
    g = int(num_groups)
    grouped = ctx.g.op("Reshape", x, ctx.g.ints([0, g, -1]))
    y = ctx.g.op("InstanceNormalization", grouped, _ones(ctx, g, input.dtype), _ones(ctx, g, input.dtype, 0.0),
                 epsilon=float(eps))
    y = ctx.g.op("Reshape", y, ctx.g.op("Shape", x))
    tail = [1] * (input.dim() - 2)
    if weight is not None:
        y = ctx.g.op("Mul", y, ctx.g.op("Reshape", ctx.v(weight), ctx.g.ints([-1] + tail)))
    if bias is not None:
        y = ctx.g.op("Add", y, ctx.g.op("Reshape", ctx.v(bias), ctx.g.ints([-1] + tail)))
    return y


@register("rms_norm")
def rms_norm(ctx: Any, out: Any, input: Any, normalized_shape: Any, weight: Any = None, eps: Any = None) -> str:
    ns = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if eps is None:
        eps = float(np.finfo(_np(input.dtype)).eps)
    x = ctx.v(input)
    axes = list(range(input.dim() - len(ns), input.dim()))
    ms = ctx.g.reduce("ReduceMean", ctx.g.op("Mul", x, x), axes, True)
    y = ctx.g.op("Div", x, ctx.g.op("Sqrt", ctx.g.op("Add", ms, ctx.v(float(eps), input.dtype))))
    return y if weight is None else ctx.g.op("Mul", y, ctx.v(weight))


@register("normalize")
def normalize(ctx: Any, out: Any, input: Any, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> str:
    if p not in (1, 2):
        raise NotImplementedError(f"cgrad.onnx.export: normalize with p={p} (p=1 and p=2 are exported)")
    x = ctx.v(input)
    norm = ctx.g.reduce("ReduceL2" if p == 2 else "ReduceL1", x, [dim % input.dim()], True)
    return ctx.g.op("Div", x, ctx.g.op("Max", norm, ctx.v(float(eps), input.dtype)))


# ---------------------------------------------------------------------- activations
def _f(ctx: Any, x: Any, v: float) -> str:
    return ctx.v(float(v), x.dtype)


@register("nn.functional.relu", "nn.functional.relu_")
def _relu(ctx: Any, out: Any, input: Any, inplace: bool = False) -> str:
    return ctx.g.op("Relu", ctx.v(input))


@register("gelu")
def gelu(ctx: Any, out: Any, input: Any, approximate: str = "none") -> str:
    x = ctx.v(input)
    if ctx.g.opset >= 20:
        return ctx.g.op("Gelu", x, approximate=approximate)
    if approximate == "tanh":
        inner = ctx.g.op("Mul", _f(ctx, input, math.sqrt(2 / math.pi)),
                         ctx.g.op("Add", x, ctx.g.op("Mul", _f(ctx, input, 0.044715),
                                                     ctx.g.op("Mul", x, ctx.g.op("Mul", x, x)))))
        t = ctx.g.op("Add", _f(ctx, input, 1.0), ctx.g.op("Tanh", inner))
    else:
        t = ctx.g.op("Add", _f(ctx, input, 1.0), ctx.g.op("Erf", ctx.g.op("Mul", x, _f(ctx, input, 1 / math.sqrt(2)))))
    return ctx.g.op("Mul", ctx.g.op("Mul", x, _f(ctx, input, 0.5)), t)


@register("silu")
def silu(ctx: Any, out: Any, input: Any, inplace: bool = False) -> str:
    x = ctx.v(input)
    return ctx.g.op("Mul", x, ctx.g.op("Sigmoid", x))


@register("leaky_relu", "leaky_relu_")
def leaky_relu(ctx: Any, out: Any, input: Any, negative_slope: float = 0.01, inplace: bool = False) -> str:
    return ctx.g.op("LeakyRelu", ctx.v(input), alpha=float(negative_slope))


@register("elu", "elu_")
def elu(ctx: Any, out: Any, input: Any, alpha: float = 1.0, inplace: bool = False) -> str:
    return ctx.g.op("Elu", ctx.v(input), alpha=float(alpha))


@register("celu", "celu_")
def celu(ctx: Any, out: Any, input: Any, alpha: float = 1.0, inplace: bool = False) -> str:
    return ctx.g.op("Celu", ctx.v(input, _C.float32) if input.dtype != _C.float32 else ctx.v(input),
                    alpha=float(alpha))


@register("selu", "selu_")
def selu(ctx: Any, out: Any, input: Any, inplace: bool = False) -> str:
    return ctx.g.op("Selu", ctx.v(input), alpha=1.6732632423543772, gamma=1.0507009873554805)


@register("softplus")
def softplus(ctx: Any, out: Any, input: Any, beta: float = 1.0, threshold: float = 20.0) -> str:
    x = ctx.v(input)
    bx = ctx.g.op("Mul", x, _f(ctx, input, beta)) if beta != 1 else x
    sp = ctx.g.op("Softplus", bx)
    if beta != 1:
        sp = ctx.g.op("Div", sp, _f(ctx, input, beta))
    return ctx.g.op("Where", ctx.g.op("Greater", bx, _f(ctx, input, threshold)), x, sp)


@register("hardtanh", "hardtanh_", "nn.functional.relu6", "relu6")
def hardtanh(ctx: Any, out: Any, input: Any, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> str:
    if ctx.op_name.endswith("relu6"):
        min_val, max_val = 0.0, 6.0
    return ctx.g.op("Clip", ctx.v(input), _f(ctx, input, min_val), _f(ctx, input, max_val))


@register("hardsigmoid")
def hardsigmoid(ctx: Any, out: Any, input: Any, inplace: bool = False) -> str:
    return ctx.g.op("HardSigmoid", ctx.v(input), alpha=1 / 6, beta=0.5)


@register("hardswish")
def hardswish(ctx: Any, out: Any, input: Any, inplace: bool = False) -> str:
    return ctx.g.op("HardSwish", ctx.v(input))


@register("mish")
def mish(ctx: Any, out: Any, input: Any, inplace: bool = False) -> str:
    x = ctx.v(input)
    if ctx.g.opset >= 18:
        return ctx.g.op("Mish", x)
    return ctx.g.op("Mul", x, ctx.g.op("Tanh", ctx.g.op("Softplus", x)))


@register("logsigmoid")
def logsigmoid(ctx: Any, out: Any, input: Any) -> str:
    return ctx.g.op("Neg", ctx.g.op("Softplus", ctx.g.op("Neg", ctx.v(input))))


@register("tanhshrink")
def tanhshrink(ctx: Any, out: Any, input: Any) -> str:
    x = ctx.v(input)
    return ctx.g.op("Sub", x, ctx.g.op("Tanh", x))


@register("nn.functional.sigmoid", "nn.functional.tanh")
def _sig_tanh(ctx: Any, out: Any, input: Any) -> str:
    return ctx.g.op("Sigmoid" if ctx.op_name.endswith("sigmoid") else "Tanh", ctx.v(input))


@register("glu")
def glu(ctx: Any, out: Any, input: Any, dim: int = -1) -> str:
    d = dim % input.dim()
    h = input.shape[d] // 2
    a, b = ctx.g.op("Split", ctx.v(input), ctx.g.ints([h, h]), axis=d, outputs=2)
    return ctx.g.op("Mul", a, ctx.g.op("Sigmoid", b))


@register("prelu")
def prelu(ctx: Any, out: Any, input: Any, weight: Any) -> str:
    w = ctx.v(weight)
    if weight.numel() > 1 and input.dim() > 2:
        w = ctx.g.op("Reshape", w, ctx.g.ints([-1] + [1] * (input.dim() - 2)))
    return ctx.g.op("PRelu", ctx.v(input), w)


@register("threshold", "threshold_")
def threshold(ctx: Any, out: Any, input: Any, threshold: float, value: float, inplace: bool = False) -> str:
    x = ctx.v(input)
    return ctx.g.op("Where", ctx.g.op("Greater", x, _f(ctx, input, threshold)), x, _f(ctx, input, value))


# ---------------------------------------------------------------------- embedding, dropout, pad, resize
@register("embedding")
def embedding(ctx: Any, out: Any, input: Any, weight: Any, padding_idx: Any = None, max_norm: Any = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> str:
    if max_norm is not None:
        raise NotImplementedError("cgrad.onnx.export: embedding with max_norm (it renormalises the weight in place)")
    return ctx.g.op("Gather", ctx.v(weight), ctx.v(input, _C.int64), axis=0)


@register("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
def dropout(ctx: Any, out: Any, input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> str:
    if training and p > 0:
        raise NotImplementedError("cgrad.onnx.export: dropout with training=True (export runs in inference mode; "
                                  "pass training=self.training)")
    return ctx.g.op("Identity", ctx.v(input))


@register("nn.functional.pad", "pad")
def pad(ctx: Any, out: Any, input: Any, pad: Sequence[int], mode: str = "constant", value: Any = None) -> str:
    n = input.dim()
    pairs = len(pad) // 2
    begins, ends = [0] * n, [0] * n
    for i in range(pairs):
        d = n - 1 - i
        begins[d], ends[d] = int(pad[2 * i]), int(pad[2 * i + 1])
    pads = ctx.g.ints(begins + ends)
    onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}.get(mode)
    if onnx_mode is None:
        raise ValueError(f"pad: unknown mode {mode!r}")
    if onnx_mode == "wrap" and ctx.g.opset < 19:
        raise NotImplementedError("cgrad.onnx.export: circular padding needs opset 19 or newer")
    if onnx_mode == "constant":
        return ctx.g.op("Pad", ctx.v(input), pads, ctx.v(0.0 if value is None else value, input.dtype),
                        mode="constant")
    return ctx.g.op("Pad", ctx.v(input), pads, mode=onnx_mode)


@register("interpolate", "upsample")
def interpolate(ctx: Any, out: Any, input: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: Any = None, recompute_scale_factor: Any = None, antialias: bool = False) -> str:
    if antialias:
        raise NotImplementedError("cgrad.onnx.export: interpolate with antialias=True")
    n = input.dim() - 2
    x = ctx.v(input)
    kw: dict = {}
    if mode == "nearest":
        kw = dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    elif mode in ("linear", "bilinear", "trilinear", "bicubic"):
        kw = dict(mode="cubic" if mode == "bicubic" else "linear",
                  coordinate_transformation_mode="align_corners" if align_corners else "pytorch_half_pixel")
        if mode == "bicubic":
            kw["cubic_coeff_a"] = -0.75
    else:
        raise NotImplementedError(f"cgrad.onnx.export: interpolate with mode={mode!r}")
    if scale_factor is not None and not recompute_scale_factor:
        sc = [float(s) for s in (scale_factor if isinstance(scale_factor, (list, tuple)) else [scale_factor] * n)]
        scales = ctx.g.const(np.asarray([1.0, 1.0] + sc, dtype=np.float32))
        return ctx.g.op("Resize", x, None, scales, **kw)
    lead = ctx.g.op("Slice", ctx.g.op("Shape", x), ctx.g.ints([0]), ctx.g.ints([2]))
    sizes = ctx.g.op("Concat", lead, ctx.g.ints(list(out.shape[2:])), axis=0)
    return ctx.g.op("Resize", x, None, None, sizes, **kw)


@register("pixel_shuffle")
def pixel_shuffle(ctx: Any, out: Any, input: Any, upscale_factor: int) -> str:
    return ctx.g.op("DepthToSpace", ctx.v(input), blocksize=int(upscale_factor), mode="CRD")


# ---------------------------------------------------------------------- attention
def attention(ctx: Any, q: str, k: str, v: str, ndim: int, head_dim: int, mask: Any, is_causal: bool, scale: Any,
              dtype: Any, mask_name: Optional[str] = None) -> Any:
    """softmax(q k^T * scale + mask) v on ONNX values (..., L, E) / (..., S, E) / (..., S, Ev); mask is a cgrad
    tensor (bool: True = attend, float: added) or None, or mask_name an ONNX additive float mask.
    Returns (output, weights)."""
    s = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    scores = ctx.g.op("MatMul", ctx.g.op("Mul", q, ctx.v(s, dtype)), ctx.g.op("Transpose", k, perm=_swap_last(ndim)))
    if is_causal:
        lq = ctx.g.op("Slice", ctx.g.op("Shape", q), ctx.g.ints([-2]), ctx.g.ints([-1]))
        ls = ctx.g.op("Slice", ctx.g.op("Shape", k), ctx.g.ints([-2]), ctx.g.ints([-1]))
        ones = ctx.g.op("ConstantOfShape", ctx.g.op("Concat", lq, ls, axis=0),
                        value=_tensor1(np.ones((1,), dtype=np.float32)))
        tri = ctx.g.op("Trilu", ones, upper=0)
        keep = ctx.g.op("Cast", tri, to=9)  # BOOL
        scores = ctx.g.op("Where", keep, scores, ctx.v(float("-inf"), dtype))
    if mask is not None:
        if mask.dtype == _C.bool:
            scores = ctx.g.op("Where", ctx.v(mask), scores, ctx.v(float("-inf"), dtype))
        else:
            scores = ctx.g.op("Add", scores, ctx.v(mask, dtype))
    if mask_name is not None:
        scores = ctx.g.op("Add", scores, mask_name)
    w = ctx.g.op("Softmax", scores, axis=-1)
    return ctx.g.op("MatMul", w, v), w


def _swap_last(n: int) -> List[int]:
    return list(range(n - 2)) + [n - 1, n - 2]


def _tensor1(arr: Any) -> Any:
    from onnx import numpy_helper
    return numpy_helper.from_array(arr)


@register("scaled_dot_product_attention")
def sdpa(ctx: Any, out: Any, query: Any, key: Any, value: Any, attn_mask: Any = None, dropout_p: float = 0.0,
         is_causal: bool = False, scale: Any = None, enable_gqa: bool = False) -> str:
    if dropout_p:
        raise NotImplementedError("cgrad.onnx.export: scaled_dot_product_attention with dropout_p > 0")
    k, v = ctx.v(key), ctx.v(value)
    if enable_gqa and query.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        k, v = (_repeat_heads(ctx, t, key.dim(), rep) for t in (k, v))
    y, _ = attention(ctx, ctx.v(query), k, v, key.dim(), query.shape[-1], attn_mask, is_causal, scale, query.dtype)
    return y


def _repeat_heads(ctx: Any, t: str, ndim: int, rep: int) -> str:
    """repeat_interleave along dim -3 by rep (grouped-query attention)."""
    u = ctx.g.unsqueeze(t, [ndim - 2])  # (..., H, 1, S, E)
    tiles = [1] * (ndim - 2) + [rep, 1, 1]
    u = ctx.g.op("Tile", u, ctx.g.ints(tiles))
    sh = ctx.g.op("Shape", t)
    lead = ctx.g.op("Slice", sh, ctx.g.ints([0]), ctx.g.ints([ndim - 3]))
    tail = ctx.g.op("Slice", sh, ctx.g.ints([ndim - 2]), ctx.g.ints([ndim]))
    return ctx.g.op("Reshape", u, ctx.g.op("Concat", lead, ctx.g.ints([-1]), tail, axis=0))
