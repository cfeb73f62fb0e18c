"""Random number state: one generator per device, seeded by `genesis.manual_seed`."""
from __future__ import annotations

import numpy as np

__all__ = ["manual_seed", "seed", "get_rng_state", "set_rng_state", "generator_for"]

_generators: dict = {}
_initial_seed = None


def generator_for(device):
    """The random generator of `device` (created on first use)."""
    key = str(device)
    generator = _generators.get(key)
    if generator is None:
        xp = device.xp
        seed_value = _initial_seed
        generator = np.random.default_rng(seed_value) if xp is np else _cupy_generator(xp, seed_value)
        _generators[key] = generator
    return generator


def _cupy_generator(cupy, seed_value):
    return cupy.random.default_rng(seed_value)


def manual_seed(seed: int) -> None:
    """Seed every device's generator, so runs are reproducible.

    >>> import genesis
    >>> genesis.manual_seed(0); a = genesis.randn(3)
    >>> genesis.manual_seed(0); b = genesis.randn(3)
    >>> bool((a == b).all())
    True
    """
    global _initial_seed
    _initial_seed = int(seed)
    _generators.clear()


def seed() -> int:
    """Seed from fresh entropy and return the seed used."""
    value = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(value)
    return value


def get_rng_state(device="cpu"):
    """A snapshot of `device`'s generator state (for `set_rng_state`)."""
    from .device import device as as_device

    return generator_for(as_device(device)).bit_generator.state


def set_rng_state(state, device="cpu") -> None:
    """Restore a state returned by `get_rng_state`."""
    from .device import device as as_device

    generator_for(as_device(device)).bit_generator.state = state
