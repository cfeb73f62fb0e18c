"""Sums over each of many arrays in one GPU launch, for `genesis trace`'s hooks:

* `CENSUS`: how many entries of each array are finite and how many are NaN (the NaN/Inf
  watch takes it of an op's inputs and outputs at every call);
* `SQUARE_SUMS`: the sum of each array's squares (the gradient norms of every parameter
  on a GPU after a backward call; `ParamWatch` sums host arrays itself, by
  `_finite_figures.dot_with_itself`).

On a GPU the arrays (float32 or float64, one dtype; up to MAX_TENSORS of them per launch)
go to one `cupy.RawKernel`: each thread block takes a CHUNK of one array, sums its threads'
terms in shared memory and adds them to the array's slots of a float64 result (counts are
exact in a double up to 2**53). Elsewhere, and for other dtypes, each array gets the
fused reductions of `_finite_figures`. Either way the result is a list of device figures
whose values, in order, are each array's sums, for a `Readings` to fetch.

>>> import numpy as np, genesis
>>> figures = CENSUS(genesis.device("cpu"), [np.array([1.0, np.nan, np.inf]), np.ones(2)])
>>> [float(value) for figure in figures for value in np.ravel(figure)]
[1.0, 1.0, 2.0, 0.0]
"""
from __future__ import annotations

import numpy as np

from ..ops._kernels import _KERNEL_DTYPES
from ..ops._multi_tensor import CHUNK, MAX_TENSORS, THREADS, blocks_for, chunk_picks
from ._finite_figures import FINITE_COUNT, NAN_COUNT, SQUARE_SUM

__all__ = ["ArraySums", "CENSUS", "SQUARE_SUMS", "ARRAY_SUMS"]

ARRAY_SUMS: dict = {}  # name -> ArraySums, for the tests and the CuPy stand-in


class ArraySums:
    """Per array, the sums of the C expressions `terms` (of each entry, `value`, of type T);
    `figures` are the same sums as reductions of one array, where no launch can take them."""

    def __init__(self, name: str, terms: tuple, figures: tuple):
        self.name, self.terms, self.figures = name, terms, figures
        self._compiled: dict = {}  # (namespace, dtype, count) -> compiled kernel
        ARRAY_SUMS[name] = self

    def __call__(self, device, arrays: list, zeroed=None) -> list:
        """Device figures holding the sums of each of `arrays`, in order; `zeroed(count)`
        gives the zeroed float64 slots the kernel adds into (a new array each call by
        default; `Readings.zeroed` shares one)."""
        xp = device.xp
        dtypes = {array.dtype for array in arrays}
        if getattr(xp, "__name__", "") != "cupy" or len(dtypes) != 1 or \
                next(iter(dtypes)) not in _KERNEL_DTYPES:
            return [figure(device, array) for array in arrays for figure in self.figures]
        dtype = dtypes.pop()
        if zeroed is None:
            zeroed = lambda count: xp.zeros(count, xp.float64)  # noqa: E731
        figures = []
        for start in range(0, len(arrays), MAX_TENSORS):
            group = arrays[start:start + MAX_TENSORS]
            figures.append(self._launch(xp, dtype, group, zeroed(len(self.terms) * len(group))))
        return figures

    def _launch(self, xp, dtype, arrays: list, sums):
        blocks = blocks_for(array.size for array in arrays)
        if not blocks:
            return sums
        key = (xp, dtype, len(arrays))
        function = self._compiled.get(key)
        if function is None:
            ctype = "float" if dtype == np.float32 else "double"
            function = self._compiled[key] = xp.RawKernel(self.source(ctype, len(arrays)),
                                                          self.name)
        args = []
        for array in arrays:  # the order of the entries does not matter, only that they are dense
            dense = array.flags.c_contiguous or array.flags.f_contiguous
            args += [array if dense else xp.ascontiguousarray(array), np.int64(array.size)]
        function((blocks,), (THREADS,), (*args, sums))
        return sums

    def source(self, ctype: str, count: int) -> str:
        """The CUDA text summing `count` arrays of T = `ctype`."""
        pointers = ", ".join(f"const T* x_{k}, long long size_{k}" for k in range(count))
        picks = chunk_picks(count, lambda k: f"x = x_{k};")
        terms = len(self.terms)
        adds = "\n".join(f"    partial[{slot}][threadIdx.x] += {term};"
                         for slot, term in enumerate(self.terms))
        return f"""typedef {ctype} T;
#define GENESIS_CHUNK {CHUNK}
#define GENESIS_THREADS {THREADS}
#define GENESIS_TERMS {terms}
__device__ void genesis_add(double* address, double value) {{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
  unsigned long long* bits = (unsigned long long*) address;
  unsigned long long seen = *bits, expected;
  do {{
    expected = seen;
    seen = atomicCAS(bits, expected,
                     __double_as_longlong(__longlong_as_double(expected) + value));
  }} while (seen != expected);
#else
  atomicAdd(address, value);
#endif
}}
extern "C" __global__ void {self.name}({pointers}, double* sums) {{
  long long block = blockIdx.x;  // becomes the chunk number within the array found
  bool found = false;
  int tensor = -1;
  long long size = 0;
  const T* x = 0;
{picks}
  const long long start = block * GENESIS_CHUNK;
  const long long end = size < start + GENESIS_CHUNK ? size : start + GENESIS_CHUNK;
  __shared__ double partial[GENESIS_TERMS][GENESIS_THREADS];
  for (int term = 0; term < GENESIS_TERMS; ++term) partial[term][threadIdx.x] = 0.0;
  for (long long i = start + threadIdx.x; i < end; i += blockDim.x) {{
    const T value = x[i];
{adds}
  }}
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {{
    if (threadIdx.x < stride) {{
      for (int term = 0; term < GENESIS_TERMS; ++term)
        partial[term][threadIdx.x] += partial[term][threadIdx.x + stride];
    }}
    __syncthreads();
  }}
  if (threadIdx.x == 0 && found) {{
    for (int term = 0; term < GENESIS_TERMS; ++term)
      genesis_add(&sums[GENESIS_TERMS * tensor + term], partial[term][0]);
  }}
}}
"""


CENSUS = ArraySums("genesis_census", ("isfinite(value) ? 1.0 : 0.0", "isnan(value) ? 1.0 : 0.0"),
                   (FINITE_COUNT, NAN_COUNT))
SQUARE_SUMS = ArraySums("genesis_square_sums", ("(double) value * (double) value",),
                        (SQUARE_SUM,))
