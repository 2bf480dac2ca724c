"""Symbolic of nn.MultiheadAttention: the input projections (slices of the
packed in_proj_weight, or the three separate ones), heads split with
shape-generic reshapes, masks (attn_mask 2-D / 3-D and key_padding_mask,
bool or float) turned additive, scaled dot-product softmax attention, the
output projection, and the averaged or per-head weights when asked."""
from __future__ import annotations

from typing import Any, List, Optional

from .. import _C, nn
from ._registry import register_module
from ._sym_nn import attention


def _additive(ctx: Any, mask: Any, dtype: Any) -> str:
    """A bool mask (True = may not attend) as 0 / -inf; a float mask as it is."""
    if mask.dtype == _C.bool:
        return ctx.g.op("Where", ctx.v(mask), ctx.v(float("-inf"), dtype), ctx.v(0.0, dtype))
    return ctx.v(mask, dtype)


def _project(ctx: Any, x: str, w: str, b: Optional[str]) -> str:
    y = ctx.g.op("MatMul", x, ctx.g.op("Transpose", w, perm=[1, 0]))
    return y if b is None else ctx.g.op("Add", y, b)


def _rows(ctx: Any, t: str, start: int, stop: int) -> str:
    return ctx.g.op("Slice", t, ctx.g.ints([start]), ctx.g.ints([stop]), ctx.g.ints([0]))


@register_module(nn.MultiheadAttention)
def mha(ctx: Any, out: Any, m: Any, query: Any, key: Any, value: Any, key_padding_mask: Any = None,
        need_weights: bool = True, attn_mask: Any = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> List[str]:
    if m.bias_k is not None or m.add_zero_attn:
        raise NotImplementedError("cgrad.onnx.export: MultiheadAttention with add_bias_kv or add_zero_attn")
    if m.training and m.dropout > 0:
        raise NotImplementedError("cgrad.onnx.export: MultiheadAttention in training mode with dropout; export the "
                                  "model in eval mode")
    g = ctx.g
    E, heads = m.embed_dim, m.num_heads
    hd = E // heads
    dt = query.dtype
    batched = query.dim() == 3

    def layout(t: Any) -> str:  # to (N, L, E)
        x = ctx.v(t)
        if not batched:
            return g.unsqueeze(x, [0])
        return x if m.batch_first else g.op("Transpose", x, perm=[1, 0, 2])
    q, k, v = layout(query), layout(key), layout(value)
    b = ctx.v(m.in_proj_bias) if m.in_proj_bias is not None else None
    if m._qkv_same_embed_dim:
        w = ctx.v(m.in_proj_weight)
        ws = [_rows(ctx, w, i * E, (i + 1) * E) for i in range(3)]
    else:
        ws = [ctx.v(m.q_proj_weight), ctx.v(m.k_proj_weight), ctx.v(m.v_proj_weight)]
    bs = [None] * 3 if b is None else [_rows(ctx, b, i * E, (i + 1) * E) for i in range(3)]
    q, k, v = (_project(ctx, x, w_, b_) for x, w_, b_ in zip((q, k, v), ws, bs))

    def split_heads(x: str) -> str:  # (N, L, E) -> (N, heads, L, hd)
        return g.op("Transpose", g.op("Reshape", x, g.ints([0, 0, heads, hd])), perm=[0, 2, 1, 3])
    q, k, v = split_heads(q), split_heads(k), split_heads(v)
    mask = None
    if attn_mask is not None:
        am = _additive(ctx, attn_mask, dt)
        if attn_mask.dim() == 3:  # (N*heads, L, S) -> (N, heads, L, S)
            tail = g.op("Slice", g.op("Shape", am), g.ints([1]), g.ints([3]))
            am = g.op("Reshape", am, g.op("Concat", g.ints([-1, heads]), tail, axis=0))
        mask = am
    if key_padding_mask is not None:
        kp = _additive(ctx, key_padding_mask, dt)
        kp = g.unsqueeze(kp, [1, 2] if batched else [0, 1, 2])  # (N, 1, 1, S)
        mask = kp if mask is None else g.op("Add", mask, kp)
    y, w_att = attention(ctx, q, k, v, 4, hd, None, False, None, dt, mask)
    y = g.op("Reshape", g.op("Transpose", y, perm=[0, 2, 1, 3]), g.ints([0, 0, E]))
    y = _project(ctx, y, ctx.v(m.out_proj.weight),
                 ctx.v(m.out_proj.bias) if m.out_proj.bias is not None else None)
    if not batched:
        y = g.squeeze(y, [0])
    elif not m.batch_first:
        y = g.op("Transpose", y, perm=[1, 0, 2])
    if not need_weights:
        return [y]
    if average_attn_weights:
        w_att = g.reduce("ReduceMean", w_att, [1], False)
    if not batched:
        w_att = g.squeeze(w_att, [0])
    return [y, w_att]
