"""Normalisation layers, forward + backward: genesis vs PyTorch (CPU), same inputs.

Each row runs `layer(x).sum().backward()` with gradients into the input and the affine
parameters:
  * BatchNorm2d, training mode, on (32, 32, 16, 16) (a CNN feature map): one fused node;
  * LayerNorm over the last dim of (8, 128, 256) (a transformer activation): one fused node;
  * GroupNorm with 8 groups on (32, 32, 16, 16): layer norm's node over each group, then
    a per-channel affine.

BLAS threads: PyTorch is set to NumPy's count (see _harness).

Run: python bench/norm_layers.py [--quick]
"""
from __future__ import annotations

import argparse

import numpy as np

import genesis
from _harness import best_time, blas_threads, torch_matching_numpy

CASES = [("BatchNorm2d(32), train", (32, 32, 16, 16), lambda nn: nn.BatchNorm2d(32)),
         ("LayerNorm(256)", (8, 128, 256), lambda nn: nn.LayerNorm(256)),
         ("GroupNorm(8, 32)", (32, 32, 16, 16), lambda nn: nn.GroupNorm(8, 32))]


def step(layer, x):
    def run():
        x.grad = None
        for parameter in layer.parameters():
            parameter.grad = None
        layer(x).sum().backward()
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    options = parser.parse_args()
    number, repeat = (5, 3) if options.quick else (30, 5)
    torch = torch_matching_numpy()
    print(f"float32, forward + backward; BLAS threads: {blas_threads()}")
    print(f"{'layer':<24} {'input':<18} {'genesis ms':>11} {'PyTorch ms':>11} {'genesis/PyTorch':>16}")
    for name, shape, make in CASES:
        data = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        ours = best_time(step(make(genesis.nn), genesis.tensor(data, requires_grad=True)),
                         number, repeat) * 1e3
        if torch is None:
            print(f"{name:<24} {str(shape):<18} {ours:>11.3f} {'-':>11} {'-':>16}")
            continue
        theirs = best_time(step(make(torch.nn), torch.tensor(data, requires_grad=True)),
                           number, repeat) * 1e3
        print(f"{name:<24} {str(shape):<18} {ours:>11.3f} {theirs:>11.3f} {ours / theirs:>15.2f}x")
    if torch is None:
        print("(PyTorch is not installed: no reference column)")


if __name__ == "__main__":
    main()
