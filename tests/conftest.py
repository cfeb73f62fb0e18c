import numpy as np
import pytest

import genesis


@pytest.fixture(autouse=True)
def _fresh_state():
    """Each test starts with grad enabled and a fixed seed."""
    genesis.set_grad_enabled(True)
    genesis.manual_seed(0)
    yield
    genesis.set_grad_enabled(True)


@pytest.fixture
def rng():
    return np.random.default_rng(0)
