"""Learning-rate schedulers with torch.optim.lr_scheduler's API and numbers.

Every scheduler derives from LRScheduler, which owns the bookkeeping (initial_lr in the
parameter groups, base_lrs, last_epoch, the step-order warnings, state_dict) and asks the
subclass for one number per parameter group:

- ``_next_lr(group, base_lr)``: the learning rate for ``self.last_epoch`` given the group
  (whose "lr" still holds the previous value); used by ``step()``. Schedules defined by a
  recurrence multiply the previous rate, the others evaluate their formula.
- ``_lr_at(base_lr)``: the closed form at ``self.last_epoch``, used by ``step(epoch)``
  where the schedule has one.

Schedules whose rate is not one number per group from those (LambdaLR, CyclicLR,
OneCycleLR) override ``_compute_lrs`` instead.

The arithmetic follows the formulas of the PyTorch documentation term by term, so the
sequences are bit-identical to PyTorch's. Cold code: a few float operations per group.
"""

from __future__ import annotations

import bisect
import collections
import math
import types
import warnings
import weakref
from typing import Any, Callable, Optional, Sequence, SupportsFloat, Union

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = [
    "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
    "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler",
]

_HOW_TO = "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
EPOCH_DEPRECATION_WARNING = (  # the message PyTorch gives
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available. Please open an issue "
    "if you are unable to replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")

Number = Union[float, Tensor]


def _set(group: dict, key: str, value: Any) -> None:
    """Store a hyper-parameter; a tensor-valued one is updated in place."""
    if isinstance(group.get(key), Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def _check_optimizer(optimizer: Any) -> None:
    """TypeError unless optimizer is an Optimizer."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _plain_state(obj: Any, *skip: str) -> dict[str, Any]:
    """obj's attributes except the optimizer and the names in skip."""
    return {k: v for k, v in vars(obj).items() if k != "optimizer" and k not in skip}


def _load_plain(obj: Any, state_dict: dict[str, Any], key: str) -> Any:
    """Set obj's attributes from state_dict except key; return state_dict[key]."""
    vars(obj).update((k, v) for k, v in state_dict.items() if k != key)
    return state_dict[key]


def _attrs_of(fn: Any) -> Optional[dict[str, Any]]:
    """What state_dict keeps of a user callable: a callable object's attributes, nothing of a function."""
    return None if fn is None or isinstance(fn, types.FunctionType) else dict(vars(fn))


def _per_group(name: str, optimizer: Optimizer, value: Any) -> list:
    """One value per parameter group: a list/tuple of the right length, or a scalar repeated."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return [v.clone() if isinstance(v, Tensor) else v for v in value]
    return [value.clone() if isinstance(value, Tensor) else value for _ in range(n)]


def _set_momentum(optimizer: Optimizer, momenta: Sequence[float], use_beta1: bool) -> None:
    """Write one momentum per group into "momentum", or into beta1 for Adam-like optimizers."""
    for group, m in zip(optimizer.param_groups, momenta):
        if use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m


def _momentum_key(optimizer: Optimizer) -> bool:
    """True when the optimizer keeps its momentum as beta1; raises when it has none."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    return "betas" in optimizer.defaults


def _count_optimizer_steps(optimizer: Optimizer) -> None:
    """Make optimizer.step record that it ran (for the step-order warning), once per optimizer."""
    step = optimizer.step
    if getattr(step, "_wrapped_by_lr_sched", False):
        return
    func = getattr(step, "__func__", None)  # unbound, so the wrapper holds the optimizer only weakly
    opt_ref = weakref.ref(optimizer)

    def counted_step(*args: Any, **kwargs: Any) -> Any:
        owner = opt_ref()
        setattr(owner, "_opt_called", True)
        return step(*args, **kwargs) if func is None else func(owner, *args, **kwargs)

    counted_step._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    optimizer.step = counted_step  # type: ignore[method-assign]


class LRScheduler:
    """Base class: adjusts the optimizer's learning rates once per step()."""

    _lr_at: Optional[Callable[..., Number]] = None  # closed form, where the schedule has one

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        for index, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{index}] "
                               "when resuming an optimizer")
        self.base_lrs: list[Number] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch: int = last_epoch
        _count_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """Reset the step count and take the step that sets the rates for epoch last_epoch + 1."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state: every attribute except the optimizer."""
        return _plain_state(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by state_dict()."""
        vars(self).update(state_dict)

    def get_last_lr(self) -> list[Number]:
        """The learning rates set by the last step()."""
        return self._last_lr

    def get_lr(self) -> list[Number]:
        """The learning rates for the current last_epoch, in the chainable form."""
        if not getattr(self, "_get_lr_called_within_step", False):
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        return self._compute_lrs()

    def _compute_lrs(self) -> list[Number]:
        return [self._next_lr(g, b) for g, b in zip(self.optimizer.param_groups, self.base_lrs)]

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        raise NotImplementedError

    def step(self, epoch: Optional[int] = None) -> None:
        """Advance one epoch (or, deprecated, jump to ``epoch``) and set the new learning rates."""
        if self._step_count == 1:
            if not getattr(self.optimizer.step, "_wrapped_by_lr_sched", False):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                              "initialization. Please, make sure to call `optimizer.step()` "
                              f"before `lr_scheduler.step()`. {_HOW_TO}", UserWarning)
            elif not vars(self.optimizer).get("_opt_called"):
                warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
                              "and later, you should call them in the opposite order: `optimizer.step()` before "
                              "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
                              f"value of the learning rate schedule. {_HOW_TO}", UserWarning)
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
            self.last_epoch = epoch
        self._apply(epoch is not None and self._lr_at is not None)

    def _apply(self, closed_form: bool = False) -> None:
        """Compute the rates for last_epoch (closed form or get_lr) and write them into the groups."""
        if closed_form:
            lrs = [self._lr_at(b) for b in self.base_lrs]
        else:
            self._get_lr_called_within_step = True
            try:
                lrs = self.get_lr()
            finally:
                self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, lrs):
            _set(group, "lr", lr)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class _LRScheduler(LRScheduler):  # noqa: N801
    """Deprecated alias of LRScheduler."""


class _FunctionScheduler(LRScheduler):
    """Shared part of LambdaLR / MultiplicativeLR: one function of the epoch per group;
    state_dict keeps the attributes of callable objects (not of plain functions)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], list], last_epoch: int) -> None:
        n = len(optimizer.param_groups)
        fns = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * n
        if len(fns) != n:
            raise ValueError(f"Expected {n} lr_lambdas, but got {len(fns)}")
        self.lr_lambdas = fns
        super().__init__(optimizer, last_epoch)

    def _compute_lrs(self) -> list[Number]:
        return [self._lr_for(f, g, b) for f, g, b in zip(self.lr_lambdas, self.optimizer.param_groups, self.base_lrs)]

    def _lr_for(self, fn: Callable[[int], float], group: dict[str, Any], base_lr: Number) -> Number:
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """The state; lr_lambdas holds each callable object's __dict__ (None for functions)."""
        return {**_plain_state(self, "lr_lambdas"), "lr_lambdas": [_attrs_of(f) for f in self.lr_lambdas]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state; callable objects get their saved attributes back."""
        for fn, attrs in zip(self.lr_lambdas, _load_plain(self, state_dict, "lr_lambdas")):
            vars(fn).update(attrs or {})


class LambdaLR(_FunctionScheduler):
    """lr = base_lr * lr_lambda(epoch)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], list],
                 last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    def _lr_for(self, fn: Callable[[int], float], group: dict[str, Any], base_lr: Number) -> Number:
        return base_lr * fn(self.last_epoch)


class MultiplicativeLR(_FunctionScheduler):
    """lr = previous lr * lr_lambda(epoch), from epoch 1 on."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Union[Callable[[int], float], list],
                 last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    def _lr_for(self, fn: Callable[[int], float], group: dict[str, Any], base_lr: Number) -> Number:
        return group["lr"] if self._is_initial else group["lr"] * fn(self.last_epoch)


class StepLR(LRScheduler):
    """Multiply the lr by gamma every step_size epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        e = self.last_epoch
        return group["lr"] * self.gamma if e != 0 and e % self.step_size == 0 else group["lr"]

    def _lr_at(self, base_lr: Number) -> Number:
        return base_lr * self.gamma ** (self.last_epoch // self.step_size)


class MultiStepLR(LRScheduler):
    """Multiply the lr by gamma at each milestone (repeated milestones multiply repeatedly)."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = collections.Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        hits = self.milestones.get(self.last_epoch, 0)
        return group["lr"] * self.gamma ** hits if hits else group["lr"]

    def _lr_at(self, base_lr: Number) -> Number:
        passed = bisect.bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return base_lr * self.gamma ** passed


class ConstantLR(LRScheduler):
    """lr = base_lr * factor until total_iters, then base_lr."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        if self.last_epoch == 0:
            return group["lr"] * self.factor
        return group["lr"] * (1.0 / self.factor) if self.last_epoch == self.total_iters else group["lr"]

    def _lr_at(self, base_lr: Number) -> Number:
        return base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))


class LinearLR(LRScheduler):
    """lr factor moves linearly from start_factor to end_factor over total_iters epochs."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        e, span = self.last_epoch, self.end_factor - self.start_factor
        if e == 0:
            return group["lr"] * self.start_factor
        if self._is_initial or e > self.total_iters:
            return group["lr"]
        return group["lr"] * (1.0 + span / (self.total_iters * self.start_factor + (e - 1) * span))

    def _lr_at(self, base_lr: Number) -> Number:
        e = min(self.total_iters, self.last_epoch)
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * e / self.total_iters)


class ExponentialLR(LRScheduler):
    """Multiply the lr by gamma every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        return group["lr"] if self._is_initial else group["lr"] * self.gamma

    def _lr_at(self, base_lr: Number) -> Number:
        return base_lr * self.gamma ** self.last_epoch


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - epoch / total_iters) ** power, constant after total_iters."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        e, n = self.last_epoch, self.total_iters
        if self._is_initial or e > n:
            return group["lr"]
        return group["lr"] * ((1.0 - e / n) / (1.0 - (e - 1) / n)) ** self.power

    def _lr_at(self, base_lr: Number) -> Number:
        return base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power


class CosineAnnealingLR(LRScheduler):
    """Cosine from base_lr down to eta_min over T_max epochs (recursive form, as documented)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        e, t, lo, lr = self.last_epoch, self.T_max, self.eta_min, group["lr"]
        if self._is_initial:
            return lr
        if (e - 1 - t) % (2 * t) == 0:
            return lr + (base_lr - lo) * (1 - math.cos(math.pi / t)) / 2
        return (1 + math.cos(math.pi * e / t)) / (1 + math.cos(math.pi * (e - 1) / t)) * (lr - lo) + lo

    def _lr_at(self, base_lr: Number) -> Number:
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every T_i epochs, T_i growing by T_mult after each restart."""

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if not (isinstance(T_0, int) and T_0 > 0):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not (isinstance(T_mult, int) and T_mult >= 1):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (int, float)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch  # epochs into the current cycle
        super().__init__(optimizer, last_epoch)

    def _next_lr(self, group: dict[str, Any], base_lr: Number) -> Number:
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2

    def step(self, epoch: Optional[float] = None) -> None:
        """Advance one epoch, or jump to a (possibly fractional) epoch."""
        if epoch is None and self.last_epoch >= 0:  # one epoch on, restarting when the cycle is over
            epoch, self.T_cur = self.last_epoch + 1, self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        else:  # jump: find the cycle holding epoch (cycle lengths T_0 * T_mult**k)
            epoch = 0 if epoch is None else epoch
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            t0, m = self.T_0, self.T_mult
            if epoch < t0:
                self.T_i, self.T_cur = t0, epoch
            elif m == 1:
                self.T_cur = epoch % t0
            else:
                k = int(math.log(epoch / t0 * (m - 1) + 1, m))
                self.T_cur, self.T_i = epoch - t0 * (m ** k - 1) / (m - 1), t0 * m ** k
        self.last_epoch = math.floor(epoch)
        self._apply()


class CyclicLR(LRScheduler):
    """Cyclical learning rate between base_lr and max_lr (and momentum inversely), Smith 2017."""

    def __init__(self, optimizer: Optimizer, base_lr: Union[float, list[float]], max_lr: Union[float, list[float]],
                 step_size_up: int = 2000, step_size_down: Optional[int] = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Optional[Callable[[float], float]] = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: Union[float, list[float]] = 0.8,
                 max_momentum: Union[float, list[float]] = 0.9, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                _set(group, "lr", lr)
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self.scale_mode, self._scale_fn_custom = mode, gamma, scale_mode, scale_fn
        self._init_scale_fn()
        self.cycle_momentum = bool(cycle_momentum)
        if cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                _set_momentum(optimizer, self.max_momentums, self.use_beta1)
                for group, hi, lo in zip(optimizer.param_groups, self.max_momentums, self.base_momentums):
                    group["max_momentum"], group["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is None:  # built-in modes fix the scale mode
            self.scale_mode = {"exp_range": "iterations"}.get(self.mode, "cycle")

    def scale_fn(self, x: float) -> float:
        """The amplitude scale at cycle (or iteration) x for the chosen mode or custom function."""
        custom = self._scale_fn_custom
        if custom is not None:
            return custom(x)
        if self.mode == "triangular2":  # halve the amplitude every cycle
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x if self.mode == "exp_range" else 1.0

    def _compute_lrs(self) -> list[Number]:
        t = self.last_epoch / self.total_size
        cycle = math.floor(1 + t)
        x = 1.0 + t - cycle  # position inside the cycle, in [0, 1)
        fraction = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [lo + (hi - lo) * fraction * scale for lo, hi in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            momenta = [hi - (hi - lo) * fraction * scale for lo, hi in zip(self.base_momentums, self.max_momentums)]
            _set_momentum(self.optimizer, momenta, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The state; a custom scale_fn is kept as its __dict__ when it is a callable object."""
        return {**_plain_state(self, "_scale_fn_custom"), "_scale_fn_custom": _attrs_of(self._scale_fn_custom)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state; a custom callable scale_fn gets its saved attributes back."""
        attrs = _load_plain(self, state_dict, "_scale_fn_custom")
        if attrs is not None:
            vars(self._scale_fn_custom).update(attrs)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    """The 1cycle policy: warm up to max_lr, anneal to max_lr / (div_factor * final_div_factor)."""

    def __init__(self, optimizer: Optimizer, max_lr: Union[float, list[float]], total_steps: Optional[int] = None,
                 epochs: Optional[int] = None, steps_per_epoch: Optional[int] = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: Union[float, list[float]] = 0.85, max_momentum: Union[float, list[float]] = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        if total_steps is None and (epochs is None or steps_per_epoch is None):
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        given = {"total_steps": total_steps} if total_steps is not None else {
            "epochs": epochs, "steps_per_epoch": steps_per_epoch}
        for name, value in given.items():
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"Expected positive integer {name}, but got {value}")
        self.total_steps = math.prod(given.values())
        if not (isinstance(pct_start, float) and 0 <= pct_start <= 1):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        warm = float(pct_start * self.total_steps) - 1
        if three_phase:
            phases = [(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                      (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            phases = [(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, phase)) for phase in phases]
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type, self.cycle_momentum = anneal_strategy, cycle_momentum
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, hi in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = hi / div_factor
                group["max_lr"] = hi
                group["min_lr"] = group["initial_lr"] / final_div_factor
        if cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer)
            his = _per_group("max_momentum", optimizer, max_momentum)
            los = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                _set_momentum(optimizer, his, self.use_beta1)
                for group, hi, lo in zip(optimizer.param_groups, his, los):
                    group["max_momentum"], group["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "linear":
            return (end - start) * pct + start
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    def _compute_lrs(self) -> list[Number]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is {self.total_steps}")
        lrs, momenta = [], []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momenta.append(self._anneal(group[phase["start_momentum"]], group[phase["end_momentum"]],
                                                    pct))
                    break
                start = end
        if self.cycle_momentum:
            _set_momentum(self.optimizer, momenta, self.use_beta1)
        return lrs


def _check_members(kind: str, schedulers: Sequence[Any], optimizer: Optimizer) -> None:
    """Validation shared by SequentialLR and ChainedScheduler."""
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{kind} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{kind} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                             f"kwargs to be specified when calling `step`, but got one at index {i} in the given "
                             "schedulers sequence.")
        if s.optimizer is not optimizer:
            raise ValueError(f"{kind} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{type(s).__name__} at index {i} has {s.optimizer}, which is different from "
                             f"{type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """Shared state handling of schedulers made of other schedulers."""

    _schedulers: list[LRScheduler]

    def state_dict(self) -> dict[str, Any]:
        """The state, with each member scheduler's state_dict under _schedulers."""
        return {**_plain_state(self, "_schedulers"), "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state and every member scheduler's state."""
        for s, member_state in zip(self._schedulers, _load_plain(self, state_dict, "_schedulers")):
            s.load_state_dict(member_state)


class SequentialLR(_Composite):
    """Run schedulers one after another, switching at the milestones."""

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler], milestones: list[int],
                 last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        _check_members("SequentialLR", schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            _set(group, "lr", group["initial_lr"])
        self.recursive_undo()
        schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def recursive_undo(self, sched: Optional[Sequence[LRScheduler]] = None) -> None:
        """Take back the initial step each member (recursively) made when it was built."""
        for s in self._schedulers if sched is None else sched:
            if isinstance(s, SequentialLR):
                s.recursive_undo(s._schedulers)
            elif hasattr(s, "last_epoch"):
                s.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Step the scheduler whose range holds the new epoch (restarting it at its milestone)."""
        self.last_epoch += 1
        i = bisect.bisect_right(self._milestones, self.last_epoch)
        current = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            current.step(0)
        else:
            current.step()
        self._last_lr = current.get_last_lr()


class ChainedScheduler(_Composite):
    """Step several schedulers together every epoch; their changes compose."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optional[Optimizer] = None) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members("ChainedScheduler", schedulers, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]

    def step(self) -> None:  # type: ignore[override]
        """Step every chained scheduler once."""
        for s in self._schedulers:
            s.step()
        self._last_lr = [group["lr"] for group in self._schedulers[-1].optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by factor once a metric has stopped improving for patience epochs."""

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: Union[float, list[float]] = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr: Optional[float] = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def get_lr(self) -> list[Number]:
        """Not defined here: the rates follow the metrics passed to step()."""
        raise NotImplementedError

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting out its cooldown after a reduction."""
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        """Whether metric a improves on best by more than the threshold."""
        rel = self.threshold_mode == "rel"
        if self.mode == "min":
            return a < best * (1.0 - self.threshold) if rel else a < best - self.threshold
        return a > best * (self.threshold + 1.0) if rel else a > best + self.threshold

    def step(self, metrics: SupportsFloat, epoch: Optional[int] = None) -> None:  # type: ignore[override]
        """Record the metric for one epoch; reduce the lr when it has plateaued."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = epoch
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(self.min_lrs) != len(groups):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new param group "
                    "being added to the optimizer. Please modify the `min_lrs` field to match the length of the "
                    "`optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, floor in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, floor)
            if old - new > self.eps:
                _set(group, "lr", new)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the state returned by state_dict()."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
