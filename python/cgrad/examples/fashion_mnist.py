"""The main job: a small CNN trained on Fashion-MNIST with AdamW and a OneCycle
schedule. Run `python -m cgrad.examples.fashion_mnist` (options: --help).
The same script runs the same model in PyTorch (`--framework torch`) for
comparison: everything below the data loading uses only names that both
libraries share."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from types import ModuleType
from typing import Any, List, Optional, Sequence, Tuple

import cgrad
from cgrad.datasets import FashionMNIST

# Mean and standard deviation of the training images' pixels (in [0, 1]).
PIXEL_MEAN = 0.2860
PIXEL_STD = 0.3530


def build_model(nn: Any) -> Any:
    """Two conv blocks (conv, batch norm, ReLU, 2x2 max pool), dropout and two linear layers."""
    return nn.Sequential(
        nn.Conv2d(1, 24, 3, padding=1), nn.BatchNorm2d(24), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(24, 48, 3, padding=1), nn.BatchNorm2d(48), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25),
        nn.Linear(48 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25),
        nn.Linear(128, 10),
    )


def load_split(fw: ModuleType, train: bool, root: Optional[str]) -> Tuple[Any, Any]:
    """The whole split as (images (N, 1, 28, 28) normalized float32, labels int64), in `fw`."""
    ds = FashionMNIST(root=root, train=train)
    images = ((ds.data.to(cgrad.float32) / 255.0 - PIXEL_MEAN) / PIXEL_STD).unsqueeze(1)
    labels = ds.targets
    if fw is not cgrad:
        images, labels = fw.from_dlpack(images), fw.from_dlpack(labels)
    return images, labels


class Progress:
    """One line per epoch on stderr, redrawn in place: batches done, batches/s, running loss."""

    def __init__(self, epoch: int, epochs: int, total: int, width: int = 30) -> None:
        self.head = f"epoch {epoch}/{epochs}"
        self.total, self.width = total, width
        self.start = time.perf_counter()
        self.tty = sys.stderr.isatty()

    def update(self, done: int, loss: float, final: bool = False) -> None:
        if not (final or self.tty and (done % 20 == 0)):
            return
        fill = self.width * done // self.total
        bar = "=" * fill + (">" if fill < self.width else "") + " " * (self.width - fill - 1)
        rate = done / max(time.perf_counter() - self.start, 1e-9)
        line = f"{self.head} [{bar[:self.width]}] {done}/{self.total} {rate:6.1f} batch/s  loss {loss:.4f}"
        sys.stderr.write(("\r" if self.tty else "") + line + ("\n" if final else ""))
        sys.stderr.flush()


def evaluate(fw: ModuleType, model: Any, images: Any, labels: Any, batch_size: int = 1000) -> float:
    """Test accuracy in percent (eval mode, no grad)."""
    model.eval()
    correct = 0
    with fw.no_grad():
        for i in range(0, images.shape[0], batch_size):
            logits = model(images[i:i + batch_size])
            correct += int((logits.argmax(1) == labels[i:i + batch_size]).sum())
    return 100.0 * correct / images.shape[0]


def train(fw: ModuleType, args: argparse.Namespace) -> List[Tuple[int, float, float]]:
    """Train, evaluate after each epoch, save + reload the checkpoint; returns the history
    (epoch, mean training loss, test accuracy)."""
    nn, F = fw.nn, fw.nn.functional
    fw.manual_seed(args.seed)
    train_x, train_y = load_split(fw, True, args.data)
    if args.subset:
        train_x, train_y = train_x[:args.subset], train_y[:args.subset]
    test_x, test_y = load_split(fw, False, args.data)
    loader = fw.utils.data.DataLoader(fw.utils.data.TensorDataset(train_x, train_y), batch_size=args.batch_size,
                                      shuffle=True, drop_last=True,
                                      generator=fw.Generator().manual_seed(args.seed))
    model = build_model(nn)
    optimizer = fw.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = fw.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, epochs=args.epochs,
                                                 steps_per_epoch=len(loader))
    history = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        bar = Progress(epoch, args.epochs, len(loader))
        running, total = 0.0, 0.0
        for step, (x, y) in enumerate(loader, 1):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            value = loss.item()
            total += value
            running = value if step == 1 else 0.95 * running + 0.05 * value
            bar.update(step, running, final=step == len(loader))
        acc = evaluate(fw, model, test_x, test_y)
        history.append((epoch, total / len(loader), acc))
        print(f"epoch {epoch}: train loss {total / len(loader):.4f}  test accuracy {acc:.2f}%", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fashion_mnist_cnn.pt")
        fw.save(model.state_dict(), path)
        restored = build_model(nn)
        restored.load_state_dict(fw.load(path))
        reloaded = evaluate(fw, restored, test_x, test_y)
        print(f"checkpoint: {os.path.getsize(path) / 1e6:.2f} MB saved and reloaded; "
              f"test accuracy {reloaded:.2f}% (before: {history[-1][2]:.2f}%)")
    return history


def report_curve(history: Sequence[Tuple[int, float, float]], path: str) -> None:
    """The loss / accuracy curve as an image when matplotlib is installed, as a table otherwise."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("epoch  train loss  test accuracy   (install matplotlib for a plot)")
        for epoch, loss, acc in history:
            print(f"{epoch:5d}  {loss:10.4f}  {acc:12.2f}%")
        return
    epochs = [h[0] for h in history]
    fig, ax1 = plt.subplots(figsize=(6, 4))
    ax1.plot(epochs, [h[1] for h in history], "o-", color="tab:blue")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("train loss", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(epochs, [h[2] for h in history], "s-", color="tab:red")
    ax2.set_ylabel("test accuracy (%)", color="tab:red")
    fig.tight_layout()
    fig.savefig(path)
    print(f"curve written to {path}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3, help="peak learning rate of the OneCycle schedule")
    parser.add_argument("--threads", type=int, default=0, help="threads (0: the library's default)")
    parser.add_argument("--framework", choices=["cgrad", "torch"], default="cgrad")
    parser.add_argument("--data", default=None, help="folder with the IDX files (default: the Debian location)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--subset", type=int, default=0, help="train on the first N images only (0: all)")
    parser.add_argument("--curve", default="fashion_mnist_curve.png", help="where to write the curve image")
    args = parser.parse_args(argv)
    fw = importlib.import_module(args.framework)
    if args.threads > 0:
        fw.set_num_threads(args.threads)
    print(f"{args.framework} {fw.__version__}, {fw.get_num_threads()} threads, "
          f"batch {args.batch_size}, {args.epochs} epochs")
    start = time.perf_counter()
    history = train(fw, args)
    report_curve(history, args.curve)
    print(f"final test accuracy {history[-1][2]:.2f}%  wall time {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
