"""The embedding layer, as torch.nn: Embedding (padding_idx, max_norm, from_pretrained / freeze)."""
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

__all__ = ["Embedding"]


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
