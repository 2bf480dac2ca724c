"""MultiheadAttention (torch.nn.MultiheadAttention) and its functional form
multi_head_attention_forward (torch.nn.functional's), with torch's argument
handling, mask semantics and parameter names: in_proj_weight / in_proj_bias
packed (3E, E) when key and value have the query's width, q_proj_weight /
k_proj_weight / v_proj_weight otherwise, out_proj a Linear.

Without need_weights the heads go through one scaled_dot_product_attention
call; with need_weights the explicit path (baddbmm, softmax, bmm) keeps the
attention weights to return them, as torch does."""
from __future__ import annotations

import math
import warnings
from typing import Any, Optional, Sequence, Tuple

from ... import _C
from ..._tensor import Tensor
from .. import functional as F
from ..init import constant_, xavier_normal_, xavier_uniform_
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention", "multi_head_attention_forward"]


def _as_additive(mask: Optional[Tensor], name: str, dtype: Any) -> Optional[Tensor]:
    """A mask to add to the attention scores: float masks as given, a bool mask (True = may not attend)
    as 0 / -inf of dtype. Other dtypes are refused with AssertionError, as torch does."""
    if mask is None or mask.is_floating_point():
        return mask
    if mask.dtype != _C.bool:
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return _C.zeros_like(mask, dtype=dtype).masked_fill_(mask, float("-inf"))


def _warn_mixed_masks(padding: Optional[Tensor], padding_name: str, mask: Optional[Tensor], mask_name: str) -> None:
    """torch's deprecation warning for a key-padding mask whose dtype differs from the attention mask's."""
    if padding is not None and mask is not None and padding.dtype != mask.dtype:
        warnings.warn(f"Support for mismatched {padding_name} and {mask_name} is deprecated. Use same type for both "
                      "instead.", stacklevel=3)


def _batched_input(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor],
                   attn_mask: Optional[Tensor], num_heads: int) -> bool:
    """Checks the ranks: query 3-D (L, N, E) with 3-D key / value and a 2-D padding mask, or 2-D (L, E) with 2-D
    key / value and a 1-D padding mask; attn_mask 2-D or 3-D either way. Returns whether the input is batched."""
    rank = query.dim()
    if rank not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {rank}-D query tensor")
    what = f"multi_head_attention_forward: a {rank}-D query"
    if key.dim() != rank or value.dim() != rank:
        raise AssertionError(f"{what} needs {rank}-D key and value, got {key.dim()}-D and {value.dim()}-D")
    if key_padding_mask is not None and key_padding_mask.dim() != rank - 1:
        raise AssertionError(f"{what} needs a {rank - 1}-D key_padding_mask, got {key_padding_mask.dim()}-D")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"{what} needs a 2-D or 3-D attn_mask, got {attn_mask.dim()}-D")
        heads_mask = (num_heads, query.shape[0], key.shape[0])
        if rank == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != heads_mask:
            raise AssertionError(f"{what} needs a 3-D attn_mask of shape {heads_mask}, got {tuple(attn_mask.shape)}")
    return rank == 3


def _project(query: Tensor, key: Tensor, value: Tensor, packed: Optional[Tensor], bias: Optional[Tensor],
             separate: Optional[Sequence[Optional[Tensor]]]) -> Sequence[Tensor]:
    """The input projections of query, key and value. With the packed (3E, E) weight, self-attention takes one
    GEMM and a shared key / value tensor two; separate (E, E), (E, kdim), (E, vdim) weights one GEMM each.
    bias is the packed (3E,) bias in both cases."""
    width = query.size(-1)
    biases: Sequence[Optional[Tensor]] = (None, None, None) if bias is None else bias.chunk(3)
    if separate is None:
        if packed is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:
            return F.linear(query, packed, bias).split(width, -1)
        if key is value:
            k, v = F.linear(key, packed[width:], None if bias is None else bias[width:]).split(width, -1)
            return F.linear(query, packed[:width], biases[0]), k, v
        weights: Sequence[Optional[Tensor]] = packed.chunk(3)
    else:
        for name, w, x in zip(("q_proj_weight", "k_proj_weight", "v_proj_weight"), separate, (query, key, value)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
            if tuple(w.shape) != (width, x.size(-1)):
                raise AssertionError(f"multi_head_attention_forward: {name} has shape {tuple(w.shape)}, "
                                     f"expected {(width, x.size(-1))}")
        if bias is not None and tuple(bias.shape) != (3 * width,):
            raise AssertionError(f"multi_head_attention_forward: in_proj_bias has shape {tuple(bias.shape)}, "
                                 f"expected {(3 * width,)}")
        weights = separate
    return [F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases)]


def _fold_masks(attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor], n: int, heads: int, tgt: int,
                src: int, keys: int, extra: int) -> Optional[Tensor]:
    """attn_mask (tgt, src) or (n*heads, tgt, src) and key_padding_mask (n, keys - extra), both additive, as one
    additive mask broadcasting to (n, heads, tgt, keys). The last `extra` keys (bias_k, the zero key) are never
    masked: their columns are zero."""
    folded = None
    if attn_mask is not None:
        want = (tgt, src) if attn_mask.dim() == 2 else (n * heads, tgt, src)
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(f"The shape of the {attn_mask.dim()}D attn_mask is {attn_mask.shape}, but should be "
                               f"{want}.")
        folded = attn_mask if attn_mask.dim() == 2 else attn_mask.view(n, heads, tgt, src)
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (n, keys - extra):
            raise AssertionError(f"multi_head_attention_forward: key_padding_mask has shape "
                                 f"{tuple(key_padding_mask.shape)}, expected {(n, keys - extra)}")
        per_key = key_padding_mask.view(n, 1, 1, keys - extra)
        folded = per_key if folded is None else folded + per_key
    if folded is not None and extra:
        folded = F.pad(folded, (0, extra))
    return folded


def _attend(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor], dropout_p: float, causal: bool,
            need_weights: bool) -> Tuple[Tensor, Optional[Tensor]]:
    """q (N, H, L, D), k and v (N, H, S, D), mask additive -> (N, H, L, D) and, with need_weights, the (N, H, L, S)
    attention weights (after dropout, as torch returns them). Without weights: one fused kernel call."""
    if not need_weights:
        return F.scaled_dot_product_attention(q, k, v, mask, dropout_p, causal), None
    scores = _C.matmul(q * (1.0 / math.sqrt(q.size(-1))), k.transpose(-2, -1))
    if mask is not None:
        scores = scores + mask
    weights = _C.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return _C.matmul(weights, v), weights


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
                                 in_proj_weight: Optional[Tensor], in_proj_bias: Optional[Tensor],
                                 bias_k: Optional[Tensor], bias_v: Optional[Tensor], add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Optional[Tensor],
                                 training: bool = True, key_padding_mask: Optional[Tensor] = None,
                                 need_weights: bool = True, attn_mask: Optional[Tensor] = None,
                                 use_separate_proj_weight: bool = False, q_proj_weight: Optional[Tensor] = None,
                                 k_proj_weight: Optional[Tensor] = None, v_proj_weight: Optional[Tensor] = None,
                                 static_k: Optional[Tensor] = None, static_v: Optional[Tensor] = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
    """Multi-head attention over (L, N, E) query and (S, N, E*) key / value (or unbatched (L, E) / (S, E*)).
    Returns (attn_output (L, N, E), attn_weights (N, L, S) averaged over heads, (N, H, L, S), or None)."""
    batched = _batched_input(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        key_padding_mask = None if key_padding_mask is None else key_padding_mask.unsqueeze(0)
    tgt, n, width = query.shape
    heads = num_heads

    _warn_mixed_masks(key_padding_mask, "key_padding_mask", attn_mask, "attn_mask")
    key_padding_mask = _as_additive(key_padding_mask, "key_padding_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
                           "`generate_square_subsequent_mask` to create this mask.")
    # is_causal promises that attn_mask is the causal mask; when nothing else is to be applied and no weights are
    # wanted, the kernel builds it itself, otherwise the given mask is applied like any other.
    causal = is_causal and key_padding_mask is None and not need_weights
    attn_mask = None if causal else _as_additive(attn_mask, "attn_mask", query.dtype)

    if width != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {width}")
    head_dim = width // heads
    if head_dim * heads != width:
        raise AssertionError(f"embed_dim {width} not divisible by num_heads {heads}")
    same = tuple(key.shape[:2]) == tuple(value.shape[:2]) if use_separate_proj_weight else key.shape == value.shape
    if not same:
        raise AssertionError(f"multi_head_attention_forward: key of shape {tuple(key.shape)} and value of shape "
                             f"{tuple(value.shape)} do not match")

    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight else None
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, separate)

    extra = 0  # keys appended after the projected ones: bias_k / bias_v, then the all-zero key
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k and bias_v must be given together")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias_k / bias_v cannot be added to static_k / static_v")
        k = _C.cat([k, bias_k.expand(1, n, width)])
        v = _C.cat([v, bias_v.expand(1, n, width)])  # type: ignore[union-attr]
        extra += 1

    def split_heads(x: Tensor, static: Optional[Tensor], name: str) -> Tensor:
        """(T, N, E) -> (N, H, T, D); a static (N*H, T, D) key or value replaces the projected one."""
        if static is None:
            return x.reshape(x.shape[0], n, heads, head_dim).permute(1, 2, 0, 3)
        if static.size(0) != n * heads or static.size(2) != head_dim:
            raise AssertionError(f"multi_head_attention_forward: {name} has shape {tuple(static.shape)}, expected "
                                 f"({n * heads}, S, {head_dim})")
        return static.view(n, heads, static.size(1), head_dim)

    q = split_heads(q, None, "query")
    k = split_heads(k, static_k, "static_k")
    v = split_heads(v, static_v, "static_v")
    if add_zero_attn:
        zero = _C.zeros((n, heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = _C.cat([k, zero], dim=2), _C.cat([v, zero], dim=2)
        extra += 1
    keys = k.size(2)
    mask = _fold_masks(attn_mask, key_padding_mask, n, heads, tgt, key.shape[0], keys, extra)

    out, weights = _attend(q, k, v, mask, dropout_p if training else 0.0, causal, need_weights)
    out = F.linear(out.permute(2, 0, 1, 3).reshape(tgt, n, width), out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _seq_first(*xs: Tensor) -> Sequence[Tensor]:
    """(N, T, E) -> (T, N, E) views; one per distinct tensor, so that the projection still sees which of
    query, key and value are the same tensor."""
    views: dict = {}
    for x in xs:
        if id(x) not in views:
            views[id(x)] = x.transpose(0, 1)
    return [views[id(x)] for x in xs]


class MultiheadAttention(Module):
    """Multi-head attention: forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False) -> (attn_output, attn_weights or None)."""

    __constants__ = ["batch_first"]
    bias_k: Optional[Tensor]
    bias_v: Optional[Tensor]

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        super().__init__()
        fk = {"device": device, "dtype": dtype}

        def param(*shape: int) -> Parameter:
            return Parameter(_C.empty(shape, **fk))

        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == self.vdim == embed_dim
        self.dropout = dropout
        self.batch_first = batch_first
        # registration order = state_dict order (torch's): projections, in_proj_bias, out_proj, bias_k, bias_v
        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            separate: Tuple[Optional[Parameter], ...] = (None, None, None)
        else:
            self.register_parameter("in_proj_weight", None)
            separate = (param(embed_dim, embed_dim), param(embed_dim, self.kdim), param(embed_dim, self.vdim))
        for name, p in zip(("q_proj_weight", "k_proj_weight", "v_proj_weight"), separate):
            self.register_parameter(name, p)
        self.register_parameter("in_proj_bias", param(3 * embed_dim) if bias else None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        self.bias_k = param(1, 1, embed_dim) if add_bias_kv else None
        self.bias_v = param(1, 1, embed_dim) if add_bias_kv else None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's init: xavier_uniform_ projections, zero in/out biases, xavier_normal_ bias_k / bias_v."""
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                xavier_uniform_(w)
        if self.in_proj_bias is not None:
            for b in (self.in_proj_bias, self.out_proj.bias):
                constant_(b, 0.0)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                xavier_normal_(b)

    def __setstate__(self, state: dict) -> None:
        state.setdefault("_qkv_same_embed_dim", True)  # pickles from before kdim / vdim existed
        super().__setstate__(state)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor] = None,
                need_weights: bool = True, attn_mask: Optional[Tensor] = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
        batch_major = self.batch_first and query.dim() == 3
        if batch_major:
            query, key, value = _seq_first(query, key, value)
        packed = self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not packed, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        return (out.transpose(0, 1) if batch_major else out), weights

    def merge_masks(self, attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor],
                    query: Tensor) -> Tuple[Optional[Tensor], Optional[int]]:
        """Combine attn_mask (L, L) or (N*H, L, L) and key_padding_mask (N, L) into one (N, H, L, L) mask;
        returns (mask, mask_type) with mask_type 1 (key padding only) or 2 (merged)."""
        if attn_mask is None:
            return key_padding_mask, (None if key_padding_mask is None else 1)
        n, length = query.shape[0], query.shape[1]
        if attn_mask.dim() == 3:
            merged = attn_mask.view(n, -1, length, length)
        else:
            merged = attn_mask.view(1, 1, length, length).expand(n, self.num_heads, length, length)
        if key_padding_mask is not None:
            merged = merged + key_padding_mask.view(n, 1, 1, length)
        return merged, 2
