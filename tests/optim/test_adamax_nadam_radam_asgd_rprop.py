"""Adamax, NAdam, RAdam, ASGD, Rprop (and SparseAdam; Adafactor's 30 steps) against PyTorch's: 30 steps on a small
tanh layer from the same weights in float64, then the parameters and every state entry;
argument checks, defaults, state dicts (in both directions), tensor lr and schedulers."""
import numpy as np
import pytest

import genesis
from genesis import optim
from genesis.compat import serve_torch
from tests.helpers import torch_or_skip

CONFIGS = [
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, foreach=False)),
    ("Adamax", dict(lr=0.02, betas=(0.3, 0.9), eps=1e-3)),  # lerp weight >= 0.5: other rounding
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, foreach=False)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.02, momentum_decay=0.1, betas=(0.8, 0.99))),
    ("NAdam", dict(lr=0.01, maximize=True, eps=1e-4)),
    ("RAdam", dict()),  # rho_t passes 5 at step 6: both branches
    ("RAdam", dict(lr=0.01, weight_decay=0.1, foreach=False)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.02, betas=(0.8, 0.9))),
    ("RAdam", dict(lr=0.01, maximize=True)),
    ("ASGD", dict()),  # t0 = 1e6: ax copies the parameters
    ("ASGD", dict(lr=0.05, t0=10, lambd=0.01, alpha=0.5, foreach=False)),  # averages from step 11
    ("ASGD", dict(lr=0.05, t0=3, weight_decay=0.1)),
    ("ASGD", dict(lr=0.01, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), foreach=False)),
    ("Rprop", dict(lr=0.05, step_sizes=(1e-3, 0.06))),  # both clamps reached
    ("Rprop", dict(lr=0.01, maximize=True)),
    ("Adafactor", dict()),  # (its other checks: test_adafactor.py)
    ("Adafactor", dict(lr=0.05, weight_decay=0.1, foreach=False)),
    ("Adafactor", dict(lr=0.05, eps=(1e-3, 1e-2), d=1.5, beta2_decay=-0.5)),
    ("Adafactor", dict(lr=0.2)),  # rho_t = 1 / sqrt(t) from step 26 on
    ("Adafactor", dict(maximize=True)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in options.items())}" for name, options in CONFIGS]
NAMES = ["Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]


def _initial_arrays():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape) for shape in ((4, 3), (4,), (4,))] + [rng.standard_normal((8, 3))]


def _loss(params, x):
    """A Linear(3, 4) + tanh layer read out to a number: bounded, and different curvature per
    parameter (so every element's state moves differently)."""
    weight, bias, readout = params
    hidden = (x @ weight.T + bias).tanh()
    return ((hidden * readout).sum(1) - 0.5).pow(2).mean() + (readout * readout).sum() * 0.01


def _parameters(lib, arrays):
    return [lib.from_numpy(a.copy()).requires_grad_() for a in arrays[:3]]


def _steps(lib, optimizer, params, x, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        _loss(params, x).backward()
        optimizer.step()


def _train(lib, name, options, arrays, steps=30):
    params = _parameters(lib, arrays)
    optimizer = getattr(lib.optim, name)(params, **options)
    _steps(lib, optimizer, params, lib.from_numpy(arrays[3]), steps)
    return params, optimizer


def _assert_same_state(ours, theirs, atol=1e-10):
    """Every state entry of every parameter: same keys, same values (tensors: also same
    shape, dtype and device as PyTorch's)."""
    mine, reference = ours.state_dict()["state"], theirs.state_dict()["state"]
    assert list(mine) == list(reference)
    for index, state in mine.items():
        assert sorted(state) == sorted(reference[index])
        for key, value in state.items():
            expected = reference[index][key]
            assert isinstance(value, genesis.Tensor) and value.shape == expected.shape, key
            assert str(value.dtype) == str(expected.dtype).replace("torch", "genesis"), key
            assert str(value.device) == str(expected.device), key
            np.testing.assert_allclose(value.numpy(), expected.numpy(), rtol=0, atol=atol, err_msg=key)


@pytest.mark.parametrize("name, options", CONFIGS, ids=IDS)
def test_thirty_steps_and_the_state_match_pytorch(name, options):
    torch = torch_or_skip()
    arrays = _initial_arrays()
    ours, our_optimizer = _train(genesis, name, options, arrays)
    theirs, their_optimizer = _train(torch, name, options, arrays)
    for mine, reference in zip(ours, theirs):
        assert mine.dtype == genesis.float64
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=0, atol=1e-10)
    _assert_same_state(our_optimizer, their_optimizer)
    assert our_optimizer.state_dict()["param_groups"] == their_optimizer.state_dict()["param_groups"]


@pytest.mark.parametrize("name, options", CONFIGS, ids=IDS)
def test_float32_steps_match_pytorch_given_the_same_gradients(name, options):
    """In float32 the two libraries' gradients differ in the last bits, which Rprop's sign
    tests can amplify; given PyTorch's gradients, the updates agree to float32 rounding."""
    torch = torch_or_skip()
    arrays = [a.astype(np.float32) for a in _initial_arrays()]
    theirs = _parameters(torch, arrays)
    ours = _parameters(genesis, arrays)
    their_optimizer = getattr(torch.optim, name)(theirs, **options)
    our_optimizer = getattr(optim, name)(ours, **options)
    x = torch.from_numpy(arrays[3])
    for _ in range(30):
        their_optimizer.zero_grad()
        _loss(theirs, x).backward()
        for mine, reference in zip(ours, theirs):
            mine.grad = genesis.from_numpy(reference.grad.numpy().copy())
        their_optimizer.step()
        our_optimizer.step()
    for mine, reference in zip(ours, theirs):
        assert mine.dtype == genesis.float32
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=0, atol=1e-6)
    _assert_same_state(our_optimizer, their_optimizer, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_a_tensor_lr_is_read_like_pytorch(name):
    """A one-element Tensor lr stays in the param group and is read where PyTorch reads it:
    at each step, or (Rprop's initial step size, ASGD's first eta) when the state is made."""
    torch = torch_or_skip()
    arrays = _initial_arrays()
    results = []
    for lib in (genesis, torch):
        params = _parameters(lib, arrays)
        lr = lib.tensor(0.02, dtype=lib.float64)
        optimizer = getattr(lib.optim, name)(params, lr=lr, foreach=False)
        x = lib.from_numpy(arrays[3])
        _steps(lib, optimizer, params, x, 3)
        optimizer.param_groups[0]["lr"].mul_(0.5)
        _steps(lib, optimizer, params, x, 3)
        assert optimizer.param_groups[0]["lr"] is lr
        results.append([p.detach().numpy() for p in params])
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_a_schedule_changes_the_lr_like_pytorch(name):
    torch = torch_or_skip()
    arrays = _initial_arrays()
    results = []
    for lib in (genesis, torch):
        params = _parameters(lib, arrays)
        optimizer = getattr(lib.optim, name)(params, lr=0.02)
        schedule = lib.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
        for _ in range(10):
            _steps(lib, optimizer, params, lib.from_numpy(arrays[3]), 1)
            schedule.step()
        results.append([p.detach().numpy() for p in params] + [optimizer.param_groups[0]["lr"]])
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-10)


def test_one_cycle_cycles_nadams_beta1_like_pytorch():
    torch = torch_or_skip()
    arrays = _initial_arrays()
    results = []
    for lib in (genesis, torch):
        params = _parameters(lib, arrays)
        optimizer = lib.optim.NAdam(params)
        schedule = lib.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, total_steps=12)
        for _ in range(12):
            _steps(lib, optimizer, params, lib.from_numpy(arrays[3]), 1)
            schedule.step()
        results.append([p.detach().numpy() for p in params] + [optimizer.param_groups[0]["betas"]])
    for mine, reference in zip(*results):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_a_loaded_state_dict_continues_the_same_trajectory(name):
    arrays = _initial_arrays()
    straight, _ = _train(genesis, name, dict(lr=0.02), arrays, steps=8)
    halfway, first = _train(genesis, name, dict(lr=0.02), arrays, steps=4)
    params = [genesis.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in halfway]
    second = getattr(optim, name)(params, lr=0.5)  # the saved lr comes back
    second.load_state_dict(first.state_dict())
    assert second.param_groups[0]["lr"] == 0.02
    _steps(genesis, second, params, genesis.from_numpy(arrays[3]), 4)
    # Loading casts NAdam's mu_product and ASGD's eta and mu from float32 to the parameters'
    # float64, as PyTorch's does, so these two continue a little differently (PyTorch's too).
    atol = 1e-8 if name in ("NAdam", "ASGD") else 1e-13
    for mine, reference in zip(params, straight):
        np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=0, atol=atol)


def _converted(state_dict: dict, to_tensor) -> dict:
    return {"state": {index: {key: to_tensor(value) for key, value in values.items()}
                      for index, values in state_dict["state"].items()},
            "param_groups": state_dict["param_groups"]}


@pytest.mark.parametrize("name", NAMES + ["Adafactor"])
def test_state_dicts_load_across_genesis_and_pytorch(name):
    """A state dict saved by either (its tensors converted) continues in the other as it would
    have in the first, loading's casts included (NAdam's mu_product, ASGD's eta and mu take
    the parameters' dtype on load, in both)."""
    torch = torch_or_skip()
    arrays = _initial_arrays()
    options = dict(lr=0.02, weight_decay=0.1) if name != "Rprop" else dict(lr=0.02)
    libraries = {"genesis": (genesis, lambda t: genesis.from_numpy(t.numpy().copy())),
                 "torch": (torch, lambda t: torch.from_numpy(t.numpy().copy()))}
    for saver, loader in (("torch", "genesis"), ("genesis", "torch")):
        (save_lib, _), (load_lib, to_loader) = libraries[saver], libraries[loader]
        halfway, first = _train(save_lib, name, options, arrays, steps=10)
        params = [load_lib.from_numpy(p.detach().numpy().copy()).requires_grad_() for p in halfway]
        second = getattr(load_lib.optim, name)(params, **options)
        second.load_state_dict(_converted(first.state_dict(), to_loader))
        _steps(save_lib, first, halfway, save_lib.from_numpy(arrays[3]), 10)
        _steps(load_lib, second, params, load_lib.from_numpy(arrays[3]), 10)
        for mine, reference in zip(params, halfway):
            np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=0,
                                       atol=1e-10)


BAD_ARGUMENTS = [
    ("Adamax", dict(lr=-1.0)), ("Adamax", dict(eps=-1e-8)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("Adamax", dict(weight_decay=-0.1)),
    ("NAdam", dict(lr=-0.1)), ("NAdam", dict(betas=(0.9, 1.0))), ("NAdam", dict(momentum_decay=-1.0)),
    ("NAdam", dict(weight_decay=-1.0)), ("NAdam", dict(eps=-1.0)),
    ("RAdam", dict(lr=-0.1)), ("RAdam", dict(betas=(-0.5, 0.9))), ("RAdam", dict(weight_decay=-1.0)),
    ("RAdam", dict(eps=-1.0)),
    ("ASGD", dict(lr=-0.1)), ("ASGD", dict(weight_decay=-1.0)),
    ("Rprop", dict(lr=-0.1)), ("Rprop", dict(etas=(1.0, 1.2))), ("Rprop", dict(etas=(0.5, 1.0))),
    ("Rprop", dict(etas=(0.0, 1.2))),
    ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(eps=0.0)), ("SparseAdam", dict(betas=(0.9, 1.0))),
]


@pytest.mark.parametrize("name, options", BAD_ARGUMENTS,
                         ids=[f"{name}-{options}" for name, options in BAD_ARGUMENTS])
def test_invalid_arguments_are_refused_like_pytorch(name, options):
    torch = torch_or_skip()
    with pytest.raises(Exception) as ours:
        getattr(optim, name)([genesis.zeros(2, requires_grad=True)], **options)
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **options)
    assert (type(ours.value), str(ours.value)) == (type(theirs.value), str(theirs.value))


@pytest.mark.parametrize("name", NAMES + ["SparseAdam"])
def test_defaults_and_tensor_lr_checks_match_pytorch(name):
    torch = torch_or_skip()
    ours = getattr(optim, name)([genesis.zeros(2, requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert ours.state_dict() == theirs.state_dict()
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(optim, name)([genesis.zeros(2, requires_grad=True)], lr=genesis.tensor([0.1, 0.2]))


@pytest.mark.parametrize("name", NAMES)
def test_switches_genesis_cannot_honour_are_refused_clearly(name):
    w = genesis.zeros(2, requires_grad=True)
    for switch in ("capturable", "differentiable"):
        with pytest.raises(NotImplementedError, match=f"{name}\\({switch}=True\\) is not supported"):
            getattr(optim, name)([w], **{switch: True})
    assert getattr(optim, name)([w], foreach=True).param_groups[0]["foreach"] is True


def test_rprop_keeps_nan_where_pytorch_does():
    torch = torch_or_skip()
    results = []
    for lib in (genesis, torch):
        w = lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64, requires_grad=True)
        optimizer = lib.optim.Rprop([w], lr=0.1)
        for grad in ([1.0, 1.0, 1.0], [float("nan"), -1.0, 0.0], [1.0, 1.0, 1.0]):
            w.grad = lib.tensor(grad, dtype=lib.float64)
            optimizer.step()
        results.append([w.detach().numpy()] + [optimizer.state[w][key].numpy() for key in ("prev", "step_size")])
    for mine, reference in zip(*results):
        np.testing.assert_array_equal(mine, reference)


def test_asgd_state_lives_with_the_parameter_and_nadams_mu_product_on_the_cpu():
    w = genesis.zeros(2, dtype=genesis.float64, requires_grad=True)
    asgd, nadam = optim.ASGD([w], lr=0.1), optim.NAdam([w])
    w.sum().backward()
    asgd.step()
    nadam.step()
    assert [asgd.state[w][key].dtype for key in ("step", "eta", "mu", "ax")] == [
        genesis.float32, genesis.float32, genesis.float32, genesis.float64]
    assert asgd.state[w]["eta"].item() == pytest.approx(0.1 / (1 + 1e-5) ** 0.75, rel=1e-6)
    assert nadam.state[w]["mu_product"].shape == () and nadam.state[w]["mu_product"].device.type == "cpu"


def test_sparse_adam_refuses_dense_gradients_like_pytorch():
    torch = torch_or_skip()
    errors = []
    for lib in (genesis, torch):
        unused, w = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
        optimizer = lib.optim.SparseAdam([unused, w], lr=0.1)
        optimizer.step()  # no gradients: nothing to do
        (w * w).sum().backward()
        with pytest.raises(RuntimeError) as error:
            optimizer.step()
        errors.append(str(error.value))
        assert w.tolist() == [1.0, 1.0] and not optimizer.state
    assert errors[0].startswith(errors[1])
    assert "takes the gradients of embeddings made with sparse=True" in errors[0]


@pytest.mark.parametrize("options", [dict(), dict(padding_idx=3), dict(maximize=True, lr=0.2)],
                         ids=["plain", "padding_idx", "maximize"])
def test_sparse_adam_on_a_sparse_embedding_matches_pytorch(options):
    """A skip-gram-like table (sparse=True) trained by SparseAdam: only the rows looked up
    move, with PyTorch's lazy Adam; a row never looked up keeps its value and state."""
    torch = torch_or_skip()
    rng = np.random.default_rng(0)
    start, targets = rng.standard_normal((10, 4)), rng.standard_normal((6, 4))
    batches = [rng.integers(0, 9, 6) for _ in range(8)]  # row 9 never looked up
    padding_idx = options.get("padding_idx")
    optimizer_options = {key: value for key, value in options.items() if key != "padding_idx"}
    results = []
    for lib in (genesis, torch):
        table = lib.nn.Embedding(10, 4, sparse=True, padding_idx=padding_idx).double()
        with lib.no_grad():
            table.weight.copy_(lib.tensor(start, dtype=lib.float64))
        optimizer = lib.optim.SparseAdam(table.parameters(), **{"lr": 0.05, **optimizer_options})
        for batch in batches:
            optimizer.zero_grad()
            ((table(lib.tensor(batch)) - lib.tensor(targets, dtype=lib.float64)) ** 2).sum().backward()
            optimizer.step()
        state = optimizer.state[table.weight]
        results.append((table.weight.detach().numpy(), state["exp_avg"].numpy(),
                        state["exp_avg_sq"].numpy(), float(state["step"])))
    (weights, m, v, steps), (their_weights, their_m, their_v, their_steps) = results
    np.testing.assert_allclose(weights, their_weights, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(m, their_m, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v, their_v, rtol=1e-12, atol=1e-14)
    assert steps == their_steps == len(batches)
    np.testing.assert_array_equal(weights[9], start[9])


def test_torch_optim_names_resolve_under_the_compatibility_layer():
    with serve_torch():
        import torch
        from torch.optim import NAdam

        assert NAdam is genesis.optim.NAdam
        for name in NAMES + ["SparseAdam"]:
            assert getattr(torch.optim, name) is getattr(genesis.optim, name)
