"""set_default_device / get_default_device and `with device:` on a fake GPU: which ways of
making a tensor follow the default, compared with PyTorch (on its "meta" device, which a
CPU-only PyTorch has)."""
import threading

import numpy as np
import pytest

import genesis
from tests.helpers import torch_or_skip

# Ways of making a tensor, given the library and a CPU tensor made before the default changed.
FACTORIES = {
    "zeros": lambda lib, old: lib.zeros(2), "ones": lambda lib, old: lib.ones(2, 3),
    "empty": lambda lib, old: lib.empty(2), "full": lambda lib, old: lib.full((2,), 1.5),
    "randn": lambda lib, old: lib.randn(2), "rand": lambda lib, old: lib.rand(2),
    "randint": lambda lib, old: lib.randint(0, 5, (2,)), "randperm": lambda lib, old: lib.randperm(4),
    "arange": lambda lib, old: lib.arange(3), "linspace": lambda lib, old: lib.linspace(0, 1, 3),
    "eye": lambda lib, old: lib.eye(2), "tensor of a list": lambda lib, old: lib.tensor([1.0]),
    "tensor of a tensor": lambda lib, old: lib.tensor(old.detach().clone()),
    "scalar_tensor": lambda lib, old: lib.scalar_tensor(1),
    "as_tensor of a list": lambda lib, old: lib.as_tensor([1, 2]),
    "as_tensor of an array": lambda lib, old: lib.as_tensor(np.ones(2)),
    "Linear's weight": lambda lib, old: lib.nn.Linear(2, 3).weight,
    "zeros_like": lambda lib, old: lib.zeros_like(old), "new_zeros": lambda lib, old: old.new_zeros(2),
    "from_numpy": lambda lib, old: lib.from_numpy(np.ones(2)),
    "an op on an old tensor": lambda lib, old: old * 2,
    "explicit cpu": lambda lib, old: lib.zeros(2, device="cpu"),
}


def _follows_default(lib, device: str) -> dict:
    old = lib.ones(2)
    lib.set_default_device(device)
    try:
        return {name: make(lib, old).device.type == device for name, make in FACTORIES.items()}
    finally:
        lib.set_default_device(None)


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
def test_factories_follow_the_default_device_as_in_pytorch(fake_cuda):
    torch = torch_or_skip()
    ours = _follows_default(genesis, "cuda")
    assert ours == _follows_default(torch, "meta")
    assert ours["zeros"] and not ours["zeros_like"]
    assert genesis.zeros(1).device == "cpu" and genesis.get_default_device() == "cpu"


def test_default_device_round_trip_matches_pytorch(fake_cuda):
    torch = torch_or_skip()
    for lib in (torch, genesis):
        assert str(lib.get_default_device()) == "cpu"
        lib.set_default_device("cpu")
        assert str(lib.get_default_device()) == "cpu"
        lib.set_default_device(None)
        assert str(lib.get_default_device()) == "cpu"
    genesis.set_default_device("cuda")
    try:
        assert genesis.get_default_device() == genesis.device("cuda:0")
    finally:
        genesis.set_default_device(None)
    with pytest.raises(genesis.DeviceError, match="unknown device"):
        genesis.set_default_device("tpu")
    assert genesis.get_default_device() == "cpu"


def test_with_device_sets_the_default_inside_and_nests(fake_cuda):
    with genesis.device("cuda") as device:
        assert device == "cuda:0" and genesis.zeros(1).device == "cuda:0"
        with genesis.device("cpu"):
            assert genesis.zeros(1).device == "cpu"
        assert genesis.get_default_device() == "cuda:0"
    assert genesis.get_default_device() == "cpu"


def test_the_default_device_is_per_thread(fake_cuda):
    genesis.set_default_device("cuda")
    try:
        seen = []
        other = threading.Thread(target=lambda: seen.append(genesis.zeros(1).device))
        other.start()
        other.join()
        assert seen == [genesis.device("cpu")] and genesis.zeros(1).device == "cuda:0"
    finally:
        genesis.set_default_device(None)


def test_a_model_trains_on_the_default_device(fake_cuda):
    genesis.set_default_device("cuda")
    try:
        model = genesis.nn.Sequential(genesis.nn.Linear(3, 4), genesis.nn.BatchNorm1d(4),
                                      genesis.nn.Linear(4, 1))
        optimizer = genesis.optim.Adam(model.parameters())
        loss = model(genesis.randn(5, 3)).pow(2).mean()
        loss.backward()
        optimizer.step()
        assert {p.device for p in model.parameters()} == {genesis.device("cuda:0")}
        assert model[1].running_mean.device == "cuda:0"
    finally:
        genesis.set_default_device(None)
