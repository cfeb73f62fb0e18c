import numpy as np
import pytest

import genesis

# Scripts the tests run (as `python SCRIPT`, under `genesis trace`, or scan) are data, not
# test modules: --doctest-modules must not import them (one starts torch.distributed).
collect_ignore_glob = ["cli/data/*", "cli/data/*/*", "compat/programs/*"]


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
