"""Dispatch modes (`torch.utils._python_dispatch`): which ops a mode sees, under which ATen
names, how modes nest, and `torch.ops.aten` objects; compared with PyTorch where installed."""
import contextlib

import numpy as np
import pytest

import genesis
from genesis.utils._python_dispatch import (OpOverload, TorchDispatchMode, _get_current_dispatch_mode,
                                            _get_current_dispatch_mode_stack, aten, aten_name)
from genesis.utils.checkpoint import checkpoint
from tests.helpers import torch_or_skip


def _logging_mode(base):
    class Log(base):
        def __init__(self):
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls.append(str(func))
            return func(*args, **(kwargs or {}))

    return Log


def _forward(lib, x):
    return (x.mul(2).div(3).exp() @ lib.ones(3, 3, dtype=lib.float64)).sin().sum()


def _more_ops(lib, x):
    return [x[0], x[1:], x.reshape(6), x.view(6), x.transpose(0, 1), x == 2, x.var(), x.mean(),
            x.sum(1), x.clone(), lib.cat([x, x]), lib.softmax(x, 1), x.neg() * x]


def test_a_mode_sees_the_forward_ops_under_pytorch_names():
    torch = torch_or_skip()
    seen = {}
    for lib, base in ((genesis, TorchDispatchMode),
                      (torch, torch.utils._python_dispatch.TorchDispatchMode)):
        x = lib.tensor(np.arange(6.0).reshape(2, 3) / 10, dtype=lib.float64, requires_grad=True)
        lib.ones(3, 3, dtype=lib.float64)
        with _logging_mode(base)() as log:
            value = _forward(lib, x)
        others = _logging_mode(base)()
        with others:
            _more_ops(lib, x)
        # PyTorch also reports the detach of a tensor saved for backward, and factory calls
        seen[lib] = ([call for call in log.calls + others.calls
                      if call not in ("aten.detach.default", "aten.ones.default")], value.item())
    assert seen[genesis][0] == seen[torch][0]
    assert seen[genesis][1] == pytest.approx(seen[torch][1])


def test_results_and_gradients_are_unchanged_under_a_mode():
    x = genesis.randn(2, 3, dtype=genesis.float64, requires_grad=True)
    with _logging_mode(TorchDispatchMode)():
        out = _forward(genesis, x)
    out.backward()
    (expected,) = genesis.autograd.grad(_forward(genesis, x), x)
    np.testing.assert_allclose(x.grad.numpy(), expected.numpy(), rtol=1e-12)


def test_a_mode_can_replace_what_an_op_returns():
    class Doubling(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if func is aten.exp.default else out

    with Doubling():
        y = genesis.zeros(2).exp()
    assert y.tolist() == [2.0, 2.0]


def test_modes_nest_and_a_handler_runs_with_its_own_mode_off():
    torch = torch_or_skip()
    for lib, base, current, stack in (
            (genesis, TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack),
            (torch, torch.utils._python_dispatch.TorchDispatchMode,
             torch.utils._python_dispatch._get_current_dispatch_mode,
             torch.utils._python_dispatch._get_current_dispatch_mode_stack)):
        order = []

        class Named(base):
            def __init__(self, name):
                self.name = name

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                order.append((self.name, current() and current().name, len(stack())))
                return func(*args, **(kwargs or {}))

        x = lib.ones(2)
        with Named("outer") as outer, Named("inner") as inner:
            assert current() is inner and stack() == [outer, inner]
            x.neg()
        assert current() is None and stack() == []
        assert order == [("inner", "outer", 1), ("outer", None, 0)], lib.__name__


def test_op_objects_match_pytorchs():
    torch = torch_or_skip()
    for ops in (aten, torch.ops.aten):
        overload = ops.mul.Tensor
        assert (str(overload), overload.__name__, str(overload.overloadpacket)) == \
            ("aten.mul.Tensor", "mul.Tensor", "aten.mul")
        assert overload is ops.mul.Tensor and overload.name() == "aten::mul.Tensor"
        assert ops.exp.default.name() == "aten::exp"
    assert isinstance(aten.sin.default, OpOverload)
    assert aten.sin.default(genesis.zeros(1)).tolist() == [0.0]


def test_aten_names_follow_the_call():
    from genesis.ops.linalg import MatMul as Matmul
    a, v = genesis.ones(2, 2), genesis.ones(2)
    assert aten_name(Matmul, (a, a)) == ("mm", "default")
    assert aten_name(Matmul, (a, v)) == ("mv", "default")
    assert aten_name(Matmul, (genesis.ones(2, 2, 2), a)) == ("matmul", "default")


def test_a_mode_sees_the_ops_inside_a_checkpoint_not_the_checkpoint():
    torch = torch_or_skip()
    for lib, base in ((genesis, TorchDispatchMode),
                      (torch, torch.utils._python_dispatch.TorchDispatchMode)):
        mode = _logging_mode(base)()
        x = lib.tensor(1.0, requires_grad=True)
        lib.utils.checkpoint.checkpoint(lambda a: a.exp(), x, use_reentrant=False,
                                        context_fn=lambda: (mode, contextlib.nullcontext()))
        assert mode.calls == ["aten.exp.default"], lib.__name__
    with _logging_mode(TorchDispatchMode)() as log:
        checkpoint(lambda a: a.sin(), genesis.ones(1, requires_grad=True), use_reentrant=False)
    assert log.calls == ["aten.sin.default"]


def test_no_mode_costs_nothing_after_exit():
    with TorchDispatchMode():
        pass
    assert not genesis.autograd.function.dispatch_modes.active


def test_a_mode_sees_only_the_ops_of_its_own_thread():
    import threading
    x = genesis.ones(2)
    done = threading.Event()
    entered = threading.Event()

    def elsewhere():
        entered.wait()
        x.exp()
        done.set()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    with _logging_mode(TorchDispatchMode)() as log:
        entered.set()
        done.wait(10)
        x.sin()
    thread.join()
    assert log.calls == ["aten.sin.default"]
