"""`genesis.profiler.schedule` gives PyTorch's action at every step, and refuses the
arguments PyTorch refuses with the same error."""
import warnings

import pytest

from genesis.profiler import ProfilerAction, schedule

SETTINGS = [
    dict(wait=1, warmup=1, active=2),
    dict(wait=1, warmup=1, active=2, repeat=2),
    dict(wait=0, warmup=0, active=1),
    dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
    dict(wait=5, warmup=2, active=1, repeat=3, skip_first=10, skip_first_wait=1),
    dict(wait=0, warmup=3, active=4, repeat=0, skip_first=1),
]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda setting: str(sorted(setting.items())))
def test_each_step_gets_pytorchs_action(setting):
    torch_profiler = pytest.importorskip("torch.profiler")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warmup=0's warning, checked below
        ours, theirs = schedule(**setting), torch_profiler.schedule(**setting)
    for step in range(60):
        assert ours(step).name == theirs(step).name, f"step {step}"


def test_a_cycle_is_wait_warmup_then_active_ending_in_record_and_save():
    actions = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [actions(step) for step in range(5)] == [
        ProfilerAction.NONE, ProfilerAction.WARMUP, ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE]


@pytest.mark.parametrize("bad", [dict(wait=0, warmup=1, active=0), dict(wait=-1, warmup=1, active=1),
                                 dict(wait=0, warmup=-1, active=1),
                                 dict(wait=0, warmup=1, active=1, repeat=-1),
                                 dict(wait=0, warmup=1, active=1, skip_first=-2)])
def test_bad_arguments_are_refused_as_pytorch_refuses_them(bad):
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        schedule(**bad)


def test_no_warmup_is_warned_about_and_a_negative_step_refused():
    with pytest.warns(UserWarning, match="won't be using warmup"):
        actions = schedule(wait=0, warmup=0, active=1)
    with pytest.raises(AssertionError, match="Step must be non-negative"):
        actions(-1)
