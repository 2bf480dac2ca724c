"""Samplers of cgrad.utils.data: the orders in which a DataLoader visits a dataset."""
from __future__ import annotations

from typing import Any, Generic, Iterable, Iterator, List, Optional, Sized, TypeVar, Union

import cgrad

T_co = TypeVar("T_co", covariant=True)


class Sampler(Generic[T_co]):
    """Base class: an iterable of dataset indices (or of lists of indices)."""

    def __init__(self, data_source: Optional[Sized] = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError("Subclasses of Sampler should implement __iter__.")


class SequentialSampler(Sampler[int]):
    """Indices 0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _seeded_generator(generator: Optional[Any]) -> Any:
    if generator is not None:
        return generator
    # a fresh generator seeded from the global one, as PyTorch does for every epoch
    seed = int(cgrad.randint(0, 2 ** 62, (), dtype=cgrad.int64).item())
    g = cgrad.Generator()
    g.manual_seed(seed)
    return g


class RandomSampler(Sampler[int]):
    """A random permutation of the indices (or, with replacement, num_samples random draws)."""

    def __init__(self, data_source: Sized, replacement: bool = False, num_samples: Optional[int] = None,
                 generator: Optional[Any] = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = _seeded_generator(self.generator)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from cgrad.randint(0, n, (32,), dtype=cgrad.int64, generator=generator).tolist()
            yield from cgrad.randint(0, n, (self.num_samples % 32,), dtype=cgrad.int64,
                                     generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from cgrad.randperm(n, generator=generator).tolist()
            yield from cgrad.randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices in a random order."""

    def __init__(self, indices: List[int], generator: Optional[Any] = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        perm = cgrad.randperm(len(self.indices), generator=_seeded_generator(self.generator)).tolist()
        for i in perm:
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler[List[int]]):
    """Groups the indices of another sampler into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler: Union[Sampler[int], Iterable[int]], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[List[int]]:
        batch: List[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return (n + self.batch_size - 1) // self.batch_size
