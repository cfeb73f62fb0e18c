"""Optimizers against PyTorch's update rules (same init, same loss, 10 steps), and the base class."""
import numpy as np
import pytest

import genesis
from genesis import optim
from tests.helpers import torch_or_skip

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
    _, ours = _train(genesis, getattr(optim, name), options, arrays, steps=2)
    _, theirs = _train(torch, getattr(torch.optim, name), dict(options, foreach=False), arrays, steps=2)
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
