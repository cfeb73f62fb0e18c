"""The profiler on a GPU: ops on a real CuPy GPU get CUDA times (CUDA events around each
op) and the table's CUDA columns; on the fake GPU (NumPy behind "cuda") no CUDA event is
made and the table claims no CUDA time."""
import pytest

import genesis
import genesis.nn as nn
from genesis.profiler import ProfilerActivity, profile, recorder


def profiled_training(device: str):
    genesis.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    x = genesis.randn(128, 32, device=device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 profile_memory=True) as prof:
        for _ in range(2):
            model(x).pow(2).mean().backward()
    return prof


def test_on_the_fake_gpu_no_cuda_event_is_made_and_no_cuda_time_claimed(fake_cuda, monkeypatch):
    def no_events():
        raise AssertionError("a CUDA event was made on the fake GPU")

    monkeypatch.setattr(recorder, "_cuda_event", no_events)
    prof = profiled_training(fake_cuda)
    rows = prof.key_averages()
    assert {row.key: row.count for row in rows}["genesis::linear"] == 4
    assert all(row.device_time_total == 0 for row in rows)
    table = rows.table()
    assert "CUDA total" not in table and "no op ran on a CUDA GPU" in table


def test_on_a_real_gpu_each_op_has_its_cuda_time(real_cuda):
    prof = profiled_training(real_cuda)
    rows = {row.key: row for row in prof.key_averages()}
    assert rows["genesis::linear"].device_time_total > 0
    assert rows["LinearBackward"].device_time_total > 0
    assert rows["genesis::linear"].self_cuda_time_total == pytest.approx(
        rows["genesis::linear"].device_time_total)
    assert rows["genesis::linear"].device_memory_usage > 0
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "Self CUDA" in table and "CUDA total" in table and "Self CUDA time total" in table
