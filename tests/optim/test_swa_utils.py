"""`genesis.optim.swa_utils` against PyTorch's `torch.optim.swa_utils`: the averaged weights
and buffers after several updates for each averaging rule, SWALR's learning rates step by
step, update_bn's statistics, the state_dict's keys, and the errors for bad arguments."""
import numpy as np
import pytest

import genesis
from genesis.optim import swa_utils
from tests.helpers import torch_or_skip

UPDATES = 5


def _model(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def _models():
    """The same small model with BatchNorm, in genesis and in PyTorch, with equal weights."""
    torch = torch_or_skip()
    genesis.manual_seed(0)
    mine, theirs = _model(genesis), _model(torch)
    theirs.load_state_dict({name: torch.from_numpy(value.numpy().copy())
                            for name, value in mine.state_dict().items()})
    return torch, mine, theirs


def _set(lib, tensor, value: np.ndarray) -> None:
    with lib.no_grad():
        tensor.copy_(lib.tensor(value))


def _train_step(torch, mine, theirs, rng) -> None:
    """New weights in both models, then a forward in train mode (new BatchNorm statistics)."""
    for (_, p_mine), (_, p_theirs) in zip(mine.named_parameters(), theirs.named_parameters()):
        value = rng.standard_normal(tuple(p_mine.shape)).astype(np.float32)
        _set(genesis, p_mine, value)
        _set(torch, p_theirs, value)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    mine(genesis.tensor(x))
    theirs(torch.tensor(x))


def _assert_same_state(mine, theirs, exact_parameters: bool = True) -> None:
    """Same keys, dtypes and values. Within float32 rounding: BatchNorm's running statistics
    (genesis's rounds differently from PyTorch's by an ulp) and, unless `exact_parameters`,
    the weights (genesis's lerp_ rounds twice where PyTorch's CPU kernel fuses a
    multiply-add); the parameters are otherwise bit for bit PyTorch's."""
    ours, expected = mine.state_dict(), theirs.state_dict()
    assert list(ours) == list(expected)
    for name, value in expected.items():
        assert str(ours[name].dtype).split(".")[-1] == str(value.dtype).split(".")[-1], name
        if exact_parameters and "running_" not in name:
            np.testing.assert_array_equal(ours[name].numpy(), value.numpy(), err_msg=name)
        else:
            np.testing.assert_allclose(ours[name].numpy(), value.numpy(), rtol=1e-6, atol=1e-7,
                                       err_msg=name)


def _rule(lib, name):
    utils = swa_utils if lib is genesis else lib.optim.swa_utils
    return {
        "swa": {},
        "ema_avg_fn": {"avg_fn": utils.get_ema_avg_fn(0.9)},
        "ema_multi_avg_fn": {"multi_avg_fn": utils.get_ema_multi_avg_fn(0.9)},
        "swa_multi_avg_fn": {"multi_avg_fn": utils.get_swa_multi_avg_fn()},
        "swa_avg_fn": {"avg_fn": utils.get_swa_avg_fn()},
        "custom_avg_fn": {"avg_fn": lambda averaged, current, n: 0.5 * averaged + 0.5 * current},
    }[name]


# PyTorch's in-place SWA refuses the integer num_batches_tracked: no use_buffers (tested below)
CASES = [(rule, use_buffers) for rule in ("swa", "ema_avg_fn", "ema_multi_avg_fn",
                                          "swa_multi_avg_fn", "swa_avg_fn", "custom_avg_fn")
         for use_buffers in (False, True) if (rule, use_buffers) != ("swa_multi_avg_fn", True)]


@pytest.mark.parametrize("rule, use_buffers", CASES)
def test_averaged_weights_and_buffers_match_pytorch(rule, use_buffers):
    torch, mine, theirs = _models()
    averaged_mine = swa_utils.AveragedModel(mine, use_buffers=use_buffers, **_rule(genesis, rule))
    averaged_theirs = torch.optim.swa_utils.AveragedModel(theirs, use_buffers=use_buffers,
                                                          **_rule(torch, rule))
    rng = np.random.default_rng(1)
    for _ in range(UPDATES):
        _train_step(torch, mine, theirs, rng)
        averaged_mine.update_parameters(mine)
        averaged_theirs.update_parameters(theirs)
        _assert_same_state(averaged_mine, averaged_theirs, exact_parameters="multi" not in rule)
    assert averaged_mine.n_averaged.item() == UPDATES


def test_the_in_place_swa_over_integer_buffers_raises_as_in_pytorch():
    torch, mine, theirs = _models()
    for lib, model in ((genesis, mine), (torch, theirs)):
        utils = swa_utils if lib is genesis else torch.optim.swa_utils
        averaged = utils.AveragedModel(model, multi_avg_fn=utils.get_swa_multi_avg_fn(),
                                       use_buffers=True)
        averaged.update_parameters(model)
        with pytest.raises(RuntimeError, match="(?i)integer division"):
            averaged.update_parameters(model)


def test_the_copy_is_deep_and_updates_record_no_graph():
    model = _model(genesis)
    averaged = swa_utils.AveragedModel(model)
    assert all(a is not b for a, b in zip(averaged.parameters(), model.parameters()))
    loss = model(genesis.randn(4, 3)).sum()
    averaged.update_parameters(model)
    averaged.update_parameters(model)
    loss.backward()
    for parameter in averaged.parameters():
        assert parameter.requires_grad and parameter.grad is None and parameter.grad_fn is None


def test_forward_is_the_copy_s_forward():
    model = genesis.nn.Bilinear(2, 3, 1)
    averaged = swa_utils.AveragedModel(model)
    x1, x2 = genesis.randn(4, 2), genesis.randn(4, 3)
    np.testing.assert_array_equal(averaged(x1, input2=x2).detach().numpy(),
                                  model(x1, x2).detach().numpy())


def test_state_dict_keys_match_pytorch_and_round_trip():
    torch, mine, theirs = _models()
    averaged_mine = swa_utils.AveragedModel(mine)
    averaged_theirs = torch.optim.swa_utils.AveragedModel(theirs)
    rng = np.random.default_rng(2)
    for _ in range(3):
        _train_step(torch, mine, theirs, rng)
        averaged_mine.update_parameters(mine)
        averaged_theirs.update_parameters(theirs)
    assert list(averaged_mine.state_dict()) == list(averaged_theirs.state_dict())
    assert list(averaged_mine.state_dict())[:2] == ["n_averaged", "module.0.weight"]
    restored = swa_utils.AveragedModel(_model(genesis))
    restored.load_state_dict(averaged_mine.state_dict())
    assert restored.n_averaged.item() == 3
    _assert_same_state(restored, averaged_theirs)
    from_pytorch = swa_utils.AveragedModel(_model(genesis))
    from_pytorch.load_state_dict({name: genesis.tensor(value.numpy())
                                  for name, value in averaged_theirs.state_dict().items()})
    _assert_same_state(from_pytorch, averaged_theirs)


def _bn_loader(lib, rng, as_tuples: bool):
    batches = [rng.standard_normal((6, 3)).astype(np.float32) * 3 + 1 for _ in range(4)]
    if as_tuples:
        return [(lib.tensor(batch), lib.zeros(6)) for batch in batches]
    return [lib.tensor(batch) for batch in batches]


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("as_tuples", [True, False])
def test_update_bn_recomputes_the_statistics_as_pytorch(training, as_tuples):
    torch, mine, theirs = _models()
    rng = np.random.default_rng(3)
    _train_step(torch, mine, theirs, rng)
    mine.train(training)
    theirs.train(training)
    loader_seed = rng.integers(1 << 30)
    swa_utils.update_bn(_bn_loader(genesis, np.random.default_rng(loader_seed), as_tuples), mine)
    torch.optim.swa_utils.update_bn(_bn_loader(torch, np.random.default_rng(loader_seed),
                                               as_tuples), theirs)
    _assert_same_state(mine, theirs)
    assert mine[1].num_batches_tracked.item() == 4
    assert mine.training is training and mine[1].training is training
    assert mine[1].momentum == 0.1


def test_update_bn_through_an_averaged_model_and_without_batchnorm():
    torch, mine, theirs = _models()
    averaged_mine = swa_utils.AveragedModel(mine).eval()
    averaged_theirs = torch.optim.swa_utils.AveragedModel(theirs).eval()
    swa_utils.update_bn(_bn_loader(genesis, np.random.default_rng(4), True), averaged_mine)
    torch.optim.swa_utils.update_bn(_bn_loader(torch, np.random.default_rng(4), True),
                                    averaged_theirs)
    _assert_same_state(averaged_mine, averaged_theirs)
    assert not averaged_mine.training
    linear = genesis.nn.Linear(3, 1).eval()
    swa_utils.update_bn(iter(()), linear)  # nothing to update: the mode is left alone
    assert not linear.training


def _lrs(lib, options, warmup: int, steps: int = 16):
    """SWALR's learning rates per step for two param groups, after `warmup` steps of a
    cosine schedule."""
    first, second = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
    optimizer = lib.optim.SGD([{"params": [first]}, {"params": [second], "lr": 0.05}], lr=0.1)
    utils = swa_utils if lib is genesis else lib.optim.swa_utils
    schedule = lib.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
    swa_scheduler = utils.SWALR(optimizer, **options)
    seen = []
    for step in range(steps):
        seen.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
        (schedule if step < warmup else swa_scheduler).step()
    return seen + [swa_scheduler.get_last_lr()]


@pytest.mark.parametrize("warmup", [0, 4])
@pytest.mark.parametrize("options", [
    dict(swa_lr=0.02),
    dict(swa_lr=[0.02, 0.2], anneal_epochs=3),
    dict(swa_lr=0.01, anneal_epochs=5, anneal_strategy="linear"),
    dict(swa_lr=(0.3, 0.01), anneal_epochs=1, anneal_strategy="linear"),
    dict(swa_lr=0.02, anneal_epochs=0),
    dict(swa_lr=0.02, anneal_epochs=0, anneal_strategy="linear"),
], ids=lambda options: "-".join(f"{key}={value}" for key, value in options.items()))
def test_swalr_learning_rates_match_pytorch(options, warmup):
    torch = torch_or_skip()
    assert _lrs(genesis, options, warmup) == _lrs(torch, options, warmup)


def test_swalr_state_dict_round_trip_continues_the_schedule():
    def make():
        optimizer = genesis.optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
        return optimizer, swa_utils.SWALR(optimizer, swa_lr=0.1, anneal_epochs=6,
                                          anneal_strategy="linear")

    optimizer, scheduler = make()
    for _ in range(3):
        optimizer.step()
        scheduler.step()
    state = scheduler.state_dict()
    assert "anneal_func" not in state and "optimizer" not in state
    assert state["_anneal_strategy"] == "linear" and state["anneal_epochs"] == 6
    resumed_optimizer, resumed = make()
    resumed_optimizer.load_state_dict(optimizer.state_dict())
    resumed.load_state_dict(state)
    for _ in range(4):
        optimizer.step(), scheduler.step()
        resumed_optimizer.step(), resumed.step()
        assert resumed.get_last_lr() == scheduler.get_last_lr()
    assert scheduler.get_last_lr() == pytest.approx([0.1])


def _error(call):
    with pytest.raises(Exception) as raised:
        call()
    return type(raised.value), str(raised.value)


@pytest.mark.parametrize("bad", [
    lambda lib, utils, optimizer, model: utils.get_ema_avg_fn(-0.1),
    lambda lib, utils, optimizer, model: utils.get_ema_multi_avg_fn(1.5),
    lambda lib, utils, optimizer, model: utils.AveragedModel(
        model, avg_fn=utils.get_swa_avg_fn(), multi_avg_fn=utils.get_swa_multi_avg_fn()),
    lambda lib, utils, optimizer, model: utils.SWALR(optimizer, swa_lr=[0.1, 0.2, 0.3]),
    lambda lib, utils, optimizer, model: utils.SWALR(optimizer, 0.1, anneal_strategy="exp"),
    lambda lib, utils, optimizer, model: utils.SWALR(optimizer, 0.1, anneal_epochs=-1),
    lambda lib, utils, optimizer, model: utils.SWALR(optimizer, 0.1, anneal_epochs=2.0),
], ids=["ema-decay-negative", "ema-multi-decay-above-1", "both-avg-fns", "swa-lr-count",
        "anneal-strategy", "anneal-epochs-negative", "anneal-epochs-float"])
def test_bad_arguments_raise_what_pytorch_raises(bad):
    torch = torch_or_skip()
    errors = []
    for lib, utils in ((genesis, swa_utils), (torch, torch.optim.swa_utils)):
        model = lib.nn.Linear(2, 2)
        optimizer = lib.optim.SGD([{"params": [model.weight]}, {"params": [model.bias]}], lr=0.1)
        errors.append(_error(lambda: bad(lib, utils, optimizer, model)))
    assert errors[0] == errors[1]


def test_served_as_torch_optim_swa_utils():
    from genesis.compat.torch_modules import MODULES

    assert MODULES["torch.optim.swa_utils"] == "genesis.optim.swa_utils"
    torch = torch_or_skip()
    assert set(swa_utils.__all__) == set(torch.optim.swa_utils.__all__)
