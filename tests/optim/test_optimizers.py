"""Optimizers against PyTorch's update rules (same init, same loss, 10 steps), and the base class."""
import importlib

import numpy as np
import pytest

import genesis
from genesis import optim
from tests.helpers import torch_or_skip
from tests.optimizer_wrappers import Lookahead

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.01, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, eps=1e-6)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9))),  # lerp weight >= 0.5 takes the other rounding
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-6)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True, eps=1e-4)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items())}" for name, options in CONFIGS]


def _initial_arrays(dtype):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(dtype) for shape in ((3, 4), (4,), (2, 2))]


def _loss(lib, params, target):
    """A loss, bounded below, whose curvature differs per parameter (so the updates differ)."""
    weight, bias, extra = params
    return (((weight - target) ** 2).sum() + ((bias - 1) ** 2).sum() * 0.3
            + ((extra * weight[:2, :2] - 0.2) ** 2).sum())


def _train(lib, optimizer_class, options, arrays, steps=10):
    params = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    target = lib.from_numpy(np.full((3, 4), 0.5, dtype=arrays[0].dtype))
    optimizer = optimizer_class(params, **options)
    for _ in range(steps):
        optimizer.zero_grad()
        _loss(lib, params, target).backward()
        optimizer.step()
    return [p.detach().numpy() for p in params], optimizer


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, options", CONFIGS, ids=IDS)
def test_ten_steps_match_pytorch(name, options, dtype):
    torch = torch_or_skip()
    arrays = _initial_arrays(dtype)
    torch_options = dict(options, foreach=False)
    ours, _ = _train(genesis, getattr(optim, name), options, arrays)
    theirs, _ = _train(torch, getattr(torch.optim, name), torch_options, arrays)
    for mine, reference in zip(ours, theirs):
        assert mine.dtype == dtype
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name, options", CONFIGS, ids=IDS)
def test_state_dict_layout_matches_pytorch(name, options):
    torch = torch_or_skip()
    arrays = _initial_arrays(np.float64)
    options = dict(options, foreach=False)  # torch's single-tensor code, recorded by both
    _, ours = _train(genesis, getattr(optim, name), options, arrays, steps=2)
    _, theirs = _train(torch, getattr(torch.optim, name), options, arrays, steps=2)
    mine, reference = ours.state_dict(), theirs.state_dict()
    assert list(mine["state"]) == list(reference["state"])
    for index, state in mine["state"].items():
        assert sorted(state) == sorted(reference["state"][index])
        assert float(state.get("step", 0)) == float(reference["state"][index].get("step", 0))
        if "step" in state:  # genesis kept a Python int; PyTorch a 0-d float tensor on the CPU
            step, torch_step = state["step"], reference["state"][index]["step"]
            assert isinstance(step, genesis.Tensor) and step.shape == torch_step.shape == ()
            assert (str(step.dtype), str(step.device)) == (str(torch_step.dtype).replace("torch", "genesis"),
                                                           str(torch_step.device))
        for key, value in state.items():
            if isinstance(value, genesis.Tensor):
                np.testing.assert_allclose(value.numpy(), reference["state"][index][key].numpy(),
                                           rtol=1e-10, atol=1e-12)
    group, torch_group = mine["param_groups"][0], reference["param_groups"][0]
    assert group["params"] == torch_group["params"] == [0, 1, 2]
    for key, value in group.items():
        assert torch_group[key] == value, key


def test_param_groups_with_their_own_options_and_missing_grads():
    a = genesis.tensor([1.0], requires_grad=True)
    b = genesis.tensor([1.0], requires_grad=True)
    frozen = genesis.tensor([1.0], requires_grad=True)
    optimizer = optim.SGD([{"params": [a]}, {"params": [b, frozen], "lr": 0.5}], lr=0.1)
    assert optimizer.param_groups[0]["lr"] == 0.1 and optimizer.param_groups[1]["lr"] == 0.5
    assert optimizer.param_groups[1]["momentum"] == 0
    ((a + b) * 2).sum().backward()
    version = frozen._version
    optimizer.step()
    assert a.tolist() == pytest.approx([0.8]) and b.tolist() == pytest.approx([0.0])
    assert frozen.tolist() == [1.0] and frozen._version == version  # no grad: untouched
    c = genesis.tensor([2.0], requires_grad=True)
    optimizer.add_param_group({"params": c, "lr": 1.0})
    assert optimizer.param_groups[2]["params"] == [c] and optimizer.param_groups[2]["dampening"] == 0


def test_step_bumps_versions_so_stale_graphs_are_caught():
    w = genesis.tensor([1.0, 2.0], requires_grad=True)
    optimizer = optim.Adam([w])
    (w * w).sum().backward()
    stale = (w * w).sum()
    optimizer.step()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        stale.backward()


def test_closure_is_called_with_grad_enabled_and_its_loss_returned():
    w = genesis.tensor([3.0], requires_grad=True)
    optimizer = optim.SGD([w], lr=0.1)

    def closure():
        optimizer.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with genesis.no_grad():
        loss = optimizer.step(closure)
    assert loss.item() == 9.0 and w.tolist() == pytest.approx([2.4])


def test_zero_grad_clears_or_zeros():
    w = genesis.tensor([1.0], requires_grad=True)
    optimizer = optim.SGD([w])
    (w * 2).sum().backward()
    optimizer.zero_grad(set_to_none=False)
    assert w.grad.tolist() == [0.0]
    optimizer.zero_grad()
    assert w.grad is None


def test_bad_construction_is_reported_clearly():
    w = genesis.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="wrap it in a list"):
        optim.SGD(w)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([])
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([w * 2])
    with pytest.raises(TypeError, match=r"params\[1\] is a int"):
        optim.SGD([w, 3])
    with pytest.raises(TypeError, match="set"):
        optim.SGD([{"params": {w}}])
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [w]}, {"params": [w]}])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([w], lr=-1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([w], momentum=0, nesterov=True)
    with pytest.warns(UserWarning, match="duplicate"):
        optim.SGD([w, w])


def test_load_state_dict_restores_state_and_continues_identically():
    arrays = _initial_arrays(np.float32)
    straight, _ = _train(genesis, optim.Adam, dict(lr=0.05, amsgrad=True), arrays, steps=6)
    halfway, first = _train(genesis, optim.Adam, dict(lr=0.05, amsgrad=True), arrays, steps=3)
    params = [genesis.tensor(a, requires_grad=True) for a in halfway]
    second = optim.Adam(params, lr=0.5)  # hyperparameters come back from the state dict
    second.load_state_dict(first.state_dict())
    assert second.param_groups[0]["lr"] == 0.05 and second.param_groups[0]["params"] == params
    state = second.state[params[0]]
    assert state["step"] == 3 and state["exp_avg"] is not first.state_dict()["state"][0]["exp_avg"]
    target = genesis.tensor(np.full((3, 4), 0.5, dtype=np.float32))
    for _ in range(3):
        second.zero_grad()
        _loss(genesis, params, target).backward()
        second.step()
    for mine, reference in zip(params, straight):
        np.testing.assert_array_equal(mine.detach().numpy(), reference)


def test_a_step_saved_as_a_number_loads_as_a_step_tensor():
    """genesis used to keep state["step"] as an int; such state dicts still load, as tensors."""
    arrays = _initial_arrays(np.float32)
    _, first = _train(genesis, optim.Adam, dict(lr=0.05), arrays, steps=2)
    old = first.state_dict()
    for values in old["state"].values():
        values["step"] = int(values["step"].item())
    params = [genesis.tensor(a, requires_grad=True) for a in arrays]
    second = optim.Adam(params)
    second.load_state_dict(old)
    step = second.state[params[0]]["step"]
    assert isinstance(step, genesis.Tensor) and step.dtype == genesis.float32 and step.item() == 2.0
    assert step is not first.state[first.param_groups[0]["params"][0]]["step"]


def test_load_state_dict_casts_state_to_the_parameter_dtype():
    w = genesis.tensor([1.0, 2.0], requires_grad=True)
    optimizer = optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    optimizer.step()
    state = optimizer.state_dict()
    w64 = genesis.tensor([1.0, 2.0], dtype=genesis.float64, requires_grad=True)
    other = optim.SGD([w64], lr=0.1, momentum=0.9)
    other.load_state_dict(state)
    assert other.state[w64]["momentum_buffer"].dtype == genesis.float64


def test_load_state_dict_rejects_mismatched_groups():
    a = genesis.tensor([1.0], requires_grad=True)
    b = genesis.tensor([1.0], requires_grad=True)
    state = optim.SGD([a, b]).state_dict()
    with pytest.raises(ValueError, match="group 0 has 2 parameters, this optimizer's has 1"):
        optim.SGD([a]).load_state_dict(state)
    with pytest.raises(ValueError, match="1 parameter group"):
        optim.SGD([{"params": [a]}, {"params": [b]}]).load_state_dict(state)


def test_adagrad_state_exists_from_construction_like_pytorch():
    w = genesis.tensor([1.0], requires_grad=True)
    optimizer = optim.Adagrad([w], initial_accumulator_value=0.5)
    assert optimizer.state[w]["step"] == 0 and optimizer.state[w]["sum"].tolist() == [0.5]
    late = genesis.tensor([1.0], requires_grad=True)
    optimizer.add_param_group({"params": [late]})
    (late * 2).sum().backward()
    optimizer.step()
    assert optimizer.state[late]["step"] == 1


def test_training_a_small_model_reduces_the_loss():
    genesis.manual_seed(0)
    model = genesis.nn.Sequential(genesis.nn.Linear(3, 8), genesis.nn.Tanh(), genesis.nn.Linear(8, 1))
    optimizer = optim.AdamW(model.parameters(), lr=0.05)
    x = genesis.randn(32, 3)
    y = (x * genesis.tensor([1.0, -2.0, 0.5])).sum(1, keepdim=True)
    losses = []
    for _ in range(60):
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.05 * losses[0]


def test_repr_lists_groups():
    optimizer = optim.SGD([genesis.zeros(1, requires_grad=True)], lr=0.1)
    assert repr(optimizer).startswith("SGD (\nParameter Group 0\n    dampening: 0\n")


OPTIMIZERS = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "LBFGS"]
SWITCHES = {  # the implementation switches each of PyTorch's optimizers takes
    "SGD": ("foreach", "differentiable", "fused"),
    "Adam": ("foreach", "capturable", "differentiable", "fused"),
    "AdamW": ("foreach", "capturable", "differentiable", "fused"),
    "RMSprop": ("capturable", "foreach", "differentiable"),
    "Adagrad": ("foreach", "differentiable", "fused"),
    "Adadelta": ("foreach", "capturable", "differentiable"),
    "LBFGS": (),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_defaults_match_pytorch_with_the_implementation_switches(name):
    """foreach / fused / capturable / differentiable are accepted (False, or None, or True for
    foreach and fused, which pick PyTorch's kernels and change nothing here) and recorded in
    defaults, param groups and state dicts with PyTorch's defaults."""
    torch = torch_or_skip()
    ours = getattr(optim, name)([genesis.zeros(2, requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert ours.state_dict()["param_groups"] == theirs.state_dict()["param_groups"]
    for switch in SWITCHES[name]:
        value = True if switch in ("foreach", "fused") else False
        made = getattr(optim, name)([genesis.zeros(2, requires_grad=True)], **{switch: value})
        assert made.param_groups[0][switch] is value


@pytest.mark.parametrize("name", [name for name in OPTIMIZERS if SWITCHES[name]])
def test_switches_genesis_cannot_honour_are_refused_clearly(name):
    w = genesis.zeros(2, requires_grad=True)
    for switch in ("capturable", "differentiable"):
        if switch in SWITCHES[name]:
            with pytest.raises(NotImplementedError, match=f"{name}\\({switch}=True\\) is not supported"):
                getattr(optim, name)([w], **{switch: True})
    if "fused" in SWITCHES[name]:
        with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together"):
            getattr(optim, name)([w], foreach=True, fused=True)


def test_fused_and_foreach_change_nothing_in_the_update():
    arrays = _initial_arrays(np.float64)
    plain, _ = _train(genesis, optim.AdamW, dict(lr=0.01), arrays)
    for switch in (dict(foreach=True), dict(fused=True), dict(foreach=False, fused=False)):
        switched, _ = _train(genesis, optim.AdamW, dict(lr=0.01, **switch), arrays)
        for mine, reference in zip(switched, plain):
            np.testing.assert_array_equal(mine, reference)


def test_named_parameters_record_param_names_like_pytorch():
    torch = torch_or_skip()
    groups = []
    for library in (genesis, torch):
        library.manual_seed(0)
        model = library.nn.Sequential(library.nn.Linear(2, 3), library.nn.Linear(3, 1))
        optimizer = library.optim.SGD(model[0].named_parameters(), lr=0.1, momentum=0.9)
        optimizer.add_param_group({"params": list(model[1].named_parameters()), "lr": 0.01})
        model(library.ones(4, 2)).sum().backward()
        optimizer.step()
        state = optimizer.state_dict()
        assert optimizer.param_groups[0]["params"] == list(model[0].parameters())
        groups.append([(group["param_names"], group["params"]) for group in state["param_groups"]])
        assert sorted(state["state"]) == [0, 1, 2, 3]
    assert groups[0] == groups[1] == [(["weight", "bias"], [0, 1]), (["weight", "bias"], [2, 3])]


def test_named_and_unnamed_parameters_do_not_mix():
    a, b = genesis.zeros(1, requires_grad=True), genesis.zeros(1, requires_grad=True)
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.SGD([("a", a), b], lr=0.1)
    optimizer = optim.SGD([("a", a)], lr=0.1)
    with pytest.raises(ValueError, match="cannot add param group without names"):
        optimizer.add_param_group({"params": [b]})


def test_load_state_dict_keeps_param_names_unless_the_saved_groups_have_their_own():
    a, b = genesis.zeros(1, requires_grad=True), genesis.zeros(1, requires_grad=True)
    unnamed = optim.SGD([a, b], lr=0.5).state_dict()
    named = optim.SGD([("x", a), ("y", b)], lr=0.1)
    named.load_state_dict(unnamed)
    assert named.param_groups[0]["param_names"] == ["x", "y"] and named.param_groups[0]["lr"] == 0.5
    renamed = optim.SGD([("p", a), ("q", b)], lr=0.1)
    renamed.load_state_dict(named.state_dict())
    assert renamed.param_groups[0]["param_names"] == ["x", "y"]


@pytest.mark.parametrize("name, options", [case for case in CONFIGS if "lr" in case[1]],
                         ids=[i for i, (_, options) in zip(IDS, CONFIGS) if "lr" in options])
def test_a_tensor_lr_is_read_at_each_step_like_pytorch(name, options):
    """A one-element Tensor lr is kept in the param group and read where the update uses it,
    so changing it in place changes the next steps, as in PyTorch."""
    torch = torch_or_skip()
    arrays = _initial_arrays(np.float64)
    results = []
    for library in (genesis, torch):
        params = [library.from_numpy(a.copy()).requires_grad_() for a in arrays]
        target = library.from_numpy(np.full((3, 4), 0.5))
        lr = library.tensor(options["lr"], dtype=library.float64)
        optimizer = getattr(library.optim, name)(params, **dict(options, lr=lr))
        for step in range(4):
            if step == 2:
                optimizer.param_groups[0]["lr"].mul_(0.5)
            optimizer.zero_grad()
            _loss(library, params, target).backward()
            optimizer.step()
        assert optimizer.param_groups[0]["lr"] is lr
        results.append([p.detach().numpy() for p in params])
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-10)


def test_a_tensor_lr_is_checked_like_pytorch():
    w = genesis.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.SGD([w], lr=genesis.tensor([0.1, 0.2]))
    with pytest.raises(ValueError, match="lr as a Tensor is not supported for capturable=False and "
                                         "foreach=True"):
        optim.Adam([w], lr=genesis.tensor(0.1), foreach=True)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adam([w], lr=genesis.tensor(-0.1))


def _step_hook_log(lib) -> list:
    """What step hooks (global and per optimizer) see, in order, over three steps: one
    changed by a pre hook, one after the hooks that changed it are removed, one of a
    subclass whose own step calls super().step()."""
    module = importlib.import_module(f"{lib.__name__}.optim.optimizer")
    w = lib.ones(1, requires_grad=True)
    optimizer = lib.optim.SGD([w], lr=0.1)
    log = []

    def note(kind):
        return lambda opt, args, kwargs: log.append((kind, opt is optimizer, len(args),
                                                     args[0] is opt, sorted(kwargs)))

    def give_a_closure(opt, args, kwargs):
        return args, {"closure": lambda: 7.0}

    handles = [module.register_optimizer_step_pre_hook(note("global pre")),
               module.register_optimizer_step_post_hook(note("global post"))]
    optimizer.register_step_pre_hook(note("pre"))
    optimizer.register_step_post_hook(note("post"))
    handles.append(optimizer.register_step_pre_hook(give_a_closure))
    try:
        (w * 2).sum().backward()
        log.append(("returned", optimizer.step()))
    finally:
        for handle in handles:
            handle.remove()
    optimizer.step(None)
    return log


def test_step_hooks_run_like_pytorch():
    torch = torch_or_skip()
    assert _step_hook_log(genesis) == _step_hook_log(torch) == [
        ("global pre", True, 1, True, []), ("pre", True, 1, True, []),
        ("post", True, 1, True, ["closure"]), ("global post", True, 1, True, ["closure"]),
        ("returned", 7.0), ("pre", True, 2, True, []), ("post", True, 2, True, [])]


def test_step_hooks_run_once_for_a_step_of_its_own_that_calls_super():
    """A user's optimizer with its own step runs the hooks (PyTorch patches each class's
    step); calling super().step() inside does not run them a second time."""
    calls = []

    class Logged(optim.SGD):
        def step(self, closure=None):
            calls.append("step")
            return super().step(closure)

    w = genesis.ones(1, requires_grad=True)
    optimizer = Logged([w], lr=0.5)
    optimizer.register_step_pre_hook(lambda *args: calls.append("pre"))
    optimizer.register_step_post_hook(lambda *args: calls.append("post"))
    w.sum().backward()
    optimizer.step()
    assert calls == ["pre", "step", "post"] and w.tolist() == [0.5]
    assert optimizer._step_calls == 1


def test_a_wrapper_subclass_that_never_calls_optimizer_init_steps():
    """Lookahead as its popular implementations write it: an Optimizer subclass holding
    another optimizer and taking its param_groups, without Optimizer.__init__ (PyTorch runs
    it: such a class's step is plain). Its steps run and count."""
    w = genesis.tensor([1.0], requires_grad=True)
    optimizer = Lookahead(optim.SGD([w], lr=0.5))
    for _ in range(2):
        optimizer.zero_grad()
        (w * w).sum().backward()
        optimizer.step()
    assert optimizer._step_calls == 2 and optimizer.inner._step_calls == 2
    assert w.tolist() == [0.5]  # fast: 1 -> 0 -> 0; then slow 1 + (0 - 1) / 2, copied in


def test_a_pre_hook_returning_something_else_is_named():
    optimizer = optim.SGD([genesis.ones(1, requires_grad=True)], lr=0.1)

    def bad_hook(opt, args, kwargs):
        return 5

    optimizer.register_step_pre_hook(bad_hook)
    with pytest.raises(RuntimeError, match="pre hook '.*bad_hook' .* must return None or a tuple of "
                                           "\\(new_args, new_kwargs\\), but got 5"):
        optimizer.step()
    with pytest.raises(TypeError, match="expects a callable hook"):
        optimizer.register_step_post_hook(3)
