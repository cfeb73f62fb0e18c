"""What one CuPy call costs the host: warm, in a loop of itself, and among the others.

On a GPU, genesis's step is the host's time (bench/cuda_benchmarks.py: the GPU is busy
a tenth of the transformer block's step), and most of that time is spent inside CuPy,
one call per kernel. This times the calls the block's forward and backward are made of,
CuPy by hand, with no genesis at all:

  * warm: the same call `--number` times in a row (its code and data stay in the
    processor's caches), microseconds per call;
  * mixed: every call once per round, round after round, as a step makes them; each
    call's share of a round is taken to be its warm share, and the table shows how much
    slower a call runs in the mix on average (the caches hold less of each call's code);
  * the alternatives genesis could take: cuBLAS's GEMM called directly instead of
    CuPy's matmul (2-D, and the strided-batched GEMM for the attention's products), and
    the reductions with CuPy's CUB accelerator turned off.

Each figure is the best of `--repeat` runs, timed from a synchronised start to a
synchronised end: the host's cost per call wherever the kernel is shorter than that.

Run: python bench/cupy_call_costs.py [--device cpu] [--quick]
(`--device cpu` runs the same calls on NumPy, without the cuBLAS and CUB rows, to try the
script without a GPU.)
"""
from __future__ import annotations

import sys

import numpy as np

from cuda_benchmarks import call_cost_options, ms_per_step
from transformer_block import BATCH, D_MODEL as WIDTH, HEADS, LENGTH  # the block's shapes

HEAD = WIDTH // HEADS
ROWS = BATCH * LENGTH


def block_arrays(xp, rng) -> dict:
    """Arrays of the block's shapes (float32): activations, a weight, q/k/v views."""
    def made(*shape):
        return xp.asarray(rng.standard_normal(shape).astype(np.float32))
    x = made(BATCH, LENGTH, WIDTH)
    qkv = made(BATCH, LENGTH, 3, HEADS, HEAD)
    q, k, v = qkv.transpose(2, 0, 3, 1, 4)  # each (batch, heads, length, head), not contiguous
    return {"x": x, "y": made(BATCH, LENGTH, WIDTH), "rows": x.reshape(ROWS, WIDTH),
            "weight": made(3 * WIDTH, WIDTH), "grad": made(ROWS, 3 * WIDTH),
            "q": q, "k": k, "v": v, "attention": made(BATCH, HEADS, LENGTH, LENGTH)}


def cupy_calls(xp, a: dict) -> dict:
    """name -> the call, as the block makes it (a linear's three products, its bias
    gradient, a layer norm's mean, the attention's two batched products, elementwise)."""
    return {
        "add (8,128,256)": lambda: a["x"] + a["y"],
        "multiply by a number": lambda: a["x"] * 0.5,
        "x @ w.T (1024x256, 768x256)": lambda: a["rows"] @ a["weight"].T,
        "g @ w (1024x768, 768x256)": lambda: a["grad"] @ a["weight"],
        "g.T @ x (768x1024, 1024x256)": lambda: a["grad"].T @ a["rows"],
        "q @ k^T (8,4,128,64), views": lambda: a["q"] @ a["k"].swapaxes(-1, -2),
        "attention @ v (8,4,128,128)": lambda: a["attention"] @ a["v"],
        "sum over rows (1024x768)": lambda: a["grad"].sum(0),
        "sum(-1, keepdims) (8,128,256)": lambda: a["x"].sum(-1, keepdims=True),
        "mean(-1, keepdims) (8,128,256)": lambda: a["x"].mean(-1, keepdims=True),
        "ascontiguousarray(q)": lambda: xp.ascontiguousarray(a["q"]),
    }


def direct_calls(cupy, a: dict) -> dict:
    """The matrix products through cuBLAS called directly (row-major operands, as views)."""
    from cupy_backends.cuda.libs import cublas

    handle = cupy.cuda.device.get_cublas_handle()
    one, zero = np.array(1.0, np.float32), np.array(0.0, np.float32)

    def layout(matrix):  # row-major `matrix`, or the transpose of one, as cuBLAS sees it
        if matrix.flags.c_contiguous:
            return cublas.CUBLAS_OP_N, matrix.shape[1]
        return cublas.CUBLAS_OP_T, matrix.shape[0]

    def product(left, right):  # left @ right: column-major right^T left^T
        out = cupy.empty((left.shape[0], right.shape[1]), np.float32)
        (op_right, ld_right), (op_left, ld_left) = layout(right), layout(left)
        cublas.sgemm(handle, op_right, op_left, right.shape[1], left.shape[0], left.shape[1],
                     one.ctypes.data, right.data.ptr, ld_right, left.data.ptr, ld_left,
                     zero.ctypes.data, out.data.ptr, right.shape[1])
        return out

    def batched(left, right):  # (..., r, d) @ (..., d, c), both made contiguous first
        left, right = cupy.ascontiguousarray(left), cupy.ascontiguousarray(right)
        *batch, rows, depth = left.shape
        columns = right.shape[-1]
        out = cupy.empty((*batch, rows, columns), np.float32)
        cublas.sgemmStridedBatched(
            handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, columns, rows, depth,
            one.ctypes.data, right.data.ptr, columns, depth * columns, left.data.ptr, depth,
            rows * depth, zero.ctypes.data, out.data.ptr, columns, rows * columns,
            int(np.prod(batch)))
        return out

    calls = {
        "x @ w.T (1024x256, 768x256)": lambda: product(a["rows"], a["weight"].T),
        "g @ w (1024x768, 768x256)": lambda: product(a["grad"], a["weight"]),
        "g.T @ x (768x1024, 1024x256)": lambda: product(a["grad"].T, a["rows"]),
        "q @ k^T (8,4,128,64), views": lambda: batched(a["q"], a["k"].swapaxes(-1, -2)),
        "attention @ v (8,4,128,128)": lambda: batched(a["attention"], a["v"]),
    }
    by_cupy = cupy_calls(cupy, a)
    for name, call in calls.items():
        difference = float(abs(call() - by_cupy[name]()).max())
        assert difference < 1e-2, f"{name}: cuBLAS called directly disagrees ({difference})"
    return calls


def microseconds(call, synchronize, number: int, repeat: int) -> float:
    """Best of `repeat` runs of `number` calls, per call, after a warm-up."""
    return ms_per_step(call, synchronize, number, repeat) * 1e3


def main() -> int:
    options, number, repeat = call_cost_options(__doc__, 300)
    cupy = None
    if options.device == "cuda":
        try:
            import cupy
            cupy.cuda.runtime.getDeviceCount()
        except Exception as error:  # no CuPy, or no usable GPU
            print(f"skipped: no CUDA device for CuPy ({type(error).__name__}: {error})")
            return 0
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"GPU: {name}, CuPy {cupy.__version__}")
    xp = cupy if cupy is not None else np
    synchronize = cupy.cuda.Device().synchronize if cupy is not None else (lambda: None)
    arrays = block_arrays(xp, np.random.default_rng(0))
    calls = cupy_calls(xp, arrays)
    warm = {name: microseconds(call, synchronize, number, repeat) for name, call in calls.items()}
    every = list(calls.values())

    def one_round():
        for call in every:
            call()
    mixed = microseconds(one_round, synchronize, max(1, number // 10), repeat)
    direct = {}
    without_cub = {}
    if cupy is not None:
        direct = {name: microseconds(call, synchronize, number, repeat)
                  for name, call in direct_calls(cupy, arrays).items()}
        from cupy._core import _accelerator
        routine, reduction = (_accelerator.get_routine_accelerators(),
                              _accelerator.get_reduction_accelerators())
        _accelerator.set_routine_accelerators([])
        _accelerator.set_reduction_accelerators([])
        try:
            without_cub = {name: microseconds(call, synchronize, number, repeat)
                           for name, call in calls.items() if "sum" in name or "mean" in name}
        finally:
            _accelerator.set_routine_accelerators(routine)
            _accelerator.set_reduction_accelerators(reduction)
    print(f"{'µs per call (host)':<34}{'warm':>10}{'cuBLAS direct':>15}{'without CUB':>13}")
    for name, figure in warm.items():
        cells = [f"{direct[name]:15.1f}" if name in direct else f"{'-':>15}",
                 f"{without_cub[name]:13.1f}" if name in without_cub else f"{'-':>13}"]
        print(f"{name:<34}{figure:10.1f}{''.join(cells)}")
    total = sum(warm.values())
    print(f"\none round of all {len(every)} calls: {mixed:.1f} µs mixed, {total:.1f} µs as the "
          f"sum of their warm figures: each call {mixed / total:.2f}x slower among the others")
    return 0


if __name__ == "__main__":
    sys.exit(main())
