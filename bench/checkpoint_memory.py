"""Peak memory of a deep MLP's forward + backward with and without gradient checkpointing.

The model is DEPTH blocks of Linear(WIDTH, WIDTH) + GELU on a batch of BATCH
(float32). Without checkpointing each block keeps two activations until
backward: its input (for Linear's weight gradient) and the Linear output (for
GELU's derivative). `genesis.utils.checkpoint` keeps only each segment's input
and recomputes the segment during backward.

Memory is measured with tracemalloc, which sees NumPy's array allocations: the
peak of a training step above what was allocated before its forward. The
step measured is the second one, after `zero_grad(set_to_none=False)`, so the
parameters' .grad buffers already exist (gradients accumulate into them) and
the figure is activations plus backward temporaries. Every variant must give
exactly the same gradients as the plain run.

Times are the best of three steps on BENCH_THREADS BLAS threads (default 1, set before NumPy
loads, for figures that hold still on a shared machine).

Run: python bench/checkpoint_memory.py [--depth 32] [--width 512] [--batch 256]
"""
from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = \
    os.environ.setdefault("BENCH_THREADS", "1")

import argparse  # noqa: E402  (after the thread settings, which must precede NumPy)
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import genesis  # noqa: E402
from genesis import nn  # noqa: E402
from genesis.utils.checkpoint import checkpoint, checkpoint_sequential  # noqa: E402


def build_model(depth: int, width: int) -> nn.Sequential:
    genesis.manual_seed(0)
    return nn.Sequential(*(nn.Sequential(nn.Linear(width, width), nn.GELU())
                           for _ in range(depth)))


def forward(model: nn.Sequential, x, variant: str):
    if variant == "no checkpointing":
        return model(x)
    if variant == "checkpoint every block":
        for block in model:
            x = checkpoint(block, x, use_reentrant=False)
        return x
    every = int(variant.split()[2])  # "checkpoint every N blocks"
    return checkpoint_sequential(model, len(model) // every, x)


def measure(variant: str, depth: int, width: int, batch: int) -> tuple:
    """(peak MB above the start, best seconds, gradients) of a forward + backward: memory on a
    step after the first (which made the .grad buffers), time as the best of three steps
    without tracemalloc (which slows Python down)."""
    model = build_model(depth, width)
    x = genesis.tensor(np.random.default_rng(1).standard_normal((batch, width), np.float32))
    seconds = []
    for _ in range(3):
        model.zero_grad(set_to_none=False)
        started = time.perf_counter()
        forward(model, x, variant).square().mean().backward()
        seconds.append(time.perf_counter() - started)
    model.zero_grad(set_to_none=False)
    tracemalloc.start()
    start_bytes = tracemalloc.get_traced_memory()[0]
    forward(model, x, variant).square().mean().backward()
    peak_bytes = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    grads = [parameter.grad.numpy().copy() for parameter in model.parameters()]
    return (peak_bytes - start_bytes) / 2 ** 20, min(seconds), grads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--depth", type=int, default=32)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    variants = ["no checkpointing", "checkpoint every block", "checkpoint every 4 blocks",
                "checkpoint every 8 blocks"]
    activation_mb = args.batch * args.width * 4 / 2 ** 20
    gradient_mb = args.depth * (args.width + 1) * args.width * 4 / 2 ** 20
    print(f"MLP: {args.depth} x (Linear({args.width}, {args.width}) + GELU), batch {args.batch}, "
          f"float32; one activation {activation_mb:.1f} MB, parameter gradients "
          f"{gradient_mb:.1f} MB")
    print(f"{'variant':<28} {'peak MB':>9} {'saved MB':>9} {'time s':>7} {'max |grad diff|':>16}")
    baseline_mb, _, baseline_grads = measure(variants[0], args.depth, args.width, args.batch)
    for variant in variants:
        peak_mb, seconds, grads = measure(variant, args.depth, args.width, args.batch)
        difference = max(float(np.abs(a - b).max()) for a, b in zip(grads, baseline_grads))
        assert difference == 0.0, f"{variant}: gradients differ from the plain run by {difference}"
        print(f"{variant:<28} {peak_mb:9.1f} {baseline_mb - peak_mb:9.1f} {seconds:7.2f} "
              f"{difference:16.1e}")


if __name__ == "__main__":
    main()
