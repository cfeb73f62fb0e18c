"""Running a model under an `ActivationWatch` for the activation tests."""
import genesis
from genesis.debug.activation_watch import ActivationWatch


def watched(model, steps: int, make) -> ActivationWatch:
    """`steps` forward and backward calls of `model` on `make()`, watched."""
    genesis.manual_seed(0)
    watch = ActivationWatch()
    watch.start()
    try:
        for step in range(steps):
            model(make()).pow(2).mean().backward()
            watch.step_finished(step + 1)
    finally:
        watch.stop()
    return watch
