"""torch.profiler.profile's steps: the schedule decides which steps are recorded,
`on_trace_ready` gets each finished cycle, "ProfilerStep#N" events mark the steps (added up
as "ProfilerStep*" by key_averages, as PyTorch's)."""
import warnings

import pytest

import genesis
from genesis.profiler import ProfilerAction, profile, schedule


def run_steps(prof, steps: int) -> None:
    for step in range(steps):
        genesis.ones(3) * step
        prof.step()


def test_on_trace_ready_gets_each_active_cycle_with_its_steps():
    seen = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=lambda prof: seen.append(
                     (prof.step_num, {row.key: row.count for row in prof.key_averages()},
                      sorted(event.trace_name for event in prof.events()
                             if event.name == "ProfilerStep*")))) as prof:
        run_steps(prof, 10)
    counts = {"ProfilerStep*": 2, "genesis::mul": 2}
    assert seen == [(4, counts, ["ProfilerStep#2", "ProfilerStep#3"]),
                    (8, counts, ["ProfilerStep#6", "ProfilerStep#7"])]
    assert {row.key: row.count for row in prof.key_averages()}["genesis::mul"] == 2


def test_a_cycle_cut_short_by_stop_is_still_handed_on():
    seen = []
    with profile(schedule=schedule(wait=0, warmup=1, active=3),
                 on_trace_ready=lambda prof: seen.append(prof.step_num)) as prof:
        run_steps(prof, 3)  # steps 1 and 2 record; stop comes in step 3 (RECORD)
    assert seen == [3]
    steps = sorted(event.trace_name for event in prof.events() if event.name == "ProfilerStep*")
    assert steps == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]


def test_without_a_schedule_everything_is_recorded_and_handed_on_at_stop():
    seen = []
    with profile(on_trace_ready=seen.append) as prof:
        run_steps(prof, 3)
    assert seen == [prof]
    assert [(row.key, row.count) for row in prof.key_averages()] == [("genesis::mul", 3)]


def test_a_user_schedule_going_from_record_to_none_is_warned_about_as_in_pytorch():
    actions = {0: ProfilerAction.RECORD, 1: ProfilerAction.NONE}
    with pytest.warns(UserWarning, match="Incorrect schedule: RECORD followed by NONE"):
        with profile(schedule=lambda step: actions.get(step, ProfilerAction.NONE)) as prof:
            run_steps(prof, 2)


def test_the_transitions_call_what_pytorchs_do(monkeypatch):
    """Step by step, our profiler and PyTorch's prepare, start and stop traces and hand them
    on at the same steps (PyTorch's trace methods replaced by recorders of the calls)."""
    torch_profiler = pytest.importorskip("torch.profiler")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for setting in [dict(wait=1, warmup=1, active=2, repeat=2), dict(wait=0, warmup=0, active=1),
                        dict(wait=2, warmup=0, active=3, skip_first=1)]:
            logs = []
            for profiler_class, steps_schedule in [(profile, schedule),
                                                   (torch_profiler.profile, torch_profiler.schedule)]:
                log = []
                for name in ("prepare_trace", "start_trace", "stop_trace", "_trace_ready"):
                    monkeypatch.setattr(profiler_class, name,
                                        lambda self, name=name: log.append((self.step_num, name)))
                prof = profiler_class(schedule=steps_schedule(**setting))
                prof.record_steps = False  # no step markers: no trace is really recorded
                prof.start()
                for _ in range(9):
                    prof.step()
                prof.stop()
                logs.append(log)
            assert logs[0] == logs[1], setting
