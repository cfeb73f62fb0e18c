"""Transformer block forward + backward: genesis vs PyTorch CPU running the same math.

The block is pre-LN: h = x + attention(ln1(x)); out = h + mlp(ln2(h)), with 4-head
self-attention (one packed q/k/v projection, softmax(q k^T / sqrt(d)) v, an output
projection) and a GELU MLP of width 4 * d_model. Batch 8, sequence 128, d_model 256,
float32. One step is: forward, then backward from a fixed output gradient into the
input and every parameter.

Two versions, each timed in both frameworks with the same weights:
  * functional: layer norm composed of ops (mean, (x - mean)^2 mean, rsqrt), written
    once and run on genesis and on torch, so both do exactly the same operations;
  * modules: nn.LayerNorm, nn.MultiheadAttention (batch_first), nn.Linear, nn.GELU,
    each framework's own implementation (PyTorch's are fused C++ kernels).

BLAS threads: PyTorch is set to NumPy's OpenBLAS count (OPENBLAS_NUM_THREADS or
OMP_NUM_THREADS if set, else one per CPU); set one of those to change both.
--keep-freed-memory makes glibc keep freed memory for reuse (see _harness), for both.

Run: python bench/transformer_block.py [--quick] [--keep-freed-memory]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

import genesis
import genesis.nn.functional as genesis_F
from _harness import best_time, blas_threads, keep_freed_memory, print_table, torch_matching_numpy

BATCH, LENGTH, D_MODEL, HEADS = 8, 128, 256, 4


def initial_weights(rng) -> dict:
    """float32 arrays, linear layers drawn like PyTorch's default init."""
    def linear(out_features, in_features):
        bound = 1 / math.sqrt(in_features)
        return (rng.uniform(-bound, bound, (out_features, in_features)).astype(np.float32),
                rng.uniform(-bound, bound, out_features).astype(np.float32))

    weights = {}
    weights["qkv_w"], weights["qkv_b"] = linear(3 * D_MODEL, D_MODEL)
    weights["out_w"], weights["out_b"] = linear(D_MODEL, D_MODEL)
    weights["fc1_w"], weights["fc1_b"] = linear(4 * D_MODEL, D_MODEL)
    weights["fc2_w"], weights["fc2_b"] = linear(D_MODEL, 4 * D_MODEL)
    for name in ("ln1", "ln2"):
        weights[f"{name}_w"] = (1 + 0.1 * rng.standard_normal(D_MODEL)).astype(np.float32)
        weights[f"{name}_b"] = (0.1 * rng.standard_normal(D_MODEL)).astype(np.float32)
    return weights


def layer_norm(lib, x, weight, bias, eps=1e-5):
    centered = x - x.mean(-1, keepdim=True)
    variance = (centered * centered).mean(-1, keepdim=True)
    return centered * lib.rsqrt(variance + eps) * weight + bias


def self_attention(lib, F, x, p):
    batch, length, width = x.shape
    head = width // HEADS
    qkv = F.linear(x, p["qkv_w"], p["qkv_b"]).reshape(batch, length, 3, HEADS, head)
    q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (batch, heads, length, head)
    weights = F.softmax((q @ k.transpose(-2, -1)) * (1 / math.sqrt(head)), -1)
    mixed = (weights @ v).transpose(1, 2).reshape(batch, length, width)
    return F.linear(mixed, p["out_w"], p["out_b"])


def functional_block(lib, F, x, p):
    """The pre-LN block written once for both frameworks (`lib` is genesis or torch)."""
    h = x + self_attention(lib, F, layer_norm(lib, x, p["ln1_w"], p["ln1_b"]), p)
    hidden = F.gelu(F.linear(layer_norm(lib, h, p["ln2_w"], p["ln2_b"]), p["fc1_w"], p["fc1_b"]))
    return h + F.linear(hidden, p["fc2_w"], p["fc2_b"])


def module_block(nn):
    """The same block from `nn` modules (weights loaded afterwards)."""
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D_MODEL)
            self.attention = nn.MultiheadAttention(D_MODEL, HEADS, batch_first=True)
            self.ln2 = nn.LayerNorm(D_MODEL)
            self.fc1 = nn.Linear(D_MODEL, 4 * D_MODEL)
            self.gelu = nn.GELU()
            self.fc2 = nn.Linear(4 * D_MODEL, D_MODEL)

        def forward(self, x):
            normed = self.ln1(x)
            h = x + self.attention(normed, normed, normed, need_weights=False)[0]
            return h + self.fc2(self.gelu(self.fc1(self.ln2(h))))

    return Block()


def module_state(weights: dict) -> dict:
    """The functional weights under the module block's state-dict names."""
    names = {"ln1.weight": "ln1_w", "ln1.bias": "ln1_b", "ln2.weight": "ln2_w",
             "ln2.bias": "ln2_b", "attention.in_proj_weight": "qkv_w",
             "attention.in_proj_bias": "qkv_b", "attention.out_proj.weight": "out_w",
             "attention.out_proj.bias": "out_b", "fc1.weight": "fc1_w", "fc1.bias": "fc1_b",
             "fc2.weight": "fc2_w", "fc2.bias": "fc2_b"}
    return {key: weights[name] for key, name in names.items()}


def training_step(forward, x, parameters, grad_out):
    """A step function: clear gradients, forward, backward from `grad_out`."""
    def step():
        x.grad = None
        for parameter in parameters:
            parameter.grad = None
        forward(x).backward(grad_out)
    return step


def largest_difference(genesis_tensors, torch_tensors) -> float:
    """The largest |genesis - torch| over the tensors, each relative to its largest |torch|."""
    differences = []
    for mine, theirs in zip(genesis_tensors, torch_tensors):
        mine, theirs = mine.detach().numpy(), theirs.detach().numpy()
        differences.append(np.max(np.abs(mine - theirs)) / max(np.max(np.abs(theirs)), 1e-30))
    return float(max(differences))


def gradients(tensors) -> list:
    return [tensor.grad for tensor in tensors]


def run(name, make_genesis, make_torch, data, grad_out, torch, number, repeat, rows) -> None:
    """Time one version in each framework; check that outputs and gradients agree."""
    forward, x, parameters = make_genesis(genesis.tensor(data, requires_grad=True))
    step = training_step(forward, x, parameters, genesis.tensor(grad_out))
    rows.append((f"genesis {name}", best_time(step, number, repeat) * 1e3))
    if torch is None:
        return
    t_forward, t_x, t_parameters = make_torch(torch.tensor(data, requires_grad=True))
    t_step = training_step(t_forward, t_x, t_parameters, torch.tensor(grad_out))
    rows.append((f"pytorch {name}", best_time(t_step, number, repeat) * 1e3))
    outputs = forward(x), t_forward(t_x)
    step(), t_step()
    print(f"{name}: genesis vs pytorch, largest relative difference: output "
          f"{largest_difference(outputs[:1], outputs[1:]):.1e}, gradients "
          f"{largest_difference(gradients([x, *parameters]), gradients([t_x, *t_parameters])):.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument("--keep-freed-memory", action="store_true",
                        help="glibc keeps freed memory for reuse (both frameworks)")
    args = parser.parse_args()
    quick = args.quick
    allocator = "freed memory kept" if args.keep_freed_memory and keep_freed_memory() \
        else "glibc default"
    number, repeat = (2, 3) if quick else (5, 5)
    torch = torch_matching_numpy()
    rng = np.random.default_rng(0)
    weights = initial_weights(rng)
    data = rng.standard_normal((BATCH, LENGTH, D_MODEL)).astype(np.float32)
    grad_out = rng.standard_normal((BATCH, LENGTH, D_MODEL)).astype(np.float32)
    print(f"pre-LN transformer block, batch {BATCH}, length {LENGTH}, d_model {D_MODEL}, "
          f"{HEADS} heads, GELU MLP x4, float32, forward + backward; BLAS threads: "
          f"{blas_threads()}; allocator: {allocator}")

    def functional(lib, F, wrap):
        def make(x):
            params = {key: wrap(value) for key, value in weights.items()}
            return (lambda x: functional_block(lib, F, x, params)), x, list(params.values())
        return make

    def modules(nn, wrap):
        def make(x):
            block = module_block(nn)
            block.load_state_dict({key: wrap(value, False)
                                   for key, value in module_state(weights).items()})
            return block, x, list(block.parameters())
        return make

    def genesis_tensor(value, requires_grad=True):
        return genesis.tensor(value, requires_grad=requires_grad)

    def torch_tensor(value, requires_grad=True):
        return torch.tensor(value, requires_grad=requires_grad)

    rows = []
    run("functional", functional(genesis, genesis_F, genesis_tensor),
        torch and functional(torch, torch.nn.functional, torch_tensor), data, grad_out, torch,
        number, repeat, rows)
    run("modules", modules(genesis.nn, genesis_tensor), torch and modules(torch.nn, torch_tensor),
        data, grad_out, torch, number, repeat, rows)
    print()
    print_table(rows, "ms/step", reference="genesis functional")
    if torch is not None:
        table = dict(rows)
        for name in ("functional", "modules"):
            print(f"{name}: genesis / pytorch = "
                  f"{table[f'genesis {name}'] / table[f'pytorch {name}']:.2f}x")


if __name__ == "__main__":
    main()
