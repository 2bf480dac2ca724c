"""default_collate / default_convert: how a DataLoader merges samples into a batch."""
from __future__ import annotations

import collections.abc
from typing import Any, List

import cgrad

from ._worker import get_worker_info

_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(obj: Any) -> bool:
    return type(obj).__module__ == "numpy"


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_fields")


def default_convert(data: Any) -> Any:
    """NumPy arrays and scalars to tensors, recursively through mappings and sequences (no batching)."""
    if isinstance(data, cgrad.Tensor):
        return data
    if _is_numpy(data):
        import numpy as np
        if isinstance(data, np.ndarray):
            if data.dtype.kind in "SaUO":
                return data
            return cgrad.as_tensor(data)
        if isinstance(data, np.generic) and data.dtype.kind not in "SaUO":
            return cgrad.as_tensor(data)
        return data
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})  # type: ignore[call-arg]
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])  # type: ignore[call-arg]
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def default_collate(batch: List[Any]) -> Any:
    """Merge a list of samples into a batch: tensors are stacked along a new first dimension,
    Python numbers become tensors (float64 / int64), NumPy arrays become stacked tensors, strings
    stay a list, and mappings / tuples / lists / named tuples are collated element-wise."""
    elem = batch[0]
    if isinstance(elem, cgrad.Tensor):
        if get_worker_info() is not None and elem.device.type == "cpu":
            # in a worker: stack straight into shared memory, which goes to the main process as a handle
            from ...multiprocessing._sharing import empty_shared
            shape = (len(batch),) + tuple(elem.shape)
            if all(tuple(b.shape) == shape[1:] and b.dtype == elem.dtype and not b.requires_grad for b in batch):
                return cgrad.stack(batch, 0, out=empty_shared(shape, elem.dtype))
        return cgrad.stack(batch, 0)
    if _is_numpy(elem):
        import numpy as np
        if isinstance(elem, np.ndarray):
            if elem.dtype.kind in "SaUO":
                raise TypeError(_ERR.format(elem.dtype))
            return default_collate([cgrad.as_tensor(b) for b in batch])
        if isinstance(elem, np.generic):
            return cgrad.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return cgrad.tensor(batch)
    if isinstance(elem, float):
        return cgrad.tensor(batch, dtype=cgrad.float64)
    if isinstance(elem, int):
        return cgrad.tensor(batch, dtype=cgrad.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        try:
            return type(elem)({k: default_collate([d[k] for d in batch]) for k in elem})  # type: ignore[call-arg]
        except TypeError:
            return {k: default_collate([d[k] for d in batch]) for k in elem}
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(list(s)) for s in transposed]
        try:
            return type(elem)([default_collate(list(s)) for s in transposed])  # type: ignore[call-arg]
        except TypeError:
            return [default_collate(list(s)) for s in transposed]
    raise TypeError(_ERR.format(type(elem)))
