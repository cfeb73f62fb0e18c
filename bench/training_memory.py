"""Does training keep memory from step to step? 1,000 Adam steps of an MLP and of a CNN,
genesis vs PyTorch (CPU), each run in a fresh process.

Models: the MLP 784-512-512-10 of bench/mlp_step.py (batch 128, same init and
batches) and the CNN of examples/cnn.py (Conv2d/ReLU/MaxPool2d twice, Linear;
batch 64 of 1x16x16). A graph kept alive between steps would grow resident
memory by about one step's activations per step (~1 MB here), so three
signs are read at steps 100 and 1,000 (and in between):

- resident memory (VmRSS, /proc/self/status) and the peak (VmHWM);
- live tensors (objects the garbage collector tracks), after the step's
  locals are gone: a steady count means no step's tensors outlive it;
- cyclic garbage: the collector is switched off during the run and run by
  hand at each checkpoint; what it frees was kept only by reference cycles
  (memory that plain reference counting would never return), per step.

Run: python bench/training_memory.py [--steps N]     (N >= 100; default 1,000)
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import subprocess
import sys

import numpy as np

from mlp_step import BATCH, BATCHES, batches, framework, initial_state, memory_mb

CNN_BATCH = 64


def build(model: str, name: str, rng):
    """(model, batches, tensor type) for "mlp" or "cnn" in framework `name`."""
    nn, _, _, make_tensor = framework(name)
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                            nn.Linear(512, 10))
        net.load_state_dict({key: make_tensor(value) for key, value in initial_state(rng).items()})
        data = batches(rng)
    else:
        net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(16 * 4 * 4, 3))
        data = [(rng.standard_normal((CNN_BATCH, 1, 16, 16)).astype(np.float32),
                 rng.integers(0, 3, CNN_BATCH)) for _ in range(BATCHES)]
    tensor_type = type(make_tensor(np.zeros(1, np.float32)))
    return net, [(make_tensor(x), make_tensor(y)) for x, y in data], tensor_type


def live_tensors(tensor_type) -> int:
    return sum(1 for item in gc.get_objects() if isinstance(item, tensor_type))


def train_step(model, optimizer, F, x, y) -> float:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss.item()


def worker(name: str, model_name: str, steps: int) -> dict:
    _, optim, F, _ = framework(name)
    model, data, tensor_type = build(model_name, name, np.random.default_rng(0))
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    checkpoints = sorted({100, steps // 4, steps // 2, 3 * steps // 4, steps} - {0})
    gc.collect()
    gc.disable()
    record = {}
    for step in range(1, steps + 1):
        x, y = data[step % len(data)]
        loss = train_step(model, optimizer, F, x, y)
        if step in checkpoints:
            record[step] = {"rss": memory_mb("VmRSS"), "cyclic": gc.collect(),
                            "tensors": live_tensors(tensor_type), "loss": loss}
    gc.enable()
    return {"checkpoints": record, "peak": memory_mb("VmHWM")}


def run_worker(name: str, model: str, steps: int) -> dict:
    command = [sys.executable, __file__, "--worker", name, model, "--steps", str(steps)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def report(name: str, model: str, result: dict, steps: int) -> None:
    points = {int(step): values for step, values in result["checkpoints"].items()}
    first, last = points[100], points[steps]
    cyclic = sum(values["cyclic"] for step, values in points.items() if step > 100)
    print(f"{name:<8} {model:<4} {result['peak']:>9.1f} {first['rss']:>8.1f} {last['rss']:>9.1f} "
          f"{last['rss'] - first['rss']:>7.1f} {first['tensors']:>11d} {last['tensors']:>12d} "
          f"{cyclic / (steps - 100):>12.2f}   "
          + " ".join(f"{points[step]['rss']:.1f}" for step in sorted(points)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--worker", nargs=2, metavar=("FRAMEWORK", "MODEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps < 200:
        parser.error("--steps must be at least 200 (memory is compared from step 100 on)")
    if args.worker:
        print(json.dumps(worker(*args.worker, args.steps)))
        return
    names = ["genesis"] + (["pytorch"] if importlib.util.find_spec("torch") else [])
    print(f"{args.steps} Adam steps per run, each framework and model in a fresh process; MLP "
          f"batch {BATCH}, CNN batch {CNN_BATCH}; memory in MB")
    print(f"{'':<13} {'peak RSS':>9} {'RSS@100':>8} {f'RSS@{args.steps}':>9} {'growth':>7} "
          f"{'tensors@100':>11} {f'tensors@{args.steps}':>12} {'cyclic/step':>12}   "
          "RSS at each checkpoint")
    for model in ("mlp", "cnn"):
        for name in names:
            report(name, model, run_worker(name, model, args.steps), args.steps)


if __name__ == "__main__":
    main()
