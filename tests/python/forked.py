"""Run a function in a forked child with a timeout, for the fork servers of
the hostile-input and size-overflow suites (hostile_runner.py,
test_size_overflow.py): the child sends the function's JSON result back
through a pipe; a hang, a death by signal or a failure to report comes back
as {"hang": True}, {"signal": name} or {"exit": code}."""
import json
import os
import select
import signal
import time
from typing import Any, Callable, Dict


def run_forked(fn: Callable[[], Any], timeout: float) -> Dict[str, Any]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into the caller
        code = 0
        try:
            os.close(r)
            os.write(w, json.dumps(fn()).encode())
        except BaseException:  # noqa: BLE001 - reported as the exit code
            code = 3
        finally:
            os._exit(code)
    os.close(w)
    chunks, deadline = [], time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"hang": True}
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"signal": signal.Signals(os.WTERMSIG(status)).name}
    if os.WEXITSTATUS(status) or not chunks:
        return {"exit": os.WEXITSTATUS(status)}
    return json.loads(b"".join(chunks))
