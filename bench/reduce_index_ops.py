"""Forward + backward of reduction, shape, indexing and linear-algebra ops: genesis vs PyTorch.

Each row runs `op(x).sum().backward()` style steps on a float32 input and prints the
time per step for both and their ratio (genesis / torch). Two sizes: a small input,
where per-op overhead dominates, and a medium one, where the array work does.

Run: python bench/reduce_index_ops.py [--iterations N]
"""
from __future__ import annotations

import argparse
import timeit

import numpy as np

import genesis


def cases(lib, index_lib):
    """(name, function of the input tensor x returning a tensor to backpropagate from)."""
    def index(values):
        return index_lib(values)

    return [
        ("sum(dim=1)", lambda x: x.sum(1)),
        ("max(dim=1).values", lambda x: x.max(1).values),
        ("amax(dim=0)", lambda x: x.amax(0)),
        ("var(dim=1)", lambda x: x.var(1)),
        ("norm(dim=1)", lambda x: x.norm(dim=1)),
        ("cumsum(1)", lambda x: x.cumsum(1)),
        ("cumprod(1)", lambda x: x.cumprod(1)),
        ("cat + split", lambda x: lib.cat(list(x.split(x.shape[1] // 4, 1)), 1)),
        ("gather(1)", lambda x: x.gather(1, index(np.arange(x.shape[0] * 8).reshape(x.shape[0], 8)
                                                  % x.shape[1]))),
        ("index_select(0)", lambda x: x.index_select(0, index(np.arange(x.shape[0])[::-2].copy()))),
        ("x[int array]", lambda x: x[index(np.arange(x.shape[0])[::3].copy())]),
        ("masked_fill", lambda x: x.masked_fill(x > 0.5, 0.0)),
        ("einsum ij,kj->ik", lambda x: lib.einsum("ij,kj->ik", x, x)),
        ("matmul x @ x.T", lambda x: x @ x.T),
    ]


def microseconds(step, iterations: int) -> float:
    step()
    best = min(timeit.repeat(step, number=iterations, repeat=5))
    return best / iterations * 1e6


def genesis_step(x, op):
    def step():
        x.grad = None
        op(x).sum().backward()
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=200)
    iterations = parser.parse_args().iterations
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(1)
    ours = cases(genesis, genesis.from_numpy)
    theirs = cases(torch, torch.from_numpy) if torch is not None else [(n, None) for n, _ in ours]
    print(f"{'op':<22}{'shape':>12}{'genesis us':>13}{'torch us':>11}{'ratio':>8}")
    for shape in ((16, 32), (256, 512)):
        data = np.random.default_rng(0).uniform(0.5, 1.5, size=shape).astype(np.float32)
        x = genesis.tensor(data, requires_grad=True)
        tx = torch.tensor(data, requires_grad=True) if torch is not None else None
        count = iterations if shape[0] < 100 else max(iterations // 20, 5)
        for (name, op), (_, torch_op) in zip(ours, theirs):
            mine = microseconds(genesis_step(x, op), count)
            if torch_op is None:
                print(f"{name:<22}{str(shape):>12}{mine:>13.1f}{'-':>11}{'-':>8}")
                continue
            reference = microseconds(genesis_step(tx, torch_op), count)
            print(f"{name:<22}{str(shape):>12}{mine:>13.1f}{reference:>11.1f}{mine / reference:>8.2f}")


if __name__ == "__main__":
    main()
