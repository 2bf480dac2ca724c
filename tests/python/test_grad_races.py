"""Races on a leaf's .grad (issue 22, Note [Concurrent backward] in
src/autograd/node.c): threads running backward into the same leaves while
another thread clears, reads or zeroes their gradients. PyTorch itself can
crash on some of these; cgrad must not. Each case runs RUNS times in its own
child process, so a crash fails the case by name instead of killing pytest."""
import subprocess
import sys
import textwrap

import pytest

RUNS = 50

PRELUDE = """
import threading
import cgrad as torch

def run_backward(make_loss, n, errors):
    try:
        for _ in range(n):
            make_loss().backward()
    except Exception as e:  # an exception is a defined result; a crash is not
        errors.append(repr(e))

def race(make_loss, meddle, threads=3, n=20):
    errors, done = [], threading.Event()
    ts = [threading.Thread(target=run_backward, args=(make_loss, n, errors)) for _ in range(threads)]
    for t in ts:
        t.start()
    while any(t.is_alive() for t in ts):
        meddle()
    for t in ts:
        t.join()
    return errors
"""

# a small model and its optimizer, for the zero_grad cases
MODEL = """
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
inp = torch.randn(4, 8)
"""

CASES = {
    "grad_set_to_none": """
x = torch.ones(64, requires_grad=True)
def meddle():
    x.grad = None
for _ in range(RUNS):
    race(lambda: (x * 2).sum(), meddle)
""",
    "grad_read_while_accumulating": """
x = torch.ones(64, requires_grad=True)
seen = []
def meddle():
    g = x.grad
    if g is not None:
        seen.append(float(g.sum()))
for _ in range(RUNS):
    x.grad = None
    race(lambda: (x * 2).sum(), meddle)
    assert x.grad is not None and float(x.grad[0]) == 2 * 3 * 20, x.grad
""",
    "zero_grad_set_to_none": MODEL + """
for _ in range(RUNS):
    race(lambda: model(inp).sum(), opt.zero_grad)
""",
    "zero_grad_in_place": MODEL + """
for _ in range(RUNS):
    race(lambda: model(inp).sum(), lambda: opt.zero_grad(set_to_none=False))
""",
    "grad_assigned_while_accumulating": """
x = torch.ones(64, requires_grad=True)
def meddle():
    x.grad = torch.zeros(64)
for _ in range(RUNS):
    race(lambda: (x * 2).sum(), meddle)
""",
    "retain_grad_target_cleared": """
x = torch.ones(64, requires_grad=True)
ys = []
def loss():
    y = x * 2
    y.retain_grad()
    ys.append(y)
    return (y * y).sum()
def meddle():
    if ys:
        ys[-1].grad = None
for _ in range(RUNS):
    ys.clear()
    race(loss, meddle)
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_race_does_not_crash(name):
    src = PRELUDE + f"\nRUNS = {RUNS}\n" + textwrap.dedent(CASES[name]) + "\nprint('ok')\n"
    p = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{name}: exit {p.returncode} (negative: killed by signal)\n{p.stderr[-3000:]}"
    assert p.stdout.strip().endswith("ok")
