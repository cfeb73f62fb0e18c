"""Convolution and pooling, forward + backward: genesis vs an alternative vs PyTorch (CPU).

genesis's `Convolution` unfolds the input into columns (im2col, one strided
copy) and does one batched matrix product; its backward recomputes the
columns. The alternative measured here, as a Function with the same
framework overhead, takes an as_strided window view and contracts it with
einsum (which copies the windows internally) both ways. Both sum the input
gradient back window position by window position. A third row keeps the
columns from the forward instead of recomputing them (faster backward, but
the columns cost kernel-area times the input's memory).

Both libraries run on BENCH_THREADS threads (default 1), set before NumPy
loads: on a shared machine, multi-threaded BLAS and OpenMP figures swing by
several times from run to run; one thread gives stable per-core ratios.

Run: python bench/conv.py [--repeat N] [--quick]      (BENCH_THREADS=2 for two threads)
"""
from __future__ import annotations

import os

THREADS = os.environ.setdefault("BENCH_THREADS", "1")
os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = THREADS

import argparse  # noqa: E402  (after the thread settings, which must precede NumPy)
import time  # noqa: E402

import numpy as np  # noqa: E402

import genesis  # noqa: E402
import genesis.nn.functional as F  # noqa: E402
from genesis.ops._window_kernels import add_columns, columns, padded  # noqa: E402
from genesis.ops.window_geometry import Windows  # noqa: E402


def _windows(padding: int, kernel: tuple) -> Windows:
    return Windows(kernel, (1, 1), (1, 1), ((padding, padding),) * 2)


class StridedEinsumConv(genesis.Function):
    """Stride-1 conv2d as einsum over an as_strided window view (N, C, Ho, Wo, kh, kw)."""

    @staticmethod
    def forward(ctx, x, w, b, padding):
        windows = _windows(padding, tuple(w.shape[2:]))
        ctx.save_for_backward(x, w)
        ctx.geometry = windows
        view = _window_view(x._data, windows)
        out = np.einsum("nchwij,ocij->nohw", view, w._data, optimize=True)
        return out + b._data[:, None, None]

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        windows = ctx.geometry
        g = grad._data
        view = _window_view(x._data, windows)
        grad_w = np.einsum("nohw,nchwij->ocij", g, view, optimize=True)
        grad_view = np.einsum("nohw,ocij->ncijhw", g, w._data, optimize=True)
        spatial = x.shape[2:]
        out_size = windows.output_size(spatial)
        target = np.zeros(x.shape[:2] + windows.padded_size(spatial), g.dtype)
        for _, (i, j) in windows.offsets():
            target[(..., *windows.slices((i, j), out_size))] += grad_view[:, :, i, j]
        unpadded = target[(..., *(slice(before, before + size)
                                  for (before, _), size in zip(windows.padding, spatial)))]
        return (genesis.from_numpy(unpadded), genesis.from_numpy(grad_w),
                genesis.from_numpy(g.sum((0, 2, 3))), None)


def _window_view(x, windows: Windows):
    source = padded(np, x, windows)
    out_size = windows.output_size(x.shape[2:])
    s = source.strides
    return np.lib.stride_tricks.as_strided(source, x.shape[:2] + out_size + windows.kernel,
                                           s + s[2:])


class KeptColumnsConv(genesis.Function):
    """im2col conv2d (groups=1, stride 1) that keeps its columns for the backward."""

    @staticmethod
    def forward(ctx, x, w, b, padding):
        windows = _windows(padding, tuple(w.shape[2:]))
        cols = columns(genesis.device("cpu"), x._data, windows)
        ctx.cols, ctx.w, ctx.windows, ctx.spatial = cols, w._data, windows, x.shape[2:]
        out = w._data.reshape(w.shape[0], -1) @ cols
        out += b._data[:, None]
        return out.reshape(x.shape[:1] + w.shape[:1] + windows.output_size(x.shape[2:]))

    @staticmethod
    def backward(ctx, grad):
        g = grad._data.reshape(grad.shape[0], grad.shape[1], -1)
        weight = ctx.w.reshape(ctx.w.shape[0], -1)
        grad_w = (g @ ctx.cols.transpose(0, 2, 1)).sum(0).reshape(ctx.w.shape)
        grad_x = add_columns(genesis.device("cpu"), weight.T @ g, ctx.spatial, ctx.windows)
        return (genesis.from_numpy(grad_x), genesis.from_numpy(grad_w),
                genesis.from_numpy(g.sum((0, 2))), None)


def best_ms(steps: list, repeat: int) -> list:
    """Best time of each step in ms, the steps run round-robin so that they see the same
    machine load and allocator state (large temporaries cost page faults when the heap was
    just trimmed, which favours whichever variant runs second in a row)."""
    times = [[] for _ in steps]
    for step in steps:
        step()
    for _ in range(repeat):
        for step, record in zip(steps, times):
            start = time.perf_counter()
            step()
            record.append(time.perf_counter() - start)
    return [min(record) * 1e3 for record in times]


def conv_rows(batch, c_in, c_out, size, repeat, torch):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((batch, c_in, size, size)).astype(np.float32)
    w_np = (rng.standard_normal((c_out, c_in, 3, 3)) * 0.1).astype(np.float32)
    b_np = rng.standard_normal(c_out).astype(np.float32)
    x, w, b = (genesis.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np))

    def run(function):
        def step():
            for t in (x, w, b):
                t.grad = None
            function().sum().backward()
        return step

    rows = [("genesis im2col + matmul", run(lambda: F.conv2d(x, w, b, padding=1))),
            ("as_strided + einsum", run(lambda: StridedEinsumConv.apply(x, w, b, 1))),
            ("im2col, columns kept", run(lambda: KeptColumnsConv.apply(x, w, b, 1)))]
    reference = F.conv2d(x, w, b, padding=1).detach().numpy()
    for name, function in ((rows[1][0], lambda: StridedEinsumConv.apply(x, w, b, 1)),
                           (rows[2][0], lambda: KeptColumnsConv.apply(x, w, b, 1))):
        np.testing.assert_allclose(function().detach().numpy(), reference, rtol=1e-3, atol=1e-3,
                                   err_msg=name)
    if torch is not None:
        tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x_np, w_np, b_np))

        def torch_step():
            for t in (tx, tw, tb):
                t.grad = None
            torch.nn.functional.conv2d(tx, tw, tb, padding=1).sum().backward()
        rows.append(("pytorch", torch_step))
    return list(zip([name for name, _ in rows], best_ms([step for _, step in rows], repeat)))


def pool_rows(batch, channels, size, repeat, torch):
    shape = (batch, channels, size, size)
    x_np = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    x = genesis.tensor(x_np, requires_grad=True)
    rows = []
    for name, call in (("max_pool2d 2x2", lambda f, t: f.max_pool2d(t, 2)),
                       ("max_pool2d 3x3 s2 p1", lambda f, t: f.max_pool2d(t, 3, 2, 1)),
                       ("avg_pool2d 2x2", lambda f, t: f.avg_pool2d(t, 2))):
        def step(call=call):
            x.grad = None
            call(F, x).sum().backward()
        steps = [step]
        if torch is not None:
            tx = torch.tensor(x_np, requires_grad=True)

            def torch_step(call=call, tx=tx):
                tx.grad = None
                call(torch.nn.functional, tx).sum().backward()
            steps.append(torch_step)
        ours, theirs = (best_ms(steps, repeat) + [None])[:2]
        rows.append((name, ours, theirs))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="small shapes, for a smoke run")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    else:
        torch.set_num_threads(int(THREADS))
    layers = [(32, 3, 16, 32), (32, 16, 32, 32), (8, 64, 64, 56)]
    if args.quick:
        layers = [(2, 3, 4, 8)]
    print(f"conv2d 3x3, padding 1, float32, forward + backward, {THREADS} thread(s) (best of "
          f"{args.repeat}; ms per step; ratio = time / genesis time)")
    for batch, c_in, c_out, size in layers:
        rows = conv_rows(batch, c_in, c_out, size, args.repeat, torch)
        print(f"\nbatch {batch}, {c_in} -> {c_out} channels, {size}x{size}")
        reference = rows[0][1]
        for name, ms in rows:
            print(f"  {name:<26} {ms:9.2f} ms  {ms / reference:6.2f}x")
    print("\npooling, float32, forward + backward (ms per step)")
    batch, channels, size = (2, 3, 8) if args.quick else (32, 32, 32)
    print(f"batch {batch}, {channels} channels, {size}x{size}")
    print(f"  {'op':<22} {'genesis':>9} {'pytorch':>9} {'genesis/pytorch':>16}")
    for name, ours, theirs in pool_rows(batch, channels, size, args.repeat, torch):
        if theirs is None:
            print(f"  {name:<22} {ours:9.2f}")
        else:
            print(f"  {name:<22} {ours:9.2f} {theirs:9.2f} {ours / theirs:15.2f}x")


if __name__ == "__main__":
    main()
