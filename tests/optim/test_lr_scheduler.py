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
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("PolynomialLR", dict(total_iters=8, power=2.0)),
    ("MultiplicativeLR", dict(lr_lambda=lambda epoch: 0.95)),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=2, step_size_down=4,
                      mode="triangular2", base_momentum=0.85, max_momentum=0.95)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range", gamma=0.9)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=lambda x: 1 / (1 + x),
                      scale_mode="iterations", cycle_momentum=False)),
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
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        scheduler.step()
    scheduler.step()
    with pytest.raises(ValueError, match="tried to step 3 times"):
        scheduler.step()
    with pytest.raises(ValueError, match="needs an optimizer with momentum or betas"):
        lr_scheduler.OneCycleLR(optim.Adagrad([w]), max_lr=1.0, total_steps=3)


PLATEAU_METRICS = [5.0, 4.0, 4.0, 3.9999, 4.1, 4.0, 3.0, 3.0, 3.0, 3.0, 2.5, 2.5, 2.5, 2.5, 2.5,
                   2.5, 2.5, 2.4, 2.4, 2.4]


@pytest.mark.parametrize("options", [
    dict(patience=2), dict(patience=1, factor=0.5, cooldown=2),
    dict(mode="max", patience=1, threshold=0.1, threshold_mode="abs"),
    dict(patience=0, factor=0.2, min_lr=[0.004, 0.01]), dict(patience=1, threshold=0.05)])
def test_reduce_on_plateau_matches_pytorch(options):
    torch = torch_or_skip()
    schedules = []
    for lib, module in ((genesis, genesis.optim), (torch, torch.optim)):
        optimizer, scheduler = _make(lib, module, "SGD", "ReduceLROnPlateau", options)
        lrs = []
        for metric in PLATEAU_METRICS:
            optimizer.step()
            scheduler.step(lib.tensor(metric) if lib is genesis else metric)
            lrs.append(list(scheduler.get_last_lr()))
        schedules.append(lrs)
    assert schedules[0] == schedules[1]


def test_reduce_on_plateau_state_round_trips_and_checks_its_arguments():
    optimizer = optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
    scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, patience=0)
    scheduler.step(1.0)
    scheduler.step(2.0)
    saved = scheduler.state_dict()
    assert "optimizer" not in saved and saved["best"] == 1.0 and optimizer.param_groups[0]["lr"] == 0.1
    fresh = lr_scheduler.ReduceLROnPlateau(optimizer, patience=0)
    fresh.load_state_dict(saved)
    assert fresh.best == 1.0 and fresh.get_last_lr() == [0.1]
    with pytest.raises(ValueError, match="factor must be < 1.0"):
        lr_scheduler.ReduceLROnPlateau(optimizer, factor=1.5)
    with pytest.raises(ValueError, match="mode 'avg' is unknown"):
        lr_scheduler.ReduceLROnPlateau(optimizer, mode="avg")
    with pytest.raises(ValueError, match="expected 1 values for min_lr"):
        lr_scheduler.ReduceLROnPlateau(optimizer, min_lr=[0.1, 0.2])



def _composed(lib, module, kind):
    first = lib.zeros(2, requires_grad=True)
    optimizer = module.SGD([{"params": [first]}], lr=0.1)
    schedulers = (genesis.optim.lr_scheduler if lib is genesis else lib.optim.lr_scheduler)
    if kind == "sequential-warmup-cosine":
        parts = [schedulers.LinearLR(optimizer, start_factor=0.1, total_iters=3),
                 schedulers.CosineAnnealingLR(optimizer, T_max=10)]
        return optimizer, schedulers.SequentialLR(optimizer, parts, milestones=[3])
    if kind == "sequential-three":
        parts = [schedulers.ConstantLR(optimizer, factor=0.5, total_iters=2),
                 schedulers.ExponentialLR(optimizer, gamma=0.8),
                 schedulers.StepLR(optimizer, step_size=2, gamma=0.5)]
        return optimizer, schedulers.SequentialLR(optimizer, parts, milestones=[4, 9])
    parts = [schedulers.ConstantLR(optimizer, factor=0.25, total_iters=3),
             schedulers.ExponentialLR(optimizer, gamma=0.9)]
    return optimizer, schedulers.ChainedScheduler(parts)


@pytest.mark.parametrize("kind", ["sequential-warmup-cosine", "sequential-three", "chained"])
def test_sequential_and_chained_schedulers_match_pytorch(kind):
    torch = torch_or_skip()
    ours = _run(*_composed(genesis, optim, kind), 16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _run(*_composed(torch, torch.optim, kind), 16)
    assert ours == theirs


def test_warm_restarts_jump_to_an_epoch_and_composites_check_their_parts():
    torch = torch_or_skip()
    lrs = []
    for lib, module in ((genesis, optim), (torch, torch.optim)):
        optimizer, scheduler = _make(lib, module, "SGD", "CosineAnnealingWarmRestarts",
                                     dict(T_0=2, T_mult=3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (0.5, 1.5, 3, 7.25, 9):
                scheduler.step(epoch)
        lrs.append(list(scheduler.get_last_lr()))
    assert lrs[0] == pytest.approx(lrs[1], rel=1e-12)
    optimizer = optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
    other = optim.SGD([genesis.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match="expected 1 milestones for 2 schedulers"):
        lr_scheduler.SequentialLR(optimizer, [lr_scheduler.StepLR(optimizer, 2),
                                              lr_scheduler.StepLR(optimizer, 3)], milestones=[])
    with pytest.raises(ValueError, match="belongs to another optimizer"):
        lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(optimizer, 2), lr_scheduler.StepLR(other, 2)])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        lr_scheduler.SequentialLR(optimizer, [lr_scheduler.ReduceLROnPlateau(optimizer)], milestones=[])


EPOCH_JUMPS = [("StepLR", dict(step_size=2, gamma=0.5)), ("MultiStepLR", dict(milestones=[1, 4])),
               ("ExponentialLR", dict(gamma=0.9)), ("CosineAnnealingLR", dict(T_max=7)),
               ("LinearLR", dict()), ("ConstantLR", dict(factor=0.5, total_iters=4)),
               ("PolynomialLR", dict(total_iters=8)),
               ("LambdaLR", dict(lr_lambda=lambda epoch: 1 / (1 + epoch))),
               ("MultiplicativeLR", dict(lr_lambda=lambda epoch: 0.9))]


@pytest.mark.parametrize("name, options", EPOCH_JUMPS, ids=[name for name, _ in EPOCH_JUMPS])
def test_step_with_an_epoch_warns_and_jumps_like_pytorch(name, options):
    """scheduler.step(epoch), deprecated in PyTorch and still accepted there: a UserWarning,
    then the closed form at `epoch` where the schedule has one (else get_lr)."""
    torch = torch_or_skip()
    seen = []
    for lib, module in ((genesis, optim), (torch, torch.optim)):
        optimizer, scheduler = _make(lib, module, "SGD", name, options)
        lrs = []
        for epoch in (5, 2, 3):
            optimizer.step()
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)`"):
                scheduler.step(epoch)
            lrs.append(list(scheduler.get_last_lr()))
        scheduler.step()
        lrs.append(list(scheduler.get_last_lr()))
        seen.append((lrs, scheduler.last_epoch))
    assert seen[0] == seen[1]


def test_plateau_step_takes_a_deprecated_epoch_like_pytorch():
    torch = torch_or_skip()
    epochs = []
    for lib in (genesis, torch):
        optimizer = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        scheduler = lib.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0)
        scheduler.step(1.0)
        with pytest.warns(UserWarning, match="The epoch parameter"):
            scheduler.step(2.0, 7)
        scheduler.step(3.0)
        epochs.append((scheduler.last_epoch, scheduler.get_last_lr()))
    assert epochs[0] == epochs[1] == (8, [pytest.approx(0.01)])


def _stepped_before_warnings(lib, order: str) -> int:
    """How many UserWarnings about stepping the scheduler before its optimizer `order` gets."""
    module = optim if lib is genesis else lib.optim

    class HandWritten(module.Optimizer):  # a user's optimizer, with its own step
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            for group in self.param_groups:
                for param in group["params"]:
                    param.data.mul_(0.5)

    w = lib.ones(1, requires_grad=True)
    optimizer = HandWritten([w]) if order == "hand-written" else module.SGD([w], lr=0.1)
    if order == "optimizer, then built":
        optimizer.step()
    scheduler = module.lr_scheduler.StepLR(optimizer, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            if order in ("optimizer first", "hand-written"):
                optimizer.step()
            scheduler.step()
            if order in ("scheduler first", "optimizer, then built"):
                optimizer.step()
    return sum("before `optimizer.step()`" in str(warning.message) for warning in caught)


@pytest.mark.parametrize("order", ["scheduler first", "optimizer first", "optimizer, then built",
                                   "hand-written"])
def test_stepping_the_scheduler_before_the_optimizer_warns_like_pytorch(order):
    """One warning, at the scheduler's first step, when its optimizer has not stepped since the
    scheduler was built (whatever the optimizer's step is); none in the right order."""
    torch = torch_or_skip()
    expected = {"scheduler first": 1, "optimizer first": 0, "optimizer, then built": 1,
                "hand-written": 0}[order]
    assert _stepped_before_warnings(genesis, order) == _stepped_before_warnings(torch, order) \
        == expected


def _tensor_lr_run(lib, name, options, steps):
    """A schedule over an Adam whose lr is a float64 Tensor: the lr each step, and whether
    the group still holds that very tensor (schedulers fill it in place, as PyTorch's do)."""
    lr = lib.tensor(0.1, dtype=lib.float64)
    optimizer = lib.optim.Adam([lib.zeros(2, requires_grad=True)], lr=lr)
    options = {key: value[0] if key in ("base_lr", "max_lr") and isinstance(value, list) else value
               for key, value in options.items()}  # one group here
    scheduler = getattr(lib.optim.lr_scheduler, name)(optimizer, **options)
    seen = []
    for _ in range(steps):
        optimizer.step()
        if name == "ReduceLROnPlateau":
            scheduler.step(1.0)
        else:
            scheduler.step()
        seen.append((float(lr), optimizer.param_groups[0]["lr"] is lr))
    return seen, float(optimizer.param_groups[0]["initial_lr"]) if name != "ReduceLROnPlateau" else None


@pytest.mark.parametrize("name, options", SCHEDULES + [("ReduceLROnPlateau", dict(patience=1))],
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULES)] + ["plateau"])
def test_a_tensor_lr_is_filled_in_place_like_pytorch(name, options):
    """The group keeps the script's lr tensor, its value follows the schedule, and
    `initial_lr` is a copy the schedule's fills leave alone."""
    torch = torch_or_skip()
    steps = options.get("total_steps", 12) - 1 if name == "OneCycleLR" else 12
    ours = _tensor_lr_run(genesis, name, options, steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _tensor_lr_run(torch, name, options, steps)
    assert ours == theirs
