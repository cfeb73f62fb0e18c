"""no_grad / enable_grad / set_grad_enabled as context managers, decorators and calls."""
import threading

import genesis


def test_no_grad_context():
    x = genesis.tensor([1.0], requires_grad=True)
    with genesis.no_grad():
        y = x * 2
        assert not genesis.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert genesis.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    with genesis.no_grad():
        with genesis.enable_grad():
            z = (x * 2).sum()
            z.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_set_grad_enabled_as_plain_call():
    x = genesis.tensor([1.0], requires_grad=True)
    genesis.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    genesis.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_set_grad_enabled_as_context_restores():
    with genesis.set_grad_enabled(False):
        assert not genesis.is_grad_enabled()
    assert genesis.is_grad_enabled()
    with genesis.no_grad():
        with genesis.set_grad_enabled(True):
            assert genesis.is_grad_enabled()
        assert not genesis.is_grad_enabled()


def test_decorators():
    x = genesis.tensor([1.0], requires_grad=True)

    @genesis.no_grad()
    def inference():
        return x * 2

    @genesis.set_grad_enabled(False)
    def also_inference():
        return x * 2

    assert genesis.is_grad_enabled()  # decorating must not switch the mode
    assert not inference().requires_grad and not also_inference().requires_grad
    assert genesis.is_grad_enabled()

    @genesis.enable_grad()
    def training():
        return x * 2

    with genesis.no_grad():
        assert training().requires_grad


def test_no_grad_on_generator():
    x = genesis.tensor([1.0], requires_grad=True)

    @genesis.no_grad()
    def produce():
        for _ in range(2):
            yield (x * 2).requires_grad

    assert list(produce()) == [False, False]


def test_grad_mode_is_thread_local():
    seen = []
    with genesis.no_grad():
        thread = threading.Thread(target=lambda: seen.append(genesis.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True]
