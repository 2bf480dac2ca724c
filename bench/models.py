"""The training-step workloads, written once for both frameworks: every function takes the
module namespace (`cgrad` or `torch`) and uses only names the two share. Imports no
framework itself, so a fresh child measuring one framework's memory loads only that one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Tuple


@dataclass(frozen=True)
class Workload:
    """A model and its batch: `build(fw)` returns (model, inputs, loss function of the output)."""
    name: str
    build: Callable[[Any], Tuple[Any, Any, Callable[[Any], Any]]]


def _mlp(hidden: int, batch: int) -> Workload:
    def build(fw: Any):
        nn, F = fw.nn, fw.nn.functional
        model = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, 10))
        x, y = fw.randn(batch, 784), fw.randint(0, 10, (batch,))
        return model, x, lambda out: F.cross_entropy(out, y)
    return Workload(f"MLP 784-{hidden}-10, batch {batch}", build)


def _cnn(batch: int) -> Workload:
    def build(fw: Any):
        # The demo's own builder, parametrised by the nn namespace.
        from cgrad.examples.fashion_mnist import build_model
        model = build_model(fw.nn)
        x, y = fw.randn(batch, 1, 28, 28), fw.randint(0, 10, (batch,))
        return model, x, lambda out: fw.nn.functional.cross_entropy(out, y)
    return Workload(f"demo CNN (Fashion-MNIST), batch {batch}", build)


def _transformer(d_model: int, nhead: int, seq: int, batch: int) -> Workload:
    def build(fw: Any):
        model = fw.nn.TransformerEncoderLayer(d_model, nhead, batch_first=True)
        x, target = fw.randn(batch, seq, d_model), fw.randn(batch, seq, d_model)
        # Against a target: the mean of a LayerNorm output would send a zero gradient back.
        return model, x, lambda out: fw.nn.functional.mse_loss(out, target)
    return Workload(f"TransformerEncoderLayer d{d_model} h{nhead}, seq {seq}, batch {batch}", build)


def _lstm(layers: int, inputs: int, hidden: int, seq: int, batch: int) -> Workload:
    def build(fw: Any):
        model = fw.nn.LSTM(inputs, hidden, num_layers=layers, batch_first=True)
        x = fw.randn(batch, seq, inputs)
        return model, x, lambda out: out[0].mean()
    return Workload(f"LSTM {layers}x{hidden} (input {inputs}), seq {seq}, batch {batch}", build)


MLP_256 = _mlp(256, 128)
MLP_256_B32 = _mlp(256, 32)
MLP_1024 = _mlp(1024, 128)
CNN = _cnn(64)
TRANSFORMER = _transformer(128, 4, 64, 32)
LSTM = _lstm(2, 128, 256, 64, 32)
WORKLOADS = (MLP_256, MLP_256_B32, MLP_1024, CNN, TRANSFORMER, LSTM)


def train_step(fw: Any, workload: Workload, optimizer: str = "Adam") -> Callable[[], None]:
    """One training step as a callable: forward, loss, zero_grad, backward, optimizer step."""
    model, x, loss_fn = workload.build(fw)
    model.train()
    opt = getattr(fw.optim, optimizer)(model.parameters(), lr=1e-3)

    def step() -> None:
        loss = loss_fn(model(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step
