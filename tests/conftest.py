import signal

import numpy as np
import pytest

import genesis

# Scripts the tests run (as `python SCRIPT`, under `genesis trace`, or scan) are data, not
# test modules: --doctest-modules must not import them (one starts a distributed run).
collect_ignore_glob = ["cli/data/*", "cli/data/*/*", "compat/programs/*", "distributed/data/*"]

# A test run started in the background of a non-interactive shell (`pytest &`) ignores
# SIGINT, and so would every process the tests start (an ignored signal stays ignored
# across exec): the Ctrl-C tests would find their SIGINT lost. Handled here, it is back to
# the default in those processes, as under a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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
