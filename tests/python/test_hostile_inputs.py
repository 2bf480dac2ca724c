"""Hostile inputs (hostile_cases.py): every case runs in a child process
forked by a small server (hostile_runner.py), and must raise the declared
exception with a message naming the problem, survive it (a later op still
works) and free what the failed call allocated; a crash (signal) or a hang
(timeout) fails the case by name. Where torch has the same API, the same call
must raise PyTorch's declared type."""
import json
import os
import re
import subprocess
import sys
import warnings

import pytest
import torch

from hostile_cases import BY_NAME, CASES

TIMEOUT_S = 60  # a case that has not answered by then hangs (the machine is shared: be generous)


@pytest.fixture(scope="module")
def runner():
    """The fork server (hostile_runner.py): cgrad without PyTorch, so each fork is cheap."""
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.Popen([sys.executable, os.path.join(here, "hostile_runner.py"), str(TIMEOUT_S)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=here)

    def run(name):
        proc.stdin.write(name + "\n")
        proc.stdin.flush()
        line = proc.stdout.readline()
        assert line, f"{name}: the fork server died (exit {proc.poll()})"
        return json.loads(line)

    yield run
    proc.stdin.close()
    proc.wait(timeout=TIMEOUT_S)


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_hostile_input(runner, name):
    c = BY_NAME[name]
    rep = runner(name)
    assert "hang" not in rep, f"{name}: no answer within {TIMEOUT_S} s"
    assert "signal" not in rep, f"{name}: the process died with {rep.get('signal')}"
    assert "exit" not in rep, f"{name}: the child failed to report (exit {rep.get('exit')})"
    assert rep["raised"] is not None, f"{name}: no exception raised"
    assert rep["is_declared"], f"{name}: raised {rep['raised']}({rep['message']!r}), expected {c.exc.__name__}"
    assert re.search(c.match, rep["message"], re.IGNORECASE | re.DOTALL), \
        f"{name}: message {rep['message']!r} does not contain /{c.match}/"
    assert rep["alive"], f"{name}: cgrad stopped working after the error"
    assert rep["leaked_bytes"] == 0, f"{name}: the failed call left {rep['leaked_bytes']} bytes allocated"


TORCH_CHECKED = [c.name for c in CASES if c.torch is not None]


@pytest.mark.parametrize("name", TORCH_CHECKED)
def test_torch_raises_the_declared_type(name):
    """The table's exception types are PyTorch's: the same call in torch raises them."""
    c = BY_NAME[name]
    expected = c.exc if c.torch is True else c.torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(expected):
            c.fn(torch)


def test_table_covers_every_family():
    prefixes = ("empty", "zeros", "ones", "full", "randn", "reshape", "view", "expand", "repeat", "new_",
                "getitem", "index_select", "gather", "scatter", "scatter_add", "index_add", "take", "embedding",
                "cross_entropy", "nll_loss", "one_hot", "add_", "matmul", "conv2d", "mse_loss", "cat", "stack",
                "load_", "optim_", "dropout", "lstm")
    names = [c.name for c in CASES]
    for p in prefixes:
        assert any(n.startswith(p) for n in names), f"no hostile case for {p}"
    for family in ("negative", "overflow", "1pib", "out_of_range", "meta_cpu", "dtypes", "truncated", "overlapping",
                   "unknown_dtype", "header_length_beyond_file", "shape_bytes_mismatch", "bad_header_json"):
        assert any(family in n for n in names), f"no hostile case of kind {family}"
    assert len(CASES) >= 200
