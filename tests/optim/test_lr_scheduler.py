"""LR schedulers: the same learning rates as PyTorch's, step by step, for each param group."""
import math
import warnings

import pytest

import genesis
from genesis import optim
from genesis.optim import lr_scheduler
from tests.helpers import torch_or_skip

SCHEDULES = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=7)),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.01)),  # runs past T_max: goes back up
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.8, total_iters=8)),
    ("OneCycleLR", dict(max_lr=1.0, total_steps=20)),
    ("OneCycleLR", dict(max_lr=[1.0, 0.5], total_steps=21, anneal_strategy="linear",
                        three_phase=True, pct_start=0.4)),
    ("OneCycleLR", dict(max_lr=0.3, epochs=4, steps_per_epoch=5, cycle_momentum=False)),
]


def _make(lib, module, optimizer_name, name, options, **optimizer_options):
    first = lib.zeros(2, requires_grad=True)
    second = lib.zeros(3, requires_grad=True)
    optimizer = getattr(module, optimizer_name)(
        [{"params": [first]}, {"params": [second], "lr": 0.05}], lr=0.1, **optimizer_options)
    scheduler_module = genesis.optim.lr_scheduler if lib is genesis else lib.optim.lr_scheduler
    return optimizer, getattr(scheduler_module, name)(optimizer, **options)


def _run(optimizer, scheduler, steps):
    seen = []
    for _ in range(steps):
        seen.append((list(scheduler.get_last_lr()), [g.get("momentum", g.get("betas")) for g in
                                                    optimizer.param_groups]))
        optimizer.step()
        scheduler.step()
    return seen


@pytest.mark.parametrize("optimizer_name, optimizer_options", [("SGD", {"momentum": 0.9}),
                                                               ("Adam", {})])
@pytest.mark.parametrize("name, options", SCHEDULES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULES)])
def test_learning_rates_match_pytorch(name, options, optimizer_name, optimizer_options):
    torch = torch_or_skip()
    steps = options.get("total_steps", 20) if name == "OneCycleLR" else 20
    ours = _run(*_make(genesis, optim, optimizer_name, name, options, **optimizer_options), steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _run(*_make(torch, torch.optim, optimizer_name, name, options, **optimizer_options),
                      steps)
    assert ours == theirs  # exact: the same formulas in the same order


def test_lambda_lr_and_warmup_cosine_match_pytorch():
    torch = torch_or_skip()
    schedule = lr_scheduler._WarmupCosine(4, 15, 0.5)
    ours = _make(genesis, optim, "SGD", "LambdaLR", dict(lr_lambda=[schedule, lambda e: 0.9 ** e]))
    theirs = _make(torch, torch.optim, "SGD", "LambdaLR", dict(lr_lambda=[schedule, lambda e: 0.9 ** e]))
    assert _run(*ours, 16) == _run(*theirs, 16)


def test_warmup_cosine_values():
    w = genesis.zeros(1, requires_grad=True)
    optimizer = optim.SGD([w], lr=2.0)
    scheduler = lr_scheduler.get_cosine_schedule_with_warmup(optimizer, num_warmup_steps=4,
                                                             num_training_steps=12)
    lrs = [lr for (lr,), _ in _run(optimizer, scheduler, 13)]
    assert lrs[:5] == [0.0, 0.5, 1.0, 1.5, 2.0]
    expected = [2.0 * 0.5 * (1 + math.cos(math.pi * (step - 4) / 8)) for step in range(4, 13)]
    assert lrs[4:] == pytest.approx(expected, abs=1e-12)
    assert lrs[-1] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="num_warmup_steps"):
        lr_scheduler.get_cosine_schedule_with_warmup(optimizer, 5, 3)


def test_state_dict_round_trip_resumes_the_schedule():
    optimizer, scheduler = _make(genesis, optim, "SGD", "CosineAnnealingLR", dict(T_max=10))
    _run(optimizer, scheduler, 4)
    saved_optimizer, saved = optimizer.state_dict(), scheduler.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 4
    expected = _run(optimizer, scheduler, 5)
    resumed_optimizer, resumed = _make(genesis, optim, "SGD", "CosineAnnealingLR", dict(T_max=10))
    resumed_optimizer.load_state_dict(saved_optimizer)
    resumed.load_state_dict(saved)
    assert _run(resumed_optimizer, resumed, 5) == expected


def test_lambda_state_dict_keeps_callable_objects_only():
    optimizer, scheduler = _make(genesis, optim, "SGD", "LambdaLR",
                                 dict(lr_lambda=[lr_scheduler._WarmupCosine(2, 8, 0.5), lambda e: 1.0]))
    state = scheduler.state_dict()
    assert state["lr_lambdas"] == [{"warmup_steps": 2, "total_steps": 8, "num_cycles": 0.5}, None]
    state["lr_lambdas"][0]["total_steps"] = 20
    scheduler.load_state_dict(state)
    assert scheduler.lr_lambdas[0].total_steps == 20


def test_bad_arguments_are_reported():
    w = genesis.zeros(1, requires_grad=True)
    optimizer = optim.SGD([w], lr=0.1)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR(object(), 2)
    with pytest.raises(ValueError, match="total_steps"):
        lr_scheduler.OneCycleLR(optimizer, max_lr=1.0)
    with pytest.raises(ValueError, match="start_factor"):
        lr_scheduler.LinearLR(optimizer, start_factor=0)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(optim.SGD([w], lr=0.1), 2, last_epoch=3)
    scheduler = lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=2)
    scheduler.step()
    scheduler.step()
    with pytest.raises(ValueError, match="tried to step 3 times"):
        scheduler.step()
    with pytest.raises(ValueError, match="momentum or beta1"):
        lr_scheduler.OneCycleLR(optim.Adagrad([w]), max_lr=1.0, total_steps=3)
