"""The host's cost of one call on a GPU: CuPy by hand, genesis, and PyTorch, side by side.

At the sizes of bench/cuda_benchmarks.py the GPU sits idle most of a step: the time is
the host's, one call at a time. This prints, for the calls those steps are made of (an
elementwise op, a row reduction, a matrix product, a batched matrix product, softmax),
the microseconds per call of

  * CuPy by hand (the floor genesis builds on; for the batched product also the cuBLAS
    strided-batched call made directly, without CuPy's matmul),
  * genesis without recording (`no_grad`), genesis forward + backward of the op's sum,
  * PyTorch CUDA, the same two ways.

Each figure is the best of `--repeat` runs of `--number` calls, timed from a synchronised
start to a synchronised end, so it is the host's cost per call wherever the kernel is
shorter than that (which is the point: these kernels take a few microseconds).

Run: python bench/cuda_call_costs.py [--device cpu] [--quick]
(`--device cpu` runs NumPy, genesis and PyTorch on the CPU, to try the script without a GPU.)
"""
from __future__ import annotations

import sys

import numpy as np

import genesis
import genesis.nn.functional as genesis_F
from cuda_benchmarks import call_cost_options, ms_per_step

# (name, shapes of the operands): the shapes of the transformer block's calls
CASES = [
    ("add", [(1024, 256), (1024, 256)]),
    ("sum(-1)", [(1024, 256)]),
    ("linear 1024x256 @ 256x768", [(1024, 256), (768, 256)]),
    ("batched q @ k^T (8,4,128,64)", [(8, 4, 128, 64), (8, 4, 128, 64)]),
    ("softmax(-1) (8,4,128,128)", [(8, 4, 128, 128)]),
]


def microseconds(call, synchronize, number: int, repeat: int) -> float:
    return ms_per_step(call, synchronize, number, repeat, warmup=1) * 1e3


def by_hand(xp, name: str, arrays):
    """The op written directly on the array library (NumPy or CuPy)."""
    if name == "add":
        return lambda: arrays[0] + arrays[1]
    if name == "sum(-1)":
        return lambda: arrays[0].sum(-1)
    if name.startswith("linear"):
        return lambda: arrays[0] @ arrays[1].T
    if name.startswith("batched"):
        return lambda: arrays[0] @ arrays[1].swapaxes(-1, -2)
    x = arrays[0]

    def softmax():
        shifted = xp.exp(x - x.max(-1, keepdims=True))
        return shifted / shifted.sum(-1, keepdims=True)
    return softmax


def strided_batched_gemm(cupy, q, k):
    """q @ k^T for (..., n, d) arrays through cuBLAS's strided-batched GEMM, called directly."""
    from cupy_backends.cuda.libs import cublas
    *batch, rows, depth = q.shape
    columns = k.shape[-2]
    count = int(np.prod(batch))
    out = cupy.empty((*batch, rows, columns), dtype=q.dtype)
    handle = cupy.cuda.device.get_cublas_handle()
    one = np.array(1.0, dtype=np.float32)
    zero = np.array(0.0, dtype=np.float32)
    # row-major out = q k^T is column-major out^T = k q^T: A = k (transposed), B = q
    cublas.sgemmStridedBatched(
        handle, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, columns, rows, depth,
        one.ctypes.data, k.data.ptr, depth, columns * depth,
        q.data.ptr, depth, rows * depth, zero.ctypes.data,
        out.data.ptr, columns, rows * columns, count)
    return out


def framework_call(lib, F, name: str, tensors):
    if name == "add":
        return lambda: tensors[0] + tensors[1]
    if name == "sum(-1)":
        return lambda: tensors[0].sum(-1)
    if name.startswith("linear"):
        return lambda: F.linear(tensors[0], tensors[1])
    if name.startswith("batched"):
        return lambda: tensors[0] @ tensors[1].transpose(-2, -1)
    return lambda: F.softmax(tensors[0], -1)


def rows_for(torch, device: str, number: int, repeat: int) -> list:
    on_gpu = device != "cpu"
    if on_gpu:
        import cupy
        xp = cupy

        def synchronize():
            cupy.cuda.get_current_stream().synchronize()
            torch.cuda.synchronize()
    else:
        xp, cupy = np, None

        def synchronize():
            return None
    rng = np.random.default_rng(0)
    rows = []
    for name, shapes in CASES:
        values = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        arrays = [xp.asarray(value) for value in values]
        figures = {"by hand": microseconds(by_hand(xp, name, arrays), synchronize, number,
                                           repeat)}
        if on_gpu and name.startswith("batched"):
            reference = by_hand(xp, name, arrays)()
            direct = strided_batched_gemm(cupy, *arrays)
            assert float(abs(direct - reference).max()) < 1e-3, "cuBLAS call disagrees"
            figures["cuBLAS direct"] = microseconds(
                lambda: strided_batched_gemm(cupy, *arrays), synchronize, number, repeat)
        for label, lib, F, make in (
                ("genesis", genesis, genesis_F,
                 lambda value: genesis.tensor(value, device=device, requires_grad=True)),
                ("PyTorch", torch, torch.nn.functional,
                 lambda value: torch.tensor(value, device=device, requires_grad=True))):
            tensors = [make(value) for value in values]
            call = framework_call(lib, F, name, tensors)
            with lib.no_grad():
                figures[f"{label} no_grad"] = microseconds(call, synchronize, number, repeat)

            def forward_backward(call=call, tensors=tensors):
                for tensor in tensors:
                    tensor.grad = None
                call().sum().backward()
            figures[f"{label} fwd+bwd"] = microseconds(forward_backward, synchronize, number,
                                                       repeat)
        rows.append((name, figures))
    return rows


def print_rows(rows: list) -> None:
    columns = ["by hand", "cuBLAS direct", "genesis no_grad", "PyTorch no_grad",
               "genesis fwd+bwd", "PyTorch fwd+bwd"]
    print(f"{'µs per call':<30}" + "".join(f"{column:>17}" for column in columns)
          + f"{'fwd+bwd ratio':>15}")
    for name, figures in rows:
        cells = "".join(f"{figures[column]:17.1f}" if column in figures else f"{'-':>17}"
                        for column in columns)
        ratio = figures["genesis fwd+bwd"] / figures["PyTorch fwd+bwd"]
        print(f"{name:<30}{cells}{ratio:14.2f}x")


def main() -> int:
    options, number, repeat = call_cost_options(__doc__, 200)
    try:
        import torch
    except ImportError:
        print("skipped: PyTorch is not installed; this compares genesis, CuPy and PyTorch")
        return 0
    if options.device == "cuda":
        if not torch.cuda.is_available() or not genesis.cuda.is_available():
            print("skipped: no CUDA device for both PyTorch and genesis (CuPy)")
            return 0
        print(f"GPU: {torch.cuda.get_device_name()}")
    print_rows(rows_for(torch, options.device, number, repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
