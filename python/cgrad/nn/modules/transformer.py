"""The Transformer layers, as torch.nn: TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder, TransformerDecoder (stacks of
deep copies of one layer) and Transformer, with torch's arguments, submodule
names and init. torch's inference fast paths (fused encoder-layer kernel,
nested tensors) compute the same values as the regular path, which is the
only one here; enable_nested_tensor is accepted and recorded."""
from __future__ import annotations

import copy
import warnings
from typing import Any, Callable, Optional, Union

from ... import _C
from ..._tensor import Tensor
from .. import functional as F
from ..init import xavier_uniform_
from .activation import GELU, ReLU
from .attention import MultiheadAttention, _as_additive, _warn_mixed_masks
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer"]

_Activation = Union[str, Callable[[Tensor], Tensor]]


def _generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
    """(sz, sz) float mask: 0 on and below the diagonal, -inf above it."""
    return _C.triu(_C.full((sz, sz), float("-inf"), dtype=dtype, device=device), diagonal=1)


def _causal_hint(mask: Optional[Tensor], is_causal: Optional[bool], x: Tensor, batch_first: bool) -> bool:
    """The is_causal the layers get: the caller's hint when given, otherwise whether mask is exactly the
    square subsequent mask over x's sequence length."""
    if is_causal is not None:
        return is_causal is True
    if mask is None:
        return False
    seq = x.size(0) if x.dim() == 2 or not batch_first else x.size(1)
    if tuple(mask.shape) != (seq, seq):
        return False
    return bool((mask == _generate_square_subsequent_mask(seq, device=mask.device, dtype=mask.dtype)).all())


def _stack(layer: Module, n: int) -> ModuleList:
    """n independent deep copies of layer."""
    return ModuleList([copy.deepcopy(layer) for _ in range(n)])


def _sublayer(x: Tensor, norm: Module, block: Callable[[Tensor], Tensor], pre_norm: bool) -> Tensor:
    """One residual sub-layer: x + block(norm(x)) with pre_norm (norm_first), else norm(x + block(x))."""
    return x + block(norm(x)) if pre_norm else norm(x + block(x))


def _nested_tensor_blocker(layer: Module) -> str:
    """Why torch would not take its nested-tensor inference path with this layer ('' when it would). cgrad has no
    such path; this only decides TransformerEncoder.use_nested_tensor and torch's warning."""
    if not isinstance(layer, TransformerEncoderLayer):
        return "encoder_layer was not TransformerEncoderLayer"
    attn = layer.self_attn
    reasons = ((layer.norm_first, "norm_first was True"),
               (not attn.batch_first, "self_attn.batch_first was not True"
                                      "(use batch_first for better inference performance)"),
               (not attn._qkv_same_embed_dim, "self_attn._qkv_same_embed_dim was not True"),
               (attn.in_proj_bias is None, "self_attn was passed bias=False"),
               (not layer.activation_relu_or_gelu, "activation_relu_or_gelu was not True"),
               (layer.norm1.eps != layer.norm2.eps, "norm1.eps was not equal to encoder_layer.norm2.eps"),
               (attn.num_heads % 2 == 1, "self_attn.num_heads is odd"))
    return next(("encoder_layer." + why for failed, why in reasons if failed), "")


_NAMED_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _named_activation(name: str) -> Callable[[Tensor], Tensor]:
    """The activation a layer's activation="relu" / "gelu" stands for."""
    if name not in _NAMED_ACTIVATIONS:
        raise RuntimeError(f"activation should be relu/gelu, not {name}")
    return _NAMED_ACTIVATIONS[name]


def _activation_kind(activation: Any) -> int:
    """torch's activation_relu_or_gelu: 1 relu, 2 gelu, 0 other."""
    if activation is F.relu or isinstance(activation, ReLU):
        return 1
    if activation is F.gelu or isinstance(activation, GELU):
        return 2
    return 0


class TransformerEncoderLayer(Module):
    """Self-attention then feed-forward, each with a residual connection and LayerNorm
    (after the residual by default, before the block when norm_first)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: _Activation = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        act = _named_activation(activation) if isinstance(activation, str) else activation
        self.activation_relu_or_gelu = _activation_kind(act)
        self.activation = act

    def __setstate__(self, state: dict) -> None:
        state.setdefault("activation", F.relu)  # pickles from before the activation argument
        super().__setstate__(state)

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                is_causal: bool = False) -> Tensor:
        def attend(x: Tensor) -> Tensor:
            return self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal)
        x = _sublayer(src, self.norm1, attend, self.norm_first)
        return _sublayer(x, self.norm2, self._ff_block, self.norm_first)

    def _sa_block(self, x: Tensor, attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor],
                  is_causal: bool = False) -> Tensor:
        """Self-attention (no weights) and its dropout."""
        out, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False, attn_mask=attn_mask,
                                is_causal=is_causal)
        return self.dropout1(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        """linear1, activation, dropout, linear2, then the block's dropout."""
        hidden = self.dropout(self.activation(self.linear1(x)))
        return self.dropout2(self.linear2(hidden))


class TransformerDecoderLayer(Module):
    """Self-attention, attention over the encoder's memory, then feed-forward; each with a residual
    connection and LayerNorm (norm_first: before the block)."""

    __constants__ = ["norm_first"]

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: _Activation = F.relu, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias, **fk)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias,
                                                 **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _named_activation(activation) if isinstance(activation, str) else activation

    def __setstate__(self, state: dict) -> None:
        state.setdefault("activation", F.relu)  # pickles from before the activation argument
        super().__setstate__(state)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, tgt_key_padding_mask: Optional[Tensor] = None,
                memory_key_padding_mask: Optional[Tensor] = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        def attend_self(x: Tensor) -> Tensor:
            return self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal)

        def attend_memory(x: Tensor) -> Tensor:
            return self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        x = _sublayer(tgt, self.norm1, attend_self, self.norm_first)
        x = _sublayer(x, self.norm2, attend_memory, self.norm_first)
        return _sublayer(x, self.norm3, self._ff_block, self.norm_first)

    def _sa_block(self, x: Tensor, attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor],
                  is_causal: bool = False) -> Tensor:
        """Self-attention over the target (no weights) and its dropout."""
        out, _ = self.self_attn(x, x, x, key_padding_mask=key_padding_mask, need_weights=False, attn_mask=attn_mask,
                                is_causal=is_causal)
        return self.dropout1(out)

    def _mha_block(self, x: Tensor, mem: Tensor, attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor],
                   is_causal: bool = False) -> Tensor:
        """Attention from the target over the encoder's memory (no weights) and its dropout."""
        out, _ = self.multihead_attn(x, mem, mem, key_padding_mask=key_padding_mask, need_weights=False,
                                     attn_mask=attn_mask, is_causal=is_causal)
        return self.dropout2(out)

    def _ff_block(self, x: Tensor) -> Tensor:
        """linear1, activation, dropout, linear2, then the block's dropout."""
        hidden = self.dropout(self.activation(self.linear1(x)))
        return self.dropout3(self.linear2(hidden))


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer applied in turn, then the optional norm."""

    __constants__ = ["norm"]

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Optional[Module] = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = _stack(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        blocker = _nested_tensor_blocker(encoder_layer)
        self.use_nested_tensor = enable_nested_tensor and not blocker
        if enable_nested_tensor and blocker:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {blocker}",
                          stacklevel=2)

    def forward(self, src: Tensor, mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                is_causal: Optional[bool] = None) -> Tensor:
        _warn_mixed_masks(src_key_padding_mask, "src_key_padding_mask", mask, "mask")
        src_key_padding_mask = _as_additive(src_key_padding_mask, "src_key_padding_mask", src.dtype)
        mask = _as_additive(mask, "mask", src.dtype)
        causal = _causal_hint(mask, is_causal, src, self.layers[0].self_attn.batch_first)
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=causal)
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """num_layers deep copies of decoder_layer applied in turn, then the optional norm."""

    __constants__ = ["norm"]

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Optional[Module] = None) -> None:
        super().__init__()
        self.layers = _stack(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, tgt_key_padding_mask: Optional[Tensor] = None,
                memory_key_padding_mask: Optional[Tensor] = None, tgt_is_causal: Optional[bool] = None,
                memory_is_causal: bool = False) -> Tensor:
        causal = _causal_hint(tgt_mask, tgt_is_causal, tgt, self.layers[0].self_attn.batch_first)
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=causal,
                      memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """Encoder-decoder Transformer (Vaswani et al.): forward(src, tgt, masks...) -> (T, N, E) output."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: _Activation = F.relu,
                 custom_encoder: Optional[Any] = None, custom_decoder: Optional[Any] = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first,
                      bias)
        fk = {"device": device, "dtype": dtype}

        def final_norm() -> LayerNorm:
            return LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(*layer_args, **fk), num_encoder_layers, final_norm())
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(*layer_args, **fk), num_decoder_layers, final_norm())
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Optional[Tensor] = None, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                tgt_key_padding_mask: Optional[Tensor] = None, memory_key_padding_mask: Optional[Tensor] = None,
                src_is_causal: Optional[bool] = None, tgt_is_causal: Optional[bool] = None,
                memory_is_causal: bool = False) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if (src.size(-1), tgt.size(-1)) != (self.d_model, self.d_model):
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """(sz, sz) float mask: 0 on and below the diagonal, -inf above it."""
        return _generate_square_subsequent_mask(sz, dtype=dtype, device=device)

    def _reset_parameters(self) -> None:
        """xavier_uniform_ over every parameter with two or more dimensions (torch's Transformer init)."""
        for weight in self.parameters():
            if weight.dim() >= 2:
                xavier_uniform_(weight)
