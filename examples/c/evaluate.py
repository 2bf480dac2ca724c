"""Check what examples/c/fashion_mnist_mlp.c did, from Python: its loss fell, and its checkpoint,
loaded into nn.Sequential(Linear(784, 128), ReLU(), Linear(128, 10)) with cgrad.load, gives the
test accuracy the C program printed, on the same test samples.
    python examples/c/evaluate.py CHECKPOINT LOG TEST_SAMPLES [DATA_DIR]"""
from __future__ import annotations

import re
import sys

import cgrad
from cgrad import nn


def main(checkpoint: str, log: str, n_test: int, root: str | None = None) -> int:
    text = open(log).read()
    losses = [float(v) for v in re.findall(r"train loss ([0-9.]+)", text)]
    printed = float(re.search(r"\(test accuracy ([0-9.]+)%\)", text).group(1))
    if len(losses) < 2 or not losses[-1] < losses[0]:
        print(f"the C program's loss did not fall: {losses}")
        return 1
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    model.load_state_dict(cgrad.load(checkpoint))
    test = cgrad.datasets.FashionMNIST(root=root, train=False)
    x = cgrad.stack([test[i][0].reshape(784) for i in range(n_test)]).float()
    y = cgrad.tensor([int(test[i][1]) for i in range(n_test)])
    with cgrad.no_grad():
        acc = 100.0 * float((model(x).argmax(1) == y).float().mean())
    print(f"C training: loss {losses[0]:.4f} -> {losses[-1]:.4f}; the checkpoint in Python: test accuracy "
          f"{acc:.4f}% (C printed {printed:.4f}%)")
    return 0 if abs(acc - printed) < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None))
