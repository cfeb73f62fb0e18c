"""Multi-tensor kernels: one elementwise update over many tensors of different sizes in one
GPU launch, as PyTorch's `foreach` optimizers do.

An optimizer step updates every parameter with the same formula; as an `Elementwise` kernel
(genesis/ops/_kernels.py) that is one launch per parameter. A `MultiTensorKernel` runs
that kernel's very body over up to `MAX_TENSORS` tensors per launch (`cupy.RawKernel`, built
for float or double and for the number of tensors): each thread block takes a `CHUNK` of
one tensor's elements, the tensors' pointers and sizes passed as kernel arguments (no table
to copy to the GPU). The names in `arrays` get one array per tensor; the kernel's other
parameters are numbers shared by every tensor.

Where it cannot launch (the CPU, the tests' fake GPU, float16, mixed dtypes, an array
updated in place that is not C-ordered) each tensor goes through the `Elementwise` kernel
itself, so the two cannot differ. tests/ops/test_multi_tensor.py runs the CUDA text as C++.

>>> import numpy as np, genesis
>>> from genesis.ops._kernels import Elementwise
>>> axpy = Elementwise("axpy", "T x, T a", "T y", "y = y + a * x",
...                    lambda device, x, a, y: np.add(y, a * x, out=y), register=False)
>>> update = MultiTensorKernel(axpy, ("x", "y"), register=False)
>>> ys = [np.zeros(2), np.ones(3)]
>>> update(genesis.device("cpu"), [(np.ones(2), ys[0]), (np.ones(3), ys[1])], 0.5)
>>> ys
[array([0.5, 0.5]), array([1.5, 1.5, 1.5])]
"""
from __future__ import annotations

import numpy as np

from ._kernels import _KERNEL_DTYPES, C_TYPES, REGISTRY, Elementwise

__all__ = ["MultiTensorKernel", "MAX_TENSORS", "CHUNK", "THREADS", "chunk_picks", "blocks_for"]

MAX_TENSORS = 32  # per launch: 32 tensors of 4 arrays is 1.2 KB of the 4 KB of kernel arguments
CHUNK = 4096  # elements of one tensor per thread block
THREADS = 256  # threads per block, each looping over its share of the chunk


def chunk_picks(count: int, chosen) -> str:
    """CUDA statements finding the tensor (of `count`, `size_k` elements each) whose CHUNK
    this thread block takes: they set `found`, `size` and `tensor` (declared before them),
    run the statements `chosen(k)` for tensor k, and leave in `block` the chunk's number
    within it."""
    return "\n".join(f"""  if (!found) {{
    const long long chunks = (size_{k} + GENESIS_CHUNK - 1) / GENESIS_CHUNK;
    if (block < chunks) {{ found = true; tensor = {k}; size = size_{k}; {chosen(k)} }}
    else block -= chunks;
  }}""" for k in range(count))


def blocks_for(sizes) -> int:
    """Thread blocks for tensors of these sizes: one per CHUNK of each."""
    return sum(-(-int(size) // CHUNK) for size in sizes)


class MultiTensorKernel:
    """`kernel`'s body over a list of tensors in one launch per MAX_TENSORS of them."""

    def __init__(self, kernel: Elementwise, arrays: tuple[str, ...], register: bool = True):
        self.kernel, self.name = kernel, f"{kernel.name}_multi"
        self.inputs, self.outputs = kernel.input_parameters, kernel.output_parameters
        declared = self.inputs + self.outputs
        self.arrays = [item for item in declared if item.name in arrays]
        self.scalars = [item for item in declared if item.name not in arrays]
        if len(self.arrays) != len(arrays) or any(item.type != "T" or item.raw
                                                   for item in self.arrays):
            raise ValueError(f"{self.name}: {arrays} must name T-typed, not raw, parameters "
                             f"of {kernel.name}")
        self._compiled: dict = {}
        if register:
            if self.name in REGISTRY:
                raise ValueError(f"a fused kernel named {self.name!r} already exists")
            REGISTRY[self.name] = self

    def __call__(self, device, tensors: list, *scalars) -> None:
        """Update in place: `tensors` holds, per tensor, its arrays in the order of `arrays`
        as declared; `scalars` are the kernel's other parameters, in their declared order."""
        xp = device.xp
        dtype = self._fitting_dtype(tensors) if getattr(xp, "__name__", "") == "cupy" else None
        if dtype is None:
            for arrays in tensors:
                self.kernel(device, *self._arguments(arrays, scalars))
            return
        numbers = tuple(dtype.type(value) if item.type == "T" else np.dtype(item.type).type(value)
                        for item, value in zip(self.scalars, scalars))
        for start in range(0, len(tensors), MAX_TENSORS):
            self._launch(xp, dtype, tensors[start:start + MAX_TENSORS], numbers)

    def _arguments(self, arrays, scalars) -> list:
        """One tensor's arguments to the Elementwise kernel, in its declared order."""
        by_name = dict(zip((item.name for item in self.arrays), arrays))
        by_name.update(zip((item.name for item in self.scalars), scalars))
        return [by_name[item.name] for item in self.inputs + self.outputs]

    def _fitting_dtype(self, tensors):
        """The arrays' shared float32/float64 dtype when the compiled kernel can take them
        (the arrays it writes C-ordered), else None."""
        dtypes = {array.dtype for arrays in tensors for array in arrays}
        if len(dtypes) != 1 or next(iter(dtypes)) not in _KERNEL_DTYPES:
            return None
        written = [slot for slot, item in enumerate(self.arrays) if item in self.outputs]
        if not all(arrays[slot].flags.c_contiguous for arrays in tensors for slot in written):
            return None
        return next(iter(dtypes))

    def _launch(self, xp, dtype, tensors: list, numbers: tuple) -> None:
        key = (xp, dtype, len(tensors))  # the namespace too: a fake GPU's build is not CuPy's
        function = self._compiled.get(key)
        if function is None:
            ctype = "float" if dtype == np.float32 else "double"
            function = self._compiled[key] = xp.RawKernel(self.source(ctype, len(tensors)),
                                                          self.name)
        args, blocks = [], 0
        for arrays in tensors:
            args += [xp.ascontiguousarray(array) for array in arrays]
            size = arrays[0].size
            args.append(np.int64(size))
            blocks += -(-size // CHUNK)
        if blocks:
            function((blocks,), (THREADS,), (*args, *numbers))

    def source(self, ctype: str, count: int) -> str:
        """The CUDA text for `count` tensors with T = `ctype`."""
        pointers = []
        for tensor in range(count):
            pointers += [f"{'T*' if item in self.outputs else 'const T*'} {item.name}_{tensor}"
                         for item in self.arrays] + [f"long long size_{tensor}"]
        picks_text = chunk_picks(count, lambda tensor: " ".join(
            f"{item.name}_all = {item.name}_{tensor};" for item in self.arrays))
        scalars = [f"{C_TYPES[item.type]} {item.name}" for item in self.scalars]
        chosen_arrays = "\n".join(
            f"  {'T*' if item in self.outputs else 'const T*'} {item.name}_all = 0;"
            for item in self.arrays)
        elements = " ".join(
            f"T& {item.name} = {item.name}_all[i];" if item in self.outputs
            else f"const T {item.name} = {item.name}_all[i];" for item in self.arrays)
        return f"""typedef {ctype} T;
#define GENESIS_CHUNK {CHUNK}
extern "C" __global__ void {self.name}({", ".join(pointers + scalars)}) {{
  long long block = blockIdx.x;  // becomes the chunk number within the tensor found
  bool found = false;
  int tensor = -1;
  long long size = 0;
{chosen_arrays}
{picks_text}
  const long long start = block * GENESIS_CHUNK;
  const long long end = size < start + GENESIS_CHUNK ? size : start + GENESIS_CHUNK;
  for (long long i = start + threadIdx.x; i < end; i += blockDim.x) {{
    {elements}
    {self.kernel.body}
  }}
}}
"""
