"""Random number state: one generator per device, seeded by `genesis.manual_seed`.

The CPU draws from a NumPy `Generator`, a GPU from CuPy's (`cupy.random.default_rng`,
cuRAND XORWOW states on the device); the same seed gives reproducible runs on each
device, not the same numbers on both. `genesis.cuda.manual_seed` seeds GPUs alone.
"""
from __future__ import annotations

import json

import numpy as np

from .device import device as as_device

__all__ = ["manual_seed", "seed", "initial_seed", "device_seed", "used_devices", "device_state", "restore_device_state", "generator_for",
           "seed_device", "seed_device_type", "state_bytes", "restore_state_bytes", "DEFAULT_SEED"]

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
        seed_value = device_seed(device)
        xp = device.xp
        if xp is np:
            generator = np.random.default_rng(seed_value)
        else:
            with xp.cuda.Device(device.index or 0):  # the cuRAND states live on that GPU
                generator = xp.random.default_rng(seed_value)
        _generators[key] = generator
    return generator


def device_seed(device) -> int:
    """The seed `device`'s global generator starts from: its own (`seed_device`), its device
    type's (`seed_device_type`), else the last `manual_seed`'s (`initial_seed`)."""
    key = str(device)
    return _device_seeds.get(key, _device_seeds.get(device.type, initial_seed()))


def used_devices(device_type: str) -> list:
    """The devices of a type ("cuda") whose global generators have been made (drawn from, or
    had their state read or set) since they were last seeded."""
    return [as_device(key) for key in _generators if key.partition(":")[0] == device_type]


def manual_seed(seed: int) -> None:
    """Seed every device's generator, so runs are reproducible.

    >>> import genesis
    >>> manual_seed(0); a = genesis.randn(3)
    >>> manual_seed(0); b = genesis.randn(3)
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


def device_state(device):
    """A snapshot of `device`'s global generator, for `restore_device_state` (the public
    `genesis.get_rng_state` gives it as a uint8 tensor).

    On the CPU, NumPy's bit-generator state (a dict); on a GPU, a device copy of
    CuPy's cuRAND states (CuPy offers no public state API, so this reads its
    `bit_generator._state` buffer).
    """
    return _state_of(generator_for(as_device(device)))


def restore_device_state(state, device) -> None:
    """Restore a state returned by `device_state` for the same device."""
    _restore(generator_for(as_device(device)), state)


def _state_of(generator):
    bit_generator = generator.bit_generator
    if isinstance(generator, np.random.Generator):
        return bit_generator.state
    return bit_generator._state.copy()


def _restore(generator, state) -> None:
    if isinstance(generator, np.random.Generator):
        generator.bit_generator.state = state
    else:
        generator.bit_generator._state[...] = state


def state_bytes(generator) -> np.ndarray:
    """The state of an array generator (NumPy's or CuPy's) as bytes, a uint8 NumPy array that
    `restore_state_bytes` takes back: NumPy's bit-generator state as JSON text (its numbers
    are Python ints, 128 bits for PCG64), CuPy's cuRAND state buffer as its raw bytes.

    >>> draws = np.random.default_rng(0)
    >>> saved = state_bytes(draws); first = draws.random()
    >>> restore_state_bytes(draws, saved); draws.random() == first
    True
    """
    if isinstance(generator, np.random.Generator):
        text = json.dumps(generator.bit_generator.state, sort_keys=True)
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8).copy()
    return generator.bit_generator._state.get().reshape(-1).view(np.uint8)


def restore_state_bytes(generator, data: np.ndarray) -> None:
    """Set `generator` to a state `state_bytes` gave; a ValueError naming what is wrong when
    the bytes are not such a state for this kind of generator."""
    if isinstance(generator, np.random.Generator):
        try:
            state = json.loads(data.tobytes().decode("ascii"))
            generator.bit_generator.state = state
        except (ValueError, TypeError, KeyError) as error:
            kind = type(generator.bit_generator).__name__
            raise ValueError(f"the RNG state is not a {kind} generator state saved by "
                             f"get_rng_state()/get_state() ({len(data)} bytes: {error})") from None
        return
    buffer = generator.bit_generator._state
    if data.size != buffer.nbytes:
        raise ValueError(f"the RNG state has {data.size} bytes, but this GPU generator's state "
                         f"has {buffer.nbytes}")
    buffer.set(np.ascontiguousarray(data).view(buffer.dtype).reshape(buffer.shape))  # host -> GPU


