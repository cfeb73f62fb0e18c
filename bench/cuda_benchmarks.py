"""genesis on CuPy vs PyTorch on CUDA, on the same GPU, with the same weights and math:

  * MLP training step: batch 128, 784-512-512-10, ReLU, cross-entropy, Adam (lr 1e-3);
  * CNN training step: batch 32 of 3x32x32, two conv3x3-BatchNorm-ReLU-maxpool stages (16
    and 32 channels) and a linear classifier, cross-entropy, Adam;
  * transformer block forward + backward: pre-LN, batch 8, length 128, d_model 256,
    4 heads (packed q/k/v projection, softmax(q k^T / sqrt(d)) v, output projection),
    GELU MLP of width 4 * d_model, layer norm written with ops (mean, variance, rsqrt)
    once for both frameworks. Backward from a fixed output gradient into the input and
    every weight.

In both training steps genesis runs a second time under `genesis trace`'s session, in the
steps it watches after the one it records (NaN/Inf births and gradient norms, taken on the
device and fetched once per step): what leaving the tracer on costs.

Float32. Each step is timed from a synchronised start to a synchronised end (kernels run
asynchronously), after warm-up steps (CuPy compiles each kernel on first use): the
figure is the best of `--repeat` runs of `--number` steps. PyTorch's Adam runs twice:
its default (multi-tensor `foreach` kernels on CUDA, as genesis's Adam) and
`foreach=False` (one parameter at a time). Before timing, one step of each framework from
the same state is compared (loss and gradients), so the rows compute the same thing.
Peak memory is each framework's own allocator figure (genesis.cuda / torch.cuda), taken
after all the timing (genesis's peak tracking is a Python call per allocation: see
`PeakMemory`).

With `--profile`, each genesis step and its PyTorch counterpart are then profiled: the
kernels the GPU spent the step on, how busy it was, and the host's top Python functions
(bench/kernel_profile.py).

Run: python bench/cuda_benchmarks.py [--quick] [--profile] [--device cpu]
(`--device cpu` runs the same comparison on the CPU, to try the script without a GPU.)
Without a GPU (or without CuPy or CUDA PyTorch) it says so and exits 0.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import sys
import time

import numpy as np

import genesis
import genesis.nn.functional as genesis_F
from genesis.debug.session import TraceSession
from kernel_profile import host_table, kernel_table
from transformer_block import (BATCH, D_MODEL, HEADS, LENGTH,  # the CPU benchmark's block
                               initial_weights, layer_norm)

MLP_BATCH, MLP_SIZES = 128, (784, 512, 512, 10)
CNN_BATCH, CNN_IMAGE = 32, (3, 32, 32)


def missing_gpu_reason(torch) -> str | None:
    if torch is None:
        return "PyTorch is not installed"
    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA device"
    if not genesis.cuda.is_available():
        return "genesis sees no CUDA device (is CuPy installed?)"
    return None


def synchronizer(torch, device: str):
    """A function that waits for both frameworks' queued GPU work (nothing on the CPU)."""
    if device == "cpu":
        return lambda: None

    def synchronize():
        genesis.cuda.synchronize()
        torch.cuda.synchronize()
    return synchronize


def call_cost_options(description: str, calls: int) -> tuple:
    """(options, calls per run, runs) of a per-call bench (cuda_call_costs.py,
    cupy_call_costs.py): --device cuda or cpu, --quick for a tenth of the calls and 3 runs."""
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    options = parser.parse_args()
    return (options, calls // 10, 3) if options.quick else (options, calls, 5)


def ms_per_step(step, synchronize, number: int, repeat: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        step()
    synchronize()
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            step()
        synchronize()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e3


class PeakMemory:
    """Each framework's peak allocated MiB over a few steps, measured after all the timing.

    PyTorch's allocator keeps its peak for free; CuPy's pool keeps none, so genesis's
    `reset_peak_memory_stats` installs a memory hook, a Python call on every allocation,
    that would slow every step timed after it. So the timed runs come first and the
    peaks are taken afterwards (`measure_all`), by running each step again a few times
    from a reset. On the CPU there is no allocator figure: None."""

    STEPS = 3

    def __init__(self, torch, device: str, synchronize):
        self.torch, self.on_gpu, self.synchronize = torch, device != "cpu", synchronize
        self.pending = []  # (Probe, step, framework)

    def probe(self, step, framework: str) -> "Probe":
        """A peak to measure later: `framework` is "genesis" or "pytorch"."""
        probe = Probe()
        self.pending.append((probe, step, framework))
        return probe

    def measure_all(self) -> None:
        if not self.on_gpu:
            return
        for probe, step, framework in self.pending:
            library = genesis if framework == "genesis" else self.torch
            self.synchronize()
            library.cuda.reset_peak_memory_stats()
            for _ in range(self.STEPS):
                step()
            self.synchronize()
            probe.mib = library.cuda.max_memory_allocated() / 2 ** 20


class Probe:
    """A peak in MiB, filled in by `PeakMemory.measure_all` (None until then, or on the CPU)."""

    mib = None


class Row:
    """One line of the table: a benchmark, an implementation, its ms per step and peak."""

    def __init__(self, benchmark: str, name: str, milliseconds: float, peak: Probe | None = None):
        self.benchmark, self.name, self.milliseconds, self.peak = benchmark, name, milliseconds, peak


# -- training steps: MLP, CNN ---------------------------------------------------------------
def mlp(nn):
    layers = []
    for index, (width_in, width_out) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:])):
        layers.append(nn.Linear(width_in, width_out))
        if index < len(MLP_SIZES) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def cnn(nn):
    """Two conv-BatchNorm-ReLU-maxpool stages and a linear classifier, for CNN_IMAGE."""
    channels, height, width = CNN_IMAGE
    return nn.Sequential(
        nn.Conv2d(channels, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * (height // 4) * (width // 4), 10))


def training_rows(torch, device: str, number: int, repeat: int, synchronize, memory,
                  profiled: dict, label: str, build, features, labels) -> list:
    """One Adam training step of `build(nn)` on (features, labels), genesis and PyTorch
    from the same weights: checked to agree, then timed."""
    torch.manual_seed(0)
    state = {key: value.detach().numpy().copy()
             for key, value in build(torch.nn).state_dict().items()}
    ours = build(genesis.nn)
    ours.load_state_dict({key: genesis.tensor(value) for key, value in state.items()})
    ours.to(device)
    x, y = genesis.tensor(features, device=device), genesis.tensor(labels, device=device)
    optimizer = genesis.optim.Adam(ours.parameters(), lr=1e-3)

    def genesis_step():
        optimizer.zero_grad()
        genesis_F.cross_entropy(ours(x), y).backward()
        optimizer.step()

    torch_x = torch.tensor(features, device=device)
    torch_y = torch.tensor(labels, device=device)

    def torch_model_and_step(foreach: bool):
        model = build(torch.nn)
        model.load_state_dict({key: torch.tensor(value) for key, value in state.items()})
        model.to(device)
        torch_optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=foreach)

        def step():
            torch_optimizer.zero_grad(set_to_none=True)
            torch.nn.functional.cross_entropy(model(torch_x), torch_y).backward()
            torch_optimizer.step()
        return model, step

    check_step_agrees(torch, label, ours, x, y, torch_model_and_step(True)[0], torch_x, torch_y)
    rows = []
    ours_name = "genesis (CuPy)" if device != "cpu" else "genesis (NumPy)"
    profiled[(label, ours_name)] = genesis_step
    rows.append(Row(label, ours_name, ms_per_step(genesis_step, synchronize, number, repeat),
                    memory.probe(genesis_step, "genesis")))
    with TraceSession(steps=1, check=False):  # the first step recorded; the timed ones watched
        genesis_step()
        rows.append(Row(label, f"{ours_name} under trace", ms_per_step(
            genesis_step, synchronize, number, repeat)))
    profiled[(label, f"{ours_name} under trace")] = genesis_step
    for name, foreach in (("PyTorch, Adam default", True), ("PyTorch, Adam foreach=False", False)):
        _, step = torch_model_and_step(foreach)
        if foreach:
            profiled[(label, name)] = step
        rows.append(Row(label, name, ms_per_step(step, synchronize, number, repeat),
                        memory.probe(step, "pytorch")))
    return rows


def check_step_agrees(torch, label, ours, x, y, theirs, torch_x, torch_y) -> None:
    loss = genesis_F.cross_entropy(ours(x), y)
    loss.backward()
    torch_loss = torch.nn.functional.cross_entropy(theirs(torch_x), torch_y)
    torch_loss.backward()
    difference = max(float(np.abs(p.grad.cpu().numpy() - q.grad.cpu().numpy()).max())
                     for p, q in zip(ours.parameters(), theirs.parameters()))
    print(f"{label}: loss {loss.item():.6f} vs {torch_loss.item():.6f}, "
          f"gradient max |diff| {difference:.1e}")
    ours.zero_grad()


def step_rows(torch, device: str, number: int, repeat: int, synchronize, memory,
              profiled: dict) -> list:
    rng = np.random.default_rng(0)
    mlp_data = (rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32),
                rng.integers(0, MLP_SIZES[-1], MLP_BATCH))
    cnn_data = (rng.standard_normal((CNN_BATCH,) + CNN_IMAGE).astype(np.float32),
                rng.integers(0, 10, CNN_BATCH))
    timing = (torch, device, number, repeat, synchronize, memory, profiled)
    return (training_rows(*timing, "MLP step", mlp, *mlp_data)
            + training_rows(*timing, "CNN step", cnn, *cnn_data))


# -- transformer block forward + backward ---------------------------------------------------
def transformer_block(lib, F, x, p):
    """The pre-LN block, written once for both frameworks (`lib` is genesis or torch)."""
    batch, length, width = x.shape
    head = width // HEADS
    normed = layer_norm(lib, x, p["ln1_w"], p["ln1_b"])
    qkv = F.linear(normed, p["qkv_w"], p["qkv_b"]).reshape(batch, length, 3, HEADS, head)
    q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)        # each (batch, heads, length, head)
    attention = F.softmax((q @ k.transpose(-2, -1)) * (1 / math.sqrt(head)), -1)
    mixed = (attention @ v).transpose(1, 2).reshape(batch, length, width)
    h = x + F.linear(mixed, p["out_w"], p["out_b"])
    hidden = F.gelu(F.linear(layer_norm(lib, h, p["ln2_w"], p["ln2_b"]), p["fc1_w"], p["fc1_b"]))
    return h + F.linear(hidden, p["fc2_w"], p["fc2_b"])


def block_rows(torch, device: str, number: int, repeat: int, synchronize, memory,
               profiled: dict) -> list:
    rng = np.random.default_rng(0)
    weights = initial_weights(rng)
    data = rng.standard_normal((BATCH, LENGTH, D_MODEL)).astype(np.float32)
    grad_out = rng.standard_normal((BATCH, LENGTH, D_MODEL)).astype(np.float32)

    def prepared(lib, F, tensor):
        params = {key: tensor(value, requires_grad=True) for key, value in weights.items()}
        x = tensor(data, requires_grad=True)
        seed = tensor(grad_out, requires_grad=False)
        leaves = [x, *params.values()]

        def step():
            for leaf in leaves:
                leaf.grad = None
            transformer_block(lib, F, x, params).backward(seed)
        return step, leaves

    genesis_step, genesis_leaves = prepared(
        genesis, genesis_F, lambda value, requires_grad: genesis.tensor(
            value, device=device, requires_grad=requires_grad))
    torch_step, torch_leaves = prepared(
        torch, torch.nn.functional, lambda value, requires_grad: torch.tensor(
            value, device=device, requires_grad=requires_grad))
    genesis_step()
    torch_step()
    difference = max(float(np.abs(ours.grad.cpu().numpy() - theirs.grad.cpu().numpy()).max())
                     for ours, theirs in zip(genesis_leaves, torch_leaves))
    print(f"transformer block: gradient max |diff| {difference:.1e}")
    ours_name = "genesis (CuPy)" if device != "cpu" else "genesis (NumPy)"
    profiled[("block fwd+bwd", ours_name)] = genesis_step
    profiled[("block fwd+bwd", "PyTorch")] = torch_step
    return [Row("block fwd+bwd", ours_name, ms_per_step(genesis_step, synchronize, number, repeat),
                memory.probe(genesis_step, "genesis")),
            Row("block fwd+bwd", "PyTorch", ms_per_step(torch_step, synchronize, number, repeat),
                memory.probe(torch_step, "pytorch"))]


def print_table(rows: list) -> None:
    print(f"\n{'benchmark':<15} {'implementation':<28} {'ms/step':>9} {'genesis/this':>13} "
          f"{'peak MiB':>9}")
    reference = {}
    for row in rows:
        reference.setdefault(row.benchmark, row.milliseconds)
        peak = row.peak.mib if row.peak is not None else None
        memory = f"{peak:9.1f}" if peak is not None else f"{'-':>9}"
        print(f"{row.benchmark:<15} {row.name:<28} {row.milliseconds:9.3f} "
              f"{reference[row.benchmark] / row.milliseconds:12.2f}x {memory}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument("--number", type=int, default=20, help="steps per timed run")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (the best is kept)")
    parser.add_argument("--profile", action="store_true",
                        help="then show each step's top kernels and host functions")
    parser.add_argument("--profile-dir", default=None,
                        help="with --profile, also save each genesis step's host profile "
                             "there (pstats files)")
    options = parser.parse_args()
    number, repeat = (3, 2) if options.quick else (options.number, options.repeat)
    try:
        import torch
    except ImportError:
        torch = None
    reason = None if options.device == "cpu" and torch is not None else missing_gpu_reason(torch)
    if reason is not None:
        print(f"skipped: {reason}; these benchmarks compare genesis and PyTorch on one GPU")
        return 0
    if options.device == "cuda":
        print(f"GPU: {genesis.cuda.get_device_name()} (genesis) / {torch.cuda.get_device_name()} "
              f"(PyTorch {torch.__version__})")
    synchronize = synchronizer(torch, options.device)
    memory = PeakMemory(torch, options.device, synchronize)
    profiled: dict = {}
    rows = step_rows(torch, options.device, number, repeat, synchronize, memory, profiled)
    rows += block_rows(torch, options.device, number, repeat, synchronize, memory, profiled)
    memory.measure_all()  # after every timed run: genesis's peak tracking costs a call per allocation
    print_table(rows)
    if options.profile:
        print_profiles(torch, profiled, synchronize, on_gpu=options.device != "cpu",
                       save_dir=options.profile_dir)
    return 0


def print_profiles(torch, profiled: dict, synchronize, on_gpu: bool, save_dir=None) -> None:
    """Each profiled step's kernels (on a GPU) and, for genesis, its host-side hot spots
    (each genesis profile saved as `<benchmark>.pstats` in `save_dir` when given)."""
    for (benchmark, name), step in profiled.items():
        print(f"\n== {benchmark}: {name} ==")
        traced = name.endswith("under trace")
        if on_gpu and not traced:
            print(kernel_table(torch, step, synchronize))
        if name.startswith("genesis"):
            print("  host (cProfile, by own time):")
            file = None if save_dir is None else os.path.join(
                save_dir, benchmark.split()[0].lower() + ("_traced" if traced else "") + ".pstats")
            with TraceSession(steps=1, check=False) if traced else contextlib.nullcontext():
                if traced:
                    step()  # the recorded step; the profiled ones are watched
                print(host_table(step, synchronize, steps=20, top=25, save_to=file))


if __name__ == "__main__":
    sys.exit(main())
