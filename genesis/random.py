"""Random number state: one generator per device, seeded by `genesis.manual_seed`.

The CPU draws from a NumPy `Generator`, a GPU from CuPy's (`cupy.random.default_rng`,
cuRAND XORWOW states on the device); the same seed gives reproducible runs on each
device, not the same numbers on both. `genesis.cuda.manual_seed` seeds GPUs alone.
"""
from __future__ import annotations

import numpy as np

from .device import device as as_device

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "generator_for",
           "seed_device", "seed_device_type", "Generator", "DEFAULT_SEED"]

# A new Generator's seed, as in PyTorch: a fixed number, so unseeded generators repeat too.
DEFAULT_SEED = 67280421310721

_generators: dict = {}
_initial_seed = None
_device_seeds: dict = {}   # "cuda:0" -> seed, or "cuda" -> seed for every GPU


def generator_for(device, generator: "Generator | None" = None):
    """The random generator to draw from on `device`: `generator`'s own when one is given
    (it must be on that device), else the device's global one (created on first use)."""
    if generator is not None:
        return generator.draws_on(device)
    key = str(device)
    generator = _generators.get(key)
    if generator is None:
        seed_value = _device_seeds.get(key, _device_seeds.get(device.type, initial_seed()))
        xp = device.xp
        if xp is np:
            generator = np.random.default_rng(seed_value)
        else:
            with xp.cuda.Device(device.index or 0):  # the cuRAND states live on that GPU
                generator = xp.random.default_rng(seed_value)
        _generators[key] = generator
    return generator


def manual_seed(seed: int) -> None:
    """Seed every device's generator, so runs are reproducible.

    >>> import genesis
    >>> genesis.manual_seed(0); a = genesis.randn(3)
    >>> genesis.manual_seed(0); b = genesis.randn(3)
    >>> bool((a == b).all())
    True
    """
    global _initial_seed
    _initial_seed = _seed_value(seed, "manual_seed")
    _device_seeds.clear()
    _generators.clear()


def seed_device(device, seed: int) -> None:
    """Seed one device's generator only (what `genesis.cuda.manual_seed` does)."""
    key = str(device)
    _device_seeds[key] = _seed_value(seed, "manual_seed")
    _generators.pop(key, None)


def seed_device_type(device_type: str, seed: int) -> None:
    """Seed the generators of every device of a type ("cuda": all GPUs)."""
    for key in [key for key in _device_seeds if key.partition(":")[0] == device_type]:
        del _device_seeds[key]
    _device_seeds[device_type] = _seed_value(seed, "manual_seed")
    for key in [key for key in _generators if key.partition(":")[0] == device_type]:
        del _generators[key]


def _seed_value(seed, op: str) -> int:
    """`seed` as PyTorch takes it: an int in [-2**63, 2**64), a negative one wrapping around
    to 64 bits (NumPy's generators take non-negative seeds only).

    >>> _seed_value(-1, "manual_seed") == 2 ** 64 - 1
    True
    """
    value = int(seed)
    if not -2 ** 63 <= value < 2 ** 64:
        raise ValueError(f"{op}: seed {value} is out of range; a seed is an int in "
                         "[-2**63, 2**64)")
    return value % 2 ** 64


def initial_seed() -> int:
    """The seed the global generators started from: the last `manual_seed`, or one drawn from
    fresh entropy when the program never seeded (as in PyTorch).

    >>> manual_seed(7); initial_seed()
    7
    """
    global _initial_seed
    if _initial_seed is None:
        _initial_seed = int(np.random.SeedSequence().entropy % (2 ** 63))
    return _initial_seed


def seed() -> int:
    """Seed from fresh entropy and return the seed used."""
    value = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(value)
    return value


def get_rng_state(device="cpu"):
    """A snapshot of `device`'s generator state (for `set_rng_state`).

    On the CPU, NumPy's bit-generator state (a dict); on a GPU, a device copy of
    CuPy's cuRAND states (CuPy offers no public state API, so this reads its
    `bit_generator._state` buffer).
    """
    generator = generator_for(_as_device(device))
    bit_generator = generator.bit_generator
    if isinstance(generator, np.random.Generator):
        return bit_generator.state
    return bit_generator._state.copy()


def set_rng_state(state, device="cpu") -> None:
    """Restore a state returned by `get_rng_state` for the same device."""
    generator = generator_for(_as_device(device))
    if isinstance(generator, np.random.Generator):
        generator.bit_generator.state = state
    else:
        generator.bit_generator._state[...] = state


def _as_device(device):
    return as_device(device)


class Generator:
    """A random-number generator of its own, for the ops and samplers that take
    `generator=` (PyTorch's `torch.Generator`): what it draws depends only on its seed, not
    on the device's global generator.

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
        self._draws = None
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> "Generator":
        """Restart from `seed`; returns the generator (so `Generator().manual_seed(0)` chains)."""
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
        return self._seed

    def get_state(self):
        """A snapshot of its state, for `set_state`."""
        bit_generator = self._draws.bit_generator
        return bit_generator.state if self.device.xp is np else bit_generator._state.copy()

    def set_state(self, state) -> "Generator":
        """Restore a state `get_state` returned."""
        if self.device.xp is np:
            self._draws.bit_generator.state = state
        else:
            self._draws.bit_generator._state[...] = state
        return self

    def draws_on(self, device):
        """The array generator to draw from for an op on `device` (which must be this
        generator's device, as in PyTorch)."""
        if as_device(device) != self.device:
            raise RuntimeError(f"a generator on {self.device} cannot draw numbers for {device}; "
                               f"make it with genesis.Generator(device=\"{device}\")")
        return self._draws

    def __repr__(self) -> str:
        return f"<genesis.Generator device={self.device}>"
