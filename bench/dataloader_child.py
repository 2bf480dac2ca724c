"""One DataLoader measurement in a fresh process: `python -m bench.dataloader_child LIB MODE`
prints the best seconds to iterate a worker-bound loader (2 workers, batches of 32
images 3x224x224 float32, 19 MB each). MODE 'shared' is the library's own path
(batches through shared memory); 'pickled' (cgrad only) turns that off, so the
batches travel as pickled bytes, as they did before cgrad.multiprocessing."""
from __future__ import annotations

import sys
import time

BATCHES = 24
BATCH = 32


def main(lib_name: str, mode: str) -> None:
    if lib_name == "cgrad":
        import cgrad as lib
        if mode == "pickled":
            from cgrad.multiprocessing import reductions
            from cgrad.utils.data import _collate
            reductions.init_reductions = lambda: None  # no shared-memory reductions
            _collate.get_worker_info = lambda: None  # collate into ordinary memory
            from multiprocessing.reduction import ForkingPickler
            ForkingPickler._extra_reducers.pop(lib.Tensor, None)
    else:
        import torch as lib
    lib.set_num_threads(1)

    class Images(lib.utils.data.Dataset):
        def __len__(self) -> int:
            return BATCHES * BATCH

        def __getitem__(self, i: int):  # the worker's cost: one fill per sample
            return lib.full((3, 224, 224), float(i % 7)), i

    loader = lib.utils.data.DataLoader(Images(), batch_size=BATCH, num_workers=2, persistent_workers=True)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        total = 0.0
        for x, _y in loader:
            total += float(x[0, 0, 0, 0])
        best = min(best, time.perf_counter() - t)
    print(best)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
