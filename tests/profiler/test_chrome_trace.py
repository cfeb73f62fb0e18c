"""Chrome traces: `export_chrome_trace` writes the Trace Event Format (complete events,
nested within their parents' spans), and `tensorboard_trace_handler` writes one file per
recorded cycle."""
import gzip
import json

import pytest

import genesis
import genesis.nn as nn
from genesis.profiler import profile, record_function, schedule, tensorboard_trace_handler


def check_trace(trace: dict) -> list:
    """The complete events of a valid Chrome trace, each inside the spans of those that
    contain its start on its thread."""
    assert isinstance(trace["traceEvents"], list)
    complete = []
    for event in trace["traceEvents"]:
        assert event["ph"] in ("X", "M")
        assert isinstance(event["name"], str) and isinstance(event["pid"], int)
        assert isinstance(event["tid"], int) and isinstance(event["args"], dict)
        if event["ph"] == "X":
            assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0
            assert isinstance(event["dur"], (int, float)) and event["dur"] >= 0
            complete.append(event)
    for outer in complete:
        for inner in complete:
            if inner is not outer and inner["tid"] == outer["tid"] and \
                    outer["ts"] < inner["ts"] < outer["ts"] + outer["dur"]:
                assert inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-6, (outer, inner)
    return complete


def test_the_exported_trace_is_valid_and_its_events_nest(tmp_path):
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    with profile(record_shapes=True, profile_memory=True) as prof:
        with record_function("step"):
            model(genesis.randn(5, 4)).sum().backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    complete = check_trace(json.loads(path.read_text()))
    assert len(complete) == len(prof.events())
    by_name = {event["name"]: event for event in complete}
    step, linear = by_name["step"], by_name["genesis::linear"]
    assert step["cat"] == "user_annotation" and linear["cat"] == "cpu_op"
    assert step["ts"] <= linear["ts"] and linear["ts"] + linear["dur"] <= step["ts"] + step["dur"] + 1e-6
    assert linear["args"]["Input Dims"] in ([[5, 4], [8, 4], [8]], [[5, 8], [1, 8], [1]])
    assert "LinearBackward" in by_name


def test_a_gz_name_is_written_compressed(tmp_path):
    with profile() as prof:
        genesis.ones(2) * 2
    path = tmp_path / "trace.json.gz"
    prof.export_chrome_trace(str(path))
    check_trace(json.loads(gzip.decompress(path.read_bytes())))


def test_the_tensorboard_handler_writes_one_file_per_recorded_cycle(tmp_path):
    folder = tmp_path / "log"
    with profile(schedule=schedule(wait=1, warmup=1, active=1, repeat=3),
                 on_trace_ready=tensorboard_trace_handler(str(folder), worker_name="worker0")) as prof:
        for step in range(12):
            genesis.ones(3) * step
            prof.step()
    files = sorted(folder.iterdir())
    assert len(files) == 3
    for path in files:
        assert path.name.startswith("worker0.") and path.name.endswith(".pt.trace.json")
        names = {event["name"] for event in check_trace(json.loads(path.read_text()))}
        assert names == {"genesis::mul"} | {name for name in names if name.startswith("ProfilerStep#")}
    assert not [path for path in folder.iterdir() if path.name.startswith(".")]  # no temporaries


def test_exporting_before_anything_was_recorded_is_refused():
    with pytest.raises(AssertionError, match="must be initialized"):
        profile().export_chrome_trace("never.json")
