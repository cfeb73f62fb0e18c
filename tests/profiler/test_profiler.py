"""`genesis.profiler.profile`: the rows and counts of a model's forward and backward,
`record_function` blocks nesting, memory and shapes, the errors PyTorch gives, and that
nothing of the profiler is left listening after it stops."""
import pytest

import genesis
import genesis.nn as nn
from genesis.autograd import engine, function
from genesis.optim import optimizer as optimizer_module
from genesis.profiler import ProfilerActivity, profile, record_function
from genesis.profiler.autograd_profiler import profile as autograd_profile


def hook_sets():
    return (function.start_observers, function.observers, engine.node_start_observers,
            engine.node_checkers, optimizer_module.listeners)


def small_model():
    genesis.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def train_steps(model, steps: int, prof=None) -> None:
    optimizer = genesis.optim.SGD(model.parameters(), lr=0.1)
    x, target = genesis.randn(16, 4), genesis.randint(0, 2, (16,))
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
        if prof is not None:
            prof.step()


def test_a_model_forward_and_backward_gives_a_row_per_op_and_node_with_its_count():
    model = small_model()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        train_steps(model, 3)
    counts = {row.key: row.count for row in prof.key_averages()}
    assert counts == {"genesis::linear": 6, "genesis::relu": 3, "genesis::cross_entropy": 3,
                      "CrossEntropyBackward": 3, "LinearBackward": 6, "ReluBackward": 3,
                      "Optimizer.step#SGD.step": 3}
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=4)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%",
                                "CPU", "total", "CPU", "time", "avg", "#", "of", "Calls"]
    assert len(lines) == 3 + 4 + 2 and lines[-1].startswith("Self CPU time total: ")
    totals = [row.cpu_time_total for row in sorted(prof.key_averages(),
                                                   key=lambda row: -row.cpu_time_total)[:4]]
    shown = [line.split()[0] for line in lines[3:7]]
    by_key = {row.key: row.cpu_time_total for row in prof.key_averages()}
    assert [by_key[name] for name in shown] == totals  # sorted by the column asked for


def test_times_add_up_self_time_is_time_less_the_children():
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                genesis.ones(50, 50) @ genesis.ones(50, 50)
            genesis.ones(3) * 2
    events = {event.name: event for event in prof.events()}
    outer, inner = events["outer"], events["inner"]
    assert inner.cpu_parent is outer and events["genesis::matmul"].cpu_parent is inner
    assert events["genesis::mul"].cpu_parent is outer
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - inner.cpu_time_total - events["genesis::mul"].cpu_time_total)
    for event in prof.events():
        assert event.time_range.start >= 0 and event.cpu_time_total >= event.self_cpu_time_total >= 0
        if event.cpu_parent is not None:
            assert event.cpu_parent.time_range.start <= event.time_range.start
            assert event.time_range.end <= event.cpu_parent.time_range.end
    average = {row.key: row for row in prof.key_averages()}["outer"]
    assert average.cpu_time == average.cpu_time_total  # one call: the average is the total
    assert prof.key_averages().self_cpu_time_total == pytest.approx(outer.cpu_time_total)


def test_record_function_is_a_decorator_too_and_each_call_is_a_row():
    @record_function("loss_fn")
    def loss_fn(x):
        with record_function("square"):
            return (x * x).sum()

    with profile() as prof:
        for _ in range(3):
            loss_fn(genesis.ones(4))
    counts = {row.key: row.count for row in prof.key_averages()}
    assert counts["loss_fn"] == 3 and counts["square"] == 3
    squares = [event for event in prof.events() if event.name == "square"]
    assert all(event.cpu_parent.name == "loss_fn" for event in squares)
    assert loss_fn(genesis.ones(2)).item() == 2.0  # outside a profiler: runs, records nothing


def test_shapes_are_recorded_and_grouped_by_when_asked():
    with profile(record_shapes=True) as prof:
        genesis.ones(2, 3) + genesis.ones(2, 3)
        genesis.ones(4) + genesis.ones(4)
        genesis.ones(4) + genesis.ones(4)
    plain = {row.key: row.count for row in prof.key_averages()}
    assert plain == {"genesis::add": 3}
    grouped = prof.key_averages(group_by_input_shape=True)
    assert sorted((row.input_shapes, row.count) for row in grouped) == [
        ([[2, 3], [2, 3]], 1), ([[4], [4]], 2)]
    table = grouped.table()
    assert "Input Shapes" in table and "[[4], [4]]" in table


def test_memory_is_the_bytes_of_new_arrays_an_op_returns():
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            y = genesis.ones(100, 10) * 2  # float32: 4,000 bytes
            y.view(1000)  # a view: nothing new
    rows = {row.key: row for row in prof.key_averages()}
    assert rows["genesis::mul"].self_cpu_memory_usage == 4000
    assert rows["block"].self_cpu_memory_usage == 0 and rows["block"].cpu_memory_usage == 4000
    assert rows["genesis::view"].cpu_memory_usage == 0
    table = prof.key_averages().table(sort_by="cpu_memory_usage")
    assert "CPU Mem" in table and "3.91 Kb" in table


def test_without_profile_memory_the_table_has_no_memory_columns():
    with profile() as prof:
        genesis.ones(3) * 2
    assert "CPU Mem" not in prof.key_averages().table()


def test_cuda_asked_for_without_a_gpu_the_table_says_so_and_shows_no_cuda_times():
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        genesis.ones(3) * 2
    table = prof.key_averages().table()
    assert "CUDA total" not in table
    assert "no op ran on a CUDA GPU" in table
    assert all(row.device_time_total == 0 for row in prof.key_averages())


def test_start_and_stop_without_with():
    prof = profile()
    prof.start()
    genesis.ones(3) * 2
    prof.stop()
    assert [row.key for row in prof.key_averages()] == ["genesis::mul"]
    assert not any(hook_sets())


def test_nothing_listens_once_the_profiler_stops_even_after_an_error():
    assert not any(hook_sets())
    with pytest.raises(ValueError, match="inside"):
        with profile(profile_memory=True, with_stack=True):
            assert all(len(hooks) == 1 for hooks in hook_sets())
            raise ValueError("inside")
    assert not any(hook_sets())
    with autograd_profile():
        pass
    assert not any(hook_sets())


def test_an_op_that_raises_leaves_no_row_and_the_rest_stays_nested():
    with profile() as prof:
        with record_function("block"):
            with pytest.raises(Exception):
                genesis.ones(2, 3) @ genesis.ones(2, 3)
            genesis.ones(2) * 2
    names = [event.name for event in prof.events()]
    assert names == ["block", "genesis::mul"]
    assert prof.events()[1].cpu_parent.name == "block"


def test_with_stack_records_the_callers_frames_outside_genesis():
    with profile(with_stack=True) as prof:
        genesis.ones(2) * 2
    (event,) = prof.events()
    assert "test_profiler.py" in event.stack[0] and "test_with_stack" in event.stack[0]
    table = prof.key_averages(group_by_stack_n=1).table()
    assert "Source Location" in table


def test_key_averages_before_anything_was_recorded_is_refused_as_in_pytorch():
    with pytest.raises(AssertionError, match="Profiler must be initialized before getting key averages"):
        profile().key_averages()
    legacy = autograd_profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        legacy.key_averages()


def test_a_profiler_started_inside_another_is_refused_and_the_outer_one_goes_on():
    with profile() as outer:
        with pytest.raises(RuntimeError, match="Profiler is already enabled"):
            with profile():
                pass
        with pytest.raises(RuntimeError, match="Profiler is already enabled"):
            with autograd_profile():
                pass
        genesis.ones(2) * 2
    assert [row.key for row in outer.key_averages()] == ["genesis::mul"]
    with profile():  # the refused ones did not keep the profiler taken
        pass


def test_an_unknown_sort_key_names_the_ones_there_are():
    with profile() as prof:
        genesis.ones(2) * 2
    with pytest.raises(AttributeError, match="cpu_time_total"):
        prof.key_averages().table(sort_by="speed")


def test_no_activities_is_refused():
    with pytest.raises(AssertionError, match="No valid profiler activities found"):
        profile(activities=[])


def test_the_legacy_autograd_profiler_records_the_same_rows():
    with autograd_profile(record_shapes=True) as prof:
        (genesis.ones(3, requires_grad=True) * 2).sum().backward()
    assert {row.key for row in prof.key_averages()} == {"genesis::mul", "genesis::sum",
                                                        "SumBackward", "MulBackward"}
    assert "Self CPU time total" in prof.table()


def test_export_stacks_writes_one_line_per_call_with_its_frames(tmp_path):
    with profile(with_stack=True) as prof:
        genesis.ones(2) * 2
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path))
    (line,) = path.read_text().splitlines()
    frames, value = line.rsplit(" ", 1)
    assert frames.endswith(";genesis::mul") and "test_export_stacks" in frames and int(value) >= 0
