"""cgrad.nn.utils.rnn, as torch.nn.utils.rnn: PackedSequence (the time-major
concatenation of a batch of variable-length sequences, longest first, with
the batch size of every step) and the functions that make and undo it:
pack_padded_sequence / pad_packed_sequence, pad_sequence / unpad_sequence,
pack_sequence / unpack_sequence, invert_permutation. Packing and unpacking
are one index_select / index_copy each (differentiable, no per-step slices).
RNN / LSTM / GRU take a PackedSequence (cgrad/nn/modules/rnn.py)."""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence, Tuple, Union

from ... import _C
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Optional[Tensor]
    unsorted_indices: Optional[Tensor]


class PackedSequence(_PackedSequenceBase):
    """A packed batch of sequences: data (sum of the lengths, *), batch_sizes (the number of sequences still
    running at each step, an int64 CPU tensor), and the permutation that sorted the batch by length
    (sorted_indices; None when it came sorted) with its inverse (unsorted_indices)."""

    def __new__(cls, data: Tensor, batch_sizes: Optional[Tensor] = None, sorted_indices: Optional[Tensor] = None,
                unsorted_indices: Optional[Tensor] = None) -> "PackedSequence":
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)) as torch accepts
            if not isinstance(data, (list, tuple)) or len(data) != 2:
                raise TypeError("PackedSequence expects data and batch_sizes")
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                             "created manually. They should be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#"
                             "torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        """data.to(*args, **kwargs); the index tensors follow data's device only."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        si = self.sorted_indices.to(dev) if self.sorted_indices is not None else None
        ui = self.unsorted_indices.to(dev) if self.unsorted_indices is not None else None
        return type(self)(data, self.batch_sizes, si, ui)

    def cpu(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> "PackedSequence":
        return self.to("cuda", *args, **kwargs)

    def pin_memory(self) -> "PackedSequence":
        """The sequence with its data and index tensors pinned (Tensor.pin_memory: raises without a GPU)."""
        si = self.sorted_indices.pin_memory() if self.sorted_indices is not None else None
        ui = self.unsorted_indices.pin_memory() if self.unsorted_indices is not None else None
        return type(self)(self.data.pin_memory(), self.batch_sizes, si, ui)

    def double(self) -> "PackedSequence":
        return self.to(dtype=_C.float64)

    def float(self) -> "PackedSequence":
        return self.to(dtype=_C.float32)

    def half(self) -> "PackedSequence":
        return self.to(dtype=_C.float16)

    def long(self) -> "PackedSequence":
        return self.to(dtype=_C.int64)

    def int(self) -> "PackedSequence":
        return self.to(dtype=_C.int32)

    def short(self) -> "PackedSequence":
        return self.to(dtype=_C.int16)

    def char(self) -> "PackedSequence":
        return self.to(dtype=_C.int8)

    def byte(self) -> "PackedSequence":
        return self.to(dtype=_C.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Optional[Tensor]) -> Optional[Tensor]:
    """The inverse of a permutation of 0 .. n-1 (None stays None)."""
    if permutation is None:
        return None
    out = _C.empty_like(permutation)
    return out.scatter_(0, permutation, _C.arange(permutation.numel(), device=permutation.device))


def _lengths_list(lengths: Union[Tensor, Sequence[int]]) -> List[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D "
                               f"{lengths.device.type} {str(lengths.dtype).split('.')[-1]} tensor")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _step_index(lengths: List[int], batch: int) -> Tuple[List[int], Tensor]:
    """batch_sizes for lengths sorted longest first, and the flat time-major positions t * batch + b of
    the packed elements, in packed order."""
    sizes: List[int] = []
    flat: List[int] = []
    for t in range(lengths[0] if lengths else 0):
        bs = sum(1 for n in lengths if n > t)
        sizes.append(bs)
        flat.extend(t * batch + b for b in range(bs))
    return sizes, _C.tensor(flat, dtype=_C.int64)


def pack_padded_sequence(input: Tensor, lengths: Union[Tensor, Sequence[int]], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) ((B, T, *) when batch_first) of sequences of the given lengths."""
    lens = _lengths_list(lengths)
    bdim = 0 if batch_first else 1
    if len(lens) != input.size(bdim):
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size="
                           f"{input.size(bdim)})")
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])  # stable: ties keep their order
        sorted_indices = _C.tensor(order, dtype=_C.int64, device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(bdim, sorted_indices)
    if lens and lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    x = input.transpose(0, 1) if batch_first else input
    if lens and lens[0] > x.size(0):
        raise RuntimeError(f"Expected sequence length to be larger than or equal to {lens[0]} (the longest "
                           f"length), got {x.size(0)}")
    batch = x.size(1)
    sizes, flat = _step_index(lens, batch)
    data = x.reshape(x.size(0) * batch, *x.shape[2:]).index_select(0, flat.to(x.device))
    return PackedSequence(data, _C.tensor(sizes, dtype=_C.int64), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: Optional[int] = None) -> Tuple[Tensor, Tensor]:
    """Undo pack_padded_sequence: the padded batch (in the original batch order) and the lengths."""
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    batch = sizes[0] if sizes else 0
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    lens = [sum(1 for bs in sizes if bs > b) for b in range(batch)]
    data = sequence.data
    _, flat = _step_index(lens, batch)
    padded = _C.full((steps * batch, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = padded.index_copy(0, flat.to(data.device), data).reshape(steps, batch, *data.shape[1:])
    lengths = _C.tensor(lens, dtype=_C.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.to("cpu"))
    return (padded.transpose(0, 1) if batch_first else padded), lengths


def pad_sequence(sequences: Union[Tensor, Sequence[Tensor]], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of shapes (L_i, *) into (T, B, *) ((B, T, *) when batch_first), padded to the longest."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.size(0) for s in seqs)
    rest = tuple(seqs[0].shape[1:])
    out = _C.full((len(seqs), longest, *rest), padding_value, dtype=seqs[0].dtype, device=seqs[0].device)
    rows = []
    for s in seqs:
        if tuple(s.shape[1:]) != rest:
            raise RuntimeError(f"The size of tensor a ({rest}) must match the size of tensor b ({tuple(s.shape[1:])})")
        pad = out[0, : longest - s.size(0)]
        rows.append(_C.cat([s.to(out.dtype), pad] if padding_side == "right" else [pad, s.to(out.dtype)], 0))
    res = _C.stack(rows, 0)
    return res if batch_first else res.transpose(0, 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Union[Tensor, Sequence[int]],
                   batch_first: bool = False) -> List[Tensor]:
    """The list of sequences of a padded batch, each cut to its length."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """pack_padded_sequence(pad_sequence(sequences), their lengths)."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> List[Tensor]:
    """The list of sequences of a PackedSequence, in the original batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
