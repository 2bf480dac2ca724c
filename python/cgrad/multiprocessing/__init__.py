"""cgrad.multiprocessing (torch.multiprocessing): Python's multiprocessing, with tensors
sent between processes through shared memory (reductions.py, _sharing.py), the
sharing strategies, and spawn / start_processes (spawn.py). Works under the fork,
spawn and forkserver start methods."""
import multiprocessing
from multiprocessing import *  # noqa: F401,F403 - torch.multiprocessing re-exports it whole

from ._sharing import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy
from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext, spawn,
                    start_processes)

__all__ = list(multiprocessing.__all__) + ["get_all_sharing_strategies", "get_sharing_strategy",
                                           "set_sharing_strategy"]

init_reductions()
