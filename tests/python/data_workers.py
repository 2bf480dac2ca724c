"""Datasets and callables for test_data.py's worker tests, in a module of their own
so that spawned worker processes import it without importing torch."""
import cgrad
import cgrad.utils.data as cud


class Stream(cud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = cud.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


class Failing(cud.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"bad index {i}")
        return cgrad.tensor(float(i))


def double(batch):
    return [2 * b for b in batch]


def check_worker_info(worker_id):
    info = cud.get_worker_info()
    assert info.id == worker_id and info.num_workers == 2


class Hangs(cud.Dataset):
    """A dataset whose items never come (a hung worker)."""
    def __len__(self):
        return 4

    def __getitem__(self, i):
        import time
        time.sleep(600)
        return i
