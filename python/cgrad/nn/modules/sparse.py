"""The embedding layers, as torch.nn: Embedding (padding_idx, max_norm, from_pretrained / freeze) and EmbeddingBag
(sum / mean / max of bags, offsets, per_sample_weights)."""
from __future__ import annotations

from typing import Any, Optional

from ... import _C
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _HIDDEN, _fields_repr, _unless

__all__ = ["Embedding", "EmbeddingBag"]


def _row_index(index: Optional[int], rows: int) -> Optional[int]:
    """padding_idx checked against the table's rows (AssertionError outside [-rows, rows)) and made
    non-negative; None stays None."""
    if index is None:
        return None
    if not -rows <= index < rows and index != 0:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return index + rows if index < 0 else index


class Embedding(Module):
    """A lookup table: weight (num_embeddings, embedding_dim), N(0, 1) at init with the padding_idx row zeroed;
    input indices of any shape give input.shape + (embedding_dim,)."""

    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                     "scale_grad_by_freq", "sparse"]
    num_embeddings: int
    embedding_dim: int
    padding_idx: Optional[int]
    max_norm: Optional[float]
    norm_type: float
    scale_grad_by_freq: bool
    weight: Tensor
    freeze: bool
    sparse: bool

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None,
                 max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Optional[Tensor] = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        rows, cols = num_embeddings, embedding_dim
        self.num_embeddings, self.embedding_dim = rows, cols
        self.padding_idx = _row_index(padding_idx, rows)
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        given = _weight is not None
        if given and tuple(_weight.shape) != (rows, cols):
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        table = _weight if given else _C.empty((rows, cols), device=device, dtype=dtype)
        self.weight = Parameter(table, requires_grad=not _freeze)
        if not given:
            self.reset_parameters()
        self.sparse = sparse

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        row = self.padding_idx
        if row is None:
            return
        with no_grad():
            self.weight[row].zero_()

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        return _fields_repr(self.num_embeddings, self.embedding_dim,
                            padding_idx=_HIDDEN if self.padding_idx is None else self.padding_idx,
                            max_norm=_HIDDEN if self.max_norm is None else self.max_norm,
                            norm_type=_unless(self.norm_type, 2),
                            scale_grad_by_freq=_HIDDEN if self.scale_grad_by_freq is False else self.scale_grad_by_freq,
                            sparse=_HIDDEN if self.sparse is False else True)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: Optional[int] = None,
                        max_norm: Optional[float] = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding whose weight is `embeddings` (2-d); frozen (requires_grad False) unless freeze=False."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        return cls(*embeddings.shape, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)


class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embeddings: weight (num_embeddings, embedding_dim), N(0, 1) at init with
    the padding_idx row zeroed; forward(input, offsets=None, per_sample_weights=None) gives (bags, embedding_dim)."""

    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                     "sparse", "include_last_offset", "padding_idx"]
    num_embeddings: int
    embedding_dim: int
    max_norm: Optional[float]
    norm_type: float
    scale_grad_by_freq: bool
    weight: Tensor
    mode: str
    sparse: bool
    include_last_offset: bool
    padding_idx: Optional[int]

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: Optional[float] = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                 _weight: Optional[Tensor] = None, include_last_offset: bool = False,
                 padding_idx: Optional[int] = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        rows, cols = num_embeddings, embedding_dim
        self.num_embeddings, self.embedding_dim = rows, cols
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = _row_index(padding_idx, rows)
        if _weight is None:
            self.weight = Parameter(_C.empty((rows, cols), device=device, dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [rows, cols]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        row = self.padding_idx
        if row is None:
            return
        with no_grad():
            self.weight[row].zero_()

    def forward(self, input: Tensor, offsets: Optional[Tensor] = None,
                per_sample_weights: Optional[Tensor] = None) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self) -> str:
        return _fields_repr(self.num_embeddings, self.embedding_dim,
                            max_norm=_HIDDEN if self.max_norm is None else self.max_norm,
                            norm_type=_unless(self.norm_type, 2),
                            scale_grad_by_freq=_HIDDEN if self.scale_grad_by_freq is False else self.scale_grad_by_freq,
                            mode=repr(self.mode),
                            padding_idx=_HIDDEN if self.padding_idx is None else self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, max_norm: Optional[float] = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                        sparse: bool = False, include_last_offset: bool = False,
                        padding_idx: Optional[int] = None) -> "EmbeddingBag":
        """An EmbeddingBag whose weight is `embeddings` (2-d); frozen (requires_grad False) unless freeze=False."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
