"""How tensors travel between processes: multiprocessing's ForkingPickler (used by
Queue, Pipe, Pool and spawned Process arguments) sends a CPU tensor as a handle to
its shared-memory storage (moved there first: share_memory_), not as a copy of its
bytes. The receiver maps the same memory, so writes on either side are seen by
both. init_reductions() registers this; `import cgrad.multiprocessing` calls it."""
from __future__ import annotations

from multiprocessing.reduction import DupFd, ForkingPickler
from typing import Any, Tuple

from .. import _C
from . import _sharing


def rebuild_tensor(cls: type, strategy: str, handle: Any, nbytes: int, dtype: Any, storage_offset: int,
                   size: Tuple[int, ...], stride: Tuple[int, ...], requires_grad: bool) -> Any:
    """The receiving side of reduce_tensor: map the segment and view it as the tensor."""
    from ..autograd.grad_mode import no_grad
    if strategy == "file_descriptor":
        handle = handle.detach()  # the fd, now ours
    _, m = _sharing.open_segment(strategy, handle, nbytes)
    itemsize = _C.empty(0, dtype=dtype).element_size()
    with no_grad():
        t = _sharing.tensor_over(m, dtype, nbytes // itemsize).as_strided(size, stride, storage_offset)
    return _finish(cls, t, requires_grad)


def rebuild_empty(cls: type, dtype: Any, size: Tuple[int, ...], stride: Tuple[int, ...],
                  requires_grad: bool) -> Any:
    """A tensor with no bytes: nothing to share."""
    t = _C.empty(0, dtype=dtype).as_strided(size, stride)
    return _finish(cls, t, requires_grad)


def rebuild_meta(cls: type, dtype: Any, size: Tuple[int, ...], stride: Tuple[int, ...], requires_grad: bool) -> Any:
    t = _C.empty(size, dtype=dtype, device="meta").as_strided(size, stride)
    return _finish(cls, t, requires_grad)


def _finish(cls: type, t: Any, requires_grad: bool) -> Any:
    from .._tensor import Tensor
    from ..nn.parameter import Parameter
    if cls is Parameter:
        return Parameter(t, requires_grad)
    if cls is not Tensor:
        return _C._make_subclass(cls, t, requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t: Any) -> Any:
    """ForkingPickler's reduction of a tensor (Tensor and Parameter)."""
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd "
                           "does not support crossing process boundaries. If you just want to transfer the data, "
                           "call detach() on the tensor before serializing (e.g., putting it on the queue).")
    cls, dtype, size, stride = type(t), t.dtype, tuple(t.shape), tuple(t.stride())
    if t.device.type == "meta":
        return (rebuild_meta, (cls, dtype, size, stride, t.requires_grad))
    if t.device.type == "cuda":  # PyTorch shares CUDA memory through CUDA IPC, which cgrad does not have
        raise RuntimeError(f"cgrad.multiprocessing: a tensor on {t.device} cannot be shared with another process "
                           "(cgrad has no CUDA IPC); send t.cpu(), or make it on the GPU in that process")
    _, nbytes = t._storage_key()
    if nbytes == 0:
        return (rebuild_empty, (cls, dtype, size, stride, t.requires_grad))
    _sharing.share_memory_(t)
    seg = _sharing.segment_of(t)
    assert seg is not None
    if seg.strategy == "file_descriptor" and seg.fd >= 0:
        handle: Any = DupFd(seg.fd)
    else:
        handle = _sharing.link_for_sending(seg)
    return (rebuild_tensor, (cls, seg.strategy, handle, nbytes, dtype, t.storage_offset(), size, stride,
                             t.requires_grad))


_done = False


def init_reductions() -> None:
    """Register reduce_tensor with multiprocessing's ForkingPickler (once)."""
    global _done
    if _done:
        return
    from .._tensor import Tensor
    from ..nn.parameter import Parameter
    ForkingPickler.register(Tensor, reduce_tensor)
    ForkingPickler.register(Parameter, reduce_tensor)
    _done = True
