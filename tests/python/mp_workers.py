"""Functions run in child processes by test_multiprocessing.py (importable, so the spawn start method finds them)."""
import os
import signal

import cgrad


def write_through(q, r, t):
    """Add 1 to the tensor received on q, set t[0] = 42 (t came as a Process argument), answer on r."""
    x = q.get()
    x += 1
    t[0] = 42.0
    r.put("done")


def echo_back(q, r):
    """Receive a tensor and send it back (a tensor received through shared memory can be sent again).
    The sender stays alive until the parent has it: the parent fetches the fd from this process."""
    x = q.get()
    x.mul_(2)
    r.put(x)
    r.put(x.is_shared())
    q.get()


def pipe_child(conn):
    x = conn.recv()
    x.fill_(7.0)
    conn.send("ok")


def hogwild(rank, model, x, y, steps):
    """Train the shared model with SGD (Hogwild: no locks)."""
    cgrad.manual_seed(rank)
    opt = cgrad.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()


def raises(rank):
    if rank == 1:
        raise ValueError(f"boom from rank {rank}")


def exits(rank, code):
    if rank == 0:
        os._exit(code)


def killed(rank):
    if rank == 0:
        os.kill(os.getpid(), signal.SIGKILL)


class Squares(cgrad.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return cgrad.full((3, 4), float(i)), i


class DiesInWorker(cgrad.utils.data.Dataset):
    """Sample 5 kills the worker that loads it."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == 5:
            os.kill(os.getpid(), signal.SIGKILL)
        return cgrad.ones(2)
