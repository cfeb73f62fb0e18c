"""`genesis trace`'s hooks on the GPU code paths, run without a GPU by bench/array_ops.py's
counting namespace: statistics, NaN/Inf births and gradient norms are taken on the device
and cross to the host together, once per backward call, and say what they say on the CPU."""
import math

import numpy as np
import pytest

import genesis
from genesis.debug import stats
from genesis.debug._census import ARRAY_SUMS
from genesis.debug.readings import Readings
from genesis.debug.session import TraceSession
from tests.debug.test_census import census_samples, expected_sums

CASES = {
    "float32": np.array([[1.5, -3.0], [0.0, 2.0]], np.float32),
    "float64 with nan and inf": np.array([1.0, np.nan, -np.inf, -2.0, np.inf]),
    "all nan": np.array([np.nan, np.nan]),
    "only inf": np.array([np.inf, -np.inf], np.float32),
    "float16": np.array([0.5, -0.25, 65504.0], np.float16),
    "int64": np.array([3, -7, 0]),
    "bool": np.array([True, False, True]),
    "empty": np.zeros((0, 3)),
    "transposed": np.arange(12.0).reshape(3, 4).T,
}


@pytest.fixture
def counted_gpu(array_ops):
    """A function moving a tensor (or module) to a "cuda" device whose namespace is the
    counting stand-in of CuPy; the stand-in's counter is active and reset by `counter()`."""
    cuda = genesis.device("cuda")
    cuda.xp  # the fake GPU's NumPy, for the moves
    array_ops._install_fake_cupyx()
    moved = []

    def to_gpu(value):
        moved.append(value)
        if isinstance(value, genesis.Tensor):
            return array_ops.on_counted_gpu(value)
        return array_ops._on_counted_gpu(value)

    def counting():
        cuda._xp = array_ops.CountingNumPy()
        counter = array_ops.COUNTER
        counter.launches.clear(), counter.syncs.clear(), counter.sites.clear()
        counter.active = True
        return counter
    to_gpu.counting = counting
    to_gpu.device = cuda
    yield to_gpu
    array_ops.COUNTER.active = False
    cuda._xp = None


def test_statistics_on_the_gpu_path_equal_the_hosts_and_cross_once(counted_gpu):
    tensors = {name: counted_gpu(genesis.tensor(array)) for name, array in CASES.items()}
    counter = counted_gpu.counting()
    readings = Readings()
    later = {name: (stats.value_stats_later(tensor._data, readings, tensor._device),
                    stats.grad_stats_later(tensor._data, readings, tensor._device))
             for name, tensor in tensors.items()}
    assert sum(counter.syncs.values()) == 0, "nothing may wait for the device before the fetch"
    readings.fetch()
    assert sum(counter.syncs.values()) == 1 and readings.transfers == 1
    for name, (values, grads) in later.items():
        for ours, reference in ((values, stats.value_stats(CASES[name])),
                                (grads, stats.grad_stats(CASES[name]))):
            assert ours.keys() == reference.keys(), name
            for key, value in reference.items():
                expected = value if value is None else pytest.approx(value, rel=1e-12)
                assert ours[key] == expected, (name, key)


def test_readings_pass_figures_on_in_order_and_fetch_at_the_limit(counted_gpu):
    counter = counted_gpu.counting()
    xp = counted_gpu.device.xp
    readings = Readings(limit=3)
    seen = []
    for number in range(5):
        readings.read(xp, [xp.asarray(float(number)), xp.asarray(number * 10.0)], seen.append)
    assert seen == [[0.0, 0.0], [1.0, 10.0], [2.0, 20.0]] and len(readings) == 2
    readings.fetch()
    assert seen[3:] == [[3.0, 30.0], [4.0, 40.0]] and readings.transfers == 2
    assert sum(counter.syncs.values()) == 2
    readings.fetch()  # nothing waiting: no transfer
    assert readings.transfers == 2


def _training_run(to_device, start=lambda: None, steps: int = 3) -> tuple:
    """A small training run with a NaN born in the forward (log of a ReLU output that is 0)
    and one made by a backward (sqrt's gradient at 0), under a TraceSession; `start()` is
    called once the tensors are on their device."""
    genesis.manual_seed(0)
    layer = to_device(genesis.nn.Linear(3, 4))
    x = to_device(genesis.randn(8, 3))
    zero = to_device(genesis.zeros(2)).requires_grad_()
    optimizer = genesis.optim.SGD([*layer.parameters(), zero], lr=1e-3)
    start()
    with TraceSession(steps=2) as session:
        for _ in range(steps):
            optimizer.zero_grad()
            probabilities = layer(x).relu()
            loss = -(probabilities.log() * 0.5).mean() + zero.sqrt().sum()
            loss.backward()
            optimizer.step()
    return session, session.result(script="inline")


def _summary(trace) -> tuple:
    findings = [(f.kind, f.title, _without_callers(f.message), f.source, f.details)
                for f in trace.findings]
    parameters = [(row.name, row.status, row.history) for row in trace.parameters]
    graph = trace.graphs[0]
    figures = [(node.name, [(info.stats, info.grad) for info in node.outputs if info is not None])
               for node in graph.nodes]
    return findings, parameters, figures


def test_a_traced_run_on_the_gpu_path_finds_what_the_cpu_run_finds(counted_gpu):
    with np.errstate(divide="ignore", invalid="ignore"):
        _, on_cpu = _training_run(lambda value: value)
        counters = []
        session, on_gpu = _training_run(counted_gpu, lambda: counters.append(counted_gpu.counting()))
    counter, = counters
    kinds = [finding.kind for finding in on_cpu.findings]
    assert "nan_forward" in kinds and "nan_backward" in kinds
    cpu_findings, cpu_parameters, cpu_figures = _summary(on_cpu)
    gpu_findings, gpu_parameters, gpu_figures = _summary(on_gpu)
    assert gpu_findings == cpu_findings
    assert [row[:2] for row in gpu_parameters] == [row[:2] for row in cpu_parameters]
    for (_, _, gpu_norms), (_, _, cpu_norms) in zip(gpu_parameters, cpu_parameters):
        assert len(gpu_norms) == len(cpu_norms) == 3
        assert all(_close(ours, theirs) for ours, theirs in zip(gpu_norms, cpu_norms))
    assert [name for name, _ in gpu_figures] == [name for name, _ in cpu_figures]
    for (name, gpu_outputs), (_, cpu_outputs) in zip(gpu_figures, cpu_figures):
        for (gpu_stats, gpu_grad), (cpu_stats, cpu_grad) in zip(gpu_outputs, cpu_outputs):
            for ours, theirs in ((gpu_stats, cpu_stats), (gpu_grad, cpu_grad)):
                assert (ours is None) == (theirs is None), name
                if theirs is not None:
                    assert ours.keys() == theirs.keys() and all(
                        _close(ours[key], theirs[key]) for key in theirs), (name, ours, theirs)
    # the run itself reads nothing on the host: each recorded step fetches its graph's
    # figures and then the gradient norms, the watched step its figures, once (each
    # optimizer step's counts travel with the next backward's), and the end of the run
    # fetches what the last optimizer step wrote; the first steps are ones whose weight and
    # gradient distributions are sampled, each one more transfer of those samples together
    assert session.readings.transfers == 2 + 2 + 1 + 1
    assert counter.syncs["get"] == 3 and sum(counter.syncs.values()) == 6 + 3


def _without_callers(message: str) -> str:
    """A report without the "called from" lines (the two runs are called from two lines)."""
    return "\n".join(line for line in message.splitlines() if "called from" not in line)


def _close(ours, theirs) -> bool:
    if theirs is None or ours is None:
        return ours is theirs
    if isinstance(theirs, float) and math.isnan(theirs):
        return math.isnan(ours)
    return ours == pytest.approx(theirs, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("name", sorted(ARRAY_SUMS))
def test_sums_over_many_arrays_launch_on_the_stand_in(array_ops, name):
    """On the counting stand-in of CuPy: one launch per 32 arrays of one dtype, taken as CUDA
    would take it (the stand-in checks the grid, the block and the arguments)."""
    kernel = ARRAY_SUMS[name]
    xp = array_ops.CountingNumPy()
    device = type("Gpu", (), {"xp": xp, "type": "cuda"})()
    arrays = [array_ops._counted(array) for array in census_samples(np.float64)] * 9  # 36
    counter = array_ops.COUNTER
    counter.launches.clear()
    counter.active = True
    try:
        figures = kernel(device, arrays + [array_ops._counted(np.ones((3, 4)).T)])
    finally:
        counter.active = False
    values = [float(value) for figure in figures for value in np.ravel(figure)]
    expected = expected_sums(kernel, [np.asarray(array) for array in arrays] + [np.ones(12)])
    assert np.allclose(values, expected, rtol=1e-12, equal_nan=True)
    assert counter.launches[name] == 2 and counter.launches["zeros"] == 2
