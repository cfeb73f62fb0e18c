"""Random number generators and their state as tensors: PyTorch's `torch.random` (and what
`torch` itself offers of it), served as `torch.random` under `genesis trace --torch`.

A state is a uint8 tensor on the CPU, as in PyTorch, so `get_rng_state().clone()` and
saving it work; its bytes are genesis's own (NumPy's bit-generator state as JSON text,
or a GPU generator's cuRAND buffer), not PyTorch's, and only genesis reads them back.

>>> import genesis
>>> state = genesis.get_rng_state().clone()
>>> first = genesis.rand(2)
>>> genesis.set_rng_state(state)
>>> bool((genesis.rand(2) == first).all()), state.dtype
(True, genesis.uint8)
"""
from __future__ import annotations

import contextlib

import numpy as np

from . import random
from .device import cpu, device as as_device
from .dtypes import uint8
from .random import DEFAULT_SEED, _seed_value, generator_for, initial_seed, seed
from .sizes import describe_value
from .tensor import Tensor, wrap_array

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng"]


def _state_tensor(draws) -> Tensor:
    return wrap_array(random.state_bytes(draws), cpu)


def _state_array(new_state, op: str) -> np.ndarray:
    """The bytes of a state tensor; a TypeError, as PyTorch's, for anything but a uint8 tensor."""
    if not isinstance(new_state, Tensor):
        raise TypeError(f"{op}: expected a uint8 tensor (a ByteTensor from get_rng_state() or "
                        f"get_state()), got {describe_value(new_state)}")
    if new_state.dtype is not uint8:
        raise TypeError(f"{op}: the RNG state must be a uint8 tensor (a ByteTensor), got "
                        f"{new_state.dtype!r}")
    return new_state._host_array().reshape(-1)


def _restored(draws, new_state, op: str) -> None:
    try:
        random.restore_state_bytes(draws, _state_array(new_state, op))
    except ValueError as error:  # PyTorch: a RuntimeError for a state of the wrong size
        raise RuntimeError(f"{op}: {error}") from None


class Generator:
    """A random-number generator of its own, for the ops and samplers that take
    `generator=` (PyTorch's `torch.Generator`): what it draws depends only on its seed, not
    on the device's global generator. `default_generator` is the one exception: it is the
    CPU's global generator itself.

    >>> import genesis
    >>> g = genesis.Generator().manual_seed(42)
    >>> first = genesis.randperm(5, generator=g).tolist()
    >>> first == genesis.randperm(5, generator=genesis.Generator().manual_seed(42)).tolist()
    True
    >>> genesis.Generator().initial_seed()
    67280421310721
    """

    def __init__(self, device="cpu"):
        self.device = as_device(device)
        self._is_cpu_global = False
        self._draws = None
        self.manual_seed(DEFAULT_SEED)

    @classmethod
    def _cpu_global(cls) -> "Generator":
        """The CPU's global generator as a Generator (made once, as `default_generator`): it
        draws what `genesis.rand` draws, and seeding it seeds the CPU's global generator.

        >>> import genesis
        >>> _ = genesis.default_generator.manual_seed(3); a = genesis.rand(1)
        >>> _ = genesis.manual_seed(3); bool((a == genesis.rand(1)).all())
        True
        """
        generator = cls()
        generator._is_cpu_global = True
        generator._draws = None  # drawn from `generator_for(cpu)`, which seeding replaces
        return generator

    def manual_seed(self, seed: int) -> "Generator":
        """Restart from `seed`; returns the generator (so `Generator().manual_seed(0)` chains)."""
        if self._is_cpu_global:
            random.seed_device(cpu, seed)
            return self
        self._seed = _seed_value(seed, "Generator.manual_seed")
        xp = self.device.xp
        if xp is np:
            self._draws = np.random.default_rng(self._seed)
        else:
            with xp.cuda.Device(self.device.index or 0):
                self._draws = xp.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Restart from fresh entropy; returns the seed used."""
        value = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(value)
        return value

    def initial_seed(self) -> int:
        """The seed it was last started from."""
        return random.device_seed(cpu) if self._is_cpu_global else self._seed

    def get_state(self) -> Tensor:
        """A snapshot of its state, a uint8 tensor on the CPU, for `set_state`.

        >>> import genesis
        >>> g = genesis.Generator().manual_seed(1)
        >>> state = g.get_state(); first = genesis.rand(2, generator=g)
        >>> bool((genesis.rand(2, generator=g.set_state(state)) == first).all())
        True
        """
        return _state_tensor(self.draws_on(self.device))

    def set_state(self, new_state: Tensor) -> "Generator":
        """Restore a state `get_state` returned; returns the generator."""
        _restored(self.draws_on(self.device), new_state, "Generator.set_state")
        return self

    def draws_on(self, device):
        """The array generator to draw from for an op on `device` (which must be this
        generator's device, as in PyTorch)."""
        if as_device(device) != self.device:
            raise RuntimeError(f"a generator on {self.device} cannot draw numbers for {device}; "
                               f"make it with genesis.Generator(device=\"{device}\")")
        return generator_for(cpu) if self._is_cpu_global else self._draws

    def __repr__(self) -> str:
        return f"<genesis.Generator device={self.device}>"


default_generator = Generator._cpu_global()  # PyTorch's torch.default_generator


def manual_seed(seed: int) -> Generator:
    """Seed every device's generator, so runs are reproducible; returns `default_generator`,
    as PyTorch's returns `torch.default_generator`.

    >>> import genesis
    >>> genesis.manual_seed(0) is genesis.default_generator
    True
    """
    random.manual_seed(seed)
    return default_generator


def get_rng_state(device="cpu") -> Tensor:
    """The state of the CPU's global generator (of `device`'s, a genesis extension: PyTorch
    has `torch.cuda.get_rng_state` for GPUs), a uint8 tensor on the CPU for `set_rng_state`."""
    return _state_tensor(generator_for(as_device(device)))


def set_rng_state(new_state: Tensor, device="cpu") -> None:
    """Restore the global generator of the CPU (or `device`) to a `get_rng_state` state."""
    _restored(generator_for(as_device(device)), new_state, "set_rng_state")


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, *, device_type: str | None = None):
    """Run the block on the global generators, then put them back as they were: the CPU's,
    and those of the GPUs in `devices` (indices or devices; None: every GPU whose generator
    has been used; `device_type` None means "cuda", genesis's accelerator). With
    `enabled=False` it does nothing. As PyTorch's `torch.random.fork_rng`.

    >>> import genesis
    >>> _ = genesis.manual_seed(0)
    >>> with genesis.rng.fork_rng():
    ...     _ = genesis.rand(5)
    >>> after = genesis.rand(2)
    >>> _ = genesis.manual_seed(0); bool((genesis.rand(2) == after).all())
    True
    """
    if not enabled:
        yield
        return
    device_type = device_type or "cuda"
    if devices is None:
        forked = random.used_devices(device_type)
    else:
        forked = [as_device(f"{device_type}:{d}" if isinstance(d, int) else d) for d in devices]
    saved = [(device, random.device_state(device)) for device in [cpu, *forked]]
    try:
        yield
    finally:
        for device, state in saved:
            random.restore_device_state(state, device)
