"""MLP training step: genesis vs PyTorch CPU, time per step and memory.

The model is 784-512-512-10 with ReLU, trained with cross-entropy and Adam (lr 1e-3) on
batches of 128 float32 images (8 fixed random batches, cycled); both frameworks start
from the same weights (PyTorch's default init, drawn once with NumPy) and see the same
batches, so their losses should agree to float32 rounding.

Each framework runs in a fresh subprocess, so its peak RSS is its own (VmHWM from
/proc/self/status: getrusage's ru_maxrss would start from the parent's size at exec);
resident memory (VmRSS) is read after step 100 and after the last step (1,000 by
default): a framework that leaks grows between the two. The time per step is the fastest mean
over blocks of 20 consecutive steps after a 10-step warm-up.

BLAS threads: PyTorch is set to NumPy's OpenBLAS count (OPENBLAS_NUM_THREADS or
OMP_NUM_THREADS if set, else one per CPU); set one of those to change both.
--keep-freed-memory makes glibc keep freed memory for reuse (see _harness), in both.

Run: python bench/mlp_step.py [--quick] [--steps N] [--keep-freed-memory]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import math
import subprocess
import sys
import time

import numpy as np

from _harness import blas_threads, keep_freed_memory, torch_matching_numpy

SIZES = (784, 512, 512, 10)
BATCH, BATCHES = 128, 8
WARMUP, BLOCK = 10, 20
FIRST_MEMORY_STEP = 100


def initial_state(rng) -> dict:
    """PyTorch's Linear init (U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias), keyed
    like a Sequential(Linear, ReLU, Linear, ReLU, Linear) state dict."""
    state = {}
    for layer, (fan_in, fan_out) in enumerate(zip(SIZES, SIZES[1:])):
        bound = 1 / math.sqrt(fan_in)
        state[f"{2 * layer}.weight"] = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        state[f"{2 * layer}.bias"] = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    return state


def batches(rng) -> list:
    return [(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32),
             rng.integers(0, SIZES[-1], BATCH)) for _ in range(BATCHES)]


def framework(name: str):
    """(nn, optim, functional, make_tensor) of `name`."""
    if name == "genesis":
        import genesis
        import genesis.nn.functional as F
        return genesis.nn, genesis.optim, F, genesis.tensor
    torch = torch_matching_numpy()
    return torch.nn, torch.optim, torch.nn.functional, torch.tensor


def memory_mb(field: str) -> float:
    """A memory figure of this process from /proc/self/status (Linux), in MB: "VmRSS"
    (resident now) or "VmHWM" (peak resident)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def worker(name: str, steps: int) -> dict:
    """Train `steps` steps in this process; return the figures as a dict."""
    nn, optim, F, make_tensor = framework(name)
    imported = memory_mb("VmRSS")
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    model.load_state_dict({key: make_tensor(value) for key, value in initial_state(rng).items()})
    data = [(make_tensor(x), make_tensor(y)) for x, y in batches(rng)]
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    step_times, losses, resident = [], [], {}
    for step in range(1, steps + 1):
        x, y = data[step % BATCHES]
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        step_times.append(time.perf_counter() - start)
        losses.append(loss.item())
        if step in (FIRST_MEMORY_STEP, steps):
            resident[step] = memory_mb("VmRSS")
    timed = step_times[WARMUP:]
    block_means = [sum(timed[i:i + BLOCK]) / BLOCK for i in range(0, len(timed) - BLOCK + 1, BLOCK)]
    return {"ms_per_step": min(block_means) * 1e3,
            "peak_rss_mb": memory_mb("VmHWM"), "imported_mb": imported,
            "resident_mb": {str(step): value for step, value in resident.items()},
            "loss_at": {str(s): losses[s - 1] for s in (1, FIRST_MEMORY_STEP, steps)}}


def run_worker(name: str, steps: int, keep: bool) -> dict:
    command = [sys.executable, __file__, "--worker", name, "--steps", str(steps)]
    output = subprocess.run(command + (["--keep-freed-memory"] if keep else []),
                            check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="300 steps instead of 1,000")
    parser.add_argument("--steps", type=int, help="steps per framework (default 1,000)")
    parser.add_argument("--keep-freed-memory", action="store_true",
                        help="glibc keeps freed memory for reuse (both frameworks)")
    parser.add_argument("--worker", choices=["genesis", "pytorch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    steps = args.steps or (300 if args.quick else 1000)
    if steps < FIRST_MEMORY_STEP + BLOCK:
        parser.error(f"--steps must be at least {FIRST_MEMORY_STEP + BLOCK}")
    if args.worker:
        if args.keep_freed_memory and not keep_freed_memory():
            raise SystemExit("--keep-freed-memory needs glibc's mallopt")
        print(json.dumps(worker(args.worker, steps)))
        return
    names = ["genesis"] + (["pytorch"] if importlib.util.find_spec("torch") else [])
    results = {name: run_worker(name, steps, args.keep_freed_memory) for name in names}
    allocator = "freed memory kept" if args.keep_freed_memory else "glibc default"
    print(f"MLP 784-512-512-10, ReLU, cross-entropy, Adam; batch {BATCH}, float32; {steps} "
          f"steps per framework, each in a fresh process; BLAS threads: {blas_threads()}; "
          f"allocator: {allocator}")
    header = (f"{'':<10} {'ms/step':>9} {'import MB':>10} {'peak RSS MB':>12} "
              f"{f'RSS@{FIRST_MEMORY_STEP} MB':>11} "
              f"{f'RSS@{steps} MB':>12} {'growth MB':>10} {'loss@1':>9} "
              f"{f'loss@{FIRST_MEMORY_STEP}':>9} {f'loss@{steps}':>10}")
    print(header)
    for name, result in results.items():
        first, last = (result["resident_mb"][str(s)] for s in (FIRST_MEMORY_STEP, steps))
        losses = result["loss_at"]
        print(f"{name:<10} {result['ms_per_step']:>9.2f} {result['imported_mb']:>10.1f} "
              f"{result['peak_rss_mb']:>12.1f} "
              f"{first:>11.1f} {last:>12.1f} {last - first:>10.1f} "
              f"{losses['1']:>9.6f} {losses[str(FIRST_MEMORY_STEP)]:>9.6f} "
              f"{losses[str(steps)]:>10.6f}")
    print("(import MB: resident after importing the framework, before any model or data)")
    if "pytorch" in results:
        ratio = results["genesis"]["ms_per_step"] / results["pytorch"]["ms_per_step"]
        peak = results["genesis"]["peak_rss_mb"] / results["pytorch"]["peak_rss_mb"]
        print(f"genesis / pytorch: time {ratio:.2f}x, peak RSS {peak:.2f}x")


if __name__ == "__main__":
    main()
