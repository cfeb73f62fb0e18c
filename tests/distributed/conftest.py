"""Fixtures for the distributed tests: genesis's default group started (and always ended),
and PyTorch's gloo group of one process beside it, to compare with."""
import pytest

import genesis.distributed as dist
from tests.helpers import torch_or_skip


def end_group() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture(autouse=True)
def no_group_left_behind():
    """Each test starts and ends without a genesis process group."""
    end_group()
    yield
    end_group()


@pytest.fixture
def one_process():
    """genesis's default group: one process, gloo."""
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", world_size=1, rank=0)
    return dist


@pytest.fixture
def real_dist():
    """torch.distributed, not yet started (and ended after the test if it was)."""
    torch = torch_or_skip()
    import torch.distributed as real
    if not real.is_available():
        pytest.skip("this PyTorch has no torch.distributed")
    if real.is_initialized():
        real.destroy_process_group()
    yield real
    if real.is_initialized():
        real.destroy_process_group()
    del torch


@pytest.fixture
def torch_gloo(real_dist):
    """torch.distributed with a gloo group of one process (an in-memory store: no network)."""
    real_dist.init_process_group("gloo", store=real_dist.HashStore(), world_size=1, rank=0)
    return real_dist
