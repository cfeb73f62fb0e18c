"""Mixed precision: `autocast` and `GradScaler`.

Inside `autocast(dtype=float16)`, matrix products (matmul, bmm, einsum,
linear, convolutions) run in `dtype`, while sums, norms, softmax, losses and
pointwise math such as exp, log and pow run in float32 (mean, var and std keep
the input's dtype, accumulated in float32): PyTorch's CUDA rules.
`autocast("cpu", ...)` follows PyTorch's CPU rules instead: there sums, norms and
layer_norm run in the input's dtype, and losses and linalg solvers in float32
(genesis.autocast_rules). As in PyTorch, `autocast("cpu")` casts only CPU tensors
and `autocast("cuda")` only GPU tensors, each device type with its own state.
The casts are ordinary differentiable ops, so gradients reach float32
parameters in float32. Setting the spec's global flag
`genesis.enable_autocast = True` turns autocast on everywhere (float16, CUDA's rules).

>>> import genesis
>>> w = genesis.randn(4, 4, requires_grad=True)
>>> with genesis.autocast():
...     y = genesis.randn(2, 4) @ w
...     total = y.sum()
>>> y.dtype, total.dtype
(genesis.float16, genesis.float32)
>>> total.backward(); w.grad.dtype
genesis.float32
"""
from __future__ import annotations

import functools
from typing import Protocol

from .grad_state import Autocasts, AutocastState, global_autocast, grad_state
from .device import Device, namespace_of
from .dtypes import bfloat16, float16, get_dtype
from .listeners import Listeners
from .nn._grad_edits import tell_edited
from .tensor import Tensor

__all__ = ["autocast", "is_autocast_enabled", "get_autocast_dtype", "GradScaler",
           "set_global_autocast", "listeners", "ScalerListener"]

class ScalerListener(Protocol):
    """Told what each GradScaler does (genesis trace: gradients that overflow under a
    scale, in a step the scaler then skips, are no defect)."""

    def loss_scaled(self, scaler: "GradScaler", output: Tensor, scale: float) -> None:
        """`scaler.scale()` returned `output`, the loss multiplied by `scale`."""

    def step_skipped(self, scaler: "GradScaler", optimizer) -> None:
        """`scaler.step(optimizer)` skipped the step (NaN/Inf gradients)."""


listeners: Listeners[ScalerListener] = Listeners()



def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether ops on `device_type` ("cpu", "cuda") run under autocast on this thread; with
    no device type, whether autocast is on for any.

    >>> with autocast("cpu"):
    ...     is_autocast_enabled("cpu"), is_autocast_enabled("cuda"), is_autocast_enabled()
    (True, False, True)
    """
    if device_type is None:
        return grad_state.autocast is not None
    return grad_state.autocast_on(_device_type_of(device_type)) is not None


def get_autocast_dtype(device_type: str | None = None):
    """The dtype autocast runs ops on `device_type` in; with no device type, that of the GPU's
    autocast, else the CPU's (None when off).

    >>> with autocast("cuda"), autocast("cpu"):
    ...     get_autocast_dtype("cuda"), get_autocast_dtype("cpu")
    (genesis.float16, genesis.bfloat16)
    """
    autocasts = grad_state.autocast
    if autocasts is None:
        return None
    state = autocasts.cuda or autocasts.cpu if device_type is None \
        else autocasts.on(_device_type_of(device_type))
    return None if state is None else state.dtype


def set_global_autocast(enabled: bool, dtype=float16) -> None:
    """What `genesis.enable_autocast = enabled` does: autocast for every thread
    outside an explicit `autocast(...)` context."""
    global_autocast.set(enabled, get_dtype(dtype))


class autocast:
    """Context manager (and decorator) turning autocast on (or off with enabled=False).

    Takes PyTorch's form, `autocast("cuda", dtype=genesis.float16)`, as well as a dtype
    first, `autocast(genesis.float16)`; the dtype defaults to PyTorch's for the device type
    (bfloat16 for "cpu", float16 otherwise). As in PyTorch, `autocast("cpu")` casts only
    tensors on the CPU, by PyTorch's CPU lists, and `autocast("cuda")` only tensors on a GPU,
    by its CUDA lists; each device type keeps its own state, so `autocast("cpu")` inside
    `autocast("cuda")` leaves the GPU's on. The dtype-first form applies to every device,
    by the CUDA lists. Nested contexts restore the previous state on exit.

    >>> import genesis
    >>> with genesis.autocast("cuda", dtype=genesis.float16):
    ...     (genesis.ones(2, 2) @ genesis.ones(2, 2)).dtype  # CPU tensors: left alone
    genesis.float32
    """

    def __init__(self, device_type=None, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        if device_type is not None and not _names_device_type(device_type):
            if dtype is not None:
                raise TypeError(f"autocast: got two dtypes, {device_type!r} and {dtype!r}; "
                                "use autocast(device_type, dtype=...)")
            device_type, dtype = None, device_type  # autocast(dtype): genesis's older form
        self._device_type = None if device_type is None else _device_type_of(device_type)
        if dtype is None:  # PyTorch's default for the device type
            dtype = bfloat16 if self._device_type == "cpu" else float16
        self._dtype = get_dtype(dtype)
        if not self._dtype.is_floating_point or self._dtype.itemsize != 2:
            raise ValueError(f"autocast: dtype must be float16 or bfloat16, got {self._dtype!r}")
        self._enabled = bool(enabled)
        self._previous = []

    def __enter__(self):
        self._previous.append(grad_state.local_autocast)
        state = AutocastState(self._dtype, self._device_type) if self._enabled else None
        if self._device_type is None:
            grad_state.local_autocast = None if state is None else Autocasts(state, state)
        else:
            grad_state.local_autocast = (grad_state.autocast or _OFF).replaced(
                self._device_type, state)
        return self

    def __exit__(self, *exc_info):
        grad_state.local_autocast = self._previous.pop()
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self:
                return function(*args, **kwargs)

        return wrapper


_OFF = Autocasts(None, None)


def _device_type_of(device) -> str:
    """"cuda" for "cuda", "cuda:1" or a GPU device; "cpu" for the CPU."""
    return device.type if isinstance(device, Device) else str(device).split(":")[0]


def _names_device_type(value) -> bool:
    """Whether `value` is a device type ("cuda", "cpu", or a device string like "cuda:0")."""
    if isinstance(value, str) and value.split(":")[0] in ("cuda", "cpu"):
        return True
    return isinstance(value, Device)


def _all_true(flags: list) -> bool:
    """Whether every flag (a 0-d array) is true, with one host transfer per namespace."""
    groups = {}
    for flag in flags:
        groups.setdefault(namespace_of(flag), []).append(flag)
    return all(bool(xp.stack(group).all()) for xp, group in groups.items())


class GradScaler:
    """Dynamic loss scaling for float16 training.

    `scale(loss)` multiplies the loss by the current scale before backward;
    `step(optimizer)` unscales the gradients (unless `unscale_` already did),
    skips the step if any gradient is inf/NaN, and otherwise steps;
    `update()` halves the scale after a skipped step and doubles it after
    `growth_interval` clean steps.

    >>> import genesis
    >>> w = genesis.tensor([1.0], requires_grad=True)
    >>> optimizer = genesis.optim.SGD([w], lr=0.1)
    >>> scaler = GradScaler(init_scale=4.0)
    >>> scaler.scale((w * 3).sum()).backward()
    >>> w.grad
    tensor([12.])
    >>> scaler.step(optimizer); scaler.update(); w
    tensor([0.7000], requires_grad=True)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        """`device` is accepted as in `torch.amp.GradScaler(device, ...)` and recorded: the
        scaler works with the gradients on whatever device they are."""
        if not isinstance(device, str | Device):
            raise TypeError(f"GradScaler: device must be a device name such as \"cuda\", got "
                            f"{device!r}; pass the initial scale as init_scale=")
        self.device = str(device)
        if growth_factor <= 1.0 or not 0.0 < backoff_factor < 1.0:
            raise ValueError("GradScaler: growth_factor must be > 1 and backoff_factor in (0, 1)")
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._enabled = bool(enabled)
        self._growth_tracker = 0
        self._unscaled = {}        # id(optimizer) -> found_inf, for this iteration
        self._found_inf_this_step = False

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def scale(self, outputs):
        """`outputs` (a tensor or nested list/tuple of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            scaled = outputs * self._scale
            for listener in listeners:
                listener.loss_scaled(self, scaled, self._scale)
            return scaled
        if isinstance(outputs, list | tuple):
            return type(outputs)(self.scale(output) for output in outputs)
        raise TypeError(f"GradScaler.scale expects tensors, got {type(outputs).__name__}")

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale (once per step), noting inf/NaN."""
        if not self._enabled:
            return
        if id(optimizer) in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update(); call it once per step")
        inverse = 1.0 / self._scale
        finite = []  # one flag per gradient, on its device: a single sync at the end
        edits = []
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                grad = parameter.grad
                if grad is None:
                    continue
                xp = grad._device.xp
                data = grad._data
                finite.append(xp.isfinite(data).all())
                edits.append((parameter, grad._version_counter[0]))
                xp.multiply(data, inverse, out=data, casting="unsafe")
                grad._version_counter[0] += 1
        tell_edited(edits)
        found_inf = not _all_true(finite)
        self._unscaled[id(optimizer)] = found_inf

    def step(self, optimizer, *args, **kwargs):
        """Unscale if needed, then step unless a gradient was inf/NaN; returns step's result."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._unscaled[id(optimizer)]:
            self._found_inf_this_step = True
            for listener in listeners:
                listener.step_skipped(self, optimizer)
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        """Adjust the scale for the next iteration (or set it to `new_scale`)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif self._found_inf_this_step or any(self._unscaled.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._unscaled.clear()
        self._found_inf_this_step = False

    def state_dict(self) -> dict:
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state: dict) -> None:
        self._scale = float(state["scale"])
        self._growth_factor = float(state["growth_factor"])
        self._backoff_factor = float(state["backoff_factor"])
        self._growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])
