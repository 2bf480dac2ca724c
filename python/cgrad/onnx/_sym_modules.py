"""Symbolics of whole layer calls, for the layers whose forward reaches its
kernel through a reference bound at import (so the namespace wrappers do not
see it): convolutions, pools, dropout, the activation layers, PixelShuffle.
Each emits the same nodes as the functional form with the layer's settings."""
from __future__ import annotations

from typing import Any

from .. import nn
from . import _sym_nn as S
from ._registry import register_module


@register_module(nn.Conv1d, nn.Conv2d, nn.Conv3d)
def _conv(ctx: Any, out: Any, m: Any, input: Any) -> str:
    if m.padding_mode != "zeros":
        padded = S.pad(ctx, out, input, m._reversed_padding_repeated_twice, mode=m.padding_mode)
        return _conv_on(ctx, padded, input, m, (0,) * m._dims)
    return S.conv(ctx, input, m.weight, m.bias, m.stride, m.padding, m.dilation, m.groups)


def _conv_on(ctx: Any, x: str, input: Any, m: Any, padding: Any) -> str:
    """Conv on an ONNX value x that already holds the padded input."""
    n = m._dims
    k = list(m.weight.shape[2:])
    dil = S._tuple(m.dilation, n)
    unbatched = input.dim() == n + 1
    if unbatched:
        x = ctx.g.unsqueeze(x, [0])
    inputs = [x, ctx.v(m.weight)] + ([ctx.v(m.bias)] if m.bias is not None else [])
    y = ctx.g.op("Conv", *inputs, kernel_shape=k, strides=S._tuple(m.stride, n), pads=[0] * 2 * n, dilations=dil,
                 group=int(m.groups))
    return ctx.g.squeeze(y, [0]) if unbatched else y


@register_module(nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
def _conv_transpose(ctx: Any, out: Any, m: Any, input: Any, output_size: Any = None) -> str:
    return S.conv_transpose(ctx, out, input, m.weight, m.bias, m.stride, m.padding, m.output_padding, m.groups,
                            m.dilation)


@register_module(nn.MaxPool1d, nn.MaxPool2d)
def _max_pool(ctx: Any, out: Any, m: Any, input: Any) -> str:
    n = 1 if isinstance(m, nn.MaxPool1d) else 2
    return S.max_pool(ctx, input, n, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode, m.return_indices)


@register_module(nn.AvgPool1d, nn.AvgPool2d)
def _avg_pool(ctx: Any, out: Any, m: Any, input: Any) -> str:
    n = 1 if isinstance(m, nn.AvgPool1d) else 2
    return S.avg_pool(ctx, input, n, m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad,
                      getattr(m, "divisor_override", None))


@register_module(nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d)
def _adaptive_avg(ctx: Any, out: Any, m: Any, input: Any) -> str:
    n = 1 if isinstance(m, nn.AdaptiveAvgPool1d) else 2
    return S.adaptive_pool(ctx, input, n, m.output_size, "avg")


@register_module(nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d)
def _adaptive_max(ctx: Any, out: Any, m: Any, input: Any) -> str:
    n = 1 if isinstance(m, nn.AdaptiveMaxPool1d) else 2
    return S.adaptive_pool(ctx, input, n, m.output_size, "max", m.return_indices)


@register_module(nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout, nn.FeatureAlphaDropout)
def _dropout(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.dropout(ctx, out, input, m.p, m.training)


_SIMPLE = {nn.ReLU: "Relu", nn.Sigmoid: "Sigmoid", nn.Tanh: "Tanh", nn.Softsign: "Softsign",
           nn.Hardswish: "HardSwish"}


@register_module(*_SIMPLE)
def _simple(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return ctx.g.op(_SIMPLE[type(m)], ctx.v(input))


@register_module(nn.GELU)
def _gelu(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.gelu(ctx, out, input, m.approximate)


@register_module(nn.SiLU)
def _silu(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.silu(ctx, out, input)


@register_module(nn.LeakyReLU)
def _leaky(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.leaky_relu(ctx, out, input, m.negative_slope)


@register_module(nn.ELU)
def _elu(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.elu(ctx, out, input, m.alpha)


@register_module(nn.CELU)
def _celu(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.celu(ctx, out, input, m.alpha)


@register_module(nn.SELU)
def _selu(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.selu(ctx, out, input)


@register_module(nn.Softplus)
def _softplus(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.softplus(ctx, out, input, m.beta, m.threshold)


@register_module(nn.Hardtanh, nn.ReLU6)
def _hardtanh(ctx: Any, out: Any, m: Any, input: Any) -> str:
    lo, hi = (0.0, 6.0) if isinstance(m, nn.ReLU6) else (m.min_val, m.max_val)
    return ctx.g.op("Clip", ctx.v(input), ctx.v(float(lo), input.dtype), ctx.v(float(hi), input.dtype))


@register_module(nn.Hardsigmoid)
def _hardsigmoid(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.hardsigmoid(ctx, out, input)


@register_module(nn.Mish)
def _mish(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.mish(ctx, out, input)


@register_module(nn.LogSigmoid)
def _logsigmoid(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.logsigmoid(ctx, out, input)


@register_module(nn.Tanhshrink)
def _tanhshrink(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.tanhshrink(ctx, out, input)


@register_module(nn.Softmax, nn.LogSoftmax, nn.Softmin)
def _softmax(ctx: Any, out: Any, m: Any, input: Any) -> str:
    from ._sym_tensor import _softmax_dim
    x = ctx.v(input)
    if isinstance(m, nn.Softmin):
        x = ctx.g.op("Neg", x)
    op = "LogSoftmax" if isinstance(m, nn.LogSoftmax) else "Softmax"
    return ctx.g.op(op, x, axis=_softmax_dim(input, m.dim))


@register_module(nn.PixelShuffle)
def _pixel_shuffle(ctx: Any, out: Any, m: Any, input: Any) -> str:
    return S.pixel_shuffle(ctx, out, input, m.upscale_factor)
