"""cgrad.optim.swa_utils (torch.optim.swa_utils): stochastic weight averaging
and exponential moving averages of a model (AveragedModel and the averaging
functions), the SWALR schedule, and update_bn to recompute BatchNorm
statistics for averaged weights."""
from __future__ import annotations

import itertools
import math
from copy import deepcopy
from typing import Any, Callable, Iterable, List, Optional, Union

from .. import _C
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _per_group
from .optimizer import Optimizer, _to_scalar

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]

ParamList = List[Tensor]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[ParamList, ParamList, Any], None]:
    """An in-place EMA over lists of tensors: ema = decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_params: ParamList, current_params: ParamList, _: Any) -> None:
        with no_grad():
            floating = ema_params[0].is_floating_point()
            for ema, cur in zip(ema_params, current_params):
                if floating:
                    ema.lerp_(cur, 1 - decay)
                else:
                    ema.copy_(ema * decay + cur * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable[[ParamList, ParamList, Union[Tensor, int]], None]:
    """An in-place running mean over lists of tensors after `num_averaged` models."""
    def swa_update(averaged: ParamList, current: ParamList, num_averaged: Union[Tensor, int]) -> None:
        with no_grad():
            n = _to_scalar(num_averaged)
            floating = averaged[0].is_floating_point()
            for avg, cur in zip(averaged, current):
                if floating:
                    avg.lerp_(cur, 1 / (n + 1))
                else:
                    avg.add_(cur.sub(avg), alpha=1.0 / (n + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The EMA of one tensor: decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Union[Tensor, int]], Tensor]:
    """The running mean of one tensor after `num_averaged` models."""
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Union[Tensor, int]) -> Tensor:
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose parameters (and, with use_buffers, buffers) hold a running
    average of `model`'s, updated by update_parameters(model)."""

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Optional[Callable[[Tensor, Tensor, Union[Tensor, int]], Tensor]] = None,
                 multi_avg_fn: Optional[Callable[[ParamList, ParamList, Union[Tensor, int]], None]] = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _C.tensor(0, dtype=_C.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current parameters into the average (the first call copies them)."""
        with no_grad():
            if self.use_buffers:
                mine: Iterable[Tensor] = itertools.chain(self.module.parameters(), self.module.buffers())
                theirs: Iterable[Tensor] = itertools.chain(model.parameters(), model.buffers())
            else:
                mine, theirs = self.parameters(), model.parameters()
            averaged, current = [], []
            first = self.n_averaged.item() == 0
            for p_avg, p_model in zip(mine, theirs):
                averaged.append(p_avg.detach())
                current.append(p_model.detach().to(p_avg.device))
                if first:
                    averaged[-1].copy_(current[-1])
            if not first:
                if self.avg_fn is not None:
                    for p_avg, p_model in zip(averaged, current):
                        p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged))
                else:
                    # one call per dtype, as PyTorch groups the tensors by device and dtype
                    update = self.multi_avg_fn or get_swa_multi_avg_fn()
                    groups: dict = {}
                    for p_avg, p_model in zip(averaged, current):
                        pair = groups.setdefault(p_avg.dtype, ([], []))
                        pair[0].append(p_avg)
                        pair[1].append(p_model)
                    for avg_list, cur_list in groups.values():
                        update(avg_list, cur_list, self.n_averaged)
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of every BatchNorm in `model` with one pass over
    `loader` (each batch a tensor, or a list / tuple whose first element is the input)."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None  # a cumulative average over the whole pass
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to its swa_lr over anneal_epochs ('cos' or 'linear'),
    then holds it there."""

    def __init__(self, optimizer: Optimizer, swa_lr: Union[float, List[float]], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for value, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = value
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    def _compute_lrs(self) -> List[Any]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self._anneal(max(0, min(1, (step - 1) / span)))
        alpha = self._anneal(max(0, min(1, step / span)))
        lrs = []
        for group in self.optimizer.param_groups:
            lr, swa = group["lr"], group["swa_lr"]
            # the rate the annealing started from, recovered from the current one
            start = swa if prev_alpha == 1 else (lr - prev_alpha * swa) / (1 - prev_alpha)
            lrs.append(swa * alpha + start * (1 - alpha))
        return lrs
