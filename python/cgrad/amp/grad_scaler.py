"""GradScaler (torch.amp.GradScaler): dynamic loss scaling for low-precision
training. The inf / NaN check over all of an optimizer's gradients is one
fused engine call (`_C._amp_foreach_non_finite_check_and_unscale_`) and the
step decision reads one flag per optimizer."""
from __future__ import annotations

import warnings
from typing import Any, Dict, Iterable, Optional, Union

from .. import _C

_READY, _UNSCALED, _STEPPED = 0, 1, 2
_F32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103  # doubles from here up round to inf in float32


def _fresh_state() -> Dict[str, Any]:
    return {"stage": _READY, "found_inf": None}


class GradScaler:
    """Scale the loss so that small low-precision gradients don't flush to
    zero; unscale before the optimizer step, skip steps whose gradients hold
    inf / NaN, and adapt the scale: multiply by backoff_factor after a skipped
    step, by growth_factor after growth_interval steps in a row without one."""

    def __init__(self, device: str = "cpu", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = bool(enabled)
        if device == "cuda" and self._enabled:
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                              stacklevel=2)
            else:  # its scale and found-inf bookkeeping are CPU tensors and CPU engine calls
                warnings.warn("cgrad.amp.GradScaler('cuda') is not implemented (cgrad scales gradients on the CPU "
                              "only, and does not autocast on CUDA).  Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = float(init_scale)
            self._scale: Optional[Any] = None  # 0-d float32 tensor, made by the first scale()
            self._growth_factor = float(growth_factor)
            self._backoff_factor = float(backoff_factor)
            self._growth_interval = int(growth_interval)
            self._growth_tracker = 0
            self._per_optimizer_states: Dict[int, Dict[str, Any]] = {}

    def _state(self, optimizer: Any) -> Dict[str, Any]:
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    def _need_scale(self, funcname: str) -> Any:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")
        return self._scale

    def scale(self, outputs: Union[Any, Iterable[Any]]) -> Union[Any, Iterable[Any]]:
        """outputs (a tensor or nested lists / tuples of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = _C.full((), self._init_scale, dtype=_C.float32)
        if isinstance(outputs, _C._TensorBase):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, tuple) else scaled
        if isinstance(outputs, Iterable):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide optimizer's gradients by the scale in place (once per step) and
        record whether any of them holds inf / NaN."""
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        scale = self._need_scale("unscale_")
        inv_scale = _C.full((), 1.0 / float(scale.item()), dtype=_C.float32)  # the reciprocal in double
        found_inf = _C.zeros((), dtype=_C.float32)
        grads = []
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if g.dtype == _C.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grads.append(g)
        _C._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        st["found_inf"] = found_inf
        st["stage"] = _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Optional[Any]:
        """unscale_ (unless done already), then optimizer.step(*args, **kwargs)
        unless a gradient held inf / NaN (the step is skipped: returns None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._need_scale("step")
        st = self._state(optimizer)
        if st["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] == _READY:
            self.unscale_(optimizer)
        if st["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        ret = None
        if not float(st["found_inf"].item()):
            ret = optimizer.step(*args, **kwargs)
        st["stage"] = _STEPPED
        return ret

    def update(self, new_scale: Optional[Union[float, Any]] = None) -> None:
        """Adapt the scale after this iteration's steps (or set it to new_scale)."""
        if not self._enabled:
            return
        scale = self._need_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, _C._TensorBase):
                if new_scale.numel() != 1 or new_scale.dtype != _C.float32 or new_scale.requires_grad:
                    raise AssertionError("new_scale should be a float or a 1-element float32 tensor "
                                         "with requires_grad=False.")
                scale.copy_(new_scale.reshape(()))
            else:
                scale.fill_(float(new_scale))
        else:
            flags = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not flags:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = any(float(f.item()) for f in flags)
            if found:
                scale.fill_(float(scale.item()) * self._backoff_factor)
                self._growth_tracker = 0
            else:
                done = self._growth_tracker + 1
                if done == self._growth_interval:
                    grown = float(scale.item()) * self._growth_factor
                    if grown < _F32_OVERFLOW:  # grow only when the new scale is a finite float32
                        scale.fill_(grown)
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = done
        self._per_optimizer_states = {}

    def get_scale(self) -> float:
        """The current scale (init_scale before the first scale(); 1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        return self._growth_tracker if self._enabled else 0

    def is_enabled(self) -> bool:
        """Whether scaling is on."""
        return self._enabled

    def state_dict(self) -> Dict[str, Any]:
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restore what state_dict() returned."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(self._init_scale)
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
