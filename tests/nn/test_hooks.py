"""Module hooks (forward, forward pre, full backward, backward pre) and the module_scope hook point."""
import warnings

import numpy as np
import pytest

import genesis
from genesis import nn
from genesis.autograd import module_scope
from tests.helpers import torch_or_skip


class Scale(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, x, shift=0.0):
        return x * self.factor + shift


def test_forward_pre_hook_can_replace_the_arguments():
    module = Scale(2.0)
    seen = []

    def pre_hook(mod, args):
        seen.append((mod, args))
        return args[0] + 1  # a single value becomes a 1-tuple

    handle = module.register_forward_pre_hook(pre_hook)
    x = genesis.tensor([1.0])
    assert module(x).tolist() == [4.0]
    assert seen[0][0] is module and seen[0][1][0] is x
    handle.remove()
    assert module(x).tolist() == [2.0]


def test_forward_pre_hook_with_kwargs():
    module = Scale(2.0)
    module.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"shift": 10.0}),
                                     with_kwargs=True)
    assert module(genesis.tensor([1.0])).tolist() == [12.0]
    module.register_forward_pre_hook(lambda mod, args, kwargs: "bad", with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"must return None or \(args, kwargs\)"):
        module(genesis.tensor([1.0]))


def test_forward_hook_sees_inputs_and_output_and_can_replace_it():
    module = Scale(3.0)
    calls = []
    module.register_forward_hook(lambda mod, args, out: calls.append((args[0].tolist(), out.tolist())))
    module.register_forward_hook(lambda mod, args, out: out * 0 - 1)
    module.register_forward_hook(lambda mod, args, kwargs, out: calls.append(kwargs) or None,
                                 with_kwargs=True)
    result = module(genesis.tensor([1.0]), shift=1.0)
    assert result.tolist() == [-1.0]
    assert calls == [([1.0], [4.0]), {"shift": 1.0}]


def test_prepend_puts_a_hook_first_and_handles_work_as_context_managers():
    module = Scale(1.0)
    order = []
    module.register_forward_hook(lambda *a: order.append("second"))
    with module.register_forward_hook(lambda *a: order.append("first"), prepend=True):
        module(genesis.tensor([1.0]))
    module(genesis.tensor([1.0]))
    assert order == ["first", "second", "second"]


def test_hooks_fire_on_nested_modules():
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    names = []
    for name, module in model.named_modules():
        module.register_forward_hook(lambda mod, args, out, name=name: names.append(name or "root"))
    model(genesis.ones(1, 2))
    assert names == ["0", "1", "2", "root"]


def test_full_backward_hook_matches_pytorch():
    torch = torch_or_skip()
    layer = nn.Linear(3, 2)
    reference = torch.nn.Linear(3, 2)
    with torch.no_grad():
        reference.weight.copy_(torch.tensor(layer.weight.detach().numpy()))
        reference.bias.copy_(torch.tensor(layer.bias.detach().numpy()))
    ours, theirs = [], []
    layer.register_full_backward_hook(lambda m, gi, go: ours.append((gi, go)))
    reference.register_full_backward_hook(lambda m, gi, go: theirs.append((gi, go)))
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    (layer(genesis.tensor(x, requires_grad=True)) ** 2).sum().backward()
    (reference(torch.tensor(x, requires_grad=True)) ** 2).sum().backward()
    (grad_input,), (grad_output,) = ours[0]
    (torch_grad_input,), (torch_grad_output,) = theirs[0]
    np.testing.assert_allclose(grad_output.numpy(), torch_grad_output.numpy(), rtol=1e-5)
    np.testing.assert_allclose(grad_input.numpy(), torch_grad_input.numpy(), rtol=1e-5, atol=1e-6)


def _full_backward_hook_arguments(lib) -> list:
    """What full backward hooks get: None for an output that got no gradient and for a
    non-tensor argument, zeros for a tensor input that does not require grad (or is unused)."""
    seen = []

    def shown(values):
        return [None if value is None else (value.tolist(), str(value.dtype).split(".")[-1])
                for value in values]

    def record(module, grad_input, grad_output):
        seen.append((shown(grad_input), shown(grad_output)))

    class TwoOutputs(lib.nn.Module):
        def forward(self, a):
            return a * 2, a * 3

    class Mixed(lib.nn.Module):
        def forward(self, a, factor, b, offset, unused):
            return a * b * factor + offset

    first, second = TwoOutputs(), Mixed()
    first.register_full_backward_pre_hook(lambda module, grad_output: seen.append(
        shown(grad_output)))
    first.register_full_backward_hook(record)
    second.register_full_backward_hook(record)
    used, _ = first(lib.tensor([1.0, 2.0], requires_grad=True))
    used.sum().backward()
    second(lib.tensor([1.0, 2.0], requires_grad=True), 2.0, lib.tensor([3.0, 4.0]),
           lib.tensor([1, 1]), lib.tensor([5.0], requires_grad=True)).sum().backward()
    return seen


def test_full_backward_hook_gets_none_and_zeros_as_in_pytorch():
    assert _full_backward_hook_arguments(genesis) == [
        [([1.0, 1.0], "float32"), None],
        ([([2.0, 2.0], "float32")], [([1.0, 1.0], "float32"), None]),
        ([([6.0, 8.0], "float32"), None, ([0.0, 0.0], "float32"), ([0, 0], "int64"),
          ([0.0], "float32")], [([1.0, 1.0], "float32")])]


def test_full_backward_hook_arguments_match_pytorch():
    torch = torch_or_skip()
    assert _full_backward_hook_arguments(genesis) == _full_backward_hook_arguments(torch)


def _always_called_forward_hooks(lib) -> list:
    """Forward hooks with always_call=True run when the call raises (output None, the args
    the pre-hooks made), once each; an error of theirs is then a warning."""
    seen = []

    class Failing(lib.nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    def failing_hook(module, args, output):
        raise KeyError("hook failed")

    module = Failing()
    module.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    module.register_forward_hook(lambda m, args, out: seen.append((args[0].tolist(), out)),
                                 always_call=True)
    module.register_forward_hook(lambda m, args, out: seen.append("not always"))
    module.register_forward_hook(lambda m, args, kwargs, out: seen.append(("kwargs", kwargs)),
                                 always_call=True, with_kwargs=True)
    module.register_forward_hook(failing_hook, always_call=True)
    with pytest.warns(UserWarning, match="always_call=True.*raised an exception that was "
                                         "silenced.*hook failed"):
        with pytest.raises(ValueError, match="forward failed"):
            module(lib.ones(1))
    identity = lib.nn.Identity()
    identity.register_forward_hook(lambda m, args, out: seen.append("ran"), always_call=True)
    identity.register_forward_hook(lambda m, args, out: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        identity(lib.ones(1))
    return seen


def test_forward_hooks_with_always_call_run_when_the_call_raises():
    assert _always_called_forward_hooks(genesis) == [([2.0], None), ("kwargs", {}), "ran"]


def test_forward_hooks_with_always_call_match_pytorch():
    torch = torch_or_skip()
    assert _always_called_forward_hooks(genesis) == _always_called_forward_hooks(torch)


def test_full_backward_hook_can_replace_grad_input():
    module = Scale(2.0)
    module.register_full_backward_hook(lambda m, grad_input, grad_output: (grad_input[0] * 10, None))
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    module(x, 1.0).sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]
    module.register_full_backward_hook(lambda m, grad_input, grad_output: (grad_input[0],))
    with pytest.raises(RuntimeError, match=r"hook '.*<lambda>' \(.*test_hooks.py:\d+\), a full "
                                           r"backward hook of Scale, returned 1 gradient\(s\) for "
                                           r"grad_input, which has 2"):
        module(x, 1.0).sum().backward()


def test_backward_pre_hook_can_replace_grad_output():
    module = Scale(3.0)
    seen = []
    module.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 0 + 1,))
    module.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].tolist()))
    x = genesis.tensor([1.0, 2.0], requires_grad=True)
    (module(x) * 5).sum().backward()
    assert seen == [[1.0, 1.0]]
    assert x.grad.tolist() == [3.0, 3.0]


def test_full_backward_hook_when_no_input_requires_grad():
    layer = nn.Linear(2, 1)
    calls = []
    layer.register_full_backward_hook(lambda m, gi, go: calls.append((gi, go[0].shape)))
    layer(genesis.ones(3, 2)).sum().backward()
    assert calls == [((None,), (3, 1))]
    assert layer.weight.grad is not None


def test_backward_hooks_do_not_hide_in_place_changes_of_inputs():
    layer = nn.Linear(2, 2)
    layer.register_full_backward_hook(lambda *args: None)
    x = genesis.ones(1, 2, requires_grad=True) * 1
    out = layer(x)
    with genesis.no_grad():
        x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        out.sum().backward()


class Recorder:
    def __init__(self):
        self.events = []

    def enter(self, module):
        self.events.append(("enter", type(module).__name__))

    def exit(self, module):
        self.events.append(("exit", type(module).__name__))


@pytest.fixture
def recorder():
    listener = Recorder()
    module_scope.listeners.append(listener)
    yield listener
    module_scope.listeners.remove(listener)


def _global_hook_log(lib) -> list:
    """What the global module hooks (register_module_*) and a module's own hooks see, in the
    order they run, for a model around a Linear layer; then nothing once removed."""
    hooks = genesis.nn.module if lib is genesis else lib.nn.modules.module
    log = []

    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.nn.Linear(2, 2)

        def forward(self, x, scale=2.0):
            return self.linear(x) * scale

    model = Model()
    model.register_forward_hook(lambda module, args, out: log.append(("own forward",)))
    model.register_full_backward_hook(lambda module, grad_in, grad_out: log.append(("own backward",)))
    name = lambda module: type(module).__name__
    handles = [
        hooks.register_module_forward_pre_hook(lambda module, args: log.append(("pre", name(module)))),
        hooks.register_module_forward_hook(
            lambda module, args, kwargs, out: log.append(("forward", name(module), sorted(kwargs))),
            with_kwargs=True),
        hooks.register_module_full_backward_pre_hook(
            lambda module, grad_out: log.append(("backward pre", name(module)))),
        hooks.register_module_full_backward_hook(
            lambda module, grad_in, grad_out: log.append(
                ("backward", name(module), [g is None for g in grad_in]))),
        hooks.register_module_forward_hook(lambda module, args, out: out * 10),
    ]
    x = lib.ones(1, 2, requires_grad=True)
    outputs = [model(x, scale=3.0)]
    outputs[0].sum().backward()
    for handle in handles:
        handle.remove()
    outputs.append(model(x))
    outputs[1].sum().backward()
    return log, [output.shape for output in outputs], x.grad.shape


def test_global_module_hooks_run_before_each_modules_own_as_in_pytorch():
    torch = torch_or_skip()
    got, expected = _global_hook_log(genesis), _global_hook_log(torch)
    assert got[0] == expected[0] and got[0][0] == ("pre", "Model")
    assert [list(shape) for shape in got[1]] == [list(shape) for shape in expected[1]]


def test_hook_handles_have_increasing_ids_as_in_pytorch():
    torch = torch_or_skip()
    for lib in (genesis, torch):
        x = lib.ones(2, requires_grad=True) * 1
        first, second = x.register_hook(lambda g: g), lib.nn.Identity().register_forward_hook(print)
        assert second.id > first.id


def _legacy_hook_log(lib) -> tuple:
    log = []
    layer = lib.nn.Sigmoid()
    handle = layer.register_backward_hook(lambda module, grad_in, grad_out: log.append(
        (type(module).__name__, [g.tolist() for g in grad_in], [g.tolist() for g in grad_out]))
        or (grad_in[0] * 0 + 1,))
    x = lib.zeros(2, requires_grad=True)
    layer(x).sum().backward()
    handle.remove()
    layer(x).sum().backward()
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
        layer.register_backward_hook(print)
        layer.register_full_backward_hook(print)
    return log, x.grad.tolist()


def test_the_deprecated_backward_hook_is_a_hook_of_the_outputs_node_as_in_pytorch():
    """register_backward_hook: grad_input is what the node that made the output gives its
    inputs (here Sigmoid's, the module's own), and the hook may replace it; it cannot be
    mixed with full backward hooks on one module."""
    torch = torch_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _legacy_hook_log(torch)
    got = _legacy_hook_log(genesis)
    assert got == expected and got[1] == [1.25, 1.25]


def test_module_scope_listener_sees_nested_enter_and_exit(recorder):
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    model(genesis.ones(1, 2))
    assert recorder.events == [("enter", "Sequential"), ("enter", "Linear"), ("exit", "Linear"),
                               ("enter", "Tanh"), ("exit", "Tanh"), ("exit", "Sequential")]


def test_module_scope_exit_runs_when_forward_raises(recorder):
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(3, 1))
    with pytest.raises(RuntimeError, match="linear"):
        model(genesis.ones(1, 2))
    assert recorder.events == [("enter", "Sequential"), ("enter", "Linear"), ("exit", "Linear"),
                               ("enter", "Linear"), ("exit", "Linear"), ("exit", "Sequential")]


def test_module_scope_wraps_hooks_too(recorder):
    layer = nn.Identity()
    layer.register_forward_hook(lambda *args: recorder.events.append(("hook", "Identity")))
    layer(genesis.ones(1))
    assert recorder.events == [("enter", "Identity"), ("hook", "Identity"), ("exit", "Identity")]


def test_call_without_listeners_or_hooks_never_touches_module_scope(monkeypatch):
    def fail(module):
        raise AssertionError("module_scope called without listeners")

    monkeypatch.setattr(module_scope, "enter", fail)
    monkeypatch.setattr(module_scope, "exit", fail)
    assert not module_scope.listeners
    model = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    model(genesis.ones(1, 2))
    model[0].register_forward_hook(lambda *args: None)
    model(genesis.ones(1, 2))
